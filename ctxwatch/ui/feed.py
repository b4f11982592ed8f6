"""The reading loop behind the dashboard: runs in a worker thread and posts messages to the app.

:class:`LogFeed` reads one log into a :class:`ctxwatch.engine.run.Run`: first the existing content (the
*backfill*, in slices of :data:`BACKFILL_SLICE_BYTES` with :class:`~ctxwatch.ui.messages.BackfillProgress`;
Esc skips the rest), then it follows the file live.  Reading is done by one :class:`ctxwatch.source.tail.FileTailer`
(truncation, rotation and half-written lines are handled there); the live phase wakes it up like
:func:`ctxwatch.source.tail.watch` does (issues 2 and 4):

* ``watchfiles`` on the log's *parent directory* (a watch on the file itself is lost when the file is
  replaced), debounce :data:`DEBOUNCE_MS`, plus a stat sweep every :data:`SWEEP_INTERVAL` seconds in case an
  event is missed;
* ``poll=True`` (``--poll``): no events, a stat poll every :data:`POLL_INTERVAL` seconds (network, WSL and
  container filesystems);
* automatic fall back to polling, with a :class:`~ctxwatch.ui.messages.WatchChanged` notice, when watching
  cannot start, fails, the filesystem is known to send no events, or two sweeps in a row find growth that no
  event announced.

``watch()`` itself is not used because it always reads its files from byte 0: the feed's tailer has
already read the backfill (possibly skipping part of it).  Changes are coalesced: at most one
:class:`~ctxwatch.ui.messages.CallsChanged` per :data:`FLUSH_INTERVAL` seconds (4 per second), however fast
the log grows (failure case B30).

:class:`BatchFeed` reads OpenAI / Anthropic batch request and result files as one run (results joined to their
requests by ``custom_id``) and reads them again when one changes; :func:`is_batch_set` tells such files from
session logs.

The feed never touches a widget: it only calls ``emit`` (``App.post_message``, which is thread-safe).  It
keeps no message text: calls are :class:`~ctxwatch.model.Call` summaries; the detail view re-reads bodies
with :func:`ctxwatch.engine.run.reload_parsed`.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, BinaryIO

from textual.message import Message

from ctxwatch.accounting import NO_CALIBRATION
from ctxwatch.config import Settings
from ctxwatch.engine import Change, LogError, Run, UnknownFormat, empty_file_note, resolve_spec
from ctxwatch.formats import FormatSpec, detect
from ctxwatch.model import Issue, Resolved
from ctxwatch.source import Record, read_document
from ctxwatch.source.tail import (
    DEFAULT_DEBOUNCE_MS,
    DEFAULT_POLL_INTERVAL,
    DEFAULT_SWEEP_INTERVAL,
    FileTailer,
    Reset,
    Watcher,
    filesystem_type,
    no_events,
)
from ctxwatch.tokens import CountingStopped, stop_counting_on
from ctxwatch.ui.messages import (
    AnalysisChanged,
    BackfillDone,
    BackfillProgress,
    CallsChanged,
    FeedFailed,
    FeedNotice,
    FeedOpened,
    IssuesChanged,
    ResetSeen,
    WatchChanged,
)

#: Seconds between two polls of the followed file in polling mode (``--poll`` or after the fall back), and
#: while waiting for an empty file: :data:`ctxwatch.source.tail.DEFAULT_POLL_INTERVAL` (250 ms keeps a new call's
#: latency well under the one second issue 2 asks for, for the price of one ``stat`` per poll).
POLL_INTERVAL = DEFAULT_POLL_INTERVAL

#: Seconds between two stat sweeps while following with file events, so that a missed event delays a call by
#: one sweep at most (failure case B20): :data:`ctxwatch.source.tail.DEFAULT_SWEEP_INTERVAL`.
SWEEP_INTERVAL = DEFAULT_SWEEP_INTERVAL

#: Milliseconds watchfiles groups changes over before waking the feed (issue 4 asks for at most 100 ms):
#: :data:`ctxwatch.source.tail.DEFAULT_DEBOUNCE_MS`.
DEBOUNCE_MS = DEFAULT_DEBOUNCE_MS

#: Sweeps in a row that find the log grown while no event announced it before the feed stops trusting file
#: events and polls (the rule of :func:`ctxwatch.source.tail.watch`).
SILENT_SWEEPS = 2

#: Minimum seconds between two update messages to the app: at most 4 updates per second (issue 5).
FLUSH_INTERVAL = 0.25

#: Minimum seconds between two recomputations of flags and forecast while following (the analysis takes about
#: 0.2 s for 10,000 calls, see :mod:`ctxwatch.analysis`; once a second keeps it a small share of one core).
ANALYSIS_INTERVAL = 1.0

#: Bytes read per backfill slice: progress is reported and cancellation checked between slices
#: (4 MiB: a few tens of milliseconds of parsing).
BACKFILL_SLICE_BYTES = 4 * 1024 * 1024

#: Bytes of the first backfill slice; each next slice is twice as big, up to :data:`BACKFILL_SLICE_BYTES`.  The
#: first calls reach the screen after 256 KiB (a few dozen calls to account) instead of 4 MiB, so a big log
#: shows its dashboard at once (issue 4: first screen < 1 s on a 1 GB log).
BACKFILL_FIRST_SLICE_BYTES = 256 * 1024

#: Bytes read at a time when :func:`skip_to_end` looks for a newline (backwards for the last line start, forwards
#: for the first one in the kept bytes); a line longer than this is read in several chunks.
_TAIL_SCAN_BYTES = 1024 * 1024
#: Bytes at the end of the file still read when the backfill is skipped (Esc): the latest calls and their
#: flags show at once, as the user skipping wants the current state.  8 MiB is a fraction of a second of
#: parsing and holds the last dozens (the demo's 140 KB calls) to thousands (Claude Code lines) of calls; when
#: the last complete line alone is longer, that line is read whole instead (see :func:`skip_to_end`).
SKIP_KEEP_BYTES = 8 * 1024 * 1024


def _last_newline(fh: BinaryIO, end: int) -> int:
    """Offset of the last ``\\n`` before byte ``end`` of the binary file ``fh``, or -1 when there is none.

    Reads backwards :data:`_TAIL_SCAN_BYTES` at a time, so a line of any length is crossed.
    """
    while end > 0:
        start = max(0, end - _TAIL_SCAN_BYTES)
        fh.seek(start)
        nl = fh.read(end - start).rfind(b"\n")
        if nl >= 0:
            return start + nl
        end = start
    return -1


def _next_newline(fh: BinaryIO, start: int, end: int) -> int:
    """Offset of the first ``\\n`` in bytes ``start`` to ``end`` (excluded) of ``fh``, or -1 when there is none.

    Reads forwards :data:`_TAIL_SCAN_BYTES` at a time, so a line of any length is crossed.
    """
    while start < end:
        fh.seek(start)
        chunk = fh.read(min(_TAIL_SCAN_BYTES, end - start))
        if not chunk:
            break
        nl = chunk.find(b"\n")
        if nl >= 0:
            return start + nl
        start += len(chunk)
    return -1


def skip_to_end(path: str, keep: int = 0) -> tuple[int, int]:
    """Where to resume following ``path`` when its backfill is skipped: ``(offset, line)``.

    ``offset`` is a line start, and every complete line from it on is read after the skip:

    * ``keep=0``: just after the last newline (0 when the file has none);
    * ``keep`` > 0 (bytes): the first line start at or after ``keep`` bytes before the last newline, so that
      the last calls are read whole; when those bytes hold no line start (the last complete line alone is
      longer than ``keep``), the start of the last complete line, i.e. that line is read whole even though it
      begins more than ``keep`` bytes before the end.  A half-written line after the last newline is read
      once it is complete, like any line written while following.

    Lines of any length are crossed (searched :data:`_TAIL_SCAN_BYTES` at a time).  ``line`` is the offset's
    1-based line number (newlines before it are counted in 1 MiB chunks).  ``(0, 1)`` when the file cannot be
    read.
    """
    try:
        with open(path, "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            offset = _last_newline(fh, size) + 1  # (0 when there is no newline)
            if keep and offset:
                at = max(0, offset - keep)
                if at:
                    # The first line start at or after ``at``: just after the first newline from ``at - 1`` on.
                    # There is one (byte ``offset - 1`` is the last newline), at worst ``offset`` itself.
                    at = _next_newline(fh, at - 1, offset) + 1
                    if at == offset:
                        # No line start in the kept bytes: keep the last complete line whole, not nothing.
                        at = _last_newline(fh, offset - 1) + 1
                offset = at
            fh.seek(0)
            lines, done = 0, 0
            while done < offset:
                chunk = fh.read(min(1024 * 1024, offset - done))
                if not chunk:
                    break
                lines += chunk.count(b"\n")
                done += len(chunk)
            return offset, lines + 1
    except OSError:
        return 0, 1


class LogFeed:
    """Read one log and follow it, posting coalesced messages through ``emit``.

    Args:
        path: the log file.
        emit: called with each message (``App.post_message``); called from the feed's thread.
        stop: set it to end :meth:`run` (checked at least every :data:`FLUSH_INTERVAL` seconds, and every
            10 ms while waiting for file events).
        fmt: format name, or ``None`` to detect.
        settings: thresholds (window override, reserve) for the accounting.
        last: show only the last ``last`` calls of the backfill (``--last``); later calls all show.
        feed_id: stamped on every message so that the app can ignore a replaced feed's leftovers.
        cancel_backfill: set it to skip the rest of the backfill: the feed reads the file's last
            :data:`SKIP_KEEP_BYTES` (whole lines, at least the last complete one; see :func:`skip_to_end`)
            and follows it.
        poll: follow by polling only (``--poll``), never with file events.
        interval: seconds between polls in polling mode; flush_interval: minimum seconds between update
            messages (also the longest wait for file events before the feed checks for work).
        sweep_interval: seconds between stat sweeps while following with file events (default
            :data:`SWEEP_INTERVAL`, looked up when the feed is created).
        debounce_ms: watchfiles debounce in milliseconds (clamped to 1..100).
        slice_bytes: the most bytes per backfill slice (the first slice is :data:`BACKFILL_FIRST_SLICE_BYTES`
            or ``slice_bytes`` if smaller, and each next one twice the last).
        watcher: replacement for ``watchfiles.watch`` (tests); same keyword arguments.

    Attributes:
        watch_mode: ``None`` before the live phase, then ``events`` or ``polling``.
        tailer: the :class:`~ctxwatch.source.tail.FileTailer` reading the log (JSONL logs only).
        done: set when :meth:`run` has returned.
    """

    def __init__(self, path: str, emit: Callable[[Message], object], stop: threading.Event, *,
                 fmt: str | None = None, settings: Settings | None = None, last: int | None = None,
                 feed_id: int = 0, cancel_backfill: threading.Event | None = None, poll: bool = False,
                 interval: float = POLL_INTERVAL, flush_interval: float = FLUSH_INTERVAL,
                 sweep_interval: float | None = None, debounce_ms: int = DEBOUNCE_MS,
                 slice_bytes: int = BACKFILL_SLICE_BYTES, watcher: Watcher | None = None) -> None:
        self.path = path
        self.emit = emit
        self.stop = stop
        self.fmt = fmt
        self.settings = settings or Settings()
        self.last = last
        self.feed_id = feed_id
        self.cancel_backfill = cancel_backfill or threading.Event()
        self.poll = poll
        self.interval = interval
        self.flush_interval = flush_interval
        self.sweep_interval = SWEEP_INTERVAL if sweep_interval is None else sweep_interval
        self.debounce_ms = max(1, min(100, int(debounce_ms)))
        self.slice_bytes = slice_bytes
        self.watcher = watcher
        self.run_: Run | None = None
        self.tailer: FileTailer | None = None
        self.watch_mode: str | None = None
        self.done = threading.Event()
        self._added: dict[int, None] = {}  # call indexes, resolved to Calls at flush time (the Run accounts
        self._updated: dict[int, None] = {}  # parsed calls lazily, in batches)
        self._issues: list[Issue] = []
        self._resolved: list[Issue] = []  # issues the app holds that no longer hold (see IssuesChanged)
        self._progress: tuple[int, int] | None = None
        self._last_flush = 0.0
        self._hold = False  # during a --last backfill: collect silently
        self._dirty = False  # calls changed since the last analysis
        self._last_analysis = 0.0
        self._text_cache: dict[str, Any] = {}

    # ------------------------------------------------------------------ entry point
    def run(self) -> None:
        """Open, backfill and follow until ``stop`` is set. Never raises for file problems.

        Token counting checks ``stop`` too, between the slices of a long text (:func:`ctxwatch.tokens.
        stop_counting_on`): a message of tens of megabytes takes seconds to count, and the app's exit waits for
        this thread.
        """
        try:
            with stop_counting_on(self.stop):
                spec = self._open()
                if spec is None:
                    return
                run = self.run_ = Run(self.path, spec, self.settings)
                try:
                    size = os.path.getsize(self.path)
                except OSError:
                    size = 0
                self.emit(FeedOpened(self.feed_id, self.path, spec.name, size, spec))
                if spec.document:
                    self._follow_document(spec)
                else:
                    self._follow_stream(run)
        except CountingStopped:
            return  # (stop is set: the feed is being closed, and its run with it)
        finally:
            self.done.set()

    # ------------------------------------------------------------------ opening
    def _open(self) -> FormatSpec | None:
        """Detect the format; a file that does not exist yet (a job about to start writing it) or is empty (its
        format is not known before a record) is waited for."""
        said: set[str] = set()  # (each reason to wait is said once)
        name = os.path.basename(self.path)
        # An empty file is a log with no record yet, which check notes (empty_file): the note is shown while
        # the file stays empty, and withdrawn when it is not any more (gone, or its first record came).
        noted: Issue | None = None
        try:
            while not self.stop.is_set():
                wait = None
                empty: Issue | None = None
                if not os.path.lexists(self.path):
                    wait = f"{name} does not exist yet: waiting for it"
                elif self.fmt is None:
                    try:
                        if os.path.isfile(self.path) and os.path.getsize(self.path) == 0:
                            wait = f"{name} is empty: waiting for its first record to detect the format"
                            empty = empty_file_note(self.path)
                    except OSError:
                        pass
                if empty != noted:
                    self.emit(IssuesChanged(self.feed_id, [empty] if empty else [], [noted] if noted else []))
                    noted = empty
                if wait is not None:
                    if wait not in said:
                        self.emit(FeedNotice(self.feed_id, wait))
                        said.add(wait)
                    self.stop.wait(self.interval)
                    continue
                try:
                    return resolve_spec(self.path, self.fmt)
                except LogError as exc:
                    self.emit(FeedFailed(self.feed_id, str(exc)))
                    return None
            return None
        finally:
            if noted is not None:
                # (the run that reads the file now gives its own notes, an empty_file one included if the
                # file is blank: this one was only about the wait)
                self.emit(IssuesChanged(self.feed_id, [], [noted]))

    # ------------------------------------------------------------------ JSONL streams
    def _follow_stream(self, run: Run) -> None:
        tailer = self.tailer = FileTailer(self.path)
        tailer.skip = self._skip_for(run, tailer)
        # A backfill slice usually ends inside a line, and accounting a slice can take longer than the tailer's
        # idle grace (seconds, on a loaded machine): the next poll would then report the rest of that line, not
        # yet read, as a truncated tail.  No line is idle before the backfill has caught up with the file.
        grace = tailer.idle_grace
        tailer.idle_grace = math.inf
        self._hold = self.last is not None
        cancelled = False
        resumed: int | None = None  # (the line reading resumed from after a skip)
        skipped_from, calls_before = None, 0  # (the first line not read, and the calls read before it)
        slice_bytes = min(self.slice_bytes, BACKFILL_FIRST_SLICE_BYTES)
        try:
            # Backfill: slices until the tailer has caught up with the file's size.
            while not self.stop.is_set():
                if self.cancel_backfill.is_set():
                    offset, line = skip_to_end(self.path, SKIP_KEEP_BYTES)
                    if offset > tailer.offset:
                        skipped_from, calls_before = tailer.line, len(run.calls)
                        tailer.close()
                        tailer = self.tailer = FileTailer(self.path, offset, line, idle_grace=grace)
                        tailer.skip = self._skip_for(run, tailer)
                        resumed = line
                    cancelled = True
                    break
                self._step(run, slice_bytes)
                slice_bytes = min(self.slice_bytes, 2 * slice_bytes)
                self._progress = (tailer.position, max(tailer.size, tailer.position))
                if tailer.lag == 0:
                    break
                self._flush()
            tailer.idle_grace = grace
            if self._hold:
                self._hold = False
                keep = run.calls[-self.last:] if self.last else run.calls
                self._added = dict.fromkeys(c.index for c in keep)
                self._updated.clear()
            self._progress = None
            self._flush(force=True)
            mode = self._first_mode()
            self.emit(BackfillDone(self.feed_id, cancelled, resumed, skipped_from, calls_before))
            self._analyse(force=True)
            # Live follow: file events (with sweeps) until they fail or stay silent, then polling.
            while not self.stop.is_set():
                if mode == "events":
                    mode = self._follow_events(run)
                else:
                    self._follow_polling(run)
        finally:
            self.tailer.close()

    def _step(self, run: Run, max_bytes: int | None = None) -> int:
        """Poll the tailer once; return the bytes read.

        A first ``poll(0)`` only checks the file's identity and size (draining a rotated file with the old
        reader's filter), so that a reset is handled, and the new reader's ``skip`` filter installed, before
        any byte of the new file is read (the Claude Code filter records the links of the lines it skips).
        """
        tailer = self.tailer
        assert tailer is not None
        before = tailer.bytes_read
        self._handle(run, tailer.poll(0))
        self._handle(run, tailer.poll(max_bytes))
        # A followed file never finishes: the notes a whole read ends with (check's) are kept up to date as it
        # is read instead (Run.refresh_notes: Claude Code's subagent note, an empty file's).
        self._take_change(run.refresh_notes())
        return tailer.bytes_read - before

    def _skip_for(self, run: Run, tailer: FileTailer) -> Callable[[bytes], bool] | None:
        """The tailer's line filter for ``run``'s current reader (``None`` when the format has none).

        The filter is stateful (Claude Code records the parent links of the lines it skips), so each reader
        gets its own, installed at the start and after every reset.  Lines read from another file than the one
        the reader started on (a rotation between :meth:`_step`'s two polls) are never skipped: parsing a
        bookkeeping line is only slower, skipping it into the wrong reader loses its link.
        """
        real = run.reader.skip
        if real is None:
            return None
        ident = [tailer.identity]

        def skip(data: bytes) -> bool:
            now = tailer.identity
            if ident[0] is None:
                ident[0] = now  # the first open
            elif now != ident[0]:
                return False
            return real(data)

        return skip

    # ------------------------------------------------------------------ live phase
    def _watch(self, mode: str, message: str | None = None) -> None:
        """Enter watch ``mode`` (``events`` | ``polling``) and tell the app (``message``: why, for a person)."""
        self.watch_mode = mode
        self.emit(WatchChanged(self.feed_id, mode, self.interval, message))

    def _first_mode(self) -> str:
        """``events``, or ``polling`` with ``--poll`` or on a filesystem that sends no events."""
        if self.poll:
            self._watch("polling", f"polling every {self.interval:g} s (--poll)")
            return "polling"
        folder = os.path.dirname(os.path.abspath(self.path))
        fstype = filesystem_type(folder)
        if no_events(fstype):
            self._watch("polling", f"{folder} is on a {fstype} filesystem, which sends no change events; "
                                   f"polling every {self.interval:g} s")
            return "polling"
        self._watch("events")
        return "events"

    def _fall_back(self, why: str) -> str:
        self._watch("polling", f"{why}; switched to polling every {self.interval:g} s")
        return "polling"

    def _follow_polling(self, run: Run) -> None:
        """Poll the file every ``interval`` seconds until ``stop`` is set."""
        while not self.stop.wait(self.interval):
            self._step(run)
            self._flush()
            self._analyse()

    def _follow_events(self, run: Run) -> str:
        """Follow with watchfiles on the parent directory, sweeping every ``sweep_interval`` seconds.

        Returns ``polling`` when watching failed or stayed silent while the file grew (a notice was sent), or
        ``events`` once ``stop`` is set.
        """
        path = os.path.abspath(self.path)
        names = {path, os.path.realpath(path)}
        folder = os.path.dirname(path)
        try:
            watch_fn = self.watcher
            if watch_fn is None:
                import watchfiles

                watch_fn = watchfiles.watch
            it = iter(watch_fn(
                folder, watch_filter=None, debounce=self.debounce_ms, step=min(10, self.debounce_ms),
                stop_event=self.stop, rust_timeout=max(1, int(self.flush_interval * 1000)), yield_on_timeout=True,
                recursive=False, ignore_permission_denied=True, raise_interrupt=False))
        except Exception as exc:  # no watchfiles, inotify limit, missing folder...
            return self._fall_back(f"file watching could not start ({type(exc).__name__}: {exc})")
        last_sweep = time.monotonic()
        announced = 0  # events about the log since the last sweep
        silent = 0  # sweeps in a row that found growth no event announced
        registered = False
        try:
            while not self.stop.is_set():
                try:
                    changes = next(it)
                except StopIteration:
                    break
                except Exception as exc:
                    return self._fall_back(f"file watching failed ({type(exc).__name__}: {exc})")
                if self.stop.is_set():
                    break
                if not registered:
                    # watchfiles registers its watch inside the first next(): bytes appended between the
                    # backfill's last read and that moment sent no event, so read them now, not a sweep later.
                    registered = True
                    self._step(run)
                if any(p in names or os.path.realpath(p) in names for _change, p in changes):
                    announced += 1
                    self._step(run)
                if time.monotonic() - last_sweep >= self.sweep_interval:
                    grew = self._step(run) > 0
                    silent = silent + 1 if grew and not announced else 0
                    announced = 0
                    last_sweep = time.monotonic()
                    if silent >= SILENT_SWEEPS:
                        return self._fall_back("no file events received although the log grew")
                self._flush()
                self._analyse()
        finally:
            close = getattr(it, "close", None)
            if close is not None:
                close()
        return "events"

    def _handle(self, run: Run, events: list[Record | Issue | Reset | Resolved]) -> None:
        for ev in events:
            if isinstance(ev, Reset):
                self._take_change(run.finish())  # what the old reader held back (its notes, made final)
                self._flush(force=True)
                spec = None
                if self.fmt is None:
                    # The new file may be in another format (a log replaced by another tool's): detect it again
                    # when it already holds records; an empty one keeps the format it had.
                    try:
                        spec = detect(ev.path or self.path)
                    except OSError:
                        spec = None
                    if spec is not None and (spec.document or spec is run.spec):
                        spec = None  # (a whole-file document is not followed line by line)
                run.reset(ev.reason, ev.path, spec)
                if self.tailer is not None:
                    self.tailer.skip = self._skip_for(run, self.tailer)  # the new reader's (stateful) filter
                self._dirty = True
                self.emit(ResetSeen(self.feed_id, ev.reason, len(run.calls),
                                    format_name=spec.name if spec is not None else None))
                continue
            self._take_change(run.feed_record(ev))

    def _take_change(self, change: Change) -> None:
        """Collect what ``change`` did, to be sent at the next flush; a withdrawn issue not sent yet is simply
        dropped, one the app holds is withdrawn there.  Withdrawals are taken first, as the app applies them: a
        note withdrawn and given again, equal (a reader's note made final by ``finish``), stays."""
        if change.resolved:
            self._resolved.extend(i for i in change.resolved if i not in self._issues)
            self._issues = [i for i in self._issues if i not in change.resolved]
        self._take(change.added, change.updated, change.issues)

    def _take(self, added: list[int], updated: list[int], issues: list[Issue]) -> None:
        self._issues.extend(issues)
        if added or updated:
            self._dirty = True
        if self._hold:
            return
        for i in added:
            self._added[i] = None
        for i in updated:
            if i not in self._added:
                self._updated[i] = None

    def _flush(self, force: bool = False) -> None:
        """Send what accumulated, at most once per ``flush_interval`` unless ``force``."""
        now = time.monotonic()
        if not force and now - self._last_flush < self.flush_interval:
            return
        sent = False
        if self._progress is not None:
            self.emit(BackfillProgress(self.feed_id, *self._progress))
            sent = True
        if self._added or self._updated:
            calls = self.run_.calls if self.run_ is not None else []
            # (the calibrations of every call read, as report computes them: O(calls), once per flush)
            self.emit(CallsChanged(self.feed_id, [calls[i] for i in self._added if i < len(calls)],
                                   [calls[i] for i in self._updated if i < len(calls)],
                                   self.run_.factors() if self.run_ is not None else NO_CALIBRATION))
            self._added = {}
            self._updated = {}
            sent = True
        if self._issues or self._resolved:
            self.emit(IssuesChanged(self.feed_id, self._issues, self._resolved))
            self._issues = []
            self._resolved = []
            sent = True
        if sent:
            self._last_flush = now

    def _analyse(self, force: bool = False) -> None:
        """Recompute flags and forecast when calls changed, at most once per ``ANALYSIS_INTERVAL``."""
        if self.run_ is None or not self._dirty:
            return
        now = time.monotonic()
        if not force and now - self._last_analysis < ANALYSIS_INTERVAL:
            return
        try:
            from ctxwatch.analysis import analyze_run
        except ImportError:
            return
        self._dirty = False
        self._last_analysis = now
        try:
            result = analyze_run(self.run_, text_cache=self._text_cache)
        except Exception as exc:  # the dashboard must keep working without flags
            self.emit(AnalysisChanged(self.feed_id, {}, f"analysis failed: {type(exc).__name__}: {exc}"))
            return
        self.emit(AnalysisChanged(self.feed_id, result))

    # ------------------------------------------------------------------ whole-file documents
    def _read_document(self, spec: FormatSpec) -> Run:
        run = Run(self.path, spec, self.settings)
        value, issue = read_document(self.path)
        if issue is not None:
            if self.path.endswith(".eval"):
                run.feed_document(self.path)
            else:
                run.issues.append(issue)
        else:
            run.feed_document(value)
        run.finish()
        return run

    def _follow_document(self, spec: FormatSpec) -> None:
        """Documents are rewritten whole: read them, and read them again when size or mtime changes."""
        def signature() -> tuple[int, int] | None:
            """The document's (size, mtime_ns), or None when it is gone."""
            try:
                st = os.stat(self.path)
            except OSError:
                return None
            return st.st_size, st.st_mtime_ns

        seen = signature()
        run = self.run_ = self._read_document(spec)
        calls = run.calls[-self.last:] if self.last else run.calls
        self._added = dict.fromkeys(c.index for c in calls)
        self._issues = list(run.issues)
        self._flush(force=True)
        self.emit(BackfillDone(self.feed_id))
        self._dirty = True
        self._analyse(force=True)
        while not self.stop.wait(self.interval):
            now = signature()
            if now == seen or now is None:
                continue
            seen = now
            run = self.run_ = self._read_document(spec)
            self.emit(ResetSeen(self.feed_id, "rewritten", len(run.calls), clear=True))
            self._added = dict.fromkeys(c.index for c in run.calls)
            self._issues = list(run.issues)
            self._flush(force=True)
            self._text_cache = {}
            self._dirty = True
            self._analyse(force=True)


# ---------------------------------------------------------------------------------- batch files

#: Formats whose files are opened together as one run: batch requests joined to their results by ``custom_id``.
BATCH_FORMATS = frozenset({"openai-batch", "anthropic-batch"})


#: ``path -> (mtime, size, activity, from_content, from_call)``: each file's last activity, read again only when
#: the file changes.
_activity: dict[str, tuple[float, int, float, bool, bool]] = {}
_activity_lock = threading.Lock()


def activity_of(path: str) -> tuple[float, bool]:
    """When ``path`` was last active, in epoch seconds, and whether that is its last call's timestamp
    (:func:`ctxwatch.engine.folder.last_activity`, ``True``) or, with no timestamp in it, its modification time
    (``False``).  Remembered until the file changes.  Raises ``OSError`` when it cannot be stat'ed."""
    from ctxwatch.engine import last_call_time

    st = os.stat(path)
    with _activity_lock:
        known = _activity.get(path)
    if known is not None and known[:2] == (st.st_mtime, st.st_size):
        return known[2], known[3]
    found, from_call = last_call_time(path)
    entry = (found, True) if found is not None else (st.st_mtime, False)
    with _activity_lock:
        _activity[path] = (st.st_mtime, st.st_size, *entry, from_call)
    return entry


def activity_note(path: str) -> str:
    """What :func:`activity_of`'s time is, for a list that says it beside it: ``""`` (the last call's),
    ``" (last record)"`` (a record's, no call being found near the file's end: a rollout of ``session_meta``
    only) or ``" (file time)"`` (no timestamp: the modification time).

    Raises:
        OSError: the file cannot be stat'ed."""
    activity_of(path)
    with _activity_lock:
        known = _activity.get(path)
    if known is None or not known[3]:
        return " (file time)"
    return "" if known[4] else " (last record)"


def list_paths(paths: Sequence[str], notes: list[Issue] | None = None) -> list[str]:
    """The log files named by ``paths``: folders expanded with :func:`ctxwatch.engine.folder.list_logs`, files as given
    (if they exist); newest first, each file once (by device and inode: ``run.jsonl ./run.jsonl``, a link).
    ``notes``, when given, receives :func:`ctxwatch.engine.folder.list_logs`' notes about files of the folders that
    are not read (compressed logs, pipes).

    Newest is by the last call's timestamp, as ``report`` orders sessions (a copied folder gives every file the
    same modification time); files whose calls carry no timestamp come after them, by modification time (as
    report puts sessions without timestamps last)."""
    from ctxwatch.engine import list_logs, unique_files

    named: list[str] = []
    for p in paths:
        try:
            if os.path.isdir(p):
                named.extend(list_logs(p, notes))
            elif os.path.isfile(p):
                named.append(p)
        except OSError:
            continue
    found: dict[str, tuple[bool, float]] = {}
    for f in unique_files(named):  # (a file named twice, or by a link, is one session)
        try:
            act, content = activity_of(f)
        except OSError:
            continue
        found[f] = (content, act)
    return sorted(found, key=lambda f: found[f], reverse=True)


#: What :func:`log_files` remembers of a file: modification time, size in bytes, whether it is a log, its
#: format's name (``None``: not detected) and why it is not a log (``None``: it is, or no reason to give).
FileMemo = tuple[float, int, bool, str | None, UnknownFormat | None]


def log_files(paths: Sequence[str], fmt: str | None = None,
              memo: dict[str, FileMemo] | None = None) -> tuple[list[str], list[Issue]]:
    """:func:`list_paths`, without the files found in a folder that are in no known format (a ``config.json``
    an agent writes beside its logs, a plan exported into the folder): those are not sessions, and following
    the newest of them would replace a readable session by an error.  Files named on their own, and every file
    under a forced ``fmt``, are kept.

    Args:
        paths: files and folders, as given to the dashboard.
        fmt: the forced format, or ``None`` (detect).
        memo: ``path ->`` :data:`FileMemo`, kept between calls, so that an unchanged file is detected once (a
            file that was not recognised is detected again when it changes).

    Returns:
        ``(logs, left_out)``: the log files, newest first, and a ``skipped_file`` note for each file of the
        folders that was left out, as ``report`` gives them: in no known format, or compressed (a folder holding
        only those is not empty), or an ``unreadable`` one (a pipe, a dangling link).
    """
    from ctxwatch.engine import skipped_note

    notes: list[Issue] = []
    files = list_paths(paths, notes)
    if fmt:
        return files, notes
    named = {os.path.abspath(p) for p in paths if not os.path.isdir(p)}
    memo = {} if memo is None else memo
    out = []
    for f in files:
        if os.path.abspath(f) in named:
            out.append(f)
            continue
        try:
            st = os.stat(f)
        except OSError:
            continue
        known = memo.get(f)
        if known is None or known[:2] != (st.st_mtime, st.st_size):
            name, why = None, None
            try:
                # An empty file reads as a log being created, but JSON documents (.json, .traj) are written
                # whole: an empty one is not a session yet (a settings.json being created).
                ok = st.st_size > 0 or f.endswith(".jsonl")
                if ok:
                    name = resolve_spec(f, None).name
            except UnknownFormat as exc:
                ok, why = False, exc  # (a JSON array of records: the note says how to convert it)
            except LogError:
                ok = True  # unreadable now (permissions, a race): the feed says why when it is opened
            known = memo[f] = (st.st_mtime, st.st_size, ok, name, why)
        if known[2]:
            out.append(f)
        else:
            notes.append(skipped_note(f, known[4]))
    batch = [f for f in out if f in memo and memo[f][3] in BATCH_FORMATS and os.path.abspath(f) not in named]
    if batch and len(batch) < len(out):
        # Batch files beside sessions: a request file alone would show every request without its usage, a
        # result file alone every result without its prompt; they are joined only together (as the folder's
        # report joins them), so they are named instead of listed as sessions.
        for f in batch:
            out.remove(f)
            notes.append(Issue(f, 0, "skipped_file", BATCH_BESIDE_SESSIONS_NOTE))
    return out, notes


#: The note of a batch file in a folder that also holds session logs (:func:`log_files`).
BATCH_BESIDE_SESSIONS_NOTE = ("batch file beside session logs: not a session of its own; open the batch files "
                              "together (ctxwatch IN OUT), or `ctxwatch report FOLDER` joins them")


def is_batch_set(files: Sequence[str], fmt: str | None = None) -> bool:
    """True when ``files`` are batch files to open as one joined run: every file whose format is recognised
    (``fmt``, or detected) is an OpenAI or Anthropic batch file (:data:`BATCH_FORMATS`), and at least one is.
    Files of no known format are left to the join, which reports them; the first file of another format
    (a Claude Code session, a Codex rollout) ends the check, so a folder of sessions costs one detection."""
    found = False
    for f in files:
        try:
            # (detected, not resolved: an empty file, say a result file about to be written, is no log of any
            # format yet and decides nothing; resolving it would call it a canonical log being written)
            spec = resolve_spec(f, fmt) if fmt else detect(f)
        except (LogError, OSError):
            continue
        if spec is None:
            continue
        if spec.name not in BATCH_FORMATS:
            return False
        found = True
    return found


# ---------------------------------------------------------------------------------- a folder's sessions

#: Seconds between two checks of a followed folder for new activity (:class:`FolderScan`): the newest files and
#: their folders are stat'ed, so a session that becomes the newest is followed within this at most.
SCAN_INTERVAL = 2.0
#: Seconds between two full listings of a followed folder tree while its file events are watched: the safety
#: net for a missed event (a new session is seen at once by its event, or within :data:`SCAN_INTERVAL` when
#: it appears in the folder of a recently active one).
FULL_SCAN_INTERVAL = 30.0
#: Seconds between two full listings when the tree is polled (``--poll``, a filesystem that sends no events,
#: watching that failed): what a new session in a folder where nothing was recently active waits at most.
POLL_FULL_SCAN_INTERVAL = 10.0
#: The newest files stat'ed at each check (:data:`SCAN_INTERVAL`), with the folders holding them: the sessions
#: likely to be written to, and the folders a new session is likely to appear in.
HOT_FILES = 8
#: watchfiles' wait for more changes before it reports a batch, at most (milliseconds), and how often it checks
#: for more changes and for ``stop`` meanwhile: a session being written (a few times a second) wakes the scan
#: twice a second at most, and quitting waits for it a tenth of a second at most.
SCAN_DEBOUNCE_MS = 500
SCAN_STEP_MS = 100


class FolderScan:
    """The log files of the folders and files the dashboard was opened on (:func:`log_files`), kept up to date
    at a cost that does not grow with the number of files while nothing happens.

    A full listing walks the tree and stats every file a few times: ~65 ms for the generated 2,443-file
    projects folder, which, repeated every 2 s, was the dashboard's whole idle cost (about 47 CPU ticks per
    10 s against 5 for a single file).  Instead:

    * with file events (the default), ``watchfiles`` watches the folders recursively: a change to a listed log
      re-sorts the list by that file's activity alone (:func:`activity_of`), any other change to a log-named
      path (a new session, a removed one) asks for a full listing, done at once (at most once per
      ``interval``);
    * every ``interval`` seconds (:data:`SCAN_INTERVAL`), the :data:`HOT_FILES` newest files and the files
      named on the command line are stat'ed, a change re-sorting them, and so are the folders given and the
      folders of those files, a change (a file added or removed there) asking for a full listing;
    * a full listing every ``full_interval`` seconds all the same (:data:`FULL_SCAN_INTERVAL` with events,
      :data:`POLL_FULL_SCAN_INTERVAL` when polling), for what the above missed.

    ``poll=True`` (``--poll``), a folder on a filesystem that sends no events (:data:`NO_EVENT_FILESYSTEMS`),
    or watching that cannot start or fails: the checks and full listings only.  The last three are a fall back
    a person should hear of, as the log's feed says its own (:class:`~ctxwatch.ui.messages.WatchChanged`):
    :meth:`run` says why once, through its ``notice``.

    Args:
        paths: files and folders, as given to the dashboard.
        fmt: the forced format, or ``None`` (detect); see :func:`log_files`.
        poll: never use file events.
        interval, full_interval: seconds, see above (``full_interval`` ``None``: by mode).
        watcher: replacement for ``watchfiles.watch`` (tests); same keyword arguments.
        clock: the monotonic clock, in seconds (tests).

    Attributes:
        files, notes: the listing now (see :func:`log_files`).
        mode: ``events`` or ``polling`` (``None`` before :meth:`run`).
        note: why the tree is polled although file events were wanted (one sentence), else ``None``.
        full_scans: full listings done so far (tests, and a person's curiosity).
    """

    def __init__(self, paths: Sequence[str], fmt: str | None = None, *, poll: bool = False,
                 interval: float = SCAN_INTERVAL, full_interval: float | None = None,
                 watcher: Watcher | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.paths = list(paths)
        self.fmt = fmt
        self.poll = poll
        self.interval = interval
        self._full_interval = full_interval
        self.watcher = watcher
        self.clock = clock
        self.files: list[str] = []
        self.notes: list[Issue] = []
        self.mode: str | None = None
        self.note: str | None = None
        self.full_scans = 0
        self.memo: dict[str, FileMemo] = {}
        self.folders = [os.path.abspath(p) for p in self.paths if os.path.isdir(p)]
        self.named = [p for p in self.paths if not os.path.isdir(p)]
        self._by_abs: dict[str, str] = {}  # absolute path -> the listed path
        self._dirs: dict[str, float | None] = {}  # hot folder -> its modification time at the last look
        self._touched: set[str] = set()  # listed files that changed: re-sort them
        self._full_due = True
        self._last_full = -math.inf
        self._next_check = -math.inf

    @property
    def full_interval(self) -> float:
        """Seconds between two full listings in the mode now."""
        if self._full_interval is not None:
            return self._full_interval
        return FULL_SCAN_INTERVAL if self.mode == "events" else POLL_FULL_SCAN_INTERVAL

    # ------------------------------------------------------------------ the three ways of noticing a change
    def scan(self) -> None:
        """A full listing (:func:`log_files`), then the hot folders' modification times as they are now."""
        self.files, self.notes = log_files(self.paths, self.fmt, self.memo)
        self.full_scans += 1
        self._by_abs = {os.path.abspath(f): f for f in self.files}
        self._touched.clear()
        self._full_due = False
        self._last_full = self.clock()
        self._dirs = {d: _mtime(d) for d in self._hot_dirs()}

    def _hot_files(self) -> list[str]:
        listed = self.files[:HOT_FILES]
        return listed + [f for f in self.named if f not in listed]

    def _hot_dirs(self) -> list[str]:
        return list(dict.fromkeys(self.folders + [os.path.dirname(os.path.abspath(f)) for f in self.files[:HOT_FILES]]))

    def check(self) -> None:
        """Stat the hot files and folders: a changed file is re-sorted; a changed folder, or a file that
        vanished or appeared, asks for a full listing."""
        listed = set(self.files)
        for f in self._hot_files():
            try:
                st = os.stat(f)
            except OSError:
                if f in listed:
                    self._full_due = True  # (gone)
                continue
            if f not in listed:
                self._full_due = True  # (a named file that appeared, or became a log)
                continue
            with _activity_lock:
                known = _activity.get(f)
            if known is None or known[:2] != (st.st_mtime, st.st_size):
                self._touched.add(f)
        for d, seen in self._dirs.items():
            if _mtime(d) != seen:
                self._full_due = True

    def events(self, changes: set[tuple[Any, str]]) -> None:
        """File events: a listed log that changed is re-sorted; another log-named path that changed (added,
        removed, a log being created), or a listed one removed, asks for a full listing.  Folders' own events are
        left to the log-named paths inside them and to the checks."""
        from watchfiles import Change

        from ctxwatch.engine import COMPRESSED_SUFFIXES, LOG_SUFFIXES

        for change, path in changes:
            listed = self._by_abs.get(os.path.abspath(path))
            if listed is not None and change != Change.deleted:
                self._touched.add(listed)
            elif listed is not None or path.endswith(LOG_SUFFIXES + COMPRESSED_SUFFIXES):
                self._full_due = True

    def step(self, changes: set[tuple[Any, str]] | None = None) -> bool:
        """One turn of :meth:`run`: take ``changes`` (file events, if any), check the hot files and folders when
        ``interval`` has passed, then list the tree again when asked to (at most once per ``interval``) or
        when ``full_interval`` has passed, else re-sort the files that changed.  Returns whether the listing
        changed."""
        before = (self.files, self.notes)
        if changes:
            self.events(changes)
        now = self.clock()
        if now >= self._next_check:
            self._next_check = now + self.interval
            self.check()
        since = now - self._last_full
        if (self._full_due and since >= self.interval) or since >= self.full_interval:
            self.scan()
        elif self._touched:
            self._resort()
        return (self.files, self.notes) != before

    def _resort(self) -> None:
        """Order the files again, newest first, with the activity of those that changed read again (the others'
        is remembered from the last listing: nothing else is stat'ed)."""
        touched, self._touched = self._touched, set()
        keys: dict[str, tuple[bool, float]] = {}
        for f in self.files:
            try:
                if f in touched:
                    act, content = activity_of(f)
                else:
                    with _activity_lock:
                        known = _activity.get(f)
                    if known is None:
                        act, content = activity_of(f)
                    else:
                        act, content = known[2], known[3]
            except OSError:
                self._full_due = True  # (gone: the next listing drops it)
                return
            keys[f] = (content, act)
        self.files = sorted(self.files, key=lambda f: keys[f], reverse=True)

    # ------------------------------------------------------------------ the loop
    def _polling(self, why: str) -> str:
        """The sentence saying that the tree is polled, and ``why``."""
        return (f"{why}; new sessions are looked for every {self.interval:g} s (the whole tree every "
                f"{POLL_FULL_SCAN_INTERVAL if self._full_interval is None else self._full_interval:g} s)")

    def _watch(self, stop: threading.Event) -> Iterator[set[tuple[Any, str]]] | None:
        """watchfiles on the folders, or ``None`` (polling) when asked to, when a folder is on a filesystem that
        sends no events, or when watching cannot start (these two set :attr:`note`)."""
        if self.poll or not self.folders:
            return None  # (asked for; or only files named, which are stat'ed: no fall back to speak of)
        for d in self.folders:
            fstype = filesystem_type(d)
            if no_events(fstype):
                self.note = self._polling(f"{d} is on a {fstype} filesystem, which sends no change events")
                return None
        try:
            watch_fn = self.watcher
            if watch_fn is None:
                import watchfiles

                watch_fn = watchfiles.watch
            return iter(watch_fn(
                *self.folders, watch_filter=None, debounce=SCAN_DEBOUNCE_MS, step=SCAN_STEP_MS, stop_event=stop,
                rust_timeout=max(1, int(self.interval * 1000)), yield_on_timeout=True, recursive=True,
                ignore_permission_denied=True, raise_interrupt=False))
        except Exception as exc:  # no watchfiles, the inotify watch limit, a folder gone: polling does the work
            self.note = self._polling(f"watching the folder could not start ({type(exc).__name__}: {exc})")
            return None

    def run(self, stop: threading.Event, emit: Callable[[list[str], list[Issue]], object],
            notice: Callable[[str], object] | None = None) -> None:
        """List the files, ``emit(files, notes)``, then follow the tree until ``stop`` is set, emitting the
        listing again whenever it changes.  ``notice(note)`` is called once if the tree is polled although file
        events were wanted (:attr:`note`): at the start, or when watching fails (it is never tried again)."""
        it = self._watch(stop)
        self.mode = "events" if it is not None else "polling"
        self.step()
        emit(self.files, self.notes)
        if self.note is not None and notice is not None:
            notice(self.note)
        try:
            while not stop.is_set():
                changes: set[tuple[Any, str]] = set()
                if it is None:
                    if stop.wait(max(0.0, min(self._next_check, self._last_full + self.full_interval)
                                     - self.clock())):
                        break
                else:
                    try:
                        changes = next(it)
                    except StopIteration:
                        break
                    except Exception as exc:  # watching failed (the inotify queue overflowed...): poll from now on
                        it, self.mode = None, "polling"
                        self.note = self._polling(f"watching the folder failed ({type(exc).__name__}: {exc})")
                        if notice is not None:
                            notice(self.note)
                        continue
                if stop.is_set():
                    break
                if self.step(changes):
                    emit(self.files, self.notes)
        finally:
            close = getattr(it, "close", None)
            if close is not None:
                close()


def _mtime(path: str) -> float | None:
    """``path``'s modification time, ``None`` when it cannot be stat'ed."""
    try:
        return os.stat(path).st_mtime
    except OSError:
        return None


class BatchFeed(LogFeed):
    """A batch input/output pair (or several batch files) read as one run, joined by ``custom_id``
    (:func:`ctxwatch.engine.folder.load_many`, :func:`ctxwatch.formats.batch.read_batch_pair`), posting the same
    messages
    as :class:`LogFeed`.

    Batch files are written whole (a download) or grow as results come, and a result joins a request of
    another file, so they are not tailed: the files are read again, and the calls and issues replaced
    (:class:`~ctxwatch.ui.messages.ResetSeen` ``grew`` when every file only grew, else ``rewritten``), when
    the size or modification time of one of them changes (checked every ``interval`` seconds).

    Args:
        paths: the batch files (requests and results, any order).
        emit, stop, fmt, settings, last, feed_id, interval: as for :class:`LogFeed`.
    """

    def __init__(self, paths: Sequence[str], emit: Callable[[Message], object], stop: threading.Event, *,
                 fmt: str | None = None, settings: Settings | None = None, last: int | None = None,
                 feed_id: int = 0, interval: float = POLL_INTERVAL) -> None:
        super().__init__(" + ".join(paths), emit, stop, fmt=fmt, settings=settings, last=last, feed_id=feed_id,
                         interval=interval)
        self.paths = list(paths)

    def run(self) -> None:
        """Read and join the files, then read them again whenever one changes, until ``stop`` is set (checked by
        token counting too, as in :meth:`LogFeed.run`)."""
        try:
            with stop_counting_on(self.stop):
                self._run()
        except CountingStopped:
            return
        finally:
            self.done.set()

    def _run(self) -> None:
        """The body of :meth:`run`."""
        seen = self._signature()
        run = self._load()
        if run is None:
            return
        size = sum(s[0] for s in seen if s is not None)
        self.emit(FeedOpened(self.feed_id, self.path, run.spec.name, size, run.spec))
        self._publish(run, self.last)
        self.emit(BackfillDone(self.feed_id))
        self._analyse(force=True)
        while not self.stop.wait(self.interval):
            now = self._signature()
            if now == seen:
                continue
            # Every file as big as before or bigger: results still being written (a download, a job
            # appending them), read again quietly ("grew"); anything else is a rewrite, and said.
            grew = all(a is not None and b is not None and b[0] >= a[0] for a, b in zip(seen, now, strict=True))
            seen = now
            run = self._load()
            if run is None:
                continue
            self.emit(ResetSeen(self.feed_id, "grew" if grew else "rewritten", len(run.calls), clear=True))
            self._text_cache = {}
            self._publish(run, None)
            self._analyse(force=True)

    def _signature(self) -> tuple[tuple[int, int] | None, ...]:
        """(size, mtime_ns) of each file, ``None`` for a file that is gone."""
        out: list[tuple[int, int] | None] = []
        for p in self.paths:
            try:
                st = os.stat(p)
            except OSError:
                out.append(None)
                continue
            out.append((st.st_size, st.st_mtime_ns))
        return tuple(out)

    def _load(self) -> Run | None:
        """The joined run, or ``None`` after a :class:`~ctxwatch.ui.messages.FeedFailed` saying why."""
        from ctxwatch.engine import load_many

        try:
            return load_many(self.paths, self.fmt, self.settings)
        except (LogError, OSError) as exc:
            self.emit(FeedFailed(self.feed_id, str(exc)))
            return None

    def _publish(self, run: Run, last: int | None) -> None:
        """Send ``run``'s calls (the last ``last`` of them) and issues."""
        self.run_ = run
        calls = run.calls[-last:] if last else run.calls
        self._added = dict.fromkeys(c.index for c in calls)
        self._updated = {}
        self._issues = list(run.issues)
        self._dirty = True
        self._flush(force=True)
