"""Untrusted log text made safe for a terminal (pure core; the dashboard and the CLI both use it).

Log content is data: a model name, a session id, a JSON key or an error snippet taken from a log may hold
ESC sequences (CSI colours, OSC 52 clipboard writes, OSC 8 links, window titles), other C0/C1 controls,
bidirectional controls, line separators, invisible format characters or lone surrogates.  :func:`clean`
replaces each of them with a visible escape, so
``"\\x1b]52;c;..."`` prints as the characters ``\\x1b]52;c;...`` and can never reach the terminal as a
control sequence.  Cutting a cleaned string can therefore never leave a half sequence behind.

JSON outputs keep the text as it is, in valid JSON: :func:`json_bytes` / :func:`json_lines` write a lone surrogate
as U+FFFD and every other character a terminal acts on as its ``\\uXXXX`` escape (:func:`escape_json`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import Any, NoReturn

import orjson

#: Bidi controls: the characters with the Unicode property Bidi_Control (Unicode Character Database,
#: PropList.txt; the explicit formatting characters of UAX #9, "Unicode Bidirectional Algorithm", plus the
#: implicit marks): U+061C ARABIC LETTER MARK, U+200E/U+200F LEFT-TO-RIGHT / RIGHT-TO-LEFT MARK, U+202A-U+202E
#: embeddings, PDF and overrides, U+2066-U+2069 isolates.  They reorder the text shown around them ("Trojan
#: Source", CVE-2021-42574), so a log value could display as something else than it holds.
BIDI_CONTROLS = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
#: U+2028 LINE SEPARATOR (general category Zl) and U+2029 PARAGRAPH SEPARATOR (Zp): line breaks to Unicode
#: (UAX #14, class BK), so one of them in a model name would break a table row or a one-line message in two.
LINE_SEPARATORS = "\u2028\u2029"
#: Invisible format characters (general category Cf, all Default_Ignorable_Code_Point in the UCD's
#: DerivedCoreProperties.txt): they have no glyph and no width, so text holding them shows as other text
#: (``gpt\u200b-4o`` looks like ``gpt-4o``; tag characters U+E0020-U+E007F spell hidden ASCII, "ASCII
#: smuggling" of instructions to a model).  U+00AD SOFT HYPHEN, U+180E MONGOLIAN VOWEL SEPARATOR, U+200B ZERO
#: WIDTH SPACE, U+2060-U+2064 WORD JOINER and invisible operators, U+206A-U+206F deprecated format characters,
#: U+FEFF ZERO WIDTH NO-BREAK SPACE (a BOM inside text), U+FFF9-U+FFFB interlinear annotation controls (they
#: can hide the annotated text), U+E0001 and U+E0020-U+E007F tag characters.  Kept as they are: U+200C/U+200D
#: ZERO WIDTH NON-JOINER / JOINER (Persian and Indic spelling, emoji sequences), the other Cf characters of
#: Unicode 15 (Arabic, Syriac and Kaithi number and end-of-ayah signs, which are drawn; Egyptian hieroglyph,
#: shorthand and musical-symbol layout controls), and variation selectors (category Mn, emoji presentation).
#: (The subdivision flags of England, Scotland and Wales are tag sequences: they show as escapes.)
INVISIBLE_FORMAT = "\xad\u180e\u200b\u2060-\u2064\u206a-\u206f\ufeff\ufff9-\ufffb\U000e0001\U000e0020-\U000e007f"
# C0 controls except TAB and LF, DEL, C1 controls; the three sets above; lone surrogates (JSON "\ud800"
# decodes to one, and a terminal cannot encode it).
_UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{BIDI_CONTROLS}{LINE_SEPARATORS}{INVISIBLE_FORMAT}\ud800-\udfff]")
_UNSAFE_LINE = re.compile(f"[\x00-\x1f\x7f-\x9f{BIDI_CONTROLS}{LINE_SEPARATORS}{INVISIBLE_FORMAT}\ud800-\udfff]")

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
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def clean(text: object, *, multiline: bool = False) -> str:
    """``text`` (any value; ``None`` gives ``""``) with every unsafe character replaced by a visible escape.

    Args:
        text: untrusted text from a log.
        multiline: keep newlines (and expand tabs); when False newlines become ``⏎`` and tabs a space.

    Returns:
        A string with no ESC, no other C0/C1 control character (except ``\\n`` when ``multiline``), no bidi
        control (:data:`BIDI_CONTROLS`), no line or paragraph separator (:data:`LINE_SEPARATORS`), no invisible
        format character (:data:`INVISIBLE_FORMAT`) and no lone surrogate.  A control of Latin-1 is written
        ``\\x1b``, another character ``\\u202e`` (``\\U000e0041`` beyond U+FFFF), a lone surrogate U+FFFD.
    """
    s = "" if text is None else str(text)
    if multiline:
        return _UNSAFE.sub(_escape, s.replace("\r\n", "\n")).expandtabs(TAB_WIDTH)
    return _UNSAFE_LINE.sub(_escape, s)


#: Characters that take no cell though :func:`unicodedata.combining` gives them class 0 and their category is no
#: mark: the zero-width space and joiners (U+200B-U+200D), and the Hangul medial vowels and final consonants
#: (U+1160-U+11FF, U+D7B0-U+D7FF), which join the syllable before them (wcwidth and glibc draw them in 0 cells).
_ZERO_CELLS = re.compile("[\u200b-\u200d\u1160-\u11ff\ud7b0-\ud7ff]")


def cells(text: str) -> int:
    """The width of a (clean) text in terminal cells: 2 for East Asian wide and full-width characters (CJK,
    most emoji: Unicode ``East_Asian_Width`` W or F, UAX #11), 0 for combining marks (a nonzero canonical
    combining class, or general category Mn or Me: Thai and Devanagari vowel signs and variation selectors are
    nonspacing marks of class 0), zero-width joiners and conjoining Hangul jamo, 1 for the others."""
    n = 0
    for ch in text:
        if ch.isascii():
            n += 1
        elif unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me") or _ZERO_CELLS.match(ch):
            continue
        else:
            n += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return n


def pad(text: str, width: int) -> str:
    """``text`` padded with spaces on the right to ``width`` terminal cells (:func:`cells`); as is when wider."""
    return text + " " * max(0, width - cells(text))


def clip(text: object, width: int) -> str:
    """:func:`clean` ``text`` cut to at most ``width`` terminal cells (``width`` >= 1, :func:`cells`: a CJK
    character or an emoji is two) for a table column, never in the middle of an escape (``\\u2028`` cut to
    ``\\u2`` would read as other text); a cut text ends with ``…``."""
    s = clean(text)
    if cells(s) <= width:
        return s
    # (each character cleaned alone is what it is in the whole text: the escapes are of single characters; the
    # marks after the last character kept stay with it)
    kept, used = [], 0
    for ch in "" if text is None else str(text):
        shown = clean(ch)
        used += cells(shown)
        if used > width - 1:
            break
        kept.append(shown)
    return "".join(kept) + "…"


#: Paths shown under another name (real path -> shown name): a private copy of standard input is ``-``.
_SHOWN_AS: dict[str, str] = {}


def show_as(path: str, name: str) -> None:
    """From now on, write ``path`` as ``name`` in the command's output (:func:`shown`, :func:`shown_bytes`)."""
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


#: A lone surrogate (U+D800-U+DFFF): JSON "\\ud800" decodes to one, and so does a file name that is not UTF-8
#: (Python reads byte 0xff of a name as U+DCFF); UTF-8 cannot hold it, so orjson refuses the string.
_SURROGATE = re.compile("[\ud800-\udfff]")


def _ranges(spec: str) -> str:
    """The characters of a regex class body such as ``"\u202a-\u202e\u2066"`` (literal characters and
    ``a-b`` ranges only), written out one by one."""
    out: list[str] = []
    i = 0
    while i < len(spec):
        if i + 2 < len(spec) and spec[i + 1] == "-":
            out += map(chr, range(ord(spec[i]), ord(spec[i + 2]) + 1))
            i += 3
        else:
            out.append(spec[i])
            i += 1
    return "".join(out)


#: The characters JSON lets a string hold as they are and :func:`clean` escapes (orjson escapes only
#: U+0000-U+001F): DEL, the C1 controls U+0080-U+009F (U+009B is a CSI, U+009D an OSC on terminals that take
#: 8-bit controls), the bidi controls (:data:`BIDI_CONTROLS`: text shown in another order than it is, "Trojan
#: Source", CVE-2021-42574), the line and paragraph separators (:data:`LINE_SEPARATORS`: a line break to some
#: viewers, and not allowed in a JavaScript string before ES2019) and the invisible format characters
#: (:data:`INVISIBLE_FORMAT`).  One set with the screen's, so a JSON output hides nothing the text output shows.
JSON_UNSAFE_CHARS = "\x7f" + _ranges("\x80-\x9f" + BIDI_CONTROLS + LINE_SEPARATORS + INVISIBLE_FORMAT)


def _json_escape_of(ch: str) -> bytes:
    """``ch`` as a JSON ``\\uXXXX`` escape (a surrogate pair beyond U+FFFF, as JSON writes those)."""
    code = ord(ch)
    if code > 0xFFFF:
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}".encode()
    return f"\\u{code:04x}".encode()


#: Each of :data:`JSON_UNSAFE_CHARS` in UTF-8 -> its JSON escape (``\\u009b``: the same string to a JSON reader).
_JSON_ESCAPES = {ch.encode(): _json_escape_of(ch) for ch in JSON_UNSAFE_CHARS}

#: The UTF-8 of :data:`JSON_UNSAFE_CHARS`, longest first.  In valid UTF-8 a lead byte starts a character, so a
#: match is always one whole character (checked against the table by the tests).
_JSON_UNSAFE = re.compile(b"|".join(re.escape(k) for k in sorted(_JSON_ESCAPES, key=len, reverse=True)))

#: The ASCII bytes but DEL: deleted before the search, which then reads only the rest (a report is mostly ASCII;
#: the search of the whole of a 56 MB report took 0.3-0.45 s, the deletion and the search of the rest 0.05 s).
_ASCII_BUT_DEL = bytes(range(0x7F))


def escape_json(data: bytes) -> bytes:
    """Serialized UTF-8 JSON (orjson's output) with each of :data:`JSON_UNSAFE_CHARS` written as its ``\\uXXXX``
    escape, so that no C1 control, bidi control or line separator reaches the terminal.  Outside strings JSON
    holds only ASCII, so every such character is inside a string, and the escape keeps the document valid and equal
    in value (``json.loads`` gives the same strings).  Data without any (the common case) is returned as it is,
    after one pass over it and a search of its non-ASCII bytes.

    The dashboard's plan file, or any other JSON written for a person to read, can reuse it on orjson's bytes (as
    :func:`json_bytes` does)."""
    if not _JSON_UNSAFE.search(data.translate(None, _ASCII_BUT_DEL)):
        return data
    return _JSON_UNSAFE.sub(lambda m: _JSON_ESCAPES[m.group()], data)


def json_bytes(value: Any, option: int | None = None) -> bytes:
    """``value`` (dicts, lists, tuples, strings, numbers, booleans, ``None``) as UTF-8 JSON for the command's
    output: ``orjson.dumps(value, option=option)``, except that a lone surrogate in a string or a key (a log's
    ``"\\ud800"``, a file name that is not UTF-8) is written as U+FFFD, the replacement character, as
    :func:`clean` shows it (orjson refuses it with a TypeError), and that no terminal control
    is written as it is (:func:`escape_json`).  Every JSON output (``report --json`` / ``--jsonl`` /
    ``--follow --jsonl``, ``check --json``, ``plan --json``, ``schema --json``) is written through this function or
    :func:`json_lines`.

    Raises:
        TypeError: ``value`` holds what JSON cannot (orjson's own error; a program error, not bad input).
    """
    return escape_json(_dumps(value, option))


def json_lines(values: Iterable[Any]) -> bytes:
    """One :func:`json_bytes` object per line (JSON Lines), each line ending in a newline (escaped in one pass)."""
    return escape_json(b"".join(_dumps(v, orjson.OPT_APPEND_NEWLINE) for v in values))


def _dumps(value: Any, option: int | None) -> bytes:
    """``orjson.dumps``, with each lone surrogate written as U+FFFD (see :func:`json_bytes`)."""
    try:
        return orjson.dumps(value, option=option)
    except TypeError:  # (orjson.JSONEncodeError is a TypeError) the rare case: copy the value without surrogates
        return orjson.dumps(_without_surrogates(value), option=option)


def _without_surrogates(value: Any) -> Any:
    """A copy of a JSON value whose strings and keys have each lone surrogate replaced by U+FFFD (containers are
    copied, other values kept; an output document is a few levels deep, so the recursion is shallow)."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_without_surrogates(k): _without_surrogates(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_without_surrogates(v) for v in value]
    return value


def write_out(text: str) -> None:
    """Write ``text`` (a JSON document made by :func:`json_bytes`: no terminal control characters) to standard
    output as it is; a reader that went away ends the command quietly (:func:`output_closed`)."""
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
