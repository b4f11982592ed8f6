"""The input problems (``i``): every bad line and note of the run in the order read, counted as
``ctxwatch check`` counts them, with the highlighted problem's path and whole message below the table.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import DataTable, Static

from ctxwatch.model import (
    Issue,
    counted_issues,
    is_bad_line,
    tally_issues,
)
from ctxwatch.ui import text as tx
from ctxwatch.ui.screens.common import TableScreen, settle_widths
from ctxwatch.ui.state import listed_issues
from ctxwatch.ui.widgets.footer import AdaptiveFooter

#: Characters of a message shown in the input-problems table (the row is cut to the screen's width anyway).
ISSUE_CELL_CHARS = 300
#: Characters of the highlighted problem's message shown below the table: whole for ctxwatch's own messages
#: (they quote log values cut to 40 characters), cut for a long error text a batch file carries.
ISSUE_BODY_CHARS = 800
#: Widest file name (cut in the middle) and kind shown in the table; the panel below shows them whole.
ISSUE_FILE_CHARS, ISSUE_KIND_CHARS = 24, 24
#: The "is" cell of a problem of a line read before the log's last reset (truncated or replaced): not counted.
BEFORE_RESET = "before reset"


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


    def __init__(self, log_name: str, issues: Sequence[Issue], several: bool, stopped: str | None = None,
                 earlier: Sequence[Issue] = (), reset: str | None = None, others: str | None = None) -> None:
        """``log_name``: what the status line calls the log; ``issues``: the run's issues as the app holds them
        (``reset`` is left out); ``several``: the problems may come from more than one file (joined batch files):
        rows name the file; ``stopped``: why reading the log stopped, if it did (then an empty list does not
        mean that every line was read); ``earlier``: the problems of lines read before the last reset, and
        ``reset`` what that reset was (the status line's ``truncated at 12:00:01 (after 8 calls)``); ``others``:
        where the log shown is one of several (a folder's), what ``check`` of them reads besides it."""
        super().__init__()
        self.log_name = log_name
        self.others = others
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
        settle_widths(table)
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
            if self.others:
                out.append(f" on the log shown ({self.others})")
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
