"""The dashboard's calls table never cuts a number: a used % of a prompt far over the window is drawn whole,
its column as wide as its widest cell."""

from __future__ import annotations

from pathlib import Path

from test_report_numbers import _canonical
from test_ui_common import loaded

from ctxwatch.ui.app import CtxwatchApp
from ctxwatch.ui.widgets import CallsTable


async def test_a_used_percent_far_over_the_window_is_drawn_whole(tmp_path: Path) -> None:
    # (a prompt of 6,000,005 tokens in gpt-4o's 128,000: 100 x 6,000,005 / 128,000 = 4687.5039 %, over the
    # budget, 60 % of the window: marked !!)
    log = _canonical(tmp_path / "hugeline.jsonl", [("hi", 8), ("word " * 6_000_000, 6_000_005)])
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(120, 30)) as pilot:
        await loaded(pilot, 2)
        assert app.main is not None
        table = app.main.query_one(CallsTable)
        rows = ["".join(seg.text for seg in table.render_line(y)).rstrip() for y in (1, 2)]
        assert "…" not in "".join(rows), rows
        words = rows[1].split()
        assert f"{100 * 6_000_005 / 128_000:.1f}%!!" == "4687.5%!!" and "4687.5%!!" in words, rows
        assert words[-2:] == ["4687.5%!!", "6,000,005"]
