"""The commands' messages name what the user typed: a usage error of the dashboard given no command
(``ctxwatch PATH``, the README's form) names ``ctxwatch``, not a ``ctxwatch watch`` never typed."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from ctxwatch.cli import main

LOG = Path(__file__).resolve().parent.parent / "sample_logs" / "openai_chat_demo.jsonl"


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
