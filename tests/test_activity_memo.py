"""Each log's last activity remembered between runs (:mod:`ctxwatch.engine.activity_memo`): a file unchanged since
a run is not read again, a changed one is (appended, rewritten to the same size, replaced), and the memo file is
never trusted blindly (damaged, other code's) nor written where it must not be.

A "new run" is the module's state dropped after the memo was saved.  Expected times come from the log lines
written here (their ``timestamp`` fields), not from ctxwatch's reader."""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path

import pytest

from ctxwatch.engine import activity, activity_memo


def _line(ts: str, prompt: int) -> str:
    """A canonical record stamped ``ts`` (ISO) reporting ``prompt`` tokens: a call's line."""
    return json.dumps({"timestamp": ts, "request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]},
                       "response": {"usage": {"prompt_tokens": prompt, "completion_tokens": 1}}}) + "\n"


def _epoch(ts: str) -> float:
    return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()


@pytest.fixture
def memo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache folder of its own, and the module's state as at a process's start."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("CTXWATCH_NO_CACHE", raising=False)
    _new_run(monkeypatch)
    return tmp_path / "cache" / "ctxwatch" / activity_memo.FILE_NAME


def _new_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(activity_memo, "_memo", None)
    monkeypatch.setattr(activity_memo, "_new", {})
    monkeypatch.setattr(activity, "_activity", {})


def _no_reading(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every log whose end is read (:func:`~ctxwatch.engine.activity.last_call_time`)."""
    read: list[str] = []
    real = activity.last_call_time

    def spy(path: str) -> tuple[float | None, bool]:
        read.append(path)
        return real(path)

    monkeypatch.setattr(activity, "last_call_time", spy)
    return read


def test_an_unchanged_file_is_not_read_again_and_a_changed_one_is(
        tmp_path: Path, memo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text(_line("2026-01-02T03:04:05Z", 10) + _line("2026-01-02T03:09:00Z", 20))
    b.write_text(_line("2026-02-01T00:00:00Z", 30))
    assert activity.activity_of(str(a)) == (_epoch("2026-01-02T03:09:00Z"), True)
    assert activity.activity_of(str(b)) == (_epoch("2026-02-01T00:00:00Z"), True)
    activity_memo.save()
    assert memo.is_file()
    _new_run(monkeypatch)
    read = _no_reading(monkeypatch)
    assert activity.activity_of(str(a)) == (_epoch("2026-01-02T03:09:00Z"), True)
    assert activity.activity_of(str(b)) == (_epoch("2026-02-01T00:00:00Z"), True)
    assert read == []
    with open(a, "a") as fh:  # (a call more)
        fh.write(_line("2026-01-02T04:00:00Z", 40))
    st = b.stat()  # (rewritten to the same size, its modification time put back: only the change time tells)
    b.write_text(b.read_text().replace("2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z"))
    assert b.stat().st_size == st.st_size
    os.utime(b, ns=(st.st_atime_ns, st.st_mtime_ns))
    _new_run(monkeypatch)
    read = _no_reading(monkeypatch)
    assert activity.activity_of(str(a)) == (_epoch("2026-01-02T04:00:00Z"), True)
    assert activity.activity_of(str(b)) == (_epoch("2026-03-01T00:00:00Z"), True)
    assert sorted(read) == [str(a), str(b)]


def test_a_replaced_file_is_read_again(tmp_path: Path, memo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a, other = tmp_path / "a.jsonl", tmp_path / "other.jsonl"
    a.write_text(_line("2026-01-02T03:04:05Z", 10))
    other.write_text(_line("2026-05-06T07:08:09Z", 10))  # (the same size)
    activity.activity_of(str(a))
    activity_memo.save()
    os.replace(other, a)
    _new_run(monkeypatch)
    assert activity.activity_of(str(a)) == (_epoch("2026-05-06T07:08:09Z"), True)


@pytest.mark.parametrize("content", [b"not json", b"[1, 2]", b'{"code": "other code", "files": {}}',
                                     b'{"code": null, "files": 7}'])
def test_a_damaged_or_foreign_memo_is_ignored_and_written_anew(
        tmp_path: Path, memo: Path, monkeypatch: pytest.MonkeyPatch, content: bytes) -> None:
    a = tmp_path / "a.jsonl"
    a.write_text(_line("2026-01-02T03:04:05Z", 10))
    memo.parent.mkdir(parents=True)
    if b"other code" in content:  # (a memo of other code, holding a wrong answer for this very file)
        st = a.stat()
        content = json.dumps({"code": "other code", "files": {str(a): [
            st.st_size, st.st_mtime_ns, st.st_ctime_ns, 1.0, True]}}).encode()
    memo.write_bytes(content)
    read = _no_reading(monkeypatch)
    assert activity.activity_of(str(a)) == (_epoch("2026-01-02T03:04:05Z"), True)
    assert read == [str(a)]
    activity_memo.save()
    files = json.loads(memo.read_bytes())["files"]
    assert files[str(a)][3:] == [_epoch("2026-01-02T03:04:05Z"), True]


def test_damaged_entries_are_no_answer(tmp_path: Path, memo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ctxwatch.engine.cachedb import code_fingerprint

    a = tmp_path / "a.jsonl"
    a.write_text(_line("2026-01-02T03:04:05Z", 10))
    st = a.stat()
    stamp = [st.st_size, st.st_mtime_ns, st.st_ctime_ns]
    for bad in ([*stamp, "soon", True], [*stamp, 1.0, "yes"], [*stamp, True, True], stamp, "x", None):
        memo.parent.mkdir(parents=True, exist_ok=True)
        memo.write_text(json.dumps({"code": code_fingerprint(), "files": {str(a): bad}}))
        _new_run(monkeypatch)
        assert activity.activity_of(str(a)) == (_epoch("2026-01-02T03:04:05Z"), True), bad


def test_nothing_is_written_with_the_cache_off_or_through_a_link(
        tmp_path: Path, memo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a = tmp_path / "a.jsonl"
    a.write_text(_line("2026-01-02T03:04:05Z", 10))
    monkeypatch.setenv("CTXWATCH_NO_CACHE", "1")
    activity.activity_of(str(a))
    activity_memo.save()
    assert not memo.parent.exists()
    monkeypatch.delenv("CTXWATCH_NO_CACHE")
    _new_run(monkeypatch)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    memo.parent.parent.mkdir(parents=True)
    memo.parent.symlink_to(elsewhere)  # (the cache folder is a link: never written through)
    activity.activity_of(str(a))
    activity_memo.save()
    assert list(elsewhere.iterdir()) == []


def test_the_memo_keeps_the_newest_entries_and_what_other_runs_wrote(
        tmp_path: Path, memo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(activity_memo, "MAX_ENTRIES", 3)
    logs = []
    for n in range(5):
        p = tmp_path / f"{n}.jsonl"
        p.write_text(_line(f"2026-01-0{n + 1}T00:00:00Z", 10))
        logs.append(p)
    for p in logs[:2]:
        activity.activity_of(str(p))
    activity_memo.save()
    _new_run(monkeypatch)  # (another run, which reads two more)
    for p in logs[2:4]:
        activity.activity_of(str(p))
    activity_memo.save()
    files = json.loads(memo.read_bytes())["files"]
    assert list(files) == [str(logs[1]), str(logs[2]), str(logs[3])]  # (the first run's oldest dropped)


def test_cache_clear_removes_the_memo(tmp_path: Path, memo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from ctxwatch.cli import main

    a = tmp_path / "a.jsonl"
    a.write_text(_line("2026-01-02T03:04:05Z", 10))
    activity.activity_of(str(a))
    activity_memo.save()
    assert memo.is_file()
    res = CliRunner().invoke(main, ["cache", "clear"])
    assert res.exit_code == 0, res.output
    assert not memo.exists()
