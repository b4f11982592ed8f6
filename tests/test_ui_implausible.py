"""Pilot tests of the dashboard on failure case B13: a reported prompt above its window.

The log is the B13 input of ``../shared/cases/failure_cases.md`` (see ``test_implausible.py``, which writes it
from the case's lines).  By hand: #3 reports 60,000 prompt tokens of its 272,000-token window (22.1 %; floor
1,000~ inferred from the first call, history 59,000~; reserve 0, Codex's rule (no reserve inside the window it
states); free 272,000 - 60,000 = 212,000); #4 reports 4,280,000 of its 570,000-token window: implausible.  The
bar said "prompt 4,280,000 750.9%", "over by 3,795,500!", the table "750.9%!!" and the chart drew a 4.28M bar.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest
from test_implausible import B12_LINES, B13_LINES, b13_file, logged_request_file
from test_ui_common import help_shown, loaded, open_detail, open_preview, wait_for

from ctxwatch.ui.app import CtxwatchApp, write_csv
from ctxwatch.ui.widgets import CallsTable, ContextBar, TrendChart


def bar_text(app: CtxwatchApp) -> str:
    assert app.main is not None
    return str(app.main.query_one(ContextBar).render())


@pytest.mark.parametrize("size", [(120, 35), (80, 24)])
async def test_b13_the_bar_keeps_the_last_plausible_occupancy_and_says_why(tmp_path: Path,
                                                                           size: tuple[int, int]) -> None:
    app = CtxwatchApp(str(b13_file(tmp_path)))
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, 4)
        assert app.main is not None
        bar = app.main.query_one(ContextBar)
        assert app.selected_index == 3 and bar.call is not None and bar.call.index == 3  # following the newest
        text = " ".join(bar_text(app).split())
        assert "over by" not in text and "750.9" not in text and "3,795,500" not in text
        assert "#4 reported 4,280,000 prompt tokens, over its 570,000-token window" in text
        assert "implausible, ignored as occupancy" in text and "the bar shows #3, the last plausible" in text
        assert "call #3 · gpt-5 · used 22.1% of 272,000 (log)" in text
        assert "212,000" in text or "212k" in text  # (the legend's compact form at 80 columns)
        assert bar.drawn is not None and bar.drawn.index == 2
        table = app.main.query_one(CallsTable)
        assert table.cell(3, "used").strip() == "?" and table.cell(3, "reported") == "4,280,000!"
        assert table.cell(2, "used").strip() == "22.1%"
        # (right-aligned alike: the ? under the % signs, the two cells after them left for the ! marks)
        assert table.cell(3, "used").endswith("?  ") and table.cell(2, "used").endswith("%  ")
        # the chart draws no point for the report and keeps #3's thresholds (forecast: window - reserve 0, Codex's rule)
        chart = app.main.query_one(TrendChart)
        assert await wait_for(pilot, lambda: chart.series is not None and len(chart.series.x) == 4)
        s = chart.series
        assert s.reported == [1000, 2000, 60_000, None] and s.total[3] == 0 and s.unsplit[3] == 0
        assert (s.window, s.limit) == (272_000, 272_000 - 0)
        assert chart.axis.top < 1_000_000  # (it was scaled to 4.28M: every plausible call a sliver)
        await pilot.press("k")  # #3 itself: no note
        assert bar.call is not None and bar.call.index == 2 and bar.drawn is bar.call
        assert "implausible" not in bar_text(app)
        await pilot.press("question_mark")  # the help says what the table's "!" after a reported prompt means
        await pilot.pause()
        assert "640,000!  reported, implausible (over the window): no occupancy" in help_shown(app.screen)


async def test_an_implausible_first_call_has_no_bar_and_says_its_occupancy_is_unknown(tmp_path: Path) -> None:
    """With no plausible call before it, nothing stands in: no bar (it drew the window as 85 % free, or
    overflowing), the window, "used ?" and the report marked."""
    path = tmp_path / "first.jsonl"
    path.write_text("\n".join([*B12_LINES[:2], B13_LINES[1]]) + "\n")
    app = CtxwatchApp(str(path))
    async with app.run_test(size=(120, 35)) as pilot:
        await loaded(pilot, 1)
        assert app.main is not None
        bar = app.main.query_one(ContextBar)
        text = " ".join(bar_text(app).split())
        assert not any(glyph in text for glyph in "█▓░▼┃")  # (no bar, no marks row)
        assert "no plausible call before it: occupancy unknown" in text
        assert "used ? of 570,000 (log)" in text and "reported 4,280,000 (implausible)" in text
        assert bar.call is not None and bar.drawn is None


async def test_b13_detail_and_csv_keep_the_raw_report_marked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    monkeypatch.chdir(tmp_path)
    app = CtxwatchApp(str(b13_file(tmp_path)))
    async with app.run_test(size=(120, 35)) as pilot:
        await loaded(pilot, 4)
        screen = await open_detail(pilot)
        head = " ".join(str(screen.query_one("#detail-head").render()).split())
        assert "prompt ? (reported 4,280,000: implausible, no occupancy)" in head
        assert (screen.items[0].label, screen.items[0].tokens) == ("reported prompt: implausible", 4_280_000)
        write_csv(str(tmp_path / "calls.csv"), [app.calls[i] for i in sorted(app.calls)])
    rows = list(csv.DictReader((tmp_path / "calls.csv").open()))
    assert [(r["prompt_tokens_reported"], r["prompt_implausible"], r["free_tokens"], r["used_fraction"])
            for r in rows[2:]] == [("60000", "", "212000", "0.2206"), ("4280000", "yes", "", "")]


async def test_the_eviction_preview_of_an_implausible_report_says_why_there_is_none(tmp_path: Path) -> None:
    """e on #4 said the log "starts mid-session"; and a logged request is not scaled to its implausible report
    (see test_implausible.test_plan_does_not_scale_the_counts_to_an_implausible_report)."""
    from ctxwatch.ui.screens import PlanScreen

    app = CtxwatchApp(str(b13_file(tmp_path)))
    async with app.run_test(size=(120, 35)) as pilot:
        await loaded(pilot, 4)
        await pilot.press("e")
        screen = app.screen
        assert isinstance(screen, PlanScreen)
        assert await wait_for(pilot, lambda: screen.error is not None, 10.0)
        assert screen.error == ("its reported prompt is implausible (4,280,000 tokens, more than its 570,000-token "
                                "window), and this format's floor and history are sized from it: nothing to plan")


async def test_the_eviction_preview_does_not_scale_a_logged_request_to_an_implausible_report(tmp_path: Path
                                                                                             ) -> None:
    path, est = logged_request_file(tmp_path)
    app = CtxwatchApp(str(path))
    async with app.run_test(size=(120, 35)) as pilot:
        await loaded(pilot, 3)
        assert app.selected_index == 2
        screen = await open_preview(pilot)
        assert screen.plan.before_tokens == est  # (it was 200,000: every count x11,764)


def pct_cells(screen: Any) -> dict[str, str]:
    """The detail table's ``% prompt`` cell of each item, by label."""
    table = screen.query_one("#items")
    return {it.label: str(table.get_cell(str(it.position), "pct")) for it in screen.items}


async def test_the_detail_of_an_implausible_report_measures_against_the_estimate(tmp_path: Path) -> None:
    """#3 of :func:`logged_request_file` reports 200,000 (above gpt-4o's 128,000: implausible) for a request we
    count as E tokens (by hand, the OpenAI cookbook).  Its detail computed % prompt against the report plus the
    rows (a "gap" row "reported − estimate" of 200,000 - E, ~100 %).  Now each row is a share of E, and there
    is no gap row."""
    path, est = logged_request_file(tmp_path)
    app = CtxwatchApp(str(path))
    async with app.run_test(size=(140, 35)) as pilot:
        await loaded(pilot, 3)
        assert app.selected_index == 2
        screen = await open_detail(pilot)
        assert not any(it.kind == "gap" for it in screen.items)
        assert sum(it.tokens or 0 for it in screen.items) == est  # (the rows add up to the request)
        cells = pct_cells(screen)
        for it in screen.items:
            assert cells[it.label] == f"{100 * (it.tokens or 0) / est:.1f}%"
        head = " ".join(str(screen.query_one("#detail-head").render()).split())
        assert "prompt ? (reported 200,000: implausible, no occupancy)" in head
        assert f"% of the estimate {est:,}" in head


async def test_the_claude_code_detail_of_an_implausible_report_shows_no_percentages(tmp_path: Path) -> None:
    """Claude Code infers the floor from the report, so an implausible call (#1: 5 + 100 + 4,000,000) has no
    plausible prompt size at all: the report's row said "99.9%" of itself plus the messages.  It is shown as
    reported, and no row has a percentage."""
    from test_implausible_followups import claude_code_file

    app = CtxwatchApp(str(claude_code_file(tmp_path, [4_000_000, 20_000])))
    async with app.run_test(size=(140, 35)) as pilot:
        await loaded(pilot, 2)
        await pilot.press("k")
        assert app.selected_index == 0
        screen = await open_detail(pilot)
        first = screen.items[0]
        assert (first.kind, first.label, first.tokens) == ("reported", "reported prompt: implausible", 4_000_105)
        assert set(pct_cells(screen).values()) == {""}


async def test_the_table_marks_a_reported_0_as_report_does(tmp_path: Path) -> None:
    """A reported 0 with an estimate standing in (:func:`test_implausible_followups.zero_report_file`): the
    reported cell is "0!", and used % is the estimate E2 of the 128,000-token window."""
    from test_implausible_followups import zero_report_file

    path, e2 = zero_report_file(tmp_path)
    app = CtxwatchApp(str(path))
    async with app.run_test(size=(120, 35)) as pilot:
        await loaded(pilot, 4)
        assert app.main is not None
        table = app.main.query_one(CallsTable)
        assert table.cell(1, "reported") == "0!" and table.cell(0, "reported").strip().endswith("!") is False
        assert table.cell(1, "used").strip().startswith(f"{100 * e2 / 128_000:.1f}%")


async def test_a_claude_code_implausible_response_written_line_by_line_is_one_input_problem(tmp_path: Path
                                                                                            ) -> None:
    """A followed Claude Code session gets a response in three lines (one content block each, every line a copy
    of its usage: output 1, 1, then the final 10), whose prompt 5 + 100 + 230,000 is above claude-opus-4-1's
    200,000 tokens.  The reader emits the call at each line; the input problems list one implausible_usage note,
    at the response's first line (line 6: after two turns of two lines and the new user line), and the side
    panel and the input-problems list count it as the report header does (``issues=1 (0 bad lines, 1 note)``)."""
    import json

    from click.testing import CliRunner
    from helpers import claude_code_turn
    from test_implausible import cc_note, opus_41_file

    from ctxwatch.cli import main
    from ctxwatch.ui.screens import IssuesScreen

    path = opus_41_file(tmp_path, [150_000, 180_000])
    user, final = claude_code_turn(2, 230_000, "a1", "2025-10-01T00:00:02Z")
    first = json.loads(json.dumps(final))
    first["message"]["usage"]["output_tokens"] = 1  # (the streaming placeholder of the earlier lines)
    second = json.loads(json.dumps(first))
    first["uuid"], second["uuid"], second["parentUuid"] = "a2-1", "a2-2", "a2-1"
    final["parentUuid"] = "a2-2"
    app = CtxwatchApp(str(path))
    async with app.run_test(size=(160, 70)) as pilot:
        await loaded(pilot, 2)
        for row in (user, first, second, final):
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(row) + "\n")
            await pilot.pause(0.3)
        assert await wait_for(pilot, lambda: len(app.calls) == 3 and app.input_problems() != [], 10.0)
        await pilot.pause(0.5)
        assert [(i.line, i.kind, i.message) for i in app.input_problems()] == [
            (6, "implausible_usage", cc_note(230_000))]
        assert app.main is not None
        side = " ".join(str(app.main.query_one("#side").render()).split())
        # (one problem, listed by the side panel: it has room for each since the legend left it)
        assert "Input problems (0 bad lines, 1 note) line 6: implausible_usage i shows its message" in side
        await pilot.press("i")
        await pilot.pause()
        assert isinstance(app.screen, IssuesScreen)
        assert "0 bad lines, 1 note" in " ".join(str(app.screen.query_one("#issues-head").render()).split())
    head = CliRunner().invoke(main, ["report", str(path)]).output.splitlines()[0]
    assert head.endswith("calls=3  issues=1 (0 bad lines, 1 note)")
