"""The eviction preview's reserve knob down to 0: the plan is made with no reserve at all.

A new user took the reserve to 0 with ``r``: the header said ``reserve 0`` while the plan kept 1 token (the budget
read 11,999 of a 12,000 budget: 0.6 x the 20,000-token window) and both bars still drew a reserve cell.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_ui_common import WINDOW, loaded, open_preview, wait_for, write_log

from ctxwatch.ui.app import CtxwatchApp


async def test_reserve_knob_down_to_0_plans_with_no_reserve(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    app = CtxwatchApp(str(write_log(tmp_path / "run.jsonl", 12)))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 12)
        screen = await open_preview(pilot)
        assert screen.knobs.reserve_tokens == 1000  # (max_tokens of every record)
        # r lowers the reserve by 1 % of the window (200 tokens): 5 presses reach 0, a 6th stays there
        for _ in range(6):
            await pilot.press("r")
        assert await wait_for(pilot, lambda: screen.plan is not None and screen.knobs.reserve_tokens == 0
                              and screen.plan.reserve_tokens == 0)
        plan = screen.plan
        assert plan.budget_tokens == int(0.6 * WINDOW) == 12_000  # (not 11,999: no token kept back)
        bars = str(screen.query_one("#plan-bars").render()).splitlines()
        drawn = [ln for ln in bars if ln.lstrip().startswith(("before", "after"))]
        assert len(drawn) == 2 and not any("░" in ln for ln in drawn)


async def test_preview_rows_add_up_to_before(shared_logs: Path) -> None:
    """The preview of claude-trace's #13 listed the system prompt and the messages (5,431 tokens) under 'before
    15,677': the tool schemas (10,243) and the 3-token reply primer had no row.  They have rows now, as in plan's
    text, and the tokens column adds up to 'before'."""
    from test_ui_common import open_preview as preview_of

    from ctxwatch.ui.widgets import CallsTable

    app = CtxwatchApp(str(shared_logs / "request-response" / "claude-trace_test-traffic_head14.jsonl"))
    async with app.run_test(size=(160, 40)) as pilot:
        await loaded(pilot, 14)
        assert app.main is not None
        app.main.query_one(CallsTable).move_cursor(row=app.view.index(12))
        await pilot.pause()
        screen = await preview_of(pilot)
        table = screen.query_one("#plan-table")
        rows = [[str(cell) for cell in table.get_row_at(r)] for r in range(table.row_count)]
        names = [r[1] for r in rows]  # (columns: #, message, ◆, tokens, saves, ...)
        assert names[1] == "tool schemas" and names[-1] == "reply primer" and rows[-1][3] == "3"
        assert sum(int(r[3].replace(",", "")) for r in rows) == screen.plan.before_tokens == 15_677


async def test_preview_biggest_offenders_and_a_knob_that_changes_nothing(shared_logs: Path) -> None:
    """The spotter session's last call: each message's ``saves`` is its exchange's tokens (an assistant's tool
    calls with their results: #10 ``assistant → Read, Read`` with #11 and #12); ``o`` sorts by it, the biggest
    marked ◆; keep_recent + changes nothing (nothing needs evicting) and says so."""
    from test_ui_common import open_preview as preview_of

    app = CtxwatchApp(str(shared_logs / "claude-code" / "spotter_4d5611e5_full.jsonl"))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 139)
        screen = await preview_of(pilot)
        table = screen.query_one("#plan-table")
        rows = [[str(cell) for cell in table.get_row_at(r)] for r in range(table.row_count)]
        by_index = {r[0]: r for r in rows}
        # (columns: #, message, ◆, tokens, saves, fate, turn, preview)
        tokens = [int(by_index[i][3].replace(",", "")) for i in ("10", "11", "12")]
        assert by_index["10"][1] == "assistant → Read, Read" and by_index["11"][1] == "tool result (Read)"
        assert all(int(by_index[i][4].replace(",", "")) == sum(tokens) for i in ("10", "11", "12"))
        await pilot.press("o")
        await pilot.pause()
        first = [str(c) for c in table.get_row_at(0)]
        saves = [int(str(table.get_row_at(r)[4]).replace(",", "")) for r in range(table.row_count)
                 if str(table.get_row_at(r)[4]) != "-"]
        assert saves == sorted(saves, reverse=True) and first[2] == "◆"
        assert int(first[4].replace(",", "")) == max(saves) == sum(tokens)
        await pilot.press("plus")
        assert await wait_for(pilot, lambda: screen.knobs.keep_recent == 7 and screen.note is not None)
        assert screen.note.startswith("keep_recent 7: no change, nothing needs evicting")
        assert "no change" in str(screen.query_one("#plan-head").render())


async def test_keep_recent_below_zero_says_it_is_the_least(tmp_path: Path) -> None:
    """``-`` at keep_recent 0 said "no change (the plan's cut cannot move: a tool call stays with its results)":
    the knob had not moved at all, 0 being the least.  It says so now, and the plan stays as it was."""
    log = write_log(tmp_path / "run.jsonl", 12)
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 12)
        screen = await open_preview(pilot)
        start = screen.knobs.keep_recent
        await pilot.press(*["minus"] * start)
        assert await wait_for(pilot, lambda: screen.knobs.keep_recent == 0 and screen.plan.policy.keep_recent == 0)
        fates = [m.fate for m in screen.plan.messages]
        await pilot.press("minus")
        assert await wait_for(pilot, lambda: screen.note is not None and "the least" in screen.note)
        assert screen.knobs.keep_recent == 0 and [m.fate for m in screen.plan.messages] == fates
        assert screen.note == "keep_recent 0: the least it can be (no exchange is kept for being recent)"
        assert "the least it can be" in " ".join(str(screen.query_one("#plan-head").render()).split())
