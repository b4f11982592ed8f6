"""A logged call planned: whether it can be, and the token counts its plan starts from, so that the plan's "before"
is the prompt ``report`` shows (the provider's count where the log has one, the calibrated floor where the
tokenizer is not the model's own).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from ctxwatch.accounting import plausible_calibration
from ctxwatch.model import Breakdown, Call, ParsedCall, Src, implausible_what
from ctxwatch.planner.cut import plan_messages
from ctxwatch.planner.plan import Plan
from ctxwatch.planner.policy import Policy
from ctxwatch.tokens import REPLY_PRIMER, Counter, counter_for


def unplannable(call: Call, pc: ParsedCall) -> str | None:
    """Why no eviction plan can be made for a call, or ``None`` when one can.

    A plan needs the call's history and its floor: a usage-only record (Gemini ``usageMetadata``, a batch
    output without its input) has no history, and a Claude Code excerpt that starts mid-session holds only
    part of it, so its floor cannot be told apart from the missing history.  A call whose re-read history
    breaks at a damaged or missing line (:attr:`~ctxwatch.model.Provenance.history_cut`) has only part of its
    messages, and one
    whose
    logged messages are missing or damaged (:attr:`~ctxwatch.model.Provenance.history_unknown`) has none that can be
    trusted.  Where
    the floor is inferred from the reported prompt (``history_reported_only``) and that report is implausible
    (:attr:`Call.prompt_implausible`), there is no floor and no history size to plan from.
    """
    if pc.messages is None and pc.provenance.history_unknown:
        return ("this call's messages are missing from its log line or damaged (see `ctxwatch check`): "
                "nothing to plan")
    if pc.messages is None:
        return "the log holds only this call's usage, not its prompt: nothing to plan"
    if (pc.system is None or pc.history_reported_only) and call.prompt_implausible:
        return (f"its reported prompt is implausible ({implausible_what(call)}), and this format's floor and "
                "history are sized from it: nothing to plan")
    if (pc.system is None or pc.history_reported_only) and call.floor_tokens is None \
            and call.prompt_reported is None and not pc.provenance.history_cut:
        return ("the log reports no usable prompt size for this call (its usage is missing or damaged: see "
                "`ctxwatch check`), and this format's floor is sized from it: nothing to plan")
    if (pc.system is None or pc.history_reported_only) and call.floor_tokens is None:
        return ("the log holds only part of this call's history (it starts mid-session), so its floor cannot "
                "be told apart: nothing to plan")
    if pc.provenance.history_cut:
        # Re-read with its text, the call's chain of messages breaks at a line the file does not hold in usable
        # form (a damaged line, or one never written): a plan of the visible tail, scaled up to the reported
        # prompt, would show a few messages standing for the whole history.
        return ("this call's history breaks at a line missing from the log or damaged (see `ctxwatch check`), "
                "so its messages are incomplete: nothing to plan")
    return None


def scaled_to(counts: Sequence[int], total: int) -> list[int]:
    """``counts`` scaled so that they add up to ``total`` exactly (largest remainders get the rounding).

    Used where a history's size is the provider's count (reported prompt minus the floor) and its messages
    were counted with another tokenizer: each message keeps its share, and the plan starts from what the
    provider saw.  Counts that add up to 0 are returned as they are.
    """
    whole = sum(counts)
    if whole <= 0 or total < 0:
        return list(counts)
    raw = [c * total / whole for c in counts]
    out = [int(r) for r in raw]
    short = total - sum(out)
    for i in sorted(range(len(raw)), key=lambda k: raw[k] - out[k], reverse=True)[:short]:
        out[i] += 1
    return out


@dataclass(frozen=True)
class PlanCounts:
    """The token counts a plan of one logged call starts from (see :func:`plan_counts`).

    Attributes:
        system_tokens / tools_tokens: the pinned floor parts (for a format that does not log them, the whole
            inferred floor is ``system_tokens``).
        tokens: one count per message of the call.
        overhead: tokens outside the messages and the floor (the reply primer of a counted prompt).
        scale: the factor applied to this tokenizer's counts so that they add up to the provider's count
            (1.0 when they were not scaled).
        tools_estimate: when the tool schemas took the gap to the provider's count instead (the model's own
            tokenizer counted everything else exactly), their estimate before; else ``None``.
        floor_scale: when the floor is the calibrated one ``report`` and the dashboard show
            (:func:`ctxwatch.model.shown_breakdown`), the factor it was scaled by (``scale`` is then the
            messages'); else ``None``.
        floor_capped: with ``floor_scale``, True when the calibrated floor was capped at the reported prompt.
        unscaled_ratio: the provider's reported prompt / this tokenizer's count (dimensionless), for a tokenizer
            that is not the model's own, when it is no tokenizer gap (2 or more, 1/2 or less:
            :func:`ctxwatch.accounting.plausible_calibration`), so the counts were left as counted and 'before' is
            not the report (as ``report`` shows such a call: raw); else ``None``.
    """

    system_tokens: int
    tools_tokens: int
    tokens: list[int]
    overhead: int
    scale: float = 1.0
    tools_estimate: int | None = None
    floor_scale: float | None = None
    floor_capped: bool = False
    unscaled_ratio: float | None = None


def plan_counts(call: ParsedCall, counter: Counter, *, floor_tokens: int | None = None,
                history_tokens: int | None = None, prompt_tokens: int | None = None,
                tokens: Sequence[int] | None = None, system_tokens: int | None = None,
                tools_tokens: int | None = None, shown: Breakdown | None = None) -> PlanCounts:
    """The counts to plan ``call`` from, so that the plan's "before" is the prompt ``report`` shows.

    Args:
        call: the parsed call (its text). counter: its model's token rules.
        floor_tokens: for formats that do not log the system prompt and tools (``call.system is None`` or
            ``history_reported_only``: Claude Code, Codex), the accounted (inferred) floor; pinned whole.
        history_tokens: the accounted history when it is the provider's count (``Call.history_src``
            inferred): the messages' counts are scaled to add up to it.
        prompt_tokens: the provider's reported prompt, for a call whose system prompt and tools are logged:
            when this tokenizer's counts (plus the reply primer) add up to something else (a Claude or Gemini
            model counted with o200k_base), every count is scaled to it.  A reported 0 (or less) is no prompt
            size (:attr:`~ctxwatch.model.Call.report_implausible`): it is ignored, and the counts stand unscaled.
        tokens / system_tokens / tools_tokens: counts already made (the accounted summary's), else counted here.
        shown: the call's floor and history as ``report`` and the dashboard show them
            (:meth:`ctxwatch.accounting.Calibrations.breakdown`).  Where they are calibrated (a tokenizer that is
            not the model's own, and a calibration of the model: :attr:`~ctxwatch.model.Breakdown.calibrated`),
            its system and tools are pinned as they are, so that the plan's floor is the one shown everywhere,
            and the messages are scaled to fill ``prompt_tokens`` less that floor and the reply primer (so that
            'before' is still the reported prompt; without a report, to the calibrated history).  Otherwise
            the rules above.
    """
    if prompt_tokens is not None and prompt_tokens <= 0:
        prompt_tokens = None
    msgs = call.messages or []
    if tokens is not None and len(tokens) != len(msgs):
        tokens = None
    counts = list(tokens) if tokens is not None else [counter.message_tokens(m) for m in msgs]
    if call.system is None or call.history_reported_only:
        floor = floor_tokens or 0
        if history_tokens is None and prompt_tokens is not None and floor + sum(counts) != prompt_tokens:
            # (an inferred floor of 0: the reported prompt is below this tokenizer's count of the history)
            history_tokens = max(0, prompt_tokens - floor)
        scale = 1.0
        if history_tokens is not None:
            whole = sum(counts)
            scale = history_tokens / whole if whole else 1.0
            counts = scaled_to(counts, history_tokens)
        return PlanCounts(floor, 0, counts, 0, scale)
    if shown is not None and shown.factor is not None and shown.system_tokens is not None \
            and shown.tools_tokens is not None:
        return _calibrated_counts(counts, shown, prompt_tokens)
    # (the prompt is counted here, so it carries the reply primer the accounting adds; an inferred floor above
    # already holds it, being the reported prompt minus the history)
    sys_t = system_tokens if system_tokens is not None else (
        counter.system_tokens(list(call.system)) if call.system else 0)
    tools_t = tools_tokens if tools_tokens is not None else (
        counter.tools_tokens(list(call.tools)) if call.tools else 0)
    whole = sys_t + tools_t + sum(counts)
    if prompt_tokens is None or prompt_tokens - REPLY_PRIMER == whole or whole <= 0:
        return PlanCounts(sys_t, tools_t, counts, REPLY_PRIMER)
    overhead = min(REPLY_PRIMER, max(0, prompt_tokens))  # (a reported prompt of 0 to 2 tokens: no room for it)
    target = max(0, prompt_tokens) - overhead
    rest = whole - tools_t
    if counter.exact and (tools_t or call.tools is None) and target > rest and not any(
            p.kind in ("image", "document") for m in msgs for p in m.parts):
        # The model's own tokenizer counted the system prompt and every message exactly: the gap is in the tool
        # schemas, whose rendering the provider does not publish (or which the log does not give: tools that
        # are not a list), so they take it (scaling every count would spread it over the system prompt and the
        # history: x2.46 for a call whose 700 tokens of tools are unknown).
        return PlanCounts(sys_t, target - rest, counts, overhead, 1.0, tools_estimate=tools_t)
    if not counter.exact and not plausible_calibration(target / whole):
        # (x108 for a "Be brief." system prompt reported as 5,000 tokens: no tokenizer differs by that much, the
        # log does not show what was counted, and report shows such a call's counts raw: so does the plan.  The
        # model's own tokenizer is not calibrated at all: there the gap is scaled into the counts, below)
        return PlanCounts(sys_t, tools_t, counts, REPLY_PRIMER, unscaled_ratio=(target + overhead) / (
            whole + REPLY_PRIMER))
    scaled = scaled_to([sys_t, tools_t, *counts], target)
    return PlanCounts(scaled[0], scaled[1], scaled[2:], overhead, target / whole)


def logged_counts(call: Call, pc: ParsedCall, shown: Breakdown | None, counter: Counter | None = None) -> PlanCounts:
    """The counts of a logged call as ``plan``, the eviction preview and the call detail show them: the
    accounted ``call``'s numbers given to :func:`plan_counts` over its re-read ``pc``.

    Args:
        call: the accounted call (its floor, history, reported prompt and per-message counts are reused).
        pc: the same call re-read with its text.
        shown: its floor and history as every surface shows them
            (:meth:`ctxwatch.accounting.Calibrations.breakdown`; ``None``: its own, nothing calibrated).
        counter: its model's token rules; default ``counter_for(call.model, call.provider)``.
    """
    return plan_counts(
        pc, counter or counter_for(call.model, call.provider), floor_tokens=call.floor_tokens,
        history_tokens=call.history_tokens if call.history_src == Src.INFERRED else None,
        # (an implausible report is no prompt size: scaling to it would make every message thousands of times its
        # size, so the counts stand as counted)
        prompt_tokens=None if call.prompt_implausible else call.prompt_reported,
        tokens=[m.tokens for m in call.messages] or None,
        system_tokens=call.system_tokens, tools_tokens=call.tools_tokens, shown=shown)


def _calibrated_counts(counts: list[int], shown: Breakdown, prompt_tokens: int | None) -> PlanCounts:
    """:func:`plan_counts` of a call whose floor is shown calibrated: system and tools pinned as ``shown`` has
    them; the messages' ``counts`` (this tokenizer's) scaled to the reported prompt (tokens, > 0, or ``None``)
    less that floor and the reply primer, so the plan's 'before' is the report; without a report, to the
    calibrated history.  The floor keeps the calibration and the history takes what is left of the tokenizer
    gap in this call (the median of the run cannot fit every call exactly), as an inferred history does."""
    assert shown.system_tokens is not None and shown.tools_tokens is not None and shown.factor is not None
    floor = shown.system_tokens + shown.tools_tokens
    raw = sum(counts)
    if prompt_tokens is not None:
        overhead = min(REPLY_PRIMER, prompt_tokens)
        target = max(0, prompt_tokens - overhead - floor)
    else:
        overhead = REPLY_PRIMER
        target = shown.history_tokens if shown.history_tokens is not None else round(raw * shown.factor)
    return PlanCounts(shown.system_tokens, shown.tools_tokens, scaled_to(counts, target), overhead,
                      target / raw if raw else 1.0, floor_scale=shown.factor, floor_capped=shown.capped)


def plan_from_counts(call: ParsedCall, policy: Policy, counter: Counter, counts: PlanCounts) -> Plan:
    """:func:`plan_messages` over ``call``'s messages with ``counts`` (from :func:`plan_counts`)."""
    if call.system is None or call.history_reported_only:
        plan = plan_messages(call.messages or [], policy, counter=counter, tokens=counts.tokens,
                             system_tokens=counts.system_tokens, tools_tokens=0)
        plan.floor_split = False
        return plan
    return plan_messages(call.messages or [], policy, system=call.system or None, tools=call.tools or None,
                         counter=counter, tokens=counts.tokens, system_tokens=counts.system_tokens,
                         tools_tokens=counts.tools_tokens, overhead=counts.overhead)


def plan_call(call: ParsedCall, policy: Policy, counter: Counter | None = None, *,
              floor_tokens: int | None = None, history_tokens: int | None = None,
              prompt_tokens: int | None = None, counts: PlanCounts | None = None) -> Plan:
    """Plan the eviction of a :class:`~ctxwatch.model.ParsedCall` (a reader's output, with text).

    Args:
        call: the parsed call.
        policy: the policy. When it has no explicit ``reserve_tokens``, the call's own
            ``max_output_tokens`` becomes the reserve (if smaller than the window).
        counter: token rules; default: the call's model and provider.
        floor_tokens / history_tokens / prompt_tokens: the accounted numbers the plan starts from (see
            :func:`plan_counts`), so that its "before" is the prompt ``report`` shows.
        counts: those counts already made by :func:`plan_counts` (the three numbers are then not used).
    """
    counter = counter or counter_for(call.model, call.provider)
    if policy.reserve_tokens is None and call.max_output_tokens and call.max_output_tokens < policy.window:
        policy = replace(policy, reserve_tokens=call.max_output_tokens)
    if counts is None:
        counts = plan_counts(call, counter, floor_tokens=floor_tokens, history_tokens=history_tokens,
                             prompt_tokens=prompt_tokens)
    return plan_from_counts(call, policy, counter, counts)
