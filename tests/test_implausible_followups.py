"""Follow-ups of failure case B13 (a reported prompt above the window is implausible, no occupancy): what is
*not* implausible, and what an implausible call must not break for the calls around it.

Every expected number is worked out by hand from the input lines (noted beside each test), never taken from
ctxwatch's output.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from helpers import claude_code_turn

from ctxwatch.cli import main

SPOTTER = "claude-code/spotter_4d5611e5_lines700-800_compaction.jsonl"


def cli(*args: str, code: int | None = 0) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    if code is not None:
        assert result.exit_code == code, result.output
    return result.output


def report(*args: str) -> dict[str, Any]:
    return json.loads(cli("report", "--json", *args))


def check(*args: str) -> dict[str, Any]:
    return json.loads(cli("check", "--json", *args, code=None))


# --- 1. a window the user sets, and a request that proves its size, make overflow, not implausible reports ------

def test_a_smaller_window_option_turns_the_logs_usage_into_overflow_not_implausible(shared_logs: Path) -> None:
    """``--window 128000`` on the Claude Code compaction excerpt (claude-opus-4-6: 200,000 without the option).
    Line 1's usage: input 1 + cache write 1,350 + cache read 155,132 = 156,483 prompt tokens; the reserve is the
    default 0.15 x 128,000 = 19,200; free = 128,000 - 19,200 - 156,483 = -47,683; used 156,483 / 128,000 =
    122.3 %.  It made calls 1-5 implausible (used ? free ?, exit 0, no overflow flag)."""
    path = str(shared_logs / SPOTTER)
    doc = report(path, "--window", "128000")
    first = doc["calls"][0]
    assert (first["window"], first["window_source"], first["reserve_tokens"]) == (128_000, "option", 19_200)
    assert first["prompt_tokens_reported"] == 156_483 and first["prompt_implausible"] is False
    assert first["free_tokens"] == -47_683
    assert abs(first["used_fraction"] - 156_483 / 128_000) < 1e-4  # (JSON rounds it to 4 places)
    assert not any(c["prompt_implausible"] for c in doc["calls"])
    flags = check(path, "--window", "128000")["flags"]
    kinds = {f["kind"] for f in flags if f["call"] == 0}
    assert "implausible_usage" not in {f["kind"] for f in flags}
    assert {"reserve_breached", "over_budget"} <= kinds
    # The prompt alone is over the window (156,483 - 128,000 = 28,483): no request fits, so it is critical and
    # says so (it was a warn about "less room than a long completion may need").
    (breach,) = [f for f in flags if f["call"] == 0 and f["kind"] == "reserve_breached"]
    assert breach["severity"] == "critical"
    assert "(the prompt alone is 28,483 tokens over the window: the request cannot fit)" in breach["reason"]
    table = cli("report", path, "--window", "128000")
    assert "-47,683" in table and "122.3" in table and "156,483!" not in table


def test_a_window_option_does_not_rescue_a_report_above_the_models_own_window(tmp_path: Path) -> None:
    """The option is a what-if, not a licence: claude-opus-4-1 has no window above 200,000, so 4,000,105 tokens
    (5 + 100 + 4,000,000) stay implausible under ``--window 128000``, judged against the model's window."""
    from test_implausible import opus_41_file

    path = str(opus_41_file(tmp_path, [1_000, 4_000_000, 2_000]))
    calls = report(path, "--window", "128000")["calls"]
    assert [c["prompt_implausible"] for c in calls] == [False, True, False]
    flag = next(f for f in check(path, "--window", "128000")["flags"] if f["kind"] == "implausible_usage")
    assert "4,000,105" in flag["reason"] and "200,000-token model window" in flag["reason"]


def big_request_file(tmp_path: Path, factor: float = 1.0) -> tuple[Path, int]:
    """One gpt-4o call (catalogue window 128,000) whose logged request is about 250,000 tokens: system "sys",
    user "q" + " x" x 250,000; it reports ``factor`` x our own count E of it (o200k_base is gpt-4o's tokenizer;
    the OpenAI cookbook count: 3 per message plus its role's and content's tokens, and 3 to prime the reply).
    Returns the file and the reported prompt."""
    from ctxwatch.tokens import get_tokenizer

    enc = get_tokenizer("o200k_base")
    msgs = [("system", "sys"), ("user", "q" + " x" * 250_000)]
    est = sum(3 + len(enc.encode(role)) + len(enc.encode(text)) for role, text in msgs) + 3
    reported = round(est * factor)
    row = {"timestamp": 1_700_000_000, "request": {"model": "gpt-4o", "messages": [
        {"role": r, "content": t} for r, t in msgs]},
        "response": {"usage": {"prompt_tokens": reported, "completion_tokens": 2}}}
    path = tmp_path / "big.jsonl"
    path.write_text(json.dumps(row) + "\n")
    return path, reported


def test_a_report_above_the_window_that_the_logged_request_confirms_is_overflow(tmp_path: Path) -> None:
    """The request really was ~250k tokens (our exact count agrees with the report within 5 %): the catalogue's
    128,000-token window is what is wrong.  Reserve 0.15 x 128,000 = 19,200; free = 128,000 - 19,200 - reported."""
    path, reported = big_request_file(tmp_path, 1.0 + 8 / 250_000)  # (8 tokens more than our count)
    call = report(str(path))["calls"][0]
    assert call["prompt_implausible"] is False and call["window"] == 128_000
    assert call["free_tokens"] == 128_000 - 19_200 - reported
    assert abs(call["used_fraction"] - reported / 128_000) < 1e-4
    flags = check(str(path))["flags"]
    assert "implausible_usage" not in {f["kind"] for f in flags}
    breach = next(f for f in flags if f["kind"] == "reserve_breached")
    assert breach["evidence"]["window_suspect"] is True and "window is probably too small" in breach["reason"]


def test_a_report_far_from_the_logged_request_stays_implausible(tmp_path: Path) -> None:
    """Twice what the request holds (beyond the 5 % an exact tokenizer allows) above the window: implausible."""
    path, _ = big_request_file(tmp_path, 2.0)
    call = report(str(path))["calls"][0]
    assert call["prompt_implausible"] is True and call["free_tokens"] is None
    assert any(f["kind"] == "implausible_usage" for f in check(str(path))["flags"])


# --- 2. an implausible call does not take the floor of the calls after it -----------------------------------------

def claude_code_file(tmp_path: Path, turns: list[int | None]) -> Path:
    """A Claude Code session of ``claude-opus-4-1`` (200,000-token window, no 1M beta): one user question and one
    response per entry of ``turns``, whose usage is input 5 + cache write 100 + cache read ``turns[i]``; a
    ``None`` entry is a ``compact_boundary`` (manual, preTokens 150,000) and its summary instead."""
    rows: list[dict[str, Any]] = []
    parent = None
    for i, read in enumerate(turns):
        ts = f"2025-10-01T00:00:{i:02d}Z"
        if read is None:
            rows.append({"type": "system", "subtype": "compact_boundary", "parentUuid": None, "uuid": f"b{i}",
                         "sessionId": "s1", "timestamp": ts,
                         "compactMetadata": {"trigger": "manual", "preTokens": 150_000}})
            rows.append({"type": "user", "message": {"role": "user", "content": "summary of the session"},
                         "isCompactSummary": True, "uuid": f"u{i}", "parentUuid": f"b{i}", "sessionId": "s1",
                         "timestamp": ts})
            parent = f"u{i}"
            continue
        rows += claude_code_turn(i, read, parent, ts)
        parent = f"a{i}"
    path = tmp_path / "cc.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def assert_floor_from(calls: list[dict[str, Any]], first: int, reported: list[int]) -> None:
    """Calls ``first``.. have the floor of call ``first`` (its reported prompt minus its estimated history of a
    few short messages: under 105 tokens, so the floor is at least ``reported[0] - 105``), and each later one's
    history is its reported prompt minus that floor (Claude Code infers the floor once per context)."""
    floor = calls[first]["floor_tokens"]
    assert floor is not None and reported[0] - 105 <= floor <= reported[0]
    assert calls[first]["floor_tokens"] + calls[first]["history_tokens"] == reported[0]
    assert calls[first]["history_source"] == "estimated"
    for c, r in zip(calls[first + 1:], reported[1:], strict=True):
        assert (c["floor_tokens"], c["floor_source"]) == (floor, "inferred")
        assert (c["history_tokens"], c["history_source"]) == (r - floor, "inferred")


def test_claude_code_takes_the_floor_from_the_next_plausible_call_after_an_implausible_first(tmp_path: Path
                                                                                          ) -> None:
    """Call 1 reports 5 + 100 + 4,000,000 (above opus-4-1's 200,000: implausible); calls 2-4 report 20,105,
    21,105, 22,105 and have their whole history in the file.  They had floor and history ?, and plan --call 2
    said the log "starts mid-session"."""
    path = claude_code_file(tmp_path, [4_000_000, 20_000, 21_000, 22_000])
    calls = report(str(path))["calls"]
    assert calls[0]["prompt_implausible"] is True and calls[0]["floor_tokens"] is None
    assert_floor_from(calls, 1, [20_105, 21_105, 22_105])
    plan = cli("plan", str(path), "--call", "2")
    assert "mid-session" not in plan and "cannot plan" not in plan


def test_claude_code_after_a_compaction_takes_the_floor_from_the_next_plausible_call(tmp_path: Path) -> None:
    """Two calls, a compaction, then a first call reporting 4,000,105 (implausible), then 30,105, 31,105 and
    32,105 whose history (from the compact summary on) is whole: they lost floor and history."""
    path = claude_code_file(tmp_path, [100_000, 110_000, None, 4_000_000, 30_000, 31_000, 32_000])
    calls = report(str(path))["calls"]
    assert [c["prompt_tokens_reported"] for c in calls] == [100_105, 110_105, 4_000_105, 30_105, 31_105, 32_105]
    assert calls[2]["prompt_implausible"] is True
    assert_floor_from(calls, 3, [30_105, 31_105, 32_105])


# --- 3. an implausible first call after a compaction does not make it two compactions -----------------------------

def test_claude_code_compaction_before_an_implausible_call_is_one_compaction(tmp_path: Path) -> None:
    """Before the compaction the prompt was 110,105 (5 + 100 + 110,000); the first call after the marker reports
    4,000,105 (implausible), the next 30,105.  One compaction, at the marker's call (#3), 110,105 -> 30,105:
    80,000 freed.  It said "110,105 -> ?" at #3, then "history shrank" at #4."""
    path = claude_code_file(tmp_path, [100_000, 110_000, None, 4_000_000, 30_000, 31_000])
    comp = [f for f in check(str(path))["flags"] if f["kind"] == "compaction"]
    assert len(comp) == 1
    (f,) = comp
    assert f["call"] == 2 and f["evidence"]["marker"] is True
    assert (f["evidence"]["prompt_before"], f["evidence"]["prompt_after"]) == (110_105, 30_105)
    assert f["evidence"]["tokens_freed"] == 80_000 and f["evidence"]["after_call"] == 3
    assert "110,105 -> 30,105 tokens at #4" in f["reason"]


def codex_line(total: int, last: int, window: int = 272_000, minute: int = 0) -> str:
    """A Codex token_count whose cumulative input is ``total`` and last call's input ``last`` (no cache, 10 output
    tokens per call)."""
    return json.dumps({"timestamp": f"2025-05-01T10:{minute:02d}:00.000Z", "type": "event_msg", "payload": {
        "type": "token_count", "info": {
            "total_token_usage": {"input_tokens": total, "cached_input_tokens": 0, "output_tokens": 10 * minute,
                                  "reasoning_output_tokens": 0, "total_tokens": total + 10 * minute},
            "last_token_usage": {"input_tokens": last, "cached_input_tokens": 0, "output_tokens": 10,
                                 "reasoning_output_tokens": 0, "total_tokens": last + 10},
            "model_context_window": window}}})


def test_codex_compaction_before_an_implausible_call_is_one_compaction(tmp_path: Path) -> None:
    """Calls of 40,000, 45,000 and 50,000 prompt tokens, a ``compacted`` record, a call reporting 4,280,000 of
    its 272,000-token window (implausible), then 10,000.  One compaction, at the call after the record (#4):
    50,000 -> 10,000, 40,000 freed (it said "50,000 -> ?" at #4, and "history shrank" again at #5)."""
    lines = [
        json.dumps({"timestamp": "2025-05-01T10:00:00.000Z", "type": "session_meta",
                    "payload": {"id": "00000000-0000-7000-8000-000000000009", "cwd": "/tmp"}}),
        json.dumps({"timestamp": "2025-05-01T10:00:00.100Z", "type": "turn_context", "payload": {"model": "gpt-5"}}),
        codex_line(40_000, 40_000, minute=1),
        codex_line(85_000, 45_000, minute=2),
        codex_line(135_000, 50_000, minute=3),
        json.dumps({"timestamp": "2025-05-01T10:03:30.000Z", "type": "compacted",
                    "payload": {"message": "summary of the session"}}),
        codex_line(4_415_000, 4_280_000, minute=4),
        codex_line(4_425_000, 10_000, minute=5),
    ]
    path = tmp_path / "rollout.jsonl"
    path.write_text("\n".join(lines) + "\n")
    doc = check(str(path))
    assert [c["prompt_implausible"] for c in report(str(path))["calls"]] == [False, False, False, True, False]
    comp = [f for f in doc["flags"] if f["kind"] == "compaction"]
    assert [(f["call"], f["evidence"]["prompt_before"], f["evidence"]["prompt_after"], f["evidence"]["tokens_freed"])
            for f in comp] == [(3, 50_000, 10_000, 40_000)]


# --- 5. a reported prompt of 0: the flag, the numbers and the marker name one stand-in ----------------------------

def zero_report_file(tmp_path: Path) -> tuple[Path, int]:
    """Four gpt-4o calls of one growing conversation; calls 1, 3 and 4 report twice our count of their request
    (a calibration of 2.0, which the analysis applies to estimates), call 2 reports 0.  Returns the file and our
    count E2 of call 2 by the OpenAI cookbook (o200k_base, gpt-4o's own tokenizer): 3 per message plus its
    role's and content's tokens, and 3 to prime the reply."""
    from ctxwatch.tokens import get_tokenizer

    enc = get_tokenizer("o200k_base")
    msgs: list[tuple[str, str]] = [("system", "be brief and exact")]
    rows, ests = [], []
    for i in range(4):
        msgs = [*msgs, ("user", f"question {i}: " + "lorem ipsum " * (20 * (i + 1)))]
        est = sum(3 + len(enc.encode(r)) + len(enc.encode(t)) for r, t in msgs) + 3
        ests.append(est)
        rows.append({"timestamp": 1_700_000_000 + i, "request": {"model": "gpt-4o", "messages": [
            {"role": r, "content": t} for r, t in msgs]},
            "response": {"usage": {"prompt_tokens": 0 if i == 1 else 2 * est, "completion_tokens": 5}}})
        msgs = [*msgs, ("assistant", f"answer {i}")]
    path = tmp_path / "zero.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path, ests[1]


def test_a_reported_0_flag_free_and_marker_agree(tmp_path: Path) -> None:
    """The flag named the calibrated 2 x E2 while free was 128,000 - 19,200 (the default 0.15 reserve) - E2,
    and the table showed "0" without the "!" its footnote gives a 0 (:func:`zero_report_file`)."""
    path, e2 = zero_report_file(tmp_path)
    call = report(str(path))["calls"][1]
    assert call["prompt_tokens_reported"] == 0 and call["prompt_tokens_estimated"] == e2
    assert call["free_tokens"] == 128_000 - 19_200 - e2
    (flag,) = [f for f in check(str(path))["flags"] if f["kind"] == "implausible_usage"]
    assert flag["call"] == 1 and f"the estimate ({e2:,} tokens) stands in" in flag["reason"]
    row = next(line.split() for line in cli("report", str(path)).splitlines() if line.split()[:2] == ["2", "2"])
    assert row[-3:] == [f"{128_000 - 19_200 - e2:,}", f"{100 * e2 / 128_000:.1f}", "0!"]
