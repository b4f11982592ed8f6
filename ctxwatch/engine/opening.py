"""Opening a log: is it a log file at all, which format is it, and the notes of a file with nothing in it.

Every command and the dashboard open logs through here, so a pipe, a directory, a compressed file or a JSON array
of records gets the same clear error everywhere, naming the file.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from typing import TYPE_CHECKING

import orjson

from ctxwatch.model import Call, Issue
from ctxwatch.source.binary import looks_like_text, wide_encoding

if TYPE_CHECKING:
    from ctxwatch.formats import FormatSpec

#: Complete records after which a format not detected is an error rather than "wait for more": detection looks at
#: the first 50 values of the file's head.
DETECT_RECORDS = 50


class LogError(Exception):
    """A log cannot be read at all (missing, unreadable, unknown format); the message names the file."""


class UnknownFormat(LogError):
    """No format recognises the file (it can be read)."""


class NotAFile(LogError):
    """The path is there but is no regular file: a pipe, a device or a socket (:func:`check_log_file`)."""


#: How the message of :class:`JsonArray` begins after the path (a folder's ``skipped_file`` note starts with it).
JSON_ARRAY_NOTE = "one JSON array of "


class JsonArray(UnknownFormat):
    """The file is one JSON array of records of a known format (:func:`~ctxwatch.formats.array_of_records`):
    not read, and the message says how to convert it to one record per line."""


#: File types that are not logs, with the name an error gives them.
_NOT_REGULAR = ((stat.S_ISFIFO, "named pipe (FIFO)"), (stat.S_ISCHR, "character device"),
                (stat.S_ISBLK, "block device"), (stat.S_ISSOCK, "socket"))


def check_log_file(path: str, *, missing_ok: bool = False) -> None:
    """Raise :class:`LogError` unless ``path`` is a regular file (symbolic links followed).

    A pipe or a device named like a log (a FIFO blocks a read until a writer comes, ``/dev/zero`` never ends
    and filled memory without bound) is refused, and so are a directory, a dangling link and a link loop,
    each with its own reason.  ``missing_ok``: a path that does not exist yet passes (``--follow --format``
    waits for it).
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if missing_ok and not os.path.islink(path):
            return
        dangling = " (a symbolic link to a missing file)" if os.path.islink(path) else ""
        raise LogError(f"{path}: no such file{dangling}") from None
    except OSError as exc:  # a link loop (ELOOP), a path through a non-directory, no permission on a folder
        raise LogError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    if stat.S_ISDIR(st.st_mode):
        raise LogError(f"{path}: is a directory (give a log file)")
    for test, kind in _NOT_REGULAR:
        if test(st.st_mode):
            raise NotAFile(f"{path}: is a {kind}, not a log file (ctxwatch reads regular files)")


def detect(path: str) -> FormatSpec | None:
    """:func:`ctxwatch.formats.detect` (the readers imported only when a file is first detected)."""
    from ctxwatch.formats import detect as detect_format

    return detect_format(path)


def resolve_spec(path: str, fmt: str | None) -> FormatSpec:
    """The format of ``path``: ``fmt`` if given, else detected.

    Raises:
        LogError: the file does not exist (with ``fmt``: it may not exist yet), is not a regular file
            (:func:`check_log_file`), cannot be read, or no format recognises it.
    """
    from ctxwatch.formats import array_of_records, get_format, pretty_record, sniff_file

    if fmt:
        check_log_file(path, missing_ok=True)
        try:
            return get_format(fmt)
        except KeyError as exc:
            raise LogError(str(exc.args[0])) from exc
    check_log_file(path)
    try:
        spec = detect(path)
    except OSError as exc:
        raise LogError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    if spec is None:
        if _blank(path) or _one_unfinished_line(path):
            # An empty file (or one of blank lines), or one whose first record is still being written: wait for
            # records (the unfinished line is then a truncated tail, reported as such, not a file of unknown
            # format).
            return get_format("canonical")
        why = ""
        try:
            sn = sniff_file(path)
            if sn.head.startswith(_COMPRESSED_MAGIC):
                raise UnknownFormat(f"{path}: a compressed file (gzip, bzip2, xz or zstd): decompress it first "
                                    "(ctxwatch re-reads message bodies by byte offset), or pipe it in: zcat FILE | "
                                    "ctxwatch report - (or check -, plan -, schema -)")
            wide = wide_encoding(sn.head)
            if wide is not None:
                raise UnknownFormat(f"{path}: {wide} text, not UTF-8: convert it first (iconv -f {wide} -t UTF-8 "
                                    "FILE > FILE.jsonl)")
            if not sn.values and sn.document is None and sn.head.strip():
                if not looks_like_text(sn.head):
                    raise UnknownFormat(f"{path}: binary data, not a text log (its first {len(sn.head):,} bytes "
                                        "are not UTF-8 text)")
                why = f"; {sn.problem}" if sn.problem else "; none of its first lines is JSON"
            array = array_of_records(sn)
            if array is not None:
                n, elements = array
                how = _jq_advice(path, "'.[]'", "convert it with")
                raise JsonArray(f"{path}: {JSON_ARRAY_NOTE}{n:,} {elements.name} record{'s' if n != 1 else ''}, "
                                f"not one record per line: {how}")
            record = pretty_record(sn)
            if record is not None:
                raise UnknownFormat(f"{path}: one {record.name} record written over several lines (pretty-printed), "
                                    f"not one record per line: {_jq_advice(path, '.', 'write it on one line with')}")
        except OSError:
            pass
        raise UnknownFormat(f"{path}: format not recognised{why} (see `ctxwatch formats`, or pass --format NAME)")
    return spec


def _jq_advice(path: str, jq_filter: str, verb: str) -> str:
    """How to make ``path`` one record per line with ``jq -c FILTER``: a command on the file, or, for a copy of
    standard input (a file named ``-``: there is no FILE to name), in the pipe."""
    if os.path.basename(path) == "-":
        return f"pipe it through  jq -c {jq_filter}  first (... | jq -c {jq_filter} | ctxwatch report -, or check -)"
    return (f"{verb}  jq -c {jq_filter} FILE > FILE.jsonl  (or pipe it in:  jq -c {jq_filter} FILE | "
            "ctxwatch report -, or check -)")


#: Magic numbers of compressed files (gzip 1f 8b, bzip2 "BZh", xz fd "7zXZ", zstd 28 b5 2f fd): a rotated
#: log compressed by a log shipper, named ``*.jsonl.gz`` or not.
_COMPRESSED_MAGIC = (b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00", b"\x28\xb5\x2f\xfd")

#: Largest file checked for holding only whitespace (bytes): a blank log is a new one, not megabytes of spaces.
BLANK_CHECK_BYTES = 1 << 16


def _blank(path: str) -> bool:
    """True when the file is empty or holds only whitespace (blank lines): a log with no record yet."""
    try:
        if os.path.getsize(path) > BLANK_CHECK_BYTES:
            return False
        with open(path, "rb") as fh:
            return not fh.read().strip()
    except OSError:
        return False


def empty_file_note(path: str) -> Issue | None:
    """The ``empty_file`` note of a log with no record yet (empty, or only whitespace), ``None`` for any other
    file (one that cannot be read included).  ``check`` and ``report`` give it after reading the file
    (:func:`load_run`); the dashboard while it follows one (:meth:`Run.refresh_notes`), or waits for an empty
    file's first record to know its format."""
    if not _blank(path):
        return None
    try:
        what = "empty" if os.path.getsize(path) == 0 else "blank (only whitespace)"
    except OSError:  # (removed since: no file, no note)
        return None
    return Issue(path, 0, "empty_file", f"the file is {what}: no record to read yet")


def _one_unfinished_line(path: str) -> bool:
    """True when the file holds a single line with no newline yet, starting like a JSON object (a log whose
    first record is being written)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(1 << 20)
    except OSError:
        return False
    if b"\n" in head or not head.lstrip(b"\xef\xbb\xbf \t").startswith(b"{") or len(head) >= (1 << 20):
        return False
    try:
        orjson.loads(head.removeprefix(b"\xef\xbb\xbf"))
    except orjson.JSONDecodeError:
        return True  # (cut short: the rest is on its way)
    return False  # (a whole value that no format claims is no log being written)


def nothing_in(calls: Sequence[Call]) -> bool:
    """True when no call of ``calls`` (one file's, at least one) holds anything read from the log: no model,
    usage, message, response or timestamp.  A forced format whose reader makes such calls of another format's
    records (every field it looks for absent) read nothing: :func:`format_mismatch` says so."""
    return bool(calls) and all(c.model is None and c.usage is None and not c.messages and c.timestamp is None
                               and (c.response is None or (not c.response.text and not c.response.tool_calls))
                               for c in calls)


def format_mismatch(path: str, spec: FormatSpec, records: int, issues: list[Issue], calls: int = 0
                    ) -> list[Issue]:
    """The ``format_mismatch`` issue of a file read with a forced format that gave no call from its
    ``records`` records (call only then), or ``calls`` calls with nothing in them (:func:`nothing_in`); none when
    the reader already reported the records as bad lines.

    A forced --format that silently reads nothing from a file full of records is almost surely the wrong one;
    saying so keeps ``check`` from passing a log it never read.  A file that detection finds to be in the
    forced format is a log that has not reached its first call yet (a Codex rollout before its first
    ``token_count``): no issue.
    """
    if not records or any(i.line for i in issues if i.path == path):
        return []
    detected = detect(path)
    if detected is not None and detected.name == spec.name:
        return []
    hint = f" (it looks like {detected.name})" if detected is not None else ""
    what = f"{calls} read as calls with no model, usage or message" if calls else "none read as a call"
    return [Issue(path, 0, "format_mismatch", f"{records} records, {what} in format {spec.name}{hint}")]
