"""Runs made of several files: a folder of logs, or batch request and result files joined by ``custom_id``.

A folder's logs are read oldest first into one run, with dedupe keys shared across files (a resumed session
copies earlier records into a new file).  Files are independent until their calls meet in the run, so a big
folder can be read by worker processes (the headless commands): each detects, reads and accounts a group of
files, and the main process adds their calls and issues in file order, merging duplicates by key exactly as a
serial read does.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

from ctxwatch.config import Settings
from ctxwatch.engine.cache import RunCache
from ctxwatch.engine.discovery import files_for, nothing_read, skipped_note
from ctxwatch.engine.files import Render, Result, file_size, parallel_outputs, read_one
from ctxwatch.engine.opening import (
    LogError,
    empty_file_note,
    format_mismatch,
    nothing_in,
    resolve_spec,
)
from ctxwatch.engine.parallel import ParallelReadError
from ctxwatch.engine.reading import read_file
from ctxwatch.engine.run import Run
from ctxwatch.formats import FormatSpec, get_format, joined_formats
from ctxwatch.model import Issue

#: Called as a folder's files are read: ``(files done, files in all, bytes read, bytes to read)``, the bytes
#: being those the cache does not hold yet (every byte without a cache).
FolderProgress = Callable[[int, int, int, int], None]


def load_many(paths: list[str], fmt: str | None, settings: Settings | None = None, *,
              parallel: bool = False, cache: RunCache | None = None, render: Render | None = None,
              progress: FolderProgress | None = None) -> Run:
    """One :class:`Run` over several log files (folders expanded).

    ``parallel``: detect and parse big folders in worker processes (see the module docstring); ``cache``: read
    each file on from where its last read stopped (:mod:`ctxwatch.engine.cache`).  The result is the same.
    ``render``: each file's calls are also written as the command writes them where the file is read (in the
    workers), in :attr:`Run.rendered` (:mod:`ctxwatch.engine.files`).  ``progress``: told of each file done
    (:data:`FolderProgress`).

    Raises:
        LogError: no readable log among the paths.
    """
    files, not_logs = files_for(paths)
    run = _read_files(paths, files, fmt, settings, parallel, cache, render, progress)
    run.issues.extend(not_logs)
    _drop_answered_subagent_notes(run)
    return run


def _drop_answered_subagent_notes(run: Run) -> None:
    """Drop the note that a Claude Code session ran subagents whose transcripts were not read
    (:data:`~ctxwatch.formats.claude_code.SUBAGENT_COPIES`) where the run holds calls of a subagent context of
    that session other than the compaction summarizer's (``agent-acompact-*``, which no ``agent_progress`` line
    copies): its subagents' transcripts were read after all (a folder)."""
    from ctxwatch.formats.claude_code import SUBAGENT_COPIES

    noted = {i.path for i in run.issues if i.kind == SUBAGENT_COPIES}
    if not noted:
        return
    sessions_of = {c.source.path: c.session for c in run.calls if c.context == "main" and c.source.path in noted}
    with_agents = {c.session for c in run.calls
                   if c.context.startswith("agent-") and not c.context.startswith("agent-acompact")}
    run.issues = [i for i in run.issues
                  if not (i.kind == SUBAGENT_COPIES and sessions_of.get(i.path) in with_agents)]


def _read_files(paths: list[str], files: list[str], fmt: str | None, settings: Settings | None,
                parallel: bool, cache: RunCache | None = None, render: Render | None = None,
                progress: FolderProgress | None = None) -> Run:
    """The run of :func:`load_many` from its expanded ``files`` (oldest first)."""
    cache_path = cache.path if cache is not None else None
    todo = None
    if cache is not None:
        # (what the cache does not hold is what workers would read: for a folder read before, little or nothing)
        key_settings = settings or Settings()
        todo = [cache.unread(f, cache.key(f, fmt, key_settings)) for f in files]
    results = parallel_outputs(files, fmt, settings, cache_path, todo, render) if parallel else None
    if results is None and cache is not None:
        # (each file read by a run of its own, through the cache, and the runs merged as the workers' are)
        results = (read_one(f, fmt, settings, cache, render) for f in files)
    sizes = (todo if todo is not None else [file_size(f) for f in files]) if progress else []
    told = _Told(progress, sizes) if progress else None
    if results is not None:
        if told is not None:
            results = told.each(results)
        try:
            run = _assemble(paths, files, results, settings, render is not None)
        except ParallelReadError:
            run = None  # a worker died (memory?): the serial read below gives the same run, slower
        if run is not None:
            return run
    specs: dict[str, FormatSpec | None] = {}
    why: dict[str, LogError] = {}
    blank: dict[str, Issue] = {}  # (empty logs: a note each, and their format none of the run's, as in _assemble)
    for f in files:
        try:
            specs[f] = resolve_spec(f, fmt)
        except LogError as exc:
            specs[f], why[f] = None, exc
        else:
            if (note := empty_file_note(f)) is not None:
                blank[f] = note
    # (every log empty: the run is in their format, a log with no call yet, as one empty file is)
    all_blank = len(blank) == len(specs) - len(why)
    counted = [f for f, s in specs.items() if s is not None and (f not in blank or all_blank)]
    names = {s.name for f in counted if (s := specs[f]) is not None}
    if names and names <= joined_formats():
        return _batch_run([f for f in counted if f not in blank], names, settings)
    first = next((s for f in counted if (s := specs[f]) is not None and not s.joined), None)
    if first is None:
        raise nothing_read(paths, [skipped_note(f, why.get(f)) for f in files if specs[f] is None])
    run = Run(" + ".join(paths), first, settings)
    run.formats = sorted(names, key=lambda n: (n != first.name, n))  # (the run's own format first)
    batch: list[str] = []
    with_calls: list[str] = []
    told = _Told(progress, sizes) if progress else None  # (afresh: a parallel read that failed told of some)
    for f in told.paths(files) if told is not None else files:
        spec = specs[f]
        if spec is None or f in blank:
            run.issues.append(blank[f] if f in blank else skipped_note(f, why.get(f)))
            continue
        if spec.joined:
            batch.append(f)  # joined by custom_id below, never read as calls of their own
            continue
        first_call = len(run.calls)
        parsed = run.parsed_calls
        try:
            records = read_file(run, f, spec)
            if run.parsed_calls != parsed:
                with_calls.append(f)
        except LogError as exc:  # (detected, then unreadable: removed or permissions changed meanwhile)
            run.issues.append(Issue(f, 0, "unreadable", str(exc)))
            records = 0
        run.settle_copies()  # (the file's latest call is known now: which file each copied call belongs to)
        if fmt and run.parsed_calls == parsed:  # (a file of copies of earlier calls did read as calls)
            run.issues.extend(format_mismatch(f, spec, records, run.issues))
        elif fmt and nothing_in(run.calls[first_call:]):
            run.issues.extend(format_mismatch(f, spec, records, run.issues, len(run.calls) - first_call))
        _own_sessions(run, first_call)
    _note_copies(run, with_calls)
    _add_batch(run, batch)
    run.path = str(Path(paths[0])) if len(paths) == 1 else run.path
    return run




class _Told:
    """What a :data:`FolderProgress` is told: each file's bytes to read (``sizes``, in file order) once it is
    read."""

    def __init__(self, progress: FolderProgress, sizes: list[int]) -> None:
        self.progress, self.sizes = progress, sizes
        self.total = sum(sizes)
        self.files = self.read = 0

    def each(self, results: Iterator[Result]) -> Iterator[Result]:
        """``results`` (one per file, in file order), telling of each as it comes."""
        for result in results:
            self._next()
            yield result

    def paths(self, files: list[str]) -> Iterator[str]:
        """``files``, telling of each once the loop over them has read it (asks for the next)."""
        for f in files:
            yield f
            self._next()

    def _next(self) -> None:
        if self.files < len(self.sizes):
            self.read += self.sizes[self.files]
            self.files += 1
        self.progress(self.files, len(self.sizes), self.read, self.total)


def _batch_run(files: list[str], names: set[str], settings: Settings | None) -> Run:
    """A run of batch files only: requests joined to results by ``custom_id``."""
    from ctxwatch.formats.batch import read_batch_pair

    calls, issues = read_batch_pair(files)
    run = Run(" + ".join(files), get_format(sorted(names)[0]), settings)
    run.add(calls)
    run.issues.extend(issues)
    _own_sessions(run, 0)  # (one batch, one session: named by its file, as in a mixed folder)
    return run


def _add_batch(run: Run, files: list[str]) -> None:
    """Add the batch files of a mixed folder, joined by ``custom_id`` (a request file read on its own would
    give every request as a call without usage, beside the joined ones)."""
    if not files:
        return
    from ctxwatch.formats.batch import read_batch_pair

    calls, issues = read_batch_pair(files)
    first_call = len(run.calls)
    run.add(calls)
    run.issues.extend(issues)
    _own_sessions(run, first_call)


#: Note kind: every call read from a log is a copy of a call kept with another file of the folder.
COPIES_ELSEWHERE = "copies_elsewhere"


def _note_copies(run: Run, with_calls: list[str]) -> None:
    """A :data:`COPIES_ELSEWHERE` note for each of ``with_calls`` (the files calls were read from, in order) none
    of whose calls the run keeps with it: each was a copy of a call of another file, which keeps it (a resumed
    Claude Code session, a copied transcript).  Without the note such a log, listed by the dashboard's session
    picker, would be missing from ``report --sessions`` with no word."""
    kept = {c.source.path for c in run.calls}
    run.issues.extend(Issue(f, 0, COPIES_ELSEWHERE,
                            "every call read from it is a copy of a call of another file of the folder (a resumed "
                            "or copied session, a log written twice): each is counted once, with that file, so this "
                            "log has no session row of its own") for f in with_calls if f not in kept)


def _own_sessions(run: Run, first_call: int) -> None:
    """A log with no session ids is one session of its own: unrelated files in one folder must not be
    analysed as one conversation (false compactions between the last call of one and the next file).
    Calls from ``first_call`` on without a session get their file's name."""
    for call in run.calls[first_call:]:
        if call.session is None:
            call.session = os.path.basename(call.source.path)


def _assemble(paths: list[str], files: list[str], results: Iterator[Result], settings: Settings | None,
              rendered: bool = False
              ) -> Run | None:
    """The run from the workers' per-file results (calls already accounted), added in file order as they
    arrive, with dedupe keys shared across files exactly as a serial read shares them.  ``None`` when every
    recognised file is a batch file: those are joined across files, which the serial path does.

    Raises:
        LogError: no file in a recognised format.
    """
    run: Run | None = None
    skipped: list[Issue] = []
    names: set[str] = set()
    empty: list[str] = []  # (the formats empty files were taken for: none of the run's unless every file is empty)
    batch: list[str] = []
    with_calls: list[str] = []
    for f in files:
        name, calls, issues, pending, pieces = next(results)
        if name is None or (not calls and issues and all(i.kind == "empty_file" for i in issues)):
            skipped.extend(issues)
            if name is not None:
                empty.append(name)
            continue
        names.add(name)
        if name in joined_formats():
            batch.append(f)  # joined by custom_id at the end, as the serial read does
            continue
        spec = get_format(name)
        if run is None:
            run = Run(" + ".join(paths), spec, settings)
        run.issues.extend(skipped)
        skipped = []
        first_call = len(run.calls)
        run.add_accounted(calls, issues)
        if calls:
            with_calls.append(f)
        if rendered and pieces is not None:
            run.rendered.update((id(c), (c, pieces, i, calls)) for i, c in enumerate(calls))
        run.reader = spec.reader(f)
        run.set_pending_compactions(pending)
        _own_sessions(run, first_call)
    if names and names <= joined_formats():
        return None
    if run is None and empty:  # (a folder of empty logs: a log with no call yet, as one empty file is)
        run, names = Run(" + ".join(paths), get_format(empty[0]), settings), set(empty)
    if run is None:
        raise nothing_read(paths, skipped)
    run.formats = sorted(names, key=lambda n: (n != run.spec.name, n))  # (the run's own format first)
    run.issues.extend(skipped)
    _note_copies(run, with_calls)
    _add_batch(run, batch)
    run.path = str(Path(paths[0])) if len(paths) == 1 else run.path
    return run


