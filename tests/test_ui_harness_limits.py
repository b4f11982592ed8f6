"""The dashboard draws a harness's log against its harness's own limits, as ``report``, ``check`` and ``plan``
judge it: the bar's and the chart's trigger and budget, the table's marks and the eviction preview's reserve and
budget.  Expected values: Claude Code's rule worked by hand at a 200,000 window (reserve 20,000; effective window
180,000; trigger 13,000 below it, budget 3,000 below it), Codex's from ``plan --json`` and by hand (its window is
258,400, 95 % of 272,000; it compacts at 90 % of 272,000)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_ui_common import loaded, wait_for

from ctxwatch.cli import main
from ctxwatch.ui.app import CtxwatchApp
from ctxwatch.ui.screens import PlanScreen
from ctxwatch.ui.widgets.bar import bar_parts
from ctxwatch.ui.widgets.series import build_series

CASES = [
    ("claude-code/spotter_4d5611e5_full.jsonl", 200_000, 20_000, 167_000, 177_000),
    ("codex-rollout/rollout-2025-11-17T15-30-28-019a93b9_codex0.58.0.jsonl", 258_400, 0, 244_800, 258_400),
]


@pytest.mark.parametrize(("rel", "window", "reserve", "trigger", "budget"), CASES)
async def test_the_dashboard_draws_a_harness_log_against_its_own_limits(shared_logs: Path, rel: str, window: int,
                                                                       reserve: int, trigger: int,
                                                                       budget: int) -> None:
    path = shared_logs / rel
    plan = json.loads(CliRunner().invoke(main, ["plan", "--json", "--no-cache", str(path)]).output)
    assert plan["budget_tokens"] == budget
    app = CtxwatchApp(str(path))
    async with app.run_test(size=(140, 40)) as pilot:
        await loaded(pilot)
        last = app.calls[max(app.calls)]
        assert (last.window, last.reserve_tokens) == (window, reserve)
        parts = bar_parts(last, app.settings, app.calibrations.breakdown(last))
        assert (parts.trigger, parts.budget) == (trigger, budget)
        series = build_series(app.view_calls(), app.settings, "index", 60, app.calibrations)
        assert (series.trigger, series.budget) == (trigger, budget)
        await pilot.press("e")
        assert await wait_for(pilot, lambda: isinstance(app.screen, PlanScreen)
                              and app.screen.plan is not None, 20)
        screen = app.screen
        assert isinstance(screen, PlanScreen) and screen.plan is not None
        assert screen.knobs.reserve_tokens == reserve
        assert screen.plan.budget_tokens == budget and screen.plan.trigger_tokens == trigger
