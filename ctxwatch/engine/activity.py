"""When a log was last active: its last call's time, read from the end of the file.

A copied folder gives every file one modification time, so sessions are ordered by the time of their last
call, as ``report`` orders them; a file's modification time stands in only when the file holds no timestamp.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator
from typing import BinaryIO

from ctxwatch.engine.activity_memo import keep, recall, stamp_of

#: Bytes read at a time from a log's end to find its last call's timestamp, and the most read in all (a last
#: record can be a long tool result or a base64 screenshot).
ACTIVITY_CHUNK_BYTES = 64 * 1024
ACTIVITY_MAX_BYTES = 16 * 1024 * 1024
#: Once a timestamp is found, how much further back a call's line is looked for (a log without call lines is
#: not read to :data:`ACTIVITY_MAX_BYTES`).
ACTIVITY_CALL_SEARCH_BYTES = 1024 * 1024
_TIMESTAMP = re.compile(
    rb'"(?:timestamp|ts|created|created_at)"\s*:\s*(?:"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?)"'
    rb"|(\d{9,13}(?:\.\d+)?)\b)")
#: A line holding one of these is a call's (a usage block, Codex's token_count, Cline's api_req_started).
_CALL_MARKS = (b"usage", b"Usage", b"tokensIn")
#: A Claude Code response's ids on each of its lines (one line per content block, each with the response's
#: ``message.id`` and the API request's ``requestId``): the call's time is its first line's.
_RESPONSE_ID = re.compile(rb'"id"\s*:\s*"(msg_[^"]{1,200})"')
_REQUEST_ID = re.compile(rb'"requestId"\s*:\s*"([^"]{1,200})"')


def _timestamps(data: bytes) -> Iterator[float]:
    """The epoch seconds of every timestamp value in ``data`` (see :func:`last_activity`)."""
    from datetime import UTC, datetime

    for m in _TIMESTAMP.finditer(data):
        try:
            if m.group(1):
                t = datetime.fromisoformat(m.group(1).decode())
                yield (t if t.tzinfo else t.replace(tzinfo=UTC)).timestamp()
            else:
                ts = float(m.group(2))
                yield ts / 1000 if ts > 1e11 else ts
        except ValueError:
            continue


def _line_blocks(fh: BinaryIO) -> Iterator[tuple[int, bytes]]:
    """The whole lines of the binary file ``fh`` from its end backwards, a block at a time: ``(bytes from the end
    to the block's start, the block's lines joined by newlines)``.  Read :data:`ACTIVITY_CHUNK_BYTES` at a time,
    at most :data:`ACTIVITY_MAX_BYTES` in all; a line cut by a read is given whole with the next block (a last
    record longer than a chunk, a big tool result, is read whole, not as two pieces of which neither holds both
    its timestamp and its usage)."""
    end = pos = os.fstat(fh.fileno()).st_size
    cut: list[bytes] = []  # (the line a read began inside of: its pieces read so far, in file order)
    while pos > 0 and end - pos < ACTIVITY_MAX_BYTES:
        start = max(0, pos - ACTIVITY_CHUNK_BYTES)
        fh.seek(start)
        data = fh.read(pos - start)
        pos = start
        if start == 0:
            yield end, b"".join([data, *cut])
            return
        nl = data.find(b"\n")
        if nl < 0:
            cut.insert(0, data)  # (still inside one long line)
            continue
        yield end - (start + nl + 1), b"".join([data[nl + 1:], *cut])
        cut = [data[:nl]]


def last_activity(path: str) -> float | None:
    """The time of a log's last call (epoch seconds): :func:`last_call_time`'s time."""
    return last_call_time(path)[0]


def last_call_time(path: str) -> tuple[float | None, bool]:
    """The time of a log's last call (epoch seconds), read from its end, or ``None`` when no timestamp is found
    in its last :data:`ACTIVITY_MAX_BYTES` or the file cannot be read; and whether it is a call's (``False``: the
    latest record's, no line of a call being found near the end: a Codex rollout of ``session_meta`` only).

    Looks for ``"timestamp"``, ``"ts"``, ``"created"`` and ``"created_at"`` values: ISO-8601 strings (one without
    a zone read as UTC) and epoch numbers (seconds, or milliseconds above 10**11: Cline's ``ts``).  The latest one
    on a line of a call (:data:`_CALL_MARKS`) wins, as ``report`` orders sessions by their calls' time (a
    Claude Code session often ends with bookkeeping lines after its last call); without one, the latest of any
    line.  A call written over several lines (a Claude Code response, a line per content block, each with its
    ``message.id`` and ``requestId``) has its first line's time, as the engine gives it: consecutive call lines
    with both ids the same are one call.  Only the calls near the end are seen: a call far back with a later
    time (lines written out of order) is not.  A file's modification time says only when it was last written
    or copied (a copied folder of logs has one time for every file)."""
    best_any: float | None = None
    any_at = 0  # where (bytes from the end) the first timestamp was found
    try:
        with open(path, "rb") as fh:
            for back, block in _line_blocks(fh):
                if best_any is not None and back - any_at >= ACTIVITY_CALL_SEARCH_BYTES:
                    break
                best_call: float | None = None
                call: tuple[bytes | None, float] = (None, 0.0)  # (the last call line's response id, its call's time)
                for line in block.split(b"\n"):
                    found = max(_timestamps(line), default=None)
                    if found is None:
                        continue
                    if best_any is None:
                        any_at = back
                    if best_any is None or found > best_any:
                        best_any = found
                    if any(mark in line for mark in _CALL_MARKS):
                        m, r = _RESPONSE_ID.search(line), _REQUEST_ID.search(line)
                        rid = m.group(1) + b"\0" + r.group(1) if m and r else None
                        if rid is None or rid != call[0]:
                            call = (rid, found)  # (a call's first line: its time is the call's)
                        if best_call is None or call[1] > best_call:
                            best_call = call[1]
                if best_call is not None:
                    return best_call, True
    except OSError:
        return best_any, False
    return best_any, False



#: ``path -> (mtime, size, activity, from_content, from_call)``: each file's last activity, read again only when
#: the file changes.
_activity: dict[str, tuple[float, int, float, bool, bool]] = {}
_activity_lock = threading.Lock()


def activity_of(path: str) -> tuple[float, bool]:
    """When ``path`` was last active, in epoch seconds, and whether that is its last call's timestamp
    (:func:`last_call_time`, ``True``) or, with no timestamp in it, its modification time
    (``False``).  Remembered until the file changes, in this process and between runs
    (:mod:`ctxwatch.engine.activity_memo`).  Raises ``OSError`` when it cannot be stat'ed."""
    st = os.stat(path)
    with _activity_lock:
        known = _activity.get(path)
    if known is not None and known[:2] == (st.st_mtime, st.st_size):
        return known[2], known[3]
    stamp = stamp_of(st)
    kept = recall(path, stamp)
    if kept is None:
        found, from_call = last_call_time(path)
        keep(path, stamp, found, from_call)
    else:
        found, from_call = kept
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


def remembered(path: str) -> tuple[float, int, float, bool, bool] | None:
    """What :func:`activity_of` remembers of ``path`` (``(mtime, size, activity, from_content, from_call)``), or
    ``None``; the caller compares the first two with a fresh stat before trusting the rest."""
    with _activity_lock:
        return _activity.get(path)
