"""Calls from coding-agent harnesses' own OpenTelemetry log events: Claude Code's ``claude_code.api_request`` and
Codex's ``codex.sse_event`` of kind ``response.completed``.

Claude Code exports one log record per API request when its telemetry is on (Claude Code docs, "Monitoring":
``CLAUDE_CODE_ENABLE_TELEMETRY=1``, ``OTEL_LOGS_EXPORTER=otlp``): the body ``claude_code.api_request``, the
attribute ``event.name`` ``api_request`` and ``model``, ``input_tokens``, ``output_tokens``, ``cache_read_tokens``,
``cache_creation_tokens``, ``cost_usd``, ``duration_ms``, ``session.id``, ``prompt.id``, ``event.timestamp``,
``event.sequence``; numbers may be written as strings.  ``input_tokens`` is Anthropic's uncached input, so the
prompt is ``input_tokens + cache_read_tokens + cache_creation_tokens``
(:func:`~ctxwatch.formats.wire.anthropic.anthropic_usage`).

Codex (``[otel]`` in ``~/.codex/config.toml``) logs each streamed response event as ``codex.sse_event`` (or
``codex.websocket_event`` over its WebSocket transport); the one of ``event.kind`` ``response.completed``
carries the call's usage in the OpenAI convention: ``input_token_count`` is the whole prompt,
``cached_token_count`` the part of it read from the cache, ``output_token_count`` the completion with
``reasoning_token_count`` inside it (:func:`codex_usage`); its session is ``conversation.id``.

Neither event holds the request's text.
"""

from __future__ import annotations

from typing import Any

from ctxwatch.formats.otel.otlp import field
from ctxwatch.formats.wire.anthropic import anthropic_usage
from ctxwatch.formats.wire.openai import openai_usage
from ctxwatch.model import Usage

#: The event's full name (its body, and ``eventName`` where the exporter sets it) and its ``event.name``.
EVENT, SHORT = "claude_code.api_request", "api_request"

#: What tells a record from Claude Code when it carries only the short event name: its scope or service name.
_CLAUDE_MARKS = ("claude_code", "claude-code")

#: Attributes kept on the call as logged (its provenance's details): none of them changes a number.
DETAIL_KEYS = ("prompt.id", "event.sequence", "duration_ms", "speed", "query_source", "terminal.type")


def is_api_request(record: dict[str, Any], attrs: dict[str, Any], scope: str, service: str) -> bool:
    """Whether a log record is a ``claude_code.api_request`` event: by its event name (``eventName``, the
    ``event.name`` attribute, or the body), or by ``event.name: api_request`` from a Claude Code scope or service."""
    body = record.get("body")
    body_text = body.get("stringValue") or body.get("string_value") if isinstance(body, dict) else None
    name = attrs.get("event.name")
    if EVENT in (field(record, "eventName", "event_name"), name, body_text):
        return True
    return name == SHORT and any(m in f"{scope} {service}".lower() for m in _CLAUDE_MARKS)


def api_request_usage(attrs: dict[str, Any]) -> Usage | None:
    """The event's usage in tokens (Anthropic's rule: the prompt is input + cache read + cache creation), ``None``
    when it reports neither input nor output tokens."""
    return anthropic_usage({k: v for k, v in (
        ("input_tokens", attrs.get("input_tokens")), ("output_tokens", attrs.get("output_tokens")),
        ("cache_read_input_tokens", attrs.get("cache_read_tokens")),
        ("cache_creation_input_tokens", attrs.get("cache_creation_tokens"))) if v is not None})


#: Codex's event names of a streamed response event (SSE and WebSocket transports), and the kind that ends one.
CODEX_EVENTS, CODEX_COMPLETED = ("codex.sse_event", "codex.websocket_event"), "response.completed"


def is_codex_completion(attrs: dict[str, Any]) -> bool:
    """Whether a log record's attributes are Codex's ``response.completed`` event (a response's usage)."""
    return attrs.get("event.name") in CODEX_EVENTS and attrs.get("event.kind") == CODEX_COMPLETED


def codex_usage(attrs: dict[str, Any]) -> Usage | None:
    """The usage of Codex's ``response.completed`` event, in tokens, by OpenAI's rule (the cached tokens inside
    the prompt, the reasoning tokens inside the output); ``None`` when it reports neither input nor output."""
    return openai_usage({k: v for k, v in (
        ("input_tokens", attrs.get("input_token_count")), ("output_tokens", attrs.get("output_token_count")),
        ("input_tokens_details", {"cached_tokens": attrs.get("cached_token_count")}),
        ("output_tokens_details", {"reasoning_tokens": attrs.get("reasoning_token_count")})) if v is not None})
