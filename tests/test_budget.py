"""ContextBudget.fit end to end with a fake summariser, and CallLogger output read back."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from ctxwatch import CallLogger, ContextBudget
from ctxwatch.config import Settings
from ctxwatch.tokens import get_tokenizer

TOK = get_tokenizer("o200k_base")
PAD = "lorem ipsum dolor sit amet " * 60
SYSTEM = "Reply ONLY as JSON {\"answer\": string}."
EDIT_PARAMS = {"type": "object", "properties": {"file_path": {"type": "string"}}}
TOOLS = [{"type": "function", "function": {"name": "Edit", "description": "Edit a file.", "parameters": EDIT_PARAMS}}]


def openai_history(turns: int = 6) -> list[dict]:
    msgs: list[dict] = [{"role": "user", "content": "Fix the failing test in tests/test_x.py"}]
    for i in range(turns):
        msgs += [
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"call_{i}", "type": "function",
                 "function": {"name": "Edit", "arguments": json.dumps({"file_path": f"src/x{i}.py"})}}]},
            {"role": "tool", "tool_call_id": f"call_{i}", "content": PAD},
            {"role": "assistant", "content": f"step {i} done"},
            {"role": "user", "content": f"continue {i}"},
        ]
    return msgs


class FakeSummariser:
    def __init__(self) -> None:
        self.calls: list[list[dict]] = []

    def __call__(self, evicted: list[dict]) -> str:
        self.calls.append(evicted)
        return f"{len(evicted)} earlier messages: edited several files."


def tool_pairs_intact(msgs: list[dict]) -> None:
    calls = {tc["id"] for m in msgs for tc in m.get("tool_calls") or []}
    results = {m["tool_call_id"] for m in msgs if m.get("role") == "tool"}
    assert calls == results


def is_result(m: dict) -> bool:
    c = m.get("content")
    return m.get("role") == "tool" or (isinstance(c, list) and any(b.get("type") == "tool_result" for b in c))


def call_ids(m: dict) -> list[str]:
    ids = [tc["id"] for tc in m.get("tool_calls") or []]
    c = m.get("content")
    return ids + ([b["id"] for b in c if b.get("type") == "tool_use"] if isinstance(c, list) else [])


def result_ids(m: dict) -> list[str]:
    if m.get("role") == "tool":
        return [m["tool_call_id"]]
    c = m.get("content")
    return [b["tool_use_id"] for b in c if b.get("type") == "tool_result"] if isinstance(c, list) else []


def unit_starts(msgs: list[dict], unit: str) -> list[int]:
    """Where units start, worked out here from the dicts: a turn at a user message that is not a tool
    result; an exchange at any message that is not a tool result while no tool call awaits its result."""
    out, waiting = [], set()
    for i, m in enumerate(msgs):
        if m["role"] == "system":
            continue
        starts = not is_result(m) and (m["role"] == "user" if unit == "turn" else not waiting)
        if starts:
            out.append(i)
        waiting |= set(call_ids(m))
        waiting -= set(result_ids(m))
    return out


def non_system(out: list[dict]) -> list[dict]:
    return [m for m in out if m["role"] != "system"]


@pytest.mark.parametrize("unit", ["exchange", "turn"])
def test_fit_end_to_end_openai(unit):
    """compact_at="budget": the least eviction that fits (what ``ctxwatch plan`` previews)."""
    history = openai_history()
    budget = ContextBudget("gpt-4o", window=4000, system=SYSTEM, tools=TOOLS, unit=unit, compact_at="budget",
                           settings=Settings(budget_fraction=0.5, summary_tokens=40, keep_recent=2))
    summariser = FakeSummariser()
    out, report = budget.fit(history, summariser=summariser)

    # the system prompt is first and verbatim; the input list is untouched
    assert out[0] == {"role": "system", "content": SYSTEM}
    assert len(history) == 25
    # the summariser got the evicted span, the original dict objects, oldest first
    assert len(summariser.calls) == 1
    evicted = summariser.calls[0]
    assert evicted == history[: len(evicted)] and all(a is b for a, b in zip(evicted, history, strict=False))
    assert report.evicted == len(evicted) and report.mode == "summarise" and report.unit == unit
    # then the summary, then the re-injected task, then the kept units verbatim
    assert out[1]["role"] == "user" and out[1]["content"].endswith(summariser(evicted))
    assert out[2] == {"role": "user",
                      "content": "Original task (the first user message):\nFix the failing test in tests/test_x.py"}
    assert report.lead == ["summary", "task"]
    kept = history[len(evicted):]
    assert out[3:] == kept
    # the kept span starts on a unit; with turns that is a user message, with exchanges it may be the
    # assistant's reply inside the first turn, led by the summary (a user message)
    starts = unit_starts(history, unit)
    assert len(evicted) in starts
    assert report.kept_units == sum(1 for s in starts if s >= len(evicted))
    if unit == "turn":
        assert kept[0]["role"] == "user"
    assert non_system(out)[0]["role"] == "user"
    # the latest Edit (src/x5.py) is in the kept span, so the edited file needs no re-injection
    assert [k for k, _ in report.reinjected] == ["task"]
    assert [f.kind for f in report.plan.found] == ["task", "file"]
    tool_pairs_intact(out)
    # the newest 2 units are kept, and the plan keeps as much as fits: one more unit would not fit
    assert len(kept) >= len(history) - starts[-2]
    assert report.budget_tokens == 2000
    assert report.after_tokens == budget.count(out) <= report.budget_tokens and report.fits
    prev = max(s for s in starts if s < len(evicted))
    assert budget.count(out[:3] + history[prev:]) - report.summary_tokens + 40 > report.budget_tokens
    assert report.before_tokens == budget.count(history) > report.budget_tokens
    assert report.summary_tokens == 4 + TOK.count(out[1]["content"])  # o200k framing: 4 per message
    assert report.system_tokens == 4 + TOK.count(SYSTEM)
    assert report.tokenizer == "o200k_base" and report.exact and report.note is None


@pytest.mark.parametrize("unit", ["exchange", "turn"])
def test_fit_default_compacts_fully_at_the_trigger(unit):
    """The default (compact_at="trigger"): above the trigger everything older than the newest keep_recent
    units goes at once; the result is the system prompt, the summary, the re-injected items, those units."""
    history = openai_history()
    budget = ContextBudget("gpt-4o", window=4000, system=SYSTEM, tools=TOOLS, unit=unit,
                           settings=Settings(budget_fraction=0.5, summary_tokens=40, keep_recent=2))
    assert budget.policy.compact_at == "trigger" and budget.policy.trigger_tokens == 1600  # 0.8 x 0.5 x 4000
    summariser = FakeSummariser()
    out, report = budget.fit(history, summariser=summariser)
    starts = unit_starts(history, unit)
    full = starts[-2]  # the newest 2 units start here
    assert summariser.calls == [history[:full]] and report.evicted == full
    task = "Original task (the first user message):\nFix the failing test in tests/test_x.py"
    lead = [{"role": "user", "content": "Summary of the earlier conversation (older turns were compacted):\n"
             f"{full} earlier messages: edited several files."}, {"role": "user", "content": task}]
    if unit == "exchange":  # the newest 2 exchanges are "step 5 done" and "continue 5": the last Edit goes too
        lead.append({"role": "user", "content": "File being edited: src/x5.py"})
    assert out == [{"role": "system", "content": SYSTEM}, *lead, *history[full:]]
    assert report.lead == ["summary", "task", *(["file"] if unit == "exchange" else [])]
    assert report.kept_units == 2 and report.compact_at == "trigger" and report.trigger_tokens == 1600
    assert report.before_tokens == budget.count(history) > 1600
    assert report.after_tokens == budget.count(out) < 1600 and report.fits
    tool_pairs_intact(out)
    # plan() previews the same, or the minimal eviction with compact_at="budget"
    assert [m.fate for m in budget.plan(history).messages][1:] == ["summarised"] * full + ["kept"] * (25 - full)
    minimal = budget.plan(history, compact_at="budget")
    assert minimal.compact_at == "budget" and 0 < len(minimal.evicted) < full
    # at or below the trigger nothing changes (and the summariser is not called)
    short = history[:5]
    assert budget.count(short) <= 1600
    out, report = budget.fit(short, summariser=summariser)
    assert non_system(out) == short and report.evicted == 0 and len(summariser.calls) == 1
    # an assumed summary that leaves the plan above the trigger, and a real one that does not: both said
    big = ContextBudget("gpt-4o", window=4000, system=SYSTEM, tools=TOOLS, unit=unit,
                        settings=Settings(budget_fraction=0.5, summary_tokens=1550, keep_recent=2))
    out, report = big.fit(history, summariser=FakeSummariser())
    assert report.planned_after_tokens > 1600 >= report.after_tokens == big.count(out)
    assert "still above the compaction trigger of 1,600 after the compaction" in report.reason
    assert f"with the real summary the result is {report.after_tokens:,} tokens, not above the compaction trigger" \
        in report.reason


def read_loop(budget: ContextBudget, steps: int, log_path) -> list:
    """The loop of examples/budget_loop.py (a stand-in model reads one ~1,500-token file per call), logged
    with CallLogger; returns the reports of every fit and checks each request against the count here."""
    msgs: list[dict] = [{"role": "user", "content": "Find where VAT is rounded and fix the off-by-one-cent bug."}]
    reports = []

    def summarise(evicted: list[dict]) -> str:
        return "Earlier steps read: " + ", ".join(f"src/module_{i}.py" for i in range(len(evicted)))

    with CallLogger(log_path) as log:
        for step in range(steps):
            msgs, report = budget.fit(msgs, summariser=summarise)
            assert report.after_tokens == budget.count(msgs)
            reports.append(report)
            log.log({"model": "gpt-4o", "messages": msgs, "max_tokens": 1024}, {"choices": []}, window=budget.window)
            msgs.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": f"call_{step}", "type": "function",
                 "function": {"name": "read_file", "arguments": json.dumps({"path": f"src/module_{step}.py"})}}]})
            msgs.append({"role": "tool", "tool_call_id": f"call_{step}", "content": "x = 1\n" * 300})
    return reports


def check_flags(path) -> list[str]:
    """The flag kinds ``ctxwatch check --json`` reports for a log."""
    from click.testing import CliRunner

    from ctxwatch.cli import main

    res = CliRunner().invoke(main, ["check", str(path), "--json"])
    assert res.exit_code == 0, res.output
    return [f["kind"] for f in json.loads(res.output)["flags"]]


def test_loop_compacts_at_the_trigger_and_then_runs_below_it(tmp_path):
    """End to end: with compact_at="trigger" every request is below the trigger, a compaction happens exactly
    when the prompt crossed it, and ``ctxwatch check`` sees no "trigger crossed and no compaction followed";
    compacting at the budget instead compacts on most calls and leaves the requests above the trigger."""
    settings = Settings(summary_tokens=300, keep_recent=3)
    steps = 60
    loops = {}
    for compact_at in ("trigger", "budget"):
        budget = ContextBudget("gpt-4o", window=32_000, max_tokens=1024, settings=settings, compact_at=compact_at)
        log = tmp_path / f"{compact_at}.jsonl"
        loops[compact_at] = (read_loop(budget, steps, log), check_flags(log))
    reports, flags = loops["trigger"]
    trigger = int(int(32_000 * 0.6) * 0.8)  # 15,360: 0.8 of the 0.6 x window budget
    assert {r.trigger_tokens for r in reports} == {trigger}
    for r in reports:
        crossed = r.before_tokens > trigger
        assert (r.evicted > 0) == crossed  # compaction only (and always) when the trigger is crossed
        assert r.fits and r.after_tokens < trigger
        if crossed:  # the newest 3 exchanges stay, led by the summary and the re-injected task
            assert r.kept == 6 and r.kept_units == 3 and r.lead == ["summary", "task"]
    compactions = sum(r.evicted > 0 for r in reports)
    assert "trigger_no_compaction" not in flags and flags.count("compaction") == compactions

    b_reports, b_flags = loops["budget"]
    b_compactions = sum(r.evicted > 0 for r in b_reports)
    assert compactions >= 1 and 4 * compactions <= b_compactions
    assert all(r.fits for r in b_reports) and any(r.after_tokens > trigger for r in b_reports)
    assert "trigger_no_compaction" in b_flags


def agent_loop(steps: int = 10) -> list[dict]:
    """One user prompt followed by a tool loop (the shape of Claude Code / Codex runs): one turn."""
    msgs: list[dict] = [{"role": "user", "content": "Fix the failing test in tests/test_x.py"}]
    for i in range(steps):
        msgs += [
            {"role": "assistant", "content": f"looking at part {i}", "tool_calls": [
                {"id": f"call_{i}", "type": "function",
                 "function": {"name": "Read", "arguments": json.dumps({"file_path": f"src/x{i}.py"})}}]},
            {"role": "tool", "tool_call_id": f"call_{i}", "content": PAD},
        ]
    return msgs


def test_fit_agent_loop_evicts_older_exchanges_inside_the_one_turn():
    history = agent_loop()
    settings = Settings(budget_fraction=0.5, summary_tokens=40, keep_recent=3)
    # turns: the whole loop is one turn, so with keep_recent >= 1 nothing can go
    turn = ContextBudget("gpt-4o", window=4000, system=SYSTEM, settings=settings, unit="turn")
    out, report = turn.fit(history, summariser=FakeSummariser())
    assert report.evicted == 0 and not report.fits and "newest 1 turn (kept by keep_recent 3)" in report.reason
    assert non_system(out) == history

    # exchanges: the older exchanges are summarised, the newest 3 kept (at least), the result fits
    budget = ContextBudget("gpt-4o", window=4000, system=SYSTEM, settings=settings)
    out, report = budget.fit(history, summariser=FakeSummariser())
    assert report.fits and report.after_tokens == budget.count(out) <= 2000
    n_gone = report.evicted
    assert n_gone > 1 and history[n_gone]["role"] == "assistant"  # the cut is inside the user turn
    assert 3 <= report.kept_units == (len(history) - n_gone) // 2
    body = non_system(out)
    assert [m["role"] for m in body[:2]] == ["user", "user"]  # the summary, then the re-injected task
    assert body[0]["content"].startswith("Summary of the earlier conversation")
    assert body[1]["content"] == "Original task (the first user message):\n" + history[0]["content"]
    assert body[2:] == history[n_gone:] and report.lead == ["summary", "task"]
    tool_pairs_intact(out)
    assert "the cut falls inside the user turn" in report.reason


def test_fit_agent_loop_drop_mode_reinjects_the_task_or_keeps_the_turn():
    history = agent_loop()
    settings = Settings(budget_fraction=0.5, keep_recent=3)
    # drop mode (no summariser) with reinjection: the re-injected task is the user message that leads
    budget = ContextBudget("gpt-4o", window=4000, system=SYSTEM, settings=settings)
    out, report = budget.fit(history)
    body = non_system(out)
    assert report.mode == "drop" and report.fits and report.evicted > 1
    assert body[0] == {"role": "user",
                       "content": "Original task (the first user message):\n" + history[0]["content"]}
    assert body[0]["role"] == "user" and body[1]["role"] == "assistant" and report.lead[0] == "task"
    assert body[-(len(history) - report.evicted):] == history[report.evicted:]
    tool_pairs_intact(out)
    # drop mode without reinjection: nothing could start the history but the prompt itself, so the cut
    # goes back to it (nothing evicted) and the reason says so
    bare = ContextBudget("gpt-4o", window=4000, system=SYSTEM, settings=settings, reinject=False)
    out, report = bare.fit(history)
    assert report.evicted == 0 and not report.fits and non_system(out) == history
    assert "drop mode: the sent history must start on a user message" in report.reason
    assert "moved back to the start: nothing is evicted" in report.reason


def test_fit_under_budget_changes_nothing_and_does_not_summarise():
    history = openai_history(2)
    budget = ContextBudget("gpt-4o", window=100_000, system=SYSTEM, tools=TOOLS)
    summariser = FakeSummariser()
    out, report = budget.fit(history, summariser=summariser)
    assert out == [{"role": "system", "content": SYSTEM}, *history]
    assert summariser.calls == [] and report.evicted == 0 and report.fits
    assert report.after_tokens == report.before_tokens
    # a history that already carries the same system message is not given a second one
    out2, report2 = budget.fit(out, summariser=summariser)
    assert out2 == out and report2.before_tokens == report.before_tokens


def test_tool_call_arguments_are_counted_in_history():
    budget = ContextBudget("gpt-4o", window=100_000)
    big_args = json.dumps({"q": PAD})
    base = [{"role": "user", "content": "q"}]
    with_call = [*base, {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": big_args}}]}]
    # framing 4 + name + arguments + 3 for the call wrapper
    assert budget.count(with_call) - budget.count(base) == 4 + TOK.count("lookup") + TOK.count(big_args) + 3


def test_fit_anthropic_shape_keeps_tool_use_with_tool_result():
    history: list[dict] = [{"role": "user", "content": "Refactor the parser"}]
    for i in range(5):
        history += [
            {"role": "assistant", "content": [{"type": "text", "text": "reading"},
                                              {"type": "tool_use", "id": f"toolu_{i}", "name": "Read",
                                               "input": {"file_path": f"/p/{i}.py"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": PAD}]},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": [{"type": "text", "text": f"next {i}"}]},
        ]
    budget = ContextBudget("claude-sonnet-4-5", window=3000, system=SYSTEM,
                           settings=Settings(budget_fraction=0.5, summary_tokens=30, keep_recent=1))
    assert budget.provider == "anthropic" and not budget.exact
    out, report = budget.fit(history, summariser=FakeSummariser())
    assert all(m["role"] != "system" for m in out)  # Anthropic: pass budget.system as the system parameter
    uses = {b["id"] for m in out if isinstance(m["content"], list) for b in m["content"] if b["type"] == "tool_use"}
    results = {b["tool_use_id"] for m in out if isinstance(m["content"], list) for b in m["content"]
               if b["type"] == "tool_result"}
    assert uses == results
    assert report.fits and report.after_tokens == budget.count(out)
    assert report.after_tokens >= budget.system_tokens  # the system prompt is still counted in the floor


def test_fit_without_summariser_drops_and_says_so():
    budget = ContextBudget("gpt-4o", window=4000, settings=Settings(budget_fraction=0.5, keep_recent=1))
    out, report = budget.fit(openai_history())
    assert report.mode == "drop" and report.summary_tokens == 0 and "dropped" in report.reason
    assert not any(str(m.get("content", "")).startswith("Summary of the earlier") for m in out)
    tool_pairs_intact(out)


def test_errors():
    with pytest.raises(ValueError, match="window"):
        ContextBudget("no-such-model-xyz")
    budget = ContextBudget("gpt-4o", window=2000, settings=Settings(budget_fraction=0.5, keep_recent=1))
    with pytest.raises(TypeError):
        budget.fit(openai_history(), summariser=lambda ev: 42)  # type: ignore[arg-type,return-value]
    with pytest.raises(TypeError):
        budget.fit(["not a dict"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="unit"):
        ContextBudget("gpt-4o", window=2000, unit="message")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="compact_at"):
        ContextBudget("gpt-4o", window=2000, compact_at="window")  # type: ignore[arg-type]


def test_window_from_catalogue():
    assert ContextBudget("gpt-4o").window == 128_000


# --- CallLogger -----------------------------------------------------------------------------------------

class SdkLike:
    """Mimics an SDK response object (pydantic-style model_dump), without importing any SDK."""

    def model_dump(self) -> dict:
        return {"id": "chatcmpl-2", "choices": [{"message": {"role": "assistant", "content": "hi"}}],
                "usage": {"prompt_tokens": 20, "completion_tokens": 2, "total_tokens": 22}}


def test_call_logger_writes_canonical_records(tmp_path):
    path = tmp_path / "calls.jsonl"
    msgs = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "hi"}]
    resp = {"id": "chatcmpl-1", "choices": [{"message": {"role": "assistant", "content": "{}"}}],
            "usage": {"prompt_tokens": 31, "completion_tokens": 3, "total_tokens": 34}}
    with CallLogger(path) as log:
        log.log({"model": "gpt-4o", "messages": msgs, "tools": TOOLS, "max_tokens": 256}, resp,
                timestamp=datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC))
    before = datetime.now(UTC).replace(microsecond=0)  # (the record keeps milliseconds: compare to the second)
    with CallLogger(path) as log:  # append mode: a second logger adds to the file
        log.log_call("gpt-4o", msgs, SdkLike())
    after = datetime.now(UTC)
    lines = path.read_text().splitlines()
    assert len(lines) == 2
    first, second = (json.loads(line) for line in lines)
    assert first == {"timestamp": "2025-01-02T03:04:05.000Z",
                     "request": {"model": "gpt-4o", "messages": msgs, "tools": TOOLS, "max_tokens": 256},
                     "response": resp}
    assert second["request"] == {"model": "gpt-4o", "messages": msgs}
    assert second["response"]["usage"]["prompt_tokens"] == 20
    ts = datetime.fromisoformat(second["timestamp"].replace("Z", "+00:00"))
    assert ts.tzinfo is not None and before <= ts <= after  # (no timestamp given: the time of the call)

    # ctxwatch's own reader reads it back
    from ctxwatch.engine import load_run

    run = load_run(str(path))
    assert [c.usage.prompt_total for c in run.calls] == [31, 20]
    assert run.calls[0].tools_tokens and run.calls[0].max_output_tokens == 256


def test_call_logger_rejects_bad_requests_and_closed(tmp_path):
    log = CallLogger(tmp_path / "x.jsonl")
    with pytest.raises(ValueError):
        log.log({"messages": []}, {})
    log.close()
    with pytest.raises(ValueError, match="closed"):
        log.log({"model": "m", "messages": []}, {})


def test_call_logger_writes_a_lone_surrogate_instead_of_stopping_the_loop(tmp_path) -> None:
    """A tool output decoded with errors="surrogateescape" holds a lone surrogate, which orjson refuses: the
    logger raised TypeError in the user's own loop.  The call is logged with the surrogate as its JSON escape,
    and ctxwatch reads it back (the message text shows U+FFFD, its reported usage is the response's)."""
    from ctxwatch.budget import CallLogger, utc_timestamp
    from ctxwatch.engine import load_run

    log = tmp_path / "calls.jsonl"
    text = b"caf\xff".decode("utf-8", "surrogateescape")
    with CallLogger(str(log)) as logger:
        logger.log({"model": "gpt-4o", "messages": [{"role": "user", "content": text}]},
                   {"usage": {"prompt_tokens": 11, "completion_tokens": 2}})
    raw = log.read_bytes()
    assert b'"caf\\udcff"' in raw
    run = load_run(str(log))
    assert [c.usage.prompt_total for c in run.calls] == [11] and run.issues == []
    with pytest.raises(ValueError, match="not a date"):
        utc_timestamp(1e20)
