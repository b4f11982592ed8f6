"""Writing the demo's run to a file, at once or paced like a live agent (one record per call, JSON Lines).

Each record is appended and the file closed again, so a dashboard tailing it never sees half a record.
"""

from __future__ import annotations

import json
import os
import threading
import time
from typing import Any

from ctxwatch.demo.story import DEFAULT_CALLS, DEFAULT_SEED, DEMO_WINDOW, generate_run, iso_utc

#: Calls per second written by the live demo: 60 calls in 30 s, so the story plays in under a minute.
DEFAULT_SPEED = 2.0


def _dumps(rec: dict[str, Any]) -> bytes:
    return (json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def write_run(path: str | os.PathLike[str], calls: int = DEFAULT_CALLS, speed: float | None = None, *,
              seed: int = DEFAULT_SEED, window: int | None = DEMO_WINDOW,
              stop: threading.Event | None = None) -> int:
    """Write the synthetic run to ``path`` (created or emptied first), one JSON line per call.

    The file is opened in append mode for each record and closed right after the write and flush, so a reader
    tailing it never sees a half-held file (and Windows can delete it at any time).

    Args:
        path: the output file.
        calls: number of calls (records).
        speed: calls per second; ``None`` writes as fast as possible. When given, each record's ``timestamp``
            (and ``response.created``) is the wall-clock time it is written, so a live dashboard's time-based
            forecast matches what the viewer sees.
        seed, window: see :func:`generate_run`.
        stop: set it to stop early (the live demo's exit).

    Returns:
        The number of records written.

    Raises:
        OSError: the file cannot be written.
    """
    with open(path, "wb"):
        pass
    interval = 1.0 / speed if speed else 0.0
    n = 0
    next_at = time.monotonic()
    for rec in generate_run(calls, seed, window):
        if stop is not None and stop.is_set():
            break
        if speed:
            delay = next_at - time.monotonic()
            if delay > 0 and stop is not None:
                if stop.wait(delay):
                    break
            elif delay > 0:
                time.sleep(delay)
            next_at = max(next_at, time.monotonic()) + interval
            now = time.time()
            rec["timestamp"] = iso_utc(now)
            if isinstance(rec.get("response"), dict) and "created" in rec["response"]:
                rec["response"]["created"] = int(now)
        data = _dumps(rec)
        with open(path, "ab") as fh:
            fh.write(data)
            fh.flush()
        n += 1
    return n
