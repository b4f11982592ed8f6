"""Google Gemini API response records: one ``generateContent`` response (with its ``usageMetadata``) per line.

A line is any of:

* a bare ``GenerateContentResponse`` ``{custom_id?, candidates, usageMetadata, modelVersion, responseId?}``;
* a Gemini API batch output line ``{key, response}`` or ``{key, error}`` (Gemini API docs, "Batch Mode");
* a Vertex AI batch prediction line ``{request, response, status}`` (Vertex AI docs, "Batch prediction"); a
  non-empty ``status`` is a failure.

When the line holds the request (``contents``, ``systemInstruction``, ``tools``,
``generationConfig.maxOutputTokens``) it is used; otherwise system/tools/messages are ``None`` (not logged).
The usage rule is :func:`~ctxwatch.formats.wire.gemini.gemini_usage`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ctxwatch.formats import FormatSpec, Reader, Sniff, register
from ctxwatch.formats.wire.gemini import (
    gemini_request_problems,
    gemini_request_to_parts,
    gemini_response_info,
    gemini_total_note,
    gemini_usage,
    get_field,
)
from ctxwatch.formats.wire.timestamps import parse_timestamp
from ctxwatch.formats.wire.values import model_id, note_usage_types
from ctxwatch.model import Issue, ParsedCall, Provenance, SourceRef
from ctxwatch.source import Record

Output = ParsedCall | Issue

#: The names tests and other modules import from here (the usage rule lives in :mod:`ctxwatch.formats.wire.gemini`).
__all__ = ["GeminiReader", "gemini_usage"]


def _has_usage(d: Any) -> bool:
    return isinstance(d, dict) and ("usageMetadata" in d or "usage_metadata" in d)


def _src(path: str, rec: Record) -> SourceRef:
    return SourceRef(path, rec.line, rec.line_end, rec.byte_start, rec.byte_end)


class GeminiReader(Reader):
    """Reader of Gemini response records (``usageMetadata``), one call per line; see the module docstring."""

    def feed(self, rec: Record) -> Iterable[Output]:
        """One line → one call, or a ``failed_request`` / ``unknown_record`` issue."""
        v = rec.value
        if not isinstance(v, dict):
            return [Issue(self.path, rec.line, "unknown_record", "not a Gemini response record; skipped")]
        key = v.get("key") if v.get("key") is not None else v.get("custom_id")
        if _has_usage(v) or "candidates" in v:
            resp, req = v, None
        elif isinstance(v.get("response"), dict):
            resp = v["response"]
            req = v.get("request") if isinstance(v.get("request"), dict) else None
        else:
            resp, req = None, None
        status = v.get("status")
        if v.get("error") or (isinstance(status, str) and status) or (isinstance(status, dict) and status):
            err = v.get("error") or status
            why = err.get("message") if isinstance(err, dict) else str(err)
            return [Issue(self.path, rec.line, "failed_request",
                          f"request {key!s} failed ({str(why)[:200]}); not counted")]
        if resp is None:
            return [Issue(self.path, rec.line, "unknown_record", "no Gemini response (usageMetadata) here; skipped")]
        meta = get_field(resp, "usageMetadata", "usage_metadata")
        note_usage_types(meta, f"{'response.' if resp is not v else ''}"
                               f"{'usageMetadata' if resp.get('usageMetadata') is not None else 'usage_metadata'}")
        usage, tool = gemini_usage(meta)
        model = get_field(resp, "modelVersion", "model_version")
        extra = Provenance(custom_id=str(key) if key is not None else None)
        # A {request, response} line without "status" is not taken for a Vertex line: Vertex writes status on every
        # row of its output (Vertex docs, "Batch inference from Cloud Storage": a row's response in "response", its
        # error details in "status"; every published row has "status": "" beside processed_time, e.g. LiteLLM's
        # Vertex batch docs), while {request, response} alone is also what a request logger writes for a
        # synchronous generateContent call (tests/test_damaged_requests.py reads one so).  Nothing in such a line
        # says which it is; taken for a batch line it would be priced at half the rate and a logged conversation
        # cut into separate requests (no eviction, compaction or forecast), so without status it stays a
        # synchronous call.  (Not checked: a Vertex BigQuery output table exported to JSONL, should the export
        # leave a null status out.)
        if resp is not v and ("key" in v or ("request" in v and "status" in v)):
            # A Gemini Batch Mode ({key, response}) or Vertex AI batch prediction ({request, response, status})
            # output line: billed at the batch rate (catalog BATCH_DISCOUNT), and a request of its own, not a turn
            # of the line before (Provenance.batch_side: no eviction, no compaction, no forecast across lines; a Vertex
            # line has no key, so the mark cannot be the custom_id).  A bare response with its own
            # custom_id is not known to come from a batch API, and the saved sample does not: the script that
            # wrote it (nf-osi/jobs, submit_batch_gemini.sh) calls generateContent once per line and appends
            # the custom_id with jq, so those are synchronous calls at the standard rate.
            extra.batch_side = "output"
        if tool:
            extra.tool_use_prompt_tokens = tool
        rid = get_field(resp, "responseId", "response_id")
        ts = parse_timestamp(get_field(resp, "createTime", "create_time"))
        call = ParsedCall(source=_src(self.path, rec), timestamp=ts,
                          model=model_id(model, "the response's modelVersion"), provider="google", usage=usage,
                          response=gemini_response_info(resp), provenance=extra,
                          key=str(rid) if rid else (f"gemini:{key}" if key is not None else None))
        out: list[Output] = [call]
        if (gap := gemini_total_note(meta, usage)) is not None:
            out.append(Issue(self.path, rec.line, "usage_total", gap))
        if req is not None:
            call.system, call.tools, call.messages, call.max_output_tokens = gemini_request_to_parts(req)
            if call.model is None and isinstance(req.get("model"), str):
                call.model = req["model"]
            out += [Issue(self.path, rec.line, "invalid_field", p) for p in gemini_request_problems(call, req)]
        return out


def _sniff_gemini(s: Sniff) -> float:
    vals = [v for v in s.values if isinstance(v, dict)]
    if not vals:
        return 0.0
    hits = sum(1 for v in vals if _has_usage(v) or _has_usage(v.get("response"))
               or ("candidates" in v and "modelVersion" in v))
    return 0.95 * hits / len(vals)


register(FormatSpec(
    name="gemini",
    description="Gemini generateContent responses with usageMetadata (batch outputs, Vertex batch prediction)",
    sniff=_sniff_gemini, reader=GeminiReader, aliases=("gemini-batch",),
    example='{"custom_id":"r1","candidates":[…],"usageMetadata":{"promptTokenCount":5302,…},"modelVersion":"…"}',
))
