"""The fleet view (``W``): one row per conversation of the calls read (an agent instance's session), most at risk
first: its worst flag, its last call's occupancy, floor, model and age.  Enter shows that conversation alone in
the dashboard; ``a`` shows every conversation again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import DataTable, Static

from ctxwatch.ui import text as tx
from ctxwatch.ui.fleet import Conversation, FleetRow
from ctxwatch.ui.screens.common import TableScreen, settle_widths
from ctxwatch.ui.widgets.cells import short_model
from ctxwatch.ui.widgets.footer import AdaptiveFooter
from ctxwatch.ui.widgets.side import SEVERITY_MARKS

#: The fewest cells the names may be cut to, and the fewest the worst flag gets (``trigger_no_compaction #12``
#: needs 25: cut with … below that), so that the table fits 80 columns.
MIN_NAME_CHARS, MIN_FLAG_CHARS = 8, 16
#: The columns cut to fit, in the order they get the room left: the worst flag (why a conversation is at
#: risk), the model, then the names (an instance's is short and read; a session id is cut in the middle).
_CUT = ("flag", "model", "instance", "session")
_HEADS = {"instance": "instance", "session": "session", "model": "model", "flag": "worst flag"}


def _numbers(r: FleetRow) -> list[str]:
    """A row's calls, used %, floor and age cells."""
    return [f"{r.calls:,}", f"{100 * r.used:.1f}%" if r.used is not None else "?", tx.short_tokens(r.floor),
            age_text(r.age)]


def _flag(r: FleetRow) -> str:
    """A row's worst flag: ``kind #N`` (``N`` = call index + 1), empty when it has none."""
    return f"{r.worst[1]} #{r.worst[2] + 1}" if r.worst else ""


def _shown(text: str | None, empty: str = "-") -> str:
    """``text`` as a one-line cell shows it (cleaned: :func:`ctxwatch.ui.text.clean`), ``empty`` when it is
    ``None`` or empty."""
    return tx.clean(text, multiline=False) if text else empty


def age_text(seconds: float | None) -> str:
    """``42 s``, ``5 min``, ``3 h``, ``2 d`` since a conversation's last call; ``?`` without a timestamp."""
    if seconds is None:
        return "?"
    s = max(0.0, seconds)
    for size, unit in ((86400, "d"), (3600, "h"), (60, "min")):
        if s >= size:
            return f"{s // size:.0f} {unit}"
    return f"{s:.0f} s"


class FleetScreen(TableScreen):
    """Every conversation, most at risk first (:func:`ctxwatch.ui.fleet.fleet_rows`); the app gives the rows
    when made and again with :meth:`show`.  Keys: ↑/↓ (j/k), home/end, Enter shows the highlighted
    conversation alone (:class:`Chosen`), ``a`` every conversation (``Chosen(None)``), ``escape`` or ``W``
    back.

    Args:
        title: what the conversations are of (the log's name).
        rows: the rows.
        current: the conversation shown now (the cursor starts on it), or ``None`` for all.
    """

    TABLE_ID = "fleet"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,W", "app.pop_screen", "Back"),
        Binding("enter", "choose", "Show it"),
        Binding("a", "all", "All"),
    ]

    class Chosen(Message):
        """Show ``conversation`` alone in the dashboard (``None``: every conversation)."""

        def __init__(self, conversation: Conversation | None) -> None:
            super().__init__()
            self.conversation = conversation

    def __init__(self, title: str, rows: Sequence[FleetRow], current: Conversation | None = None) -> None:
        super().__init__()
        self.title_text = title
        self.rows: list[FleetRow] = []
        self._initial = list(rows)
        self._current = current

    def compose(self) -> ComposeResult:
        """Header, table, footer."""
        yield Static(Text(""), id="fleet-head")
        yield DataTable(id="fleet", cursor_type="row", zebra_stripes=True)
        yield AdaptiveFooter()

    def on_mount(self) -> None:
        """Fill the table, focus it, put the cursor on the conversation shown (else the most at risk)."""
        self._table().focus()
        self.show(self._initial)
        at = next((i for i, r in enumerate(self.rows) if r.conversation == self._current), 0)
        if self.rows:
            self._table().move_cursor(row=at, animate=False)

    def show(self, rows: Sequence[FleetRow]) -> None:
        """Show ``rows`` (in their order), the cursor kept on the conversation it was on."""
        new = list(rows)
        if [(r.conversation, r.calls, r.worst, r.used) for r in new] == \
                [(r.conversation, r.calls, r.worst, r.used) for r in self.rows]:
            self.rows = new  # (the ages moved on: the same rows)
            self.query_one("#fleet-head", Static).update(self._head())
            return
        table = self._table()
        keep = self.selected_row()
        self.rows = new
        table.clear(columns=True)
        fit = self._fit(new)
        for key, label, right in (("sev", "", False), ("instance", "instance", False), ("session", "session", False),
                                  ("model", "model", False), ("calls", "calls", True), ("used", "used", True),
                                  ("floor", "floor", True), ("age", "age", True), ("flag", "worst flag", False)):
            if key in fit or key not in _CUT:
                table.add_column(Text(label, justify="right" if right else "left"), key=key)
        for r in new:
            mark, style = SEVERITY_MARKS.get(r.worst[0], ("", "")) if r.worst else ("", "")
            inst, session = r.conversation
            # (cleaned first, so that the cut is of the cells shown: an escape such as ``\x1b`` is 4 of them)
            names = [tx.literal(_shown(inst), limit=fit["instance"], middle=True)] if "instance" in fit else []
            table.add_row(Text(mark, style), *names,
                          tx.literal(_shown(session), limit=fit["session"], middle=True),
                          # (a model's id ends in what tells it from its kin: cut in the middle, its date first)
                          tx.literal(_shown(short_model(r.last.model)), limit=fit["model"], middle=True),
                          *(Text(cell, justify="right") for cell in _numbers(r)),
                          tx.literal(_shown(_flag(r), ""), style, limit=fit["flag"]))
        settle_widths(table)
        if new:
            at = next((i for i, r in enumerate(new) if keep is not None and r.conversation == keep.conversation), 0)
            table.move_cursor(row=at, animate=False)
        self.query_one("#fleet-head", Static).update(self._head())

    def _fit(self, rows: Sequence[FleetRow]) -> dict[str, int]:
        """The cells each cut column may take (``instance``, ``session``, ``model``, ``flag``) so that the table
        fits the screen's width: each starts at its least (:data:`MIN_NAME_CHARS`, the flag
        :data:`MIN_FLAG_CHARS`, or less when its cells are shorter), then what the other columns leave goes
        to them in the order of :data:`_CUT`, the worst flag first, each up to its widest cell.  The instance
        column is left out when no conversation has an instance (a folder of Claude Code sessions): it would
        only say ``-``."""
        width = self.size.width or self.app.size.width or 80
        # (a vertical scrollbar, 2 cells, once the rows are more than the table's height: the screen less its
        # head, the column header and the footer)
        scrollbar = 2 if len(rows) > (self.size.height or self.app.size.height) - 5 else 0
        marks = [SEVERITY_MARKS.get(r.worst[0], ("", ""))[0] if r.worst else "" for r in rows]
        # (every width in terminal cells, of the text as shown (cleaned): a CJK session id takes two a character)
        cells = {"instance": [_shown(r.conversation[0]) for r in rows],
                 "session": [_shown(r.conversation[1]) for r in rows],
                 "model": [_shown(short_model(r.last.model)) for r in rows],
                 "flag": [_shown(_flag(r), "") for r in rows]}
        if rows and not any(r.conversation[0] for r in rows):
            del cells["instance"]
        natural = {k: max([0, *(cell_len(c) for c in v)]) for k, v in cells.items()}
        fit = {k: min(n, MIN_FLAG_CHARS if k == "flag" else MIN_NAME_CHARS) for k, n in natural.items()}
        fixed = max([0, *(cell_len(m) for m in marks)]) + sum(
            max([cell_len(label), *(cell_len(_numbers(r)[k]) for r in rows)])
            for k, label in enumerate(("calls", "used", "floor", "age")))
        columns = 5 + len(cells)  # (the mark, the four numbers and the cut ones: a cell of padding either side)

        def used() -> int:
            return sum(max(cell_len(_HEADS[k]), fit[k]) for k in fit)

        room = width - fixed - 2 * columns - scrollbar
        for k in _CUT:
            if k in fit:
                # (a cell narrower than its column's head costs nothing more up to the head's width)
                fit[k] = max(fit[k], min(natural[k], max(fit[k], cell_len(_HEADS[k])) + room - used()))
        return fit

    def _head(self) -> Text:
        out = Text()
        out.append("Conversations of ", "bold")
        out.append_text(tx.literal(self.title_text, "bold", limit=60, middle=True))
        out.append(f": {len(self.rows):,}, most at risk first", "bold")
        out.append("\nworst flag first, then the fullest window · enter: show · a: all · esc: back", "dim")
        return out

    def selected_row(self) -> FleetRow | None:
        """The highlighted conversation's row, or ``None``."""
        row = self._table().cursor_row
        return self.rows[row] if 0 <= row < len(self.rows) else None

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a row (the table's own binding): show that conversation."""
        event.stop()
        self.action_choose()

    def action_choose(self) -> None:
        """Show the highlighted conversation alone in the dashboard."""
        r = self.selected_row()
        if r is not None:
            self.post_message(self.Chosen(r.conversation))

    def action_all(self) -> None:
        """Show every conversation in the dashboard again."""
        self.post_message(self.Chosen(None))
