"""OpenAI Batch API and Anthropic Message Batches files: input (request) files, output (result) files, joins.

**OpenAI Batch** (FORMATS.md §3).  Input lines are ``{custom_id, method, url, body}`` where ``body`` is a
chat-completions request (``/v1/chat/completions``) or a Responses API request (``/v1/responses``).  Output
lines are ``{id: "batch_req_…", custom_id, response: {status_code, request_id, body}, error}``; ``body`` is
the completion with its ``usage``.  Output order may differ from input order (OpenAI Batch guide), so the
two are joined by ``custom_id``.  Failed requests (``status_code`` ≠ 200, ``error`` not null, or no body)
become issues, never calls with zero usage.

**Anthropic Message Batches** (FORMATS.md §4).  Result lines are ``{custom_id, result: {type, message}}``
with ``type`` one of ``succeeded`` | ``errored`` | ``canceled`` | ``expired`` (Anthropic API reference,
"Retrieve Message Batch results"); only ``succeeded`` results are calls.  The last result line may lack
its newline.  Request files hold ``{custom_id, params}`` objects, possibly concatenated with no separator
(the saved sample), which :func:`ctxwatch.source.lines.decode_line` splits; a ``{"requests": [...]}``
create-batch body is accepted too.

What each file gives on its own:

* an output/result file: reported usage per call, the resolved model, the completion; no request text
  (``system``/``tools``/``messages`` are ``None``: not logged);
* an input/request file: the request (system, tools, messages, max output tokens), no usage;
* both, joined by :func:`join_batch` / :func:`read_batch_pair` or by a reader built with ``input_path``:
  one call per result, request text from the input.  The call's :class:`~ctxwatch.model.SourceRef` is the
  *output* line; ``extra`` holds ``input_path``, ``input_line``, ``input_bytes`` and ``input_part`` (the
  value's index when several objects share the line) so that the request can be re-read.

Request bodies are never kept in memory for the join: the input is indexed as ``custom_id`` → byte range
and each request is re-read from disk when its result arrives (bounded memory on large batches).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from ctxwatch.formats import FormatSpec, Reader, Sniff, register, sniff_file
from ctxwatch.formats.wire.anthropic import anthropic_request_to_parts, anthropic_response_info, anthropic_usage
from ctxwatch.formats.wire.damage import request_problems
from ctxwatch.formats.wire.images import image_size_from_base64
from ctxwatch.formats.wire.openai import (
    openai_request_to_parts,
    openai_response_info,
    openai_usage,
    responses_request_to_parts,
    responses_response_info,
    responses_usage,
)
from ctxwatch.formats.wire.timestamps import parse_timestamp
from ctxwatch.model import BATCH_SIDE, Issue, Message, ParsedCall, Part, SourceRef
from ctxwatch.source import Record, decode_line, iter_records

Output = ParsedCall | Issue

# Kinds of batch line (see classify_batch_value).
OPENAI_INPUT = "openai-input"
OPENAI_OUTPUT = "openai-output"
ANTHROPIC_REQUEST = "anthropic-request"
ANTHROPIC_RESULT = "anthropic-result"
ANTHROPIC_BATCH_OBJECT = "anthropic-batch-object"
ANTHROPIC_REQUESTS_BODY = "anthropic-requests-body"

_INPUT_KINDS = (OPENAI_INPUT, ANTHROPIC_REQUEST, ANTHROPIC_REQUESTS_BODY)
_OUTPUT_KINDS = (OPENAI_OUTPUT, ANTHROPIC_RESULT)
_PROVIDER = {
    OPENAI_INPUT: "openai", OPENAI_OUTPUT: "openai",
    ANTHROPIC_REQUEST: "anthropic", ANTHROPIC_RESULT: "anthropic",
    ANTHROPIC_BATCH_OBJECT: "anthropic", ANTHROPIC_REQUESTS_BODY: "anthropic",
}

#: Endpoints that are not chat calls (no context window to watch); their lines are reported and skipped.
#: Source: OpenAI Batch guide, supported endpoints (/v1/embeddings, /v1/moderations).
_NON_CHAT_ENDPOINTS = ("/v1/embeddings", "/v1/moderations")


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


# --- the input index -------------------------------------------------------------------------------

@dataclass(slots=True, frozen=True)
class _Loc:
    line: int
    byte_start: int
    byte_end: int
    part: int
    item: int  # index inside a {"requests": [...]} body, else -1


class BatchInputIndex:
    """``custom_id`` → location of each request in an input (request) file; bodies are re-read on demand.

    Args:
        path: the input file (OpenAI ``{custom_id, body}`` lines or Anthropic ``{custom_id, params}``
            objects, possibly concatenated on one line).

    Attributes:
        kind: the provider of the requests (``openai`` | ``anthropic``), or ``None`` if none was found.
        issues: problems met while indexing (unreadable file, invalid lines, duplicate ``custom_id``s).
            The ``concatenated`` notice of the Anthropic request file is expected (FORMATS.md §4) and dropped.
        used: the ``custom_id``s fetched so far (to report requests that got no result).
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.kind: str | None = None
        self.issues: list[Issue] = []
        self.used: set[str] = set()
        self._locs: dict[str, _Loc] = {}
        self._order: list[str] = []
        self._cache: tuple[int, list[Any]] | None = None  # (byte_start, values) of the last line re-read
        try:
            for rec in iter_records(path):
                if isinstance(rec, Issue):
                    if rec.kind != "concatenated":
                        self.issues.append(rec)
                    continue
                self._add(rec)
        except OSError as exc:
            self.issues.append(Issue(path, 0, "unreadable", f"cannot read batch input: {exc.strerror or exc}"))

    def _add(self, rec: Record) -> None:
        kind = classify_batch_value(rec.value)
        if kind == ANTHROPIC_REQUESTS_BODY:
            for i, item in enumerate(rec.value["requests"]):
                if isinstance(item, dict) and isinstance(item.get("custom_id"), str):
                    self._put(item["custom_id"], _Loc(rec.line, rec.byte_start, rec.byte_end, rec.part, i), rec)
            self.kind = self.kind or "anthropic"
            return
        if kind not in (OPENAI_INPUT, ANTHROPIC_REQUEST):
            self.issues.append(Issue(self.path, rec.line, "unknown_record",
                                     "not a batch request ({custom_id, body} or {custom_id, params}); skipped"))
            return
        self.kind = self.kind or _PROVIDER[kind]
        cid = rec.value.get("custom_id")
        if not isinstance(cid, str):
            cid = str(cid)
        self._put(cid, _Loc(rec.line, rec.byte_start, rec.byte_end, rec.part, -1), rec)

    def _put(self, cid: str, loc: _Loc, rec: Record) -> None:
        if cid in self._locs:
            self.issues.append(Issue(self.path, rec.line, "duplicate_custom_id",
                                     f"custom_id {cid!r} already used on line {self._locs[cid].line}; "
                                     "the first request is joined"))
            return
        self._locs[cid] = loc
        self._order.append(cid)

    def __contains__(self, cid: object) -> bool:
        return cid in self._locs

    def __len__(self) -> int:
        return len(self._locs)

    def ids(self) -> list[str]:
        """All indexed ``custom_id``s in file order."""
        return list(self._order)

    def location(self, cid: str) -> _Loc | None:
        """Where request ``cid`` is (line, byte range, part, item), or ``None``."""
        return self._locs.get(cid)

    def fetch(self, cid: str) -> dict[str, Any] | None:
        """The request object ``{custom_id, body|params, …}`` for ``cid``, re-read from disk; ``None`` if gone.

        Marks ``cid`` as used.  Never raises: an unreadable or changed file gives ``None``.
        """
        loc = self._locs.get(cid)
        if loc is None:
            return None
        self.used.add(cid)
        if self._cache is not None and self._cache[0] == loc.byte_start:
            values = self._cache[1]
        else:
            try:
                with open(self.path, "rb") as fh:
                    fh.seek(loc.byte_start)
                    data = fh.read(loc.byte_end - loc.byte_start)
            except OSError:
                return None
            values, _ = decode_line(data.rstrip(b"\n"), self.path, loc.line, first=loc.byte_start == 0)
            self._cache = (loc.byte_start, values)
        if loc.part >= len(values):
            return None
        v = values[loc.part]
        if loc.item >= 0:
            reqs = v.get("requests") if isinstance(v, dict) else None
            if not isinstance(reqs, list) or loc.item >= len(reqs):
                return None
            v = reqs[loc.item]
        return v if isinstance(v, dict) else None


# --- building calls --------------------------------------------------------------------------------

def _src(path: str, rec: Record) -> SourceRef:
    return SourceRef(path, rec.line, rec.line_end, rec.byte_start, rec.byte_end)


def _openai_request(url: str, body: dict[str, Any]) -> tuple[list[str], list[dict[str, Any]], list[Message],
                                                              int | None]:
    """Request parts of an OpenAI batch body by endpoint (FORMATS.md §3)."""
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
    """Give base64 image parts of an Anthropic request their pixel size (failure case B03).

    :func:`~ctxwatch.formats.wire.anthropic.anthropic_request_to_parts` keeps a raw base64 source's first 200
    characters as ``meta["url"]`` without reading its header; this reads the header with
    :func:`~ctxwatch.formats.wire.images.image_size_from_base64`, records the payload size, and drops the bogus url.
    A no-op for parts that already have a size.
    """
    found: dict[str, str] = {}
    for m in params.get("messages") or []:
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


def _attach_request(call: ParsedCall, req: dict[str, Any], provider: str) -> list[str]:
    """Fill a call's request fields (system, tools, messages, max output tokens) from a request object; return
    what the request leaves unknown, one sentence each (:func:`~ctxwatch.formats.wire.damage.request_problems`:
    a ``messages`` list that is missing or damaged makes the history unknown, never empty)."""
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
        call.extra["requested_model"] = requested
        if call.model is None:
            call.model = requested
    return request_problems(call, body, flavour, where)


def request_call(path: str, rec: Record, req: dict[str, Any], provider: str) -> list[Output]:
    """A call with the request only (an input file read alone): usage is ``None`` (not reported).

    Args:
        path: the input file. rec: the record holding the request. req: ``{custom_id, body|params, …}``.
        provider: ``openai`` | ``anthropic``.

    Returns:
        A :class:`ParsedCall` keyed ``request:<custom_id>`` followed by an ``invalid_field`` issue for each part
        its request leaves unknown (:func:`_attach_request`), or one ``unsupported_endpoint`` issue for an
        embeddings/moderations line.
    """
    cid = str(req.get("custom_id"))
    url = str(req.get("url") or "")
    if url.endswith(_NON_CHAT_ENDPOINTS):
        return [Issue(path, rec.line, "unsupported_endpoint", f"{url} request {cid!r} is not a chat call; skipped")]
    call = ParsedCall(source=_src(path, rec), provider=provider, key=f"request:{cid}",
                      extra={"custom_id": cid, BATCH_SIDE: "input"})
    problems = _attach_request(call, req, provider)
    return [call, *(Issue(path, rec.line, "invalid_field", p) for p in problems)]


def _openai_result(path: str, rec: Record, v: dict[str, Any]) -> Output:
    """Call (or failure issue) of one OpenAI batch output line."""
    cid = str(v.get("custom_id"))
    resp = v.get("response") if isinstance(v.get("response"), dict) else None
    err = v.get("error")
    status = resp.get("status_code") if resp else None
    body = resp.get("body") if resp and isinstance(resp.get("body"), dict) else None
    if err or resp is None or (status is not None and status != 200) or body is None:
        if isinstance(err, dict):
            why = f"{err.get('code') or 'error'}: {err.get('message') or ''}".strip()
        elif isinstance(body, dict) and isinstance(body.get("error"), dict):
            why = f"{body['error'].get('type') or body['error'].get('code') or 'error'}: " \
                  f"{body['error'].get('message') or ''}".strip()
        else:
            why = "no response body" if resp is not None else "no response"
        st = f"HTTP {status}; " if status is not None else ""
        return Issue(path, rec.line, "failed_request", f"batch request {cid!r} failed ({st}{why}); not counted")
    if body.get("object") == "embedding" or (body.get("object") == "list" and "data" in body):
        return Issue(path, rec.line, "unsupported_endpoint", f"embeddings result {cid!r} is not a chat call; skipped")
    is_responses = body.get("object") == "response" or isinstance(body.get("output"), list)
    if is_responses and body.get("status") == "failed":
        return Issue(path, rec.line, "failed_request", f"batch request {cid!r}: response status failed; not counted")
    usage = (responses_usage if is_responses else openai_usage)(body.get("usage"))
    info = (responses_response_info if is_responses else openai_response_info)(body)
    ts = parse_timestamp(body.get("created") if body.get("created") is not None else body.get("created_at"))
    model = body.get("model") if isinstance(body.get("model"), str) else None
    extra: dict[str, Any] = {"custom_id": cid, BATCH_SIDE: "output"}
    if isinstance(v.get("id"), str):
        extra["batch_request_id"] = v["id"]
    if isinstance(resp.get("request_id"), str):
        extra["request_id"] = resp["request_id"]
    return ParsedCall(source=_src(path, rec), timestamp=ts, model=model, provider="openai", usage=usage,
                      response=info, key=v["id"] if isinstance(v.get("id"), str) else f"result:{cid}", extra=extra)


def _anthropic_result(path: str, rec: Record, v: dict[str, Any]) -> Output:
    """Call (or failure issue) of one Anthropic Message Batches result line."""
    cid = str(v.get("custom_id"))
    res = v["result"]
    rtype = res.get("type")
    if rtype != "succeeded":
        why = str(rtype or "unknown result type")
        err = res.get("error")
        if isinstance(err, dict):
            inner = e if isinstance(e := err.get("error"), dict) else err
            why += f": {inner.get('type') or ''} {inner.get('message') or ''}".rstrip()
        return Issue(path, rec.line, "failed_request", f"batch request {cid!r} {why}; not counted")
    msg = res.get("message")
    if not isinstance(msg, dict):
        return Issue(path, rec.line, "failed_request", f"batch request {cid!r} succeeded without a message; skipped")
    key = msg["id"] if isinstance(msg.get("id"), str) else f"result:{cid}"
    return ParsedCall(source=_src(path, rec), model=msg.get("model") if isinstance(msg.get("model"), str) else None,
                      provider="anthropic", usage=anthropic_usage(msg.get("usage")),
                      response=anthropic_response_info(msg), key=key,
                      extra={"custom_id": cid, BATCH_SIDE: "output"})


# --- the reader ------------------------------------------------------------------------------------

class BatchReader(Reader):
    """Reader of one OpenAI or Anthropic batch file, joining results to an input file when given one.

    Args:
        path: the file being read (an output/result file, or an input/request file read alone).
        input_path: the matching input (request) file. When given, each result is joined to its request by
            ``custom_id`` (request text from the input, usage from the output); when ``None`` an output file
            gives usage-only calls and an input file gives request-only calls.
        index: an already built index of the input, shared by several output files of one batch (OpenAI
            writes failed requests to a separate error file); ``input_path`` is then ignored.
        report_missing: report, at :meth:`finish`, the requests that got no result and the index's own
            issues.  Pass False for all but the last reader sharing an index.

    Lines of the other provider, or of no batch shape, become ``unknown_record`` issues.  A result whose
    ``custom_id`` is not in the input stays a usage-only call (``extra["joined"] = False``) and is counted
    in one ``unmatched_result`` issue at :meth:`finish`; requests that got no result (neither a call nor a
    failure) are counted in one ``missing_result`` issue.
    """

    def __init__(self, path: str, input_path: str | None = None, *, index: BatchInputIndex | None = None,
                 report_missing: bool = True) -> None:
        super().__init__(path)
        self.input_path = index.path if index is not None else input_path
        self._index: BatchInputIndex | None = index
        self.report_missing = report_missing
        #: Other output files read earlier with the same index (named in the missing_result message).
        self.shared_with: list[str] = []
        self._unmatched: list[tuple[int, str]] = []
        self._results = 0

    @property
    def index(self) -> BatchInputIndex | None:
        """The input index (built on first use), or ``None`` when no input file was given."""
        if self._index is None and self.input_path is not None:
            self._index = BatchInputIndex(self.input_path)
        return self._index

    def feed(self, rec: Record) -> Iterable[Output]:
        """One line (or one of several glued objects) → one call, one issue, or several request calls."""
        v = rec.value
        kind = classify_batch_value(v)
        if kind in _OUTPUT_KINDS:
            out = _openai_result(self.path, rec, v) if kind == OPENAI_OUTPUT else _anthropic_result(self.path, rec, v)
            if isinstance(out, ParsedCall):
                self._results += 1
                return [out, *self._join(out, kind)]
            if self.index is not None and str(v.get("custom_id")) in self.index:
                self.index.used.add(str(v.get("custom_id")))  # answered, if only by a failure
            return [out]
        if kind in (OPENAI_INPUT, ANTHROPIC_REQUEST):
            return request_call(self.path, rec, v, _PROVIDER[kind])
        if kind == ANTHROPIC_REQUESTS_BODY:
            return [out for r in v["requests"] if isinstance(r, dict) and "custom_id" in r
                    for out in request_call(self.path, rec, r, "anthropic")]
        if kind == ANTHROPIC_BATCH_OBJECT:
            counts = v.get("request_counts") or {}
            return [Issue(self.path, rec.line, "batch_object",
                          f"message batch object {v.get('id')!s} ({v.get('processing_status')}; counts {counts}); "
                          "it holds no calls: read the results file")]
        return [Issue(self.path, rec.line, "unknown_record", "not a batch request or result line; skipped")]

    def _join(self, call: ParsedCall, kind: str) -> list[Issue]:
        """Give a result its request from the input file; the ``invalid_field`` issues of what that request
        leaves unknown name the input file's line, where the damage is."""
        index = self.index
        if index is None:
            return []
        cid = call.extra["custom_id"]
        req = index.fetch(cid) if cid in index else None
        if req is None:
            call.extra["joined"] = False
            self._unmatched.append((call.source.line, cid))
            return []
        loc = index.location(cid)
        problems = _attach_request(call, req, _PROVIDER[kind])
        call.extra.update(joined=True, input_path=index.path)
        if loc is not None:
            call.extra.update(input_line=loc.line, input_bytes=(loc.byte_start, loc.byte_end), input_part=loc.part)
            if loc.item >= 0:
                call.extra["input_item"] = loc.item
        return [Issue(index.path, loc.line if loc is not None else 0, "invalid_field", p) for p in problems]

    def finish(self) -> Iterable[Output]:
        """Report the index's own problems, results with no request, and requests with no result."""
        index = self._index
        if index is None:
            return []
        out: list[Output] = list(index.issues) if self.report_missing else []
        if self._unmatched:
            line, cid = self._unmatched[0]
            out.append(Issue(self.path, line, "unmatched_result",
                             f"{len(self._unmatched)} of {self._results} results have no request in "
                             f"{os.path.basename(index.path)} (first: {cid!r}); shown with usage only"))
        missing = [c for c in index.ids() if c not in index.used] if self.report_missing else []
        if missing:
            loc = index.location(missing[0])
            where = os.path.basename(self.path) if not self.shared_with else \
                ", ".join(os.path.basename(p) for p in [*self.shared_with, self.path])
            out.append(Issue(index.path, loc.line if loc else 0, "missing_result",
                             f"{len(missing)} of {len(index)} requests have no result in "
                             f"{where} (first: {missing[0]!r})"))
        return out


class OpenAIBatchReader(BatchReader):
    """:class:`BatchReader` registered as ``openai-batch`` (FORMATS.md §3)."""


class AnthropicBatchReader(BatchReader):
    """:class:`BatchReader` registered as ``anthropic-batch`` (FORMATS.md §4)."""


# --- joins over files ------------------------------------------------------------------------------

def _read(reader: BatchReader, path: str) -> tuple[list[ParsedCall], list[Issue]]:
    calls: list[ParsedCall] = []
    issues: list[Issue] = []

    def take(outs: Iterable[Output]) -> None:
        for o in outs:
            (calls if isinstance(o, ParsedCall) else issues).append(o)  # type: ignore[arg-type]

    try:
        for rec in iter_records(path):
            if isinstance(rec, Issue):
                if rec.kind != "concatenated":  # expected in Anthropic request files (FORMATS.md §4)
                    issues.append(rec)
                continue
            take(reader.feed(rec))
    except OSError as exc:
        issues.append(Issue(path, 0, "unreadable", f"cannot read: {exc.strerror or exc}"))
    take(reader.finish())
    return calls, issues


def join_batch(input_path: str, output_path: str) -> tuple[list[ParsedCall], list[Issue]]:
    """Join a batch input (request) file and its output (result) file by ``custom_id``.

    Works for OpenAI Batch and Anthropic Message Batches alike (the line shapes say which).

    Args:
        input_path: the requests (``{custom_id, body}`` / ``{custom_id, params}``).
        output_path: the results (``{custom_id, response, error}`` / ``{custom_id, result}``).

    Returns:
        ``(calls, issues)``: one call per successful result, in output order; joined calls carry the
        request's system prompt, tools and messages.  Failed results, results with no request, requests with
        no result and damaged lines are issues.  Never raises for bad content or unreadable files.
    """
    reader = BatchReader(output_path, input_path=input_path)
    return _read(reader, output_path)


_CID_RE = re.compile(rb'"custom_id"\s*:\s*"((?:[^"\\]|\\.)*)"')


def _file_kind(path: str) -> str | None:
    """The batch kind of a file from its head (first values, or a regex on the head when a line is huge)."""
    try:
        sn = sniff_file(path)
    except OSError:
        return None
    kinds = [classify_batch_value(v) for v in sn.values[:20]]
    kinds = [k for k in kinds if k]
    if kinds:
        return max(set(kinds), key=kinds.count)
    head = sn.head
    if b'"custom_id"' in head:
        if b'"params"' in head:
            return ANTHROPIC_REQUEST
        if b'"result"' in head:
            return ANTHROPIC_RESULT
        if b'"response"' in head:
            return OPENAI_OUTPUT
        if b'"body"' in head:
            return OPENAI_INPUT
    return None


def _ids_in(path: str) -> set[str]:
    """``custom_id`` values of a file by a cheap byte scan (used only to pair files, never for numbers)."""
    ids: set[str] = set()
    try:
        with open(path, "rb") as fh:
            for raw in fh:
                for m in _CID_RE.finditer(raw):
                    cid = m.group(1)
                    if b"\\" in cid:  # (JSON escapes: "caf\u00e9" in one file is "café" in the other)
                        try:
                            ids.add(orjson.loads(b'"' + cid + b'"'))
                            continue
                        except orjson.JSONDecodeError:
                            pass
                    ids.add(cid.decode("utf-8", "replace"))
    except OSError:
        pass
    return ids


def _models_by_id(path: str) -> dict[str, str]:
    """``custom_id -> model`` of a batch file: the request's ``body.model`` / ``params.model``, or the result's
    ``response.body.model`` / ``result.message.model`` (read only to pair batches that reuse custom_ids)."""
    out: dict[str, str] = {}
    try:
        for rec in iter_records(path):
            v = rec.value if isinstance(rec, Record) else None
            if not isinstance(v, dict) or not isinstance(cid := v.get("custom_id"), str):
                continue
            for outer, inner in (("body", None), ("params", None), ("response", "body"), ("result", "message")):
                node = v.get(outer)
                if inner is not None and isinstance(node, dict):
                    node = node.get(inner)
                if isinstance(node, dict) and isinstance(model := node.get("model"), str):
                    out[cid] = model
                    break
    except OSError:
        pass
    return out


def _model_agreement(results: dict[str, str], requests: dict[str, str]) -> int:
    """How well a batch's requests name the models its results report: per shared custom_id, the length of the
    request's model id when the result's is that id or a snapshot of it (``gpt-4o-mini`` ->
    ``gpt-4o-mini-2024-07-18``), so the most specific request model counts most (``gpt-4o`` is a prefix of
    both ``gpt-4o-2024-08-06`` and ``gpt-4o-mini-...``)."""
    score = 0
    for cid, got in results.items():
        asked = requests.get(cid)
        if asked and (got == asked or got.startswith(asked + "-")):
            score += len(asked)
    return score


def _name_likeness(a: str, b: str) -> int:
    """How alike two file names are: the length of their common prefix plus that of their common suffix
    (``batch_A_output.jsonl`` is closer to ``batch_A_input.jsonl`` than to ``batch_B_input.jsonl``)."""
    def common(x: str, y: str) -> int:
        n = 0
        for c, d in zip(x, y, strict=False):  # (stops at the shorter name)
            if c != d:
                break
            n += 1
        return n

    x, y = os.path.basename(a), os.path.basename(b)
    prefix = common(x, y)
    return prefix + common(x[prefix:][::-1], y[prefix:][::-1])


def _expand(paths: list[str]) -> Iterator[str]:
    for p in paths:
        if os.path.isdir(p):
            for name in sorted(os.listdir(p)):
                full = os.path.join(p, name)
                if os.path.isfile(full) and name.endswith((".jsonl", ".json")):
                    yield full
        else:
            yield p


def read_batch_pair(paths: list[str]) -> tuple[list[ParsedCall], list[Issue]]:
    """Read batch files given in any order (or directories of them), pairing inputs with outputs.

    Each file is classified by its lines (input or output, OpenAI or Anthropic).  Each output is joined
    to the input of the same provider that shares the most ``custom_id``s with it (none → read alone);
    inputs paired with no output are read alone (request-only calls, usage unknown).

    Args:
        paths: files and/or directories (a directory contributes its ``*.jsonl``/``*.json`` files).

    Returns:
        ``(calls, issues)``: calls of every output file in the order given, then request-only calls of
        unpaired inputs.  Files that are not batch files give a ``not_batch`` issue; the batch object file
        (``anthropic_batch_receipt.json``) gives a ``batch_object`` notice.  Never raises.
    """
    files = list(dict.fromkeys(_expand(paths)))
    kinds = {f: _file_kind(f) for f in files}
    issues: list[Issue] = []
    outputs = [f for f in files if kinds[f] in _OUTPUT_KINDS]
    inputs = [f for f in files if kinds[f] in _INPUT_KINDS]
    for f in files:
        if kinds[f] is None:
            issues.append(Issue(f, 0, "not_batch", "not an OpenAI or Anthropic batch input/output file; skipped"))
        elif kinds[f] == ANTHROPIC_BATCH_OBJECT:
            issues.append(Issue(f, 1, "batch_object", "message batch object: it holds no calls; skipped"))
    # every input and output kind has a provider, so the lookups below cannot miss
    provider = {f: _PROVIDER[k] for f, k in kinds.items() if k in _PROVIDER}
    input_ids: dict[str, set[str]] = {}
    for f in inputs:
        if sum(1 for g in inputs if provider[g] == provider[f]) > 1:
            input_ids[f] = _ids_in(f)
    pairing: dict[str, str | None] = {}
    models: dict[str, dict[str, str]] = {}  # file -> custom_id -> model, read once, for ties only
    for out in outputs:
        prov = provider[out]
        candidates = [i for i in inputs if provider[i] == prov]
        best = None
        if len(candidates) == 1:
            best = candidates[0]  # the only input of this provider: no need to scan the output
        elif candidates:
            out_ids = _ids_in(out)
            shared = {cand: len(out_ids & input_ids[cand]) for cand in candidates}
            top = max(shared.values())
            tied = [c for c in candidates if shared[c] == top]
            if top and len(tied) > 1:
                # Batches that reuse the same custom_ids ("request-0", "request-1"...): the ids cannot tell
                # them apart.  The requests whose model the results name decide first (OpenAI names every
                # output batch_<id>_output.jsonl: names carry nothing), then the closest file name
                # (batch_A_output -> batch_A_input; an error file beside its output too), then an input not
                # yet joined to an output.
                used = set(pairing.values())
                for f in (out, *tied):
                    if f not in models:
                        models[f] = _models_by_id(f)
                agree = {c: _model_agreement(models[out], models[c]) for c in tied}
                best = max(tied, key=lambda c: (agree[c], _name_likeness(out, c), c not in used))
                by = "by model" if sorted(agree.values())[-1] > sorted(agree.values())[-2] else "by file name"
                issues.append(Issue(out, 0, "batch_pairing",
                                    f"its custom_ids match {len(tied)} input files equally; joined to "
                                    f"{os.path.basename(best)} {by}: give the pair alone to be sure"))
            elif top:
                best = tied[0]
        pairing[out] = best
    calls: list[ParsedCall] = []
    indexes = {inp: BatchInputIndex(inp) for inp in set(pairing.values()) if inp}
    done: dict[str, list[str]] = {}
    for out in outputs:
        inp = pairing[out]
        last = inp is None or out == [o for o in outputs if pairing[o] == inp][-1]
        reader = BatchReader(out, index=indexes[inp] if inp else None, report_missing=last)
        if inp:
            reader.shared_with = list(done.get(inp, []))
            done.setdefault(inp, []).append(out)
        c, i = _read(reader, out)
        calls.extend(c)
        issues.extend(i)
    paired = {p for p in pairing.values() if p}
    for inp in inputs:
        if inp not in paired:
            c, i = _read(BatchReader(inp), inp)
            calls.extend(c)
            issues.extend(i)
    return calls, issues


# --- detection -------------------------------------------------------------------------------------

def _sniff_for(provider: str) -> Any:
    def sniff(s: Sniff) -> float:
        vals = [v for v in s.values if isinstance(v, dict)]
        if vals:
            kinds = [classify_batch_value(v) for v in vals]
            hits = sum(1 for k in kinds if k and _PROVIDER[k] == provider)
            return 0.95 * hits / len(vals)
        # A first object larger than the sniff window (long requests glued on one line): look at the bytes.
        head = s.head.lstrip(b"\xef\xbb\xbf \t\r\n")
        if not head.startswith(b"{") or b'"custom_id"' not in head[:4096]:
            return 0.0
        if provider == "anthropic" and (b'"params"' in head[:4096] or b'"result"' in head[:4096]):
            return 0.6
        if provider == "openai" and (b'"body"' in head[:4096] or b'"response"' in head[:4096]):
            return 0.6
        return 0.0
    return sniff


register(FormatSpec(
    name="openai-batch",
    description=("OpenAI Batch API input ({custom_id, body}) and output ({custom_id, response}) JSONL, "
                 "joined by custom_id"),
    sniff=_sniff_for("openai"), reader=OpenAIBatchReader,
    example='{"id":"batch_req_…","custom_id":"r1","response":{"status_code":200,"body":{"usage":{…}}},"error":null}',
))
register(FormatSpec(
    name="anthropic-batch",
    description="Anthropic Message Batches results ({custom_id, result}) and request ({custom_id, params}) files",
    sniff=_sniff_for("anthropic"), reader=AnthropicBatchReader,
    example='{"custom_id":"r1","result":{"type":"succeeded","message":{"usage":{…}}}}',
))
