"""A progress line on standard error while a headless command reads its logs: a first read of a big folder takes
seconds with nothing else to show.

The line is drawn only when standard error is a terminal, only once the read has taken :data:`SHOW_AFTER`
seconds (a quick read, or one the cache answers, draws nothing), at most every :data:`EVERY` seconds, and it is
rubbed out (spaces, then a carriage return: no escape sequence, so a dumb terminal shows it alike) before the
command writes its output.  ``CTXWATCH_NO_PROGRESS=1`` turns it off.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import TextIO

from ctxwatch.output.safetext import cells, clean

#: Seconds a read runs before the line is drawn: below a human's notice of a wait.
SHOW_AFTER = 0.5
#: Seconds between two drawings of the line.
EVERY = 0.1


def _mb(n: int) -> str:
    return f"{n / 1e6:,.0f}" if n >= 10e6 else f"{n / 1e6:,.1f}"


class ReadProgress:
    """The progress line of one read; :meth:`folder` and :meth:`file` are the engine's callbacks
    (:data:`ctxwatch.engine.folder.FolderProgress`; ``(bytes read, bytes in all)`` for one file), :meth:`close`
    rubs the line out.

    Args:
        stream: where the line goes (standard error); nothing is drawn unless it is a terminal.
        clock: seconds, monotonic (tests pass their own).
    """

    def __init__(self, stream: TextIO | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.clock = clock
        self.start = clock()
        self._last = -EVERY
        self._width = 0  # (cells of the line on screen, 0 when none is)
        try:
            tty = self.stream.isatty()
        except (AttributeError, ValueError, OSError):
            tty = False
        self.on = tty and os.environ.get("CTXWATCH_NO_PROGRESS", "") in ("", "0")

    def folder(self, files: int, of_files: int, read: int, of_bytes: int) -> None:
        """``files`` of ``of_files`` logs read, ``read`` of the ``of_bytes`` bytes to read."""
        size = f", {_mb(read)} of {_mb(of_bytes)} MB" if of_bytes else ""
        self._draw(f"ctxwatch: reading logs: {files:,} of {of_files:,} files{size}")

    def file(self, read: int, of_bytes: int) -> None:
        """``read`` of the file's ``of_bytes`` bytes."""
        pct = f" ({100 * read // of_bytes}%)" if of_bytes else ""
        self._draw(f"ctxwatch: reading the log: {_mb(read)} of {_mb(of_bytes)} MB{pct}")

    def _draw(self, text: str) -> None:
        if not self.on:
            return
        now = self.clock()
        if now - self.start < SHOW_AFTER or now - self._last < EVERY:
            return
        self._last = now
        text = clean(text)
        width = cells(text)
        self._write("\r" + text + " " * max(0, self._width - width))
        self._width = width

    def close(self) -> None:
        """Rub the line out, if one was drawn."""
        if self._width:
            self._write("\r" + " " * self._width + "\r")
            self._width = 0

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):
            self.on = False
