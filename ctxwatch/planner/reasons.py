"""The plan's sentences: what was done and why, why the cut moved, why a plan does not fit, and which setting
would make it fit.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ctxwatch.planner.plan import MessagePlan
from ctxwatch.planner.policy import Policy
from ctxwatch.planner.search import Choice, CutSearch
from ctxwatch.planner.units import why_invalid


def fmt(n: int) -> str:
    """A token count with thousands separators: ``"12,345"``."""
    return f"{n:,}"


#: The budget advice (:func:`_budget_hint`), in the order tried: each change to the policy, and what it says.
_BUDGET_CHANGES: tuple[tuple[dict[str, Any], str], ...] = (
    # a larger budget fraction (at most 1): the budget becomes the window minus the reserve
    ({"budget_fraction": 1.0}, "raise the budget"),
    # no reserve: the budget becomes the fraction of the window (only a change when the reserve caps it)
    ({"reserve_tokens": 0}, "lower the reserve (the budget is the window minus the reserve)"),
    # both: the budget becomes the whole window
    ({"budget_fraction": 1.0, "reserve_tokens": 0},
     "lower the reserve and raise the budget (the budget is at most the window minus the reserve)"),
)


def _budget_hint(policy: Policy, need: int, under_trigger: bool = False) -> str | None:
    """The budget advice that can make a plan of ``need`` tokens fit, or ``None`` when no budget can.

    The budget is ``min(share(window, budget_fraction), window - reserve)`` (:func:`~ctxwatch.config.prompt_budget`),
    so raising the budget fraction (at most 1) reaches at most ``window - reserve``, lowering the reserve (to 0)
    at most ``int(window * budget_fraction)``, and both together the window.  The first change of
    :data:`_BUDGET_CHANGES` whose budget holds ``need`` is advised: "raise the budget" when ``need <= window -
    reserve``, "lower the reserve" when the reserve caps the budget and ``need <= int(window *
    budget_fraction)``, both when ``need <= window``.

    Args:
        policy: the plan's policy.
        need: the size in tokens that must fit (the smallest plan the other settings allow).
        under_trigger: ``need`` must be at or below the compaction trigger (:attr:`Policy.trigger_tokens`, a
            fraction of the budget) rather than the budget.
    """
    for change, advice in _BUDGET_CHANGES:
        changed = replace(policy, **change)
        if need <= (changed.trigger_tokens if under_trigger else changed.budget_tokens):
            return advice
    return None


def inside_turn(s: CutSearch, ch: Choice) -> str | None:
    """A sentence when the kept history starts inside a user turn (not on a user message), else ``None``."""
    cut, H, user_starts, hist_num, lead = ch.cut, s.H, s.user_starts, s.hist_num, ch.lead
    if cut <= 0 or cut >= H or cut in user_starts:
        return None
    prev = [j for j in user_starts if j < cut]
    where = f"the user turn of message {hist_num[prev[-1]]}" if prev else "the history before the first user message"
    names = [("the summary" if x == "summary" else f"the re-injected {x}") for x in lead]
    led = ", ".join(names[:-1]) + (" and " if len(names) > 1 else "") + names[-1] if names else "nothing"
    return (f"the cut falls inside {where}, between exchanges; {led} (user message{'s' if len(names) > 1 else ''})"
            f" stand{'s' if len(names) == 1 else ''} before the kept history")


def moved_note(s: CutSearch, ch: Choice) -> str | None:
    """Sentences when the cut was moved: from where the tokens alone would put it (splitting a tool call or a
    unit), from where the unit alone would put it (drop mode: the sent history must start on a user message),
    or from where ``keep_recent_messages`` asked; ``None`` when it was not moved."""
    cut, free_cut, H, at = ch.cut, ch.free_cut, s.H, s.at
    policy = s.policy
    # Did the token cut want to go somewhere invalid?  ``free_cut`` is where the unit and the tool pairs put
    # it; when the user-start rule moved it further, a second note says so.
    notes: list[str] = []
    if not s.at_trigger and free_cut > 0 and s.size(free_cut) <= s.budget:
        naive = s.naive_cut()
        if naive is not None and naive != free_cut and naive < H and naive not in s.free_set:
            why = why_invalid(s.hist, naive, s.user_set, s.unit, True)
            text = f"the token cut would fall at {at(naive)}, {why}; "
            if free_cut == cut:
                text += (f"moved the cut to {'message ' + str(s.hist_num[cut]) if cut < H else 'the end'} and kept "
                         f"{H - cut} message{'s' if H - cut != 1 else ''}")
            else:
                text += f"the next {s.unit} starts at {at(free_cut)}"
            notes.append(text)
    if free_cut != cut:
        where = at(cut) if 0 < cut < H else "the start: nothing is evicted" if cut == 0 else "the end"
        notes.append(f"drop mode: the sent history must start on a user message, and a cut at {at(free_cut)} would "
                     "leave no summary or re-injected item before it, so the cut moved "
                     f"{'back' if cut < free_cut else 'forward'} to {where}")
    want = s.want
    if policy.keep_recent_messages and want == s.max_cut and want not in s.valid_set and s.before > s.threshold:
        notes.insert(0, f"asked to keep the last {policy.keep_recent_messages} messages; kept {H - cut} to avoid "
                        + why_invalid(s.hist, want, s.user_set, s.unit, s.has_lead(want)))
    return "; ".join(notes) or None


def short_note(s: CutSearch, ch: Choice) -> str | None:
    """With ``compact_at="trigger"``: why the cut stopped short of the full compaction (the latest allowed cut),
    or ``None``."""
    if not (s.at_trigger and s.before > s.trigger and s.H):
        return None
    cut, full = ch.cut, max(s.allowed)
    if cut >= full:  # ties go to the later cut, so the full compaction is strictly larger
        return None
    return (("" if cut == 0 else f"the cut stops at {s.at(cut)}: ")
            + f"compacting up to {s.at(full)} would not make the prompt smaller ({fmt(s.size(full))} "
            "tokens), the summary and re-injected items taking at least as many tokens as the "
            "messages they replace")


def plan_reason(search: CutSearch, ch: Choice, plans: list[MessagePlan], moved: str | None,
                short: str | None) -> str:
    """The plan's human sentence(s), joined with ``"; "``: what was done, the notes ``moved``
    (:func:`moved_note`) and ``short`` (:func:`short_note`), and, when the plan does not fit or stays above the
    trigger, why and which setting would help.  ``plans`` are the messages' fates with the chosen cut ``ch``.
    """
    policy, before, budget, H, floor, summary = (search.policy, search.before, search.budget, search.H,
                                                 search.floor, search.summary)
    pinned, tools, starts, suffix, max_cut, overhead = (search.pinned_tokens, search.tools_tokens, search.starts,
                                                        search.suffix, search.max_cut, search.overhead)
    cut, after, fits, chosen, kept_units, beyond = ch.cut, ch.after, ch.fits, ch.reinjected, ch.kept_units, ch.beyond
    older = suffix[0] - suffix[max_cut]  # the history older than the newest units: what may be compacted
    inside = inside_turn(search, ch)
    unit = policy.unit
    trigger = policy.trigger_tokens
    at_trigger = policy.compact_at == "trigger"
    parts: list[str] = []
    pinned_hist = sum(m.tokens for m in plans if m.fate == "pinned" and m.source_index is not None)
    fixed = "the floor alone" if not pinned_hist else "the floor and the pinned messages alone"
    if cut == 0:
        if before <= budget:
            s = f"fits: {fmt(before)} tokens within the budget of {fmt(budget)}; nothing evicted"
            if before > trigger:
                s += f" (above the compaction trigger of {fmt(trigger)})"
            elif at_trigger:
                s += f" (not above the compaction trigger of {fmt(trigger)})"
            parts.append(s)
    if cut > 0:
        if at_trigger:
            s = f"compaction: {fmt(before)} tokens are above the compaction trigger of {fmt(trigger)}"
            if not short and cut == max_cut:
                recent = min(policy.keep_recent, len(starts))
                s += (f", so everything older than the newest {recent} {unit}{'s' if recent != 1 else ''} goes"
                      if recent else ", so the whole history goes (keep_recent 0)")
            parts.append(s)
        gone = [m for m in plans if m.fate in ("summarised", "evicted")]
        gone_tokens = sum(m.tokens for m in gone)
        verb = "summarised" if policy.mode == "summarise" else "evicted"
        s = (f"{verb} {len(gone)} message{'s' if len(gone) != 1 else ''} ({fmt(gone_tokens)} tokens)")
        if policy.mode == "summarise":
            s += f" into a summary of ~{fmt(summary)} tokens"
        kept = H - cut
        s += f"; kept {kept} message{'s' if kept != 1 else ''}"
        if kept:
            s += f" ({kept_units} {unit}{'s' if kept_units != 1 else ''})"
        if chosen:
            s += "; re-injected " + ", ".join(f"{r.kind} ({fmt(r.tokens)})" for r in chosen)
        s += f"; {fmt(before)} -> {fmt(after)} tokens, budget {fmt(budget)}"
        parts.append(s)
        if inside:
            parts.append(inside)
    if moved:
        parts.append(moved)
    if short:
        parts.append(short)
    if at_trigger and fits and after > trigger:
        # (the full compaction does not depend on the budget: a larger one helps when its trigger holds it)
        below = _budget_hint(policy, after, under_trigger=True)
        if floor > trigger:
            parts.append(f"{fixed} ({fmt(floor)} tokens) {'is' if not pinned_hist else 'are'} above the compaction "
                         f"trigger of {fmt(trigger)}, "
                         "so no compaction brings the prompt below it; shorten the system prompt or tool schemas"
                         + (", or " + below if below else ""))
        else:
            s = (f"still above the compaction trigger of {fmt(trigger)} after the compaction, so the next call "
                 "compacts again" if cut > 0 else f"stays above the compaction trigger of {fmt(trigger)}")
            parts.append(s + "; lower keep_recent or summary_tokens" + (", or " + below if below else ""))
    if not fits:
        # ``after`` is the smallest plan these settings allow, whatever the budget: a budget that holds it fits.
        raise_budget = _budget_hint(policy, after)
        # (None: it is larger than the window, so no budget or reserve can; the sentence then says so)
        over = f"over the budget of {fmt(budget)}" + (
            "" if after <= policy.window else " (the whole window)" if budget >= policy.window
            else f" and the {fmt(policy.window)}-token window")
        if floor > budget:
            terms = [(f"system prompt {fmt(pinned - pinned_hist)}", pinned - pinned_hist),
                     (f"pinned messages {fmt(pinned_hist)}", pinned_hist), (f"tool schemas {fmt(tools)}", tools)]
            shown = [t for t, n in terms if n]
            parts.append(
                f"does not fit: {fixed} ("
                + (" + ".join(shown) + " = " if len(shown) > 1 else "")
                + f"{fmt(floor)} tokens) exceed{'s' if not pinned_hist else ''} the budget of {fmt(budget)}; the "
                "system prompt, tool schemas and pinned messages are never evicted, so shorten them"
                + (" or " + raise_budget if raise_budget else ""))
        else:
            extra = after - overhead - floor - suffix[cut]  # summary + re-injected items
            breakdown = (f"floor {fmt(floor)} + kept history {fmt(suffix[cut])}"
                         + (f" + summary and re-injected items {fmt(extra)}" if extra else "")
                         + (f" + reply primer {fmt(overhead)}" if overhead else "")
                         + f" = {fmt(after)} tokens")
            # What protects the newest units: keep_recent, or keep_recent_messages when it reaches further back
            # (then lowering both reaches every cut beyond them).
            k_cut = H if not policy.keep_recent else starts[max(len(starts) - policy.keep_recent, 0)] if starts else 0
            by_messages = max_cut < k_cut
            held = (f"keep_recent_messages {policy.keep_recent_messages}" if by_messages
                    else f"keep_recent {policy.keep_recent}")
            lower = ("lower keep_recent_messages" + (" and keep_recent" if policy.keep_recent else "")
                     if by_messages else "lower keep_recent")
            if max_cut < H and cut == max_cut and max_cut in starts:
                if beyond is not None and beyond <= budget:
                    opts = [lower, *(["count exchanges (unit exchange)"] if unit == "turn" else []),
                            *([raise_budget] if raise_budget else [])]
                    hint = ", ".join(opts[:-1]) + " or " + opts[-1] if len(opts) > 1 else opts[0]
                else:
                    # (no lower keep_recent fits either: what stands before the kept units, or the budget, must
                    # change; after "even compacting the newest units gives N", a budget that holds N helps too)
                    if beyond is not None and beyond < after:
                        raise_budget = _budget_hint(policy, beyond)
                    opts = (["lower summary_tokens or re-inject less"] if summary or chosen or beyond is not None
                            else []) + ([raise_budget] if raise_budget else [])
                    hint = (f"even compacting the newest {unit}s gives {fmt(beyond)} tokens; "
                            if beyond is not None else "") + ", or ".join(opts)
                parts.append(
                    f"does not fit: the newest {kept_units} {unit}{'s' if kept_units != 1 else ''} (kept by {held}) "
                    f"take{'' if kept_units != 1 else 's'} {fmt(suffix[max_cut])} tokens; the smallest plan is "
                    f"{breakdown}, {over}" + (f"; {hint}" if hint else ""))
            else:
                opts = ["lower summary_tokens or re-inject less"] if extra else [raise_budget] if raise_budget else []
                if policy.mode == "drop" and not extra and unit == "exchange":
                    opts.insert(0, "summarise or re-inject the task (so the cut may fall inside a user turn)")
                if policy.mode == "summarise" and cut == 0 and 0 < older <= summary:
                    opts.insert(0, f"lower summary_tokens (a summary of ~{fmt(summary)} tokens is larger than the "
                                   f"{fmt(older)} tokens it would replace)")
                if beyond is not None and beyond <= budget:
                    # (the newest units keep the cut before them; compacting them too would fit)
                    opts.insert(0, f"{lower} (compacting the newest {unit}s too gives {fmt(beyond)} tokens)")
                parts.append(f"does not fit: the smallest plan that keeps {unit}s and tool calls whole and starts the "
                             f"sent history on a user message is {breakdown}, {over}"
                             + ("; " + ", or ".join(opts) if opts else ""))
    return "; ".join(parts)
