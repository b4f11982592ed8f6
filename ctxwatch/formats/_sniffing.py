"""Detection: which registered format a file is in, from the first records of its head.

Each format's sniff gives a confidence in [0, 1] from a :class:`~ctxwatch.formats.Sniff` of the file; the
highest wins if it reaches 0.3 (on equal scores, the format registered first).  A first look at
:data:`QUICK_SNIFF_VALUES` records settles most files; a less sure answer gets a look at 50.
"""

from __future__ import annotations

import os
from typing import Any

import orjson

from ctxwatch.formats._reader import FormatSpec, Sniff
from ctxwatch.formats._registry import REGISTRY, _load_all
from ctxwatch.source import DEFAULT_MAX_LINE_BYTES, decode_line, shared_loads

#: Bytes of a file's head that detection looks at (several records of most formats; a 64 KiB read).
SNIFF_BYTES = 64 * 1024


def sniff_file(path: str, max_values: int = 50) -> Sniff:
    """Read a file's head for detection, decoding up to ``max_values`` JSON values from its lines.

    Never raises for bad content; raises ``OSError`` if unreadable.
    """
    with open(path, "rb") as fh:
        head = fh.read(SNIFF_BYTES)
        size = os.fstat(fh.fileno()).st_size
    values: list[Any] = []
    lines = head.split(b"\n")
    more = head.partition(b"\n")[2]  # (what follows the first line, in what was read)
    if len(head) == SNIFF_BYTES and len(lines) > 1:
        lines = lines[:-1]  # the last piece may be cut
    elif len(head) == SNIFF_BYTES:
        # The first line alone is longer than the sniff window (a record with a big image or tool result):
        # read that one line whole, within the per-line cap, and the window's worth of lines after it (a first
        # line that is no record, a banner or a damaged write, must not hide the records that follow).
        lines, more = _long_first_line(path)
    first_value = False
    problem: str | None = None
    for i, raw in enumerate(lines):
        if raw.lstrip(b"\xef\xbb\xbf \t\r")[:1] not in (b"{", b"["):
            continue  # (no record starts otherwise: a pretty-printed document's `"a": 1,`, text, a blank line)
        # (a line of megabytes is decoded with its identical small entries shared: detection must not cost
        # many times the line)
        vals, issues = decode_line(raw, path, i + 1, first=i == 0, decode=shared_loads)
        first_value |= i == 0 and bool(vals) and not issues
        if issues and problem is None:
            problem = f"line {i + 1}: {issues[0].message}"
        vals = [v for v in vals if isinstance(v, dict | list)]  # a pretty-printed line like `"a": 1,` is no record
        values.extend(vals)
        if len(values) >= max_values:
            break
    document = None
    stripped = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    first_line = stripped.split(b"\n", 1)[0].strip()
    pretty = first_line in (b"{", b"[") or (first_line.startswith(b"[") and not values)
    # (a first line that is one whole JSON value followed by more than whitespace cannot begin a one-value
    # document: parsing the file would build that line's value only to fail after it)
    whole_then_more = first_value and bool(more.strip())
    if stripped[:1] in (b"{", b"[") and not whole_then_more and (
            pretty or not values or (len(values) == 1 and size > len(lines[0]) + 1)):
        # Looks like one pretty-printed document. Parse it whole if it is of reasonable size.
        if size <= 256 * 1024 * 1024:
            try:
                with open(path, "rb") as fh:
                    data = fh.read()
                document = orjson.loads(data.removeprefix(b"\xef\xbb\xbf"))
            except (orjson.JSONDecodeError, OSError):
                document = None
    return Sniff(path, values, document, head, problem)


def _long_first_line(path: str) -> tuple[list[bytes], bytes]:
    """The file's first line, read in chunks up to :data:`~ctxwatch.source.lines.DEFAULT_MAX_LINE_BYTES`, then the
    complete lines of the :data:`SNIFF_BYTES` after it; and those bytes after it (``b""`` when there are none)."""
    buf = bytearray()
    with open(path, "rb") as fh:
        ended = False
        while len(buf) < DEFAULT_MAX_LINE_BYTES:
            chunk = fh.read(SNIFF_BYTES)
            if not chunk:
                break
            nl = chunk.find(b"\n")
            if nl >= 0:
                buf += chunk[:nl]
                fh.seek(fh.tell() - len(chunk) + nl + 1)
                ended = True
                break
            buf += chunk
        if not ended:
            return [buf], b""  # type: ignore[list-item]  # (read as bytes, never changed: not copied)
        after = fh.read(SNIFF_BYTES)
    rest = after.split(b"\n")
    if len(after) == SNIFF_BYTES:
        rest = rest[:-1]  # (the last piece may be cut)
    return [buf, *rest], after  # type: ignore[list-item]


def detect(path: str) -> FormatSpec | None:
    """The most likely format of a file, or ``None`` if no format recognises it.

    Raises:
        OSError: the file cannot be read.
    """
    _load_all()
    if path.endswith(".eval"):
        spec = REGISTRY.get("inspect-ai")
        if spec:
            return spec
    # A first look at a few records settles most files (a folder of 2,000 session logs is sniffed in a
    # fraction of the time); an unsure answer gets the full look at up to 50 records.
    sn = sniff_file(path, max_values=QUICK_SNIFF_VALUES)
    best, score = _best(sn)
    if score < SURE_SCORE and len(sn.values) >= QUICK_SNIFF_VALUES:
        best, score = _best(sniff_file(path))
    return best if score >= 0.3 else None


def array_of_records(sn: Sniff) -> tuple[int, FormatSpec] | None:
    """``(elements, format)`` when the sniffed file is one JSON array (pretty-printed, or on one line) whose
    elements are records of a format read line by line (``json.dump(records)``, ``jq -s``, an export); else
    ``None``.  Such a file is not read as a log (ctxwatch re-reads message bodies by the byte range of their
    line), but the error can say how to convert it rather than "format not recognised"."""
    array = sn.document if isinstance(sn.document, list) else None
    if array is None and len(sn.values) == 1 and isinstance(sn.values[0], list):
        array = sn.values[0]
    if not array:
        return None
    records = [v for v in array[:QUICK_SNIFF_VALUES] if isinstance(v, dict)]
    if not records:
        return None
    best, score = _best(Sniff(sn.path, records, None, b""))
    if best is None or score < 0.3 or best.document:
        return None
    return len(array), best


def pretty_record(sn: Sniff) -> FormatSpec | None:
    """The format whose record the sniffed file is, when it is one JSON object written over several lines (a
    pretty-printed record, ``json.dump(record, indent=2)``) that a format read line by line would read on one
    line; else ``None``.  As for :func:`array_of_records`, the error can then say how to write it on one line."""
    if not isinstance(sn.document, dict):
        return None
    best, score = _best(Sniff(sn.path, [sn.document], None, b""))
    if best is None or score < 0.3 or best.document:
        return None
    return best


#: Records decoded for the first look at a file, and the score that makes that look final.  A format's
#: sniff gives >= 0.9 only for records that carry its own envelope (every sniff's docstring), so more
#: records cannot change a sure answer to another format in the samples; less sure answers get 50 records.
QUICK_SNIFF_VALUES = 8


SURE_SCORE = 0.9


def _best(sn: Sniff) -> tuple[FormatSpec | None, float]:
    best, score = None, 0.0
    for spec in REGISTRY.values():
        try:
            s = spec.sniff(sn)
        except Exception:
            s = 0.0
        if s > score:
            best, score = spec, s
    return best, score


#: Largest document parsed for detection when :func:`ctxwatch.formats.sniff_file` did not parse it (bytes);
#: the same bound sniff_file uses.
_SNIFF_DOC_MAX = 256 * 1024 * 1024


_doc_cache: tuple[tuple[str, int, int], Any] | None = None


def sniff_document(s: Sniff) -> Any:
    """The whole JSON document behind a :class:`Sniff`, or ``None`` if the file is not one JSON document.

    Uses ``s.document`` when detection parsed it, or the single decoded value of a one-line document.  A
    pretty-printed document whose head decoded into stray values (each ``"key": …`` line yields its key
    string, so ``sniff_file`` does not try the whole file) is parsed here once and cached by path, size
    and mtime, so that the several document sniffers share one parse.  Never raises.
    """
    global _doc_cache
    if s.document is not None:
        return s.document
    if len(s.values) == 1 and isinstance(s.values[0], dict | list):
        return s.values[0]
    head = s.head.lstrip(b"\xef\xbb\xbf \t\r\n")
    first = head.split(b"\n", 1)[0].strip()
    if first not in (b"{", b"[") and not (first.startswith(b"[") and first.endswith(b"{")):
        return None  # a JSONL record can never be a bare "{" or "[" line: only a pretty-printed document is
    try:
        st = os.stat(s.path)
        key = (s.path, st.st_size, st.st_mtime_ns)
        if _doc_cache is not None and _doc_cache[0] == key:
            return _doc_cache[1]
        if st.st_size > _SNIFF_DOC_MAX:
            return None
        with open(s.path, "rb") as fh:
            value = orjson.loads(fh.read().removeprefix(b"\xef\xbb\xbf"))
    except (OSError, orjson.JSONDecodeError):
        return None
    _doc_cache = (key, value)
    return value
