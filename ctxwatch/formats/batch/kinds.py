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

#: The types of an Anthropic batch result (Anthropic API reference, "Retrieve Message Batch results").
RESULT_TYPES = ("succeeded", "errored", "canceled", "expired")


def batch_id(raw: object) -> str:
    """A ``custom_id`` as the reader records and names it: the string itself, another JSON value (a damaged or
    hostile line) as its compact JSON text (``null``, ``7``, ``{"id":"x"}``), never Python's repr of it."""
    return raw if isinstance(raw, str) else json_text(raw, none="null")


def join_id(v: dict[str, Any]) -> str | None:
    """The ``custom_id`` a line is joined by: the string itself; ``None`` when the line has none or one of another
    JSON type (``null``, ``7``, an object: both providers' ``custom_id`` is a string), which names no request or
    result, so that ``null`` never joins the string ``"null"``, nor ``7`` the string ``"7"``."""
    cid = v.get("custom_id")
    return cid if isinstance(cid, str) else None


def shown_id(v: dict[str, Any]) -> str:
    """How an issue names the request of a line: as :func:`named` names its ``custom_id``, or ``without a
    custom_id`` when the line has none."""
    return named(v["custom_id"]) if "custom_id" in v else "without a custom_id"


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
        (``{requests: [{custom_id, params}]}``), or ``None`` for anything else.  A result line without its
        ``custom_id`` is still a result: an OpenAI ``response`` with a ``status_code`` beside ``error`` (or a
        ``batch_req`` id), an Anthropic ``result`` of one of :data:`RESULT_TYPES`.
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
    # A result that lost its custom_id is still a response of its own (a call, said to be unjoinable): known by
    # the rest of its envelope, a response with its status code, a result with one of the four result types.
    resp, res = v.get("response"), v.get("result")
    if isinstance(resp, dict) and "status_code" in resp and ("error" in v or str(v.get("id", "")).startswith(
            "batch_req")):
        return OPENAI_OUTPUT
    if isinstance(res, dict) and res.get("type") in RESULT_TYPES and (
            isinstance(res.get("message"), dict) or isinstance(res.get("error"), dict) or "message" not in res):
        return ANTHROPIC_RESULT
    if v.get("type") == "message_batch" and "request_counts" in v:
        return ANTHROPIC_BATCH_OBJECT
    reqs = v.get("requests")
    if isinstance(reqs, list) and reqs and all(isinstance(r, dict) and "params" in r for r in reqs[:5]):
        return ANTHROPIC_REQUESTS_BODY
    return None
