"""The text of ``ctxwatch plan`` (one call's eviction plan) and ``ctxwatch schema`` (its tool-schema floor).

The plan: a header with the window and tokenizer, the floor, reserve, budget and trigger, how the sizes were
scaled to the provider's count, then one row per message (tool schemas and reply primer on rows of their own, so
the columns add up to 'before' and 'after'; ``saves`` what evicting its exchange frees, ``◆`` the biggest
offenders) and the verdict.  ``--json`` prints :func:`plan_json` (the call's identity, then
:meth:`ctxwatch.planner.Plan.to_json`) and :meth:`ctxwatch.planner.schema.SchemaReport.to_json` instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ctxwatch.accounting import Calibrations
from ctxwatch.model import Breakdown, Call, ParsedCall, implausible_what
from ctxwatch.output.safetext import cells, clean, clip, pad
from ctxwatch.planner import Plan, PlanCounts, Policy, exchange_savings, offenders
from ctxwatch.planner.schema import SchemaReport
from ctxwatch.tokens import Counter


def plan_lines(call: Call, pc: ParsedCall, plan: Plan, policy: Policy, counts: PlanCounts, counter: Counter,
               factors: Calibrations, width: int | None = None) -> Iterator[str]:
    """The lines of ``plan``'s text output, without their newlines.

    Args:
        call / pc: the call's summary and its re-read text. plan: :func:`ctxwatch.planner.plan_call`'s, made with
            ``policy`` and ``counts`` (:func:`ctxwatch.planner.plan_counts`). counter: the tokenizer the counts
            were made with. factors: the run's calibrations (``Run.factors()``), named when they scaled the floor.
        width: the terminal's width in cells (``None``: any): the table's message column is narrowed, down to
            :data:`MIN_LABEL_CHARS`, so that a row fits it.
    """
    floor_note = None
    # (a floor of 0 scaled is still 0: nothing was calibrated, as report shows it, unmarked)
    calibrated_floor = counts.floor_scale is not None and plan.floor_tokens > 0
    if pc.system is None or pc.history_reported_only:
        floor_note = f"{call.floor_src}: this format does not log the system prompt and tools"
    yield (f"{clean(call.source.path)}  #{call.index + 1} ({call.source.where})  model={clean(call.model or '?')}  "
           f"window={policy.window:,}  tokenizer={plan.tokenizer}{'' if counter.exact else ' (estimate)'}")
    floor = (f"floor {plan.floor_tokens:,} ({floor_note})" if floor_note else
             f"floor: system {plan.system_tokens:,} + tools {plan.tools_tokens:,} = {plan.floor_tokens:,}"
             + (" (calibrated, as report shows it)" if calibrated_floor else ""))
    if plan.pinned_tokens:
        # (history messages no plan evicts: report counts them as history, so they are named apart from the floor)
        pinned = [m for m in plan.messages if m.fate == "pinned" and m.source_index is not None]
        floor += (f"; pinned in the history {plan.pinned_tokens:,} ({len(pinned)} message"
                  f"{'s' if len(pinned) != 1 else ''}: " + ", ".join(str(m.number) for m in pinned) + ")")
    yield (f"{floor}; reserve {plan.reserve_tokens:,}; budget {plan.budget_tokens:,}; "
           f"trigger {plan.trigger_tokens:,}")
    yield (f"keep_recent {policy.keep_recent} {policy.unit}{'' if policy.keep_recent == 1 else 's'}; mode "
           f"{policy.mode}; compact at the {policy.compact_at}")
    if counts.tools_estimate is not None:
        what = "not in the log" if pc.tools is None else f"estimated {counts.tools_estimate:,}"
        yield (f"tool schemas sized to the provider's reported prompt: {plan.tools_tokens:,} ({what}); "
               f"{plan.tokenizer} is this model's own tokenizer, so everything else is counted exactly")
    if call.prompt_implausible:
        yield (f"the reported prompt is implausible ({implausible_what(call)}): sizes are {plan.tokenizer} counts, "
               "not scaled to it")
    yield from _scale_lines(call, plan, counts, factors, calibrated_floor)
    names = tool_names(pc)
    labels = [message_label(m.role, m.tool_call_ids, m.tool_result_ids, m.label, names) for m in plan.messages]
    # (in terminal cells, as the command prints the labels: cleaned, a CJK tool name two cells a character)
    rw = min(LABEL_CHARS, max([10, *(cells(clean(x)) for x in labels)]))
    # ``saves``: what evicting the message frees (its whole exchange); ``◆``: the biggest offenders, the same
    # ones the dashboard's eviction preview marks.
    saves = exchange_savings(plan.messages)
    worst = offenders(plan.messages, plan.before_tokens, plan.budget_tokens)
    if width is not None:
        # (a row is the number 5, the label, three counts of 9 and the fate, each after a space or two)
        fate = max([4, *(len(m.fate) for m in plan.messages)]) + (3 if worst else 0)
        rw = max(MIN_LABEL_CHARS, min(rw, width - (5 + 1 + 1 + 9 + 1 + 9 + 1 + 9 + 2 + fate)))
    yield f"{'#':>5} {'message':<{rw}} {'tokens':>9} {'after':>9} {'saves':>9}  fate"
    # The tool schemas and the reply primer are in no message but in every request: rows of their own (index
    # "-"), so that the tokens column adds up to 'before' and the after column, with the summary and the
    # re-injected items, to 'after'.
    tools_row = (f"{'-':>5} {'tools':<{rw}} {plan.tools_tokens:>9,} {plan.tools_tokens:>9,} {'-':>9}  pinned  "
                 "(tool schemas)")
    system_first = bool(plan.messages) and plan.messages[0].source_index is None
    if plan.tools_tokens and not system_first:
        yield tools_row
    for k, (m, label) in enumerate(zip(plan.messages, labels, strict=True)):
        saved = "-" if saves[k] is None else f"{saves[k]:,}"
        yield (f"{m.number:>5} {pad(clip(label, rw), rw)} {m.tokens:>9,} {m.tokens_after:>9,} {saved:>9}  {m.fate}"
               + ("  ◆" if k in worst else ""))
        if k == 0 and system_first and plan.tools_tokens:
            yield tools_row
    if plan.overhead_tokens:
        n = plan.overhead_tokens
        yield (f"{'-':>5} {'primer':<{rw}} {n:>9,} {n:>9,} {'-':>9}  pinned  (reply primer: the tokens that start "
               "the reply)")
    if worst:
        marked = [plan.messages[k] for k in sorted(worst)]
        freed = sum(m.tokens for m in marked)
        n = len({m.exchange for m in marked})
        which = "the exchange whose eviction frees" if n == 1 else f"the {n} exchanges whose eviction frees"
        yield (f"◆ biggest offenders: {which} the most ({freed:,} tokens: message{'s' if len(marked) != 1 else ''} "
               f"{', '.join(str(m.number) for m in marked)})")
    if plan.lead:
        sizes = {r.kind: r.tokens for r in plan.reinject}
        sizes["summary"] = plan.summary_tokens
        yield ("sent before the kept history (user messages): "
               + ", ".join(f"{kind} {sizes[kind]:,}" if kind in sizes else kind for kind in plan.lead))
    for r in plan.reinject:
        yield f"re-inject {r.kind}: {r.tokens:,} tokens ({clean(r.detail)})"  # (it names files of the log)
    yield (f"before {plan.before_tokens:,} -> after {plan.after_tokens:,} tokens; budget {plan.budget_tokens:,}: "
           + ("fits" if plan.fits else "does NOT fit"))
    yield plan.reason


def plan_json(call: Call, plan: Plan) -> dict[str, Any]:
    """The ``plan --json`` document: which call it plans, then :meth:`ctxwatch.planner.Plan.to_json`'s keys.

    The call's keys come first, named as ``report --json``'s per-call object names them
    (:func:`ctxwatch.output.report.call_json`): ``number`` (#N as the text and ``check`` print it and ``--call``
    takes it, from 1), ``index`` (``report --json``'s, from 0: ``number`` - 1, what ``--index`` takes), ``line``
    (the first line of the call's record, from 1), ``file``, ``session``, ``context`` and ``model`` (``null``:
    not in the log).  ``call`` is not used for the number: ``report --json``'s flags name a call's index so.
    """
    return {"number": call.index + 1, "index": call.index, "line": call.source.line, "file": call.source.path,
            "session": call.session, "context": call.context, "model": call.model, **plan.to_json()}


#: Widest message label in the plan's table (``assistant → Bash, Read, Edit`` is cut there with ``…``).
LABEL_CHARS = 40

#: Narrowest the message column gets to fit a terminal's width (``tool result (m…``): below it rows wrap.
MIN_LABEL_CHARS = 16


def tool_names(pc: ParsedCall) -> dict[str, str]:
    """Tool-use id -> tool name, from the tool calls of the call's messages."""
    return {p.call_id: p.name or "?" for m in pc.messages or () for p in m.parts
            if p.kind == "tool_call" and p.call_id}


def message_label(role: str, calls: tuple[str, ...], results: tuple[str, ...], label: str | None,
                  names: dict[str, str]) -> str:
    """A message as the dashboard names it: ``assistant → Bash, Read`` for one making tool calls, ``tool result
    (Bash)`` for one answering them (named by the calls, ``?`` for an id no call in the request made), else its
    role; the reader's label after it (``user [compaction_summary]``)."""
    if results:
        out = "tool result (" + ", ".join(names.get(i, "?") for i in results) + ")"
    elif calls:
        out = f"{role} → " + ", ".join(names.get(i, "?") for i in calls)
    else:
        out = role
    return out + (f" [{label}]" if label else "")


def _scale_lines(call: Call, plan: Plan, counts: PlanCounts, factors: Calibrations,
                 calibrated_floor: bool) -> Iterator[str]:
    """How the plan's sizes relate to the provider's reported prompt: calibrated, left raw, or scaled to it (no
    line when the counts match the report to 0.5 %)."""
    if calibrated_floor:
        # (4 places, as report --json gives the calibration and estimate_ratio)
        cal = factors.factor(call)
        why = (f"capped at the reported prompt, as {clean(call.model or '?')}'s calibration"
               + (f" {cal:.4f}" if cal is not None else "") + " would put it above it"
               if counts.floor_capped else f"{clean(call.model or '?')}'s calibration, as in report --json")
        to = ("scaled to the provider's reported count less that floor" if call.prompt_reported
              else "scaled by the calibration too (the call reports no prompt)")
        yield (f"the floor is {plan.tokenizer}'s count x{counts.floor_scale:.4f} ({why}); the messages are "
               f"{plan.tokenizer} counts x{counts.scale:.4f}, {to}, so that 'before' is the prompt report shows")
    elif counts.unscaled_ratio is not None:
        yield (f"sizes are {plan.tokenizer} counts, not scaled: the provider's reported prompt "
               f"({call.prompt_reported or 0:,}) is x{counts.unscaled_ratio:.4f} this count, more than tokenizers "
               "differ by, so the log does not show what was counted (report shows this call's counts raw too)")
    elif abs(counts.scale - 1.0) >= 0.005:
        yield (f"sizes are {plan.tokenizer} counts x{counts.scale:.4f}, scaled to the provider's reported count, "
               "so that 'before' is the prompt report shows")


def schema_lines(call: Call, rep: SchemaReport, shown: Breakdown | None = None) -> Iterator[str]:
    """The lines of ``schema``'s text output: per tool its tokens, its compacted tokens and the saving, then the
    totals, the floor with the system prompt, the saving over the run and the report's notes.

    ``shown``: the call's floor as ``report`` shows it (:meth:`ctxwatch.accounting.Calibrations.breakdown`):
    the counts here are the tokenizer's own, so a floor that is not the model's own tokenizer's count says it
    is an uncalibrated estimate, and names report's calibrated floor where one applies."""
    yield (f"{clean(call.source.path)}  #{call.index + 1} ({call.source.where})  model={clean(call.model or '?')}  "
           f"{len(rep.tools)} tools  tokenizer={rep.tokenizer}{'' if rep.exact else ' (estimate)'}")
    if not rep.tools:
        yield "no tool schemas in this call"
        return
    width = max(12, *(cells(clean(t.name)) for t in rep.tools))  # (in cells: the names as printed)
    yield f"{'tool':<{width}} {'tokens':>8} {'compacted':>10} {'saved':>8}"
    for t in sorted(rep.tools, key=lambda t: -t.tokens):
        yield f"{pad(clean(t.name), width)} {t.tokens:>8,} {t.compacted_tokens:>10,} {t.saved:>8,}"
    yield f"{'(preamble)':<{width}} {rep.preamble_tokens:>8,}"
    yield f"{'total':<{width}} {rep.total_tokens:>8,} {rep.compacted_total:>10,} {rep.saved_per_call:>8,}"
    if rep.system_tokens is not None:
        yield (f"system prompt {rep.system_tokens:,} tokens; floor {rep.system_tokens + rep.total_tokens:,} "
               f"({_floor_label(rep, shown)})")
    yield (f"saved {rep.saved_per_call:,} tokens per call x {rep.calls} calls with these tools = "
           f"{rep.saved_run:,} over the run")
    for note in rep.notes:
        yield f"note: {note}"


def _floor_label(rep: SchemaReport, shown: Breakdown | None) -> str:
    """What ``schema``'s floor is: the model's own tokenizer's count, or an uncalibrated estimate of the
    tokenizer named, with report's calibrated floor beside it where a calibration applies."""
    if rep.exact:
        return f"counted with {rep.tokenizer}, the model's own tokenizer"
    label = f"{rep.tokenizer} estimate, uncalibrated"
    if shown is not None and shown.calibrated and shown.floor_tokens and shown.factor is not None:
        label += f"; report shows {shown.floor_tokens:,}≈, calibrated x{shown.factor:.4f}"
    return label
