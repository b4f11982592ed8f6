"""The fleet view (``W``): one row per conversation of an OpenTelemetry Collector export, most at risk first;
Enter shows that conversation alone, ``a`` every conversation again.

Expected rows come from ``report --json`` of the same file, grouped and ordered by a plain reader here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from test_ui_common import loaded, open_fleet, set_utc, wait_for

from ctxwatch.cli import main
from ctxwatch.ui.app import CtxwatchApp
from ctxwatch.ui.screens import FleetScreen

SAMPLE = Path(__file__).resolve().parents[1] / "sample_logs" / "otel_collector.jsonl"

#: 2026-01-15 09:01:00 UTC: a minute after the sample's last call (09:00:24).
NOW = 1768467660.0


def expected_conversations() -> list[tuple[tuple[str | None, str | None], list[int], float | None]]:
    """``((instance, session), call indices, latest known used fraction)`` per conversation, by report --json,
    fullest first (the sample has no flag, so occupancy alone orders them)."""
    doc = json.loads(CliRunner().invoke(main, ["report", "--json", "--no-cache", str(SAMPLE)]).output)
    assert doc["flags"] == []
    groups: dict[tuple[str | None, str | None], list[dict[str, Any]]] = {}
    for c in doc["calls"]:
        inst = c.get("instance") or {}
        name = inst.get("service.instance.id") or inst.get("host.name") or inst.get("service.name")
        groups.setdefault((name, c["session"]), []).append(c)
    out = []
    for key, calls in groups.items():
        known = [c["used_fraction"] for c in calls if c["used_fraction"] is not None]
        out.append((key, [c["index"] for c in calls], known[-1] if known else None))
    out.sort(key=lambda g: -(g[2] if g[2] is not None else -1))
    return out


@pytest.fixture(autouse=True)
def _utc_and_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    set_utc(monkeypatch)
    monkeypatch.setattr(CtxwatchApp, "clock", lambda: NOW)


async def test_the_fleet_lists_each_conversation_most_at_risk_first_and_enter_shows_one() -> None:
    want = expected_conversations()
    assert len(want) == 4
    app = CtxwatchApp(str(SAMPLE))
    async with app.run_test(size=(100, 30)) as pilot:
        await loaded(pilot, 12)
        screen = await open_fleet(pilot)
        assert [r.conversation for r in screen.rows] == [k for k, _, _ in want]
        assert [r.calls for r in screen.rows] == [len(ix) for _, ix, _ in want]
        assert [None if r.used is None else round(r.used, 4) for r in screen.rows] == [u for _, _, u in want]
        # (the sample's last call, #9 of laptop-7-cc at 09:00:24, is 36 s before the clock)
        assert screen.rows[0].age == pytest.approx(36.0)
        await pilot.press("down", "enter")
        assert await wait_for(pilot, lambda: not isinstance(app.screen, FleetScreen))
        key, indices, _ = want[1]
        assert app.conversation == key and app.view == indices
        assert app.selected_index == indices[-1]
        await pilot.press("W")
        assert await wait_for(pilot, lambda: isinstance(app.screen, FleetScreen))
        assert app.screen.selected_row().conversation == key  # type: ignore[attr-defined]
        await pilot.press("a")
        assert await wait_for(pilot, lambda: not isinstance(app.screen, FleetScreen))
        assert app.conversation is None and app.view == list(range(12))


def test_fleet_screen_80x24(snap_compare: Any) -> None:
    """The fleet view at 80x24: four conversations, the fullest first, with their ages a minute after the
    sample's last call."""

    async def run_before(pilot: Any) -> None:
        app = pilot.app
        await loaded(pilot, 12)
        await pilot.press("W")
        assert await wait_for(pilot, lambda: isinstance(app.screen, FleetScreen))
        await pilot.pause()
        assert [r.conversation[0] for r in app.screen.rows] == [k[0] for k, _, _ in expected_conversations()]

    assert snap_compare(CtxwatchApp(str(SAMPLE)), terminal_size=(80, 24), run_before=run_before)


async def test_each_batch_request_is_a_conversation_of_its_own(shared_logs: Path) -> None:
    """A batch folder was one conversation in the fleet view, named by the last call's model, although its
    requests are independent and two models answered them.  Each request is now a row of its own, named by its
    ``custom_id`` with the model that answered it, as a plain reading of the batch output files gives them."""
    folder = shared_logs / "openai-batch"
    answered: dict[str, str] = {}
    for f in folder.glob("*output*.jsonl"):
        for raw in f.read_text().splitlines():
            rec = json.loads(raw)
            answered[rec["custom_id"]] = rec["response"]["body"]["model"]
    assert len(answered) == 120 and len(set(answered.values())) == 2
    app = CtxwatchApp(str(folder))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 120)
        screen = await open_fleet(pilot)
        assert {r.conversation[1]: r.last.model for r in screen.rows} == answered
        assert all(r.calls == 1 for r in screen.rows)
