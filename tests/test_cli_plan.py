"""``ctxwatch plan`` and ``ctxwatch schema`` on the real claude-trace sample (17 tools, big system prompt).

Expected numbers come from the sample read here with plain ``orjson`` and counted with the raw tokenizer
(``get_tokenizer('o200k_base').count`` over ``orjson.dumps``); the compacted payload is built by the
test's own compactor (``test_schema.ref_compact_tool``), never by the code under test.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from test_schema import ref_compact_tool

from ctxwatch.cli import main
from ctxwatch.tokens import ANTHROPIC_TOOL_PREAMBLE, get_tokenizer

TOK = get_tokenizer("o200k_base")
O200K_FRAMING = 4  # tokens per message for o200k_base (ctxwatch/tokens/__init__.py, checked on the OpenAI batch sample)
# Every request's prompt ends with the primer of the reply, <|im_start|>assistant<|im_sep|> (OpenAI cookbook,
# "How to count tokens with tiktoken"): a counted prompt, and so a plan's before/after, includes these 3 tokens.
PRIMER = 3


def n(obj: object) -> int:
    return TOK.count(orjson.dumps(obj).decode())


@pytest.fixture(scope="module")
def trace(shared_logs):
    path = shared_logs / "request-response" / "claude-trace_test-traffic_head14.jsonl"
    bodies = [orjson.loads(line)["request"]["body"] for line in path.read_bytes().splitlines() if line.strip()]
    last_tools = max(i for i, b in enumerate(bodies) if b.get("tools"))
    return path, bodies, last_tools


@pytest.fixture(scope="module")
def counted(trace, tmp_path_factory):
    """The trace with every usage block renamed away (in the JSON bodies and inside the raw SSE text): with no
    reported prompt, a plan uses this tokenizer's counts as they are, which the tests below work out by hand."""
    path, bodies, last = trace
    copy = tmp_path_factory.mktemp("counted") / path.name
    copy.write_text(re.sub(r'(\\?")usage(\\?")', r"\1usage_removed\2", path.read_text()))
    assert '"usage"' not in copy.read_text() and '\\"usage\\"' not in copy.read_text()
    return copy, bodies, last


def scaled(counts: list[int], total: int) -> list[int]:
    """Counts scaled to add up to ``total``: each floor(c * total / sum), the rest given one by one to the
    largest remainders (the Hamilton apportionment method), written here without the planner's code."""
    whole = sum(counts)
    exact = [c * total / whole for c in counts]
    out = [int(x) for x in exact]
    order = sorted(range(len(counts)), key=lambda i: exact[i] - out[i], reverse=True)
    for i in order[: total - sum(out)]:
        out[i] += 1
    return out


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
    code, out = run("schema", str(path), "--index", str(last))
    assert code == 0, out
    assert "17 tools" in out and "(preamble)" in out and "x 4 calls" in out
    # a call without tools: an empty analysis, not an error
    code, out = run("schema", str(path), "--index", "0", "--json")
    assert code == 0 and json.loads(out)["tools"] == []


def test_plan_json_floor_and_fates(counted):
    path, bodies, last = counted
    body = bodies[last]
    system_tokens = O200K_FRAMING + sum(TOK.count(b["text"]) for b in body["system"])
    tools_tokens = sum(n(t) for t in body["tools"]) + ANTHROPIC_TOOL_PREAMBLE
    code, out = run("plan", str(path), "--json")
    assert code == 0, out
    doc = json.loads(out)
    assert set(doc) == {"number", "index", "line", "file", "session", "context", "model",  # (the call planned)
                        "messages", "before_tokens", "after_tokens", "budget_tokens", "fits", "reason", "reinject",
                        "system_tokens", "tools_tokens", "floor_tokens", "summary_tokens", "overhead_tokens"}
    msgs = doc["messages"]
    # default call: the last real call (the sonnet call with tools; the later haiku lines are probes)
    assert len(msgs) == 1 + len(body["messages"])
    assert msgs[0] == {"index": 0, "number": 0, "role": "system", "tokens": system_tokens,
                       "tokens_after": system_tokens, "fate": "pinned", "saves": None, "offender": False}
    # what is in no message row, so that the document adds up on its own
    assert (doc["system_tokens"], doc["tools_tokens"], doc["floor_tokens"]) == (
        system_tokens, tools_tokens, system_tokens + tools_tokens)
    assert doc["overhead_tokens"] == PRIMER and doc["summary_tokens"] == 0
    assert [m["role"] for m in msgs[1:]] == [m["role"] for m in body["messages"]]
    assert doc["before_tokens"] == PRIMER + system_tokens + tools_tokens + sum(m["tokens"] for m in msgs[1:])
    # under budget (Claude Code's own, the agent's call of its traffic: its blocking limit, 23,000 below the
    # 200k window, by hand): nothing evicted
    assert body["tools"] and doc["budget_tokens"] == 200_000 - 23_000
    assert doc["fits"] and all(m["fate"] in ("pinned", "kept") for m in msgs) and doc["reinject"] == []


def test_plan_json_forced_eviction_keeps_the_floor(counted):
    path, bodies, last = counted
    body = bodies[last]
    system_tokens = O200K_FRAMING + sum(TOK.count(b["text"]) for b in body["system"])
    tools_tokens = sum(n(t) for t in body["tools"]) + ANTHROPIC_TOOL_PREAMBLE
    floor = system_tokens + tools_tokens
    first_user = "\n".join(b["text"] for b in body["messages"][0]["content"] if b.get("type") == "text")
    task_tokens = O200K_FRAMING + TOK.count("Original task (the first user message):\n" + first_user)
    # budget = window (fraction 1, no reserve): room for the floor, the summary and the re-injected task
    # (plus a little for the task list), not for the whole history
    window = floor + 100 + task_tokens + 60
    code, out = run("plan", str(path), "--index", str(last), "--window", str(window), "--budget-fraction", "1",
                    "--reserve", "0", "--keep-recent", "0", "--summary-tokens", "100", "--json")
    assert code == 0, out
    doc = json.loads(out)
    assert doc["budget_tokens"] == window
    msgs = doc["messages"]
    assert doc["before_tokens"] == PRIMER + floor + sum(m["tokens"] for m in msgs[1:]) > window
    # the only user turn is the first message (the rest are tool results), so the cut goes to the end:
    # everything but the pinned system prompt is summarised, and the task is re-injected
    assert [m["fate"] for m in msgs] == ["pinned"] + ["summarised"] * len(body["messages"])
    kinds = {r["kind"]: r["tokens"] for r in doc["reinject"]}
    assert kinds["task"] == task_tokens
    assert doc["after_tokens"] == PRIMER + floor + 100 + sum(kinds.values()) <= window and doc["fits"]
    assert "summarised 7 messages" in doc["reason"]
    # the document alone adds up: the rows (the system prompt's after it is pinned), the tool schemas, the
    # summary of --summary-tokens 100, the re-injected items and the reply primer
    assert (doc["tools_tokens"], doc["summary_tokens"], doc["overhead_tokens"]) == (tools_tokens, 100, PRIMER)
    assert [m["tokens_after"] for m in msgs] == [system_tokens] + [0] * len(body["messages"])
    assert doc["after_tokens"] == sum(m["tokens_after"] for m in msgs) + doc["tools_tokens"] \
        + doc["summary_tokens"] + sum(r["tokens"] for r in doc["reinject"]) + doc["overhead_tokens"]


def test_plan_text_and_b24_floor_over_budget(trace):
    path, _bodies, last = trace
    code, out = run("plan", str(path), "--index", str(last), "--window", "10000")
    assert code == 0, out
    assert "does NOT fit" in out and "never evicted" in out and "pinned" in out


def test_call_is_the_number_shown_and_index_the_json_index(trace):
    """``--call N`` is the #N that check, report and the dashboard print (from 1); ``--index I`` is report
    --json's index (from 0); the header names the call the same way."""
    path, _bodies, last = trace
    by_number = run("plan", str(path), "--call", str(last + 1), "--json")
    by_index = run("plan", str(path), "--index", str(last), "--json")
    assert by_number[0] == by_index[0] == 0 and by_number[1] == by_index[1]
    code, out = run("plan", str(path), "--call", str(last + 1))
    assert code == 0 and out.splitlines()[0].split()[1] == f"#{last + 1}"
    assert run("schema", str(path), "--call", "-1") == run("schema", str(path), "--index", "13")  # 14 calls
    code, out = run("plan", str(path), "--call", "0")
    assert code == 2 and "counts from 1" in out
    code, out = run("plan", str(path), "--call", "2", "--index", "1")
    assert code == 2 and "not both" in out
    code, out = run("plan", str(path), "--index", "14")
    assert code == 2 and "#15" in out and "#1..#14" in out


def test_plan_errors(trace, tmp_path):
    path, _bodies, _last = trace
    code, out = run("plan", str(path), "--call", "99")
    assert code == 2 and "14 calls" in out
    one = tmp_path / "one.jsonl"
    one.write_text(path.read_text().splitlines(keepends=True)[0])
    code, out = run("plan", str(one), "--call", "5")
    assert code == 2 and "the log has one call (#1; --index 0)" in out
    code, out = run("plan", str(tmp_path / "missing.jsonl"))
    assert code == 2
    unknown = tmp_path / "u.jsonl"
    unknown.write_text(json.dumps({"request": {"model": "no-such-model", "messages": [
        {"role": "user", "content": "hi"}]}, "response": {"usage": {"prompt_tokens": 5}}}) + "\n")
    code, out = run("plan", str(unknown))
    assert code == 2 and "--window" in out
    code, out = run("plan", str(unknown), "--window", "1000", "--json")
    assert code == 0 and json.loads(out)["messages"][0]["fate"] == "kept"


# --- exchanges: a small budget forces eviction inside the one user turn of an agent run ---------------------

def exchange_starts(msgs: list) -> list[int]:
    """Exchange starts worked out here from the reader's messages: a message that is not a tool result,
    while no tool call awaits its result (an assistant message and all its results are one exchange)."""
    out, waiting = [], set()
    for i, m in enumerate(msgs):
        is_result = m.role == "tool" or any(p.kind == "tool_result" for p in m.parts)
        if not is_result and not waiting:
            out.append(i)
        waiting |= {p.call_id for p in m.parts if p.kind == "tool_call"}
        waiting -= {p.call_id for p in m.parts if p.kind == "tool_result"}
    return out


def check_exchange_plan(doc: dict, history: list, keep_recent: int, summary: int,
                        items: list[tuple[str, int, int]], floor: int, budget: int, mode: str = "summarise") -> int:
    """Check a forced-eviction plan against an independent reading; returns the cut (history position).

    ``history`` are the call's messages (JSON ``messages[1:]`` are the same messages, after the pinned
    floor entry); ``items`` the re-injection candidates worked out by the test, ``(kind, history position,
    tokens)``: an item is re-injected when its message is evicted.  Per-message tokens come from the JSON,
    every sum is done here.
    """
    msgs = doc["messages"]
    assert msgs[0]["fate"] == "pinned" and msgs[0]["role"] == "system"
    hist = msgs[1:]
    assert [m["role"] for m in hist] == [m.role for m in history]
    tokens = [m["tokens"] for m in hist]
    starts = exchange_starts(history)
    gone_word = "summarised" if mode == "summarise" else "evicted"
    fates = [m["fate"] for m in hist]
    cut = fates.index("kept") if "kept" in fates else len(hist)
    assert fates == [gone_word] * cut + ["kept"] * (len(hist) - cut)
    assert cut > 0 and cut in starts  # something goes, and the kept history starts on an exchange
    # the newest keep_recent exchanges are kept
    protected = starts[max(len(starts) - keep_recent, 0)]
    assert cut <= protected
    # the items whose message is evicted are re-injected (the task always: the first user message goes)
    assert [(r["kind"], r["tokens"]) for r in doc["reinject"]] == [(k, t) for k, pos, t in items if pos < cut]
    assert doc["reinject"][0]["kind"] == "task"

    def lead(c: int) -> int:  # the summary and the re-injected items of cut c
        return (summary if mode == "summarise" else 0) + sum(t for _k, pos, t in items if pos < c)

    assert doc["after_tokens"] == floor + sum(tokens[cut:]) + lead(cut)
    assert doc["budget_tokens"] == budget
    # the planner keeps as much as fits: the earliest exchange start (up to the protected one) that fits
    fitting = [c for c in starts if 0 < c <= protected and floor + sum(tokens[c:]) + lead(c) <= budget]
    if fitting:
        assert cut == fitting[0] and doc["fits"]
    else:
        assert cut == protected and not doc["fits"] and f"newest {keep_recent} exchanges" in doc["reason"]
    if history[cut].role != "user":  # the cut fell inside the user turn: a user message leads
        assert "the cut falls inside the user turn of message 1" in doc["reason"]
    return cut


@pytest.fixture(scope="module")
def claude_code(shared_logs):
    from ctxwatch.config import Settings
    from ctxwatch.engine import load_run, reload_call

    path = shared_logs / "claude-code" / "spotter_4d5611e5_head200.jsonl"
    run_ = load_run(str(path), None, Settings())
    last = max(c.index for c in run_.calls if c.context == "main")
    history = reload_call(run_, last).messages
    # the task: the first user prompt in the raw file
    first = next(orjson.loads(line) for line in path.read_bytes().splitlines()
                 if b'"type":"user"' in line and isinstance(orjson.loads(line)["message"]["content"], str))
    task_tokens = O200K_FRAMING + TOK.count("Original task (the first user message):\n"
                                            + first["message"]["content"])
    return path, history, task_tokens


@pytest.mark.parametrize(("window", "keep", "mode"), [(100_000, 6, "summarise"), (80_000, 3, "summarise"),
                                                      (80_000, 6, "summarise"), (100_000, 6, "drop")])
def test_plan_claude_code_agent_run_evicts_older_exchanges(claude_code, window, keep, mode):
    path, history, task_tokens = claude_code
    # one user prompt, then only tool exchanges: a single turn
    assert sum(1 for m in history if m.role == "user" and not any(p.kind == "tool_result" for p in m.parts)) == 1
    code, out = run("plan", str(path), "--window", str(window), "--keep-recent", str(keep), "--mode", mode,
                    "--json")
    assert code == 0, out
    doc = json.loads(out)
    floor = doc["messages"][0]["tokens"]  # the inferred floor, pinned
    budget = min(int(window * 0.6), window - int(window * 0.15))
    assert doc["before_tokens"] == floor + sum(m["tokens"] for m in doc["messages"][1:]) > budget
    # re-injection candidates: the task, and the file of the latest Edit/Write (no task list or plan here)
    assert not any(p.kind == "tool_call" and p.name in ("TodoWrite", "ExitPlanMode") for m in history for p in m.parts)
    edits = [(i, orjson.loads(p.text)["file_path"]) for i, m in enumerate(history) for p in m.parts
             if p.kind == "tool_call" and p.name in ("Edit", "Write", "MultiEdit")]
    pos, edited = edits[-1]
    items = [("task", 0, task_tokens), ("file", pos, O200K_FRAMING + TOK.count("File being edited: " + edited))]
    cut = check_exchange_plan(doc, history, keep, 2000, items, floor, budget, mode)
    assert history[cut].role == "assistant"  # inside the one turn
    # the same budget counted in turns: the whole run is the newest turn, nothing can be evicted
    code, out = run("plan", str(path), "--window", str(window), "--keep-recent", str(keep), "--unit", "turn",
                    "--json")
    turn = json.loads(out)
    assert code == 0 and not turn["fits"] and turn["after_tokens"] == turn["before_tokens"]
    assert all(m["fate"] in ("pinned", "kept") for m in turn["messages"]) and "newest 1 turn" in turn["reason"]


def test_plan_claude_trace_forced_eviction_by_exchange(counted):
    path, bodies, last = counted
    body = bodies[last]
    system_tokens = O200K_FRAMING + sum(TOK.count(b["text"]) for b in body["system"])
    tools_tokens = sum(n(t) for t in body["tools"]) + ANTHROPIC_TOOL_PREAMBLE
    floor = system_tokens + tools_tokens
    first_user = "\n".join(b["text"] for b in body["messages"][0]["content"] if b.get("type") == "text")
    task_tokens = O200K_FRAMING + TOK.count("Original task (the first user message):\n" + first_user)
    # the TodoWrite call in message 1 is the task list, rendered here as "- [status] content" lines
    todo = next(b["input"]["todos"] for b in body["messages"][1]["content"] if b.get("name") == "TodoWrite")
    tasks_tokens = O200K_FRAMING + TOK.count("Current task list:\n" + "\n".join(
        f"- [{t['status']}] {t['content']}" for t in todo))
    items = [("task", 0, task_tokens), ("tasks", 1, tasks_tokens)]
    code, out = run("plan", str(path), "--index", str(last), "--json")
    tokens = [m["tokens"] for m in json.loads(out)["messages"][1:]]
    # room for the floor, the summary, the re-injected items and the last two exchanges (4 messages),
    # not for a third
    summary = 50
    window = PRIMER + floor + summary + task_tokens + tasks_tokens + sum(tokens[-4:]) + 1
    assert PRIMER + floor + summary + task_tokens + tasks_tokens + sum(tokens[-6:]) > window
    code, out = run("plan", str(path), "--index", str(last), "--window", str(window), "--budget-fraction", "1",
                    "--reserve", "0", "--keep-recent", "1", "--summary-tokens", str(summary), "--json")
    assert code == 0, out
    doc = json.loads(out)

    # the history as the request body has it, read here: Anthropic tool_use / tool_result blocks
    from ctxwatch.model import Message, Part

    def parts(m: dict) -> list:
        c = m["content"]
        if isinstance(c, str):
            return [Part("text", c)]
        return [Part("tool_call", "", call_id=b["id"]) if b["type"] == "tool_use" else
                Part("tool_result", "", call_id=b["tool_use_id"]) if b["type"] == "tool_result" else
                Part("text", b.get("text", "")) for b in c]

    history = [Message(m["role"], parts(m)) for m in body["messages"]]
    assert doc["messages"][0]["tokens"] == system_tokens
    cut = check_exchange_plan(doc, history, 1, summary, items, PRIMER + system_tokens + tools_tokens, window)
    assert cut == len(history) - 4 and doc["fits"]
    assert "summarised 3 messages" in doc["reason"] and "kept 4 messages (2 exchanges)" in doc["reason"]


def test_plan_text_unit_and_no_reinject(claude_code):
    path, _history, _task = claude_code
    code, out = run("plan", str(path), "--window", "100000")
    assert code == 0, out
    assert "keep_recent 6 exchanges; mode summarise" in out
    assert re.search(r"sent before the kept history \(user messages\): summary 2,000, task \d", out)
    # drop mode with nothing to re-inject: no user message could lead a cut inside the one turn
    code, out = run("plan", str(path), "--window", "100000", "--mode", "drop", "--no-reinject")
    assert code == 0, out
    assert "does NOT fit" in out and "sent before the kept history" not in out
    assert "drop mode: the sent history must start on a user message" in out
    code, out = run("plan", str(path), "--unit", "rounds")
    assert code == 2 and "--unit" in out


def test_plan_compact_at_trigger_is_a_full_compaction(claude_code):
    """The default stays the minimal plan at the budget; --compact-at trigger shows the full compaction a live
    loop makes above the trigger: everything older than the newest --keep-recent exchanges goes."""
    path, history, task_tokens = claude_code
    code, out = run("plan", str(path), "--json")
    assert code == 0, out
    doc = json.loads(out)
    floor, before = doc["messages"][0]["tokens"], doc["before_tokens"]
    tokens = [m["tokens"] for m in doc["messages"][1:]]
    # budget = window (fraction 1, no reserve) holds the prompt; the trigger (0.8 of it) does not
    window = before + 10
    opts = ["--window", str(window), "--budget-fraction", "1", "--reserve", "0", "--json"]
    code, out = run("plan", str(path), *opts)
    assert code == 0, out
    minimal = json.loads(out)
    assert minimal["fits"] and all(m["fate"] in ("pinned", "kept") for m in minimal["messages"])
    code, out = run("plan", str(path), *opts, "--compact-at", "trigger")
    assert code == 0, out
    full = json.loads(out)
    assert set(full) == set(minimal)  # the same keys
    starts = exchange_starts(history)
    cut = starts[-6]  # keep_recent 6 exchanges
    assert [m["fate"] for m in full["messages"]] == ["pinned"] + ["summarised"] * cut + ["kept"] * (len(history) - cut)
    edits = [(i, orjson.loads(p.text)["file_path"]) for i, m in enumerate(history) for p in m.parts
             if p.kind == "tool_call" and p.name in ("Edit", "Write", "MultiEdit")]
    pos, edited = edits[-1]
    items = [("task", 0, task_tokens), ("file", pos, O200K_FRAMING + TOK.count("File being edited: " + edited))]
    reinjected = [(k, t) for k, p, t in items if p < cut]
    assert [(r["kind"], r["tokens"]) for r in full["reinject"]] == reinjected
    assert full["after_tokens"] == floor + sum(tokens[cut:]) + 2000 + sum(t for _k, t in reinjected)
    assert full["fits"] and f"above the compaction trigger of {int(window * 0.8):,}" in full["reason"]
    # text output names the option; an unknown value is a usage error
    code, out = run("plan", str(path), "--window", str(window), "--compact-at", "trigger")
    assert code == 0 and "compact at the trigger" in out
    code, out = run("plan", str(path), "--compact-at", "window")
    assert code == 2 and "--compact-at" in out


def test_plan_declines_calls_whose_prompt_is_not_in_the_log(shared_logs):
    """A usage-only record has no history to plan; a Claude Code excerpt's first calls hold only part of their
    history, so their floor is unknown: both are a clear error (exit 2), never a plan over 0 tokens."""
    root = Path(__file__).resolve().parent.parent
    code, out = run("plan", str(root / "sample_logs" / "gemini_usage.jsonl"))
    assert code == 2 and "holds only this call's usage" in out
    excerpt = str(shared_logs / "claude-code" / "spotter_4d5611e5_lines700-800_compaction.jsonl")
    code, out = run("plan", excerpt, "--call", "1")
    assert code == 2 and "starts mid-session" in out
    code, out = run("plan", excerpt, "--json")  # the last call is after the compaction: its floor is known
    first = json.loads(out)["messages"][0]
    assert code == 0 and (first["tokens"], first["fate"]) == (32_379, "pinned")


def test_plan_of_an_inferred_history_starts_from_the_reported_prompt(shared_logs):
    """A Claude Code call's history is the provider's count (reported minus the floor): the plan scales its
    messages' o200k counts to it, so 'before' is the reported prompt, and an over-budget call is not 'fits'."""
    path = shared_logs / "claude-code" / "spotter_4d5611e5_head200.jsonl"
    best: dict[str, dict] = {}
    order: list[str] = []
    for raw in path.read_text().splitlines():
        d = json.loads(raw)
        if d.get("type") == "assistant" and "usage" in d.get("message", {}):
            key = d["message"]["id"] + d["requestId"]
            if key not in best:
                order.append(key)
            best[key] = d["message"]["usage"]
    u = best[order[10]]
    reported = u["input_tokens"] + u.get("cache_creation_input_tokens", 0) + u.get("cache_read_input_tokens", 0)
    code, out = run("plan", str(path), "--index", "10", "--budget-fraction", "0.35", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["before_tokens"] == reported == 73_797
    assert doc["budget_tokens"] == 70_000 and doc["after_tokens"] <= 70_000  # over budget before, so it evicts
    assert any(m["fate"] in ("summarised", "evicted") for m in doc["messages"])


def test_scaled_to_keeps_shares_and_the_exact_total():
    from ctxwatch.planner import scaled_to

    assert scaled_to([10, 20, 30], 66) == [11, 22, 33]
    # 9.1, 1.3, 1.3, 1.3: the floors give 12; the one token left goes to the largest remainder (the first 1.3)
    assert scaled_to([7, 1, 1, 1], 13) == [9, 2, 1, 1]
    assert scaled_to([0, 0], 50) == [0, 0] and scaled_to([], 5) == []


def test_plan_report_and_flags_agree_on_the_prompt_size():
    """One prompt size everywhere: a plan's 'before', report's used and free, and a flag's overflow all count
    the prompt the provider reported (with the reply primer), not floor + history alone (3 tokens apart)."""
    demo = Path(__file__).resolve().parent.parent / "sample_logs" / "openai_chat_demo.jsonl"
    code, out = run("report", str(demo), "--json")
    doc = json.loads(out)
    prompts = []
    for c in doc["calls"]:
        # the reported size, or (the last call failed: no usage) the estimate, which includes the primer
        prompt = c["prompt_tokens_reported"] or c["prompt_tokens_estimated"]
        assert c["free_tokens"] == c["window"] - prompt - c["reserve_tokens"]
        assert c["used_fraction"] == round(prompt / c["window"], 4)
        prompts.append(prompt)
    assert doc["calls"][-1]["prompt_tokens_reported"] is None
    for number in (1, 11, len(doc["calls"])):
        code, out = run("plan", str(demo), "--call", str(number), "--json")
        assert code == 0 and json.loads(out)["before_tokens"] == prompts[number - 1]
    (over,) = [f for f in doc["flags"] if f["call"] == len(prompts) - 1 and f["kind"] == "reserve_breached"]
    by = prompts[-1] + doc["calls"][-1]["reserve_tokens"] - doc["calls"][-1]["window"]
    assert by == -doc["calls"][-1]["free_tokens"] and f"by {by:,} tokens" in over["reason"]


def test_plan_takes_the_paths_and_numbers_of_report_and_check(tmp_path):
    """A batch pair whose results come in another order than the requests, and a folder: --call N is the #N
    report printed for the same paths (the pair's #1 is the first result line, not the first request)."""
    src = Path(__file__).resolve().parent.parent / "sample_logs" / "openai-batch"
    inp = tmp_path / "pair" / "batch_input.jsonl"
    out = tmp_path / "pair" / "batch_output.jsonl"
    inp.parent.mkdir()
    inp.write_text((src / "batch_input.jsonl").read_text())
    results = (src / "batch_output.jsonl").read_text().splitlines(keepends=True)
    out.write_text("".join(reversed(results)))
    first_id = json.loads(results[-1])["custom_id"]
    code, rep = run("report", str(inp), str(out), "--json")
    calls = json.loads(rep)["calls"]
    assert code == 0 and calls[0]["line"] == 1 and calls[0]["file"] == str(out)
    request_line = next(i for i, ln in enumerate(inp.read_text().splitlines(), 1)
                        if json.loads(ln)["custom_id"] == first_id)
    code, text = run("plan", str(inp), str(out), "--call", "1")
    assert code == 0 and text.splitlines()[0].startswith(f"{out}  #1 (line 1)")
    code, by_pair = run("plan", str(inp), str(out), "--call", "1", "--json")
    code2, by_folder = run("plan", str(inp.parent), "--call", "1", "--json")
    assert code == code2 == 0 and by_pair == by_folder
    # the plan is of that result's request: its prompt counted here from the request line (plain strings)
    def prompt(line_no: int) -> int:
        body = json.loads(inp.read_text().splitlines()[line_no - 1])["body"]
        return PRIMER + sum(O200K_FRAMING + TOK.count(m["content"]) for m in body["messages"])

    assert json.loads(by_pair)["before_tokens"] == prompt(request_line) != prompt(1)


def test_a_plan_starts_from_the_reported_prompt_when_the_tokenizer_is_not_the_models(trace, counted):
    """claude-sonnet counted with o200k_base: the plan pins the calibrated floor that report shows (system and
    tools x the model's median reported/estimated ratio) and scales the messages to the rest of the prompt the
    provider reported, so 'before' is what report and check show, and a budget that check says is exceeded is
    not 'fits' here.  (It scaled every count by the call's own ratio: a floor of 13,751 beside report's 13,681.)"""
    import statistics

    path, _bodies, last = trace
    code, rep = run("report", str(path), "--json")
    calls = json.loads(rep)["calls"]
    reported = calls[last]["prompt_tokens_reported"]
    ratios = [c["prompt_tokens_reported"] / c["prompt_tokens_estimated"] for c in calls
              if c["model"] == calls[last]["model"] and c["prompt_tokens_estimated"]]
    factor = statistics.median(ratios)
    assert len(ratios) >= 3 and reported > factor * calls[last]["prompt_tokens_estimated"]  # (not capped)
    code, raw = run("plan", str(counted[0]), "--index", str(last), "--json")  # this tokenizer's counts
    raw_doc = json.loads(raw)
    code, out = run("plan", str(path), "--index", str(last), "--json")
    doc = json.loads(out)
    assert doc["before_tokens"] == reported > raw_doc["before_tokens"]
    system, tools = floor_parts = [raw_doc["messages"][0]["tokens"], raw_doc["before_tokens"] - PRIMER - sum(
        m["tokens"] for m in raw_doc["messages"])]  # system prompt, tool schemas
    floor = round((system + tools) * factor)
    system_cal = scaled(floor_parts, floor)[0]  # (the two parts share the rounded floor by largest remainder)
    assert abs(system_cal - system * factor) < 1
    expect = scaled([m["tokens"] for m in raw_doc["messages"][1:]], reported - PRIMER - floor)
    assert [m["tokens"] for m in doc["messages"]] == [system_cal, *expect]
    budget = 14_000  # between this tokenizer's count and the reported one
    assert raw_doc["before_tokens"] < budget < reported
    code, text = run("plan", str(path), "--index", str(last), "--window", "200000", "--budget-fraction", "0.07")
    assert code == 0 and "does NOT fit" in text and f"x{factor:.4f}" in text
    assert f"= {floor:,} (calibrated, as report shows it)" in text
    _code, chk = run("check", str(path), "--budget-fraction", "0.07")
    assert "over_budget" in chk  # check agrees: that budget is exceeded


def test_plan_before_is_the_reported_prompt_even_when_it_is_tiny(tmp_path, shared_logs):
    """A reported prompt below this tokenizer's count of the history (an inferred floor of 0): 'before' is
    still the prompt report shows, never the larger estimate or the reply primer alone.  A reported 0 is no
    prompt size (implausible, flagged): 'before' is then the estimate (it scaled every size by x0.00)."""
    zero = tmp_path / "zero.jsonl"
    zero.write_text(json.dumps({"request": {"model": "gpt-4o", "messages": [
        {"role": "system", "content": "be brief"}, {"role": "user", "content": "hello there, how are you"}]},
        "response": {"usage": {"prompt_tokens": 0, "completion_tokens": 1}}}) + "\n")
    text = (shared_logs / "claude-code" / "spotter_short.jsonl").read_text()
    small = tmp_path / "small.jsonl"
    small.write_text(re.sub(r'"cache_(creation|read)_input_tokens":\d+', r'"cache_\1_input_tokens":0',
                            re.sub(r'"input_tokens":\d+', '"input_tokens":5', text)))
    for path in (zero, small):
        _code, rep = run("report", str(path), "--json")
        calls = json.loads(rep)["calls"]
        for number in (1, len(calls)):
            code, out = run("plan", str(path), "--call", str(number), "--json")
            assert code == 0, out
            call = calls[number - 1]
            before = call["prompt_tokens_reported"] if path == small else call["prompt_tokens_estimated"]
            assert json.loads(out)["before_tokens"] == before > 0, (path, number)
    _code, rep = run("report", str(zero), "--json")
    doc = json.loads(rep)
    # gpt-4o: o200k_base is its own tokenizer; OpenAI's cookbook count: 3 per message plus its role's and
    # content's tokens, and 3 to prime the reply.
    from ctxwatch.tokens import get_tokenizer

    enc = get_tokenizer("o200k_base")
    n = sum(3 + len(enc.encode(role)) + len(enc.encode(text))
            for role, text in (("system", "be brief"), ("user", "hello there, how are you"))) + 3
    assert doc["calls"][0]["prompt_tokens_estimated"] == n
    assert [f["kind"] for f in doc["flags"]] == ["implausible_usage"]
    assert doc["calls"][0]["free_tokens"] == 128_000 - n - doc["calls"][0]["reserve_tokens"]


def test_plan_on_a_folder_mixing_a_batch_pair_and_a_session(tmp_path, shared_logs):
    """Each call is re-read with its own file's format (a batch result with the batch reader, joined to its
    request), so --call N works for every call of a mixed folder as for the pair alone."""
    folder = tmp_path / "mix"
    folder.mkdir()
    for name in ("reviews_batchinput.jsonl", "reviews_batch_output.jsonl"):
        (folder / name).write_text((shared_logs / "openai-batch" / name).read_text())
    (folder / "session.jsonl").write_text((shared_logs / "claude-code" / "spotter_short.jsonl").read_text())
    _code, rep = run("report", str(folder), "--json")
    calls = json.loads(rep)["calls"]
    batch = next(i for i, c in enumerate(calls) if c["file"].endswith("reviews_batch_output.jsonl"))
    code, out = run("plan", str(folder), "--call", str(batch + 1), "--json")
    assert code == 0, out
    assert json.loads(out)["before_tokens"] == calls[batch]["prompt_tokens_reported"]
    code, out = run("schema", str(folder), "--call", str(batch + 1))
    assert code == 0, out


def test_a_line_cut_inside_a_claude_code_history_is_reported_and_not_planned(tmp_path: Path,
                                                                             shared_logs: Path) -> None:
    """Line 33 of the head200 sample (a user tool_result line) cut in half: check and report list it (the
    summary pass had skipped it unparsed, with no issue), and plan declines the calls whose history runs
    through it (it showed 2 of 8 messages scaled x40) while the calls before it still plan."""
    src = (shared_logs / "claude-code" / "spotter_4d5611e5_head200.jsonl").read_text(encoding="utf-8")
    rows = src.splitlines(keepends=True)
    cut = rows[32]
    assert json.loads(cut)["type"] == "user"
    rows[32] = cut[: len(cut) // 2] + "\n"
    log = tmp_path / "cut.jsonl"
    log.write_text("".join(rows), encoding="utf-8")
    # The first assistant line after the cut starts the first call whose history passes through it.
    first_after = next(i for i, r in enumerate(rows[33:], 34) if json.loads(r).get("type") == "assistant")
    res = CliRunner().invoke(main, ["report", str(log), "--json"])
    doc = json.loads(res.output)
    # (and the sample's note that its subagent's calls are in the subagent's own transcript, not read here)
    assert [(i["line"], i["kind"]) for i in doc["issues"]] == [(33, "invalid_json"), (0, "subagent_calls_elsewhere")]
    n_before = sum(1 for c in doc["calls"] if c["line"] < 33)
    n_after = next(c["index"] for c in doc["calls"] if c["line"] >= first_after)
    assert n_before == n_after > 0
    ok = CliRunner().invoke(main, ["plan", str(log), "--index", str(n_before - 1)])
    assert ok.exit_code == 0, ok.output
    bad = CliRunner().invoke(main, ["plan", str(log), "--index", str(n_after)])
    assert bad.exit_code == 2
    assert "history breaks at a line missing from the log or damaged" in bad.output


def test_the_detail_views_gap_row_says_when_the_history_is_cut(tmp_path: Path, shared_logs: Path) -> None:
    """Opening a call whose history passes through a damaged line: the row that makes the items add up to the
    reported prompt names the missing line, not a tokenizer gap (it was "tokenizer gap" at 10 %)."""
    from ctxwatch.engine import load_run, reload_call
    from ctxwatch.ui.screens import build_items

    rows = (shared_logs / "claude-code" / "spotter_4d5611e5_head200.jsonl").read_text(encoding="utf-8")
    lines = rows.splitlines(keepends=True)
    lines[32] = lines[32][: len(lines[32]) // 2] + "\n"
    log = tmp_path / "cut.jsonl"
    log.write_text("".join(lines), encoding="utf-8")
    run = load_run(str(log))
    labels = {c.source.line: [it.label for it in build_items(c, reload_call(run, c.index)) if it.kind == "gap"]
              for c in run.calls}
    early = [g for line, gaps in labels.items() if line < 33 for g in gaps]
    late = [g for line, gaps in labels.items() if line > 33 for g in gaps]
    assert early and all(g.startswith("tokenizer gap") for g in early)
    assert late and all(g.startswith("not in the log: the history breaks at a damaged") for g in late)


def test_errors_name_the_file_and_say_what_to_do(tmp_path: Path, shared_logs: Path) -> None:
    """schema on a batch results file alone says to give the input file (it said the format records no
    schemas); plan on a model with no known window names the file (it did not); report --json --jsonl is a
    usage error (it quietly printed JSONL)."""
    results = shared_logs / "anthropic-batch" / "msgbatch_01PGaff3EPbQJbpw6JeWoQR5_results.jsonl"
    res = CliRunner().invoke(main, ["schema", str(results)])
    assert res.exit_code == 2 and "give the batch input file too" in res.output and str(results) in res.output
    log = tmp_path / "odd.jsonl"
    log.write_text(json.dumps({"request": {"model": "no-such-model-7", "messages": [
        {"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]},
        "response": {"usage": {"prompt_tokens": 12, "completion_tokens": 1}}}) + "\n")
    res = CliRunner().invoke(main, ["plan", str(log)])
    assert res.exit_code == 2 and f"{log}: call #1 (--index 0): the context window of no-such-model-7 is unknown" \
        in res.output
    res = CliRunner().invoke(main, ["report", str(log), "--json", "--jsonl"])
    assert res.exit_code == 2 and "--json and --jsonl" in res.output


def _midrun_system_messages() -> list[dict]:
    """A gpt-4o tool loop: a developer prompt, the task, 12 rounds of 3 tool calls and results, and a system
    reminder injected before round 6 (request index 22)."""
    tools = [{"type": "function", "function": {"name": "read", "parameters": {
        "type": "object", "properties": {"p": {"type": "string"}}}}}]
    msgs: list[dict] = [{"role": "developer", "content": "You are a dev bot. Always answer in JSON."},
                        {"role": "user", "content": "Task: fix the bug in foo.py."}]
    for step in range(12):
        if step == 5:
            msgs.append({"role": "system", "content": "Reminder: the deadline is Friday."})
        calls = [{"id": f"call_{step}_{j}", "type": "function",
                  "function": {"name": "read", "arguments": json.dumps({"p": f"f{j}.py"})}} for j in range(3)]
        msgs.append({"role": "assistant", "content": None, "tool_calls": calls})
        msgs += [{"role": "tool", "tool_call_id": c["id"], "content": f"contents of {c['id']} " * 20} for c in calls]
    return [{"request": {"model": "gpt-4o", "max_tokens": 500, "tools": tools, "messages": msgs[:n]},
             "response": {"choices": [{"message": {"role": "assistant", "content": "{}"}}]},
             "timestamp": f"2025-05-01T10:00:{n:02d}Z"} for n in range(10, len(msgs) + 1, 4)] + [
        {"request": {"model": "gpt-4o", "max_tokens": 500, "tools": tools, "messages": msgs},
         "response": {"choices": [{"message": {"role": "assistant", "content": "{}"}}]},
         "timestamp": "2025-05-01T10:01:00Z"}]


def test_a_system_message_mid_run_is_history_pinned_in_place(tmp_path: Path) -> None:
    """Only the leading system/developer messages are the system prompt.  A reminder injected mid-run keeps its
    place: plan has one row per request message with the request's own role (it folded the reminder into the
    floor, so rows after 22 were off by one), pins it, and check raises no system_prompt_changed (it warned of
    an invalidated cache prefix where a message had only been added; the floor jumped 111 -> 148)."""
    recs = _midrun_system_messages()
    log = tmp_path / "midsys.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in recs))
    req = recs[-1]["request"]["messages"]
    assert req[22]["role"] == "system"
    res = CliRunner().invoke(main, ["plan", str(log), "--window", "8000", "--keep-recent", "2", "--json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.output)["messages"]
    assert len(rows) == len(req)  # row 0 is the system prompt (the leading developer message)
    assert [r["role"] for r in rows[1:]] == [m["role"] for m in req[1:]]
    assert rows[22]["fate"] == "pinned" and rows[0]["fate"] == "pinned"
    doc = json.loads(CliRunner().invoke(main, ["report", str(log), "--json"]).output)
    assert len({c["floor_tokens"] for c in doc["calls"]}) == 1  # the floor stays put
    kinds = {f["kind"] for f in doc["flags"]}
    assert "system_prompt_changed" not in kinds and "system_prompt_evicted" not in kinds


@pytest.mark.parametrize("window", [6000, 100_000])
def test_plan_and_report_use_one_reserve(window: int) -> None:
    """The reserve is the request's max_tokens capped at the window, in report, check and plan alike.  With
    --window 6000 and max_tokens 8192 report reserved 6,000 (free -3,209, reserve_breached) while plan used
    900 and said "fits"; now plan reserves 6,000 too, so nothing fits."""
    log = Path(__file__).resolve().parents[1] / "sample_logs" / "anthropic_messages.jsonl"
    last = json.loads(log.read_text().splitlines()[-1])
    expected = min(last["request"]["max_tokens"], window)
    doc = json.loads(CliRunner().invoke(main, ["report", str(log), "--window", str(window), "--json"]).output)
    assert doc["calls"][-1]["reserve_tokens"] == expected
    res = CliRunner().invoke(main, ["plan", str(log), "--window", str(window), "--json"])
    assert res.exit_code == 0, res.output
    plan = json.loads(res.output)
    # The budget leaves the reserve free: min(0.6 x window, window - reserve) (docs/configuration.md).
    assert plan["budget_tokens"] == max(0, min(int(0.6 * window), window - expected))
    assert plan["fits"] is (window == 100_000)
    text = CliRunner().invoke(main, ["plan", str(log), "--window", str(window)]).output
    assert f"reserve {expected:,};" in text


def test_a_whole_document_call_is_not_said_to_be_on_line_0(shared_logs: Path) -> None:
    """Inspect AI logs are one JSON document: plan's header (and the detail view) say "whole document", not
    "line 0"; a JSONL call keeps its line."""
    from ctxwatch.model import SourceRef

    assert SourceRef("a.eval", 0, 0, 0, 0).where == "whole document"
    assert SourceRef("a.jsonl", 9, 9, 10, 20).where == "line 9"
    doc = next((shared_logs / "request-response" / "inspect-ai").glob("*.eval"))
    res = CliRunner().invoke(main, ["plan", str(doc)])
    assert res.exit_code == 0, res.output
    assert "(whole document)" in res.output.splitlines()[0] and "(line 0)" not in res.output


CODEX_ROLLOUT = ("codex-rollout", "rollout-2025-11-17T15-30-28-019a93b9_codex0.58.0.jsonl")


def _codex_first_task(path: Path) -> str:
    """The first user message of the rollout that the user typed: not the harness's AGENTS.md instructions or
    its ``<environment_context>`` (FORMATS.md section 2), read with plain json."""
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        p = rec.get("payload") or {}
        if rec.get("type") == "response_item" and p.get("type") == "message" and p.get("role") == "user":
            text = "\n".join(c.get("text", "") for c in p["content"])
            if not text.lstrip().startswith(("<environment_context>", "# AGENTS.md", "<user_instructions>")):
                return text
    raise AssertionError("no user task in the rollout")


@pytest.mark.parametrize("keep", [1, 2, 5])
def test_codex_plan_keeps_reasoning_with_its_output_and_reinjects_the_real_task(shared_logs: Path, keep: int):
    """A Codex reasoning item is an input item of its own: it was an exchange of its own, so a plan summarised
    the reasoning (10,982 tokens) and kept the function_call it produced.  And the re-injected "task" was
    Codex's <environment_context>, while the user's task was summarised away."""
    from ctxwatch.cli.plan import load_call
    from ctxwatch.config import Settings

    path = shared_logs.joinpath(*CODEX_ROLLOUT)
    res = CliRunner().invoke(main, ["plan", str(path), "--window", "60000", "--summary-tokens", "500",
                                    "--compact-at", "trigger", "--keep-recent", str(keep), "--json"])
    assert res.exit_code == 0, res.output
    plan = json.loads(res.output)
    _run, _call, pc = load_call((str(path),), None, Settings(), -1, "plan")
    msgs = pc.messages or []
    fates = [m["fate"] for m in plan["messages"]]
    assert len(fates) == len(msgs) + 1  # row 0: the (inferred) floor
    reasoning = [i for i, m in enumerate(msgs) if all(p.kind == "thinking" for p in m.parts)]
    assert len(reasoning) > 10
    for i in reasoning:
        if i + 1 < len(msgs) and msgs[i + 1].role == "assistant":
            assert fates[i + 1] == fates[i + 2], (i, fates[i + 1], fates[i + 2])
    assert "summarised" in fates and "kept" in fates
    task = next(r for r in plan["reinject"] if r["kind"] == "task")
    assert " ".join(_codex_first_task(path).split())[:60] in task["detail"]
    env = next(i for i, m in enumerate(msgs) if m.text().lstrip().startswith("<environment_context>"))
    assert fates[env + 1] == "pinned"  # the harness re-sends it at the head of a compacted history


def test_reused_tool_call_ids_pair_each_result_with_the_latest_call(tmp_path: Path) -> None:
    """Some servers reuse one id (``call_0``) for every call.  The span of the id ran from its first use to its
    last, blocking every cut: the plan evicted nothing and blamed the newest exchanges.  The same log with
    distinct ids is the expected plan (its sizes differ only by the ids' tokens)."""
    def log(ids: list[str]) -> list[dict]:
        msgs: list[dict] = [{"role": "system", "content": "You fix tests."},
                            {"role": "user", "content": "Fix the failing VAT test."}]
        for k, cid in enumerate(ids):
            msgs.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": cid, "type": "function", "function": {"name": "read", "arguments": f'{{"n": {k}}}'}}]})
            msgs.append({"role": "tool", "tool_call_id": cid, "content": f"line {k} " * 60})
        return [{"request": {"model": "gpt-4o", "messages": msgs},
                 "response": {"choices": [{"message": {"role": "assistant", "content": "done"}}]}}]

    plans = {}
    for name, ids in (("reused", ["call_0"] * 12), ("distinct", [f"call_{k}" for k in range(12)])):
        f = tmp_path / f"{name}.jsonl"
        f.write_text("".join(json.dumps(r) + "\n" for r in log(ids)))
        res = CliRunner().invoke(main, ["plan", str(f), "--window", "3000", "--summary-tokens", "100", "--json"])
        assert res.exit_code == 0, res.output
        plans[name] = json.loads(res.output)
    reused, distinct = plans["reused"], plans["distinct"]
    assert [m["fate"] for m in reused["messages"]] == [m["fate"] for m in distinct["messages"]]
    assert reused["fits"] and reused["after_tokens"] < reused["before_tokens"]
    fates = [m["fate"] for m in reused["messages"]]
    # each call (odd rows from 3) keeps the fate of the result after it
    assert all(fates[i] == fates[i + 1] for i in range(2, len(fates), 2))


def test_an_empty_exit_plan_mode_leaves_the_plan_written_to_plan_md(shared_logs: Path) -> None:
    """Claude Code's plan mode writes the plan to plan.md and then calls ExitPlanMode with ``{}``: the plan
    re-injected was "Current plan:\\n{}" (8 tokens).  It is the content of that Write (read here with json), and
    the plan file is not "the file being edited"."""
    path = shared_logs / "claude-code" / "spotter_subagent_parent.jsonl"
    written = None
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        content = (rec.get("message") or {}).get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_use" and block.get("name") == "Write" \
                    and block["input"]["file_path"].endswith("/plan.md"):
                written = block["input"]["content"]
    assert written and len(written) > 1000
    res = CliRunner().invoke(main, ["plan", str(path), "--window", "20000", "--summary-tokens", "100",
                                    "--keep-recent", "1", "--compact-at", "trigger", "--json"])
    assert res.exit_code == 0, res.output
    items = {r["kind"]: r for r in json.loads(res.output)["reinject"]}
    assert "plan.md" in items["plan"]["detail"]
    assert items["plan"]["tokens"] == O200K_FRAMING + TOK.count("Current plan:\n" + written)
    assert "file" not in items


def test_plan_names_pinned_history_messages_apart_from_the_floor(tmp_path: Path) -> None:
    """A mid-run system message is pinned by the plan but is history in report: plan's floor was report's
    floor plus it ("floor: system 17" against report's 8).  The floor is now report's, and the pinned message
    is named on its own."""
    msgs = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Hello " * 30},
            {"role": "assistant", "content": "Hi " * 20}, {"role": "system", "content": "Reminder: be terse."},
            {"role": "user", "content": "More " * 30}]
    f = tmp_path / "midsys.jsonl"
    f.write_text(json.dumps({"request": {"model": "gpt-4o", "messages": msgs},
                             "response": {"choices": [{"message": {"role": "assistant", "content": "ok"}}]}}) + "\n")
    call = json.loads(CliRunner().invoke(main, ["report", str(f), "--json"]).output)["calls"][0]
    floor = O200K_FRAMING + TOK.count("You are terse.")
    reminder = O200K_FRAMING + TOK.count("Reminder: be terse.")
    assert call["floor_tokens"] == floor
    res = CliRunner().invoke(main, ["plan", str(f), "--window", "100000"])
    assert res.exit_code == 0, res.output
    assert f"floor: system {floor:,} + tools 0 = {floor:,}; pinned in the history {reminder:,} (1 message: 3)" \
        in res.output


def test_a_large_max_tokens_lowers_the_budget_for_check_as_for_plan(tmp_path: Path) -> None:
    """The budget is min(0.6 x window, window - reserve) (docs/configuration.md) in plan; check and the
    forecast used 0.6 x window alone, so with max_tokens 16,000 in a 32,000 window plan said #3 was above the
    trigger (12,800) while check was silent (its trigger was 15,360)."""
    words = [8000, 11000, 14000, 16500]
    recs = [{"window": 32000, "request": {"model": "gpt-4o", "max_tokens": 16000, "messages": [
        {"role": "system", "content": "Be brief."}, {"role": "user", "content": "word " * n}]},
        "response": {"choices": [{"message": {"role": "assistant", "content": "ok"}}]}} for n in words]
    log = tmp_path / "bigreserve.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in recs))
    budget, trigger = min(int(0.6 * 32000), 32000 - 16000), int(min(int(0.6 * 32000), 32000 - 16000) * 0.8)
    prompts = [O200K_FRAMING + TOK.count("Be brief.") + O200K_FRAMING + TOK.count("word " * n) + PRIMER
               for n in words]
    assert prompts[1] < trigger < prompts[2]
    doc = json.loads(CliRunner().invoke(main, ["check", str(log), "--json"]).output)
    assert (doc["forecast"]["budget_tokens"], doc["forecast"]["trigger_tokens"]) == (budget, trigger)
    crossed = [f["call"] for f in doc["flags"] if f["kind"] == "trigger_no_compaction"]
    assert crossed == [2]  # #3: above the trigger, and #4 did not compact
    res = CliRunner().invoke(main, ["plan", str(log), "--call", "3", "--json"])
    plan = json.loads(res.output)
    assert plan["budget_tokens"] == budget and plan["before_tokens"] == prompts[2]
    # The over-budget flag says what the budget is (it said "0.6 of the 32,000-token window" for 16,000).
    over = [f for f in doc["flags"] if f["kind"] == "over_budget"]
    assert [f["call"] for f in over] == [3]
    assert over[0]["reason"].endswith(f"is over the budget {budget:,} (the 32,000-token window minus the "
                                      "completion reserve 16,000, less than 0.6 of the window)")


def test_a_plan_that_keep_recent_blocks_says_to_lower_it(shared_logs: Path) -> None:
    """At a budget fraction of 0.1, the newest 6 exchanges left no cut that beats keeping everything, and the
    plan said only "raise the budget"; with keep_recent 0 the same call fits (the preview's `-` showed it)."""
    path = str(shared_logs / "claude-code" / "ccviewer_5c0375b4_v1.0.108_inline_sidechain.jsonl")
    args = ["plan", path, "--call", "19", "--budget-fraction", "0.1", "--json"]
    zero = json.loads(CliRunner().invoke(main, [*args, "--keep-recent", "0"]).output)
    assert zero["fits"]
    plan = json.loads(CliRunner().invoke(main, args).output)
    assert not plan["fits"]
    assert f"lower keep_recent (compacting the newest exchanges too gives {zero['after_tokens']:,} tokens)" \
        in plan["reason"]


def test_a_summary_larger_than_the_span_it_replaces_is_named(tmp_path: Path) -> None:
    """Compacting a 1,9xx-token older span into a 2,000-token summary makes the prompt bigger, so nothing was
    evicted, and the plan said only "raise the budget"."""
    msgs: list[dict] = [{"role": "system", "content": "You fix tests."},
                        {"role": "user", "content": "Fix the failing VAT test. " + "context " * 300}]
    for k in range(10):
        msgs.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"call_{k}", "type": "function", "function": {"name": "read", "arguments": f'{{"n": {k}}}'}}]})
        msgs.append({"role": "tool", "tool_call_id": f"call_{k}", "content": f"line {k} " * (60 if k < 4 else 200)})
    log = tmp_path / "bigsummary.jsonl"
    log.write_text(json.dumps({"request": {"model": "gpt-4o", "messages": msgs},
                               "response": {"choices": [{"message": {"role": "assistant", "content": "ok"}}]}}) + "\n")
    plan = json.loads(CliRunner().invoke(main, ["plan", str(log), "--window", "5000", "--json"]).output)
    rows = [m for m in plan["messages"] if m["fate"] != "pinned"]
    older = sum(m["tokens"] for m in rows[:-12])  # all but the newest 6 exchanges (a call and its result each)
    assert 0 < older <= 2000 and not plan["fits"] and plan["after_tokens"] == plan["before_tokens"]
    assert f"lower summary_tokens (a summary of ~2,000 tokens is larger than the {older:,} tokens it would " \
           "replace)" in plan["reason"]


def test_a_max_tokens_beyond_the_window_reserves_it_all_everywhere(tmp_path: Path) -> None:
    """max_tokens 40,000 in a 32,000 window: report, check and plan reserve the whole window (budget 0); the
    dashboard's eviction preview swapped it for 0.15 x window and said "fits, budget 19,200", and
    ContextBudget raised PolicyError."""
    from ctxwatch.budget import ContextBudget

    recs = [{"window": 32000, "request": {"model": "gpt-4o", "max_tokens": 40000, "messages": [
        {"role": "system", "content": "Be brief."}, {"role": "user", "content": "word " * (100 * (k + 1))}]},
        "response": {"choices": [{"message": {"role": "assistant", "content": "ok"}}]}} for k in range(3)]
    log = tmp_path / "b40k.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in recs))
    doc = json.loads(CliRunner().invoke(main, ["check", str(log), "--json"]).output)
    assert doc["forecast"]["budget_tokens"] == 0
    plan = json.loads(CliRunner().invoke(main, ["plan", str(log), "--json"]).output)
    assert plan["budget_tokens"] == 0 and not plan["fits"]
    budget = ContextBudget("gpt-4o", window=32000, max_tokens=40000)
    assert (budget.budget_tokens, budget.policy.reserve_total) == (0, 32000)


def _nofit_log(tmp_path: Path) -> Path:
    """One gpt-4o call: a system prompt, a 500-word task and 10 read calls with 300-word results (about 7k
    tokens), which no plan fits into a 4,000-token window's budget."""
    msgs: list[dict] = [{"role": "system", "content": "You fix tests."},
                        {"role": "user", "content": "Fix the failing VAT test. " + "context " * 500}]
    for k in range(10):
        msgs.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"call_{k}", "type": "function", "function": {"name": "read", "arguments": f'{{"n": {k}}}'}}]})
        msgs.append({"role": "tool", "tool_call_id": f"call_{k}", "content": f"line {k} " * 300})
    log = tmp_path / "nofit.jsonl"
    log.write_text(json.dumps({"request": {"model": "gpt-4o", "messages": msgs},
                               "response": {"choices": [{"message": {"role": "assistant", "content": "ok"}}]}}) + "\n")
    return log


def test_plan_does_not_advise_a_keep_recent_that_cannot_fit(tmp_path: Path) -> None:
    """The newest units blocked the fit, so the plan said "lower keep_recent", but with keep_recent 0 the
    summary and the re-injected task alone exceed the budget: the advice is now about those."""
    log = _nofit_log(tmp_path)
    args = ["plan", str(log), "--window", "4000", "--json"]
    zero = json.loads(CliRunner().invoke(main, [*args, "--keep-recent", "0"]).output)
    assert not zero["fits"]
    plan = json.loads(CliRunner().invoke(main, args).output)
    assert not plan["fits"] and "lower keep_recent" not in plan["reason"]
    assert (f"even compacting the newest exchanges gives {zero['after_tokens']:,} tokens; lower summary_tokens or "
            "re-inject less, or raise the budget") in plan["reason"]


def test_a_budget_capped_by_the_reserve_advises_lowering_the_reserve(tmp_path: Path) -> None:
    """With a reserve of 0.5 of a 4,000 window the budget is 2,000 (window - reserve), not 0.6 * 4,000 = 2,400:
    "raise the budget" (a larger fraction) could not help, lowering the reserve does.  With the default
    reserve (0.15: 3,400 left) the budget is the fraction's 2,400 and the advice stays.

    The advice is for the plan that compacts the newest exchanges too (keep_recent 0: about 2,530 tokens, between
    2,400 and 3,400).  At a fraction of 0.6 lowering the reserve alone reaches 0.6 * 4,000 = 2,400, short of it
    (the advice said "lower the reserve" all the same): the fraction must be raised too.  At 0.7 it reaches
    2,800, and lowering the reserve alone is the advice."""
    log = _nofit_log(tmp_path)
    args = ["plan", str(log), "--window", "4000", "--json"]
    need = json.loads(CliRunner().invoke(main, [*args, "--keep-recent", "0"]).output)["after_tokens"]
    assert 2400 < need <= 2800
    capped = json.loads(CliRunner().invoke(main, [*args, "--reserve", "0.5"]).output)
    assert capped["budget_tokens"] == 2000 and not capped["fits"]
    assert capped["reason"].endswith(f"even compacting the newest exchanges gives {need:,} tokens; lower "
                                     "summary_tokens or re-inject less, or lower the reserve and raise the budget (the "
                                     "budget is at most the window minus the reserve)")
    capped = json.loads(CliRunner().invoke(main, [*args, "--reserve", "0.5", "--budget-fraction", "0.7"]).output)
    assert capped["budget_tokens"] == 2000 and not capped["fits"]
    assert "raise the budget" not in capped["reason"]
    assert capped["reason"].endswith("or lower the reserve (the budget is the window minus the reserve)")
    plain = json.loads(CliRunner().invoke(main, args).output)
    assert plain["budget_tokens"] == 2400 and plain["reason"].endswith("or raise the budget")


def test_the_demo_call_60_is_not_advised_a_budget_it_cannot_have(tmp_path: Path) -> None:
    """The demo's call #60 (tester): its newest exchange alone, with the floor, is more than the 32,000-token
    window, yet the plan said "lower keep_recent or raise the budget"; even a fraction of 1 gives 32,000 - 2,000
    (max_tokens) = 30,000.  "(always kept)" was not true either: keep_recent 0 makes it fit."""
    run = tmp_path / "run.jsonl"
    assert CliRunner().invoke(main, ["demo", "--write", str(run)]).exit_code == 0
    args = ["plan", str(run), "--call", "60", "--json"]
    plan = json.loads(CliRunner().invoke(main, args).output)
    # budget min(0.6 * 32,000, 32,000 - 2,000) = 19,200
    assert plan["budget_tokens"] == 19200 and plan["after_tokens"] > 32000 and not plan["fits"]
    assert "the newest 1 exchange (kept by keep_recent 6)" in plan["reason"]
    assert plan["reason"].endswith(f"= {plan['after_tokens']:,} tokens, over the budget of 19,200 and the "
                                   "32,000-token window; lower keep_recent")
    assert json.loads(CliRunner().invoke(main, [*args, "--keep-recent", "0"]).output)["fits"]


def test_a_responses_capture_of_codex_pins_its_harness_messages(tmp_path: Path) -> None:
    """A Responses API request as Codex sends it, in the canonical wrapper: <user_instructions> became the
    re-injected "task" and <environment_context> was summarised; only the rollout reader labelled them."""
    items: list[dict] = [
        {"type": "message", "role": "user",
         "content": [{"type": "input_text", "text": "<user_instructions>\nBe careful.\n</user_instructions>"}]},
        {"type": "message", "role": "user",
         "content": [{"type": "input_text",
                      "text": "<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Fix the failing VAT test."}]}]
    for k in range(8):
        items += [{"type": "reasoning", "id": f"rs_{k}", "summary": [{"type": "summary_text", "text": "think " * 50}]},
                  {"type": "function_call", "call_id": f"c{k}", "name": "shell", "arguments": '{"cmd": "ls"}'},
                  {"type": "function_call_output", "call_id": f"c{k}", "output": "file " * 400}]
    log = tmp_path / "resp.jsonl"
    log.write_text(json.dumps({"window": 20000, "request": {"model": "gpt-5", "instructions": "You are Codex.",
                                                            "input": items},
                               "response": {"object": "response", "output": [],
                                            "usage": {"input_tokens": 9000, "output_tokens": 10}}}) + "\n")
    plan = json.loads(CliRunner().invoke(main, ["plan", str(log), "--keep-recent", "2", "--window", "10000",
                                                "--json"]).output)
    assert [m["fate"] for m in plan["messages"][:4]] == ["pinned", "pinned", "pinned", "summarised"]
    task = next(r for r in plan["reinject"] if r["kind"] == "task")
    assert '"Fix the failing VAT test."' in task["detail"]


def test_with_the_models_own_tokenizer_the_tool_schemas_take_the_gap(tmp_path: Path) -> None:
    """gpt-4o is counted with its own tokenizer, so the system prompt and messages are exact; the gap to the
    reported prompt is the tool schemas' (their rendering is not published).  plan scaled every count by it
    (system 20 in report, 23 in plan, "x1.16")."""
    tools = [{"type": "function", "function": {"name": "read_file", "description": "Read a file.",
                                               "parameters": {"type": "object", "properties": {
                                                   "path": {"type": "string"}}, "required": ["path"]}}}]
    system = "You are a careful coding agent. Reply as JSON with keys answer and reason."
    users = ["Fix the failing VAT test in tests/test_vat.py", "Now run the tests."]
    msgs = [{"role": "system", "content": system}, {"role": "user", "content": users[0]},
            {"role": "assistant", "content": "Looking."}, {"role": "user", "content": users[1]}]
    reported = 200
    log = tmp_path / "a4o.jsonl"
    log.write_text(json.dumps({"request": {"model": "gpt-4o", "tools": tools, "messages": msgs},
                               "response": {"usage": {"prompt_tokens": reported, "completion_tokens": 5}}}) + "\n")
    sys_t = O200K_FRAMING + TOK.count(system)
    counts = [O200K_FRAMING + TOK.count(m["content"]) for m in msgs[1:]]
    res = CliRunner().invoke(main, ["plan", str(log), "--json"])
    plan = json.loads(res.output)
    rows = plan["messages"]
    assert rows[0]["tokens"] == sys_t and [r["tokens"] for r in rows[1:]] == counts
    assert plan["before_tokens"] == reported
    text = CliRunner().invoke(main, ["plan", str(log)]).output
    tools_t = reported - PRIMER - sys_t - sum(counts)
    assert f"floor: system {sys_t:,} + tools {tools_t:,} = {sys_t + tools_t:,}" in text
    assert "tool schemas sized to the provider's reported prompt" in text and " x1." not in text


def test_plan_on_a_folder_looks_at_the_newest_sessions_last_call(tmp_path: Path) -> None:
    """`plan FOLDER` planned the last call read, which belongs to the file modified last, not to the newest
    session that the forecast and the dashboard pick.  "new" (calls at T0+1000 s on) sits in the older file."""
    import os

    def rec(i: int, session: str, t: float) -> dict:
        return {"timestamp": t, "session": session,
                "request": {"model": "gpt-4o", "messages": [{"role": "user", "content": f"{session} {i}"}]},
                "response": {"usage": {"prompt_tokens": 10 + i, "completion_tokens": 1}}}

    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text("".join(json.dumps(rec(i, "new", 1_700_001_000 + 10 * i)) + "\n" for i in range(3)))
    b.write_text("".join(json.dumps(rec(i, "old", 1_700_000_000 + 10 * i)) + "\n" for i in range(4)))
    os.utime(a, (1_000_000, 1_000_000))
    os.utime(b, (2_000_000, 2_000_000))
    code, out = run("plan", str(tmp_path))
    assert code == 0, out
    # ("new"'s last call: a.jsonl is read first, so its calls are #1-#3)
    assert out.splitlines()[0].startswith(f"{a}  #3 (line 3)"), out.splitlines()[0]


def test_a_call_whose_tools_are_not_in_the_log_is_planned_unscaled(tmp_path: Path) -> None:
    """`tools` that are not a list are unknown: plan counted them as 0 and scaled every message to the reported
    prompt (x2.46).  With the model's own tokenizer the gap is the tools', as for logged tools: the system prompt
    and the messages keep their exact counts, the same as in an identical call that logs its tools."""
    tool = {"type": "function", "function": {"name": "read", "description": "Read a file. " * 40,
                                             "parameters": {"type": "object", "properties": {}}}}
    msgs = [{"role": "system", "content": "You fix tests. " * 20}, {"role": "user", "content": "Fix it. " * 30}]
    good = {"request": {"model": "gpt-4o", "messages": msgs, "tools": [tool]},
            "response": {"id": "c1", "usage": {"prompt_tokens": 2000, "completion_tokens": 5}}}
    bad = {**good, "request": {**good["request"], "tools": "x"}, "response": {**good["response"], "id": "c2"}}
    log = tmp_path / "tools.jsonl"
    log.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    plans = [json.loads(CliRunner().invoke(main, ["plan", str(log), "--call", n, "--json"]).output) for n in "12"]
    assert [m["tokens"] for m in plans[1]["messages"]] == [m["tokens"] for m in plans[0]["messages"]]
    assert plans[1]["before_tokens"] == plans[0]["before_tokens"] == 2000
    out = CliRunner().invoke(main, ["plan", str(log), "--call", "2"]).output
    assert "tool schemas sized to the provider's reported prompt" in out and "(not in the log)" in out
    assert "sizes are" not in out  # (no scaling of every count)


def test_plan_text_rows_add_up(trace):
    """The text table has rows for what no message holds (the tool schemas, the reply primer), so its tokens
    column adds up to 'before', and its after column plus the sizes on the 'sent before' line to 'after'
    (an audit found 3 tokens missing, and the tool schemas only in the header)."""
    path, _bodies, last = trace
    code, out = run("plan", str(path), "--index", str(last), "--compact-at", "trigger", "--budget-fraction", "0.05",
                    "--keep-recent", "2", "--summary-tokens", "200")
    assert code == 0, out
    # (the message cell may hold spaces: "assistant → Bash", "tool result (Bash)")
    # (columns: #, message, tokens, after, saves, fate)
    rows = re.findall(r"^\s+(\d+|-) (\S.*?)\s+([\d,]+)\s+([\d,]+)\s+[\d,-]+  (\w+)", out, re.M)
    num = lambda s: int(s.replace(",", ""))  # noqa: E731
    assert ("-", "tools") in [(r[0], r[1]) for r in rows] and rows[-1][:2] == ("-", "primer")
    tools_row = next(r for r in rows if r[1] == "tools")
    header_tools = re.search(r"^floor: system [\d,]+ \+ tools ([\d,]+) = ", out, re.M).group(1)
    assert num(tools_row[2]) == num(tools_row[3]) == num(header_tools) > 0
    assert num(rows[-1][2]) == PRIMER
    before, after = map(num, re.search(r"before ([\d,]+) -> after ([\d,]+) tokens", out).groups())
    assert sum(num(r[2]) for r in rows) == before
    lead = re.search(r"sent before the kept history \(user messages\): (.*)$", out, re.M).group(1)
    sizes = [num(s) for s in re.findall(r"[a-z]+ ([\d,]+)", lead)]
    assert sizes[0] == 200  # the summary, at --summary-tokens
    assert sum(num(r[3]) for r in rows) + sum(sizes) == after


def test_plan_json_of_an_inferred_floor_does_not_split_it(shared_logs):
    """A Claude Code call's floor is inferred whole (the log has neither the system prompt nor the tools):
    plan --json gave it all as system_tokens and 0 as tools_tokens.  Its parts are null (unknown, never 0), the
    floor is the first row's, and the document still adds up."""
    path = shared_logs / "claude-code" / "spotter_subagent_parent.jsonl"
    code, out = run("plan", str(path), "--call", "8", "--json")
    assert code == 0, out
    doc = json.loads(out)
    assert doc["system_tokens"] is None and doc["tools_tokens"] is None
    code, rep = run("report", str(path), "--json")
    call = json.loads(rep)["calls"][7]
    assert call["system_tokens"] is None and call["floor_source"] == "inferred"
    assert doc["floor_tokens"] == doc["messages"][0]["tokens"] == call["floor_tokens"]
    assert doc["before_tokens"] == sum(m["tokens"] for m in doc["messages"]) + doc["overhead_tokens"] \
        == call["prompt_tokens_reported"]


def test_plan_names_tool_calls_as_the_dashboard_does(shared_logs: Path) -> None:
    """The plan's rows named tool calls by their tool-use ids (``calls toolu_01…``); they are named as the
    dashboard names them: ``assistant → Bash``, ``tool result (Bash)``.  Expected from the transcript with
    plain json: the tool_use blocks of the assistant messages before the planned call (line 34)."""
    import json as _json

    from click.testing import CliRunner as _Runner

    from ctxwatch.cli import main as _main

    path = shared_logs / "claude-code" / "spotter_tool_heavy.jsonl"
    by_message: dict[str, list[tuple[int, str]]] = {}
    for n, raw in enumerate(path.read_text().splitlines(), 1):
        d = _json.loads(raw)
        if d.get("type") == "assistant":
            for b in d["message"]["content"]:
                if b.get("type") == "tool_use":
                    by_message.setdefault(d["message"]["id"], []).append((n, b["name"]))
    expected = ["assistant → " + ", ".join(name for _n, name in uses)
                for uses in by_message.values() if uses[0][0] < 34]
    assert expected == ["assistant → Bash", "assistant → Bash", "assistant → WebSearch, Glob"]
    res = _Runner().invoke(_main, ["plan", str(path)])
    assert res.exit_code == 0, res.output
    rows = res.stdout.splitlines()
    assert "(line 34)" in rows[0]
    cells = [m.group(1) for r in rows if (m := re.match(r"\s*\d+ (.+?)\s{2,}", r))]
    assert [c for c in cells if "→" in c] == expected
    results = [r for r in rows if "tool result (" in r]
    assert [r.split("(")[1].split(")")[0] for r in results] == ["Bash", "Bash", "WebSearch", "Glob"]
    assert "toolu_" not in res.stdout


def test_plan_rows_fit_80_columns_with_long_tool_names(tmp_path: Path, shared_logs: Path) -> None:
    """A real session's tools renamed as an MCP server names them (46 characters): at 80 columns the message
    column is narrowed so that every row of the table fits, its fate on its own line's end; the labels keep
    their start ("assistant → mcp__github__…"); without a width the column keeps its 40 characters."""
    from ctxwatch.output.safetext import cells

    long = "mcp__github__create_pull_request_review_comment"
    out_lines = []
    for raw in (shared_logs / "claude-code" / "spotter_tool_heavy.jsonl").read_text().splitlines():
        d = json.loads(raw)
        m = d.get("message")
        for b in m.get("content") if isinstance(m, dict) and isinstance(m.get("content"), list) else []:
            if isinstance(b, dict) and b.get("type") == "tool_use":
                b["name"] = long
        out_lines.append(json.dumps(d))
    log = tmp_path / "mcp.jsonl"
    log.write_text("\n".join(out_lines) + "\n")
    narrow = CliRunner().invoke(main, ["plan", "--no-cache", str(log)], env={"COLUMNS": "80"}).stdout.splitlines()
    head = next(i for i, ln in enumerate(narrow) if ln.lstrip().startswith("# message"))
    rows = [ln for ln in narrow[head:] if re.match(r"\s+(\d+|-) ", ln)]
    assert len(rows) >= 6 and narrow[head].endswith("fate")
    assert all(cells(ln) <= 80 for ln in [narrow[head], *rows]), [ln for ln in rows if cells(ln) > 80]
    assert all(re.search(r"  (kept|pinned|evicted|summarised)(  ◆)?$", ln) for ln in rows), rows
    assert any("assistant → mcp__github__" in ln for ln in rows)
    wide = CliRunner().invoke(main, ["plan", "--no-cache", str(log)]).stdout.splitlines()
    assert any(f"assistant → {long}"[:39] + "…" in ln for ln in wide)
