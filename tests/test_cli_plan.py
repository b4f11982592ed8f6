"""``ctxwatch plan`` and ``ctxwatch schema`` on the real claude-trace sample (17 tools, big system prompt).

Expected numbers come from the sample read here with plain ``orjson`` and counted with the raw tokenizer
(``get_tokenizer('o200k_base').count`` over ``orjson.dumps``); the compacted payload is built by the
test's own compactor (``test_schema.ref_compact_tool``), never by the code under test.
"""

from __future__ import annotations

import json

import orjson
import pytest
from click.testing import CliRunner
from test_schema import ref_compact_tool

from ctxwatch.cli import main
from ctxwatch.tokens import ANTHROPIC_TOOL_PREAMBLE, get_tokenizer

TOK = get_tokenizer("o200k_base")
O200K_FRAMING = 4  # tokens per message for o200k_base (ctxwatch/tokens.py, checked on the OpenAI batch sample)


def n(obj: object) -> int:
    return TOK.count(orjson.dumps(obj).decode())


@pytest.fixture(scope="module")
def trace(shared_logs):
    path = shared_logs / "request-response" / "claude-trace_test-traffic_head14.jsonl"
    bodies = [orjson.loads(line)["request"]["body"] for line in path.read_bytes().splitlines() if line.strip()]
    last_tools = max(i for i, b in enumerate(bodies) if b.get("tools"))
    return path, bodies, last_tools


def run(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(main, list(args))
    return res.exit_code, res.output


def test_schema_json_matches_direct_count(trace):
    path, bodies, last = trace
    code, out = run("schema", str(path), "--json")
    assert code == 0, out
    doc = json.loads(out)
    tools = bodies[last]["tools"]
    assert doc["call"] == last and len(doc["tools"]) == 17 == len(tools)
    compacted = [ref_compact_tool(t) for t in tools]
    assert [t["name"] for t in doc["tools"]] == [t["name"] for t in tools]
    assert [t["tokens"] for t in doc["tools"]] == [n(t) for t in tools]
    assert [t["compacted_tokens"] for t in doc["tools"]] == [n(t) for t in compacted]
    assert doc["total_tokens"] == sum(n(t) for t in tools) + ANTHROPIC_TOOL_PREAMBLE
    assert doc["preamble_tokens"] == ANTHROPIC_TOOL_PREAMBLE
    assert sum(t["tokens"] for t in doc["tools"]) == doc["total_tokens"] - doc["preamble_tokens"]
    assert doc["compacted_total"] == sum(n(t) for t in compacted) + ANTHROPIC_TOOL_PREAMBLE
    saved = sum(n(t) for t in tools) - sum(n(t) for t in compacted)
    assert doc["saved_per_call"] == saved > 0
    key = orjson.dumps(tools, option=orjson.OPT_SORT_KEYS)
    same = sum(1 for b in bodies if b.get("tools") and orjson.dumps(b["tools"], option=orjson.OPT_SORT_KEYS) == key)
    assert same == 4 and doc["calls"] == same and doc["saved_run"] == saved * same
    assert doc["system_tokens"] == O200K_FRAMING + sum(TOK.count(b["text"]) for b in bodies[last]["system"])


def test_schema_text_and_explicit_call(trace):
    path, _bodies, last = trace
    code, out = run("schema", str(path), "--call", str(last))
    assert code == 0, out
    assert "17 tools" in out and "(preamble)" in out and "x 4 calls" in out
    # a call without tools: an empty analysis, not an error
    code, out = run("schema", str(path), "--call", "0", "--json")
    assert code == 0 and json.loads(out)["tools"] == []


def test_plan_json_floor_and_fates(trace):
    path, bodies, last = trace
    body = bodies[last]
    system_tokens = O200K_FRAMING + sum(TOK.count(b["text"]) for b in body["system"])
    tools_tokens = sum(n(t) for t in body["tools"]) + ANTHROPIC_TOOL_PREAMBLE
    code, out = run("plan", str(path), "--json")
    assert code == 0, out
    doc = json.loads(out)
    assert set(doc) == {"messages", "before_tokens", "after_tokens", "budget_tokens", "fits", "reason", "reinject"}
    msgs = doc["messages"]
    # default call: the last real call (the sonnet call with tools; the later haiku lines are probes)
    assert len(msgs) == 1 + len(body["messages"])
    assert msgs[0] == {"index": 0, "role": "system", "tokens": system_tokens, "fate": "pinned"}
    assert [m["role"] for m in msgs[1:]] == [m["role"] for m in body["messages"]]
    assert doc["before_tokens"] == system_tokens + tools_tokens + sum(m["tokens"] for m in msgs[1:])
    # under budget (claude-sonnet-4 window 200k x 0.6, reserve = max_tokens 32000): nothing evicted
    assert doc["budget_tokens"] == min(int(200_000 * 0.6), 200_000 - body["max_tokens"])
    assert doc["fits"] and all(m["fate"] in ("pinned", "kept") for m in msgs) and doc["reinject"] == []


def test_plan_json_forced_eviction_keeps_the_floor(trace):
    path, bodies, last = trace
    body = bodies[last]
    system_tokens = O200K_FRAMING + sum(TOK.count(b["text"]) for b in body["system"])
    tools_tokens = sum(n(t) for t in body["tools"]) + ANTHROPIC_TOOL_PREAMBLE
    floor = system_tokens + tools_tokens
    first_user = "\n".join(b["text"] for b in body["messages"][0]["content"] if b.get("type") == "text")
    task_tokens = O200K_FRAMING + TOK.count("Original task (the first user message):\n" + first_user)
    # budget = window (fraction 1, no reserve): room for the floor, the summary and the re-injected task
    # (plus a little for the task list), not for the whole history
    window = floor + 100 + task_tokens + 60
    code, out = run("plan", str(path), "--call", str(last), "--window", str(window), "--budget-fraction", "1",
                    "--reserve", "0", "--keep-recent", "0", "--summary-tokens", "100", "--json")
    assert code == 0, out
    doc = json.loads(out)
    assert doc["budget_tokens"] == window
    msgs = doc["messages"]
    assert doc["before_tokens"] == floor + sum(m["tokens"] for m in msgs[1:]) > window
    # the only user turn is the first message (the rest are tool results), so the cut goes to the end:
    # everything but the pinned system prompt is summarised, and the task is re-injected
    assert [m["fate"] for m in msgs] == ["pinned"] + ["summarised"] * len(body["messages"])
    kinds = {r["kind"]: r["tokens"] for r in doc["reinject"]}
    assert kinds["task"] == task_tokens
    assert doc["after_tokens"] == floor + 100 + sum(kinds.values()) <= window and doc["fits"]
    assert "summarised 7 messages" in doc["reason"]


def test_plan_text_and_b24_floor_over_budget(trace):
    path, _bodies, last = trace
    code, out = run("plan", str(path), "--call", str(last), "--window", "10000")
    assert code == 0, out
    assert "does NOT fit" in out and "never evicted" in out and "pinned" in out


def test_plan_errors(trace, tmp_path):
    path, _bodies, _last = trace
    code, out = run("plan", str(path), "--call", "99")
    assert code == 2 and "14 calls" in out
    code, out = run("plan", str(tmp_path / "missing.jsonl"))
    assert code == 2
    unknown = tmp_path / "u.jsonl"
    unknown.write_text(json.dumps({"request": {"model": "no-such-model", "messages": [
        {"role": "user", "content": "hi"}]}, "response": {"usage": {"prompt_tokens": 5}}}) + "\n")
    code, out = run("plan", str(unknown))
    assert code == 2 and "--window" in out
    code, out = run("plan", str(unknown), "--window", "1000", "--json")
    assert code == 0 and json.loads(out)["messages"][0]["fate"] == "kept"
