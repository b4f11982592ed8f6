"""The eviction preview (``e``): the plan ``ctxwatch plan`` would make for one call, every message with its
fate, the prompt's bar before and after, and knobs that re-plan at once; ``w`` writes the plan as JSON.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from typing import Any, ClassVar

from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import DataTable, Static

from ctxwatch.config import Settings
from ctxwatch.formats import FormatSpec
from ctxwatch.model import (
    Breakdown,
    Call,
    ParsedCall,
)
from ctxwatch.ui import text as tx
from ctxwatch.ui.export import json_document, write_new
from ctxwatch.ui.screens.common import REREAD_FAILED, TableScreen, reload, settle_widths, unique_path
from ctxwatch.ui.screens.planrows import COLUMNS, fit_cells, plan_rows
from ctxwatch.ui.screens.planview import Knobs, knob_note, plan_bars, plan_document, plan_head, sizes_note
from ctxwatch.ui.widgets.footer import AdaptiveFooter

#: Rows of the table the header leaves at least before it is condensed: at 80x24 the whole header of a plan
#: that fits (5 lines) leaves 14.
TABLE_ROWS = 14


class PlanReady(Message):
    """The plan worker finished: a plan, or an error sentence."""

    def __init__(self, plan: Any, error: str | None, knobs: Knobs | None) -> None:
        super().__init__()
        self.plan = plan
        self.error = error
        self.knobs = knobs


class PlanScreen(TableScreen):
    """The eviction plan of one call: every message coloured by fate, before/after bars, policy knobs.

    Keys: ``+``/``-`` keep_recent, ``B``/``b`` budget fraction ±0.05, ``R``/``r`` reserve ±1% of the
    window, ``U``/``u`` summary tokens ±500, ``m`` summarise/drop, ``o`` prompt order / biggest savings
    first, ``y`` the whole header or the condensed one, ``w`` write the plan JSON (where ``export_to`` says: the
    current folder, or the exports folder when that one is followed), ``escape`` back.  The plan is recomputed at
    once after each change; a keep_recent step that changes nothing says why (:attr:`note`).  The header is
    whole where the screen holds it beside most of the rows (:meth:`head_is_whole`), else one line each for the
    title, the knobs and the reason; the rows' message and preview columns share the screen's width.  Each message's
    ``saves`` is what evicting it (with its exchange) frees; ``◆`` marks the biggest offenders.  Home and End
    go to the first and the last message (the table's own would scroll it sideways).
    """

    TABLE_ID: ClassVar[str] = "plan-table"

    BINDINGS: ClassVar[list[BindingType]] = [
        # The footer shows one key per knob (the upper-case/plus one; the lower-case/minus key turns it
        # back, as the help and the screen's knob line say), so that "w" still fits at 80 columns.
        Binding("escape", "app.pop_screen", "Back"),
        Binding("w", "write", "JSON"),
        # (q, s and x still work; their footer entries give way to the knobs, which did not fit at 80 columns)
        Binding("q", "app.quit", "Quit", show=False),
        Binding("s", "app.save_svg", "SVG", show=False),
        Binding("x", "app.export_csv", "CSV", show=False),
        Binding("plus,equals_sign", "knob('keep_recent', 1)", "keep±"),
        Binding("minus", "knob('keep_recent', -1)", "keep-", show=False),
        Binding("B", "knob('budget_fraction', 1)", "budget±"),
        Binding("b", "knob('budget_fraction', -1)", "budget-", show=False),
        Binding("R", "knob('reserve_tokens', 1)", "reserve±"),
        Binding("r", "knob('reserve_tokens', -1)", "reserve-", show=False),
        Binding("U", "knob('summary_tokens', 1)", "summary±"),
        Binding("u", "knob('summary_tokens', -1)", "summary-", show=False),
        Binding("m", "toggle_mode", "Mode"),
        Binding("o", "toggle_order", "Order", show=False),
        Binding("y", "toggle_reason", "Why"),
    ]


    def __init__(self, call: Call, spec: FormatSpec | None, settings: Settings, shown: Breakdown | None = None,
                 export_to: Callable[[], str] = os.getcwd) -> None:
        """``call``: the call to plan, re-read from its log with ``spec``; ``settings``: the policy the knobs start
        from; ``shown``: the call's floor and history as the main screen shows them (calibrated where the
        tokenizer is not the model's own): the plan pins that floor, as ``plan`` does
        (:func:`ctxwatch.planner.plan_counts`); ``export_to``: gives the folder ``w`` writes to."""
        super().__init__()
        self.export_to = export_to
        self.call = call
        self.spec = spec
        self.settings = settings
        self.shown = shown
        self.window = call.window or settings.window
        self.knobs: Knobs | None = None
        self.plan: Any = None
        self._start_budget: float | None = None  # (the budget fraction the knob starts at)
        self.error: str | None = None
        self.written: str | None = None
        self._pc: ParsedCall | None = None
        self._counts: Any = None  # planner.PlanCounts, made when the call is re-read
        #: ``prompt`` or ``size`` (biggest savings first): the order of the table's rows.
        self.order = "prompt"
        #: Why the last keep_recent step changed nothing, else ``None``.
        self.note: str | None = None
        self._turned: str | None = None  # (the knob turned last)
        self._copy_rows: list[tuple[str, str] | None] = []  # (what ctrl+c copies, per row: its message whole)
        self._width = 0  # (the screen's width the rows were fitted to)
        #: ``y``'s choice: the header whole (``True``), condensed (``False``), or as the screen's size allows.
        self.whole: bool | None = None
        #: Whether the header on screen is the whole one.
        self.whole_shown = True

    def compose(self) -> ComposeResult:
        """Header, bars, messages table, footer."""
        yield Static(Text(f"call #{self.call.index + 1}: planning…", style="dim"), id="plan-head")
        yield Static("", id="plan-bars")
        table: DataTable[Any] = DataTable(id="plan-table", cursor_type="row")
        self._add_columns(table)
        yield table
        yield AdaptiveFooter()

    @staticmethod
    def _add_columns(table: DataTable[Any]) -> None:
        for key, header, right in COLUMNS:
            table.add_column(Text(header, justify="right" if right else "left"), key=key)

    def on_mount(self) -> None:
        """Load the call and compute the first plan."""
        self.query_one("#plan-table", DataTable).focus()
        if not self.window:
            self._fail("the context window is unknown for this call: pass --window N to plan")
            return
        from ctxwatch.accounting import reserve_for
        from ctxwatch.planner import PolicyError, policy_for_call

        # The reserve and budget `plan` gives this call (the request's max_tokens capped at the window, else the
        # reserve fraction; a harness's log its own reserve and budget): a max_tokens at or above the window
        # reserves all of it, so nothing fits.
        reserve = reserve_for(self.call.max_output_tokens, self.window, self.settings)[0]
        budget = self.settings.budget_fraction
        try:
            base = policy_for_call(self.call, self.settings, window=self.window)
            reserve = base.reserve_tokens if base.reserve_tokens is not None else reserve
            budget = base.budget_fraction
        except PolicyError:
            pass  # (said when the plan is computed)
        assert reserve is not None  # (the window is known here)
        self._start_budget = budget
        self.knobs = Knobs(self.settings.keep_recent, budget, reserve, self.settings.summary_tokens)
        self._compute(self.knobs, load=True)

    def _fail(self, msg: str) -> None:
        self.error = msg
        self.query_one("#plan-head", Static).update(Text(msg, style="yellow"))

    @work(thread=True, exclusive=True, group="plan")
    def _compute(self, knobs: Knobs, load: bool = False) -> None:
        from ctxwatch.planner import PolicyError, logged_counts, plan_from_counts, policy_for_call, unplannable
        from ctxwatch.tokens import counter_for

        if load or self._pc is None:
            if self.spec is None:
                self.post_message(PlanReady(None, "the log's format is not known yet", knobs))
                return
            self._pc = reload(self.spec, self.call)
            if self._pc is None:
                self.post_message(PlanReady(None, REREAD_FAILED, knobs))
                return
            # The counts `plan` starts from, made as it makes them (so the preview's "before" is the prompt the
            # main screen shows and its rows are the detail's); the accounted per-message counts are reused, so a
            # knob change re-plans at once.
            self._counts = logged_counts(self.call, self._pc, self.shown)
        pc = self._pc
        why = unplannable(self.call, pc)
        if why:
            self.post_message(PlanReady(None, why, knobs))
            return
        assert self.window is not None
        # A budget moved from where it started is the one `plan --budget-fraction` sets: a harness's trigger is
        # then its own in tokens, up to that budget, as plan makes it.
        settings = self.settings if knobs.budget_fraction == self._start_budget else \
            replace(self.settings, budget_fraction=knobs.budget_fraction)
        try:
            policy = policy_for_call(self.call, settings, window=self.window,
                                     reserve=float(knobs.reserve_tokens), mode=knobs.mode)
            policy = replace(policy, keep_recent=knobs.keep_recent, budget_fraction=knobs.budget_fraction,
                             summary_tokens=knobs.summary_tokens)
            assert self._counts is not None
            plan = plan_from_counts(pc, policy, counter_for(self.call.model, self.call.provider), self._counts)
        except (PolicyError, ValueError) as exc:
            self.post_message(PlanReady(None, str(exc), knobs))
            return
        self.post_message(PlanReady(plan, None, knobs))

    def on_plan_ready(self, message: PlanReady) -> None:
        """Show the new plan."""
        if message.plan is None:
            self._fail(message.error or "no plan")
            return
        old, self.plan = self.plan, message.plan
        self.knobs = message.knobs
        self.error = None
        self.note = knob_note(old, self.plan, self.knobs.keep_recent) \
            if self._turned == "keep_recent" and self.knobs is not None else None
        self._turned = None
        self._render_plan()

    def _render_plan(self) -> None:
        plan = self.plan
        table = self.query_one("#plan-table", DataTable)
        row = table.cursor_row
        table.clear(columns=True)  # (a column only widens as rows come: new ones start from their heading)
        self._add_columns(table)
        rows = plan_rows(plan, self._pc, self.order)
        self._copy_rows = [r.copy for r in rows]
        # (the table's width less its vertical scrollbar: the rows are fitted to it, so nothing scrolls sideways)
        for cells in fit_cells(rows, (self.size.width or 80) - 2):
            table.add_row(*cells)
        settle_widths(table)
        self._width = self.size.width
        if table.row_count:
            table.move_cursor(row=min(row, table.row_count - 1), animate=False)
        self._render_head()  # (after the rows: whether the header is whole depends on how many there are)
        self.query_one("#plan-bars", Static).update(self._bars())

    def _render_head(self) -> None:
        """The header, whole or condensed (:meth:`head_is_whole`), for the screen's width; an error the last
        recomputation gave stays in its place (:meth:`_fail`)."""
        knobs = self.knobs
        assert knobs is not None
        if self.error is not None:
            return
        width = max(10, (self.size.width or 80) - 2)  # (less the header's padding)
        sizes = sizes_note(self.plan, self._counts, self._pc is not None and self._pc.tools is None,
                           self.call.tokenizer)

        def head(whole: bool) -> Text:
            return plan_head(self.call.index + 1, self.plan, knobs, sizes, self.note, whole=whole, width=width)

        whole = head(True)
        self.whole_shown = self.head_is_whole(len(whole.wrap(self.app.console, width)))
        self.query_one("#plan-head", Static).update(whole if self.whole_shown else head(False))

    def head_is_whole(self, lines: int) -> bool:
        """Whether the header is shown whole, when whole it takes ``lines`` lines: as ``y`` last chose, else when
        the table below it keeps every row, or at least :data:`TABLE_ROWS` and half the screen's height (the bars
        take 3 lines, the table's heading and the footer one each)."""
        if self.whole is not None:
            return self.whole
        height = self.size.height or 24
        wanted = min(len(self._copy_rows), max(TABLE_ROWS, height // 2))
        return height - lines - 3 - 2 >= wanted

    def action_toggle_reason(self) -> None:
        """``y``: the whole header (the plan's reason whole, the sizes note, the knobs' keys), or the condensed one;
        the choice holds until ``y`` again."""
        self.whole = not self.whole_shown
        if self.plan is not None and self.knobs is not None:
            self._render_head()

    def copy_item(self) -> tuple[str, str] | None:
        """What ctrl+c copies here: (what, text) of the highlighted row's message whole, or ``None``."""
        row = self.query_one("#plan-table", DataTable).cursor_row
        return self._copy_rows[row] if 0 <= row < len(self._copy_rows) else None

    def on_resize(self, event: events.Resize) -> None:
        """Redraw the header, the bars and the rows for the new size (each is fitted to the screen: drawn for the
        old width, the bars would wrap when it shrank and the rows scroll sideways)."""
        if self.plan is None or self.knobs is None:
            return
        if self.size.width != self._width:
            self._render_plan()
        else:
            self._render_head()

    def _bars(self) -> Text:
        # "before " (7) + " 127%" (up to 6) + the screen's padding and scrollbar (4): the bar gets the rest,
        # so the percentage stays on the bar's line at any width.
        return plan_bars(self.plan, self.plan.window or self.window or 1, max(20, (self.size.width or 80) - 18))

    def action_knob(self, name: str, direction: int) -> None:
        """Turn one knob one step (``direction`` +1 or -1) and recompute the plan."""
        if self.knobs is None or not self.window:
            return
        k = self.knobs
        if name == "keep_recent":
            if k.keep_recent + direction < 0:
                # (the knob does not move: the plan stays, and the header says why rather than blame the cut)
                self.note = "keep_recent 0: the least it can be (no exchange is kept for being recent)"
                if self.plan is not None:
                    self._render_plan()
                return
            new = replace(k, keep_recent=k.keep_recent + direction)
        elif name == "budget_fraction":
            # (rounded to 4 places, not 2: a harness's fraction, Claude Code's 177,000 / 200,000 = 0.885, keeps
            # its half step as it is turned)
            new = replace(k, budget_fraction=round(min(1.0, max(0.05, k.budget_fraction + 0.05 * direction)), 4))
        elif name == "reserve_tokens":
            step = max(1, self.window // 100)
            new = replace(k, reserve_tokens=min(self.window - 1, max(0, k.reserve_tokens + step * direction)))
        elif name == "summary_tokens":
            new = replace(k, summary_tokens=max(0, k.summary_tokens + 500 * direction))
        else:
            return
        self.knobs = new
        self._turned = name
        self._compute(new)

    def action_toggle_order(self) -> None:
        """Rows in prompt order, or biggest savings first (what evicting each would free)."""
        self.order = "size" if self.order == "prompt" else "prompt"
        if self.plan is not None:
            self._render_plan()

    def action_toggle_mode(self) -> None:
        """Switch between summarising and dropping the evicted span."""
        if self.knobs is None:
            return
        self.knobs = replace(self.knobs, mode="drop" if self.knobs.mode == "summarise" else "summarise")
        self._compute(self.knobs)

    def plan_document(self) -> dict[str, Any]:
        """The JSON ``w`` writes (:func:`~ctxwatch.ui.screens.planview.plan_document`)."""
        return plan_document(self.call, self.plan)

    def action_write(self) -> None:
        """Write :meth:`plan_document` to the folder :attr:`export_to` gives (where the app writes its exports)
        and say where."""
        if self.plan is None:
            self.notify("no plan to write yet", severity="warning", markup=False)
            return
        try:
            folder = self.export_to()
            # (built whole before the file is created: a string orjson refuses left a 0-byte file behind)
            data = json_document(self.plan_document())  # (no raw control or bidi character either)
            path = unique_path(folder, f"ctxwatch-plan-call{self.call.index + 1}", ".json")  # call #N
            write_new(path, data)
        except (OSError, TypeError) as exc:  # a read-only folder, a full disk, an XDG path that is a file
            self.notify(f"plan not written: {exc}", title="eviction plan", severity="error", markup=False)
            return
        self.written = path
        self.notify(f"plan written to\n{tx.saved_where(path, tx.toast_width(self.app.size.width))}",
                        title="eviction plan", markup=False)
