"""Reading a whole log file into a run: lines from disk through the same path a followed file takes.

A record stream is read in chunks and fed as lines (:meth:`~ctxwatch.engine.run.Run.feed_lines`), with the
reader told that the whole file is there (it may then give a call once, complete, instead of at each of its
lines); a whole-file JSON document is fed at once.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

from ctxwatch.config import Settings
from ctxwatch.engine.cache import RunCache
from ctxwatch.engine.opening import LogError, empty_file_note, format_mismatch, nothing_in, resolve_spec
from ctxwatch.engine.parallel import (
    MAX_WORKERS,
    ParallelReadError,
    fork_map,
    line_number_at,
    line_ranges,
    worker_start,
    workers_for,
)
from ctxwatch.engine.run import Run
from ctxwatch.formats import FormatSpec, get_format
from ctxwatch.model import Call, Issue
from ctxwatch.source import read_document, read_lines


def read_file(run: Run, path: str, spec: FormatSpec | None = None,
              progress: Callable[[int, int], None] | None = None) -> int:
    """Feed a whole file to ``run``, then finish its reader; return the number of records read.  With ``spec`` the
    file gets a fresh reader of that format (a folder may mix formats); else the run's current reader reads it.

    Raises:
        LogError: the file cannot be read.
    """
    if spec is not None:
        run.reader = spec.reader(path)
        run.set_pending_compactions(None)
    return read_whole(run, path, (spec or run.spec).document, progress)


def read_whole(run: Run, path: str, document: bool, progress: Callable[[int, int], None] | None = None,
               start: int = 0, end: int | None = None, line: int = 1) -> int:
    """Feed ``path`` to ``run``'s current reader and finish it; return the number of records read.

    Args:
        document: the format is a whole-file JSON document (an Inspect ``.eval`` zip is opened by its reader).
        progress: called with ``(bytes_read, total_bytes)`` while reading.
        start / end / line: read only the byte range ``[start, end)`` (cut at line starts), whose first line is
            number ``line`` (a worker's share of a file of independent records).

    Raises:
        LogError: the file cannot be read.
    """
    reader = run.reader
    before = run.records
    if document:
        value, issue = read_document(path)
        if issue is None:
            run.feed_document(value)
        elif path.endswith(".eval"):  # (a zip container: its reader opens it)
            run.feed_document(path)
        else:
            run.add([issue])
        run.finish()
        return run.records - before
    try:
        total = os.path.getsize(path)
    except OSError as exc:  # (removed since it was listed, or a broken link)
        raise LogError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    cb = (lambda off: progress(off, total)) if progress else None
    reader.coalesce = True  # the whole file is read now: one emission per call is enough
    try:
        run.feed_lines(read_lines(path, offset=start, line=line, end=end, progress=cb))
        run.finish()
    except OSError as exc:
        raise LogError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    finally:
        reader.coalesce = False
    return run.records - before


def load_run(path: str, fmt: str | None = None, settings: Settings | None = None,
             progress: Callable[[int, int], None] | None = None, *, parallel: bool = False,
             cache: RunCache | None = None) -> Run:
    """Read a whole log file into a :class:`~ctxwatch.engine.run.Run`.

    Args:
        path: the log file.
        fmt: format name, or ``None`` to detect.
        settings: thresholds.
        progress: called with ``(bytes_read, total_bytes)`` while reading.
        parallel: a big file of independent records may be read by worker processes
            (:func:`ctxwatch.engine.reading.read_ranges`); the run is the same.
        cache: read the file on from where its last read stopped (:mod:`ctxwatch.engine.cache`); the run is
            the same.  A cached read is a serial one.

    Raises:
        LogError: the file cannot be read or its format is unknown.
    """
    if cache is not None:
        from ctxwatch.engine.warm import open_warm, read_warm

        spec, found = open_warm(cache, path, fmt, settings)
        if not spec.document:
            run = read_warm(cache, path, spec, found, settings, progress)
            end_notes(run, path, run.records, fmt)
            return run
    else:
        spec = resolve_spec(path, fmt)
    run = Run(path, spec, settings)
    records = -1
    if parallel and progress is None:
        parts = read_ranges(path, spec, run.settings)
        if parts is not None:
            try:
                records = 0
                for calls, issues, n in parts:
                    run.add_accounted(calls, issues)
                    records += n
                from ctxwatch.catalog.windows import catalog_window

                # (the workers looked the windows up; ask here too, so that the start-up memo keeps them)
                for model, provider in {(c.model, c.provider) for c in run.calls}:
                    catalog_window(model, provider)
            except ParallelReadError:  # a worker died (memory?): read serially, slower but the same
                run = Run(path, spec, settings)
                records = -1
    if records < 0:
        records = read_file(run, path, progress=progress)
    end_notes(run, path, records, fmt)
    return run


def end_notes(run: Run, path: str, records: int, fmt: str | None) -> None:
    """The notes a whole read of ``path`` ends with: an ``empty_file`` note when it held no record, and a
    ``format_mismatch`` issue when a forced format read no call from its records."""
    if records == 0 and not run.issues:
        empty: Issue | None = empty_file_note(path)
        if empty is not None:
            run.issues.append(empty)
    if fmt and records and (not run.calls or nothing_in(run.calls)):
        run.issues.extend(format_mismatch(path, run.spec, records, run.issues, len(run.calls)))


def _read_range(path: str, fmt: str, start: int, end: int, settings: Settings
                ) -> tuple[list[Call], list[Issue], int]:
    """Worker task: read and account the records in ``[start, end)`` of ``path`` with a fresh run."""
    worker_start()
    spec = get_format(fmt)
    run = Run(path, spec, settings)
    records = read_whole(run, path, False, None, start, end, line_number_at(path, start))
    return run.calls, run.issues, records


def read_ranges(path: str, spec: FormatSpec, settings: Settings
                ) -> Iterator[tuple[list[Call], list[Issue], int]] | None:
    """Per-range ``(calls, issues, records)`` of a big file of independent records, read by workers in file
    order; ``None`` when a serial read is better (see :func:`workers_for`) or the format's records depend on
    each other.  The tokenizer is loaded before the fork, so the workers share it."""
    if not spec.records_independent or spec.document:
        return None
    try:
        size = os.path.getsize(path)
    except OSError:
        return None
    n = workers_for(size, MAX_WORKERS)
    if not n:
        return None
    ranges = line_ranges(path, n)
    if len(ranges) < 2:
        return None
    from ctxwatch.tokens import get_tokenizer

    get_tokenizer("o200k_base").load()  # (loaded once here rather than once per worker)
    return fork_map(_read_range, [(path, spec.name, a, b, settings) for a, b in ranges], len(ranges))
