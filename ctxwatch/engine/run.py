"""A run: the calls and issues of one log, fed incrementally from a file or a live tail.

:class:`Run` owns a format reader and an :class:`~ctxwatch.accounting.Accountant`.  It is fed records
(:meth:`Run.feed_record`) or whole documents, and keeps a list of :class:`~ctxwatch.model.Call` summaries
plus the :class:`~ctxwatch.model.Issue` list.  A call whose dedupe key was seen before replaces the earlier
summary in place (a later line of the same Claude Code response), so nothing is counted twice.

:func:`load_run` reads a whole file; :func:`reload_call` re-reads one call's text from disk by byte offset
(the run itself keeps no message bodies).
"""

from __future__ import annotations

import math
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from ctxwatch.accounting import Accountant, Calibrations, calibrations_of
from ctxwatch.config import Settings
from ctxwatch.formats import (
    MAX_COUNT,
    FormatSpec,
    Output,
    Reader,
    array_of_records,
    detect,
    get_format,
    not_a_count,
    sniff_file,
)
from ctxwatch.formats.canonical import copy_rank
from ctxwatch.model import Call, Issue, ParsedCall, Resolved, Usage
from ctxwatch.source.lines import Record, decode_line, iter_records, read_document, show_value

#: Parsed calls held back before accounting (bounded so that memory stays small on huge runs).
PENDING_LIMIT = 256


#: Largest token count taken from a log: 2**53 (exact in a JSON double, in range for every JSON writer;
#: :data:`ctxwatch.formats.MAX_COUNT`).  Larger or negative numbers are damage, not usage: they become unknown with
#: an issue, never a crash.
MAX_TOKENS = MAX_COUNT


def _bad_count(v: object) -> bool:
    """True for a value in a token-count field that is not a count: negative, beyond 2**53, or not an int at all
    (a reader passes such raw values through so that they are reported, not guessed)."""
    if v is None:
        return False
    return not isinstance(v, int) or isinstance(v, bool) or not 0 <= v < MAX_TOKENS


#: How an issue names each usage field (the normalized :class:`Usage` field names are not the log's keys,
#: which differ by provider: ``prompt_tokens``, ``input_tokens``, ``promptTokenCount``...).
_USAGE_NAMES = {"prompt_total": "prompt tokens", "input_uncached": "uncached input tokens",
                "cache_read": "cache read tokens", "cache_write": "cache write tokens", "output": "output tokens",
                "reasoning": "reasoning tokens", "cache_write_1h": "1-hour cache write tokens",
                "web_searches": "web searches"}


def _sanitize(pc: ParsedCall) -> list[Issue]:
    """Make a parsed call's numbers sane in place (negative, huge or non-integer counts, and cache counts above
    the prompt they are part of -> unknown); return the issues."""
    u = pc.usage
    null_output = "output tokens null (not a number)" if pc.extra.get("output_null") else None
    try:
        if null_output is None and (u is None or (all(v is None or (v.__class__ is int and 0 <= v < MAX_TOKENS)
                                                      for v in (u.prompt_total, u.input_uncached, u.cache_read,
                                                                u.cache_write, u.output, u.reasoning,
                                                                u.cache_write_1h, u.web_searches))
                and (u.prompt_total is None or (u.cache_read or 0) + (u.cache_write or 0) <= u.prompt_total)
                and (u.cache_write_1h is None or u.cache_write_1h <= (u.cache_write or 0)))) \
                and (pc.window is None or (pc.window.__class__ is int and 0 < pc.window < MAX_TOKENS)) \
                and (pc.max_output_tokens is None or (pc.max_output_tokens.__class__ is int
                                                      and 0 <= pc.max_output_tokens < MAX_TOKENS)):
            return []  # the common case, checked without building anything
    except TypeError:
        pass  # not a number: the field-by-field check below says what it is
    bad: list[str] = [null_output] if null_output else []
    if pc.usage is not None:
        fields_ = {f: getattr(pc.usage, f) for f in ("prompt_total", "input_uncached", "cache_read", "cache_write",
                                                       "output", "reasoning", "cache_write_1h", "web_searches")}
        wrong = {f: v for f, v in fields_.items() if _bad_count(v)}
        if wrong:
            bad += [f"{_USAGE_NAMES[f]} {show_value(v)} ({not_a_count(v)})" for f, v in wrong.items()]
            unknown: dict[str, Any] = dict.fromkeys(wrong)
            if pc.provider == "anthropic" and wrong.keys() & {"input_uncached", "cache_read", "cache_write"}:
                # Anthropic's prompt is the sum of these parts: with one of them damaged it is unknown too
                # (and the call cannot be priced), not a total that a negative part made smaller.
                unknown["prompt_total"] = None
            if wrong.keys() & {"cache_read", "cache_write"}:
                unknown["input_uncached"] = None  # (derived from them by the readers of OpenAI-style usage)
            # Every price term needs these fields: a damaged one leaves the cost unknown, never priced as 0.
            pc.usage = replace(pc.usage, **unknown, damaged=True)
        u = pc.usage
        cached = (u.cache_read or 0) + (u.cache_write or 0)
        if u.prompt_total is not None and cached > u.prompt_total:
            # Every provider's prompt total includes its cache reads and writes (Anthropic's is their sum), so
            # more cached tokens than the whole prompt is damage in one of them: the split is unknown, and so is
            # the cost (pricing 99,999 cache reads for a 203-token prompt made the call 185 times dearer).
            bad.append(f"cache reads and writes {cached:,} above the prompt's {u.prompt_total:,}")
            pc.usage = replace(u, input_uncached=None, cache_read=None, cache_write=None, cache_write_1h=None,
                               damaged=True)
        u = pc.usage
        if u.cache_write_1h is not None and u.cache_write_1h > (u.cache_write or 0):
            # The 1-hour writes are a share of the writes: more of them than writes is damage in one of the two,
            # so the rate each write is priced at is unknown (capping it priced every write at the 1-hour rate).
            bad.append(f"1-hour cache writes {u.cache_write_1h:,} above the cache writes' {u.cache_write or 0:,}")
            pc.usage = replace(u, cache_write_1h=None, damaged=True)
    if _bad_count(pc.window) or pc.window == 0:
        zero = pc.window.__class__ is int and pc.window == 0
        bad.append(f"context window {show_value(pc.window)} ({'zero' if zero else not_a_count(pc.window)})")
        pc.window = None
    why = "treated as unknown"
    elsewhere: list[Issue] = []
    if _bad_count(pc.max_output_tokens):
        what = f"max output tokens {show_value(pc.max_output_tokens)} ({not_a_count(pc.max_output_tokens)})"
        if pc.extra.get("input_path"):
            # A joined batch call's request, which holds this value, is in its input file (ctxwatch.formats.batch
            # names it and the line in extra): the issue names that line, not the result's.
            elsewhere.append(Issue(pc.extra["input_path"], pc.extra.get("input_line") or 0, "implausible_value",
                                   f"{what}: {why}", pc.key))
        else:
            bad.append(what)
        pc.max_output_tokens = None
    if not bad:
        return elsewhere
    # (a response written over several lines names the line its usage was taken from)
    line = pc.extra.get("usage_line") or pc.source.line
    return [Issue(pc.source.path, line, "implausible_value", f"{'; '.join(bad)}: {why}", pc.key), *elsewhere]


def _usage_rank(u: Usage | None) -> tuple[int, int, int]:
    """How much a usage block tells, to choose between copies of one call from different files: reported at
    all, undamaged, the output count known and its size (the final count of a streamed response is its
    largest)."""
    if u is None:
        return (0, 0, 0)
    out = u.output if u.output.__class__ is int else -1
    return (1, int(not u.damaged), out)


def _keeps_earlier(before: Call | ParsedCall, copy: Call | ParsedCall) -> bool:
    """True when ``copy``, a copy of ``before``'s call (same key) read later from another file, must not replace
    it now: it reports less of the usage (:func:`_usage_rank`), or as much (then which file the call belongs to
    is settled once the copy's file is read: :meth:`Run.settle_copies`).  Later lines of one file (a response's
    streaming updates) always replace."""
    if before.source.path == copy.source.path:
        return False
    return _usage_rank(copy.usage) <= _usage_rank(before.usage)


class LogError(Exception):
    """A log cannot be read at all (missing, unreadable, unknown format); the message names the file."""


class UnknownFormat(LogError):
    """No format recognises the file (it can be read)."""


#: How the message of :class:`JsonArray` begins after the path (a folder's ``skipped_file`` note starts with it).
JSON_ARRAY_NOTE = "one JSON array of "


class JsonArray(UnknownFormat):
    """The file is one JSON array of records of a known format (:func:`~ctxwatch.formats.array_of_records`):
    not read, and the message says how to convert it to one record per line."""


@dataclass
class Change:
    """What one fed record did to the run.

    Attributes:
        added: indexes of new calls.
        updated: indexes of calls whose summary was replaced.
        issues: new issues.
        resolved: issues withdrawn (a truncated last line that its writer completed later).
    """

    added: list[int] = field(default_factory=list)
    updated: list[int] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)
    resolved: list[Issue] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.added or self.updated or self.issues or self.resolved)


class Run:
    """The calls of one log, accounted.

    Args:
        path: the log file (or a label for multi-file runs).
        spec: its format.
        settings: thresholds and overrides.

    Attributes:
        calls: call summaries in order of first appearance; ``calls[i].index == i``.
        issues: every problem found, with file and line.
        resets: ``{"reason", "path", "at_call"}`` for each truncation / rotation seen while following.
        formats: the names of the formats the run's files were read with, in order of first use.
    """

    def __init__(self, path: str, spec: FormatSpec, settings: Settings | None = None) -> None:
        self.path = path
        self.spec = spec
        #: Every format the run's files were read with (``spec`` is the first; a folder may mix formats).
        self.formats: list[str] = [spec.name]
        self.settings = settings or Settings()
        self.accountant = Accountant(self.settings)
        self.reader = spec.reader(path)
        self._calls: list[Call | None] = []
        # Calls parsed but not yet accounted: a Claude Code response arrives as several lines (each an
        # update of the same call), so accounting waits until the call is read or the batch is large.
        self._pending: dict[int, ParsedCall] = {}
        self.issues: list[Issue] = []
        self.resets: list[dict[str, object]] = []
        self._by_key: dict[str, int] = {}
        self._reported: set[tuple[str | None, str]] = set()  # (call key, message) of issues already reported
        self._damage: dict[str, list[Issue]] = {}  # call key -> the damage reported for it (see _withdraw_damage)
        # Copies across files (see settle_copies): each file's latest call time, and the copies that report as
        # much as the call read before them, held until their file is read.
        self._file_last: dict[str, float] = {}
        self._held: dict[str, ParsedCall] = {}
        #: Calls the readers emitted, repeats and copies of known calls included (a forced format that read
        #: a file of copies did read calls from it, though none is new).
        self.parsed_calls = 0
        # Set when the calls were read by another process (a parallel folder read): what the last file's
        # reader had pending, which the run's own (fresh) reader cannot know.
        self._worker_pending: dict[str, dict[str, object]] | None = None
        #: Records fed (:meth:`feed_record`) since the current reader started: a followed file with none may
        #: be empty, which a whole read notes (:func:`empty_file_note`).
        self.records = 0
        # The notes of the file as read so far (refresh_notes), held among the issues while it is followed.
        self._standing: list[Issue] = []

    # -- feeding --------------------------------------------------------------------------------
    def _take(self, outputs: Iterable[Output], change: Change) -> None:
        for out in outputs:
            if isinstance(out, Issue):
                if out.call_key:
                    # A reader's note about a call (Claude Code's implausible_usage): a copy of the call in another
                    # file (a resumed session) gives it again; reported once, as add_accounted does.
                    noted = (out.call_key, out.message)
                    if noted in self._reported:
                        continue
                    self._reported.add(noted)
                self.issues.append(out)
                change.issues.append(out)
                continue
            if isinstance(out, Resolved):
                self._resolve(out, change)
                continue
            self.parsed_calls += 1
            problems = _sanitize(out)
            if out.key and out.key in self._damage:
                self._withdraw_damage(out, problems, change)
            for problem in problems:
                # A call emitted again (a later line of the same response) repeats its damage: report it once.
                seen = (out.key, problem.message)
                if out.key and seen in self._reported:
                    continue
                self._reported.add(seen)
                self.issues.append(problem)
                change.issues.append(problem)
                if out.key:
                    self._damage.setdefault(out.key, []).append(problem)
            ts = out.timestamp
            if ts is not None and ts > self._file_last.get(out.source.path, -math.inf):
                self._file_last[out.source.path] = ts
            idx = self._by_key.get(out.key) if out.key else None
            if idx is not None:
                before = self._pending.get(idx) or self._calls[idx]
                if before is not None and _keeps_earlier(before, out):
                    if out.key and _usage_rank(out.usage) == _usage_rank(before.usage):
                        self._held[out.key] = out  # (its file may turn out to be the call's own: settle_copies)
                    # A copy in another file that says less (a stream cut before its final usage, a resumed
                    # session's copy of a streaming placeholder), or no more, does not replace the call read
                    # before (see _keeps_earlier).
                    continue
                self._pending[idx] = out
                if idx not in change.added and idx not in change.updated:
                    change.updated.append(idx)
                continue
            idx = len(self._calls)
            self._calls.append(None)
            self._pending[idx] = out
            if out.key:
                self._by_key[out.key] = idx
            change.added.append(idx)
        if len(self._pending) >= PENDING_LIMIT:
            self._flush()

    def _flush(self) -> None:
        """Account every pending call: those that carry their history first, in index order (so prefix reuse
        in the accountant works), then those whose history is inferred from another call's floor (a call
        logged again in a newer file can take an older index than the call that gives its floor)."""
        if not self._pending:
            return
        pending, self._pending = self._pending, {}
        for idx in sorted(pending):  # (in call order, before the reordering below: a later call's window may
            self.accountant.note_window_evidence(pending[idx], idx)  # depend on an earlier call's prompt)
        for idx in sorted(pending, key=lambda i: (pending[i].messages is None and "floor_call" in pending[i].extra,
                                                   i)):
            self._calls[idx] = self.accountant.account(pending[idx], idx)

    @property
    def calls(self) -> list[Call]:
        """Call summaries in order of first appearance; ``calls[i].index == i``."""
        if self._pending:
            self._flush()
        return self._calls  # type: ignore[return-value]  # no None left after a flush

    def _withdraw_damage(self, out: ParsedCall, problems: list[Issue], change: Change) -> None:
        """Withdraw the damage reported for an earlier emission of ``out``'s call in the same file that this
        emission no longer has: a live read emits a response at each of its lines, and a later line's valid
        count supersedes a damaged streaming placeholder, as a whole-file read (one emission per call) never
        reported it.  A copy in another file keeps its own damage reported (that line is still damaged)."""
        assert out.key is not None
        now = {p.message for p in problems}
        keep: list[Issue] = []
        for issue in self._damage[out.key]:
            if issue.path == out.source.path and issue.message not in now:
                self._reported.discard((out.key, issue.message))
                self.issues = [i for i in self.issues if i is not issue]
                change.resolved.append(issue)
            else:
                keep.append(issue)
        self._damage[out.key] = keep

    def settle_copies(self) -> None:
        """Settle the copies held since the last call (:meth:`_take`): calls read again, reporting as much, from
        another file.  A call belongs to the file whose latest call is the earliest: a resumed Claude Code
        session (``claude --resume``) starts its new file with copies of the old session's records, under the
        new session id, and goes on after the old file ended; so the old file, which ends first, keeps them,
        whichever file was read first (folders are read oldest modification time first, and a copied folder's
        times say nothing).  Without times on both sides, or on a tie, the copy read first stays.  Call it when
        a file has been read: its latest call is then known."""
        held, self._held = self._held, {}
        for key, copy in held.items():
            idx = self._by_key.get(key)
            before = (self._pending.get(idx) or self._calls[idx]) if idx is not None else None
            if before is None or before.source.path == copy.source.path:
                continue
            mine, theirs = self._file_last.get(copy.source.path), self._file_last.get(before.source.path)
            if mine is not None and theirs is not None and mine < theirs \
                    and _usage_rank(copy.usage) == _usage_rank(before.usage):
                assert idx is not None
                self._pending[idx] = copy

    def _settle_accounted(self, held: dict[str, Call]) -> None:
        """:meth:`settle_copies` for copies that are accounted summaries (a parallel read's, ``held`` by key):
        they replace in place, keeping their index."""
        for key, copy in held.items():
            idx = self._by_key[key]
            before = self._calls[idx]
            if before is None:
                continue
            mine, theirs = self._file_last.get(copy.source.path), self._file_last.get(before.source.path)
            if mine is not None and theirs is not None and mine < theirs:
                copy.index = idx
                self._calls[idx] = copy

    def _resolve(self, done: Resolved, change: Change) -> None:
        """Withdraw the issues ``done`` names (file, line, kind), into ``change.resolved``."""
        gone = [i for i in self.issues if (i.path, i.line, i.kind) == (done.path, done.line, done.kind)]
        for i in gone:
            if i.call_key:
                self._reported.discard((i.call_key, i.message))  # (given again later, it is reported again)
        if gone:
            self.issues = [i for i in self.issues if i not in gone]
            change.resolved.extend(gone)

    def feed_record(self, rec: Record | Issue | Resolved) -> Change:
        """Feed one record (or an issue from the stream, or the withdrawal of one); return what changed. Never
        raises on content."""
        change = Change()
        if isinstance(rec, Issue):
            self._take([rec], change)
            return change
        if isinstance(rec, Resolved):
            self._resolve(rec, change)
            return change
        self.records += 1
        try:
            outputs = list(self.reader.feed(rec))
        except Exception as exc:  # a reader bug on odd input must not stop the run
            outputs = [Issue(self.reader.path, rec.line, "reader_error", f"{type(exc).__name__}: {exc}")]
        self._take(outputs, change)
        return change

    def feed_document(self, value: object) -> Change:
        """Feed a whole-file JSON document (document formats)."""
        change = Change()
        try:
            outputs = list(self.reader.feed_document(value))
        except Exception as exc:
            outputs = [Issue(self.reader.path, 0, "reader_error", f"{type(exc).__name__}: {exc}")]
        self._take(outputs, change)
        return change

    def refresh_notes(self) -> Change:
        """Bring the notes of the file read so far up to date, for a file that is followed (it never finishes):
        the notes a whole read of the file as it is now would end with, as ``check`` lists them.  These are the
        reader's :meth:`~ctxwatch.formats.Reader.notes` (Claude Code's ``subagent_calls_elsewhere``, whose
        count grows with the file) and, while no record was read, the ``empty_file`` note of :func:`load_run`
        (:func:`empty_file_note`).  A note that changed is withdrawn (``change.resolved``) and given again.
        O(1) once a record was read; before that, one look at the file (at most 64 KiB)."""
        change = Change()
        try:
            now = list(self.reader.notes())
        except Exception as exc:  # a reader bug must not stop the run
            now = [Issue(self.reader.path, 0, "reader_error", f"{type(exc).__name__}: {exc}")]
        if self.records == 0:
            empty = empty_file_note(self.reader.path)
            if empty is not None:
                now.append(empty)
        if now != self._standing:
            self._drop_standing(change)
            self._standing = now
            self.issues.extend(now)
            change.issues.extend(now)
        return change

    def _drop_standing(self, change: Change) -> None:
        """Withdraw the notes :meth:`refresh_notes` gave (into ``change.resolved``)."""
        gone, self._standing = self._standing, []
        if gone:
            self.issues = [i for i in self.issues if not any(i is g for g in gone)]
            change.resolved.extend(gone)

    def finish(self) -> Change:
        """The input is complete: collect what the reader held back.  The reader's
        :meth:`~ctxwatch.formats.Reader.finish` gives its notes again, final: a note :meth:`refresh_notes` gave
        that comes again unchanged stays given (neither withdrawn nor given twice: a follower would print it
        resolved and new at once); one that does not is withdrawn."""
        change = Change()
        standing, self._standing = self._standing, []
        try:
            self._take(list(self.reader.finish()), change)
        except Exception as exc:
            self._take([Issue(self.reader.path, 0, "reader_error", f"{type(exc).__name__}: {exc}")], change)
        for note in standing:
            again = next((i for i in change.issues if i == note), None)
            if again is not None:
                change.issues = [i for i in change.issues if i is not again]
                self.issues = [i for i in self.issues if i is not again]
            else:
                self.issues = [i for i in self.issues if i is not note]
                change.resolved.append(note)
        return change

    def reset(self, reason: str, path: str | None = None, spec: FormatSpec | None = None) -> None:
        """The followed file was truncated or replaced: start a fresh reader (history starts over).

        Calls already read are kept (they happened); dedupe keys are kept too, so a record that reappears in
        the new file (a resumed session copying its history) is not counted twice.  ``spec``: the new file's
        format, when it was detected again (a file replaced by one in another format).
        """
        if spec is not None and spec is not self.spec:
            self.spec = spec
            if spec.name not in self.formats:
                self.formats.append(spec.name)
        self.resets.append({"reason": reason, "path": path or self.path, "at_call": len(self._calls)})
        self.issues.append(Issue(path or self.path, 0, "reset", f"file {reason}; reading it again from the start"))
        self.reader = self.spec.reader(path or self.path)
        self.records = 0
        self._standing = []  # (notes given about the old file stay among its issues, no longer refreshed)

    def add(self, outputs: Iterable[Output]) -> Change:
        """Add calls and issues produced outside the run's reader (e.g. a joined batch pair)."""
        change = Change()
        self._take(outputs, change)
        return change

    def read_file(self, path: str, spec: FormatSpec | None = None,
                  progress: Callable[[int, int], None] | None = None) -> int:
        """Feed a whole file to the run, then finish its reader; return the number of records read.

        With ``spec`` the file gets a fresh reader of that format (a folder may mix formats); without it the
        run's current reader reads it.  See :func:`file_outputs` for how the file is read.

        Raises:
            LogError: the file cannot be read.
        """
        if spec is not None:
            self.reader = spec.reader(path)
            self._worker_pending = None
        counter = [0]
        self._take_all(file_outputs(self.reader, path, (spec or self.spec).document, progress, counter))
        return counter[0]

    def _take_all(self, outputs: Iterable[Output]) -> None:
        """Take a stream of outputs in batches (accounting keeps up, memory stays a batch wide)."""
        change = Change()
        pending: list[Output] = []
        for out in outputs:
            pending.append(out)
            if len(pending) >= 64:
                self._take(pending, change)
                pending.clear()
        self._take(pending, change)

    def read_range(self, path: str, start: int, end: int, line: int) -> int:
        """Feed the records of byte range ``[start, end)`` of ``path`` (cut at line starts; the first is line
        ``line``), then finish the reader; return the number of records read.  For formats whose records are
        independent (a worker's share of a big file, :mod:`ctxwatch.engine.parallel`).

        Raises:
            LogError: the file cannot be read.
        """
        counter = [0]
        self._take_all(file_outputs(self.reader, path, False, None, counter, start, end, line))
        return counter[0]

    def add_accounted(self, calls: Iterable[Call], issues: Iterable[Issue]) -> None:
        """Add calls accounted elsewhere (a worker's share of the file), renumbered to follow this run's
        calls; a call whose dedupe key is known replaces the earlier summary in place, and its damage already
        reported is not reported again, as :meth:`feed_record` does.  A copy from the same file (a later range
        of a file of independent records) replaces it only when it reports more of the usage
        (:func:`ctxwatch.formats.canonical.copy_rank`), as the file's reader keeps the copy read first."""
        self._flush()  # (account anything pending first, so indexes stay in order)
        kept = []
        for issue in issues:
            if issue.call_key:
                # The same call read by two workers (a session copied into a resumed one's file) reports its
                # damage once, as a serial read does.
                seen = (issue.call_key, issue.message)
                if seen in self._reported:
                    continue
                self._reported.add(seen)
            kept.append(issue)
        calls = list(calls)
        held: dict[str, Call] = {}
        for c in calls:  # (the file's latest call is known up front here: see settle_copies)
            if c.timestamp is not None and c.timestamp > self._file_last.get(c.source.path, -math.inf):
                self._file_last[c.source.path] = c.timestamp
        for c in calls:
            idx = self._by_key.get(c.key) if c.key else None
            if idx is None:
                idx = len(self._calls)
                self._calls.append(c)
                if c.key:
                    self._by_key[c.key] = idx
            else:
                before = self._calls[idx]
                if before is not None and _keeps_earlier(before, c):
                    if c.key and _usage_rank(c.usage) == _usage_rank(before.usage):
                        held[c.key] = c  # (settled below, as in _take)
                    continue  # (a copy in another file that says less, or no more: see _take)
                if before is not None and before.source.path == c.source.path \
                        and copy_rank(before.usage) >= copy_rank(c.usage):
                    # (a copy in a later range of the same file, read by another worker: as a serial read of the
                    # file, where ResponseIds keeps the copy read first unless a later one reports more)
                    continue
                self._calls[idx] = c
            c.index = idx
        self._settle_accounted(held)
        self.issues.extend(kept)

    def pending_compactions(self) -> dict[str, dict[str, object]]:
        """Compactions read whose next call has not arrived, by context (see
        :meth:`ctxwatch.formats.Reader.pending_compactions`); ``{}`` when none or unknown."""
        if self._worker_pending is not None:
            return dict(self._worker_pending)
        try:
            return self.reader.pending_compactions()
        except Exception:
            return {}

    def set_pending_compactions(self, pending: dict[str, dict[str, object]]) -> None:
        """The last file was read by a worker process: take its reader's pending compactions."""
        self._worker_pending = dict(pending)

    # -- derived --------------------------------------------------------------------------------
    def calibration(self) -> float | None:
        """Median of reported / estimated prompt tokens over calls that have both, or ``None`` when fewer than
        :data:`~ctxwatch.accounting.MIN_CALIBRATION_CALLS` do (:func:`~ctxwatch.accounting.calibration_factor`).

        Used to scale the breakdown of calls whose tokenizer is not the model's own (labelled
        "calibrated") when their model has no call with both (:meth:`factors`); a call that still disagrees by
        more than 5 % after calibration is flagged (:mod:`ctxwatch.analysis`, which calibrates each model's calls
        of a context on their own).  An implausible report (:attr:`Call.report_implausible`, B13) is no measure
        of the tokenizer: left out.
        """
        return calibrations_of(self.calls).run

    def occupancy(self, context: str = "main") -> tuple[int | None, str]:
        """The context's current prompt size in tokens and where the number comes from.

        Right after a compaction whose next call has not arrived, this is the log's ``post_tokens``
        (``"log"``), else ``None`` with ``"compacted"`` (never the stale pre-compaction size, and never 0:
        failure case B23).  Otherwise it is the latest call's prompt (``"reported"`` or ``"estimated"``),
        passing over calls whose reported prompt is implausible (B13: the last plausible occupancy stays).
        """
        pending = self.pending_compactions()
        marker = pending.get(context)
        if marker is None and context == "main" and pending.get("") is not None:
            marker = pending[""]
        if marker is not None:
            post = marker.get("post_tokens")
            return (int(post), "log") if isinstance(post, int) and post > 0 else (None, "compacted")
        for c in reversed(self.calls):
            if c.context == context and not c.prompt_implausible:
                if c.prompt_reported:  # (a reported 0 is no size: the estimate stands in, as in prompt_tokens)
                    return c.prompt_reported, "reported"
                return c.prompt_tokens, "estimated"
        return None, "unknown"

    def calibrations(self) -> dict[str | None, float | None]:
        """Per-model median of reported / estimated prompt tokens (the tokenizer gap is a property of the
        model family, so a run mixing a large model with a small helper model gets one factor each); ``None``
        for a model with calls that have both, but fewer than
        :data:`~ctxwatch.accounting.MIN_CALIBRATION_CALLS` (not calibrated, rather than given the run's factor,
        which other models' calls make).  Implausible reports are left out, as in :meth:`calibration`, and so
        are ``max_tokens: 1`` quota probes (:func:`~ctxwatch.accounting.calibrations_of`)."""
        return dict(calibrations_of(self.calls).per_model)

    def factors(self) -> Calibrations:
        """The run's calibrations (:meth:`calibrations` per model, :meth:`calibration` for a model without calls
        that have both), as every surface applies them to a call's floor and history
        (:meth:`Calibrations.breakdown`).  Reads every call once: O(calls)."""
        return calibrations_of(self.calls)

    def contexts(self) -> list[str]:
        """Distinct contexts in order of appearance (``main`` first when present)."""
        seen: dict[str, None] = {}
        for c in self.calls:
            seen.setdefault(c.context, None)
        ctxs = list(seen)
        if "main" in ctxs:
            ctxs.remove("main")
            ctxs.insert(0, "main")
        return ctxs


def file_outputs(reader: Reader, path: str, document: bool,
                 progress: Callable[[int, int], None] | None = None, records: list[int] | None = None,
                 start: int = 0, end: int | None = None, line: int = 1) -> Iterator[Output]:
    """The calls and issues a reader produces from a whole file, ending with what its ``finish`` returns.

    Documents are read whole (an Inspect ``.eval`` zip is opened by its reader); record streams are read in
    chunks from disk with the reader's ``coalesce`` set (one emission per call).  A reader error on odd input
    becomes a ``reader_error`` issue, never an exception.  ``progress`` gets ``(bytes_read, total_bytes)``;
    ``records[0]`` is increased by the number of records read.  ``start``/``end``/``line``: read only the byte
    range ``[start, end)`` (cut at line starts), whose first line is number ``line``.  Pure: usable in a
    worker process.

    Raises:
        LogError: the file cannot be read.
    """
    def guarded(produce: Callable[[], Iterable[Output]], line: int) -> list[Output]:
        try:
            return list(produce())
        except Exception as exc:  # a reader bug on odd input must not stop the run
            return [Issue(reader.path, line, "reader_error", f"{type(exc).__name__}: {exc}")]

    if document:
        value, issue = read_document(path)
        if issue is None:
            yield from guarded(lambda: reader.feed_document(value), 0)
        elif path.endswith(".eval"):  # zip container: the reader opens it itself
            yield from guarded(lambda: reader.feed_document(path), 0)
        else:
            yield issue
        yield from guarded(reader.finish, 0)
        return
    try:
        total = os.path.getsize(path)
    except OSError as exc:  # (removed since it was listed, or a broken link)
        raise LogError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    cb = (lambda off: progress(off, total)) if progress else None
    reader.coalesce = True  # the whole file is read now: one emission per call is enough
    n = 0
    try:
        for rec in iter_records(path, skip=reader.skip, progress=cb, offset=start, line=line, end=end):
            if isinstance(rec, Issue):
                yield rec
                continue
            n += 1
            try:
                outs = reader.feed(rec)
            except Exception as exc:  # a reader bug on odd input must not stop the run
                outs = [Issue(reader.path, rec.line, "reader_error", f"{type(exc).__name__}: {exc}")]
            yield from outs
        yield from guarded(reader.finish, 0)
    except OSError as exc:
        raise LogError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    finally:
        reader.coalesce = False
        if records is not None:
            records[0] += n


#: File types that are not logs, with the name an error gives them.
_NOT_REGULAR = ((stat.S_ISFIFO, "named pipe (FIFO)"), (stat.S_ISCHR, "character device"),
                (stat.S_ISBLK, "block device"), (stat.S_ISSOCK, "socket"))


def check_log_file(path: str, *, missing_ok: bool = False) -> None:
    """Raise :class:`LogError` unless ``path`` is a regular file (symbolic links followed).

    A pipe or a device named like a log (a FIFO blocks a read until a writer comes, ``/dev/zero`` never ends
    and filled memory without bound) is refused, and so are a directory, a dangling link and a link loop,
    each with its own reason.  ``missing_ok``: a path that does not exist yet passes (``--follow --format``
    waits for it).
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if missing_ok and not os.path.islink(path):
            return
        dangling = " (a symbolic link to a missing file)" if os.path.islink(path) else ""
        raise LogError(f"{path}: no such file{dangling}") from None
    except OSError as exc:  # a link loop (ELOOP), a path through a non-directory, no permission on a folder
        raise LogError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    if stat.S_ISDIR(st.st_mode):
        raise LogError(f"{path}: is a directory (give a log file)")
    for test, kind in _NOT_REGULAR:
        if test(st.st_mode):
            raise LogError(f"{path}: is a {kind}, not a log file (ctxwatch reads regular files)")


def resolve_spec(path: str, fmt: str | None) -> FormatSpec:
    """The format of ``path``: ``fmt`` if given, else detected.

    Raises:
        LogError: the file does not exist (with ``fmt``: it may not exist yet), is not a regular file
            (:func:`check_log_file`), cannot be read, or no format recognises it.
    """
    if fmt:
        check_log_file(path, missing_ok=True)
        try:
            return get_format(fmt)
        except KeyError as exc:
            raise LogError(str(exc.args[0])) from exc
    check_log_file(path)
    try:
        spec = detect(path)
    except OSError as exc:
        raise LogError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    if spec is None:
        if _blank(path) or _one_unfinished_line(path):
            # An empty file (or one of blank lines), or one whose first record is still being written: wait for
            # records (the unfinished line is then a truncated tail, reported as such, not a file of unknown
            # format).
            return get_format("canonical")
        why = ""
        try:
            sn = sniff_file(path)
            if sn.head.startswith(_COMPRESSED_MAGIC):
                raise UnknownFormat(f"{path}: a compressed file (gzip, bzip2, xz or zstd): decompress it first "
                                    "(ctxwatch re-reads message bodies by byte offset), or pipe it in: zcat FILE | "
                                    "ctxwatch report - (or check -, plan -, schema -)")
            if not sn.values and sn.document is None and sn.head.strip():
                why = "; none of its first lines is JSON"
            array = array_of_records(sn)
            if array is not None:
                n, elements = array
                from ctxwatch.output.safetext import shown

                # (standard input's copy is shown as "-": there is no FILE to name, so the pipe gets jq instead)
                how = ("pipe it through  jq -c '.[]'  first (... | jq -c '.[]' | ctxwatch report -, or check -)"
                       if shown(path) == "-" else "convert it with  jq -c '.[]' FILE > FILE.jsonl  (or pipe it in:  "
                       "jq -c '.[]' FILE | ctxwatch report -, or check -)")
                raise JsonArray(f"{path}: {JSON_ARRAY_NOTE}{n:,} {elements.name} record{'s' if n != 1 else ''}, "
                                f"not one record per line: {how}")
        except OSError:
            pass
        raise UnknownFormat(f"{path}: format not recognised{why} (see `ctxwatch formats`, or pass --format NAME)")
    return spec


#: Magic numbers of compressed files (gzip 1f 8b, bzip2 "BZh", xz fd "7zXZ", zstd 28 b5 2f fd): a rotated
#: log compressed by a log shipper, named ``*.jsonl.gz`` or not.
_COMPRESSED_MAGIC = (b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00", b"\x28\xb5\x2f\xfd")

#: Largest file checked for holding only whitespace (bytes): a blank log is a new one, not megabytes of spaces.
BLANK_CHECK_BYTES = 1 << 16


def _blank(path: str) -> bool:
    """True when the file is empty or holds only whitespace (blank lines): a log with no record yet."""
    try:
        if os.path.getsize(path) > BLANK_CHECK_BYTES:
            return False
        with open(path, "rb") as fh:
            return not fh.read().strip()
    except OSError:
        return False


def empty_file_note(path: str) -> Issue | None:
    """The ``empty_file`` note of a log with no record yet (empty, or only whitespace), ``None`` for any other
    file (one that cannot be read included).  ``check`` and ``report`` give it after reading the file
    (:func:`load_run`); the dashboard while it follows one (:meth:`Run.refresh_notes`), or waits for an empty
    file's first record to know its format."""
    if not _blank(path):
        return None
    try:
        what = "empty" if os.path.getsize(path) == 0 else "blank (only whitespace)"
    except OSError:  # (removed since: no file, no note)
        return None
    return Issue(path, 0, "empty_file", f"the file is {what}: no record to read yet")


def _one_unfinished_line(path: str) -> bool:
    """True when the file holds a single line with no newline yet, starting like a JSON object (a log whose
    first record is being written)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(1 << 20)
    except OSError:
        return False
    return b"\n" not in head and head.lstrip(b"\xef\xbb\xbf \t").startswith(b"{") and len(head) < (1 << 20)


def load_run(path: str, fmt: str | None = None, settings: Settings | None = None,
             progress: Callable[[int, int], None] | None = None, *, parallel: bool = False) -> Run:
    """Read a whole log file into a :class:`Run`.

    ``parallel``: a big file of independent records may be read by worker processes
    (:func:`ctxwatch.engine.parallel.read_ranges`); the run is the same.

    Args:
        path: the log file.
        fmt: format name, or ``None`` to detect.
        settings: thresholds.
        progress: called with ``(bytes_read, total_bytes)`` while reading.

    Raises:
        LogError: the file cannot be read or its format is unknown.
    """
    spec = resolve_spec(path, fmt)
    run = Run(path, spec, settings)
    records = -1
    if parallel and progress is None:
        from ctxwatch.engine.parallel import ParallelReadError, read_ranges

        parts = read_ranges(path, spec, run.settings)
        if parts is not None:
            try:
                records = 0
                for calls, issues, n in parts:
                    run.add_accounted(calls, issues)
                    records += n
                from ctxwatch.accounting.windows import catalog_window

                # (the workers looked the windows up; ask here too, so that the start-up memo keeps them)
                for model, provider in {(c.model, c.provider) for c in run.calls}:
                    catalog_window(model, provider)
            except ParallelReadError:  # a worker died (memory?): read serially, slower but the same
                run = Run(path, spec, settings)
                records = -1
    if records < 0:
        records = run.read_file(path, progress=progress)
    if records == 0 and not run.issues:
        empty = empty_file_note(path)
        if empty is not None:
            run.issues.append(empty)
    if fmt and records and not run.calls:
        run.issues.extend(format_mismatch(path, spec, records, run.issues))
    return run


def format_mismatch(path: str, spec: FormatSpec, records: int, issues: list[Issue]) -> list[Issue]:
    """The ``format_mismatch`` issue of a file read with a forced format that gave no call from its
    ``records`` records (call only then); none when the reader already reported the records as bad lines.

    A forced --format that silently reads nothing from a file full of records is almost surely the wrong one;
    saying so keeps ``check`` from passing a log it never read.  A file that detection finds to be in the
    forced format is a log that has not reached its first call yet (a Codex rollout before its first
    ``token_count``): no issue.
    """
    if not records or any(i.line for i in issues if i.path == path):
        return []
    detected = detect(path)
    if detected is not None and detected.name == spec.name:
        return []
    hint = f" (it looks like {detected.name})" if detected is not None else ""
    return [Issue(path, 0, "format_mismatch", f"{records} records, none read as a call in format {spec.name}{hint}")]


def reload_call(run: Run, index: int) -> ParsedCall | None:
    """Re-read call ``index`` of ``run`` from disk, text included (for the detail view and the planner).

    See :func:`reload_parsed`; returns ``None`` if the call can no longer be found.
    """
    return reload_parsed(run.spec, run.calls[index])


def reload_parsed(spec: FormatSpec, call: Call) -> ParsedCall | None:
    """Re-read one call's text from disk, given only its format and its summary (thread-safe: it touches
    no :class:`Run`, so a UI can call it while a reader thread owns the run).

    Formats whose calls depend on earlier records (``needs_prefix``) are re-read from the file's start up to
    the call's last byte; others from the record's own byte range.  Returns ``None`` if the file changed so
    that the call can no longer be found.
    """
    src = call.source
    # A joined batch call keeps the path of its request file; its reader needs it to re-read the request.
    input_path = call.extra.get("input_path")
    reader = spec.reader(src.path, input_path=input_path) if input_path else spec.reader(src.path)
    reader.full_history = True  # the opened call needs its text, whatever the summary pass left out
    want = call.key
    found: ParsedCall | None = None

    def pick(outputs: Iterable[Output]) -> None:
        nonlocal found
        for out in outputs:
            if isinstance(out, ParsedCall) and (
                (want and out.key == want) or (not want and out.source.byte_start == src.byte_start
                                               and out.source.line == src.line)):
                found = out

    try:
        if spec.document:
            value, issue = read_document(src.path)
            pick(reader.feed_document(src.path if issue and src.path.endswith(".eval") else value))
            pick(reader.finish())
            return found
        if spec.needs_prefix:
            for rec in iter_records(src.path, skip=reader.skip):
                if isinstance(rec, Record):
                    if rec.byte_start >= src.byte_end and found is not None:
                        break
                    pick(reader.feed(rec))
            pick(reader.finish())
            return found
        with open(src.path, "rb") as fh:
            fh.seek(src.byte_start)
            data = fh.read(src.byte_end - src.byte_start)
    except OSError:
        return None
    # (``data`` is rebound and then dropped as soon as it is parsed: a line of tens of megabytes is not held twice
    # while it is parsed, nor at all while its messages are built)
    data = data.rstrip(b"\n")
    values, _ = decode_line(data, src.path, src.line, first=src.byte_start == 0)
    del data
    outs = [o for i, v in enumerate(values)
            for o in reader.feed(Record(v, src.line, src.line_end, src.byte_start, src.byte_end, i))]
    pick(outs)
    if found is None and want and want.startswith("content:"):
        # A record keyed by its content (ctxwatch.formats.canonical.ResponseIds.content) is numbered among the
        # identical records read before it in its file; read alone it is the first: the same content is the call.
        found = next((o for o in outs if isinstance(o, ParsedCall) and o.key
                      and o.key.split(":", 2)[:2] == want.split(":", 2)[:2]), None)
    return found
