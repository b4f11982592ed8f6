"""The dashboard's secondary screens: call detail, eviction preview, input problems, help, session picker.

Bodies are re-read from disk in worker threads (:func:`ctxwatch.engine.run.reload_parsed`) and only capped copies
are kept: a 20 MB tool result is shown as a folded preview and, expanded, as its first
:data:`EXPAND_CHARS` characters, never whole (failure case B30).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import orjson
from rich.cells import cell_len
from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.geometry import Size
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Input, OptionList, Static, TextArea
from textual.widgets.option_list import Option

from ctxwatch.config import Settings
from ctxwatch.engine import reload_parsed
from ctxwatch.formats import FormatSpec
from ctxwatch.formats.claude_code import is_subagent_file
from ctxwatch.model import (
    Breakdown,
    Call,
    Issue,
    ParsedCall,
    Src,
    counted_issues,
    is_bad_line,
    raw_breakdown,
    tally_issues,
)
from ctxwatch.model import Message as LogMessage
from ctxwatch.output.safetext import clean
from ctxwatch.source import json_text
from ctxwatch.ui import text as tx
from ctxwatch.ui.export import json_document, write_new
from ctxwatch.ui.feed import activity_note, activity_of
from ctxwatch.ui.widgets import AdaptiveFooter, BarParts, bar_line

#: Characters of an item shown folded (at most :data:`FOLD_LINES` lines of them).
FOLD_CHARS = 2000
FOLD_LINES = 16
#: Characters of an item shown expanded; longer content is cut with a note (a 20 MB tool result is never
#: rendered whole). 200,000 characters is about 50k tokens: more than a person reads in one sitting.
EXPAND_CHARS = 200_000
#: Tool schemas per call above which per-tool costs are measured one tool at a time instead of by the
#: O(n²) marginal difference of :func:`ctxwatch.planner.schema.marginal_costs`.
MARGINAL_MAX_TOOLS = 64
#: What the detail view and the eviction preview say when a call's record is no longer where its summary
#: says (the followed log was truncated, rotated or replaced since the call was read).
REREAD_FAILED = "the call could not be re-read from disk (the file changed)"
#: The body note of an item whose text the log does not hold (an inferred floor, a usage-only record).
NO_TEXT = "no text in the log for this item"


def reload(spec: FormatSpec, call: Call) -> ParsedCall | None:
    """Re-read one call's text from disk (in a worker thread) with :func:`ctxwatch.engine.run.reload_parsed`, which
    needs only the format and the call's summary: the feed's :class:`~ctxwatch.engine.run.Run` lives in the feed's
    thread and is never touched from the UI.  ``None`` if the call cannot be found any more."""
    try:
        return reload_parsed(spec, call)
    except Exception:  # a reader bug on a changed file must not kill the screen
        return None


# --- call detail -------------------------------------------------------------------------------------

@dataclass(slots=True)
class Item:
    """One thing in a call's prompt: the system prompt, one tool schema, or one message.

    Attributes:
        position: order in the prompt (system first, then tools, then the history).
        kind: ``system`` | ``floor`` | ``tool`` | ``message`` | ``framing`` (the tool preamble and the reply
            primer, counted in no other row) | ``gap`` (the reported history minus the rows' count, where the
            history is inferred from reported usage; or the reported prompt minus the estimate) | ``reported``
            (an implausible reported prompt, B13: shown as reported, no part of the prompt, no percentage).
        role: the message role, or ``system`` / ``tools``.
        label: what it is, e.g. ``tool result (Read)``, ``assistant → Bash``, ``schema: Read``.
        tokens: tokens (framing included for messages); ``None`` when unknown.
        text: the content, cut to :data:`EXPAND_CHARS` characters.
        chars: the content's full length in characters.
        missing: why there is no text, when ``chars`` is 0 (:data:`NO_TEXT` unless the call could not be
            re-read).
    """

    position: int
    kind: str
    role: str
    label: str
    tokens: int | None
    text: str
    chars: int
    missing: str = NO_TEXT


def _cap(s: str) -> str:
    return s if len(s) <= EXPAND_CHARS else s[:EXPAND_CHARS]


def build_items(call: Call, pc: ParsedCall | None, unread: str | None = None) -> list[Item]:
    """The items of a call's prompt, in prompt order, with their tokens.

    System prompt and tool schemas come from the re-read call when the log holds them; otherwise the floor
    is one ``floor`` item (inferred from the reported usage).  Message tokens are the accounted ones
    (:attr:`Call.messages`); per-tool tokens are marginal costs over the whole tools payload.

    Args:
        call: the call's summary (its token counts).
        pc: the call re-read from disk, or ``None`` when it was not (only the summary's sizes are shown).
        unread: with ``pc`` ``None``, why the text could not be read (e.g. :data:`REREAD_FAILED`): the items
            say it instead of "no text in the log", and a floor the log holds is shown as its system prompt
            and tool schemas rather than as a floor that was "not logged".
    """
    from ctxwatch.planner.schema import marginal_costs, tool_name
    from ctxwatch.tokens import Counter, counter_for

    items: list[Item] = []
    missing = unread if pc is None and unread else NO_TEXT
    logged_floor = pc is None and unread is not None and call.floor_src == Src.ESTIMATED
    if pc is not None and pc.system is not None:
        body = "\n\n".join(pc.system)
        items.append(Item(len(items), "system", "system", "system prompt", call.system_tokens, _cap(body),
                          len(body)))
    elif logged_floor:
        # The log holds the system prompt and tools (they were counted), only their text is not at hand now.
        if call.system_tokens:
            items.append(Item(len(items), "system", "system", "system prompt", call.system_tokens, "", 0,
                              missing))
        if call.tools_tokens:
            nt = len(call.tool_names)
            items.append(Item(len(items), "tool", "tools", f"tool schemas ({nt} tool{'s' if nt != 1 else ''})",
                              call.tools_tokens, "", 0, missing))
    elif call.prompt_implausible:
        # (B13: a count no request can have; shown as reported, never split into a floor and a history, and no
        # part of the prompt the other rows are percentages of)
        items.append(Item(len(items), "reported", "system", "reported prompt: implausible", call.prompt_reported,
                          "", 0))
    elif call.floor_tokens is None and call.history_tokens is None and call.prompt_reported is not None:
        items.append(Item(len(items), "floor", "system", "prompt: reported total, not split (the log holds only "
                          "part of the history)", call.prompt_reported, "", 0))
    elif call.floor_tokens:
        if call.floor_src != Src.INFERRED:
            how = str(call.floor_src)
        elif call.history_src == Src.INFERRED:
            how = "inferred once for the context; history = reported prompt minus it"
        else:
            how = "inferred: reported prompt minus history"
        items.append(Item(len(items), "floor", "system", f"floor: system prompt + tools, not logged ({how})",
                          call.floor_tokens, "", 0))
    preamble = 0  # the tools payload's fixed part, in no tool's row (OpenAI 12, Anthropic 346: tokens.py)
    if pc is not None and pc.tools:
        counter = counter_for(call.model, call.provider)
        tools = [t for t in pc.tools if isinstance(t, dict)]
        if len(tools) <= MARGINAL_MAX_TOOLS:
            costs, _total, preamble = marginal_costs(tools, counter)
        else:
            # One tool at a time; each tool alone would carry the fixed part once, so it is taken off each.
            one = marginal_costs(tools[:1], counter)[2]
            costs = [counter.tools_tokens([t]) - one for t in tools]
            preamble = counter.tools_tokens(tools) - sum(costs)
        for t, cost in zip(tools, costs, strict=True):
            try:
                body = orjson.dumps(t, option=orjson.OPT_INDENT_2).decode()
            except orjson.JSONEncodeError:  # (nested deeper than orjson writes: shown compact)
                body = json_text(t)
            items.append(Item(len(items), "tool", "tools", f"schema: {tool_name(t)}", cost, _cap(body), len(body)))
    if pc is None or pc.messages is None:
        for i, st in enumerate(call.messages):
            items.append(Item(len(items), "message", st.role, _stat_label(st.role, st.label, i), st.tokens, "", 0,
                              missing))
        return _add_framing(call, items, preamble)
    aligned = len(call.messages) == len(pc.messages)
    msg_counter: Counter | None = None  # made on the first message that needs counting
    labels = message_labels(pc.messages)
    for i, m in enumerate(pc.messages):
        label = labels[i]
        if aligned:
            n: int | None = call.messages[i].tokens
        else:
            if msg_counter is None:
                msg_counter = counter_for(call.model, call.provider)
            n = msg_counter.message_tokens(m)
        body = m.text()
        items.append(Item(len(items), "message", m.role, label, n, _cap(body), len(body)))
    if call.history_src == Src.INFERRED and call.history_tokens is not None and pc.messages:
        # The history is the provider's count (reported minus the floor); the rows above are this tokenizer's.
        # Show the difference so the rows add up to the prompt.
        counted = sum(it.tokens or 0 for it in items if it.kind == "message")
        what = ("not in the log: the history breaks at a damaged or missing line (see `ctxwatch check`)"
                if pc.extra.get("history_cut") else "tokenizer gap")
        items.append(Item(len(items), "gap", "", f"{what}: history {call.history_tokens:,} − rows "
                          f"{counted:,}", call.history_tokens - counted, "", 0))
    return _add_framing(call, items, preamble)


def message_labels(messages: Sequence[LogMessage]) -> list[str]:
    """What each message is, as the call detail and the eviction preview name it: ``tool result (Read)`` for a
    message answering tool calls (named by the calls before it), ``assistant → Bash, Read`` for one making
    them, else its role; with the reader's label, e.g. ``user [compaction_summary]``."""
    names: dict[str, str] = {}
    out: list[str] = []
    for m in messages:
        calls = [p for p in m.parts if p.kind == "tool_call"]
        for p in calls:
            if p.call_id:
                names[p.call_id] = p.name or "?"
        results = [p for p in m.parts if p.kind == "tool_result"]
        if results:
            label = "tool result (" + ", ".join(names.get(p.call_id or "", "?") for p in results) + ")"
        elif calls:
            label = f"{m.role} → " + ", ".join(p.name or "?" for p in calls)
        else:
            label = m.role
        out.append(label + (f" [{m.label}]" if m.label else ""))
    return out


def _add_framing(call: Call, items: list[Item], preamble: int) -> list[Item]:
    """Append the request's framing to ``items`` where the estimate counts it outside every row, so that the
    rows add up to the estimated prompt (:mod:`ctxwatch.accounting`: system + tools + history + the reply
    primer); then, when the provider reported another size, the difference, so that they add up to the
    prompt the header shows (the reported one).

    Args:
        call: the call (only one whose floor and history are both counted has an estimate to add up to; an
            inferred floor or history already holds the framing).
        items: the rows so far (each message row holds its own framing: 3 tokens plus its role).
        preamble: the tools payload's fixed part left out of the per-tool rows (0 when the tools are one row).
    """
    from ctxwatch.tokens import REPLY_PRIMER, own_tokenizer

    if call.prompt_estimated is None:
        return items
    parts = [f"tools {preamble:,}", f"primer {REPLY_PRIMER}"] if preamble else [f"reply primer {REPLY_PRIMER}"]
    what = ([f"the fixed part of the tool definitions ({preamble:,} tokens: the preamble the provider wraps "
             "them in, whatever their number)"] if preamble else []) + \
        [f"the {REPLY_PRIMER} tokens that start the reply (<|start|>assistant<|message|>)"]
    why = ("Tokens the provider adds around the request, outside the system prompt, the tool schemas and the "
           f"messages: {' and '.join(what)}. Each message row already holds its own framing (3 tokens plus its "
           "role).")
    items.append(Item(len(items), "framing", "", "framing: " + " + ".join(parts), preamble + REPLY_PRIMER,
                      why, len(why)))
    reported = call.prompt_reported
    # (an implausible report, B13, is no size to measure the estimate against: no "gap" row built from it)
    if reported and reported != call.prompt_estimated and not call.report_implausible:
        own = call.exact or own_tokenizer(call.model, call.provider, call.tokenizer)
        gap = "tokenizer gap" if not own else "estimate gap"
        note = (f"The provider reported {reported:,} prompt tokens; the rows above add up to "
                f"{call.prompt_estimated:,}, counted with {call.tokenizer}" +
                (", which is not this model's own tokenizer." if not own else
                 ". The difference is what the estimate cannot see (the log's usage, images or content it "
                 "leaves out)." if call.exact else
                 ", this model's own tokenizer, with estimates where it cannot count exactly (images by the "
                 "provider's rule, or a text with a run too long to encode whole, cut)."))
        items.append(Item(len(items), "gap", "", f"{gap}: reported − estimate", reported - call.prompt_estimated,
                          note, len(note)))
    return items


def _stat_label(role: str, label: str | None, i: int) -> str:
    return role + (f" [{label}]" if label else "")


class DetailLoaded(Message):
    """The detail worker re-read the call: ``items`` or an ``error`` sentence."""

    def __init__(self, items: list[Item], error: str | None) -> None:
        super().__init__()
        self.items = items
        self.error = error


class TableScreen(Screen[None]):
    """A screen whose keys move the cursor of its one :class:`DataTable` (id :attr:`TABLE_ID`): first, last,
    next and previous row (the call detail's items, the input problems)."""

    TABLE_ID: ClassVar[str] = ""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "down", "Down", show=False),
        Binding("k", "up", "Up", show=False),
        # (priority: the table's own home/end scroll without moving the cursor, so what is shown below the
        # table for the selected row would not follow)
        Binding("home", "first", "First", show=False, priority=True),
        Binding("end", "last", "Last", show=False, priority=True),
    ]

    def _table(self) -> DataTable[Any]:
        return self.query_one(f"#{self.TABLE_ID}", DataTable)

    def action_first(self) -> None:
        """First row."""
        self._table().move_cursor(row=0)

    def action_last(self) -> None:
        """Last row (the newest problem, the last message)."""
        table = self._table()
        table.move_cursor(row=max(0, table.row_count - 1))

    def action_down(self) -> None:
        """Next row."""
        self._table().action_cursor_down()

    def action_up(self) -> None:
        """Previous row."""
        self._table().action_cursor_up()


class DetailScreen(TableScreen):
    """Every item of one call's prompt: role, tokens, % of the prompt; in prompt order or biggest first.

    Keys: ↑/↓ select, ``space`` expand/fold the selected item's content, ``o`` prompt order / biggest
    first, ``e`` eviction preview, ``escape`` back.
    """

    TABLE_ID = "items"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("space", "toggle_fold", "Expand/fold"),
        Binding("o", "toggle_order", "Order"),
        Binding("e", "app.evict", "Evict"),
    ]

    DEFAULT_CSS = """
    DetailScreen #detail-head { height: auto; padding: 0 1; background: $boost; }
    DetailScreen #items { height: auto; max-height: 60%; min-height: 4; }
    DetailScreen #item-head { height: 1; padding: 0 1; background: $boost; }
    DetailScreen #body { height: 1fr; min-height: 3; border: none; padding: 0 1; }
    """

    def __init__(self, call: Call, spec: FormatSpec | None, settings: Settings, shown: Breakdown | None = None,
                 calibration: float | None = None) -> None:
        """``shown``: the call's floor and history as the main screen shows them (the app's
        :meth:`~ctxwatch.accounting.Calibrations.breakdown`: calibrated where the tokenizer is not the model's
        own), else its own; ``calibration``: its model's factor (named when the floor was capped at the report)."""
        super().__init__()
        self.call = call
        self.spec = spec
        self.settings = settings
        self.shown = shown or raw_breakdown(call)
        self.calibration = calibration
        self.items: list[Item] = []
        self.order = "prompt"  # or "size"
        self.expanded = False
        self.loaded = False
        self.error: str | None = None

    def compose(self) -> ComposeResult:
        """Header, items table, item header and body."""
        yield Static(self._head(), id="detail-head")
        table: DataTable[Any] = DataTable(id="items", cursor_type="row")
        table.add_column(Text("#", justify="right"), key="pos")
        table.add_column(Text("item"), key="label", width=34)
        table.add_column(Text("tokens", justify="right"), key="tokens")
        table.add_column(Text("% prompt", justify="right"), key="pct")
        table.add_column(Text("preview"), key="preview")
        yield table
        yield Static(Text("loading the call from disk…", style="dim"), id="item-head")
        area = TextArea("", id="body", read_only=True, soft_wrap=True, show_line_numbers=False)
        area.cursor_blink = False
        yield area
        yield AdaptiveFooter()

    def _head(self) -> Text:
        c = self.call
        out = Text()
        out.append(f"call #{c.index + 1}", "bold")
        out.append(" · ")
        out.append_text(tx.literal(c.model or "?", limit=40))
        out.append(f" · {tx.stamp(c.timestamp)} · {c.source.where} · prompt {tx.tokens(c.prompt_tokens)}")
        if c.prompt_implausible:
            out.append(f" (reported {tx.tokens(c.prompt_reported)}: implausible, no occupancy)", "bold yellow")
            if c.prompt_estimated is not None:
                out.append(f" · % of the estimate {tx.tokens(c.prompt_estimated)}")
        b = self.shown
        out.append(f" · floor {tx.marked(b.floor_tokens, b.floor_src)} · history "
                   f"{tx.marked(b.history_tokens, b.history_src)}")
        if b.factor is not None:
            # (the rows below are the raw counts, which add up to the estimate: both are shown, and how they relate)
            why = "its model's calibration"
            if b.capped:
                cal = f" x{self.calibration:.4f}" if self.calibration is not None else ""
                why = f"capped at the reported prompt, as the calibration{cal} would put it above it"
            hist = ("history the rest of the reported prompt" if b.filled else f"history x{b.factor:.4f}")
            out.append(f" (≈ calibrated: floor x{b.factor:.4f}, {why}; {hist}; {c.tokenizer} counts, as in the "
                       f"rows: floor {tx.tokens(c.floor_tokens)} · history {tx.tokens(c.history_tokens)})", "dim")
        msgs = [it for it in self.items if it.kind == "message"] if self.loaded else []
        if msgs or c.messages:
            n = len(msgs) or len(c.messages)
            out.append(f" · {n} message{'s' if n != 1 else ''}")
        if msgs and c.history_src == Src.INFERRED:
            # The history is what the provider counted minus the floor; the rows are this tokenizer's count.
            out.append(f" ({sum(it.tokens or 0 for it in msgs):,} by {c.tokenizer}, counted on opening)", "dim")
        elif not self.loaded and not c.messages:
            out.append(" · messages: counted on opening")
        if c.context != "main":
            out.append(" · context ")
            out.append_text(tx.literal(c.context, limit=30))
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
        pc = reload(self.spec, self.call)
        err = None if pc is not None else REREAD_FAILED
        try:
            items = build_items(self.call, pc, err)
        except Exception as exc:  # never let odd content kill the screen
            err = f"{type(exc).__name__}: {exc}"
            items = build_items(self.call, None, err)
        self.post_message(DetailLoaded(items, err))

    def on_detail_loaded(self, message: DetailLoaded) -> None:
        """Show the items (the handler runs on the app thread)."""
        self.items = message.items
        self.error = message.error
        self.loaded = True
        self.query_one("#detail-head", Static).update(self._head())
        self._fill()

    def _ordered(self) -> list[Item]:
        if self.order == "size":
            return sorted(self.items, key=lambda it: -(it.tokens or 0))
        return list(self.items)

    def _fill(self, keep: int | None = None) -> None:
        """(Re)fill the items table in the current order, keeping item ``keep`` (a position) selected."""
        table = self.query_one("#items", DataTable)
        table.clear()
        c = self.call
        # Percentages of a known, plausible prompt size: the call's; for an implausible report (B13), the estimate
        # of the logged request, else none (the report, or a sum of rows holding it, is no prompt size).
        if c.prompt_implausible:
            prompt = c.prompt_estimated
        else:
            prompt = c.prompt_tokens or sum(it.tokens or 0 for it in self.items) or None
        preview = max(10, (self.size.width or 100) - 66)  # what is left after the other columns
        for it in self._ordered():
            table.add_row(
                Text(str(it.position), justify="right"),
                tx.literal(it.label, limit=34),
                Text(tx.tokens(it.tokens), justify="right"),
                Text("" if it.kind == "reported" or (c.prompt_implausible and prompt is None)
                     else tx.pct(it.tokens, prompt), justify="right"),
                tx.literal(it.text[: preview * 2], style="dim", limit=preview),
                key=str(it.position),
            )
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
        title = Text()
        title.append(f"#{it.position} ", "bold")
        title.append_text(tx.literal(it.label, limit=50))
        title.append(f" · {tx.tokens(it.tokens)} tokens · {note}", "dim")
        head.update(title)
        area.load_text(body)

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



def fold(text: str, chars: int, expanded: bool, missing: str = NO_TEXT) -> tuple[str, str]:
    """The part of an item's content to show, cleaned, and a note saying how much that is.

    Args:
        text: the content (already cut to :data:`EXPAND_CHARS`).
        chars: the content's full length.
        expanded: show up to :data:`EXPAND_CHARS` characters instead of the folded preview.
        missing: the note when there is no content (:attr:`Item.missing`).
    """
    if not chars:
        return "", tx.clean(missing, multiline=False)
    if expanded:
        shown = text
    else:
        shown = text[:FOLD_CHARS]
        lines = shown.split("\n")
        if len(lines) > FOLD_LINES:
            shown = "\n".join(lines[:FOLD_LINES])
    body = tx.clean(shown)
    if len(shown) >= chars:
        return body, f"{chars:,} characters"
    if expanded:
        return body + "\n…", f"first {len(shown):,} of {chars:,} characters (too long to show whole)"
    return body + "\n…", f"first {len(shown):,} of {chars:,} characters · space expands"


# --- eviction preview --------------------------------------------------------------------------------

#: How each fate is shown: glyph, word, style (the glyph and word tell fates apart without colour).
FATES: dict[str, tuple[str, str]] = {
    "pinned": ("■ pinned", "magenta"),
    "kept": ("✓ kept", "green"),
    "summarised": ("≈ summarised", "yellow"),
    "evicted": ("✗ evicted", "red"),
}


@dataclass(slots=True)
class Knobs:
    """The policy knobs the eviction preview lets a person turn.

    Attributes:
        keep_recent: newest turns always kept.
        budget_fraction: fraction of the window the prompt may use.
        reserve_tokens: completion reserve in tokens.
        summary_tokens: assumed summary size in tokens.
        mode: ``summarise`` or ``drop``.
    """

    keep_recent: int
    budget_fraction: float
    reserve_tokens: int
    summary_tokens: int
    mode: str = "summarise"
    extra: dict[str, Any] = field(default_factory=dict)


class PlanReady(Message):
    """The plan worker finished: a plan, or an error sentence."""

    def __init__(self, plan: Any, error: str | None, knobs: Knobs | None) -> None:
        super().__init__()
        self.plan = plan
        self.error = error
        self.knobs = knobs


class PlanScreen(Screen[None]):
    """The eviction plan of one call: every message coloured by fate, before/after bars, policy knobs.

    Keys: ``+``/``-`` keep_recent, ``B``/``b`` budget fraction ±0.05, ``R``/``r`` reserve ±1% of the
    window, ``U``/``u`` summary tokens ±500, ``m`` summarise/drop, ``w`` write the plan JSON to the current
    directory, ``escape`` back.  The plan is recomputed at once after each change.
    """

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
    ]

    DEFAULT_CSS = """
    PlanScreen #plan-head { height: auto; padding: 0 1; background: $boost; }
    PlanScreen #plan-bars { height: auto; padding: 0 1; }
    PlanScreen #plan-table { height: 1fr; }
    """

    def __init__(self, call: Call, spec: FormatSpec | None, settings: Settings,
                 shown: Breakdown | None = None) -> None:
        """``shown``: the call's floor and history as the main screen shows them (calibrated where the tokenizer
        is not the model's own): the plan pins that floor, as ``plan`` does (:func:`ctxwatch.planner.plan_counts`)."""
        super().__init__()
        self.call = call
        self.spec = spec
        self.settings = settings
        self.shown = shown
        self.window = call.window or settings.window
        self.knobs: Knobs | None = None
        self.plan: Any = None
        self.error: str | None = None
        self.written: str | None = None
        self._pc: ParsedCall | None = None
        self._counts: Any = None  # planner.PlanCounts, made when the call is re-read

    def compose(self) -> ComposeResult:
        """Header, bars, messages table, footer."""
        yield Static(Text(f"call #{self.call.index + 1}: planning…", style="dim"), id="plan-head")
        yield Static("", id="plan-bars")
        table: DataTable[Any] = DataTable(id="plan-table", cursor_type="row")
        table.add_column(Text("#", justify="right"), key="index")
        table.add_column(Text("message"), key="role")
        table.add_column(Text("tokens", justify="right"), key="tokens")
        table.add_column(Text("fate"), key="fate")
        table.add_column(Text("turn", justify="right"), key="turn")
        table.add_column(Text("preview"), key="preview")
        yield table
        yield AdaptiveFooter()

    def on_mount(self) -> None:
        """Load the call and compute the first plan."""
        self.query_one("#plan-table", DataTable).focus()
        if not self.window:
            self._fail("the context window is unknown for this call: pass --window N to plan")
            return
        from ctxwatch.accounting import reserve_for

        # The reserve report and plan give this call (the request's max_tokens capped at the window, else the
        # reserve fraction): a max_tokens at or above the window reserves all of it, so nothing fits.
        reserve = reserve_for(self.call.max_output_tokens, self.window, self.settings)[0]
        assert reserve is not None  # (the window is known here)
        self.knobs = Knobs(self.settings.keep_recent, self.settings.budget_fraction, reserve,
                           self.settings.summary_tokens)
        self._compute(self.knobs, load=True)

    def _fail(self, msg: str) -> None:
        self.error = msg
        self.query_one("#plan-head", Static).update(Text(msg, style="yellow"))

    @work(thread=True, exclusive=True, group="plan")
    def _compute(self, knobs: Knobs, load: bool = False) -> None:
        from ctxwatch.planner import PolicyError, plan_counts, plan_from_counts, policy_for_call, unplannable
        from ctxwatch.tokens import counter_for

        if load or self._pc is None:
            if self.spec is None:
                self.post_message(PlanReady(None, "the log's format is not known yet", knobs))
                return
            self._pc = reload(self.spec, self.call)
            if self._pc is None:
                self.post_message(PlanReady(None, REREAD_FAILED, knobs))
                return
            # The counts `plan` starts from (scaled to the provider's count where the history is inferred or the
            # tokenizer is not the model's own), so the preview's "before" is the prompt the main screen shows;
            # the accounted per-message counts are reused, so a knob change re-plans at once.
            call = self.call
            self._counts = plan_counts(
                self._pc, counter_for(call.model, call.provider), floor_tokens=call.floor_tokens,
                history_tokens=call.history_tokens if call.history_src == Src.INFERRED else None,
                # (an implausible report, B13, is no prompt size to scale the counts to)
                prompt_tokens=None if call.prompt_implausible else call.prompt_reported,
                tokens=[m.tokens for m in call.messages] or None,
                system_tokens=call.system_tokens, tools_tokens=call.tools_tokens, shown=self.shown)
        pc = self._pc
        why = unplannable(self.call, pc)
        if why:
            self.post_message(PlanReady(None, why, knobs))
            return
        assert self.window is not None
        try:
            policy = policy_for_call(self.call, self.settings, window=self.window,
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
        self.plan = message.plan
        self.knobs = message.knobs
        self.error = None
        self._render_plan()

    def _render_plan(self) -> None:
        plan, k = self.plan, self.knobs
        assert k is not None
        head = Text()
        head.append(f"call #{self.call.index + 1} · eviction preview · ", "bold")
        head.append("fits" if plan.fits else "does not fit", "bold green" if plan.fits else "bold red")
        head.append(f" · before {tx.tokens(plan.before_tokens)} → after {tx.tokens(plan.after_tokens)} · budget "
                    f"{tx.tokens(plan.budget_tokens)}")
        scale = getattr(self._counts, "scale", 1.0)
        tools_estimate = getattr(self._counts, "tools_estimate", None)
        if tools_estimate is not None:
            # (as plan says it: the model's own tokenizer counted the rest exactly)
            what = "not in the log" if self._pc is not None and self._pc.tools is None else \
                f"estimated {tx.tokens(tools_estimate)}"
            head.append(f" · tool schemas {tx.tokens(plan.tools_tokens)}: sized to the provider's count ({what})",
                        "dim")
        elif getattr(self._counts, "floor_scale", None) is not None and plan.floor_tokens:
            # (as plan says it: the floor is the calibrated one the main screen shows; a floor of 0 is not
            # calibrated, scaling leaves it 0, so it gets no ≈ and the branch below says how the messages scale)
            head.append(f" · floor {tx.tokens(plan.floor_tokens)}≈ calibrated ×{self._counts.floor_scale:.4f}, "
                        f"messages ×{scale:.4f}: scaled to the provider's count ({self.call.tokenizer} counts in "
                        "the detail view)", "dim")
        elif getattr(self._counts, "unscaled_ratio", None) is not None:
            head.append(f" · sizes as counted: the reported prompt is ×{self._counts.unscaled_ratio:.4f} them, more "
                        "than tokenizers differ by", "dim")
        elif abs(scale - 1.0) >= 0.005:
            # (why these sizes differ from the detail view's: they are scaled to what the provider counted)
            head.append(f" · sizes ×{scale:.4f}: scaled to the provider's count ({self.call.tokenizer} counts "
                        "in the detail view)", "dim")
        head.append("\n")
        head.append(f"keep_recent {k.keep_recent} (+/-) · budget {k.budget_fraction:.2f} (B/b) · reserve "
                    f"{tx.tokens(k.reserve_tokens)} (R/r) · summary {tx.tokens(k.summary_tokens)} (U/u) · "
                    f"mode {k.mode} (m)\n", "cyan")
        # (whole, wrapped: a reason that does not fit ends with what to change, e.g. "lower keep_recent")
        head.append_text(tx.literal(plan.reason, multiline=False))
        self.query_one("#plan-head", Static).update(head)
        self.query_one("#plan-bars", Static).update(self._bars())
        table = self.query_one("#plan-table", DataTable)
        row = table.cursor_row
        table.clear()
        msgs = (self._pc.messages or []) if self._pc else []
        labels = message_labels(msgs)  # (named as the detail view names them, not by role alone)
        # The tool schemas and the reply primer are in no message but in every request: rows of their own (as in
        # plan's text), so that the tokens column adds up to 'before'.
        pinned, _ = FATES.get("pinned", ("pinned", ""))
        extra_rows = []
        if plan.tools_tokens and plan.floor_split:
            extra_rows.append(("tool schemas", plan.tools_tokens, "the tools the request sends, every call"))
        system_first = bool(plan.messages) and plan.messages[0].source_index is None

        def extra(what: str, tokens: int, note: str) -> None:
            table.add_row(Text("-", justify="right"), tx.literal(what, limit=34),
                          Text(tx.tokens(tokens), justify="right"), Text(pinned), Text("-", justify="right"),
                          Text(note, style="dim"))

        if extra_rows and not system_first:
            extra(*extra_rows[0])
        for pos, m in enumerate(plan.messages):
            word, style = FATES.get(m.fate, (m.fate, ""))
            preview = ""
            if m.source_index is not None and m.source_index < len(msgs):
                preview = msgs[m.source_index].text()[:200]
            elif m.source_index is None and self._pc is not None and self._pc.system:
                preview = self._pc.system[0][:200]
            what = labels[m.source_index] if m.source_index is not None and m.source_index < len(labels) else m.role
            table.add_row(Text(str(m.index), justify="right"), tx.literal(what, style=style, limit=34),
                          Text(tx.tokens(m.tokens), justify="right"), Text(word, style=style),
                          Text(str(m.turn) if m.turn >= 0 else "-", justify="right"),
                          tx.literal(preview, style="dim", limit=100))
            if pos == 0 and system_first and extra_rows:
                extra(*extra_rows[0])
        if plan.overhead_tokens:
            extra("reply primer", plan.overhead_tokens, "the tokens that start the reply")
        if table.row_count:
            table.move_cursor(row=min(row, table.row_count - 1), animate=False)

    def on_resize(self, event: events.Resize) -> None:
        """Redraw the bars for the new width (they are drawn to fit the screen, and wrapped when it shrank)."""
        if self.plan is not None:
            self.query_one("#plan-bars", Static).update(self._bars())

    def _bars(self) -> Text:
        plan = self.plan
        # "before " (7) + " 127%" (up to 6) + the screen's padding and scrollbar (4): the bar gets the rest,
        # so the percentage stays on the bar's line at any width.
        width = max(20, (self.size.width or 80) - 18)
        window = plan.window or self.window or 1
        out = Text()
        for name, total in (("before", plan.before_tokens), ("after ", plan.after_tokens)):
            hist = max(0, total - plan.floor_tokens)
            free = window - total - plan.reserve_tokens
            parts = BarParts(plan.floor_tokens, hist, plan.reserve_tokens, free,
                             max(window, total + plan.reserve_tokens), window, plan.trigger_tokens,
                             plan.budget_tokens)
            _top, bar = bar_line(parts, width)
            out.append(f"{name} ", "bold")
            out.append_text(bar)
            out.append(f" {tx.pct(total, window, 0)}\n")
        out.append("█ floor  ▓ history (+summary)  ░ reserve  · free  ┃ trigger/budget", "dim")
        return out

    def action_knob(self, name: str, direction: int) -> None:
        """Turn one knob one step (``direction`` +1 or -1) and recompute the plan."""
        if self.knobs is None or not self.window:
            return
        k = self.knobs
        if name == "keep_recent":
            new = replace(k, keep_recent=max(0, k.keep_recent + direction))
        elif name == "budget_fraction":
            new = replace(k, budget_fraction=round(min(1.0, max(0.05, k.budget_fraction + 0.05 * direction)), 2))
        elif name == "reserve_tokens":
            step = max(1, self.window // 100)
            new = replace(k, reserve_tokens=min(self.window - 1, max(0, k.reserve_tokens + step * direction)))
        elif name == "summary_tokens":
            new = replace(k, summary_tokens=max(0, k.summary_tokens + 500 * direction))
        else:
            return
        self.knobs = new
        self._compute(new)

    def action_toggle_mode(self) -> None:
        """Switch between summarising and dropping the evicted span."""
        if self.knobs is None:
            return
        self.knobs = replace(self.knobs, mode="drop" if self.knobs.mode == "summarise" else "summarise")
        self._compute(self.knobs)

    def plan_document(self) -> dict[str, Any]:
        """The JSON ``w`` writes: the ``plan --json`` document, then what the plan was made from, so the file
        can be read on its own:

        * ``call``: ``number`` (#N, from 1), ``index`` (``report --json``'s, from 0), ``file``, ``line`` (of the
          call's record), ``context``, ``model``, ``window`` (tokens);
        * ``settings``: the plan's policy as the knobs left it: ``keep_recent``, ``unit``, ``budget_fraction``,
          ``trigger``, ``reserve_tokens``, ``summary_tokens``, ``mode``, ``compact_at``.
        """
        c, policy = self.call, self.plan.policy
        return {
            **self.plan.to_json(),
            "call": {"number": c.index + 1, "index": c.index, "file": c.source.path, "line": c.source.line,
                     "context": c.context, "model": c.model, "window": policy.window},
            "settings": {"keep_recent": policy.keep_recent, "unit": policy.unit,
                         "budget_fraction": policy.budget_fraction, "trigger": policy.trigger,
                         "reserve_tokens": policy.reserve_tokens, "summary_tokens": policy.summary_tokens,
                         "mode": policy.mode, "compact_at": policy.compact_at},
        }

    def action_write(self) -> None:
        """Write :meth:`plan_document` where the app writes its exports (the current folder, unless it is a
        followed one: ``CtxwatchApp.export_folder``) and say where."""
        if self.plan is None:
            self.app.notify("no plan to write yet", severity="warning", markup=False)
            return
        try:
            folder = getattr(self.app, "export_folder", os.getcwd)()
            # (built whole before the file is created: a string orjson refuses left a 0-byte file behind)
            data = json_document(self.plan_document())  # (no raw control or bidi character either)
            path = unique_path(folder, f"ctxwatch-plan-call{self.call.index + 1}", ".json")  # call #N
            write_new(path, data)
        except (OSError, TypeError) as exc:  # a read-only folder, a full disk, an XDG path that is a file
            self.app.notify(f"plan not written: {exc}", title="eviction plan", severity="error", markup=False)
            return
        self.written = path
        self.app.notify(f"plan written to\n{tx.saved_where(path, tx.toast_width(self.app.size.width))}",
                        title="eviction plan", markup=False)


def unique_path(folder: str, stem: str, suffix: str) -> str:
    """``folder/stem.suffix``, or ``folder/stem-2.suffix`` etc. if taken (never overwrites a file)."""
    path = os.path.join(folder, stem + suffix)
    n = 2
    while os.path.exists(path):
        path = os.path.join(folder, f"{stem}-{n}{suffix}")
        n += 1
    return path


# --- input problems -----------------------------------------------------------------------------------

#: Characters of a message shown in the input-problems table (the row is cut to the screen's width anyway).
ISSUE_CELL_CHARS = 300
#: Characters of the highlighted problem's message shown below the table: whole for ctxwatch's own messages
#: (they quote log values cut to 40 characters), cut for a long error text a batch file carries.
ISSUE_BODY_CHARS = 800
#: Widest file name (cut in the middle) and kind shown in the table; the panel below shows them whole.
ISSUE_FILE_CHARS, ISSUE_KIND_CHARS = 24, 24
#: The "is" cell of a problem of a line read before the log's last reset (truncated or replaced): not counted.
BEFORE_RESET = "before reset"


def listed_issues(issues: Sequence[Issue]) -> list[Issue]:
    """The input problems a person is shown, in the order read: every issue but ``reset`` (a truncated or
    replaced file is said on the status line), as ``ctxwatch check`` and ``report --json`` list them."""
    return [i for i in issues if i.kind != "reset"]


def counted(issues: Sequence[Issue]) -> str:
    """``3 bad lines`` or ``1 bad line, 2 notes`` for already listed ``issues``, counted as ``ctxwatch check``
    counts them (:func:`ctxwatch.model.tally_issues`: a line with two issues is one bad line)."""
    return counted_issues(*tally_issues(issues))


def issue_where(issue: Issue, several: bool) -> tuple[str, str]:
    """``(file, line)`` cells of an issue: the file's base name when the run reads several files (a line number
    alone does not say where; ``""`` otherwise), and the 1-based line or ``file`` when the problem is about the
    whole file (line 0), as ``ctxwatch check`` writes them."""
    return (os.path.basename(issue.path) if several else "", str(issue.line) if issue.line else "file")


class IssuesScreen(TableScreen):
    """Every input problem of the current run, in the order read: file (when several), line, kind, bad line or
    note, and the message; the highlighted problem's full path and whole message below the table.

    Problems of lines read before the log's last reset (it was truncated or replaced, and read again from its
    start) are listed first, dimmed and marked ``before reset``, and are not counted: ``check`` on the file as it
    is now would not see them.

    The app pushes the problems with :meth:`show` (again as more arrive while the log is followed).  A
    :class:`~textual.widgets.DataTable` draws only the rows on screen, so thousands of problems scroll freely.
    Keys: ↑/↓ (j/k) move, home/end first/last, ``escape`` or ``i`` back.
    """

    TABLE_ID = "issues"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,i", "app.pop_screen", "Back"),
    ]

    DEFAULT_CSS = """
    IssuesScreen #issues-head { height: auto; padding: 0 1; background: $boost; }
    IssuesScreen #issues { height: 1fr; min-height: 3; }
    IssuesScreen #issue-body { height: auto; max-height: 12; padding: 0 1; background: $boost; }
    """

    def __init__(self, log_name: str, issues: Sequence[Issue], several: bool, stopped: str | None = None,
                 earlier: Sequence[Issue] = (), reset: str | None = None) -> None:
        """``log_name``: what the status line calls the log; ``issues``: the run's issues as the app holds them
        (``reset`` is left out); ``several``: the problems may come from more than one file (joined batch files):
        rows name the file; ``stopped``: why reading the log stopped, if it did (then an empty list does not
        mean that every line was read); ``earlier``: the problems of lines read before the last reset, and
        ``reset`` what that reset was (the status line's ``truncated at 12:00:01 (after 8 calls)``)."""
        super().__init__()
        self.log_name = log_name
        self.stopped = stopped
        self.issues: list[Issue] = []
        self.earlier: list[Issue] = []
        self.reset = reset
        self.several = several
        self._initial = (list(issues), list(earlier))
        self._rows: list[tuple[Issue, bool]] = []  # (each row's problem, and whether it is from before a reset)
        self._columns: tuple[bool, int, int, int, int] | None = None  # (the layout of the rows in the table)

    def compose(self) -> ComposeResult:
        """Header, table, the highlighted problem's message, footer."""
        yield Static(Text(""), id="issues-head")
        yield DataTable(id="issues", cursor_type="row", zebra_stripes=True)
        yield Static(Text(""), id="issue-body")
        yield AdaptiveFooter()

    def on_mount(self) -> None:
        """Fill the table with the problems given, focus it."""
        self.query_one("#issues", DataTable).focus()
        issues, earlier = self._initial
        self.show(issues, self.several, earlier=earlier, reset=self.reset)

    def show(self, issues: Sequence[Issue], several: bool, name: str | None = None,
             earlier: Sequence[Issue] | None = None, reset: str | None = None) -> None:
        """Show ``issues`` (the run's, ``reset`` included or not): rows read since the last call are appended,
        keeping the cursor where it is; a list that changed otherwise (a withdrawn ``truncated_tail``, a session
        switch, a reset) or that needs wider columns is drawn again.  ``several`` as in the constructor; ``name``
        the log's new name (another session is shown), or ``None`` to keep it; ``earlier`` and ``reset`` as in
        the constructor (``earlier`` ``None``: keep them)."""
        if name is not None:
            self.log_name = name
        if earlier is not None:
            self.earlier = listed_issues(earlier)
            self.reset = reset
        new = listed_issues(issues)
        rows = [(i, True) for i in self.earlier] + [(i, False) for i in new]
        old = self._rows
        self.several = several
        layout = self._layout([i for i, _ in rows])
        grown = layout == self._columns and len(rows) >= len(old) \
            and all((a is b or a == b) and x == y for (a, x), (b, y) in zip(old, rows, strict=False))
        self.issues = new
        self._rows = rows
        table: DataTable[Any] = self.query_one("#issues", DataTable)
        if not grown:
            row = table.cursor_row
            table.clear(columns=True)
            self._columns = layout
            if several:
                table.add_column(Text("file"), key="file")
            table.add_column(Text("line", justify="right"), key="line")
            table.add_column(Text("kind"), key="kind")
            table.add_column(Text("is"), key="is")
            table.add_column(Text("message"), key="message")
            old = []
        table.add_rows(self._row(i, before) for i, before in rows[len(old):])
        if not grown and rows:
            table.move_cursor(row=min(max(0, row), len(rows) - 1), animate=False)
        self.query_one("#issues-head", Static).update(self._head())
        self._show_selected()

    def on_resize(self, event: events.Resize) -> None:
        """Cut the messages to the new width (the table is drawn again only when that changes)."""
        if self._columns is not None:
            self.show(self.issues, self.several)

    def _layout(self, issues: Sequence[Issue]) -> tuple[bool, int, int, int, int]:
        """Widths of the file, line, kind and message cells for ``issues`` on this screen: the message gets what
        the other columns leave (each column has a cell of padding on either side, the table a scrollbar), so
        the table never scrolls sideways at 80 columns; the highlighted message is shown whole below."""
        fw = min(ISSUE_FILE_CHARS, max((len(os.path.basename(i.path)) for i in issues), default=4)) \
            if self.several else 0
        lw = max((len(str(i.line)) for i in issues), default=4)
        kw = min(ISSUE_KIND_CHARS, max((len(i.kind) for i in issues), default=4))
        what = len(BEFORE_RESET) if self.earlier else len("bad line")  # (the widest "is" cell)
        used = (fw + 2 if self.several else 0) + max(4, lw) + 2 + max(4, kw) + 2 + what + 2 + 2 + 2
        return self.several, fw, lw, kw, max(20, min(ISSUE_CELL_CHARS, (self.size.width or 100) - used))

    def _row(self, issue: Issue, before: bool = False) -> list[Text]:
        _several, fw, _lw, kw, mw = self._columns or self._layout([issue])
        file, line = issue_where(issue, self.several)
        bad = is_bad_line(issue)
        cells = [tx.literal(file, limit=fw, middle=True)] if self.several else []
        if before:  # (read before the reset: not counted, so not styled as a problem of the file now)
            cells += [Text(line, justify="right"), tx.literal(issue.kind, limit=kw), Text(BEFORE_RESET)]
            cells.append(tx.literal(issue.message, limit=mw))
            for cell in cells:
                cell.stylize("dim")
            return cells
        cells += [Text(line, justify="right"), tx.literal(issue.kind, "yellow" if bad else "cyan", limit=kw),
                  Text("bad line" if bad else "note", "bold yellow" if bad else "")]
        cells.append(tx.literal(issue.message, limit=mw))
        return cells

    def _head(self) -> Text:
        out = Text()
        out.append("Input problems of ", "bold")
        out.append_text(tx.literal(self.log_name, "bold", limit=60, middle=True))
        if not self.issues:
            out.append(": none", "bold")
        else:
            out.append(f": {counted(self.issues)}", "bold")
            out.append(", as ctxwatch check counts them")
        if self.earlier:
            n = len(self.earlier)
            out.append("\n")
            out.append_text(tx.literal(
                f"{n:,} more from before the last reset{': ' + self.reset if self.reset else ''}; listed first, "
                f"not counted: ctxwatch check on the file as it is now would not see {'it' if n == 1 else 'them'}",
                "yellow", limit=400))
        if not self.issues:
            return out
        kinds: dict[str, int] = {}
        for i in self.issues:
            kinds[i.kind] = kinds.get(i.kind, 0) + 1
        by_kind = " · ".join(f"{k} {n:,}" for k, n in sorted(kinds.items(), key=lambda kv: -kv[1]))
        out.append("\n")
        out.append_text(tx.literal(f"in the order read, newest last · {by_kind}", "dim", limit=400))
        return out

    def selected_issue(self) -> Issue | None:
        """The highlighted problem, or ``None``."""
        row = self.query_one("#issues", DataTable).cursor_row
        return self._rows[row][0] if 0 <= row < len(self._rows) else None

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """Show the highlighted problem's message whole."""
        event.stop()
        self._show_selected()

    def _show_selected(self) -> None:
        issue = self.selected_issue()
        body = self.query_one("#issue-body", Static)
        if issue is None:
            if self.issues:
                body.update(Text(""))
            elif self.stopped:
                body.update(tx.literal(f"no input problems listed, but not every line was read: {self.stopped}",
                                       "yellow", limit=400))
            else:
                body.update(Text("no input problems: every line was read", "dim"))
            return
        row = self.query_one("#issues", DataTable).cursor_row
        out = Text()
        out.append_text(tx.literal(issue.path, "bold", limit=200, middle=True))
        out.append(f":{issue.line}" if issue.line else " (the whole file)", "bold")
        out.append(f" · {issue.kind} · {'bad line' if is_bad_line(issue) else 'note'}")
        if self._rows[row][1]:
            out.append(", read before the last reset: not counted", "yellow")
        out.append("\n")
        out.append_text(tx.literal(issue.message, multiline=True, limit=ISSUE_BODY_CHARS))
        body.update(out)



# --- help ---------------------------------------------------------------------------------------------

HELP_KEYS: tuple[tuple[str, str], ...] = (
    ("↑ ↓  j k", "select a call (leaving the newest call stops following)"),
    ("home end", "first / newest call"),
    ("pgup pgdn", "a page of calls up / down"),
    ("enter", "call detail: messages, tool schemas, system prompt, tokens"),
    ("f", "follow the newest call on/off"),
    ("p", "pause/resume the display (the log is still read)"),
    ("t", "chart x axis: call number / wall time"),
    ("e", "eviction preview of the selected call (knobs, write JSON)"),
    ("/", "filter calls by text (model, context, time, numbers)"),
    ("c", "next context (main, subagents, sidechains)"),
    ("o", "sessions of a folder, newest first (type to filter them)"),
    ("i", "every input problem: bad lines and notes, with their messages"),
    ("s", "save an SVG screenshot in the current folder"),
    ("x", "export the calls table as CSV in the current folder"),
    ("esc", "skip to the backfill's last 8 MiB; clear the filter"),
    ("ctrl+p", "command palette (every action)"),
    ("?", "this help"),
    ("q  ctrl+c", "quit"),
)


def help_text(settings: Settings | None = None) -> Text:
    """The help screen's text: keys, the bar's glyphs, the marks (with ``settings``' fractions), number marks."""
    st = settings or Settings()
    out = Text()
    out.append("Keys\n", "bold")
    for key, what in HELP_KEYS:
        out.append(f"  {key:<10}", "bold cyan")
        out.append(f" {what}\n")
    out.append("\nThe bar (parts differ by glyph, not only colour)\n", "bold")
    for glyph, name, colour, what in (
            ("█", "floor", "magenta", "system prompt + tool schemas, paid on every call"),
            ("▓", "history", "cyan", "every other message"),
            ("░", "reserve", "yellow", f"room for the completion (max_tokens, else {st.reserve:.0%} of the window)"),
            ("·", "free", "bright_black", "what is left of the window")):
        out.append(f"  {glyph} {name:<8}", colour)
        out.append(f" {what}\n")
    out.append("  T┃ B┃     ", "bold red")
    out.append(f"compaction trigger ({st.trigger:g} of the budget), budget ({st.budget_fraction:g} of the "
               "window)\n")
    out.append("            (the budget is never more than the window minus the reserve)\n")
    out.append("  W┃        ", "bold red")
    out.append("the window, drawn when prompt + reserve run past it\n")
    out.append("\nNumbers\n", "bold")
    # (the same two rules as report's footnote: which one applies depends on the column)
    out.append("  12,036~    inferred floor: reported prompt minus estimated history\n")
    out.append("  12,036~    inferred history: reported prompt minus the context's floor\n")
    out.append("  13,681≈    calibrated floor: o200k count x the model's median reported/estimated\n")
    out.append("             ratio; calibrated history: the rest of the reported prompt\n")
    out.append("             (Enter shows the raw counts);  ?  unknown, never guessed\n")
    out.append("  48.2%!     at or above the trigger;  !!  at or above the budget\n")
    out.append("  640,000!   reported, implausible (over the window): no occupancy\n")
    out.append("  0!         reported 0, implausible: the estimate stands in\n")
    out.append("  #12        call number, from 1 (report --json's 0-based index is 11)\n")
    out.append("  12 C       a compaction happened just before call #12\n")
    out.append("\nesc or ? closes this help", "dim")
    return out


class HelpScreen(ModalScreen[None]):
    """Keys, the bar's glyphs and marks, and what the number marks mean."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark", "app.pop_screen", "Close"),
        Binding("q", "app.quit", "Quit"),  # q quits everywhere else; a help screen must not trap it
    ]

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 84; max-width: 100%; height: auto; max-height: 100%;
        border: round $primary; background: $surface; padding: 0 1; }
    """

    def __init__(self, settings: Settings | None = None) -> None:
        super().__init__()
        self.settings = settings

    def compose(self) -> ComposeResult:
        """The help text in a scrollable box."""
        with VerticalScroll():
            yield Static(help_text(self.settings), id="help-text")


# --- sessions -----------------------------------------------------------------------------------------

#: The session picker's first option: follow whichever session is newest.
AUTO = ""
#: Columns left free on each side of the session picker (it is as wide as its rows, up to the screen's width
#: less these), and the columns its frame takes from the rows: the dialog's border (2), the list's border
#: (2) and padding (2), the scrollbar (2).
PICKER_MARGIN = 2
PICKER_CHROME = 8
#: The least columns a cut folder name keeps (``…ling-service``), and the columns a session name keeps before
#: folder names are cut further than their shared prefix.
FOLDER_MIN = 12
SESSION_MIN = 20
#: Columns a session name may be cut to before the time of day, then the size, give way: its first 20 and
#: last 19 characters still tell it apart (a name that cannot be shortened, such as a subagent transcript's
#: long name, is cut rather than every row losing its time).
SESSION_ROOM = 40
#: Columns between two columns of a row.
GAP = 2

#: A UUID (a Claude Code or Codex session id) in a file name; its first 8 characters tell sessions apart.
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
#: Where a UUID whose middle is left out may end, longest first: after its 4th, 3rd or 2nd group (its 1st group
#: alone is :func:`session_forms`' shortest form but one).
_ID_KEEPS = (23, 18, 13)
#: Which of :func:`session_forms`' forms is the name without its extension and ``subagents`` folder, and which
#: that one with its session id's middle left out.
_FLAT, _ID_MIDDLE = 2, 3
#: Where a prefix shared by every folder name may be cut: after one of these (Claude Code names a project's
#: folder after its path, each ``/`` and ``.`` written as ``-``: ``-home-alice-src-github-acme-billing``).
_NAME_SEPARATORS = "-_./ "


def file_size(n: int) -> str:
    """A file's size of ``n`` bytes as the session picker shows it: ``400 B`` under 1 KiB (rounded to KiB it
    read ``0 KiB``, as if the file were empty), else KiB with no decimals (``705 KiB``, ``12,345 KiB``)."""
    return f"{n:,} B" if n < 1024 else f"{n / 1024:,.0f} KiB"


def split_session_path(rel: str) -> tuple[str, str]:
    """``(folder, session)`` of a log's path relative to the opened folder: the folder holding the session
    (a Claude Code project folder, a Codex day folder; ``""`` at the top) and the session's own name.  A
    subagent transcript under ``<session>/subagents/`` stays with its session's folder: its name is
    ``<session>/subagents/agent-….jsonl``."""
    parts = rel.split(os.sep)
    k = len(parts) - 3 if len(parts) >= 3 and parts[-2] == "subagents" else len(parts) - 1
    return os.sep.join(parts[:k]), os.sep.join(parts[k:])


def common_cut(names: Sequence[str]) -> int:
    """How many leading characters every non-empty name of ``names`` shares up to a separator
    (:data:`_NAME_SEPARATORS`), that is what can be left out of each without losing what tells them apart;
    0 with fewer than two distinct names (one name is told apart by nothing), and 0 when the cut would leave
    nothing of a name or save no cell (the ``…`` put in its place takes one: the ``-`` every Claude Code
    project folder starts with was shown as ``…``, and the project folder of ``/``, named ``-``, as ``…``
    alone)."""
    distinct = sorted({n for n in names if n})
    if len(distinct) < 2:
        return 0
    first, last = distinct[0], distinct[-1]  # (sorted: what these two share, all share)
    shortest = min(len(n) for n in distinct)
    n = 0
    while n < min(len(first), len(last), shortest - 1) and first[n] == last[n]:
        n += 1
    cut = max(first[:n].rfind(c) for c in _NAME_SEPARATORS) + 1
    return cut if cut >= 2 else 0


def _cells(s: str) -> int:
    """Terminal cells of ``s`` (:func:`rich.cells.cell_len`, at once for plain ASCII: 2,443 names a layout)."""
    return len(s) if s.isascii() else cell_len(s)


def _fitting(chars: Iterable[str], width: int) -> str:
    """The leading ``chars`` that fit in ``width`` cells beside a one-cell ``…``, in their order."""
    keep, used = [], 1
    for ch in chars:
        used += cell_len(ch)
        if used > width:
            break
        keep.append(ch)
    return "".join(keep)


def cut_left(s: str, width: int) -> str:
    """``s`` in at most ``width`` cells, keeping its end: ``…ling-service``."""
    if _cells(s) <= width:
        return s
    if width < 2:
        return "…"[:width]
    return "…" + _fitting(reversed(s), width)[::-1]


def cut_right(s: str, width: int) -> str:
    """``s`` in at most ``width`` cells, keeping its start: ``3f2a9c1e-8b7d…``."""
    if _cells(s) <= width:
        return s
    if width < 2:
        return "…"[:width]
    return _fitting(s, width) + "…"


def cut_middle(s: str, width: int) -> str:
    """``s`` in at most ``width`` cells, keeping both ends, the start the longer: ``3f2a9c1e…/agent-e1f845``."""
    if _cells(s) <= width:
        return s
    if width < 5:
        return cut_right(s, width)
    head = cut_right(s, (width + 1) // 2 + 1)[:-1]
    return head + cut_left(s, width - _cells(head))


def session_forms(sessions: Sequence[str]) -> list[list[str]]:
    """Each session name of ``sessions``, then ever shorter forms of it (5 in all, some maybe equal), each
    leaving out what tells sessions apart least: the extension every name shares (``.jsonl``), the
    ``subagents`` folder of a subagent transcript (every transcript's path has it, and its row is tagged
    ``subagent``: ``3f2a9c1e-8b7d-4414-9ccd-011d40f70b2a/agent-a2898e3``), a session id's middle
    (``3f2a9c1e…0b2a``), then all of the id but its first 8 characters (``3f2a9c1e…/agent-a2898e3``).  The start
    of the name is always kept."""
    exts = {os.path.splitext(s)[1] for s in sessions}
    ext = next(iter(exts)) if len(exts) == 1 else ""
    sub = f"{os.sep}subagents{os.sep}"
    out = []
    for s in sessions:
        plain = s[:len(s) - len(ext)] if ext else s
        # (the subagents folder goes before any of the id: a cut id was shown where the whole id had room)
        flat = plain.replace(sub, os.sep)
        forms = [s, plain, flat, _UUID.sub(lambda m: m[0][:8] + "…" + m[0][-4:], flat),
                 _UUID.sub(lambda m: m[0][:8] + "…", flat)]
        out.append(forms)
    return out


def cut_id(name: str, room: int) -> str | None:
    """``name`` with the middle of the session id (a UUID) it holds left out, keeping as much of the id's start
    as fits in ``room`` cells with its last 4 characters, cut where a group of the id ends
    (``3f2a9c1e-8b7d-4414…0b2a``); ``None`` when no more than the id's first group fits, or ``name`` holds no
    id or more than one."""
    ids = list(_UUID.finditer(name))
    if len(ids) != 1:
        return None
    m = ids[0]
    rest = _cells(name) - len(m[0])
    for keep in _ID_KEEPS:
        if rest + keep + 1 + 4 <= room:
            return name[:m.start()] + m[0][:keep] + "…" + m[0][-4:] + name[m.end():]
    return None


class NameColumns:
    """``(folder, session)`` names to lay out in two columns (:meth:`fit`), their shorter forms worked out once
    for every width tried."""

    def __init__(self, pairs: Sequence[tuple[str, str]]) -> None:
        self.folders = [f for f, _s in pairs]
        cut = common_cut(self.folders)
        self.short_folders = [("…" + f[cut:]) if cut and f else f for f in self.folders]
        self.forms = session_forms([s for _f, s in pairs])
        self.lens = [[_cells(f) for f in fs] for fs in self.forms]
        self.full = max((n[0] for n in self.lens), default=0)
        self.least = max((n[-1] for n in self.lens), default=0)
        self.folder_w = max((_cells(f) for f in self.folders), default=0)
        self.short_folder_w = max((_cells(f) for f in self.short_folders), default=0)

    def fit(self, width: int, strict: bool = False) -> tuple[int, int, list[tuple[str, str]]] | None:
        """Lay the names out in two columns of at most ``width`` cells in all (:data:`GAP` between them; no
        folder column when every folder is ``""``), keeping what tells sessions apart.

        Folder names are whole when every name fits whole; else the prefix they all share is left out
        (:func:`common_cut`: ``…billing-service``), and when even that leaves too little room they are cut from
        the left (keeping the project's own name) when the session column would get fewer than
        :data:`SESSION_MIN` cells, to no less than :data:`FOLDER_MIN` cells.  Each session name then takes the
        longest of its :func:`session_forms` that fits the column (without the shared extension as soon as one
        name does not fit whole), the shortest one cut in the middle when none does; a session id's middle is
        left out only as far as the column needs (:func:`cut_id`).

        ``strict``: return ``None`` rather than cut a folder name, or cut a session name's shortest form to
        fewer than :data:`SESSION_ROOM` cells (the caller may rather give up dates and sizes).

        Returns ``(folder_width, session_width, names)``: the columns' widths and the names, each in its column.
        """
        folders, fw = self.folders, self.folder_w
        gap = GAP if fw else 0
        if fw + gap + self.full > width:
            folders, fw = self.short_folders, self.short_folder_w
        if fw + gap + self.least > width:
            if strict and fw + gap + min(self.least, SESSION_ROOM) > width:
                return None
            fw = max(min(fw, FOLDER_MIN), min(fw, width - gap - min(self.least, SESSION_MIN))) if fw else 0
        room = max(1, width - gap - fw)
        # (once one name is shortened, none keeps the extension they all share: the column reads the same way)
        first = 0 if self.full <= room else 1
        sessions = []
        for fs, lens in zip(self.forms, self.lens, strict=True):
            k = next((k for k in range(first, len(fs)) if lens[k] <= room), None)
            if k == _ID_MIDDLE:  # (its fixed 8 + 4 characters of the id left room unused beside it)
                sessions.append(cut_id(fs[_FLAT], room) or fs[k])
            else:
                sessions.append(fs[k] if k is not None else cut_middle(fs[-1], room))
        names = [(cut_left(f, fw), s) for f, s in zip(folders, sessions, strict=True)]
        return fw, max((_cells(s) for s in sessions), default=0), names


def fit_names(pairs: Sequence[tuple[str, str]], width: int, strict: bool = False
              ) -> tuple[int, int, list[tuple[str, str]]] | None:
    """:meth:`NameColumns.fit` of ``pairs``."""
    return NameColumns(pairs).fit(width, strict)


class OneLineOptions(OptionList):
    """An :class:`OptionList` whose options are one line each (the session picker lays its rows out to fit, and
    does not wrap them): its height is their count, not measured option by option (the 2,443 rows of a big
    projects folder took most of a second to measure, on every layout)."""

    DEFAULT_CSS = """
    OneLineOptions { text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """One line per option."""
        return self.option_count


class SessionPicker(ModalScreen[str | None]):
    """Pick a session log of a folder (newest first); the first option follows the newest automatically.

    Each row names the session's folder (a Claude Code project folder) and the session in two columns, then
    when it was last active and its size; names too long for the terminal lose what tells sessions apart
    least (:func:`fit_names`).  Typing (or ``/``) goes to the filter box above the list, which keeps the rows
    whose path (relative to the folder) holds the text, ignoring case; Enter picks the highlighted row, ↑ ↓
    move in the list meanwhile.  Escape clears the filter, then closes.  Dismisses with the chosen path,
    :data:`AUTO` for automatic, or ``None`` when cancelled.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel"),
        Binding("j", "down", "Down", show=False),
        Binding("k", "up", "Up", show=False),
        # (for the filter box: in the list its own bindings come first)
        Binding("down", "down", "Down", show=False),
        Binding("up", "up", "Up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
    ]

    DEFAULT_CSS = """
    SessionPicker { align: center middle; }
    SessionPicker > Vertical { width: 100; max-width: 100%; height: auto; max-height: 100%;
        border: round $primary; background: $surface; }
    SessionPicker #picker-filter { height: 1; border: none; padding: 0 2; background: $surface; }
    SessionPicker #picker-filter:focus { background: $boost; }
    SessionPicker #picker-head { padding: 0 2; color: $text-muted; }
    SessionPicker OptionList { height: auto; max-height: 30; }
    """

    def __init__(self, folder: str, files: Sequence[str], current: str | None, auto: bool) -> None:
        super().__init__()
        self.folder = folder
        self.files = list(files)
        self.current = current
        self.auto = auto
        #: The filter's text (rows whose path relative to ``folder`` holds it, ignoring case; ``""``: all).
        self.filter_text = ""
        #: Per file: (folder name, session name, subagent?, when it was last active, its size).
        self._rows: list[tuple[str, str, bool, str, str]] = []
        self._keys: list[str] = []  # (each file's path relative to the folder, case-folded: what the filter reads)
        # (each file's row, laid out for the width now: kept from one filter to the next, an option keeps what
        # the list worked out about it, so that filtering does not measure thousands of rows again)
        self._file_options: list[Option] = []
        self._laid_out_for = 0  # (the screen width the rows were laid out for)

    def _read_rows(self) -> None:
        for f in self.files:
            rel = os.path.relpath(f, self.folder)
            folder, session = split_session_path(rel)
            try:
                # (the time the list is sorted by: the last call's, else the file's modification time)
                act, _ = activity_of(f)
                # (a file whose calls carry no time is listed last, by its file time, and a record's time that no
                # call's is found beside: each said, as it is no call's)
                when = tx.stamp(act) + activity_note(f)
                size = file_size(os.path.getsize(f))
            except OSError:
                when, size = "gone", ""
            self._rows.append((tx.clean(folder, multiline=False), tx.clean(session, multiline=False),
                               is_subagent_file(f), when, size))
            self._keys.append(rel.casefold())

    def _title(self, matches: int | None = None) -> Text:
        """``Sessions in FOLDER (newest first): N sessions, M subagent transcripts``; with a filter, how many
        files it keeps (``matches``) instead of the counts."""
        subagents = sum(1 for f in self.files if is_subagent_file(f))
        count = ""
        if matches is not None:
            count = f": {matches:,} of {len(self.files):,} match"
        elif subagents:
            n = len(self.files) - subagents
            count = (f": {n:,} session{'s' if n != 1 else ''}, {subagents:,} subagent transcript"
                     f"{'s' if subagents != 1 else ''}")
        return Text(f"Sessions in {os.path.basename(self.folder.rstrip(os.sep)) or self.folder} "
                    f"(newest first){count}", style="bold")

    def _lay_out(self) -> tuple[int, Text]:
        """Lay the rows out (:attr:`_prompts`) for the screen's width now; return the dialog's width and the
        column heads.

        One line per file at any width: the dialog is as wide as its rows, up to the screen's width less
        :data:`PICKER_MARGIN` columns on each side, :data:`PICKER_CHROME` of them its frame's; the names get what
        the time, size and tag leave (the time, then the size, are left out first on a narrow screen, unless
        the names fit, shortened, only without them), in two columns so that the dates line up.
        """
        screen_w = self.app.size.width or 100
        self._laid_out_for = screen_w
        width = max(20, screen_w - 2 * PICKER_MARGIN) - PICKER_CHROME - 2  # (the marker: "● ")
        tag = len("  subagent") if any(sub for _f, _s, sub, _w, _z in self._rows) else 0
        columns = NameColumns([(f, s) for f, s, _sub, _w, _z in self._rows])
        # The time and size in three forms, widest first: date and time, date, date without the size.
        forms = [[(when, size) for *_x, when, size in self._rows],
                 [(when[:10] + when[19:], size) for *_x, when, size in self._rows],
                 [(when[:10] + when[19:], "") for *_x, when, _size in self._rows]]
        for infos in forms:
            when_w = max((_cells(w) for w, _z in infos), default=0)
            size_w = max((len(z) for _w, z in infos), default=0)
            infos_w = when_w + (GAP + size_w if size_w else 0)
            fitted = columns.fit(width - tag - GAP - infos_w, strict=infos is not forms[-1])
            if fitted is not None:
                break
        assert fitted is not None
        fw, sw, names = fitted
        self._file_options = []
        for i, ((folder, session), (*_x, sub, _w, _z), (when, size)) in enumerate(
                zip(names, self._rows, infos, strict=True)):
            line = Text("● " if (self.files[i] == self.current and not self.auto) else "  ")
            if fw:
                line.append(folder + " " * (fw - _cells(folder) + GAP), "bold")
            line.append(session + " " * (sw - _cells(session) + GAP))
            line.append(when + " " * (when_w - _cells(when)) + (f"{' ' * GAP}{size:>{size_w}}" if size_w else ""),
                        "dim")
            if sub:
                line.append("  subagent", "cyan")  # (a session's own transcript, not a session: see the count)
            self._file_options.append(Option(line, id=f"f{i}"))
        head = Text("  ")
        if fw:
            head.append(cut_right("folder", fw).ljust(fw + GAP))
        head.append(cut_right("session", sw).ljust(sw + GAP))
        head.append(f"{'last call':<{when_w}}" + (f"{' ' * GAP}{'size':>{size_w}}" if size_w else ""))
        rows_w = 2 + fw + (GAP if fw else 0) + sw + GAP + infos_w + tag
        title_w = self._title().cell_len
        # (a long title wraps rather than widen the box past the screen's margins)
        box_w = min(max(20, screen_w - 2 * PICKER_MARGIN), max(rows_w, title_w) + PICKER_CHROME)
        return box_w, head

    def _options(self) -> list[Option]:
        """The list's options: "follow the newest" and every file, or with a filter the files it keeps (a
        disabled line saying so when none does)."""
        if not self.filter_text:
            auto = Text(("● " if self.auto else "  ") + "follow the newest session automatically")
            return [Option(auto, id="auto"), *self._file_options]
        q = self.filter_text.casefold()
        kept = [o for o, key in zip(self._file_options, self._keys, strict=True) if q in key]
        if not kept:
            none = Text("  no session's path holds ")
            none.append_text(tx.literal(self.filter_text, limit=60))
            none.append(" (Esc clears the filter)")
            return [Option(none, id="none", disabled=True)]
        return kept

    def _chosen_row(self) -> int:
        """The row of the current choice (marked ●) in the unfiltered list: "follow the newest" in automatic
        mode, else the session shown (the first row when it is no longer listed)."""
        if self.auto or self.current not in self.files:
            return 0
        return 1 + self.files.index(self.current)

    def _fill(self) -> None:
        """Show the options for the filter now: the first one kept is highlighted (Enter picks it); without a
        filter, the current choice."""
        ol = self.query_one(OptionList)
        ol.clear_options()
        options = self._options()
        ol.add_options(options)
        if not self.filter_text:
            self._highlight(self._chosen_row())
        else:
            ol.highlighted = 0 if ol.option_count and not ol.get_option_at_index(0).disabled else None
        kept = sum(1 for o in options if (o.id or "").startswith("f"))
        self.query_one("#picker-title", Static).update(self._title(kept if self.filter_text else None))

    def compose(self) -> ComposeResult:
        """Title, filter box, column heads and the list."""
        self._read_rows()
        box_w, head = self._lay_out()
        box = Vertical()
        box.styles.width = box_w
        with box:
            yield Static(self._title(), id="picker-title")
            # (select_on_focus off: the key that opened the box is in it, and the next one must not replace it)
            yield Input(placeholder="type or / to filter by folder or file name (Esc clears)", id="picker-filter",
                        select_on_focus=False)
            yield Static(head, id="picker-head")
            yield OneLineOptions(*self._options())

    def on_mount(self) -> None:
        """The list has the focus (↑ ↓ j k Enter), its cursor on the current choice (the session shown when one
        was picked, page 40 of a big folder as well); typing goes to the filter (:meth:`on_key`)."""
        self.query_one(OptionList).focus()
        self._highlight(self._chosen_row())

    def _highlight(self, row: int) -> None:
        """Put the list's cursor on ``row`` and, once the list is laid out, in its middle."""
        ol = self.query_one(OptionList)
        ol.highlighted = row

        def centre() -> None:
            if ol.highlighted == row:
                ol.scroll_to(y=max(0, row - ol.scrollable_content_region.height // 2), animate=False)

        self.call_after_refresh(centre)

    def on_key(self, event: events.Key) -> None:
        """A printable key pressed in the list starts the filter with it, or goes on with it (``/`` only opens the
        box): keys typed in a burst after the first still reach the list, the box having taken the focus in the
        meantime.  j and k move, as in the calls table, unless a filter is being typed."""
        box = self.query_one(Input)
        if box.has_focus or not event.is_printable or event.character is None \
                or (event.key in ("j", "k") and not box.value):
            return
        event.stop()
        event.prevent_default()
        box.focus()
        if event.character != "/":
            box.insert_text_at_cursor(event.character)

    def on_paste(self, event: events.Paste) -> None:
        """Text pasted while the list has the focus (a copied session id) goes to the filter, as typing does."""
        box = self.query_one(Input)
        if box.has_focus or not event.text:
            return
        event.stop()
        box.focus()
        box.insert_text_at_cursor(clean(event.text))

    def on_input_changed(self, event: Input.Changed) -> None:
        """Keep the rows the filter's text holds."""
        event.stop()
        if event.value != self.filter_text:
            self.filter_text = event.value
            self._fill()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter in the filter box picks the highlighted row."""
        event.stop()
        ol = self.query_one(OptionList)
        if ol.highlighted is not None:
            ol.action_select()

    def on_resize(self, event: events.Resize) -> None:
        """Lay the rows out again for the new width (the highlighted row stays)."""
        if self.app.size.width == self._laid_out_for or not self.is_mounted:
            return
        box_w, head = self._lay_out()
        self.query_one(Vertical).styles.width = box_w
        self.query_one("#picker-head", Static).update(head)
        ol = self.query_one(OptionList)
        kept = ol.highlighted
        ol.clear_options()
        ol.add_options(self._options())
        ol.highlighted = kept

    def action_down(self) -> None:
        """Next session (j, as in the calls table; ↓ in the filter box)."""
        self.query_one(OptionList).action_cursor_down()

    def action_up(self) -> None:
        """Previous session (k; ↑ in the filter box)."""
        self.query_one(OptionList).action_cursor_up()

    def action_page_down(self) -> None:
        """A page of sessions down (in the filter box)."""
        self.query_one(OptionList).action_page_down()

    def action_page_up(self) -> None:
        """A page of sessions up (in the filter box)."""
        self.query_one(OptionList).action_page_up()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """Dismiss with the chosen session."""
        oid = event.option.id or ""
        if oid == "auto":
            self.dismiss(AUTO)
        elif oid.startswith("f"):
            self.dismiss(self.files[int(oid[1:])])

    def action_cancel(self) -> None:
        """Escape: clear the filter (back to the list, every row shown), else close without switching."""
        box = self.query_one(Input)
        if box.value:
            box.value = ""  # (Changed shows every row again)
            self.query_one(OptionList).focus()
            return
        self.dismiss(None)
