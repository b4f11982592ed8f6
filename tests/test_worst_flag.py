"""The status line and the fleet view (``W``) name the same worst flag of a run: the most severe, then the one
on the most recent call (:func:`ctxwatch.analysis.worst_flag`).  The demo run has three critical flags, on #37,
#38 and #60: both name #60's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_ui_common import loaded, open_fleet

from ctxwatch.analysis import Flag
from ctxwatch.cli import main
from ctxwatch.ui.app import CtxwatchApp


def test_worst_flag_by_hand() -> None:
    from ctxwatch.analysis import worst_flag

    flags = [Flag("window_forecast", "critical", 36, ""), Flag("system_prompt_evicted", "critical", 37, ""),
             Flag("format_drift", "warn", 40, ""), Flag("reserve_breached", "critical", 59, ""),
             Flag("late_info", "info", 70, "")]
    assert worst_flag(flags) is flags[3]
    assert worst_flag(flags[:3]) is flags[1]  # (the most severe before the most recent: #41 is only warn)
    assert worst_flag([flags[2], flags[4]]) is flags[2]
    one_call = [Flag("a", "critical", 5, ""), Flag("b", "critical", 5, "")]
    assert worst_flag(one_call) is one_call[0]
    assert worst_flag([]) is None


@pytest.fixture(scope="module")
def demo_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("demo") / "demo.jsonl"
    res = CliRunner().invoke(main, ["demo", "--write", str(path)])
    assert res.exit_code == 0, res.output
    return path


def _expected(demo_log: Path) -> tuple[str, str, int]:
    """The critical flag on the latest call, read from ``check --json`` with plain json (the run has one
    conversation, one context and no compaction: its flags are all the current episode's)."""
    doc = json.loads(CliRunner().invoke(main, ["check", "--json", "--no-cache", str(demo_log)]).output)
    critical = [f for f in doc["flags"] if f["severity"] == "critical"]
    assert sorted(f["number"] for f in critical) == [37, 38, 60]
    last = max(critical, key=lambda f: f["call"])
    return last["severity"], last["kind"], last["call"]


async def test_the_status_line_and_the_fleet_view_name_the_same_flag(demo_log: Path) -> None:
    severity, kind, call = _expected(demo_log)
    assert (severity, kind, call + 1) == ("critical", "reserve_breached", 60)
    res = CliRunner().invoke(main, ["statusline", "--no-cache", str(demo_log)])
    assert res.exit_code == 0, res.output
    assert res.output.strip().endswith(f"· !! {kind} #{call + 1}"), res.output
    app = CtxwatchApp(str(demo_log))
    async with app.run_test(size=(120, 30)) as pilot:
        await loaded(pilot, 60)
        screen = await open_fleet(pilot)
        assert [r.worst for r in screen.rows] == [(severity, kind, call)]
