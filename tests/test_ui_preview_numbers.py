"""The eviction preview numbers a call's messages as its detail does: the history from 1, 0 for the system
prompt or the floor.  The demo's last call (#20) sends no system prompt: its preview numbered its messages from
0 while the detail (with a row saying the system prompt is absent) numbered them from 1."""

from __future__ import annotations

from pathlib import Path

from test_ui_common import loaded, open_detail, wait_for

from ctxwatch.ui.app import CtxwatchApp
from ctxwatch.ui.screens import PlanScreen

DEMO = Path(__file__).resolve().parent.parent / "sample_logs" / "openai_chat_demo.jsonl"


def _rows(table: object) -> list[list[str]]:
    return [[str(cell) for cell in table.get_row_at(r)] for r in range(table.row_count)]  # type: ignore[attr-defined]


async def test_preview_numbers_the_first_message_1_like_the_detail() -> None:
    app = CtxwatchApp(str(DEMO))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 20)
        detail = await open_detail(pilot)
        assert detail.call.index == 19  # (#20, the one without a system prompt)
        items = _rows(detail.query_one("#items"))
        assert items[0][0] == "0" and "absent" in items[0][1]
        first_detail = next(r for r in items if r[0] not in ("0", "-"))  # (columns: #, item, tokens, ...)
        await pilot.press("e")
        screen = app.screen
        assert isinstance(screen, PlanScreen)
        assert await wait_for(pilot, lambda: screen.plan is not None, 10.0)
        rows = _rows(screen.query_one("#plan-table"))
        first = next(r for r in rows if r[0] != "-")  # (columns: #, message, ◆, tokens, ...)
        assert first[0] == first_detail[0] == "1"
        assert first[1] == first_detail[1] == "assistant → read_file"
