"""The planner of one call's messages: its entries, the cut search, every message's fate and the reason.

Sizes are tokens of the call's :class:`~ctxwatch.tokens.Counter`, framing included; re-injected items are
counted as plain user messages, the summary as ``summary_tokens``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ctxwatch.model import Message, MessageStat
from ctxwatch.planner.plan import Plan
from ctxwatch.planner.policy import Policy
from ctxwatch.planner.reasons import moved_note, plan_reason, short_note
from ctxwatch.planner.search import CutSearch
from ctxwatch.planner.units import Entry, entry
from ctxwatch.tokens import Counter, counter_for


def plan_messages(messages: Sequence[Message | MessageStat], policy: Policy, *,
                  system: Sequence[str] | None = None, tools: Sequence[dict[str, Any]] | None = None,
                  counter: Counter | None = None, tokens: Sequence[int] | None = None,
                  system_tokens: int | None = None, tools_tokens: int | None = None, overhead: int = 0) -> Plan:
    """Plan the eviction for one call.

    Args:
        messages: the call's messages in order (``Message`` with text, or ``MessageStat`` with counts only).
            ``system``/``developer`` messages (and ``instructions``-labelled ones) among them are pinned.
        policy: the :class:`Policy`.
        system: the system prompt as text blocks (Anthropic ``system``, or the reader's split-off system
            messages); becomes the pinned entry at index 0.
        tools: the request's tool schemas (floor, never evicted).
        counter: token rules; default ``counter_for(None, None)`` (o200k_base, OpenAI framing).
        tokens: precomputed tokens per message (overrides counting; same length as ``messages``).
        system_tokens / tools_tokens: precomputed floor parts in tokens (override counting).
        overhead: tokens every request carries outside its messages and floor (the reply primer,
            :data:`ctxwatch.tokens.REPLY_PRIMER`, for a counted prompt), added to every size so that "before"
            is the prompt the report shows.

    Returns:
        A :class:`Plan` made with ``policy.unit`` (:mod:`ctxwatch.planner.units`): its ``lead`` says what stands
        before the kept history (the summary, the re-injected items), ``kept_units`` how many units are
        kept, and each :class:`MessagePlan` carries both its turn and its exchange number.  Never raises on
        odd message sequences (orphan tool results stay where they are).

    Raises:
        ValueError: ``tokens`` has a different length than ``messages``.
    """
    counter = counter or counter_for(None, None)
    if tokens is not None and len(tokens) != len(messages):
        raise ValueError(f"tokens has {len(tokens)} entries for {len(messages)} messages")
    if system_tokens is None:
        system_tokens = counter.system_tokens(list(system)) if system else 0
    entries = _entries(messages, counter, bool(system), system_tokens, tokens)
    if tools_tokens is None:
        tools_tokens = counter.tools_tokens(list(tools)) if tools else 0

    search = CutSearch(entries, messages, policy, counter, tools_tokens, overhead)
    ch = search.decide()
    plans = search.fates(ch.cut)
    moved = moved_note(search, ch)
    reason = plan_reason(search, ch, plans, moved, short_note(search, ch))
    pinned_tokens, cut, H = search.pinned_tokens, ch.cut, search.H
    pinned_in_history = pinned_tokens - (system_tokens if entries and entries[0].source is None else 0)
    return Plan(
        messages=plans, before_tokens=search.before, after_tokens=ch.after, budget_tokens=search.budget,
        fits=ch.fits, reason=reason, reinject=ch.reinjected, found=search.found,
        floor_tokens=search.floor - pinned_in_history, system_tokens=pinned_tokens - pinned_in_history,
        tools_tokens=tools_tokens, pinned_tokens=pinned_in_history,
        summary_tokens=search.summary if cut > 0 else 0, trigger_tokens=policy.trigger_tokens,
        reserve_tokens=policy.reserve_total, window=policy.window, triggered=search.before > policy.trigger_tokens,
        cut=search.hist_pos[cut] if cut < H else None, moved=moved, tokenizer=counter.name, policy=policy,
        lead=ch.lead, unit=policy.unit, kept_units=ch.kept_units, compact_at=policy.compact_at,
        overhead_tokens=overhead,
    )


def _entries(messages: Sequence[Message | MessageStat], counter: Counter, has_system: bool, system_tokens: int,
             tokens: Sequence[int] | None) -> list[Entry]:
    """The planner's entries of one call: the system blocks (when given, or sized) at index 0, then one per
    message, sized by ``tokens`` when given, else by the message's own count or ``counter``."""
    entries: list[Entry] = []
    if has_system or system_tokens:
        entries.append(Entry("system", system_tokens, True, None, None, (), ()))
    for i, m in enumerate(messages):
        if tokens is not None:
            n = int(tokens[i])
        elif isinstance(m, MessageStat):
            n = m.tokens
        else:
            n = counter.message_tokens(m)
        entries.append(entry(m, n, i))
    return entries
