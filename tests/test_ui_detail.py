"""Pilot tests of the call detail and the eviction preview opened from it (tester's report, items 1, 2, 4,
5 and 6).  Expected values come from the log files written here, or from the tokenizer on their text."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_ui_common import append, line, loaded, record, set_utc, wait_for, write_log

from ctxwatch.ui.app import CtxwatchApp
from ctxwatch.ui.screens import DetailScreen, PlanScreen


@pytest.fixture(autouse=True)
def _utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    set_utc(monkeypatch)
    yield
    monkeypatch.undo()
    time.tzset()


async def test_e_in_the_detail_of_a_followed_log_previews_the_call_on_screen(tmp_path: Path) -> None:
    """Following a live log, the selection moves on to each new call; `e` pressed in the detail of call #12
    planned the newest call (#14) instead of the one on screen."""
    log = write_log(tmp_path / "live.jsonl", 12)
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 12)
        await pilot.press("enter")
        detail = app.screen
        assert isinstance(detail, DetailScreen) and detail.call.index == 11  # call #12, the newest
        append(log, line(record(12)) + line(record(13)))
        assert await wait_for(pilot, lambda: app.selected_index == 13, 10.0)  # following: #14 is selected
        assert app.screen is detail
        await pilot.press("e")
        screen = app.screen
        assert isinstance(screen, PlanScreen)
        assert screen.call.index == 11
        assert await wait_for(pilot, lambda: screen.plan is not None, 10.0)
        # call #12 (index 11) holds 12 user turns and 11 assistant replies after the system prompt
        assert len(screen.plan.messages) == 1 + 12 + 11
