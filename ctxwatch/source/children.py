"""Forked children of a ctxwatch process: when forking one can help, and ending it with its parent.

A fork shares the parent's memory (modules, a run's calls, the tokenizer) with nothing pickled; it is used only
where it is safe and can pay: Linux (``fork``, ``sched_getaffinity``, ``prctl``), at least two cores, and no
other thread alive (a fork copies the locks other threads may hold, and the child could wait on one forever).
"""

from __future__ import annotations

import os
import sys
import threading

#: ``prctl`` option asking the kernel to signal this process when its parent dies (linux/prctl.h).
_PR_SET_PDEATHSIG = 1


def cores() -> int:
    """The cores this process may run on (1 where the platform cannot tell)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def fork_helps() -> bool:
    """True when a forked child can run beside this process: Linux, at least two cores, no other thread."""
    return sys.platform.startswith("linux") and cores() >= 2 and threading.active_count() == 1


def die_with_parent(parent: int) -> None:
    """In a child: end it when the process that started it dies (killed by a supervisor or the OOM killer);
    otherwise it would wait forever to hand back a result nobody reads."""
    import ctypes
    import signal

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)
