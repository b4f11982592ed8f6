"""Lines of a log to JSON values, never raising on damaged input.

Logs are untrusted and often damaged: half-written last lines, two records glued together by an interrupted
write, objects concatenated with no newline, a UTF-8 BOM, CRLF line ends, NUL bytes, invalid UTF-8.  Every
problem becomes an :class:`~ctxwatch.model.Issue` with the file and line number, and reading goes on.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

import msgspec
import orjson

from ctxwatch.model import Issue
from ctxwatch.source.lines import DEFAULT_MAX_LINE_BYTES, Line, read_lines

_T = TypeVar("_T")


@dataclass(slots=True)
class Record:
    """One JSON value read from a log.

    Attributes:
        value: the decoded JSON value.
        line: 1-based first line; ``line_end`` the last line.
        byte_start / byte_end: offsets of the value's line(s) in the file (end exclusive).
        part: index of the value within its line when several values were glued on one line, else 0.
    """

    value: Any
    line: int
    line_end: int
    byte_start: int
    byte_end: int
    part: int = 0


#: Longest integer literal converted to an ``int`` (Python's default limit on int/str conversions, which exists
#: because converting longer ones is quadratic): a longer one is read as ``inf``, a value beyond any count.
MAX_INT_DIGITS = 4300


def _parse_int(text: str) -> int | float:
    return int(text) if len(text.lstrip("-")) <= MAX_INT_DIGITS else float("-inf" if text[0] == "-" else "inf")


_decoder = json.JSONDecoder(parse_int=_parse_int)


def _split_glued(text: str) -> tuple[list[Any], list[str]]:
    """Decode every JSON value found in ``text``; return ``(values, problems)``.

    Handles objects concatenated with or without whitespace, and a truncated stub followed by a complete
    record (an interrupted write): after a failure it resumes at the next ``{`` that starts a record, which is one
    that is not a value inside the stub (not preceded by ``[``, ``,`` or ``:``) and from which the rest of the
    line decodes as whole values.  A truncated line holds complete inner objects (a content block, a usage
    block); taking one of those for a record would invent one.
    """
    values: list[Any] = []
    problems: list[str] = []
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i] in " \t\r\n\x00":
            i += 1
        if i >= n:
            break
        try:
            value, end = _decoder.raw_decode(text, i)
        except RecursionError:
            # (orjson refuses more than 1,024 levels of nesting; the stdlib decoder recurses until Python's
            # stack limit)
            problems.append("invalid JSON: nested too deeply to decode")
            break
        except json.JSONDecodeError as exc:
            # (json's messages that end in "at" ("Unterminated string starting at", "Invalid control character
            # at") leave the position to the text json appends; the column is given first here, so "there")
            msg = exc.msg[:-len(" at")] + " there" if exc.msg.endswith(" at") else exc.msg
            problems.append(f"invalid JSON at column {exc.pos + 1}: {msg}")
            rest = _next_record(text, i + 1)
            if rest is None:
                break
            values.extend(rest)
            break
        values.append(value)
        i = end
    return values, problems


def _next_record(text: str, start: int) -> list[Any] | None:
    """The values from the first ``{`` at or after ``start`` that starts a record (see :func:`_split_glued`)
    to the end of ``text``, or ``None`` when there is no such ``{``."""
    nxt = text.find("{", start)
    while nxt >= 0:
        before = text[:nxt].rstrip(" \t\r\n\x00")
        if not before.endswith(("[", ",", ":")):
            values = _whole_values(text, nxt)
            if values is not None:
                return values
        nxt = text.find("{", nxt + 1)
    return None


def _whole_values(text: str, i: int) -> list[Any] | None:
    """The JSON values of ``text[i:]`` when it is nothing but whole values (whitespace between), else ``None``."""
    out: list[Any] = []
    n = len(text)
    while i < n:
        try:
            value, i = _decoder.raw_decode(text, i)
        except (json.JSONDecodeError, RecursionError):
            return None
        out.append(value)
        while i < n and text[i] in " \t\r\n\x00":
            i += 1
    return out


def decode_line(data: bytes, path: str, line: int, *, first: bool = False,
                decode: Callable[[bytes], Any] | None = None) -> tuple[list[Any], list[Issue]]:
    """Decode one physical line into JSON values, never raising.

    Args:
        data: the line's bytes without the newline.
        path: file name for issues.
        line: 1-based line number for issues.
        first: the file's first line (a UTF-8 BOM is removed there).
        decode: a reader's own decoder of a line that is one JSON value (:attr:`ctxwatch.formats.Reader.decode`),
            tried first in place of ``orjson.loads``; it raises ``orjson.JSONDecodeError`` where that does.

    Returns:
        ``(values, issues)``. Blank lines give neither. Recoverable damage (invalid UTF-8, NUL bytes,
        glued records) gives the values it could recover plus an issue describing the damage.
    """
    if first and data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if data.endswith(b"\r"):
        data = data[:-1]
    if not data or data.isspace():  # (isspace stops at the first non-space byte; strip() would copy the line)
        return [], []
    try:
        return [(decode or orjson.loads)(data)], []
    except orjson.JSONDecodeError:
        pass
    issues: list[Issue] = []
    if data.startswith(b"\xef\xbb\xbf"):
        # (a file's own BOM, found where files were joined together: the record after it is whole)
        data = data[3:]
        issues.append(Issue(path, line, "byte_order_mark", "a UTF-8 byte-order mark (U+FEFF) begins the line, as "
                            "where one file was joined onto another; removed, the record after it read"))
        if not data or data.isspace():
            return [], issues
        try:
            return [(decode or orjson.loads)(data)], issues
        except orjson.JSONDecodeError:
            pass
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8", errors="replace")
        issues.append(Issue(path, line, "invalid_utf8", f"invalid UTF-8 at byte {exc.start}; replaced"))
    if "\x00" in text:
        text = text.replace("\x00", "")
        issues.append(Issue(path, line, "nul_bytes", "NUL bytes removed"))
    values, problems = _split_glued(text)
    if problems:
        kind = "glued_records" if values else "invalid_json"
        msg = problems[0] if not values else f"{problems[0]}; recovered {len(values)} record(s) from the line"
        issues.append(Issue(path, line, kind, msg))
    # Several undamaged values on one line are a valid JSON stream (the Anthropic batch request file is
    # written that way), not a problem to report.
    return values, issues


#: A line or a value of at least this many bytes is decoded by :func:`shared_loads` piece by piece.
SHARED_FROM = 1 << 20

#: A piece of a big value up to this many bytes is decoded once for all its identical copies.
SHARED_PIECE = 256

#: A container inside a big value is split into its entries from this size (bytes) on: a smaller one costs
#: little whole (at most some 16 times 64 KiB), and splitting it would cost time.
_SPLIT_FROM = 64 * 1024

_OBJECT = msgspec.json.Decoder(dict[str, msgspec.Raw])
_ARRAY = msgspec.json.Decoder(list[msgspec.Raw])


def shared_loads(data: bytes | memoryview) -> Any:
    """The value ``orjson.loads(data)`` gives, built with less memory when ``data`` is big: a value of at least
    :data:`SHARED_FROM` bytes is split by msgspec into its entries (raw byte spans, checked but not built), each
    decoded in turn, and identical small entries (up to :data:`SHARED_PIECE` bytes) are decoded once and share one
    object (a line of 500,000 ``{"role": "user", "content": "hi"}`` holds one dict, not 500,000).  Nothing that
    reads a decoded value changes it, so the sharing is not seen.

    Raises:
        orjson.JSONDecodeError: where ``orjson.loads`` raises (anything msgspec refuses is decoded by orjson
            whole, so that the error is its own).
    """
    if len(data) < SHARED_FROM:
        return orjson.loads(data)
    try:
        return _shared(memoryview(data), {})
    except Exception:  # (msgspec.DecodeError, orjson.JSONDecodeError, RecursionError...)
        return orjson.loads(data)


def _shared(view: memoryview, pieces: dict[bytes, Any]) -> Any:
    if len(view) <= SHARED_PIECE:
        b = view.tobytes()
        v = pieces.get(b, pieces)
        if v is pieces:
            v = pieces[b] = orjson.loads(b)
        return v
    if len(view) >= _SPLIT_FROM:
        if view[0] == 0x7B:  # "{"
            return {k: _shared(memoryview(r), pieces) for k, r in _OBJECT.decode(view).items()}
        if view[0] == 0x5B:  # "["
            return [_shared(memoryview(r), pieces) for r in _ARRAY.decode(view)]
    return orjson.loads(view)


class _AnyObject(msgspec.Struct):
    """A JSON object whose every key is skipped: decoding into it checks the syntax and builds nothing."""


_CHECK = msgspec.json.Decoder(_AnyObject)


def is_one_value(data: bytes) -> bool:
    """True when ``data`` is one JSON value that ``orjson.loads`` reads (or the stdlib, past a double's range),
    checked without building it where that is cheaper: msgspec checks an object's syntax at about twice
    orjson's speed, and a line with non-ASCII bytes is checked to be UTF-8, which msgspec does not check inside
    strings it skips; anything msgspec refuses (not an object, too deep) is left to orjson."""
    try:
        _CHECK.decode(data)
    except (msgspec.DecodeError, RecursionError):
        try:
            orjson.loads(data)
        except orjson.JSONDecodeError:
            return False
        return True
    if not data.isascii():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return False
    return True


#: What a reader's ``skip`` filter returns (truthy) for a line it skips and has itself found to be one JSON value that
#: ``orjson.loads`` reads, as :func:`is_one_value` checks: :func:`records` does not check it again.
SKIP_CHECKED = 2


def oversized_issue(path: str, ln: Line, cap: int) -> Issue:
    """The issue of a line longer than the per-line cap of ``cap`` bytes (its bytes were dropped)."""
    return Issue(path, ln.number, "oversized_line",
                 f"line of {ln.end - ln.start} bytes exceeds the per-line cap ({cap} bytes); skipped")


def records(events: Iterable[Line | _T], path: str, skip: Callable[[bytes], int] | None = None, *,
            max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
            decode: Callable[[bytes], Any] | None = None) -> Iterator[Record | Issue | _T]:
    """The JSON values of ``events``' lines, in order, with the issues of damaged lines; any other event is passed
    through where it stands.

    ``skip`` (a format reader's cheap filter on a raw line: truthy = not a record it needs; a skipped line that
    is not one JSON value is decoded all the same, so that its damage is an issue, unless the filter returned
    :data:`SKIP_CHECKED`, having checked that itself) is called on each line just
    before that line is decoded, lazily, as the caller takes the values: a reader whose filter learns from
    the records it was fed sees every earlier record first, however the lines were read (whole, in slices, as
    the file grew).

    Args:
        events: lines (:class:`~ctxwatch.source.lines.Line`) and anything else, in file order.
        path: the file, for issues.
        max_line_bytes: the cap an ``oversized`` line exceeded, for its issue.
        decode: a reader's own decoder of a line that is one JSON value, in place of ``orjson.loads`` (see
            :func:`decode_line`).
    """
    loads = orjson.loads
    for ln in events:
        if not isinstance(ln, Line):
            yield ln
            continue
        if ln.oversized:
            yield oversized_issue(path, ln, max_line_bytes)
            continue
        data = ln.data
        if skip is not None and (skipped := skip(data)):
            # The filter reads a few bytes; a damaged line it would skip must still be an issue (a line cut
            # inside a record, a user line broken mid-way that still ends in "}"): checked to be one JSON value
            # (a few per cent of a read: :func:`is_one_value`), else decoded below, unless the filter checked it.
            if skipped == SKIP_CHECKED or is_one_value(data):
                continue
        if ln.start and not ln.unterminated and not ln.skip_values:
            # The common case, without the issue lists: one well-formed value.
            try:
                value = (decode or loads)(data)
            except orjson.JSONDecodeError:
                pass
            else:
                yield Record(value, ln.number, ln.number, ln.start, ln.end)
                continue
        values, issues = decode_line(data, path, ln.number, first=ln.start == 0, decode=decode)
        if ln.unterminated and not values:
            if data.strip() and not ln.cut_reported:
                yield Issue(path, ln.number, "truncated_tail",
                            f"last line is incomplete ({ln.end - ln.start} bytes, no newline)")
            continue
        yield from issues
        for i, v in enumerate(values):
            if i >= ln.skip_values:
                yield Record(v, ln.number, ln.number, ln.start, ln.end, i)


def iter_records(path: str, *, offset: int = 0, line: int = 1, final: bool = True,
                 skip: Callable[[bytes], int] | None = None, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
                 progress: Callable[[int], None] | None = None, end: int | None = None,
                 decode: Callable[[bytes], Any] | None = None) -> Iterator[Record | Issue]:
    """The JSON values of a file from a byte offset: :func:`records` of
    :func:`~ctxwatch.source.lines.read_lines` (see both for the arguments).

    Raises:
        OSError: only if the file cannot be opened at all (callers turn that into a clear error).
    """
    lines = read_lines(path, offset=offset, line=line, end=end, final=final, max_line_bytes=max_line_bytes,
                       progress=progress)
    yield from records(lines, path, skip, max_line_bytes=max_line_bytes, decode=decode)


def read_document(path: str) -> tuple[Any | None, Issue | None]:
    """Read a whole-file JSON document (``.traj``, Inspect ``.json``, OpenHands, Cline).

    Returns ``(value, None)`` or ``(None, issue)``; never raises for bad content.
    """
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        return None, Issue(path, 0, "unreadable", f"cannot read: {exc.strerror or exc}")
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return orjson.loads(data), None
    except orjson.JSONDecodeError as exc:
        error = exc
    try:
        # orjson refuses a number beyond a double's range (1e400) where the stdlib reads inf: one such number
        # must not lose every call of the document (its count is then reported as implausible, as on a line)
        return json.loads(data.decode("utf-8")), None
    except (ValueError, RecursionError):
        return None, Issue(path, 0, "invalid_json", f"not a JSON document: {error}")
