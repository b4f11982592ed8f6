"""The flags list (``F``): every flag of the context shown in call order, one row each (severity, call, kind,
reason cut to the row), and the highlighted flag whole below the table: its severity, call, kind, whole reason
and evidence.  Enter selects the flag's call in the calls table.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import DataTable, Static

from ctxwatch.analysis import Flag
from ctxwatch.analysis.flags import CALL_EVIDENCE, call_number
from ctxwatch.ui import text as tx
from ctxwatch.ui.screens.common import TableScreen, settle_widths
from ctxwatch.ui.widgets.footer import AdaptiveFooter
from ctxwatch.ui.widgets.side import SEVERITY_MARKS

#: Widest kind shown in the table (the panel below shows it whole).
FLAG_KIND_CHARS = 24
#: Characters of a flag's reason and of its evidence shown below the table: reasons are ctxwatch's own
#: sentences (a few hundred characters at most), evidence its numbers and a few quoted log values.
FLAG_BODY_CHARS = 1200


def evidence_text(evidence: dict[str, Any]) -> str:
    """``prompt_tokens 124,851 · first_call #41``: a flag's evidence, a call as its ``#N`` (the number the
    reason and the calls table show, not its 0-based index), counts with thousands separators, an object with a
    ``description`` by it, other values as JSON (lists and objects compact)."""
    parts = []
    for key, value in evidence.items():
        if key in CALL_EVIDENCE:
            shown = f"#{n}" if (n := call_number(value)) is not None else "none"
        elif isinstance(value, int) and not isinstance(value, bool):
            shown = f"{value:,}"
        elif isinstance(value, float):
            shown = f"{value:.4g}"
        elif isinstance(value, str):
            shown = value
        elif isinstance(value, dict) and isinstance(value.get("description"), str):
            # (an object that describes itself, a format rule, by its description: its JSON, which check --json
            # gives whole, pushed the evidence after it out of the panel at 80x24)
            shown = value["description"]
        else:
            shown = json.dumps(value, separators=(",", ":"), default=str)
        parts.append(f"{key} {shown}")
    return " · ".join(parts)


class FlagsScreen(TableScreen):
    """Every flag of the context shown, in call order (the most severe first within a call), each whole in the
    panel below the table when highlighted.  The app gives the flags when made and again with :meth:`show` as
    the analysis changes.  Keys: ↑/↓ (j/k) move, home/end, Enter selects the flag's call (:class:`Chosen`),
    ``escape`` or ``F`` back.

    Args:
        title: what the flags are of (the log's name and the context shown).
        flags: the flags.
        selected: the index of the call selected in the dashboard: the cursor starts on its last flag at or
            before it, else on the last flag.
    """

    TABLE_ID = "flags"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,F", "app.pop_screen", "Back"),
        Binding("enter", "choose", "Select call"),
    ]

    class Chosen(Message):
        """Enter on a flag: select call ``index`` (0-based) of context ``context`` in the calls table."""

        def __init__(self, index: int, context: str) -> None:
            super().__init__()
            self.index = index
            self.context = context

    def __init__(self, title: str, flags: Sequence[Flag], selected: int | None = None) -> None:
        super().__init__()
        self.title_text = title
        self.flags: list[Flag] = []
        self._initial = list(flags)
        self._selected = selected
        self._width = 0

    def compose(self) -> ComposeResult:
        """Header, table, the highlighted flag whole, footer."""
        yield Static(Text(""), id="flags-head")
        yield DataTable(id="flags", cursor_type="row", zebra_stripes=True)
        yield Static(Text(""), id="flag-body")
        yield AdaptiveFooter()

    def on_mount(self) -> None:
        """Fill the table, focus it, put the cursor on the selected call's flag."""
        self._table().focus()
        self.show(self._initial)
        table = self._table()
        if self.flags:
            at = self._selected
            rows = [i for i, f in enumerate(self.flags) if at is None or f.call <= at]
            table.move_cursor(row=rows[-1] if rows else 0, animate=False)
        self._show_selected()

    def show(self, flags: Sequence[Flag]) -> None:
        """Show ``flags`` (sorted here in call order, most severe first within a call), the cursor kept on its
        row."""
        order = {"critical": 0, "warn": 1, "info": 2}
        new = sorted(flags, key=lambda f: (f.call, order.get(f.severity, 3)))
        width = self.size.width or 80
        if new == self.flags and width == self._width:
            return
        self.flags, self._width = new, width
        table = self._table()
        row = table.cursor_row
        table.clear(columns=True)
        kw = min(FLAG_KIND_CHARS, max((len(f.kind) for f in new), default=4))
        cw = max(4, max((len(f"#{f.call + 1}") for f in new), default=4))
        # (each column, the reason's too, has a cell of padding either side and the table a 2-cell scrollbar
        # once its rows outgrow it: the reason gets the rest, so the table never scrolls sideways and the
        # reason's ``…`` stays in sight; the whole reason is below)
        rw = max(20, width - (2 + 2) - (cw + 2) - (kw + 2) - 2 - 2)
        table.add_column(Text(""), key="sev")
        table.add_column(Text("call", justify="right"), key="call")
        table.add_column(Text("kind"), key="kind")
        table.add_column(Text("reason"), key="reason")
        for f in new:
            mark, style = SEVERITY_MARKS.get(f.severity, ("?", ""))
            table.add_row(Text(mark, style), Text(f"#{f.call + 1}", justify="right"),
                          tx.literal(f.kind, style, limit=kw), tx.literal(f.reason, limit=rw))
        settle_widths(table)
        if new:
            table.move_cursor(row=min(max(0, row), len(new) - 1), animate=False)
        self.query_one("#flags-head", Static).update(self._head())
        self._show_selected()

    def on_resize(self, event: events.Resize) -> None:
        """Cut the reasons to the new width."""
        if self.is_mounted:
            self.show(self.flags)

    def _head(self) -> Text:
        out = Text()
        out.append("Flags of ", "bold")
        out.append_text(tx.literal(self.title_text, "bold", limit=70, middle=True))
        if not self.flags:
            out.append(": none", "bold")
            return out
        counts = {s: sum(1 for f in self.flags if f.severity == s) for s in ("critical", "warn", "info")}
        out.append(f": {len(self.flags):,} ({', '.join(f'{n} {s}' for s, n in counts.items())})", "bold")
        out.append("\nin call order · enter selects the call · esc back", "dim")
        return out

    def selected_flag(self) -> Flag | None:
        """The highlighted flag, or ``None``."""
        row = self._table().cursor_row
        return self.flags[row] if 0 <= row < len(self.flags) else None

    def copy_item(self) -> tuple[str, str] | None:
        """What ctrl+c copies here: (what, text) of the highlighted flag whole (severity, call, kind, context,
        reason, evidence), as the panel below the table shows it, or ``None``."""
        f = self.selected_flag()
        if f is None:
            return None
        text = f"{f.severity} · call #{f.call + 1} · {f.kind} · context {f.context}\n{f.reason}"
        if f.evidence:
            text += f"\nevidence: {evidence_text(f.evidence)}"
        return f"flag {f.kind} of call #{f.call + 1}", text

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """Show the highlighted flag whole."""
        event.stop()
        self._show_selected()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a row (the table's own binding): select its call."""
        event.stop()
        self.action_choose()

    def _show_selected(self) -> None:
        f = self.selected_flag()
        body = self.query_one("#flag-body", Static)
        if f is None:
            body.update(Text("no flags in this context", "dim"))
            return
        mark, style = SEVERITY_MARKS.get(f.severity, ("?", ""))
        out = Text()
        out.append(f"{mark} {f.severity}", f"bold {style}")
        out.append(f" · call #{f.call + 1} · ", "bold")
        out.append_text(tx.literal(f.kind, "bold", limit=80))
        out.append_text(tx.literal(f" · context {f.context}", limit=80))
        out.append("\n")
        out.append_text(tx.literal(f.reason, multiline=True, limit=FLAG_BODY_CHARS))
        if f.evidence:
            out.append("\nevidence: ", "dim")
            out.append_text(tx.literal(evidence_text(f.evidence), "dim", limit=FLAG_BODY_CHARS))
        body.update(out)

    def action_choose(self) -> None:
        """Select the highlighted flag's call in the dashboard and go back to it."""
        f = self.selected_flag()
        if f is not None:
            self.post_message(self.Chosen(f.call, f.context))
