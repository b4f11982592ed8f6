"""Follow one log file by path, like ``tail -F``: its new lines, truncation, rotation and half-written lines.

The tailer reads from a byte offset with ``os.pread`` (an append costs its new bytes only) and gives complete
:class:`~ctxwatch.source.lines.Line` objects; it never decodes a line for its caller, so the engine decodes
every line the same way whether a file is read whole or followed (:func:`ctxwatch.source.decode.records`).  It
tracks the file's identity ``(st_dev, st_ino)``, so a file renamed away, replaced or deleted and created again
is noticed, and its head and the bytes before the offset, so a file rewritten in place is.  No log is ever opened for
writing and nothing here raises on a missing or damaged file.
"""

from __future__ import annotations

import contextlib
import os
import stat as stat_mod
import time
from collections.abc import Callable

from ctxwatch.model import Issue
from ctxwatch.source.held import HeldLine
from ctxwatch.source.lines import CHUNK_BYTES, DEFAULT_MAX_LINE_BYTES, MAX_CHUNK_BYTES, Line, LineSplitter
from ctxwatch.source.resets import (
    DEFAULT_IDLE_GRACE,
    DEFAULT_ROTATED_QUIET,
    HEAD_BYTES,
    SIGNATURE_BYTES,
    Identity,
    Reset,
    TailEvent,
)


class FileTailer:
    """Follow one file by path; :meth:`poll` whenever it may have changed.

    Each poll stats the path, handles truncation and rotation, reads the new bytes and returns the events in
    order.  A missing file is not an error: polls return nothing until it appears.

    A half-written last line is held back.  It is given (``unterminated``, for its records or its truncation)
    only by :meth:`finalize`, or once it has stayed unchanged for ``idle_grace`` seconds: early, as a line,
    when it parses whole (a writer that ends records late), else as one ``truncated_tail`` issue.  If its writer
    completes it later, the line is given then, with ``skip_values`` set to what was given early, and a
    truncation reported is withdrawn (:class:`~ctxwatch.model.Resolved`).

    On rotation (the file renamed away, still linked) the still-open old file is read on until it has been quiet
    for ``rotated_quiet`` seconds, so that lines its writer adds before reopening the path are not lost
    (logrotate's ``create`` mode renames the file under a writer that still holds it); then reading restarts at
    byte 0 of the new file after a :class:`Reset`.

    Args:
        path: the file to follow, opened read-only.
        offset: byte offset to start reading at (a line start); line: its 1-based line number.
        max_line_bytes: longer lines are given ``oversized`` (bytes).
        idle_grace: seconds a partial last line may stay unchanged before it is given or reported.
        rotated_quiet: seconds a file renamed away must stay unchanged before the new file at the path is read.
        keep_open: keep the file open between polls (needed to drain a rotated file); when False the handle
            is closed after each poll and the path reopened on the next one.
        clock: monotonic time source in seconds (tests pass a fake clock).
        chunk_bytes: read size in bytes (doubled, up to MAX_CHUNK_BYTES, while a line is longer).
    """

    def __init__(self, path: str | os.PathLike[str], offset: int = 0, line: int = 1,
                 max_line_bytes: int = DEFAULT_MAX_LINE_BYTES, *, idle_grace: float = DEFAULT_IDLE_GRACE,
                 rotated_quiet: float = DEFAULT_ROTATED_QUIET,
                 keep_open: bool = True, clock: Callable[[], float] = time.monotonic,
                 chunk_bytes: int = CHUNK_BYTES) -> None:
        self.path = os.fspath(path)
        self.max_line_bytes = max_line_bytes
        self.idle_grace = idle_grace
        self.rotated_quiet = rotated_quiet
        self.keep_open = keep_open
        self.clock = clock
        self.chunk_bytes = max(1, chunk_bytes)
        self._fd: int | None = None
        self._ident: Identity | None = None  # identity of the file whose bytes are read
        self._pos = offset  # next byte to read
        self._splitter = LineSplitter(offset, line, max_line_bytes)
        self._size = 0  # size at the last stat
        self._mtime_ns = 0
        self._sig = b""  # up to SIGNATURE_BYTES bytes just before _pos
        self._sig_known = offset == 0
        self._head = b""  # up to HEAD_BYTES bytes from the file's start (what of them was read)
        self._gone = False  # the path vanished after a file was read (a later file there is "recreated")
        self._unreadable_reported = False
        self._pending_issue: Issue | None = None
        self._last_growth = clock()
        self._moved_at: float | None = None  # when the open file, renamed away, was last seen growing
        self._held = HeldLine()  # what was said of a partial last line
        #: Total bytes read since creation (for "did anything grow" checks).
        self.bytes_read = 0

    # ------------------------------------------------------------------ state
    @property
    def offset(self) -> int:
        """Byte offset just past the last complete line given (where a resumed tail would start)."""
        return self._splitter.offset

    @property
    def line(self) -> int:
        """1-based number of the next line to be completed."""
        return self._splitter.line

    @property
    def size(self) -> int:
        """The file's size in bytes at the last stat."""
        return self._size

    @property
    def position(self) -> int:
        """Bytes read so far from the current file (``offset`` plus the held-back partial line)."""
        return self._pos

    @property
    def pending(self) -> int:
        """Bytes of a partial last line held back, waiting for its newline."""
        return self._pos - self._splitter.offset

    @property
    def lag(self) -> int:
        """Bytes known to be in the file but not read yet (by the last stat)."""
        return max(0, self._size - self._pos)

    @property
    def is_open(self) -> bool:
        """True while a file handle is held."""
        return self._fd is not None

    # ------------------------------------------------------------------ operations
    def poll(self, max_bytes: int | None = None) -> list[TailEvent]:
        """Check the path and read what is new: at most ``max_bytes`` bytes (``None``: to the end; check
        :attr:`lag` for more).  Returns the events in file order; never raises for missing, unreadable or damaged
        files (an unreadable file gives one ``unreadable`` issue)."""
        events: list[TailEvent] = []
        if self._fd is None:
            if not self._open(events):
                self._size = self._pos  # no file: nothing is waiting
                return events
        else:
            self._check_identity(events)
            if self._fd is None:
                self._size = self._pos
                return events
        self._check_truncation(events)
        self._read(events, max_bytes)
        self._check_idle(events)
        if not self.keep_open:
            self.release()
        return events

    def finalize(self) -> list[TailEvent]:
        """The file is complete (its writer closed it): read the rest and give the partial last line as final.
        Polling can go on afterwards if the file grows again."""
        events = self.poll()
        if self._fd is None and not self.keep_open and not self._gone:
            self._open_quiet()
        self._flush_partial(events)
        if not self.keep_open:
            self.release()
        return events

    def release(self) -> None:
        """Close the file handle but keep the state; the next :meth:`poll` reopens the path."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None

    close = release

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.release()

    # ------------------------------------------------------------------ opening and identity
    def _open_fd(self) -> tuple[int, os.stat_result] | None:
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            if not self._unreadable_reported:
                self._unreadable_reported = True
                self._pending_issue = Issue(self.path, 0, "unreadable", f"cannot read: {exc.strerror or exc}")
            return None
        try:
            st = os.fstat(fd)
        except OSError:
            os.close(fd)
            return None
        if stat_mod.S_ISDIR(st.st_mode):
            os.close(fd)
            return None
        self._unreadable_reported = False
        return fd, st

    def _open_quiet(self) -> None:
        opened = self._open_fd()
        if opened is None:
            return
        fd, st = opened
        if (st.st_dev, st.st_ino) == self._ident:
            self._fd = fd
        else:
            os.close(fd)

    def _open(self, events: list[TailEvent]) -> bool:
        """Open the path, handling a file that changed while the handle was released; False when there is none."""
        self._pending_issue = None
        opened = self._open_fd()
        if opened is None:
            if self._pending_issue is not None:
                events.append(self._pending_issue)
            if self._ident is not None and not self._gone:
                self._flush_partial(events)  # (released, and the path vanished: the old file cannot be drained)
                self._gone = True
                events.append(Reset("deleted", self.path))
            return False
        fd, st = opened
        ident = (st.st_dev, st.st_ino)
        self._fd = fd
        if self._ident is None:  # the first open
            self._ident = ident
            self._stat_update(st)
            if self._pos > st.st_size:
                self._restart(events, "truncated")
            elif not self._sig_known:
                self._load_sig()
            return True
        if ident == self._ident and not self._gone:
            self._stat_update(st)
            return True
        if self._gone:
            reason = "recreated"
        else:
            # Released while it changed: the old file's tail cannot be drained here, and the partial line's
            # bytes are in the old file, not this one.
            self._fd = None
            self._flush_partial(events)
            self._fd = fd
            reason = "replaced"
        self._ident = ident
        self._gone = False
        self._stat_update(st)
        self._restart(events, reason)
        return True

    def _check_identity(self, events: list[TailEvent]) -> None:
        assert self._fd is not None
        try:
            st = os.stat(self.path)
            ident: Identity | None = (st.st_dev, st.st_ino)
        except (FileNotFoundError, NotADirectoryError):
            ident = None
        except OSError:  # a permission problem on the path: keep reading the open file
            return
        if ident == self._ident:
            self._moved_at = None
            return
        # The path no longer names the open file: drain the old handle first.
        before = self._pos
        self._read(events, None)
        try:
            nlink = os.fstat(self._fd).st_nlink
        except OSError:
            nlink = 0
        if nlink > 0 and self.keep_open and self._still_written(self._pos > before):
            return  # (renamed away under a writer that may still hold it: keep reading it until it is quiet)
        self._moved_at = None
        self._flush_partial(events)
        self.release()
        gone = Reset("rotated" if nlink > 0 else "deleted", self.path)
        if ident is None:
            self._gone = True
            events.append(gone)
            return
        self._gone = False
        opened = self._open_fd()
        if opened is None:  # vanished again between stat and open
            self._gone = True
            events.append(gone)
            return
        self._fd, st = opened
        self._ident = (st.st_dev, st.st_ino)
        self._stat_update(st)
        self._restart(events, "rotated" if nlink > 0 else "replaced")

    def _still_written(self, grew: bool) -> bool:
        """True while the open file, renamed away, may still be written: it grew at this poll or within the
        last ``rotated_quiet`` seconds (the first poll that sees the rename starts that wait)."""
        now = self.clock()
        if grew or self._moved_at is None:
            self._moved_at = now
        return now - self._moved_at < self.rotated_quiet

    def _restart(self, events: list[TailEvent], reason: str) -> None:
        """Start the current file over from byte 0, line 1, after a reset event."""
        events.append(Reset(reason, self.path))
        self._pos = 0
        self._splitter = LineSplitter(0, 1, self.max_line_bytes)
        self._sig = b""
        self._sig_known = True
        self._head = b""
        self._held.clear()
        self._last_growth = self.clock()

    def _stat_update(self, st: os.stat_result) -> None:
        self._size = st.st_size
        self._mtime_ns = st.st_mtime_ns

    def _load_sig(self) -> None:
        assert self._fd is not None
        n = min(SIGNATURE_BYTES, self._pos)
        try:
            self._sig = os.pread(self._fd, n, self._pos - n) if n else b""
            self._head = os.pread(self._fd, min(HEAD_BYTES, self._pos), 0) if self._pos else b""
        except OSError:
            self._sig = self._head = b""
        self._sig_known = True

    def _check_truncation(self, events: list[TailEvent]) -> None:
        assert self._fd is not None
        try:
            st = os.fstat(self._fd)
        except OSError:
            return
        changed = st.st_size != self._size or st.st_mtime_ns != self._mtime_ns
        self._stat_update(st)
        if st.st_size < self._pos:
            self._restart(events, "truncated")
            return
        if changed and self._sig and self._pos >= len(self._sig):
            try:
                now = os.pread(self._fd, len(self._sig), self._pos - len(self._sig))
                head = os.pread(self._fd, len(self._head), 0) if self._head else b""
            except OSError:
                return
            if now != self._sig or head != self._head:
                self._restart(events, "truncated")

    # ------------------------------------------------------------------ reading
    def _read(self, events: list[TailEvent], max_bytes: int | None) -> None:
        assert self._fd is not None
        budget = max_bytes
        got_any = False
        size = self.chunk_bytes
        while budget is None or budget > 0:
            try:
                want = size if budget is None else min(size, budget)
                chunk = os.pread(self._fd, want, self._pos)
            except OSError:
                break
            if not chunk:
                self._size = self._pos  # at the end: nothing is waiting (even if a stat said more)
                break
            got_any = True
            if self._pos < HEAD_BYTES and len(self._head) == self._pos:
                self._head += chunk[:HEAD_BYTES - self._pos]
            self._pos += len(chunk)
            self.bytes_read += len(chunk)
            if budget is not None:
                budget -= len(chunk)
            self._sig = (self._sig + chunk[-SIGNATURE_BYTES:])[-SIGNATURE_BYTES:]
            for ln in self._splitter.feed(chunk):
                self._give_line(ln, events)
            if self._splitter.pending > size // 2 and size < MAX_CHUNK_BYTES:
                size *= 2  # (a long line: read more at a time, as read_lines does)
        if self._pos > self._size:
            self._size = self._pos
        if got_any:
            self._last_growth = self.clock()

    def _give_line(self, ln: Line, events: list[TailEvent]) -> None:
        self._held.complete(self.path, ln, events)  # type: ignore[arg-type]

    def _partial_bytes(self) -> bytes | None:
        """The held-back partial line's bytes, or ``None`` if it is oversized or cannot be read."""
        n = self.pending
        if n <= 0 or n > self.max_line_bytes or self._fd is None:
            return None
        try:
            return os.pread(self._fd, n, self._splitter.offset)
        except OSError:
            return None

    def _check_idle(self, events: list[TailEvent]) -> None:
        n = self.pending
        if n <= 0 or self.clock() - self._last_growth < self.idle_grace or self._pos < self._size:
            return  # (unread bytes remain: a capped read stopped mid-line, the line is not half-written)
        self._held.idle(self.path, self._splitter.offset, self._splitter.line, self._partial_bytes(), n,
                        self.idle_grace, events)  # type: ignore[arg-type]

    def _flush_partial(self, events: list[TailEvent]) -> None:
        n = self.pending
        if n <= 0:
            return
        start, line, data = self._splitter.offset, self._splitter.line, self._partial_bytes()
        self._splitter.flush()  # (consumed: its bytes were already fed)
        self._held.final(self.path, start, line, data, n, self.max_line_bytes, events)  # type: ignore[arg-type]
