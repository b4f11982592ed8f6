"""The console entry point ends the process without its teardown (:mod:`ctxwatch.cli.ending`): what it writes,
its status and its exit handlers are those of a normal exit."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctxwatch.cli import ending

ROOT = Path(__file__).resolve().parents[1]
ENTRY = [sys.executable, "-c", "from ctxwatch.cli import run; run()"]
LOG = ROOT / "sample_logs" / "openai_chat_demo.jsonl"


def _env(tmp_path: Path) -> dict[str, str]:
    return dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"), TMPDIR=str(tmp_path / "tmp"))


def test_the_output_and_status_are_a_normal_exits(tmp_path: Path) -> None:
    """The JSON report written through the entry point is byte for byte the one a plain ``main()`` writes (which
    returns through Python's own exit), with status 0; an unreadable log still gives status 2 and its message."""
    (tmp_path / "tmp").mkdir()
    plain = subprocess.run([sys.executable, "-c", "from ctxwatch.cli import main; main()", "report", "--json",
                            str(LOG)], capture_output=True, env=_env(tmp_path) | {"CTXWATCH_NO_CACHE": "1"})
    fast = subprocess.run([*ENTRY, "report", "--json", str(LOG)], capture_output=True,
                          env=_env(tmp_path) | {"CTXWATCH_NO_CACHE": "1"})
    assert plain.returncode == fast.returncode == 0
    assert fast.stdout == plain.stdout and fast.stdout.startswith(b"{")
    missing = subprocess.run([*ENTRY, "report", str(tmp_path / "no_such.jsonl")], capture_output=True,
                             env=_env(tmp_path))
    assert missing.returncode == 2 and b"no_such.jsonl" in missing.stderr


def test_exit_handlers_run(tmp_path: Path) -> None:
    """The copy of standard input is removed by an exit handler: it is gone once the process has ended."""
    (tmp_path / "tmp").mkdir()
    with open(LOG, "rb") as stdin:
        res = subprocess.run([*ENTRY, "report", "--json", "-"], stdin=stdin, capture_output=True,
                             env=_env(tmp_path))
    assert res.returncode == 0 and b'"calls"' in res.stdout
    assert not list((tmp_path / "tmp").iterdir())  # (the ctxwatch-stdin-* folder it was copied to)


def test_a_reader_that_goes_away_ends_it_quietly(tmp_path: Path) -> None:
    """``ctxwatch report --json LOG | head -c 10``: status 0 and nothing on standard error."""
    (tmp_path / "tmp").mkdir()
    proc = subprocess.Popen([*ENTRY, "report", "--json", str(LOG)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=_env(tmp_path) | {"CTXWATCH_NO_CACHE": "1"})
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.read(10) == b'{\n  "file"'
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == 0 and err == b""


def test_nothing_is_held_unless_the_process_ends_there(monkeypatch: pytest.MonkeyPatch) -> None:
    """Called from a test (click's runner, ``main()``), :func:`ending.hold` keeps nothing: a test process that runs
    many commands does not keep their runs."""
    monkeypatch.setattr(ending, "_HELD", [])
    ending.hold(object())
    assert ending._HELD == []
    ending.ending_here()
    kept = object()
    ending.hold(kept)
    assert [[kept]] == ending._HELD
