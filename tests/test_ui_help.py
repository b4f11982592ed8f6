"""Pilot tests of the help screen's layout: at 80x24 it scrolls and says what is below the fold; on a wide
terminal it is two columns that fit at 50 rows."""

from __future__ import annotations

from pathlib import Path

from test_ui_common import loaded, wait_for, write_log
from textual.geometry import Region
from textual.widget import Widget

from ctxwatch.ui.app import CtxwatchApp
from ctxwatch.ui.screens import HelpScreen
from ctxwatch.ui.screens.help import CLOSE

SECTIONS = ("#help-keys", "#help-plan", "#help-exports", "#help-bar", "#help-chart", "#help-numbers")


def shown(box: Widget, selector: str) -> bool:
    """Whether the widget ``selector`` is whole in the visible part of the scrolling ``box``."""
    region = box.screen.query_one(selector).region
    return bool(region) and box.content_region.contains_region(region)


def app_on(tmp_path: Path) -> CtxwatchApp:
    write_log(tmp_path / "agent-run.jsonl", 12)
    return CtxwatchApp(str(tmp_path / "agent-run.jsonl"))


async def test_at_80x24_the_help_scrolls_and_names_what_is_below(tmp_path: Path) -> None:
    """At 80x24 the preview's keys and the exports were below the fold with nothing saying so (the scrollbar a
    one-cell sliver): the box's subtitle names the sections not read to their end, the keys scroll them into
    view, and at the end the subtitle says how to close."""
    app = app_on(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, 12)
        await pilot.press("question_mark")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, HelpScreen) and not screen.has_class("-wide")
        box = screen.query_one("#help-box")
        assert app.focused is box and box.show_vertical_scrollbar and box.max_scroll_y > 0
        assert box.border_title == "Help"
        assert box.border_subtitle == "↓ more below: keys, preview keys, exports, bar, chart, numbers · pgdn end"
        assert not shown(box, "#help-plan") and not shown(box, "#help-exports")
        # (every line whole in the box: the 74-cell lines fit its 75 cells beside the scrollbar)
        assert box.content_region.width - box.scrollbar_size_vertical >= 74

        await pilot.press("pagedown")
        # (the subtitle follows the scroll once it has settled: on a loaded machine a single pause can be too soon)
        await wait_for(pilot, lambda: box.border_subtitle == "↓ more below: bar, chart, numbers · pgdn end")
        assert shown(box, "#help-plan") and shown(box, "#help-exports")
        assert box.border_subtitle == "↓ more below: bar, chart, numbers · pgdn end"

        await pilot.press("end")
        await wait_for(pilot, lambda: box.border_subtitle == "esc or ? closes this help")
        assert shown(box, "#help-numbers") and shown(box, "#help-close")
        assert box.border_subtitle == "esc or ? closes this help"

        await pilot.press("home")
        await wait_for(pilot, lambda: box.border_subtitle.startswith("↓ more below: keys,"))
        assert shown(box, "#help-plan") is False and box.border_subtitle.startswith("↓ more below: keys,")


async def test_a_wide_terminal_shows_the_whole_help_in_two_columns(tmp_path: Path) -> None:
    """At 200x50 every section is on screen at once, the legend beside the keys; narrowed to 80 columns the
    help is one column again and says what is below."""
    app = app_on(tmp_path)
    async with app.run_test(size=(200, 50)) as pilot:
        await loaded(pilot, 12)
        await pilot.press("question_mark")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, HelpScreen) and screen.has_class("-wide")
        box = screen.query_one("#help-box")
        assert box.max_scroll_y == 0 and all(shown(box, s) for s in (*SECTIONS, "#help-close"))
        keys, bar = screen.query_one("#help-keys").region, screen.query_one("#help-bar").region
        assert bar.x >= keys.right and bar.y == keys.y  # side by side, level
        assert box.border_subtitle == "esc or ? closes this help"

        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        await pilot.pause()
        assert not screen.has_class("-wide") and box.max_scroll_y > 0
        assert screen.query_one("#help-bar").region.y > screen.query_one("#help-exports").region.y
        assert box.border_subtitle.startswith("↓ more below: ")
        assert box.region == Region(0, 0, 80, 24)


async def test_a_jump_without_animation_names_what_is_below_where_it_lands(tmp_path: Path) -> None:
    """The subtitle is worked out from the sections' places after the scroll is drawn: a jump in one step (as
    a loaded machine's last animation frame is) lands with the subtitle of where it landed, not of where the
    box was a frame before."""
    app = app_on(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, 12)
        await pilot.press("question_mark")
        await pilot.pause()
        box = app.screen.query_one("#help-box")
        box.scroll_to(y=box.max_scroll_y, animate=False)
        await wait_for(pilot, lambda: box.border_subtitle == CLOSE)
        assert shown(box, "#help-close") and box.border_subtitle == CLOSE
        box.scroll_to(y=0, animate=False)
        await wait_for(pilot, lambda: box.border_subtitle != CLOSE)
        assert not shown(box, "#help-exports") and "exports" in box.border_subtitle
