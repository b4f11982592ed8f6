"""Untrusted log text made safe for a terminal (pure core; the dashboard and the CLI both use it).

Log content is data: a model name, a session id, a JSON key or an error snippet taken from a log may hold
ESC sequences (CSI colours, OSC 52 clipboard writes, OSC 8 links, window titles), other C0/C1 controls,
bidirectional overrides or lone surrogates.  :func:`clean` replaces each of them with a visible escape, so
``"\\x1b]52;c;..."`` prints as the characters ``\\x1b]52;c;...`` and can never reach the terminal as a
control sequence.  Cutting a cleaned string can therefore never leave a half sequence behind.
"""

from __future__ import annotations

import re
from typing import NoReturn

# C0 controls except TAB and LF, DEL, C1 controls; bidi embeddings/overrides/isolates and marks; lone
# surrogates (JSON "\ud800" decodes to one, and a terminal cannot encode it).
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_UNSAFE_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
#: The characters :func:`clean` escapes when ``multiline`` (every one above but TAB and LF), for writers that
#: escape them their own way (a JSON file: ``\\u009b``, which a JSON reader turns back into the character).
UNSAFE = _UNSAFE

#: Tab width used when expanding tabs in multi-line log text (columns).
TAB_WIDTH = 4


def _escape(m: re.Match[str]) -> str:
    ch = m.group(0)
    code = ord(ch)
    if ch == "\n":
        return "⏎"
    if ch == "\t":
        return " "
    if 0xD800 <= code <= 0xDFFF:
        return "\ufffd"
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}"


def clean(text: object, *, multiline: bool = False) -> str:
    """``text`` (any value; ``None`` gives ``""``) with every unsafe character replaced by a visible escape.

    Args:
        text: untrusted text from a log.
        multiline: keep newlines (and expand tabs); when False newlines become ``⏎`` and tabs a space.

    Returns:
        A string with no ESC, no other C0/C1 control character (except ``\\n`` when ``multiline``), no bidi
        control and no lone surrogate.
    """
    s = "" if text is None else str(text)
    if multiline:
        return _UNSAFE.sub(_escape, s.replace("\r\n", "\n")).expandtabs(TAB_WIDTH)
    return _UNSAFE_LINE.sub(_escape, s)


#: Paths shown under another name (real path -> shown name): a private copy of standard input is ``-``.
_SHOWN_AS: dict[str, str] = {}


def show_as(path: str, name: str) -> None:
    """From now on, write ``path`` as ``name`` in the command's output (:func:`echo`, :func:`shown`)."""
    _SHOWN_AS[path] = name


def shown(text: str) -> str:
    """``text`` with each path registered by :func:`show_as` replaced by its shown name."""
    for path, name in _SHOWN_AS.items():
        if path in text:
            text = text.replace(path, name)
    return text


def shown_bytes(data: bytes) -> bytes:
    """:func:`shown` for UTF-8 output such as a JSON document (a registered path holds no character that JSON
    escapes, so it appears in the bytes as it is)."""
    for path, name in _SHOWN_AS.items():
        raw = path.encode()
        if raw in data:
            data = data.replace(raw, name.encode())
    return data


def echo(message: object = "", **kwargs: object) -> None:
    """``click.echo`` of a line that may hold log-derived text, made terminal-safe first (see :func:`clean`),
    with the paths registered by :func:`show_as` under their shown names.  A reader that went away
    (``ctxwatch report run.jsonl | head -1``) ends the command quietly (:func:`output_closed`)."""
    import click

    try:
        click.echo(shown(clean(message, multiline=True)), **kwargs)  # type: ignore[arg-type]
    except BrokenPipeError:
        output_closed()


def write_out(text: str) -> None:
    """Write ``text`` (a JSON document: no terminal control characters) to standard output as it is; a reader
    that went away ends the command quietly (:func:`output_closed`)."""
    import sys

    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        output_closed()


#: The exit status of a command whose reader went away (:func:`output_closed`): 0, or what the command had
#: decided before it wrote (``check``'s flag status, which a CI job reads whatever is cut from its output).
_CLOSED_STATUS = [0]


def on_closed_output_exit(status: int) -> None:
    """From now on, :func:`output_closed` ends the command with ``status``."""
    _CLOSED_STATUS[0] = status


def output_closed() -> NoReturn:
    """End the command after the reader of its output went away (``| head``), quietly, as command-line tools do
    (click's own handling exits with 1), with status 0 or the one set by :func:`on_closed_output_exit`:
    standard output is pointed at /dev/null first, so that the interpreter's last flush does not fail again."""
    import os
    import sys

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # (a stdout without a file descriptor: tests)
        pass
    sys.exit(_CLOSED_STATUS[0])
