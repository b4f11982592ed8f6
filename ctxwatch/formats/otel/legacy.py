"""Captured content in the shapes older GenAI instrumentations record, rebuilt as an OpenAI chat request.

Two shapes came before ``gen_ai.input.messages``:

* OpenLLMetry's indexed attributes: ``gen_ai.prompt.<i>.role``, ``gen_ai.prompt.<i>.content``,
  ``gen_ai.prompt.<i>.tool_call_id``, ``gen_ai.prompt.<i>.tool_calls.<j>.{id,name,arguments}``, and the tools as
  ``llm.request.functions.<i>.{name,description,parameters}`` (the parameters a JSON string);
* the semantic conventions' 1.26 span events: ``gen_ai.content.prompt`` whose ``gen_ai.prompt`` attribute is the
  messages as a JSON string, in the OpenAI chat shape.

Either gives a chat-completions body (``{"messages", "tools"}``) for :mod:`ctxwatch.formats.wire.openai` to
split, or ``None`` when the span holds neither.
"""

from __future__ import annotations

import re
from typing import Any

from ctxwatch.formats.otel.otlp import attributes, field, items, json_value

#: ``gen_ai.prompt.<i>.<rest>`` and ``llm.request.functions.<i>.<rest>``.
_PROMPT = re.compile(r"gen_ai\.prompt\.(\d+)\.(.+)")
_FUNCTION = re.compile(r"llm\.request\.functions\.(\d+)\.(.+)")
_TOOL_CALL = re.compile(r"tool_calls\.(\d+)\.(id|name|arguments)")

#: The 1.26 conventions' span event that holds the prompt, and its attribute.
PROMPT_EVENT, PROMPT_ATTRIBUTE = "gen_ai.content.prompt", "gen_ai.prompt"

#: Messages and tools read from one span's indexed attributes at most (a bound on a hostile span's indices).
MAX_INDEX = 100_000


def legacy_request(span: dict[str, Any], attrs: dict[str, Any]) -> tuple[dict[str, Any] | None, list[str]]:
    """The span's older-shape content as an OpenAI chat request body, and the problems found (texts for
    ``invalid_field`` issues); ``(None, [])`` when the span holds no content of these shapes."""
    indexed = _indexed(attrs, "gen_ai.prompt.", _PROMPT)
    if indexed:
        body: dict[str, Any] = {"messages": [_message(indexed[i]) for i in sorted(indexed)]}
        functions = _indexed(attrs, "llm.request.functions.", _FUNCTION)
        if functions:
            body["tools"] = [{"type": "function", "function": _function(functions[i])} for i in sorted(functions)]
        return body, []
    for ev in items(span, "events", "events"):
        if ev.get("name") == PROMPT_EVENT:
            raw = attributes(field(ev, "attributes", "attributes")).get(PROMPT_ATTRIBUTE)
            value, ok = json_value(raw)
            if ok and isinstance(value, list):
                return {"messages": value}, []
            return None, [f"the {PROMPT_EVENT} event's {PROMPT_ATTRIBUTE} is not a JSON list of messages: the "
                          "request is unknown"]
    return None, []


def _indexed(attrs: dict[str, Any], prefix: str, pattern: re.Pattern[str]) -> dict[int, dict[str, Any]]:
    """Attributes ``<prefix><i>.<rest>`` (``pattern``) grouped by ``i``: ``{i: {rest: value}}``."""
    out: dict[int, dict[str, Any]] = {}
    for k, v in attrs.items():
        m = pattern.fullmatch(k) if k.startswith(prefix) else None
        if m is not None and len(m.group(1)) <= 6 and int(m.group(1)) < MAX_INDEX:
            out.setdefault(int(m.group(1)), {})[m.group(2)] = v
    return out


def _message(fields: dict[str, Any]) -> dict[str, Any]:
    """One OpenAI chat message from a prompt's ``{role, content, tool_call_id, tool_calls.<j>.*}``.  A content
    that is a JSON list (OpenLLMetry writes content parts so) is given as that list."""
    msg: dict[str, Any] = {"role": fields.get("role") if isinstance(fields.get("role"), str) else "user"}
    content = fields.get("content")
    if isinstance(content, str) and content.startswith("["):
        parsed, ok = json_value(content)
        content = parsed if ok and isinstance(parsed, list) else content
    msg["content"] = content
    if isinstance(fields.get("tool_call_id"), str):
        msg["tool_call_id"] = fields["tool_call_id"]
    calls: dict[int, dict[str, Any]] = {}
    for k, v in fields.items():
        m = _TOOL_CALL.fullmatch(k)
        if m is not None and len(m.group(1)) <= 6:
            calls.setdefault(int(m.group(1)), {})[m.group(2)] = v
    if calls:
        msg["tool_calls"] = [{"id": c.get("id"), "type": "function",
                              "function": {"name": c.get("name"), "arguments": c.get("arguments") or ""}}
                             for _, c in sorted(calls.items())]
    return msg


def _function(fields: dict[str, Any]) -> dict[str, Any]:
    """One tool schema from ``llm.request.functions.<i>.{name, description, parameters}``."""
    fn: dict[str, Any] = {k: fields[k] for k in ("name", "description") if k in fields}
    if "parameters" in fields:
        params, ok = json_value(fields["parameters"])
        fn["parameters"] = params if ok else fields["parameters"]
    return fn
