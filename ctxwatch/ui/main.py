"""The main screen: status line, progress bar, context bar, cost line, trend chart beside the side panel, calls
table, filter box and footer.

It is handed the dashboard's state when made and draws every widget from it when the app says the state
changed (:meth:`MainScreen.show_state`) or when the terminal is resized.  What a person does here reaches
the app as messages (:class:`FilterInput.Cleared`, :class:`MainScreen.Ready`, the table's own).
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Input, ProgressBar, Static

from ctxwatch.config import Settings
from ctxwatch.model import Call
from ctxwatch.ui import text as tx
from ctxwatch.ui.costs import cost_line, cost_segment
from ctxwatch.ui.state import DashboardState
from ctxwatch.ui.widgets.bar import ContextBar
from ctxwatch.ui.widgets.chart import TrendChart, chart_legend
from ctxwatch.ui.widgets.footer import AdaptiveFooter
from ctxwatch.ui.widgets.limits import drift_note
from ctxwatch.ui.widgets.side import SidePanel, flag_line
from ctxwatch.ui.widgets.status import StatusLine
from ctxwatch.ui.widgets.table import CallsTable

#: Below this size (columns, rows) only a "terminal too small" message and a one-line summary are shown.
MIN_WIDTH, MIN_HEIGHT = 40, 10
#: Below this size the chart and the side panel are hidden (compact layout for small tmux panes).
COMPACT_WIDTH, COMPACT_HEIGHT = 72, 22
#: From this many rows on, the cost line has a row of its own under the bar; below, the costs are on the status
#: line (an 80x24 terminal keeps its chart rows).
COST_LINE_HEIGHT = 30
#: Seconds the filter waits after the last keystroke before the view is rebuilt.
FILTER_DELAY = 0.15


class FilterInput(Input):
    """The ``/`` filter box: Enter keeps the filter and returns to the table, Escape clears it."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "clear_filter", "Clear filter")]

    class Cleared(Message):
        """Escape in the filter box: show every call again and return to the table."""

    def action_clear_filter(self) -> None:
        """Clear the box and say so to the app."""
        self.value = ""
        self.post_message(self.Cleared())


class ChartRow(Horizontal):
    """The chart and the side panel.  The side panel's text depends on the rows this row gets, which change
    with the terminal and with the status line's height, so a resize redraws it."""

    class Resized(Message):
        """The row changed size: the side panel is drawn again for its rows."""

    def on_resize(self, event: events.Resize) -> None:
        """Ask the screen to redraw the side panel."""
        self.post_message(self.Resized())


def tiny_text(state: DashboardState, width: int, height: int) -> Text:
    """What a terminal below ``MIN_WIDTH x MIN_HEIGHT`` shows: that it is too small, and the selected call."""
    out = Text(f"Terminal too small ({width}x{height}): ctxwatch needs at least {MIN_WIDTH}x{MIN_HEIGHT}.\n",
               style="bold")
    call = state.selected_call()
    if call is not None:
        out.append(f"call #{call.index + 1} · used {tx.pct(call.used_tokens, call.window)} · "
                   f"{len(state.calls)} calls")
    return out


class MainScreen(Screen[None]):
    """Status line, progress bar, context bar, trend chart + side panel and the chart's legend, calls table,
    filter box, footer.

    The layout adapts to the terminal: compact below ``COMPACT_WIDTH x COMPACT_HEIGHT`` (no chart, no side
    panel: one line under the bar names the most severe flag instead), and a "terminal too small" message
    below ``MIN_WIDTH x MIN_HEIGHT``.

    Args:
        state: the dashboard's state, drawn by :meth:`show_state` (never changed here).
        settings: the thresholds the bar, the table and the chart are drawn with.
    """

    class Ready(Message):
        """The screen is mounted: calls read before it are to be put in its table."""

    class FilterChanged(Message):
        """The filter box's text is ``text``: typed (after :data:`FILTER_DELAY` without a key), kept with
        Enter, or cleared with Escape (``""``)."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def __init__(self, state: DashboardState, settings: Settings) -> None:
        super().__init__()
        self.state = state
        self.settings = settings
        #: True once mounted: from then on the app pushes data into the widgets.
        self.ready = False
        self._filter_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        """The widgets, empty until the state is drawn."""
        with Vertical(id="main"):
            yield StatusLine(Text("starting…"), id="status")
            yield ProgressBar(id="progress", show_eta=False)
            yield ContextBar(id="bar")
            yield Static(Text(""), id="costline")
            yield Static(Text(""), id="flagline")
            with ChartRow(id="middle"):
                yield TrendChart(id="chart")
                yield SidePanel(Text("flags: none"), id="side")
            yield Static(Text(""), id="legend")
            yield CallsTable(id="calls")
            yield FilterInput(placeholder="filter calls (model, context, time, numbers) · enter keeps · esc clears",
                              id="filter")
        yield Static("", id="toosmall")
        yield AdaptiveFooter()

    @property
    def table(self) -> CallsTable:
        """The calls table."""
        return self.query_one(CallsTable)

    @property
    def live(self) -> bool:
        """True while the calls table and the filter box are there to take the state: from the screen's mount
        until the app takes its screens down (when the app quits, its message loop may still handle a worker's
        message after they are gone)."""
        if not self.ready:
            return False
        try:
            self.query_one(CallsTable)
            self.query_one(FilterInput)
        except NoMatches:
            return False
        return True

    def fill_table(self, calls: list[Call]) -> None:
        """Replace the table's rows with ``calls``, shown with the state's calibrations."""
        table = self.table
        table.set_calibrations(self.state.calibrations)
        table.set_calls(calls, self.settings)

    def add_calls(self, fresh: list[Call], updated: list[Call]) -> None:
        """Append the rows of ``fresh`` calls and draw ``updated`` ones again, with the state's calibrations
        (a change of them shows every row anew)."""
        table = self.table
        table.set_calibrations(self.state.calibrations)
        if fresh:
            table.append_calls(fresh, self.settings)
        for c in updated:
            table.update_call(c, self.settings)

    def on_mount(self) -> None:
        """Apply the layout for the current size, focus the table, tell the app the screen is there."""
        self.ready = True
        self.apply_size(self.app.size.width, self.app.size.height)
        self.table.focus()
        if self.state.calls:
            self.post_message(self.Ready())

    def on_resize(self, event: events.Resize) -> None:
        """Switch between full, compact and too-small layouts as the terminal is resized."""
        self.apply_size(event.size.width, event.size.height)

    def on_chart_row_resized(self, message: ChartRow.Resized) -> None:
        """Redraw the side panel for the rows it now has."""
        self.show_state(chart=False)

    def on_trend_chart_titled(self, message: TrendChart.Titled) -> None:
        """The chart's x axis title changed: draw the legend's line again."""
        if self.ready and not self.has_class("-compact") and not self.has_class("-tiny"):
            self._show_legend()

    def _show_legend(self) -> None:
        width = self.app.size.width
        chart = self.query_one(TrendChart)
        legend = chart_legend(self.state.unsplit_seen, max(10, width - 2), chart.titles, chart.lines,
                              chart.values)
        self.query_one("#legend", Static).update(legend)

    def open_filter(self, text: str) -> None:
        """Show the filter box holding ``text`` and focus it."""
        box = self.query_one(FilterInput)
        box.add_class("-active")
        box.value = text
        box.focus()

    def close_filter(self, clear: bool = True) -> None:
        """Hide the filter box (emptied unless ``clear`` is false) and return to the table."""
        if self._filter_timer is not None:
            self._filter_timer.stop()
        box = self.query_one(FilterInput)
        if clear:
            box.value = ""
        if box.has_class("-active"):
            box.remove_class("-active")
            self.table.focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        """Filter as the user types, after a short pause (so a 10,000-call table is not rebuilt per key)."""
        if event.input.id == "filter":
            if self._filter_timer is not None:
                self._filter_timer.stop()
            value = event.value
            self._filter_timer = self.set_timer(FILTER_DELAY, lambda: self.post_message(self.FilterChanged(value)))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter in the filter box: apply now and return to the table."""
        if event.input.id == "filter":
            self.close_filter(clear=False)
            self.post_message(self.FilterChanged(event.value))

    def on_filter_input_cleared(self, message: FilterInput.Cleared) -> None:
        """Escape in the filter box: every call again, back to the table."""
        self.close_filter()
        self.post_message(self.FilterChanged(""))

    @property
    def too_small(self) -> bool:
        """Whether the terminal is below ``MIN_WIDTH x MIN_HEIGHT``: the screen shows only that it is."""
        return self.has_class("-tiny")

    def apply_size(self, width: int, height: int) -> None:
        """Set the layout classes for a ``width`` x ``height`` terminal and draw the state for it."""
        tiny = width < MIN_WIDTH or height < MIN_HEIGHT
        compact = not tiny and (width < COMPACT_WIDTH or height < COMPACT_HEIGHT)
        if tiny != self.too_small:
            self.app.refresh_bindings()  # (the app's keys that open screens are off while it is too small)
        self.set_class(tiny, "-tiny")
        self.set_class(compact, "-compact")
        self.set_class(height < COST_LINE_HEIGHT, "-short")
        table = self.table
        table.set_model_width(16 if width < 100 else 20 if width < 140 else 28)
        table.set_compact(compact)
        self.show_state()

    def show_state(self, chart: bool = True) -> None:
        """Draw the state in the status line, bar, chart (unless ``chart`` is false), side panel, flag line,
        too-small message and progress bar of the current layout."""
        if not self.ready:
            return
        try:
            self._show_state(chart)
        except NoMatches:
            # The screen is being rebuilt (a layout change): its widgets are not all there yet.  The next
            # update, at most a quarter of a second away, draws the whole state.
            return

    def _show_state(self, chart: bool) -> None:
        s = self.state
        width = self.app.size.width
        full = not self.has_class("-compact") and not self.has_class("-tiny")
        call = s.selected_call()
        cost = s.costs.get(call.index) if call is not None else None
        # (a short terminal has no row for the cost line: the costs go on the status line, but for the compact
        # layout's, one line of the essentials)
        short = self.has_class("-short") and not self.has_class("-compact")
        self.query_one(StatusLine).show(s, self.has_class("-compact"), max(10, width - 2),
                                        cost_segment(call, cost, s.totals) if short else None)
        note = s.failed or s.notice or ("reading…" if not s.loaded else "no calls in this view")
        # (at a compaction, the floor of the call before: the bar says why an inferred floor moved)
        before = s.previous_in_context(call) if call is not None and call.compaction else None
        self.query_one(ContextBar).show(call, self.settings, note, drift_note(call, s.analyses),
                                        s.last_plausible(call), s.calibrations,
                                        s.calibrations.breakdown(before).floor_tokens if before else None)
        if not self.has_class("-short"):
            self.query_one("#costline", Static).update(cost_line(call, cost, s.totals, max(10, width - 2)))
        if chart and full:
            self.query_one(TrendChart).show(s.view_calls(), self.settings, s.xaxis, s.calibrations,
                                            filtered=bool(s.filter_text))
        if full:
            # (the chart's legend, on a line of its own under it: the side panel may have no room left for it)
            self._show_legend()
        if full:
            # (the panel grows with its text: the rows it may fill are those of the chart's row)
            self.query_one(SidePanel).show(s, self.query_one("#middle").size.height)
        if self.has_class("-compact"):
            self.query_one("#flagline", Static).update(flag_line(s, max(10, width - 2)))
        if self.has_class("-tiny"):
            self.query_one("#toosmall", Static).update(tiny_text(s, width, self.app.size.height))
        bar = self.query_one(ProgressBar)
        if s.progress is not None and not s.loaded:
            bar.add_class("-active")
            done, total = s.progress
            bar.update(total=max(1, total), progress=done)
        else:
            bar.remove_class("-active")
