"""Pilot tests of the main screen's panels, exports, session switching and help (tester's report, items 3,
7, 8 and 9).  Expected values come from the log files (read here with plain json), not from ctxwatch."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_ui_common import loaded, set_utc, wait_for

from ctxwatch.ui.app import CtxwatchApp


@pytest.fixture(autouse=True)
def _utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    set_utc(monkeypatch)
    yield
    monkeypatch.undo()
    time.tzset()


def side(app: CtxwatchApp) -> str:
    """The side panel's text, its line breaks undone."""
    assert app.main is not None
    return " ".join(str(app.main.query_one("#side").render()).split())


@pytest.mark.parametrize("size", [(160, 50), (80, 24)])
async def test_the_forecast_of_a_context_of_quota_probes_says_why_there_is_none(shared_logs: Path,
                                                                                 size: tuple[int, int]) -> None:
    """claude-trace logs Claude Code's max_tokens:1 quota probes as their own context; its Forecast said "no
    calls" beside a table of six calls. It says they are quota probes, left out of the forecast."""
    path = shared_logs / "request-response" / "claude-trace_test-traffic_head14.jsonl"
    bodies = [json.loads(ln)["request"]["body"] for ln in path.read_text().splitlines() if ln.strip()]
    probes = sum(1 for b in bodies if b.get("max_tokens") == 1 and not b.get("tools"))
    assert probes == 6
    app = CtxwatchApp(str(path))
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, len(bodies))
        for _ in range(len(app.contexts)):
            if app.context == "probe":
                break
            await pilot.press("c")
        assert app.context == "probe" and len(app.view) == probes
        await pilot.pause()
        assert await wait_for(pilot, lambda: "quota probes" in side(app))
        text = side(app)
        assert f"only quota probes ({probes} calls with max_tokens 1)" in text
        assert "no calls" not in text
        await pilot.press("c")  # the next context still has its own forecast
        await pilot.pause()
        assert app.context != "probe" and "quota probes" not in side(app)


async def test_the_csv_export_says_where_each_history_came_from(shared_logs: Path, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The CSV had floor_source but no history_source: a Claude Code history shown `1,636~` (reported prompt
    minus the context's floor) became a plain number. In this session the floor is inferred from the first
    call, whose whole history is in the file (its history is counted); every later call's history is the
    reported prompt minus that floor."""
    import csv

    monkeypatch.chdir(tmp_path)
    path = shared_logs / "claude-code" / "spotter_4d5611e5_head200.jsonl"
    app = CtxwatchApp(str(path))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        await pilot.press("x")
        assert await wait_for(pilot, lambda: bool(app.saved))
    with open(app.saved[-1], newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        header = list(reader.fieldnames or [])
        rows = list(reader)
    assert header.index("history_source") == header.index("history_tokens") + 1
    assert len(rows) == 12
    assert [r["floor_source"] for r in rows] == ["inferred"] * 12
    assert [r["history_source"] for r in rows] == ["estimated"] + ["inferred"] * 11
    # the floor is the same for all: each inferred history is the reported prompt minus it
    floor = int(rows[0]["floor_tokens"])
    for r in rows[1:]:
        assert int(r["history_tokens"]) == int(r["prompt_tokens_reported"]) - floor
