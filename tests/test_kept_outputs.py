"""A command's whole output kept for unchanged inputs (``ctxwatch.engine.outputs``): ``report`` (``--json``,
``--jsonl``, the text tables) of logs none of which changed is written again without reading any of them, and
every change that could change a number reads
them again.  The expected output is always that of a read with the cache off (``--no-cache``), made at the same
moment; whether the logs were read is seen by a spy on the command's loading step."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

import ctxwatch.cli.report as report_cli
from ctxwatch.cli import main
from ctxwatch.engine import cache as cache_mod
from ctxwatch.engine import outputs

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _own(own_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test here has a cache folder of its own, the cache on; and its logs, written a moment ago, are never
    taken as growing (the output of a growing log has a test of its own, the last one)."""
    monkeypatch.setattr(outputs, "KEEP_IDLE_SECONDS", 0.0)


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, ...]]:
    """The paths each report had to load (read through the per-file cache or from the start)."""
    seen: list[tuple[str, ...]] = []
    real = report_cli.load_paths

    def spy(paths, fmt, settings, **kw):  # type: ignore[no-untyped-def]
        seen.append(tuple(paths))
        return real(paths, fmt, settings, **kw)

    monkeypatch.setattr(report_cli, "load_paths", spy)
    return seen


def report(*args: str) -> bytes:
    res = CliRunner().invoke(main, ["report", *args])
    assert res.exit_code == 0, res.output
    return res.stdout_bytes


def folder_of_logs(shared: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "logs"
    (folder / "sub").mkdir(parents=True)
    for p in sorted((shared / "claude-code").glob("spotter_*.jsonl"))[:3]:
        shutil.copy(p, folder / p.name)
    shutil.copy(ROOT / "sample_logs" / "codex_rollout.jsonl", folder / "sub" / "rollout.jsonl")
    return folder


def test_an_unchanged_folder_is_answered_without_reading_it(shared_logs: Path, tmp_path: Path,
                                                           loads: list[tuple[str, ...]]) -> None:
    folder = folder_of_logs(shared_logs, tmp_path)
    for shape in (["--json"], ["--jsonl"], [], ["--sessions"]):
        want = report(*shape, "--no-cache", str(folder))
        loads.clear()
        assert report(*shape, str(folder)) == want  # (read, and kept)
        assert report(*shape, str(folder)) == want  # (written from the cache)
        assert report(*shape, str(folder)) == want
        assert loads == [(str(folder),)], shape


def test_every_change_to_an_input_reads_them_again(shared_logs: Path, tmp_path: Path,
                                                  loads: list[tuple[str, ...]]) -> None:
    folder = folder_of_logs(shared_logs, tmp_path)
    grown = folder / "sub" / "rollout.jsonl"
    first = sorted(folder.glob("spotter_*.jsonl"))[0]

    def same_as_cold(*extra: str) -> None:
        loads.clear()
        want = report("--json", "--no-cache", *extra, str(folder))
        assert report("--json", *extra, str(folder)) == want
        assert len(loads) == 2, "the change was not seen"  # (the cold read, and the one through the cache)
        loads.clear()
        assert report("--json", *extra, str(folder)) == want and loads == []  # (kept again)

    report("--json", str(folder))
    lines = grown.read_bytes().splitlines(keepends=True)
    grown.write_bytes(b"".join(lines[:-1]))  # (shorter)
    same_as_cold()
    grown.write_bytes(b"".join(lines))  # (grew)
    same_as_cold()
    data = first.read_bytes()
    at = data.index(b'"output_tokens":') + len(b'"output_tokens":')
    digit = data[at:at + 1]
    assert digit.isdigit()
    first.write_bytes(data[:at] + (b"7" if digit != b"7" else b"8") + data[at + 1:])  # (same size, one count)
    same_as_cold()
    before = first.stat()
    first.write_bytes(data)  # (the same size again, and its modification time put back, as touch -r does)
    os.utime(first, ns=(before.st_atime_ns, before.st_mtime_ns))
    same_as_cold()
    copy = first.with_suffix(".tmp")
    shutil.copy(first, copy)
    copy.replace(first)  # (replaced by a copy: another file, the same bytes)
    same_as_cold()
    shutil.copy(first, folder / "sub" / "another.jsonl")  # (a log added)
    same_as_cold()
    first.unlink()  # (a log removed)
    same_as_cold()
    same_as_cold("--window", "50000")  # (a setting)
    same_as_cold("--format", "claude-code")  # (a forced format)


def test_another_ctxwatch_or_another_day_reads_them_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         loads: list[tuple[str, ...]]) -> None:
    log = tmp_path / "run.jsonl"
    shutil.copy(ROOT / "sample_logs" / "openai_chat_demo.jsonl", log)
    want = report("--json", str(log))
    assert report("--json", str(log)) == want and len(loads) == 1
    monkeypatch.setattr(outputs, "code_fingerprint", lambda: "another ctxwatch")
    assert report("--json", str(log)) == want and len(loads) == 2
    monkeypatch.setattr(outputs, "utc_day", lambda: "2999-01-01")  # (a call without a timestamp is priced at the
    assert report("--json", str(log)) == want and len(loads) == 3  # day's rates)


def test_a_damaged_kept_output_is_not_written(tmp_path: Path, loads: list[tuple[str, ...]]) -> None:
    log = tmp_path / "run.jsonl"
    shutil.copy(ROOT / "sample_logs" / "claude_code_session.jsonl", log)
    want = report("--json", "--no-cache", str(log))
    assert report("--json", str(log)) == want
    db = sqlite3.connect(cache_mod.default_path())
    (data,) = db.execute("SELECT data FROM outputs").fetchone()
    db.execute("UPDATE outputs SET data = ?", (data[:-10] + b"x" * 10,))
    db.commit()
    db.close()
    loads.clear()
    assert report("--json", str(log)) == want and len(loads) == 1  # (read again, and kept again)
    loads.clear()
    assert report("--json", str(log)) == want and loads == []


def test_standard_input_and_no_cache_are_always_read(tmp_path: Path, loads: list[tuple[str, ...]]) -> None:
    data = (ROOT / "sample_logs" / "openai_chat_demo.jsonl").read_bytes()
    for _ in range(2):
        res = CliRunner().invoke(main, ["report", "--json", "-"], input=data)
        assert res.exit_code == 0
    log = tmp_path / "run.jsonl"
    log.write_bytes(data)
    for _ in range(2):
        report("--json", "--no-cache", str(log))
    assert len(loads) == 4
    assert not Path(cache_mod.default_path()).exists()


def test_the_cache_command_counts_the_kept_reports(tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    shutil.copy(ROOT / "sample_logs" / "openai_chat_demo.jsonl", log)
    report("--json", str(log))
    report("--jsonl", str(log))
    report(str(log))
    res = CliRunner().invoke(main, ["cache"])
    assert "1 log, 3 reports kept whole," in res.output
    res = CliRunner().invoke(main, ["cache", "clear"])
    assert res.exit_code == 0
    db = sqlite3.connect(cache_mod.default_path())
    assert db.execute("SELECT COUNT(*) FROM outputs").fetchone() == (0,)
    db.close()


@pytest.mark.parametrize("change", ["grew", "same-size rewrite"])
def test_an_input_changed_while_it_was_read_is_not_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        loads: list[tuple[str, ...]], change: str) -> None:
    lines = (ROOT / "sample_logs" / "openai_chat_demo.jsonl").read_bytes().splitlines(keepends=True)
    log = tmp_path / "run.jsonl"
    log.write_bytes(b"".join(lines[:-1]))
    first = report("--json", "--no-cache", str(log))
    real = report_cli.load_paths

    def changed_after_read(paths, fmt, settings, **kw):  # type: ignore[no-untyped-def]
        run = real(paths, fmt, settings, **kw)
        if change == "grew":
            with open(log, "ab") as fh:
                fh.write(lines[-1])
        else:  # (one digit of the middle, the first and last bytes as they were)
            data = log.read_bytes()
            at = data.index(b'"completion_tokens":', len(data) // 3) + len(b'"completion_tokens":')
            log.write_bytes(data[:at] + (b"7" if data[at:at + 1] != b"7" else b"8") + data[at + 1:])
        return run

    monkeypatch.setattr(report_cli, "load_paths", changed_after_read)
    assert report("--json", str(log)) == first  # (what was read: the log before the change)
    db = sqlite3.connect(cache_mod.default_path())
    assert db.execute("SELECT COUNT(*) FROM outputs").fetchone() == (0,)  # (not kept: its inputs changed)
    db.close()
    monkeypatch.setattr(report_cli, "load_paths", real)
    want = report("--json", "--no-cache", str(log))
    assert want != first
    loads.clear()
    assert report("--json", str(log)) == want and len(loads) == 1  # (not answered by the output kept before)


def test_an_output_is_not_kept_while_a_log_grows(shared_logs: Path, tmp_path: Path, loads: list[tuple[str, ...]],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder just written and read for the first time is kept (its logs were not seen otherwise); once one of
    them grew (written to within the last minute after a read saw it shorter: a running agent's session) the
    report is read and not kept, until a read finds the log as the last one left it.  Every output is the one
    a read with the cache off writes."""
    monkeypatch.setattr(outputs, "KEEP_IDLE_SECONDS", 60.0)
    folder = folder_of_logs(shared_logs, tmp_path)
    want = report("--json", "--no-cache", str(folder))
    loads.clear()
    assert report("--json", str(folder)) == want
    assert report("--json", str(folder)) == want
    assert loads == [(str(folder),)]  # (read once, then kept)
    log = folder / "sub" / "rollout.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:-1]))  # (a session that grows: its last line is yet to come)
    report("--json", str(folder))
    with open(log, "ab") as fh:
        fh.write(lines[-1])
    want = report("--json", "--no-cache", str(folder))
    loads.clear()
    assert report("--json", str(folder)) == want  # (grew: read, not kept)
    assert report("--json", str(folder)) == want  # (as the last read left it: read, and kept)
    assert report("--json", str(folder)) == want
    assert loads == [(str(folder),)] * 2
