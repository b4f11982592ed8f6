"""``ctxwatch report PATH --follow --jsonl``: what the follower gives, one JSON object per line, flushed at once.

* a call: the per-call object of ``report --json``, printed once the slice of the file that holds it is read (an
  existing log prints each call once, in its final state).  A later line that changes an earlier call (a further
  line of the same response) prints that call again with the same ``index``: the last object per index wins; an
  object identical to the one last printed for its index is not printed again;
* ``{"event": "reset", "reason", "path"}`` when the file was truncated, rotated, replaced, deleted or recreated;
* ``{"event": "issue", "file", "line", "kind", "message"}`` for each bad line or note, so that nothing is skipped
  silently, and ``{"event": "issue_resolved", ...}`` when one printed earlier no longer holds;
* ``{"event": "notice", "kind", "message"}`` about the reading itself (waiting for the file, the fall back to
  polling).

Call objects have no ``event`` key; every other object has one.  The log is only ever opened for reading.
"""

from __future__ import annotations

import os
import threading
from typing import Any, TextIO

from ctxwatch.config import Settings
from ctxwatch.engine import Follower, LogError, check_log_file, resolve_spec
from ctxwatch.engine.events import CallsChanged, Failed, FollowEvent, IssuesChanged, Opened, ResetSeen, Waiting
from ctxwatch.engine.events import WatchChanged as WatchEvent
from ctxwatch.model import Call
from ctxwatch.output.report import call_json, issue_json
from ctxwatch.output.safetext import json_bytes
from ctxwatch.source import DEFAULT_IDLE_GRACE, DEFAULT_POLL_INTERVAL, DEFAULT_SWEEP_INTERVAL, Watcher

#: Bytes read per slice of an existing log: each call is printed once per slice, so slices are large.
SLICE_BYTES = 8 * 1024 * 1024


class _Out:
    """Writes one JSON object per line and flushes; remembers a closed pipe."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.closed = False

    def __call__(self, obj: dict[str, Any]) -> None:
        self.write(json_bytes(obj))

    def write(self, data: bytes) -> None:
        """Write one serialized object and a newline, and flush."""
        if self.closed:
            return
        try:
            self.out.write(data.decode() + "\n")
            self.out.flush()
        except (BrokenPipeError, ValueError):  # the reader went away (| head) or the stream is closed
            self.closed = True


class _Printer:
    """Turns the follower's events into lines (see the module docstring)."""

    def __init__(self, path: str, out: _Out, stop: threading.Event, poll: bool) -> None:
        self.path = path
        self.out = out
        self.stop = stop
        self.poll = poll
        self.printed: dict[int, int] = {}  # index -> hash of the object last printed for it
        self.calls: dict[int, Call] = {}  # index -> the call last printed
        self.calibrated: set[str | None] = set()  # models whose calibration the printed calls carry

    def __call__(self, ev: FollowEvent) -> None:
        if isinstance(ev, CallsChanged):
            self._calls(ev)
        elif isinstance(ev, IssuesChanged):
            for issue in ev.resolved:
                self.out({"event": "issue_resolved", **issue_json(issue)})
            for issue in ev.issues:
                if issue.kind != "reset":
                    self.out({"event": "issue", **issue_json(issue)})
        elif isinstance(ev, ResetSeen):
            self.out({"event": "reset", "reason": ev.reason, "path": self.path})
            self.calibrated.clear()  # (the new file's calls get their models' factors afresh)
        elif isinstance(ev, Waiting):
            self.out({"event": "notice", "kind": ev.kind, "message": ev.message})
        elif isinstance(ev, WatchEvent):
            if ev.mode == "polling" and ev.message and not self.poll:
                self.out({"event": "notice", "kind": "polling_fallback", "message": ev.message})
        elif isinstance(ev, Opened) and ev.spec.document:
            raise LogError(f"{self.path}: {ev.spec.name} is a whole-file JSON document; --follow needs a JSONL log")
        elif isinstance(ev, Failed):
            raise LogError(ev.message)
        if self.out.closed:
            self.stop.set()

    def _calls(self, ev: CallsChanged) -> None:
        changed = {c.index: c for c in (*ev.added, *ev.updated)}
        first = [m for m, v in ev.calibrations.per_model.items() if v is not None and m not in self.calibrated]
        if first:
            # A model's calibration exists from its 3rd call on: its calls printed before then had none, so they
            # are printed again with it (once per model; later the factor moves a little, and each call keeps the
            # one it was printed with).
            self.calibrated.update(first)
            for idx, c in self.calls.items():
                if c.model in first and not c.exact:
                    changed.setdefault(idx, c)
        for idx in sorted(changed):
            call = changed[idx]
            data = json_bytes(call_json(call, ev.calibrations.factor(call)))
            h = hash(data)
            if self.printed.get(idx) != h:
                self.printed[idx] = h
                self.calls[idx] = call
                self.out.write(data)


def follow_jsonl(path: str, fmt_name: str | None, settings: Settings | None, out: TextIO, stop: threading.Event,
                 poll: bool = False, *, idle_grace: float = DEFAULT_IDLE_GRACE,
                 sweep_interval: float = DEFAULT_SWEEP_INTERVAL, poll_interval: float = DEFAULT_POLL_INTERVAL,
                 watcher: Watcher | None = None) -> None:
    """Follow ``path`` and print one JSON object per call, reset, issue and notice until ``stop`` is set (or
    ``out`` is a closed pipe).  The file may not exist yet; without ``fmt_name`` its format is detected once it
    holds records.

    Args:
        out: text stream to write to (``sys.stdout``), flushed after each object.
        stop: set it from any thread (or a signal handler) to return.
        poll: poll instead of relying on file events (``--poll``); poll_interval, sweep_interval, idle_grace:
            seconds (see :class:`~ctxwatch.engine.Follower`).
        watcher: replacement for ``watchfiles.watch`` (tests).

    Raises:
        LogError: ``path`` is a directory or not a regular file, ``fmt_name`` is unknown, the format is a
            whole-file document, or no format recognises the file once it holds enough records.
    """
    if os.path.isdir(path):
        raise LogError(f"{path}: is a directory (--follow takes one log file)")
    check_log_file(path, missing_ok=True)  # (a pipe or a device: refused, as by every command)
    if fmt_name:
        spec = resolve_spec(path, fmt_name)
        if spec.document:
            raise LogError(f"{path}: {spec.name} is a whole-file JSON document; --follow needs a JSONL log")
    emit = _Out(out)
    printer = _Printer(path, emit, stop, poll)
    follower = Follower(path, printer, stop, fmt=fmt_name, settings=settings, poll=poll, poll_interval=poll_interval,
                        flush_interval=0, sweep_interval=sweep_interval, idle_grace=idle_grace,
                        slice_bytes=SLICE_BYTES, first_slice_bytes=SLICE_BYTES, wait_for_format=True,
                        watcher=watcher)
    follower.run()
    run = follower.run_
    if run is not None and not emit.closed:
        follower.take(run.finish())
        follower.flush(force=True)
