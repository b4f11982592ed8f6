"""What runs in the dashboard's worker threads: a feed reading one log (or joined batch files), and the scan
that follows a folder's sessions.  Each only posts messages to the app; neither touches a widget or the
state.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from textual.message import Message
from textual.worker import get_current_worker

from ctxwatch.model import Issue
from ctxwatch.ui.feed import FolderScan, LogFeed, is_batch_set
from ctxwatch.ui.messages import FeedFailed, ScanNotice, SessionsChanged


def run_feed(feed: LogFeed, post: Callable[[Message], Any]) -> None:
    """Run ``feed`` in the current Textual thread worker until its stop event is set or the worker is
    cancelled (the app closing); a bug in it is posted as :class:`FeedFailed`, to show on screen."""
    worker = get_current_worker()
    stop = feed.stop
    threading.Thread(target=_stop_on_cancel, args=(worker, stop), daemon=True).start()
    try:
        feed.run()
    except Exception as exc:  # a bug must show up on screen, not kill the app silently
        post(FeedFailed(feed.feed_id, f"reading stopped: {type(exc).__name__}: {exc}"))
    finally:
        stop.set()


def run_scan(scan: FolderScan, fmt: str | None, stop: threading.Event, post: Callable[[Message], Any]) -> None:
    """Follow the log files of ``scan``'s paths until ``stop`` is set, posting :class:`SessionsChanged` when
    they change (whether they are batch files to join is detected here, off the UI thread) and
    :class:`ScanNotice` when the scan falls back to polling."""

    def emit(files: list[str], left_out: list[Issue]) -> None:
        post(SessionsChanged(files, is_batch_set(files, fmt), left_out))

    scan.run(stop, emit, lambda note: post(ScanNotice(note)))


def _stop_on_cancel(worker: Any, stop: threading.Event) -> None:
    """Set ``stop`` when the Textual worker is cancelled (the app is closing)."""
    while not stop.wait(0.1):
        if worker.is_cancelled:
            stop.set()
            return
