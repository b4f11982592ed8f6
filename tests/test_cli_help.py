"""``ctxwatch --help`` lists every command as click would with each command imported, yet imports none of them:
the list comes from :data:`ctxwatch.cli.group.SUMMARIES`."""

from __future__ import annotations

import subprocess
import sys

import click
import pytest

from ctxwatch.cli.group import COMMANDS, SUMMARIES, DefaultGroup, main


def test_every_command_has_a_summary() -> None:
    assert set(SUMMARIES) == set(COMMANDS)


@pytest.mark.parametrize("width", [40, 80, 120, 200])
def test_the_list_is_the_one_click_makes_from_the_commands(width: int) -> None:
    # (click's own listing, from a group that holds every command itself, imported)
    whole = click.Group("ctxwatch")
    for name in COMMANDS:
        whole.add_command(main.get_command(click.Context(main), name), name)  # type: ignore[arg-type]
    expected = click.HelpFormatter(width=width)
    whole.format_commands(click.Context(whole), expected)
    # (the group as ctxwatch starts: no command imported yet)
    fresh = DefaultGroup("ctxwatch")
    shown = click.HelpFormatter(width=width)
    fresh.format_commands(click.Context(fresh), shown)
    assert fresh.commands == {}
    assert shown.getvalue() == expected.getvalue()
    assert "report" in shown.getvalue() and "statusline" in shown.getvalue()


def test_help_imports_no_command() -> None:
    code = ("import sys\n"
            "from ctxwatch.cli import main\n"
            "try:\n"
            "    main(['--help'])\n"
            "except SystemExit:\n"
            "    pass\n"
            f"print(sorted(m for m in sys.modules if m in {sorted(c.partition(':')[0] for c in COMMANDS.values())!r}"
            " or m.startswith(('ctxwatch.ui', 'ctxwatch.planner', 'ctxwatch.demo', 'ctxwatch.engine', 'textual'))))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "Commands:" in out
    assert out.strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize("command", ["", *sorted(COMMANDS)])
def test_every_help_fits_80_columns(command: str) -> None:
    from click.testing import CliRunner

    args = [command, "--help"] if command else ["--help"]
    res = CliRunner().invoke(main, args, env={"COLUMNS": "80"}, terminal_width=80)
    assert res.exit_code == 0, res.output
    wide = [ln for ln in res.output.splitlines() if len(ln) > 80]
    assert wide == []


def test_the_overview_names_every_command() -> None:
    from click.testing import CliRunner

    out = CliRunner().invoke(main, ["--help"], terminal_width=80).output
    overview = out.split("Options:")[0]
    assert all(f"ctxwatch {name}" in overview for name in COMMANDS if name != "watch")
    assert "ctxwatch PATH" in overview  # (watch: the command without its name)
