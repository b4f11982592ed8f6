"""Which files a folder is read for: ``*.jsonl``, ``*.ndjson``, ``*.json``, ``*.traj`` and ``*.eval``; a folder
with no log among them says which other files it did not look at, rather than only that no log was found."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from ctxwatch.cli import main
from tests.helpers import report_of

SAMPLE = ("claude-code", "spotter_short.jsonl")


def test_a_folder_of_logs_under_other_names_names_them(shared_logs: Path, tmp_path: Path) -> None:
    folder = tmp_path / "f"
    folder.mkdir()
    shutil.copy(shared_logs.joinpath(*SAMPLE), folder / "session.log")
    (folder / "notes.txt").write_text("hello\n")
    (folder / "config.json").write_text('{"a": 1}\n')
    res = CliRunner().invoke(main, ["check", str(folder)])
    assert res.exit_code == 2
    assert "2 other files are not looked at (notes.txt, session.log): name a file to read it" in res.output
    # (named itself, the file is read whatever its name: the calls the .jsonl gives)
    want = report_of(str(shared_logs.joinpath(*SAMPLE)))["calls"]
    got = report_of(str(folder / "session.log"))["calls"]
    assert [c["prompt_tokens_reported"] for c in got] == [c["prompt_tokens_reported"] for c in want] and got


@pytest.mark.parametrize("name", ["session.ndjson", "SESSION.JSONL"])
def test_a_log_of_another_json_lines_name_in_a_folder_is_read(shared_logs: Path, tmp_path: Path,
                                                              name: str) -> None:
    """``*.ndjson`` is read, and log names in capitals are (endings are matched in any case)."""
    folder = tmp_path / "f"
    folder.mkdir()
    shutil.copy(shared_logs.joinpath(*SAMPLE), folder / name)
    want = report_of(str(shared_logs.joinpath(*SAMPLE)))["calls"]
    got = report_of(str(folder))["calls"]
    assert [(c["line"], c["prompt_tokens_reported"]) for c in got] == \
        [(c["line"], c["prompt_tokens_reported"]) for c in want] and got


async def test_the_dashboard_on_such_a_folder_names_them_too(shared_logs: Path, tmp_path: Path) -> None:
    """The dashboard waits on a folder with no log among the names it reads, and says which files it did not
    look at, as check does."""
    from test_ui_common import wait_for

    from ctxwatch.ui.app import CtxwatchApp

    folder = tmp_path / "f"
    folder.mkdir()
    shutil.copy(shared_logs.joinpath(*SAMPLE), folder / "session.log")
    (folder / "notes.txt").write_text("hello\n")
    app = CtxwatchApp(str(folder))
    async with app.run_test(size=(80, 24)) as pilot:
        said = "2 other files are not looked at (notes.txt, session.log): name a file to read it"
        assert await wait_for(pilot, lambda: said in (app.notice or ""), 10.0), app.notice
        assert not app.calls


def test_a_folder_of_no_log_names_at_all_names_its_files(shared_logs: Path, tmp_path: Path) -> None:
    """No file of a log's name at all ("no log files found") says which files it did not look at, too."""
    folder = tmp_path / "f"
    folder.mkdir()
    shutil.copy(shared_logs.joinpath(*SAMPLE), folder / "a.log")
    (folder / "c.txt").write_text("hello\n")
    res = CliRunner().invoke(main, ["report", str(folder)])
    assert res.exit_code == 2
    assert "no log files found" in res.output
    assert "2 other files are not looked at (a.log, c.txt): name a file to read it" in res.output


def test_two_logs_of_one_name_are_told_apart_in_text_output(shared_logs: Path, tmp_path: Path) -> None:
    """A folder's a/log.jsonl and b/log.jsonl: check named both "log.jsonl:N" and report's file column
    "log.jsonl"; each is named by its path below the folder now (a base name alone where it is unique)."""
    folder = tmp_path / "f"
    lines = {}
    for sub, sample in (("a", "spotter_short.jsonl"), ("b", "spotter_tool_heavy.jsonl")):
        (folder / sub).mkdir(parents=True)
        data = (shared_logs / "claude-code" / sample).read_bytes() + b"{not json\n"
        (folder / sub / "log.jsonl").write_bytes(data)
        lines[sub] = data.count(b"\n")  # (the damaged line is the last)
    out = CliRunner().invoke(main, ["check", str(folder)]).output
    for sub in ("a", "b"):
        assert f"bad line  {sub}/log.jsonl:{lines[sub]}  invalid_json" in out, out
    table = CliRunner().invoke(main, ["report", str(folder)]).output
    rows = [ln.split()[-1] for ln in table.splitlines() if ln.strip()[:1].isdigit() and " claude-" in ln]
    assert sorted(set(rows)) == ["a/log.jsonl", "b/log.jsonl"], table


def test_sessions_of_a_folder_without_calls_is_a_line_not_an_empty_table(tmp_path: Path) -> None:
    folder = tmp_path / "f"
    folder.mkdir()
    (folder / "e.jsonl").write_bytes(b"")
    res = CliRunner().invoke(main, ["report", "--sessions", str(folder)])
    assert res.exit_code == 0 and "0 sessions: no call was read" in res.output
    assert "last call (UTC)" not in res.output  # (no header of a table with no row)
