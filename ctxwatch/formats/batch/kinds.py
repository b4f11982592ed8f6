"""Which kind of batch line a JSON value is: an OpenAI or Anthropic request, result, or batch object."""

from __future__ import annotations

from typing import Any

from ctxwatch.source import json_text, show_value

# Kinds of batch line (see classify_batch_value).
OPENAI_INPUT = "openai-input"
OPENAI_OUTPUT = "openai-output"
ANTHROPIC_REQUEST = "anthropic-request"
ANTHROPIC_RESULT = "anthropic-result"
ANTHROPIC_BATCH_OBJECT = "anthropic-batch-object"
ANTHROPIC_REQUESTS_BODY = "anthropic-requests-body"

#: The kinds of line an input (request) file holds, and those of an output (result) file.
INPUT_KINDS = (OPENAI_INPUT, ANTHROPIC_REQUEST, ANTHROPIC_REQUESTS_BODY)
OUTPUT_KINDS = (OPENAI_OUTPUT, ANTHROPIC_RESULT)
#: The provider (``openai`` | ``anthropic``) of each kind.
PROVIDER = {
    OPENAI_INPUT: "openai", OPENAI_OUTPUT: "openai",
    ANTHROPIC_REQUEST: "anthropic", ANTHROPIC_RESULT: "anthropic",
    ANTHROPIC_BATCH_OBJECT: "anthropic", ANTHROPIC_REQUESTS_BODY: "anthropic",
}


def batch_id(raw: object) -> str:
    """A ``custom_id`` as the reader keys and records it: the string itself, another JSON value (a damaged or
    hostile line) as its compact JSON text (``null``, ``7``, ``{"id":"x"}``), never Python's repr of it."""
    return raw if isinstance(raw, str) else json_text(raw, none="null")


def named(raw: object) -> str:
    """A ``custom_id`` as an issue names a request: ``'triage-004'`` (a string, quoted and cut as
    :func:`~ctxwatch.source.show_value` writes it), or ``with custom_id null`` / ``with custom_id {"id":"x"}``
    for a value that is no string."""
    return show_value(raw) if isinstance(raw, str) else f"with custom_id {show_value(raw)}"


def said(v: object) -> str:
    """A log value in an issue's prose: a string as it is (made terminal-safe where it is shown), ``""`` for
    ``null`` or a missing field, any other value as :func:`~ctxwatch.source.show_value` writes it (JSON text,
    ``true``, cut to 40 characters), never Python's repr."""
    if v is None:
        return ""
    return v if isinstance(v, str) else show_value(v)


def classify_batch_value(v: Any) -> str | None:
    """Say which kind of batch line a decoded JSON value is.

    Args:
        v: one decoded JSON value.

    Returns:
        ``"openai-input"`` (``{custom_id, method|url, body}``), ``"openai-output"`` (``{custom_id, response,
        error}``), ``"anthropic-request"`` (``{custom_id, params}``), ``"anthropic-result"`` (``{custom_id,
        result}``), ``"anthropic-batch-object"`` (``{type: "message_batch"}``), ``"anthropic-requests-body"``
        (``{requests: [{custom_id, params}]}``), or ``None`` for anything else.
    """
    if not isinstance(v, dict):
        return None
    if "custom_id" in v:
        if isinstance(v.get("params"), dict):
            return ANTHROPIC_REQUEST
        if isinstance(v.get("result"), dict):
            return ANTHROPIC_RESULT
        if isinstance(v.get("body"), dict) and ("url" in v or "method" in v):
            return OPENAI_INPUT
        if "response" in v and ("error" in v or str(v.get("id", "")).startswith("batch_req")):
            return OPENAI_OUTPUT
        return None
    if v.get("type") == "message_batch" and "request_counts" in v:
        return ANTHROPIC_BATCH_OBJECT
    reqs = v.get("requests")
    if isinstance(reqs, list) and reqs and all(isinstance(r, dict) and "params" in r for r in reqs[:5]):
        return ANTHROPIC_REQUESTS_BODY
    return None
