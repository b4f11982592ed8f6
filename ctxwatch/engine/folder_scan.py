"""The log files of the folders the dashboard was opened on, kept up to date at a cost that does not grow with the
number of files while nothing happens (file events on the folders, stats of the newest files, and a full listing
now and then)."""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ctxwatch.engine.activity import activity_of, remembered
from ctxwatch.engine.discovery import COMPRESSED_SUFFIXES, LOG_SUFFIXES, FileMemo, log_files
from ctxwatch.model import Issue
from ctxwatch.source import Watcher, filesystem_type, no_events
from ctxwatch.source.wake import default_watcher, is_deletion

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

    A full listing walks the tree and stats every file a few times (~65 ms for a 2,443-file projects folder):
    repeated every 2 s it would be the dashboard's whole idle cost.  Instead:

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
    a person should hear of, as the log's follower says its own (:class:`~ctxwatch.engine.events.WatchChanged`):
    :meth:`run` says why once, through its ``notice``.  Only the source stage imports ``watchfiles``: the watcher
    comes from :func:`ctxwatch.source.wake.default_watcher`.

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
            known = remembered(f)
            if known is None or known[:2] != (st.st_mtime, st.st_size):
                self._touched.add(f)
        for d, seen in self._dirs.items():
            if _mtime(d) != seen:
                self._full_due = True

    def events(self, changes: set[tuple[Any, str]]) -> None:
        """File events: a listed log that changed is re-sorted; another log-named path that changed (added,
        removed, a log being created), or a listed one removed, asks for a full listing.  Folders' own events are
        left to the log-named paths inside them and to the checks."""
        for change, path in changes:
            listed = self._by_abs.get(os.path.abspath(path))
            if listed is not None and not is_deletion(change):
                self._touched.add(listed)
            elif listed is not None or path.lower().endswith(LOG_SUFFIXES + COMPRESSED_SUFFIXES):
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
                    known = remembered(f)
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
            watch_fn = self.watcher or default_watcher()
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


