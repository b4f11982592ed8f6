"""Copies of one call merged into a run: which copy stands (:func:`keeps_earlier`, :meth:`settle_copies`), and
calls accounted in another process (a worker's share of a folder or of a big file), with dedupe keys shared
exactly as a serial read shares them.  A mixin of :class:`~ctxwatch.engine.run.Run`."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ctxwatch.formats import copy_rank as usage_copy_rank
from ctxwatch.model import Call, Issue, ParsedCall, Usage


def usage_rank(u: Usage | None) -> tuple[int, int, int, int]:
    """How much a usage block tells, to choose between copies of one call from different files: reported at
    all, undamaged, a prompt size (above 0: a prompt of 0 tokens is implausible), the output count known and its
    size (the final count of a streamed response is its largest)."""
    if u is None:
        return (0, 0, 0, 0)
    out = u.output if u.output.__class__ is int else -1
    prompt = u.prompt_total.__class__ is int and u.prompt_total > 0  # type: ignore[operator]
    return (1, int(not u.damaged), int(prompt), out)


def copy_rank(c: Call | ParsedCall) -> tuple[int, int, int, int, int]:
    """How much a copy of a call tells, to choose between copies from different files: its usage first
    (:func:`usage_rank`), then whether its history is whole (a copy in an excerpt of the session, whose chain runs
    out of its file, cannot split the prompt into floor and history: ``history_cut``)."""
    return (*usage_rank(c.usage), int(not c.provenance.history_cut))


def keeps_earlier(before: Call | ParsedCall, copy: Call | ParsedCall, same_read: bool = True) -> bool:
    """True when ``copy``, a copy of ``before``'s call (same key) read later from another file, must not replace
    it now: it tells less (:func:`copy_rank`: less of the usage, or as much with its history cut where
    ``before``'s is whole), or as much (then which file the call belongs to is settled once the copy's file is
    read: :meth:`~ctxwatch.engine.run.Run.settle_copies`).  Later lines of one
    file (a response's streaming updates) always replace, while ``same_read``: ``False`` when the file was
    truncated or replaced since ``before`` was read, so that ``copy`` comes from its new content and is judged
    as a copy from another file (a partial copy does not undo what the earlier read knew)."""
    if before.source.path == copy.source.path and same_read:
        return False
    return copy_rank(copy) <= copy_rank(before)


class MergeAccounted:
    """:meth:`settle_copies` and :meth:`add_accounted`, for :class:`~ctxwatch.engine.run.Run` (whose state they
    update)."""

    if TYPE_CHECKING:
        _calls: list[Call | None]
        _by_key: dict[str, int]
        _reported: set[tuple[str | None, str]]
        _file_last: dict[str, float]
        _held: dict[str, ParsedCall]
        _pending: dict[int, ParsedCall]
        issues: list[Issue]

        def _flush(self) -> None: ...

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
            if mine is not None and theirs is not None and mine < theirs and copy_rank(copy) == copy_rank(before):
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

    def add_accounted(self, calls: Iterable[Call], issues: Iterable[Issue]) -> None:
        """Add calls accounted elsewhere (a worker's share of the file), renumbered to follow this run's
        calls; a call whose dedupe key is known replaces the earlier summary in place, and its damage already
        reported is not reported again, as :meth:`feed_record` does.  A copy from the same file (a later range
        of a file of independent records) replaces it only when it reports more of the usage
        (:func:`ctxwatch.formats.copy_rank`), as the file's reader keeps the copy read first."""
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
                if before is not None and keeps_earlier(before, c):
                    if c.key and copy_rank(c) == copy_rank(before):
                        held[c.key] = c  # (settled below, as in _take)
                    continue  # (a copy in another file that says less, or no more: see _take)
                if before is not None and before.source.path == c.source.path \
                        and usage_copy_rank(before.usage) >= usage_copy_rank(c.usage):
                    # (a copy in a later range of the same file, read by another worker: as a serial read of the
                    # file, where ResponseIds keeps the copy read first unless a later one reports more)
                    continue
                self._calls[idx] = c
            c.index = idx
        self._settle_accounted(held)
        self.issues.extend(kept)
