"""A table filled in one go is drawn at its cells' widths even when the screen is drawn before the table is
next idle.  A DataTable widens its columns only when idle and keeps the cells it drew (its caches are not keyed
by width): on a busy machine the eviction preview once stayed drawn at its headings' widths, ``#`` showing
``1`` for 10 to 15 and ``saves`` ``16,55``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text
from test_ui_common import loaded, open_preview
from textual.app import App, ComposeResult
from textual.widgets import DataTable

from ctxwatch.ui.app import CtxwatchApp
from ctxwatch.ui.screens.common import settle_widths

DEMO = Path(__file__).resolve().parent.parent / "sample_logs" / "openai_chat_demo.jsonl"


def widest(table: DataTable[Any]) -> list[int]:
    """Each column's widest cell or heading, in cells, read back from the table (what it should be drawn at)."""
    return [max(Text.from_markup(str(c.label)).cell_len if not isinstance(c.label, Text) else c.label.cell_len,
                *(cell.cell_len if isinstance(cell, Text) else len(str(cell)) for cell in table.get_column(c.key)))
            for c in table.ordered_columns]


def widths(table: DataTable[Any]) -> list[int]:
    """The widths each column is drawn at now, padding left out."""
    return [c.get_render_width(table) - 2 * table.cell_padding for c in table.ordered_columns]


class OneTable(App[None]):
    def compose(self) -> ComposeResult:
        yield DataTable()


async def test_settled_widths_are_the_widest_cells_before_the_table_is_idle() -> None:
    app = OneTable()
    async with app.run_test() as pilot:
        table = app.query_one(DataTable)
        table.add_column(Text("#", justify="right"), key="n")
        table.add_column("saves", key="saves")
        table.add_column("fixed", key="fixed", width=3)
        for n in range(8, 16):
            table.add_row(Text(str(n)), Text(f"{n * 1234:,}"), "abcdef")
        assert widths(table) == [1, 5, 3]  # (as the table would be drawn before it is idle)
        settle_widths(table)
        assert widths(table) == [2, len("18,510"), 3]  # (a fixed width stays as it was given)
        await pilot.pause()
        assert widths(table) == [2, 6, 3]  # (and the table, once idle, agrees)


async def test_the_preview_is_filled_at_its_cells_widths_at_once() -> None:
    """The eviction preview's table, filled again (as a knob or a resize does) and read back before any idle
    time: every column already at its widest cell."""
    app = CtxwatchApp(str(DEMO))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 20)
        screen = await open_preview(pilot)
        table = screen.query_one("#plan-table", DataTable)
        screen._render_plan()
        headings = [Text.from_markup(str(c.label)).cell_len for c in table.ordered_columns]
        assert table.row_count >= 3 and widths(table) == widest(table)
        assert sum(w > h for w, h in zip(widths(table), headings, strict=True)) >= 3  # (cells wider than headings)
