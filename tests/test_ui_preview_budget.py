"""The eviction preview's budget knob past what the window leaves beside the reserve: ``B`` pressed up to 0.98
showed "budget 0.98" (or 0.99) over a budget of 180,000 tokens, 0.90 of the 200,000 window (the budget is capped at the
window minus the reserve).  The knob now shows the fraction in effect, then the one set."""

from __future__ import annotations

from pathlib import Path

from test_ui_common import loaded, open_preview, wait_for
from textual.widgets import Static

from ctxwatch.ui.app import CtxwatchApp

FULL = "claude-code/spotter_4d5611e5_full.jsonl"


async def test_a_capped_budget_shows_the_fraction_in_effect(shared_logs: Path) -> None:
    app = CtxwatchApp(str(shared_logs / FULL))
    async with app.run_test(size=(160, 40)) as pilot:
        await loaded(pilot, 139)
        screen = await open_preview(pilot)
        head = lambda: str(screen.query_one("#plan-head", Static).render())  # noqa: E731
        set_at = screen.knobs.budget_fraction  # type: ignore[union-attr]
        # (Claude Code's budget, 177,000 of the 200,000 window: 0.885, under the cap, shown as set)
        assert set_at == 0.885 and "budget 0.885 (B/b)" in head()
        while screen.knobs.budget_fraction < 0.98:  # type: ignore[union-attr]
            before = screen.knobs.budget_fraction  # type: ignore[union-attr]
            await pilot.press("B")

            def turned(before: float = before) -> bool:
                return screen.plan is not None and screen.plan.policy.budget_fraction > before

            assert await wait_for(pilot, turned, 10.0)
        policy = screen.plan.policy  # type: ignore[union-attr]
        window, reserve = policy.window, policy.reserve_total
        assert (window, reserve) == (200_000, 20_000) and screen.plan.budget_tokens == 180_000  # type: ignore[union-attr]
        set_at = screen.knobs.budget_fraction  # type: ignore[union-attr]
        assert set_at == 0.985  # (0.885 + 2 x 0.05: the first at or past 0.98)
        want = f"budget {(window - reserve) / window:.2f} (0.985 set) (B/b)"  # (0.90 in effect)
        assert await wait_for(pilot, lambda: want in head()), head()


async def test_a_budget_moved_in_the_preview_plans_as_plan_with_that_budget(shared_logs: Path) -> None:
    """Call #61 of a Claude Code session, the budget lowered from the harness's 0.885 to 0.635: the preview kept
    the harness's trigger as a fraction of the budget (0.9435 x 127,000 = 119,825) where ``plan --budget-fraction
    0.635`` takes Claude Code's trigger in tokens, up to the budget (127,000).  They agree now, plan and trigger."""
    import json
    import re

    from click.testing import CliRunner

    from ctxwatch.cli import main

    path = str(shared_logs / FULL)
    args = ["plan", path, "--call", "61", "--budget-fraction", "0.635"]
    text = CliRunner().invoke(main, args).output
    trigger = int(re.search(r"; trigger ([\d,]+)", text).group(1).replace(",", ""))  # type: ignore[union-attr]
    doc = json.loads(CliRunner().invoke(main, [*args, "--json"]).output)
    app = CtxwatchApp(path)
    async with app.run_test(size=(160, 40)) as pilot:
        await loaded(pilot, 139)
        app.query_one("#calls").move_cursor(row=60)
        await pilot.pause()
        assert app.selected_index == 60
        screen = await open_preview(pilot)
        assert screen.knobs.budget_fraction == 0.885  # type: ignore[union-attr]
        for _ in range(5):
            await pilot.press("b")
        assert await wait_for(pilot, lambda: screen.plan.policy.budget_fraction == 0.635, 10.0)  # type: ignore[union-attr]
        plan = screen.plan  # type: ignore[union-attr]
        assert (plan.budget_tokens, plan.trigger_tokens) == (doc["budget_tokens"], trigger) == (127_000, 127_000)
        assert (plan.before_tokens, plan.after_tokens) == (doc["before_tokens"], doc["after_tokens"])
