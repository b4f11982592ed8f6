"""The cut search: the first kept history message of one call, and the plan it gives.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ctxwatch.model import Message, MessageStat
from ctxwatch.planner.plan import MessagePlan, Plan
from ctxwatch.planner.policy import Fate, Policy
from ctxwatch.planner.reasons import fmt, inside_turn, plan_reason
from ctxwatch.planner.reinject import ReinjectItem, find_reinject
from ctxwatch.planner.units import Entry, blocked_cuts, entry, numbering, why_invalid
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
        A :class:`Plan` made with ``policy.unit`` (see the module docstring): its ``lead`` says what stands
        before the kept history (the summary, the re-injected items), ``kept_units`` how many units are
        kept, and each :class:`MessagePlan` carries both its turn and its exchange number.  Never raises on
        odd message sequences (orphan tool results stay where they are).

    Raises:
        ValueError: ``tokens`` has a different length than ``messages``.
    """
    counter = counter or counter_for(None, None)
    if tokens is not None and len(tokens) != len(messages):
        raise ValueError(f"tokens has {len(tokens)} entries for {len(messages)} messages")

    entries: list[Entry] = []
    if system_tokens is None:
        system_tokens = counter.system_tokens(list(system)) if system else 0
    if system or system_tokens:
        entries.append(Entry("system", system_tokens, True, None, None, (), ()))
    for i, m in enumerate(messages):
        if tokens is not None:
            n = int(tokens[i])
        elif isinstance(m, MessageStat):
            n = m.tokens
        else:
            n = counter.message_tokens(m)
        entries.append(entry(m, n, i))
    if tools_tokens is None:
        tools_tokens = counter.tools_tokens(list(tools)) if tools else 0

    pinned_tokens = sum(e.tokens for e in entries if e.pinned)
    pinned_in_history = pinned_tokens - (system_tokens if entries and entries[0].source is None else 0)
    floor = pinned_tokens + tools_tokens  # (everything no plan can evict: the floor and the pinned messages)
    hist_pos = [k for k, e in enumerate(entries) if not e.pinned]  # plan index of each history entry
    hist = [entries[k] for k in hist_pos]
    H = len(hist)
    blocked = blocked_cuts(hist)

    # Turns start at a user message that is not a tool result (these are also the "user starts": a kept
    # history may begin there without anything before it).  Exchanges start at every message that is not
    # a tool result and does not sit inside a tool call's span.
    user_starts = [j for j, e in enumerate(hist) if e.role == "user" and not e.is_result]
    ex_starts = [j for j, e in enumerate(hist) if not e.is_result and not blocked[j]]
    unit = policy.unit
    starts = ex_starts if unit == "exchange" else user_starts
    turn_of = numbering(user_starts, H)
    exchange_of = numbering(ex_starts, H)
    user_set = set(user_starts)

    # Reinjection candidates, by history position.
    hist_msgs = [messages[e.source] for e in hist if e.source is not None]
    found = find_reinject(hist_msgs, counter, hist_pos)
    wanted = {"task": policy.reinject_task, "plan": policy.reinject_plan, "tasks": policy.reinject_tasks,
              "file": policy.reinject_file}
    hist_j = {k: j for j, k in enumerate(hist_pos)}
    found_pos = {id(f): hist_j[f.index] for f in found}

    suffix = [0] * (H + 1)
    for j in range(H - 1, -1, -1):
        suffix[j] = suffix[j + 1] + hist[j].tokens
    summarise = policy.mode == "summarise"
    summary = policy.summary_tokens if summarise else 0

    def reinjected(c: int) -> list[ReinjectItem]:
        return [f for f in found if wanted[f.kind] and found_pos[id(f)] < c] if c > 0 else []

    def size(c: int) -> int:
        if c == 0:
            return overhead + floor + suffix[0]
        return overhead + floor + suffix[c] + summary + sum(f.tokens for f in reinjected(c))

    def has_lead(c: int) -> bool:
        """A user message (the summary or a re-injected item) stands before the kept span of cut ``c``."""
        return c > 0 and (summarise or bool(reinjected(c)))

    def starts_on_user(c: int) -> bool:
        """The history sent with cut ``c`` starts with a user message (or is the original, for ``c == 0``)."""
        return c == 0 or has_lead(c) or (c < H and c in user_set)

    budget = policy.budget_tokens
    trigger = policy.trigger_tokens
    at_trigger = policy.compact_at == "trigger"
    # The plan compacts when the prompt is above this (the budget, or the trigger with compact_at="trigger").
    threshold = trigger if at_trigger else budget
    before = size(0)

    # Where the cut may go: 0 (nothing evicted), a unit start, or the end; never across a tool-call pair.
    K = policy.keep_recent
    if K == 0:
        max_cut = H
    elif not starts:
        max_cut = 0
    else:
        max_cut = starts[max(len(starts) - K, 0)]
    # ``free``: the positions the unit and the tool pairs allow; ``valid``: those whose sent history
    # starts on a user message (differs only in drop mode with nothing re-injected).
    free = [c for c in sorted({0, *starts, H}) if c == 0 or not blocked[c]]
    free_set = set(free)
    valid = [c for c in free if starts_on_user(c)]
    valid_set = set(valid)
    want = max(H - policy.keep_recent_messages, 0) if policy.keep_recent_messages else H
    if want < max_cut:
        max_cut = want
    allowed = [c for c in valid if c <= max_cut]

    def choose(cands: list[int]) -> int:
        if before <= threshold or H == 0:
            return 0
        if at_trigger:
            # Full compaction: the smallest plan, ties to the later cut (so the newest keep_recent units).
            return min(cands, key=lambda c: (size(c), -c))
        fitting = [c for c in cands if c > 0 and size(c) <= budget]
        return min(fitting) if fitting else min(cands, key=lambda c: (size(c), c))

    cut = choose(allowed)
    # The cut the unit alone would give (no user-start rule): when it differs, say why the cut moved.
    free_cut = cut if len(valid) == len(free) else choose([c for c in free if c <= max_cut])
    after = size(cut)
    fits = after <= budget
    chosen = reinjected(cut)
    for f in found:
        f.reinjected = f in chosen
    lead = (["summary"] if cut > 0 and summarise else []) + [f.kind for f in chosen]

    # Fates.
    plans: list[MessagePlan] = []
    for k, e in enumerate(entries):
        if e.pinned:
            fate: Fate = "pinned"
            turn = exchange = -1
        else:
            j = hist_j[k]
            turn, exchange = turn_of[j], exchange_of[j]
            fate = "kept" if j >= cut else ("summarised" if summarise else "evicted")
        plans.append(MessagePlan(k, e.role, e.tokens, fate, e.tokens if fate in ("pinned", "kept") else 0,
                                 e.source, turn, e.label, e.calls, e.results, exchange))

    def at(c: int) -> str:
        return f"message {hist_pos[c]} ({hist[c].role})" if c < H else "the end"

    # Did the token cut want to go somewhere invalid?  ``free_cut`` is where the unit and the tool pairs put
    # it; when the user-start rule moved it further, a second note says so.
    notes: list[str] = []
    if not at_trigger and free_cut > 0 and size(free_cut) <= budget:
        # The earliest position where a cut ignoring units and tool pairs would fit.
        extras = sorted((found_pos[id(f)], f.tokens) for f in found if wanted[f.kind])
        naive, extra, k = None, 0, 0
        for p in range(1, H + 1):
            while k < len(extras) and extras[k][0] < p:
                extra += extras[k][1]
                k += 1
            if overhead + floor + suffix[p] + summary + extra <= budget:
                naive = p
                break
        if naive is not None and naive != free_cut and naive < H and naive not in free_set:
            why = why_invalid(hist, naive, user_set, unit, True)
            s = f"the token cut would fall at {at(naive)}, {why}; "
            if free_cut == cut:
                s += (f"moved the cut to {'message ' + str(hist_pos[cut]) if cut < H else 'the end'} and kept "
                      f"{H - cut} message{'s' if H - cut != 1 else ''}")
            else:
                s += f"the next {unit} starts at {at(free_cut)}"
            notes.append(s)
    if free_cut != cut:
        where = at(cut) if 0 < cut < H else "the start: nothing is evicted" if cut == 0 else "the end"
        notes.append(f"drop mode: the sent history must start on a user message, and a cut at {at(free_cut)} would "
                     "leave no summary or re-injected item before it, so the cut moved "
                     f"{'back' if cut < free_cut else 'forward'} to {where}")
    if policy.keep_recent_messages and want == max_cut and want not in valid_set and before > threshold:
        notes.insert(0, f"asked to keep the last {policy.keep_recent_messages} messages; kept {H - cut} to avoid "
                        + why_invalid(hist, want, user_set, unit, has_lead(want)))
    moved = "; ".join(notes) or None

    # compact_at="trigger": say why the cut stopped short of the full compaction (the latest valid cut).
    short: str | None = None
    if at_trigger and before > trigger and H:
        full = max(allowed)
        if cut < full:  # ties go to the later cut, so the full compaction is strictly larger
            short = (("" if cut == 0 else f"the cut stops at {at(cut)}: ")
                     + f"compacting up to {at(full)} would not make the prompt smaller ({fmt(size(full))} "
                     "tokens), the summary and re-injected items taking at least as many tokens as the "
                     "messages they replace")

    kept_units = sum(1 for c in starts if c >= cut)
    # The smallest plan a lower keep_recent would allow (the cuts the newest units now protect), for the hint.
    beyond = min((size(c) for c in valid if c > max_cut), default=None)
    reason = plan_reason(policy, plans, before, after, budget, fits, cut, H, floor, pinned_tokens, tools_tokens,
                     summary, chosen, moved, starts, suffix, max_cut, kept_units,
                     inside_turn(cut, H, user_starts, hist_pos, lead), short, overhead, beyond,
                     suffix[0] - suffix[max_cut])
    return Plan(
        messages=plans, before_tokens=before, after_tokens=after, budget_tokens=budget, fits=fits, reason=reason,
        reinject=chosen, found=found, floor_tokens=floor - pinned_in_history,
        system_tokens=pinned_tokens - pinned_in_history, tools_tokens=tools_tokens, pinned_tokens=pinned_in_history,
        summary_tokens=summary if cut > 0 else 0, trigger_tokens=policy.trigger_tokens,
        reserve_tokens=policy.reserve_total, window=policy.window, triggered=before > policy.trigger_tokens,
        cut=hist_pos[cut] if cut < H else None, moved=moved, tokenizer=counter.name, policy=policy, lead=lead,
        unit=unit, kept_units=kept_units, compact_at=policy.compact_at, overhead_tokens=overhead,
    )
