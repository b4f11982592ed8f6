"""Commands given no path read the logs of the harnesses installed: a fake home built from copies of real
sample logs (Claude Code projects, a Codex sessions tree), the environment patched to it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_ui_common import wait_for

from ctxwatch.cli import main
from ctxwatch.engine import found_places, harness_places

SESSION = "3f2a9c1e-8b7d-4414-9ccd-011d40f70b2a"
ROLLOUT = "rollout-2025-11-17T15-30-28-019a93b9_codex0.58.0.jsonl"


def fake_home(tmp_path: Path, shared_logs: Path) -> tuple[Path, Path, Path]:
    """``(home, claude session, codex rollout)``: a home with one Claude Code project (a real session of
    February 2026, 4 calls: the most recent) and one Codex rollout (November 2025), a Gemini CLI folder holding
    nothing yet."""
    home = tmp_path / "home"
    claude = home / ".claude" / "projects" / "-home-USER-demo" / f"{SESSION}.jsonl"
    codex = home / ".codex" / "sessions" / "2025" / "11" / "17" / ROLLOUT
    for src, dst in ((shared_logs / "claude-code" / "spotter_tool_heavy.jsonl", claude),
                     (shared_logs / "codex-rollout" / ROLLOUT, codex)):
        dst.parent.mkdir(parents=True)
        shutil.copyfile(src, dst)
    (home / ".gemini" / "tmp").mkdir(parents=True)
    return home, claude, codex


def claude_calls(path: Path) -> int:
    """Calls of a Claude Code transcript, read with plain json: its assistant messages with usage, by id."""
    ids = set()
    for line in path.read_text().splitlines():
        d = json.loads(line)
        if d.get("type") == "assistant" and d["message"].get("usage"):
            ids.add(d["message"]["id"])
    return len(ids)


def test_the_places_looked_at(tmp_path: Path) -> None:
    """Each harness's variable first, then its defaults; CLAUDE_CONFIG_DIR may list several folders."""
    env = {"HOME": str(tmp_path), "CLAUDE_CONFIG_DIR": f"{tmp_path}/a, ~/b", "CODEX_HOME": "~/cx"}
    looked = [(p.harness, p.path, p.via) for p in harness_places(env)]
    assert looked == [
        ("Claude Code", f"{tmp_path}/a/projects", "CLAUDE_CONFIG_DIR"),
        ("Claude Code", f"{tmp_path}/b/projects", "CLAUDE_CONFIG_DIR"),
        ("Claude Code", f"{tmp_path}/.config/claude/projects", "default"),
        ("Claude Code", f"{tmp_path}/.claude/projects", "default"),
        ("Codex", f"{tmp_path}/cx/sessions", "CODEX_HOME"),
        ("Codex", f"{tmp_path}/.codex/sessions", "default"),
        ("Gemini CLI", f"{tmp_path}/.gemini/tmp", "default"),
    ]


def test_found_places_hold_logs_each_once(tmp_path: Path, shared_logs: Path) -> None:
    """A folder with no log (Gemini's, empty) is not found; one named twice (CODEX_HOME = ~/.codex) once."""
    home, _claude, _codex = fake_home(tmp_path, shared_logs)
    found, looked = found_places({"HOME": str(home), "CODEX_HOME": str(home / ".codex")})
    assert [(p.harness, p.path) for p in found] == [("Claude Code", str(home / ".claude" / "projects")),
                                                   ("Codex", str(home / ".codex" / "sessions"))]
    assert found[1].via == "CODEX_HOME"
    assert len(looked) == 5


def test_report_and_check_with_no_path(tmp_path: Path, shared_logs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``report --json`` with no path reads both harnesses' logs: the Claude Code session's calls (counted
    from the file) and the Codex rollout's file among the calls; ``check`` reads them too."""
    home, claude, codex = fake_home(tmp_path, shared_logs)
    monkeypatch.setenv("HOME", str(home))
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("CTXWATCH_NO_CACHE", "1")
    res = CliRunner().invoke(main, ["report", "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    files = [c["file"] for c in doc["calls"]]
    assert files.count(str(claude)) == claude_calls(claude) == 4
    assert str(codex) in files
    assert f"reading {home}/.claude/projects (Claude Code), {home}/.codex/sessions (Codex)" in res.stderr
    res = CliRunner().invoke(main, ["check", "--json"])
    assert res.exit_code in (0, 1), res.output
    assert json.loads(res.stdout)["file"] == f"{home}/.claude/projects + {home}/.codex/sessions"


@pytest.mark.parametrize("command", [["report"], ["check"], []])
def test_nothing_found_says_where_it_looked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            command: list[str]) -> None:
    """No harness logs: exit 2, naming every place looked at (``ctxwatch`` alone as well)."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "cx"))
    for var in ("CLAUDE_CONFIG_DIR", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(var, raising=False)
    (tmp_path / ".claude" / "projects").mkdir(parents=True)  # (there, but empty)
    res = CliRunner().invoke(main, command)
    assert res.exit_code == 2
    assert "no harness logs found" in res.stderr
    for where in (".claude/projects", ".config/claude/projects", "cx/sessions (Codex, $CODEX_HOME)",
                  ".codex/sessions", ".gemini/tmp"):
        assert f"{tmp_path}/{where}" in res.stderr


def test_ctxwatch_alone_without_a_terminal_prints_the_report(tmp_path: Path, shared_logs: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """``ctxwatch`` with no argument and no terminal prints the report of the harnesses' logs."""
    home, claude, _codex = fake_home(tmp_path, shared_logs)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CTXWATCH_NO_CACHE", "1")
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(var, raising=False)
    res = CliRunner().invoke(main, [])
    assert res.exit_code == 0, res.output
    assert claude.name in res.stdout and "format=claude-code+codex" in res.stdout


async def test_the_dashboard_opens_on_the_picker(tmp_path: Path, shared_logs: Path) -> None:
    """Started with no path (``pick``), the dashboard opens the session picker once the sessions are listed,
    its cursor on the most recent session (the Claude Code one); Enter opens it."""
    from textual.widgets import OptionList

    from ctxwatch.ui.app import CtxwatchApp
    from ctxwatch.ui.screens import SessionPicker

    home, claude, codex = fake_home(tmp_path, shared_logs)
    app = CtxwatchApp([str(home / ".claude" / "projects"), str(home / ".codex" / "sessions")], pick=True)
    async with app.run_test(size=(80, 24)) as pilot:
        assert await wait_for(pilot, lambda: isinstance(app.screen, SessionPicker), 15)
        screen = app.screen
        assert isinstance(screen, SessionPicker)
        await pilot.pause()
        assert screen.files == [str(claude), str(codex)]
        assert screen.query_one(OptionList).highlighted == 1  # (row 0: follow the newest automatically)
        await pilot.press("enter")
        assert await wait_for(pilot, lambda: not isinstance(app.screen, SessionPicker))
        assert app.log_path == str(claude) and not app.auto_session
        assert await wait_for(pilot, lambda: app.loaded and len(app.calls) == 4, 15)
        await pilot.press("o")  # (the picker opens once by itself: later only on o)
        assert await wait_for(pilot, lambda: isinstance(app.screen, SessionPicker))


def test_shell_completion_still_completes_command_names() -> None:
    """``ctxwatch`` alone opens the dashboard, but completing ``ctxwatch st<TAB>`` must offer the commands, not
    file names (click's completion parses the words before the one completed: none here)."""
    env = {"_CTXWATCH_COMPLETE": "bash_complete", "COMP_WORDS": "ctxwatch st", "COMP_CWORD": "1"}
    res = CliRunner().invoke(main, [], env=env, prog_name="ctxwatch")
    assert res.exit_code == 0 and res.output.split() == ["plain,statusline"]
    env["COMP_WORDS"], env["COMP_CWORD"] = "ctxwatch report --se", "2"
    assert CliRunner().invoke(main, [], env=env, prog_name="ctxwatch").output.split() == ["plain,--sessions"]
