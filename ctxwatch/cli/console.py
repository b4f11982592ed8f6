"""What the commands write to the terminal: text lines through :func:`echo`, JSON bytes through :func:`write_bytes`,
and the width text is laid out to (:func:`output_width`).

Here rather than in :mod:`ctxwatch.output.safetext` because it prints with click, which the core never imports;
the cleaning itself (:func:`~ctxwatch.output.safetext.clean`) stays in the core, where the dashboard uses it too.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterable

import click

from ctxwatch.output.safetext import clean, output_closed, shown, shown_bytes


def echo(message: object = "", **kwargs: object) -> None:
    """``click.echo`` of a line that may hold log-derived text, made terminal-safe first
    (:func:`~ctxwatch.output.safetext.clean`, newlines kept), with the paths registered by
    :func:`~ctxwatch.output.safetext.show_as` under their shown names.  A reader that went away
    (``ctxwatch report run.jsonl | head -1``) ends the command quietly
    (:func:`~ctxwatch.output.safetext.output_closed`)."""
    try:
        click.echo(shown(clean(message, multiline=True)), **kwargs)  # type: ignore[arg-type]
    except BrokenPipeError:
        output_closed()


def output_width() -> int | None:
    """The width in cells the text output is laid out to: on a terminal its width (``COLUMNS`` first, as
    :func:`shutil.get_terminal_size` reads it); to a pipe or a file, ``COLUMNS`` when it is a whole number above
    0 (``COLUMNS=100 ctxwatch report run.jsonl | less``, as rich and click honour it), else ``None``: every
    column at its natural width, the same whatever the terminal."""
    if sys.stdout.isatty():
        return shutil.get_terminal_size().columns
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:  # (unset, or not a number: no width asked for)
        return None
    return columns if columns > 0 else None


#: Bytes gathered before :func:`write_chunks` writes them: few writes, and little held.
CHUNK_BYTES = 1 << 20


def write_chunks(chunks: Iterable[bytes]) -> None:
    """Write the pieces of a JSON output (:func:`write_bytes` each), gathered up to :data:`CHUNK_BYTES`."""
    held: list[bytes] = []
    size = 0
    for chunk in chunks:
        held.append(chunk)
        size += len(chunk)
        if size >= CHUNK_BYTES:
            write_bytes(b"".join(held))
            held, size = [], 0
    if held:
        write_bytes(b"".join(held))


def write_bytes(data: bytes) -> None:
    """Write UTF-8 bytes (a JSON document made by :func:`~ctxwatch.output.safetext.json_bytes`) to standard output
    as they are, with registered paths under their shown names: a big report is not copied into a str first."""
    data = shown_bytes(data)
    try:
        sys.stdout.flush()
        buffer = getattr(sys.stdout, "buffer", None)
        if buffer is None:  # a text-only stdout (tests capturing output)
            sys.stdout.write(data.decode())
        else:
            buffer.write(data)
            buffer.flush()
    except BrokenPipeError:
        output_closed()
