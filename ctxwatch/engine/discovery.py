"""Finding the logs of folders: which files are logs, each once, newest first, and notes for those left out.

A folder of sessions (a Claude Code project folder, a Codex sessions tree) holds logs beside files that are not
(a config an agent writes, compressed archives, pipes): every file left out gets a note, as ``report`` gives it,
so that none is missed unseen.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from ctxwatch.engine.activity import activity_of
from ctxwatch.engine.opening import (
    JSON_ARRAY_NOTE,
    LogError,
    NotAFile,
    UnknownFormat,
    check_log_file,
    resolve_spec,
)
from ctxwatch.model import Issue

#: File name endings read when a folder is given, in any case (a file of any name is read when named itself).
LOG_SUFFIXES = (".jsonl", ".ndjson", ".json", ".traj", ".eval")
#: Compressed logs (rotated and archived by log shippers): not read (detail views re-read message bodies by
#: byte offset, which a compressed stream cannot serve), but named in a note rather than left out unseen.
COMPRESSED_SUFFIXES = tuple(f"{s}{z}" for s in LOG_SUFFIXES for z in (".gz", ".bz2", ".xz", ".zst"))
#: The message of a compressed log's ``skipped_file`` note (matched to count those notes).
COMPRESSED_NOTE = "compressed log: not read; decompress it to include it"






def list_logs(folder: str, skipped: list[Issue] | None = None) -> list[str]:
    """Log files under ``folder`` (recursively), newest first by modification time.

    Only regular files (symlinks to them included): a FIFO or a device named ``*.jsonl`` would block a read.
    ``skipped``: when given, receives an issue for each log-named file that is not read: a ``skipped_file``
    note for a pipe, a device or a socket (no log), an ``unreadable`` issue for a dangling link or a link loop;
    and a ``skipped_file`` note for each link to a folder (not followed), so that none is left out unseen.
    """
    found: list[tuple[float, str]] = []
    ids: dict[tuple[int, int], list[str]] = {}

    def unreadable_folder(exc: OSError) -> None:
        # (a subfolder that cannot be listed, say for its permissions, would leave its logs out unseen)
        if skipped is not None and exc.filename is not None:
            where = os.fsdecode(exc.filename)
            skipped.append(Issue(where, 0, "unreadable", f"{where}: folder cannot be read "
                                                       f"({exc.strerror or exc}); its logs are not read"))

    for root, dirs, files in os.walk(folder, onerror=unreadable_folder):
        if skipped is not None:
            for name in sorted(dirs):
                if os.path.islink(p := os.path.join(root, name)):
                    # (not followed, so that a link loop or a folder linked twice is not read again and again)
                    skipped.append(Issue(p, 0, "skipped_file", "a link to a folder, not followed; name its "
                                                               "folder to read the logs in it"))
        for name in sorted(files):
            lower = name.lower()  # (RUN.JSONL is a log as run.jsonl is)
            if lower.endswith(COMPRESSED_SUFFIXES) and skipped is not None:
                skipped.append(Issue(os.path.join(root, name), 0, "skipped_file", COMPRESSED_NOTE))
                continue
            if lower.endswith(LOG_SUFFIXES):
                p = os.path.join(root, name)
                try:
                    check_log_file(p)
                    st = os.stat(p)
                except (LogError, OSError) as exc:
                    if skipped is not None:
                        # (a pipe, a device or a socket named like a log is no log: a note, as other files of
                        # the folder that are not logs are; a log that cannot be read stays unreadable)
                        kind = "skipped_file" if isinstance(exc, NotAFile) else "unreadable"
                        skipped.append(Issue(p, 0, kind, f"{exc}; skipped"))
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


def skipped_note(path: str, why: LogError | None) -> Issue:
    """The issue of a file in a folder that is not read: unreadable (with the reason) or in no known format."""
    if why is not None and not isinstance(why, UnknownFormat):
        return Issue(path, 0, "unreadable", str(why))
    if isinstance(why, UnknownFormat) and not str(why).startswith(f"{path}: format not recognised"):
        # (what the file is, as the error of the file given alone says it: binary data, compressed, UTF-16,
        # one JSON array, a pretty-printed record)
        return Issue(path, 0, "skipped_file", f"{str(why).removeprefix(f'{path}: ')}; skipped")
    return Issue(path, 0, "skipped_file", "format not recognised; skipped")



def list_paths(paths: Sequence[str], notes: list[Issue] | None = None) -> list[str]:
    """The log files named by ``paths``: folders expanded with :func:`list_logs`, files as given
    (if they exist); newest first, each file once (by device and inode: ``run.jsonl ./run.jsonl``, a link).
    ``notes``, when given, receives :func:`list_logs`' notes about files of the folders that
    are not read (compressed logs, pipes).

    Newest is by the last call's timestamp, as ``report`` orders sessions (a copied folder gives every file the
    same modification time); files whose calls carry no timestamp come after them, by modification time (as
    report puts sessions without timestamps last)."""
    named: list[str] = []
    for p in paths:
        try:
            if os.path.isdir(p):
                named.extend(list_logs(p, notes))
            elif os.path.isfile(p):
                named.append(p)
        except OSError:
            continue
    found: dict[str, tuple[bool, float]] = {}
    for f in unique_files(named):  # (a file named twice, or by a link, is one session)
        try:
            act, content = activity_of(f)
        except OSError:
            continue
        found[f] = (content, act)
    return sorted(found, key=lambda f: found[f], reverse=True)


#: What :func:`log_files` remembers of a file: modification time, size in bytes, whether it is a log, its
#: format's name (``None``: not detected) and why it is not a log (``None``: it is, or no reason to give).
FileMemo = tuple[float, int, bool, str | None, UnknownFormat | None]


def log_files(paths: Sequence[str], fmt: str | None = None,
              memo: dict[str, FileMemo] | None = None) -> tuple[list[str], list[Issue]]:
    """:func:`list_paths`, without the files found in a folder that are in no known format (a ``config.json``
    an agent writes beside its logs, a plan exported into the folder): those are not sessions, and following
    the newest of them would replace a readable session by an error.  Files named on their own, and every file
    under a forced ``fmt``, are kept.

    Args:
        paths: files and folders, as given to the dashboard.
        fmt: the forced format, or ``None`` (detect).
        memo: ``path ->`` :data:`FileMemo`, kept between calls, so that an unchanged file is detected once (a
            file that was not recognised is detected again when it changes).

    Returns:
        ``(logs, left_out)``: the log files, newest first, and a ``skipped_file`` note for each file of the
        folders that was left out, as ``report`` gives them: in no known format, or compressed (a folder holding
        only those is not empty), or an ``unreadable`` one (a pipe, a dangling link).
    """
    from ctxwatch.formats import joined_formats

    notes: list[Issue] = []
    files = list_paths(paths, notes)
    if fmt:
        return files, notes
    named = {os.path.abspath(p) for p in paths if not os.path.isdir(p)}
    memo = {} if memo is None else memo
    out = []
    for f in files:
        if os.path.abspath(f) in named:
            out.append(f)
            continue
        try:
            st = os.stat(f)
        except OSError:
            continue
        known = memo.get(f)
        if known is None or known[:2] != (st.st_mtime, st.st_size):
            name, why = None, None
            try:
                # An empty file reads as a log being created, but JSON documents (.json, .traj) are written
                # whole: an empty one is not a session yet (a settings.json being created).
                ok = st.st_size > 0 or f.endswith(".jsonl")
                if ok:
                    name = resolve_spec(f, None).name
            except UnknownFormat as exc:
                ok, why = False, exc  # (a JSON array of records: the note says how to convert it)
            except LogError:
                ok = True  # unreadable now (permissions, a race): the feed says why when it is opened
            known = memo[f] = (st.st_mtime, st.st_size, ok, name, why)
        if known[2]:
            out.append(f)
        else:
            notes.append(skipped_note(f, known[4]))
    batch = [f for f in out if f in memo and memo[f][3] in joined_formats() and os.path.abspath(f) not in named]
    if batch and len(batch) < len(out):
        # Batch files beside sessions: a request file alone would show every request without its usage, a
        # result file alone every result without its prompt; they are joined only together (as the folder's
        # report joins them), so they are named instead of listed as sessions.
        for f in batch:
            out.remove(f)
            notes.append(Issue(f, 0, "skipped_file", BATCH_BESIDE_SESSIONS_NOTE))
    return out, notes


#: The note of a batch file in a folder that also holds session logs (:func:`log_files`).
BATCH_BESIDE_SESSIONS_NOTE = ("batch file beside session logs: not a session of its own; open the batch files "
                              "together (ctxwatch IN OUT), or `ctxwatch report FOLDER` joins them")


def is_batch_set(files: Sequence[str], fmt: str | None = None) -> bool:
    """True when ``files`` are batch files to open as one joined run: every file whose format is recognised
    (``fmt``, or detected) is an OpenAI or Anthropic batch file (:func:`~ctxwatch.formats.joined_formats`), and at
    least one is.
    Files of no known format are left to the join, which reports them; the first file of another format
    (a Claude Code session, a Codex rollout) ends the check, so a folder of sessions costs one detection."""
    from ctxwatch.formats import detect

    found = False
    for f in files:
        try:
            # (detected, not resolved: an empty file, say a result file about to be written, is no log of any
            # format yet and decides nothing; resolving it would call it a canonical log being written)
            spec = resolve_spec(f, fmt) if fmt else detect(f)
        except (LogError, OSError):
            continue
        if spec is None:
            continue
        if not spec.joined:
            return False
        found = True
    return found


def files_for(paths: list[str]) -> tuple[list[str], list[Issue]]:
    """The log files :func:`load_many` reads for ``paths`` (folders expanded, oldest first, each file once) and
    the notes on the log-named entries it cannot read (pipes, broken links, the same file twice).

    Raises:
        LogError: a path named on its own is no log file (a pipe, missing), or there is no log at all.
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
            raise nothing_read(paths, not_logs)
        raise LogError(f"{', '.join(paths)}: no log files found{_unlooked_clause(paths)}")
    return files, not_logs


def nothing_read(paths: list[str], skipped: list[Issue]) -> LogError:
    """The error of a folder where no file gave a log: the first unreadable file and why, when some could not
    be read (permissions); the first compressed one, when all are compressed; else "no log in a recognised
    format", with the folder's files of other names (:func:`other_files`), which were not looked at."""
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
    return LogError(f"{where}: no log in a recognised format{_unlooked_clause(paths)}")


def _unlooked_clause(paths: list[str]) -> str:
    """``; a folder is read for its *.jsonl, ... files, and`` :func:`unlooked_note`, or ``""`` when every file of
    the folders has a log's name."""
    unlooked = unlooked_note(paths)
    return f"; a folder is read for its {', '.join('*' + x for x in LOG_SUFFIXES)} files, and {unlooked}" \
        if unlooked else ""


def unlooked_note(paths: list[str]) -> str:
    """``2 other files are not looked at (notes.txt, session.log): name a file to read it`` for the files of other
    names under the folders among ``paths`` (:func:`other_files`), ``""`` when there are none."""
    unlooked = other_files(paths)
    if not unlooked:
        return ""
    n = len(unlooked)
    shown = ", ".join(unlooked[:3]) + (f" and {n - 3:,} more" if n > 3 else "")
    return f"{n:,} other file{'s are' if n != 1 else ' is'} not looked at ({shown}): name a file to read it"


def other_files(paths: list[str]) -> list[str]:
    """The names (relative to their folder) of the files under the folders among ``paths`` that a folder's read
    does not look at (neither a log's nor a compressed log's name ending), sorted; at most 1,000 listed."""
    out: list[str] = []
    for top in paths:
        if not os.path.isdir(top):
            continue
        for root, _dirs, files in os.walk(top):
            for name in sorted(files):
                if not name.lower().endswith(LOG_SUFFIXES + COMPRESSED_SUFFIXES):
                    out.append(os.path.relpath(os.path.join(root, name), top))
                    if len(out) >= 1000:
                        return sorted(out)
    return sorted(out)
