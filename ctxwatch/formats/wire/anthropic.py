"""Anthropic Messages API shapes: the usage block, content blocks, request bodies and response bodies.

Anthropic's ``input_tokens`` is the uncached input only: the prompt is ``input_tokens +
cache_creation_input_tokens + cache_read_input_tokens`` (Anthropic Messages API docs, "usage").  Every reader
of Anthropic usage (Claude Code, the canonical wrapper, claude-trace, Message Batches) uses
:func:`anthropic_usage`, so the rule is written once.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ctxwatch.catalog.entries import base_model
from ctxwatch.formats.wire.images import image_part
from ctxwatch.formats.wire.messages import MessageMemo, RequestParts
from ctxwatch.formats.wire.values import (
    count_or_none,
    json_text,
    odd_content,
    odd_usage,
    request_max_tokens,
    response_unknown,
    usage_count,
)
from ctxwatch.model import Message, Part, ResponseInfo, Usage, shared


def anthropic_usage(usage: Any) -> Usage | None:
    """Normalize an Anthropic ``usage`` block (Anthropic Messages API docs, "usage"); all counts in tokens.

    ``prompt_total = input_tokens + cache_creation_input_tokens + cache_read_input_tokens``; ``input_uncached``
    is ``input_tokens``; ``cache_write`` is ``cache_creation_input_tokens`` (its 1-hour share, when the block
    splits it, is ``cache_write_1h``); ``output`` is ``output_tokens``; ``web_searches`` is
    ``server_tool_use.web_search_requests`` (billed per search); ``service_tier`` is the block's (``standard``,
    ``priority``, ``batch``: the tier that served the call).  Cache keys missing from a present block count
    as 0 (older API versions and Claude Code releases leave them out); without ``input_tokens`` the prompt is
    unknown (``None``), without ``output_tokens`` the output (a streamed message's start), and a block with
    neither, or a missing block (not a dict), gives ``None``.  A value that is not a count is passed through for
    :func:`ctxwatch.engine.sanitize.sanitize` to report.  Anthropic reports no separate ``reasoning`` count.
    """
    if not isinstance(usage, dict):
        odd_usage(usage)
        return None
    has_input = usage.get("input_tokens") is not None
    if not has_input and usage.get("output_tokens") is None:
        return None  # an empty block reports nothing: unknown, not a prompt of 0
    inp = usage_count(usage.get("input_tokens"))
    cw = usage_count(usage.get("cache_creation_input_tokens"), 0)
    cr = usage_count(usage.get("cache_read_input_tokens"), 0)
    parts_ok = all(x.__class__ is int for x in (inp, cw, cr))
    server = usage.get("server_tool_use")
    searches = usage_count(server.get("web_search_requests")) if isinstance(server, dict) else None
    tier = usage.get("service_tier")
    return Usage(prompt_total=inp + cw + cr if has_input and parts_ok else None,
                 input_uncached=inp if has_input else None, cache_read=cr, cache_write=cw,
                 output=usage_count(usage.get("output_tokens")),
                 cache_write_1h=cache_write_1h(usage) if cw.__class__ is int else None, web_searches=searches,
                 service_tier=shared(tier) if tier.__class__ is str and tier else None)


#: The counts :func:`anthropic_usage` reads from a usage block: ``(path in the block, key, nested key or None)``.
USAGE_COUNT_KEYS = (("input_tokens", None), ("output_tokens", None), ("cache_creation_input_tokens", None),
                    ("cache_read_input_tokens", None), ("cache_creation", "ephemeral_1h_input_tokens"),
                    ("server_tool_use", "web_search_requests"))


def usage_non_counts(usage: dict[str, Any]) -> list[tuple[str, Any]]:
    """``(name, value)`` of each count :func:`anthropic_usage` reads from ``usage`` that is present, not null and
    no count (:func:`~ctxwatch.formats.wire.values.count_or_none`: ``[1]``, ``-5``, ``"lots"``), ``name`` as
    the block writes it (``output_tokens``, ``cache_creation.ephemeral_1h_input_tokens``)."""
    out: list[tuple[str, Any]] = []
    for key, inner in USAGE_COUNT_KEYS:
        v = usage.get(key)
        if inner is not None:
            v = v.get(inner) if isinstance(v, dict) else None
        if v is not None and count_or_none(v) is None:
            out.append((key if inner is None else f"{key}.{inner}", v))
    return out


def cache_write_1h(usage: dict[str, Any]) -> Any:
    """The 1-hour-TTL share of an Anthropic usage block's cache writes (``cache_creation.
    ephemeral_1h_input_tokens``), as reported (:func:`ctxwatch.engine.sanitize.sanitize` reports a share above
    the writes);
    ``None`` when the block does not say."""
    split = usage.get("cache_creation")
    if not isinstance(split, dict) or "ephemeral_1h_input_tokens" not in split:
        return None
    # (not a count, or more than the writes: passed on for the sanitizer to report, and the call is not priced)
    return usage_count(split.get("ephemeral_1h_input_tokens"))


def anthropic_content(content: Any) -> list[Part]:
    """Parts of an Anthropic request message's ``content`` (a string or a list of content blocks).

    ``text`` -> text; ``thinking`` / ``redacted_thinking`` -> thinking; ``tool_use`` / ``server_tool_use`` ->
    tool_call (``text`` = the JSON of ``input``); ``tool_result`` / ``web_search_tool_result`` -> tool_result (its
    inner text joined, the images and documents inside it as parts of their own, since they are sent and count);
    ``image`` / ``document`` -> image / document (:func:`~ctxwatch.formats.wire.images.image_part` for base64
    sources, a text part for a plain-text document); any other block -> other, its JSON as text.  A ``text``
    that is no string, a tool use's ``input`` that is no object or ``name`` that is no string is noted (an
    ``invalid_field`` issue of the record): its JSON counted as text, the name read as none.  Never raises.
    """
    if content is None:
        return []
    if isinstance(content, str):
        return [Part("text", content)]
    parts: list[Part] = []
    for b in content if isinstance(content, list) else [content]:
        if isinstance(b, str):
            parts.append(Part("text", b))
            continue
        if not isinstance(b, dict):
            odd_content(b, "a content block", "skipped")
            continue
        t = b.get("type")
        if t == "text":
            text = b.get("text")
            if text is not None and not isinstance(text, str):
                odd_content(text, "a text block's text", wanted="a string")
            parts.append(Part("text", text if isinstance(text, str) else json_text(text) if text is not None else ""))
        elif t in ("thinking", "redacted_thinking"):
            parts.append(Part("thinking", str(b.get("thinking") or "")))
        elif t in ("tool_use", "server_tool_use"):
            args, name = b.get("input"), b.get("name")
            if args is not None and not isinstance(args, dict):
                odd_content(args, f"a {t} block's input", wanted="an object")
            if name is not None and not isinstance(name, str):
                odd_content(name, f"a {t} block's name", "read as none", wanted="a string")
            parts.append(Part("tool_call", json_text(args or {}), name=name if isinstance(name, str) else "",
                              call_id=b.get("id")))
        elif t in ("tool_result", "web_search_tool_result"):
            inner = anthropic_content(b.get("content"))
            text = "\n".join(p.text for p in inner if p.kind != "image")
            parts.append(Part("tool_result", text, call_id=b.get("tool_use_id")))
            parts.extend(p for p in inner if p.kind in ("image", "document"))
        elif t in ("image", "document"):
            src = s if isinstance(s := b.get("source"), dict) else {}
            if src.get("type") == "base64":
                p = image_part(str(src.get("data") or ""), {"media_type": src.get("media_type")}, base64_data=True)
            else:
                p = Part("image", "", meta={"url": str(src.get("url") or "")[:200]})
            if t == "document":
                p.kind = "document"
                if src.get("type") == "text":
                    p = Part("text", str(src.get("data") or ""))
            parts.append(p)
        else:
            parts.append(Part("other", json_text(b)))
    return parts


def anthropic_message(m: dict[str, Any]) -> Message:
    """One Anthropic request message (``role``, ``content``) as a Message."""
    return Message(str(m.get("role") or "user"), anthropic_content(m.get("content")))


def anthropic_system(sys_field: Any) -> list[str] | None:
    """The text blocks of an Anthropic request's ``system`` field (a string or a list of text blocks), ``[]`` for
    an empty string, ``None`` for a value of another type."""
    if isinstance(sys_field, str):
        return [sys_field] if sys_field else []
    if isinstance(sys_field, list):
        return [str(b.get("text") or "") if isinstance(b, dict) else str(b) for b in sys_field]
    return None


def anthropic_request_to_parts(body: dict[str, Any], memo: MessageMemo | None = None) -> RequestParts:
    """Split an Anthropic Messages request body into ``(system, tools, messages, max_output_tokens)``.

    ``memo`` (optional) reuses messages re-sent from the previous call.
    """
    system = anthropic_system(body.get("system")) or []
    messages: list[Message] = []
    raw = r if isinstance(r := body.get("messages"), list) else []
    built = memo.messages(raw, anthropic_message) if memo is not None else [
        anthropic_message(m) if isinstance(m, dict) else None for m in raw]
    for msg in built:
        if msg is None:
            continue
        if msg.role == "system":
            system.append(msg.text())
        else:
            messages.append(msg)
    # (a tools field that is no list is damage.request_problems' to report: the schemas are then unknown)
    tools = [t for t in ts if isinstance(t, dict)] if isinstance(ts := body.get("tools"), list) else []
    model = body.get("model")
    return system, tools, strip_prior_thinking(messages, model if isinstance(model, str) else None), \
        request_max_tokens(body, "max_tokens")


#: Claude models whose API leaves the thinking blocks of earlier assistant turns out of the context window
#: (Anthropic docs, "Context windows" and "Extended thinking": previous turns' thinking is stripped, context =
#: (input - previous thinking) + current turn; from Claude Opus 4.5 on it is kept by default).  Prefixes of the
#: base model id (a cloud's or a proxy's spelling is read as it, :func:`ctxwatch.catalog.entries.base_model`).
THINKING_STRIPPED_MODELS = ("claude-3-7-sonnet", "claude-sonnet-4-5", "claude-sonnet-4-2", "claude-sonnet-4-0",
                            "claude-opus-4-1", "claude-opus-4-2", "claude-opus-4-0", "claude-haiku-4-5")


def strips_prior_thinking(model: str | None) -> bool:
    """True for a Claude model whose API does not keep earlier turns' thinking (:data:`THINKING_STRIPPED_MODELS`;
    ``claude-sonnet-4`` and ``claude-opus-4`` alone too)."""
    name = base_model(model or "")
    return name.startswith(THINKING_STRIPPED_MODELS) or name in ("claude-sonnet-4", "claude-opus-4")


def strip_prior_thinking(messages: list[Message], model: str | None) -> list[Message]:
    """``messages`` with the thinking of the assistant turns before the last user turn emptied (a ``thinking``
    part of no text, ``meta={"stripped": True}``), for a model whose API strips it (:func:`strips_prior_thinking`):
    those tokens are not in the prompt.  The current turn (the assistant messages after the last user message
    that is not only tool results: a tool-use loop) keeps its thinking, which the API counts."""
    if not strips_prior_thinking(model):
        return messages
    last_user = max((i for i, m in enumerate(messages) if m.role == "user"
                     and any(p.kind != "tool_result" for p in m.parts)), default=-1)
    out = list(messages)
    for i in range(last_user):
        m = messages[i]
        if m.role == "assistant" and any(p.kind == "thinking" and p.text for p in m.parts):
            # (a new content key: the raw message's key would name the count with the thinking)
            out[i] = replace(m, parts=[Part("thinking", "", meta={"stripped": True}) if p.kind == "thinking" else p
                                       for p in m.parts], key=None)
    return out


def anthropic_response_info(body: Any) -> ResponseInfo | None:
    """Completion text and tool-use count from an Anthropic Messages response body; ``None`` without a
    ``content`` list, noted (an ``invalid_field`` issue of the record) when ``content`` is there but no list or
    ``stop_reason`` is no string: the response is then unknown, not an answer of no text."""
    if not isinstance(body, dict):
        return None
    for key, ok, wanted in (("content", list, "a list"), ("stop_reason", str, "a string")):
        if body.get(key) is not None and not isinstance(body[key], ok):
            return response_unknown(f"response.{key}", body[key], wanted, "stop reason")
    if not isinstance(body.get("content"), list):
        return None
    texts = [t for b in body["content"] if isinstance(b, dict) and b.get("type") == "text"
             and isinstance(t := b.get("text", ""), str)]
    uses = sum(1 for b in body["content"] if isinstance(b, dict) and b.get("type") == "tool_use")
    return ResponseInfo(text="".join(texts), tool_calls=uses, finish_reason=body.get("stop_reason"))
