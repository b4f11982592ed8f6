"""The context bar: one call's prompt as floor | history | reserve | free against its window, with the
compaction trigger and the budget marked, a legend and a line of thresholds
(:mod:`ctxwatch.ui.widgets.limits`).

The parts differ by glyph as well as colour, so the bar reads without colour.  The pure functions
(:func:`bar_parts`, :func:`bar_line`, :func:`legend`) are shared with the eviction preview's bars.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual.geometry import Size
from textual.widget import Widget

from ctxwatch.accounting import NO_CALIBRATION, Calibrations
from ctxwatch.analysis import Limits
from ctxwatch.config import Settings
from ctxwatch.model import Breakdown, Call, Src, raw_breakdown, shown_free
from ctxwatch.ui import text as tx
from ctxwatch.ui.widgets.limits import implausible_note, thresholds_line

#: Glyph and colour of each part of the bar. Glyphs differ so the bar reads without colour; the
#: colours are the 16 basic ANSI ones so that they survive 16-colour terminals.
PARTS: dict[str, tuple[str, str]] = {
    "floor": ("█", "magenta"),
    "history": ("▓", "cyan"),
    "reserve": ("░", "yellow"),
    "free": ("·", "bright_black"),
}
#: Glyph drawn on the bar at the compaction trigger and at the budget.
MARK_GLYPH = "┃"
MARK_STYLE = "bold red"
#: The style of each part and of the marks (``mark``), by name.  :class:`ContextBar` takes them from its
#: component classes (``app.tcss``); these are the same styles for bars drawn elsewhere (the eviction preview).
PALETTE: dict[str, Style | str] = {**{name: colour for name, (_glyph, colour) in PARTS.items()}, "mark": MARK_STYLE}


@dataclass(frozen=True, slots=True)
class BarParts:
    """The four parts of one call's bar, in tokens, and the scale the bar is drawn against.

    Attributes:
        floor, history, reserve, free: tokens (``free`` is ``None`` when the window is unknown; a negative
            value means the call overflowed the window).
        scale: tokens the full bar width stands for: the window, or everything when it overflowed or the
            window is unknown.
        window: the window (``None`` = unknown).
        trigger, budget: threshold positions in tokens (``None`` when the window is unknown).
    """

    floor: int
    history: int
    reserve: int
    free: int | None
    scale: int
    window: int | None
    trigger: int | None
    budget: int | None


def bar_parts(call: Call, settings: Settings, shown: Breakdown | None = None) -> BarParts:
    """Split a call into bar parts (unknown parts count as 0 and are labelled ``?`` in the legend).

    ``shown``: the call's floor and history as shown (:meth:`ctxwatch.accounting.Calibrations.breakdown`:
    calibrated where the tokenizer is not the model's own), else the call's own numbers."""
    b = shown or raw_breakdown(call)
    floor = b.floor_tokens or 0
    history = b.history_tokens if b.history_tokens is not None else 0
    if call.split_unknown:
        history = call.prompt_tokens or 0  # only the total is known: show it as history
    reserve = call.reserve_tokens or 0
    window = call.window
    used = floor + history + reserve
    if window:
        # The same free as report and the flags: window minus the prompt as the provider counted it (which can
        # exceed floor + history by the reply primer and the tokenizer gap) minus the reserve.
        free_shown = shown_free(call, b)
        free = free_shown if free_shown is not None else window - used
        scale = max(window, used, window - free)
        # (the call's own trigger and budget, as report and check judge it: its harness's where it has one)
        lim = Limits.of(call, settings)
        return BarParts(floor, history, reserve, free, scale, window, lim.trigger, lim.budget)
    return BarParts(floor, history, reserve, None, max(1, used), None, None, None)


def _widths(values: Sequence[int], scale: int, width: int) -> list[int]:
    """Cells per value: proportional, at least one cell for a non-zero value when room allows."""
    raw = [v * width / scale if scale else 0 for v in values]
    cells = [max(1, round(r)) if v > 0 else 0 for v, r in zip(values, raw, strict=True)]
    over = sum(cells) - width
    while over > 0:  # give back from the widest part
        i = max(range(len(cells)), key=lambda k: cells[k])
        if cells[i] <= 1:
            break
        cells[i] -= 1
        over -= 1
    return cells


def _fill(cells: list[int], values: Sequence[int], scale: int, width: int) -> None:
    """Give ``cells`` (floor, history, reserve, free) the cells rounding left over, up to ``width``, in place.

    With free tokens, free takes them (the bar ends in the window's free room).  With none (``free`` <= 0: the
    call filled or overflowed its window; or the window unknown), no cell goes to free: the parts rounded down
    furthest get one each (largest remainder), and what is left still (the provider's prompt counted more than
    floor + history) goes to the last part that has tokens, so the bar is the overflow's up to its end."""
    left = width - sum(cells)
    if left <= 0:
        return
    if values[3] > 0:
        cells[3] += left
        return
    cells[3] = 0
    have = [i for i in range(3) if values[i] > 0]
    if not have:
        return  # (nothing to draw: the bar stays short, padded with blanks by the caller)
    raw = [v * width / scale if scale else 0.0 for v in values]
    for i in sorted(have, key=lambda k: cells[k] - raw[k])[:left]:
        if raw[i] > cells[i]:
            cells[i] += 1
            left -= 1
    cells[have[-1]] += left


def bar_line(parts: BarParts, width: int, palette: Mapping[str, Style | str] = PALETTE) -> tuple[Text, Text]:
    """The marks row and the bar row of ``width`` cells, styled by ``palette`` (:data:`PALETTE`).

    The bar row draws floor ``█``, history ``▓``, reserve ``░``, free ``·`` (overflow beyond the window is
    drawn in the reserve glyph up to the bar's end, and the window edge is marked).  The marks row puts
    ``▼`` over the trigger (``T``) and budget (``B``) columns, which are also drawn on the bar as ``┃``.
    """
    width = max(1, width)
    free = max(0, parts.free) if parts.free is not None else 0
    names = ("floor", "history", "reserve", "free")
    values = [parts.floor, parts.history, parts.reserve, free]
    cells = _widths(values, parts.scale, width)
    _fill(cells, values, parts.scale, width)
    chars: list[tuple[str, Style | str]] = []
    for name, n in zip(names, cells, strict=True):
        chars.extend([(PARTS[name][0], palette[name])] * n)
    chars = (chars + [(" ", "")] * width)[:width]
    row = [" "] * width
    for tokens, letter in ((parts.trigger, "T"), (parts.budget, "B"),
                           (parts.window if parts.free is not None and parts.free < 0 else None, "W")):
        if tokens is None:
            continue
        col = min(width - 1, max(0, round(tokens * width / parts.scale) - 1))
        if row[col] != " " and col + 1 < width:
            col += 1
        row[col] = "▼"
        if col > 0 and row[col - 1] == " ":
            row[col - 1] = letter
        chars[col] = (MARK_GLYPH, palette["mark"])
    bar = Text()
    for glyph, style in chars:
        bar.append(glyph, style)
    top = Text("".join(row), style=palette["mark"])
    return top, bar


def legend(call: Call, parts: BarParts, width: int, shown: Breakdown | None = None,
           palette: Mapping[str, Style | str] = PALETTE) -> Text:
    """The bar's legend: each part's glyph (in its ``palette`` style), name, tokens and % of the window.

    Uses the most detailed variant that fits on one line of ``width`` cells (full numbers and names, then
    short names, then compact numbers such as ``12k``).  ``shown``: the floor and history as shown (as for
    :func:`bar_parts`), marked ``≈`` where calibrated.
    """
    b = shown or raw_breakdown(call)
    whole = parts.window or parts.scale
    split_unknown = call.split_unknown
    entries = [
        ("floor", b.floor_tokens, b.floor_src),
        ("history", b.history_tokens, b.history_src),
        ("reserve", call.reserve_tokens, call.reserve_src),
        ("free", parts.free, Src.UNKNOWN if parts.free is None else Src.ESTIMATED),
    ]
    if split_unknown:
        # Only the total is known (drawn in the history glyph): say so instead of two "?" parts.
        src = Src.REPORTED if call.prompt_reported is not None else Src.ESTIMATED
        entries[:2] = [("prompt", call.prompt_tokens, src)]

    def build(level: int) -> Text:
        """0: full numbers and names; 1: full numbers, short names; 2: compact numbers, tight spacing."""
        out = Text()
        for name, n, src in entries:
            part = "history" if name == "prompt" else name
            if out.plain:
                out.append(" " if level == 2 else "  ")
            out.append(PARTS[part][0] * (2 if level == 0 else 1), palette[part])
            label = {"history": "hist", "reserve": "res"}.get(name, name) if level else name
            if name == "prompt" and level == 0:
                label = "prompt (floor/history split unknown)"
            if level == 2:
                num = tx.short_tokens(n) + (tx.MARKS.get(src, "") if n is not None else "")
            else:
                num = tx.marked(n, src)
            out.append(f"{'' if level == 2 else ' '}{label} {num} {tx.pct(n, whole, 0 if level == 2 else 1)}")
        if parts.free is not None and parts.free < 0:
            over = tx.short_tokens(-parts.free) if level == 2 else tx.tokens(-parts.free)
            out.append(f"  over by {over}!", "bold red")
        return out

    for level in (0, 1):
        text = build(level)
        if text.cell_len <= width:
            return text
    return build(2)


class ContextBar(Widget):
    """The stacked bar of the selected call: floor | history | reserve | free against the window.

    Push data with :meth:`show`; the widget re-renders at its current width.  The parts and the marks are
    styled by the component classes ``context-bar--floor``, ``--history``, ``--reserve``, ``--free`` and
    ``--mark``.
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {f"context-bar--{name}" for name in PALETTE}

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._call: Call | None = None
        self._settings = Settings()
        self._note = "no calls yet"
        self._extra: Text | None = None
        self._stand_in: Call | None = None
        self._cal: Calibrations = NO_CALIBRATION
        self._floor_before: int | None = None

    @property
    def call(self) -> Call | None:
        """The call shown (``None`` before the first call)."""
        return self._call

    @property
    def drawn(self) -> Call | None:
        """The call whose bar is drawn: :attr:`call`, or the last plausible call standing in for it when its
        reported prompt is implausible; ``None`` when no bar is drawn."""
        call = self._call
        if call is not None and call.prompt_implausible:
            return self._stand_in
        return call

    @property
    def shown(self) -> Breakdown | None:
        """The floor and history the bar of :attr:`drawn` shows (calibrated where its tokenizer is not the
        model's own and its model has a calibration), or ``None`` when no bar is drawn."""
        call = self.drawn
        return self._cal.breakdown(call) if call is not None else None

    def show(self, call: Call | None, settings: Settings, note: str = "no calls yet",
             extra: Text | None = None, stand_in: Call | None = None,
             calibrations: Calibrations = NO_CALIBRATION, floor_before: int | None = None) -> None:
        """Show ``call`` (or ``note`` when it is ``None``) with thresholds from ``settings``; ``extra`` (e.g. the
        call's drift risk) is appended to the thresholds line.  ``stand_in``: the last plausible call before
        ``call``, whose bar is drawn instead when ``call``'s reported prompt is implausible (the last
        plausible occupancy stays on screen, under a line that says so).  ``calibrations``: the run's, which
        scale the floor and history of a call counted with another tokenizer (:func:`bar_parts`).
        ``floor_before``: the shown floor of the call before ``call`` in its context, for the thresholds line
        to say why an inferred floor moved at a compaction (:func:`~ctxwatch.ui.widgets.limits.floor_note`)."""
        same_extra = (extra is None and self._extra is None) or (
            extra is not None and self._extra is not None and extra.plain == self._extra.plain)
        if call is self._call and settings is self._settings and note == self._note and same_extra \
                and stand_in is self._stand_in and calibrations == self._cal and floor_before == self._floor_before:
            return
        self._call = call
        self._settings = settings
        self._note = note
        self._extra = extra
        self._stand_in = stand_in
        self._cal = calibrations
        self._floor_before = floor_before
        self.refresh(layout=True)

    def render(self) -> Text:
        """Marks row, bar row, legend and the thresholds line; above them, for a call whose reported prompt is
        implausible, the line that says so (and, with no plausible call to stand in, no bar)."""
        width = max(10, self.size.width or 80)
        call = self._call
        if call is None:
            return Text("\n".join(_note_lines(self._note, width)), style="dim")
        head = Text()
        if call.prompt_implausible:
            head = implausible_note(call, self._stand_in, width)
            head.append("\n")
            if self._stand_in is None:
                head.append_text(thresholds_line(call, bar_parts(call, self._settings), self._settings, width,
                                                 self._extra))
                return head
            call = self._stand_in
        shown = self._cal.breakdown(call)
        parts = bar_parts(call, self._settings, shown)
        palette = self.palette()
        top, bar = bar_line(parts, width, palette)
        out = head
        out.append_text(top)
        out.append("\n")
        out.append_text(bar)
        out.append("\n")
        out.append_text(legend(call, parts, width, shown, palette))
        out.append("\n")
        out.append_text(thresholds_line(call, parts, self._settings, width, self._extra, self._floor_before,
                                        shown.floor_tokens))
        return out

    def palette(self) -> dict[str, Style | str]:
        """The style of each part and of the marks, from the widget's component classes."""
        return {name: self.get_component_rich_style(f"context-bar--{name}", partial=True) for name in PALETTE}

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """Rows needed at ``width`` (the legend may wrap; an implausible call's note takes its own rows)."""
        call = self._call
        if call is None:
            return len(_note_lines(self._note, width))
        head = 0
        if call.prompt_implausible:
            head = len(implausible_note(call, self._stand_in, width).plain.split("\n"))
            if self._stand_in is None:
                limits = thresholds_line(call, bar_parts(call, self._settings), self._settings, width, self._extra)
                return head + len(limits.plain.split("\n"))
            call = self._stand_in
        shown = self._cal.breakdown(call)
        parts = bar_parts(call, self._settings, shown)
        lg = legend(call, parts, width, shown)
        limits = thresholds_line(call, parts, self._settings, width, self._extra, self._floor_before,
                                 shown.floor_tokens)
        return head + 2 + max(1, -(-lg.cell_len // max(1, width))) + len(limits.plain.split("\n"))


def _note_lines(note: str, width: int) -> list[str]:
    """The bar's note, shown while there is no call to draw, on as many lines of ``width`` columns as it takes
    (a folder's notice says how many files it left out and why: cut at the edge, the reason was lost)."""
    return textwrap.wrap(note, max(10, width)) or [""]
