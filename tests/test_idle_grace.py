"""``--idle-grace SECONDS`` (the dashboard, ``report --follow``): how long a followed log's half-written last line
may stay unchanged before it is reported as cut (``truncated_tail``); 2 s by default."""

from __future__ import annotations

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
async def test_the_dashboard_reports_a_cut_line_after_its_idle_grace(tmp_path: Path, grace: float,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The half-written line is not reported while the grace has not run out on the tailer's clock (the test's:
    no wall time), past the default 2 s for a grace of 30; it is reported once the grace is up."""
    from ctxwatch.engine import follow
    from ctxwatch.source import FileTailer

    clock = [1000.0]

    class Clocked(FileTailer):
        def __init__(self, *a: Any, **kw: Any) -> None:
            super().__init__(*a, clock=lambda: clock[0], **kw)

    monkeypatch.setattr(follow, "FileTailer", Clocked)
    app = CtxwatchApp(str(half_written(tmp_path)), idle_grace=grace)
    async with app.run_test(size=(100, 30)) as pilot:
        await loaded(pilot, 2)
        follower = app.feed.follower  # type: ignore[union-attr]
        assert isinstance(follower.tailer, Clocked) and follower.tailer.idle_grace == grace
        steps = [0]
        real_step = follower._step

        def step(*a: Any) -> int:
            steps[0] += 1
            return real_step(*a)

        follower._step = step
        short = max(2.5, grace / 2) if grace > 2 else grace - 0.0625  # (past the default 2 s for the 30 s one)
        clock[0] += short
        asked = steps[0]
        assert await wait_for(pilot, lambda: steps[0] >= asked + 2, seconds=30)  # (the feed read twice more)
        await pilot.pause()
        assert not cut(app)
        clock[0] += grace - short + 1  # (past the grace: 0.3 is no binary fraction, so not to the tick)
        assert await wait_for(pilot, lambda: cut(app), seconds=30)


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
