"""The dashboard's widgets. They hold no log text and never read files: the app pushes data into them.

* :class:`ContextBar`: the stacked bar of one call (floor | history | reserve | free) with trigger and
  budget marks; parts told apart by glyph and label, not only colour (failure case B31).
* :class:`CallsTable`: the per-call table (a Line API widget: only visible rows are rendered).
* :class:`TrendChart`: tokens per call over call number or wall time (``textual-plotext``), downsampled.

Calls are numbered for people from 1 (``#12`` is the call with ``index`` 11), as in every text output of
ctxwatch and in the flag reasons; only JSON keeps the 0-based ``index``.
* :class:`StatusLine`, :class:`SidePanel`: text panels.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.app import ComposeResult, RenderResult
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Footer, Static
from textual.widgets._footer import FooterKey  # (the footer's key widget: not exported by textual.widgets)
from textual_plotext import PlotextPlot

from ctxwatch.accounting import NO_CALIBRATION, Calibrations
from ctxwatch.config import Settings
from ctxwatch.model import Breakdown, Call, Src, raw_breakdown, shown_fraction, shown_free, shown_used
from ctxwatch.ui import text as tx

# --- the stacked bar ----------------------------------------------------------------------------------

#: Glyph and colour of each part of the bar. Glyphs differ so the bar reads without colour (B31); the
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
#: Style of a part whose size comes from the provider's usage vs our estimate: the label says the source.
SRC_NOTE: dict[Src, str] = {Src.INFERRED: "inferred", Src.ESTIMATED: "est.", Src.REPORTED: "reported",
                            Src.CALIBRATED: "calibrated", Src.REQUEST: "max_tokens", Src.DEFAULT: "default",
                            Src.OPTION: "option", Src.LOG: "log", Src.CATALOG: "catalog", Src.UNKNOWN: "unknown"}


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
        return BarParts(floor, history, reserve, free, scale, window, settings.trigger_tokens(window, reserve),
                        settings.budget_tokens(window, reserve))
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


def bar_line(parts: BarParts, width: int) -> tuple[Text, Text]:
    """The marks row and the bar row of ``width`` cells.

    The bar row draws floor ``█``, history ``▓``, reserve ``░``, free ``·`` (overflow beyond the window is
    drawn in the reserve glyph up to the bar's end, and the window edge is marked).  The marks row puts
    ``▼`` over the trigger (``T``) and budget (``B``) columns, which are also drawn on the bar as ``┃``.
    """
    width = max(1, width)
    free = max(0, parts.free) if parts.free is not None else 0
    names = ("floor", "history", "reserve", "free")
    cells = _widths([parts.floor, parts.history, parts.reserve, free], parts.scale, width)
    cells[3] = max(0, width - sum(cells[:3]))
    chars: list[tuple[str, str]] = []
    for name, n in zip(names, cells, strict=True):
        glyph, colour = PARTS[name]
        chars.extend([(glyph, colour)] * n)
    chars = chars[:width]
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
        chars[col] = (MARK_GLYPH, MARK_STYLE)
    bar = Text()
    for glyph, style in chars:
        bar.append(glyph, style)
    top = Text("".join(row), style=MARK_STYLE)
    return top, bar


def legend(call: Call, parts: BarParts, width: int, shown: Breakdown | None = None) -> Text:
    """The bar's legend: each part's glyph, name, tokens and % of the window, then the thresholds.

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
            glyph, colour = PARTS["history" if name == "prompt" else name]
            if out.plain:
                out.append(" " if level == 2 else "  ")
            out.append(glyph * (2 if level == 0 else 1), colour)
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


def thresholds_line(call: Call, parts: BarParts, settings: Settings, width: int, extra: Text | None = None) -> Text:
    """``call #13 · model · used 6.9% of 200,000 (catalog) · T trigger 96k · B budget 120k · <extra>``, cut to
    ``width`` cells (``#13`` = index + 1)."""
    out = Text()
    out.append(f"call #{call.index + 1}", "bold")
    out.append(" · ")
    out.append_text(tx.literal(short_model(call.model), limit=30))
    used = call.used_tokens
    if parts.window and parts.free is not None and used is not None:
        used = parts.window - parts.free - parts.reserve  # (the bar's: calibrated where the bar's parts are)
    if parts.window:
        out.append(f" · used {tx.pct(used, parts.window)} of {tx.tokens(parts.window)} "
                   f"({SRC_NOTE.get(call.window_src, call.window_src)})")
        out.append(f" · T trigger {tx.short_tokens(parts.trigger)} · B budget {tx.short_tokens(parts.budget)}",
                   "red")
    else:
        out.append(" · window unknown (pass --window N); bar scaled to the call")
    if call.prompt_reported is not None:
        out.append(f" · reported {tx.tokens(call.prompt_reported)}")
        if call.prompt_implausible:
            out.append(" (implausible)", "bold yellow")
    if call.compaction:
        out.append(" · compacted before this call", "bold")
    if extra is not None and extra.plain:
        out.append(" · ")
        out.append_text(extra)
    if out.cell_len > width:
        out.truncate(width, overflow="ellipsis")
    return out


def implausible_note(call: Call, stand_in: Call | None, width: int) -> Text:
    """The line above the bar when ``call``'s reported prompt is implausible (failure case B13), e.g. ``#4
    reported 4,280,000 prompt tokens, over its 570,000-token window · implausible, ignored as occupancy · the bar
    shows #3, the last plausible`` (``stand_in``: that call, ``None`` when there is none), broken between
    segments to fit ``width`` cells."""
    reported = call.prompt_reported or 0
    if reported <= 0:
        what = f"#{call.index + 1} reported {tx.tokens(reported)} prompt tokens (every request has a prompt)"
    elif call.window:
        what = (f"#{call.index + 1} reported {tx.tokens(reported)} prompt tokens, over its "
                f"{tx.tokens(call.window)}-token window")
    else:
        what = f"#{call.index + 1} reported {tx.tokens(reported)} prompt tokens, over any window on offer"
    shown = (f"the bar shows #{stand_in.index + 1}, the last plausible" if stand_in is not None
             else "no plausible call before it: occupancy unknown")
    style = "bold yellow"
    return tx.flow([Text(what, style), Text("implausible, ignored as occupancy", style), Text(shown, style)],
                   width)


class ContextBar(Widget):
    """The stacked bar of the selected call: floor | history | reserve | free against the window.

    Push data with :meth:`show`; the widget re-renders at its current width.
    """

    DEFAULT_CSS = """
    ContextBar { height: auto; padding: 0 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._call: Call | None = None
        self._settings = Settings()
        self._note = "no calls yet"
        self._extra: Text | None = None
        self._stand_in: Call | None = None
        self._cal: Calibrations = NO_CALIBRATION

    @property
    def call(self) -> Call | None:
        """The call shown (``None`` before the first call)."""
        return self._call

    @property
    def drawn(self) -> Call | None:
        """The call whose bar is drawn: :attr:`call`, or the last plausible call standing in for it when its
        reported prompt is implausible (B13); ``None`` when no bar is drawn."""
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
             calibrations: Calibrations = NO_CALIBRATION) -> None:
        """Show ``call`` (or ``note`` when it is ``None``) with thresholds from ``settings``; ``extra`` (e.g. the
        call's drift risk) is appended to the thresholds line.  ``stand_in``: the last plausible call before
        ``call``, whose bar is drawn instead when ``call``'s reported prompt is implausible (B13: the last
        plausible occupancy stays on screen, under a line that says so).  ``calibrations``: the run's, which
        scale the floor and history of a call counted with another tokenizer (:func:`bar_parts`)."""
        same_extra = (extra is None and self._extra is None) or (
            extra is not None and self._extra is not None and extra.plain == self._extra.plain)
        if call is self._call and settings is self._settings and note == self._note and same_extra \
                and stand_in is self._stand_in and calibrations == self._cal:
            return
        self._call = call
        self._settings = settings
        self._note = note
        self._extra = extra
        self._stand_in = stand_in
        self._cal = calibrations
        self.refresh(layout=True)

    def render(self) -> Text:
        """Marks row, bar row, legend and the thresholds line; above them, for a call whose reported prompt is
        implausible, the line that says so (and, with no plausible call to stand in, no bar)."""
        width = max(10, self.size.width or 80)
        call = self._call
        if call is None:
            return Text(self._note, style="dim")
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
        top, bar = bar_line(parts, width)
        out = head
        out.append_text(top)
        out.append("\n")
        out.append_text(bar)
        out.append("\n")
        out.append_text(legend(call, parts, width, shown))
        out.append("\n")
        out.append_text(thresholds_line(call, parts, self._settings, width, self._extra))
        return out

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """Rows needed at ``width`` (the legend may wrap; an implausible call's note takes its own rows)."""
        call = self._call
        if call is None:
            return 1
        head = 0
        if call.prompt_implausible:
            head = len(implausible_note(call, self._stand_in, width).plain.split("\n"))
            if self._stand_in is None:
                return head + 1
            call = self._stand_in
        shown = self._cal.breakdown(call)
        parts = bar_parts(call, self._settings, shown)
        lg = legend(call, parts, width, shown)
        return head + 3 + max(1, -(-lg.cell_len // max(1, width)))


# --- the calls table ----------------------------------------------------------------------------------

#: Columns of the calls table: (key, label, fixed width or None for automatic).
COLUMNS: tuple[tuple[str, str, int | None], ...] = (
    ("index", "#", None),
    ("time", "time", 8),
    ("model", "model", 18),
    ("floor", "floor", None),
    ("history", "history", None),
    ("reserve", "reserve", None),
    ("used", "used%  ", None),
    ("reported", "reported", None),
)
#: The columns kept in the compact layout (60-column panes): no time, no model (the bar names the model).
COMPACT_KEYS = ("index", "floor", "history", "reserve", "used", "reported")


def used_cell(call: Call, settings: Settings, shown: Breakdown | None = None) -> Text:
    """``6.9%``; ``72.0%!`` at or above the trigger, ``!!`` at or above the budget (bold red), ``?`` unknown
    (an implausible reported prompt included: it is no occupancy).  ``shown``: the call's breakdown as shown
    (:func:`ctxwatch.model.shown_used`: a calibrated estimate where the call reports no prompt)."""
    frac = shown_fraction(call, shown)
    if frac is None:
        return Text("?  ", justify="right")  # (under the numbers' % signs: the two cells after are for ! marks)
    s = f"{100 * frac:.1f}%"
    used = shown_used(call, shown) or 0
    window = call.window or 0
    if window and used >= settings.budget_tokens(window, call.reserve_tokens):
        return Text(s + "!!", style="bold red", justify="right")
    if window and used >= settings.trigger_tokens(window, call.reserve_tokens):
        return Text(s + "! ", style="yellow", justify="right")
    return Text(s + "  ", justify="right")


def short_model(model: str | None) -> str:
    """A model id without its trailing date (``claude-3-5-haiku-20241022`` -> ``claude-3-5-haiku``)."""
    m = model or "?"
    head, _, tail = m.rpartition("-")
    if head and len(tail) == 8 and tail.isdigit():
        return head
    return m


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
        call.index + 1, tx.clock(call.timestamp), call.model or "", call.context, call.session or "",
        *numbers, *(f"{n:,}" for n in numbers if n >= 1000), f"{100 * used:.1f}%" if used is not None else "",
        "compaction" if call.compaction else "", "implausible" if call.prompt_implausible else "")).lower()


def cell_texts(call: Call, settings: Settings, shown: Breakdown | None = None) -> tuple[list[str], str]:
    """Plain cell strings of one call by :data:`COLUMNS` order, and the style of its ``used%`` cell.  The ``#``
    cell is the call number (index + 1), with `` C`` when a compaction happened just before the call.  The floor
    and history cells are ``shown``'s (calibrated ones marked ``≈``), else the call's own."""
    used = used_cell(call, settings, shown)
    b = shown or raw_breakdown(call)
    return [
        f"{call.index + 1}{' C' if call.compaction else ''}",
        tx.clock(call.timestamp),
        tx.clean(short_model(call.model), multiline=False),
        tx.marked(b.floor_tokens, b.floor_src),
        tx.marked(b.history_tokens, b.history_src),
        tx.marked(call.reserve_tokens, call.reserve_src),
        used.plain,
        # ("?" when the log reports no usage for the call; "!" marks an implausible report, as in report)
        tx.tokens(call.prompt_reported) + ("!" if call.report_implausible else ""),
    ], str(used.style or "")


#: Minimum width of each column (cells); numeric columns grow to their widest value.
MIN_WIDTHS = {"index": 3, "time": 8, "model": 8, "floor": 7, "history": 7, "reserve": 7, "used": 8, "reported": 8}
_LEFT = frozenset({"time", "model"})


class CallsTable(ScrollView, can_focus=True):
    """The calls of the current view, one row per call: a Line API widget that renders only visible rows.

    Appending a row costs O(1) (its cell strings are formatted once) and a frame renders only the rows on
    screen, so a 10,000-call run stays responsive (a DataTable measures every cell of every new row on the UI
    thread: seconds for 10,000 rows).  The header stays on the first line.  Keys: ↑/↓ ``j``/``k``, page up /
    down, ``home``/``g`` first call, ``end``/``G`` newest call, ``enter`` opens the call.  The app is told
    about moves made by a person through its ``user_moved_selection(row, count)``.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "cursor_up", "Up", show=False),
        Binding("down,j", "cursor_down", "Down", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
        Binding("home,g,ctrl+home", "scroll_top", "First call", show=False),
        Binding("end,G,ctrl+end", "scroll_bottom", "Newest call", show=False),
        Binding("enter", "select", "Detail"),
    ]

    COMPONENT_CLASSES: ClassVar[set[str]] = {"calls-table--header", "calls-table--cursor"}

    DEFAULT_CSS = """
    CallsTable { background: $surface; }
    CallsTable > .calls-table--header { text-style: bold; background: $panel; }
    CallsTable > .calls-table--cursor { background: $block-cursor-background; color: $block-cursor-foreground;
        text-style: bold; }
    CallsTable:blur > .calls-table--cursor { background: $block-cursor-blurred-background; text-style: none; }
    """

    class Highlighted(Message):
        """The cursor moved to call ``index`` (row ``row`` of the table)."""

        def __init__(self, table: CallsTable, index: int | None, row: int) -> None:
            super().__init__()
            self.table = table
            self.index = index
            self.row = row

    class Selected(Message):
        """Enter was pressed (or a row double-clicked) on call ``index``."""

        def __init__(self, table: CallsTable, index: int) -> None:
            super().__init__()
            self.table = table
            self.index = index

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.indexes: list[int] = []
        self._calls: list[Call] = []
        self._cache: dict[int, tuple[list[str], str]] = {}  # row -> cells, formatted when first shown
        self._pos: dict[int, int] = {}
        self._settings = Settings()
        self._cal: Calibrations = NO_CALIBRATION
        # model -> the largest floor and history counted with another tokenizer: what calibrated cells can reach
        self._scalable: dict[str | None, list[int]] = {}
        self.cursor_row = 0
        self.compact = False
        self._model_width = 18
        self._widths = dict(MIN_WIDTHS)

    # -- data -------------------------------------------------------------------------------------------
    @property
    def row_count(self) -> int:
        """Rows in the table."""
        return len(self.indexes)

    def keys(self) -> list[str]:
        """The column keys shown (fewer in the compact layout)."""
        return [k for k, _l, _w in COLUMNS if not self.compact or k in COMPACT_KEYS]

    def set_calls(self, calls: Iterable[Call], settings: Settings) -> None:
        """Replace all rows with ``calls`` (in order); the cursor goes to the first row."""
        self.indexes = []
        self._calls = []
        self._cache = {}
        self._pos = {}
        self._scalable = {}
        self._widths = dict(MIN_WIDTHS)
        self.cursor_row = 0
        self.append_calls(calls, settings)
        self.scroll_to(y=0, animate=False, immediate=True)

    def append_calls(self, calls: Iterable[Call], settings: Settings) -> None:
        """Add rows at the bottom (calls newer than the rows already there). O(1) per call: cells are
        formatted when a row is first drawn; column widths follow the largest numbers seen."""
        self._settings = settings
        for c in calls:
            self._pos[c.index] = len(self.indexes)
            self.indexes.append(c.index)
            self._calls.append(c)
            self._grow(c)
        self._resize()

    @property
    def calibrations(self) -> Calibrations:
        """The calibrations the floor and history cells are shown with (:meth:`set_calibrations`)."""
        return self._cal

    def set_calibrations(self, calibrations: Calibrations) -> None:
        """Show the floor and history of every row with ``calibrations`` (the run's, which change as calls
        arrive: a model's 3rd call calibrates its first two).  A change re-formats the rows when they are next
        drawn, and widens the floor and history columns for the largest numbers they can now show (each model's
        largest count times its factor: O(models), not O(rows); columns never narrow, as elsewhere)."""
        if calibrations == self._cal:
            return
        self._cal = calibrations
        self._cache = {}
        w = self._widths
        for model, (floor, history) in self._scalable.items():
            factor = calibrations.of_model(model)
            if factor is None:
                continue
            for key, v in (("floor", floor), ("history", history)):
                w[key] = max(w[key], len(f"{round(v * factor):,}") + 1)
        self._resize()

    def shown(self, row: int) -> Breakdown:
        """The floor and history shown in ``row`` (:meth:`Calibrations.breakdown` of its call)."""
        return self._cal.breakdown(self._calls[row])

    def _grow(self, c: Call) -> None:
        """Widen numeric columns for ``c``'s values as shown (one digit group = 4 cells, plus a source mark)."""
        w = self._widths
        b = self._cal.breakdown(c)
        if c.floor_src == Src.ESTIMATED and not c.exact:
            most = self._scalable.setdefault(c.model, [0, 0])
            most[0] = max(most[0], c.floor_tokens or 0)
            most[1] = max(most[1], c.history_tokens or 0)
        for key, v in (("index", c.index + 1), ("floor", b.floor_tokens), ("history", b.history_tokens),
                       ("reserve", c.reserve_tokens), ("reported", c.prompt_reported)):
            if v is None:
                continue
            n = len(f"{v:,}") + (2 if key == "index" else 1)
            if n > w[key]:
                w[key] = n

    def update_call(self, call: Call, settings: Settings) -> None:
        """Refresh the cells of a call already in the table (no-op if it is not)."""
        row = self._pos.get(call.index)
        if row is None:
            return
        self._calls[row] = call
        self._cache.pop(row, None)
        self._grow(call)
        self._resize()

    def _row(self, row: int) -> tuple[list[str], str]:
        got = self._cache.get(row)
        if got is None:
            got = self._cache[row] = cell_texts(self._calls[row], self._settings, self.shown(row))
        return got

    def cell(self, row: int, key: str) -> str:
        """The text shown in ``row`` for column ``key`` (cleaned, as on screen before cropping)."""
        return self._row(row)[0][[k for k, _l, _w in COLUMNS].index(key)]

    def position_of(self, index: int) -> int | None:
        """Row number of call ``index`` in the table, or ``None``."""
        return self._pos.get(index)

    def index_at_cursor(self) -> int | None:
        """The call index of the highlighted row, or ``None`` when the table is empty."""
        if not self.indexes or not 0 <= self.cursor_row < len(self.indexes):
            return None
        return self.indexes[self.cursor_row]

    def set_compact(self, compact: bool, calls: Iterable[Call] = (), settings: Settings | None = None) -> None:
        """Show all columns, or the compact set (:data:`COMPACT_KEYS`) for narrow panes."""
        if compact != self.compact:
            self.compact = compact
            self._resize()

    def set_model_width(self, width: int) -> None:
        """Set the model column's width in cells (narrow terminals get a narrower column)."""
        if width != self._model_width:
            self._model_width = width
            self._resize()

    def _col_width(self, key: str) -> int:
        return self._model_width if key == "model" else self._widths[key]

    def _resize(self) -> None:
        width = sum(self._col_width(k) + 1 for k in self.keys()) + 1
        self.virtual_size = Size(width, len(self.indexes) + 1)
        self.refresh()

    # -- cursor -----------------------------------------------------------------------------------------
    def move_cursor(self, row: int, *, scroll: bool = True, animate: bool = False) -> None:
        """Put the cursor on ``row`` (clamped), scroll it into view, and post :class:`Highlighted`."""
        if not self.indexes:
            self.cursor_row = 0
            return
        row = max(0, min(row, len(self.indexes) - 1))
        changed = row != self.cursor_row
        self.cursor_row = row
        if scroll:
            self._scroll_to_cursor()
            self.call_after_refresh(self._scroll_to_cursor)  # again once the new size is laid out
        self.refresh()
        if changed:
            self.post_message(self.Highlighted(self, self.indexes[row], row))

    def _page(self) -> int:
        return max(1, self.scrollable_content_region.height - 1)

    def on_resize(self) -> None:
        """Keep the cursor's row visible when the table changes size."""
        self._scroll_to_cursor()

    def _scroll_to_cursor(self) -> None:
        visible = self._page()
        top = int(self.scroll_y)
        if self.cursor_row < top:
            self.scroll_to(y=self.cursor_row, animate=False, immediate=True)
        elif self.cursor_row >= top + visible:
            self.scroll_to(y=self.cursor_row - visible + 1, animate=False, immediate=True)

    def _user_move(self, row: int) -> None:
        self.move_cursor(row)
        handler = getattr(self.app, "user_moved_selection", None)
        if handler is not None:
            handler(self.cursor_row, self.row_count)

    def action_cursor_up(self) -> None:
        """One call up."""
        self._user_move(self.cursor_row - 1)

    def action_cursor_down(self) -> None:
        """One call down."""
        self._user_move(self.cursor_row + 1)

    def action_page_up(self) -> None:
        """One page up."""
        self._user_move(self.cursor_row - self._page())

    def action_page_down(self) -> None:
        """One page down."""
        self._user_move(self.cursor_row + self._page())

    def action_scroll_top(self) -> None:
        """The first call."""
        self._user_move(0)

    def action_scroll_bottom(self) -> None:
        """The newest call."""
        self._user_move(self.row_count - 1)

    def action_select(self) -> None:
        """Open the highlighted call."""
        index = self.index_at_cursor()
        if index is not None:
            self.post_message(self.Selected(self, index))

    def on_click(self, event: events.Click) -> None:
        """Click a row to select it (a double click opens it)."""
        row = int(self.scroll_y) + event.y - 1
        if event.y >= 1 and 0 <= row < self.row_count:
            self._user_move(row)
            if event.chain >= 2:
                self.action_select()

    # -- rendering --------------------------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        """Line ``y`` of the widget: the header on line 0, then the rows from the scroll position."""
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        base = self.rich_style
        if y == 0:
            style = base + self.get_component_rich_style("calls-table--header")
            segments = self._segments([label for k, label, _w in COLUMNS if k in self.keys()], style, None)
        else:
            row = scroll_y + y - 1
            if row >= len(self.indexes):
                return Strip.blank(width, base)
            style = base
            if row == self.cursor_row:
                style = base + self.get_component_rich_style("calls-table--cursor")
            cells, used_style = self._row(row)
            keys = self.keys()
            shown = [cells[i] for i, (k, _l, _w) in enumerate(COLUMNS) if k in keys]
            segments = self._segments(shown, style, used_style if row != self.cursor_row else None)
        strip = Strip(segments).crop(scroll_x, scroll_x + width)
        return strip.extend_cell_length(width, style)

    def _segments(self, cells: list[str], style: Style, used_style: str | None) -> list[Segment]:
        out: list[Segment] = []
        for key, text in zip(self.keys(), cells, strict=True):
            w = self._col_width(key)
            if cell_len(text) > w:
                text = set_cell_size(text, max(0, w - 1)) + "…"
            pad = " " * max(0, w - cell_len(text))
            text = text + pad if key in _LEFT else pad + text
            cell_style = style
            if key == "used" and used_style:
                cell_style = style + Style.parse(used_style)
            out.append(Segment(" ", style))
            out.append(Segment(text, cell_style))
        return out


# --- the trend chart ----------------------------------------------------------------------------------

@dataclass(slots=True)
class Series:
    """What the trend chart plots (already downsampled), all token values in tokens.

    Attributes:
        x: x positions (call number = index + 1, or minutes since the first call).
        floor, total: floor and floor + history per point (0 where the split is unknown).
        unsplit: the prompt of a point whose floor / history split is unknown (a log that starts mid-session),
            else 0: drawn apart, never as history.
        reported: reported prompt tokens per point (``None`` where unknown or implausible).
        compactions: x positions of compaction events.
        steps: indexes of the points whose bucket holds a compaction (the context dropped just before them).
        window, trigger, budget, limit: threshold lines (limit = window - reserve); ``None`` when unknown.
        xlabel: the x axis title.
    """

    x: list[float]
    floor: list[float]
    total: list[float]
    unsplit: list[float]
    reported: list[float | None]
    compactions: list[float]
    steps: list[int]
    window: int | None
    trigger: int | None
    budget: int | None
    limit: int | None
    xlabel: str


def stepped(x: Sequence[float], steps: Sequence[int], *ys: Sequence[Any]) -> tuple[list[Any], ...]:
    """``x`` and each of ``ys`` with, before each point index in ``steps``, a point at that point's x holding the
    previous point's values: a line then stays level until the compaction and drops there, instead of sloping
    down across the time between the calls as if the context had shrunk gradually."""
    out: tuple[list[Any], ...] = tuple([] for _ in range(len(ys) + 1))
    at = set(steps)
    for i, xi in enumerate(x):
        if i in at and i > 0:
            out[0].append(xi)
            for k, y in enumerate(ys, 1):
                out[k].append(y[i - 1])
        out[0].append(xi)
        for k, y in enumerate(ys, 1):
            out[k].append(y[i])
    return out


def downsample(n: int, target: int) -> list[range]:
    """Split ``range(n)`` into at most ``target`` consecutive buckets of near-equal size."""
    if n <= 0:
        return []
    target = max(1, min(n, target))
    edges = [round(i * n / target) for i in range(target + 1)]
    return [range(edges[i], edges[i + 1]) for i in range(target) if edges[i + 1] > edges[i]]


def build_series(calls: Sequence[Call], settings: Settings, xmode: str, points: int,
                 calibrations: Calibrations = NO_CALIBRATION) -> Series:
    """Chart data for ``calls`` (in order), at most ``points`` points: each bucket keeps its largest call.

    Args:
        calls: the calls of the current view.
        settings: thresholds.
        xmode: ``index`` (x = call number, index + 1) or ``time`` (x = minutes, or seconds for a run shorter than
            :data:`SECONDS_AXIS_SPAN`, since the earliest timestamped call,
            in time order: a batch's results are not written in the order they ran; calls without a timestamp
            are left out).
        points: the most points to plot (about the chart's width in cells).
        calibrations: the run's: the floor and history are plotted as the table and the bar show them
            (:meth:`~ctxwatch.accounting.Calibrations.breakdown`), so that floor + history meets the reported
            prompt of a call counted with another tokenizer.
    """
    if xmode == "time":
        calls = sorted((c for c in calls if c.timestamp is not None), key=lambda c: (c.timestamp, c.index))
    t0 = calls[0].timestamp if calls and xmode == "time" else None
    # A short run is plotted in seconds: minutes would label its ticks 0.000, 0.044, 0.089...
    span = (calls[-1].timestamp or 0) - (t0 or 0) if t0 is not None else 0
    unit = 1.0 if span < SECONDS_AXIS_SPAN else 60.0
    x: list[float] = []
    floor: list[float] = []
    total: list[float] = []
    unsplit: list[float] = []
    reported: list[float | None] = []
    steps: list[int] = []
    for bucket in downsample(len(calls), points):
        if x and any(calls[i].compaction for i in bucket):
            steps.append(len(x))
        best = max((calls[i] for i in bucket), key=lambda c: c.used_tokens or 0)
        b = calibrations.breakdown(best)
        f = b.floor_tokens or 0
        h = b.history_tokens or 0
        u = (best.prompt_tokens or 0) if best.split_unknown else 0
        x.append(_x(best, xmode, t0, unit))
        floor.append(f)
        total.append(f + h)
        unsplit.append(u)
        # (an implausible report is no occupancy: no point, as for an unknown prompt, not a 750 % spike)
        reported.append(None if best.prompt_implausible else best.prompt_reported)
    compactions = [_x(c, xmode, t0, unit) for c in calls if c.compaction]
    # The threshold lines are those of the latest plausible call, as the forecast's: an implausible record may
    # state another window (B13: 570,000 after 272,000).
    window = next((c.window for c in reversed(calls) if c.window and not c.prompt_implausible), None) or next(
        (c.window for c in reversed(calls) if c.window), None)
    reserve = next((c.reserve_tokens for c in reversed(calls)
                    if c.reserve_tokens is not None and not c.prompt_implausible), None)
    if reserve is None:
        reserve = next((c.reserve_tokens for c in reversed(calls) if c.reserve_tokens is not None), None)
    return Series(
        x, floor, total, unsplit, reported, compactions, steps, window,
        settings.trigger_tokens(window, reserve) if window else None,
        settings.budget_tokens(window, reserve) if window else None,
        window - reserve if window and reserve is not None else None,
        "call #" if xmode == "index" else (f"{_UNIT_NAMES[unit]} since {tx.clock(t0)}" if t0 is not None
                                           else _UNIT_NAMES[unit]),
    )


#: Runs shorter than this (seconds) are plotted against seconds, longer ones against minutes.
SECONDS_AXIS_SPAN = 120.0
_UNIT_NAMES = {1.0: "seconds", 60.0: "minutes"}


def _x(call: Call, xmode: str, t0: float | None, unit: float = 60.0) -> float:
    """A call's x: its number, or the time since ``t0`` in ``unit`` seconds (60: minutes)."""
    if xmode == "time" and call.timestamp is not None and t0 is not None:
        return round((call.timestamp - t0) / unit, 3)
    return float(call.index + 1)


#: Rows of the chart widget that are not plot area: plotext's top and bottom frame lines, the row of x tick
#: labels and the x axis title (there is no chart title once there is data).  Used to know how many rows the
#: y axis spans, so that every tick label sits on the row its value is drawn on.
CHART_FRAME_ROWS = 4
#: Room above the highest value or threshold line, as a factor of it (the top row is not a ceiling).
CHART_HEADROOM = 1.04
#: Round steps between two labelled y ticks (times a power of ten): 0, 2k, 4k, 6k..., 0, 25k, 50k...
TICK_STEPS = (1, 2, 2.5, 3, 4, 5, 6, 8)
#: The most labelled intervals on the y axis (4 or 5 read well; more crowd a short chart).
MAX_TICK_INTERVALS = 5
#: Plot rows from which the threshold lines are also named on the line itself ("trigger", ...); on shorter
#: charts the names would cover most of the data, and the letter beside the axis says which line it is.
NAMED_LINE_ROWS = 10
#: The chart's threshold lines: Series attribute, letter beside the y axis (the bar's ``T`` and ``B`` marks),
#: name written on the line in tall charts, plotext colour ("orange" is ANSI yellow, "gray" ANSI white).
THRESHOLD_LINES: tuple[tuple[str, str, str, str], ...] = (
    ("trigger", "T", "trigger", "orange"),
    ("budget", "B", "budget", "red"),
    ("limit", "W-R", "window-reserve", "gray"),
)


def canvas_row(value: float, top: float, rows: int) -> int:
    """The plot row (0 = bottom) on which plotext draws ``value`` for a y axis from 0 to ``top`` over ``rows``
    rows: plotext's own rule (``plotext._utility.get_matrix_data``), ``floor(0.5 + (rows - 1) * value / top)``,
    rounded to 8 places first as plotext does."""
    if top <= 0 or rows <= 1:
        return 0
    return math.floor(round(0.5 + (rows - 1) * value / top, 8))


def tick_label(value: float) -> str:
    """An exact compact label for a y tick: ``0``, ``750``, ``2.5k``, ``40k``, ``1.25M`` (never rounded, so
    that the label is the value of its row)."""
    if abs(value) >= 1_000_000:
        return f"{value / 1_000_000:g}M"
    if abs(value) >= 1000:
        return f"{value / 1000:g}k"
    return f"{value:g}"


@dataclass(frozen=True, slots=True)
class YAxis:
    """The y axis of the trend chart for a given plot height.

    Attributes:
        top: the value of the top row (tokens); the axis runs from 0.
        rows: plot rows the axis spans.
        ticks, labels: y tick positions (tokens) and their labels, for ``plt.yticks``.  A numeric label is the
            exact value of its row; on a row that carries threshold lines the label names them instead
            (``T 15k``, or ``T/B 15k/19k`` when two lines fall on the same row).
        lines: one entry per row that carries threshold lines: ``(row, value, names, colour)``, with the
            value of the first line on it (for ``plt.hline``), the names joined by `` · `` and the colour of
            the first line.
    """

    top: float
    rows: int
    ticks: list[float]
    labels: list[str]
    lines: list[tuple[int, float, str, str]]


def y_axis(rows: int, data_top: float, thresholds: Sequence[tuple[float, str, str, str]]) -> YAxis:
    """Lay out the y axis so that every label tells the truth about the row it is on.

    The axis runs from 0 to ``top`` over ``rows`` plot rows; row ``r`` holds the values nearest to
    ``r * top / (rows - 1)`` (plotext's mapping, :func:`canvas_row`).  ``top`` is chosen as the smallest value
    at or above the data and the thresholds (times :data:`CHART_HEADROOM`) for which some round step of
    :data:`TICK_STEPS` falls exactly on rows, with at most :data:`MAX_TICK_INTERVALS` labelled intervals.
    A row that carries threshold lines is labelled with their letters and values instead of a number, so
    no number and no line name share a row; lines that fall on the same row (a short chart) share one
    label.

    Args:
        rows: plot rows (the chart's height minus :data:`CHART_FRAME_ROWS`); at least 2 are used.
        data_top: the highest value plotted (tokens).
        thresholds: ``(value, letter, name, colour)`` of the threshold lines to draw (tokens).
    """
    rows = max(2, rows)
    steps = rows - 1
    need = max([data_top, 1.0, *(t[0] for t in thresholds)]) * CHART_HEADROOM
    best: tuple[float, int, float] | None = None  # (top, rows per labelled step, labelled step)
    lo = math.floor(math.log10(need / steps)) - 1
    for exp in range(lo, math.ceil(math.log10(need)) + 2):
        for m in TICK_STEPS:
            step = m * 10.0 ** exp
            for k in range(1, steps + 1):
                top = steps * step / k
                if top < need or steps // k > MAX_TICK_INTERVALS:
                    continue
                if best is None or (top, k) < (best[0], best[1]):
                    best = (top, k, step)
    assert best is not None  # k = steps with a step >= need always fits
    top, k, step = best
    on_row: dict[int, list[tuple[float, str, str, str]]] = {}
    for t in sorted(thresholds):
        on_row.setdefault(canvas_row(t[0], top, rows), []).append(t)
    ticks: list[float] = []
    labels: list[str] = []
    for i in range(steps // k + 1):
        value = round(i * step, 6)
        if canvas_row(value, top, rows) not in on_row:
            ticks.append(value)
            labels.append(tick_label(value))
    lines: list[tuple[int, float, str, str]] = []
    for row, group in sorted(on_row.items()):
        ticks.append(group[0][0])
        labels.append("/".join(g[1] for g in group) + " " + "/".join(tx.short_tokens(g[0]) for g in group))
        lines.append((row, group[0][0], " · ".join(g[2] for g in group), group[0][3]))
    return YAxis(top, rows, ticks, labels, lines)


#: Seconds between two redraws of the trend chart while data streams in.
CHART_MIN_INTERVAL = 0.5

#: Markers of the chart's series (distinct so the chart reads without colour).
CHART_MARKERS = {"history": "▒", "floor": "█", "reported": "•", "unsplit": "?"}


def chart_legend(unsplit: bool = False) -> Text:
    """The chart's legend (shown in the side panel): series markers, and the threshold lines with the letters
    that label their rows beside the y axis.  ``unsplit``: also name the marker of prompts whose floor /
    history split is unknown (shown only when the chart has some)."""
    out = Text()
    for glyph, colour, name in (("█", "magenta", "floor"), ("▒", "cyan", "history"), ("•", "blue", "reported")):
        out.append(glyph, colour)
        out.append(f" {name}  ")
    if unsplit:
        out.append("\n")
        out.append(CHART_MARKERS["unsplit"], "bright_black")
        out.append(" prompt, split unknown")
    out.append("\n")
    for colour, letter, name in (("yellow", "T", "trigger"), ("red", "B", "budget"),
                                 ("white", "W-R", "window-reserve")):
        out.append(f"{letter} ─", colour)
        out.append(f" {name}  ")
    out.append("\n")
    out.append("│", "green")
    out.append(" compaction")
    return out


def x_title(xlabel: str, above: Sequence[tuple[float, str, str]], compactions: bool, width: int,
            unsplit: bool = False) -> str:
    """The chart's x axis title: ``call # · above: trigger 61k, budget 77k, window-reserve 128k · ? split unknown
    · │ compaction``.

    ``above`` lists the thresholds too high to draw (``(tokens, letter, name)``); ``unsplit``: the chart has
    prompts whose floor / history split is unknown, drawn in ``?`` (the side panel's legend, which names that
    mark too, is left out when the panel is short).  plotext drops a title wider than the plot, so shorter
    forms are tried until one fits ``width`` cells: the thresholds by letter (``above: T 61k, B 77k, W-R
    128k``), then the marks alone, then the axis name alone.
    """
    tail = (f" · {CHART_MARKERS['unsplit']} split unknown" if unsplit else "") \
        + (" · │ compaction" if compactions else "")
    forms = []
    if above:
        forms.append(xlabel + " · above: " + ", ".join(f"{name} {tx.short_tokens(v)}" for v, _l, name in above) + tail)
        forms.append(xlabel + " · above: " + ", ".join(f"{letter} {tx.short_tokens(v)}" for v, letter, _n in above)
                     + tail)
    forms += [xlabel + tail, xlabel]
    return next((f for f in forms if len(f) <= width), xlabel)


def _int_ticks(lo: float, hi: float, most: int) -> list[float]:
    """Whole-number ticks from ``lo`` to ``hi``, at most ``most`` of them, on a round step."""
    span = max(1.0, hi - lo)
    step = 1
    for m in (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000, 10000):
        step = m
        if span / m <= most:
            break
    first = int(lo // step * step)
    if first < lo:
        first += step
    return [float(v) for v in range(first, int(hi) + 1, step)]


#: Below this many columns footers drop their spacing and their command-palette key, so that every key fits
#: at 80 columns (ctrl+p still opens the palette).
FOOTER_COMPACT_WIDTH = 100


#: Actions whose keys the footer shows only from :data:`FOOTER_ALL_KEYS_WIDTH` columns: below, their room goes
#: to Enter (a call's messages) and ``i`` (input problems); the help (``?``) and the palette list them.
WIDE_ONLY_ACTIONS = frozenset({"toggle_xaxis", "save_svg", "export_csv"})
#: Columns from which the main screen's footer shows every key with its spacing and the palette key
#: (measured: the spaced keys end at column 111, and the palette key needs 12 more).
FOOTER_ALL_KEYS_WIDTH = 124


class AdaptiveFooter(Footer):
    """The key footer of every screen: compact, without the palette key, below :data:`FOOTER_COMPACT_WIDTH`
    columns (at 80 columns the spacing pushed the last keys, such as ``?`` or ``q``, off screen), and without
    the keys of :data:`WIDE_ONLY_ACTIONS` below :data:`FOOTER_ALL_KEYS_WIDTH`."""

    def __init__(self) -> None:
        super().__init__()
        self._narrow = False

    def compose(self) -> ComposeResult:
        """Textual's footer keys, less the wide-only ones when narrow."""
        keys = list(super().compose())
        if self._narrow:
            keys = [k for k in keys if not (isinstance(k, FooterKey) and k.action in WIDE_ONLY_ACTIONS)]
            self.styles.grid_size_columns = sum(isinstance(k, FooterKey) and not k.has_class("-command-palette")
                                                for k in keys)
        yield from keys

    def on_mount(self) -> None:
        """Fit the terminal's width at once."""
        self._fit(self.app.size.width)

    def on_resize(self, event: events.Resize) -> None:
        """Fit the new width."""
        self._fit(self.app.size.width)

    def _fit(self, width: int) -> None:
        compact = width < FOOTER_COMPACT_WIDTH
        narrow = width < FOOTER_ALL_KEYS_WIDTH
        if self.compact != compact or self._narrow != narrow:
            self.compact = compact
            self.show_command_palette = not compact
            self._narrow = narrow
            self.refresh(recompose=True)


#: Width of a call's bar in x units (calls are 1 apart): gaps between bars keep the calls apart.
BAR_WIDTH = 0.6


def _clear_of_data(xs: Sequence[float], heights: Sequence[float], lo: float, hi: float, below: float,
                   bar_half: float | None) -> bool:
    """True when nothing drawn between x ``lo`` and ``hi`` reaches ``below`` (tokens): bars (``bar_half``: half
    a bar's width) are drawn only around their calls; areas and lines run between neighbouring calls, so the
    calls on either side of the span count too."""
    if bar_half is not None:
        return all(h < below for x, h in zip(xs, heights, strict=True) if lo - bar_half <= x <= hi + bar_half)
    inside = [i for i, x in enumerate(xs) if lo <= x <= hi]
    first = inside[0] if inside else next((i for i, x in enumerate(xs) if x > hi), len(xs))
    last = inside[-1] if inside else first - 1
    near = range(max(0, first - 1), min(len(xs), last + 2))
    return all(heights[i] < below for i in near)


class TrendChart(PlotextPlot):
    """Tokens per call: floor (``█``) and history (``▒``) stacked, reported prompt (``•``), thresholds.

    The y axis is laid out for the chart's height (:func:`y_axis`): numbers are the exact values of their rows,
    and a row with threshold lines is labelled with their letters and values (``T 15k``) instead of a number.
    Push data with :meth:`show`; the chart is rebuilt at its current size when it renders.
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._calls: Sequence[Call] = ()
        self._settings = Settings()
        self._xmode = "index"
        self._cal: Calibrations = NO_CALIBRATION
        self._last_draw = 0.0
        self._timer: Timer | None = None
        self.series: Series | None = None
        #: The y axis of the last drawing (``None`` before the first plot with data).
        self.axis: YAxis | None = None

    def show(self, calls: Sequence[Call], settings: Settings, xmode: str,
             calibrations: Calibrations = NO_CALIBRATION) -> None:
        """Plot ``calls`` with ``settings`` thresholds and x-axis mode ``index`` or ``time``; ``calibrations``:
        the run's (:func:`build_series`).

        Redraws are throttled to one per :data:`CHART_MIN_INTERVAL` seconds (a plotext build of a wide chart
        takes tens of milliseconds); the last data pushed is always drawn.  A change of x-axis mode or of the
        thresholds is drawn at once.
        """
        urgent = xmode != self._xmode or settings is not self._settings
        self._calls = calls
        self._settings = settings
        self._xmode = xmode
        self._cal = calibrations
        wait = CHART_MIN_INTERVAL - (time.monotonic() - self._last_draw)
        if urgent or wait <= 0:
            self._redraw()
        elif self._timer is None:
            self._timer = self.set_timer(wait, self._redraw)

    def _redraw(self) -> None:
        self._timer = None
        self._last_draw = time.monotonic()
        self.refresh()

    def render(self) -> RenderResult:
        """Rebuild the plot for the current size and data."""
        plt = self.plt
        plt.clear_figure()
        width = max(10, self.size.width)
        s = self.series = build_series(self._calls, self._settings, self._xmode, max(10, width - 8), self._cal)
        if not s.x:
            plt.title("no calls to plot yet" if self._xmode == "index" else "no timestamped calls to plot")
            return super().render()
        data_top = max([*s.total, *s.unsplit, *(r for r in s.reported if r is not None), 1])
        values = {"trigger": s.trigger, "budget": s.budget, "limit": s.limit}
        lines = [(v, letter, name, colour) for attr, letter, name, colour in THRESHOLD_LINES
                 if (v := values[attr]) is not None]
        # Thresholds within twice the data's peak are drawn; the others are named under the chart so
        # that a run far from its limits still shows its own trend.
        shown = [ln for ln in lines if ln[0] <= 2 * data_top]
        above = [(v, letter, name) for v, letter, name, _c in lines if v > 2 * data_top]
        axis = self.axis = y_axis(self.size.height - CHART_FRAME_ROWS, data_top, shown)
        # The legend is in the side panel (chart_legend): plotext's own legend covers the data on short charts.
        bars = self._xmode == "index" and len(s.x) <= max(4, (width - 8) // 3)
        unsplit = any(s.unsplit)
        if bars:
            # Few calls: one stacked bar per call (a prompt of unknown split is its own part, never history).
            # (plotext takes one colour and marker per stacked series; its annotations say one for all)
            parts = [s.floor, [t - f for t, f in zip(s.total, s.floor, strict=True)]]
            colours, markers = ["magenta", "cyan"], [CHART_MARKERS["floor"], CHART_MARKERS["history"]]
            if unsplit:
                parts.append(s.unsplit)
                colours.append("gray")
                markers.append(CHART_MARKERS["unsplit"])
            plt.stacked_bar(s.x, parts, color=colours, marker=markers, width=BAR_WIDTH)  # type: ignore[arg-type]
        else:
            # Many calls (or wall time): stacked areas, floor drawn over floor + history; prompts of unknown
            # split first, so that the known areas are drawn over them.
            sx, s_unsplit, s_total, s_floor, s_reported = stepped(s.x, s.steps, s.unsplit, s.total, s.floor,
                                                                  s.reported)
            if unsplit:
                plt.plot(sx, s_unsplit, fillx=True, marker=CHART_MARKERS["unsplit"], color="gray")
            plt.plot(sx, s_total, fillx=True, marker=CHART_MARKERS["history"], color="cyan")
            plt.plot(sx, s_floor, fillx=True, marker=CHART_MARKERS["floor"], color="magenta")
        known = [(x, r) for x, r in zip(s.x, s.reported, strict=True) if r is not None] if bars else \
            [(x, r) for x, r in zip(sx, s_reported, strict=True) if r is not None]
        if known:
            draw = plt.scatter if bars else plt.plot  # a point on each bar; a line over the areas
            draw([k[0] for k in known], [k[1] for k in known], marker=CHART_MARKERS["reported"], color="blue")
        x0 = s.x[0]
        x1 = s.x[-1] if len(s.x) > 1 and s.x[-1] > x0 else x0 + 1
        if self._xmode == "index":
            x0, x1 = x0 - 0.5, x1 + 0.5  # room for the first and last bars
        # Each threshold row is labelled beside the axis (y_axis); tall charts also name the lines on them, at
        # different places along the rows so that names on neighbouring rows do not run into each other, and
        # only where no bar or point reaches the line (a name drawn over the data hid it).
        where: list[tuple[float, Literal["left", "right", "center"]]] = [
            (x0, "left"), (x1, "right"), ((x0 + x1) / 2, "center")]
        heights = [max(t, u, r or 0) for t, u, r in zip(s.total, s.unsplit, s.reported, strict=True)]
        per_col = (x1 - x0) / max(1, width - 8)  # (x units per character of the plot)
        for n, (_row, value, names, colour) in enumerate(axis.lines):
            plt.hline(value, colour)
            if axis.rows < NAMED_LINE_ROWS:
                continue
            clear = value - axis.top / max(1, axis.rows) / 2  # (data at or above this is drawn on the line's row)
            span = (len(names) + 1) * per_col
            for k in range(len(where)):
                x, align = where[(n + k) % len(where)]
                lo = x if align == "left" else x - span if align == "right" else x - span / 2
                if _clear_of_data(s.x, heights, lo - per_col, lo + span + per_col, clear, BAR_WIDTH / 2 if bars
                                  else None):
                    plt.text(names, x=x, y=value, color=colour, alignment=align)
                    break
        for cx in s.compactions:
            plt.vline(cx, "green")
        plt.ylim(0, axis.top)
        plt.xlim(x0, x1)
        plt.yticks(axis.ticks, axis.labels)
        if self._xmode == "index":
            xt = _int_ticks(s.x[0], s.x[-1], max(2, width // 12))
            plt.xticks(xt, [str(int(v)) for v in xt])
        # plotext centres the title under the plot and drops it unless it fits in the widget from there.
        ylw = max((len(lab) for lab in axis.labels), default=0)
        centre = ylw + 1 + (width - 2 - ylw) // 2
        plt.xlabel(x_title(s.xlabel, above, bool(s.compactions), min(2 * (width - centre), 2 * centre + 1),
                           unsplit=any(s.unsplit)))
        return super().render()


# --- text panels --------------------------------------------------------------------------------------

class StatusLine(Static):
    """The status line: file, format, calls, bad lines, tokenizer, window, follow/paused, last reset."""

    DEFAULT_CSS = """
    StatusLine { height: auto; padding: 0 1; background: $boost; }
    """


class SidePanel(Static):
    """The panel beside the chart: analysis flags (newest first) when available, and input problems."""

    DEFAULT_CSS = """
    SidePanel { padding: 0 1; }
    """
