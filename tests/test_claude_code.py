"""Claude Code transcript reader (``ctxwatch.formats.claude_code``).

Expected values come from the sample files through small plain-``json`` readers written here (they share no code
with the reader), from FORMATS.md section 1, or from the failure cases B08, B11, B14 and B23 worked by hand.
"""

from __future__ import annotations

import base64
import json
import os
import struct
import zlib
from pathlib import Path

import pytest
from helpers import count_kind

from ctxwatch.formats import detect, get_format
from ctxwatch.formats.claude_code import ClaudeCodeReader, content_parts, sniff
from ctxwatch.formats.codex import sniff as codex_sniff
from ctxwatch.model import Issue, ParsedCall, Src
from ctxwatch.source import Record, iter_records

COMPACTION = "spotter_4d5611e5_lines700-800_compaction.jsonl"
INLINE_SIDECHAIN = "ccviewer_5c0375b4_v1.0.108_inline_sidechain.jsonl"


# --- helpers -------------------------------------------------------------------------------------------------


def run(path: Path | str, *, use_skip: bool = True, full: bool = True
        ) -> tuple[dict[str, ParsedCall], list[str], list[Issue], int]:
    """Read a file with the reader: final call per key, keys in first-seen order, issues, outputs emitted.

    ``full``: every call carries its history (as when a call is opened); ``False``: the summary pass.
    """
    reader = ClaudeCodeReader(str(path))
    reader.full_history = full
    calls: dict[str, ParsedCall] = {}
    order: list[str] = []
    issues: list[Issue] = []
    emitted = 0
    for rec in iter_records(str(path), skip=reader.skip if use_skip else None):
        outs = reader.feed(rec) if isinstance(rec, Record) else [rec]
        for out in outs:
            emitted += 1
            if isinstance(out, Issue):
                issues.append(out)
            else:
                assert out.key is not None
                if out.key not in calls:
                    order.append(out.key)
                calls[out.key] = out
    issues.extend(o for o in reader.finish() if isinstance(o, Issue))
    return calls, order, issues, emitted


def lines(path: Path) -> list[dict]:
    """Every JSON line of a file with plain ``json`` (1-based line number kept under ``_line``)."""
    out = []
    for i, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        d = json.loads(raw)
        d["_line"] = i
        out.append(d)
    return out


def reference_calls(path: Path) -> dict[str, dict[str, int]]:
    """The independent reader of the acceptance test (issue 2): one call per distinct (message.id, requestId)
    among assistant lines with usage, excluding synthetic ones; usage of the line with max output_tokens."""
    ref: dict[str, dict[str, int]] = {}
    for d in lines(path):
        if d.get("type") != "assistant":
            continue
        m = d["message"]
        if "usage" not in m or m.get("model") == "<synthetic>" or d.get("isApiErrorMessage"):
            continue
        u = m["usage"]
        key = f"{m['id']}:{d['requestId']}"
        out = u.get("output_tokens", 0)
        if key not in ref or out >= ref[key]["output"]:
            ref[key] = {
                "prompt": u.get("input_tokens", 0) + u.get("cache_creation_input_tokens", 0)
                + u.get("cache_read_input_tokens", 0),
                "output": out,
                "cache_read": u.get("cache_read_input_tokens", 0),
                "cache_write": u.get("cache_creation_input_tokens", 0),
                "line": ref.get(key, {}).get("line", d["_line"]),
            }
    return ref


def write(tmp_path: Path, name: str, records: list[dict] | str) -> Path:
    p = tmp_path / name
    p.write_text(records if isinstance(records, str) else "".join(json.dumps(r) + "\n" for r in records))
    return p


def claude_files(shared_logs: Path) -> list[Path]:
    return sorted((shared_logs / "claude-code").glob("*.jsonl"))


# --- the real samples ----------------------------------------------------------------------------------------


def test_every_sample_matches_the_independent_reader(shared_logs: Path) -> None:
    files = claude_files(shared_logs)
    assert len(files) >= 10  # (the folder grows as real logs are added)
    for path in files:
        ref = reference_calls(path)
        calls, order, issues, _ = run(path)
        # The one note: a main session whose agent_progress lines copy a subagent's messages (counted here with
        # plain json) ran calls that are in the subagent's own transcript, not in this file.
        copies = sum(1 for d in lines(path) if d.get("type") == "progress"
                     and isinstance(d.get("data"), dict) and d["data"].get("type") == "agent_progress")
        assert [(i.kind, i.line) for i in issues] == ([("subagent_calls_elsewhere", 0)] if copies else []), path.name
        assert all(i.message.startswith(f"{copies} agent_progress lines copy") for i in issues)
        assert set(calls) == set(ref), path.name
        for key, want in ref.items():
            u = calls[key].usage
            assert u is not None
            assert (u.prompt_total, u.output, u.cache_read, u.cache_write) == (
                want["prompt"], want["output"], want["cache_read"], want["cache_write"]), (path.name, key)
            assert calls[key].source.line == want["line"]
            assert calls[key].provider == "anthropic"
            assert calls[key].history_reported_only and calls[key].system is None and calls[key].tools is None
        # calls come out in file order of their first line
        assert [calls[k].source.line for k in order] == sorted(calls[k].source.line for k in order)


def test_skip_prefilter_changes_nothing_but_skips_progress(shared_logs: Path) -> None:
    for path in claude_files(shared_logs):
        with_skip, _, _, _ = run(path)
        without, _, _, _ = run(path, use_skip=False)
        assert set(with_skip) == set(without)
        for key, call in with_skip.items():
            other = without[key]
            assert [(m.role, m.label, m.text()) for m in call.messages or []] == \
                   [(m.role, m.label, m.text()) for m in other.messages or []], (path.name, key)
            assert call.context == other.context
    # the pre-filter does skip the big bookkeeping lines of a v2.1 file
    path = shared_logs / "claude-code" / "spotter_4d5611e5_head200.jsonl"
    reader = ClaudeCodeReader(str(path))
    raw = path.read_bytes().split(b"\n")
    kinds = [json.loads(r).get("type") for r in raw if r.strip()]
    skipped = [k for r, k in zip([r for r in raw if r.strip()], kinds, strict=True) if reader.skip(r)]
    assert set(skipped) == {"progress", "file-history-snapshot"}
    assert len(skipped) == kinds.count("progress") + kinds.count("file-history-snapshot") == 155


def test_compaction_sample(shared_logs: Path) -> None:
    path = shared_logs / "claude-code" / COMPACTION
    recs = lines(path)
    boundary = next(d for d in recs if d.get("subtype") == "compact_boundary")
    pre = boundary["compactMetadata"]["preTokens"]
    assert pre == 170251  # FORMATS.md section 1
    ref = reference_calls(path)
    before = [v for v in ref.values() if v["line"] < boundary["_line"]]
    after = sorted((v for v in ref.values() if v["line"] > boundary["_line"]), key=lambda v: v["line"])
    calls, order, _, _ = run(path)
    first_after = next(calls[k] for k in order if calls[k].source.line > boundary["_line"])
    assert first_after.compaction == {"kind": "compact_boundary", "trigger": "auto", "pre_tokens": pre,
                                      "post_tokens": None, "line": boundary["_line"]}
    assert first_after.usage is not None
    assert first_after.usage.prompt_total == after[0]["prompt"] == 36081  # FORMATS.md: "the next call has 36,081"
    assert first_after.usage.prompt_total < min(v["prompt"] for v in before)
    # The live history restarts at the boundary: just the summary, labelled, nothing from before it.
    assert first_after.messages is not None
    assert [(m.role, m.label) for m in first_after.messages] == [("user", "compaction_summary")]
    assert first_after.messages[0].text().startswith("This session is being continued")
    # Only that one call carries the marker.
    assert sum(1 for c in calls.values() if c.compaction) == 1
    # Pre-boundary calls keep their (reported) size: lifetime totals still see them.
    assert max(c.usage.prompt_total for c in calls.values() if c.usage) == 164831


def _roots(recs: list[dict]) -> dict[str, str]:
    """uuid -> uuid of the root of its parentUuid chain (plain dict walk)."""
    parent = {d["uuid"]: d.get("parentUuid") for d in recs if "uuid" in d}
    out = {}
    for u in parent:
        r = u
        while parent.get(r):
            r = parent[r]
        out[u] = r
    return out


def test_inline_sidechains_are_separate_contexts(shared_logs: Path) -> None:
    path = shared_logs / "claude-code" / INLINE_SIDECHAIN
    recs = lines(path)
    roots = _roots(recs)
    calls, _, _, _ = run(path)
    side_roots = set()
    for d in recs:
        if d.get("type") != "assistant":
            continue
        call = calls[f"{d['message']['id']}:{d['requestId']}"]
        if d.get("isSidechain"):
            assert call.context == f"sidechain-{roots[d['uuid']][:8]}"
            side_roots.add(roots[d["uuid"]])
        else:
            assert call.context == "main"
    assert len(side_roots) == 2  # two Task subagents (roots at lines 16 and 26)
    # Main histories never hold sidechain text.
    side_texts = {json.dumps(d["message"]["content"]) for d in recs if d.get("isSidechain") and d["type"] == "user"}
    for call in calls.values():
        if call.context == "main":
            for m in call.messages or []:
                if m.role == "user":
                    assert all(p.text not in side_texts for p in m.parts)


def test_text_report_names_each_calls_context(shared_logs: Path) -> None:
    """Main and sidechain calls side by side have floors of their own (17,792 and 12,694 on this sample): the text
    report names each row's context, as the file's isSidechain and parentUuid chain give it."""
    from click.testing import CliRunner

    from ctxwatch.cli import main

    path = shared_logs / "claude-code" / INLINE_SIDECHAIN
    recs = lines(path)
    roots = _roots(recs)
    expected: dict[int, str] = {}
    for d in recs:
        if d.get("type") == "assistant" and d["_line"] not in expected:
            side = d.get("isSidechain")
            expected.setdefault(d["_line"], f"sidechain-{roots[d['uuid']][:8]}" if side else "main")
    out = CliRunner().invoke(main, ["report", str(path)]).output.splitlines()
    header = next(i for i, row in enumerate(out) if row.split()[:2] == ["#", "line"])
    assert out[header].split()[-1] == "context"
    rows = [r.split() for r in out[header + 1:] if r.split() and r.split()[0].isdigit()]
    assert len(rows) == 20
    for r in rows:
        assert r[-1] == expected[int(r[1])]
    assert {r[-1] for r in rows} == {"main", "sidechain-6340ddef", "sidechain-83e2917c"}


def test_subagent_calls_elsewhere_note_until_the_transcript_is_read(tmp_path: Path, shared_logs: Path) -> None:
    """A session file read alone whose agent_progress lines copy subagent a2898e3's messages says that the
    subagent's calls are not counted from it; a folder read with that subagent's transcript beside it counts
    them (every response id of the transcript) and drops the note, while the compaction summarizer's transcript
    alone (no agent_progress line copies it) does not."""
    from ctxwatch.engine import load_many, load_run

    cc = shared_logs / "claude-code"
    sid = "4d5611e5-241a-462a-8d15-5122611a9569"
    proj = tmp_path / "-home-user-spotter"
    sub = proj / sid / "subagents"
    sub.mkdir(parents=True)
    main_log = proj / f"{sid}.jsonl"
    main_log.write_bytes((cc / "spotter_4d5611e5_head200.jsonl").read_bytes())
    copies = sum(1 for d in lines(main_log)
                 if d.get("type") == "progress" and d["data"].get("type") == "agent_progress")
    assert copies == 67

    def notes(run) -> list[str]:
        return [i.message for i in run.issues if i.kind == "subagent_calls_elsewhere"]

    alone = load_run(str(main_log))
    assert notes(alone) == [notes(alone)[0]] and notes(alone)[0].startswith("67 agent_progress lines copy")
    (sub / "agent-acompact-e1f845.jsonl").write_bytes((cc / "spotter_4d5611e5_subagents_agent-acompact-e1f845.jsonl")
                                                      .read_bytes())
    assert len(notes(load_many([str(proj)], None))) == 1
    (sub / "agent-a2898e3.jsonl").write_bytes((cc / "spotter_4d5611e5_subagents_agent-a2898e3.jsonl").read_bytes())
    run = load_many([str(proj)], None)
    assert notes(run) == []
    # Read alone again, with the transcripts on disk: the note says where they are (2 files), not that none is.
    (found,) = notes(load_run(str(main_log)))
    assert found.endswith(f"but from 2 subagent transcripts in {proj / sid}{os.sep}subagents, not among the files "
                          "read here (read with the session's folder, their calls are counted)")
    agent_keys = {f"{d['message']['id']}:{d['requestId']}" for d in lines(sub / "agent-a2898e3.jsonl")
                  if d.get("type") == "assistant"}
    assert {c.key for c in run.calls if c.context == "agent-a2898e3"} == agent_keys


def _hand_chain(recs: list[dict], line: int) -> tuple[int, int]:
    """Follow parentUuid from the first line of the call at ``line`` by hand: (user lines, distinct responses)."""
    by_uuid = {d["uuid"]: d for d in recs if "uuid" in d}
    u = by_uuid[next(d["uuid"] for d in recs if d["_line"] == line)]["parentUuid"]
    users, responses = 0, set()
    while u:
        d = by_uuid[u]
        if d.get("type") == "user":
            users += 1
        elif d.get("type") == "assistant":
            responses.add(d["message"]["id"])
        u = d.get("parentUuid")
    return users, len(responses)


def test_history_count_matches_a_hand_followed_chain(shared_logs: Path) -> None:
    # A linear v1.0.x main chain with inline sidechains in between (the call on line 42).
    path = shared_logs / "claude-code" / INLINE_SIDECHAIN
    recs = lines(path)
    users, responses = _hand_chain(recs, 42)
    assert (users, responses) == (10, 4)  # users on lines 1, 2, 5, 9-11, 15, 23, 24, 41
    calls, _, _, _ = run(path)
    call = next(c for c in calls.values() if c.source.line == 42)
    assert call.messages is not None
    assert len(call.messages) == users + responses == 14
    assert [m.role for m in call.messages].count("assistant") == responses
    # spotter_short: the only call's history is the one user prompt (progress lines are chain links only).
    calls, _, _, _ = run(shared_logs / "claude-code" / "spotter_short.jsonl")
    (only,) = calls.values()
    assert only.messages is not None
    assert [(m.role, m.text()) for m in only.messages] == [("user", "mix phx.server doesnt seem to start")]
    assert only.response is not None and only.response.tool_calls == 2


def test_parallel_tool_calls_keep_every_result(shared_logs: Path) -> None:
    """Lines 9-12 of spotter_subagent_parent.jsonl are four tool_use blocks of one response; their results (lines
    13-16) hang off different lines of it, so the parentUuid chain of the next call passes through only one of
    them. The request still carried the whole response and all four results (the API requires a result per
    tool_use): the history must hold them, paired."""
    path = shared_logs / "claude-code" / "spotter_subagent_parent.jsonl"
    recs = lines(path)
    tool_uses = [b["id"] for d in recs if d["_line"] in (9, 10, 11, 12) for b in d["message"]["content"]]
    results = [b["tool_use_id"] for d in recs if d["_line"] in (13, 14, 15, 16) for b in d["message"]["content"]]
    assert sorted(tool_uses) == sorted(results) and len(tool_uses) == 4
    calls, _, _, _ = run(path)
    call = next(c for c in calls.values() if c.source.line == 17)
    assert call.messages is not None
    roles = [(m.role, m.label) for m in call.messages]
    assert roles == [("user", None), ("user", "meta"), ("assistant", None)] + [("user", None)] * 4
    assistant = call.messages[2]
    assert assistant.tool_call_ids() == tool_uses  # one message for lines 6-12, blocks in line order
    # every result follows the response, in the order of its tool calls
    assert [i for m in call.messages[3:] for i in m.tool_result_ids()] == tool_uses


def test_subagent_files_are_agent_contexts(shared_logs: Path) -> None:
    calls, _, _, _ = run(shared_logs / "claude-code" / "spotter_4d5611e5_subagents_agent-a2898e3.jsonl")
    assert {c.context for c in calls.values()} == {"agent-a2898e3"}
    calls, _, _, _ = run(shared_logs / "claude-code" / "spotter_4d5611e5_subagents_agent-acompact-e1f845.jsonl")
    (summarizer,) = calls.values()
    assert summarizer.context == "agent-acompact-e1f845"
    assert summarizer.provenance.compaction_summarizer is True
    assert summarizer.usage is not None and summarizer.usage.cache_read == 164830  # FORMATS.md section 1
    # v2.1 subagent lines carry agentId; outside a subagents file that names the context too.
    rec = {"type": "assistant", "isSidechain": True, "agentId": "abc", "uuid": "x", "parentUuid": None,
           "requestId": "r", "sessionId": "s",
           "message": {"id": "m", "model": "claude-x", "content": [], "usage": {"input_tokens": 1}}}
    (call,) = ClaudeCodeReader("session.jsonl").feed(Record(rec, 1, 1, 0, 10))
    assert isinstance(call, ParsedCall) and call.context == "agent-abc"


def test_detection(shared_logs: Path) -> None:
    files = claude_files(shared_logs)
    assert len(files) >= 10  # (as in test_every_sample_matches_the_independent_reader)
    for path in files:
        spec = detect(str(path))
        assert spec is not None and spec.name == "claude-code", path.name
    assert get_format("claude-code").needs_prefix
    rollouts = sorted((shared_logs / "codex-rollout").glob("*.jsonl"))
    assert len(rollouts) >= 3  # (an empty glob would check nothing)
    for path in rollouts:
        spec = detect(str(path))
        assert spec is None or spec.name != "claude-code"
    from ctxwatch.formats import sniff_file

    for other in ("codex-rollout/rollout-2025-11-17T15-30-28-019a93b9_codex0.58.0.jsonl",
                  "gemini-cli/derived_schema_fixture_agent-sessions_gemini_jsonl_v040.jsonl",
                  "request-response/claude-trace_test-traffic_head14.jsonl"):
        assert sniff(sniff_file(str(shared_logs / other))) == 0.0, other
    assert codex_sniff(sniff_file(str(shared_logs / "claude-code" / COMPACTION))) == 0.0


# --- failure cases -------------------------------------------------------------------------------------------

B11 = [
    {"type": "assistant", "message": {"id": "msg_dup", "role": "assistant", "model": "claude-sonnet-4-5",
                                      "content": [{"type": "thinking", "thinking": "…"}],
                                      "usage": {"input_tokens": 6, "cache_creation_input_tokens": 500,
                                                "cache_read_input_tokens": 20000, "output_tokens": 384}},
     "requestId": "req_dup", "uuid": "a1", "sessionId": "s1", "timestamp": "2025-01-01T00:00:01.100Z"},
    {"type": "assistant", "message": {"id": "msg_dup", "role": "assistant", "model": "claude-sonnet-4-5",
                                      "content": [{"type": "text", "text": "placeholder"}],
                                      "usage": {"input_tokens": 6, "cache_creation_input_tokens": 500,
                                                "cache_read_input_tokens": 20000, "output_tokens": 384}},
     "requestId": "req_dup", "uuid": "a2", "sessionId": "s1", "timestamp": "2025-01-01T00:00:01.900Z"},
    {"type": "assistant", "message": {"id": "msg_dup", "role": "assistant", "model": "claude-sonnet-4-5",
                                      "content": [{"type": "tool_use", "id": "toolu_1", "name": "Read",
                                                   "input": {"path": "x"}}],
                                      "usage": {"input_tokens": 6, "cache_creation_input_tokens": 500,
                                                "cache_read_input_tokens": 20000, "output_tokens": 384}},
     "requestId": "req_dup", "uuid": "a3", "sessionId": "s1", "timestamp": "2025-01-01T00:00:02.300Z"},
]


def test_b11_one_response_on_three_lines_and_a_copy_in_another_file(tmp_path: Path) -> None:
    s1 = write(tmp_path, "s1.jsonl", B11)
    copy = dict(B11[0], sessionId="s2")
    s2 = write(tmp_path, "s2.jsonl", [copy])
    calls, order, issues, emitted = run(s1)
    assert issues == [] and order == ["msg_dup:req_dup"]
    assert emitted == 3  # emitted on the first line, updated (same key) by the other two
    call = calls["msg_dup:req_dup"]
    assert call.usage is not None and call.usage.prompt_total == 20506 and call.usage.output == 384
    assert call.usage.prompt_total + call.usage.output == 20890  # occupancy after the response
    assert call.response is not None and call.response.text == "placeholder" and call.response.tool_calls == 1
    assert (call.source.line, call.source.line_end) == (1, 3)
    assert call.timestamp == pytest.approx(1735689601.1)
    calls2, _, _, _ = run(s2)
    assert list(calls2) == ["msg_dup:req_dup"]  # same key in the second file: a consumer dedupes on it
    # Within one reader a re-read copy of a known line adds nothing.
    reader = ClaudeCodeReader(str(s1))
    reader.full_history = True
    assert len(reader.feed(Record(B11[0], 1, 1, 0, 10))) == 1
    assert reader.feed(Record(B11[0], 9, 9, 90, 100)) == []
    # The three blocks all count toward the history of the next call.
    nxt = {"type": "assistant", "requestId": "req_2", "uuid": "a4", "sessionId": "s1",
           "message": {"id": "msg_2", "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": "ok"}],
                       "usage": {"input_tokens": 1}}}
    for i, rec in enumerate([*B11[1:], nxt], 2):
        out = reader.feed(Record(rec, i, i, i * 10, i * 10 + 10))
    (last,) = out
    assert isinstance(last, ParsedCall) and last.messages is not None
    assert [p.kind for p in last.messages[0].parts] == ["thinking", "text", "tool_call"]
    assert last.messages[0].parts[2].text == '{"path":"x"}' and last.messages[0].parts[2].name == "Read"


def test_b11_duplicates_across_files_count_once_in_a_run(tmp_path: Path) -> None:
    run_mod = pytest.importorskip("ctxwatch.engine.run")
    s1 = write(tmp_path, "s1.jsonl", B11)
    s2 = write(tmp_path, "s2.jsonl", [dict(B11[0], sessionId="s2")])
    r = run_mod.Run(str(s1), get_format("claude-code"))
    for path in (s1, s2):
        r.reader = ClaudeCodeReader(str(path))
        for rec in iter_records(str(path), skip=r.reader.skip):
            r.feed_record(rec)
    assert len(r.calls) == 1
    assert r.calls[0].usage is not None and r.calls[0].usage.prompt_total == 20506


def test_b08_claude_usage_semantics(tmp_path: Path) -> None:
    line = {"type": "assistant", "message": {"id": "msg_a1", "role": "assistant", "model": "claude-sonnet-4-5",
                                             "content": [{"type": "text", "text": "ok"}],
                                             "usage": {"input_tokens": 6, "cache_creation_input_tokens": 11000,
                                                       "cache_read_input_tokens": 22000, "output_tokens": 300}},
            "requestId": "req_a1", "uuid": "a1", "sessionId": "s1", "timestamp": "2025-01-01T00:00:10Z"}
    calls, _, _, _ = run(write(tmp_path, "b08.jsonl", [line]))
    (call,) = calls.values()
    u = call.usage
    assert u is not None
    assert (u.prompt_total, u.input_uncached, u.cache_read, u.cache_write, u.output) == (33006, 6, 22000, 11000, 300)
    assert 0 <= u.cache_read / u.prompt_total <= 1
    assert (call.model, call.session, call.timestamp) == ("claude-sonnet-4-5", "s1", 1735689610.0)


B23 = [
    {"type": "user", "message": {"role": "user", "content": "…(old turn)"}, "uuid": "u1", "sessionId": "s1",
     "timestamp": "2025-01-01T00:00:00Z"},
    {"type": "assistant", "message": {"id": "msg_1", "role": "assistant", "model": "claude-sonnet-4-5",
                                      "content": [{"type": "text", "text": "…"}],
                                      "usage": {"input_tokens": 10, "cache_creation_input_tokens": 0,
                                                "cache_read_input_tokens": 154000, "output_tokens": 800}},
     "requestId": "r1", "uuid": "a1", "sessionId": "s1", "timestamp": "2025-01-01T00:10:00Z"},
    {"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
     "compactMetadata": {"trigger": "auto", "preTokens": 154810, "postTokens": 9800}, "uuid": "b1",
     "sessionId": "s1", "timestamp": "2025-01-01T00:11:00Z"},
    {"type": "user", "isCompactSummary": True,
     "message": {"role": "user", "content": "This session is being continued from a previous conversation…"},
     "uuid": "u2", "sessionId": "s1", "timestamp": "2025-01-01T00:11:01Z"},
]


def test_b23_history_restarts_at_the_boundary(tmp_path: Path) -> None:
    nxt = {"type": "user", "message": {"role": "user", "content": "go on"}, "uuid": "u3", "sessionId": "s1"}
    call2 = {"type": "assistant", "requestId": "r2", "uuid": "a2", "sessionId": "s1",
             "timestamp": "2025-01-01T00:12:00Z",
             "message": {"id": "msg_2", "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": "ok"}],
                         "usage": {"input_tokens": 5, "cache_creation_input_tokens": 9805,
                                   "cache_read_input_tokens": 0, "output_tokens": 2}}}
    calls, order, _, _ = run(write(tmp_path, "b23.jsonl", [*B23, nxt, call2]))
    first, second = (calls[k] for k in order)
    assert first.compaction is None and first.usage is not None and first.usage.prompt_total == 154010
    assert second.compaction == {"kind": "compact_boundary", "trigger": "auto", "pre_tokens": 154810,
                                 "post_tokens": 9800, "line": 3}
    assert second.messages is not None
    assert [(m.role, m.label) for m in second.messages] == [("user", "compaction_summary"), ("user", None)]
    assert second.usage is not None and second.usage.prompt_total == 9810


def test_b14_glued_and_truncated_lines(tmp_path: Path) -> None:
    text = (
        '{"type":"user","message":{"role":"user","content":"first"},"uuid":"u1","sessionId":"s1",'
        '"timestamp":"2025-01-01T00:00:00Z"}\n'
        '{"type":"pr-link","sessionId":"s1","prNu{"type":"assistant","message":{"id":"msg_2","role":"assistant",'
        '"model":"claude-sonnet-4-5","content":[{"type":"text","text":"second"}],"usage":{"input_tokens":5,'
        '"cache_creation_input_tokens":0,"cache_read_input_tokens":100,"output_tokens":3}},"requestId":"req_2",'
        '"uuid":"a2","sessionId":"s1","timestamp":"2025-01-01T00:00:02Z"}\n'
        '{"type":"user","message":{"role":"user","content":"third"},"uuid":"u3","sessionId":"s1",'
        '"timestamp":"2025-01-01T00:00:03Z"}\n'
        '{"type":"assistant","message":{"id":"msg_4","role":"assistant","content":[{"type":"text","text":"cut mid-str'
    )
    calls, _, issues, _ = run(write(tmp_path, "b14.jsonl", text))
    assert list(calls) == ["msg_2:req_2"]
    call = calls["msg_2:req_2"]
    assert call.usage is not None and call.usage.prompt_total == 105 and call.source.line == 2
    assert call.messages is not None and [m.text() for m in call.messages] == ["first"]
    assert [(i.line, i.kind) for i in issues] == [(2, "glued_records"), (4, "truncated_tail")]


# --- robustness and content conversion -----------------------------------------------------------------------


def _png(width: int, height: int) -> str:
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    data = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + chunk + struct.pack(">I", zlib.crc32(chunk)) + b"\0" * 40
    return base64.b64encode(data).decode()


def test_content_conversion() -> None:
    png = _png(800, 600)
    parts = content_parts([
        {"type": "text", "text": "look"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}},
        {"type": "tool_result", "tool_use_id": "t1",
         "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"},
                     {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}}]},
        {"type": "tool_result", "tool_use_id": "t2", "content": "plain", "is_error": True},
        {"type": "thinking", "thinking": "hmm", "signature": "sig"},
        {"type": "tool_use", "id": "t3", "name": "Bash", "input": {"command": "ls"}},
        {"type": "mystery", "x": 1},
        "bare string", 7, None,
    ])
    assert [p.kind for p in parts] == ["text", "image", "tool_result", "image", "tool_result", "thinking",
                                       "tool_call", "other", "text"]
    img = parts[1].meta
    assert img is not None and (img["width"], img["height"], img["media_type"]) == (800, 600, "image/png")
    assert img["bytes"] == len(base64.b64decode(png))
    assert (parts[2].text, parts[2].call_id, parts[3].call_id) == ("a\nb", "t1", "t1")
    assert (parts[4].text, parts[4].call_id) == ("plain", "t2")
    assert (parts[6].name, parts[6].call_id, parts[6].text) == ("Bash", "t3", '{"command":"ls"}')
    assert content_parts("just text")[0].text == "just text"
    assert content_parts(None) == [] and content_parts(5) == []


def test_odd_records_never_crash() -> None:
    reader = ClaudeCodeReader("odd.jsonl")
    reader.full_history = True
    odd: list[object] = [
        [], "text", 5, None, {}, {"type": None}, {"type": "assistant"},
        {"type": "assistant", "message": "x"},
        {"type": "assistant", "message": {"content": "a string"}},
        {"type": "assistant", "message": {"id": 5, "content": [None], "usage": "none"}, "uuid": 7},
        {"type": "assistant", "isApiErrorMessage": True,
         "message": {"id": "e", "model": "<synthetic>", "content": [], "usage": {"input_tokens": 0}}},
        {"type": "assistant", "message": {"id": "s", "model": "<synthetic>", "content": []}, "requestId": "r"},
        {"type": "user", "message": None}, {"type": "user", "message": {"content": {"odd": 1}}},
        {"type": "user", "uuid": "loop1", "parentUuid": "loop2", "message": {"content": "a"}},
        {"type": "user", "uuid": "loop2", "parentUuid": "loop1", "message": {"content": "b"}},
        {"type": "assistant", "uuid": "x9", "parentUuid": "loop2", "requestId": "r9",
         "message": {"id": "m9", "content": [{"type": "text", "text": "ok"}], "usage": {"output_tokens": "12"}}},
        {"type": "system", "subtype": "compact_boundary", "compactMetadata": "bad"},
        {"type": "progress", "uuid": "p", "data": [1, 2]}, {"type": "brand-new-type", "uuid": "q"},
        {"type": "summary", "summary": "t", "leafUuid": "u"},
    ]
    outs = []
    for i, v in enumerate(odd, 1):
        outs.extend(reader.feed(Record(v, i, i, i * 10, i * 10 + 9)))
    outs.extend(reader.finish())
    issues = [o for o in outs if isinstance(o, Issue)]
    calls = {o.key: o for o in outs if isinstance(o, ParsedCall)}
    # (lines 1-4 are JSON but no object, 5 has no type, 6 a null one, 7 and 8 are assistant lines without a
    # message object; 5 is said once line 7 shows the file holds Claude Code records)
    assert sorted((i.line, i.kind) for i in issues) == [(n, "unknown_record") for n in (1, 2, 3, 4, 5, 6, 7, 8)]
    assert "e:" not in calls and "s:r" not in calls  # synthetic lines are not calls
    assert calls["uuid:@9.0"].usage is None  # a missing usage block means unknown, not zero
    assert calls["uuid:@9.0"].response is not None and calls["uuid:@9.0"].response.text == "a string"
    assert calls["uuid:@10.0"].usage is None  # ... and so does a usage that is not an object
    m9 = calls["m9:r9"]
    # a block with output but no input count: the completion is known, the prompt is not (never 0)
    assert m9.usage is not None and m9.usage.output == 12 and m9.usage.prompt_total is None
    assert m9.messages is not None and len(m9.messages) == 2  # the parentUuid cycle is walked once


def test_late_line_of_an_older_call_keeps_its_history() -> None:
    """Only the latest call of a context keeps its history list (memory stays linear); a late line of an older
    call rebuilds the same history."""
    def user(uid: str, parent: str | None, text: str) -> dict:
        return {"type": "user", "uuid": uid, "parentUuid": parent, "message": {"role": "user", "content": text}}

    def asst(uid: str, parent: str, mid: str, out: int) -> dict:
        return {"type": "assistant", "uuid": uid, "parentUuid": parent, "requestId": "r" + mid,
                "message": {"id": mid, "model": "claude-x", "content": [{"type": "text", "text": mid}],
                            "usage": {"input_tokens": 10, "output_tokens": out}}}

    recs = [user("u1", None, "hello"), asst("a1", "u1", "m1", 1), user("u2", "a1", "more"),
            asst("a2", "u2", "m2", 3), asst("a1b", "a1", "m1", 7)]
    reader = ClaudeCodeReader("late.jsonl")
    reader.full_history = True
    outs = [o for i, r in enumerate(recs, 1) for o in reader.feed(Record(r, i, i, i * 10, i * 10 + 9))]
    first, second, late = (o for o in outs if isinstance(o, ParsedCall))
    assert late.key == first.key == "m1:rm1"
    assert late.usage is not None and late.usage.output == 7 and late.source.line_end == 5
    assert late.messages is not None and first.messages is not None
    assert [m.text() for m in late.messages] == [m.text() for m in first.messages] == ["hello"]
    assert second.messages is not None and [m.text() for m in second.messages] == ["hello", "m1", "more"]


def test_detects_a_file_whose_first_line_exceeds_the_sniffed_head(tmp_path: Path) -> None:
    big = {"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": "/x",
           "sessionId": "s", "version": "2.1.39", "type": "user",
           "message": {"role": "user", "content": "p" * 100_000}, "uuid": "u1"}
    path = write(tmp_path, "big.jsonl", [big, B11[0]])
    spec = detect(str(path))
    assert spec is not None and spec.name == "claude-code"


def test_a_call_is_emitted_on_its_first_line_and_updated_by_later_ones(shared_logs: Path) -> None:
    """Tailing: lines 9-18 of the compaction sample are one response whose usage shows the streaming placeholder
    (output_tokens 1) until its last line (272)."""
    path = shared_logs / "claude-code" / COMPACTION
    recs = [d for d in lines(path) if d.get("type") == "assistant" and 9 <= d["_line"] <= 18]
    key = f"{recs[0]['message']['id']}:{recs[0]['requestId']}"
    assert [d["message"]["usage"]["output_tokens"] for d in recs] == [1, 1, 1, 272]
    reader = ClaudeCodeReader(str(path))
    seen = []
    for rec in iter_records(str(path), skip=reader.skip):
        if isinstance(rec, Record):
            for out in reader.feed(rec):
                if isinstance(out, ParsedCall) and out.key == key:
                    assert out.usage is not None
                    seen.append((rec.line, out.usage.output, out.source.line_end))
    assert seen == [(d["_line"], max(x["message"]["usage"]["output_tokens"] for x in recs if x["_line"] <= d["_line"]),
                     d["_line"]) for d in recs]


def test_inline_sidechains_rooted_in_the_main_chain_stay_apart() -> None:
    def line(uid: str, parent: str | None, side: bool, kind: str = "user") -> dict:
        d: dict = {"type": kind, "uuid": uid, "parentUuid": parent, "isSidechain": side}
        if kind == "user":
            d["message"] = {"role": "user", "content": uid}
        else:
            d["requestId"] = "r" + uid
            d["message"] = {"id": uid, "content": [], "usage": {"input_tokens": 1}}
        return d

    recs = [line("m1", None, False), line("s1", "m1", True), line("t1", "m1", True),
            line("s2", "s1", True, "assistant"), line("t2", "t1", True, "assistant")]
    reader = ClaudeCodeReader("x.jsonl")
    outs = [o for i, r in enumerate(recs, 1) for o in reader.feed(Record(r, i, i, i, i + 1))]
    assert [(o.key, o.context, [m.text() for m in o.messages or []]) for o in outs if isinstance(o, ParsedCall)] \
        == [("s2:rs2", "sidechain-s1", ["s1"]), ("t2:rt2", "sidechain-t1", ["t1"])]


def test_summary_pass_equals_the_full_read_but_keeps_history_once_per_context(shared_logs: Path) -> None:
    """The default (summary) pass gives every call the same usage, context, compaction marker, place on disk and
    response as the full read.  A call carries its history until one whose history is whole (its chain reaches
    the root or a compact_boundary) has been read in its context; after that only a compaction brings one back."""
    lazy_seen = 0
    for path in claude_files(shared_logs):
        full, order, issues, _ = run(path, full=True)
        lazy, lazy_order, lazy_issues, _ = run(path, full=False)
        assert (lazy_order, lazy_issues) == (order, issues), path.name
        for key in order:
            a, b = full[key], lazy[key]
            assert (b.usage, b.context, b.compaction, b.source, b.response, b.session, b.model, b.timestamp) == \
                   (a.usage, a.context, a.compaction, a.source, a.response, a.session, a.model, a.timestamp), key
            if b.messages is not None:
                assert [(m.role, m.text()) for m in b.messages] == [(m.role, m.text()) for m in a.messages or []]
            lazy_seen += b.messages is None
    assert lazy_seen > 100  # most calls of the samples need no history


def test_summary_pass_history_is_the_reported_prompt_minus_the_contexts_floor(shared_logs: Path) -> None:
    """The floor (system prompt + tools) is inferred once per context, from a call whose history is whole; every
    later call's history is its reported prompt minus that floor."""
    from ctxwatch.engine import load_run
    from ctxwatch.tokens import counter_for

    def est(call: ParsedCall) -> int:
        assert call.messages is not None
        return sum(counter_for(call.model, "anthropic").message_tokens(m) for m in call.messages)

    # A whole session (its first line has parentUuid null): the first call of each context sets the floor.
    path = shared_logs / "claude-code" / "ccviewer_fe5e1c67_v1.0.98_head200.jsonl"
    assert next(d for d in lines(path) if "uuid" in d)["parentUuid"] is None
    ref = reference_calls(path)  # plain-json reader: reported prompt per call
    full, order, _, _ = run(path, full=True)
    calls = load_run(str(path)).calls
    assert [c.key for c in calls] == order and len(calls) == 78
    floors: dict[str, int] = {}
    for c in calls:
        if c.context not in floors:  # main, then three v1.0.x inline sidechains with a smaller floor
            floors[c.context] = ref[c.key or ""]["prompt"] - est(full[c.key or ""])
            assert (c.floor_tokens, c.floor_src, c.history_src) == (floors[c.context], Src.INFERRED, Src.ESTIMATED)
        else:
            floor = floors[c.context]
            assert (c.floor_tokens, c.history_tokens) == (floor, ref[c.key or ""]["prompt"] - floor), c.key
            assert c.floor_src == c.history_src == Src.INFERRED
    assert len(floors) == 4
    from ctxwatch.output.report import call_json

    # In the JSON report an uncounted history says so (null), a counted one gives its message count.
    assert [call_json(c, None, None)["messages"] is None for c in calls] == \
           [c.history_src == Src.INFERRED for c in calls]
    assert call_json(calls[0], None, None)["messages"] == len(full[order[0]].messages or []) > 0

    # An excerpt (lines 700-800): before the boundary every chain runs out of the file, so the visible history
    # is only a tail and the prompt cannot be split: floor and history are unknown, the reported total stays.
    # The boundary restarts the history inside the file, and the floor is inferred there.
    path = shared_logs / "claude-code" / COMPACTION
    ref = reference_calls(path)
    full, order, _, _ = run(path, full=True)
    calls = load_run(str(path)).calls
    k = next(i for i, c in enumerate(calls) if c.compaction)
    assert k == 5
    for c in calls[:k]:
        assert (c.floor_tokens, c.history_tokens, c.floor_src, c.history_src) == (None, None, Src.UNKNOWN, Src.UNKNOWN)
        assert c.prompt_reported == ref[c.key or ""]["prompt"] and c.used_tokens == c.prompt_reported
    floor = 36081 - est(full[order[k]])  # FORMATS.md: the first call after the boundary has 36,081
    assert (calls[k].floor_tokens, calls[k].history_src) == (floor, Src.ESTIMATED)
    assert calls[k + 1:]
    for c in calls[k + 1:]:
        assert (c.floor_tokens, c.history_tokens) == (floor, ref[c.key or ""]["prompt"] - floor)
        assert c.history_src == Src.INFERRED


def _session(tmp_path: Path, name: str, turns: list[tuple[str, str, dict | None]]) -> Path:
    """A linear Claude Code file: per turn (session id, user text, usage of the answering call or None);
    a new session id starts a new root (parentUuid null)."""
    recs: list[dict] = []
    parent: str | None = None
    last_sid = None
    for i, (sid, text, usage) in enumerate(turns):
        if sid != last_sid:
            parent, last_sid = None, sid
        recs.append({"parentUuid": parent, "isSidechain": False, "type": "user", "uuid": f"u{i}", "sessionId": sid,
                     "message": {"role": "user", "content": text}})
        msg: dict = {"id": f"m{i}", "model": "claude-sonnet-4-20250514", "role": "assistant",
                     "content": [{"type": "text", "text": f"answer {i} " * 20}]}
        if usage is not None:
            msg["usage"] = usage
        recs.append({"parentUuid": f"u{i}", "isSidechain": False, "type": "assistant", "uuid": f"a{i}",
                     "sessionId": sid, "requestId": f"r{i}", "message": msg})
        parent = f"a{i}"
    return write(tmp_path, name, recs)


def test_the_floor_comes_from_a_call_with_usage_and_again_for_each_session(tmp_path: Path) -> None:
    """A first call without usage (or with a zero prompt) cannot give the floor: the next one does. A second
    session in the same file (new root, other session id) gets its own floor."""
    from ctxwatch.engine import load_run
    from ctxwatch.tokens import counter_for

    def u(n: int) -> dict:
        return {"input_tokens": n, "output_tokens": 5}

    for first in (None, u(0)):
        path = _session(tmp_path, "s.jsonl", [("s1", "task " * 50, first), ("s1", "more " * 30, u(20_400)),
                                              ("s1", "go on", u(20_900)), ("s1", "and on", u(21_700)),
                                              ("s2", "other task " * 10, u(9_300)), ("s2", "next", u(9_800))])
        full, _, _, _ = run(path, full=True)
        counter = counter_for("claude-sonnet-4-20250514", "anthropic")
        h1, h4 = (sum(counter.message_tokens(m) for m in full[k].messages or []) for k in ("m1:r1", "m4:r4"))
        floor1, floor2 = 20_400 - h1, 9_300 - h4
        calls = load_run(str(path)).calls
        got = [(c.floor_tokens, c.history_tokens, c.history_src) for c in calls]
        assert got[1:] == [(floor1, h1, Src.ESTIMATED), (floor1, 20_900 - floor1, Src.INFERRED),
                           (floor1, 21_700 - floor1, Src.INFERRED), (floor2, h4, Src.ESTIMATED),
                           (floor2, 9_800 - floor2, Src.INFERRED)], first
        assert floor1 > 19_000 and 8_000 < floor2 < 9_300


def test_a_finished_reader_is_freed_without_the_cyclic_collector(shared_logs: Path) -> None:
    """A folder read makes one reader per file; each must be freed when its file is done (by reference
    counting), not kept with all its parsed state until the cyclic collector happens to run (a bound
    ``skip`` method stored on the reader made a cycle)."""
    import gc
    import weakref

    from ctxwatch.source import Record, iter_records

    path = str(shared_logs / "claude-code" / "spotter_short.jsonl")
    gc.disable()
    try:
        reader = ClaudeCodeReader(path)
        reader.coalesce = True
        outs = [o for rec in iter_records(path, skip=reader.skip) if isinstance(rec, Record) for o in reader.feed(rec)]
        calls = [o for o in [*outs, *reader.finish()] if isinstance(o, ParsedCall)]
        ref = weakref.ref(reader)
        del reader
        assert calls and ref() is None
    finally:
        gc.enable()


@pytest.mark.parametrize(("raw", "shown"), [("1e3", "'1e3'"), (1.5, "1.5"), (True, "true"), ("many", "'many'"),
                                            ([1, 2], "[1,2]"), ({"n": 1}, '{"n":1}')])
def test_a_usage_value_that_is_not_a_count_is_unknown_and_reported(tmp_path: Path, raw: object, shown: str) -> None:
    """A Claude Code ``cache_read_input_tokens`` of "1e3", 1.5, true, "many", an array or an object is not read
    as 1,000, 1 or 0 (it was): the cache read and the prompt it is a part of are unknown, the call is unpriced,
    and the issue shows the value: a bad line (``invalid_field``) for a value of the wrong JSON type, a note
    (``implausible_value``) for 1.5.  The batch and canonical readers treat such values the same way.  "2048"
    and 2048.0 still count (some exporters write numbers as strings), and the string is an invalid_field issue
    of its line."""
    from click.testing import CliRunner

    from ctxwatch.cli import main

    def line(i: int, cache_read: object) -> dict:
        return {"parentUuid": f"u{i - 1}" if i else None, "isSidechain": False, "sessionId": "s1",
                "type": "assistant", "uuid": f"u{i}", "requestId": f"req_{i}", "timestamp": "2026-01-01T00:00:00Z",
                "message": {"id": f"msg_{i}", "model": "claude-sonnet-4-20250514", "role": "assistant",
                            "content": [{"type": "text", "text": "ok"}],
                            "usage": {"input_tokens": 10, "cache_creation_input_tokens": 100,
                                      "cache_read_input_tokens": cache_read, "output_tokens": 5}}}

    path = tmp_path / "s1.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in (line(0, "2048"), line(1, 2048.0), line(2, raw))))
    res = CliRunner().invoke(main, ["report", str(path), "--json", "--format", "claude-code"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    a, b, c = doc["calls"]
    assert (a["prompt_tokens_reported"], a["cache_read_tokens"]) == (10 + 100 + 2048, 2048)
    assert (b["prompt_tokens_reported"], b["cache_read_tokens"]) == (10 + 100 + 2048, 2048)
    assert (c["prompt_tokens_reported"], c["cache_read_tokens"], c["cost_usd"]) == (None, None, None)
    assert (c["cache_write_tokens"], c["completion_tokens_reported"]) == (100, 5)
    said, issue = doc["issues"]
    # (a count written as a string is read, and said, as the canonical reader says it)
    assert (said["kind"], said["line"]) == ("invalid_field", 1)
    assert said["message"] == ("message.usage.cache_read_input_tokens is a JSON string '2048', not a number: "
                               "read as 2,048")
    # (a value of the wrong JSON type is a bad line, a number that is no count a note)
    assert issue["kind"] == count_kind(raw) and issue["line"] == 3
    assert f"cache read tokens {shown} (not a" in issue["message"]  # (the field by name, and why)


def test_only_agent_file_names_are_subagent_transcripts(tmp_path: Path, shared_logs: Path) -> None:
    """``agent-<id>.jsonl`` (and the samples' flattened ``…_subagents_agent-<id>.jsonl``) is a subagent
    transcript; a main session saved as ``team_agent-log.jsonl`` is not (its context was ``agent-log`` and
    the picker tagged it subagent)."""
    from ctxwatch.formats.claude_code import is_subagent_file

    assert is_subagent_file("p/s1/subagents/agent-a2898e3.jsonl") and is_subagent_file("agent-acompact-e1.jsonl")
    assert is_subagent_file("spotter_4d5611e5_subagents_agent-a2898e3.jsonl")
    assert not is_subagent_file("team_agent-log.jsonl")
    assert not is_subagent_file("derived_schema_fixture_agent-sessions_gemini_jsonl_v040.jsonl")
    src = shared_logs / "claude-code" / "spotter_short.jsonl"
    main_copy = tmp_path / "team_agent-log.jsonl"
    main_copy.write_bytes(src.read_bytes())
    calls, _, _, _ = run(main_copy)
    assert calls and {c.context for c in calls.values()} == {"main"}


def test_a_negative_output_count_is_reported_not_a_lost_usage_block(tmp_path: Path, shared_logs: Path) -> None:
    """output_tokens -5 on every line of the first response: the usage block was never taken (the best line
    had to beat -1), so the call lost its prompt and every floor went unknown, with no issue.  Now the block
    is kept, the output is unknown with an implausible_value issue, and the prompt stays what the file says."""
    rows = [json.loads(x) for x in (shared_logs / "claude-code" / "spotter_short.jsonl").read_text().splitlines()]
    first = next(d["message"]["id"] for d in rows if d.get("type") == "assistant" and "usage" in d["message"])
    for d in rows:
        if d.get("type") == "assistant" and d["message"]["id"] == first:
            d["message"]["usage"]["output_tokens"] = -5
            u = d["message"]["usage"]
    log = tmp_path / "neg.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    calls, order, _issues, _ = run(log, full=False)
    (call,) = [calls[k] for k in order][:1]
    assert call.usage is not None
    assert call.usage.prompt_total == (u["input_tokens"] + u["cache_creation_input_tokens"]
                                       + u["cache_read_input_tokens"])
    from click.testing import CliRunner

    from ctxwatch.cli import main

    doc = json.loads(CliRunner().invoke(main, ["report", str(log), "--json"]).output)
    c0 = doc["calls"][0]
    assert (c0["completion_tokens_reported"], c0["cost_usd"]) == (None, None)
    assert c0["prompt_tokens_reported"] == call.usage.prompt_total and c0["floor_tokens"] is not None
    # (each of the response's lines holds the damage: the kept one's is the call's, the others' are not read)
    lines = [n for n, d in enumerate(rows, 1) if d.get("type") == "assistant" and d["message"]["id"] == first]
    assert [(i["line"], i["message"].split(":")[0]) for i in doc["issues"]] == \
        [*((n, "message.usage.output_tokens -5 (negative)") for n in lines[:-1]),
         (lines[-1], "output tokens -5 (negative)")]


def _cc_user(uid: str, parent: str | None) -> dict:
    return {"parentUuid": parent, "isSidechain": False, "type": "user", "uuid": uid, "sessionId": "s1",
            "message": {"role": "user", "content": "hello there"}, "timestamp": "2025-01-01T00:00:00Z"}


def _cc_assistant(uid: str, parent: str, mid: str, output: object) -> dict:
    usage = {"input_tokens": 6, "cache_creation_input_tokens": 11000, "cache_read_input_tokens": 22000,
             "output_tokens": output}
    return {"parentUuid": parent, "isSidechain": False, "type": "assistant", "uuid": uid, "sessionId": "s1",
            "requestId": f"req_{mid}", "timestamp": "2025-01-01T00:00:10Z",
            "message": {"id": mid, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                        "content": [{"type": "text", "text": "ok"}], "usage": usage}}


@pytest.mark.parametrize("bad", ["inf", "-inf", "NaN", 1e400, "1e400"])
def test_infinite_counts_are_unknown_not_a_lost_call(tmp_path: Path, bad: object) -> None:
    """``"output_tokens": "inf"`` (valid JSON; ``1e400`` parses as an infinite float) raised OverflowError in
    the reader: the call was lost (3 of 4 calls, its 33,006-token prompt missing) and plan/schema crashed.
    Now the call stays, with its prompt (6 + 11,000 + 22,000 = 33,006) and an unknown output, reported."""
    from ctxwatch.engine import load_run

    recs: list[dict] = []
    parent = None
    for i in range(1, 5):
        recs.append(_cc_user(f"u{i}", parent))
        recs.append(_cc_assistant(f"a{i}", f"u{i}", f"msg_{i}", bad if i == 3 else 300))
        parent = f"a{i}"
    text = "".join(json.dumps(r) + "\n" for r in recs)
    if bad == 1e400:  # (json.dumps writes Infinity, which is not JSON: write the literal a logger would)
        text = text.replace("Infinity", "1e400")
    path = tmp_path / "s1.jsonl"
    path.write_text(text)
    run = load_run(str(path))
    calls = run.calls
    assert len(calls) == 4
    assert [c.usage.prompt_total for c in calls if c.usage] == [33006] * 4
    assert [c.usage.output for c in calls if c.usage] == [300, 300, None, 300]
    bad_issues = [i for i in run.issues if i.kind in ("implausible_value", "invalid_field")]
    assert len(bad_issues) == 1 and bad_issues[0].line == 6  # (call 3's assistant line)
    assert bad_issues[0].kind == count_kind(bad)  # (a string: the wrong type)


@pytest.mark.parametrize("final", [-299, "299x", True, 299.5])
def test_a_damaged_final_output_is_not_replaced_by_the_streaming_placeholder(tmp_path: Path, final: object) -> None:
    """A response on two lines: output 10 (the streaming placeholder), then the final value, damaged.  The
    placeholder was kept silently (completion 10, priced); now the output is unknown and the issue names the
    line the damaged value is on (line 3; a float used to be reported on line 2)."""
    from ctxwatch.engine import load_run

    recs = [_cc_user("u1", None), _cc_assistant("a1", "u1", "msg_1", 10), _cc_assistant("a2", "a1", "msg_1", final)]
    run = load_run(str(write(tmp_path, "s1.jsonl", recs)))
    assert len(run.calls) == 1
    u = run.calls[0].usage
    assert u is not None and u.output is None and u.prompt_total == 33006
    assert [(i.kind, i.line) for i in run.issues] == [(count_kind(final), 3)]


def test_a_null_final_output_is_unknown_not_the_placeholder(tmp_path: Path) -> None:
    """Placeholder lines say 8 and 3, the final line ``output_tokens: null``: the call was priced with the
    placeholder's 8 as its output.  A null on the final line is an unknown output: no count, no cost (and the
    session's cost is null).  A line without the key at all stays below the counts (a streamed message's
    start)."""
    from ctxwatch.engine import load_run
    from ctxwatch.output.report import report_json

    recs = [_cc_user("u1", None), _cc_assistant("a1", "u1", "msg_1", 8), _cc_assistant("a2", "a1", "msg_1", 3),
            _cc_assistant("a3", "a2", "msg_1", None)]
    doc = report_json(load_run(str(write(tmp_path, "s1.jsonl", recs))))
    (call,) = doc["calls"]
    assert (call["completion_tokens_reported"], call["cost_usd"], doc["sessions"][0]["cost_usd"]) == (None, None, None)
    # (reported on the final line, as a Codex null is: why the call is not priced)
    assert [(i["line"], i["kind"], i["message"]) for i in doc["issues"]] == [
        (4, "invalid_field", "output tokens null (not a number): treated as unknown")]
    del recs[3]["message"]["usage"]["output_tokens"]  # (no key: the placeholder's 8 stands)
    doc = report_json(load_run(str(write(tmp_path, "s2.jsonl", recs))))
    assert doc["calls"][0]["completion_tokens_reported"] == 8 and doc["issues"] == []


def test_a_valid_final_output_still_beats_the_placeholder(tmp_path: Path) -> None:
    """The usual case around the change above: placeholder 10, final 299 -> 299, no issue."""
    from ctxwatch.engine import load_run

    recs = [_cc_user("u1", None), _cc_assistant("a1", "u1", "msg_1", 10), _cc_assistant("a2", "a1", "msg_1", 299)]
    run = load_run(str(write(tmp_path, "s1.jsonl", recs)))
    assert [c.usage.output for c in run.calls if c.usage] == [299] and run.issues == []


@pytest.mark.parametrize("last", ["progress", "user"])
def test_a_whole_last_line_without_newline_is_not_a_bad_line(tmp_path: Path, last: str) -> None:
    """The byte filter skips bookkeeping lines unparsed; on the file's last line, when it lacked only its
    newline, the skip left nothing behind and the line was reported as ``truncated_tail`` (check: "1 bad
    line").  A progress line, and a user line of a context whose floor is known, are skipped there too."""
    from ctxwatch.engine import load_run

    recs = [_cc_user("u1", None), _cc_assistant("a1", "u1", "msg_1", 300)]
    if last == "progress":
        recs.append({"parentUuid": "a1", "isSidechain": False, "type": "progress", "data": {"type": "hook_progress"},
                     "uuid": "p1", "sessionId": "s1", "timestamp": "2025-01-01T00:00:11Z"})
    else:
        recs.append(_cc_user("u2", "a1"))
    path = tmp_path / "s1.jsonl"
    # (compact, as Claude Code writes: the byte filter looks for '"type":"progress"'; no newline after the last)
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in recs).rstrip("\n"))
    run = load_run(str(path))
    assert len(run.calls) == 1 and run.issues == []
    cut = tmp_path / "cut.jsonl"  # (the same line really cut stays reported)
    cut.write_text(path.read_text()[:-20])
    run = load_run(str(cut))
    assert [(i.kind, i.line) for i in run.issues] == [("truncated_tail", 3)]


def _cc_prompt(uid: str, parent: str, mid: str, cache_read: int) -> dict:
    """An assistant line whose reported prompt is 6 + 1,000 + ``cache_read`` tokens."""
    rec = _cc_assistant(uid, parent, mid, 300)
    rec["message"]["usage"]["cache_creation_input_tokens"] = 1000
    rec["message"]["usage"]["cache_read_input_tokens"] = cache_read
    return rec


def _cc_prompt_chain(prompts: list[int], model: str | None = None) -> list[dict]:
    """A user line then an assistant line per prompt, chained by ``parentUuid``; assistant ``i`` reports
    ``prompts[i - 1]`` prompt tokens (:func:`_cc_prompt`), on ``model`` when given."""
    recs: list[dict] = []
    parent = None
    for i, p in enumerate(prompts, 1):
        recs.append(_cc_user(f"u{i}", parent))
        rec = _cc_prompt(f"a{i}", f"u{i}", f"msg_{i}", p - 1006)
        if model is not None:
            rec["message"]["model"] = model
        recs.append(rec)
        parent = f"a{i}"
    return recs


def test_a_prompt_past_200k_means_the_1m_beta_window(tmp_path: Path) -> None:
    """Claude Sonnet 4.5 runs at 1M tokens with the context-1m beta; genai-prices lists 200k.  A reported prompt
    of 251,006 was flagged implausible against 200k and still gave its context a 251,000-token floor.  Now a
    prompt past 200k sets the window to the beta's 1,000,000 (inferred) for that call and the context's later
    calls; the calls before it keep 200k (nothing said otherwise yet)."""
    from ctxwatch.analysis import analysis_json
    from ctxwatch.engine import load_run
    from ctxwatch.model import Src

    prompts = [150_000, 250_000, 180_000]
    recs = _cc_prompt_chain(prompts)
    run = load_run(str(write(tmp_path, "s1.jsonl", recs)))
    assert [c.prompt_reported for c in run.calls] == prompts
    assert [(c.window, c.window_src) for c in run.calls] == [
        (200_000, Src.CATALOG), (1_000_000, Src.INFERRED), (1_000_000, Src.INFERRED)]
    assert [f["kind"] for f in analysis_json(run)["flags"] if f["kind"] == "implausible_usage"] == []


def test_a_prompt_larger_than_the_window_gives_no_floor(tmp_path: Path) -> None:
    """A first call reporting 4,000,000 tokens (above the 1,000,000 the most Claude Sonnet 4.5 offers, with the
    1M beta) is implausible: its floor was inferred as the whole prompt (4,000,000 minus its few history tokens)
    and pinned for the context, so the next call showed floor 60,000~ and history 0.  Now its split is unknown,
    and the next call, whose history is whole too, gives the floor: its 60,000 minus its estimated history of
    three short messages (under 100 tokens).  (Under --window 100,000 a 150,000 first call is no longer
    implausible but an overflow of the user's window: see test_implausible_followups.py.)"""
    from ctxwatch.engine import load_run

    recs = [_cc_user("u1", None), _cc_prompt("a1", "u1", "msg_1", 4_000_000 - 1006),
            _cc_user("u2", "a1"), _cc_prompt("a2", "u2", "msg_2", 60_000 - 1006)]
    run = load_run(str(write(tmp_path, "s1.jsonl", recs)))
    first, second = run.calls
    assert first.prompt_reported == 4_000_000 and first.floor_tokens is None and first.history_tokens is None
    assert first.prompt_implausible
    assert second.prompt_reported == 60_000 and second.floor_tokens is not None and second.history_tokens is not None
    assert second.floor_tokens + second.history_tokens == 60_000 and second.floor_tokens >= 60_000 - 100


def test_web_searches_are_priced_with_the_tokens(tmp_path: Path) -> None:
    """``server_tool_use.web_search_requests`` is billed per search (Anthropic: $10 per 1,000; genai-prices
    knows the price) and was left out of the cost.  By hand, Claude Sonnet 4.5 ($3 input, $3.75 cache write,
    $0.30 cache read, $15 output per million): 6*3 + 11,000*3.75 + 22,000*0.30 + 300*15 = 52,368 per million =
    $0.052368, plus 3 searches * $0.01 = $0.082368."""
    from decimal import Decimal

    from ctxwatch.engine import load_run
    from ctxwatch.output.report import cost_of, report_json

    rec = _cc_assistant("a1", "u1", "msg_1", 300)
    rec["message"]["usage"]["server_tool_use"] = {"web_search_requests": 3}
    run = load_run(str(write(tmp_path, "s1.jsonl", [_cc_user("u1", None), rec])))
    (call,) = run.calls
    assert call.usage is not None and call.usage.web_searches == 3
    assert cost_of(call) == Decimal("0.082368")
    doc = report_json(run)
    assert doc["calls"][0]["web_searches"] == 3 and doc["sessions"][0]["cost_usd"] == pytest.approx(0.082368)
    rec["message"]["usage"]["server_tool_use"] = {"web_search_requests": "3x"}  # (not a count: unknown, unpriced)
    run = load_run(str(write(tmp_path, "s2.jsonl", [_cc_user("u1", None), rec])))
    assert cost_of(run.calls[0]) is None and [i.kind for i in run.issues] == ["invalid_field"]  # (a string)


@pytest.mark.parametrize(("model", "window"), [("claude-sonnet-4-20250514", 1_000_000),
                                               ("claude-sonnet-4-5-20250929", 1_000_000),
                                               ("claude-opus-4-6", 1_000_000),
                                               ("claude-3-5-haiku-20241022", 200_000),
                                               ("claude-opus-4-1-20250805", 200_000)])
def test_only_models_with_the_1m_beta_get_it(tmp_path: Path, model: str, window: int) -> None:
    """The 1M window was inferred for any Claude model past 200k (Haiku 3.5, Opus 4.1 have none: Anthropic's
    "Context windows" page lists the beta for Sonnet 4 and 4.5, and its model page gives Opus 4.6 "1M tokens",
    which genai-prices lists; Opus 4.6 past 200k was flagged implausible); a prompt past even 1M (1,200,000)
    is implausible everywhere and sets nothing.  Prompts 150,000, 1,200,000, 250,000, 160,000."""
    from ctxwatch.engine import load_run

    prompts = [150_000, 1_200_000, 250_000, 160_000]
    recs = _cc_prompt_chain(prompts, model)
    calls = load_run(str(write(tmp_path, "s1.jsonl", recs))).calls
    assert [c.window for c in calls] == [200_000, 200_000, window, window]
    assert calls[1].floor_tokens is None and calls[1].history_tokens is None  # (1.2M: no split of an implausible)


@pytest.mark.parametrize("outputs", [(-1, 10, 299), (10, "inf", 299), (10, 299, 299)])
def test_a_damaged_placeholder_does_not_hide_the_final_count(tmp_path: Path, outputs: tuple) -> None:
    """A response on three lines whose last, valid line says 299: a damaged placeholder before it (-1, "inf")
    made the output unknown and the call unpriced.  The final count stands: $0.052368 - 300 * $15/M + 299 *
    $15/M = $0.052353 (the cost of test_web_searches' tokens with 299 output tokens)."""
    from decimal import Decimal

    from ctxwatch.engine import load_run
    from ctxwatch.output.report import cost_of

    recs = [_cc_user("u1", None)] + [_cc_assistant(f"a{i}", "u1" if i == 0 else f"a{i - 1}", "msg_1", o)
                                     for i, o in enumerate(outputs)]
    run = load_run(str(write(tmp_path, "s1.jsonl", recs)))
    (call,) = run.calls
    assert call.usage is not None and call.usage.output == 299 and cost_of(call) == Decimal("0.052353")


def test_one_hour_writes_above_the_writes_are_reported(tmp_path: Path) -> None:
    """ephemeral_1h_input_tokens 5,000 with cache_creation_input_tokens 11,000 is fine; 15,000 is more than the
    writes: it was capped silently, pricing every write at the 1-hour rate.  Now reported, and unpriced.
    By hand, Claude Sonnet 4.5 ($3 input, $3.75 5-minute write, $6 1-hour write, $0.30 read, $15 output per
    million): 6*3 + 6,000*3.75 + 5,000*6 + 22,000*0.30 + 300*15 = 63,618 per million = $0.063618."""
    from decimal import Decimal

    from ctxwatch.engine import load_run
    from ctxwatch.output.report import cost_of

    for n, (share, cost) in enumerate(((5000, Decimal("0.063618")), (15_000, None))):
        rec = _cc_assistant("a1", "u1", "msg_1", 300)
        rec["message"]["usage"]["cache_creation"] = {"ephemeral_1h_input_tokens": share}
        run = load_run(str(write(tmp_path, f"s{n}.jsonl", [_cc_user("u1", None), rec])))
        assert cost_of(run.calls[0]) == cost
        priced = cost is not None
        assert [i.kind for i in run.issues] == ([] if priced else ["implausible_value"])


def test_one_hour_writes_beside_damaged_writes_are_not_judged_against_them(tmp_path: Path) -> None:
    """cache_creation_input_tokens -5,000 with 5,000 1-hour writes: the writes are damage (negative), said so,
    and unknown; the 1-hour share of an unknown is not judged (it said "above the cache writes' 0")."""
    from ctxwatch.engine import load_run

    rec = _cc_assistant("a1", "u1", "msg_1", 300)
    rec["message"]["usage"]["cache_creation_input_tokens"] = -5000
    rec["message"]["usage"]["cache_creation"] = {"ephemeral_1h_input_tokens": 5000}
    run = load_run(str(write(tmp_path, "s.jsonl", [_cc_user("u1", None), rec])))
    (issue,) = [i for i in run.issues if i.kind == "implausible_value"]
    assert "cache write tokens -5000 (negative)" in issue.message
    assert "1-hour" not in issue.message and "above the cache writes" not in issue.message
    assert run.calls[0].usage is not None and run.calls[0].usage.cache_write is None


def test_the_1m_window_holds_across_a_compaction(tmp_path: Path) -> None:
    """After a compact_boundary the first call carries its whole history and was accounted before the lazy
    210k call that showed the 1M beta, so it alone fell back to 200,000.  Prompts 150k, 210k | boundary |
    40k, 60k: windows 200k, 1M, 1M, 1M."""
    from ctxwatch.engine import load_run

    recs = [_cc_user("u1", None), _cc_prompt("a1", "u1", "msg_1", 150_000 - 1006),
            _cc_user("u2", "a1"), _cc_prompt("a2", "u2", "msg_2", 210_000 - 1006),
            {"parentUuid": None, "isSidechain": False, "type": "system", "subtype": "compact_boundary",
             "uuid": "b1", "sessionId": "s1", "compactMetadata": {"trigger": "auto", "preTokens": 210_000}},
            {**_cc_user("u3", "b1"), "isCompactSummary": True},
            _cc_prompt("a3", "u3", "msg_3", 40_000 - 1006),
            _cc_user("u4", "a3"), _cc_prompt("a4", "u4", "msg_4", 60_000 - 1006)]
    for r in recs:
        if r["type"] == "assistant":
            r["message"]["model"] = "claude-sonnet-4-5-20250929"
    calls = load_run(str(write(tmp_path, "s1.jsonl", recs))).calls
    assert [c.prompt_reported for c in calls] == [150_000, 210_000, 40_000, 60_000]
    assert [c.window for c in calls] == [200_000, 1_000_000, 1_000_000, 1_000_000]


def test_text_report_gives_the_totals_and_the_estimated_cost(tmp_path: Path) -> None:
    """The text report showed no cost at all (only --json had it) and no run totals.  Token sums come from the
    independent reader above; the cost by hand at claude-sonnet-4's prices ($3 input, $0.30 cache read, $3.75
    cache write, $15 output per million): 42*3 + 207,598*0.30 + 6,210*3.75 + 550*15 = 93,942.9 per million =
    $0.0939429."""
    from click.testing import CliRunner

    from ctxwatch.cli import main

    sample = Path(__file__).resolve().parents[1] / "sample_logs" / "claude_code_session.jsonl"
    ref = reference_calls(sample).values()
    prompt, read, write_ = (sum(c[k] for c in ref) for k in ("prompt", "cache_read", "cache_write"))
    out = CliRunner().invoke(main, ["report", str(sample)]).output
    assert (f"total: prompt {prompt:,} (uncached {prompt - read - write_:,}, cache read {read:,}, cache write "
            f"{write_:,}) · output {sum(c['output'] for c in ref):,} · cost ~$0.0939 (estimate, genai-prices)") in out
    assert (prompt, read, write_) == (213_850, 207_598, 6_210)  # (the hand computation's inputs)

    # A call of a model genai-prices does not know is counted apart, never as $0; its session's cost is "?".
    other = _cc_assistant("b1", "v1", "msg_9", 300)
    other["sessionId"] = "s2"
    other["message"]["model"] = "claude-unknown-9"
    user = {**_cc_user("v1", None), "sessionId": "s2"}
    log = write(tmp_path, "two.jsonl", [_cc_user("u1", None), _cc_assistant("a1", "u1", "msg_1", 300), user, other])
    out = CliRunner().invoke(main, ["report", str(log)]).output
    # By hand at claude-sonnet-4-5's prices: 6*3 + 22,000*0.30 + 11,000*3.75 + 300*15 = 52,368 per million.
    assert "cost ~$0.0524 (estimate, genai-prices; 1 call not priced, not counted)" in out
    rows = {r.split()[0]: r.split()[-1] for r in out[out.index("newest first"):].splitlines()[2:4]}
    assert rows == {"s1": "$0.0524", "s2": "?"}


def test_text_report_header_tells_bad_lines_from_notes(tmp_path: Path) -> None:
    """The header said ``issues=1`` for a folder whose only issue is a note (the same log reached twice through
    a link), as if a line were damaged; it now says how many of the issues are bad lines."""
    from click.testing import CliRunner

    from ctxwatch.cli import main

    folder = tmp_path / "logs"
    folder.mkdir()
    log = write(folder, "s1.jsonl", [_cc_user("u1", None), _cc_assistant("a1", "u1", "msg_1", 300)])
    (folder / "link.jsonl").symlink_to(log)
    head = CliRunner().invoke(main, ["report", str(folder)]).output.splitlines()[0]
    assert head.endswith("calls=1  issues=1 (0 bad lines, 1 note)")
    log.write_text(log.read_text() + "{not json}\n")
    head = CliRunner().invoke(main, ["report", str(folder)]).output.splitlines()[0]
    assert head.endswith("calls=1  issues=2 (1 bad line, 1 note)")
    # Bad lines only (no notes): the header still says they are bad lines, as the README says it always does.
    (folder / "link.jsonl").unlink()
    head = CliRunner().invoke(main, ["report", str(folder)]).output.splitlines()[0]
    assert head.endswith("calls=1  issues=1 (1 bad line)")
    # A line with NUL bytes that is not JSON either has 2 issues: the parts say so rather than not adding up.
    log.write_bytes(log.read_bytes() + b'{"a\x00b" oops\n')
    head = CliRunner().invoke(main, ["report", str(folder)]).output.splitlines()[0]
    assert head.endswith("calls=1  issues=3 (2 bad lines; 1 more issue on the same lines)")


@pytest.mark.parametrize("bad", [-1, "inf"])
def test_a_superseded_damaged_placeholder_is_withdrawn_in_a_live_read(tmp_path: Path, bad: object) -> None:
    """Read line by line as the dashboard and --follow read a growing log, a response whose placeholder line
    says output_tokens -1 and whose final line says 299: the placeholder's usage is the call's until the final
    line comes, whose count withdraws that issue (the call's usage is sound) and leaves the one report gives,
    that the placeholder's line holds a count no later line needs; damage in the final line stays the call's."""
    from ctxwatch.engine import Run
    from ctxwatch.formats import get_format

    recs = [_cc_user("u1", None), _cc_assistant("a0", "u1", "msg_1", bad), _cc_assistant("a1", "a0", "msg_1", 299)]
    path = write(tmp_path, "s1.jsonl", recs)
    run = Run(str(path), get_format("claude-code"))
    resolved = []
    for rec in iter_records(str(path)):
        assert isinstance(rec, Record)
        change = run.feed_record(rec)
        resolved += change.resolved
    assert [(i.kind, i.line) for i in resolved] == [(count_kind(bad), 2)]
    assert [(i.kind, i.line, i.message.endswith("not read, a later line of the response gives the call's usage"))
            for i in run.issues] == [(count_kind(bad), 2, True)]
    assert run.calls[0].usage is not None and run.calls[0].usage.output == 299
    # the other way round (a good placeholder, a damaged final count) the issue stays
    recs = [_cc_user("u1", None), _cc_assistant("a0", "u1", "msg_1", 10), _cc_assistant("a1", "a0", "msg_1", bad)]
    path = write(tmp_path, "s2.jsonl", recs)
    run = Run(str(path), get_format("claude-code"))
    for rec in iter_records(str(path)):
        assert isinstance(rec, Record)
        assert not run.feed_record(rec).resolved
    assert [(i.kind, i.line) for i in run.issues] == [(count_kind(bad), 3)]


def test_an_unknown_output_count_leaves_the_cost_unknown(tmp_path: Path) -> None:
    """``"output_tokens": null`` made the output unknown but the call was still priced, with 0 output tokens:
    $0.047868 (6*3 + 11,000*3.75 + 22,000*0.30 per million) shown as a complete estimate, and the session's
    cost with it.  Unknown is never priced as 0: the call's and the session's costs are null."""
    from click.testing import CliRunner

    from ctxwatch.cli import main

    recs = [_cc_user("u1", None), _cc_assistant("a1", "u1", "msg_1", None),
            _cc_user("u2", "a1"), _cc_assistant("a2", "u2", "msg_2", 300)]
    doc = json.loads(CliRunner().invoke(main, ["report", "--json", str(write(tmp_path, "s.jsonl", recs))]).output)
    assert [(c["completion_tokens_reported"], c["cost_usd"], c["cost_source"]) for c in doc["calls"]] == [
        (None, None, "unknown"), (300, pytest.approx(0.052368), "estimated")]
    assert doc["sessions"][0]["cost_usd"] is None
    canonical = {"request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]},
                 "response": {"id": "c1", "usage": {"prompt_tokens": 1000, "completion_tokens": None}}}
    doc = json.loads(CliRunner().invoke(main, ["report", "--json", str(write(tmp_path, "o.jsonl", [canonical]))
                                               ]).output)
    assert (doc["calls"][0]["completion_tokens_reported"], doc["calls"][0]["cost_usd"]) == (None, None)


@pytest.mark.parametrize("original_read", ["first", "last"])
def test_a_resumed_session_leaves_the_copied_calls_with_the_original(shared_logs: Path, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch,
                                                                     original_read: str) -> None:
    """`claude --resume` starts a new session file, <new id>.jsonl, with copies of the old session's records
    under the new id, then goes on.  The copies replaced the originals (read earlier), so every call moved to
    the new session and the original vanished from the totals; with the files' modification times the other
    way round (a copied folder) the first one read kept them.  A call now belongs to the file whose latest call
    is the earliest: the original, which ended before the resumed session went on.  Original: the head200
    sample (12 calls); resumed: its lines before the 7th call copied, then the rest as new calls (ids changed),
    a day later: 6 new calls."""
    import os
    from datetime import datetime, timedelta

    from ctxwatch.engine import load_many
    from ctxwatch.output.report import report_json

    def later(line: str) -> str:
        d = json.loads(line)
        if isinstance(d.get("timestamp"), str):
            t = datetime.fromisoformat(d["timestamp"].replace("Z", "+00:00")) + timedelta(days=1)
            d["timestamp"] = t.isoformat().replace("+00:00", "Z")
        return json.dumps(d)

    src = shared_logs / "claude-code" / "spotter_4d5611e5_head200.jsonl"
    raw = src.read_text().splitlines()
    sid = json.loads(next(ln for ln in raw if '"sessionId"' in ln))["sessionId"]
    new = "11111111-2222-3333-4444-555555555555"
    folder = tmp_path / "proj"
    folder.mkdir()
    (folder / f"{sid}.jsonl").write_text("\n".join(raw) + "\n")
    ref = reference_calls(src)
    cut = sorted(c["line"] for c in ref.values())[6] - 1  # (the lines before the 7th call's first line)
    resumed = [ln.replace(sid, new) for ln in raw[:cut]]
    resumed += [later(ln.replace(sid, new).replace('"msg_', '"msg_new_').replace('"req_', '"req_new_'))
                for ln in raw[cut:]]
    (folder / f"{new}.jsonl").write_text("\n".join(resumed) + "\n")
    first = f"{sid}.jsonl" if original_read == "first" else f"{new}.jsonl"
    os.utime(folder / first, (1_000_000, 1_000_000))  # (folders are read oldest modification time first)
    after = sum(1 for c in ref.values() if c["line"] > cut)
    assert (len(ref), after) == (12, 6)
    doc = report_json(load_many([str(folder)], None))
    per = {s["session"]: (s["calls"], s["input_tokens"]) for s in doc["sessions"]}
    assert per[sid] == (12, sum(c["prompt"] for c in ref.values()))
    assert per[new] == (after, sum(c["prompt"] for c in ref.values() if c["line"] > cut))
    assert {c["file"] for c in doc["calls"] if c["session"] == sid} == {str(folder / f"{sid}.jsonl")}
    from ctxwatch.engine import parallel

    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)  # (the worker processes' read gives the same)
    assert report_json(load_many([str(folder)], None, parallel=True)) == doc


def test_the_text_totals_sum_the_parts_over_the_calls_that_have_the_prompt(tmp_path: Path) -> None:
    """With one call's cache writes damaged (-3), its prompt is unknown: the total prompt left it out but the
    cache read total still counted it, so the parts came to more than the whole (cache read 175,057 against a
    prompt of 165,080).  The parts are now summed over the calls with a known prompt, and the line says what it
    left out.  Expected sums from the independent reader, without the damaged call."""
    from click.testing import CliRunner

    from ctxwatch.cli import main

    sample = Path(__file__).resolve().parents[1] / "sample_logs" / "claude_code_session.jsonl"
    raw = sample.read_text().splitlines()
    ref = reference_calls(sample)
    line = min(c["line"] for c in ref.values())
    mid = json.loads(raw[line - 1])["message"]["id"]
    for i, text in enumerate(raw):  # (every line of that response: its final usage is on its last)
        d = json.loads(text)
        if d.get("type") == "assistant" and d["message"].get("id") == mid:
            d["message"]["usage"]["cache_creation_input_tokens"] = -3
            raw[i] = json.dumps(d)
    path = write(tmp_path, "bad.jsonl", "\n".join(raw) + "\n")
    rest = [c for c in ref.values() if c["line"] != line]
    prompt, read, write_ = (sum(c[k] for c in rest) for k in ("prompt", "cache_read", "cache_write"))
    out = CliRunner().invoke(main, ["report", str(path)]).output
    (total,) = [ln for ln in out.splitlines() if ln.startswith("total: ")]
    assert total.startswith(f"total: prompt {prompt:,} (uncached {prompt - read - write_:,}, cache read {read:,}, "
                            f"cache write {write_:,}) · output {sum(c['output'] for c in ref.values()):,} · cost ~$")
    assert total.endswith("; left out of the token sums: 1 call with an unknown prompt")


def test_session_totals_sum_the_parts_over_the_calls_with_a_prompt(tmp_path: Path) -> None:
    """report --json's session totals had the same fault as the text total line: with one call's input_tokens
    damaged (-5) its prompt is unknown and left out of input_tokens, but its cache reads were still summed, so
    cache_read_tokens (207,598) came to more than input_tokens (198,896).  Expected sums from the independent
    reader, without the damaged call."""
    from ctxwatch.engine import load_run
    from ctxwatch.output.report import report_json

    sample = Path(__file__).resolve().parents[1] / "sample_logs" / "claude_code_session.jsonl"
    raw = sample.read_text().splitlines()
    ref = reference_calls(sample)
    line = min(c["line"] for c in ref.values())
    mid = json.loads(raw[line - 1])["message"]["id"]
    for i, text in enumerate(raw):
        d = json.loads(text)
        if d.get("type") == "assistant" and d["message"].get("id") == mid:
            d["message"]["usage"]["input_tokens"] = -5
            raw[i] = json.dumps(d)
    (s,) = report_json(load_run(str(write(tmp_path, "bad.jsonl", "\n".join(raw) + "\n"))))["sessions"]
    rest = [c for c in ref.values() if c["line"] != line]
    prompt, read, write_ = (sum(c[k] for c in rest) for k in ("prompt", "cache_read", "cache_write"))
    assert (s["input_tokens"], s["cache_read_tokens"], s["cache_write_tokens"], s["input_uncached_tokens"]) == (
        prompt, read, write_, prompt - read - write_)


@pytest.mark.parametrize(("pre", "post", "expected"), [
    (-5, None, {"preTokens": "-5 (negative)"}),
    # (a number of 16 digits or more is shown in short: 2**53 = 9,007,199,254,740,992 as 9.01e+15)
    (1.5, 2**53, {"preTokens": "1.5 (not a whole number)",
                  "postTokens": "9.01e+15 (beyond 2**53, more than any window)"}),
    (True, "1e3", {"preTokens": "true (not a number)", "postTokens": "'1e3' (not a number)"}),
    ("2048", 2048.0, {}),  # (a string of digits and an integral float still count)
])
def test_a_compaction_size_that_is_not_a_count_is_reported_with_file_and_line(
        tmp_path: Path, shared_logs: Path, pre: object, post: object, expected: dict[str, str]) -> None:
    """A ``compact_boundary``'s ``compactMetadata.preTokens`` / ``postTokens`` that is negative, not whole, a bool,
    not a number or 2**53 and more became unknown in silence; it is unknown and an issue on the boundary's line
    (``invalid_field`` for a value of the wrong JSON type, else ``implausible_value``), as a damaged usage count
    is.  Built from the sample's real boundary line (line 55)."""
    from click.testing import CliRunner

    from ctxwatch.cli import main

    lines = (shared_logs / "claude-code" / COMPACTION).read_text().splitlines()
    (at,) = [i for i, t in enumerate(lines) if '"compact_boundary"' in t]
    boundary = json.loads(lines[at])
    assert boundary["compactMetadata"] == {"trigger": "auto", "preTokens": 170251}
    boundary["compactMetadata"]["preTokens"] = pre
    if post is not None:
        boundary["compactMetadata"]["postTokens"] = post
    lines[at] = json.dumps(boundary)
    path = tmp_path / "cc.jsonl"
    path.write_text("\n".join(lines) + "\n")
    res = CliRunner().invoke(main, ["report", "--json", str(path)])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    found = {i["message"].split(" ", 1)[0]: i for i in doc["issues"]
             if i["kind"] in ("implausible_value", "invalid_field")}
    assert sorted(found) == sorted(f"compactMetadata.{k}" for k in expected)
    for key, what in expected.items():
        issue = found[f"compactMetadata.{key}"]
        assert (issue["file"], issue["line"], issue["kind"]) == (str(path), at + 1,
                                                                 count_kind(pre if key == "preTokens" else post))
        assert issue["message"] == f"compactMetadata.{key} {what}: treated as unknown"
    (marker,) = [c["compaction"] for c in doc["calls"] if c["compaction"]]
    want_pre = 2048 if pre == "2048" else None
    want_post = 2048 if post == 2048.0 else None
    assert (marker["pre_tokens"], marker["post_tokens"], marker["line"]) == (want_pre, want_post, at + 1)


@pytest.mark.parametrize(("model", "prompts", "windows"), [
    # (Sonnet 4 offers the 1M beta: 500,000 means it; Opus 4.1 has 200,000 only, so 500,000 is implausible)
    ("claude-sonnet-4-20250514", [500_000], [1_000_000]),
    ("claude-opus-4-1-20250805", [500_000], [200_000]),
    # (1,500,000 is past even the beta's 1M, so it proves nothing: the call stays at 200,000, or at the 1M an
    # earlier call of its context proved)
    ("claude-sonnet-4-20250514", [1_500_000], [200_000]),
    ("claude-sonnet-4-20250514", [500_000, 1_500_000], [1_000_000, 1_000_000]),
    ("claude-opus-4-1-20250805", [150_000, 1_500_000], [200_000, 200_000]),
])
def test_the_implausible_note_names_the_window_the_call_has(tmp_path: Path, model: str, prompts: list[int],
                                                            windows: list[int]) -> None:
    """The reader's implausible_usage note named the largest window the model can have (1,000,000 for Sonnet 4)
    while the call's row and its implausible_usage flag gave 200,000, the window it has without proof of the 1M
    beta.  The note, the row and the flag name one window.  Windows by hand: Anthropic's standard 200,000; a
    prompt past it and within 1,000,000 of a model with the beta means the beta for that call and the later
    calls of its context."""
    import re

    from click.testing import CliRunner

    from ctxwatch.cli import main

    path = write(tmp_path, "s1.jsonl", _cc_prompt_chain(prompts, model))
    res = CliRunner().invoke(main, ["report", "--json", str(path)])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert [c["prompt_tokens_reported"] for c in doc["calls"]] == prompts
    assert [c["window"] for c in doc["calls"]] == windows
    implausible = [i for i, (p, w) in enumerate(zip(prompts, windows, strict=True)) if p > w]
    notes = {i["line"]: i["message"] for i in doc["issues"] if i["kind"] == "implausible_usage"}
    flags = {f["call"]: f["reason"] for f in doc["flags"] if f["kind"] == "implausible_usage"}
    assert sorted(notes) == [2 * i + 2 for i in implausible] and sorted(flags) == implausible
    for i in implausible:
        w = f"{windows[i]:,}"
        assert re.search(r"more than the ([\d,]+)-token window", notes[2 * i + 2]).group(1) == w, notes
        assert re.search(r"exceeds the ([\d,]+)-token window", flags[i]).group(1) == w, flags


def test_a_usage_model_or_session_id_of_another_type_is_an_issue_on_every_line(tmp_path: Path) -> None:
    """``"usage": "abc"`` is an ``invalid_field`` issue on its own line also after a call whose usage is whole
    (it was said only while the context's floor was still to be inferred), and so is a ``model`` or a
    ``sessionId`` of another JSON type; each call is still counted, its usage / model unknown."""
    from ctxwatch.config import Settings
    from ctxwatch.engine import load_run

    def turn(n: int, usage: object, model: object = "claude-sonnet-4-20250514", sid: object = "s1") -> list[dict]:
        ts = f"2025-01-01T00:00:0{n}Z"
        return [{"type": "user", "sessionId": "s1", "uuid": f"u{n}", "parentUuid": f"a{n - 1}" if n > 1 else None,
                 "timestamp": ts, "message": {"role": "user", "content": "hello " * n}},
                {"type": "assistant", "sessionId": sid, "uuid": f"a{n}", "parentUuid": f"u{n}", "timestamp": ts,
                 "message": {"id": f"msg_{n}", "role": "assistant", "model": model,
                             "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
                             "usage": usage}}]

    good = {"input_tokens": 101, "output_tokens": 2}
    path = write(tmp_path, "types.jsonl", [*turn(1, good), *turn(2, "abc"), *turn(3, good, model={"a": 1}),
                                           *turn(4, good, sid=5)])
    run = load_run(str(path), None, Settings())
    assert [(i.line, i.kind, i.message.split(":")[0]) for i in run.issues] == [
        (4, "invalid_field", "a usage block is a JSON string, not an object"),
        (6, "invalid_field", "message.model is a JSON object, not a string"),
        (8, "invalid_field", "sessionId is a JSON number, not a string")]
    assert [(c.source.line, c.prompt_reported, c.model) for c in run.calls] == [
        (2, 101, "claude-sonnet-4-20250514"), (4, None, "claude-sonnet-4-20250514"), (6, 101, None),
        (8, 101, "claude-sonnet-4-20250514")]


def test_a_call_says_the_service_tier_its_usage_names(shared_logs: Path) -> None:
    """Anthropic's ``usage.service_tier`` was not read (OpenAI's was): ``report --json`` gave ``null`` for every
    Claude Code call.  Each call now gives the tier of its message's usage, as a plain JSON reading finds it."""
    import json as plain

    from click.testing import CliRunner

    from ctxwatch.cli import main

    path = shared_logs / "claude-code" / "spotter_tool_heavy.jsonl"
    tiers: dict[str, str] = {}
    for raw in path.read_text().splitlines():
        rec = plain.loads(raw)
        msg = rec.get("message") if rec.get("type") == "assistant" else None
        if isinstance(msg, dict) and isinstance(msg.get("usage"), dict) and msg.get("model") != "<synthetic>":
            tiers[msg["id"]] = msg["usage"]["service_tier"]
    doc = plain.loads(CliRunner().invoke(main, ["report", "--json", "--no-cache", str(path)]).output)
    assert len(doc["calls"]) == len(tiers) > 3
    assert [c["service_tier"] for c in doc["calls"]] == list(tiers.values()) and set(tiers.values()) == {"standard"}


def _skip_trace(path: Path, envelope: bool) -> tuple[list[bool], list[str], list[tuple[str, object, str, str]],
                                                     int, int]:
    """Read ``path`` as the summary pass does; return the pre-filter's decision on each line, the outputs
    (``repr``), the tree's nodes, the count of ``agent_progress`` lines and of the lines the envelope decoded,
    with the typed envelope decode on or (``envelope=False``) replaced by one that rejects every line, which
    leaves each line to the byte tests."""
    import msgspec

    from ctxwatch.formats.claude_code import prefilter
    from ctxwatch.source import records
    from ctxwatch.source.lines import read_lines

    class Rejects:
        def decode(self, data: bytes) -> object:
            raise msgspec.DecodeError("rejected")

    saved = prefilter.ENVELOPE
    decoded = [0]

    class Counts:
        def decode(self, data: bytes) -> object:
            env = saved.decode(data)
            decoded[0] += 1
            return env

    prefilter.ENVELOPE = Counts() if envelope else Rejects()  # type: ignore[assignment]
    try:
        reader = ClaudeCodeReader(str(path))
        decided: list[bool] = []

        def skip(data: bytes) -> int:
            got = reader.skip(data)
            decided.append(bool(got))
            return got

        outs = [repr(o) for rec in records(read_lines(str(path)), str(path), skip)
                for o in (reader.feed(rec) if isinstance(rec, Record) else [rec])]
        outs += [repr(o) for o in reader.finish()]
    finally:
        prefilter.ENVELOPE = saved
    nodes = sorted((k, n.parent, n.context, n.kind) for k, n in reader._tree.nodes.items())
    return decided, outs, nodes, reader.agent_progress_lines, decoded[0]


def test_the_typed_envelope_decides_as_the_byte_tests_do_on_every_real_line(shared_logs: Path) -> None:
    """The pre-filter judges a line from a typed decode of its top-level keys, and falls back to byte tests
    where that decode fails.  On every real transcript both give the same decision on each line, the same calls
    and issues, the same parentUuid tree and the same count of agent_progress copies, and the decode does take
    most lines (else this would compare the byte tests with themselves)."""
    decoded = skipped = 0
    for path in claude_files(shared_logs):
        typed, bytewise = _skip_trace(path, True), _skip_trace(path, False)
        assert typed[:4] == bytewise[:4], path.name
        decoded += typed[4]
        skipped += sum(typed[0])
        assert bytewise[4] == 0
    assert decoded > skipped > 1500


def test_a_skipped_line_that_is_no_valid_json_is_still_a_bad_line(tmp_path: Path, shared_logs: Path) -> None:
    """Lines the pre-filter would skip unparsed (progress lines; user lines once the floor is known) but whose
    bytes are damaged where the typed decode does not look (a string that is not UTF-8, a value cut short, an
    array with a hole) are reported as bad lines with their line numbers, as a parse reports them."""
    src = (shared_logs / "claude-code" / "spotter_4d5611e5_head200.jsonl").read_bytes().split(b"\n")
    kinds = [json.loads(r).get("type") if r.strip() else None for r in src]
    progress = [i for i, k in enumerate(kinds) if k == "progress"]
    user = [i for i, k in enumerate(kinds) if k == "user"]
    bad = {progress[5]: src[progress[5]].replace(b'"type":"progress"', b'"type":"progress","x":"\xff\xfe"'),
           progress[9]: src[progress[9]].replace(b'"hookEvent":"', b'"hookEvent":', 1),
           user[-2]: src[user[-2]].replace(b'"type":"user"', b'"type":"user","y":"\xc3"'),
           user[-1]: src[user[-1]].replace(b'"isSidechain":false,', b'"isSidechain":false,"z":[1,,2],')}
    path = tmp_path / "damaged.jsonl"
    path.write_bytes(b"\n".join(bad.get(i, r) for i, r in enumerate(src)))
    _, _, issues, _ = run(path, full=False)
    assert sorted(i.line for i in issues if i.kind in ("invalid_json", "glued_records", "invalid_utf8")) == \
        sorted(i + 1 for i in bad), [(i.line, i.kind) for i in issues]
    good, _, _, _ = run(shared_logs / "claude-code" / "spotter_4d5611e5_head200.jsonl", full=False)
    damaged, _, _, _ = run(path, full=False)
    assert {k: c.usage for k, c in damaged.items()} == {k: c.usage for k, c in good.items()}


@pytest.mark.parametrize("how", ["missing", "null"])
def test_a_usage_without_input_tokens_says_the_prompt_is_unknown(tmp_path: Path, how: str) -> None:
    """A final assistant line whose usage has cache counts and an output but no ``input_tokens`` (left out, or
    ``null``) left the prompt, floor and free room unknown with no word; the line is now an ``invalid_field``
    issue saying the prompt's size is unknown (every real assistant line has the key)."""
    from ctxwatch.engine import load_run

    recs = [_cc_user("u1", None), _cc_assistant("a1", "u1", "msg_1", 300)]
    usage = recs[1]["message"]["usage"]
    if how == "missing":
        del usage["input_tokens"]
    else:
        usage["input_tokens"] = None
    run = load_run(str(write(tmp_path, "s1.jsonl", recs)))
    (call,) = run.calls
    assert call.usage is not None and call.usage.prompt_total is None and call.usage.output == 300
    assert [(i.kind, i.line, i.message) for i in run.issues] == [
        ("invalid_field", 2, f"message.usage.input_tokens is {how}: the prompt's size is unknown")]
