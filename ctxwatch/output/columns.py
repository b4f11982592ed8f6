"""Text tables that fit a terminal: columns narrowed, then dropped, until a row fits the width given.

``report`` prints its call table and its sessions table through :func:`fit_table`.  Without a width (output to a
pipe or a file, ``COLUMNS`` not set to one) every column keeps its natural width, so scripts read the same
columns whatever the terminal.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ctxwatch.output.safetext import cells, clean, clip


@dataclass(frozen=True, slots=True)
class Column:
    """One column: ``head``, its ``cells`` (text as logged: made terminal-safe here, :func:`clean`),
    ``right``-aligned or not, its ``natural`` width (the width without a terminal; 0: as wide as its widest
    cell), the ``least`` width it may be narrowed to (cells cut with ``…``; 0: never narrowed) and ``drop``
    (columns are dropped in increasing ``drop``, 0: never dropped); ``gap``: the spaces before it."""

    head: str
    cells: Sequence[str]
    right: bool = False
    natural: int = 0
    least: int = 0
    drop: int = 0
    gap: int = 1


def _widest(c: Column) -> int:
    # (in terminal cells: a CJK character or an emoji takes two)
    return max([cells(c.head), *(cells(clean(x)) for x in c.cells)])


def fit_widths(columns: Sequence[Column], width: int | None) -> list[int | None]:
    """Each column's width (``None``: dropped) for a row of at most ``width`` cells (``None``: natural widths,
    widened to a column's widest cell: piped or redirected, nothing is cut).

    With a width, a column is first as wide as its widest cell (never wider than its natural width); then
    columns are dropped by ``drop`` order while the row is too wide, then the narrowable ones lose a cell at a
    time, the widest first, down to their ``least``; a row that still does not fit wraps on the terminal."""
    if width is None:
        return [max(c.natural, _widest(c)) for c in columns]
    widths: list[int | None] = [min(c.natural, _widest(c)) if c.natural else _widest(c) for c in columns]

    def total() -> int:
        shown = [(w, c.gap) for w, c in zip(widths, columns, strict=True) if w is not None]
        return sum(w for w, _g in shown) + sum(g for _w, g in shown[1:])

    for k in sorted((k for k, c in enumerate(columns) if c.drop), key=lambda k: columns[k].drop):
        if total() <= width:
            break
        widths[k] = None
    # Then the names are cut, a cell at a time from the widest of them, so that each keeps what it can.
    over = total() - width
    while over > 0:
        room = [k for k, c in enumerate(columns) if c.least and (w := widths[k]) is not None and w > c.least]
        if not room:
            break
        k = max(room, key=lambda k: widths[k] or 0)
        widths[k] = (widths[k] or 0) - 1
        over -= 1
    return widths


def fit_table(columns: Sequence[Column], width: int | None) -> list[str]:
    """The header row and one row per cell index, columns ``gap`` spaces apart and laid out by
    :func:`fit_widths`; trailing spaces stripped."""
    widths = fit_widths(columns, width)
    rows = len(columns[0].cells) if columns else 0
    out = []
    for r in range(-1, rows):
        line = ""
        for c, w in zip(columns, widths, strict=True):
            if w is None:
                continue
            raw = c.head if r < 0 else c.cells[r]
            text = clean(raw)
            # (cut from the log's own text: a cut never splits the visible escape of a control character)
            text = text if cells(text) <= w else clip(raw, w)
            room = " " * max(0, w - cells(text))  # (padded in cells, not characters)
            line += (" " * c.gap if line else "") + (room + text if c.right else text + room)
        out.append(line.rstrip())
    return out
