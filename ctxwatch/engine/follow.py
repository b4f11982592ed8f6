"""The one follow loop: a log read from its start, then followed as it grows, into a :class:`Run`.

The dashboard and ``report --follow --jsonl`` both run a :class:`Follower` and take what it gives
(:mod:`ctxwatch.engine.events`).  It reads the existing content first (the *backfill*, in slices, with progress;
the user may skip to the end), then wakes up on file events or polls (:class:`~ctxwatch.source.wake.Waker`) and
reads what is new with a :class:`~ctxwatch.source.tailer.FileTailer`.  The run is fed lines, never decoded
records, so a file gives the same calls whether it is read whole, in slices or as it grows.  Logs written whole
(JSON documents) are read again when they change (:mod:`ctxwatch.engine.rewritten`).
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable
from typing import Any

from ctxwatch.config import Settings
from ctxwatch.engine.change import Change
from ctxwatch.engine.events import (
    BackfillDone,
    CallsChanged,
    Failed,
    FollowEvent,
    FormatSeen,
    IssuesChanged,
    Opened,
    Progress,
    ResetSeen,
    WatchChanged,
)
from ctxwatch.engine.run import Run
from ctxwatch.engine.waiting import empty, format_when_ready
from ctxwatch.formats import FormatSpec, detect
from ctxwatch.model import Issue
from ctxwatch.source import FileTailer, Line, Reset, Waker, Watcher, skip_to_end
from ctxwatch.source.wake import DEFAULT_DEBOUNCE_MS, DEFAULT_POLL_INTERVAL, DEFAULT_SWEEP_INTERVAL
from ctxwatch.tokens import CountingStopped, stop_counting_on

#: Bytes of the first backfill slice of the dashboard; each next slice is twice as big, up to ``slice_bytes``: the
#: first calls reach the screen after 256 KiB instead of megabytes, so a big log shows its dashboard at once.
FIRST_SLICE_BYTES = 256 * 1024

#: Bytes read per backfill slice at most (progress is given and cancellation checked between slices).
SLICE_BYTES = 4 * 1024 * 1024

#: Bytes at the end of the file still read when the backfill is skipped: the latest calls and their flags show
#: at once.  8 MiB is a fraction of a second of parsing and holds the last dozens to thousands of calls; when the
#: last complete line alone is longer, that line is read whole instead (:func:`~ctxwatch.source.skip_to_end`).
SKIP_KEEP_BYTES = 8 * 1024 * 1024


class Follower:
    """Read one log and follow it, giving :mod:`~ctxwatch.engine.events` to ``emit`` (from the follower's thread).

    Args:
        path: the log file (it may not exist yet: it is waited for).
        emit: called with each event.
        stop: set it to end :meth:`run` (checked at least every ``flush_interval`` seconds, and between the
            slices of a long text being counted).
        fmt: format name, or ``None`` to detect.
        settings: thresholds for the accounting.
        last: give only the last ``last`` calls of the backfill; later calls all come.
        cancel_backfill: set it to skip the rest of the backfill (the last :data:`SKIP_KEEP_BYTES` are read).
        poll: follow by polling only; poll_interval: seconds between polls.
        flush_interval: least seconds between two :class:`~ctxwatch.engine.events.CallsChanged` (0: after every
            read); also the longest wait for file events before the follower checks for work.
        sweep_interval: seconds between stat sweeps while file events are watched.
        debounce_ms: watchfiles' grouping of changes in milliseconds.
        slice_bytes / first_slice_bytes: the backfill's slices (the first, then doubling up to ``slice_bytes``;
            default :data:`SLICE_BYTES` and :data:`FIRST_SLICE_BYTES`, looked up when the follower is created).
        idle_grace: seconds a half-written last line may stay unchanged before it is reported.
        wait_for_format: a file whose first records are in no known format is waited for (a job about to write
            a known one) until :data:`~ctxwatch.engine.opening.DETECT_RECORDS` records; otherwise it fails at once.
        on_turn: called after each turn of the loop with the follower and whether to act at once (the
            dashboard recomputes its flags there); :attr:`dirty` says whether calls changed since it was cleared.
        watcher: replacement for ``watchfiles.watch`` (tests).

    Attributes:
        run_: the run, once the format is known.  tailer: the tailer reading the log (JSONL logs).
        watch_mode: ``None`` before the live phase, then ``events`` or ``polling``.
        error: the message of a :class:`~ctxwatch.engine.events.Failed` given, else ``None``.
        dirty: calls changed (the consumer clears it).  done: set when :meth:`run` has returned.
    """

    def __init__(self, path: str, emit: Callable[[FollowEvent], object], stop: threading.Event, *,
                 fmt: str | None = None, settings: Settings | None = None, last: int | None = None,
                 cancel_backfill: threading.Event | None = None, poll: bool = False,
                 poll_interval: float = DEFAULT_POLL_INTERVAL, flush_interval: float = 0.25,
                 sweep_interval: float = DEFAULT_SWEEP_INTERVAL, debounce_ms: int = DEFAULT_DEBOUNCE_MS,
                 slice_bytes: int | None = None, first_slice_bytes: int | None = None,
                 idle_grace: float | None = None, wait_for_format: bool = False,
                 on_turn: Callable[[Follower, bool], object] | None = None, watcher: Watcher | None = None) -> None:
        self.path = path
        self.emit = emit
        self.stop = stop
        self.fmt = fmt
        self.settings = settings or Settings()
        self.last = last
        self.cancel_backfill = cancel_backfill or threading.Event()
        self.poll = poll
        self.poll_interval = poll_interval
        self.flush_interval = flush_interval
        self.sweep_interval = sweep_interval
        self.debounce_ms = debounce_ms
        self.slice_bytes = SLICE_BYTES if slice_bytes is None else slice_bytes
        self.first_slice_bytes = min(FIRST_SLICE_BYTES if first_slice_bytes is None else first_slice_bytes,
                                     self.slice_bytes)
        self.idle_grace = idle_grace
        self.wait_for_format = wait_for_format
        self.on_turn = on_turn
        self.watcher = watcher
        self.run_: Run | None = None
        self.tailer: FileTailer | None = None
        self.watch_mode: str | None = None
        self.error: str | None = None
        self.dirty = False
        self.done = threading.Event()
        self._added: dict[int, None] = {}  # call indexes, turned into calls when flushed (the run accounts
        self._updated: dict[int, None] = {}  # parsed calls lazily, in batches)
        self._issues: list[Issue] = []
        self._resolved: list[Issue] = []  # issues given earlier that no longer hold
        self._progress: tuple[int, int] | None = None
        self._last_flush = -math.inf
        self._hold = False  # during a --last backfill: collect silently
        self._redetect = False  # after a reset to an empty file: detect its format at its first line

    # ------------------------------------------------------------------ entry point
    def run(self) -> None:
        """Open, backfill and follow until ``stop`` is set.  Never raises for file problems (they are given as
        :class:`~ctxwatch.engine.events.Failed` or issues)."""
        self._guarded(self._run)

    def run_batch(self, paths: list[str]) -> None:
        """Read batch request and result files joined as one run, and read them again whenever one changes,
        until ``stop`` is set (:func:`ctxwatch.engine.rewritten.follow_batch`)."""
        from ctxwatch.engine.rewritten import follow_batch

        self._guarded(lambda: follow_batch(self, paths))

    def _guarded(self, body: Callable[[], None]) -> None:
        try:
            with stop_counting_on(self.stop):
                body()
        except CountingStopped:
            return  # (stop is set: the follower is being closed, and its run with it)
        finally:
            if self.tailer is not None:
                self.tailer.close()
            self.done.set()

    def _run(self) -> None:
        from ctxwatch.engine.rewritten import follow_document

        spec = self._open()
        if spec is None:
            return
        run = self.run_ = Run(self.path, spec, self.settings)
        try:
            size = os.path.getsize(self.path)
        except OSError:
            size = 0
        self.emit(Opened(self.path, spec, size))
        if spec.document:
            follow_document(self, spec)
        else:
            self._follow_stream(run)

    def fail(self, message: str) -> None:
        """Give :class:`~ctxwatch.engine.events.Failed` and remember it in :attr:`error`."""
        self.error = message
        self.emit(Failed(message))

    # ------------------------------------------------------------------ opening
    def _open(self) -> FormatSpec | None:
        """The format, once known (:func:`~ctxwatch.engine.waiting.format_when_ready`)."""
        return format_when_ready(self.path, self.fmt, self.wait_for_format, self.poll_interval, self.stop,
                                 self.emit, self.fail)

    # ------------------------------------------------------------------ JSONL streams
    def _follow_stream(self, run: Run) -> None:
        grace = self.idle_grace
        tailer = self.tailer = FileTailer(self.path) if grace is None else FileTailer(self.path, idle_grace=grace)
        grace = tailer.idle_grace
        # A backfill slice usually ends inside a line, and accounting a slice can take longer than the idle grace
        # on a loaded machine: no line is idle before the backfill has caught up with the file.
        tailer.idle_grace = math.inf
        self._hold = self.last is not None
        cancelled = False
        resumed: int | None = None
        skipped_from, calls_before = None, 0
        slice_bytes = self.first_slice_bytes
        while not self.stop.is_set():
            if self.cancel_backfill.is_set():
                offset, line = skip_to_end(self.path, SKIP_KEEP_BYTES)
                if offset > tailer.offset:
                    skipped_from, calls_before = tailer.line, len(run.calls)
                    tailer.close()
                    tailer = self.tailer = FileTailer(self.path, offset, line, idle_grace=grace)
                    resumed = line
                cancelled = True
                break
            self._step(run, slice_bytes)
            slice_bytes = min(self.slice_bytes, 2 * slice_bytes)
            self._progress = (tailer.position, max(tailer.size, tailer.position))
            if tailer.lag == 0:
                break
            self.flush()
        tailer.idle_grace = grace
        if self._hold:
            self._hold = False
            keep = run.calls[-self.last:] if self.last else run.calls
            self._added = dict.fromkeys(c.index for c in keep)
            self._updated.clear()
        self._progress = None
        self.flush(force=True)
        waker = Waker(self.path, self.stop, poll=self.poll, poll_interval=self.poll_interval,
                      sweep_interval=self.sweep_interval, tick=self.flush_interval or 0.25,
                      debounce_ms=self.debounce_ms, watcher=self.watcher)
        self._watching(waker.mode, waker.why)
        self.emit(BackfillDone(cancelled, resumed, skipped_from, calls_before))
        self.turn(force=True)
        for wake in waker:
            if wake.notice is not None:
                self._watching(waker.mode, wake.notice)
            if wake.event and not wake.sweep:
                self._step(run)
            if wake.sweep:
                waker.swept(self._step(run) > 0)
            self.flush()
            self.turn()

    def _watching(self, mode: str, why: str | None) -> None:
        self.watch_mode = mode
        self.emit(WatchChanged(mode, self.poll_interval, why))

    def _step(self, run: Run, max_bytes: int | None = None) -> int:
        """Poll the tailer once and feed the run; return the bytes read.

        A first ``poll(0)`` only checks the file's identity and size (draining a rotated file into the old
        reader), so that a reset is handled, and the new reader in place, before any byte of the new file is fed.
        """
        tailer = self.tailer
        assert tailer is not None
        before = tailer.bytes_read
        self._feed(run, tailer.poll(0))
        self._feed(run, tailer.poll(max_bytes))
        # A followed file never finishes: the notes a whole read ends with are kept up to date as it is read.
        self.take(run.refresh_notes())
        return tailer.bytes_read - before

    def _feed(self, run: Run, events: list[Any]) -> None:
        """Feed the tailer's events, handling resets between them."""
        start = 0
        for i, ev in enumerate(events):
            if isinstance(ev, Reset):
                self.take(run.feed_lines(events[start:i]))
                self._reset(run, ev)
                start = i + 1
        rest = events[start:]
        if self._redetect and any(isinstance(ev, Line) for ev in rest):
            self._redetect = False
            spec = self._detect_again(run)
            if spec is not None:
                # (the empty file's note is this file's, not the old content's: withdrawn as the first line comes)
                self.take(run.withdraw_notes())
                run.use_format(spec)
                self.emit(FormatSeen(spec.name))
        self.take(run.feed_lines(rest))

    def _detect_again(self, run: Run) -> FormatSpec | None:
        """The format of the file now at the path, when it is another one than the run's (``None`` when it is the
        same, a document, not detected, or forced with ``--format``)."""
        if self.fmt is not None:
            return None
        try:
            spec = detect(self.path)
        except OSError:
            return None
        return None if spec is None or spec.document or spec is run.spec else spec

    def _reset(self, run: Run, ev: Reset) -> None:
        self.take(run.finish())  # what the old reader held back (its notes, made final)
        self.flush(force=True)
        spec = self._detect_again(run)
        # An empty new file says nothing of its format yet: it is detected again at its first line.
        self._redetect = spec is None and self.fmt is None and empty(self.path)
        run.reset(ev.reason, ev.path, spec)
        self.dirty = True
        self.emit(ResetSeen(ev.reason, len(run.calls), format_name=spec.name if spec is not None else None))

    # ------------------------------------------------------------------ giving what changed
    def take(self, change: Change) -> None:
        """Collect what ``change`` did, to be given at the next flush.  Withdrawals are taken first, as consumers
        apply them: a note withdrawn and given again, equal, stays; one not given yet is simply dropped."""
        if change.resolved:
            self._resolved.extend(i for i in change.resolved if i not in self._issues)
            self._issues = [i for i in self._issues if i not in change.resolved]
        self._issues.extend(change.issues)
        if change.added or change.updated:
            self.dirty = True
        if self._hold:
            return
        for i in change.added:
            self._added[i] = None
        for i in change.updated:
            if i not in self._added:
                self._updated[i] = None

    def publish(self, run: Run, last: int | None = None) -> None:
        """Give every call of ``run`` (its last ``last``) and its issues afresh (a log read whole again)."""
        self.run_ = run
        calls = run.calls[-last:] if last else run.calls
        self._added = dict.fromkeys(c.index for c in calls)
        self._updated = {}
        self._issues = list(run.issues)
        self.dirty = True
        self.flush(force=True)

    def flush(self, force: bool = False) -> None:
        """Give what accumulated, at most once per ``flush_interval`` unless ``force``: the issues (in file order)
        before the calls read with them."""
        now = time.monotonic()
        if not force and now - self._last_flush < self.flush_interval:
            return
        sent = False
        if self._progress is not None:
            self.emit(Progress(*self._progress))
            sent = True
        if self._issues or self._resolved:
            self.emit(IssuesChanged(self._issues, self._resolved))
            self._issues, self._resolved = [], []
            sent = True
        run = self.run_
        if (self._added or self._updated) and run is not None:
            calls = run.calls
            # (the calibrations of every call read, as report computes them: O(calls), once per flush)
            self.emit(CallsChanged([calls[i] for i in self._added if i < len(calls)],
                                   [calls[i] for i in self._updated if i < len(calls)], run.factors()))
            self._added, self._updated = {}, {}
            sent = True
        if sent:
            self._last_flush = now

    def turn(self, force: bool = False) -> None:
        """One turn of the loop is done: call ``on_turn`` (``force``: the consumer should act at once)."""
        if self.on_turn is not None:
            self.on_turn(self, force)
