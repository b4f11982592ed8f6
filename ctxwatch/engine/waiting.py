"""Waiting for a log to be readable: until it exists, holds a record, and (when asked) its records are in a
known format, saying once why it waits."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

from ctxwatch.engine.events import FollowEvent, IssuesChanged, Waiting
from ctxwatch.engine.opening import DETECT_RECORDS, LogError, empty_file_note, resolve_spec
from ctxwatch.formats import SNIFF_BYTES, FormatSpec, detect, sniff_file
from ctxwatch.model import Issue


def format_when_ready(path: str, fmt: str | None, wait_for_format: bool, interval: float, stop: threading.Event,
                      emit: Callable[[FollowEvent], object], fail: Callable[[str], None]) -> FormatSpec | None:
    """The format of ``path`` (``fmt`` when given), once it can be known, or ``None`` when ``stop`` was set or the
    file cannot be read (``fail`` was called with why).

    A file that does not exist yet (a job about to write it) or is empty is waited for, looked at every
    ``interval`` seconds; with ``wait_for_format`` so is one whose records are not recognised yet, until
    :data:`~ctxwatch.engine.opening.DETECT_RECORDS` of them, unless it has a finished line and no JSON value
    (``/etc/passwd``): that is the whole read's error (``fail``).  Each reason to wait is given once
    (:class:`~ctxwatch.engine.events.Waiting`), and so is an empty file's note (withdrawn when it ends).
    """
    said: set[str] = set()
    noted: Issue | None = None

    def wait(kind: str, message: str) -> None:
        if message not in said:
            emit(Waiting(kind, message))
            said.add(message)
        stop.wait(interval)

    try:
        while not stop.is_set():
            note = empty_file_note(path) if os.path.lexists(path) else None
            if note != noted:
                emit(IssuesChanged([note] if note else [], [noted] if noted else []))
                noted = note
            if not os.path.lexists(path):
                wait("waiting", f"{path} does not exist yet; waiting for it")
                continue
            if fmt is None and empty(path):
                wait("empty", f"{os.path.basename(path)} is empty: waiting for its first record to detect the format")
                continue
            try:
                if fmt is not None or not wait_for_format:
                    return resolve_spec(path, fmt)
                spec = detect(path)
                if spec is not None:
                    return spec
                if _no_json_lines(path):
                    # (a finished line that is no JSON value: not a log being written, /etc/passwd; the whole
                    # read's reason is given: no JSON line, a compressed file, a JSON array of records)
                    return resolve_spec(path, None)
                if _records_enough(path):
                    raise LogError(f"{path}: format not recognised (see `ctxwatch formats`, or pass --format NAME)")
            except (LogError, OSError) as exc:
                fail(str(exc) if isinstance(exc, LogError) else f"{path}: cannot read ({exc})")
                return None
            wait("format_unknown", "format not recognised yet; waiting for more records (or pass --format)")
        return None
    finally:
        if noted is not None:
            # (the run that reads the file gives its own notes, an empty_file one included if it is blank)
            emit(IssuesChanged([], [noted]))


def empty(path: str) -> bool:
    """True when ``path`` is an empty file (or cannot be stat'ed): no record to detect a format from."""
    try:
        return os.path.isfile(path) and os.path.getsize(path) == 0
    except OSError:
        return False


def _no_json_lines(path: str) -> bool:
    """True when the file's head holds a finished, non-blank line and no JSON value at all: no writer of a JSON
    log writes such a line, so waiting cannot make it one."""
    try:
        sn = sniff_file(path)
    except OSError:
        return False
    finished = sn.head[:sn.head.rfind(b"\n") + 1]
    return not sn.values and sn.document is None and bool(finished.strip())


def _records_enough(path: str) -> bool:
    """True when the file's head holds :data:`~ctxwatch.engine.opening.DETECT_RECORDS` values or is
    :data:`~ctxwatch.formats.SNIFF_BYTES` long: what detection looks at is there, so waiting cannot help."""
    try:
        sn = sniff_file(path)
        return len(sn.values) >= DETECT_RECORDS or os.path.getsize(path) >= SNIFF_BYTES
    except OSError:
        return False
