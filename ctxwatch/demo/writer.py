"""Writing the demo's run to a file, at once or paced like a live agent (one record per call, JSON Lines).

Each record is appended and the file closed again, so a dashboard tailing it never sees half a record.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from typing import Any

from ctxwatch.demo.story import DEFAULT_CALLS, DEFAULT_SEED, DEMO_WINDOW, generate_run, iso_utc

#: Calls per second written by the live demo: 60 calls in 30 s, so the story plays in under a minute.
DEFAULT_SPEED = 2.0


def _dumps(rec: dict[str, Any]) -> bytes:
    return (json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def paced_records(calls: int = DEFAULT_CALLS, speed: float | None = None, *, seed: int = DEFAULT_SEED,
                  window: int | None = DEMO_WINDOW, stop: threading.Event | None = None) -> Iterator[bytes]:
    """The synthetic run's records, one JSON line (bytes) each, given at ``speed`` calls per second (``None``: as
    fast as they are made).  Paced, each record's ``timestamp`` (and ``response.created``) is the wall-clock time
    it is given, so a live dashboard's time-based forecast matches what the viewer sees.  Stops early when
    ``stop`` is set."""
    interval = 1.0 / speed if speed else 0.0
    next_at = time.monotonic()
    for rec in generate_run(calls, seed, window):
        if stop is not None and stop.is_set():
            return
        if speed:
            delay = next_at - time.monotonic()
            if delay > 0 and stop is not None:
                if stop.wait(delay):
                    return
            elif delay > 0:
                time.sleep(delay)
            next_at = max(next_at, time.monotonic()) + interval
            now = time.time()
            rec["timestamp"] = iso_utc(now)
            if isinstance(rec.get("response"), dict) and "created" in rec["response"]:
                rec["response"]["created"] = int(now)
        yield _dumps(rec)


def write_run(path: str | os.PathLike[str], calls: int = DEFAULT_CALLS, speed: float | None = None, *,
              seed: int = DEFAULT_SEED, window: int | None = DEMO_WINDOW,
              stop: threading.Event | None = None, exclusive: bool = True) -> int:
    """Write the synthetic run to ``path``, one JSON line per call (:func:`paced_records`): a new file
    (``exclusive``: an existing file, a real log perhaps, is never overwritten), else one the caller made for
    it, emptied first.  Never through a symbolic link.

    The file is opened in append mode for each record and closed right after the write, so a reader tailing it
    never sees a half-held file (and Windows can delete it at any time).

    Args:
        path: the output file.
        calls: number of calls (records).
        speed: calls per second; ``None`` writes as fast as possible.
        seed, window: see :func:`generate_run`.
        stop: set it to stop early (the live demo's exit).

    Returns:
        The number of records written.

    Raises:
        FileExistsError: ``exclusive`` and ``path`` exists (or is a symbolic link).
        OSError: the file cannot be written (a symbolic link when not ``exclusive``).
    """
    flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | (os.O_EXCL if exclusive else os.O_TRUNC)
    os.close(os.open(path, flags, 0o644))
    n = 0
    for data in paced_records(calls, speed, seed=seed, window=window, stop=stop):
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0))
        try:
            view = memoryview(data)
            while view:  # (a regular file takes it in one write; a short write goes on where it stopped)
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        n += 1
    return n
