"""The call detail (Enter): every item of one call's prompt with its tokens and share of the prompt, in
prompt order or biggest first, and the selected item's text below, folded or expanded.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import DataTable, Input, Static, TextArea
from textual.widgets.text_area import Selection

from ctxwatch.config import Settings
from ctxwatch.formats import FormatSpec
from ctxwatch.model import (
    Breakdown,
    Call,
    Src,
    raw_breakdown,
)
from ctxwatch.ui import text as tx
from ctxwatch.ui.costs import call_cache_text, call_cost_text
from ctxwatch.ui.screens.common import REREAD_FAILED, TableScreen, reload, settle_widths
from ctxwatch.ui.screens.itemcounts import COUNTED, SCALED, rows_note, scaled_how, with_counts
from ctxwatch.ui.screens.items import Item, build_items, fold, item_numbers
from ctxwatch.ui.widgets.footer import AdaptiveFooter
from ctxwatch.ui.widgets.packed import PackedText

if TYPE_CHECKING:
    from ctxwatch.planner import PlanCounts


class DetailLoaded(Message):
    """The detail worker re-read the call: ``items`` or an ``error`` sentence, and the counts ``plan`` shows
    of it (``None`` where no plan can be made) that the items' numbers are."""

    def __init__(self, items: list[Item], error: str | None, counts: PlanCounts | None = None) -> None:
        super().__init__()
        self.items = items
        self.error = error
        self.counts = counts


class FindInput(Input):
    """The detail view's find box: Escape closes it (the screen's own Escape goes back)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Close")]

    class Closed(Message):
        """Escape in the find box."""

    def action_close(self) -> None:
        """Say so to the screen."""
        self.post_message(self.Closed())


class DetailScreen(TableScreen):
    """Every item of one call's prompt: role, tokens, % of the prompt; in prompt order or biggest first.

    Keys: ↑/↓ select, ``space`` expand/fold the selected item's content, ``o`` prompt order / biggest
    first, ``/`` find text in the items (Enter goes to the next item holding it, its first occurrence selected
    in the body; ``n`` the next one), ``e`` eviction preview, ``escape`` back.
    """

    TABLE_ID = "items"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("space", "toggle_fold", "Expand/fold"),
        Binding("o", "toggle_order", "Order"),
        Binding("e", "app.evict", "Evict"),
        Binding("slash", "find", "Find"),
        Binding("n", "find_next", "Next", show=False),
    ]


    def __init__(self, call: Call, spec: FormatSpec | None, settings: Settings, shown: Breakdown | None = None,
                 calibration: float | None = None, cost: float | None = None, log_path: str | None = None) -> None:
        """``shown``: the call's floor and history as the main screen shows them (the app's
        :meth:`~ctxwatch.accounting.Calibrations.breakdown`: calibrated where the tokenizer is not the model's
        own), else its own; ``calibration``: its model's factor (named when the floor was capped at the report);
        ``cost``: its estimated cost in USD (``None``: unknown); ``log_path``: the log the dashboard names (a
        call read from another file, of a folder or a batch pair, has its file named beside its line)."""
        super().__init__()
        self.log_path = log_path
        self.cost = cost
        self.call = call
        self.spec = spec
        self.settings = settings
        self.shown = shown or raw_breakdown(call)
        self.calibration = calibration
        self.items: list[Item] = []
        #: The counts ``plan`` starts from for this call, once re-read (``None``: none can be made).
        self.counts: PlanCounts | None = None
        self.order = "prompt"  # or "size"
        self.expanded = False
        self.loaded = False
        self.error: str | None = None
        #: The text ``/`` looks for (``""``: none), and how many items hold it.
        self.find_text = ""
        self.matches = 0
        self._filled_width = 0  # (the screen's width the previews were cut for)

    def compose(self) -> ComposeResult:
        """Header, items table, item header and body."""
        yield PackedText(self._head(), id="detail-head")
        table: DataTable[Any] = DataTable(id="items", cursor_type="row")
        self._add_columns(table, raw=False)
        yield table
        yield FindInput(placeholder="find in the items' text · enter: next item holding it · esc: close", id="find")
        yield Static(Text("loading the call from disk…", style="dim"), id="item-head")
        area = TextArea("", id="body", read_only=True, soft_wrap=True, show_line_numbers=False)
        area.cursor_blink = False
        yield area
        yield AdaptiveFooter()

    @staticmethod
    def _add_columns(table: DataTable[Any], *, raw: bool) -> None:
        """The items table's columns; ``raw``: with this tokenizer's own count beside each scaled one."""
        table.add_column(Text("#", justify="right"), key="pos")
        table.add_column(Text("item"), key="label", width=34)
        table.add_column(Text("tokens", justify="right"), key="tokens")
        if raw:
            table.add_column(Text("raw", justify="right"), key="raw")
        table.add_column(Text("% prompt", justify="right"), key="pct")
        table.add_column(Text("preview"), key="preview")

    def _head(self) -> Text:
        c = self.call
        out = Text()
        out.append(f"call #{c.index + 1}", "bold")
        out.append(" · ")
        out.append_text(tx.literal(c.model or "?", limit=40))
        out.append(f" · {tx.stamp(c.timestamp)} · ")
        if c.source.path != self.log_path:
            out.append_text(tx.literal(os.path.basename(c.source.path) + " ", limit=60))
        out.append(f"{c.source.where} · prompt {tx.tokens(c.prompt_tokens)}")
        if c.prompt_implausible:
            out.append(f" (reported {tx.tokens(c.prompt_reported)}: implausible, no occupancy)", "bold yellow")
            if c.prompt_estimated is not None:
                out.append(f" · % of the estimate {tx.tokens(c.prompt_estimated)}")
        b = self.shown
        out.append(f" · floor {tx.marked(b.floor_tokens, b.floor_src)} · history "
                   f"{tx.marked(b.history_tokens, b.history_src)}")
        if b.factor is not None:
            why = "its model's calibration"
            if b.capped:
                cal = f" x{self.calibration:.4f}" if self.calibration is not None else ""
                why = f"capped at the reported prompt, as the calibration{cal} would put it above it"
            hist = ("history the rest of the reported prompt" if b.filled else f"history x{b.factor:.4f}")
            out.append(f" (≈ calibrated: floor x{b.factor:.4f}, {why}; {hist}; {c.tokenizer} counts: floor "
                       f"{tx.tokens(c.floor_tokens)} · history {tx.tokens(c.history_tokens)})", "dim")
        msgs = [it for it in self.items if it.kind == "message"] if self.loaded else []
        if msgs or c.messages:
            n = len(msgs) or len(c.messages)
            out.append(f" · {n} message{'s' if n != 1 else ''}")
        if msgs and c.history_src == Src.INFERRED:
            # The history is what the provider counted minus the floor; this tokenizer counted the messages
            # (their raw counts, where the rows are scaled to the history as plan scales them).
            rows = sum(it.raw if it.raw is not None else it.tokens or 0 for it in msgs)
            rs = sum(it.reported for it in msgs)
            by = f"{rows:,}: {rows - rs:,} by {c.tokenizer}, {rs:,} reasoning as reported" if rs else \
                f"{rows:,} by {c.tokenizer}"
            out.append(f" ({by}, counted on opening)", "dim")  # (how the rows are scaled: rows_note, next)
        elif not self.loaded and not c.messages:
            out.append(" · messages: counted on opening")
        if self.loaded:
            out.append(f" · {rows_note(self.call, self.counts)}", "dim")
        if c.context != "main":
            out.append(" · context ")
            out.append_text(tx.literal(c.context, limit=30))
        out.append(f" · cost {call_cost_text(c, self.cost)} · {call_cache_text(c)}")
        if self.error:
            # (kept in the header: the item header below is redrawn for each highlighted row)
            out.append("\n")
            out.append_text(tx.literal(f"{self.error}: sizes only", "yellow", limit=300))
        return out

    def on_mount(self) -> None:
        """Start re-reading the call in a worker thread."""
        self.query_one("#items", DataTable).focus()
        self._load()

    @work(thread=True, exclusive=True, group="detail")
    def _load(self) -> None:
        if self.spec is None:
            why = "the log's format is not known yet"
            self.post_message(DetailLoaded(build_items(self.call, None, why), why))
            return
        from ctxwatch.planner import logged_counts, unplannable

        pc = reload(self.spec, self.call)
        err = None if pc is not None else REREAD_FAILED
        counts = None
        try:
            items = build_items(self.call, pc, err)
            if pc is not None and unplannable(self.call, pc) is None:
                # The numbers plan and the eviction preview show of this call, made as they make them.
                counts = logged_counts(self.call, pc, self.shown)
                items = with_counts(items, counts, pc.system is not None and not pc.history_reported_only)
        except Exception as exc:  # never let odd content kill the screen
            err = f"{type(exc).__name__}: {exc}"
            items, counts = build_items(self.call, None, err), None
        self.post_message(DetailLoaded(items, err, counts))

    def on_detail_loaded(self, message: DetailLoaded) -> None:
        """Show the items (the handler runs on the app thread)."""
        self.items = message.items
        self.error = message.error
        self.counts = message.counts
        self.loaded = True
        table = self.query_one("#items", DataTable)
        if any(it.raw is not None for it in self.items) and "raw" not in table.columns:
            table.clear(columns=True)
            self._add_columns(table, raw=True)
        self.query_one("#detail-head", PackedText).update(self._head())
        self._fill()

    def _ordered(self) -> list[Item]:
        if self.order == "size":
            return sorted(self.items, key=lambda it: -(it.tokens or 0))
        return list(self.items)

    def on_resize(self, event: events.Resize) -> None:
        """Cut the previews for the new width (each was cut for the width the table was filled at), from
        columns as wide as their headings again (a column only widens as rows come)."""
        if not self.loaded or self.size.width == self._filled_width:
            return
        item = self.selected_item()
        table = self.query_one("#items", DataTable)
        raw = "raw" in table.columns
        table.clear(columns=True)
        self._add_columns(table, raw=raw)
        self._fill(keep=item.position if item is not None else None)

    def _fill(self, keep: int | None = None) -> None:
        """(Re)fill the items table in the current order, keeping item ``keep`` (a position) selected."""
        table = self.query_one("#items", DataTable)
        table.clear()
        self._filled_width = self.size.width
        c = self.call
        # Percentages of a known, plausible prompt size: the call's; for an implausible report, the estimate
        # of the logged request, else none (the report, or a sum of rows holding it, is no prompt size).
        if c.prompt_implausible:
            prompt = c.prompt_estimated
        else:
            prompt = c.prompt_tokens or sum(it.tokens or 0 for it in self.items) or None
        raw = "raw" in table.columns
        # (what is left after the other columns)
        preview = max(10, (self.size.width or 100) - 66 - (9 if raw else 0))
        numbers = item_numbers(self.items)
        for it in self._ordered():
            cells: list[Text] = [
                Text(numbers[it.position], justify="right"),
                # (a row whose count is partly the provider's says so: the other rows are this tokenizer's)
                Text.assemble(tx.literal(it.label, limit=34 - 11), (" · reported", "dim")) if it.reported
                else tx.literal(it.label, limit=34),
                # (a scaled count is marked as the main screen and the preview mark a calibrated one)
                Text(tx.tokens(it.tokens) + (SCALED if it.raw is not None else ""), justify="right")]
            if raw:
                cells.append(Text("" if it.raw is None else tx.tokens(it.raw), style="dim", justify="right"))
            cells += [Text("" if it.kind == "reported" or (c.prompt_implausible and prompt is None)
                           else tx.pct(it.tokens, prompt), justify="right"),
                      tx.literal(it.text, style="dim", limit=preview)]
            table.add_row(*cells, key=str(it.position))
        settle_widths(table)
        if keep is not None and str(keep) in table.rows:
            table.move_cursor(row=table.get_row_index(str(keep)), animate=False)
        self._show_selected()

    def selected_item(self) -> Item | None:
        """The highlighted item, or ``None``."""
        table = self.query_one("#items", DataTable)
        ordered = self._ordered()
        if not ordered or not 0 <= table.cursor_row < len(ordered):
            return None
        return ordered[table.cursor_row]

    def copy_item(self) -> tuple[str, str] | None:
        """What ctrl+c copies here: (what, text) of the highlighted item's content (a message, a tool schema, the
        system prompt; as far as it was read, :data:`~ctxwatch.ui.screens.items.EXPAND_CHARS`), or ``None``."""
        it = self.selected_item()
        if it is None or not it.text:
            return None
        cut = f", its first {len(it.text):,} of {it.chars:,} characters" if it.chars > len(it.text) else ""
        return f"#{item_numbers(self.items).get(it.position, '-')} {it.label}{cut}", it.text

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """Show the highlighted item's content, folded."""
        event.stop()
        self.expanded = False
        self._show_selected()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on an item toggles its fold."""
        event.stop()
        self.action_toggle_fold()

    def _show_selected(self) -> None:
        it = self.selected_item()
        head = self.query_one("#item-head", Static)
        area = self.query_one("#body", TextArea)
        if it is None:
            area.load_text("")
            return
        body, note = fold(it.text, it.chars, self.expanded, it.missing)
        q = self.find_text.casefold()
        if q and q not in body.casefold() and q in it.text.casefold():  # (found past the fold: shown expanded)
            body, note = fold(it.text, it.chars, True, it.missing)
        tok = self.call.tokenizer
        own = it.raw if it.raw is not None else it.tokens
        split = (f"{it.reported:,} reasoning reported + {own - it.reported:,} by {tok}"
                 if it.reported and own is not None else "")
        if it.raw is not None:
            count = f" · {tx.tokens(it.tokens)}{SCALED} tokens"
            what = f" ({scaled_how(self.counts, it.kind)}, as plan shows it; raw {split or f'{it.raw:,} by {tok}'})"
        else:
            label = (f"counted with {tok}" if self.call.exact else f"{tok} estimate, uncalibrated") \
                if it.kind in COUNTED and it.tokens else ""
            count = f" · {tx.tokens(it.tokens)} tokens"
            what = "; ".join(x for x in (split, label) if x)
            what = f" ({what})" if what else ""
        # (where the line is too long, how the item was counted gives up words first, then the fold's note,
        # then the label down to a few words: the item and its count stay in sight)
        parts = [(f"#{item_numbers(self.items).get(it.position, '-')} ", "bold"),
                 (tx.clean(it.label, multiline=False), ""), (count, "dim"), (what, "dim"), (f" · {note}", "dim")]
        if self.find_text:
            parts += [(" · find ", ""), (tx.clean(tx.cut_cells(repr(self.find_text), 30), multiline=False), "bold"),
                      (f": {self.matches} item{'s' if self.matches != 1 else ''} (n: next)", "dim")]
        width = max(10, head.size.width or self.app.size.width - 2)
        title = tx.fit_parts(parts, width, give_up=[(3, 2), (4, 2), (1, 12)])
        head.update(title)
        area.load_text(body)
        at = body.casefold().find(self.find_text.casefold()) if self.find_text else -1
        if at >= 0:  # (the first occurrence in the item's text shown, selected)
            row, col = body.count("\n", 0, at), at - (body.rfind("\n", 0, at) + 1)
            area.selection = Selection((row, col), (row, col + len(self.find_text)))
            area.scroll_cursor_visible()

    def action_find(self) -> None:
        """Show the find box (``/``)."""
        box = self.query_one("#find", Input)
        box.add_class("-active")
        box.value = self.find_text
        box.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter in the find box: look for its text from the item after the cursor."""
        event.stop()
        box = self.query_one("#find", Input)
        box.remove_class("-active")
        self.query_one("#items", DataTable).focus()
        self.find_text = event.value
        self.action_find_next()

    def on_find_input_closed(self, message: FindInput.Closed) -> None:
        """Escape in the find box: closed, back to the items (the text found stays, for ``n``)."""
        self.query_one("#find", Input).remove_class("-active")
        self.query_one("#items", DataTable).focus()

    def action_find_next(self) -> None:
        """Go to the next item (after the cursor, wrapping) whose label or text holds :attr:`find_text`."""
        q = self.find_text.casefold()
        ordered = self._ordered()
        hits = [k for k, it in enumerate(ordered) if q and q in f"{it.label}\n{it.text}".casefold()]
        self.matches = len(hits)
        if not hits:
            self._show_selected()
            if q:
                self.notify(f"no item holds {self.find_text!r}", severity="warning", markup=False)
            return
        table = self.query_one("#items", DataTable)
        row = next((k for k in hits if k > table.cursor_row), hits[0])
        if row == table.cursor_row:
            self._show_selected()
        table.move_cursor(row=row)

    def action_toggle_fold(self) -> None:
        """Expand the selected item's content (up to EXPAND_CHARS characters) or fold it again."""
        self.expanded = not self.expanded
        self._show_selected()

    def action_toggle_order(self) -> None:
        """Switch between prompt order and biggest first: biggest first starts at the top (the biggest item);
        back in prompt order the cursor stays on the item it was on."""
        it = self.selected_item()
        self.order = "size" if self.order == "prompt" else "prompt"
        self._fill(it.position if it is not None else None)
        if self.order == "size":
            self.action_first()
