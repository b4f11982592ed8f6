"""Pilot tests of the main screen's panels, exports, session switching and help (tester's report, items 3,
7, 8 and 9).  Expected values come from the log files (read here with plain json), not from ctxwatch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_ui_common import help_shown, loaded, two_sessions, wait_for

from ctxwatch.ui.app import CtxwatchApp


def side(app: CtxwatchApp) -> str:
    """The side panel's text, its line breaks undone."""
    assert app.main is not None
    return " ".join(str(app.main.query_one("#side").render()).split())


@pytest.mark.parametrize("size", [(160, 50), (80, 24)])
async def test_the_forecast_of_a_context_of_quota_probes_says_why_there_is_none(shared_logs: Path,
                                                                                 size: tuple[int, int]) -> None:
    """claude-trace logs Claude Code's max_tokens:1 quota probes as their own context; its Forecast said "no
    calls" beside a table of six calls. It says they are quota probes, left out of the forecast."""
    path = shared_logs / "request-response" / "claude-trace_test-traffic_head14.jsonl"
    bodies = [json.loads(ln)["request"]["body"] for ln in path.read_text().splitlines() if ln.strip()]
    probes = sum(1 for b in bodies if b.get("max_tokens") == 1 and not b.get("tools"))
    assert probes == 6
    app = CtxwatchApp(str(path))
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, len(bodies))
        for _ in range(len(app.contexts)):
            if app.context == "probe":
                break
            await pilot.press("c")
        assert app.context == "probe" and len(app.view) == probes
        await pilot.pause()
        assert await wait_for(pilot, lambda: "quota probes" in side(app))
        text = side(app)
        assert f"only quota probes ({probes} calls with max_tokens 1)" in text
        assert "no calls" not in text
        await pilot.press("c")  # the next context still has its own forecast
        await pilot.pause()
        assert app.context != "probe" and "quota probes" not in side(app)


#: The project's own 20-call sample (sample_logs/), copied by :func:`demo_copy` for tests that read a log.
DEMO_LOG = Path(__file__).resolve().parents[1] / "sample_logs" / "openai_chat_demo.jsonl"


def demo_copy(tmp_path: Path) -> Path:
    """A copy of :data:`DEMO_LOG` in ``tmp_path`` (``run.jsonl``), for a test to open in the dashboard."""
    path = tmp_path / "run.jsonl"
    path.write_bytes(DEMO_LOG.read_bytes())
    return path


async def test_the_csv_export_says_where_each_history_came_from(shared_logs: Path, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The CSV had floor_source but no history_source: a Claude Code history shown `1,636~` (reported prompt
    minus the context's floor) became a plain number. In this session the floor is inferred from the first
    call, whose whole history is in the file (its history is counted); every later call's history is the
    reported prompt minus that floor."""
    import csv

    monkeypatch.chdir(tmp_path)
    path = shared_logs / "claude-code" / "spotter_4d5611e5_head200.jsonl"
    app = CtxwatchApp(str(path))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        await pilot.press("x")
        assert await wait_for(pilot, lambda: bool(app.saved))
    with open(app.saved[-1], newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        header = list(reader.fieldnames or [])
        rows = list(reader)
    assert header.index("history_source") == header.index("history_tokens") + 1
    assert len(rows) == 12
    assert [r["floor_source"] for r in rows] == ["inferred"] * 12
    assert [r["history_source"] for r in rows] == ["estimated"] + ["inferred"] * 11
    # the floor is the same for all: each inferred history is the reported prompt minus it
    floor = int(rows[0]["floor_tokens"])
    for r in rows[1:]:
        assert int(r["history_tokens"]) == int(r["prompt_tokens_reported"]) - floor
    # The estimated cost is a column too (it was only in report --json).  By hand, per million tokens (input,
    # cache read, cache write, output): Opus 4.6 $5, $0.50, $6.25, $25; Sonnet 4.5 $3, $0.30, $3.75, $15.
    from decimal import Decimal

    rates = {"claude-opus-4-6": (5, "0.5", "6.25", 25), "claude-sonnet-4-5-20250929": (3, "0.3", "3.75", 15)}
    assert header[header.index("cost_usd"):header.index("cost_usd") + 2] == ["cost_usd", "cost_source"]
    for r in rows:
        inp, rd, wr, out = (Decimal(x) for x in rates[r["model"]])
        read, write, prompt = (int(r[k]) for k in ("cache_read_tokens", "cache_write_tokens", "prompt_tokens_reported"))
        want = ((prompt - read - write) * inp + read * rd + write * wr + int(r["completion_tokens_reported"]) * out)
        assert (Decimal(r["cost_usd"]), r["cost_source"]) == (want / 1_000_000, "estimated")
        # (the JSON's other usage columns: uncached input is Anthropic's input_tokens; Anthropic reports no
        # reasoning count (empty, never 0); no search was made (the log says 0 on some lines, nothing on others)
        assert int(r["input_uncached_tokens"]) == prompt - read - write
        assert (r["reasoning_tokens_reported"], r["file"]) == ("", str(path)) and r["web_searches"] in ("", "0")


@pytest.mark.parametrize("how", ["picked", "newest"])
async def test_another_session_starts_without_the_filter(tmp_path: Path, how: str) -> None:
    """A filter typed for one session (a time) was kept for the session picked next with `o`, hiding all its
    calls: "filter '22:30' (0 matches)". Showing another session, picked or followed as the newest, clears it
    and says so."""
    from test_ui_common import write_log

    from ctxwatch.ui.screens import SessionPicker

    # a: 2023-11-14 22:13:20 and 22:13:50 UTC; b: 22:30:00, 22:30:30, 22:31:00 (30 s apart)
    folder, first, second = two_sessions(tmp_path)
    app = CtxwatchApp(str(folder))
    async with app.run_test(size=(120, 40)) as pilot:
        assert await wait_for(pilot, lambda: app.loaded and app.log_path == str(second) and len(app.calls) == 3)
        await pilot.press("slash", *"22:30", "enter")
        assert app.filter_text == "22:30" and len(app.view) == 2
        if how == "picked":
            await pilot.press("o")
            assert await wait_for(pilot, lambda: isinstance(app.screen, SessionPicker))
            await pilot.press("down", "down", "enter")  # auto, b, a
            target, calls = first, 2
        else:
            target, calls = write_log(folder / "c.jsonl", 4, t0=1_700_002_000), 4  # newer: followed
        assert await wait_for(pilot, lambda: app.log_path == str(target) and app.loaded and len(app.calls) == calls,
                              30.0)
        assert await wait_for(pilot, lambda: len(app.view) == calls)
        assert app.filter_text == ""
        assert app.main.query_one("#filter").value == ""
        status = str(app.main.query_one("#status").render())
        assert "filter" not in status and "match" not in status
        assert any("filter '22:30' cleared" in str(n.message) for n in app._notifications)


async def test_the_help_gives_both_meanings_of_the_inferred_mark(shared_logs: Path) -> None:
    """The help explained `12,036~` only as "reported prompt minus estimated history", the rule of an inferred
    floor; an inferred history (every Claude Code call's but the first) is the reported prompt minus the
    context's floor, as report's footnote says."""
    from click.testing import CliRunner

    from ctxwatch.cli import main
    from ctxwatch.ui.screens import HelpScreen

    path = shared_logs / "claude-code" / "spotter_4d5611e5_head200.jsonl"
    footnote = CliRunner().invoke(main, ["report", str(path)]).output
    assert "floor~ = inferred (reported prompt minus estimated history)" in footnote
    assert "history~ = inferred (reported prompt minus the context's floor)" in footnote
    app = CtxwatchApp(str(path))
    async with app.run_test(size=(100, 40)) as pilot:
        await loaded(pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        text = " ".join(help_shown(app.screen).split())
        assert "inferred floor: reported prompt minus estimated history" in text
        assert "inferred history: reported prompt minus the context's floor" in text


HOSTILE = "[bold red]x[/] \x1b[2J"


def damaged_log(path: Path) -> list[tuple[int, str, str]]:
    """Write a canonical log of 5 calls with damaged lines between them and return ``(line, kind, is)`` of
    each problem, counted here as the file is written: a line that is not JSON (``invalid_json``), a JSON
    object that is no call (``unknown_record``), a call whose reported prompt is a hostile string (the call
    is kept, the count is unknown: an ``invalid_field``, a count of the wrong JSON type), a call whose output is
    -1 (an ``implausible_value`` note), a line of raw escape codes and markup (``invalid_json``), and a last line
    cut short with no newline (``truncated_tail``, once the writer is idle)."""
    from test_ui_common import line, record

    hostile = record(2)
    hostile["response"]["usage"]["prompt_tokens"] = HOSTILE
    negative = record(3)
    negative["response"]["usage"]["completion_tokens"] = -1
    lines = [line(record(0)), "{not json\n", line(record(1)), json.dumps({"hello": 1}) + "\n", line(hostile),
             line(negative), "\x1b[2J[bold red]x[/]\n", line(record(4)), '{"timestamp": 1, "request": {"mod']
    path.write_text("".join(lines), encoding="utf-8")
    return [(2, "invalid_json", "bad line"), (4, "unknown_record", "bad line"), (5, "invalid_field", "bad line"),
            (6, "implausible_value", "note"), (7, "invalid_json", "bad line"), (9, "truncated_tail", "bad line")]


def cells(screen: object) -> list[list[str]]:
    """The plain text of each row of an input-problems screen's table."""
    from textual.widgets import DataTable

    table = screen.query_one("#issues", DataTable)  # type: ignore[attr-defined]
    return [[c.plain for c in table.get_row_at(r)] for r in range(table.row_count)]


async def test_i_lists_every_input_problem_with_its_line_kind_and_message(tmp_path: Path) -> None:
    """The side panel showed only the count and the newest problem ("Input problems (21) newest: line 23:
    invalid_field"): nothing in the dashboard listed the others.  ``i`` (and the palette's "Input problems")
    opens a screen listing each one, as ``ctxwatch check`` does: line, kind, bad line or note, message; log text
    in a message is shown literally, markup and escape codes included."""
    from textual.widgets import DataTable

    from ctxwatch.ui.screens import IssuesScreen

    path = tmp_path / "damaged.jsonl"
    expected = damaged_log(path)
    app = CtxwatchApp(str(path))
    async with app.run_test(size=(160, 50)) as pilot:
        await loaded(pilot, 5)
        # (the cut last line is reported once its writer has been idle for 2 s)
        assert await wait_for(pilot, lambda: any(i.kind == "truncated_tail" for i in app.issues), 10.0)
        await pilot.pause()
        # (newest first: the panel has room for each one's line, and says i lists them all)
        text = side(app)
        assert "Input problems (5 bad lines, 1 note) line 9: truncated_tail line 7: invalid_json" in text
        assert "line 2: invalid_json i lists them all" in text
        assert "Input problems" in [c.title for c in app.get_system_commands(app.screen)]
        await pilot.press("i")
        screen = app.screen
        assert isinstance(screen, IssuesScreen)
        await pilot.pause()
        rows = cells(screen)
        # One file: no file column; the line, the kind, bad line or note, in the order read.
        assert [(int(r[0]), r[1], r[2]) for r in rows] == expected
        head = " ".join(str(screen.query_one("#issues-head").render()).split())
        assert "5 bad lines, 1 note" in head  # (check's count: the implausible count is a note)
        # The hostile value, as the message quotes it (repr): the markup is not applied, the escape not sent.
        message = screen.query_one("#issues", DataTable).get_row_at(2)[3]
        assert "'[bold red]x[/] \\x1b[2J'" in message.plain and "\x1b" not in message.plain
        assert not message.spans and not message.style
        await pilot.press("down", "down")  # the highlighted problem's whole message, below the table
        await pilot.pause()
        body = str(screen.query_one("#issue-body").render())
        assert body.startswith(f"{path}:5 · invalid_field · bad line\n")
        assert "prompt tokens '[bold red]x[/] \\x1b[2J' (not a number)" in body and "\x1b" not in body
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is app.main
        # More damage while the log is followed: an open list gains the new row.
        await pilot.press("i")
        screen = app.screen
        with open(path, "a", encoding="utf-8") as fh:
            fh.write('"}}}\n{oops\n')  # (completes the cut line, still not JSON; then another bad line)
        assert await wait_for(pilot, lambda: len(cells(screen)) == 7 and cells(screen)[-1][0] == "10", 10.0)
        assert [(r[0], r[1]) for r in cells(screen)[-2:]] == [("9", "invalid_json"), ("10", "invalid_json")]


async def test_the_side_panel_counts_input_problems_as_the_header_does(tmp_path: Path) -> None:
    """A line with NUL bytes that is also not JSON has two issues but is one bad line: the header said "1 bad
    line" while the side panel said "Input problems (2)".  Both now count lines, as ``ctxwatch check`` does."""
    sample = DEMO_LOG
    path = tmp_path / "nul.jsonl"
    path.write_bytes(b'{"a\x00b" oops\n' + b"".join(sample.read_bytes().splitlines(keepends=True)[:3]))
    app = CtxwatchApp(str(path))
    async with app.run_test(size=(160, 70)) as pilot:
        await loaded(pilot, 3)
        assert [(i.line, i.kind) for i in app.input_problems()] == [(1, "nul_bytes"), (1, "invalid_json")]
        assert "\nInput problems (1 bad line)\n" in str(app.main.query_one("#side").render())
        assert "1 bad line" in " ".join(str(app.main.query_one("#status").render()).split())
    app = CtxwatchApp(str(path))
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, 3)
        assert "Input problems (1) new" in side(app)  # (the rest of the row is cut at 80 columns)


async def test_the_input_problems_of_joined_batch_files_name_their_file(tmp_path: Path) -> None:
    """Batch files are one run read from two files: each problem names its file, as `check` does.  A failed
    request's error message is the batch file's own text: its markup and escape codes are shown literally."""
    from textual.widgets import DataTable

    from ctxwatch.ui.screens import IssuesScreen

    inp, out = tmp_path / "batch_input.jsonl", tmp_path / "batch_output.jsonl"
    inp.write_text("".join(json.dumps({"custom_id": f"t-{k}", "method": "POST", "url": "/v1/chat/completions",
                                       "body": {"model": "gpt-4o-mini", "max_tokens": 50,
                                                "messages": [{"role": "user", "content": f"ticket {k}"}]}}) + "\n"
                           for k in range(3)), encoding="utf-8")
    ok = {"id": "batch_req_0", "custom_id": "t-0", "error": None,
          "response": {"status_code": 200, "request_id": "r0",
                       "body": {"id": "c0", "object": "chat.completion", "created": 1757426400,
                                "model": "gpt-4o-mini", "usage": {"prompt_tokens": 11, "completion_tokens": 1},
                                "choices": [{"index": 0, "finish_reason": "stop",
                                             "message": {"role": "assistant", "content": "ok"}}]}}}
    failed = {"id": "batch_req_1", "custom_id": "t-1", "response": None,
              "error": {"code": "server_error", "message": HOSTILE + " boom"}}
    out.write_text(json.dumps(ok) + "\n{broken\n" + json.dumps(failed) + "\n", encoding="utf-8")
    app = CtxwatchApp([str(inp), str(out)])
    async with app.run_test(size=(160, 70)) as pilot:
        assert await wait_for(pilot, lambda: app.loaded and len(app.issues) == 3, 10.0)
        await pilot.pause()
        assert "\nInput problems (1 bad line, 2 notes)\n" in str(app.main.query_one("#side").render())
        assert "i lists them all: file, line, message" in side(app)
        await pilot.press("i")
        screen = app.screen
        assert isinstance(screen, IssuesScreen)
        await pilot.pause()
        # t-2 has no result: a note on its request's line (3) in the input file.
        assert [r[:4] for r in cells(screen)] == [
            ["batch_output.jsonl", "2", "invalid_json", "bad line"],
            ["batch_output.jsonl", "3", "failed_request", "note"],
            ["batch_input.jsonl", "3", "missing_result", "note"]]
        assert "1 bad line, 2 notes" in " ".join(str(screen.query_one("#issues-head").render()).split())
        await pilot.press("down")
        await pilot.pause()
        body = screen.query_one("#issue-body").render()
        assert "server_error: [bold red]x[/] \\x1b[2J boom" in str(body) and "\x1b" not in str(body)
        message = screen.query_one("#issues", DataTable).get_row_at(1)[4]
        assert "[bold red]x[/]" in message.plain and "\x1b" not in message.plain and not message.spans


async def test_files_left_out_of_a_folder_are_input_problems(tmp_path: Path) -> None:
    """A folder with a log, a gzipped log and a file in no known format: report lists the two files it does not
    read as skipped_file notes, the dashboard said nothing (0 bad lines, Input problems none).  They are notes
    there too: in the status line, the side panel and the list `i` opens, each named by its file."""
    import gzip
    import shutil

    from ctxwatch.ui.screens import IssuesScreen

    sample = Path(__file__).resolve().parents[1] / "sample_logs"
    shutil.copy(sample / "openai_chat_demo.jsonl", tmp_path / "a.jsonl")
    (tmp_path / "b.jsonl.gz").write_bytes(gzip.compress((sample / "claude_code_session.jsonl").read_bytes()))
    (tmp_path / "notes.jsonl").write_text('{"hello": "world"}\n')
    from click.testing import CliRunner

    from ctxwatch.cli import main

    doc = json.loads(CliRunner().invoke(main, ["report", "--json", str(tmp_path)]).output)
    want = sorted((Path(i["file"]).name, i["kind"], i["message"]) for i in doc["issues"])
    assert [w[:2] for w in want] == [("b.jsonl.gz", "skipped_file"), ("notes.jsonl", "skipped_file")]
    app = CtxwatchApp(str(tmp_path))
    async with app.run_test(size=(160, 50)) as pilot:
        await loaded(pilot, 20)
        assert await wait_for(pilot, lambda: len(app.folder_notes) == 2, 10.0)
        await pilot.pause()
        assert "0 bad lines, 2 notes" in str(app.query_one("#status").render())
        assert "Input problems (2) newest: notes.jsonl: skipped_f" in side(app)  # (named by file, not line 0)
        await pilot.press("i")
        screen = app.screen
        assert isinstance(screen, IssuesScreen)
        await pilot.pause()
        # (a file column, since the problems are not the followed log's; the same notes as report's)
        assert sorted((r[0], r[2], r[-1]) for r in cells(screen)) == [
            (name, kind, message) for name, kind, message in want]
        # The title said "Input problems of <the shown log>", though these notes are about other files.
        head = " ".join(str(screen.query_one("#issues-head").render()).split())
        assert head.startswith(f"Input problems of {Path(app.log_path or '').name} and the folder's files left "
                               "out: 0 bad lines, 2 notes, as ctxwatch check counts them on the log shown (check "
                               "of the folder reads its other logs too)")


async def test_the_input_problems_header_counts_lines_as_check_does(tmp_path: Path) -> None:
    """A line with NUL bytes that is also invalid JSON has two issues: check says 1 bad line, the `i` list said
    2 bad lines.  Lines 2 (both) and 3 (invalid JSON) are 2 bad lines, in 3 issues."""
    from ctxwatch.ui.screens import IssuesScreen

    sample = (Path(__file__).resolve().parents[1] / "sample_logs" / "openai_chat_demo.jsonl").read_bytes()
    first, rest = sample.split(b"\n", 1)
    path = tmp_path / "bad.jsonl"
    path.write_bytes(first + b'\n{"a": \x00 oops\n{not json\n' + rest)
    app = CtxwatchApp(str(path))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 20)
        assert await wait_for(pilot, lambda: len(app.issues) == 3, 10.0)
        await pilot.press("i")
        screen = app.screen
        assert isinstance(screen, IssuesScreen)
        await pilot.pause()
        assert len(cells(screen)) == 3
        assert "bad.jsonl: 2 bad lines, as ctxwatch check counts them" in " ".join(
            str(screen.query_one("#issues-head").render()).split())


async def test_esc_after_the_reader_finished_says_the_file_was_read_whole(tmp_path: Path) -> None:
    """On a fast read the screen lags behind the reader: Esc pressed while the status still said "reading 0%"
    came after the backfill had ended, so nothing was skipped, though the toast had promised it.  The app now
    says the whole file was read.  (The reader's end is posted here after Esc, as it arrives in that case.)"""
    from ctxwatch.ui.messages import BackfillDone

    app = CtxwatchApp(str(demo_copy(tmp_path)))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 20)
        app.state.loaded = False  # (as the screen stands before the reader's end is handled)
        await pilot.press("escape")
        app.post_message(BackfillDone(app._feed_id, False, None))
        assert await wait_for(pilot, lambda: any("read before the skip took effect" in str(n.message)
                                                 for n in app._notifications), 5.0)
        assert app.notice is None or "skipped" not in app.notice


@pytest.mark.parametrize("size", [(80, 24), (160, 40)])
async def test_a_skipped_backfill_stays_said_beside_the_call_count(tmp_path: Path, size: tuple[int, int]) -> None:
    """After Esc the calls read after the skip are numbered on from the calls before it, so the table and the
    chart show no gap: the status line names the skipped lines and the call after which they fall, beside the
    call count, for as long as the log is shown (a notice said it, which a later notice replaced and which fell
    below the status line's rows at 80x24).  (The feed's message is posted here as it arrives: lines 305-1,444
    skipped after 304 calls.)"""
    from ctxwatch.ui.messages import BackfillDone, FeedNotice

    app = CtxwatchApp(str(demo_copy(tmp_path)))
    said = "esc skipped lines 305–1,444 (after call #304): #N counts the calls read"
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, 20)
        app.post_message(BackfillDone(app._feed_id, True, 1445, 305, 304))
        assert await wait_for(pilot, lambda: said in str(app.main.query_one("#status").render()), 5.0)
        status = app.main.query_one("#status")
        lines = str(status.render()).split("\n")
        assert any(said in ln for ln in lines[:status.size.height]) and app.notice is None
        app.post_message(FeedNotice(app._feed_id, "watching by polling"))
        assert await wait_for(pilot, lambda: app.notice == "watching by polling", 5.0)
        await pilot.pause()
        assert said in str(app.main.query_one("#status").render())
        # (and the problems screen does not claim that every line was read)
        from ctxwatch.ui.screens import IssuesScreen

        await pilot.press("i")
        assert isinstance(app.screen, IssuesScreen)
        await pilot.pause()
        body = str(app.screen.query_one("#issue-body").render())
        assert "not every line was read: esc skipped lines 305–1,444 (after call #304)" in body


async def test_the_problems_screen_does_not_say_every_line_was_read_after_reading_stopped(tmp_path: Path) -> None:
    """After "reading stopped: OverflowError ..." the problems screen said "no input problems: every line was
    read".  It now says that reading stopped, and why (the feed's failure posted here as it arrives)."""
    from ctxwatch.ui.messages import FeedFailed
    from ctxwatch.ui.screens import IssuesScreen

    app = CtxwatchApp(str(demo_copy(tmp_path)))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 20)
        await pilot.press("i")
        screen = app.screen
        assert isinstance(screen, IssuesScreen)
        await pilot.pause()
        assert "every line was read" in str(screen.query_one("#issue-body").render())
        app.post_message(FeedFailed(app._feed_id, "reading stopped: OSError: boom"))
        assert await wait_for(pilot, lambda: "not every line was read" in str(screen.query_one("#issue-body")
                                                                             .render()), 5.0)
        assert "reading stopped: OSError: boom" in str(screen.query_one("#issue-body").render())


async def test_batch_files_beside_sessions_are_named_not_listed_as_sessions(tmp_path: Path) -> None:
    """A batch request file and its result file in a folder of session logs were listed as two sessions: the
    requests with no reported usage, the results with floor and history '?' (report joins them).  They are
    named among the folder's input problems instead, saying how to open them; a folder of batch files only is
    still one joined run."""
    import shutil

    from ctxwatch.ui.feed import BATCH_BESIDE_SESSIONS_NOTE, log_files

    root = Path(__file__).resolve().parents[1] / "sample_logs"
    folder = tmp_path / "mixed"
    folder.mkdir()
    for f in (root / "openai-batch").iterdir():
        shutil.copy(f, folder / f.name)
    session = folder / "claude_code_session.jsonl"
    shutil.copy(root / "claude_code_session.jsonl", session)
    files, notes = log_files([str(folder)])
    assert files == [str(session)]
    assert sorted((Path(n.path).name, n.kind, n.message) for n in notes) == [
        ("batch_input.jsonl", "skipped_file", BATCH_BESIDE_SESSIONS_NOTE),
        ("batch_output.jsonl", "skipped_file", BATCH_BESIDE_SESSIONS_NOTE)]
    app = CtxwatchApp(str(folder))
    async with app.run_test(size=(160, 50)) as pilot:
        assert await wait_for(pilot, lambda: app.loaded and len(app.folder_notes) == 2, 10.0)
        assert app.sessions == [str(session)] and app.batch_files is None
        assert "0 bad lines, 2 notes" in str(app.query_one("#status").render())
    session.unlink()
    files, notes = log_files([str(folder)])
    assert sorted(Path(f).name for f in files) == ["batch_input.jsonl", "batch_output.jsonl"] and notes == []


def test_a_json_array_in_a_followed_folder_says_how_to_convert_it(tmp_path: Path) -> None:
    """``report FOLDER`` named a JSON array of records and the jq command that converts it; the dashboard's
    folder note said only "format not recognised; skipped"."""
    from ctxwatch.ui.feed import log_files

    root = Path(__file__).resolve().parents[1] / "sample_logs"
    records = [json.loads(ln) for ln in (root / "openai_chat_demo.jsonl").read_text().splitlines() if ln.strip()]
    (tmp_path / "calls.json").write_text(json.dumps(records, indent=1))
    (tmp_path / "run.jsonl").write_bytes((root / "claude_code_session.jsonl").read_bytes())
    memo: dict = {}
    for _ in range(2):  # (the second listing answers from the memo: the same note)
        files, notes = log_files([str(tmp_path)], None, memo)
        assert files == [str(tmp_path / "run.jsonl")]
        assert [(Path(n.path).name, n.kind) for n in notes] == [("calls.json", "skipped_file")]
        assert notes[0].message.startswith(f"one JSON array of {len(records)} canonical records, not one record per "
                                           "line: convert it with  jq -c '.[]' FILE")


async def test_a_batch_result_file_written_while_watched_is_joined_quietly(tmp_path: Path) -> None:
    """The dashboard on a batch request file and an empty result file about to be written listed them as two
    sessions (the empty file read as a canonical log), and a result file appended to was announced as "log
    rewritten" at every append, with a stale missing_result note left from each read (19 with all 100 results
    in).  Now the pair is one joined run from the start, read again quietly as results arrive, and the notes
    are those of the last read: none once every request has its result."""
    root = Path(__file__).resolve().parents[1] / "sample_logs" / "openai-batch"
    inp, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    inp.write_bytes((root / "batch_input.jsonl").read_bytes())
    out.write_bytes(b"")
    results = [ln + "\n" for ln in (root / "batch_output.jsonl").read_text().splitlines() if ln.strip()]
    requests = [ln for ln in inp.read_text().splitlines() if ln.strip()]
    assert len(results) == len(requests) >= 3  # (every request of the sample has its result)
    app = CtxwatchApp([str(inp), str(out)])
    async with app.run_test(size=(160, 50)) as pilot:
        assert await wait_for(pilot, lambda: app.loaded and app.batch_files is not None, 10.0)
        assert sorted(app.batch_files) == sorted([str(inp), str(out)]) and app.sessions == []
        for k, ln in enumerate(results):
            with open(out, "a", encoding="utf-8") as fh:
                fh.write(ln)
            want = k + 1
            assert await wait_for(pilot, lambda want=want: sum(
                c.usage is not None and c.usage.prompt_total is not None for c in app.calls.values()) == want, 15.0)
        await pilot.pause(0.5)
        assert app.resets == [] and app.last_reset is None  # (no "log rewritten" for results that only grew)
        assert [i.kind for i in app.input_problems()] == []
        assert len(app.calls) == len(requests)


async def test_a_filter_is_said_on_the_status_lines_drawn_at_80x24_and_a_flag_it_hides_clears_it(
        tmp_path: Path) -> None:
    """At 80x24 the filter's segment came after the reading, watching and x-axis segments, on a fourth status
    row that is never drawn: the table hid calls with nothing saying why.  It now comes right after the call
    count.  Enter on a flag whose call the filter hides clears the filter, and the toast says so (it said the
    filter was for the session shown before)."""
    from test_ui_common import listening

    from ctxwatch.ui import text as tx
    from ctxwatch.ui.screens import FlagsScreen

    app = CtxwatchApp(str(demo_copy(tmp_path)))
    said = listening(app)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, 20)
        await pilot.press("slash", *"09:00:1", "enter")
        times = [tx.clock(app.state.calls[i].timestamp) for i in app.view]
        assert app.filter_text == "09:00:1" and len(times) > 1 and all(t.startswith("09:00:1") for t in times)
        status = app.main.query_one("#status")
        rows = str(status.render()).split("\n")[:status.size.height]
        assert any(f"filter '09:00:1' ({len(times)} matches)" in r for r in rows), rows
        await pilot.press("F")
        assert await wait_for(pilot, lambda: isinstance(app.screen, FlagsScreen))
        screen = app.screen
        assert isinstance(screen, FlagsScreen)
        hidden = next(i for i, f in enumerate(screen.flags) if f.call not in app.view)
        await pilot.press("home", *["down"] * hidden, "enter")
        assert await wait_for(pilot, lambda: not isinstance(app.screen, FlagsScreen))
        assert app.filter_text == "" and app.selected_index == screen.flags[hidden].call
        assert "filter '09:00:1' cleared: it hid the flag's call" in said


async def test_what_changed_across_the_lines_esc_skipped_says_so(tmp_path: Path) -> None:
    """``d`` on the first call after the lines Esc skipped compared it with the last call before them, and its
    "+4063 s, added: 702 messages" read as one turn's change.  It now says that the lines between were skipped,
    so that what changed includes calls not read; across two calls after the gap it says nothing of the kind.
    (The feed's message is posted here as it arrives: lines 11-40 skipped after 10 calls.)"""
    from ctxwatch.ui.messages import BackfillDone
    from ctxwatch.ui.screens import DiffScreen

    app = CtxwatchApp(str(demo_copy(tmp_path)))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 20)
        app.post_message(BackfillDone(app._feed_id, True, 41, 11, 10))
        assert await wait_for(pilot, lambda: app.state.skipped is not None)
        for row, said in ((10, True), (11, False)):  # (#11, the first after the gap; #12)
            app.follow = False
            app._select_row(app.view.index(row))
            await pilot.pause()
            await pilot.press("d")
            assert await wait_for(pilot, lambda: isinstance(app.screen, DiffScreen))
            screen = app.screen
            assert isinstance(screen, DiffScreen) and screen.call.index == row
            assert await wait_for(pilot, lambda s=screen: s.diff is not None)
            body = str(screen.query_one("#diff-body").render())
            note = "esc skipped lines 11–40 (after call #10) between these calls"
            assert (note in " ".join(body.split())) == said, body[-300:]
            await pilot.press("escape")
            assert await wait_for(pilot, lambda: not isinstance(app.screen, DiffScreen))
