"""``ctxwatch check``: exit status 0 / 1 / 2, ``--fail-on``, ``--json``, shared threshold options, bad lines.

Logs are generated with the canonical-record builder of ``test_analysis`` (hand-chosen reported prompt sizes).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_analysis import THRESH, b24_records, clean_records, rec, write

from ctxwatch.cli import main


def check(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, ["check", *args])
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise r.exception
    return r.exit_code, r.stdout, r.stderr


@pytest.fixture
def clean(tmp_path: Path) -> Path:
    return write(tmp_path, clean_records(), "clean.jsonl")


@pytest.fixture
def warn_only(tmp_path: Path) -> Path:
    """Over budget and past the trigger (warn), nowhere near the window (window 10,000; prompts up to 7,000)."""
    return write(tmp_path, [rec(i, p) for i, p in enumerate(THRESH[:7])], "warn.jsonl")


def test_clean_log_exits_0(clean: Path) -> None:
    code, out, _ = check(str(clean), "--window", "100000")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("forecast: 441 calls / ~74 min to trigger")
    assert lines[-1] == "30 calls, 0 flags (0 critical, 0 warn, 0 info), 0 bad lines; --fail-on critical: exit 0"


def test_critical_exits_1_and_prints_one_line_per_flag(tmp_path: Path) -> None:
    path = write(tmp_path, b24_records(), "b24.jsonl")
    code, out, _ = check(str(path), "--window", "128000")
    assert code == 1
    lines = out.splitlines()
    assert ("CRITICAL  #41   line 41  system_prompt_evicted  system prompt absent from request #41 "
            "(present in #1–#40)") in lines
    assert any(x.startswith("WARN      #41   line 41  format_drift  responses drift from #41") for x in lines)
    assert lines[-1].endswith("--fail-on critical: exit 1")


def test_fail_on_warn(warn_only: Path) -> None:
    assert check(str(warn_only), "--window", "10000")[0] == 0
    code, out, _ = check(str(warn_only), "--window", "10000", "--fail-on", "warn")
    assert code == 1
    assert {ln.split()[4] for ln in out.splitlines() if ln.startswith("WARN")} == {"trigger_no_compaction",
                                                                                  "over_budget"}


def test_threshold_options_are_shared_with_report(clean: Path, tmp_path: Path) -> None:
    # the same clean log with a 4,000-token window: over budget, past the reserve -> critical
    assert check(str(clean), "--window", "4000")[0] == 1
    # a larger budget fraction moves the budget: window 10,000, budget 0.8 -> 8,000 > every prompt of warn.jsonl
    path = write(tmp_path, [rec(i, p) for i, p in enumerate(THRESH[:7])], "w.jsonl")
    _, out, _ = check(str(path), "--window", "10000", "--budget-fraction", "0.8", "--reserve", "0.1")
    assert "over_budget" not in out
    cfg = tmp_path / "c.toml"
    cfg.write_text("window = 10000\nbudget_fraction = 0.8\nreserve = 0.1\n")
    _, out2, _ = check(str(path), "--config", str(cfg))
    assert out2 == out


def test_usage_errors_and_unreadable_files_exit_2(clean: Path, tmp_path: Path) -> None:
    code, _, err = check(str(tmp_path / "missing.jsonl"))
    assert code == 2 and "no such file" in err
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = check(str(empty))  # a folder is read like `report` reads it; with no log in it: exit 2
    assert code == 2 and "no log files found" in err
    # a config file that is not UTF-8 is a usage error naming the file, not a traceback (exit 1 = "flagged")
    latin = tmp_path / "latin.toml"
    latin.write_bytes(b"\xff\xfe\x00garbage")
    code, _, err = check(str(clean), "--config", str(latin))
    assert code == 2 and "latin.toml" in err and "Traceback" not in err
    assert check(str(clean), "--fail-on", "sometimes")[0] == 2
    assert check(str(clean), "--budget-fraction", "1.5")[0] == 2
    assert check(str(clean), "--no-such-option")[0] == 2
    assert check()[0] == 2  # no PATH
    bad_cfg = tmp_path / "bad.toml"
    bad_cfg.write_text("budget = [\n")
    assert check(str(clean), "--config", str(bad_cfg))[0] == 2
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"\x00\x01\x02 not a log at all \xff\xfe\n" * 10)
    code, _, err = check(str(junk))
    assert code == 2 and "ctxwatch:" in err


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads files whatever their mode")
def test_permission_denied_exits_2(clean: Path) -> None:
    clean.chmod(0)
    try:
        assert check(str(clean))[0] == 2
    finally:
        clean.chmod(0o644)


def test_bad_lines_are_info_notes_and_do_not_change_the_status(tmp_path: Path) -> None:
    recs = clean_records(10)
    body = "".join(json.dumps(r) + "\n" for r in recs[:3]) + "{not json\n" + "".join(
        json.dumps(r) + "\n" for r in recs[3:]) + "[1, 2, 3]\n" + '{"request": {"model": "gpt-4o", "mess'
    path = tmp_path / "bad.jsonl"
    path.write_text(body)
    code, out, _ = check(str(path), "--window", "100000")
    assert code == 0
    notes = [ln for ln in out.splitlines() if ln.startswith("INFO      bad line  bad.jsonl:")]
    assert [ln.split()[3] for ln in notes] == ["bad.jsonl:4", "bad.jsonl:12", "bad.jsonl:13"]  # (1-based lines)
    assert out.splitlines()[-1].endswith("3 bad lines; --fail-on critical: exit 0")
    code, js, _ = check(str(path), "--window", "100000", "--json")
    doc = json.loads(js)
    assert code == 0 and doc["exit_status"] == 0 and doc["flags"] == []
    assert [(n["line"], n["severity"]) for n in doc["notes"]] == [(4, "info"), (12, "info"), (13, "info")]
    # with a critical flag the bad lines do not hide it
    b24 = b24_records()
    body2 = "".join(json.dumps(r) + "\n" for r in b24[:50]) + "garbage\n" + "".join(json.dumps(r) + "\n"
                                                                                    for r in b24[50:])
    p2 = tmp_path / "bad24.jsonl"
    p2.write_text(body2)
    code, out, _ = check(str(p2), "--window", "128000")
    assert code == 1 and "INFO      bad line  bad24.jsonl:51  " in out


def test_a_line_with_two_issues_is_one_bad_line_and_no_issue_hides_behind_one_more(tmp_path: Path) -> None:
    """A line with NUL bytes that is also invalid JSON has two issues: it was counted as two bad lines (10 for 9
    damaged lines); and with 21 issues the 21st was hidden behind "note  1 more", labelled a note although it
    was a bad line.  Lines 2..10 hold invalid JSON, line 2 also NUL bytes: 9 bad lines, 10 issues."""
    recs = clean_records(3)
    lines = [json.dumps(recs[0]), '{"a": \x00 bad', *["{not json"] * 8, *(json.dumps(r) for r in recs[1:])]
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    _, out, _ = check(str(path), "--window", "100000")
    assert out.splitlines()[-1].endswith("9 bad lines; --fail-on critical: exit 0")
    assert CliRunner().invoke(main, ["report", str(path)]).output.splitlines()[0].endswith(
        "calls=3  issues=10 (9 bad lines; 1 more issue on the same lines)")
    # 21 issues: all are printed (a line "1 more" takes the room of the issue itself); 22: 20, then the count
    for n_bad, printed, more in ((21, 21, None), (22, 20, "2 more issues (2 bad lines; lines 22–23;")):
        body = [json.dumps(recs[0]), *["{not json"] * n_bad, json.dumps(recs[1])]
        path.write_text("\n".join(body) + "\n")
        _, out, _ = check(str(path), "--window", "100000")
        rows = [ln for ln in out.splitlines() if ln.startswith("INFO      bad line  bad.jsonl:")]
        assert [int(r.split()[3].split(":")[1]) for r in rows] == list(range(2, 2 + printed))
        tail = [ln for ln in out.splitlines() if ln.startswith("INFO      more")]
        assert (tail[0].split("  more  ", 1)[1].startswith(more) if more else tail == []), out


def test_the_cut_before_more_issues_never_splits_a_line(tmp_path: Path) -> None:
    """19 bad lines, then line 21 with NUL bytes and invalid JSON (two issues), then lines 22 and 23: the 20th
    printed issue was line 21's first, and "3 more issues (3 bad lines" counted line 21 again (22 bad lines in
    all, 23 by the two parts).  Line 21's issues are printed together; 2 more (lines 22–23) follow."""
    recs = clean_records(2)
    body = [json.dumps(recs[0]), *["{not json"] * 19, '{"a": \x00 bad', "{not json", "{not json",
            json.dumps(recs[1])]
    path = tmp_path / "split.jsonl"
    path.write_text("\n".join(body) + "\n")
    _, out, _ = check(str(path), "--window", "100000")
    rows = [int(ln.split()[3].split(":")[1]) for ln in out.splitlines()
            if ln.startswith("INFO      bad line  split.jsonl:")]
    assert rows == [*range(2, 21), 21, 21]
    more = [ln for ln in out.splitlines() if ln.startswith("INFO      more")]
    assert more == ["INFO      more  2 more issues (2 bad lines; lines 22–23; --json lists them all)"]
    assert out.splitlines()[-1].endswith("22 bad lines; --fail-on critical: exit 0")


def test_a_file_of_only_bad_lines_is_unreadable(tmp_path: Path) -> None:
    path = tmp_path / "allbad.jsonl"
    path.write_text('{"request": {"model": "gpt-4o"}, "response": {}}\n'.replace("request", "req") * 3)
    code, _, err = check(str(path), "--format", "canonical")
    assert code == 2 and f"no call could be read (3 bad lines; {path}:1: not a {{request, response}} record" in err


@pytest.mark.parametrize(("body", "what"), [("", "empty"), ("\n  \n\t\r\n", "blank (only whitespace)")])
def test_empty_file_is_fine(tmp_path: Path, body: str, what: str) -> None:
    """An empty file, or one of blank lines only, is a log with no record yet: exit 0 and a note (the blank
    one exited 2 as "format not recognised")."""
    path = tmp_path / "empty.jsonl"
    path.write_text(body)
    code, out, _ = check(str(path))
    assert code == 0 and "0 calls, 0 flags" in out and "forecast: no calls" in out
    assert f"the file is {what}: no record to read yet" in out


def test_json_output(tmp_path: Path) -> None:
    path = write(tmp_path, b24_records(), "b24.jsonl")
    code, out, _ = check(str(path), "--window", "128000", "--json")
    doc = json.loads(out)
    assert code == 1 and doc["exit_status"] == 1 and doc["fail_on"] == "critical" and doc["format"] == "canonical"
    ev = next(f for f in doc["flags"] if f["kind"] == "system_prompt_evicted")
    assert set(ev) == {"kind", "severity", "call", "number", "reason", "evidence", "context"}
    assert (ev["call"], ev["number"], ev["severity"]) == (40, 41, "critical")  # (#41 in the text)
    assert {"calls_to_trigger", "seconds_to_window", "slope_tokens_per_call", "basis", "note"} <= set(doc["forecast"])
    assert doc["notes"] == []


def test_json_output_of_input_that_cannot_be_read_says_why(tmp_path: Path) -> None:
    """``check --json`` on input it cannot read writes a JSON document saying so (a CI job parsing standard
    output found it empty), with the status and the message standard error gives; a usage error writes none."""
    missing, notlog = tmp_path / "missing.jsonl", tmp_path / "notes.jsonl"
    notlog.write_text("plain text, not JSON\n")
    for paths, said in (([missing], f"{missing}: no such file"),
                        ([notlog], f"{notlog}: format not recognised; none of its first lines is JSON"),
                        ([notlog, missing], f"{missing}: no such file")):
        code, out, err = check(*map(str, paths), "--json", "--min-calls", "1")
        doc = json.loads(out)
        assert code == 2 and doc["exit_status"] == 2 and doc["error"] in err and doc["error"].startswith(said)
        assert doc["file"] == (str(paths[0]) if len(paths) == 1 else [str(p) for p in paths])
        assert (doc["calls"], doc["format"], doc["min_calls"], doc["fail_on"]) == (None, None, 1, "critical")
    code, out, _ = check(str(missing), "--json", "--fail-on", "error")
    assert code == 2 and out == ""


def test_a_command_is_imported_only_when_it_runs_or_the_help_lists_it() -> None:
    """``ctxwatch report`` loads neither the planner nor the demo nor the dashboard; the group's help lists every
    command; whichever module is imported first, the group's ``check`` is ``ctxwatch.cli.check.check_cmd``."""
    code = ("import sys\nfrom click.testing import CliRunner\nfrom ctxwatch.cli import main\n"
            "CliRunner().invoke(main, ['report', '--help'])\n"
            "assert not [m for m in sys.modules if m.startswith(('ctxwatch.planner', 'ctxwatch.demo', 'textual'))]\n"
            "out = CliRunner().invoke(main, ['--help']).output\n"
            "assert all(f'  {c} ' in out for c in ('watch', 'report', 'check', 'plan', 'schema', 'demo', 'cache'))\n")
    subprocess.run([sys.executable, "-c", code], check=True)
    code = ("import ctxwatch.cli.check\nimport ctxwatch.cli as c\n"
            "assert c.check_cmd is ctxwatch.cli.check.check_cmd\n"
            "assert c.main.get_command(None, 'check') is ctxwatch.cli.check.check_cmd\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_batch_results_without_their_request_are_notes_not_bad_lines(tmp_path: Path, shared_logs: Path) -> None:
    """A batch pair whose input file lacks one request: its result stays a call with reported usage only and
    is reported (a note at its line), but it is not a damaged line: the summary says 0 bad lines, 1 note."""
    src = shared_logs / "openai-batch"
    requests = (src / "reviews_batchinput.jsonl").read_text().splitlines(keepends=True)
    dropped = json.loads(requests[4])["custom_id"]
    inp = tmp_path / "in.jsonl"
    inp.write_text("".join(requests[:4] + requests[5:]))
    out_file = src / "reviews_batch_output.jsonl"
    result_line = next(i for i, ln in enumerate(out_file.read_text().splitlines(), 1)
                       if json.loads(ln)["custom_id"] == dropped)
    code, out, _ = check(str(inp), str(out_file))
    assert code == 0
    assert out.splitlines()[-1] == ("100 calls, 0 flags (0 critical, 0 warn, 0 info), 0 bad lines, 1 note; "
                                    "--fail-on critical: exit 0")
    notes = [ln for ln in out.splitlines() if ln.startswith("INFO      note")]
    # (two files: the note names its file)
    assert len(notes) == 1 and f"note  reviews_batch_output.jsonl:{result_line}  unmatched_result" in notes[0]


def test_notes_and_a_half_written_last_line_do_not_make_a_log_unreadable(tmp_path: Path, shared_logs: Path) -> None:
    """Exit 2 means 'nothing could be read and the log is damaged'. A folder holding an empty log and a
    config.json (a note), or a live Claude Code log whose first response is still being written (a truncated
    tail), has no call yet but is not unreadable: exit 0."""
    folder = tmp_path / "proj"
    folder.mkdir()
    (folder / "a.jsonl").write_text("")
    (folder / "config.json").write_text('{"a": 1}\n')
    code, out, _ = check(str(folder))
    # (the empty log and config.json are a note each)
    assert code == 0 and out.splitlines()[-1].startswith("0 calls, 0 flags") and "0 bad lines, 2 notes" in out
    lines = (shared_logs / "claude-code" / "spotter_short.jsonl").read_text().splitlines(keepends=True)
    first = next(i for i, ln in enumerate(lines) if '"type":"assistant"' in ln)
    live = tmp_path / "live.jsonl"
    live.write_text("".join(lines[:first]) + lines[first][: len(lines[first]) // 2])
    code, out, _ = check(str(live))
    assert code == 0 and "truncated_tail" in out and "1 bad line;" in out
    live.write_text("".join(lines[:first]) + "{not json\n" + lines[first][: len(lines[first]) // 2])
    code, _, err = check(str(live))
    assert code == 2 and "no call could be read (2 bad lines" in err
    # an OpenAI-format log whose only record is half written: a log being created, not an unknown format
    first_record = tmp_path / "first.jsonl"
    first_record.write_text('{"request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"')
    code, out, _ = check(str(first_record))
    assert code == 0 and "truncated_tail" in out and out.splitlines()[-1].startswith("0 calls")


def test_a_forced_format_that_reads_nothing_in_a_folder_is_unreadable(tmp_path: Path, shared_logs: Path) -> None:
    """--format codex on a folder holding a Claude Code session reads no call: said per file, exit 2 (as for
    the file given alone), in the serial and in the parallel read alike."""
    from helpers import serial_and_parallel

    folder = tmp_path / "proj"
    folder.mkdir()
    src = shared_logs / "claude-code" / "spotter_short.jsonl"
    (folder / "s.jsonl").write_text(src.read_text())
    (folder / "t.jsonl").write_text(src.read_text())  # (two files: the parallel read needs two tasks)
    records = sum(1 for ln in src.read_text().splitlines() if ln.strip())
    code, _, err = check(str(folder), "--format", "codex")
    assert code == 2 and f"{records} records, none read as a call in format codex (it looks like claude-code)" in err
    serial, par = serial_and_parallel(folder, "codex")
    assert [i["kind"] for i in serial["issues"]] == ["format_mismatch"] * 2
    assert [i["kind"] for i in par["issues"]] == ["format_mismatch"] * 2


def test_a_forced_format_on_a_file_of_copies_is_not_a_mismatch(tmp_path: Path, shared_logs: Path) -> None:
    """A resumed Claude Code session copies the earlier file's lines: with --format claude-code the copy's
    calls are all known already, but they were read in that format, so there is no format_mismatch and check
    exits 0 (it said "N records, none read as a call in format claude-code" and exited 2), serially and in
    parallel."""
    from ctxwatch.config import Settings
    from ctxwatch.engine import folder as multi
    from ctxwatch.engine import parallel
    from ctxwatch.output.report import report_json

    folder = tmp_path / "proj"
    folder.mkdir()
    src = (shared_logs / "claude-code" / "spotter_short.jsonl").read_text()
    (folder / "a.jsonl").write_text(src)
    (folder / "b.jsonl").write_text(src)
    code, out, err = check(str(folder), "--format", "claude-code")
    assert code == 0, (out, err)
    serial = report_json(multi.load_many([str(folder)], "claude-code", Settings()))
    old = parallel.PARALLEL_MIN_BYTES
    parallel.PARALLEL_MIN_BYTES = 0
    try:
        par = report_json(multi.load_many([str(folder)], "claude-code", Settings(), parallel=True))
    finally:
        parallel.PARALLEL_MIN_BYTES = old
    alone = report_json(multi.load_many([str(folder / "a.jsonl")], "claude-code", Settings()))
    for doc in (serial, par):
        assert "format_mismatch" not in [i["kind"] for i in doc["issues"]]
        assert len(doc["calls"]) == len(alone["calls"]) > 0  # each response once


def _as_unprivileged() -> list[str] | None:
    """A command prefix that runs without root's read-anything power (a user namespace), or ``None``."""
    import shutil

    if os.name != "posix":
        return None
    if os.geteuid() != 0:
        return []
    unshare = shutil.which("unshare")
    if unshare is None or subprocess.run([unshare, "-U", "true"], capture_output=True).returncode != 0:
        return None
    return [unshare, "-U"]


def test_a_folder_whose_only_log_cannot_be_read_says_so(tmp_path: Path) -> None:
    """A folder whose only log is mode 000: the error names the file and the permission problem (it said
    "no log in a recognised format", as if the file were not a log)."""
    prefix = _as_unprivileged()
    if prefix is None:
        pytest.skip("no way to drop root's read-anything power here")
    folder = tmp_path / "logs"
    folder.mkdir()
    log = write(folder, clean_records(3), name="b.jsonl")
    log.chmod(0)
    try:
        res = subprocess.run([*prefix, sys.executable, "-c", "from ctxwatch.cli import main; main()", "check",
                              str(folder)], capture_output=True, text=True, timeout=120)
    finally:
        log.chmod(0o644)
    assert res.returncode == 2
    assert f"{folder}: no log could be read: {log}: cannot read (Permission denied)" in res.stderr


def test_reported_prompts_of_0_leave_the_estimate_to_the_flags(tmp_path: Path) -> None:
    """A log whose every reported prompt is 0 (a proxy that logs no usage as zeros): the table used the
    estimate (README: "the estimate stands in for it"), but the analysis dropped every call, so the trigger,
    budget and window-forecast flags and the forecast were gone.  They now fire where they fire when the
    demo run reports its real prompts (the demo's counts are o200k_base, equal to the estimates)."""
    import re

    from ctxwatch.cli import main as cli_main

    run = tmp_path / "run.jsonl"
    assert CliRunner().invoke(cli_main, ["demo", "--write", str(run)]).exit_code == 0
    zero = tmp_path / "zero.jsonl"
    zero.write_text(re.sub(r'"prompt_tokens": ?\d+', '"prompt_tokens": 0', run.read_text()))

    def flags(path: Path) -> dict[str, list[int]]:
        doc = json.loads(CliRunner().invoke(cli_main, ["check", str(path), "--json"]).output)
        out: dict[str, list[int]] = {}
        for f in doc["flags"]:
            out.setdefault(f["kind"], []).append(f["call"])
        return out

    real, zeroed = flags(run), flags(zero)
    for kind in ("trigger_no_compaction", "over_budget", "window_forecast"):
        assert zeroed.get(kind) == real.get(kind) and real.get(kind), kind
    assert len(zeroed["implausible_usage"]) == len(run.read_text().splitlines()) - 1  # (the refused call has none)


def test_a_bad_line_of_a_single_file_names_the_file_and_its_message_is_whole(tmp_path: Path) -> None:
    """`check` on one file listed `bad line  line 2  invalid_json` with no file name (report and a check of
    several files name it), and cut json's message short: `invalid JSON at column 14: Invalid control character
    at`.  Line 2 is `{"session":"a<U+0001>b"}`: the raw control character is the 14th character (counted by
    hand: `{"session":"a` is 13)."""
    recs = clean_records(3)
    path = tmp_path / "ctl.jsonl"
    path.write_text(json.dumps(recs[0]) + "\n" + '{"session":"a\x01b"}\n' + json.dumps(recs[1]) + "\n")
    _, out, _ = check(str(path), "--window", "100000")
    (row,) = [ln for ln in out.splitlines() if ln.startswith("INFO      bad line")]
    assert row == ("INFO      bad line  ctl.jsonl:2  invalid_json  invalid JSON at column 14: Invalid control "
                   "character there")
    report = CliRunner().invoke(main, ["report", str(path), "--window", "100000"]).output
    assert f"issue: {path}:2: invalid_json: invalid JSON at column 14: Invalid control character there" in report


def test_check_json_tells_bad_lines_from_notes(clean: Path) -> None:
    """A truncated last line is a bad line: the text says "1 bad line", and ``check --json`` counts it in
    ``bad_lines`` and marks its note ``bad_line``."""
    with open(clean, "a", encoding="utf-8") as fh:
        fh.write('{"model": "gpt-4o", "request": {"messages": [')  # (cut mid-record, no newline)
    code, out, _ = check(str(clean), "--window", "100000")
    assert code == 0 and "1 bad line" in out
    code, out, _ = check(str(clean), "--window", "100000", "--json")
    doc = json.loads(out)
    assert code == 0
    assert doc["bad_lines"] == 1
    assert [(n["kind"], n["bad_line"]) for n in doc["notes"]] == [("truncated_tail", True)]


def test_fail_on_info_fails_on_a_log_with_only_info_flags(tmp_path: Path) -> None:
    """``--fail-on info`` was refused (``'info' is not one of 'warn', 'critical'``) though check prints INFO
    flags.  Ten Claude calls whose reported prompt is 1.10 x the words (the calibration absorbs it) but #6 at
    1.10 x 1.12: its estimate disagrees by ~12 %, an info flag, and nothing else is flagged (window 100,000,
    prompts under 3,500)."""
    recs = [rec(i, round(1.10 * (2000 + 100 * i)), words=2000 + 100 * i) for i in range(10)]
    recs[5] = rec(5, round(1.10 * 1.12 * 2500), words=2500)
    for r in recs:
        r["request"]["model"] = "claude-sonnet-4-20250514"
        u = r["response"]["usage"]
        r["response"]["usage"] = {"input_tokens": u["prompt_tokens"], "output_tokens": u["completion_tokens"]}
    path = write(tmp_path, recs, "info.jsonl")
    code, out, _ = check(str(path), "--window", "100000", "--json")
    doc = json.loads(out)
    assert doc["flags"] and {f["severity"] for f in doc["flags"]} == {"info"}
    assert (code, doc["fail_on"], doc["exit_status"]) == (0, "critical", 0)
    assert check(str(path), "--window", "100000", "--fail-on", "warn")[0] == 0
    code, out, _ = check(str(path), "--window", "100000", "--fail-on", "info")
    assert code == 1 and out.splitlines()[-1].endswith("--fail-on info: exit 1")
    assert any(ln.startswith("INFO") for ln in out.splitlines())
    code, out, _ = check(str(path), "--window", "100000", "--fail-on", "info", "--json")
    doc = json.loads(out)
    assert (code, doc["fail_on"], doc["exit_status"]) == (1, "info", 1)


def test_min_calls_fails_a_log_with_fewer_calls(clean: Path, tmp_path: Path) -> None:
    """``--min-calls N`` exits 1 when fewer than N calls were read (a job whose log stayed empty), and says so
    on the summary line and in ``--json`` (``min_calls``, ``calls``); the default, 0, asks for none."""
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert check(str(empty))[0] == 0
    code, out, _ = check(str(empty), "--min-calls", "1")
    assert code == 1
    assert out.splitlines()[-1] == ("0 calls, 0 flags (0 critical, 0 warn, 0 info), 0 bad lines, 1 note; "
                                    "--fail-on critical, fewer than --min-calls 1: exit 1")
    n = sum(1 for line in clean.read_text().splitlines() if line.strip())  # (one call a line)
    code, out, _ = check(str(clean), "--window", "100000", "--min-calls", str(n + 1), "--json")
    doc = json.loads(out)
    assert code == 1 and (doc["min_calls"], doc["calls"], doc["exit_status"]) == (n + 1, n, 1)
    assert doc["flags"] == []
    code, out, _ = check(str(clean), "--window", "100000", "--min-calls", str(n))
    assert code == 0 and out.splitlines()[-1].endswith("--fail-on critical: exit 0")
    assert check(str(clean), "--min-calls", "-1")[0] == 2  # (a usage error)


def _unprivileged_check(prefix: list[str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*prefix, sys.executable, "-c", "from ctxwatch.cli import main; main()", "check", *args],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "400"})


def test_check_json_on_a_file_it_may_not_read_prints_its_document(tmp_path: Path) -> None:
    """A file of mode 000 given to ``check --json``: click refused it with its own usage error, so a CI job got
    no JSON; it is ctxwatch's unreadable input now, with the document that says why (status 2)."""
    prefix = _as_unprivileged()
    if prefix is None:
        pytest.skip("no way to drop root's read-anything power here")
    log = write(tmp_path, clean_records(3), name="locked.jsonl")
    log.chmod(0)
    try:
        res = _unprivileged_check(prefix, str(log), "--json")
    finally:
        log.chmod(0o644)
    assert res.returncode == 2
    doc = json.loads(res.stdout)
    assert doc["exit_status"] == 2 and doc["calls"] is None
    assert doc["error"] == f"{log}: cannot read (Permission denied)"


def test_a_folder_with_a_log_it_may_not_read_is_no_pass(tmp_path: Path) -> None:
    """A folder of two logs, one of mode 000: the other is checked and the unreadable one named, but the status
    is 2 (no check of that log was made), not the 0 of a clean pass."""
    prefix = _as_unprivileged()
    if prefix is None:
        pytest.skip("no way to drop root's read-anything power here")
    folder = tmp_path / "logs"
    folder.mkdir()
    write(folder, clean_records(3), name="a.jsonl")
    locked = write(folder, clean_records(3), name="b.jsonl")
    locked.chmod(0)
    try:
        text = _unprivileged_check(prefix, str(folder))
        js = _unprivileged_check(prefix, str(folder), "--json")
    finally:
        locked.chmod(0o644)
    assert text.returncode == 2 and js.returncode == 2
    assert text.stdout.splitlines()[-1].endswith(", 1 log not read: exit 2")
    assert f"unreadable  {locked}: cannot read (Permission denied)" in text.stdout
    doc = json.loads(js.stdout)
    assert doc["calls"] == 3 and doc["exit_status"] == 2 and doc["unread"] == [str(locked)]


def test_a_binary_file_or_one_in_utf16_is_named_so(tmp_path: Path) -> None:
    """A file of random bytes (seeded; one byte in eight is a raw control byte, and most sequences are not UTF-8)
    is named binary data by every command that reads one log, not "format not recognised" with the first bad
    line's damage; a UTF-16 copy of a real log (its byte-order mark) is told to be converted.  Exit status 2."""
    import random

    rng = random.Random(7)
    junk = tmp_path / "junk.jsonl"
    junk.write_bytes(bytes(rng.randrange(256) for _ in range(20_000)))
    wide = tmp_path / "wide.jsonl"
    wide.write_bytes((Path(__file__).resolve().parent.parent / "sample_logs" / "openai_chat_demo.jsonl").read_text()
                     .encode("utf-16"))
    for command in (["report"], ["check"], ["plan"], ["report", "--json"]):
        res = CliRunner().invoke(main, [*command, str(junk)])
        assert res.exit_code == 2, res.output
        assert f"{junk}: binary data, not a text log (its first 20,000 bytes are not UTF-8 text)" in res.output
        res = CliRunner().invoke(main, [*command, str(wide)])
        assert res.exit_code == 2, res.output
        assert f"{wide}: UTF-16 text, not UTF-8: convert it first (iconv -f UTF-16 -t UTF-8" in res.output
