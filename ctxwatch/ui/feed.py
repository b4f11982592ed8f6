"""The dashboard's reading worker: the engine's :class:`~ctxwatch.engine.Follower`, its events posted to the app.

:class:`LogFeed` runs in a worker thread.  It follows one log with the same loop as ``report --follow`` and turns
each :mod:`~ctxwatch.engine.events` value into a :mod:`~ctxwatch.ui.messages` message stamped with its feed id
(the app ignores a replaced feed's leftovers), at most :data:`FLUSH_INTERVAL` apart; it recomputes flags and
forecast at most once per :data:`ANALYSIS_INTERVAL`.  :class:`BatchFeed` does the same for batch request and
result files joined as one run.  The feed never touches a widget: ``emit`` is ``App.post_message``, which is
thread-safe, and it keeps no message text (the detail view re-reads bodies).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from textual.message import Message

from ctxwatch.config import Settings
from ctxwatch.engine import Follower, Run, events
from ctxwatch.engine.activity import activity_note, activity_of
from ctxwatch.engine.discovery import BATCH_BESIDE_SESSIONS_NOTE, is_batch_set, list_paths, log_files
from ctxwatch.engine.folder_scan import HOT_FILES, FolderScan
from ctxwatch.formats import get_format
from ctxwatch.source import DEFAULT_POLL_INTERVAL, DEFAULT_SWEEP_INTERVAL, FileTailer, Watcher, skip_to_end
from ctxwatch.source.wake import DEFAULT_DEBOUNCE_MS
from ctxwatch.tokens import CountingStopped
from ctxwatch.ui.costs import call_costs
from ctxwatch.ui.messages import (
    AnalysisChanged,
    BackfillDone,
    BackfillProgress,
    CallsChanged,
    FeedFailed,
    FeedNotice,
    FeedOpened,
    FormatSeen,
    IssuesChanged,
    ResetSeen,
    WatchChanged,
)

__all__ = ["BATCH_BESIDE_SESSIONS_NOTE", "HOT_FILES", "BatchFeed", "FolderScan", "LogFeed", "activity_note",
           "activity_of", "is_batch_set", "list_paths", "log_files", "skip_to_end"]

#: Seconds between two polls in polling mode (``--poll`` or after a fall back).
POLL_INTERVAL = DEFAULT_POLL_INTERVAL
#: Seconds between two stat sweeps while following with file events: a missed event delays a call by one sweep.
SWEEP_INTERVAL = DEFAULT_SWEEP_INTERVAL
#: Least seconds between two update messages to the app: at most 4 updates a second, however fast the log grows.
FLUSH_INTERVAL = 0.25
#: Least seconds between two recomputations of flags and forecast while following (the analysis takes about
#: 0.2 s for 10,000 calls: once a second keeps it a small share of one core).
ANALYSIS_INTERVAL = 1.0


class LogFeed:
    """Read one log and follow it, posting messages through ``emit`` (called from the feed's thread).

    Args:
        path: the log file.  emit: ``App.post_message``.  stop: set it to end :meth:`run`.
        fmt, settings, last, cancel_backfill, poll, debounce_ms, slice_bytes, watcher, idle_grace: as for
            :class:`~ctxwatch.engine.Follower`.
        feed_id: stamped on every message.
        interval: seconds between polls; flush_interval: least seconds between update messages.
        sweep_interval: seconds between stat sweeps with file events (default :data:`SWEEP_INTERVAL`, looked up
            when the feed is created).

    Attributes:
        follower: the engine's follower; run_, tailer, watch_mode and done are its own.
    """

    def __init__(self, path: str, emit: Callable[[Message], object], stop: threading.Event, *,
                 fmt: str | None = None, settings: Settings | None = None, last: int | None = None,
                 feed_id: int = 0, cancel_backfill: threading.Event | None = None, poll: bool = False,
                 interval: float = POLL_INTERVAL, flush_interval: float = FLUSH_INTERVAL,
                 sweep_interval: float | None = None, debounce_ms: int = DEFAULT_DEBOUNCE_MS,
                 slice_bytes: int | None = None, watcher: Watcher | None = None,
                 idle_grace: float | None = None) -> None:
        self.path = path
        self.emit = emit
        self.stop = stop
        self.feed_id = feed_id
        self.sweep_interval = SWEEP_INTERVAL if sweep_interval is None else sweep_interval
        self._last_analysis = -float("inf")
        self._text_cache: dict[str, Any] = {}
        self.follower = Follower(path, self._post, stop, fmt=fmt, settings=settings, last=last,
                                 cancel_backfill=cancel_backfill, poll=poll, poll_interval=interval,
                                 flush_interval=flush_interval, sweep_interval=self.sweep_interval,
                                 debounce_ms=debounce_ms, slice_bytes=slice_bytes,
                                 on_turn=self._analyse, watcher=watcher, idle_grace=idle_grace)

    @property
    def run_(self) -> Run | None:
        """The run read so far, once the format is known."""
        return self.follower.run_

    @property
    def tailer(self) -> FileTailer | None:
        """The tailer reading the log (JSONL logs)."""
        return self.follower.tailer

    @property
    def watch_mode(self) -> str | None:
        """``None`` before the live phase, then ``events`` or ``polling``."""
        return self.follower.watch_mode

    @property
    def done(self) -> threading.Event:
        """Set when :meth:`run` has returned."""
        return self.follower.done

    def run(self) -> None:
        """Open, backfill and follow until ``stop`` is set.  Never raises for file problems."""
        self.follower.run()

    def _post(self, ev: events.FollowEvent) -> None:
        """Post the message of one follower event."""
        fid = self.feed_id
        if isinstance(ev, events.CallsChanged):
            self.emit(CallsChanged(fid, ev.added, ev.updated, ev.calibrations, call_costs([*ev.added, *ev.updated])))
        elif isinstance(ev, events.IssuesChanged):
            self.emit(IssuesChanged(fid, ev.issues, ev.resolved))
        elif isinstance(ev, events.Progress):
            self.emit(BackfillProgress(fid, ev.done, ev.total))
        elif isinstance(ev, events.Opened):
            self.emit(FeedOpened(fid, ev.path, ev.spec.name, ev.size, ev.spec))
        elif isinstance(ev, events.Waiting):
            self.emit(FeedNotice(fid, ev.message))
        elif isinstance(ev, events.Failed):
            self.emit(FeedFailed(fid, ev.message))
        elif isinstance(ev, events.BackfillDone):
            self.emit(BackfillDone(fid, ev.cancelled, ev.resumed_line, ev.skipped_from, ev.calls_before))
        elif isinstance(ev, events.ResetSeen):
            if ev.clear:
                self._text_cache = {}  # (a log read whole again: its texts may have changed)
            self.emit(ResetSeen(fid, ev.reason, ev.at_call, clear=ev.clear, format_name=ev.format_name,
                                spec=get_format(ev.format_name) if ev.format_name else None))
        elif isinstance(ev, events.FormatSeen):
            self.emit(FormatSeen(fid, ev.format_name, get_format(ev.format_name)))
        elif isinstance(ev, events.WatchChanged):
            self.emit(WatchChanged(fid, ev.mode, ev.interval, ev.message))

    def _analyse(self, follower: Follower, force: bool) -> None:
        """Recompute flags and forecast when calls changed, at most once per :data:`ANALYSIS_INTERVAL`."""
        run = follower.run_
        if run is None or not follower.dirty:
            return
        now = time.monotonic()
        if not force and now - self._last_analysis < ANALYSIS_INTERVAL:
            return
        from ctxwatch.analysis import analyze_run

        follower.dirty = False
        self._last_analysis = now
        try:
            result = analyze_run(run, text_cache=self._text_cache)
        except CountingStopped:
            raise
        except Exception as exc:  # the dashboard must keep working without flags
            self.emit(AnalysisChanged(self.feed_id, {}, f"analysis failed: {type(exc).__name__}: {exc}"))
            return
        self.emit(AnalysisChanged(self.feed_id, result))


class BatchFeed(LogFeed):
    """Batch request and result files (any order) read as one run joined by ``custom_id``, and read again when one
    of them changes (checked every ``interval`` seconds); the same messages as :class:`LogFeed`.

    Args:
        paths: the batch files.  emit, stop, fmt, settings, last, feed_id, interval: as for :class:`LogFeed`.
    """

    def __init__(self, paths: Sequence[str], emit: Callable[[Message], object], stop: threading.Event, *,
                 fmt: str | None = None, settings: Settings | None = None, last: int | None = None,
                 feed_id: int = 0, interval: float = POLL_INTERVAL) -> None:
        super().__init__(" + ".join(paths), emit, stop, fmt=fmt, settings=settings, last=last, feed_id=feed_id,
                         interval=interval)
        self.paths = list(paths)

    def run(self) -> None:
        """Read and join the files, then read them again whenever one changes, until ``stop`` is set."""
        self.follower.run_batch(self.paths)
