"""The cut search of ctxwatch.planner on small histories sized by hand (``tokens=``), so that every cut's size is
a sum written out in the test."""

from __future__ import annotations

import ctxwatch.planner as planner
from ctxwatch.model import Message, Part
from ctxwatch.planner import Policy, plan_messages
from ctxwatch.planner.search import CutSearch
from ctxwatch.planner.units import entry
from ctxwatch.tokens import counter_for

COUNTER = counter_for("gpt-4o", "openai")
NO_REINJECT = {"reinject_task": False, "reinject_plan": False, "reinject_tasks": False, "reinject_file": False}


def text(role: str, s: str) -> Message:
    return Message(role, [Part("text", s)])


def tool_call(call_id: str, name: str = "f", args: str = '{"q": 1}') -> Message:
    return Message("assistant", [Part("tool_call", args, name=name, call_id=call_id)])


def tool_result(call_id: str) -> Message:
    return Message("tool", [Part("tool_result", "result", call_id=call_id)])


#: task, a tool call and its result, an assistant text, a user message: 100 + 200 + 300 + 400 + 50 tokens.
HISTORY = [text("user", "fix the bug"), tool_call("a"), tool_result("a"), text("assistant", "done"),
           text("user", "thanks")]
SIZES = [100, 200, 300, 400, 50]


def test_the_package_still_exports_what_its_importers_use() -> None:
    names = ["COMPACT_AT", "SUMMARY_HEADER", "UNITS", "CompactAt", "Mode", "Plan", "Policy", "PolicyError", "Unit",
             "find_reinject", "plan_call", "plan_counts", "plan_from_counts", "plan_messages", "policy_for_call",
             "scaled_to", "text_message_tokens", "unplannable"]
    assert [n for n in names if not hasattr(planner, n)] == []


def test_cuts_never_split_a_tool_call_from_its_result() -> None:
    """Exchanges start at 0, 1 (the call and its result), 3 and 4; a cut before the result (2) is not free.  In
    drop mode with nothing re-injected the kept history must start on a user message: 0 or 4.  A cut c keeps
    messages c.. (suffix sums of the sizes)."""
    policy = Policy(window=10_000, keep_recent=1, mode="drop", **NO_REINJECT)
    search = CutSearch([entry(m, n, i) for i, (m, n) in enumerate(zip(HISTORY, SIZES, strict=True))], HISTORY,
                       policy, COUNTER, 0, 0)
    assert search.free == [0, 1, 3, 4, 5]
    assert search.valid == [0, 4]
    assert search.max_cut == 4  # (the newest exchange is kept)
    assert [search.size(c) for c in search.free] == [1050, 950, 450, 50, 0]


def test_drop_mode_moves_the_cut_forward_to_a_user_message() -> None:
    """Window 1,000: budget min(600, 1,000 - 150) = 600 tokens.  The earliest fitting cut is 3 (450 tokens), an
    assistant message with nothing before it; the next cut starting on a user message is 4 (50 tokens)."""
    plan = plan_messages(HISTORY, Policy(window=1000, keep_recent=1, mode="drop", **NO_REINJECT), counter=COUNTER,
                         tokens=SIZES)
    assert (plan.cut, plan.before_tokens, plan.after_tokens, plan.fits) == (4, 1050, 50, True)
    assert [m.fate for m in plan.messages] == ["evicted"] * 4 + ["kept"]
    # (the reason names messages by their #N, MessagePlan.number: the history from 1)
    assert (plan.messages[3].number, plan.messages[4].number) == (4, 5)
    assert plan.moved == ("drop mode: the sent history must start on a user message, and a cut at message 4 "
                          "(assistant) would leave no summary or re-injected item before it, so the cut moved "
                          "forward to message 5 (user)")


def test_a_full_compaction_stops_before_an_item_it_would_only_replace_with_more() -> None:
    """compact_at trigger, keep_recent 1: the full compaction would cut at 5 (the newest exchange) and evict the
    task list written at 3-4, which takes 1 + 1 tokens here but is re-injected as a whole user message; cutting
    at 3 keeps it for less, so the cut stops there and the reason says why."""
    todo = '{"todos": [{"content": "fix it", "status": "pending"}]}'
    msgs = [text("user", "fix the bug"), text("assistant", "looking"), text("user", "go on"),
            tool_call("t1", "TodoWrite", todo), tool_result("t1"), text("user", "next")]
    policy = Policy(window=3000, keep_recent=1, compact_at="trigger", summary_tokens=50)
    plan = plan_messages(msgs, policy, counter=COUNTER, tokens=[100, 1000, 1000, 1, 1, 10])
    assert plan.triggered and plan.before_tokens == 2112
    assert plan.cut == 3
    assert [m.fate for m in plan.messages] == ["summarised"] * 3 + ["kept"] * 3
    assert "the cut stops at message 4 (assistant): compacting up to message 6 (user) would not make the prompt " \
           "smaller (" in plan.reason
    assert [r.kind for r in plan.reinject] == ["task"]
    assert plan.after_tokens == 1 + 1 + 10 + 50 + plan.reinject[0].tokens  # kept, the summary, the task
