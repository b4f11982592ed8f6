"""ctxwatch's canonical log format: one ``{request, response}`` record per call, in any of three API shapes.

**Canonical record** (one JSON object per line; what :class:`ctxwatch.CallLogger` writes)::

    {"timestamp": "2025-01-01T00:00:00Z",            # optional; ISO-8601 or epoch seconds
     "session": "run-42",                             # optional
     "window": 128000,                                # optional context window override for this call
     "request":  {"model": "gpt-4o", "messages": [...], "tools": [...], "max_tokens": 1024},
     "response": {"choices": [{"message": {...}}], "usage": {"prompt_tokens": ..., ...}}}

``request`` is an OpenAI chat-completions request body; ``response`` the response body.  The same wrapper
is accepted around an Anthropic Messages body (``system``, ``messages`` with content blocks, ``tools`` with
``input_schema``; usage ``input_tokens`` + cache fields) and an OpenAI Responses API body
(``instructions``, ``input``, ``tools``; usage ``input_tokens``/``output_tokens``).  The shapes themselves are
decoded in :mod:`ctxwatch.formats.wire`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ctxwatch.formats import FormatSpec, Output, Reader, Sniff, register, usage_count
from ctxwatch.formats.wire.anthropic import anthropic_request_to_parts
from ctxwatch.formats.wire.damage import request_problems
from ctxwatch.formats.wire.dedupe import ResponseIds, copy_rank, record_hash
from ctxwatch.formats.wire.exchange import build_call, exchange_flavour
from ctxwatch.formats.wire.messages import MessageMemo
from ctxwatch.formats.wire.openai import openai_message, openai_request_to_parts, responses_request_to_parts
from ctxwatch.formats.wire.resend import ResendDecoder
from ctxwatch.formats.wire.streams import is_openai_stream, stream_body, stream_usage_note
from ctxwatch.formats.wire.timestamps import parse_timestamp
from ctxwatch.formats.wire.values import limit_counts, string_counts
from ctxwatch.model import Issue, ParsedCall, json_type
from ctxwatch.source import Record

#: The reader, and the names other packages import from this module that live in :mod:`ctxwatch.formats.wire`
#: now (the engine's copy ranking, the demo's and ContextBudget's request decoding).
__all__ = [
    "CanonicalReader", "anthropic_request_to_parts", "copy_rank", "openai_message", "openai_request_to_parts",
    "responses_request_to_parts",
]


#: The top-level keys of a record that :class:`CanonicalReader` reads (any other may stay raw when it is big).
_READ = frozenset({"request", "response", "timestamp", "time", "created_at", "session", "window", "context"})


class CanonicalReader(Reader):
    """Reader for ``{"request": ..., "response": ...}`` records (OpenAI chat, Anthropic, Responses API).

    ``decode`` decodes a line reusing the messages its request re-sends from the previous line's, ``memo`` the
    messages built from them; ``ids`` keys the calls by response id.
    """

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.decode = ResendDecoder(_READ)
        self.memo = MessageMemo()
        self.ids = ResponseIds(path)

    def feed(self, rec: Record) -> Iterable[Output]:
        """One record = one call; anything that is not such a record is an ``unknown_record`` issue."""
        self.ids.start(rec.line)
        v = rec.value
        if not isinstance(v, dict) or not isinstance(v.get("request"), dict):
            # (a record whose request is there but of another JSON type says so: it is damage, not another kind)
            why = f"request is a JSON {json_type(v['request'])}, not an object" \
                if isinstance(v, dict) and "request" in v else "not a {request, response} record"
            return [Issue(self.path, rec.line, "unknown_record", f"{why}; skipped")]
        req = v["request"]
        if isinstance(req.get("body"), dict):  # a wrapper that nests the body, like claude-trace
            req = req["body"]
        resp = v.get("response")
        if isinstance(resp, dict) and isinstance(resp.get("body"), dict):
            resp = resp["body"]
        streamed = None
        if isinstance(resp, list) and is_openai_stream(resp):
            # (a streamed response logged as its list of chunks or events: read as the body they stand for)
            resp = streamed = stream_body(resp)
        written = next((v[k] for k in ("timestamp", "time", "created_at") if _written(v.get(k))), None)
        # (a time written but unusable is noted by parse_timestamp and stays unknown: the response's created is
        # the fall back of a record that writes none, not a guess for a damaged one)
        ts = parse_timestamp(written) if written is not None else \
            parse_timestamp(resp.get("created")) if isinstance(resp, dict) else None
        ambiguous: list[str] = []
        call = build_call(self.path, rec, req, resp, timestamp=ts, memo=self.memo, problems=ambiguous)
        extra_issues = self.ids.assign(call, resp.get("id") if isinstance(resp, dict) else None, rec.line)
        where = "request" if req is v["request"] else "request.body"
        notes = [*_malformed(self.path, rec.line, req, resp, call, where, self.memo), *extra_issues,
                 *(Issue(self.path, rec.line, "ambiguous_usage", a) for a in ambiguous),
                 *(Issue(self.path, rec.line, "invalid_field", n) for n in _record_fields(v))]
        if streamed is not None and (gap := stream_usage_note(streamed)):
            notes.append(Issue(self.path, rec.line, "no_usage", gap))
        if self.ids.better_copy(call, rec.line) is not None:
            return self.ids.not_counted(call, rec.line, notes)
        replaced = self.ids.counted_copy(call, rec.line, notes)
        if call.key is None:  # (no response id: a refused request)
            nested = v["request"] is not req
            self.ids.content(call, record_hash(v, ("request", "body") if nested else ("request",), self.memo,
                                               self.ids.tools_hash), rec.line)
        call.session = v.get("session") if isinstance(v.get("session"), str) else None
        if v.get("window") is not None:
            # (a value that is not a window, "big", 0 or -100, is passed on for the run's sanitize to report and make
            # unknown, rather than falling back to the catalogue's window in silence)
            call.window = usage_count(v["window"])
        if isinstance(v.get("context"), str):
            call.context = v["context"]
        return [call, *replaced, *notes]


def _record_fields(v: dict[str, Any]) -> list[str]:
    """A sentence for each top-level field of the record ``v`` of the wrong JSON type, for ``invalid_field``
    issues: ``session`` or ``context`` that is no string (read as none, as before: not a name to make of a
    number or an object); ``window`` written as a string of digits (read as the count,
    :func:`~ctxwatch.formats.wire.values.string_counts`; a value that is no count at all is the run's
    sanitizer's to report)."""
    out = [f"{k} is a JSON {json_type(v[k])}, not a string: read as none"
           for k in ("session", "context") if v.get(k) is not None and not isinstance(v[k], str)]
    return [*out, *string_counts({"window": v.get("window")})]


def _written(t: Any) -> bool:
    """A record's time field holds something: not absent, ``null``, ``""`` or the number 0 (which loggers write
    for no time; a boolean is a value, of the wrong type)."""
    return t is not None and t != "" and not (t.__class__ in (int, float) and t == 0)


def _malformed(path: str, line: int, req: dict[str, Any], resp: Any, call: ParsedCall, where: str,
               memo: MessageMemo) -> list[Issue]:
    """``invalid_field`` issues for a record whose request history, system prompt or tools, or whose response, is
    missing or has the wrong JSON type (:func:`request_problems`; ``memo``: the one that built the call's
    messages); the call is kept with that part unknown (a history of 0 tokens, an absent system prompt or no
    usage would pass for a real value)."""
    problems = request_problems(call, req, exchange_flavour(req, resp), where, memo)
    if resp is not None and not isinstance(resp, dict):
        problems.append(f"response is a JSON {type(resp).__name__}, not an object: usage unknown")
    # (a count the API writes as a number, given as a string of digits: read as the count, and said)
    problems += limit_counts(req, where)
    if isinstance(resp, dict):
        problems += string_counts(resp.get("usage"), "response.usage")
    return [Issue(path, line, "invalid_field", p) for p in problems]


def _sniff_canonical(s: Sniff) -> float:
    vals = [v for v in s.values if isinstance(v, dict)]
    if not vals:
        return 0.0
    hits = 0
    for v in vals:
        rq = v.get("request")
        if isinstance(rq, dict) and ("messages" in rq or "input" in rq) and "body" not in rq:
            hits += 1
    return 0.9 * hits / len(vals)


register(FormatSpec(
    name="canonical", aliases=("openai", "anthropic", "responses"),
    description="ctxwatch canonical {request, response} records (OpenAI chat, Anthropic Messages, Responses API)",
    sniff=_sniff_canonical, reader=CanonicalReader, records_independent=True,
    example='{"request":{"model":"gpt-4o","messages":[...]},"response":{"usage":{"prompt_tokens":12}}}',
))
