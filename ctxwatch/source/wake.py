"""When to look at a followed file again: file events on its folder, periodic sweeps, or polling.

``watchfiles`` watches the file's *folder* (a watch on the file itself is lost when the file is replaced).
Events can be missed, so a stat sweep runs every second all the same.  Some filesystems send no events at all
(network and VM shares), watching may fail to start or fail later, and events may stay silent while the file
grows: in each case the waker falls back to polling and says why once.  The only module that imports
``watchfiles``.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

#: Seconds between two stat sweeps while file events are watched: a missed event delays a line by one sweep at
#: most.
DEFAULT_SWEEP_INTERVAL = 1.0

#: Seconds between two looks in polling mode (``--poll``, or after a fall back): 250 ms keeps a new call's latency
#: well under a second for the price of one ``stat`` per look.
DEFAULT_POLL_INTERVAL = 0.25

#: Milliseconds watchfiles waits to group changes before it reports them.
DEFAULT_DEBOUNCE_MS = 50

#: Sweeps in a row that find the file grown while no event announced it before events are no longer trusted.
SILENT_SWEEPS = 2

#: Filesystem types whose changes made elsewhere send no inotify events (WSL ``9p``/``drvfs``, NFS, SMB/CIFS,
#: FUSE mounts such as sshfs, VirtualBox ``vboxsf``): polled from the start.
NO_EVENT_FILESYSTEMS = frozenset({"9p", "v9fs", "drvfs", "nfs", "nfs4", "cifs", "smb3", "smbfs", "vboxsf",
                                  "fuse", "fuseblk", "afs", "ceph", "glusterfs"})

#: ``watchfiles.watch``, or a replacement with the same keyword arguments (tests).
Watcher = Callable[..., Iterator[set[tuple[Any, str]]]]


@dataclass(frozen=True, slots=True)
class Wake:
    """Why the follower woke up.

    Attributes:
        event: a file event named the followed file: read it now.
        sweep: a sweep (or a poll) is due: read it even without an event, and tell :meth:`Waker.swept` whether
            it grew.
        notice: the waker changed how it watches (polling from now on), in one sentence for a person; said once.
    """

    event: bool = False
    sweep: bool = False
    notice: str | None = None


def filesystem_type(path: str) -> str | None:
    """The type of the filesystem holding ``path`` from ``/proc/self/mounts`` (``ext4``, ``9p``, ``nfs4``,
    ``fuse.sshfs``...), or ``None`` when unknown (not Linux, or unreadable).  Never raises."""
    try:
        with open("/proc/self/mounts", encoding="utf-8", errors="replace") as fh:
            mounts = [ln.split()[:3] for ln in fh]
    except OSError:
        return None
    real = os.path.realpath(path)
    best, fstype = "", None
    for parts in mounts:
        if len(parts) < 3:
            continue
        mnt = parts[1].replace("\\040", " ")
        if (real == mnt or real.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(best):
            best, fstype = mnt, parts[2]
    return fstype


def no_events(fstype: str | None) -> bool:
    """True for a filesystem type (:func:`filesystem_type`; ``fuse.sshfs`` counts as ``fuse``) known to send no
    change events (:data:`NO_EVENT_FILESYSTEMS`); ``None`` (unknown) is not."""
    if fstype is None:
        return False
    return fstype in NO_EVENT_FILESYSTEMS or fstype.split(".")[0] in NO_EVENT_FILESYSTEMS


def default_watcher() -> Watcher:
    """``watchfiles.watch``, imported when first needed (reading a whole log never needs it)."""
    import watchfiles

    return watchfiles.watch


def is_deletion(change: Any) -> bool:
    """True for a watchfiles change that says a path was deleted."""
    import watchfiles

    return bool(change == watchfiles.Change.deleted)


class Waker:
    """Wakes the follower of one file: iterate it, read the file after each :class:`Wake`, and report each
    sweep's outcome with :meth:`swept`.

    In events mode a :class:`Wake` comes for each batch of events naming the file, every ``tick`` seconds at
    least (so that the follower's own timers run), with ``sweep`` set every ``sweep_interval`` seconds and on the
    first wake (watchfiles registers its watch inside the first wait: bytes written before sent no event).  In
    polling mode a sweep comes every ``poll_interval`` seconds.  Iteration ends when ``stop`` is set.

    Args:
        path: the followed file (it may not exist yet; its folder is watched).
        stop: set it from any thread to end the iteration (checked at least every ``tick`` seconds).
        poll: poll from the start (``--poll``), never with events.
        poll_interval, sweep_interval, tick: seconds, see above.
        debounce_ms: watchfiles' grouping of changes in milliseconds (clamped to 1..100).
        watcher: replacement for ``watchfiles.watch`` (tests).

    Attributes:
        mode: ``events`` or ``polling``.
        why: why it polls although events were wanted (one sentence), else ``None``.
    """

    def __init__(self, path: str, stop: threading.Event, *, poll: bool = False,
                 poll_interval: float = DEFAULT_POLL_INTERVAL, sweep_interval: float = DEFAULT_SWEEP_INTERVAL,
                 tick: float = 0.25, debounce_ms: int = DEFAULT_DEBOUNCE_MS, watcher: Watcher | None = None) -> None:
        self.path = os.path.abspath(path)
        self.stop = stop
        self.poll_interval = poll_interval
        self.sweep_interval = sweep_interval
        self.tick = tick
        self.debounce_ms = max(1, min(100, int(debounce_ms)))
        self.watcher = watcher
        self.why: str | None = None
        self.mode = "polling" if poll else "events"
        if poll:
            self.why = f"polling every {poll_interval:g} s (--poll)"
        else:
            folder = os.path.dirname(self.path)
            fstype = filesystem_type(folder)
            if no_events(fstype):
                self.mode = "polling"
                self.why = (f"{folder} is on a {fstype} filesystem, which sends no change events; "
                            f"polling every {poll_interval:g} s")
        self._announced = 0  # events about the file since the last sweep
        self._silent = 0  # sweeps in a row that found growth no event announced
        self._notice: str | None = None

    def swept(self, grew: bool) -> None:
        """The follower read the file after a sweep; ``grew``: it found new bytes.  Two sweeps in a row that find
        growth no event announced switch to polling."""
        if self.mode != "events":
            return
        self._silent = self._silent + 1 if grew and not self._announced else 0
        self._announced = 0
        if self._silent >= SILENT_SWEEPS:
            self._fall_back("no file events received although the log grew")

    def _fall_back(self, why: str) -> None:
        self.mode = "polling"
        self.why = f"{why}; switched to polling every {self.poll_interval:g} s"
        self._notice = self.why

    def __iter__(self) -> Iterator[Wake]:
        while not self.stop.is_set():
            if self.mode == "events":
                yield from self._events()
                continue  # (stopped, or fallen back to polling)
            notice = self._take_notice()
            if notice is None and self.stop.wait(self.poll_interval):
                return
            yield Wake(sweep=True, notice=notice)

    def _take_notice(self) -> str | None:
        notice, self._notice = self._notice, None
        return notice

    def _events(self) -> Iterator[Wake]:
        """Wakes from watchfiles until ``stop`` or a fall back to polling."""
        names = {self.path, os.path.realpath(self.path)}
        try:
            watch_fn = self.watcher or default_watcher()
            it = iter(watch_fn(
                os.path.dirname(self.path), watch_filter=None, debounce=self.debounce_ms,
                step=min(10, self.debounce_ms), stop_event=self.stop, rust_timeout=max(1, int(self.tick * 1000)),
                yield_on_timeout=True, recursive=False, ignore_permission_denied=True, raise_interrupt=False))
        except Exception as exc:  # no watchfiles, the inotify watch limit, a missing folder...
            self._fall_back(f"file watching could not start ({type(exc).__name__}: {exc})")
            return
        last_sweep = -float("inf")  # (the first wake sweeps: see the class docstring)
        try:
            while not self.stop.is_set() and self.mode == "events":
                try:
                    changes = next(it)
                except StopIteration:
                    return
                except Exception as exc:
                    self._fall_back(f"file watching failed ({type(exc).__name__}: {exc})")
                    return
                if self.stop.is_set():
                    return
                event = any(p in names or os.path.realpath(p) in names for _change, p in changes)
                self._announced += event
                now = time.monotonic()
                sweep = now - last_sweep >= self.sweep_interval
                if sweep:
                    last_sweep = now
                yield Wake(event=event, sweep=sweep)
        finally:
            close = getattr(it, "close", None)
            if close is not None:
                close()
