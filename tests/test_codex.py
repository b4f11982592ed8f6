"""Codex CLI rollout reader (``ctxwatch.formats.codex``).

Expected values come from the real rollout through a small plain-``json`` reader written here (it shares no code
with the reader), from FORMATS.md section 2, or from failure cases B08, B12, B13 and B23 worked by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

from helpers import count_kind

from ctxwatch.formats import detect, get_format, sniff_file
from ctxwatch.formats.codex import CodexReader, item_message, sniff
from ctxwatch.model import Issue, ParsedCall
from ctxwatch.source import Record, iter_records

ROLLOUT = "rollout-2025-11-17T15-30-28-019a93b9_codex0.58.0.jsonl"
#: The bundled sample rollout (11 calls, a compaction before the ninth).
SAMPLE = Path(__file__).resolve().parents[1] / "sample_logs" / "codex_rollout.jsonl"
META_ONLY = "codex0.63.0_session_meta_only.jsonl"
DERIVED = "derived_schema_fixture_agent-sessions_codex_small.jsonl"


def run(path: Path | str, *, use_skip: bool = True) -> tuple[list[ParsedCall], list[Issue], int]:
    """Read a file with the reader: final call per key in first-seen order, issues, number of outputs."""
    reader = CodexReader(str(path))
    calls: dict[str, ParsedCall] = {}
    issues: list[Issue] = []
    emitted = 0
    for rec in iter_records(str(path), skip=reader.skip if use_skip else None):
        outs = list(reader.feed(rec)) if isinstance(rec, Record) else [rec]
        for out in outs:
            emitted += 1
            if isinstance(out, Issue):
                issues.append(out)
            else:
                assert out.key is not None
                calls[out.key] = out
    # (nothing is held back, see the module's tailing policy: finish gives only the file's notes)
    assert list(reader.finish()) == reader.notes()
    issues.extend(reader.notes())
    return list(calls.values()), issues, emitted


def write(tmp_path: Path, name: str, records: list[dict]) -> Path:
    p = tmp_path / name
    p.write_text("".join(json.dumps(r) + "\n" for r in records))
    return p


def reference(path: Path) -> list[dict]:
    """Independent reader: one entry per token_count whose total_token_usage differs from the previous one."""
    out: list[dict] = []
    prev = None
    items = 0
    for i, raw in enumerate(path.read_text().splitlines(), 1):
        d = json.loads(raw)
        p = d.get("payload") or {}
        if d["type"] == "response_item" and p.get("type") != "ghost_snapshot":
            items += 1
        if d["type"] == "event_msg" and p.get("type") == "token_count" and p.get("info"):
            total = p["info"]["total_token_usage"]
            if total != prev:
                out.append({"line": i, "total": total, "last": p["info"]["last_token_usage"],
                            "window": p["info"]["model_context_window"], "items_before": items})
                prev = total
    return out


# --- the real rollout ----------------------------------------------------------------------------------------


def test_real_rollout_39_calls(shared_logs: Path) -> None:
    path = shared_logs / "codex-rollout" / ROLLOUT
    ref = reference(path)
    assert len(ref) == 39  # FORMATS.md section 2: 78 non-null events, 39 distinct totals
    session = json.loads(path.read_text().splitlines()[0])["payload"]["id"]
    calls, issues, _ = run(path)
    assert issues == []
    assert len(calls) == 39
    for call, want in zip(calls, ref, strict=True):
        u = call.usage
        assert u is not None
        assert call.source.line == want["line"]
        assert u.prompt_total == want["last"]["input_tokens"]
        assert u.cache_read == want["last"]["cached_input_tokens"]
        assert u.input_uncached == want["last"]["input_tokens"] - want["last"]["cached_input_tokens"]
        assert u.output == want["last"]["output_tokens"]
        assert u.reasoning == want["last"]["reasoning_output_tokens"]
        assert u.cache_write is None  # 0.58 does not report cache writes
        assert call.window == want["window"] == 258400
        assert (call.provider, call.model, call.context) == ("openai", "gpt-5.1-codex", "main")
        assert call.session == session
        # the prompt is every response item before the usage event (ghost snapshots excluded)
        assert call.messages is not None and len(call.messages) == want["items_before"]
        assert call.history_reported_only and call.system is None and call.tools is None
    last = calls[-1].usage
    assert last is not None and (last.prompt_total, last.cache_read) == (52645, 52096)  # FORMATS.md section 2
    # Session totals from the per-call usage equal the last cumulative total (each response counted once).
    final = ref[-1]["total"]
    assert sum(c.usage.prompt_total for c in calls if c.usage) == final["input_tokens"]
    assert sum(c.usage.cache_read for c in calls if c.usage) == final["cached_input_tokens"]
    assert sum(c.usage.output for c in calls if c.usage) == final["output_tokens"]
    assert sum(c.usage.reasoning for c in calls if c.usage) == final["reasoning_output_tokens"]
    assert calls[-1].provenance.cumulative == final


def test_real_rollout_history_and_completion(shared_logs: Path) -> None:
    path = shared_logs / "codex-rollout" / ROLLOUT
    calls, _, emitted = run(path)
    first = calls[0]
    assert first.messages is not None
    assert [(m.role, m.text()[:21]) for m in first.messages] == [
        ("user", "<environment_context>"), ("user", "finish up the users w")]
    # The completion is the output items after the usage event: reasoning + one shell call.
    assert first.response is not None and first.response.tool_calls == 1
    assert (first.source.line, first.source.line_end) == (9, 11)
    second = calls[1]
    assert second.messages is not None
    assert [m.role for m in second.messages] == ["user", "user", "assistant", "assistant", "tool"]
    call_part = second.messages[3].parts[0]
    result_part = second.messages[4].parts[0]
    assert (call_part.kind, call_part.name, result_part.kind) == ("tool_call", "shell", "tool_result")
    assert call_part.call_id == result_part.call_id is not None
    assert call_part.text.startswith('{"command":["bash","-lc","ls"]')
    thinking = second.messages[2].parts[0]
    assert thinking.kind == "thinking" and thinking.meta is not None and thinking.meta["encrypted_bytes"] > 0
    assert thinking.meta["reasoning_tokens"] == calls[0].usage.reasoning  # type: ignore[union-attr]
    # each call is emitted once, then updated once per output item (38 reasoning + 39 function calls)
    assert emitted == 39 + 38 + 39


def test_the_floor_is_inferred_once_and_later_histories_follow_the_reported_prompt(shared_logs: Path) -> None:
    """The instructions and tools do not change over a rollout, so neither may the floor: it comes from the first
    call (reported prompt minus its estimated history) and every later history is the reported prompt (read
    here with plain json) minus that floor, labelled inferred."""
    from ctxwatch.engine import load_run
    from ctxwatch.model import Src

    path = shared_logs / "codex-rollout" / ROLLOUT
    ref = reference(path)
    calls = load_run(str(path)).calls
    assert [c.prompt_reported for c in calls] == [r["last"]["input_tokens"] for r in ref]
    first = calls[0]
    assert first.history_src == Src.ESTIMATED and first.floor_src == Src.INFERRED
    assert first.floor_tokens == ref[0]["last"]["input_tokens"] - first.history_tokens
    for c, r in zip(calls[1:], ref[1:], strict=True):
        assert (c.floor_tokens, c.floor_src, c.history_src) == (first.floor_tokens, Src.INFERRED, Src.INFERRED)
        assert c.history_tokens == r["last"]["input_tokens"] - first.floor_tokens
        assert c.messages  # still counted one by one, for the detail view


def test_a_compaction_starts_a_new_floor(tmp_path: Path) -> None:
    """After a compaction the next call gives the floor again (its history is whole and estimated)."""
    from ctxwatch.engine import load_run
    from ctxwatch.model import Src

    user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix the bug " * 50}]}
    answer = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done " * 40}]}
    recs = [
        {"timestamp": "2025-05-01T10:00:00Z", "type": "session_meta", "payload": {"id": "s"}},
        {"timestamp": "2025-05-01T10:00:01Z", "type": "response_item", "payload": user},
        _tc("2025-05-01T10:00:02Z", (5000, 0, 80, 0), (5000, 0, 80, 0), 272000),
        {"timestamp": "2025-05-01T10:00:03Z", "type": "response_item", "payload": answer},
        {"timestamp": "2025-05-01T10:00:04Z", "type": "response_item", "payload": user},
        _tc("2025-05-01T10:00:05Z", (11000, 0, 160, 0), (6000, 0, 80, 0), 272000),
        {"timestamp": "2025-05-01T10:05:00Z", "type": "compacted", "payload": {"message": "summary " * 30}},
        _tc("2025-05-01T10:05:10Z", (15500, 0, 240, 0), (4500, 0, 80, 0), 272000),
        {"timestamp": "2025-05-01T10:05:11Z", "type": "response_item", "payload": user},
        _tc("2025-05-01T10:05:12Z", (20500, 0, 320, 0), (5000, 0, 80, 0), 272000),
    ]
    calls = load_run(str(write(tmp_path, "c.jsonl", recs))).calls
    assert [c.prompt_reported for c in calls] == [5000, 6000, 4500, 5000]
    a, b, c, d = calls
    assert a.history_src == c.history_src == Src.ESTIMATED  # the first call of each episode
    assert b.floor_tokens == a.floor_tokens == 5000 - a.history_tokens and b.history_tokens == 6000 - a.floor_tokens
    assert c.floor_tokens == 4500 - c.history_tokens != a.floor_tokens
    assert (d.floor_tokens, d.history_tokens, d.history_src) == (c.floor_tokens, 5000 - c.floor_tokens, Src.INFERRED)


def test_skip_prefilter_changes_nothing(shared_logs: Path) -> None:
    for name in (ROLLOUT, DERIVED, META_ONLY):
        path = shared_logs / "codex-rollout" / name
        a, ia, _ = run(path)
        b, ib, _ = run(path, use_skip=False)
        assert [(c.key, c.usage, len(c.messages or [])) for c in a] == \
               [(c.key, c.usage, len(c.messages or [])) for c in b]
        assert ia == ib
    raw = (shared_logs / "codex-rollout" / ROLLOUT).read_bytes().split(b"\n")
    skipped = [json.loads(r)["payload"]["type"] for r in raw if r and CodexReader._skip(r)]
    assert set(skipped) == {"agent_reasoning", "user_message"}


def test_meta_only_and_derived_fixture(shared_logs: Path) -> None:
    calls, issues, _ = run(shared_logs / "codex-rollout" / META_ONLY)
    assert calls == [] and issues == []
    calls, issues, _ = run(shared_logs / "codex-rollout" / DERIVED)
    assert issues == []
    # One non-zero token_count (line 22); the later all-zero totals only start a new baseline.
    assert len(calls) == 1
    c = calls[0]
    assert c.usage is not None and (c.usage.prompt_total, c.usage.cache_read, c.usage.cache_write) == (16341, 3584, 0)
    assert c.model == "gpt-5.6-luna" and c.window == 258400
    assert c.compaction is not None and c.compaction["kind"] == "context_compacted"
    assert c.response is not None and c.response.text == "Found 2 files."
    # the first session_meta's base_instructions.text is the system prompt
    meta = json.loads((shared_logs / "codex-rollout" / DERIVED).read_text().splitlines()[0])
    assert c.system == [meta["payload"]["base_instructions"]["text"]]


def test_detection(shared_logs: Path) -> None:
    rollouts = sorted((shared_logs / "codex-rollout").glob("*.jsonl"))
    assert len(rollouts) >= 3  # (the folder's three samples; an empty glob would check nothing)
    for path in rollouts:
        spec = detect(str(path))
        assert spec is not None and spec.name == "codex", path.name
    assert get_format("codex").needs_prefix
    for other in ("claude-code/spotter_short.jsonl",
                  "gemini-cli/derived_schema_fixture_agent-sessions_gemini_jsonl_v040.jsonl",
                  "openai-batch/reviews_batch_output.jsonl",
                  "request-response/claude-trace_test-traffic_head14.jsonl"):
        assert sniff(sniff_file(str(shared_logs / other))) == 0.0, other


# --- failure cases -------------------------------------------------------------------------------------------


def _tc(ts: str, total: tuple[int, int, int, int], last: tuple[int, int, int, int] | None, window: int) -> dict:
    def block(t: tuple[int, int, int, int]) -> dict:
        return {"input_tokens": t[0], "cached_input_tokens": t[1], "output_tokens": t[2],
                "reasoning_output_tokens": t[3], "total_tokens": t[0] + t[2]}

    info: dict = {"total_token_usage": block(total), "model_context_window": window}
    if last is not None:
        info["last_token_usage"] = block(last)
    return {"timestamp": ts, "type": "event_msg", "payload": {"type": "token_count", "info": info}}


B12 = [
    {"timestamp": "2025-05-01T10:00:00.000Z", "type": "session_meta",
     "payload": {"id": "00000000-0000-7000-8000-000000000001", "cwd": "/tmp", "originator": "codex_cli_rs"}},
    {"timestamp": "2025-05-01T10:00:00.100Z", "type": "turn_context", "payload": {"model": "gpt-5"}},
    _tc("2025-05-01T10:00:05.000Z", (1000, 0, 100, 0), (1000, 0, 100, 0), 272000),
    _tc("2025-05-01T10:00:06.000Z", (1000, 0, 100, 0), (1000, 0, 100, 0), 272000),
    _tc("2025-05-01T10:01:00.000Z", (3000, 900, 300, 0), (2000, 900, 200, 0), 272000),
]
B13 = [
    _tc("2025-05-01T10:02:00.000Z", (900000, 800000, 5000, 0), (60000, 55000, 400, 0), 272000),
    _tc("2025-05-01T10:03:00.000Z", (5000000, 0, 9000, 0), (4280000, 0, 0, 0), 570000),
]


def test_b12_repeated_totals_count_once(tmp_path: Path) -> None:
    calls, issues, _ = run(write(tmp_path, "b12.jsonl", B12))
    assert issues == [] and len(calls) == 2
    assert sum(c.usage.prompt_total + c.usage.output for c in calls if c.usage) == 3300  # not 5500
    second = calls[1].usage
    assert second is not None and (second.prompt_total, second.cache_read, second.output) == (2000, 900, 200)
    assert calls[0].model == "gpt-5" and calls[0].session == "00000000-0000-7000-8000-000000000001"
    assert calls[1].timestamp == 1746093660.0


def test_b13_occupancy_uses_last_usage_and_flags_the_impossible(tmp_path: Path) -> None:
    calls, issues, _ = run(write(tmp_path, "b13.jsonl", B12 + B13))
    assert len(calls) == 4
    at_1002, at_1003 = calls[2], calls[3]
    assert at_1002.usage is not None and at_1002.window == 272000
    assert round(at_1002.usage.prompt_total / at_1002.window, 2) == 0.22  # not 905000
    assert not at_1002.provenance.implausible
    assert at_1003.provenance.implausible is True and at_1003.window == 570000
    # (its cumulative cached_input_tokens went from 800,000 to 0: a restart of the totals, noted as such)
    assert [(i.line, i.kind) for i in issues] == [(7, "totals_restart"), (7, "implausible_usage")]
    # The note named "cumulative totals" although input (900,000 -> 5,000,000), output (5,000 -> 9,000) and
    # total (905,000 -> 5,009,000) went up: it names the one counter that went back, and the others.
    assert issues[0].message == ("cumulative cached_input_tokens went backwards at line 7 (800,000 -> 0; "
                                 "input_tokens, output_tokens and total_tokens went up): read as a restart (the "
                                 "history, the inferred floor and the totals start again)")
    assert "4,280,000" in issues[1].message and "570,000" in issues[1].message
    # ("kept but marked implausible" did not say kept for what)
    assert issues[1].message.endswith(": implausible, so no occupancy (kept in token totals and cost as reported)")


def test_b08_codex_usage_semantics(tmp_path: Path) -> None:
    line = {"timestamp": "2025-01-01T00:00:11Z", "type": "event_msg", "payload": {"type": "token_count", "info": {
        "total_token_usage": {"input_tokens": 50000, "cached_input_tokens": 48000, "output_tokens": 500,
                              "reasoning_output_tokens": 200, "total_tokens": 50500},
        "last_token_usage": {"input_tokens": 50000, "cached_input_tokens": 48000, "output_tokens": 500,
                             "reasoning_output_tokens": 200, "total_tokens": 50500},
        "model_context_window": 272000}}}
    (call,), _, _ = run(write(tmp_path, "b08.jsonl", [line]))
    u = call.usage
    assert u is not None
    assert u.prompt_total == 50000  # occupancy: cached is inside input
    assert u.prompt_total + u.output == 50500  # total: reasoning is inside output
    assert (u.cache_read, u.input_uncached, u.reasoning) == (48000, 2000, 200)
    assert 0 <= u.cache_read / u.prompt_total <= 1
    assert call.window == 272000 and call.session is None


def test_b23_compacted_replaces_the_history(tmp_path: Path) -> None:
    user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "old question"}]}
    summary = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "summary of work"}]}
    recs = [
        {"timestamp": "2025-05-01T10:00:00Z", "type": "session_meta", "payload": {"id": "s"}},
        {"timestamp": "2025-05-01T10:00:01Z", "type": "response_item", "payload": user},
        _tc("2025-05-01T10:00:02Z", (150000, 0, 800, 0), (150000, 0, 800, 0), 272000),
        {"timestamp": "2025-05-01T10:00:03Z", "type": "response_item",
         "payload": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}},
        {"timestamp": "2025-05-01T10:05:00Z", "type": "compacted",
         "payload": {"message": "", "replacement_history": [user, summary, {"type": "ghost_snapshot"}]}},
        {"timestamp": "2025-05-01T10:05:00Z", "type": "event_msg", "payload": {"type": "context_compacted"}},
        _tc("2025-05-01T10:05:10Z", (159000, 0, 900, 0), (9000, 0, 100, 0), 272000),
    ]
    calls, _, _ = run(write(tmp_path, "b23.jsonl", recs))
    before, after = calls
    assert before.response is not None and before.response.text == "done"
    assert before.messages is not None and [m.text() for m in before.messages] == ["old question"]
    # (Codex logs no size with a compaction: the size before is the previous call's report, and says so)
    assert after.compaction == {"kind": "compacted", "trigger": None, "pre_tokens": 150000,
                                "pre_tokens_from": "previous call", "post_tokens": None, "line": 5}
    from click.testing import CliRunner

    from ctxwatch.cli import main

    flags = json.loads(CliRunner().invoke(main, ["check", "--json", str(tmp_path / "b23.jsonl")]).output)["flags"]
    (comp,) = [f for f in flags if f["kind"] == "compaction"]
    # 150,000 -> 9,000: the flag said "(141,000 freed; log preTokens 150,000)", a figure Codex never logged
    assert "150,000 -> 9,000" in comp["reason"] and "preTokens" not in comp["reason"]
    assert after.messages is not None and [m.text() for m in after.messages] == ["old question", "summary of work"]
    assert after.usage is not None and after.usage.prompt_total == 9000
    # Without replacement_history the summary text alone is the new history, labelled.
    recs[4] = {"timestamp": "t", "type": "compacted", "payload": {"message": "the summary"}}
    calls, _, _ = run(write(tmp_path, "b23b.jsonl", recs))
    assert calls[1].messages is not None
    assert [(m.label, m.text()) for m in calls[1].messages] == [("compaction_summary", "the summary")]


def test_backwards_totals_start_a_new_baseline_and_missing_last_uses_deltas(tmp_path: Path) -> None:
    recs = [
        _tc("2025-05-01T10:00:00Z", (1000, 0, 100, 0), None, 272000),
        _tc("2025-05-01T10:00:01Z", (3500, 1000, 300, 50), None, 272000),
        _tc("2025-05-01T10:00:02Z", (800, 0, 20, 0), None, 272000),  # went backwards (fork / reset)
        _tc("2025-05-01T10:00:03Z", (1800, 700, 70, 0), None, 272000),
    ]
    calls, issues, _ = run(write(tmp_path, "back.jsonl", recs))
    assert [(i.kind, i.line, i.message) for i in issues] == [
        # (every counter went back; total_tokens is input + output in _tc: 3,500 + 300 -> 800 + 20)
        ("totals_restart", 3, "every cumulative total went backwards at line 3 (input_tokens 3,500 -> 800, "
                              "cached_input_tokens 1,000 -> 0, output_tokens 300 -> 20, reasoning_output_tokens "
                              "50 -> 0, total_tokens 3,800 -> 820): read as a restart (the history, the inferred "
                              "floor and the totals start again)")]
    got = [(c.usage.prompt_total, c.usage.cache_read, c.usage.output, c.usage.reasoning) for c in calls if c.usage]
    assert got == [(1000, 0, 100, 0), (2500, 1000, 200, 50), (800, 0, 20, 0), (1000, 700, 50, 0)]
    assert all(c.provenance.usage_from == "total_delta" for c in calls)
    assert all(min(t) >= 0 for t in got)  # never a negative delta


def _halved(line: str) -> str:
    """A rollout line with every counter of a token_count's usage blocks halved (rounded down): the same
    conversation, other numbers, and cumulative totals that start again from the first call's."""
    d = json.loads(line)
    info = (d.get("payload") or {}).get("info") if d["type"] == "event_msg" else None
    if isinstance(info, dict):
        for block in ("total_token_usage", "last_token_usage"):
            info[block] = {k: v // 2 for k, v in info[block].items()}
    return json.dumps(d)


def test_totals_that_go_backwards_with_no_session_meta_restart_the_history_and_the_floor(tmp_path: Path) -> None:
    """The tester's reset_nometa.jsonl: the sample rollout, then its lines again with no session_meta and every
    usage counter halved, so the cumulative totals drop at the second part's first token_count.  That line gets a
    totals_restart note, and the second conversation is read as the sample alone is, with its own numbers: its
    first call's history is the three input items after the sample's last answer (as the sample's first call's)
    and its floor is its reported prompt minus that history; later histories are reported prompt minus that
    floor.  It kept the sample's floor, 9,643 tokens, larger than the restarted prompts: every one was all floor
    (4,909 of 4,909) and history 0."""
    from ctxwatch.engine import load_run
    from ctxwatch.model import Src

    lines = SAMPLE.read_text().splitlines()
    assert json.loads(lines[0])["type"] == "session_meta"
    second = [_halved(x) for x in lines[1:]]
    path = tmp_path / "reset_nometa.jsonl"
    path.write_text("\n".join(lines + second) + "\n")
    # The second part's calls, read with plain json: a token_count whose total differs from the previous one.
    prompts, restart_line, prev = [], None, None
    for n, raw in enumerate(second, len(lines) + 1):
        d = json.loads(raw)
        info = d["payload"].get("info") if d["type"] == "event_msg" else None
        if d["payload"].get("type") == "token_count" and info and info["total_token_usage"] != prev:
            prev = info["total_token_usage"]
            restart_line = restart_line or n
            prompts.append(info["last_token_usage"]["input_tokens"])
    alone = load_run(str(SAMPLE)).calls
    r = load_run(str(path))
    assert [(i.kind, i.line) for i in r.issues] == [("totals_restart", restart_line)]
    msg = r.issues[0].message
    assert msg.startswith(f"every cumulative total went backwards at line {restart_line} (") and \
        "): read as a restart" in msg
    assert len(r.calls) == len(alone) + len(prompts) == 22
    shown = [(c.source.line, c.prompt_reported, c.floor_tokens, c.floor_src, c.history_tokens, c.history_src)
             for c in r.calls]
    assert shown[:len(alone)] == [(c.source.line, c.prompt_reported, c.floor_tokens, c.floor_src, c.history_tokens,
                                   c.history_src) for c in alone]
    restarted = r.calls[len(alone):]
    assert [c.prompt_reported for c in restarted] == prompts
    first = restarted[0]
    assert first.source.line == restart_line
    assert (first.history_tokens, first.history_src, first.floor_src) == (
        alone[0].history_tokens, Src.ESTIMATED, Src.INFERRED)
    floor = prompts[0] - alone[0].history_tokens
    assert first.floor_tokens == floor
    # up to the sample's compaction (its ninth call gives the floor again)
    for c, p in zip(restarted[1:8], prompts[1:8], strict=True):
        assert (c.floor_tokens, c.floor_src, c.history_tokens, c.history_src) == (
            floor, Src.INFERRED, p - floor, Src.INFERRED)
    parsed, _, _ = run(path)
    assert len(parsed[len(alone)].messages or []) == len(alone[0].messages) == 3


def _two_hours_later(line: str) -> str:
    """A rollout line with its timestamp moved 2 hours on (the tester's copy of the sample)."""
    from datetime import datetime, timedelta

    d = json.loads(line)
    t = datetime.fromisoformat(d["timestamp"].replace("Z", "+00:00")) + timedelta(hours=2)
    d["timestamp"] = t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"
    return json.dumps(d)


def test_a_rollout_written_again_after_itself_keeps_the_calls_and_split_of_the_rollout_alone(tmp_path: Path) -> None:
    """The tester's concat_same.jsonl (the sample rollout, then a copy of it 2 hours later, same session id) and
    concat_nometa.jsonl (the copy without its session_meta).  The copy's calls have the totals, so the keys, of
    the sample's: they are the same calls, not emitted again.  The run is the sample read alone (lines,
    timestamps, floor 9,643~ and histories 176 / 919~ ...), where the copy replaced calls 1-8 with a history of
    both copies (floor 7,799~, history 2,020 / 2,763 ...).  One note: the totals go backwards at the copy's first
    counted token_count (line numbers from plain json), whose call repeats the sample's first (line 10)."""
    from ctxwatch.engine import load_run

    lines = SAMPLE.read_text().splitlines()
    first_call_line = reference(SAMPLE)[0]["line"]
    alone = load_run(str(SAMPLE))
    assert alone.issues == [] and len(alone.calls) == 11 and first_call_line == 10

    def shown(calls: list) -> list[tuple]:
        return [(c.key, c.source.line, c.timestamp, c.prompt_reported, c.floor_tokens, c.floor_src, c.history_tokens,
                 c.history_src, len(c.messages), c.compaction) for c in calls]

    for name, copy in (("concat_same.jsonl", lines), ("concat_nometa.jsonl", lines[1:])):
        second = [_two_hours_later(x) for x in copy]
        path = tmp_path / name
        path.write_text("\n".join(lines + second) + "\n")
        restart_line = next(n for n, raw in enumerate(second, len(lines) + 1)
                            if (d := json.loads(raw))["type"] == "event_msg"
                            and d["payload"].get("type") == "token_count" and d["payload"].get("info"))
        r = load_run(str(path))
        assert shown(r.calls) == shown(alone.calls), name
        assert [(i.kind, i.line) for i in r.issues] == [("totals_restart", restart_line)], name
        assert r.issues[0].message.endswith(f"(this one the call at line {first_call_line}) and are not counted "
                                            "again"), name
        # The copy's output items do not update the sample's calls either: the reader's only new output is the note.
        calls, issues, emitted = run(path)
        assert emitted == run(SAMPLE)[2] + 1 and len(calls) == 11 and len(issues) == 1, name


def test_items_and_odd_records(tmp_path: Path) -> None:
    assert item_message({"type": "ghost_snapshot"}) == (None, False)
    assert item_message("x") == (None, False)
    msg, out = item_message({"type": "custom_tool_call", "name": "apply_patch", "call_id": "c", "input": "*** x"})
    assert out and msg is not None and (msg.parts[0].kind, msg.parts[0].text) == ("tool_call", "*** x")
    msg, out = item_message({"type": "function_call_output", "call_id": "c",
                             "output": [{"type": "input_text", "text": "a"}, {"type": "input_image",
                                                                             "image_url": None}]})
    assert not out and msg is not None and [p.kind for p in msg.parts] == ["tool_result", "image"]
    msg, _ = item_message({"type": "message", "role": "user",
                           "content": [{"type": "input_text", "text": "# AGENTS.md instructions for /x"}]})
    assert msg is not None and msg.label == "instructions"
    msg, out = item_message({"type": "local_shell_call", "call_id": "l", "action": {"command": ["ls"]}})
    assert out and msg is not None and msg.parts[0].name == "local_shell"
    reader = CodexReader("odd.jsonl")
    odd: list[object] = [
        None, [], "s", {}, {"type": "event_msg"}, {"type": "event_msg", "payload": []},
        {"type": "event_msg", "payload": {"type": "token_count", "info": None}},
        {"type": "event_msg", "payload": {"type": "token_count", "info": {"total_token_usage": "x"}}},
        {"type": "event_msg", "payload": {"type": "token_count", "info": {"last_token_usage": {"input_tokens": "7"}}}},
        {"type": "event_msg", "payload": {"type": "token_count", "info": {"last_token_usage": {"input_tokens": "7"}}}},
        {"type": "response_item", "payload": {"type": "message", "role": 5, "content": 3}},
        {"type": "response_item", "payload": {"type": "reasoning", "summary": "x", "encrypted_content": 1}},
        {"type": "compacted", "payload": {"replacement_history": [1, None, {"type": "message"}]}},
        {"type": "session_meta", "payload": {"id": 3, "base_instructions": {"text": "SYS"}}},
        {"type": "turn_context", "payload": {"model": None}},
        {"type": "brand_new", "payload": {"x": 1}},
        {"type": "event_msg", "payload": {"type": "token_count", "info": {
            "total_token_usage": {"input_tokens": 10, "output_tokens": 1},
            "last_token_usage": {"input_tokens": 10, "output_tokens": 1}, "model_context_window": -5}}},
    ]
    outs: list = []
    for i, v in enumerate(odd, 1):
        outs.extend(reader.feed(Record(v, i, i, i * 10, i * 10 + 9)))
    calls = [o for o in outs if isinstance(o, ParsedCall)]
    # (a record, a payload or a usage block of another JSON type than an object is said; the rest is silent)
    assert [(o.line, o.kind) for o in outs if isinstance(o, Issue)] == \
        [(1, "unknown_record"), (2, "unknown_record"), (3, "unknown_record"), (6, "invalid_field"),
         (8, "invalid_field")]
    assert [(c.source.line, c.usage.prompt_total) for c in calls if c.usage] == [(9, 7), (17, 10)]
    # A window of -5 is passed on raw: ctxwatch.engine.sanitize.sanitize reports it and makes it unknown (see the window
    # test).
    assert calls[-1].window == -5 and calls[-1].system == ["SYS"]
    assert calls[-1].compaction is not None and calls[-1].compaction["kind"] == "compacted"


def test_detects_a_file_whose_first_line_exceeds_the_sniffed_head(tmp_path: Path) -> None:
    meta = {"timestamp": "2025-05-01T10:00:00Z", "type": "session_meta",
            "payload": {"id": "s", "base_instructions": {"text": "i" * 100_000}}}
    path = write(tmp_path, "big.jsonl", [meta, *B12[1:]])
    spec = detect(str(path))
    assert spec is not None and spec.name == "codex"
    calls, _, _ = run(path)
    assert len(calls) == 2 and calls[0].system == ["i" * 100_000]


def test_a_token_count_that_is_not_a_count_is_reported_not_guessed(tmp_path: Path) -> None:
    """A counter of "1e3" in last_token_usage, or true in total_token_usage: that block is ignored with an
    invalid_field issue (a count of the wrong JSON type: a bad line; it read "1e3" as 1,000 and true as 1), and
    the call comes from the other block when it is whole: the last usage of the third event here, the total delta
    (3000-1000, ...) of the fourth."""
    bad_last = _tc("2025-05-01T10:01:00.000Z", (3000, 900, 300, 0), (2000, 900, 200, 0), 272000)
    bad_last["payload"]["info"]["last_token_usage"]["output_tokens"] = "1e3"
    bad_total = _tc("2025-05-01T10:02:00.000Z", (6000, 900, 500, 0), (3000, 0, 200, 0), 272000)
    bad_total["payload"]["info"]["total_token_usage"]["input_tokens"] = True
    calls, issues, _ = run(write(tmp_path, "bad.jsonl", [*B12[:3], bad_last, bad_total]))
    assert [(i.kind, i.line, i.message.split(":")[0]) for i in issues] == [
        ("invalid_field", 4, "last_token_usage.output_tokens '1e3'"),
        ("invalid_field", 5, "total_token_usage.input_tokens true")]
    usages = [(c.usage.prompt_total, c.usage.output) for c in calls if c.usage]
    # #2: total delta (3000 - 1000, 300 - 100); #3: its own last_token_usage (the total is unusable).
    assert usages == [(1000, 100), (2000, 200), (3000, 200)]


def _raw_tc(total: str, last: str | None, ts: str = "2025-11-17T21:32:50.000Z") -> str:
    """A token_count line written by hand, so that a block can hold what json.dumps cannot write (1e400)."""
    info = f'"total_token_usage":{total}' + (f',"last_token_usage":{last}' if last is not None else "")
    return (f'{{"timestamp":"{ts}","type":"event_msg","payload":{{"type":"token_count","info":{{{info},'
            '"model_context_window":258400}}}')


def _block(inp: object, cached: object, out: object, reasoning: object, total: object) -> str:
    return (f'{{"input_tokens":{inp},"cached_input_tokens":{cached},"output_tokens":{out},'
            f'"reasoning_output_tokens":{reasoning},"total_tokens":{total}}}')


def test_a_repeated_token_count_is_one_call_when_one_copy_has_a_damaged_total(tmp_path: Path) -> None:
    """Case B12 with damage (tester's codex_dup.jsonl): Codex writes the same token_count twice and one copy's
    total_token_usage.output_tokens is 1.5, 1e400 or "inf".  That block is reported and ignored, and the other
    copy is still the same call: one call of 10,128 prompt and 37 output tokens (the file's last_token_usage),
    not two (20,256 / 74)."""
    head = ['{"timestamp":"2025-11-17T21:32:47.000Z","type":"session_meta","payload":{"id":"sess-1"}}',
            '{"timestamp":"2025-11-17T21:32:48.000Z","type":"turn_context","payload":{"model":"gpt-5.1-codex"}}']
    whole = _block(10128, 0, 37, 0, 10165)
    for bad in ("1.5", "1e400", '"inf"', "100000000000000000000"):  # (the last: an integer beyond 2**53)
        damaged = _raw_tc(_block(10128, 0, bad, 0, 10165), whole)
        for order, bad_line in (([damaged, _raw_tc(whole, whole)], 3), ([_raw_tc(whole, whole), damaged], 4)):
            path = tmp_path / "dup.jsonl"
            path.write_text("\n".join(head + order) + "\n")
            calls, issues, _ = run(path)
            assert [(i.kind, i.line, i.message.split(":")[0].split(" ")[0]) for i in issues] == [
                (count_kind(json.loads(bad)), bad_line, "total_token_usage.output_tokens")], (bad, bad_line)
            assert [(c.usage.prompt_total, c.usage.output) for c in calls if c.usage] == [(10128, 37)], (bad, bad_line)
            assert len(calls) == 1


def test_a_count_beyond_2_53_is_one_issue_that_says_the_block_is_ignored(tmp_path: Path) -> None:
    """The tester's dmg_last.jsonl: the sample rollout with line 17's last_token_usage.input_tokens set to 1e20
    (an integer).  It raised "more than the 258400-token window; kept but marked implausible" from the reader and
    "not a token count ...; treated as unknown" from the run's sanitize for the same value.  Now one issue: the block
    is not a count (the 2**53 rule of the run's sanitize) and is ignored, and the call comes from the change in
    total_token_usage, which is line 17's total minus line 10's (read here with plain json)."""
    from ctxwatch.engine import load_run

    lines = SAMPLE.read_text().splitlines()
    rec = json.loads(lines[16])
    info = rec["payload"]["info"]
    info["last_token_usage"]["input_tokens"] = 10**20
    lines[16] = json.dumps(rec)
    path = tmp_path / "dmg_last.jsonl"
    path.write_text("\n".join(lines) + "\n")
    r = load_run(str(path))
    assert [(i.kind, i.line) for i in r.issues] == [("implausible_value", 17)]
    assert r.issues[0].message.startswith("last_token_usage.input_tokens 1e+20: not a token count")
    assert r.issues[0].message.endswith("this usage block is ignored")
    before = json.loads(lines[9])["payload"]["info"]["total_token_usage"]
    assert json.loads(lines[9])["type"] == "event_msg"  # (line 10: the first call's token_count)
    want = {k: info["total_token_usage"][k] - before[k] for k in before}
    second = r.calls[1]
    assert second.source.line == 17 and second.provenance.usage_from == "total_delta"
    assert second.usage is not None and not second.usage.damaged
    assert (second.usage.prompt_total, second.usage.cache_read, second.usage.output, second.usage.reasoning) == (
        want["input_tokens"], want["cached_input_tokens"], want["output_tokens"], want["reasoning_output_tokens"])
    assert not second.provenance.implausible


def test_a_total_delta_after_a_damaged_total_does_not_count_that_call_again(tmp_path: Path) -> None:
    """The second event's total is damaged (input_tokens "x"), so its call comes from its last_token_usage
    (2000, 900, 200); its copy is a repeat.  The fourth event has a whole total (4500, 900, 350) and no
    last_token_usage: its call is the delta from the total after the second call, 1000 + 2000 = 3000 input,
    900 cached, 100 + 200 = 300 output, i.e. (1500, 0, 50, 0), not (3500, 900, 250, 0) counted from the first
    total, which counted the second call twice.  Per-call sums then equal the last total: 4500 / 900 / 350."""
    first = _block(1000, 0, 100, 0, 1100)
    bad_total = _block('"x"', 900, 300, 0, 3300)
    second = _raw_tc(bad_total, _block(2000, 900, 200, 0, 2200))
    lines = [_raw_tc(first, first), second, second, _raw_tc(_block(4500, 900, 350, 0, 4850), None)]
    path = tmp_path / "delta.jsonl"
    path.write_text("\n".join(lines) + "\n")
    calls, issues, _ = run(path)
    assert [(i.kind, i.line) for i in issues] == [("invalid_field", 2), ("invalid_field", 3)]
    got = [(c.usage.prompt_total, c.usage.cache_read, c.usage.output, c.usage.reasoning) for c in calls if c.usage]
    assert got == [(1000, 0, 100, 0), (2000, 900, 200, 0), (1500, 0, 50, 0)]
    assert [c.provenance.usage_from for c in calls] == ["last_token_usage", "last_token_usage", "total_delta"]
    assert (sum(g[0] for g in got), sum(g[1] for g in got), sum(g[2] for g in got)) == (4500, 900, 350)


SMALL_HEAD = [
    '{"timestamp":"2026-08-03T10:48:56.000Z","type":"session_meta","payload":{"id":"sess-2"}}',
    '{"timestamp":"2026-08-03T10:48:56.000Z","type":"turn_context","payload":{"model":"gpt-5.1-codex"}}']


def _small(tmp_path: Path, cache_write: str = "0", window: str = "258400", head: list[str] | None = None) -> Path:
    """The tester's codex_small.jsonl (one call: 16,341 prompt tokens, 3,584 cached, 81 output, 63 reasoning)
    with its cache_write_input_tokens and model_context_window written as given (raw JSON text)."""
    block = ('{"input_tokens":16341,"cached_input_tokens":3584,"cache_write_input_tokens":' + cache_write
             + ',"output_tokens":81,"reasoning_output_tokens":63,"total_tokens":16422}')
    line = _raw_tc(block, block, "2026-08-03T10:48:57.000Z").replace(":258400}", f":{window}}}")
    path = tmp_path / "small.jsonl"
    path.write_text("\n".join([*(head if head is not None else SMALL_HEAD), line]) + "\n")
    return path


def test_a_cache_write_that_is_not_a_count_is_reported_not_truncated(tmp_path: Path) -> None:
    """cache_write_input_tokens of 2.7, "x", true, "inf", 1e400 or -3 is not a count: the call keeps its prompt
    (16,341) and cache reads (3,584), its cache write is unknown (None) with an implausible_value issue naming
    the value; it read 2.7 as 2, "x" and true as 0 (silently) and "inf" as a crash that lost the call."""
    from ctxwatch.engine import load_run

    for raw, shown in (("2.7", "2.7"), ('"x"', "'x'"), ("true", "true"), ('"inf"', "'inf'"), ("1e400", "inf"),
                       ("-3", "-3")):
        r = load_run(str(_small(tmp_path, cache_write=raw)))
        assert len(r.calls) == 1, raw
        u = r.calls[0].usage
        assert u is not None and (u.prompt_total, u.cache_read, u.cache_write, u.output) == (16341, 3584, None, 81)
        assert [(i.kind, i.line) for i in r.issues] == [(count_kind(json.loads(raw)), 3)], raw
        assert r.issues[0].message.startswith(f"cache write tokens {shown} ("), r.issues[0].message
    # A whole count is kept, and 0 is a count (no cache write), not unknown.
    for raw, want in (("0", 0), ("120", 120)):
        r = load_run(str(_small(tmp_path, cache_write=raw)))
        u = r.calls[0].usage
        assert r.issues == [] and u is not None and u.cache_write == want
        assert u.input_uncached == 16341 - 3584 - want


def test_a_window_that_is_not_a_count_is_reported_and_unknown(tmp_path: Path) -> None:
    """model_context_window of "inf", "1e400", 1e400, 2.5, true or -5: the call is kept (16,341 prompt tokens),
    the log's window is unknown (the window then comes from elsewhere, never Src.LOG) and an implausible_value
    issue names the value.  "inf" and 1e400 were an OverflowError that lost the only call (exit 2), 2.5 read as a
    window of 2 tokens.  0 or null is Codex not saying: no issue, as before."""
    from ctxwatch.engine import load_run
    from ctxwatch.model import Src

    for raw, shown in (('"inf"', "'inf'"), ('"1e400"', "'1e400'"), ("1e400", "inf"), ("2.5", "2.5"),
                       ("true", "true"), ("-5", "-5")):
        r = load_run(str(_small(tmp_path, window=raw)))
        assert [c.prompt_reported for c in r.calls] == [16341], raw
        assert r.calls[0].window_src != Src.LOG, raw
        assert [(i.kind, i.line) for i in r.issues] == [(count_kind(json.loads(raw)), 3)], raw
        assert r.issues[0].message.startswith(f"context window {shown} ("), r.issues[0].message
    for raw in ("0", "null"):
        r = load_run(str(_small(tmp_path, window=raw)))
        assert r.issues == [] and [c.prompt_reported for c in r.calls] == [16341]
    # The task_started hint: a damaged one is reported and not used (1.5 was a 1-token window, which made the
    # call "implausible"); a whole one stands in for a token_count window of 0.
    for raw, issues, window in (("1.5", [("implausible_value", 3)], None), ('"inf"', [("invalid_field", 3)], None),
                                ("258400", [], 258400)):
        started = ('{"timestamp":"2026-08-03T10:48:56.500Z","type":"event_msg","payload":{"type":"task_started",'
                   f'"model_context_window":{raw}}}}}')
        path = _small(tmp_path, window="0", head=[*SMALL_HEAD, started])
        calls, got, _ = run(path)
        assert [(i.kind, i.line) for i in got] == issues, raw
        assert len(calls) == 1 and calls[0].window == window and not calls[0].provenance.implausible, raw


def test_a_second_rollout_in_the_same_file_is_a_session_of_its_own(tmp_path: Path, shared_logs: Path) -> None:
    """The tester's codex_cat2.jsonl: the one-call rollout sess-2, then the real 0.58 rollout.  Its 39 calls are
    in the real rollout's session (the id on its first line) and are what the real file alone gives: the first
    of them gives its own floor (10,128 reported minus its estimated history) where it was all floor and no
    history under sess-2's floor of 16,341."""
    from ctxwatch.engine import load_run
    from ctxwatch.model import Src

    real = shared_logs / "codex-rollout" / ROLLOUT
    real_id = json.loads(real.read_text().splitlines()[0])["payload"]["id"]
    ref = reference(real)
    cat = tmp_path / "cat2.jsonl"
    cat.write_text(_small(tmp_path).read_text() + real.read_text())
    calls = load_run(str(cat)).calls
    alone = load_run(str(real)).calls
    assert [c.session for c in calls] == ["sess-2"] + [real_id] * 39
    assert [c.prompt_reported for c in calls] == [16341] + [r["last"]["input_tokens"] for r in ref]
    first = calls[1]
    assert (first.history_src, first.floor_src) == (Src.ESTIMATED, Src.INFERRED)
    assert first.history_tokens > 0 and first.floor_tokens == 10128 - first.history_tokens
    assert [(c.prompt_reported, c.floor_tokens, c.floor_src, c.history_tokens, c.history_src, c.window, c.model)
            for c in calls[1:]] == [
        (c.prompt_reported, c.floor_tokens, c.floor_src, c.history_tokens, c.history_src, c.window, c.model)
        for c in alone]
    parsed, issues, _ = run(cat)
    assert issues == [] and [len(c.messages or []) for c in parsed[1:]] == [r["items_before"] for r in ref]


def test_a_new_session_meta_resets_system_model_window_and_totals(tmp_path: Path) -> None:
    """Rollout A (system "SYS-A", model gpt-5, task_started window 200,000, cumulative total 1000 / 100) then
    rollout B (system "SYS-B", no turn_context, window 0, no task_started) whose only event has a total of
    5000 / 200 and no last_token_usage.  B's call is its own first call: 5000 / 200 (its total, not the
    4000 / 100 delta from A's total), system ["SYS-B"], no model and no window from A.  A session_meta of a
    session this one was forked from (forked_from_id) is the copied parent history: same session, history kept;
    the copied call (stamped at the fork) is the parent's, the fork's own call later is the fork's."""
    def meta(sid: str, system: str, **more: str) -> dict:
        return {"timestamp": "2025-05-01T10:00:00Z", "type": "session_meta",
                "payload": {"id": sid, "base_instructions": {"text": system}, **more}}

    user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hello"}]}
    started = {"timestamp": "2025-05-01T10:00:00Z", "type": "event_msg",
               "payload": {"type": "task_started", "model_context_window": 200000}}
    recs = [meta("A", "SYS-A"), {"timestamp": "2025-05-01T10:00:00Z", "type": "turn_context",
                                 "payload": {"model": "gpt-5"}}, started,
            {"timestamp": "2025-05-01T10:00:01Z", "type": "response_item", "payload": user},
            _tc("2025-05-01T10:00:02Z", (1000, 0, 100, 0), None, 0),
            meta("B", "SYS-B"), _tc("2025-05-01T11:00:00Z", (5000, 0, 200, 0), None, 0)]
    calls, issues, _ = run(write(tmp_path, "ab.jsonl", recs))
    assert issues == []
    a, b = calls
    assert (a.session, a.system, a.model, a.window) == ("A", ["SYS-A"], "gpt-5", 200000)
    assert a.usage is not None and (a.usage.prompt_total, a.usage.output) == (1000, 100)
    assert (b.session, b.system, b.model, b.window, b.messages) == ("B", ["SYS-B"], None, None, [])
    assert b.usage is not None and (b.usage.prompt_total, b.usage.output) == (5000, 200)
    # A fork of A written after A's own lines (Codex persists the parent's session_meta with its history).
    fork = [meta("F", "SYS-F", forked_from_id="A"), *recs[:5], _tc("2025-05-01T10:00:30Z", (2500, 0, 150, 0), None, 0)]
    calls, issues, _ = run(write(tmp_path, "fork.jsonl", fork))
    assert [i.kind for i in issues] == ["fork_copies"] and [c.session for c in calls] == ["A", "F"]
    assert calls[1].system == ["SYS-F"] and len(calls[1].messages or []) == 1
    assert calls[1].usage is not None and (calls[1].usage.prompt_total, calls[1].usage.output) == (1500, 50)


def test_a_null_counter_is_unknown_not_zero(shared_logs: Path, tmp_path: Path) -> None:
    """``"output_tokens": null`` in a last_token_usage block was read as 0: the call's output 0 and its cost its
    prompt's alone.  The block is reported and ignored, and the usage comes from the running totals instead:
    the output is the difference of two consecutive totals' output_tokens (read plainly from the file)."""
    from ctxwatch.engine import load_run
    from ctxwatch.output.report import report_json

    src = shared_logs / "codex-rollout" / ROLLOUT
    ref = reference(src)
    lines = src.read_text().splitlines()
    k = 5  # (the sixth distinct total, and every repeat of its event)
    want = ref[k]["total"]["output_tokens"] - ref[k - 1]["total"]["output_tokens"]
    assert want == ref[k]["last"]["output_tokens"]
    hit = []
    for i, raw in enumerate(lines):
        d = json.loads(raw)
        info = (d.get("payload") or {}).get("info") if d["type"] == "event_msg" else None
        if info and info["total_token_usage"] == ref[k]["total"]:
            info["last_token_usage"]["output_tokens"] = None
            lines[i] = json.dumps(d)
            hit.append(i + 1)
    path = tmp_path / "nulled.jsonl"
    path.write_text("\n".join(lines) + "\n")
    calls, issues, _ = run(path)
    assert len(calls) == 39
    u = calls[k].usage
    assert u is not None and u.output == want and u.prompt_total == ref[k]["last"]["input_tokens"]
    assert [(i.line, i.kind) for i in issues] == [(n, "invalid_field") for n in hit]  # (null: the wrong type)
    assert "last_token_usage.output_tokens null: not a token count" in issues[0].message
    doc = report_json(load_run(str(path)))
    assert doc["sessions"][0]["output_tokens"] == ref[-1]["total"]["output_tokens"]


def test_a_call_whose_two_usage_blocks_are_damaged_is_kept_with_what_survives(shared_logs: Path,
                                                                               tmp_path: Path) -> None:
    """``output_tokens: null`` in both last_token_usage and total_token_usage of a call (and its repeat)
    dropped the call: 38 calls, its 10,334 prompt tokens missing from the session and a cost too low.  It is kept:
    its prompt from the surviving counters, its output unknown, so neither it nor its session is priced."""
    from ctxwatch.engine import load_run
    from ctxwatch.output.report import report_json

    src = shared_logs / "codex-rollout" / ROLLOUT
    ref = reference(src)
    lines = src.read_text().splitlines()
    k = 1
    for i, raw in enumerate(lines):
        d = json.loads(raw)
        info = (d.get("payload") or {}).get("info") if d["type"] == "event_msg" else None
        if info and info["total_token_usage"] == ref[k]["total"]:
            info["last_token_usage"]["output_tokens"] = None
            info["total_token_usage"]["output_tokens"] = None
            lines[i] = json.dumps(d)
    path = tmp_path / "both.jsonl"
    path.write_text("\n".join(lines) + "\n")
    doc = report_json(load_run(str(path)))
    assert len(doc["calls"]) == 39
    call = doc["calls"][k]
    assert (call["prompt_tokens_reported"], call["cache_read_tokens"], call["completion_tokens_reported"]) == (
        ref[k]["last"]["input_tokens"], ref[k]["last"]["cached_input_tokens"], None)
    assert call["cost_usd"] is None and doc["sessions"][0]["cost_usd"] is None
    assert doc["sessions"][0]["input_tokens"] == ref[-1]["total"]["input_tokens"]
    assert doc["sessions"][0]["output_tokens"] == ref[-1]["total"]["output_tokens"] - ref[k]["last"]["output_tokens"]


def test_a_payload_info_or_usage_block_that_is_not_an_object_is_an_issue(tmp_path: Path) -> None:
    """A record whose payload, a token_count whose ``info``, or a usage block that holds another JSON type than an
    object is an ``invalid_field`` issue on its line (it was dropped unsaid: a log of such token counts read as
    clean, 0 calls and 0 issues); a call whose other block is whole is still counted from it, and ``info: null``
    (rate limits only) stays silent."""
    text_total = _tc("2025-05-01T10:01:00.000Z", (3000, 900, 300, 0), (2000, 900, 200, 0), 272000)
    text_total["payload"]["info"]["total_token_usage"] = "abc"
    both_numbers = _tc("2025-05-01T10:02:00.000Z", (6000, 900, 500, 0), (3000, 0, 200, 0), 272000)
    both_numbers["payload"]["info"]["total_token_usage"] = 5
    both_numbers["payload"]["info"]["last_token_usage"] = [1, 2]
    records = [*B12[:3],
               {"timestamp": "2025-05-01T10:00:30.000Z", "type": "response_item", "payload": "x"},
               {"timestamp": "2025-05-01T10:00:40.000Z", "type": "event_msg",
                "payload": {"type": "token_count", "info": "abc"}},
               {"timestamp": "2025-05-01T10:00:41.000Z", "type": "event_msg",
                "payload": {"type": "token_count", "info": None}},
               text_total, both_numbers]
    calls, issues, _ = run(write(tmp_path, "types.jsonl", records))
    assert [(i.kind, i.line, i.message.split(":")[0]) for i in issues] == [
        ("invalid_field", 4, "response_item.payload 'x'"),
        ("invalid_field", 5, "token_count.info 'abc'"),
        ("invalid_field", 7, "total_token_usage 'abc'"),
        ("invalid_field", 8, "total_token_usage 5"),
        ("invalid_field", 8, "last_token_usage [1,2]")]
    # (#1 from line 3; #2 from line 7's own last_token_usage; line 8 has no block left: no call)
    assert [(c.source.line, c.usage.prompt_total, c.usage.output) for c in calls if c.usage] == [
        (3, 1000, 100), (7, 2000, 200)]


def test_check_of_a_rollout_whose_every_token_count_is_damaged_is_no_clean_check(tmp_path: Path) -> None:
    """No call read and damage reported: ``check`` exits 2 naming the file and the bad line, not 0 (clean)."""
    from click.testing import CliRunner

    from ctxwatch.cli import main

    bad = {"timestamp": "2025-05-01T10:00:40.000Z", "type": "event_msg",
           "payload": {"type": "token_count", "info": {"total_token_usage": "abc", "last_token_usage": "abc",
                                                       "model_context_window": 258400}}}
    path = write(tmp_path, "damaged.jsonl", [*B12[:2], bad])
    res = CliRunner().invoke(main, ["check", str(path)], env={"CTXWATCH_NO_CACHE": "1"})
    assert res.exit_code == 2
    assert f"{path}:3: total_token_usage 'abc'" in res.output
