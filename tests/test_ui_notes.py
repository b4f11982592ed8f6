"""Pilot tests: the dashboard counts and lists the input problems of a log as ``ctxwatch check`` does on the same
file (the notes a whole read ends with, an empty file's note, and nothing of lines a truncation removed), and the
placeholders and notifications a new user read read as sentences (a new user's report, items 1 to 3).

``check`` is the reference: each test runs it on the file as the dashboard shows it and asserts that the two
agree, and states by hand what check must say (counted here with plain ``json``), so that a change to both sides
at once is caught too.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from test_ui_common import append, line, loaded, open_preview, record, wait_for, write_log
from test_ui_main import cells, side

from ctxwatch.cli import main
from ctxwatch.ui.app import CtxwatchApp
from ctxwatch.ui.widgets.side import flag_line

#: ``check``'s count at the end of its summary line: ``0 bad lines, 1 note; --fail-on ...``.
SUMMARY = re.compile(r"(\d+ bad lines?(?:, \d+ notes?)?); --fail-on")


def check(path: Path) -> tuple[str, list[tuple[int, str, str, str]]]:
    """``ctxwatch check`` on ``path``: its count (``0 bad lines, 1 note``) and its input problems as
    ``(line, kind, "bad line" | "note", message)``, the label from its text output, the rest from ``--json``."""
    text = CliRunner().invoke(main, ["check", str(path)])
    assert text.exit_code == 0, text.output
    count = SUMMARY.search(text.stdout)
    assert count is not None, text.stdout
    labels = [ln.split()[1] + (" line" if ln.split()[1] == "bad" else "")
              for ln in text.stdout.splitlines() if ln.startswith("INFO") and ln.split()[1] in ("note", "bad")]
    doc = CliRunner().invoke(main, ["check", "--json", str(path)])
    notes = json.loads(doc.stdout)["notes"]
    assert len(labels) == len(notes)
    return count.group(1), [(n["line"], n["kind"], label, n["message"]) for n, label in zip(notes, labels,
                                                                                           strict=True)]


def shown(app: CtxwatchApp) -> list[tuple[int, str, str]]:
    """The dashboard's input problems as ``(line, kind, message)``."""
    return [(i.line, i.kind, i.message) for i in app.input_problems()]


def status(app: CtxwatchApp) -> str:
    """The status line's text, its line breaks undone."""
    assert app.main is not None
    return " ".join(str(app.main.query_one("#status").render()).split())


def agent_progress_lines(lines: list[str]) -> int:
    """Lines of a Claude Code session that are ``agent_progress`` records (a subagent's messages, copied)."""
    n = 0
    for ln in lines:
        if ln.strip():
            rec = json.loads(ln)
            n += rec.get("type") == "progress" and (rec.get("data") or {}).get("type") == "agent_progress"
    return n


async def problems_screen(pilot: Any) -> Any:
    """Press ``i`` and return the input-problems screen once drawn."""
    from ctxwatch.ui.screens import IssuesScreen

    await pilot.press("i")
    screen = pilot.app.screen
    assert isinstance(screen, IssuesScreen)
    await pilot.pause()
    return screen


def head(screen: Any) -> str:
    """The problems screen's heading, its line breaks undone."""
    return " ".join(str(screen.query_one("#issues-head").render()).split())


@pytest.mark.parametrize("name, progress", [("spotter_subagent_parent.jsonl", 19),
                                            ("spotter_4d5611e5_head200.jsonl", 67)])
async def test_the_dashboard_lists_the_subagent_note_check_gives(shared_logs: Path, tmp_path: Path, name: str,
                                                                 progress: int) -> None:
    """A Claude Code session that ran subagents: check says "0 bad lines, 1 note" (subagent_calls_elsewhere,
    counting the agent_progress lines), while the side panel said "Input problems (0) none" and i "no input
    problems: every line was read".  The reader gives that note when it finishes the file, which a followed file
    never does: the dashboard now keeps it up to date as the file is read."""
    path = tmp_path / name
    path.write_bytes((shared_logs / "claude-code" / name).read_bytes())
    lines = path.read_text(encoding="utf-8").splitlines()
    assert agent_progress_lines(lines) == progress  # (the count the note must give, by hand)
    count, problems = check(path)
    # By hand: one note, about the whole file, of that kind, with that count; no bad line.
    assert count == "0 bad lines, 1 note"
    assert [(line_, kind, label) for line_, kind, label, _ in problems] == [(0, "subagent_calls_elsewhere", "note")]
    assert problems[0][3].startswith(f"{progress} agent_progress lines copy a subagent's messages")
    app = CtxwatchApp(str(path))
    async with app.run_test(size=(160, 50)) as pilot:
        await loaded(pilot, 12)
        assert await wait_for(pilot, lambda: app.input_problems() != [], 10.0)
        await pilot.pause()
        assert shown(app) == [(line_, kind, message) for line_, kind, _, message in problems]
        assert f" {count} " in status(app)
        # (the session has flags too, listed first in the panel, which then cuts the problems' heading short)
        assert f"{name}: subagent_calls_elsewhere" in side(app)
        screen = await problems_screen(pilot)
        assert f"Input problems of {name}: {count}, as ctxwatch check counts them" in head(screen)
        assert [r[:3] for r in cells(screen)] == [["file", "subagent_calls_elsewhere", "note"]]
        assert "every line was read" not in str(screen.query_one("#issue-body").render())


async def test_a_followed_session_keeps_one_subagent_note_counting_every_line(shared_logs: Path,
                                                                            tmp_path: Path) -> None:
    """While the session is written, its note counts the agent_progress lines read so far and is replaced as
    more come (one note, never one per count), ending as check's on the whole file."""
    lines = (shared_logs / "claude-code" / "spotter_subagent_parent.jsonl").read_text(encoding="utf-8") \
        .splitlines(keepends=True)
    first = next(k for k in range(len(lines)) if agent_progress_lines(lines[:k]) == 5)  # (5 of the 19 copies)
    path = tmp_path / "session.jsonl"
    path.write_text("".join(lines[:first]), encoding="utf-8")
    app = CtxwatchApp(str(path))
    async with app.run_test(size=(160, 50)) as pilot:
        await loaded(pilot, analysed=False)
        assert await wait_for(pilot, lambda: [k for _, k, _ in shown(app)] == ["subagent_calls_elsewhere"], 10.0)
        assert shown(app)[0][2].startswith("5 agent_progress lines copy")
        append(path, "".join(lines[first:]))
        assert await wait_for(pilot, lambda: len(app.calls) == 12 and "19 agent_progress" in str(shown(app)), 10.0)
        await pilot.pause(0.5)  # (time for a duplicate to arrive, if one would)
        count, problems = check(path)
        assert count == "0 bad lines, 1 note"
        assert shown(app) == [(line_, kind, message) for line_, kind, _, message in problems]
        assert f" {count} " in status(app)


@pytest.mark.parametrize("content, what", [("", "empty"), ("\n  \n", "blank (only whitespace)")])
async def test_an_empty_file_shows_checks_empty_file_note_until_its_first_record(tmp_path: Path, content: str,
                                                                                  what: str) -> None:
    """report and check note an empty log (empty_file); the dashboard showed 0 problems.  It shows the same note
    while the file has no record, and withdraws it when the first record comes, as check does then."""
    path = tmp_path / "new.jsonl"
    path.write_text(content, encoding="utf-8")
    count, problems = check(path)
    assert count == "0 bad lines, 1 note"  # (by hand: the one note, about the whole file)
    assert problems == [(0, "empty_file", "note", f"the file is {what}: no record to read yet")]
    app = CtxwatchApp(str(path))
    async with app.run_test(size=(160, 50)) as pilot:
        assert await wait_for(pilot, lambda: app.input_problems() != [], 10.0)
        await pilot.pause()
        assert shown(app) == [(line_, kind, message) for line_, kind, _, message in problems]
        assert f" {count} " in status(app)
        assert f"Input problems ({count}) new.jsonl: empty_file" in side(app)
        screen = await problems_screen(pilot)
        assert [r[:3] for r in cells(screen)] == [["file", "empty_file", "note"]]
        await pilot.press("escape")
        append(path, line(record(0)))
        assert await wait_for(pilot, lambda: len(app.calls) == 1 and app.input_problems() == [], 10.0)
        assert check(path) == ("0 bad lines", [])
        assert " 0 bad lines " in status(app) and "Input problems (0) none" in side(app)


def test_a_run_fed_record_by_record_holds_the_note_its_reader_gives_at_the_end(shared_logs: Path) -> None:
    """The core of the dashboard's read (Run.refresh_notes): fed a record at a time, as a followed file is, the run
    holds one subagent note counting the agent_progress lines read so far; finishing it leaves that one note, final,
    not a second copy."""
    from ctxwatch.engine import Run
    from ctxwatch.formats import get_format
    from ctxwatch.source import Record, iter_records

    path = shared_logs / "claude-code" / "spotter_subagent_parent.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    run = Run(str(path), get_format("claude-code"))
    assert [i.kind for i in run.refresh_notes().issues] == []  # (no record read yet, and the file is no blank one)
    read = 0
    for rec in iter_records(str(path), skip=run.reader.skip):
        if isinstance(rec, Record):
            read = rec.line  # (the line of the last record read: the note counts the copies up to it)
        run.feed_record(rec)
        run.refresh_notes()
        copies = agent_progress_lines(lines[:read])
        held = [i.message for i in run.issues]
        if copies == 0:
            assert held == []
        else:
            assert len(held) == 1 and held[0].startswith(f"{copies} agent_progress line{'s' if copies > 1 else ''} ")
    change = run.finish()
    # (the final note is the one already given: it stays, neither withdrawn nor given again, so a follower does
    # not print it resolved and new at once)
    assert change.resolved == [] and change.issues == []
    assert [i.message[:40] for i in run.issues] == ["19 agent_progress lines copy a subagent'"]


async def test_problems_of_lines_a_truncation_removed_are_not_counted(tmp_path: Path) -> None:
    """A followed log got a broken line 9, then was truncated and given 3 valid lines: the header still said
    "1 bad line" and i listed file:9 invalid_json, though check on the file now says 0 bad lines.  The count is
    now check's on the file as it is; the line read before the truncation is listed apart, marked, not counted."""
    path = write_log(tmp_path / "run.jsonl", 8)
    app = CtxwatchApp(str(path))
    async with app.run_test(size=(160, 50)) as pilot:
        await loaded(pilot, 8)
        append(path, '{"bad\n')
        assert await wait_for(pilot, lambda: [(i.line, i.kind) for i in app.input_problems()] == [(9, "invalid_json")],
                              10.0)
        assert check(path)[0] == "1 bad line" and " 1 bad line " in status(app)
        path.write_text("", encoding="utf-8")  # (: > run.jsonl)
        assert await wait_for(pilot, lambda: app.last_reset is not None, 10.0)
        assert app.last_reset.startswith("truncated at ")
        # The file is empty now: check's note about that, and nothing of line 9.
        count, problems = check(path)
        assert (count, [p[1] for p in problems]) == ("0 bad lines, 1 note", ["empty_file"])
        assert await wait_for(pilot, lambda: shown(app) == [(p[0], p[1], p[3]) for p in problems], 10.0)
        # Three new calls (new response ids: copies of calls already read would update them, not add).
        append(path, "".join(line(record(20 + k, turn_words=5, reported=300 + k)) for k in range(3)))
        assert await wait_for(pilot, lambda: len(app.calls) == 11 and app.input_problems() == [], 10.0)
        await pilot.pause()
        assert check(path) == ("0 bad lines", [])
        assert " 0 bad lines " in status(app) and "1 bad line" not in status(app)
        assert [(i.line, i.kind) for i in app.issues_before_reset] == [(9, "invalid_json")]
        # (the side panel's full form, or its one line per section when the flags leave no room)
        assert re.search(r"Input problems \(0\) none (\+1 from before the log's last reset, not counted \(i lists "
                         r"them\)|· \+1 before reset)", side(app))
        screen = await problems_screen(pilot)
        text = head(screen)
        assert text.startswith("Input problems of run.jsonl: none 1 more from before the last reset: truncated at ")
        assert "not counted: ctxwatch check on the file as it is now would not see it" in text
        assert [r[:3] for r in cells(screen)] == [["9", "invalid_json", "before reset"]]
        body = str(screen.query_one("#issue-body").render())
        assert body.startswith(f"{path}:9 · invalid_json · bad line, read before the last reset: not counted\n")


@pytest.mark.parametrize("kind", ["empty file", "missing file", "empty folder"])
async def test_the_flags_placeholder_reads_as_a_sentence(tmp_path: Path, kind: str) -> None:
    """With no call read, the Flags section said "Flags / after reading"."""
    target = tmp_path / "log.jsonl"
    if kind == "empty file":
        target.write_text("", encoding="utf-8")
    elif kind == "empty folder":
        target = tmp_path / "sessions"
        target.mkdir()
    app = CtxwatchApp(str(target))
    async with app.run_test(size=(160, 50)) as pilot:
        assert await wait_for(pilot, lambda: app.notice is not None, 10.0)
        await pilot.pause()
        assert "Flags none until calls are read " in side(app) + " "
        assert "after reading" not in side(app)
        assert flag_line(app.state).plain == "flags: none until calls are read"
    async with CtxwatchApp(str(target)).run_test(size=(80, 24)) as pilot:  # (one line per section)
        assert await wait_for(pilot, lambda: pilot.app.notice is not None, 10.0)
        await pilot.pause()
        assert "Flags none until calls are read" in side(pilot.app)


@pytest.mark.parametrize("width, cells_per_line", [(80, 36), (160, 57)])
async def test_export_notifications_show_the_path_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             width: int, cells_per_line: int) -> None:
    """In a followed folder s, x (and the eviction preview's w) write to $XDG_DATA_HOME/ctxwatch/exports, and the
    notification showed the path cut at its edge: "screenshot saved to
    /root/.local/share/ctxwatch/exports/ctxwatch-spotter_4d56".  The file name now has lines of its own, then the
    folder whole (it was cut in the middle with … to one line, which did not say where the file is), broken after
    a separator where one falls within the line.  A toast holds 36 cells a line at 80 columns and 57 at 160
    (Textual's toast: 60 cells, at most half the screen less its scrollbar, less a border and padding)."""
    from textual.widgets._toast import Toast

    folder = tmp_path / "sessions"
    folder.mkdir()
    write_log(folder / "spotter_4d5611e5_head200.jsonl", 3)
    data = tmp_path / ("a-folder-name-long-enough-for-no-notification-to-hold-it" * 2)
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    monkeypatch.chdir(folder)
    exports = data / "ctxwatch" / "exports"
    app = CtxwatchApp(str(folder))
    async with app.run_test(size=(width, 24), notifications=True) as pilot:
        await loaded(pilot, 3)
        for key, name, what in [("s", "ctxwatch-spotter_4d5611e5_head200.svg", "screenshot saved to"),
                                ("x", "ctxwatch-calls-spotter_4d5611e5_head200.csv", "3 calls exported to"),
                                ("w", "ctxwatch-plan-call3.json", "plan written to")]:
            if key == "w":
                await open_preview(pilot)  # (w writes the eviction preview's plan, of the newest call: #3)
            app.clear_notifications()
            await pilot.press(key)
            assert await wait_for(pilot, lambda: (exports / name).exists() and len(app._notifications) == 1)  # noqa: B023
            message = next(iter(app._notifications)).message
            said, file, *where = message.split("\n")
            assert (said, file) == (what, name)
            # (the folder whole, on lines that fit the toast, the first broken after a separator)
            assert "".join(where) == f"in {exports}" and len(where) > 1
            assert all(len(w) <= cells_per_line for w in where) and where[0].endswith(os.sep)
            # On screen: the name whole (wrapped where it is longer than a line), then the folder's lines.
            await pilot.pause(0.3)
            toast = next(w for w in app.screen.walk_children() if isinstance(w, Toast))
            assert toast.size.width == cells_per_line
            rows = [toast.render_line(y).text.rstrip() for y in range(toast.size.height)]
            at = rows.index(what)
            assert rows[-len(where):] == where and "".join(rows[at + 1:-len(where)]) == name
