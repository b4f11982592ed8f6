"""The reader of one batch file, joining its results to an input file's requests when it has one."""

from __future__ import annotations

import os
from collections.abc import Iterable

from ctxwatch.formats import Reader
from ctxwatch.formats.batch.calls import (
    anthropic_result,
    attach_request,
    openai_result,
    request_call,
    unjoinable,
    usage_notes,
)
from ctxwatch.formats.batch.index import BatchInputIndex
from ctxwatch.formats.batch.kinds import (
    ANTHROPIC_BATCH_OBJECT,
    ANTHROPIC_REQUEST,
    ANTHROPIC_REQUESTS_BODY,
    OPENAI_INPUT,
    OPENAI_OUTPUT,
    OUTPUT_KINDS,
    PROVIDER,
    classify_batch_value,
    join_id,
    said,
)
from ctxwatch.formats.wire.dedupe import ResponseIds, json_hash
from ctxwatch.model import Issue, ParsedCall
from ctxwatch.source import Record, iter_records, show_value

Output = ParsedCall | Issue


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
    ``custom_id`` is not in the input stays a usage-only call (:attr:`~ctxwatch.model.Provenance.joined` False) and
    is counted
    in one ``unmatched_result`` issue at :meth:`finish`; requests that got no result (neither a call nor a
    failure) are counted in one ``missing_result`` issue.  A result without a ``custom_id`` string (none,
    ``null``, a number) is a usage-only call too, with a ``no_custom_id`` issue of its own: it can be joined to
    no request, and ``null`` never joins the request named ``"null"``.

    Every line that is a response (or a request) of its own is a call of its own: one the provider names (a
    ``batch_req`` id, a message id) is keyed by that name, any other by its content and its occurrence among
    identical lines of the file (:meth:`~ctxwatch.formats.wire.dedupe.ResponseIds.content`), never by its
    ``custom_id``, which results without one, or reusing one, share (a copy of the file, in a folder beside
    it, gives the same keys: each call is counted once).
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
        self._requests: list[int] = []  # (lines of the requests read as calls of their own)
        self._keys = ResponseIds(path)  # (content keys of the lines the provider names no response of)
        self._contents: dict[str, list[tuple[int | None, int]]] = {}  # result id -> (content hash, line) seen

    @property
    def index(self) -> BatchInputIndex | None:
        """The input index (built on first use), or ``None`` when no input file was given."""
        if self._index is None and self.input_path is not None:
            self._index = BatchInputIndex(self.input_path)
        return self._index

    def feed(self, rec: Record) -> Iterable[Output]:
        """One line (or one of several glued objects) → one call, one issue, or several request calls."""
        v = rec.value
        self._keys.start(rec.line)
        kind = classify_batch_value(v)
        if kind in OUTPUT_KINDS:
            out = openai_result(self.path, rec, v) if kind == OPENAI_OUTPUT else anthropic_result(self.path, rec, v)
            if isinstance(out, ParsedCall):
                self._results += 1
                if out.key is None:
                    self._keys.content(out, json_hash([rec.part, v]), rec.line)
                    notes = []
                else:
                    named = self._named(out, v, rec.line)
                    if named is None:
                        return []  # (a copy of a line read before: that line is the call, counted once)
                    notes = named
                notes += usage_notes(self.path, rec.line, v, PROVIDER[kind])
                if out.provenance.custom_id is None:
                    notes.insert(0, unjoinable(self.path, rec.line, v, "output"))
                return [out, *notes, *self._join(out, kind)]
            if self.index is not None and (cid := join_id(v)) is not None and cid in self.index:
                self.index.used.add(cid)  # answered, if only by a failure
            return [out]
        if kind in (OPENAI_INPUT, ANTHROPIC_REQUEST):
            self._requests.append(rec.line)
            return self._keyed(request_call(self.path, rec, v, PROVIDER[kind]), [rec.part, v], rec.line)
        if kind == ANTHROPIC_REQUESTS_BODY:
            self._requests.append(rec.line)
            return [out for i, r in enumerate(v["requests"])
                    if isinstance(r, dict) and ("custom_id" in r or "params" in r)
                    for out in self._keyed(request_call(self.path, rec, r, "anthropic"), [rec.part, i, r], rec.line)]
        if kind == ANTHROPIC_BATCH_OBJECT:
            return [Issue(self.path, rec.line, "batch_object", batch_object_note(v))]
        return [Issue(self.path, rec.line, "unknown_record", "not a batch request or result line; skipped")]

    def _named(self, call: ParsedCall, v: object, line: int) -> list[Issue] | None:
        """Key a result the provider names (``call.key``: its ``batch_req`` or message id) apart from a different
        result under the same name: the n-th distinct content of a name is keyed ``name#n`` (from 2), with a
        ``duplicate_response_id`` issue on the line that reuses the name.  ``None`` for an exact copy of a line
        read before, which is left out as the other readers leave out an exact later copy (a copy of the file,
        read beside it, gives each line the same key, so each result is counted once)."""
        assert call.key is not None
        rid = call.key
        h = json_hash(v)
        seen = self._contents.setdefault(rid, [])
        if h is not None and any(h_seen == h for h_seen, _ in seen):
            return None
        seen.append((h, line))
        if len(seen) == 1:
            return []
        call.key = f"{rid}#{len(seen)}"
        return [Issue(self.path, line, "duplicate_response_id",
                      f"result id {show_value(rid)} was already used at line {seen[0][1]} for a different result; "
                      "counted as separate calls")]

    def _keyed(self, outs: list[Output], value: object, line: int) -> list[Output]:
        """``outs`` with the call among them keyed by ``value``'s content (the request and where it lies on
        its line: each request of a ``{"requests": [...]}`` body has a key of its own)."""
        for out in outs:
            if isinstance(out, ParsedCall) and out.key is None:
                self._keys.content(out, json_hash(value), line)
        return outs

    def _join(self, call: ParsedCall, kind: str) -> list[Issue]:
        """Give a result its request from the input file; the ``invalid_field`` issues of what that request
        leaves unknown name the input file's line, where the damage is."""
        index = self.index
        if index is None:
            return []
        cid = call.provenance.custom_id  # (None: no custom_id string, said by its own issue)
        req = index.fetch(cid) if cid is not None and cid in index else None
        if cid is None or req is None:
            call.provenance.joined = False
            if cid is not None:
                self._unmatched.append((call.source.line, cid))
            return []
        loc = index.location(cid)
        problems = attach_request(call, req, PROVIDER[kind])
        prov = call.provenance
        prov.joined, prov.input_path = True, index.path
        if loc is not None:
            prov.input_line, prov.input_bytes, prov.input_part = loc.line, (loc.byte_start, loc.byte_end), loc.part
            if loc.item >= 0:
                call.provenance.details["input_item"] = loc.item
        return [Issue(index.path, loc.line if loc is not None else 0, "invalid_field", p) for p in problems]

    def finish(self) -> Iterable[Output]:
        """Report the index's own problems, results with no request, and requests with no result; a file read
        alone that holds both requests and results (two batch files concatenated) is said to be unjoined."""
        index = self._index
        if index is None:
            if self._requests and self._results:
                return [Issue(self.path, self._requests[0], "mixed_batch_file",
                              f"this file holds {len(self._requests):,} batch request lines and {self._results:,} "
                              "result lines, read apart (requests without usage, results without their request): "
                              "give the input and the output as two files to join them by custom_id")]
            return []
        out: list[Output] = list(index.issues) if self.report_missing else []
        if self._unmatched:
            line, cid = self._unmatched[0]
            out.append(Issue(self.path, line, "unmatched_result",
                             f"{len(self._unmatched)} of {self._results} results have no request in "
                             f"{os.path.basename(index.path)} (first: {show_value(cid)}); shown with usage only"))
        missing = [c for c in index.ids() if c not in index.used] if self.report_missing else []
        if missing:
            loc = index.location(missing[0])
            where = os.path.basename(self.path) if not self.shared_with else \
                ", ".join(os.path.basename(p) for p in [*self.shared_with, self.path])
            out.append(Issue(index.path, loc.line if loc else 0, "missing_result",
                             f"{len(missing)} of {len(index)} requests have no result in "
                             f"{where} (first: {show_value(missing[0])})"))
        return out


def batch_object_note(v: dict[str, object]) -> str:
    """The note of an Anthropic message batch object (the receipt of a batch, not its results): ``message batch
    object msgbatch_01 (in_progress; requests: 19 processing, 0 succeeded, ...); it holds no calls: read the
    results file``.  Its id, status and request counts said in words (:func:`said`), whatever their JSON types."""
    bid, status, counts = said(v.get("id")), said(v.get("processing_status")), v.get("request_counts")
    parts = [status] if status else []
    if isinstance(counts, dict) and counts:
        parts.append("requests: " + ", ".join(f"{show_value(n)} {name}" for name, n in counts.items()))
    elif counts is not None and counts != {}:
        parts.append(f"request_counts {show_value(counts)}")
    about = (f" {bid}" if bid else "") + (f" ({'; '.join(parts)})" if parts else "")
    return f"message batch object{about}; it holds no calls: read the results file"


class OpenAIBatchReader(BatchReader):
    """:class:`BatchReader` registered as ``openai-batch``."""


class AnthropicBatchReader(BatchReader):
    """:class:`BatchReader` registered as ``anthropic-batch``."""


def read_file(reader: BatchReader, path: str) -> tuple[list[ParsedCall], list[Issue]]:
    """``(calls, issues)`` of reading the whole of ``path`` with ``reader``, finished; never raises (an unreadable
    file is an ``unreadable`` issue)."""
    calls: list[ParsedCall] = []
    issues: list[Issue] = []

    def take(outs: Iterable[Output]) -> None:
        for o in outs:
            (calls if isinstance(o, ParsedCall) else issues).append(o)  # type: ignore[arg-type]

    try:
        for rec in iter_records(path):
            if isinstance(rec, Issue):
                if rec.kind != "concatenated":  # (expected in Anthropic request files: objects glued together)
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
    return read_file(reader, output_path)
