"""SVG snapshots of the dashboard (pytest-textual-snapshot), each paired with a state assertion.

Inputs are fixed canonical logs (fixed timestamps, ``TZ=UTC``), and only file names are shown, so the
screens do not depend on the machine, the clock or the temporary directory.  Regenerate after a deliberate
change with ``pytest tests/test_ui_snapshots.py --snapshot-update`` and look at the SVGs before committing.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_ui_common import help_shown, loaded, set_utc, wait_for, write_log

from ctxwatch.ui.app import CtxwatchApp, MainScreen
from ctxwatch.ui.screens import DetailScreen, HelpScreen


@pytest.fixture(autouse=True)
def _fixed_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    set_utc(monkeypatch)
    monkeypatch.delenv("NO_COLOR", raising=False)
    yield
    monkeypatch.undo()
    time.tzset()  # back to the machine's zone for the tests that follow


def make_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CtxwatchApp:
    """A 12-call run in a 20,000-token window: calls 9 and 10 are past the trigger, call 11 past the budget.

    The app is started from the log's folder with a relative path, so nothing absolute is on screen.
    """
    write_log(tmp_path / "agent-run.jsonl", 12)
    monkeypatch.chdir(tmp_path)
    return CtxwatchApp("agent-run.jsonl")


def test_main_screen(snap_compare: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = make_app(tmp_path, monkeypatch)

    async def run_before(pilot: Any) -> None:
        await loaded(pilot, 12)
        await pilot.pause()
        assert app.selected_index == 11 and app.follow and app.xaxis == "index"
        assert isinstance(app.screen, MainScreen) and not app.screen.has_class("-compact")

    assert snap_compare(app, terminal_size=(100, 32), run_before=run_before)


def test_main_screen_80x24_older_call(snap_compare: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = make_app(tmp_path, monkeypatch)

    async def run_before(pilot: Any) -> None:
        await loaded(pilot, 12)
        await pilot.press("up", "up", "t")
        await pilot.pause()
        assert app.selected_index == 9 and not app.follow and app.xaxis == "time"
        # (the cost line: gpt-4o at $2.50 / $10 per million, call #10 reports 10,706 prompt and 5 completion tokens)
        assert round(app.costs[9], 6) == round((10_706 * 2.5 + 5 * 10) / 1e6, 6) == 0.026815
        assert app.totals.with_read == 0 and app.totals.unpriced == 0

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def test_detail_screen(snap_compare: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = make_app(tmp_path, monkeypatch)

    async def run_before(pilot: Any) -> None:
        await loaded(pilot, 12)
        await pilot.press("up", "up", "up", "up", "up", "up", "up", "up", "up", "enter")  # call 2
        screen = app.screen
        assert isinstance(screen, DetailScreen) and screen.call.index == 2
        assert await wait_for(pilot, lambda: screen.loaded)
        await pilot.press("down", "down")  # the first user message
        await pilot.pause()
        assert screen.selected_item().label == "user" and not screen.expanded
        # the rows add up to the prompt: the tool schemas sized to the provider's count as plan sizes them (the
        # model's own tokenizer counted the rest exactly), marked, with the raw count beside
        assert [it.kind for it in screen.items][-1] == "framing"
        assert next(it for it in screen.items if it.kind == "tool").raw is not None

    assert snap_compare(app, terminal_size=(100, 30), run_before=run_before)


def test_help_screen(snap_compare: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = make_app(tmp_path, monkeypatch)

    async def run_before(pilot: Any) -> None:
        await loaded(pilot, 12)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = help_shown(app.screen)
        assert "pgup pgdn" in text and "W┃" in text  # (both missing before: keys and marks the dashboard uses)
        assert "inferred history: reported prompt minus the context's floor" in text  # (both meanings of ~)
        assert "13,681≈   calibrated floor: o200k count x the model's median" in text
        assert "calibrated history: the rest of the" in text
        assert "a Claude Code or Codex log has" in text and "(the window minus the reserve:" in text
        # (the preview's keys, y among them; and where s, x and w write: the current folder unless it is followed)
        assert "In the eviction preview (e)" in text and "  y          the whole header" in text
        assert "in the current folder; or, when the current folder is\n  (inside) a folder the dashboard" in text
        assert "$XDG_DATA_HOME/ctxwatch/exports" in text and "screenshot in the current folder" not in text
        assert max(len(line) for line in text.splitlines()) <= 74  # (whole lines in the box at 80 columns)
        # (at 80x24 the rest is below the fold: the box's subtitle says what)
        box = app.screen.query_one("#help-box")
        assert not app.screen.has_class("-wide") and box.max_scroll_y > 0
        assert box.border_subtitle == "↓ more below: keys, preview keys, exports, bar, chart, numbers · pgdn end"

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def test_help_screen_two_columns(snap_compare: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = make_app(tmp_path, monkeypatch)

    async def run_before(pilot: Any) -> None:
        await loaded(pilot, 12)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen) and app.screen.has_class("-wide")
        box = app.screen.query_one("#help-box")
        assert box.max_scroll_y == 0 and box.border_subtitle == "esc or ? closes this help"

    assert snap_compare(app, terminal_size=(160, 42), run_before=run_before)


def test_compact_layout_60x15(snap_compare: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = make_app(tmp_path, monkeypatch)

    async def run_before(pilot: Any) -> None:
        await loaded(pilot, 12)
        await pilot.pause()
        main = app.main
        assert main is not None and main.has_class("-compact") and not main.query_one("#middle").display
        assert app.selected_index == 11
        # The compact layout names the most severe flag (the 12-call run is over the budget at #12).
        assert str(main.query_one("#flagline").render()).startswith("! #12 over budget (+1 more): ")

    assert snap_compare(app, terminal_size=(60, 15), run_before=run_before)


def test_too_small(snap_compare: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = make_app(tmp_path, monkeypatch)

    async def run_before(pilot: Any) -> None:
        await loaded(pilot, 12)
        await pilot.pause()
        assert app.main is not None and app.main.has_class("-tiny")

    assert snap_compare(app, terminal_size=(36, 8), run_before=run_before)


def test_no_color(snap_compare: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    app = make_app(tmp_path, monkeypatch)
    assert app.no_color

    async def run_before(pilot: Any) -> None:
        await loaded(pilot, 12)
        await pilot.pause()
        assert app.selected_index == 11 and os.environ["NO_COLOR"] == "1"

    assert snap_compare(app, terminal_size=(100, 32), run_before=run_before)


def test_readme_screenshot_script_tells_the_demo_story(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``scripts/screenshot.py`` (docs/screenshot.svg) shows the bar over the window, the chart's thresholds and
    the system prompt eviction of the 60-call demo run (README, "The demo in one minute")."""
    import html
    import importlib.util

    root = Path(__file__).resolve().parent.parent
    spec = importlib.util.spec_from_file_location("screenshot", root / "scripts" / "screenshot.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    monkeypatch.setenv("NO_COLOR", "1")  # the script drops it
    out = tmp_path / "shot.svg"
    assert mod.main(["--out", str(out)]) == 0
    assert "NO_COLOR" not in os.environ and os.environ["TZ"] == "UTC"
    text = html.unescape(out.read_text(encoding="utf-8")).replace("\xa0", " ")
    for seen in ("agent-run.jsonl", "60 calls", "window 32,000 (log)", "call #60", "over by", "trigger 15k",
                 "budget 19k", "#38 system_prompt_evicted", "prompt absent from request #38"):
        assert seen in text, seen
    assert str(tmp_path) not in text and "/tmp" not in text


def test_input_problems_screen(snap_compare: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``i``: every input problem of the run, in the order read; the highlighted one's message below."""
    from test_ui_common import line, record

    from ctxwatch.ui.screens import IssuesScreen

    hostile = record(3)
    hostile["response"]["usage"]["prompt_tokens"] = "[bold red]x[/] \x1b[2J"
    lines = [line(record(0)), "{not json\n", line(record(1)), line(record(2)), '{"hello": 1}\n', line(hostile),
             "\x1b[2J[bold red]x[/]\n", line(record(4))]
    (tmp_path / "damaged.jsonl").write_text("".join(lines), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    app = CtxwatchApp("damaged.jsonl")

    async def run_before(pilot: Any) -> None:
        await loaded(pilot, 5)
        await pilot.press("i", "down", "down")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, IssuesScreen)
        assert [(i.line, i.kind) for i in screen.issues] == [(2, "invalid_json"), (5, "unknown_record"),
                                                              (6, "invalid_field"), (7, "invalid_json")]
        issue = screen.selected_issue()
        assert issue is not None and issue.line == 6 and "'[bold red]x[/] \\x1b[2J'" in issue.message

    assert snap_compare(app, terminal_size=(100, 30), run_before=run_before)


def test_session_picker(snap_compare: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``o`` on a Claude Code-like projects folder, filtered: folder and session in two columns, the prefix
    every project folder shares and the session ids' middles left out at 100 columns."""
    from ctxwatch.ui.screens import SessionPicker

    folder = tmp_path / "projects"
    billing = folder / "-home-alice-src-github-acme-billing-service"
    session = "3f2a9c1e-8b7d-4414-9ccd-011d40f70b2a"
    (billing / session / "subagents").mkdir(parents=True)
    (folder / "-home-alice-src-github-acme-frontend-app").mkdir()
    newest = write_log(billing / f"{session}.jsonl", 3, t0=1_735_700_000)
    write_log(billing / session / "subagents" / "agent-a2898e3.jsonl", 2, t0=1_735_700_030)
    write_log(folder / "-home-alice-src-github-acme-frontend-app" / "5c0375b4-2ae5-4f1b-8a6e-7d1e2f3a4b5c.jsonl", 4)
    app = CtxwatchApp(str(folder))

    async def run_before(pilot: Any) -> None:
        await loaded(pilot, 3)
        assert app.log_path == str(newest) and len(app.sessions) == 3
        await pilot.press("o")
        assert await wait_for(pilot, lambda: isinstance(app.screen, SessionPicker))
        await pilot.press(*"service")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SessionPicker) and screen.filter_text == "service"
        assert screen.query_one("OptionList").option_count == 2  # (the session and its subagent transcript)
        # (the tag after the transcript's name, in the session column: the dates line up)
        sub, own = (str(screen.query_one("OptionList").get_option_at_index(i).prompt) for i in (1, 0))
        assert "agent-a2898e3 subagent  2025-01-01" in sub and sub.index("2025-01-01") == own.index("2025-01-01")
        # The line under the list, once the picker's worker read every session: the highlighted one's 3 calls,
        # its peak (call 3: 1,130 + 2 x 1,064 = 3,258 of the 20,000-token window) and first prompt.
        assert await wait_for(pilot, lambda: len(screen.infos) == 3, 10)
        info = screen.infos[str(newest)]
        assert info is not None and (info.calls, info.peak, info.model) == (3, 3258 / 20_000, "gpt-4o")
        assert info.prompt is not None and info.prompt.startswith("step 0: w0 ")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(100, 24), run_before=run_before)


def test_flags_screen_80x24(snap_compare: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``F``: every flag of the context whole at 80x24 (the side panel cuts them), the highlighted one with its
    reason and evidence below; the cursor starts on the selected call's flag."""
    from ctxwatch.ui.screens import FlagsScreen

    app = make_app(tmp_path, monkeypatch)

    async def run_before(pilot: Any) -> None:
        await loaded(pilot, 12)
        await pilot.press("F")
        assert await wait_for(pilot, lambda: isinstance(app.screen, FlagsScreen))
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, FlagsScreen)
        assert [f.call for f in screen.flags] == sorted(f.call for f in app.analyses["main"].flags)
        flag = screen.selected_flag()
        assert flag is not None and flag.call == 11 and flag is screen.flags[-1]

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def test_plan_screen_80x24(snap_compare: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``e`` at 80x24: the header condensed to a line each (title, knobs, the reason's start with ``y`` to see it
    whole), the bars, and the messages filling the rest, their label and preview columns fitted to the width."""
    from ctxwatch.ui.screens import PlanScreen

    app = make_app(tmp_path, monkeypatch)

    async def run_before(pilot: Any) -> None:
        await loaded(pilot, 12)
        await pilot.press("e")
        screen = app.screen
        assert isinstance(screen, PlanScreen)
        assert await wait_for(pilot, lambda: screen.plan is not None)
        await pilot.pause()
        plan = screen.plan
        # (call #12: 12,834 tokens over the 12,000 budget; the 7 oldest messages after the system prompt summarised)
        assert screen.call.index == 11 and plan.fits and (plan.before_tokens, plan.budget_tokens) == (12_834, 12_000)
        assert [m.fate for m in plan.messages] == ["pinned"] + ["summarised"] * 7 + ["kept"] * 16
        assert not screen.whole_shown and screen.query_one("#plan-head").content_size.height == 3
        assert screen.query_one("#plan-table").row_count == len(screen.plan.messages) + 2  # (+ schemas, primer)

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)
