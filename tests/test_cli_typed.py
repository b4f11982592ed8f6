"""The commands' messages name what the user typed: a log piped on standard input with no path (``ctxwatch
report < run.jsonl``) is told to pass ``-``; a usage error of the dashboard given no command (``ctxwatch PATH``,
the README's form) names ``ctxwatch``, not a ``ctxwatch watch`` never typed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import ctxwatch as ctxwatch_pkg
from ctxwatch.cli import main

LOG = Path(__file__).resolve().parent.parent / "sample_logs" / "openai_chat_demo.jsonl"


def no_harness_env(home: Path) -> dict[str, str]:
    """The environment of a machine where no harness keeps logs: ``home`` is empty."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("CLAUDE_CONFIG_DIR", "XDG_CONFIG_HOME", "CODEX_HOME", "GEMINI_DIR")}
    # (the script runs the ctxwatch under test, wherever it is imported from)
    root = str(Path(ctxwatch_pkg.__file__).resolve().parent.parent)
    env.update(HOME=str(home), CTXWATCH_NO_CACHE="1",
               PYTHONPATH=os.pathsep.join([root, *filter(None, [env.get("PYTHONPATH")])]))
    return env


#: The installed console script (the program's name is what click names commands by: ``ctxwatch``).
SCRIPT = Path(sys.executable).parent / "ctxwatch"


def ctxwatch(args: list[str], home: Path, stdin: Path) -> subprocess.CompletedProcess[str]:
    """``ctxwatch ARGS < stdin`` in a process of its own (standard input a file, as the shell redirects it)."""
    if not SCRIPT.exists():
        pytest.skip(f"no ctxwatch console script beside {sys.executable}")
    with open(stdin, "rb") as fh:
        return subprocess.run([str(SCRIPT), *args], stdin=fh, capture_output=True, text=True,
                              env=no_harness_env(home), timeout=120)


@pytest.mark.parametrize(("args", "typed", "suggested"), [
    (["report"], "ctxwatch report", "ctxwatch report -"),
    (["check"], "ctxwatch check", "ctxwatch check -"),
    ([], "ctxwatch", "ctxwatch report -"),  # (the dashboard follows files: the report reads a pipe)
])
def test_stdin_without_a_path_is_told_to_pass_a_dash(tmp_path: Path, args: list[str], typed: str,
                                                     suggested: str) -> None:
    res = ctxwatch(args, tmp_path, LOG)
    assert res.returncode == 2, res.stderr
    assert res.stderr.startswith("ctxwatch: no path given and no harness logs found; looked in: ")
    assert res.stderr.endswith(f". Give a log file or folder: {typed} PATH; to read the log on standard "
                               f"input, pass - as its path: `{suggested}`\n"), res.stderr
    # (what it suggests reads the log)
    again = ctxwatch([*suggested.split()[1:]], tmp_path, LOG)
    assert again.returncode in (0, 1) and "calls" in again.stdout, again.stderr


def test_stdin_without_a_path_read_the_harness_logs_says_how_to_read_it(tmp_path: Path) -> None:
    # (the harness's logs are read, as the command says; and it says how standard input would have been)
    folder = tmp_path / ".claude" / "projects" / "p"
    folder.mkdir(parents=True)
    shutil.copy(LOG.parent / "claude_code_session.jsonl", folder / "s.jsonl")
    res = ctxwatch(["report"], tmp_path, LOG)
    assert res.returncode == 0, res.stderr
    assert res.stderr.startswith(f"ctxwatch: no path given; reading {tmp_path}/.claude/projects (Claude Code) "
                                 "(to read the log on standard input, pass - as its path: `ctxwatch report -`)")


@pytest.mark.parametrize(("args", "typed"), [
    (["--no-cache", str(LOG)], "ctxwatch"),
    ([str(LOG), "--no-cache"], "ctxwatch"),
    ([str(LOG), "--bogus"], "ctxwatch"),
    (["watch", "--no-cache", str(LOG)], "ctxwatch watch"),
    (["report", "--bogus", str(LOG)], "ctxwatch report"),
])
def test_usage_errors_name_the_command_as_typed(args: list[str], typed: str) -> None:
    res = CliRunner().invoke(main, args, prog_name="ctxwatch")
    assert res.exit_code == 2
    option = next(a for a in args if a.startswith("--"))
    assert res.stderr == (f"Usage: {typed} [OPTIONS] [PATHS]...\nTry '{typed} --help' for help.\n\n"
                          f"Error: No such option '{option}'.\n"), res.stderr
    if typed == "ctxwatch":
        assert "ctxwatch watch" not in res.stderr


def test_the_dashboards_help_given_no_command_names_ctxwatch() -> None:
    res = CliRunner().invoke(main, [str(LOG), "--help"], prog_name="ctxwatch")
    assert res.exit_code == 0 and res.stdout.startswith("Usage: ctxwatch [OPTIONS] [PATHS]...\n")
