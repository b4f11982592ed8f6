"""The calls of batch lines: a request alone, an OpenAI or Anthropic result, and a result joined to its request.

A result gives the reported usage, the resolved model and the completion; its request (from the input file)
gives the system prompt, tools, messages and max output tokens.  A failed request (``status_code`` not 200,
``error`` not null, no body; an Anthropic result that is not ``succeeded``) is an issue, never a call with zero
usage.
"""

from __future__ import annotations

from typing import Any

from ctxwatch.formats.batch.kinds import batch_id, join_id, said, shown_id
from ctxwatch.formats.wire.anthropic import anthropic_request_to_parts, anthropic_response_info, anthropic_usage
from ctxwatch.formats.wire.damage import request_problems
from ctxwatch.formats.wire.images import image_size_from_base64
from ctxwatch.formats.wire.messages import RequestParts
from ctxwatch.formats.wire.openai import (
    openai_request_to_parts,
    openai_response_info,
    openai_usage,
    responses_request_to_parts,
    responses_response_info,
    responses_usage,
)
from ctxwatch.formats.wire.timestamps import parse_timestamp
from ctxwatch.formats.wire.values import limit_counts, model_id, string_counts
from ctxwatch.model import Issue, Message, ParsedCall, Part, Provenance, SourceRef, json_type, note_bad_field
from ctxwatch.source import Record

Output = ParsedCall | Issue

#: Endpoints that are not chat calls (no context window to watch); their lines are reported and skipped.
#: Source: OpenAI Batch guide, supported endpoints (/v1/embeddings, /v1/moderations).
_NON_CHAT_ENDPOINTS = ("/v1/embeddings", "/v1/moderations")


def _src(path: str, rec: Record) -> SourceRef:
    return SourceRef(path, rec.line, rec.line_end, rec.byte_start, rec.byte_end)


def _openai_request(url: str, body: dict[str, Any]) -> RequestParts:
    """Request parts of an OpenAI batch body by endpoint (``/v1/chat/completions``, ``/v1/responses``, and the
    legacy ``/v1/completions``, whose ``prompt`` string is one user message)."""
    if url.endswith("/responses") or "input" in body or "instructions" in body:
        return responses_request_to_parts(body)
    system, tools, messages, mx = openai_request_to_parts(body)
    prompt = body.get("prompt")
    if not body.get("messages") and isinstance(prompt, str):  # legacy /v1/completions
        messages = [Message("user", [Part("text", prompt)])]
    return system, tools, messages, mx


def _base64_images(blocks: Any, found: dict[str, str]) -> None:
    """Collect the base64 data of Anthropic ``image``/``document`` blocks (tool results included)."""
    for b in blocks if isinstance(blocks, list) else []:
        if not isinstance(b, dict):
            continue
        src = b.get("source")
        if b.get("type") in ("image", "document") and isinstance(src, dict) and src.get("type") == "base64":
            data = src.get("data")
            if isinstance(data, str) and data:
                found[data[:200]] = data
        if b.get("type") == "tool_result":
            _base64_images(b.get("content"), found)


def _fix_anthropic_images(params: dict[str, Any], messages: list[Message]) -> None:
    """Give base64 image parts of an Anthropic request their pixel size (the base64 itself is never counted).

    :func:`~ctxwatch.formats.wire.anthropic.anthropic_request_to_parts` keeps a raw base64 source's first 200
    characters as ``meta["url"]`` without reading its header; this reads the header with
    :func:`~ctxwatch.formats.wire.images.image_size_from_base64`, records the payload size, and drops the bogus url.
    A no-op for parts that already have a size.
    """
    found: dict[str, str] = {}
    for m in ms if isinstance(ms := params.get("messages"), list) else []:  # (damage: request_problems)
        if isinstance(m, dict):
            _base64_images(m.get("content"), found)
    if not found:
        return
    for msg in messages:
        for part in msg.parts:
            meta = part.meta
            if part.kind not in ("image", "document") or not meta or "width" in meta:
                continue
            data = found.get(str(meta.get("url") or ""))
            if data is None:
                continue
            meta.pop("url", None)
            meta["bytes"] = len(data) * 3 // 4
            size = image_size_from_base64(data) if part.kind == "image" else None
            if size:
                meta["width"], meta["height"] = size


def attach_request(call: ParsedCall, req: dict[str, Any], provider: str) -> list[str]:
    """Fill a call's request fields (system, tools, messages, max output tokens) from a request object; return
    what the request leaves unknown, one sentence each (:func:`~ctxwatch.formats.wire.damage.request_problems`:
    a ``messages`` list that is missing or damaged makes the history unknown, never empty), and each completion
    limit written as a string of digits (:func:`~ctxwatch.formats.wire.values.limit_counts`: read as the count,
    and said)."""
    if provider == "anthropic":
        params = p if isinstance(p := req.get("params"), dict) else {}
        system, tools, messages, mx = anthropic_request_to_parts(params)
        _fix_anthropic_images(params, messages)
        requested = params.get("model")
        flavour, where, body = "anthropic", "params", params
    else:
        body = b if isinstance(b := req.get("body"), dict) else {}
        url = str(req.get("url") or "")
        system, tools, messages, mx = _openai_request(url, body)
        requested = body.get("model")
        flavour = ("responses" if url.endswith("/responses") or "input" in body or "instructions" in body else
                   "completions" if "messages" not in body and isinstance(body.get("prompt"), str) else "openai")
        where = "body"
    call.system, call.tools, call.messages, call.max_output_tokens = system, tools, messages, mx
    if isinstance(requested, str):
        call.provenance.requested_model = requested
        if call.model is None:
            call.model = requested
    return [*request_problems(call, body, flavour, where), *limit_counts(body, where)]


def usage_notes(path: str, line: int, v: dict[str, Any], provider: str) -> list[Issue]:
    """An ``invalid_field`` issue at ``line`` for each count of a successful result's usage block (OpenAI
    ``response.body.usage``, Anthropic ``result.message.usage``) written as a string of digits
    (:func:`~ctxwatch.formats.wire.values.string_counts`: read as the count, and said)."""
    if provider == "anthropic":
        res = v.get("result")
        msg = res.get("message") if isinstance(res, dict) else None
        block, where = (msg.get("usage") if isinstance(msg, dict) else None), "result.message.usage"
    else:
        resp = v.get("response")
        body = resp.get("body") if isinstance(resp, dict) else None
        block, where = (body.get("usage") if isinstance(body, dict) else None), "response.body.usage"
    return [Issue(path, line, "invalid_field", p) for p in string_counts(block, where)]


#: Issue kind: a batch line without a ``custom_id`` string (none, ``null``, a number...) can be joined to
#: nothing: a result is counted with its usage only, a request gets no result.
NO_CUSTOM_ID = "no_custom_id"


def _provenance(v: dict[str, Any], side: str) -> Provenance:
    """A batch line's provenance: its ``custom_id`` when it is a string (:func:`join_id`); one of another JSON
    type is no id (it names no request) and is kept, as JSON text, in ``details["custom_id"]``."""
    prov = Provenance(custom_id=join_id(v), batch_side=side)
    if prov.custom_id is None and "custom_id" in v:
        prov.details["custom_id"] = batch_id(v["custom_id"])
    return prov


def unjoinable(path: str, line: int, v: dict[str, Any], side: str) -> Issue:
    """The :data:`NO_CUSTOM_ID` issue of a result (``side`` ``output``) or a request (``input``) ``v`` at
    ``line`` of ``path`` that has no ``custom_id`` string."""
    if side == "output":
        return Issue(path, line, NO_CUSTOM_ID, f"batch result {shown_id(v)}: it cannot be joined to its request "
                     "(a custom_id is a string); counted with its usage only")
    return Issue(path, line, NO_CUSTOM_ID, f"batch request {shown_id(v)}: no result can be joined to it (a "
                 "custom_id is a string)")


def request_call(path: str, rec: Record, req: dict[str, Any], provider: str) -> list[Output]:
    """A call with the request only (an input file read alone): usage is ``None`` (not reported).

    Args:
        path: the input file. rec: the record holding the request. req: ``{custom_id, body|params, …}``.
        provider: ``openai`` | ``anthropic``.

    Returns:
        A :class:`ParsedCall`, unkeyed (:class:`~ctxwatch.formats.batch.BatchReader` keys it by its content: two
        requests under one ``custom_id`` stay two calls), followed by a :data:`NO_CUSTOM_ID` issue when it has
        no ``custom_id`` string and an ``invalid_field`` issue for each part its request leaves unknown
        (:func:`attach_request`); or one ``unsupported_endpoint`` issue for an embeddings/moderations line.
    """
    url = str(req.get("url") or "")
    if url.endswith(_NON_CHAT_ENDPOINTS):
        return [Issue(path, rec.line, "unsupported_endpoint",
                      f"{url} request {shown_id(req)} is not a chat call; skipped")]
    call = ParsedCall(source=_src(path, rec), provider=provider, provenance=_provenance(req, "input"))
    problems = attach_request(call, req, provider)
    unjoined = [unjoinable(path, rec.line, req, "input")] if call.provenance.custom_id is None else []
    return [call, *unjoined, *(Issue(path, rec.line, "invalid_field", p) for p in problems)]


def _status_code(v: Any) -> int | None:
    """The HTTP status of an OpenAI batch result, or ``None`` when it gives none that can be read (the body then
    decides).  A status written as a numeric string or an integral float is read as its number; it and any
    other value that is no integer are noted as a bad field, so "200" is neither a failure nor a silence."""
    if v is None:
        return None
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    if isinstance(v, str) and v.strip().isdigit() and v.strip().isascii():
        note_bad_field(f"response.status_code is a string ({v!r}): read as {int(v)}")
        return int(v)
    if isinstance(v, float) and v.is_integer():
        note_bad_field(f"response.status_code is a non-integer number ({v!r}): read as {int(v)}")
        return int(v)
    note_bad_field(f"response.status_code is {json_type(v)}, not an integer: status unknown")
    return None


def openai_result(path: str, rec: Record, v: dict[str, Any]) -> Output:
    """Call (or failure issue) of one OpenAI batch output line, keyed by its ``batch_req`` id; unkeyed when it
    has none (:class:`~ctxwatch.formats.batch.BatchReader` keys it by its content)."""
    shown = shown_id(v)  # ('triage-004', or `with custom_id null`: never Python's repr)
    resp = v.get("response") if isinstance(v.get("response"), dict) else None
    err = v.get("error")
    raw_status = resp.get("status_code") if resp else None
    status = _status_code(raw_status)
    body = resp.get("body") if resp and isinstance(resp.get("body"), dict) else None
    if err or resp is None or (status is not None and status != 200) or body is None:
        if isinstance(err, dict):
            why = ": ".join(p for p in (said(err.get("code")) or "error", said(err.get("message"))) if p)
        elif isinstance(body, dict) and isinstance(be := body.get("error"), dict):
            why = ": ".join(p for p in (said(be.get("type")) or said(be.get("code")) or "error",
                                        said(be.get("message"))) if p)
        elif said(err):  # (an error given as a string, or another value: said as it is)
            why = said(err)
        else:
            why = "no response body" if resp is not None else "no response"
        st = f"HTTP {said(raw_status if status is None else status)}; " if raw_status is not None else ""
        return Issue(path, rec.line, "failed_request", f"batch request {shown} failed ({st}{why}); not counted")
    if body.get("object") == "embedding" or (body.get("object") == "list" and "data" in body):
        return Issue(path, rec.line, "unsupported_endpoint", f"embeddings result {shown} is not a chat call; skipped")
    is_responses = body.get("object") == "response" or isinstance(body.get("output"), list)
    if is_responses and body.get("status") == "failed":
        return Issue(path, rec.line, "failed_request", f"batch request {shown}: response status failed; not counted")
    usage = (responses_usage if is_responses else openai_usage)(body.get("usage"))
    info = (responses_response_info if is_responses else openai_response_info)(body)
    ts = parse_timestamp(body.get("created") if body.get("created") is not None else body.get("created_at"))
    model = model_id(body.get("model"), "the response body's model")
    extra = _provenance(v, "output")
    rid = v["id"] if isinstance(v.get("id"), str) and v["id"] else None
    if rid is not None:
        extra.details["batch_request_id"] = rid
    if isinstance(resp.get("request_id"), str):
        extra.request_id = resp["request_id"]
    return ParsedCall(source=_src(path, rec), timestamp=ts, model=model, provider="openai", usage=usage,
                      response=info, key=rid, provenance=extra)


def anthropic_result(path: str, rec: Record, v: dict[str, Any]) -> Output:
    """Call (or failure issue) of one Anthropic Message Batches result line, keyed by its message id; unkeyed
    when it has none (:class:`~ctxwatch.formats.batch.BatchReader` keys it by its content)."""
    shown = shown_id(v)
    res = v["result"]
    rtype = res.get("type")
    if rtype != "succeeded":
        why = said(rtype) or "unknown result type"
        err = res.get("error")
        if isinstance(err, dict):
            inner = e if isinstance(e := err.get("error"), dict) else err
            detail = " ".join(p for p in (said(inner.get("type")), said(inner.get("message"))) if p)
            why += f": {detail}" if detail else ""
        return Issue(path, rec.line, "failed_request", f"batch request {shown} {why}; not counted")
    msg = res.get("message")
    if not isinstance(msg, dict):
        return Issue(path, rec.line, "failed_request", f"batch request {shown} succeeded without a message; skipped")
    key = msg["id"] if isinstance(msg.get("id"), str) and msg["id"] else None
    return ParsedCall(source=_src(path, rec), model=model_id(msg.get("model"), "the message's model"),
                      provider="anthropic", usage=anthropic_usage(msg.get("usage")),
                      response=anthropic_response_info(msg), key=key,
                      provenance=_provenance(v, "output"))
