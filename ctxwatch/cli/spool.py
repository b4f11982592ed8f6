"""Logs given on standard input (``-``) or as named pipes, copied to private temporary files before they are read.

Calls keep byte offsets into a file, and a pipe can be read once: ``zcat run.jsonl.gz | ctxwatch report -`` and
``ctxwatch report <(zcat in.jsonl.gz) <(zcat out.jsonl.gz)`` are read from a copy that the command removes when it
exits, and the output names each copy as it was given.
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
from typing import Any

from ctxwatch.cli.console import echo
from ctxwatch.cli.exits import fail
from ctxwatch.output.safetext import clean, show_as
from ctxwatch.source.binary import looks_like_text

#: The name a log read from standard input (``-``) is shown under.
STDIN_NAME = "-"


def _is_stdin(path: str) -> bool:
    """True when ``path`` is the pipe this process reads as standard input (``/dev/stdin``, ``/proc/self/fd/0``)."""
    try:
        a, b = os.stat(path), os.fstat(sys.stdin.fileno())
    except (OSError, ValueError, AttributeError):  # (no stdin, or a test's stdin without a descriptor)
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def is_pipe(path: str) -> bool:
    """True for a named pipe given as a path: ``<(zcat run.jsonl.gz)`` (``/dev/fd/63``), ``/dev/stdin`` fed by
    a pipe, a ``mkfifo`` pipe."""
    try:
        return stat.S_ISFIFO(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


#: Seconds a named pipe given by path may stay without a writer before it is taken as empty: a ``mkfifo`` pipe
#: nobody writes to would otherwise block the command forever (a process substitution's writer is there at once;
#: a writer started beside the command, ``(sleep 2; cat f > p) &``, gets this long).  After
#: :data:`PIPE_WAIT_NOTICE` seconds the wait is said on stderr.
PIPE_WRITER_WAIT = 10.0
PIPE_WAIT_NOTICE = 1.0

#: The most bytes copied from standard input or one named pipe: 16 GiB, beyond the largest agent logs (a
#: long Claude Code session is tens of MB, a big batch output a few GB), so that ``cat /dev/zero | ctxwatch
#: report -`` ends with an error naming the limit instead of filling the disk.
MAX_SPOOL_BYTES = 16 << 30


#: Bytes of a pipe's head in which a JSON object must begin (a ``{``) for the rest to be copied: a log's first
#: record starts well within it (a banner line or two before it included), while ``cat /dev/zero`` or a binary
#: file is told apart at once instead of after :data:`MAX_SPOOL_BYTES`.
HEAD_CHECK_BYTES = 1 << 20


class SpoolTooLarge(Exception):
    """More than :data:`MAX_SPOOL_BYTES` arrived on a pipe."""


class NotALog(Exception):
    """The first :data:`HEAD_CHECK_BYTES` that arrived on a pipe hold no ``{``, or are binary data
    (:func:`~ctxwatch.source.binary.looks_like_text`): no JSON log.  ``args[0]`` says which, as the end of a
    sentence."""


class SpoolWriteError(Exception):
    """The temporary copy could not be written (a full disk, say); ``args[0]`` is the ``OSError``."""


def _write_bounded(out: Any, chunk: bytes, written: int) -> int:
    """Write ``chunk`` to ``out`` after ``written`` bytes; return the new total.

    Raises:
        SpoolTooLarge: the total would pass :data:`MAX_SPOOL_BYTES`.
        NotALog: the first :data:`HEAD_CHECK_BYTES` are all here and hold no ``{``.
        SpoolWriteError: ``out`` could not be written.
    """
    if written < HEAD_CHECK_BYTES <= written + len(chunk):
        out.flush()
        out.seek(0)
        head = out.read(written) + chunk[:HEAD_CHECK_BYTES - written]
        out.seek(0, os.SEEK_END)
        if b"{" not in head:
            raise NotALog("hold no JSON object ('{')")
        if not looks_like_text(head):
            raise NotALog("are not text (binary data)")
    written += len(chunk)
    if written > MAX_SPOOL_BYTES:
        raise SpoolTooLarge
    try:
        out.write(chunk)
    except OSError as exc:
        raise SpoolWriteError(exc) from exc
    return written


def _limit_text() -> str:
    """:data:`MAX_SPOOL_BYTES` for a message: ``16 GiB``, or bytes when it is no whole number of GiB."""
    gib, rest = divmod(MAX_SPOOL_BYTES, 1 << 30)
    return f"{gib} GiB" if gib and not rest else f"{MAX_SPOOL_BYTES:,} bytes"


def _copy_pipe(path: str, out: Any) -> bool:
    """Copy the pipe at ``path`` to the binary file ``out`` until its writer closes it; False when no writer
    came within :data:`PIPE_WRITER_WAIT` seconds, or the writer closed it with nothing written.

    The pipe is opened without blocking (opening a FIFO for reading otherwise waits for a writer, forever if none
    comes), then read blocking once a writer is there.

    Raises:
        SpoolTooLarge: more than :data:`MAX_SPOOL_BYTES` came.
    """
    import time

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        start = time.monotonic()
        noticed = False
        written = 0
        while True:
            try:
                chunk = os.read(fd, 1 << 20)
            except BlockingIOError:
                break  # a writer holds it open: nothing yet
            if chunk:
                written = _write_bounded(out, chunk, 0)
                break
            waited = time.monotonic() - start
            if waited >= PIPE_WRITER_WAIT:
                return False  # (end of file every time: no writer, or one that wrote nothing)
            if waited >= PIPE_WAIT_NOTICE and not noticed:
                noticed = True
                echo(f"ctxwatch: {clean(path)}: waiting for a writer (up to {PIPE_WRITER_WAIT:g} s)", err=True)
            time.sleep(0.01)
        os.set_blocking(fd, True)
        while chunk := os.read(fd, 1 << 20):
            written = _write_bounded(out, chunk, written)
        return True
    finally:
        os.close(fd)


def spool_stdin(paths: tuple[str, ...]) -> tuple[tuple[str, ...], str | None]:
    """``paths`` with ``-`` (``zcat run.jsonl.gz | ctxwatch report -``) and each named pipe
    (``ctxwatch report <(zcat in.jsonl.gz) <(zcat out.jsonl.gz)``, ``/dev/stdin``) replaced by a private
    temporary copy, and the folder of those copies (``None`` when there is none).

    Calls keep byte offsets into a file, and a pipe can be read once, so it is copied to a file first (in
    chunks: never whole in memory), in a folder only this user can read; it is removed when the command exits.
    Output names each copy as it was given (``-``, ``/dev/fd/63``).  Exits with status 2 when ``-`` is given
    twice or standard input is a terminal (nothing piped: reading would wait for typing), when a named pipe gets
    no writer within :data:`PIPE_WRITER_WAIT` seconds, when more than :data:`MAX_SPOOL_BYTES` arrive on one
    (the message names the limit), or when a copy cannot be made.
    """
    pipes = [p for p in paths if p != STDIN_NAME and is_pipe(p)]
    if STDIN_NAME not in paths and not pipes:
        return paths, None
    if paths.count(STDIN_NAME) > 1:
        fail("-: standard input can be read once; give '-' once")
    if STDIN_NAME in paths and (sys.stdin is None or sys.stdin.isatty()):
        fail("-: standard input is a terminal; pipe a log in (zcat run.jsonl.gz | ctxwatch report -)")
    if STDIN_NAME in paths and (again := next((p for p in pipes if _is_stdin(p)), None)) is not None:
        fail(f"{clean(again)} is standard input, also given as '-': it can be read once; give it once")
    import atexit
    import signal
    import tempfile

    folder = tempfile.mkdtemp(prefix="ctxwatch-stdin-")  # (mode 0700: the log may hold private prompts)
    owner = os.getpid()

    def remove() -> None:
        if os.getpid() == owner:  # (a forked worker that exits leaves the parent's copy alone)
            shutil.rmtree(folder, True)

    atexit.register(remove)
    # A terminated command must not leave the copy behind: TERM and HUP end it through sys.exit, so atexit runs
    # (their default action ends the process at once).  A signal the parent made the command ignore (nohup) stays
    # ignored.
    for sig in (signal.SIGTERM, signal.SIGHUP):
        try:
            if signal.getsignal(sig) == signal.SIG_DFL:
                signal.signal(sig, lambda signum, _frame: sys.exit(128 + signum))
        except (ValueError, OSError, AttributeError):  # (not the main thread, or no such signal here)
            pass
    copies: dict[str, str] = {}
    for n, given in enumerate(dict.fromkeys(p for p in paths if p == STDIN_NAME or p in pipes)):
        # (each copy in a folder of its own, under the name given, so that a file column shows what the user gave)
        os.mkdir(os.path.join(folder, str(n)))
        spool = os.path.join(folder, str(n), STDIN_NAME if given == STDIN_NAME else os.path.basename(given) or "pipe")
        try:
            with open(spool, "w+b") as out:
                if given != STDIN_NAME:
                    if not _copy_pipe(given, out):
                        fail(f"{clean(given)}: a named pipe nothing was written to (no writer within "
                             f"{PIPE_WRITER_WAIT:g} s)")
                elif (buffer := getattr(sys.stdin, "buffer", None)) is not None:
                    written = 0
                    while chunk := buffer.read(1 << 20):
                        written = _write_bounded(out, chunk, written)
                else:  # a text-only stdin (tests)
                    _write_bounded(out, sys.stdin.read().encode("utf-8", "surrogateescape"), 0)
        except SpoolWriteError as exc:
            err = exc.args[0]
            fail(f"{clean(given)}: cannot copy it to a temporary file in {clean(os.path.dirname(folder))} "
                 f"({err.strerror or err}); set TMPDIR to a folder with room, or save the log to a file and give "
                 "its path")
        except OSError as exc:
            fail(f"{clean(given)}: cannot read ({exc.strerror or exc})")
        except NotALog as exc:
            what = "standard input" if given == STDIN_NAME else "the pipe"
            fail(f"{clean(given)}: not a JSONL log: the first {HEAD_CHECK_BYTES >> 20} MiB on {what} {exc.args[0]}")
        except SpoolTooLarge:
            what = "standard input" if given == STDIN_NAME else "the pipe"
            fail(f"{clean(given)}: more than {_limit_text()} on {what}, the most ctxwatch copies to a temporary "
                 "file to read; save the log to a file and give its path")
        spool = _named_by_content(spool)
        show_as(spool, given)
        copies[given] = spool
    return tuple(copies.get(p, p) for p in paths), folder


#: The first bytes of a zip archive (an Inspect AI ``.eval`` log is one).
ZIP_MAGIC = b"PK\x03\x04"


def _named_by_content(spool: str) -> str:
    """The copy ``spool``, renamed ``*.eval`` when it is a zip archive: an Inspect AI ``.eval`` log is told and
    opened by its name, and a copy of standard input has none of its own."""
    with open(spool, "rb") as fh:
        head = fh.read(len(ZIP_MAGIC))
    if head != ZIP_MAGIC:
        return spool
    os.rename(spool, spool + ".eval")
    return spool + ".eval"
