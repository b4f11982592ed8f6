"""The calls table: one row per call of the view (number, time, model, floor, history, reserve, used %,
reported prompt), drawn with Textual's Line API so that only the rows on screen are formatted and rendered.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.actions import SkipAction
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ctxwatch.accounting import NO_CALIBRATION, Calibrations
from ctxwatch.config import Settings
from ctxwatch.model import Breakdown, Call, Src, shown_fraction
from ctxwatch.ui.widgets.cells import COLUMNS, COMPACT_KEYS, MIN_WIDTHS, cell_texts, used_width

_LEFT = frozenset({"time", "model"})


class CallsTable(ScrollView, can_focus=True):
    """The calls of the current view, one row per call: a Line API widget that renders only visible rows.

    Appending a row costs O(1) (its cell strings are formatted once) and a frame renders only the rows on
    screen, so a 10,000-call run stays responsive (a DataTable measures every cell of every new row on the UI
    thread: seconds for 10,000 rows).  The header stays on the first line.  Keys: ↑/↓ ``j``/``k``, page up /
    down, ``home``/``g`` first call, ``end``/``G`` newest call, ``enter`` opens the call.  A move made by a
    person posts :class:`UserMoved` after :class:`Highlighted`.
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


    class Highlighted(Message):
        """The cursor moved to call ``index`` (row ``row`` of the table)."""

        def __init__(self, table: CallsTable, index: int | None, row: int) -> None:
            super().__init__()
            self.table = table
            self.index = index
            self.row = row

    class UserMoved(Message):
        """A person moved the cursor (a key or a click) to row ``row`` of ``count`` rows, even onto the row it
        was on: the app stops following the newest call unless it is that one."""

        def __init__(self, table: CallsTable, row: int, count: int) -> None:
            super().__init__()
            self.table = table
            self.row = row
            self.count = count

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
        # model -> the largest floor and history counted with another tokenizer, and the largest estimated
        # prompt + 1 over the window of a call that reports none: what calibrated cells can reach
        self._scalable: dict[str | None, list[float]] = {}
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
        for model, (floor, history, most_used) in self._scalable.items():
            factor = calibrations.of_model(model)
            if factor is None:
                continue
            for key, v in (("floor", floor), ("history", history)):
                w[key] = max(w[key], len(f"{round(v * factor):,}") + 1)
            # (a calibrated used %: at most (estimate + 1) x the factor, (estimate + 1) for a factor below 1)
            w["used"] = max(w["used"], used_width(most_used * max(factor, 1.0)))
        self._resize()

    def shown(self, row: int) -> Breakdown:
        """The floor and history shown in ``row`` (:meth:`Calibrations.breakdown` of its call)."""
        return self._cal.breakdown(self._calls[row])

    def _grow(self, c: Call) -> None:
        """Widen numeric columns for ``c``'s values as shown (one digit group = 4 cells, plus a source mark)."""
        w = self._widths
        b = self._cal.breakdown(c)
        if c.floor_src == Src.ESTIMATED and not c.exact:
            most = self._scalable.setdefault(c.model, [0, 0, 0.0])
            most[0] = max(most[0], c.floor_tokens or 0)
            most[1] = max(most[1], c.history_tokens or 0)
            if c.prompt_reported is None and c.prompt_estimated is not None and c.window:
                most[2] = max(most[2], (c.prompt_estimated + 1) / c.window)
        frac = shown_fraction(c, b)
        if frac is not None:  # (a number is never cut: 4687.5%!! for a prompt far over the window)
            w["used"] = max(w["used"], used_width(frac))
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
        self.post_message(self.UserMoved(self, self.cursor_row, self.row_count))

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
        """Open the highlighted call; with no row, the key goes on to the app's own binding, which says why."""
        index = self.index_at_cursor()
        if index is None:
            raise SkipAction()
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
