"""Keys about the selected call (``e``, ``d``, Enter, ctrl+c) and the CSV of the view (``x``) with a filter that
shows no call.  A highlight the table posted just before the filter emptied it (an arrow key, or a live call
followed, while the filter was applied) reached the app afterwards and selected its call again: ``e`` and ``d``
opened on call #4, which the view hid.  Such a highlight is now dropped, and the keys act only on a call the
view shows, else say why; ``x`` wrote a CSV of headings alone, and now says why it writes none."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_ui_common import listening, loaded, write_log

from ctxwatch.ui.app import CtxwatchApp
from ctxwatch.ui.main import MainScreen


@pytest.mark.parametrize("in_flight", [True, False], ids=["highlight-in-flight", "typed"])
async def test_keys_about_the_call_do_nothing_when_the_filter_shows_none(tmp_path: Path, in_flight: bool) -> None:
    app = CtxwatchApp(str(write_log(tmp_path / "run.jsonl", 6)))
    said = listening(app)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, 6)
        assert app.main is not None
        if in_flight:
            app.main.table.move_cursor(row=3)  # (its highlight, of call #4, is still on its way...)
            app.apply_filter("zzz")  # (...when the filter empties the view)
        else:
            await pilot.press("home", "down", "down", "down", "slash", *"zzz", "enter")
        await pilot.pause(0.3)
        assert app.filter_text == "zzz" and app.view == []
        assert app.state.selected_call() is None
        why = "no call selected: the filter 'zzz' matches none (esc clears it)"
        for key, expected in (("e", why), ("d", why), ("enter", why),
                              ("ctrl+c", "nothing to copy here: select text with the mouse first"),
                              ("x", "CSV not written: the filter 'zzz' matches none (esc clears it)")):
            await pilot.press(key)
            await pilot.pause(0.2)
            assert isinstance(app.screen, MainScreen), (key, type(app.screen).__name__)
            assert said and said[-1] == expected, (key, said)
            said.clear()


async def test_the_chart_says_the_filter_matches_no_call(tmp_path: Path) -> None:
    """A filter that matches no call leaves the chart empty: it says so, not that no call was read yet; esc
    (the filter cleared) plots the calls again."""
    from ctxwatch.ui.widgets.chart import TrendChart

    app = CtxwatchApp(str(write_log(tmp_path / "run.jsonl", 6)))
    async with app.run_test(size=(100, 30)) as pilot:
        await loaded(pilot, 6)
        assert app.main is not None
        chart = app.main.query_one(TrendChart)
        await pilot.press("slash", *"zzz", "enter")
        await pilot.pause(0.7)  # (the chart redraws at most twice a second)
        assert app.view == []
        text = chart.render().plain
        assert "no calls match the filter" in text and "no calls to plot yet" not in text
        app.apply_filter("")
        await pilot.pause(0.7)
        assert len(app.view) == 6 and chart.series is not None and len(chart.series.x) == 6
        assert "no calls match the filter" not in chart.render().plain
