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


async def test_exports_of_lone_surrogates_are_written_whole_and_the_app_runs_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A model, session or file name holding a lone surrogate killed the app on ``x`` (UnicodeEncodeError, a
    header-only CSV left behind) and on the preview's ``w`` (TypeError from orjson, a 0-byte JSON left
    behind).  Both files are now written whole, the surrogate replaced by U+FFFD, and the app runs on."""
    logs, out = tmp_path / "logs", tmp_path / "out"
    logs.mkdir()
    out.mkdir()
    log = _hostile_surrogates(logs)
    monkeypatch.chdir(out)
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 3)
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
