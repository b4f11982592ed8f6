"""What the call detail, the eviction preview and the problems list share: re-reading a call from disk in
a worker thread, the keys of a screen built around one table, its columns' widths settled once it is filled,
and new file names that never overwrite.
"""

from __future__ import annotations

import os
from typing import Any, ClassVar

from rich.cells import cell_len
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable

from ctxwatch.engine import reload_parsed
from ctxwatch.formats import FormatSpec
from ctxwatch.model import (
    Call,
    ParsedCall,
)

#: What the detail view and the eviction preview say when a call's record is no longer where its summary
#: says (the followed log was truncated, rotated or replaced since the call was read).
REREAD_FAILED = "the call could not be re-read from disk (the file changed)"
#: The body note of an item whose text the log does not hold (an inferred floor, a usage-only record).
NO_TEXT = "no text in the log for this item"
#: The body note of the system prompt row of a request the log holds whole that carries none (evicted, or
#: never sent): nothing is missing from the log.
NO_SYSTEM = "this request carries no system prompt (the log holds the whole request)"


def reload(spec: FormatSpec, call: Call) -> ParsedCall | None:
    """Re-read one call's text from disk (in a worker thread) with :func:`ctxwatch.engine.reload.reload_parsed`, which
    needs only the format and the call's summary: the feed's :class:`~ctxwatch.engine.run.Run` lives in the feed's
    thread and is never touched from the UI.  ``None`` if the call cannot be found any more."""
    try:
        return reload_parsed(spec, call)
    except Exception:  # a reader bug on a changed file must not kill the screen
        return None


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


def settle_widths(table: DataTable[Any]) -> None:
    """Widen each automatic column of ``table`` to its widest cell at once, as the table itself does only when
    it is next idle.  A busy app can draw the screen in between, and the table keeps the cells it drew (its
    caches are not keyed by width): a table filled in one go would stay drawn at its headings' widths.  Call
    after filling; cells are ``Text`` or ``str``, measured in terminal cells."""
    for column in table.ordered_columns:
        if column.auto_width:
            widest = max((c.cell_len if isinstance(c, Text) else cell_len(str(c))
                          for c in table.get_column(column.key)), default=0)
            column.content_width = max(column.content_width, widest)


def unique_path(folder: str, stem: str, suffix: str) -> str:
    """``folder/stem.suffix``, or ``folder/stem-2.suffix`` etc. if taken (never overwrites a file; a symlink,
    dangling or not, takes its name too; the file is then created exclusively,
    :func:`~ctxwatch.ui.export.write_new`)."""
    path = os.path.join(folder, stem + suffix)
    n = 2
    while os.path.lexists(path):
        path = os.path.join(folder, f"{stem}-{n}{suffix}")
        n += 1
    return path
