"""The progress line a headless command draws on a terminal while it reads, and the engine's per-file progress it
is drawn from.  Expected counts and sizes come from the folder itself (``os.walk``, ``os.path.getsize``), never
from the engine."""

from __future__ import annotations

import io
import json
import os
import shutil
from pathlib import Path

import pytest

from ctxwatch.cli import progress as prog
from ctxwatch.cli.progress import ReadProgress
from ctxwatch.config import Settings

SAMPLES = Path(__file__).resolve().parent.parent / "sample_logs"


class Terminal(io.StringIO):
    """Standard error on a terminal."""

    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _folder(tmp_path: Path) -> Path:
    """A folder of the project's sample session logs, one of them in a subfolder."""
    folder = tmp_path / "logs"
    (folder / "sub").mkdir(parents=True)
    for name in ("claude_code_session.jsonl", "codex_rollout.jsonl", "gemini_cli_session.jsonl"):
        shutil.copy(SAMPLES / name, folder / name)
    shutil.copy(SAMPLES / "anthropic_messages.jsonl", folder / "sub" / "anthropic_messages.jsonl")
    return folder


def _logs(folder: Path) -> list[Path]:
    return [Path(d) / f for d, _, fs in os.walk(folder) for f in fs if f.endswith(".jsonl")]


def test_the_line_waits_then_is_drawn_at_most_so_often_and_rubbed_out() -> None:
    err, clock = Terminal(), Clock()
    shown = ReadProgress(err, clock)
    assert shown.on
    shown.folder(1, 4, 10, 40_000_000)
    assert err.getvalue() == ""  # (a read quicker than SHOW_AFTER draws nothing)
    clock.now += prog.SHOW_AFTER
    shown.folder(2, 4, 20_000_000, 40_000_000)
    assert err.getvalue() == "\rctxwatch: reading logs: 2 of 4 files, 20 of 40 MB"
    shown.folder(3, 4, 30_000_000, 40_000_000)  # (sooner than EVERY after the last drawing: not drawn)
    assert err.getvalue().count("\r") == 1
    clock.now += prog.EVERY + 0.001
    shown.folder(4, 4, 40_000_000, 40_000_000)
    drawn = "ctxwatch: reading logs: 4 of 4 files, 40 of 40 MB"
    assert err.getvalue().endswith("\r" + drawn)
    shown.close()
    assert err.getvalue().endswith("\r" + drawn + "\r" + " " * len(drawn) + "\r")
    shown.close()  # (once rubbed out, nothing more)
    assert err.getvalue().endswith(" " * len(drawn) + "\r")


def test_a_shorter_line_covers_the_longer_one_before_it() -> None:
    err, clock = Terminal(), Clock()
    shown = ReadProgress(err, clock)
    clock.now += prog.SHOW_AFTER
    shown.file(5_500_000, 12_000_000)
    first = "ctxwatch: reading the log: 5.5 of 12 MB (45%)"
    assert err.getvalue() == "\r" + first
    clock.now += prog.EVERY + 0.001
    shown.folder(1, 2, 0, 0)  # (nothing left to read but loading what the cache kept: no sizes)
    second = "ctxwatch: reading logs: 1 of 2 files"
    assert err.getvalue() == "\r" + first + "\r" + second + " " * (len(first) - len(second))


@pytest.mark.parametrize("why", ["not a terminal", "turned off"])
def test_no_line_unless_on_a_terminal_and_not_turned_off(why: str, monkeypatch: pytest.MonkeyPatch) -> None:
    err, clock = (io.StringIO(), Clock()) if why == "not a terminal" else (Terminal(), Clock())
    if why == "turned off":
        monkeypatch.setenv("CTXWATCH_NO_PROGRESS", "1")
    shown = ReadProgress(err, clock)
    clock.now += 10
    shown.folder(1, 1, 1, 1)
    shown.close()
    assert not shown.on and err.getvalue() == ""


@pytest.mark.parametrize("how", ["serial", "cache"])
def test_the_engine_tells_of_every_file_of_a_folder(tmp_path: Path, how: str) -> None:
    from ctxwatch.engine import load_many
    from ctxwatch.engine.cache import RunCache

    folder = _folder(tmp_path)
    logs = _logs(folder)
    total = sum(os.path.getsize(p) for p in logs)
    cache = RunCache(str(tmp_path / "cache.sqlite3")) if how == "cache" else None
    told: list[tuple[int, int, int, int]] = []
    run = load_many([str(folder)], None, Settings(), cache=cache, progress=lambda *a: told.append(a))
    assert run.calls
    assert told == sorted(told) and told[-1] == (len(logs), len(logs), total, total)
    assert [t[0] for t in told] == list(range(1, len(logs) + 1))
    if cache is not None:  # (read again: every file's result is kept, nothing left to read)
        told.clear()
        load_many([str(folder)], None, Settings(), cache=cache, progress=lambda *a: told.append(a))
        assert told[-1] == (len(logs), len(logs), 0, 0)
        cache.close()


def test_report_draws_the_line_on_a_terminal_and_writes_the_same_output(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from ctxwatch.cli.load import load_paths
    from ctxwatch.output.report import report_json

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(prog, "SHOW_AFTER", 0.0)
    monkeypatch.setattr(prog, "EVERY", 0.0)
    folder = _folder(tmp_path)
    logs = _logs(folder)
    plain = report_json(load_paths((str(folder),), None, Settings()))
    err = Terminal()
    monkeypatch.setattr("sys.stderr", err)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "other-cache"))  # (a cold read again)
    drawn = report_json(load_paths((str(folder),), None, Settings()))
    assert json.dumps(drawn, sort_keys=True) == json.dumps(plain, sort_keys=True)
    lines = [part.rstrip() for part in err.getvalue().split("\r") if part.strip()]
    mb = sum(os.path.getsize(p) for p in logs) / 1e6
    assert lines[-1] == f"ctxwatch: reading logs: {len(logs)} of {len(logs)} files, {mb:,.1f} of {mb:,.1f} MB"
    assert err.getvalue().endswith("\r" + " " * len(lines[-1]) + "\r")  # (rubbed out before the output)
    assert capsys.readouterr().out == ""
