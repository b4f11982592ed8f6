"""Eviction planner: property tests (hypothesis) and failure cases B24 / B25.

Expected values are computed here from the messages and the plan's own per-message fates, with a separate
turn/tool-pair analysis written for the test, never by calling planner internals.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxwatch.model import Message, Part
from ctxwatch.planner import Plan, Policy, PolicyError, plan_messages
from ctxwatch.tokens import counter_for, get_tokenizer

COUNTER = counter_for("gpt-4o", "openai")
TOK = get_tokenizer("o200k_base")
GONE = ("summarised", "evicted")


def text(role: str, s: str) -> Message:
    return Message(role, [Part("text", s)])


# --- independent analysis used by the assertions ------------------------------------------------------

def is_result(m: Message) -> bool:
    """A tool result: an OpenAI ``tool`` message or a message holding a ``tool_result`` part."""
    return m.role == "tool" or any(p.kind == "tool_result" for p in m.parts)


def turn_starts(msgs: list[Message]) -> list[int]:
    """Positions of user messages that are not tool results (written independently of the planner)."""
    return [i for i, m in enumerate(msgs) if m.role == "user" and not is_result(m)]


def pair_positions(msgs: list[Message]) -> dict[str, set[int]]:
    """call id -> positions of every message that makes or answers it."""
    out: dict[str, set[int]] = {}
    for i, m in enumerate(msgs):
        for p in m.parts:
            if p.kind in ("tool_call", "tool_result") and p.call_id:
                out.setdefault(p.call_id, set()).add(i)
    return out


def exchange_starts(msgs: list[Message]) -> list[int]:
    """Positions where an exchange starts: a history message that is not a tool result and does not sit
    strictly after a tool call and at or before one of its results (so a call and its results are one
    exchange, and anything interleaved between them joins it)."""
    inside: set[int] = set()
    for pos in pair_positions(msgs).values():
        inside.update(range(min(pos) + 1, max(pos) + 1))
    return [i for i, m in enumerate(msgs) if m.role not in ("system", "developer") and not is_result(m)
            and i not in inside]


def unit_starts(msgs: list[Message], unit: str) -> list[int]:
    return exchange_starts(msgs) if unit == "exchange" else turn_starts(msgs)


def fates_by_source(plan: Plan) -> dict[int, str]:
    return {m.source_index: m.fate for m in plan.messages if m.source_index is not None}


# --- hypothesis strategy: conversations of turns with OpenAI or Anthropic tool calls ---------------------

WORDS = st.sampled_from(["alpha", "beta", "gamma", "delta", "lorem", "ipsum", "x", "{}", "path/to/file.py"])


@st.composite
def conversations(draw: st.DrawFn) -> tuple[list[Message], list[int]]:
    """(messages, token counts): optional system message, optional assistant preamble, then turns of
    assistant texts and tool exchanges: OpenAI (one ``tool`` message per result), Anthropic (all results in
    one user message, or one user message per result as Claude Code logs them), and rarely two assistant
    calls whose results come after both (interleaved)."""
    msgs: list[Message] = []
    if draw(st.booleans()):
        msgs.append(text("system", "You are a placeholder assistant."))
    if draw(st.integers(0, 5)) == 0:
        msgs.append(text("assistant", "hello"))
    n_turns = draw(st.integers(0, 6))
    cid = 0

    def ids(k: int) -> list[str]:
        nonlocal cid
        out = [f"call_{cid + j}" for j in range(k)]
        cid += k
        return out

    def call_msg(call_ids: list[str]) -> Message:
        prefix = [Part("text", "calling")] if draw(st.booleans()) else []
        return Message("assistant", prefix + [Part("tool_call", '{"q": 1}', name="f", call_id=i) for i in call_ids])

    for _ in range(n_turns):
        msgs.append(text("user", " ".join(draw(st.lists(WORDS, min_size=1, max_size=4)))))
        for _ in range(draw(st.integers(0, 5))):
            kind = draw(st.sampled_from(["text", "openai", "anthropic", "claude_code", "text", "openai",
                                         "anthropic", "claude_code", "interleaved"]))
            if kind == "text":
                msgs.append(text("assistant", "ok"))
                continue
            if kind == "interleaved":
                a, b = ids(1), ids(1)
                msgs += [call_msg(a), call_msg(b)]
                msgs += [Message("tool", [Part("tool_result", "result", call_id=i)]) for i in (*a, *b)]
                continue
            call_ids = ids(draw(st.integers(1, 3)))
            msgs.append(call_msg(call_ids))
            if kind == "openai":
                msgs.extend(Message("tool", [Part("tool_result", "result", call_id=i)]) for i in call_ids)
            elif kind == "claude_code":
                msgs.extend(Message("user", [Part("tool_result", "result", call_id=i)]) for i in call_ids)
            else:
                msgs.append(Message("user", [Part("tool_result", "result", call_id=i) for i in call_ids]))
    tokens = [draw(st.integers(1, 400)) for _ in msgs]
    return msgs, tokens


UNITS = ("exchange", "turn")
COMPACT_AT = ("budget", "trigger")

policies = st.builds(
    Policy,
    window=st.integers(200, 6000),
    budget_fraction=st.sampled_from([0.3, 0.6, 1.0]),
    trigger=st.sampled_from([0.5, 0.8, 1.0]),
    reserve=st.sampled_from([0.0, 0.15]),
    keep_recent=st.integers(0, 8),
    mode=st.sampled_from(["summarise", "drop"]),
    summary_tokens=st.integers(0, 300),
    unit=st.sampled_from(UNITS),
    reinject_task=st.booleans(),
    compact_at=st.sampled_from(COMPACT_AT),
)

PROP = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def make_plan(conv: tuple[list[Message], list[int]], policy: Policy, with_blocks: bool = True) -> Plan:
    msgs, tokens = conv
    return plan_messages(msgs, policy, system=["pinned system block"] if with_blocks else None,
                         tools=[{"type": "function", "function": {"name": "f", "parameters": {}}}],
                         counter=COUNTER, tokens=tokens)


@PROP
@given(conversations(), policies)
def test_system_is_never_evicted(conv, policy):
    plan = make_plan(conv, policy)
    assert plan.messages[0].role == "system" and plan.messages[0].source_index is None
    for m in plan.messages:
        if m.role == "system":
            assert m.fate == "pinned" and m.tokens_after == m.tokens


@PROP
@given(conversations(), policies)
def test_tool_calls_and_results_move_together(conv, policy):
    msgs, _ = conv
    plan = make_plan(conv, policy)
    fates = fates_by_source(plan)
    for cid, positions in pair_positions(msgs).items():
        kept = {fates[i] == "kept" for i in positions}
        assert len(kept) == 1, f"{cid} split: {[(i, fates[i]) for i in sorted(positions)]}"


@PROP
@given(conversations(), policies)
def test_newest_units_are_kept_and_kept_history_starts_on_a_unit(conv, policy):
    msgs, _ = conv
    plan = make_plan(conv, policy)
    fates = fates_by_source(plan)
    starts = unit_starts(msgs, policy.unit)
    if policy.keep_recent and starts:
        first_protected = starts[max(len(starts) - policy.keep_recent, 0)]
        for i in range(first_protected, len(msgs)):
            assert fates[i] in ("kept", "pinned"), (i, fates[i])
    kept = [i for i in range(len(msgs)) if fates[i] == "kept"]
    if any(fates[i] in GONE for i in range(len(msgs))) and kept:
        assert kept[0] in starts
        # everything after the first kept message is kept (one contiguous tail)
        assert all(fates[i] in ("kept", "pinned") for i in range(kept[0], len(msgs)))
        assert plan.kept_units == sum(1 for s in starts if s >= kept[0])


@PROP
@given(conversations(), policies)
def test_sent_history_starts_with_a_user_message(conv, policy):
    """What is sent after an eviction = the summary (summarise mode) and the re-injected items, all user
    messages, then the kept history; it must start with a user message and never be empty."""
    msgs, _ = conv
    plan = make_plan(conv, policy)
    fates = fates_by_source(plan)
    gone = [i for i in fates if fates[i] in GONE]
    if not gone:
        assert plan.lead == []
        return
    lead = (["summary"] if policy.mode == "summarise" else []) + [r.kind for r in plan.reinject]
    assert plan.lead == lead
    assert all(r.kind != "task" or policy.reinject_task for r in plan.reinject)
    kept = [i for i in range(len(msgs)) if fates[i] == "kept"]
    sent_roles = ["user"] * len(lead) + [msgs[i].role for i in kept]
    assert sent_roles, "an eviction must not leave an empty history"
    assert sent_roles[0] == "user"
    if not lead:
        assert not is_result(msgs[kept[0]])  # a bare tool result cannot open a request either
    if kept and kept[0] not in turn_starts(msgs):
        assert policy.unit == "exchange" and "the cut falls inside" in plan.reason


@PROP
@given(conversations(), policies)
def test_sizes_add_up_and_fit_means_within_budget(conv, policy):
    msgs, tokens = conv
    plan = make_plan(conv, policy)
    tools = TOK.count('{"type":"function","function":{"name":"f","parameters":{}}}') + 12 + 7
    system = COUNTER.per_message + TOK.count("pinned system block")
    pinned = system + sum(t for m, t in zip(msgs, tokens, strict=True) if m.role == "system")
    assert plan.before_tokens == pinned + tools + sum(t for m, t in zip(msgs, tokens, strict=True)
                                                     if m.role != "system")
    fates = fates_by_source(plan)
    gone = [i for i in fates if fates[i] in GONE]
    expected_after = pinned + tools + sum(tokens[i] for i in fates if fates[i] == "kept")
    if gone:
        expected_after += (policy.summary_tokens if policy.mode == "summarise" else 0)
        expected_after += sum(r.tokens for r in plan.reinject)
    else:
        assert plan.reinject == []
    assert plan.after_tokens == expected_after
    assert plan.budget_tokens == min(int(policy.window * policy.budget_fraction),
                                     policy.window - int(policy.window * policy.reserve))
    if plan.fits:
        assert plan.after_tokens <= plan.budget_tokens
    else:
        assert plan.after_tokens > plan.budget_tokens and "does not fit" in plan.reason
    assert plan.compact_at == policy.compact_at
    # the prompt compacts above the budget (compact_at="budget") or above the trigger ("trigger")
    trigger = int(plan.budget_tokens * policy.trigger)
    assert plan.trigger_tokens == trigger
    if plan.before_tokens <= (plan.budget_tokens if policy.compact_at == "budget" else trigger):
        assert not gone and plan.fits and plan.after_tokens == plan.before_tokens
    fate_word = "summarised" if policy.mode == "summarise" else "evicted"
    assert all(fates[i] == fate_word for i in gone)


@PROP
@given(conversations(), policies, st.integers(0, 8))
def test_shrinking_keep_recent_never_increases_planned_size(conv, policy, smaller):
    big = make_plan(conv, policy)
    small = make_plan(conv, replace(policy, keep_recent=min(smaller, policy.keep_recent)))
    assert small.after_tokens <= big.after_tokens


@PROP
@given(conversations(), policies)
def test_exchanges_fit_whenever_turns_fit(conv, policy):
    """With the same keep_recent, when no user text sits between a tool call and its result (as generated
    here) every turn start is an exchange start, so every cut the turn plan may take is open to the exchange
    plan too: whenever the turn plan fits the exchange plan fits (it may keep more history, so it can be
    larger), and when it does not fit it is no larger than the turn plan.  Histories with an assistant
    preamble before the first user message are skipped: the preamble is an exchange but belongs to no turn,
    so the same keep_recent protects it with exchanges and not with turns."""
    msgs, _ = conv
    history = [m for m in msgs if m.role != "system"]
    if history and (history[0].role != "user" or is_result(history[0])):
        return  # a preamble before the first user turn is an exchange, but no turn: keep_recent differs
    turn = make_plan(conv, replace(policy, unit="turn"))
    exchange = make_plan(conv, replace(policy, unit="exchange"))
    assert exchange.fits or not turn.fits
    if not exchange.fits:
        assert exchange.after_tokens <= turn.after_tokens


@PROP
@given(conversations(), policies)
def test_works_from_counts_only_and_pinned_system_messages(conv, policy):
    # no system blocks: a system message in the list is the pinned prefix
    plan = make_plan(conv, policy, with_blocks=False)
    assert all(m.fate == "pinned" for m in plan.messages if m.role == "system")
    assert [m.index for m in plan.messages] == list(range(len(plan.messages)))
    doc = plan.to_json()
    assert set(doc) == {"messages", "before_tokens", "after_tokens", "budget_tokens", "fits", "reason", "reinject",
                        "system_tokens", "tools_tokens", "floor_tokens", "summary_tokens", "overhead_tokens"}
    assert all(set(m) == {"index", "number", "role", "tokens", "tokens_after", "fate", "saves", "offender"}
               for m in doc["messages"])


@PROP
@given(conversations(), policies, st.integers(0, 5))
def test_plan_json_adds_up_from_the_document_alone(conv, policy, overhead):
    """``before`` is the rows + the tool schemas + the overhead (the tools have no row); ``after`` is the rows'
    after + the tool schemas + the summary + the re-injected items + the overhead."""
    msgs, tokens = conv
    plan = plan_messages(msgs, policy, system=["pinned system block"],
                         tools=[{"type": "function", "function": {"name": "f", "parameters": {}}}],
                         counter=COUNTER, tokens=tokens, overhead=overhead)
    doc = plan.to_json()
    rows = doc["messages"]
    assert doc["overhead_tokens"] == overhead
    assert doc["tools_tokens"] == TOK.count('{"type":"function","function":{"name":"f","parameters":{}}}') + 12 + 7
    assert doc["before_tokens"] == sum(m["tokens"] for m in rows) + doc["tools_tokens"] + overhead
    assert doc["after_tokens"] == (sum(m["tokens_after"] for m in rows) + doc["tools_tokens"] + doc["summary_tokens"]
                                   + sum(r["tokens"] for r in doc["reinject"]) + overhead)
    assert all(m["tokens_after"] in (0, m["tokens"]) for m in rows)
    assert doc["summary_tokens"] in (0, policy.summary_tokens if policy.mode == "summarise" else 0)


# --- compact_at="trigger": a full compaction above the trigger, nothing below it ---------------------------

TASK_HEADER = "Original task (the first user message):\n"


def floor_tokens(msgs: list[Message], tokens: list[int]) -> int:
    """The floor of :func:`make_plan`, counted here: the system block, system messages and the one tool."""
    tools = TOK.count('{"type":"function","function":{"name":"f","parameters":{}}}') + 12 + 7
    system = COUNTER.per_message + TOK.count("pinned system block")
    return system + tools + sum(t for m, t in zip(msgs, tokens, strict=True) if m.role == "system")


def reference_trigger_cut(msgs: list[Message], tokens: list[int], policy: Policy,
                          floor: int) -> tuple[int, int, int | None]:
    """The compact_at="trigger" plan worked out here for the generated conversations, whose only
    re-injection candidate is the task (tool "f" is no task-list, plan or edit tool and the texts hold no
    "Plan:" line).  A cut is the index of the first kept message (``len(msgs)``: all history goes).

    Returns ``(cut, size, full)``: the chosen cut and its prompt size, and ``full``: the start of the newest
    ``keep_recent`` units when that cut is allowed (``None`` when nothing may go).  The candidates are
    "nothing evicted", the unit starts up to ``full`` and (keep_recent 0) the end; one is allowed when the
    sent history starts on a user message: the summary, the re-injected task or a user message at the cut.
    The smallest plan wins, ties to the later cut.
    """
    hist = [i for i, m in enumerate(msgs) if m.role != "system"]
    before = floor + sum(tokens[i] for i in hist)
    if not hist:
        return len(msgs), before, None
    starts = unit_starts(msgs, policy.unit)
    users = turn_starts(msgs)
    task_pos = users[0] if users else None
    task = COUNTER.per_message + TOK.count(TASK_HEADER + msgs[task_pos].parts[0].text) if users else 0
    if policy.keep_recent == 0:
        protected: int | None = len(msgs)
    else:
        protected = starts[max(len(starts) - policy.keep_recent, 0)] if starts else None

    def reinjected(c: int) -> bool:
        return policy.reinject_task and task_pos is not None and task_pos < c

    def size(c: int) -> int:
        if c <= hist[0]:
            return before
        return (floor + sum(tokens[i] for i in hist if i >= c) + (policy.summary_tokens if policy.mode == "summarise"
                else 0) + (task if reinjected(c) else 0))

    def allowed(c: int) -> bool:
        return c <= hist[0] or policy.mode == "summarise" or reinjected(c) or c in users

    cands = [hist[0]]
    if protected is not None:
        cands += [c for c in starts if c <= protected] + ([len(msgs)] if protected == len(msgs) else [])
    cands = [c for c in cands if allowed(c)]
    cut = min(cands, key=lambda c: (size(c), -c))
    full = protected if protected is not None and allowed(protected) and protected > hist[0] else None
    return cut, size(cut), full


@PROP
@given(conversations(), policies)
def test_trigger_compacts_fully_above_the_trigger_and_nothing_below(conv, policy):
    msgs, tokens = conv
    policy = replace(policy, compact_at="trigger")
    plan = make_plan(conv, policy)
    fates = fates_by_source(plan)
    floor = floor_tokens(msgs, tokens)
    before = floor + sum(t for m, t in zip(msgs, tokens, strict=True) if m.role != "system")
    trigger = int(plan.budget_tokens * policy.trigger)
    assert plan.before_tokens == before and plan.trigger_tokens == trigger
    if before <= trigger:  # untouched
        assert all(f in ("kept", "pinned") for f in fates.values()) and plan.after_tokens == before
        assert plan.fits and plan.reinject == [] and plan.lead == []
        return
    cut, size, full = reference_trigger_cut(msgs, tokens, policy, floor)
    kept = [i for i in range(len(msgs)) if fates[i] == "kept"]
    assert (kept[0] if kept else len(msgs)) == cut  # the first kept message (nothing evicted: the first one)
    assert plan.after_tokens == size
    assert plan.fits == (size <= plan.budget_tokens)
    if full is not None and cut == full:
        # the full compaction: floor + summary + re-injected task + the newest keep_recent units, nothing else
        assert all(fates[i] in GONE for i in range(len(msgs)) if i < full and msgs[i].role != "system")
        assert all(fates[i] in ("kept", "pinned") for i in range(full, len(msgs)))
        task = [r.tokens for r in plan.reinject if r.kind == "task"]
        assert plan.after_tokens == (floor + sum(tokens[full:]) + (policy.summary_tokens if policy.mode == "summarise"
                                                                   else 0) + sum(task))
        if policy.keep_recent:
            assert plan.kept_units == min(policy.keep_recent, len(unit_starts(msgs, policy.unit)))
    elif full is not None:  # it stopped short because the full compaction would be larger; reason says so
        assert "would not make the prompt smaller" in plan.reason


def agent_policy(window: int, **kw) -> Policy:
    return Policy(window=window, budget_fraction=1.0, reserve=0.0, keep_recent=2, summary_tokens=20,
                  compact_at="trigger", **kw)


def test_trigger_under_the_trigger_nothing_is_evicted():
    msgs, tokens = agent_run()
    before = sum(tokens)
    policy = agent_policy(window=before * 10 // 8 + 1)  # trigger = int(0.8 * window) >= before
    assert policy.trigger_tokens >= before
    plan = plan_messages(msgs, policy, counter=COUNTER, tokens=tokens)
    assert all(m.fate == "kept" for m in plan.messages) and plan.after_tokens == before and plan.fits
    assert not plan.triggered and "nothing evicted (not above the compaction trigger" in plan.reason


def test_trigger_over_the_trigger_is_a_full_compaction_not_the_minimal_eviction():
    msgs, tokens = agent_run()
    before = sum(tokens)  # 490
    task = COUNTER.per_message + TOK.count(TASK_HEADER + "Fix the parser")
    # budget 500, trigger 400: within the budget, above the trigger
    trig = plan_messages(msgs, agent_policy(window=500), counter=COUNTER, tokens=tokens)
    assert trig.triggered and trig.compact_at == "trigger"
    # exchange starts 0, 1, 3, 5, 7, 9 (q2), 10, 12: the newest 2 exchanges start at message 10
    assert [m.fate for m in trig.messages] == ["summarised"] * 10 + ["kept"] * 4
    assert trig.after_tokens == 20 + task + sum(tokens[10:]) and trig.fits and trig.kept_units == 2
    assert trig.lead == ["summary", "task"]
    assert "above the compaction trigger of 400, so everything older than the newest 2 exchanges goes" in trig.reason
    # the same prompt with compact_at="budget" is within the budget: untouched
    budget = plan_messages(msgs, replace(agent_policy(window=500), compact_at="budget"), counter=COUNTER,
                           tokens=tokens)
    assert budget.after_tokens == before and not budget.evicted
    # over the budget too: "budget" evicts the least that fits, "trigger" still compacts fully
    small = plan_messages(msgs, replace(agent_policy(window=320), compact_at="budget"), counter=COUNTER,
                          tokens=tokens)
    assert [m.fate for m in small.messages] == ["summarised"] * 5 + ["kept"] * 9  # as in the test above
    full = plan_messages(msgs, agent_policy(window=320), counter=COUNTER, tokens=tokens)
    assert [m.fate for m in full.messages] == ["summarised"] * 10 + ["kept"] * 4
    assert full.after_tokens == 20 + task + sum(tokens[10:]) < small.after_tokens
    # keep_recent 0: the whole history goes, the summary and the task are sent
    bare = plan_messages(msgs, replace(agent_policy(window=320), keep_recent=0), counter=COUNTER, tokens=tokens)
    assert all(m.fate == "summarised" for m in bare.messages) and bare.after_tokens == 20 + task
    assert "the whole history goes" in bare.reason


def test_trigger_full_compaction_that_does_not_fit_says_so():
    msgs, tokens = agent_run()
    task = COUNTER.per_message + TOK.count(TASK_HEADER + "Fix the parser")
    plan = plan_messages(msgs, replace(agent_policy(window=60), keep_recent=3), counter=COUNTER, tokens=tokens)
    # newest 3 exchanges start at q2 (message 9); the full compaction is over the budget of 60
    assert [m.fate for m in plan.messages] == ["summarised"] * 9 + ["kept"] * 5
    assert plan.after_tokens == 20 + task + sum(tokens[9:]) > 60 and not plan.fits
    assert "does not fit: the newest 3 exchanges (kept by keep_recent 3)" in plan.reason


def test_trigger_stays_above_the_trigger_when_the_kept_units_are_too_big():
    msgs, tokens = agent_run()
    # budget 500, trigger 250: the newest 6 exchanges (from message 3) + summary + task fit the budget,
    # not below the trigger
    plan = plan_messages(msgs, replace(agent_policy(window=500, trigger=0.5), keep_recent=6), counter=COUNTER,
                         tokens=tokens)
    assert [m.fate for m in plan.messages] == ["summarised"] * 3 + ["kept"] * 11
    assert plan.fits and plan.after_tokens > plan.trigger_tokens == 250
    assert "still above the compaction trigger of 250 after the compaction, so the next call compacts again" \
        in plan.reason


def test_trigger_stops_short_when_compacting_more_would_not_make_the_prompt_smaller():
    # the newest 3 exchanges start right after the task; evicting the 5-token task would add a summary and
    # the re-injected task: larger, so nothing is evicted and the reason says why
    msgs = [text("user", "Fix the parser"), *tool_exchange(0), *tool_exchange(1), *tool_exchange(2)]
    tokens = [5, 5, 100, 5, 100, 5, 100]
    plan = plan_messages(msgs, replace(agent_policy(window=350), keep_recent=3), counter=COUNTER, tokens=tokens)
    assert sum(tokens) > plan.trigger_tokens == 280
    assert all(m.fate == "kept" for m in plan.messages) and plan.after_tokens == sum(tokens) and plan.fits
    task = COUNTER.per_message + TOK.count(TASK_HEADER + "Fix the parser")
    assert task + 20 > 5  # the summary and the task would replace 5 tokens
    # (reasons name messages by the #N the plan's table shows: MessagePlan.number, the history from 1)
    assert plan.messages[1].number == 2
    assert (f"compacting up to message 2 (assistant) would not make the prompt smaller ({sum(tokens[1:]) + 20 + task} "
            "tokens)") in plan.reason
    assert "stays above the compaction trigger of 280" in plan.reason


def test_trigger_drop_mode_without_reinjection_cuts_at_a_user_message():
    msgs, tokens = agent_run()
    policy = replace(agent_policy(window=320), mode="drop", reinject_task=False)
    plan = plan_messages(msgs, policy, counter=COUNTER, tokens=tokens)
    # the newest 2 exchanges start at message 10 (assistant); with nothing to lead them the cut goes back
    # to q2 (message 9), the latest user message before them
    assert [m.fate for m in plan.messages] == ["evicted"] * 9 + ["kept"] * 5 and plan.lead == []
    assert plan.after_tokens == sum(tokens[9:]) and plan.fits
    assert plan.messages[9].number == 10 and "so the cut moved back to message 10 (user)" in plan.reason


def test_repeated_compaction_reinjects_the_original_items_not_the_previous_summary():
    """A loop that compacts again finds the summary and the re-injected items of the previous compaction
    at the start of its history: the summary is not the task, and the items keep their original text."""
    from ctxwatch.planner import SUMMARY_HEADER

    tasks_text = "Current task list:\n- [in_progress] fix\n- [pending] ship"
    msgs = [text("user", SUMMARY_HEADER + "read 3 files"), text("user", TASK_HEADER + "Fix the parser"),
            text("user", tasks_text), text("user", "File being edited: src/p.py"),
            *tool_exchange(0), *tool_exchange(1), *tool_exchange(2)]
    tokens = [10, 10, 10, 10, 5, 100, 5, 100, 5, 100]
    plan = plan_messages(msgs, replace(agent_policy(window=300), keep_recent=1), counter=COUNTER, tokens=tokens)
    assert [m.fate for m in plan.messages] == ["summarised"] * 8 + ["kept"] * 2
    texts = {r.kind: r.text for r in plan.reinject}
    assert texts == {"task": TASK_HEADER + "Fix the parser", "tasks": tasks_text,
                     "file": "File being edited: src/p.py"}
    assert {r.kind: r.tokens for r in plan.reinject} == {k: COUNTER.per_message + TOK.count(t)
                                                         for k, t in texts.items()}
    # a later task-list tool call supersedes the re-injected list
    todo = '{"todos":[{"content":"ship","status":"in_progress"}]}'
    later = [*msgs[:4], Message("assistant", [Part("tool_call", todo, name="TodoWrite", call_id="t")]),
             Message("tool", [Part("tool_result", "ok", call_id="t")]), *msgs[4:]]
    plan = plan_messages(later, replace(agent_policy(window=300), keep_recent=1), counter=COUNTER,
                         tokens=[*tokens[:4], 20, 5, *tokens[4:]])
    assert {r.kind: r.text for r in plan.reinject}["tasks"] == "Current task list:\n- [in_progress] ship"


# --- B25: eviction never cuts a tool_use/tool_result pair ---------------------------------------------

PAD = "lorem ipsum dolor sit amet " * 111  # ~3000 chars


def b25_messages() -> list[Message]:
    """The case's request, as the canonical reader would normalize it (system split off)."""
    return [
        text("user", "q1"),
        Message("assistant", [Part("tool_call", "{}", name="f", call_id="call_a"),
                              Part("tool_call", "{}", name="f", call_id="call_b")]),
        Message("tool", [Part("tool_result", PAD, call_id="call_a")]),
        Message("tool", [Part("tool_result", PAD, call_id="call_b")]),
        text("assistant", "done"),
        text("user", "q2"),
    ]


def b25_tokens() -> tuple[int, list[int]]:
    """System and per-message tokens, counted here with the raw tokenizer and the cookbook framing rules."""
    f = COUNTER.per_message
    sys_t = f + TOK.count("sys")
    call = TOK.count("{}") + TOK.count("f") + 3
    result = TOK.count(PAD) + 1 + TOK.count("call_a") // 2
    return sys_t, [f + TOK.count("q1"), f + 2 * call, f + result, f + result, f + TOK.count("done"),
                   f + TOK.count("q2")]


def no_orphans(plan: Plan, msgs: list[Message]) -> None:
    fates = fates_by_source(plan)
    kept_calls = {p.call_id for i, m in enumerate(msgs) if fates[i] == "kept" for p in m.parts if p.kind == "tool_call"}
    kept_results = {p.call_id for i, m in enumerate(msgs) if fates[i] == "kept"
                    for p in m.parts if p.kind == "tool_result"}
    assert kept_calls == kept_results


def test_b25_counts_match_independent_count():
    sys_t, toks = b25_tokens()
    plan = plan_messages(b25_messages(), Policy(window=100_000), system=["sys"], counter=COUNTER)
    assert [m.tokens for m in plan.messages] == [sys_t, *toks]


def test_b25_under_budget_nothing_is_evicted():
    plan = plan_messages(b25_messages(), Policy(window=100_000, keep_recent=0), system=["sys"], counter=COUNTER)
    assert [m.fate for m in plan.messages] == ["pinned"] + ["kept"] * 6
    assert plan.fits and "nothing evicted" in plan.reason and plan.after_tokens == plan.before_tokens


@pytest.mark.parametrize("unit", UNITS)
def test_b25_budget_between_the_two_tool_messages_moves_the_cut(unit):
    sys_t, toks = b25_tokens()
    summary = 10
    # Keeping [tool_b, done, q2] would fit, keeping tool_a too would not: the budget lands between them.
    fits_from_b = sys_t + summary + sum(toks[3:])
    assert sys_t + summary + sum(toks[2:]) > fits_from_b + 1
    policy = Policy(window=fits_from_b + 1, budget_fraction=1.0, reserve=0.0, keep_recent=1, summary_tokens=summary,
                    reinject_task=False, unit=unit)
    msgs = b25_messages()
    plan = plan_messages(msgs, policy, system=["sys"], counter=COUNTER)
    no_orphans(plan, msgs)
    assert plan.moved is not None and "message 4" in plan.moved  # index 4 = tool_b (system is index 0)
    assert "call_b" in plan.moved
    if unit == "turn":  # the next turn start is q2
        assert [m.fate for m in plan.messages] == ["pinned", *["summarised"] * 5, "kept"]
        assert plan.fits and plan.after_tokens == sys_t + summary + toks[5]
        assert "moved the cut to message 6" in plan.reason
    else:  # the next exchange is the assistant's "done", inside q1's turn: the summary leads the kept history
        assert [m.fate for m in plan.messages] == ["pinned", *["summarised"] * 4, "kept", "kept"]
        assert plan.fits and plan.after_tokens == sys_t + summary + toks[4] + toks[5]
        assert "moved the cut to message 5" in plan.reason and "kept 2 messages (2 exchanges)" in plan.reason
        assert plan.lead == ["summary"] and "the cut falls inside the user turn of message 1" in plan.reason


def test_b25_keep_last_4_messages_moves_the_cut_outward():
    sys_t, _ = b25_tokens()
    msgs = b25_messages()
    # A budget that forces eviction; "keep the last 4 messages" would start at tool_a (orphaning it).
    policy = Policy(window=sys_t + 50, budget_fraction=1.0, reserve=0.0, keep_recent=0, keep_recent_messages=4,
                    summary_tokens=5)
    plan = plan_messages(msgs, policy, system=["sys"], counter=COUNTER)
    no_orphans(plan, msgs)
    assert [m.fate for m in plan.messages] == ["pinned"] + ["kept"] * 6
    assert "asked to keep the last 4 messages; kept 6" in plan.reason
    assert "call_a/call_b" in plan.reason
    assert not plan.fits


@pytest.mark.parametrize(("unit", "n_gone"), [("turn", 4), ("exchange", 3)])
def test_b25_anthropic_tool_use_in_user_message_is_not_a_turn_start(unit, n_gone):
    msgs = [
        text("user", "task"),
        Message("assistant", [Part("tool_call", "{}", name="f", call_id="toolu_1")]),
        Message("user", [Part("tool_result", PAD, call_id="toolu_1")]),
        text("assistant", "done"),
        text("user", "next"),
        text("assistant", "fine"),
    ]
    tokens = [5, 10, 800, 5, 5, 5]
    policy = Policy(window=500, budget_fraction=1.0, reserve=0.0, keep_recent=1, summary_tokens=20, unit=unit)
    plan = plan_messages(msgs, policy, counter=COUNTER, tokens=tokens)
    # turn: the tool_result user message is no turn start, the cut goes to "next";
    # exchange: the earliest fitting exchange start after the big result is the assistant's "done"
    assert [m.fate for m in plan.messages] == ["summarised"] * n_gone + ["kept"] * (6 - n_gone)
    no_orphans(plan, msgs)


# --- exchanges: cuts inside a user turn, and what leads the sent history -------------------------------------

def tool_exchange(i: int, result: str = "result") -> list[Message]:
    return [Message("assistant", [Part("text", f"step {i}"), Part("tool_call", "{}", name="f", call_id=f"c{i}")]),
            Message("tool", [Part("tool_result", result, call_id=f"c{i}")])]


def agent_run() -> tuple[list[Message], list[int]]:
    """q1, four tool exchanges, q2, two tool exchanges: messages and hand-picked token counts."""
    msgs = [text("user", "Fix the parser"), *tool_exchange(0), *tool_exchange(1), *tool_exchange(2),
            *tool_exchange(3), text("user", "now the docs"), *tool_exchange(4), *tool_exchange(5)]
    tokens = [10, 5, 100, 5, 100, 5, 100, 5, 100, 10, 5, 20, 5, 20]
    return msgs, tokens


def test_exchange_cut_inside_a_turn_with_summary_and_task():
    msgs, tokens = agent_run()
    policy = Policy(window=320, budget_fraction=1.0, reserve=0.0, keep_recent=2, summary_tokens=20)
    plan = plan_messages(msgs, policy, counter=COUNTER, tokens=tokens)
    task = COUNTER.per_message + TOK.count("Original task (the first user message):\nFix the parser")
    # keeping from exchange 3 (message 5) fits, from exchange 2 (message 3) not
    assert 20 + task + sum(tokens[5:]) <= 320 < 20 + task + sum(tokens[3:])
    assert [m.fate for m in plan.messages] == ["summarised"] * 5 + ["kept"] * 9
    assert plan.lead == ["summary", "task"] and plan.after_tokens == 20 + task + sum(tokens[5:])
    assert plan.kept_units == 5 and "kept 9 messages (5 exchanges)" in plan.reason
    assert plan.messages[0].number == 1 and "the cut falls inside the user turn of message 1" in plan.reason
    assert [m.exchange for m in plan.messages] == [0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 6, 6, 7, 7]
    assert [m.turn for m in plan.messages] == [0] * 9 + [1] * 5
    # the turn unit cannot cut inside q1's turn: it must go to q2 (and keep_recent 2 would protect both turns)
    turn = plan_messages(msgs, replace(policy, unit="turn", keep_recent=1), counter=COUNTER, tokens=tokens)
    assert [m.fate for m in turn.messages] == ["summarised"] * 9 + ["kept"] * 5


def test_drop_mode_reinjects_the_task_to_lead_the_kept_exchanges():
    msgs, tokens = agent_run()
    policy = Policy(window=300, budget_fraction=1.0, reserve=0.0, keep_recent=2, mode="drop")
    plan = plan_messages(msgs, policy, counter=COUNTER, tokens=tokens)
    task = COUNTER.per_message + TOK.count("Original task (the first user message):\nFix the parser")
    assert task + sum(tokens[5:]) <= 300 < task + sum(tokens[3:])
    assert [m.fate for m in plan.messages] == ["evicted"] * 5 + ["kept"] * 9
    assert plan.lead == ["task"] and plan.after_tokens == task + sum(tokens[5:])
    assert "the re-injected task (user message) stands before the kept history" in plan.reason


def test_drop_mode_without_reinjection_moves_the_cut_to_a_user_message():
    msgs, tokens = agent_run()
    # forward: q2 (message 9) is within the protected limit and fits
    policy = Policy(window=300, budget_fraction=1.0, reserve=0.0, keep_recent=2, mode="drop", reinject_task=False)
    plan = plan_messages(msgs, policy, counter=COUNTER, tokens=tokens)
    assert [m.fate for m in plan.messages] == ["evicted"] * 9 + ["kept"] * 5 and plan.fits and plan.lead == []
    assert sum(tokens[5:]) <= 300 < sum(tokens[3:])  # the unit alone would cut before message 5
    assert (plan.messages[5].number, plan.messages[9].number) == (6, 10)
    assert ("a cut at message 6 (assistant) would leave no summary or re-injected item before it, so the cut "
            "moved forward to message 10 (user)") in plan.reason
    # back: keep_recent 6 protects the exchanges from message 3 on, which do not fit; q1 is the only user
    # message before them, so nothing is evicted
    plan = plan_messages(msgs, replace(policy, keep_recent=6, window=350), counter=COUNTER, tokens=tokens)
    assert all(m.fate == "kept" for m in plan.messages) and not plan.fits
    assert "so the cut moved back to the start: nothing is evicted" in plan.reason
    assert "summarise or re-inject the task" in plan.reason


def test_an_eviction_never_leaves_an_empty_history():
    msgs, tokens = agent_run()
    bare = Policy(window=30, budget_fraction=1.0, reserve=0.0, keep_recent=0, mode="drop", reinject_task=False)
    plan = plan_messages(msgs, bare, counter=COUNTER, tokens=tokens)
    kept = [m for m in plan.messages if m.fate == "kept"]
    assert kept and kept[0].role == "user" and not plan.fits  # q2 onward: the last user message
    # with a summary (or a re-injected item) everything may go: the summary is what is sent
    plan = plan_messages(msgs, replace(bare, mode="summarise", summary_tokens=10), counter=COUNTER, tokens=tokens)
    assert all(m.fate == "summarised" for m in plan.messages) and plan.lead == ["summary"] and plan.fits


# --- B24: the system prompt and tool schemas are pinned; plans that would drop them are refused -----------

def test_b24_pin_system_cannot_be_turned_off():
    with pytest.raises(PolicyError, match="pin_system cannot be turned off"):
        Policy(window=1000, pin_system=False)


def test_b24_floor_over_budget_is_refused_not_trimmed():
    big_system = "Reply ONLY as JSON {\"answer\": string}. " * 200
    msgs = [text("user", "q1"), text("assistant", "a1"), text("user", "q2")]
    tools = [{"type": "function", "function": {"name": "lookup", "description": "d" * 200, "parameters": {}}}]
    sys_t = COUNTER.per_message + TOK.count(big_system)
    policy = Policy(window=sys_t, budget_fraction=0.5, reserve=0.0, keep_recent=0, summary_tokens=0)
    plan = plan_messages(msgs, policy, system=[big_system], tools=tools, counter=COUNTER)
    assert plan.messages[0].fate == "pinned" and plan.messages[0].tokens_after == sys_t
    assert not plan.fits
    assert "floor" in plan.reason and "never evicted" in plan.reason
    # the floor is still all there after the plan
    assert plan.after_tokens >= sys_t + plan.tools_tokens


@pytest.mark.parametrize(("unit", "a_fate"), [("turn", "summarised"), ("exchange", "kept")])
def test_b24_instructions_and_developer_messages_are_pinned(unit, a_fate):
    msgs = [Message("developer", [Part("text", "rules")]), text("user", "q1"),
            Message("user", [Part("text", "AGENTS.md rules")], label="instructions"), text("assistant", "a"),
            text("user", "q2")]
    plan = plan_messages(msgs, Policy(window=60, budget_fraction=1.0, reserve=0.0, keep_recent=1, summary_tokens=0,
                                      reinject_task=False, unit=unit), counter=COUNTER, tokens=[10, 30, 10, 30, 5])
    # floor 20; keeping "a" + q2 = 55 fits: an exchange cut may keep it, a turn cut must go to q2
    assert [m.fate for m in plan.messages] == ["pinned", "summarised", "pinned", a_fate, "kept"]


# --- reinjection heuristics --------------------------------------------------------------------------------

def test_reinjection_finds_task_todo_list_and_edited_file():
    todo_args = '{"todos":[{"content":"write tests","status":"in_progress"},{"content":"ship","status":"pending"}]}'
    msgs = [
        text("user", "Fix the flaky test in tests/test_io.py"),
        Message("assistant", [Part("tool_call", todo_args, name="TodoWrite", call_id="t1")]),
        Message("user", [Part("tool_result", "ok", call_id="t1")]),
        Message("assistant", [Part("tool_call", '{"file_path":"/src/io.py","old_string":"a","new_string":"b"}',
                                   name="Edit", call_id="t2")]),
        Message("user", [Part("tool_result", "ok", call_id="t2")]),
        text("user", "and now the docs"),
        text("assistant", "sure"),
    ]
    tokens = [20, 40, 5, 40, 5, 8, 3]
    policy = Policy(window=120, budget_fraction=1.0, reserve=0.0, keep_recent=1, summary_tokens=10, unit="turn")
    plan = plan_messages(msgs, policy, counter=COUNTER, tokens=tokens)
    kinds = {r.kind: r for r in plan.reinject}
    assert set(kinds) == {"task", "tasks", "file"}
    task_text = "Original task (the first user message):\nFix the flaky test in tests/test_io.py"
    assert kinds["task"].tokens == COUNTER.per_message + TOK.count(task_text)
    assert "- [in_progress] write tests" in kinds["tasks"].text and "(2 items)" in kinds["tasks"].detail
    assert kinds["file"].text.endswith("/src/io.py")
    assert plan.after_tokens == sum(tokens[5:]) + 10 + sum(r.tokens for r in plan.reinject)
    # nothing evicted -> nothing re-injected, but the candidates are still reported as found
    roomy = plan_messages(msgs, Policy(window=10_000), counter=COUNTER, tokens=tokens)
    assert roomy.reinject == [] and {f.kind for f in roomy.found} == {"task", "tasks", "file"}


def test_apply_patch_path_is_found():
    patch = '{"command":["apply_patch","*** Begin Patch\\n*** Update File: src/app.py\\n@@\\n-a\\n+b\\n*** End Patch"]}'
    msgs = [text("user", "go"), Message("assistant", [Part("tool_call", patch, name="shell", call_id="c")]),
            Message("tool", [Part("tool_result", "done", call_id="c")]), text("user", "next")]
    plan = plan_messages(msgs, Policy(window=10_000), counter=COUNTER)
    assert [f.text for f in plan.found if f.kind == "file"] == ["File being edited: src/app.py"]


def test_policy_validation():
    with pytest.raises(PolicyError):
        Policy(window=0)
    with pytest.raises(PolicyError):
        Policy(window=100, mode="shred")  # type: ignore[arg-type]
    with pytest.raises(PolicyError):
        Policy(window=100, keep_recent=-1)
    with pytest.raises(PolicyError, match="unit"):
        Policy(window=100, unit="message")  # type: ignore[arg-type]
    with pytest.raises(PolicyError, match="compact_at"):
        Policy(window=100, compact_at="window")  # type: ignore[arg-type]
    assert Policy(window=100).unit == "exchange"
    assert Policy(window=100).compact_at == "budget"  # the preview's default; ContextBudget uses "trigger"
    assert Policy(window=100, mode="summarize").mode == "summarise"  # type: ignore[arg-type]
    assert Policy(window=1000, reserve_tokens=900, budget_fraction=1.0).budget_tokens == 100


# --- plan_call / policy_for_call ----------------------------------------------------------------------------

def _call(**kw):
    from ctxwatch.model import Call, SourceRef, Src

    base = dict(index=0, source=SourceRef("x", 1, 1, 0, 10), timestamp=None, model="m", provider="openai",
                session=None, context="main", window=10_000, window_src=Src.CATALOG, system_tokens=None,
                tools_tokens=None, floor_tokens=700, floor_src=Src.INFERRED, history_tokens=None,
                history_src=Src.ESTIMATED, reserve_tokens=None, reserve_src=Src.DEFAULT, prompt_estimated=None,
                usage=None, tokenizer="o200k_base", exact=False, max_output_tokens=None)
    base.update(kw)
    return Call(**base)


def test_policy_for_call_window_and_reserve():
    from ctxwatch.config import Settings
    from ctxwatch.planner import policy_for_call

    s = Settings()
    assert policy_for_call(_call(), s).reserve_total == 1500  # 0.15 x 10,000
    assert policy_for_call(_call(max_output_tokens=800), s).reserve_total == 800
    assert policy_for_call(_call(max_output_tokens=800), s, reserve=0.1).reserve_total == 1000
    assert policy_for_call(_call(max_output_tokens=800), s, reserve=250).reserve_total == 250
    assert policy_for_call(_call(), s, window=2000).window == 2000
    with pytest.raises(PolicyError, match="--window"):
        policy_for_call(_call(window=None), s)


def test_plan_call_pins_the_inferred_floor_when_the_format_does_not_log_it():
    from ctxwatch.model import ParsedCall, SourceRef
    from ctxwatch.planner import plan_call

    pc = ParsedCall(source=SourceRef("x", 1, 1, 0, 10), model="claude-sonnet-4-5", provider="anthropic",
                    system=None, tools=None, messages=[text("user", "q1"), text("assistant", "a"), text("user", "q2")],
                    history_reported_only=True, max_output_tokens=100)
    plan = plan_call(pc, Policy(window=1000), floor_tokens=700)
    assert plan.messages[0].role == "system" and plan.messages[0].tokens == 700 and plan.messages[0].fate == "pinned"
    assert plan.floor_tokens == 700 and plan.tools_tokens == 0 and plan.reserve_tokens == 100


def test_trigger_floor_above_the_trigger_is_named():
    msgs = [text("user", "hi")]
    plan = plan_messages(msgs, Policy(window=100, budget_fraction=1.0, reserve=0.0, compact_at="trigger"),
                         counter=COUNTER, tokens=[5], system_tokens=85, tools_tokens=0)
    assert plan.fits and plan.after_tokens == 90 and plan.triggered
    assert "the floor alone (85 tokens) is above the compaction trigger of 80" in plan.reason


# --- the budget advice names only a change that can make the plan fit ----------------------------------------

def big_exchange_plan(result: int, policy: Policy) -> Plan:
    """Demo call #60 in small: a 100-token floor and one exchange (a 10-token call, a ``result``-token tool
    result), which keep_recent 6 protects: the smallest plan is 100 + 10 + result tokens."""
    msgs = tool_exchange(0)
    return plan_messages(msgs, replace(policy, summary_tokens=50), counter=COUNTER, tokens=[10, result],
                         system_tokens=100, tools_tokens=0)


NEWEST = "does not fit: the newest 1 exchange (kept by keep_recent 6) takes {kept} tokens; the smallest plan is " \
    "floor 100 + kept history {kept} = {size} tokens, over the budget of {budget}"


@pytest.mark.parametrize(("fraction", "reserve", "budget", "advice"), [
    # budget min(0.5 * 1,000, 1,000 - 200) = 500; 700 <= 800 = window - reserve: a fraction of 0.7 holds it
    (0.5, 200, 500, "raise the budget"),
    # budget min(800, 1,000 - 400) = 600, capped by the reserve; 700 > 600 = window - reserve, so no fraction
    # helps; with no reserve the budget is 0.8 * 1,000 = 800 >= 700
    (0.8, 400, 600, "lower the reserve (the budget is the window minus the reserve)"),
    # budget min(650, 600) = 600, capped; 700 > 600 and > 650 (no reserve): only both together (up to the
    # 1,000-token window) hold it
    (0.65, 400, 600, "lower the reserve and raise the budget (the budget is at most the window minus the reserve)"),
    # budget min(600, 600) = 600, not capped: neither change alone moves it (600 both ways); together, 1,000
    (0.6, 400, 600, "lower the reserve and raise the budget (the budget is at most the window minus the reserve)"),
])
def test_budget_advice_within_the_window(fraction: float, reserve: int, budget: int, advice: str) -> None:
    policy = Policy(window=1000, budget_fraction=fraction, reserve_tokens=reserve, keep_recent=6)
    plan = big_exchange_plan(590, policy)
    assert plan.budget_tokens == budget and plan.after_tokens == 700 and not plan.fits
    # keep_recent 0 summarises the exchange: floor 100 + summary 50 = 150, within every budget here
    assert big_exchange_plan(590, replace(policy, keep_recent=0)).after_tokens == 150
    assert plan.reason == NEWEST.format(kept="600", size="700", budget=f"{budget:,}") + \
        "; lower keep_recent or " + advice


def test_budget_advice_is_left_out_for_a_plan_larger_than_the_window() -> None:
    """The demo's call #60: the newest exchange takes more than the whole window, so no budget fraction and no
    reserve can make it fit (it said "lower keep_recent or raise the budget", and "(always kept)")."""
    # floor 100 + 10 + 1,090 = 1,200 > the 1,000-token window; budget min(500, 800) = 500
    plan = big_exchange_plan(1090, Policy(window=1000, budget_fraction=0.5, reserve_tokens=200, keep_recent=6))
    assert plan.budget_tokens == 500 and plan.after_tokens == 1200 and not plan.fits
    assert plan.reason == NEWEST.format(kept="1,100", size="1,200", budget="500") + \
        " and the 1,000-token window; lower keep_recent"
    # capped by the reserve (budget min(800, 600) = 600): lowering it reaches 800 at most, not 1,200 either
    plan = big_exchange_plan(1090, Policy(window=1000, budget_fraction=0.8, reserve_tokens=400, keep_recent=6))
    assert plan.reason == NEWEST.format(kept="1,100", size="1,200", budget="600") + \
        " and the 1,000-token window; lower keep_recent"
    # at a budget of the whole window (fraction 1, no reserve) it says so
    plan = big_exchange_plan(1090, Policy(window=1000, budget_fraction=1.0, reserve_tokens=0, keep_recent=6))
    assert plan.reason == NEWEST.format(kept="1,100", size="1,200", budget="1,000") + \
        " (the whole window); lower keep_recent"
    # keep_recent 0, but keep_recent_messages 2 holds the exchange: the reason names what protects it
    plan = big_exchange_plan(1090, Policy(window=1000, budget_fraction=0.5, reserve_tokens=200, keep_recent=0,
                                          keep_recent_messages=2))
    assert plan.reason == ("does not fit: the newest 1 exchange (kept by keep_recent_messages 2) takes 1,100 tokens; "
                           "the smallest plan is floor 100 + kept history 1,100 = 1,200 tokens, over the budget of "
                           "500 and the 1,000-token window; lower keep_recent_messages")


def test_floor_advice_raises_the_budget_only_when_that_can_fit() -> None:
    """A floor over the budget: "shorten them or raise the budget", but only while the smallest plan is at most
    the window minus the reserve."""
    msgs = [text("user", "hi")]
    # floor 700 + 50 = 750 > budget min(500, 800) = 500; 750 <= 800
    policy = Policy(window=1000, budget_fraction=0.5, reserve_tokens=200, keep_recent=6, summary_tokens=50)
    plan = plan_messages(msgs, policy, counter=COUNTER, tokens=[50], system_tokens=700, tools_tokens=0)
    assert plan.after_tokens == 750 and not plan.fits
    assert plan.reason.endswith("never evicted, so shorten them or raise the budget")
    # floor 1,100 + 50 = 1,150 > the 1,000-token window: nothing about the budget
    plan = plan_messages(msgs, policy, counter=COUNTER, tokens=[50], system_tokens=1100, tools_tokens=0)
    assert plan.after_tokens == 1150 and not plan.fits
    assert plan.reason == ("does not fit: the floor alone (1,100 tokens) exceeds the budget of 500; the system "
                           "prompt, tool schemas and pinned messages are never evicted, so shorten them")


def test_trigger_advice_raises_the_budget_only_when_its_trigger_can_hold_the_prompt() -> None:
    """compact_at trigger: a floor of 85 above the trigger; raising the budget helps only when the trigger of
    a larger budget (0.8 of it) holds the 90-token prompt."""
    msgs = [text("user", "hi")]
    # window 200, fraction 0.5: budget 100, trigger 80 < 90; fraction 1: budget 200, trigger 160 >= 90
    plan = plan_messages(msgs, Policy(window=200, budget_fraction=0.5, reserve=0.0, compact_at="trigger"),
                         counter=COUNTER, tokens=[5], system_tokens=85, tools_tokens=0)
    assert plan.fits and plan.after_tokens == 90 and plan.trigger_tokens == 80
    assert plan.reason.endswith("shorten the system prompt or tool schemas, or raise the budget")
    # window 100, fraction 1, no reserve: the trigger is already as high as it goes (80)
    plan = plan_messages(msgs, Policy(window=100, budget_fraction=1.0, reserve=0.0, compact_at="trigger"),
                         counter=COUNTER, tokens=[5], system_tokens=85, tools_tokens=0)
    assert plan.fits and plan.after_tokens == 90 and plan.trigger_tokens == 80
    assert plan.reason.endswith("so no compaction brings the prompt below it; shorten the system prompt or tool "
                                "schemas")


def test_plan_files_in_a_plans_folder_are_the_plan_and_never_the_edited_file() -> None:
    """Claude Code's plan mode writes ``~/.claude/plans/<random-name>.md`` (no "plan" in the name): it was
    re-injected as "the file being edited", replacing the real one; an Edit of ``plan.md`` did the same."""
    from ctxwatch.planner import find_reinject

    def call(name: str, args: dict, cid: str) -> Message:
        return Message("assistant", [Part("tool_call", json.dumps(args), name=name, call_id=cid)])

    plan_text = "1. Read tax.py\n2. Fix rounding\n3. Run the tests"
    msgs = [Message("user", [Part("text", "Fix the VAT rounding bug.")]),
            call("Edit", {"file_path": "/repo/src/tax.py", "old_string": "a", "new_string": "b"}, "c1"),
            call("Write", {"file_path": "/home/u/.claude/plans/snug-wandering-puffin.md", "content": plan_text}, "c2"),
            call("ExitPlanMode", {}, "c3"),
            call("Edit", {"file_path": "/repo/plan.md", "old_string": "3.", "new_string": "4."}, "c4")]
    found = {r.kind: r for r in find_reinject(msgs, COUNTER)}
    assert found["plan"].text == "Current plan:\n" + plan_text
    assert found["file"].text == "File being edited: /repo/src/tax.py"
