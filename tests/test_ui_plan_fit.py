"""Pilot tests: the eviction preview at 80x24 leaves the screen to its messages (its header took 13 lines of a
long reason and left 3 rows of the table in sight), the whole header a key away (``y``), and shows everything at
200x50; the message and preview columns share the screen's width.  The plan is call #10 of a real Claude Code
session at a budget of about 0.20, whose reason runs to about 570 characters."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_ui_common import loaded, open_preview, wait_for
from textual.widgets import DataTable, Static

from ctxwatch.ui.app import CtxwatchApp
from ctxwatch.ui.screens import PlanScreen

LOG = Path("claude-code") / "spotter_4d5611e5_head200.jsonl"


async def tight_plan(pilot: Any) -> PlanScreen:
    """The preview of call #10 with the budget lowered to about 0.20 (``b``), so that its plan does not fit."""
    app = pilot.app
    await loaded(pilot)
    app.query_one("#calls").move_cursor(row=9)
    await pilot.pause()
    screen = await open_preview(pilot)
    assert isinstance(screen, PlanScreen) and screen.call.index == 9
    assert screen.knobs is not None
    for _ in range(round((screen.knobs.budget_fraction - 0.2) / 0.05)):
        await pilot.press("b")
    assert await wait_for(pilot, lambda: abs(screen.plan.policy.budget_fraction - 0.2) < 0.03, 10.0)
    await pilot.pause()
    assert not screen.plan.fits and len(screen.plan.reason) > 500
    return screen


def rows_in_sight(screen: PlanScreen) -> int:
    """Rows of the message table drawn on screen: the table's region less its heading and scrollbars, all of it
    above the footer."""
    table = screen.query_one("#plan-table", DataTable)
    assert table.region.bottom <= screen.size.height - 1  # (the footer's row)
    return min(table.row_count, table.scrollable_content_region.height - table.header_height)


def head_text(screen: PlanScreen) -> str:
    """The header as drawn, its lines joined with ``|``."""
    return "|".join(str(screen.query_one("#plan-head", Static).render()).split("\n"))


def columns_fit(screen: PlanScreen) -> bool:
    """The table needs no sideways scrolling."""
    table = screen.query_one("#plan-table", DataTable)
    return table.virtual_size.width <= table.scrollable_content_region.width


async def test_at_80x24_the_messages_fill_the_screen_and_y_shows_the_whole_reason(shared_logs: Path) -> None:
    app = CtxwatchApp(str(shared_logs / LOG))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await tight_plan(pilot)
        reason = screen.plan.reason
        head = screen.query_one("#plan-head", Static)
        # Condensed: the title, the knobs and the reason's start, one line each, the rest a key away.
        assert not screen.whole_shown and head.content_size.height == 3
        title, knobs, short = head_text(screen).split("|")
        assert title.startswith("call #10 · does not fit · before ") and "budget" in title
        # (Claude Code's budget 177,000 / 200,000 = 0.885, less 14 steps of 0.05: 0.185)
        assert knobs.startswith("keep_recent 6 · budget 0.185 · reserve 20,000 · summary 2,000 · mode summarise")
        assert short.endswith("…  (y: whole reason)") and reason.startswith(short[:-len("…  (y: whole reason)")])
        assert rows_in_sight(screen) >= 10
        assert columns_fit(screen)
        # y: the whole reason (wrapped, every line on screen), and the sizes note; y again: condensed.
        await pilot.press("y")
        await pilot.pause()
        assert screen.whole_shown
        shown = " ".join(head_text(screen).replace("|", " ").split())
        assert " ".join(reason.split()) in shown and "scaled to the provider's count" in shown
        assert head.content_size.height == len(head.render().wrap(head.content_size.width)) > 10  # (all its lines)
        await pilot.press("y")
        await pilot.pause()
        assert not screen.whole_shown and head.content_size.height == 3 and rows_in_sight(screen) >= 10
        # The choice holds while the knobs turn (and the plan is recomputed).
        await pilot.press("plus")
        assert await wait_for(pilot, lambda: screen.plan.policy.keep_recent == screen.knobs.keep_recent == 7, 10.0)
        await pilot.pause()
        assert not screen.whole_shown and head_text(screen).split("|")[1].startswith("keep_recent 7 · ")


async def test_at_200x50_the_header_and_labels_are_whole(shared_logs: Path) -> None:
    app = CtxwatchApp(str(shared_logs / LOG))
    async with app.run_test(size=(200, 50)) as pilot:
        screen = await tight_plan(pilot)
        assert screen.whole_shown
        shown = " ".join(head_text(screen).replace("|", " ").split())
        assert shown.startswith("call #10 · eviction preview · does not fit · before ")
        assert "scaled to the provider's count" in shown and "keep_recent 6 (+/-) · budget 0." in shown
        assert " ".join(screen.plan.reason.split()) in shown and "(y: " not in shown
        table = screen.query_one("#plan-table", DataTable)
        labels = [table.get_row_at(r)[1].plain for r in range(table.row_count)]
        assert "assistant → Read, Read, Read" in labels and not any(label.endswith("…") for label in labels)
        assert rows_in_sight(screen) == table.row_count > 20 and columns_fit(screen)  # (every row)


async def test_the_rows_are_fitted_again_when_the_terminal_shrinks(shared_logs: Path) -> None:
    """Opened at 200x50 and shrunk to 80x24: the header condenses and the message column narrows to fit."""
    app = CtxwatchApp(str(shared_logs / LOG))
    async with app.run_test(size=(200, 50)) as pilot:
        screen = await tight_plan(pilot)
        assert screen.whole_shown
        await pilot.resize_terminal(80, 24)
        await pilot.pause(0.3)
        assert not screen.whole_shown and rows_in_sight(screen) >= 10 and columns_fit(screen)
        table = screen.query_one("#plan-table", DataTable)
        assert "assistant → Read, Read, Read" not in [table.get_row_at(r)[1].plain for r in range(table.row_count)]


async def test_the_preview_bars_of_an_overflowing_call_have_no_free_cell(tmp_path: Path) -> None:
    """The demo's call #60 is over its 32,000-token window (free -6,891): both preview bars ended ``░·``, a free
    cell the call does not have (rounding left one over and free took it).  At 80 and 200 columns they now end in
    the reserve, and each bar fills its line."""
    from ctxwatch.demo import write_run

    log = tmp_path / "demo.jsonl"
    write_run(log)
    for width, height in ((80, 24), (200, 50)):
        app = CtxwatchApp(str(log))
        async with app.run_test(size=(width, height)) as pilot:
            await loaded(pilot, 60)
            app.query_one("#calls").move_cursor(row=59)
            await pilot.pause()
            screen = await open_preview(pilot)
            assert isinstance(screen, PlanScreen) and screen.call.index == 59
            await pilot.pause()
            lines = str(screen.query_one("#plan-bars", Static).render()).split("\n")
            bars = [ln for ln in lines if ln.startswith(("before ", "after  "))]
            assert len(bars) == 2, lines
            for ln in bars:
                bar = ln[7:].rsplit(" ", 1)[0]
                assert ln.endswith(" 115%") and bar.endswith("░") and "·" not in bar, ln
                assert len(bar) == max(20, width - 18)


async def test_the_budget_knob_keeps_a_harness_fractions_half_step(shared_logs: Path) -> None:
    """Claude Code's budget is 177,000 of the 200,000 window, 0.885: eight presses of ``b`` (0.05 each) give 0.485,
    a budget of int(200,000 x 0.485) = 97,000 tokens (rounded to two places each step it drifted to 0.48 and
    96,000); ``B`` back up once gives 0.535."""
    app = CtxwatchApp(str(shared_logs / LOG))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        app.query_one("#calls").move_cursor(row=9)
        await pilot.pause()
        screen = await open_preview(pilot)
        assert isinstance(screen, PlanScreen) and screen.knobs is not None
        assert screen.knobs.budget_fraction == 177_000 / 200_000
        for _ in range(8):
            await pilot.press("b")
        assert await wait_for(pilot, lambda: screen.plan.budget_tokens == 97_000, 10.0), screen.plan.budget_tokens
        assert screen.knobs.budget_fraction == 0.485
        assert "budget 0.485" in head_text(screen)
        await pilot.press("B")
        assert await wait_for(pilot, lambda: screen.plan.budget_tokens == 107_000, 10.0), screen.plan.budget_tokens
        assert "budget 0.535" in head_text(screen)
