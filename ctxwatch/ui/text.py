"""Untrusted log text made safe to show, and number formatting shared by the widgets.

Log text is data, never markup: everything shown goes through :func:`literal` (a :class:`rich.text.Text`,
which Rich never parses for ``[bold]`` or ``[@click=...]``) after :func:`clean` has replaced every control
character (ESC included, so ``\\x1b[31m`` cannot colour or move anything), bidirectional overrides and lone
surrogates with visible escapes.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import datetime

from rich.cells import cell_len, chop_cells
from rich.text import Text

from ctxwatch.model import Breakdown, Call, Src, shown_fraction
from ctxwatch.output.safetext import clean as _clean_core


def clean(text: str, *, multiline: bool = True) -> str:
    """``text`` with every unsafe character replaced by a visible escape (see :func:`ctxwatch.output.safetext.clean`).

    The dashboard keeps newlines by default (``multiline=True``); one-line cells pass ``multiline=False``.
    """
    return _clean_core(text, multiline=multiline)


def literal(text: str | None, style: str = "", *, multiline: bool = False, limit: int | None = None,
            middle: bool = False) -> Text:
    """A :class:`~rich.text.Text` showing ``text`` literally (cleaned, never parsed as markup).

    Args:
        text: untrusted text (``None`` shows as empty).
        style: a Rich style for the whole text (our own, never from the log).
        multiline: keep newlines.
        limit: cut to at most this many terminal cells, ``…`` included (:func:`cut_cells`).
        middle: cut in the middle instead (``start…end``), for paths whose two ends both tell files apart.
    """
    s = cut_cells(text or "", limit, middle=middle, multiline=multiline) if limit is not None else text or ""
    return Text(clean(s, multiline=multiline), style=style)


def cut_cells(text: str, limit: int, *, middle: bool = False, multiline: bool = False) -> str:
    """``text`` whole when it takes at most ``limit`` terminal cells as shown, else cut to at most ``limit``
    cells with ``…`` (one cell) at its end, or in its middle (``start…end``) when ``middle`` and ``limit`` >= 5.

    Widths are the cells each character takes once cleaned (:func:`clean`, with ``multiline``), not characters:
    a CJK character takes two, an ESC the four of its ``\\x1b``, a kept newline one (as a character did).  The
    cut falls between characters of ``text``, so never inside a wide character (where one would, it is left
    out and the text is a cell short) nor inside an escape.  Only the characters up to the cut are measured
    (and the end's, for ``middle``): a message's whole text is cut without being sliced first, so that a cut
    is never made without its ``…``.
    """
    if _fits(text, limit, multiline):
        return text
    room = max(0, limit - 1)
    if middle and limit >= 5:
        head = _fit_start(text, room // 2, multiline)
        tail = _fit_end(text, room - sum(_cells_of(ch, multiline) for ch in text[:head]), multiline)
        return text[:head] + "…" + text[tail:]
    return text[:_fit_start(text, room, multiline)] + "…"


def cut_words(text: str, limit: int, least: float = 0.5) -> str:
    """:func:`cut_cells` of one-line ``text``, the cut moved back to the end of the last whole word (with the
    separators before it dropped: no ``, …`` or ``(…``) unless that leaves less than ``least`` of the room;
    ``…`` marks every cut."""
    cut = cut_cells(text, limit)
    if cut == text or limit < 2:
        return cut
    kept = cut[:-1]
    if kept and not kept[-1].isspace() and not text[len(kept)].isspace():  # (the cut falls inside a word)
        start = kept.rfind(" ")
        word_end = kept[:start].rstrip(" ·,;:([{—–-") if start >= 0 else ""
        if cell_len(word_end) >= (limit - 1) * least:
            kept = word_end
    return kept.rstrip(" ·,;:([{—–-") + "…"


def fit_parts(parts: Sequence[tuple[str, str]], width: int, give_up: Sequence[tuple[int, int]]) -> Text:
    """``parts`` (one-line text, style) in reading order as one line of at most ``width`` cells.  Where they
    do not fit, the parts of ``give_up`` (index, cells it keeps at least), in that order, give up whole words
    (:func:`cut_words`) until the line fits; then the line is cut at its end.  ``…`` marks every cut, and
    stands for a part left out whole."""
    texts = [t for t, _style in parts]
    for index, least in give_up:
        excess = sum(cell_len(t) for t in texts) - width
        if excess <= 0:
            break
        texts[index] = _shorter(texts[index], max(least, cell_len(texts[index]) - excess))
    out = Text()
    used = 0
    for i, ((_t, style), text) in enumerate(zip(parts, texts, strict=True)):
        more = any(texts[i + 1:])
        if used + cell_len(text) + more <= width or not text:
            out.append(text, style)
            used += cell_len(text)
            continue
        # (a part that fits only without the ``…`` of those after it is cut too: the ``…`` must be there)
        out.append(_shorter(text + "…" if more else text, width - used), style)
        break
    return out


def _shorter(text: str, cells: int) -> str:
    """``text`` in at most ``cells`` cells (at least one): whole, cut after a word, or ``…`` (`` …`` for a part
    that starts with a space) where no word fits."""
    if cell_len(text) <= cells:
        return text
    cut = cut_words(text, cells) if cells >= 2 else "…"
    return " …" if cut == "…" and text[:1].isspace() and cells >= 2 else cut


def one_line(text: str, limit: int, style: str = "") -> Text:
    """:func:`flat_start` of ``text`` shown literally (:func:`literal`)."""
    return literal(flat_start(text, limit), style)


def flat_start(text: str, limit: int) -> str:
    """The start of ``text`` on one line (each run of whitespace, newlines included, one space) in at most
    ``limit`` cells as shown, ending with ``…`` where anything was left out.  Only the start of a long text
    is read (a message may be megabytes)."""
    bound = 4 * max(1, limit) + 4  # (more characters than the cells: whitespace runs collapse)
    flat = " ".join(text[:bound].split())
    if len(text) > bound and _fits(flat, limit - 1, False):
        flat += "…"  # (the rest was not read: say so even where what was read fits)
    return cut_cells(flat, limit)


def _cells_of(ch: str, multiline: bool) -> int:
    """Cells one character of log text takes on screen: its own, or its cleaned form's when it is not
    printable; a kept newline (or another character that cleans to no cells) counts one."""
    if ch.isprintable():
        return cell_len(ch)
    return cell_len(clean(ch, multiline=multiline)) or 1


def _fits(text: str, limit: int, multiline: bool) -> bool:
    """Whether ``text`` takes at most ``limit`` cells as shown, measured only until it passes them."""
    used = 0
    for ch in text:
        used += _cells_of(ch, multiline)
        if used > limit:
            return False
    return True


def _fit_start(text: str, cells: int, multiline: bool) -> int:
    """How many characters of ``text`` from the start take at most ``cells`` cells (a zero-width character
    stays with the one before it)."""
    used = 0
    for i, ch in enumerate(text):
        used += _cells_of(ch, multiline)
        if used > cells:
            return i
    return len(text)


def _fit_end(text: str, cells: int, multiline: bool) -> int:
    """Where the longest end of ``text`` starts that takes at most ``cells`` cells and does not start with a
    zero-width character (one left without the character it goes with)."""
    used, start = 0, len(text)
    for i in range(len(text) - 1, -1, -1):
        used += _cells_of(text[i], multiline)
        if used > cells:
            break
        start = i
    while start < len(text) and _cells_of(text[start], multiline) == 0:
        start += 1
    return start


def tokens(n: int | None) -> str:
    """``12,345`` for a token count; ``?`` when unknown."""
    return "?" if n is None else f"{n:,}"


def short_tokens(n: float | None) -> str:
    """A compact token count for narrow places: ``950``, ``12.3k``, ``1.2M``; ``?`` when unknown."""
    if n is None:
        return "?"
    a = abs(n)
    if a >= 1_000_000:
        return f"{n / 1_000_000:.1f}M".replace(".0M", "M")
    if a >= 10_000:
        return f"{n / 1000:.0f}k"
    if a >= 1000:
        return f"{n / 1000:.1f}k".replace(".0k", "k")
    return f"{int(n)}"


def pct(part: int | None, whole: int | None, digits: int = 1) -> str:
    """``part`` as a percentage of ``whole`` (``12.3%``); ``?`` when either is unknown or ``whole`` is 0."""
    if part is None or not whole:
        return "?"
    return f"{100 * part / whole:.{digits}f}%"


#: Suffix marking a number that is not measured directly (shown in the table and on the bar).
MARKS: dict[Src, str] = {Src.INFERRED: "~", Src.CALIBRATED: "≈", Src.UNKNOWN: "?"}


def marked(n: int | None, src: Src) -> str:
    """A token count with its source mark: ``12,036~`` for inferred, ``?`` for unknown."""
    if n is None:
        return "?"
    return f"{n:,}{MARKS.get(src, '')}"


def clock(ts: float | None) -> str:
    """Local wall-clock time ``HH:MM:SS`` of epoch seconds (honours ``TZ``); ``-`` when unknown."""
    if ts is None:
        return "-"
    try:
        return datetime.fromtimestamp(ts).strftime("%H:%M:%S")
    except (OverflowError, OSError, ValueError):
        return "-"


def stamp(ts: float | None) -> str:
    """Local date and time ``YYYY-MM-DD HH:MM:SS`` of epoch seconds; ``-`` when unknown."""
    if ts is None:
        return "-"
    try:
        return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M:%S")
    except (OverflowError, OSError, ValueError):
        return "-"


def flow(segments: list[Text], width: int, sep: str = " · ") -> Text:
    """Join ``segments`` with ``sep``, breaking lines only between segments so none is cut in two.

    A segment longer than ``width`` is truncated with an ellipsis.
    """
    out = Text()
    line_len = 0
    for seg in segments:
        if not seg.plain:
            continue
        seg = seg.copy()
        if seg.cell_len > width:
            seg.truncate(max(1, width), overflow="ellipsis")
        if line_len and line_len + len(sep) + seg.cell_len > width:
            out.append("\n")
            line_len = 0
        elif line_len:
            out.append(sep)
            line_len += len(sep)
        out.append_text(seg)
        line_len += seg.cell_len
    return out


def toast_width(screen_width: int) -> int:
    """Cells of text on a line of a notification (a Textual toast) on a screen ``screen_width`` cells wide.

    Textual's ``Toast`` is 60 cells wide, at most half of its rack (the screen less the rack's 2-cell scrollbar),
    less its 1-cell left border and a cell of padding on either side: 36 at 80 columns, 57 from 125 on
    (measured with Textual 8; ``tests/test_ui_notes.py`` checks it against a toast on screen).  At least 10.
    """
    return max(10, min(60, (screen_width - 2) // 2) - 3)


def saved_where(path: str, width: int) -> str:
    """Where a file was written, for a notification whose lines hold ``width`` cells: the file's name on a line of
    its own (a name longer than the line wraps, never cut: it is what a person looks for), then ``in <folder>``,
    the folder whole, on as many lines as it takes, each broken after a path separator where one falls within
    the line (a folder cut short, say ``/root/.lo…/share/ctxwatch/exports``, did not say where the file is).  Both
    are cleaned (:func:`clean`): a folder's name is not ours."""
    name = clean(os.path.basename(path), multiline=False)
    folder = clean(os.path.dirname(path) or ".", multiline=False)
    return name + "\n" + "\n".join(path_lines("in " + folder, width))


def path_lines(text: str, width: int) -> list[str]:
    """``text`` (a path) on lines of at most ``width`` cells (at least 1), broken after the path separator before
    a part that would pass the line's end, and within a part longer than a line; nothing is left out."""
    width = max(1, width)
    parts = [p + os.sep for p in text.split(os.sep)]
    parts[-1] = parts[-1][:-len(os.sep)]
    lines = [""]
    for part in parts:
        if lines[-1] and cell_len(lines[-1] + part) > width >= cell_len(part):
            lines.append("")  # (a part that fits a line of its own starts one; a longer one fills this line first)
        lines[-1] += part
        while cell_len(lines[-1]) > width:  # (a part longer than a line: cut where the line ends)
            head, *rest = chop_cells(lines[-1], width)
            lines[-1:] = [head, "".join(rest)]
    return [ln for ln in lines if ln] or [""]


def row_text(call: Call, shown: Breakdown | None = None) -> str:
    """Lower-case text a filter matches against: call number (index + 1), time, model, context, session and
    the numbers, each as typed (``33153``) and as shown (``33,153``), the used % as shown (``64.2%``), and
    ``compaction`` / ``implausible`` where they apply.  The floor and history are there as accounted and, where
    ``shown`` (the table's, :func:`cell_texts`) differs, as shown too."""
    numbers = [n for n in (call.floor_tokens, call.history_tokens, call.reserve_tokens, call.prompt_reported)
               if n is not None]
    if shown is not None and shown.calibrated:
        numbers += [n for n in (shown.floor_tokens, shown.history_tokens) if n is not None]
    used = shown_fraction(call, shown)
    return " ".join(str(x) for x in (
        call.index + 1, clock(call.timestamp), call.model or "", call.context, call.session or "",
        *numbers, *(f"{n:,}" for n in numbers if n >= 1000), f"{100 * used:.1f}%" if used is not None else "",
        "compaction" if call.compaction else "", "implausible" if call.prompt_implausible else "")).lower()


#: What :func:`pack_parts` breaks a line at.
PART_SEP = " · "


def pack_parts(text: Text, width: int) -> Text:
    """``text``'s lines broken only between their parts (the pieces between :data:`PART_SEP`), each part kept on
    one line where it fits in ``width`` cells: a continuation line starts with ``· ``.  A part too wide for
    a line follows the part before it and is wrapped between its words.  ``width`` 0 or less: ``text`` as it is."""
    if width <= 0:
        return text
    out = Text(end="")
    for n, line in enumerate(text.split("\n", allow_blank=True)):
        if n:
            out.append("\n")
        used = 0
        for i, part in enumerate(line.split(PART_SEP, allow_blank=True)):
            size = part.cell_len
            # (a part too wide for any line is wrapped wherever it starts: it starts on the line it follows)
            if i and used + len(PART_SEP) + size > width and size <= width - 2:
                out.append("\n·" + PART_SEP[2:])
                used = 2
            elif i:
                out.append(PART_SEP)
                used += len(PART_SEP)
            out.append_text(part)
            used += size
    return out
