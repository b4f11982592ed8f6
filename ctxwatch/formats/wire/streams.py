"""OpenAI's streamed responses, as one response body: chat-completion chunks and Responses API events.

A streamed chat completion is a list of ``chat.completion.chunk`` objects (server-sent ``data:`` lines, ending
with ``data: [DONE]``).  Its usage is sent only when the request asks for it (``stream_options.include_usage``)
and then only in one last chunk whose ``choices`` is empty (OpenAI cookbook, "How to get token usage data for
streamed chat completion response"; API reference, ``stream_options``).  A streamed Responses API call ends with
a ``response.completed`` event whose ``response`` is the whole response body, usage included (API reference,
"Streaming events").  :func:`stream_body` turns either into the response body the call would have had without
streaming, so that the usage, the text and the finish reason are read by the same rules as any other response.
"""

from __future__ import annotations

from typing import Any

import orjson

from ctxwatch.formats.wire.values import listed

#: The ``object`` of a chat-completions stream chunk.
CHUNK_OBJECT = "chat.completion.chunk"


def sse_values(raw: str) -> list[Any]:
    """The JSON values of a server-sent-events text's ``data:`` lines, in order (``[DONE]`` and lines that are not
    JSON are left out).  Never raises."""
    out: list[Any] = []
    for line in raw.splitlines():
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if not data or data == "[DONE]":
            continue
        try:
            out.append(orjson.loads(data))
        except orjson.JSONDecodeError:
            continue
    return out


def is_openai_stream(values: list[Any]) -> bool:
    """True when ``values`` hold chat-completion chunks or Responses API stream events."""
    return any(isinstance(v, dict) and (v.get("object") == CHUNK_OBJECT
                                        or str(v.get("type") or "").startswith("response."))
               for v in values)


def stream_body(values: list[Any]) -> dict[str, Any] | None:
    """The response body a stream stands for, or ``None`` when ``values`` are not an OpenAI stream.

    Chat chunks: ``id``, ``model``, ``service_tier`` of the chunks, ``choices[0].message`` with the content and
    tool calls the deltas of choice 0 add up to and its last ``finish_reason``, and ``usage`` the last chunk's
    that carries one (``null`` in the others); no usage block when no chunk has one (the request did not ask
    for it).  Responses events: the ``response`` of the last ``response.completed`` (or ``response.incomplete``
    / ``response.failed``) event.
    """
    chunks = [v for v in values if isinstance(v, dict) and v.get("object") == CHUNK_OBJECT]
    if not chunks:
        final = [v["response"] for v in values if isinstance(v, dict) and isinstance(v.get("response"), dict)
                 and v.get("type") in ("response.completed", "response.incomplete", "response.failed")]
        return final[-1] if final else None
    body: dict[str, Any] = {"object": "chat.completion"}
    texts: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    finish: Any = None
    for c in chunks:
        for key in ("id", "model", "service_tier", "system_fingerprint"):
            if isinstance(c.get(key), str):
                body[key] = c[key]
        if isinstance(c.get("usage"), dict):
            body["usage"] = c["usage"]
        choices = c.get("choices")
        for ch in choices if isinstance(choices, list) else []:
            if not isinstance(ch, dict) or ch.get("index", 0) != 0:
                continue
            delta = d if isinstance(d := ch.get("delta"), dict) else {}
            if isinstance(delta.get("content"), str):
                texts.append(delta["content"])
            for tc in listed(delta.get("tool_calls"), "a stream chunk's delta.tool_calls"):
                if not isinstance(tc, dict):
                    continue
                i = idx if isinstance(idx := tc.get("index"), int) else len(calls)
                slot = calls.setdefault(i, {"id": None, "type": "function", "function": {"name": "", "arguments": ""}})
                if isinstance(tc.get("id"), str):
                    slot["id"] = tc["id"]
                fn = f if isinstance(f := tc.get("function"), dict) else {}
                if isinstance(fn.get("name"), str):
                    slot["function"]["name"] += fn["name"]
                if isinstance(fn.get("arguments"), str):
                    slot["function"]["arguments"] += fn["arguments"]
            if ch.get("finish_reason") is not None:
                finish = ch["finish_reason"]
    message: dict[str, Any] = {"role": "assistant", "content": "".join(texts)}
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    body["choices"] = [{"index": 0, "message": message, "finish_reason": finish}]
    return body


def stream_usage_note(body: dict[str, Any]) -> str | None:
    """A sentence for a stream's body that has no usage (``None`` when it has one): a chat stream whose request
    did not set ``stream_options.include_usage`` carries none, and the call's usage is then unknown."""
    if isinstance(body.get("usage"), dict):
        return None
    return ("the streamed response has no usage (a chat stream carries it only in a last chunk, when the "
            "request sets stream_options.include_usage): usage unknown")
