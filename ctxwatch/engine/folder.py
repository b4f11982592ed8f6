"""Runs made of several files: a batch input/output pair, or a folder of logs.

A folder of session logs (a Claude Code project folder, a Codex sessions tree) is read file by file in
modification order into one run, with dedupe keys shared across files (a resumed session copies earlier
records into a new file: failure case B11).  Batch input and output files are joined by ``custom_id``.

Files are independent until their calls meet in the run, so a big folder can be read by worker processes
(``parallel=True``, used by the headless commands; see :mod:`ctxwatch.engine.parallel`): each worker detects, reads
and accounts a group of files, and the main process adds their calls and issues in file order, merging
duplicates by key exactly as a serial read would.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

from ctxwatch.config import Settings
from ctxwatch.engine.parallel import ParallelReadError, fork_map, worker_start, workers_for
from ctxwatch.engine.run import (
    JSON_ARRAY_NOTE,
    JsonArray,
    LogError,
    Run,
    UnknownFormat,
    check_log_file,
    format_mismatch,
    resolve_spec,
)
from ctxwatch.formats import FormatSpec, get_format
from ctxwatch.model import Call, Issue

#: Bytes of logs per worker task: small enough to balance the workers, large enough that the per-task
#: overhead (pickling the parsed calls back) stays small.
TASK_BYTES = 8 * 1024 * 1024

#: File name endings read when a folder is given.
LOG_SUFFIXES = (".jsonl", ".json", ".traj", ".eval")
#: Compressed logs (rotated and archived by log shippers): not read (detail views re-read message bodies by
#: byte offset, which a compressed stream cannot serve), but named in a note rather than left out unseen.
COMPRESSED_SUFFIXES = tuple(f"{s}{z}" for s in LOG_SUFFIXES for z in (".gz", ".bz2", ".xz", ".zst"))
#: The message of a compressed log's ``skipped_file`` note (matched to count those notes).
COMPRESSED_NOTE = "compressed log: not read; decompress it to include it"


def list_logs(folder: str, skipped: list[Issue] | None = None) -> list[str]:
    """Log files under ``folder`` (recursively), newest first by modification time.

    Only regular files (symlinks to them included): a FIFO or a device named ``*.jsonl`` would block a read.
    ``skipped``: when given, receives an ``unreadable`` issue for each log-named file that is not read (a
    pipe, a device, a dangling link or a link loop), so that none is left out unseen.
    """
    found: list[tuple[float, str]] = []
    ids: dict[tuple[int, int], list[str]] = {}

    def unreadable_folder(exc: OSError) -> None:
        # (a subfolder that cannot be listed, say for its permissions, would leave its logs out unseen)
        if skipped is not None and exc.filename is not None:
            where = os.fsdecode(exc.filename)
            skipped.append(Issue(where, 0, "unreadable", f"{where}: folder cannot be read "
                                                       f"({exc.strerror or exc}); its logs are not read"))

    for root, _dirs, files in os.walk(folder, onerror=unreadable_folder):
        for name in sorted(files):
            if name.endswith(COMPRESSED_SUFFIXES) and skipped is not None:
                skipped.append(Issue(os.path.join(root, name), 0, "skipped_file", COMPRESSED_NOTE))
                continue
            if name.endswith(LOG_SUFFIXES):
                p = os.path.join(root, name)
                try:
                    check_log_file(p)
                    st = os.stat(p)
                except (LogError, OSError) as exc:
                    if skipped is not None:
                        skipped.append(Issue(p, 0, "unreadable", f"{exc}; skipped"))
                    continue
                ids.setdefault((st.st_dev, st.st_ino), []).append(p)
                found.append((st.st_mtime, p))
    # A link to a log of the same folder (latest.jsonl -> run-3.jsonl) or a hard link is one log: read once,
    # under its own name rather than a link's.
    dropped: set[str] = set()
    for names in ids.values():
        if len(names) > 1:
            keep = min(names, key=lambda n: (os.path.islink(n), n))
            for n in names:
                if n != keep:
                    dropped.add(n)
                    if skipped is not None:
                        skipped.append(_same_file(n, keep))
    return [p for _, p in sorted(found, reverse=True) if p not in dropped]


def _same_file(path: str, first: str) -> Issue:
    """The note of a path that names a log already read under another name (a link, or given twice)."""
    what = "given twice" if path == first else f"the same file as {first}"
    return Issue(path, 0, "same_file", f"{what}; read once")


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
    line.  A file's modification time says only when it was last written or copied (a copied folder of logs
    has one time for every file)."""
    best_any: float | None = None
    any_at = 0  # where (bytes from the end) the first timestamp was found
    try:
        with open(path, "rb") as fh:
            end = os.fstat(fh.fileno()).st_size
            start = end
            while start > 0 and end - start < ACTIVITY_MAX_BYTES \
                    and (best_any is None or end - start - any_at < ACTIVITY_CALL_SEARCH_BYTES):
                start = max(0, start - ACTIVITY_CHUNK_BYTES)
                fh.seek(start)
                # (a chunk overlaps the next by 64 bytes, so that a value cut at a chunk's edge is seen whole)
                tail = fh.read(min(end, start + ACTIVITY_CHUNK_BYTES + 64) - start)
                best_call: float | None = None
                for line in tail.split(b"\n"):
                    found = max(_timestamps(line), default=None)
                    if found is None:
                        continue
                    if best_any is None:
                        any_at = end - start
                    if best_any is None or found > best_any:
                        best_any = found
                    if any(mark in line for mark in _CALL_MARKS) and (best_call is None or found > best_call):
                        best_call = found
                if best_call is not None:
                    return best_call, True
    except OSError:
        return best_any, False
    return best_any, False


def load_many(paths: list[str], fmt: str | None, settings: Settings | None = None, *,
              parallel: bool = False) -> Run:
    """One :class:`Run` over several log files (folders expanded).

    ``parallel``: detect and parse big folders in worker processes (see the module docstring); the result is
    the same.

    Raises:
        LogError: no readable log among the paths.
    """
    files: list[str] = []
    not_logs: list[Issue] = []  # log-named entries of the folders that cannot be read (pipes, broken links)
    for p in paths:
        if os.path.isdir(p):
            files.extend(reversed(list_logs(p, not_logs)))  # oldest first, so calls appear in time order
        else:
            check_log_file(p)  # (a path named on its own must be a log: a pipe or a missing file is an error)
            files.append(p)
    files = unique_files(files, not_logs)
    if not files:
        if not_logs:
            raise _nothing_read(paths, not_logs)
        raise LogError(f"{', '.join(paths)}: no log files found")
    run = _read_files(paths, files, fmt, settings, parallel)
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


def unique_files(files: list[str], notes: list[Issue] | None = None) -> list[str]:
    """``files`` with each file once (a path given twice, a file also inside a given folder, links), in order;
    a ``same_file`` note in ``notes`` for each one dropped.  Logs without ids (claude-trace, id-less canonical
    records) would otherwise count every call twice."""
    seen: dict[tuple[int, int], str] = {}
    out: list[str] = []
    for f in files:
        try:
            st = os.stat(f)
        except OSError:
            out.append(f)  # (reported when it is read)
            continue
        key = (st.st_dev, st.st_ino)
        if key in seen:
            if notes is not None:
                notes.append(_same_file(f, seen[key]))
        else:
            seen[key] = f
            out.append(f)
    return out


def _read_files(paths: list[str], files: list[str], fmt: str | None, settings: Settings | None,
                parallel: bool) -> Run:
    """The run of :func:`load_many` from its expanded ``files`` (oldest first)."""
    results = _parallel_outputs(files, fmt, settings) if parallel else None
    if results is not None:
        try:
            run = _assemble(paths, files, results, settings)
        except ParallelReadError:
            run = None  # a worker died (memory?): the serial read below gives the same run, slower
        if run is not None:
            return run
    specs: dict[str, FormatSpec | None] = {}
    why: dict[str, LogError] = {}
    for f in files:
        try:
            specs[f] = resolve_spec(f, fmt)
        except LogError as exc:
            specs[f], why[f] = None, exc
    names = {s.name for s in specs.values() if s is not None}
    if names and names <= BATCH_FORMATS:
        return _batch_run([f for f in files if specs[f] is not None], names, settings)
    first = next((s for s in specs.values() if s is not None and s.name not in BATCH_FORMATS), None)
    if first is None:
        raise _nothing_read(paths, [skipped_note(f, why.get(f)) for f in files if specs[f] is None])
    run = Run(" + ".join(paths), first, settings)
    run.formats = sorted(names, key=lambda n: (n != first.name, n))  # (the run's own format first)
    batch: list[str] = []
    for f in files:
        spec = specs[f]
        if spec is None:
            run.issues.append(skipped_note(f, why.get(f)))
            continue
        if spec.name in BATCH_FORMATS:
            batch.append(f)  # joined by custom_id below, never read as calls of their own
            continue
        first_call = len(run.calls)
        parsed = run.parsed_calls
        try:
            records = run.read_file(f, spec)
        except LogError as exc:  # (detected, then unreadable: removed or permissions changed meanwhile)
            run.issues.append(Issue(f, 0, "unreadable", str(exc)))
            records = 0
        run.settle_copies()  # (the file's latest call is known now: which file each copied call belongs to)
        if fmt and run.parsed_calls == parsed:  # (a file of copies of earlier calls did read as calls)
            run.issues.extend(format_mismatch(f, spec, records, run.issues))
        _own_sessions(run, first_call)
    _add_batch(run, batch)
    run.path = str(Path(paths[0])) if len(paths) == 1 else run.path
    return run


def _nothing_read(paths: list[str], skipped: list[Issue]) -> LogError:
    """The error of a folder where no file gave a log: the first unreadable file and why, when some could not
    be read (permissions); the first compressed one, when all are compressed; else "no log in a recognised
    format"."""
    where = ", ".join(paths)
    unreadable = [i for i in skipped if i.kind == "unreadable"]
    if unreadable:
        more = len(unreadable) - 1
        also = f" (and {more} more unreadable file{'s' if more != 1 else ''})" if more else ""
        rest = len(skipped) - len(unreadable)
        also += f"; {rest} other file{'s' if rest != 1 else ''} in no known format" if rest else ""
        return LogError(f"{where}: no log could be read: {unreadable[0].message}{also}")
    compressed = [i for i in skipped if i.message == COMPRESSED_NOTE]
    if compressed and len(compressed) == len(skipped):
        others = f" (and {len(compressed) - 1} more)" if len(compressed) > 1 else ""
        return LogError(f"{where}: no log could be read: {compressed[0].path} is compressed{others}; decompress "
                        "it first")
    arrays = [i for i in skipped if i.message.startswith(JSON_ARRAY_NOTE)]
    if arrays:  # (the way to read it is worth more than "no log")
        what = arrays[0].message.removesuffix("; skipped")
        return LogError(f"{where}: no log could be read: {arrays[0].path} is {what}")
    return LogError(f"{where}: no log in a recognised format")


def skipped_note(path: str, why: LogError | None) -> Issue:
    """The issue of a file in a folder that is not read: unreadable (with the reason) or in no known format."""
    if why is not None and not isinstance(why, UnknownFormat):
        return Issue(path, 0, "unreadable", str(why))
    if isinstance(why, JsonArray):
        return Issue(path, 0, "skipped_file", f"{str(why).removeprefix(f'{path}: ')}; skipped")
    return Issue(path, 0, "skipped_file", "format not recognised; skipped")


def _batch_run(files: list[str], names: set[str], settings: Settings | None) -> Run:
    """A run of batch files only: requests joined to results by ``custom_id``."""
    from ctxwatch.formats.batch import read_batch_pair

    calls, issues = read_batch_pair(files)
    run = Run(" + ".join(files), get_format(sorted(names)[0]), settings)
    run.add(calls)
    run.issues.extend(issues)
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


#: Formats whose files are joined into calls across files (by ``custom_id``), not read one by one.
BATCH_FORMATS = frozenset({"openai-batch", "anthropic-batch"})


def _own_sessions(run: Run, first_call: int) -> None:
    """A log with no session ids is one session of its own: unrelated files in one folder must not be
    analysed as one conversation (false compactions between the last call of one and the next file).
    Calls from ``first_call`` on without a session get their file's name."""
    for call in run.calls[first_call:]:
        if call.session is None:
            call.session = os.path.basename(call.source.path)


def _assemble(paths: list[str], files: list[str], results: Iterator[_Result], settings: Settings | None
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
    batch: list[str] = []
    for f in files:
        name, calls, issues, pending = next(results)
        if name is None:
            skipped.extend(issues)
            continue
        names.add(name)
        if name in BATCH_FORMATS:
            batch.append(f)  # joined by custom_id at the end, as the serial read does
            continue
        spec = get_format(name)
        if run is None:
            run = Run(" + ".join(paths), spec, settings)
        run.issues.extend(skipped)
        skipped = []
        first_call = len(run.calls)
        run.add_accounted(calls, issues)
        run.reader = spec.reader(f)
        run.set_pending_compactions(pending)
        _own_sessions(run, first_call)
    if names and names <= BATCH_FORMATS:
        return None
    if run is None:
        raise _nothing_read(paths, skipped)
    run.formats = sorted(names, key=lambda n: (n != run.spec.name, n))  # (the run's own format first)
    run.issues.extend(skipped)
    _add_batch(run, batch)
    run.path = str(Path(paths[0])) if len(paths) == 1 else run.path
    from ctxwatch.accounting.windows import catalog_window

    # (the workers looked the windows up; ask here too, so that the start-up memo keeps them)
    for model, provider in {(c.model, c.provider) for c in run.calls}:
        catalog_window(model, provider)
    return run


#: Per file: its format's name (``None``: not recognised), its calls (accounted, each once, in order of
#: first appearance), its issues, its reader's pending compactions.
_Result = tuple[str | None, list[Call], list[Issue], dict]


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _read_group(group: list[str], fmt: str | None, settings: Settings | None) -> list[_Result]:
    """Worker task: each file detected (or ``fmt``), read whole and accounted by a run of its own.

    The accounting needs nothing from other files: a Claude Code call read without its history takes the
    floor of a call of its own file (:mod:`ctxwatch.accounting`), and the main process merges duplicates
    across files by key.  Returns, per file, its format's name, its calls, its issues and its reader's
    pending compactions.  A file that cannot be read gives an ``unreadable`` issue (the serial read would
    stop with :class:`LogError`; a folder keeps going).
    """
    worker_start()
    out: list[_Result] = []
    for path in group:
        try:
            spec = resolve_spec(path, fmt)
        except LogError as exc:
            out.append((None, [], [skipped_note(path, exc)], {}))
            continue
        if spec.name in BATCH_FORMATS:
            out.append((spec.name, [], [], {}))  # (joined across files by the main process)
            continue
        run = Run(path, spec, settings)
        try:
            records = run.read_file(path)
        except LogError as exc:
            run.issues.append(Issue(path, 0, "unreadable", str(exc)))
            records = 0
        if fmt and not run.calls:
            run.issues.extend(format_mismatch(path, spec, records, run.issues))
        out.append((spec.name, run.calls, run.issues, run.pending_compactions()))
    return out


def _parallel_outputs(files: list[str], fmt: str | None, settings: Settings | None = None
                      ) -> Iterator[_Result] | None:
    """Per-file results of :func:`_read_group`, in file order, from worker processes; ``None`` when a serial
    read is better (:func:`ctxwatch.engine.parallel.workers_for`)."""
    sizes = [_size(f) for f in files]
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
    from ctxwatch.tokens import get_tokenizer

    get_tokenizer("o200k_base")  # (loaded once here rather than once per worker)
    per_group = fork_map(_read_group, [(g, fmt, settings) for g in groups], workers)
    if per_group is None:
        return None
    return (result for group in per_group for result in group)
