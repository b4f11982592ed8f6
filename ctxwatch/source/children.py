"""Forked children of a ctxwatch process: when forking one can help, and ending it with its parent.

A fork shares the parent's memory (modules, a run's calls, the tokenizer) with nothing pickled; it is used only
where it is safe and can pay: Linux (``fork``, ``sched_getaffinity``, ``prctl``), at least two cores, and no
other thread alive (a fork copies the locks other threads may hold, and the child could wait on one forever).
"""

from __future__ import annotations

import gc
import os
import sys
import threading
from collections.abc import Callable

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


def fork_child(work: Callable[[int, int], None]) -> tuple[int, int, int] | None:
    """Fork a child that runs ``work(from_parent, to_parent)`` (the file descriptors of its ends of two pipes),
    then exits (status 1 when ``work`` raised), and dies with its parent; its cyclic collector is off (it
    inherits the parent's objects alive).  Returns ``(pid, to_child, from_child)`` in the parent, or ``None``
    where no child can help (:func:`fork_helps`) or a pipe or the fork fails."""
    if not fork_helps():
        return None
    fds: list[int] = []
    try:
        fds += os.pipe()
        fds += os.pipe()
    except OSError:
        for fd in fds:
            os.close(fd)
        return None
    down_r, down_w, up_r, up_w = fds
    parent = os.getpid()
    try:
        pid = os.fork()
    except OSError:
        for fd in fds:
            os.close(fd)
        return None
    if pid == 0:  # (the child: never returns; os._exit skips the parent's exit handlers and buffered output)
        code = 0
        try:
            os.close(down_w)
            os.close(up_r)
            gc.freeze()
            gc.disable()
            die_with_parent(parent)
            work(down_r, up_w)
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    os.close(down_r)
    os.close(up_w)
    return pid, down_w, up_r


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
