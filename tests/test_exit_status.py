"""The commands' exit statuses and what the README and docs say of them: 1 is only ``check``'s flag; a usage error
and input that cannot be read are both 2 (the log was not checked), told apart by the message; Ctrl-C is 130."""

from __future__ import annotations

import glob
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_analysis import clean_records, write

from ctxwatch.cli import main

ROOT = Path(__file__).resolve().parent.parent


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, list(args), prog_name="ctxwatch")
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise r.exception
    return r.exit_code, r.stdout, r.stderr


def test_a_usage_error_and_an_unreadable_file_both_exit_2_and_say_which(tmp_path: Path) -> None:
    log = write(tmp_path, clean_records(3), "clean.jsonl")
    assert run("check", str(log))[0] == 0
    code, out, err = run("check", "--fail-on", "error", str(log))
    assert (code, out) == (2, "")
    assert err.startswith("Usage: ctxwatch check [OPTIONS] [PATHS]...\n")
    assert err.endswith("Error: Invalid value for '--fail-on': 'error' is not one of 'info', 'warn', 'critical'.\n")

    missing = tmp_path / "missing.jsonl"
    assert run("check", str(missing)) == (2, "", f"ctxwatch: {missing}: no such file\n")
    junk = tmp_path / "notes.txt"
    junk.write_text("not a log\n")
    code, out, err = run("check", str(junk))
    assert (code, out) == (2, "") and err.startswith(f"ctxwatch: {junk}: format not recognised") and "Usage" not in err


def test_the_readme_docs_and_help_say_status_2_is_a_usage_error_or_unreadable_input() -> None:
    """The README's table said "2 unreadable" only, so `check --fail-on info` (then 2, click's usage error) read as an
    unreadable log."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    row = next(ln for ln in readme.splitlines() if ln.startswith("| `ctxwatch check "))
    assert "exit 0 clean, 1 a flag at or above the level (or, with `--min-calls N`, fewer than N calls read), " in row
    assert ("2 no check made: a usage error (an unknown option or value) or unreadable input (a log of a folder "
            "included) ([CI and cron](docs/ci.md#exit-status))") in row
    ci = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    assert "## Exit status\n" in ci
    assert "| 2 | no check was made: a usage error, or input that cannot be read; or a log of a folder" in ci
    assert "| 130 | interrupted (Ctrl-C) |" in ci
    code, out, _ = run("check", "--help")
    assert code == 0 and "2 on a usage error or if PATH cannot be read" in " ".join(out.split())


def wait_reading(proc: subprocess.Popen[str]) -> None:
    """Wait until ``proc`` waits for a pipe (its standard input), past its start-up (an interrupt during the
    imports is Python's own); where /proc does not say, 5 s."""
    start = time.monotonic()
    while time.monotonic() - start < 60 and proc.poll() is None:
        waits = [Path(p).read_text() for p in glob.glob(f"/proc/{proc.pid}/task/*/wchan")]
        if any("pipe" in w for w in waits) or (not waits and time.monotonic() - start > 5):
            return
        time.sleep(0.05)


@pytest.mark.skipif(os.name != "posix", reason="SIGINT")
def test_ctrl_c_exits_130_not_check_s_1_for_a_flag(tmp_path: Path) -> None:
    """Interrupted while it read its input, `check` exited with click's 1 ("Aborted!"): the status of a flag at
    or above --fail-on."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    proc = subprocess.Popen([sys.executable, "-c", "from ctxwatch.cli import run; run()", "check", "-"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=tmp_path, env=env)
    try:
        wait_reading(proc)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert (out, err) == ("", "\nctxwatch: interrupted\n")


def test_no_cache_folder_exits_2(monkeypatch: pytest.MonkeyPatch) -> None:
    """With no home directory for the cache, `cache` exited with click's 1 and `cache clear` with a traceback."""
    import ctxwatch.engine.cache as cache

    def no_home() -> str:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(cache, "default_path", no_home)
    for args in (["cache"], ["cache", "clear"]):
        assert run(*args) == (2, "", "ctxwatch: no cache folder: Could not determine home directory.\n"), args
