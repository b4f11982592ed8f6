"""Which kind of batch line a JSON value is: an OpenAI or Anthropic request, result, or batch object."""

from __future__ import annotations

from typing import Any

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
