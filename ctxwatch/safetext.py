"""Untrusted log text made safe for a terminal (pure core; the dashboard and the CLI both use it).

Log content is data: a model name, a session id, a JSON key or an error snippet taken from a log may hold
ESC sequences (CSI colours, OSC 52 clipboard writes, OSC 8 links, window titles), other C0/C1 controls,
bidirectional overrides or lone surrogates.  :func:`clean` replaces each of them with a visible escape, so
``"\\x1b]52;c;..."`` prints as the characters ``\\x1b]52;c;...`` and can never reach the terminal as a
control sequence.  Cutting a cleaned string can therefore never leave a half sequence behind.
"""

from __future__ import annotations

import re

# C0 controls except TAB and LF, DEL, C1 controls; bidi embeddings/overrides/isolates and marks; lone
# surrogates (JSON "\ud800" decodes to one, and a terminal cannot encode it).
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_UNSAFE_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")

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


def echo(message: object = "", **kwargs: object) -> None:
    """``click.echo`` of a line that may hold log-derived text, made terminal-safe first (see :func:`clean`)."""
    import click

    click.echo(clean(message, multiline=True), **kwargs)  # type: ignore[arg-type]
