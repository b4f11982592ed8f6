"""Bytes of a log file to complete physical lines, with their line numbers and byte offsets.

Splitting happens on bytes, before any decoding, so a UTF-8 character cut across two reads is never damaged,
and every line keeps the byte range a call is re-read from later.  A line longer than the per-line cap is
not kept in memory.  Nothing here knows JSON or a log format: :mod:`ctxwatch.source.decode` turns lines into
values.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

#: Lines longer than this many bytes are skipped with an ``oversized_line`` issue instead of parsed: 64 MiB keeps
#: a 20 MB tool result readable while bounding memory.
DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024

#: First read size for streaming a file (bytes).  A read above glibc's mmap threshold (128 KiB by default) may
#: map fresh pages for its chunk, and a folder's files are mostly smaller than a chunk: 1 MiB reads made
#: reading a Claude Code folder twice as slow as ``cat``.
CHUNK_BYTES = 128 * 1024

#: Largest read size (bytes): :func:`read_lines` doubles its reads up to this while a line is longer than them,
#: so that a re-sending log's lines of hundreds of KB are copied out of one chunk rather than gathered from many.
MAX_CHUNK_BYTES = 4 * 1024 * 1024

#: A read of at least this many bytes starts at :data:`MAX_CHUNK_BYTES`: the mapping of fresh pages that small
#: reads avoid costs nothing there, and each chunk saved is a loop of the reader and a hand-over to whatever
#: consumes the chunks (a digest on another thread): 3 % of a cold report of a 222 MB log.
BIG_READ_BYTES = 64 * 1024 * 1024


@dataclass(slots=True)
class Line:
    """A physical line of a log.

    Attributes:
        number: 1-based line number.
        start / end: byte range in the file (``end`` exclusive, the newline included when there is one).
        data: the line's bytes without the newline (empty when ``oversized``).
        oversized: longer than the per-line cap; its bytes were dropped.
        unterminated: the file's last line, without a newline, taken as final (the file is complete or its
            writer is gone): its values are read if it parses, else it is a truncated tail.
        skip_values: how many of its values were already given (a half-written line given early because it
            parsed, completed later): only the later ones are new.
        cut_reported: (``unterminated`` only) its truncation was reported already; not again.
    """

    number: int
    start: int
    end: int
    data: bytes
    oversized: bool = False
    unterminated: bool = False
    skip_values: int = 0
    cut_reported: bool = False


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
        """Feed bytes; return the lines they completed, in order.

        Each line's bytes are copied once out of ``chunk`` (a line begun in an earlier chunk once more, out of
        the pending buffer): on a log of long lines, copies are most of the splitting's cost.
        """
        out: list[Line] = []
        find = chunk.find
        nl = find(b"\n")
        if nl < 0:
            self._take(chunk, 0, len(chunk))
            return out
        pos = 0
        if self._buf or self._dropping:
            self._take(chunk, 0, nl)
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
            nl = find(b"\n", pos)
        offset, number, cap = self.offset, self.line, self.max_line_bytes
        while nl >= 0:
            end = offset + (nl - pos) + 1
            if nl - pos > cap:
                out.append(Line(number, offset, end, b"", oversized=True))
            else:
                out.append(Line(number, offset, end, chunk[pos:nl]))
            offset = end
            number += 1
            pos = nl + 1
            nl = find(b"\n", pos)
        self.offset, self.line = offset, number
        if pos < len(chunk):
            self._take(chunk, pos, len(chunk))
        return out

    def _take(self, chunk: bytes, start: int, stop: int) -> None:
        """Add ``chunk[start:stop]`` to the pending line (through a view: one copy), or count it as dropped."""
        if self._dropping:
            self._dropped += stop - start
            return
        self._buf += memoryview(chunk)[start:stop]
        if len(self._buf) > self.max_line_bytes:
            self._dropping = True
            self._dropped = len(self._buf)
            self._buf.clear()

    def flush(self) -> Line | None:
        """Return the last line without its newline (the file is complete or idle), or ``None``."""
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




def read_lines(path: str, *, offset: int = 0, line: int = 1, end: int | None = None, final: bool = True,
               max_line_bytes: int = DEFAULT_MAX_LINE_BYTES, progress: Callable[[int], None] | None = None,
               on_chunk: Callable[[bytes], None] | None = None) -> Iterator[Line]:
    """The lines of a file from byte ``offset`` (whose line number is ``line``), read in chunks.

    Args:
        path: the file; it is only ever opened for reading.
        end: stop at this byte offset (a line start), as if the file ended there.
        final: the file is complete, so a last line without a newline is given, ``unterminated``; when
            False it is left for a later read.
        max_line_bytes: longer lines are given ``oversized``, without their bytes.
        progress: called with the byte offset reached after each chunk.
        on_chunk: called with each chunk of bytes as it is read, before its lines are given (a digest of the
            bytes read, say, without reading them twice).

    Raises:
        OSError: only if the file cannot be opened or read.
    """
    splitter = LineSplitter(offset, line, max_line_bytes)
    with open(path, "rb") as fh:
        fh.seek(offset)
        left = -1 if end is None else end - offset
        to_read = left if left >= 0 else os.fstat(fh.fileno()).st_size - offset
        size = MAX_CHUNK_BYTES if to_read >= BIG_READ_BYTES else CHUNK_BYTES
        while left:
            chunk = fh.read(size if left < 0 else min(size, left))
            if not chunk:
                break
            if left > 0:
                left -= len(chunk)
            if on_chunk is not None:
                on_chunk(chunk)
            yield from splitter.feed(chunk)
            if splitter.pending > size // 2 and size < MAX_CHUNK_BYTES:
                size *= 2  # (a long line: read more at a time)
            if progress is not None:
                progress(splitter.offset + splitter.pending)
    if final:
        tail = splitter.flush()
        if tail is not None:
            tail.unterminated = True
            yield tail


#: Bytes read at a time when :func:`skip_to_end` looks for a newline (backwards for the last line start, forwards
#: for the first one in the kept bytes); a longer line is crossed in several reads.
_TAIL_SCAN_BYTES = 1024 * 1024


def _last_newline(fh: BinaryIO, end: int) -> int:
    """Offset of the last ``\\n`` before byte ``end`` of the binary file ``fh``, or -1 when there is none.

    Reads backwards :data:`_TAIL_SCAN_BYTES` at a time, so a line of any length is crossed.
    """
    while end > 0:
        start = max(0, end - _TAIL_SCAN_BYTES)
        fh.seek(start)
        nl = fh.read(end - start).rfind(b"\n")
        if nl >= 0:
            return start + nl
        end = start
    return -1


def _next_newline(fh: BinaryIO, start: int, end: int) -> int:
    """Offset of the first ``\\n`` in bytes ``start`` to ``end`` (excluded) of ``fh``, or -1 when there is none.

    Reads forwards :data:`_TAIL_SCAN_BYTES` at a time, so a line of any length is crossed.
    """
    while start < end:
        fh.seek(start)
        chunk = fh.read(min(_TAIL_SCAN_BYTES, end - start))
        if not chunk:
            break
        nl = chunk.find(b"\n")
        if nl >= 0:
            return start + nl
        start += len(chunk)
    return -1


def skip_to_end(path: str, keep: int = 0) -> tuple[int, int]:
    """Where to resume following ``path`` when its backfill is skipped: ``(offset, line)``.

    ``offset`` is a line start, and every complete line from it on is read after the skip:

    * ``keep=0``: just after the last newline (0 when the file has none);
    * ``keep`` > 0 (bytes): the first line start at or after ``keep`` bytes before the last newline, so that
      the last calls are read whole; when those bytes hold no line start (the last complete line alone is
      longer than ``keep``), the start of the last complete line, i.e. that line is read whole even though it
      begins more than ``keep`` bytes before the end.  A half-written line after the last newline is read
      once it is complete, like any line written while following.

    Lines of any length are crossed (searched :data:`_TAIL_SCAN_BYTES` at a time).  ``line`` is the offset's
    1-based line number (newlines before it are counted in 1 MiB chunks).  ``(0, 1)`` when the file cannot be
    read.
    """
    try:
        with open(path, "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            offset = _last_newline(fh, size) + 1  # (0 when there is no newline)
            if keep and offset:
                at = max(0, offset - keep)
                if at:
                    # The first line start at or after ``at``: just after the first newline from ``at - 1`` on.
                    # There is one (byte ``offset - 1`` is the last newline), at worst ``offset`` itself.
                    at = _next_newline(fh, at - 1, offset) + 1
                    if at == offset:
                        # No line start in the kept bytes: keep the last complete line whole, not nothing.
                        at = _last_newline(fh, offset - 1) + 1
                offset = at
            fh.seek(0)
            lines, done = 0, 0
            while done < offset:
                chunk = fh.read(min(1024 * 1024, offset - done))
                if not chunk:
                    break
                lines += chunk.count(b"\n")
                done += len(chunk)
            return offset, lines + 1
    except OSError:
        return 0, 1
