"""The call detail cuts its previews for the width it is shown at: opened at 80 columns and widened to 200, its
rows are those of a detail opened at 200 (the preview column stayed about 10 cells wide, the rest of each row
empty); narrowed again, those of one opened at 80."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_ui_common import loaded, open_detail, wait_for

from ctxwatch.ui.app import CtxwatchApp

DEMO = Path(__file__).resolve().parent.parent / "sample_logs" / "openai_chat_demo.jsonl"


def rows(screen: Any) -> list[list[str]]:
    table = screen.query_one("#items")
    return [[str(c) for c in table.get_row_at(r)] for r in range(table.row_count)]


async def opened_at(width: int, height: int) -> list[list[str]]:
    """The detail's rows of the demo's last call, opened at ``width`` x ``height``."""
    app = CtxwatchApp(str(DEMO))
    async with app.run_test(size=(width, height)) as pilot:
        await loaded(pilot, 20)
        return rows(await open_detail(pilot))


async def test_a_resized_detail_shows_the_rows_of_one_opened_at_that_size() -> None:
    wide, narrow = await opened_at(200, 50), await opened_at(80, 24)
    assert max(len(r[-1]) for r in wide) > max(len(r[-1]) for r in narrow) + 40  # (the previews differ)
    app = CtxwatchApp(str(DEMO))
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, 20)
        screen = await open_detail(pilot)
        assert rows(screen) == narrow
        await pilot.resize_terminal(200, 50)
        assert await wait_for(pilot, lambda: rows(screen) == wide)
        await pilot.resize_terminal(80, 24)
        assert await wait_for(pilot, lambda: rows(screen) == narrow)
        assert screen.query_one("#items").virtual_size.width <= 80  # (nothing to scroll sideways to)
