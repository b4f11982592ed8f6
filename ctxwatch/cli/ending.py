"""How the ``ctxwatch`` process ends: at once, once its output is written and its exit handlers have run.

A headless command on a big folder holds about a million objects (call summaries, their usage, per-session
totals) until it returns; freeing them one by one, then tearing the interpreter down, took a tenth of a second
after the last byte was written (26,686 calls of the Claude Code benchmark folder). The console entry point
(:func:`ctxwatch.cli.group.run`) therefore keeps what a command :func:`hold` s alive, flushes the standard
streams, runs the exit handlers (the kept catalogue answers, the removal of a copy of standard input) and ends
the process without the teardown. Called another way (click's test runner, ``python -c``), nothing is held
and the process ends as Python ends it.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import os
import sys
from typing import NoReturn

#: What the commands asked to keep until the process ends; ``None`` while the process is not ended here.
_HELD: list[list[object]] = []


def ending_here() -> None:
    """Say that the process ends through :func:`end_process` (the console entry point, before the command)."""
    if not _HELD:
        _HELD.append([])


def hold(obj: object) -> None:
    """Keep ``obj`` alive until the process ends, when it ends through :func:`end_process` (else nothing).

    Everything alive then is also moved out of the cyclic collector's walks (``gc.freeze``): it all lives to the
    end, and the first collection after a big load walked it whole (80 ms for the benchmark folder's calls)."""
    if _HELD:
        _HELD[0].append(obj)
        gc.freeze()


def end_process(status: int) -> NoReturn:
    """Flush standard output and error, run the exit handlers, and end the process with ``status`` without
    freeing its objects.  A reader of the output that went away (``| head``) costs nothing more here: the
    flush that fails is the last write."""
    for stream in (sys.stdout, sys.stderr):
        # (a reader gone, or a stream closed: nothing more can be written)
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    atexit._run_exitfuncs()  # (the handlers Python would run at exit, which os._exit skips)
    os._exit(status)
