"""A session's last call is its latest call time, in ``report --sessions`` as in the session picker (``o``):
session fe5e1c67's subagent calls are written out of time order, the file's last call (00:55:38) being older
than one written before it (00:55:48).  The expected time is read from the transcript with plain json."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_ui_common import set_utc, wait_for

from ctxwatch.cli import main
from ctxwatch.ui.app import CtxwatchApp
from ctxwatch.ui.screens import SessionPicker

NAME = "ccviewer_fe5e1c67_v1.0.98_head200.jsonl"


def call_times(path: Path) -> list[datetime]:
    """Each call's time in file order: the first line of each response (assistant lines with usage, one per
    content block, sharing ``message.id`` and ``requestId``)."""
    seen: dict[tuple[str, str], datetime] = {}
    for line in path.read_text().splitlines():
        d = json.loads(line)
        if d.get("type") == "assistant" and d.get("message", {}).get("usage"):
            key = (d["message"]["id"], d.get("requestId", ""))
            seen.setdefault(key, datetime.fromisoformat(d["timestamp"].replace("Z", "+00:00")))
    return list(seen.values())


@pytest.fixture
def session(shared_logs: Path) -> tuple[Path, datetime]:
    path = shared_logs / "claude-code" / NAME
    times = call_times(path)
    latest = max(times)
    # (the case: the file's last call is not its latest)
    assert times[-1].strftime("%H:%M:%S") == "00:55:38" and latest.strftime("%H:%M:%S") == "00:55:48"
    return path, latest


def test_report_sessions_gives_the_latest_call_time(session: tuple[Path, datetime]) -> None:
    path, latest = session
    doc = json.loads(CliRunner().invoke(main, ["report", "--json", "--no-cache", str(path)]).output)
    assert [s["last_timestamp"][:19] for s in doc["sessions"]] == [latest.strftime("%Y-%m-%dT%H:%M:%S")]
    text = CliRunner().invoke(main, ["report", "--sessions", "--no-cache", str(path)]).output
    row = next(x for x in text.splitlines() if x.startswith("fe5e1c67-"))
    assert row.split()[1] == latest.strftime("%Y-%m-%dT%H:%M:%S")


def test_the_summary_gives_the_latest_call_time(session: tuple[Path, datetime]) -> None:
    from ctxwatch.ui.summaries import summarize

    path, latest = session
    info = summarize(str(path))
    assert info is not None and info.last == pytest.approx(latest.timestamp())


async def test_the_picker_shows_the_latest_call_time(session: tuple[Path, datetime], shared_logs: Path,
                                                    tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from textual.widgets import OptionList

    set_utc(monkeypatch)
    path, latest = session
    folder = tmp_path / "project"
    folder.mkdir()
    shutil.copyfile(path, folder / NAME)
    shutil.copyfile(shared_logs / "claude-code" / "ccviewer_1af7fc5e_v1.0.98_init.jsonl", folder / "other.jsonl")
    app = CtxwatchApp(str(folder))
    async with app.run_test(size=(140, 30)) as pilot:
        assert await wait_for(pilot, lambda: app.loaded and len(app.sessions) == 2, 15)
        await pilot.press("o")
        assert await wait_for(pilot, lambda: isinstance(app.screen, SessionPicker))
        screen = app.screen
        assert isinstance(screen, SessionPicker)
        assert await wait_for(pilot, lambda: len(screen.infos) == 2, 15)
        await pilot.pause()
        ol = screen.query_one(OptionList)
        row = next(str(ol.get_option_at_index(i).prompt) for i in range(ol.option_count)
                   if NAME in str(ol.get_option_at_index(i).prompt))
        assert latest.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S") in row, row


def test_span_with_by_hand() -> None:
    from ctxwatch.model import span_with

    assert span_with(None, None) is None
    assert span_with(None, 5.0) == (5.0, 5.0)
    assert span_with((5.0, 9.0), None) == (5.0, 9.0)
    # (a call written after a later one widens nothing at the end: the last call is the latest time)
    assert span_with((5.0, 9.0), 7.0) == (5.0, 9.0)
    assert span_with((5.0, 9.0), 3.0) == (3.0, 9.0) and span_with((5.0, 9.0), 11.0) == (5.0, 11.0)
