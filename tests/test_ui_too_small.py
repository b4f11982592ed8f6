"""Below 40x10 the dashboard shows only that the terminal is too small: the keys that open a screen (the call
detail, the eviction preview, the lists, help, the filter, a screenshot) do nothing then, so that nothing is
drawn over that message at a size no screen is laid out for; once the terminal is large enough they work."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_ui_common import loaded, open_detail, open_preview, wait_for, write_log

from ctxwatch.ui.app import CtxwatchApp
from ctxwatch.ui.screens import DetailScreen


@pytest.fixture()
def log(tmp_path: Path) -> Path:
    return write_log(tmp_path / "run.jsonl", 12)


async def test_keys_do_nothing_on_the_too_small_screen_and_work_once_it_grows(log: Path, tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # (s would write a screenshot here)
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(30, 8)) as pilot:
        await loaded(pilot, 12)
        main = app.main
        assert main is not None
        msg = str(main.query_one("#toosmall").render())
        assert msg.startswith("Terminal too small (30x8): ctxwatch needs at least 40x10.")
        for key in ("enter", "e", "d", "i", "F", "W", "question_mark", "slash", "s"):
            await pilot.press(key)
            await pilot.pause()
            assert app.screen is main, key
            assert main.too_small and str(main.query_one("#toosmall").render()) == msg, key
            assert not main.query_one("#filter").has_class("-active"), key
        assert not list(tmp_path.glob("*.svg"))
        await pilot.resize_terminal(80, 24)
        assert await wait_for(pilot, lambda: not main.too_small)
        await pilot.pause()
        detail = await open_detail(pilot)
        assert isinstance(detail, DetailScreen) and detail.call.index == 11
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is main
        await open_preview(pilot)
