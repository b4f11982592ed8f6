"""Each file of a folder read whole by a run of its own, serially or in worker processes, through the cache when
there is one: its format's name, its calls, its issues and its reader's pending compactions, and, when the command
writes each call as JSON (``report --json``), those calls' objects as written (:data:`Render`), made where the
file is read (in a worker, on every core) and kept with the file's result in the cache.
"""

from __future__ import annotations

import contextlib
import math
import os
import pickle
import struct
import time
import zlib
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ctxwatch.config import Settings
from ctxwatch.engine.cache import RunCache
from ctxwatch.engine.cachedb import FINISHED_AFTER, utc_day
from ctxwatch.engine.discovery import skipped_note
from ctxwatch.engine.opening import (
    LogError,
    check_log_file,
    empty_file_note,
    format_mismatch,
    nothing_in,
    resolve_spec,
)
from ctxwatch.engine.parallel import fork_map, worker_start, workers_for
from ctxwatch.engine.reading import read_file
from ctxwatch.engine.run import Run
from ctxwatch.engine.warm import open_warm, read_warm
from ctxwatch.model import Call, Issue
from ctxwatch.tokens import DEFAULT_ENCODING, get_tokenizer

#: What writes each of a file's calls as the command writes it, given them in order, without its run-wide index
#: (``report --json``'s :func:`ctxwatch.output.chunks.call_pieces`; ``b""`` for a call it leaves to be written at
#: the end), with each call's cost in USD as written in it (``None``: not priced) and what the command adds up
#: over the file's calls (its session totals, kept as :attr:`Pieces.totals`): a module-level function, so that
#: worker processes can be given it.
Render = Callable[[list[Call]], tuple[list[bytes], list[float | None], object]]


#: One cost in :attr:`Pieces.costs`: a native double, as ``array("d")`` packs it.
_COST = struct.Struct("d")


@dataclass(frozen=True, slots=True)
class Pieces:
    """A file's calls as written (:data:`Render`), compressed (a folder's report holds every call's, so little is
    held at once): the bytes of each, one after the other, in ``blob`` (zlib), where each ends, the session each
    was written with, each one's cost in USD as written (native doubles, NaN for a call not priced: one object
    to unpickle, not one per call; :meth:`cost`) and the UTC day (``YYYY-MM-DD``: a call without a timestamp is
    priced at the day's rates), and what the renderer added up over the calls (``totals``, the command's own).
    The command writes a call again where the run gives it another session, or another day's prices."""

    blob: bytes
    ends: tuple[int, ...]
    sessions: tuple[str | None, ...]
    costs: bytes
    day: str
    totals: object = None

    @classmethod
    def of(cls, calls: list[Call], render: Render) -> Pieces:
        """The pieces of ``calls`` as ``render`` makes them, today."""
        made, costs, totals = render(calls)
        ends, at = [], 0
        for body in made:
            at += len(body)
            ends.append(at)
        packed = array("d", (math.nan if cost is None else cost for cost in costs)).tobytes()
        return cls(zlib.compress(b"".join(made), 1), tuple(ends), tuple(c.session for c in calls), packed, utc_day(),
                   totals)

    def cost(self, i: int) -> float | None:
        """The cost in USD written in the ``i``-th piece, ``None`` when it was not priced."""
        (cost,) = _COST.unpack_from(self.costs, i * _COST.size)
        return None if math.isnan(cost) else cost

    def inflated(self) -> bytes:
        """Every piece's bytes, one after the other (:attr:`ends` says where each ends)."""
        return zlib.decompress(self.blob)


#: Bytes of logs per worker task: small enough to balance the workers, large enough that the per-task
#: overhead (pickling the parsed calls back) stays small.
TASK_BYTES = 8 * 1024 * 1024

#: Per file: its format's name (``None``: not recognised), its calls (accounted, each once, in order of
#: first appearance), its issues, its reader's pending compactions, and the calls' pieces when a renderer was
#: given (``None`` otherwise, or for a result the cache kept without them).
Result = tuple[str | None, list[Call], list[Issue], dict, Pieces | None]


def file_size(path: str) -> int:
    """The size of ``path`` in bytes (0 when it cannot be told)."""
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def read_group(group: list[str], fmt: str | None, settings: Settings | None, cache_path: str | None = None,
               render: Render | None = None) -> list[Result | bytes]:
    """Worker task: each file detected (or ``fmt``), read whole and accounted by a run of its own.

    The accounting needs nothing from other files: a Claude Code call read without its history takes the
    floor of a call of its own file (:mod:`ctxwatch.accounting`), and the main process merges duplicates
    across files by key.  Returns, per file, its format's name, its calls, its issues and its reader's
    pending compactions, or that result's pickle when the cache kept it (sent as it is: pickling a file's calls
    costs about a tenth of reading them).  A file that cannot be read gives an ``unreadable`` issue (the serial
    read would stop with :class:`LogError`; a folder keeps going).
    """
    worker_start()
    # (each worker loads the tokenizer once, at its first task, for all its files: loaded on a first count
    # instead, every big file would start a counting child of its own, see ctxwatch.engine.warm.counting_child)
    get_tokenizer(DEFAULT_ENCODING).load()
    cache = RunCache(cache_path) if cache_path else None
    try:
        out: list[Result | bytes] = []
        for path in group:
            result, kept = _read_one(path, fmt, settings, cache, render)
            out.append(result if kept is None else kept)  # (what the cache kept is the result, pickled once)
        return out
    finally:
        if cache is not None:
            cache.close()


def read_one(path: str, fmt: str | None, settings: Settings | None, cache: RunCache | None,
             render: Render | None = None) -> Result:
    """One file detected (or ``fmt``), read whole (through ``cache`` when given) and accounted by a run of its
    own: its format's name, its calls, its issues, its reader's pending compactions and, with ``render``, its
    calls' :class:`Pieces`.  A file unchanged since a read through ``cache`` gives that read's result again,
    without reading or loading its state (its pieces made now, and kept, when that read made none)."""
    return _read_one(path, fmt, settings, cache, render)[0]


def _read_one(path: str, fmt: str | None, settings: Settings | None, cache: RunCache | None,
              render: Render | None = None) -> tuple[Result, bytes | None]:
    """:func:`read_one`'s result, and its pickle when the read kept it in ``cache`` (``None`` otherwise)."""
    found = None
    before = None
    try:
        if cache is not None:
            check_log_file(path, missing_ok=bool(fmt))  # (before the cache opens it: a FIFO would block)
            key = cache.key(path, fmt, settings or Settings())
            done: Result | None = cache.load_result(path, key)  # type: ignore[assignment]  # (store_result's)
            if done is not None:
                if render is None or done[4] is not None or not done[1]:
                    return done, None
                done = (*done[:4], Pieces.of(done[1], render))
                kept = None
                with contextlib.suppress(OSError):
                    kept = cache.store_result(path, key, done, os.stat(path))
                return done, kept
            with contextlib.suppress(OSError):
                before = os.stat(path)
            spec, found = open_warm(cache, path, fmt, settings)
        else:
            spec = resolve_spec(path, fmt)
    except LogError as exc:
        return (None, [], [skipped_note(path, exc)], {}, None), None
    if spec.joined:
        return (spec.name, [], [], {}, None), None  # (joined across files by the main process)
    run = Run(path, spec, settings)
    try:
        if cache is not None and found is not None and not spec.document:
            # (committed with its result below; a finished log keeps its result only)
            live = before is None or time.time() - before.st_mtime < FINISHED_AFTER
            run = read_warm(cache, path, spec, found, settings, commit=False, keep_state=live)
            records = run.records
        else:
            records = read_file(run, path)
    except LogError as exc:
        run.issues.append(Issue(path, 0, "unreadable", str(exc)))
        records = 0
    if fmt and (not run.calls or nothing_in(run.calls)):
        run.issues.extend(format_mismatch(path, spec, records, run.issues, len(run.calls)))
    if not records and not run.calls and not run.issues and (note := empty_file_note(path)) is not None:
        run.issues.append(note)  # (an empty log of a folder: the main process leaves its format out)
    pieces = Pieces.of(run.calls, render) if render is not None and run.calls else None
    result: Result = (spec.name, run.calls, run.issues, run.pending_compactions(), pieces)
    kept = None
    if cache is not None and found is not None and before is not None and not spec.document:
        kept = cache.store_result(path, found.key, result, before)
    elif cache is not None:
        cache.commit()  # (the state read_warm saved, when there is no result to write with it)
    return result, kept


def parallel_outputs(files: list[str], fmt: str | None, settings: Settings | None = None,
                     cache_path: str | None = None, todo: list[int] | None = None, render: Render | None = None
                     ) -> Iterator[Result] | None:
    """Per-file results of :func:`read_group`, in file order, from worker processes; ``None`` when a serial
    read is better (:func:`ctxwatch.engine.parallel.workers_for`; ``todo``: the bytes of each file still to read,
    when the cache holds the rest).  Tasks are balanced by the bytes to read."""
    sizes = todo if todo is not None else [file_size(f) for f in files]
    workers = workers_for(sum(sizes), len(files))
    if not workers:
        return None
    from ctxwatch.formats import formats

    formats()  # import every format module once, before the fork, rather than once per worker
    groups: list[list[str]] = [[]]
    size = 0
    for f, n in zip(files, sizes, strict=True):
        if size >= TASK_BYTES:
            groups.append([])
            size = 0
        groups[-1].append(f)
        size += n
    # (the tokenizer is not loaded here for the workers: each loads its own (read_group), side by side, where a
    # copy loaded here first would delay every worker's start, and letting go of it after the fork costs this
    # process a copy of each of its pages, which the workers share)
    per_group = fork_map(read_group, [(g, fmt, settings, cache_path, render) for g in groups], workers)
    if per_group is None:
        return None
    return (pickle.loads(result) if isinstance(result, bytes) else result for group in per_group for result in group)
