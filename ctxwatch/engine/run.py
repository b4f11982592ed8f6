"""A run: the calls and issues of one log (or of a folder of logs), fed as they are read.

:class:`Run` owns the current file's format reader and an :class:`~ctxwatch.accounting.Accountant`.  It is fed
lines (:meth:`Run.feed_lines`: decoded here, in order, through the reader's filter), records or whole documents,
and keeps :class:`~ctxwatch.model.Call` summaries and :class:`~ctxwatch.model.Issue` lists.  A call whose dedupe
key was seen before replaces the earlier summary in place (a later line of the same response), so nothing is
counted twice; a copy of a call in another file is settled by :meth:`Run.settle_copies`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

from ctxwatch.accounting import Accountant
from ctxwatch.config import Settings
from ctxwatch.engine.change import Change
from ctxwatch.engine.keys import RecordKeys
from ctxwatch.engine.merge import MergeAccounted, copy_rank, keeps_earlier
from ctxwatch.engine.opening import empty_file_note
from ctxwatch.engine.sanitize import sanitize
from ctxwatch.engine.views import RunViews
from ctxwatch.formats import FormatSpec, Output
from ctxwatch.model import Call, Issue, ParsedCall, Resolved, collect_bad_fields
from ctxwatch.model.histories import PackedHistories
from ctxwatch.source import Line, Record, records

#: Parsed calls held back before accounting (bounded so that memory stays small on huge runs).
PENDING_LIMIT = 256

#: Most parsed calls held while the tokenizer's counting child (:mod:`ctxwatch.tokens.server`) is still loading
#: its encoding: accounting them would only wait for it, and the read goes on meanwhile.
PENDING_HOLD = 20_000


class Run(RunViews, MergeAccounted, PackedHistories):
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
        # After a reset (the followed file truncated or replaced), the indices of the calls the new content has
        # added or updated so far; the others were read before it (see keeps_earlier).  None: no reset yet.
        self._since_reset: set[int] | None = None
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
        self._record_keys = RecordKeys()  # (keys of the calls the reader leaves unkeyed)
        #: A folder's calls as the command writes them, made where each file was read
        #: (:class:`ctxwatch.engine.files.Pieces`): ``id(call) -> (call, its file's pieces, its place in them, the
        #: file's calls)`` (the call held, so that its id names no other while the run lives).
        self.rendered: dict[int, tuple[Call, Any, int, list[Call]]] = {}

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
            out, problems = sanitize(out)
            self.accountant.prefetch(out)  # (its texts counted ahead, where a counting child runs)
            if out.key and out.key in self._damage:
                self._withdraw_damage(out, problems, change)
            for problem in problems:
                # A call emitted again (a later line of the same response) repeats its damage: report it once,
                # at the line its kept usage now comes from.
                seen = (out.key, problem.message)
                if out.key and seen in self._reported:
                    self._move_damage(out.key, problem, change)
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
            fresh = self._since_reset
            if idx is not None:
                before = self._pending.get(idx) or self._calls[idx]
                if before is not None and keeps_earlier(before, out, fresh is None or idx in fresh):
                    if out.key and copy_rank(out) == copy_rank(before):
                        self._held[out.key] = out  # (its file may turn out to be the call's own: settle_copies)
                    # A copy in another file that says less (a stream cut before its final usage, a resumed
                    # session's copy of a streaming placeholder), or no more, does not replace the call read
                    # before (see keeps_earlier).
                    continue
                self._pending[idx] = out
                if fresh is not None:
                    fresh.add(idx)
                if idx not in change.added and idx not in change.updated:
                    change.updated.append(idx)
                continue
            idx = len(self._calls)
            self._calls.append(None)
            self._pending[idx] = out
            if fresh is not None:
                fresh.add(idx)
            if out.key:
                self._by_key[out.key] = idx
            change.added.append(idx)
        if len(self._pending) >= PENDING_LIMIT and (len(self._pending) >= PENDING_HOLD
                                                     or not self.accountant.counts_pending()):
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
        for idx in sorted(pending, key=lambda i: (pending[i].messages is None and pending[i].provenance.floor_call is
        not None,
                                                   i)):
            self._calls[idx] = self.accountant.account(pending[idx], idx)

    def account_pending(self) -> None:
        """Account every call read so far: those the reader still holds back (:meth:`~ctxwatch.formats.Reader.flush`)
        and those parsed but not accounted yet (accounted in batches, or when :attr:`calls` is read)."""
        change = Change()
        try:
            self._take(list(self.reader.flush()), change)
        except Exception as exc:  # a reader bug must not stop the run
            self._take([Issue(self.reader.path, 0, "reader_error", f"{type(exc).__name__}: {exc}")], change)
        self._flush()

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
                change.withdraw(issue)
            else:
                keep.append(issue)
        self._damage[out.key] = keep

    def _move_damage(self, key: str, problem: Issue, change: Change) -> None:
        """The damage ``problem`` of call ``key``, reported before at another line of the same file: moved to the
        line the call's usage is now taken from (withdrawn there, given here)."""
        damage = self._damage.get(key, [])
        old = next((i for i in damage if i.message == problem.message and i.path == problem.path), None)
        if old is None or old.line == problem.line:
            return
        damage[damage.index(old)] = problem
        self.issues = [problem if i is old else i for i in self.issues]
        if old in change.issues:
            change.issues = [problem if i is old else i for i in change.issues]
        else:
            change.resolved.append(old)
            change.issues.append(problem)

    def _resolve(self, done: Resolved, change: Change) -> None:
        """Withdraw the issues ``done`` names (file, line, kind), into ``change.resolved``."""
        gone = [i for i in self.issues if (i.path, i.line, i.kind) == (done.path, done.line, done.kind)]
        for i in gone:
            if i.call_key:
                self._reported.discard((i.call_key, i.message))  # (given again later, it is reported again)
        if gone:
            self.issues = [i for i in self.issues if i not in gone]
            for i in gone:
                change.withdraw(i)

    def feed_record(self, rec: Record | Issue | Resolved) -> Change:
        """Feed one record (or an issue from the stream, or the withdrawal of one); return what changed.  Never
        raises on content."""
        change = Change()
        self._feed(rec, change)
        return change

    def feed_lines(self, events: Iterable[Line | Issue | Resolved]) -> Change:
        """Feed lines of the current file, with the issues and withdrawals between them, in file order; return
        what changed.  Each line is decoded just before its values are fed, through the reader's filter
        (:func:`ctxwatch.source.records`), so the run is the same however the lines were read: whole, in slices
        or as the file grew."""
        change = Change()
        for item in records(events, self.reader.path, self.reader.skip, decode=self.reader.decode):
            self._feed(item, change)  # type: ignore[arg-type]  # (records passes the issues and withdrawals on)
        return change

    def _feed(self, rec: Record | Issue | Resolved, change: Change) -> None:
        if isinstance(rec, Issue):
            self._take([rec], change)
            return
        if isinstance(rec, Resolved):
            self._resolve(rec, change)
            return
        self.records += 1
        outputs = self._read(self.reader.feed, rec.line, rec)  # (no closure: this runs for every record)
        self._record_keys.key(rec, outputs)
        if outputs:
            self._take(outputs, change)

    def _read(self, produce: Callable[..., Iterable[Output]], line: int, *args: object) -> list[Output]:
        """What ``produce(*args)`` (the reader reading one record, a document or its end) gives, with an
        ``invalid_field`` issue at ``line`` for each field of the wrong type its messages were built with
        (:func:`~ctxwatch.model.collect_bad_fields`) and a ``reader_error`` issue for a reader bug, which
        must not stop the run."""
        with collect_bad_fields() as notes:
            try:
                outputs = list(produce(*args))
            except Exception as exc:
                outputs = [Issue(self.reader.path, line, "reader_error", f"{type(exc).__name__}: {exc}")]
        return [*(Issue(self.reader.path, line, "invalid_field", n) for n in notes), *outputs] if notes else outputs

    def feed_document(self, value: object) -> Change:
        """Feed a whole-file JSON document (document formats)."""
        change = Change()
        self._take(self._read(self.reader.feed_document, 0, value), change)
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

    def withdraw_notes(self) -> Change:
        """Withdraw the notes :meth:`refresh_notes` gave about the file as it is (``change.resolved``): before
        :meth:`use_format` on a file that was empty since its reset, whose ``empty_file`` note is then no longer
        true (``use_format`` itself keeps the notes of a file replaced, as the history of the old one)."""
        change = Change()
        self._drop_standing(change)
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
        self._take(self._read(self.reader.finish, 0), change)
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
        """The followed file was truncated or replaced: a fresh reader (the history starts over), in ``spec``'s
        format when the new file's was detected again.  Calls already read are kept (they happened), and so are
        the dedupe keys: a record that reappears in the new file (a resumed session) is not counted twice, and a
        copy that says less than the call read before (a partial one) does not replace it."""
        self._since_reset = set()
        self.resets.append({"reason": reason, "path": path or self.path, "at_call": len(self._calls)})
        self.issues.append(Issue(path or self.path, 0, "reset", f"file {reason}; reading it again from the start"))
        self.use_format(spec or self.spec, path)

    def use_format(self, spec: FormatSpec, path: str | None = None) -> None:
        """Read the current file from its start with a fresh reader of ``spec``'s format."""
        if spec is not self.spec:
            self.spec = spec
            if spec.name not in self.formats:
                self.formats.append(spec.name)
        self.reader = self.spec.reader(path or self.reader.path)
        self.records = 0
        self._record_keys = RecordKeys()
        self._standing = []  # (notes given about the old file stay among its issues, no longer refreshed)

    def add(self, outputs: Iterable[Output]) -> Change:
        """Add calls and issues produced outside the run's reader (e.g. a joined batch pair)."""
        change = Change()
        self._take(outputs, change)
        return change

    def pending_compactions(self) -> dict[str, dict[str, object]]:
        """Compactions read whose next call has not arrived, by context (see
        :meth:`ctxwatch.formats.Reader.pending_compactions`); ``{}`` when none or unknown."""
        if self._worker_pending is not None:
            return dict(self._worker_pending)
        try:
            return self.reader.pending_compactions()
        except Exception:
            return {}

    def set_pending_compactions(self, pending: dict[str, dict[str, object]] | None) -> None:
        """The last file was read by a worker process: take its reader's pending compactions (``None``: the run's
        own reader reads the next file, and knows its own)."""
        self._worker_pending = None if pending is None else dict(pending)
