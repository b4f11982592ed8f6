"""Calls from spans in the OpenTelemetry GenAI semantic conventions (``gen_ai.*`` attributes).

A span is a call when its ``gen_ai.operation.name`` is one that sends a prompt to a model (``chat``,
``text_completion``, ``generate_content``), or, from instrumentations older than that attribute, when it has
no operation name but names its provider (``gen_ai.system``) and model and has a ``gen_ai.usage`` count.
Agent and tool spans (``invoke_agent``, ``execute_tool``...) are no calls: an agent span's usage is the sum of
its model calls' usage, which would count them twice.

Usage, in tokens (OpenTelemetry semantic conventions, GenAI attribute registry): ``gen_ai.usage.input_tokens``
is the whole prompt, cached tokens included (``gen_ai.usage.cache_read.input_tokens`` and
``gen_ai.usage.cache_creation.input_tokens`` are parts of it); ``gen_ai.usage.output_tokens`` the completion,
``gen_ai.usage.reasoning.output_tokens`` a part of it.  The older names (``gen_ai.usage.prompt_tokens``,
``gen_ai.usage.completion_tokens``, ``gen_ai.usage.cache_read_input_tokens``,
``gen_ai.usage.cache_creation_input_tokens``) are read the same.  Where the cache parts add up to more than
the input count, the instrumentation wrote Anthropic's ``input_tokens`` (the uncached part), and the prompt is
their sum.

Content, where the instrumentation captured it (``gen_ai.system_instructions``, ``gen_ai.tool.definitions``,
``gen_ai.input.messages``, ``gen_ai.output.messages``, on the span or on its
``gen_ai.client.inference.operation.details`` event; structured or as JSON strings), is decoded into the
request's system prompt, tool schemas and messages (:func:`content`).
"""

from __future__ import annotations

from typing import Any

from ctxwatch.formats.otel.legacy import legacy_request
from ctxwatch.formats.otel.otlp import attributes, field, items, json_value
from ctxwatch.formats.wire.messages import MessageMemo
from ctxwatch.formats.wire.models import provider_of_model
from ctxwatch.formats.wire.openai import openai_request_to_parts
from ctxwatch.formats.wire.values import json_text, usage_count
from ctxwatch.model import Message, Part, ResponseInfo, Usage, json_type, note_bad_field

#: ``gen_ai.operation.name`` values of a request that sends a prompt to a model (GenAI attribute registry).
CALL_OPERATIONS = frozenset({"chat", "text_completion", "generate_content"})

#: The event the GenAI conventions record captured content on, beside (or instead of) the span's attributes.
DETAILS_EVENT = "gen_ai.client.inference.operation.details"

#: The four content attributes (GenAI attribute registry).
CONTENT_KEYS = ("gen_ai.system_instructions", "gen_ai.tool.definitions", "gen_ai.input.messages",
                "gen_ai.output.messages")

#: ``gen_ai.provider.name`` (and the older ``gen_ai.system``) values whose API rules ctxwatch applies: the
#: provider decides the tokenizer and the framing.  Others are told from the model id.
_PROVIDERS = {"openai": "openai", "azure.ai.openai": "openai", "anthropic": "anthropic", "gcp.gemini": "google",
              "gcp.vertex_ai": "google", "gcp.gen_ai": "google", "gemini": "google", "vertex_ai": "google"}


def is_call(attrs: dict[str, Any]) -> bool:
    """Whether a span with these attributes is a model call (see the module docstring)."""
    op = attrs.get("gen_ai.operation.name")
    if isinstance(op, str):
        return op in CALL_OPERATIONS
    if op is not None:  # (a list, an object, a number: no operation name, so told as if absent, below)
        note_bad_field(f"gen_ai.operation.name is a JSON {json_type(op)}, not a string: read as absent")
    # (without an operation name, only a span that names its provider and model is a model request: a harness's
    # turn or session span may carry the summed usage of its requests)
    named = ("gen_ai.system" in attrs or "gen_ai.provider.name" in attrs) and (
        "gen_ai.request.model" in attrs or "gen_ai.response.model" in attrs)
    return named and any(k in attrs for k in ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens",
                                              "gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens"))


def provider_of(attrs: dict[str, Any], model: str | None) -> str | None:
    """``openai`` | ``anthropic`` | ``google`` | ``None`` from ``gen_ai.provider.name`` (or ``gen_ai.system``), else
    from the model id."""
    name = attrs.get("gen_ai.provider.name") or attrs.get("gen_ai.system")
    return _PROVIDERS.get(name) if isinstance(name, str) and name in _PROVIDERS else provider_of_model(model)


def _first(attrs: dict[str, Any], *keys: str) -> Any:
    for k in keys:
        if attrs.get(k) is not None:
            return attrs[k]
    return None


def genai_usage(attrs: dict[str, Any]) -> Usage | None:
    """The span's usage (module docstring), ``None`` when it reports neither an input nor an output count.  A value
    that is not a count is passed on for the run's sanitiser to report."""
    inp = usage_count(_first(attrs, "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens"))
    out = usage_count(_first(attrs, "gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens"))
    if inp is None and out is None:
        return None
    cr = usage_count(_first(attrs, "gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_read_input_tokens"))
    cw = usage_count(_first(attrs, "gen_ai.usage.cache_creation.input_tokens",
                            "gen_ai.usage.cache_creation_input_tokens"))
    reasoning = usage_count(attrs.get("gen_ai.usage.reasoning.output_tokens"))
    prompt, uncached = inp, None
    if inp.__class__ is int and all(x is None or x.__class__ is int for x in (cr, cw)):
        cached = (cr or 0) + (cw or 0)
        if cached > inp:
            prompt, uncached = inp + cached, inp  # (Anthropic's uncached input_tokens, written as is)
        else:
            uncached = inp - cached
    return Usage(prompt_total=prompt, input_uncached=uncached, cache_read=cr, cache_write=cw, output=out,
                 reasoning=reasoning)


def captured(span: dict[str, Any], attrs: dict[str, Any]) -> dict[str, Any]:
    """The content attributes of a span: its own, else those of its operation-details event (raw values)."""
    found = {k: attrs[k] for k in CONTENT_KEYS if attrs.get(k) is not None}
    if found:
        return found
    for ev in items(span, "events", "events"):
        if ev.get("name") == DETAILS_EVENT:
            ea = attributes(field(ev, "attributes", "attributes"))
            return {k: ea[k] for k in CONTENT_KEYS if ea.get(k) is not None}
    return {}


def _part(p: Any) -> Part:
    """One message part of the GenAI JSON schemas (``text``, ``tool_call``, ``tool_call_response``, ``reasoning``;
    any other type is kept as its JSON text, so that it is still counted)."""
    if not isinstance(p, dict):
        return Part("other", json_text(p))
    t = p.get("type")
    if t == "text":
        return Part("text", json_text(p.get("content")))
    if t == "tool_call":
        cid = p.get("id")
        return Part("tool_call", json_text(p.get("arguments")), name=str(p.get("name") or ""),
                    call_id=cid.strip() if isinstance(cid, str) else None)
    if t == "tool_call_response":
        cid = p.get("id")
        result = p.get("result") if "result" in p else p.get("response")
        return Part("tool_result", json_text(result), call_id=cid.strip() if isinstance(cid, str) else None)
    if t == "reasoning":
        return Part("thinking", json_text(p.get("content")))
    return Part("other", json_text(p))


def genai_message(m: dict[str, Any]) -> Message:
    """One message of ``gen_ai.input.messages`` (``{role, parts, name?}``) as a :class:`Message`."""
    parts = m.get("parts")
    name = m.get("name")
    return Message(str(m.get("role") or "user"), [_part(p) for p in parts] if isinstance(parts, list) else [],
                   name=name if isinstance(name, str) else None)


def _tool_schema(t: dict[str, Any], provider: str | None) -> dict[str, Any]:
    """A ``gen_ai.tool.definitions`` item (``{type, name, description, parameters}``) in the shape its provider's
    API takes, which is the shape the tool-schema count frames: Anthropic's ``input_schema``, else OpenAI's
    ``function``."""
    if "name" not in t:
        return t
    body: dict[str, Any] = {k: t[k] for k in ("name", "description") if k in t}
    if provider == "anthropic":
        return {**body, "input_schema": t.get("parameters") or {"type": "object"}}
    if "parameters" in t:
        body["parameters"] = t["parameters"]
    return {"type": "function", "function": body}


class Content:
    """What a span's captured content gives: ``system`` (text blocks), ``tools``, ``messages`` (the history),
    ``response`` and the problems found (texts for ``invalid_field`` issues).  A part that was not captured is
    ``None``: unknown, never empty."""

    __slots__ = ("messages", "problems", "response", "system", "tools")

    def __init__(self) -> None:
        self.system: list[str] | None = None
        self.tools: list[dict[str, Any]] | None = None
        self.messages: list[Message] | None = None
        self.response: ResponseInfo | None = None
        self.problems: list[str] = []


def content(raw: dict[str, Any], provider: str | None, memo: MessageMemo) -> Content:
    """Decode captured content (:func:`captured`) into a request's parts.

    The system prompt is ``gen_ai.system_instructions`` and the leading ``system`` messages of the input (the
    conventions put instructions that are part of the chat history there); with neither, but with input messages,
    the request had no system prompt (``[]``).  Tools are ``None`` when ``gen_ai.tool.definitions`` was not
    recorded: the conventions leave it optional even where content is captured.
    """
    c = Content()
    values: dict[str, Any] = {}
    for k, v in raw.items():
        value, ok = json_value(v)
        if not ok or (k != "gen_ai.output.messages" and not isinstance(value, list)):
            c.problems.append(f"{k} is not a JSON list: that part of the request is unknown")
            continue
        values[k] = value
    system: list[str] | None = None
    if "gen_ai.system_instructions" in values:
        system = [_part(p).text for p in values["gen_ai.system_instructions"]]
    msgs = values.get("gen_ai.input.messages")
    if msgs is not None:
        built = [m for m in memo.messages(msgs, genai_message) if m is not None]
        lead = 0
        while lead < len(built) and built[lead].role in ("system", "developer"):
            lead += 1
        system = (system or []) + [m.text() for m in built[:lead]]
        c.messages = built[lead:]
    c.system = system
    tools = values.get("gen_ai.tool.definitions")
    if tools is not None:
        c.tools = [_tool_schema(t, provider) for t in tools if isinstance(t, dict)]
    out = values.get("gen_ai.output.messages")
    if isinstance(out, list) and out and isinstance(out[0], dict):
        first = out[0]
        listed = first.get("parts")
        parts = [_part(p) for p in listed] if isinstance(listed, list) else []
        reason = first.get("finish_reason")
        c.response = ResponseInfo(text="".join(p.text for p in parts if p.kind == "text"),
                                  tool_calls=sum(p.kind == "tool_call" for p in parts),
                                  finish_reason=reason if isinstance(reason, str) else None)
    return c


def legacy_content(span: dict[str, Any], attrs: dict[str, Any], memo: MessageMemo) -> Content | None:
    """Content in the older instrumentations' shapes (:mod:`.legacy`), split as an OpenAI chat request (the
    leading system messages are the system prompt); tools are ``None`` (unknown) unless the span lists them.
    ``None`` when the span holds no content of these shapes and no damaged one."""
    body, problems = legacy_request(span, attrs)
    if body is None and not problems:
        return None
    c = Content()
    c.problems = problems
    if body is not None:
        system, tools, messages, _ = openai_request_to_parts(body, memo)
        c.system, c.messages = system, messages
        c.tools = tools if "tools" in body else None
    return c
