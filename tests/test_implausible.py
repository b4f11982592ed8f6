"""Failure case B13: a reported prompt no request can have is flagged "implausible, ignored", and ignored as
occupancy everywhere (used %, free, peak, calibration, the forecast), while the raw report stays visible.

The B13 input is the B12 file plus the two B13 lines of ``../shared/cases/failure_cases.md``, written out here
literally.  Every expected number is worked out by hand from those lines:

* the window is ``model_context_window`` (272,000, then 570,000 on the last line); the reserve is the default
  0.15 of it (40,800; 85,500);
* the calls' prompts are ``last_token_usage.input_tokens``: 1,000 (10:00:05; the 10:00:06 line repeats its
  totals), 2,000 (10:01), 60,000 (10:02) and 4,280,000 (10:03, above its 570,000 window: implausible);
* free = window - prompt - reserve: 272,000 - 60,000 - 40,800 = 171,200 at 10:02.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers import claude_code_turn

from ctxwatch.cli import main

SESSION = "00000000-0000-7000-8000-000000000001"
B12_LINES = [
    '{"timestamp":"2025-05-01T10:00:00.000Z","type":"session_meta","payload":{"id":"' + SESSION + '",'
    '"cwd":"/tmp","originator":"codex_cli_rs"}}',
    '{"timestamp":"2025-05-01T10:00:00.100Z","type":"turn_context","payload":{"model":"gpt-5"}}',
    '{"timestamp":"2025-05-01T10:00:05.000Z","type":"event_msg","payload":{"type":"token_count","info":{'
    '"total_token_usage":{"input_tokens":1000,"cached_input_tokens":0,"output_tokens":100,'
    '"reasoning_output_tokens":0,"total_tokens":1100},"last_token_usage":{"input_tokens":1000,'
    '"cached_input_tokens":0,"output_tokens":100,"reasoning_output_tokens":0,"total_tokens":1100},'
    '"model_context_window":272000}}}',
    '{"timestamp":"2025-05-01T10:00:06.000Z","type":"event_msg","payload":{"type":"token_count","info":{'
    '"total_token_usage":{"input_tokens":1000,"cached_input_tokens":0,"output_tokens":100,'
    '"reasoning_output_tokens":0,"total_tokens":1100},"last_token_usage":{"input_tokens":1000,'
    '"cached_input_tokens":0,"output_tokens":100,"reasoning_output_tokens":0,"total_tokens":1100},'
    '"model_context_window":272000}}}',
    '{"timestamp":"2025-05-01T10:01:00.000Z","type":"event_msg","payload":{"type":"token_count","info":{'
    '"total_token_usage":{"input_tokens":3000,"cached_input_tokens":900,"output_tokens":300,'
    '"reasoning_output_tokens":0,"total_tokens":3300},"last_token_usage":{"input_tokens":2000,'
    '"cached_input_tokens":900,"output_tokens":200,"reasoning_output_tokens":0,"total_tokens":2200},'
    '"model_context_window":272000}}}',
]
B13_LINES = [
    '{"timestamp":"2025-05-01T10:02:00.000Z","type":"event_msg","payload":{"type":"token_count","info":{'
    '"total_token_usage":{"input_tokens":900000,"cached_input_tokens":800000,"output_tokens":5000,'
    '"reasoning_output_tokens":0,"total_tokens":905000},"last_token_usage":{"input_tokens":60000,'
    '"cached_input_tokens":55000,"output_tokens":400,"reasoning_output_tokens":0,"total_tokens":60400},'
    '"model_context_window":272000}}}',
    '{"timestamp":"2025-05-01T10:03:00.000Z","type":"event_msg","payload":{"type":"token_count","info":{'
    '"total_token_usage":{"input_tokens":5000000,"cached_input_tokens":0,"output_tokens":9000,'
    '"reasoning_output_tokens":0,"total_tokens":5009000},"last_token_usage":{"input_tokens":4280000,'
    '"cached_input_tokens":0,"output_tokens":0,"reasoning_output_tokens":0,"total_tokens":4280000},'
    '"model_context_window":570000}}}',
]

#: A Codex token_count after B12's first call that reports 0 prompt tokens and 50 output tokens.
ZERO_LINE = ('{"timestamp":"2025-05-01T10:01:00.000Z","type":"event_msg","payload":{"type":"token_count","info":{'
             '"total_token_usage":{"input_tokens":1000,"cached_input_tokens":0,"output_tokens":150,'
             '"reasoning_output_tokens":0,"total_tokens":1150},"last_token_usage":{"input_tokens":0,'
             '"cached_input_tokens":0,"output_tokens":50,"reasoning_output_tokens":0,"total_tokens":50},'
             '"model_context_window":272000}}}')


def b13_file(tmp_path: Path) -> Path:
    """The B13 input: the B12 file plus the two B13 lines (lines 6 and 7)."""
    path = tmp_path / "b13.jsonl"
    path.write_text("\n".join(B12_LINES + B13_LINES) + "\n")
    return path


def opus_41_file(tmp_path: Path, reads: list[int]) -> Path:
    """A Claude Code session of ``claude-opus-4-1`` (no 1M-token beta: a 200,000-token window), one response per
    entry of ``reads``: ``input_tokens`` 5 + cache write 100 + cache read ``reads[i]``."""
    rows: list[dict[str, Any]] = []
    parent = None
    for i, read in enumerate(reads):
        ts = f"2025-10-01T00:00:0{i}Z"
        rows += claude_code_turn(i, read, parent, ts)
        parent = f"a{i}"
    path = tmp_path / "o41.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def cli(*args: str) -> str:
    res = CliRunner().invoke(main, list(args))
    assert res.exit_code == 0, res.output
    return res.output


def report(path: Path) -> dict[str, Any]:
    return json.loads(cli("report", str(path), "--json"))


# --- occupancy: per call, peak, run ---------------------------------------------------------------------------

def test_b13_report_json_gives_no_occupancy_for_the_implausible_report(tmp_path: Path) -> None:
    """It showed used_fraction 7.5088 and free_tokens -3,795,500 (570,000 - 4,280,000 - 85,500), and a peak
    prompt of 4,280,000.  The call's occupancy is now unknown (null), the raw report stays, marked."""
    doc = report(b13_file(tmp_path))
    calls = doc["calls"]
    assert [c["prompt_tokens_reported"] for c in calls] == [1000, 2000, 60000, 4_280_000]
    at_1002, at_1003 = calls[2], calls[3]
    # (a Codex log: Codex keeps no reserve inside the window it states, the harness's rule)
    assert at_1002["free_tokens"] == 272_000 - 60_000 - 0 == 212_000
    assert at_1002["used_fraction"] == round(60_000 / 272_000, 4) == 0.2206
    assert at_1003["window"] == 570_000 and at_1003["reserve_tokens"] == 0
    assert at_1003["free_tokens"] is None and at_1003["used_fraction"] is None
    (s,) = doc["sessions"]
    assert s["peak_prompt_tokens"] == 60_000  # the largest plausible prompt, not 4,280,000
    assert s["peak_prompt_source"] == "reported"
    assert [c["prompt_implausible"] for c in calls] == [False, False, False, True]
    assert s["implausible_prompts"] == 1
    # What the provider counted stays counted: the token sum and the cost keep the report as it is.
    assert s["input_tokens"] == 1000 + 2000 + 60_000 + 4_280_000
    # gpt-5: $1.25 per million uncached input tokens, nothing cached, no output on this line (OpenAI's price list)
    assert at_1003["cost_usd"] == 5.35
    # The session: every call at gpt-5's $1.25 input, $0.125 cached input, $10 output per million, by hand:
    # 1,000*1.25 + 100*10 = 2,250; 1,100*1.25 + 900*0.125 + 200*10 = 3,487.5;
    # 5,000*1.25 + 55,000*0.125 + 400*10 = 17,125; 4,280,000*1.25 = 5,350,000 -> 5,372,862.5 per million.
    assert s["cost_usd"] == pytest.approx((2_250 + 3_487.5 + 17_125 + 5_350_000) / 1e6, rel=1e-12)


def test_b13_report_table_shows_unknown_occupancy_and_marks_the_report(tmp_path: Path) -> None:
    out = cli("report", str(b13_file(tmp_path)))
    row = next(line for line in out.splitlines() if line.split()[:2] == ["4", "7"])
    # columns: # line model window floor history reserve free used% reported
    assert row.split()[3:] == ["570,000", "?", "?", "0", "?", "?", "4,280,000!"]
    assert "750.9" not in out and "-3,795,500" not in out
    assert "reported! = implausible" in out
    assert "1 implausible report of 4,280,000 included as reported" in out
    third = next(line for line in out.splitlines() if line.split()[:2] == ["3", "6"])
    assert third.split()[-3:] == ["212,000", "22.1", "60,000"]


def test_opus_4_1_prompt_over_200k_is_no_occupancy(tmp_path: Path) -> None:
    """claude-opus-4-1 offers no 1M-token window: prompts of 230,105 and 260,105 (5 + 100 + the cache read)
    exceed its 200,000 tokens.  They showed used 115.1 % and 130.1 % and a peak of 260,105."""
    doc = report(opus_41_file(tmp_path, [150_000, 180_000, 230_000, 260_000]))
    calls = doc["calls"]
    assert [c["window"] for c in calls] == [200_000] * 4
    assert [c["prompt_tokens_reported"] for c in calls] == [150_105, 180_105, 230_105, 260_105]
    # (Claude Code keeps 20,000 of the window for its compaction summary: the harness's reserve)
    assert [c["free_tokens"] for c in calls] == [200_000 - 150_105 - 20_000, 200_000 - 180_105 - 20_000, None, None]
    assert [c["used_fraction"] for c in calls][2:] == [None, None]
    assert doc["sessions"][0]["peak_prompt_tokens"] == 180_105
    assert [c["prompt_implausible"] for c in calls] == [False, False, True, True]
    assert [f["call"] for f in doc["flags"] if f["kind"] == "implausible_usage"] == [2, 3]
    assert doc["forecast"]["occupancy_tokens"] == 180_105 and doc["forecast"]["at_call"] == 1


def test_run_occupancy_passes_over_an_implausible_report(tmp_path: Path) -> None:
    """The context's current occupancy (B13: "the last plausible occupancy stays") is 60,000, not 4,280,000."""
    from ctxwatch.engine import load_run

    assert load_run(str(b13_file(tmp_path))).occupancy("main") == (60_000, "reported")


def test_calibration_leaves_an_implausible_report_out(tmp_path: Path) -> None:
    """The run's reported/estimated median took an implausible report as a tokenizer measure.  Four calls
    with the same request of estimate E (o200k_base is gpt-4o's own tokenizer; the OpenAI cookbook count: 3
    per message, its role's and content's tokens, and 3 to prime the reply) report E, 1.5E, 1.8E and 200,000
    (above gpt-4o's 128,000-token window): the median of the three plausible ratios is 1.5, not
    (1.5 + 1.8) / 2 = 1.65."""
    from ctxwatch.tokens import get_tokenizer

    enc = get_tokenizer("o200k_base")
    text = "hello there, how are you today"
    est = 3 + len(enc.encode("user")) + len(enc.encode(text)) + 3
    rows = [{"timestamp": 1_700_000_000 + i, "request": {"model": "gpt-4o", "messages": [
        {"role": "user", "content": text}]}, "response": {"usage": {"prompt_tokens": p, "completion_tokens": 1}}}
        for i, p in enumerate([est, round(1.5 * est), round(1.8 * est), 200_000])]
    path = tmp_path / "cal.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    doc = report(path)
    assert [c["prompt_tokens_estimated"] for c in doc["calls"]] == [est] * 4
    assert doc["calibration"] == round(round(1.5 * est) / est, 4)
    assert doc["calls"][3]["free_tokens"] is None and doc["calls"][3]["prompt_implausible"] is True


def test_a_reported_prompt_of_0_with_nothing_to_stand_in_is_no_occupancy(tmp_path: Path) -> None:
    """A Codex call that reports 0 prompt tokens (and 50 output tokens): its floor and history were inferred
    from that 0 (0~ and 0~), so it showed used 0.0 % and free 231,200 (272,000 - 40,800), and the flag said an
    estimate of 0 stood in.  No request has an empty prompt: its occupancy is unknown."""
    path = tmp_path / "zero.jsonl"
    path.write_text("\n".join([*B12_LINES[:3], ZERO_LINE]) + "\n")
    doc = report(path)
    second = doc["calls"][1]
    assert second["prompt_tokens_reported"] == 0
    assert second["floor_tokens"] is None and second["history_tokens"] is None
    assert second["free_tokens"] is None and second["used_fraction"] is None
    assert second["prompt_implausible"] is True
    assert [f["kind"] for f in doc["flags"]] == ["implausible_usage"]


def cc_note(read: int) -> str:
    """The note of a claude-opus-4-1 call of :func:`opus_41_file` whose cache read is ``read`` (above 199,895:
    5 + 100 + ``read`` is more than the model's 200,000 tokens), as the Codex reader words its own."""
    return (f"usage reports {5 + 100 + read:,} prompt tokens (input 5 + cache write 100 + cache read {read:,}), "
            "more than the 200,000-token window of claude-opus-4-1-20250805: implausible, so no occupancy (kept "
            "in token totals and cost as reported)")


def test_a_claude_code_implausible_report_is_an_input_note_as_codex_gives(tmp_path: Path) -> None:
    """The Codex reader lists an implausible report as an input problem (an implausible_usage note at its line),
    the Claude Code reader did not: #3 and #4 of :func:`opus_41_file` (230,105 and 260,105 tokens, above the
    200,000 of claude-opus-4-1) were flagged, and report said "issues=0".  Each flagged call now has one note
    at its line (lines 6 and 8: each turn is a user line, then the response), and the header, check and the
    JSON count them as notes, not bad lines."""
    path = opus_41_file(tmp_path, [150_000, 180_000, 230_000, 260_000])
    doc = report(path)
    assert [(i["line"], i["kind"], i["message"]) for i in doc["issues"]] == [
        (6, "implausible_usage", cc_note(230_000)), (8, "implausible_usage", cc_note(260_000))]
    flagged = [f["call"] for f in doc["flags"] if f["kind"] == "implausible_usage"]
    assert [doc["calls"][c]["line"] for c in flagged] == [6, 8]
    assert cli("report", str(path)).splitlines()[0].endswith("calls=4  issues=2 (0 bad lines, 2 notes)")
    res = CliRunner().invoke(main, ["check", str(path)])
    assert res.exit_code == 0 and res.output.splitlines()[-1].endswith("0 bad lines, 2 notes; --fail-on critical: "
                                                                        "exit 0")


def test_a_claude_code_reported_0_is_an_input_note(tmp_path: Path) -> None:
    """A Claude Code response reporting input 0, no cache write and no cache read: no request has an empty
    prompt (the flag says so), and nothing stands in for it (Claude Code logs no system prompt or tools)."""
    path = opus_41_file(tmp_path, [50_000, 60_000])
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    rows[3]["message"]["usage"].update(input_tokens=0, cache_creation_input_tokens=0, cache_read_input_tokens=0)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    doc = report(path)
    assert [f["call"] for f in doc["flags"] if f["kind"] == "implausible_usage"] == [1]
    assert [(i["line"], i["kind"], i["message"]) for i in doc["issues"]] == [
        (4, "implausible_usage", "usage reports 0 prompt tokens (input 0 + cache write 0 + cache read 0), and "
                                 "every request has a prompt: implausible, so no occupancy")]


@pytest.mark.parametrize("workers", [False, True])
def test_a_claude_code_implausible_call_copied_into_a_resumed_session_gives_one_note(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: bool) -> None:
    """``claude --resume`` starts the new file with copies of the old session's records (same message ids and
    request ids, the new session id): the implausible call is one call, in the old file, with one note; read
    serially and by worker processes alike."""
    from ctxwatch.engine import parallel

    folder = tmp_path / "project"
    folder.mkdir()
    old = opus_41_file(folder, [150_000, 230_000])
    copies = [{**json.loads(line), "sessionId": "s2"} for line in old.read_text().splitlines()]
    copies += [{**r, "sessionId": "s2"} for r in claude_code_turn(2, 100_000, "a1", "2025-10-01T00:01:00Z")]
    (folder / "resumed.jsonl").write_text("".join(json.dumps(r) + "\n" for r in copies))
    os.utime(old, (1_700_000_000, 1_700_000_000))  # (read first: the folder is read oldest first)
    if workers:
        monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    doc = report(folder)
    assert len(doc["calls"]) == 3
    assert [(Path(i["file"]).name, i["line"], i["message"]) for i in doc["issues"]] == [
        ("o41.jsonl", 4, cc_note(230_000))]


# --- the flag, the forecast and the drift risk --------------------------------------------------------------------

def check_doc(path: Path) -> dict[str, Any]:
    res = CliRunner().invoke(main, ["check", str(path), "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


def test_b13_flag_says_what_is_ignored(tmp_path: Path) -> None:
    """The flag said "implausible, ignored" while the token totals and the cost count the report: it now says
    that it is ignored as occupancy, and kept there.  report prints the reason whole (it was cut at 160)."""
    path = b13_file(tmp_path)
    (f,) = check_doc(path)["flags"]
    reason = ("reported prompt 4,280,000 tokens at #4 exceeds the 570,000-token window: implausible, ignored as "
              "occupancy (last plausible: 60,000 at #3); kept in token totals and cost")
    assert (f["kind"], f["call"], f["reason"]) == ("implausible_usage", 3, reason)
    assert f"implausible_usage  {reason}\n" in cli("report", str(path))


def test_b13_forecast_thresholds_are_those_of_the_last_plausible_call(tmp_path: Path) -> None:
    """The forecast starts from 60,000 at #3 with #3's 272,000-token window, but took the limits of #4 (its
    570,000-token window).  With #3's own, under Codex's rule (a Codex log: no reserve in the window it states,
    the budget that window, the trigger 90/95 of it): limit 272,000; budget 272,000; trigger 257,684.
    Theil-Sen over (0, 1,000), (1, 2,000), (2, 60,000): median of 1,000, 29,500 and 58,000 = 29,500 per call;
    one call every 60 s."""
    fc = check_doc(b13_file(tmp_path))["forecast"]
    assert (fc["at_call"], fc["occupancy_tokens"], fc["window_tokens"]) == (2, 60_000, 272_000)
    assert fc["window_limit_tokens"] == 272_000 - 0
    assert (fc["budget_tokens"], fc["trigger_tokens"]) == (272_000, 272_000 * 90 // 95) == (272_000, 257_684)
    assert fc["slope_tokens_per_call"] == 29_500
    assert fc["calls_to_trigger"] == 7  # 197,684 / 29,500 = 6.7
    assert fc["calls_to_budget"] == 8  # 212,000 / 29,500 = 7.2
    assert fc["calls_to_window"] == 8 and fc["seconds_to_window"] == 480


def drift_risks(path: Path) -> list[dict[str, Any]]:
    from ctxwatch.analysis import analysis_json
    from ctxwatch.engine import load_run

    return analysis_json(load_run(str(path)), per_call=True)["drift_risk"]


def test_b13_drift_risk_measures_the_last_plausible_prompt_against_its_own_window(tmp_path: Path) -> None:
    """#4's risk stood on #3's 60,000 tokens measured against #4's 570,000-token window ("11% of window, 18% of
    budget").  Against #3's own: 60,000 / 272,000 = 22 %, and 22 % of the budget (Codex's rule: the budget is the
    window it states)."""
    risk = drift_risks(b13_file(tmp_path))[3]
    assert risk["occupancy"] is None and risk["used_fraction"] is None
    assert risk["reason"] == ("medium: reported usage implausible; using the last plausible occupancy (last "
                              "plausible prompt 60,000 at #3 = 22% of its window, 22% of budget)")


def test_drift_risk_of_a_call_without_usage_does_not_call_it_implausible(tmp_path: Path) -> None:
    """A Claude Code response logged without usage has no occupancy: its risk said "reported usage implausible"
    (medium), of a report that does not exist.  It is low, and names the last known prompt (5 + 100 + 60,000)."""
    path = opus_41_file(tmp_path, [50_000, 60_000, 70_000])
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    del rows[5]["message"]["usage"]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    risk = drift_risks(path)[2]
    assert risk["occupancy"] is None
    assert risk["reason"] == ("low: no drift signal (occupancy unknown; last known prompt 60,105 at #2 = 30% of "
                              "its window, 34% of budget)")  # 60,105 / 200,000; / Claude Code's 177,000


def test_forecast_note_counts_the_implausible_reports_it_left_out(tmp_path: Path) -> None:
    fc = report(opus_41_file(tmp_path, [150_000, 180_000, 230_000, 260_000]))["forecast"]
    assert fc["note"] == ("not enough data: 2 calls with a known prompt size since the start of the log (need 3; "
                          "2 implausible reports left out)")


def test_a_reported_prompt_of_0_flag_names_what_stands_in(tmp_path: Path) -> None:
    """A reported 0 with the request logged: the estimate stands in (its used % and free follow it), so the flag
    names the estimate, not a "last plausible" call; with nothing to stand in, the last plausible call, and no
    "kept in token totals and cost" (a 0 is neither summed nor priced)."""
    from ctxwatch.tokens import get_tokenizer

    enc = get_tokenizer("o200k_base")
    text = "hello there, how are you today"
    est = 3 + len(enc.encode("user")) + len(enc.encode(text)) + 3  # the OpenAI cookbook count, gpt-4o's tokenizer
    path = tmp_path / "zero_est.jsonl"
    path.write_text(json.dumps({"request": {"model": "gpt-4o", "messages": [{"role": "user", "content": text}]},
                                "response": {"usage": {"prompt_tokens": 0, "completion_tokens": 1}}}) + "\n")
    (f,) = check_doc(path)["flags"]
    assert f["reason"] == (f"reported prompt 0 tokens at #1 is 0, and every request has a prompt: implausible, "
                           f"ignored: the estimate ({est} tokens) stands in")
    path = tmp_path / "zero.jsonl"
    path.write_text("\n".join([*B12_LINES[:3], ZERO_LINE]) + "\n")
    (f,) = check_doc(path)["flags"]
    assert f["reason"] == ("reported prompt 0 tokens at #2 is 0, and every request has a prompt: implausible, "
                           "ignored as occupancy (last plausible: 1,000 at #1)")


# --- the eviction plan ------------------------------------------------------------------------------------------

def logged_request_file(tmp_path: Path) -> tuple[Path, int]:
    """Three gpt-4o calls of one logged request (system "be brief", one user message), reporting its exact size
    E twice, then 200,000 (above gpt-4o's 128,000-token window); returns the file and E (o200k_base is gpt-4o's
    own tokenizer; the OpenAI cookbook count: 3 per message plus its role's and content's tokens, and 3 to
    prime the reply)."""
    from ctxwatch.tokens import get_tokenizer

    enc = get_tokenizer("o200k_base")
    msgs = [("system", "be brief"), ("user", "hello there, how are you today")]
    est = sum(3 + len(enc.encode(role)) + len(enc.encode(text)) for role, text in msgs) + 3
    rows = [{"timestamp": 1_700_000_000 + i, "request": {"model": "gpt-4o", "messages": [
        {"role": r, "content": t} for r, t in msgs]}, "response": {"usage": {"prompt_tokens": p,
                                                                          "completion_tokens": 1}}}
        for i, p in enumerate([est, est, 200_000])]
    path = tmp_path / "plan.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path, est


def test_plan_does_not_scale_the_counts_to_an_implausible_report(tmp_path: Path) -> None:
    """plan scaled every count of the last call of :func:`logged_request_file` x11,764 to its implausible
    report ("before 200,000", "does NOT fit").  The counts stand as counted, and it says why."""
    path, est = logged_request_file(tmp_path)
    assert json.loads(cli("plan", str(path), "--call", "3", "--json"))["before_tokens"] == est
    assert ("the reported prompt is implausible (200,000 tokens, more than its 128,000-token window): sizes are "
            "o200k_base counts, not scaled to it") in cli("plan", str(path), "--call", "3")


def test_plan_of_an_implausible_codex_call_says_why_there_is_none(tmp_path: Path) -> None:
    """Codex infers the floor from the reported prompt, so #4 has none; plan said the log "starts
    mid-session", which it does not."""
    res = CliRunner().invoke(main, ["plan", str(b13_file(tmp_path)), "--call", "4"])
    assert res.exit_code != 0
    assert ("call #4 (--index 3): its reported prompt is implausible (4,280,000 tokens, more than its 570,000-token "
            "window), and this format's floor and history are sized from it: nothing to plan") in res.output
    assert "mid-session" not in res.output


def test_the_codex_implausible_note_writes_its_numbers_as_people_read_them(tmp_path: Path) -> None:
    """The reader's note said "reports 4280000 prompt tokens, more than the 570000-token window" beside a flag
    that writes 4,280,000 and 570,000: both B13 numbers (line 7) now have thousands separators."""
    doc = report(b13_file(tmp_path))
    (note,) = [i for i in doc["issues"] if i["kind"] == "implausible_usage"]
    assert note["line"] == 7
    assert note["message"].startswith("token_count reports 4,280,000 prompt tokens, more than the 570,000-token "
                                      "window: implausible")
