"""The ``ctxwatch report --json`` document (schema documented in docs/json-schema.md; later versions only add keys).

Top level: ``file``, ``format`` (the first file's), ``formats`` (every format read, for a folder),
``settings``, ``calls`` (one object per call, see :func:`call_json`),
``sessions`` (per-session totals of reported usage, each response counted once), ``calibration`` and
``issues`` (one per bad line: ``line``, ``kind``, ``message``, ``file``).
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

from ctxwatch.accounting import Calibrations
from ctxwatch.catalog.documented import window_note
from ctxwatch.catalog.windows import call_cost, priced_as
from ctxwatch.engine import Run
from ctxwatch.model import (
    Breakdown,
    Call,
    Issue,
    Src,
    fraction_of,
    free_of,
    shown_breakdown,
    shown_used,
)
from ctxwatch.output.fields import instance_of, iso
from ctxwatch.output.sessions import session_totals


def cost_of(call: Call) -> Decimal | None:
    """The call's estimated cost in USD (:func:`ctxwatch.catalog.windows.call_cost`), at the batch rate for a batch
    results line (:attr:`~ctxwatch.model.Provenance.batch_side` ``output``); 0 for a refused request (an error
    response
    without
    usage, :attr:`~ctxwatch.model.Provenance.error`: OpenAI and Anthropic bill no tokens for a request they reject);
    ``None`` when it
    cannot be priced."""
    if call.usage is None and call.provenance.error:
        return Decimal(0)
    return call_cost(call.model, call.provider, call.usage, call.timestamp,
                     batch=call.provenance.batch_side == "output")


def cost_source(call: Call, cost: Decimal | None) -> str:
    """What the call's cost (:func:`cost_of`) is: ``estimated`` (genai-prices), ``not billed (error response)``
    or ``unknown``."""
    if call.usage is None and call.provenance.error:
        return "not billed (error response)"
    return "estimated" if cost is not None else "unknown"


def priced_as_json(call: Call, cost: Decimal | None) -> dict[str, str] | None:
    """``{"provider", "model"}`` of the genai-prices catalogue entry the call was priced at, which is also the
    entry its catalogue window comes from (genai-prices matches snapshots and aliases to an entry:
    ``gemini-2.5-pro-exp-03-25`` is priced as ``gemini-2.5-pro``); ``None`` when the call has no estimated
    cost (unknown, or a refused request that is not billed)."""
    if cost is None or cost_source(call, cost) != "estimated":
        return None
    entry = priced_as(call.model, call.provider)
    return {"provider": entry[0], "model": entry[1]} if entry is not None else None


def call_json(call: Call, calibration: float | None = None, cost: Decimal | bool | None = False) -> dict[str, Any]:
    """The per-call object of ``report --json`` (tokens are integers; ``null`` = unknown), first its ``number``
    (``#N``, from 1) and ``index`` (from 0), as the CSV's ``call`` and ``index`` columns.

    Args:
        call: the accounted call.
        calibration: the reported/estimated median ratio of the call's model in this run (the run's, when the
            model has no call with both), shown on calls whose tokenizer is not exact.
        cost: the call's cost if already computed (``False`` = compute it here).

    ``instance`` (the agent instance, :func:`instance_of`) is there only for a log that names one.
    """
    u = call.usage
    price = cost_of(call) if isinstance(cost, bool) else cost
    shown = shown_breakdown(call, calibration)
    judged = call.prompt_judged()  # (judged once: this runs for every call of a folder)
    used_tokens = shown_used(call, shown, judged)
    used = fraction_of(call, used_tokens)
    doc = {
        # (the #N people see, the text and check print and `plan --call` takes; index is the same call from 0)
        "number": call.index + 1,
        "index": call.index,
        "line": call.source.line,
        "file": call.source.path,
        "timestamp": iso(call.timestamp),
        "session": call.session,
        "context": call.context,
        "model": call.model,
        "window": call.window,
        "window_source": str(call.window_src),
        # (a documented window: what it is and the provider's page it comes from; null for the others)
        "window_note": window_note(call.model, call.provider) if call.window_src == Src.DOCUMENTED else None,
        "system_tokens": call.system_tokens,
        "tools_tokens": call.tools_tokens,
        "floor_tokens": call.floor_tokens,
        "floor_source": str(call.floor_src),
        "history_tokens": call.history_tokens,
        "history_source": str(call.history_src),
        # (the harness that wrote the log: its own rules are the call's default reserve, budget and trigger)
        "harness": call.provenance.harness,
        "reserve_tokens": call.reserve_tokens,
        "reserve_source": str(call.reserve_src),
        "free_tokens": free_of(call, used_tokens),
        "used_fraction": round(used, 4) if used is not None else None,
        "prompt_tokens_estimated": call.prompt_estimated,
        "prompt_tokens_reported": u.prompt_total if u else None,
        # (the raw report stays above; true says it is no occupancy, so free_tokens and used_fraction are null)
        "prompt_implausible": judged[1],
        "input_uncached_tokens": u.input_uncached if u else None,
        "cache_read_tokens": u.cache_read if u else None,
        "cache_write_tokens": u.cache_write if u else None,
        "completion_tokens_reported": u.output if u else None,
        "reasoning_tokens_reported": u.reasoning if u else None,
        "web_searches": u.web_searches if u else None,
        "service_tier": u.service_tier if u else None,  # (the tier that served the call, priced at its rates)
        "tokenizer": call.tokenizer,
        "exact": call.exact,
        "calibration": None if call.exact or calibration is None else round(calibration, 4),
        "estimate_ratio": (round(u.prompt_total / call.prompt_estimated, 4)
                           if u and u.prompt_total and call.prompt_estimated else None),
        "calibrated": _calibrated(call, calibration, shown),
        "cost_usd": float(price) if price is not None else None,
        "cost_source": cost_source(call, price),
        "priced_as": priced_as_json(call, price),
        "compaction": call.compaction,
        # null where the messages are not in the summary (a Claude Code call whose history is inferred from
        # reported usage, or a log without them)
        "messages": len(call.messages) if call.messages or call.history_src == Src.ESTIMATED else None,
        "tools": list(call.tool_names) if call.tools_tokens is not None else None,  # null: not in the log
    }
    inst = instance_of(call)
    if inst is not None:
        doc["instance"] = inst
    return doc


def _calibrated(call: Call, factor: float | None, shown: Breakdown | None = None) -> dict[str, int | None] | None:
    """The estimated breakdown in tokens scaled by the calibration ``factor`` of the call's model, for calls whose
    tokenizer is not the model's own (Claude, Gemini, unknown models); ``None`` when exact, inferred or no factor
    exists (fewer than :data:`~ctxwatch.accounting.MIN_CALIBRATION_CALLS` calls to take it from).

    These are the numbers the dashboard, the text report and ``plan`` show: the one rule,
    :func:`ctxwatch.model.shown_breakdown` (the floor scaled by the median reported/estimated prompt ratio, the
    history the rest of the reported prompt, labelled "calibrated", never "reported"; the floor capped at the
    prompt the call reports; system + tools = floor).
    """
    b = shown if shown is not None else shown_breakdown(call, factor)
    if not b.calibrated:
        return None
    return {"system_tokens": b.system_tokens, "tools_tokens": b.tools_tokens,
            "floor_tokens": b.floor_tokens, "history_tokens": b.history_tokens}


def issue_json(issue: Issue) -> dict[str, Any]:
    """One issue: ``file``, ``line`` (1-based; 0 = not tied to a line), ``kind``, ``message``."""
    return {"file": issue.path, "line": issue.line, "kind": issue.kind, "message": issue.message}


#: Fewest calls whose analysis (flags, forecast) a report hands to a worker process while it works out and
#: writes the rest (:func:`~ctxwatch.engine.parallel.side_task`): below this, forking costs more than the
#: analysis (about 10 microseconds a call).
SIDE_ANALYSIS_CALLS = 5000


def start_analysis(run: Run) -> Callable[[], dict[str, Any]]:
    """The ``flags`` and ``forecast`` keys of :func:`report_json`, started now (beside this process's own work
    when the run is big) and waited for when the returned function is called."""
    from ctxwatch.analysis import analysis_json

    if len(run.calls) < SIDE_ANALYSIS_CALLS:
        return lambda: analysis_json(run)
    from ctxwatch.engine.parallel import side_task

    return side_task(analysis_json, run)


def report_head(run: Run, factors: Calibrations) -> dict[str, Any]:
    """The keys of :func:`report_json` before ``calls``, in order (``factors``: the run's)."""
    cal = factors.run
    st = run.settings
    fmt, formats = run.format_read()
    return {
        "file": run.path,
        "format": fmt,
        "formats": formats,
        "settings": {"window": st.window, "budget_fraction": st.budget_fraction, "trigger": st.trigger,
                     "reserve": st.reserve if st.reserve < 1 else int(st.reserve), "keep_recent": st.keep_recent},
        "calibration": round(cal, 4) if cal is not None else None,
    }


def report_json(run: Run, *, with_calls: bool = True, costs: list[Decimal | None] | None = None,
                sessions: list[dict[str, Any]] | None = None,
                analysis: Callable[[], dict[str, Any]] | None = None, factors: Calibrations | None = None
                ) -> dict[str, Any]:
    """The whole ``report --json`` document for a run (``with_calls=False``: its ``calls`` left empty, for
    :func:`~ctxwatch.output.chunks.report_json_chunks`, which writes them one by one; ``costs``: each call's
    :func:`cost_of`, when already worked out; ``sessions``: :func:`session_totals`, when already worked out;
    ``analysis``: its ``flags`` and ``forecast``, when already started, see :func:`start_analysis`; ``factors``:
    :meth:`Run.factors`, when already worked out)."""
    analysis = analysis or start_analysis(run)
    factors = factors if factors is not None else run.factors()
    if costs is None and (with_calls or sessions is None):
        costs = [cost_of(c) for c in run.calls]
    doc = report_head(run, factors)
    doc.update({
        "calls": [call_json(c, factors.factor(c), cost) for c, cost in zip(run.calls, costs or [], strict=True)]
        if with_calls else [],
        "sessions": session_totals(run.calls, costs or []) if sessions is None else sessions,
        "resets": run.resets,
        "issues": [issue_json(i) for i in run.issues if i.kind != "reset"],
    })
    doc.update(analysis())
    return doc
