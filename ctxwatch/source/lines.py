"""Reading streams of JSON values from log files: robust, streaming, byte-offset aware.

Logs are untrusted and often damaged: half-written last lines, two records glued together by an
interrupted write (failure case B14), objects concatenated with no newline (the Anthropic batch request
file), a UTF-8 BOM, CRLF line ends, NUL bytes, invalid UTF-8 and lines of tens of megabytes (B17).
Nothing here raises on bad input: every problem becomes an :class:`~ctxwatch.model.Issue` with the file and
line number, and reading goes on.

The unit of work is a physical line: :class:`LineSplitter` turns byte chunks into complete lines with their
byte offsets (a partial trailing line is kept until its newline arrives), and :func:`decode_line` turns one
line into zero or more JSON values.  :func:`iter_records` combines both over a file.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from ctxwatch.model import Issue

#: Lines longer than this many bytes are skipped with an issue instead of parsed (failure case B17).
#: 64 MiB keeps a 20 MB subagent result readable while bounding memory. Configurable per call.
DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024

#: Read size for streaming a file (bytes). 1 MiB balances syscalls against peak memory.
CHUNK_BYTES = 1024 * 1024


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


@dataclass(slots=True)
class Line:
    """A complete physical line: 1-based number, byte range (newline excluded from ``data``)."""

    number: int
    start: int
    end: int
    data: bytes
    oversized: bool = False


class LineSplitter:
    """Split a byte stream into complete lines, keeping a partial last line until its newline arrives.

    Splitting happens on bytes before any decoding, so a multi-byte UTF-8 character cut across two
    reads is never damaged.  Lines longer than ``max_line_bytes`` are not kept in memory: they are
    reported as ``oversized`` with empty data once their newline arrives.

    Args:
        offset: byte offset of the first byte that will be fed.
        line: line number of the first line that will be fed (1-based).
        max_line_bytes: cap on one line's length in bytes.
    """

    def __init__(self, offset: int = 0, line: int = 1, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        self.offset = offset  # offset of the start of the pending partial line
        self.line = line
        self.max_line_bytes = max_line_bytes
        self._buf = bytearray()
        self._dropping = False  # inside an oversized line: discard bytes until its newline
        self._dropped = 0

    @property
    def pending(self) -> int:
        """Bytes of the incomplete trailing line held back so far."""
        return len(self._buf) + self._dropped

    def feed(self, chunk: bytes) -> list[Line]:
        """Feed bytes; return the lines they completed, in order."""
        out: list[Line] = []
        pos = 0
        n = len(chunk)
        while pos < n:
            nl = chunk.find(b"\n", pos)
            if nl < 0:
                self._take(chunk[pos:])
                break
            if not self._buf and not self._dropping:
                # The lines wholly inside this chunk: split in one C call, no copy through the buffer.
                pieces = chunk[pos:].split(b"\n")
                tail = pieces.pop()
                offset, number, cap = self.offset, self.line, self.max_line_bytes
                for data in pieces:
                    end = offset + len(data) + 1
                    if len(data) > cap:
                        out.append(Line(number, offset, end, b"", oversized=True))
                    else:
                        out.append(Line(number, offset, end, data))
                    offset = end
                    number += 1
                self.offset, self.line = offset, number
                if tail:
                    self._take(tail)
                break
            self._take(chunk[pos:nl])
            length = len(self._buf) + self._dropped
            if self._dropping:
                out.append(Line(self.line, self.offset, self.offset + length + 1, b"", oversized=True))
            else:
                out.append(Line(self.line, self.offset, self.offset + length + 1, bytes(self._buf)))
            self.offset += length + 1
            self.line += 1
            self._buf.clear()
            self._dropping = False
            self._dropped = 0
            pos = nl + 1
        return out

    def _take(self, piece: bytes) -> None:
        if self._dropping:
            self._dropped += len(piece)
            return
        self._buf += piece
        if len(self._buf) > self.max_line_bytes:
            self._dropping = True
            self._dropped = len(self._buf)
            self._buf.clear()

    def flush(self) -> Line | None:
        """Return the unterminated last line (the file is complete or idle), or ``None``."""
        if not self._buf and not self._dropped:
            return None
        length = len(self._buf) + self._dropped
        line = Line(self.line, self.offset, self.offset + length, bytes(self._buf), oversized=self._dropping)
        self.offset += length
        self.line += 1
        self._buf.clear()
        self._dropping = False
        self._dropped = 0
        return line


#: Longest integer literal converted to an ``int`` (Python's default limit on int/str conversions, which exists
#: because converting longer ones is quadratic): a longer one is read as ``inf``, a value beyond any count (it
#: raised ValueError, which crashed detection).
MAX_INT_DIGITS = 4300


def _parse_int(text: str) -> int | float:
    return int(text) if len(text.lstrip("-")) <= MAX_INT_DIGITS else float("-inf" if text[0] == "-" else "inf")


_decoder = json.JSONDecoder(parse_int=_parse_int)


def _split_glued(text: str) -> tuple[list[Any], list[str]]:
    """Decode every JSON value found in ``text``; return ``(values, problems)``.

    Handles objects concatenated with or without whitespace, and a truncated stub followed by a complete
    record (failure case B14): after a failure it resumes at the next ``{`` that starts a record, which is one
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
            # stack limit: a line of 1,025 "[" crashed every command)
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


def decode_line(data: bytes, path: str, line: int, *, first: bool = False) -> tuple[list[Any], list[Issue]]:
    """Decode one physical line into JSON values, never raising.

    Args:
        data: the line's bytes without the newline.
        path: file name for issues.
        line: 1-based line number for issues.
        first: the file's first line (a UTF-8 BOM is removed there).

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
        return [orjson.loads(data)], []
    except orjson.JSONDecodeError:
        pass
    issues: list[Issue] = []
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


def iter_records(
    path: str,
    *,
    offset: int = 0,
    line: int = 1,
    final: bool = True,
    skip: Callable[[bytes], bool] | None = None,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    progress: Callable[[int], None] | None = None,
    end: int | None = None,
) -> Iterator[Record | Issue]:
    """Stream the JSON values of a file from a byte offset.

    Args:
        path: the file; it is only ever opened for reading.
        offset / line: where to start (byte offset and its 1-based line number).
        final: the file is complete, so an unterminated last line is decoded (and reported as a truncated
            tail if it does not parse). When False the partial last line is left for a later read.
        skip: optional cheap pre-filter on a raw line: True means "not a record we need" (e.g. Claude Code
            ``file-history-snapshot`` lines), skipped without a JSON parse (case B17).
        max_line_bytes: longer lines are skipped with an ``oversized_line`` issue.
        progress: called with the byte offset reached after each chunk.
        end: stop reading at this byte offset (a line start), as if the file ended there.

    Yields:
        :class:`Record` for each value and :class:`Issue` for each problem, in file order.

    Raises:
        OSError: only if the file cannot be opened at all (callers turn that into a clear error).
    """
    splitter = LineSplitter(offset, line, max_line_bytes)
    loads = orjson.loads
    with open(path, "rb") as fh:
        fh.seek(offset)
        left = -1 if end is None else end - offset
        while left:
            chunk = fh.read(CHUNK_BYTES if left < 0 else min(CHUNK_BYTES, left))
            if not chunk:
                break
            if left > 0:
                left -= len(chunk)
            for ln in splitter.feed(chunk):
                data = ln.data
                if skip is not None and not ln.oversized and skip(data):
                    continue
                if ln.start and not ln.oversized:
                    # The common case without the generator and the issue lists: one well-formed value.
                    try:
                        value = loads(data)
                    except orjson.JSONDecodeError:
                        pass
                    else:
                        yield Record(value, ln.number, ln.number, ln.start, ln.end)
                        continue
                yield from _line_records(ln, path, None, first=ln.start == 0)
            if progress is not None:
                progress(splitter.offset + splitter.pending)
    if final:
        tail = splitter.flush()
        if tail is not None and skip is not None and not tail.oversized and skip(tail.data):
            tail = None  # a whole bookkeeping record that lacks only its newline: skipped like the others
        if tail is not None:
            values_or_issues = list(_line_records(tail, path, None, first=tail.start == 0))
            if any(isinstance(v, Record) for v in values_or_issues):
                yield from values_or_issues
            elif tail.data.strip():
                yield Issue(path, tail.number, "truncated_tail",
                            f"last line is incomplete ({tail.end - tail.start} bytes, no newline)")


def _line_records(ln: Line, path: str, skip: Callable[[bytes], bool] | None, *, first: bool
                  ) -> Iterator[Record | Issue]:
    if ln.oversized:
        yield Issue(path, ln.number, "oversized_line",
                    f"line of {ln.end - ln.start} bytes exceeds the per-line cap; skipped")
        return
    if skip is not None and skip(ln.data):
        return
    values, issues = decode_line(ln.data, path, ln.number, first=first)
    yield from issues
    for i, v in enumerate(values):
        yield Record(v, ln.number, ln.number, ln.start, ln.end, i)


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


def json_text(value: Any, *, sort_keys: bool = False, none: str = "") -> str:
    """Compact JSON text of a value parsed from a log (tool arguments, schemas, content objects), never raising.

    Strings are returned as they are, ``None`` as ``none`` (``""``; ``"null"`` where the value stands for a JSON
    argument).  orjson writes at most 254 levels of nesting and a log
    line may hold up to 1,024 (orjson's read limit), and the stdlib encoder stops at Python's recursion limit:
    a deeper value (a hostile line) is written by :func:`_deep_json`, without recursion.

    Args:
        value: a JSON value (dicts, lists, strings, numbers, booleans, ``None``).
        sort_keys: sort object keys (for content hashes that ignore key order).
    """
    if isinstance(value, str):
        return value
    if value is None:
        return none
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS if sort_keys else None).decode()
    except (TypeError, orjson.JSONEncodeError):
        return _deep_json(value, sort_keys)


class _Lit(str):
    """A piece of JSON syntax already written (``]``, ``,``, ``"key":``) on :func:`_deep_json`'s stack."""

    __slots__ = ()


def _deep_json(value: Any, sort_keys: bool) -> str:
    """JSON text of any value with an explicit stack (no recursion); what JSON cannot hold is written as its
    ``str()`` in a string (:func:`json_text` uses it only where orjson refuses)."""
    out: list[str] = []
    stack: list[Any] = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, _Lit):
            out.append(v)
        elif isinstance(v, dict):
            items = sorted(v.items(), key=lambda kv: str(kv[0])) if sort_keys else list(v.items())
            stack.append(_Lit("}"))
            for k, (key, item) in reversed(list(enumerate(items))):
                stack.append(item)
                stack.append(_Lit(("," if k else "") + json.dumps(str(key), ensure_ascii=False) + ":"))
            out.append("{")
        elif isinstance(v, list | tuple):
            stack.append(_Lit("]"))
            for k in range(len(v) - 1, -1, -1):
                stack.append(v[k])
                if k:
                    stack.append(_Lit(","))
            out.append("[")
        elif v is None or isinstance(v, bool | int | float | str):
            out.append(json.dumps(v, ensure_ascii=False))
        else:
            out.append(json.dumps(str(v), ensure_ascii=False))
    return "".join(out)


def show_value(v: object) -> str:
    """A log value for a message: a number short enough to read (1e+300, not 301 digits), ``true``/``false``,
    a string as its repr, a container as compact JSON (written without recursion: it may be nested ~1,000
    levels); cut to 40 characters (log text is untrusted and may be long)."""
    if isinstance(v, int) and not isinstance(v, bool):
        return _short_int(v) if abs(v) >= 10**15 else str(v)
    if v is None:
        text = "null"
    elif v is True or v is False:
        text = "true" if v else "false"
    elif isinstance(v, dict | list):
        text = json_text(v)
    else:
        text = repr(v)
    return text if len(text) <= 40 else text[:39] + "…"


def _short_int(v: int) -> str:
    """``v`` in the ``.3g`` form (``1e+20``, ``-1.23e+405``): through a float where it fits one, else through
    :class:`decimal.Decimal`, which holds any int (``float(10**309)`` raises OverflowError, and ``str()`` of an int
    of more than 4,300 digits raises ValueError, Python's limit on int/str conversions)."""
    try:
        return f"{v:.3g}"
    except OverflowError:
        from decimal import Decimal

        mantissa, _, exponent = f"{Decimal(v):.3g}".partition("e")  # (keeps the zeros a float drops: 1.00e+309)
        return f"{mantissa.rstrip('0').rstrip('.') if '.' in mantissa else mantissa}e{exponent}"
