"""Text tables that fit a terminal: columns dropped, names cut, then more columns dropped or shortened, until a row
fits the width given (from :data:`MIN_WIDTH` up).

``report`` prints its call table and its sessions table through :func:`fit_table`.  Without a width (output to a
pipe or a file, ``COLUMNS`` not set to one) every column keeps its natural width, so scripts read the same
columns whatever the terminal.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ctxwatch.output.safetext import cells, clean, clip

#: The narrowest width the report's tables are laid out to fit: below it they keep their narrowest layout (every
#: column that can go left out, every name cut to its least) and may be wider than the width.  The report's other
#: lines are broken to any width (:func:`wrap`): below this one too, as narrow as they can be made, as the tables.
MIN_WIDTH = 40


@dataclass(frozen=True, slots=True)
class Column:
    """One column: ``head``, its ``cells`` (text as logged: made terminal-safe here, :func:`clean`),
    ``right``-aligned or not, its ``natural`` width (the width without a terminal; 0: as wide as its widest
    cell), the ``least`` width it may be narrowed to (cells cut with ``…``; 0: never narrowed, as wide as its
    widest cell whatever its natural width: a number is never cut) and ``drop``
    (columns are dropped in increasing ``drop`` before any name is cut, 0: never dropped); ``gap``: the spaces
    before it.

    Where the row is still too wide with every name cut to its ``least``, ``shed`` says the order (increasing,
    0: never) in which the column is left out then, the names widening again into the room it leaves; ``short``
    is a shorter form of the cells (a timestamp's date alone), taken in the same order at rank ``shorten``
    instead of cutting them: a column with a short form is never cut with ``…``."""

    head: str
    cells: Sequence[str]
    right: bool = False
    natural: int = 0
    least: int = 0
    drop: int = 0
    gap: int = 1
    shed: int = 0
    short: Sequence[str] | None = None
    shorten: int = 0


def _widest(c: Column, cells_: Sequence[str] | None = None) -> int:
    # (in terminal cells: a CJK character or an emoji takes two)
    return max([cells(c.head), *(cells(clean(x)) for x in (c.cells if cells_ is None else cells_))])


def _total(widths: Sequence[int | None], columns: Sequence[Column]) -> int:
    """The row's width in cells: the shown columns' widths and the gaps between them."""
    shown = [(w, c.gap) for w, c in zip(widths, columns, strict=True) if w is not None]
    return sum(w for w, _g in shown) + sum(g for _w, g in shown[1:])


def _cut(widths: list[int | None], columns: Sequence[Column], width: int) -> None:
    """Narrow the names in ``widths`` (in place) a cell at a time, the widest first, down to their ``least``,
    until the row fits ``width`` or none can be narrowed further."""
    over = _total(widths, columns) - width
    while over > 0:
        room = [k for k, c in enumerate(columns) if c.least and (w := widths[k]) is not None and w > c.least]
        if not room:
            break
        k = max(room, key=lambda k: widths[k] or 0)
        widths[k] = (widths[k] or 0) - 1
        over -= 1


def fit_widths(columns: Sequence[Column], width: int | None) -> list[int | None]:
    """Each column's width (``None``: dropped) for a row of at most ``width`` cells (``None``: natural widths,
    widened to a column's widest cell: piped or redirected, nothing is cut).

    With a width, a column is first as wide as its widest cell, a name (a column with a ``least``) never wider
    than its natural width, as names are the only cells cut (a number or a timestamp shown is whole); then
    columns are dropped by ``drop`` order while the row is too wide, then the narrowable ones lose a cell at a
    time, the widest first, down to their ``least``; then, while it is still too wide, columns are shortened
    (``short``) or left out (``shed``) in the order of their ranks, the names cut again each time from their
    uncut widths.  A row still too wide after all of that (below :data:`MIN_WIDTH`) wraps on the terminal."""
    if width is None:
        return [max(c.natural, _widest(c)) for c in columns]
    widths: list[int | None] = [min(c.natural, _widest(c)) if c.natural and c.least else _widest(c)
                                for c in columns]
    for k in sorted((k for k, c in enumerate(columns) if c.drop), key=lambda k: columns[k].drop):
        if _total(widths, columns) <= width:
            break
        widths[k] = None
    uncut = list(widths)
    _cut(widths, columns, width)
    steps = sorted([(c.shorten, 0, k) for k, c in enumerate(columns) if c.short is not None and c.shorten]
                   + [(c.shed, 1, k) for k, c in enumerate(columns) if c.shed])
    for _rank, leave, k in steps:
        if _total(widths, columns) <= width:
            break
        if uncut[k] is None:
            continue
        uncut[k] = None if leave else _widest(columns[k], columns[k].short)
        widths = list(uncut)
        _cut(widths, columns, width)
    return widths


def fit_table(columns: Sequence[Column], width: int | None) -> list[str]:
    """The header row and one row per cell index, columns ``gap`` spaces apart and laid out by
    :func:`fit_widths`; trailing spaces stripped.  A column given narrower than its widest cell shows its
    ``short`` form where it has one, else its cells cut with ``…``."""
    widths = fit_widths(columns, width)
    rows = len(columns[0].cells) if columns else 0
    shown = [c.short if c.short is not None and w is not None and w < _widest(c) else c.cells
             for c, w in zip(columns, widths, strict=True)]
    out = []
    for r in range(-1, rows):
        line = ""
        for c, w, texts in zip(columns, widths, shown, strict=True):
            if w is None:
                continue
            raw = c.head if r < 0 else texts[r]
            text = clean(raw)
            # (cut from the log's own text: a cut never splits the visible escape of a control character)
            text = text if cells(text) <= w else clip(raw, w)
            room = " " * max(0, w - cells(text))  # (padded in cells, not characters)
            line += (" " * c.gap if line else "") + (room + text if c.right else text + room)
        out.append(line.rstrip())
    return out


def left_out(columns: Sequence[Column], width: int | None) -> str | None:
    """The line saying which columns :func:`fit_table` leaves out at ``width`` (``(80 columns: line, window and
    free left out; --json has them)``), ``None`` when it shows them all."""
    heads = [c.head.strip() for c, w in zip(columns, fit_widths(columns, width), strict=True) if w is None]
    if not heads:
        return None
    named = heads[0] if len(heads) == 1 else f"{', '.join(heads[:-1])} and {heads[-1]}"
    return f"({width} columns: {named} left out; --json has them)"


def wrap(text: str, width: int, indent: str = "  ") -> list[str]:
    """``text`` (one clean line) broken at its spaces into lines of at most ``width`` terminal cells
    (:func:`~ctxwatch.output.safetext.cells`: a CJK character or an emoji is two, a combining mark none; the
    stdlib's :func:`textwrap.wrap` counts characters), the later lines starting with ``indent``.  As
    :func:`textwrap.wrap` with ``break_long_words=False``: a word wider than the room is kept whole on a line of
    its own, the spaces at a break are dropped, the spaces between words kept."""
    chunks = [c for c in re.split("( +)", text) if c]
    lines: list[str] = []
    k = 0
    while k < len(chunks):
        lead = indent if lines else ""
        room = width - cells(lead)
        if lines and not chunks[k].strip(" "):
            k += 1  # (the spaces at the start of a later line)
            continue
        line: list[str] = []
        used = 0
        while k < len(chunks) and used + cells(chunks[k]) <= room:
            used += cells(chunks[k])
            line.append(chunks[k])
            k += 1
        if not line and k < len(chunks):  # (a word wider than the room: whole, alone)
            line.append(chunks[k])
            k += 1
        if line and not line[-1].strip(" "):
            line.pop()
        if line:
            lines.append(lead + "".join(line))
    return lines

