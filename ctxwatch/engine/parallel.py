"""Worker processes for headless reads of big inputs: when to use them, and a fork-based map.

Parsing JSON and normalizing records is CPU-bound Python, so one process reads at most one core's worth.  Two
shapes of work split cleanly: a folder's files (:mod:`ctxwatch.engine.folder`) and the line ranges of one big file
of independent records (:func:`ctxwatch.engine.reading.read_ranges`).  Workers are forked (Linux only), sharing
the parent's modules and hash seed (the ranges of one file also its tokenizer); nothing is pickled but the
results.  A parallel read is declined, and the caller reads serially, when it cannot pay off or is not safe:
small inputs, one core, no ``fork``, or other threads alive (forking a threaded process can deadlock the
child: the dashboard never reads in parallel).
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from ctxwatch.source.children import cores, die_with_parent, fork_child, fork_helps

if TYPE_CHECKING:
    from concurrent.futures import Future

#: Inputs smaller than this (bytes) are read serially: starting workers and sending results back costs
#: more than it saves below a few hundred milliseconds of parsing (measured on the benchmark runs).
PARALLEL_MIN_BYTES = 32 * 1024 * 1024

#: Most workers started, whatever the core count (the results are merged by one process anyway).
MAX_WORKERS = 8

_T = TypeVar("_T")


def workers_for(total_bytes: int, items: int = 2) -> int:
    """How many worker processes to read ``total_bytes`` of logs with, or 0 for a serial read.

    Args:
        total_bytes: size of the input in bytes.
        items: how many pieces it can be cut into (files, or ranges); fewer than 2 means serial.
    """
    n = min(cores(), MAX_WORKERS, items)
    if total_bytes <= 0 or total_bytes < PARALLEL_MIN_BYTES or n < 2 or not fork_helps():
        return 0
    return n


class ParallelReadError(Exception):
    """A worker process died or failed (killed for memory, a bug): the caller reads serially instead."""


def fork_map(fn: Callable[..., _T], tasks: list[tuple[Any, ...]], workers: int) -> Iterator[_T] | None:
    """``fn(*task)`` for each task in forked worker processes, yielded in task order as they complete.

    Each result is dropped from the pool's bookkeeping once yielded, so the caller can free it.  Returns
    ``None`` when no pool can be started (the caller then works serially).

    Raises (while iterating):
        ParallelReadError: a worker died or raised; the message says what happened.
    """
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    try:
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork"),
                                   initializer=die_with_parent, initargs=(os.getpid(),))
        futures: list[Future[_T] | None] = [pool.submit(_task, fn, *t) for t in tasks]
    except (OSError, ValueError):
        return None

    def results() -> Iterator[_T]:
        try:
            for i, fut in enumerate(futures):
                assert fut is not None
                try:
                    result = fut.result()
                except Exception as exc:  # BrokenProcessPool, or an error raised in the worker
                    raise ParallelReadError(f"{type(exc).__name__}: {exc}") from exc
                futures[i] = None  # drop the future's hold on its result
                yield result
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    return results()


def _task(fn: Callable[..., _T], *args: Any) -> _T:
    """A worker's ``fn(*args)``, then the catalogue answers it looked up written to the start-up memo
    (:func:`ctxwatch.catalog.memo.flush`): a pool's worker ends without the exit handler that writes them, so the
    next read's workers would look them up again."""
    from ctxwatch.catalog import memo

    try:
        return fn(*args)
    finally:
        memo.flush()


def side_task(fn: Callable[..., _T], *args: Any) -> Callable[[], _T]:
    """``fn(*args)`` started in a forked child process while this one goes on with its own work; the function
    returned waits for the result.  The child inherits ``args`` (nothing is pickled but the result, through a
    pipe).  Where no child can help (one core, not Linux, another thread alive, a fork that fails, a child that
    died or raised), ``fn`` runs here when the result is asked for: the result is the same either way (``fn``
    must not change what it is given, and its result must pickle)."""
    import pickle

    def work(_from_parent: int, to_parent: int) -> None:
        data = pickle.dumps(fn(*args), protocol=pickle.HIGHEST_PROTOCOL)  # (a raise: nothing written)
        with os.fdopen(to_parent, "wb") as out:
            out.write(data)

    forked = fork_child(work)
    if forked is None:
        return lambda: fn(*args)
    pid, to_child, from_child = forked
    os.close(to_child)

    def result() -> _T:
        data = b""
        try:
            with os.fdopen(from_child, "rb") as src:
                data = src.read()
            if data:
                return pickle.loads(data)  # type: ignore[no-any-return]
        except Exception:  # (a child killed mid-write: a cut pickle)
            pass
        finally:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
        return fn(*args)

    return result


def worker_start() -> None:
    """Call first in a worker task: the objects inherited from the parent are all alive and those the task
    makes are its results, which live until they are sent back, so the cyclic collector is kept off (it walked
    them again and again: 15 to 25 % of a worker's time on the Claude Code benchmark folder; a read leaves few
    objects in reference cycles, see :func:`ctxwatch.cli.steady_heap`)."""
    gc.freeze()
    gc.disable()


def line_ranges(path: str, parts: int) -> list[tuple[int, int]]:
    """``parts`` byte ranges ``(start, end)`` covering ``path``, each starting at a line start.

    Cuts are placed at the first newline after each equal share, so a range never splits a line; a file
    with fewer lines than ``parts`` gives fewer ranges.
    """
    size = os.path.getsize(path)
    cuts = [0]
    with open(path, "rb") as fh:
        for k in range(1, parts):
            at = max(cuts[-1], size * k // parts)
            fh.seek(at)
            while True:
                block = fh.read(1 << 16)
                if not block:
                    at = size
                    break
                nl = block.find(b"\n")
                if nl >= 0:
                    at += nl + 1
                    break
                at += len(block)
            if at >= size:
                break
            if at > cuts[-1]:
                cuts.append(at)
    cuts.append(size)
    return [(a, b) for a, b in itertools.pairwise(cuts) if b > a]


def line_number_at(path: str, offset: int) -> int:
    """The 1-based number of the line starting at byte ``offset`` (newlines before it, plus one)."""
    n = 1
    left = offset
    with open(path, "rb") as fh:
        while left > 0:
            block = fh.read(min(left, 1 << 22))
            if not block:
                break
            n += block.count(b"\n")
            left -= len(block)
    return n
