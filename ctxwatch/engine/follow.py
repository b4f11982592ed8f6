"""The headless follow loop behind ``ctxwatch report PATH --follow --jsonl``.

:func:`follow_jsonl` tails one log with :func:`ctxwatch.source.tail.watch`, feeds each complete record to a
:class:`~ctxwatch.engine.run.Run` and prints one JSON object per line as soon as something happens:

* a call: the per-call object of ``report --json`` (:func:`ctxwatch.output.report.call_json`), printed once the
  batch of records that holds it has been read (the first read of an existing log prints each call once, in
  its final state).  A later record that changes an earlier call (same dedupe key, e.g. a further line of the
  same Claude Code response with new usage) prints that call again with the same ``index``: the last object
  per index wins.  An object identical to the one last printed for its index is not printed again;
* ``{"event": "reset", "reason": ..., "path": ...}`` when the file was truncated, rotated, replaced,
  deleted or recreated (reasons: :data:`ctxwatch.source.tail.RESET_REASONS`); the run's reader starts over;
* ``{"event": "issue", "file", "line", "kind", "message"}`` for each bad line or skipped record, so that
  nothing is skipped silently (failure case B14);
* ``{"event": "issue_resolved", "file", "line", "kind", "message"}`` when an issue printed earlier no longer
  holds: a last line reported as ``truncated_tail`` (its writer idle for the grace period) was completed;
* ``{"event": "notice", "kind", "message"}`` about the watching itself (e.g. the fall back to polling).

Call objects have no ``event`` key; every other object has one.  Each line is flushed at once.  The log is
only ever opened for reading.
"""

from __future__ import annotations

import os
import threading
from typing import Any, TextIO

from ctxwatch.config import Settings
from ctxwatch.engine.run import Change, LogError, Run, check_log_file, resolve_spec
from ctxwatch.formats import SNIFF_BYTES, FormatSpec, detect
from ctxwatch.model import Issue, Resolved
from ctxwatch.output.report import call_json, issue_json
from ctxwatch.output.safetext import json_bytes
from ctxwatch.source.lines import Record
from ctxwatch.source.tail import (
    DEFAULT_IDLE_GRACE,
    DEFAULT_POLL_INTERVAL,
    DEFAULT_SWEEP_INTERVAL,
    FileEvent,
    Notice,
    Reset,
    Watcher,
    watch,
)

#: Complete records after which an undetectable format is an error rather than "wait for more": detection
#: looks at the first 50 values of the file's first ``SNIFF_BYTES`` (see :mod:`ctxwatch.formats`).
DETECT_RECORDS = 50


class _Out:
    """Writes one JSON object per line and flushes; remembers a closed pipe."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.closed = False

    def __call__(self, obj: dict[str, Any]) -> None:
        if self.closed:
            return
        self.write(json_bytes(obj))

    def write(self, data: bytes) -> None:
        """Write one serialized object and a newline, and flush."""
        if self.closed:
            return
        try:
            self.out.write(data.decode() + "\n")
            self.out.flush()
        except (BrokenPipeError, ValueError):  # reader went away (| head) or stream closed
            self.closed = True


def follow_jsonl(
    path: str,
    fmt_name: str | None,
    settings: Settings | None,
    out: TextIO,
    stop: threading.Event,
    poll: bool = False,
    *,
    idle_grace: float = DEFAULT_IDLE_GRACE,
    sweep_interval: float = DEFAULT_SWEEP_INTERVAL,
    poll_interval: float = DEFAULT_POLL_INTERVAL,
    watcher: Watcher | None = None,
) -> None:
    """Follow ``path`` and print one JSON object per call, reset, issue and notice until ``stop`` is set.

    The file may not exist yet (it is waited for).  Without ``fmt_name`` the format is detected once the
    file holds complete records; until then records are held back.

    Args:
        path: the log file (a JSONL log; whole-file JSON documents cannot be followed).
        fmt_name: format name (``--format``) or ``None`` to detect.
        settings: thresholds (``None`` = defaults).
        out: text stream to write to (``sys.stdout``); flushed after each object.
        stop: set it from any thread (or a signal handler) to return; the loop checks it at least every
            50 ms.  Also returns when ``out`` is a closed pipe.
        poll: poll instead of relying on filesystem events (``--poll``).
        idle_grace: seconds a half-written last line may stay unchanged before it is reported as an issue.
        sweep_interval / poll_interval: see :func:`ctxwatch.source.tail.watch` (seconds).
        watcher: replacement for ``watchfiles.watch`` (tests).

    Raises:
        LogError: ``path`` is a directory or not a regular file, ``fmt_name`` is unknown, the format is a
            whole-file document, or no format recognises the file after :data:`DETECT_RECORDS` records (or
            ``SNIFF_BYTES`` bytes).
    """
    if os.path.isdir(path):
        raise LogError(f"{path}: is a directory (--follow takes one log file)")
    check_log_file(path, missing_ok=True)  # (a pipe or a device: refused, as by every command)
    spec: FormatSpec | None = resolve_spec(path, fmt_name) if fmt_name else None
    if spec is not None and spec.document:
        raise LogError(f"{path}: {spec.name} is a whole-file JSON document; --follow needs a JSONL log")
    emit = _Out(out)
    if not os.path.exists(path):
        # (a job about to start: said once, so that a mistyped path is not a silent wait)
        emit({"event": "notice", "kind": "waiting", "message": f"{path} does not exist yet; waiting for it"})
    run: Run | None = Run(path, spec, settings) if spec is not None else None
    held: list[Record | Issue] = []
    waiting_noted = False
    paused: Run | None = None  # the run while a replaced file's format is detected again
    paused_reason = ""

    def skip(data: bytes) -> bool:
        f = run.reader.skip if run is not None else None
        return f(data) if f is not None else False

    changed: dict[int, None] = {}  # calls added or updated since the last flush, in order
    printed: dict[int, int] = {}  # index -> hash of the object last printed for it
    calibrated: set[str | None] = set()  # models whose calibration the printed calls already carry

    def write_change(change: Change) -> None:
        for issue in change.resolved:
            emit({"event": "issue_resolved", **issue_json(issue)})
        for issue in change.issues:
            if issue.kind != "reset":
                emit({"event": "issue", **issue_json(issue)})
        for idx in (*change.added, *change.updated):
            changed[idx] = None

    def flush_calls() -> None:
        """Print each call changed since the last flush once, as it stands now (a response's several lines,
        or a whole backfill batch, make one object per call, not one per line)."""
        if run is None or not changed:
            return
        per_model: dict[str | None, float | None] | None = None
        run_wide: dict[None, float | None] = {}  # (the run's factor, for a model without one of its own)
        if any(not run.calls[idx].exact for idx in changed):
            # (each model's own factor, as report --json gives it: a helper model's calls make another)
            per_model = run.calibrations()
            first = [m for m, v in per_model.items() if v is not None and m not in calibrated]
            if first:
                # A model's calibration exists from its 3rd call on: its calls printed before then had none, so
                # they are printed again with it (once per model; later the factor drifts by a little, and each
                # call keeps the one it was printed with).
                calibrated.update(first)
                for c in run.calls:
                    if c.model in first and not c.exact and c.index in printed:
                        changed.setdefault(c.index, None)
        for idx in changed:
            call = run.calls[idx]
            cal = None
            if per_model is not None:
                if call.model not in per_model and None not in run_wide:
                    run_wide[None] = run.calibration()  # (asked once per flush: it reads every call)
                cal = per_model[call.model] if call.model in per_model else run_wide[None]
            data = json_bytes(call_json(call, cal))
            h = hash(data)
            if printed.get(idx) != h:
                printed[idx] = h
                emit.write(data)
        changed.clear()

    def try_detect() -> FormatSpec | None:
        nonlocal waiting_noted
        try:
            found = detect(path)
        except OSError:
            found = None
        if found is not None:
            if found.document:
                raise LogError(f"{path}: {found.name} is a whole-file JSON document; --follow needs a JSONL log")
            return found
        n = sum(1 for h in held if isinstance(h, Record))
        try:
            size = os.path.getsize(path)
        except OSError:
            size = 0
        if n >= DETECT_RECORDS or size >= SNIFF_BYTES:
            raise LogError(f"{path}: format not recognised (see `ctxwatch formats`, or pass --format NAME)")
        if not waiting_noted:
            waiting_noted = True
            emit({"event": "notice", "kind": "format_unknown",
                  "message": "format not recognised yet; waiting for more records (or pass --format)"})
        return None

    # Until the format is known, records are only counted (for detection); once it is, the file is read
    # again from its start so that the format reader's ``skip`` filter sees every raw line.
    while not stop.is_set():
        detected = False
        batches = watch(path, poll=poll, stop_event=stop, idle_grace=idle_grace, sweep_interval=sweep_interval,
                        poll_interval=poll_interval, skip=skip, watcher=watcher)
        try:
            for batch in batches:
                for item in batch:
                    if isinstance(item, Notice):
                        emit({"event": "notice", "kind": item.kind, "message": item.message})
                        continue
                    assert isinstance(item, FileEvent)
                    ev = item.event
                    # One file is followed: name it as the user did (the watcher reports absolute paths), so
                    # every object's `file` stays the same before and after a reset.
                    if isinstance(ev, Reset):
                        if run is not None:
                            write_change(run.finish())
                            flush_calls()
                            if fmt_name is None:
                                # The new file may be in another format: its first records are held until it
                                # is detected again, then the run goes on with that format's reader.
                                paused, paused_reason, run = run, ev.reason, None
                            else:
                                run.reset(ev.reason, path)
                        else:
                            held.clear()
                        emit({"event": "reset", "reason": ev.reason, "path": path})
                        calibrated.clear()  # (the new file's calls get their models' factors afresh)
                    elif isinstance(ev, Resolved):
                        # (issues carry the path as given, see below)
                        done = Resolved(path, ev.line, ev.kind)
                        if run is not None:
                            write_change(run.feed_record(done))
                        else:
                            held[:] = [h for h in held if not (isinstance(h, Issue) and
                                                               (h.path, h.line, h.kind) == (path, ev.line, ev.kind))]
                    elif isinstance(ev, Record | Issue):
                        if isinstance(ev, Issue):
                            ev.path = path
                        if run is None:
                            held.append(ev)
                        else:
                            write_change(run.feed_record(ev))
                if run is not None:
                    # (the notes check gives at the end of a read, kept up to date as the file grows, as the
                    # dashboard shows them: Claude Code's subagent note, an empty file's)
                    write_change(run.refresh_notes())
                flush_calls()
                if run is None and any(isinstance(h, Record) for h in held):
                    spec = try_detect()
                    if spec is not None:
                        if paused is not None:
                            run, paused = paused, None
                            run.reset(paused_reason, path, spec)
                        else:
                            run = Run(path, spec, settings)
                        held.clear()
                        detected = True
                        break
                if emit.closed:
                    stop.set()
                    break
        finally:
            batches.close()
        if not detected:
            break
    if run is not None and not emit.closed:
        write_change(run.finish())
        flush_calls()
