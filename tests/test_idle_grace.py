"""``--idle-grace SECONDS`` (the dashboard, ``report --follow``): how long a followed log's half-written last line
may stay unchanged before it is reported as cut (``truncated_tail``); 2 s by default."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from test_ui_common import line, loaded, record, wait_for

from ctxwatch.cli import main
from ctxwatch.ui.app import CtxwatchApp


def half_written(tmp_path: Path) -> Path:
    """Two calls, then the first half of a third with no newline (a writer paused mid-line)."""
    log = tmp_path / "run.jsonl"
    third = line(record(2))
    log.write_text(line(record(0)) + line(record(1)) + third[: len(third) // 2], encoding="utf-8")
    return log


def cut(app: CtxwatchApp) -> bool:
    return any(i.kind == "truncated_tail" for i in app.state.issues)


@pytest.mark.parametrize("grace", [0.3, 30.0])
async def test_the_dashboard_reports_a_cut_line_after_its_idle_grace(tmp_path: Path, grace: float) -> None:
    app = CtxwatchApp(str(half_written(tmp_path)), idle_grace=grace)
    async with app.run_test(size=(100, 30)) as pilot:
        await loaded(pilot, 2)
        if grace < 1:
            assert await wait_for(pilot, lambda: cut(app), seconds=1.5)  # (the default 2 s would not be up)
        else:
            await asyncio.sleep(2.5)  # (past the default grace: a 30 s one has not run out)
            await pilot.pause()
            assert not cut(app)


def test_report_follow_passes_the_grace_on_and_refuses_it_alone(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import ctxwatch.output.follow as follow

    seen: dict[str, Any] = {}
    monkeypatch.setattr(follow, "follow_jsonl", lambda *a, **kw: seen.update(kw))
    log = half_written(tmp_path)
    res = CliRunner().invoke(main, ["report", "--follow", "--idle-grace", "7.5", str(log)])
    assert res.exit_code == 0, res.output
    assert seen["idle_grace"] == 7.5
    res = CliRunner().invoke(main, ["report", "--follow", str(log)])
    assert seen["idle_grace"] == 2.0  # (the default)
    res = CliRunner().invoke(main, ["report", "--idle-grace", "7.5", str(log)])
    assert res.exit_code == 2 and "--idle-grace applies to --follow only" in res.output
