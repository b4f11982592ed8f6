"""The ``ctxwatch report --json`` document (schema documented in docs/json-schema.md; later versions only add keys).

Top level: ``file``, ``format`` (the first file's), ``formats`` (every format read, for a folder),
``settings``, ``calls`` (one object per call, see :func:`call_json`),
``sessions`` (per-session totals of reported usage, each response counted once), ``calibration`` and
``issues`` (one per bad line: ``line``, ``kind``, ``message``, ``file``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
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
    session_ranks,
    shown_breakdown,
    shown_fraction,
    shown_free,
)


def iso(ts: float | None) -> str | None:
    """ISO-8601 UTC text for epoch seconds (``None`` stays ``None``)."""
    if ts is None:
        return None
    try:
        return datetime.fromtimestamp(ts, tz=UTC).isoformat().replace("+00:00", "Z")
    except (OverflowError, OSError, ValueError):
        return None


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
    """The per-call object of ``report --json`` (tokens are integers; ``null`` = unknown).

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
    used = shown_fraction(call, shown)
    doc = {
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
        "free_tokens": shown_free(call, shown),
        "used_fraction": round(used, 4) if used is not None else None,
        "prompt_tokens_estimated": call.prompt_estimated,
        "prompt_tokens_reported": u.prompt_total if u else None,
        # (the raw report stays above; true says it is no occupancy, so free_tokens and used_fraction are null)
        "prompt_implausible": call.prompt_implausible,
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


def instance_of(call: Call) -> dict[str, str] | None:
    """The agent instance that made the call, as its log names it (an OpenTelemetry resource's ``service.name``,
    ``service.instance.id`` and ``host.name``), or ``None`` for a log that names none: ``report --json`` then
    leaves the key out, so that the document of every other log stays as it was."""
    inst = call.provenance.details.get("instance")
    return inst if isinstance(inst, dict) and inst else None


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


def session_totals(calls: list[Call], costs: Sequence[Decimal | float | None] | None = None
                   ) -> list[dict[str, Any]]:
    """Per-session sums of reported usage (each response once; calls are already deduplicated).

    Returns one object per session, **newest first** (by its last call's timestamp): ``session``,
    ``files`` (the logs it was read from), ``first_timestamp``/``last_timestamp`` (ISO-8601), ``calls``,
    ``contexts`` (main and subagent contexts seen), ``calls_with_usage`` (calls whose log reports usage),
    ``input_tokens`` (whole prompts, cache reads and writes included: OpenAI's ``prompt_tokens``),
    ``input_uncached_tokens`` (neither read from nor written to the cache: Anthropic's and ccusage's
    ``input_tokens``), ``output_tokens``, ``cache_read_tokens``,
    ``cache_write_tokens`` (each the sum over the calls that report it, the prompt's three parts over the calls
    that report a prompt, so that they add up to it; ``null`` when none does: unknown, never 0),
    ``peak_prompt_tokens`` (main context: the largest plausible prompt, :attr:`Call.prompt_tokens`; an
    implausible report is no occupancy), ``peak_prompt_source`` (``reported``, or ``estimated`` when the peak
    call reports no prompt and its size is ctxwatch's count: an estimate is labelled as one; ``null`` with no
    peak), ``cost_usd`` (``null`` when any call of the session could not be
    priced), ``implausible_prompts`` (calls whose reported prompt is implausible,
    :attr:`Call.prompt_implausible`: one above the window is still in the token sums and the cost as
    reported, since that is what the provider counted; a reported 0 is in neither), ``run_totals`` (the log's own
    totals for the whole run when no call reports usage, see :func:`_run_totals`; else ``null``), and
    ``instances`` (the agent instances its calls name, :func:`instance_of`; only for a log that names them).
    ``costs`` are the calls' costs in USD (:func:`cost_of`, or those as floats) if already computed.
    """
    out: dict[str | None, dict[str, Any]] = {}
    times: dict[str | None, list[float]] = {}
    for i, c in enumerate(calls):
        s = out.get(c.session)
        if s is None:
            s = out[c.session] = {"session": c.session, "files": [], "first_timestamp": None,
                                  "last_timestamp": None, "calls": 0, "contexts": [], "calls_with_usage": 0,
                                  "input_tokens": None, "input_uncached_tokens": None, "output_tokens": None,
                                  "cache_read_tokens": None, "cache_write_tokens": None,
                                  "peak_prompt_tokens": None, "peak_prompt_source": None, "cost_usd": 0.0,
                                  "run_totals": None,
                                  "implausible_prompts": 0}
        s["calls"] += 1
        if (inst := instance_of(c)) is not None and inst not in s.setdefault("instances", []):
            s["instances"].append(inst)
        if c.source.path not in s["files"]:
            s["files"].append(c.source.path)
        if c.context not in s["contexts"]:
            s["contexts"].append(c.context)
        if c.timestamp is not None:
            times.setdefault(c.session, []).append(c.timestamp)
        u = c.usage
        if u:
            s["calls_with_usage"] += 1
            # (a reported prompt of 0 is no prompt size, see Call.report_implausible: not summed as one)
            prompt = u.prompt_total if u.prompt_total else None
            # (the prompt's parts are summed over the calls whose prompt is known, so that they add up to
            # input_tokens: a call whose prompt a damaged part made unknown adds none of its parts)
            if prompt is not None:
                s["input_tokens"] = (s["input_tokens"] or 0) + prompt
                if (v := u.input_uncached) is not None:
                    s["input_uncached_tokens"] = (s["input_uncached_tokens"] or 0) + v
                if (v := u.cache_read) is not None:
                    s["cache_read_tokens"] = (s["cache_read_tokens"] or 0) + v
                if (v := u.cache_write) is not None:
                    s["cache_write_tokens"] = (s["cache_write_tokens"] or 0) + v
            if (v := u.output) is not None:
                s["output_tokens"] = (s["output_tokens"] or 0) + v
        # (Call.prompt_tokens is None for an implausible report: it is summed above, but no peak occupancy)
        report_implausible, implausible, p = c.prompt_judged()
        s["implausible_prompts"] += implausible
        if c.context == "main" and p is not None and (s["peak_prompt_tokens"] is None or p > s["peak_prompt_tokens"]):
            s["peak_prompt_tokens"] = p
            # (Call.prompt_tokens takes the report when it is plausible, else the call's own estimate)
            s["peak_prompt_source"] = "reported" if c.prompt_reported and not report_implausible else "estimated"
        cost = costs[i] if costs is not None else cost_of(c)
        if cost is None or s["cost_usd"] is None:
            s["cost_usd"] = None
        else:
            # (rounded to 1e-12 dollars: float sums of Decimal costs print as 2.3195675000000002)
            s["cost_usd"] = round(s["cost_usd"] + float(cost), 12)
    for key, ts in times.items():
        out[key]["first_timestamp"], out[key]["last_timestamp"] = iso(min(ts)), iso(max(ts))
    for key, s in out.items():
        if not s["calls_with_usage"]:
            s["run_totals"] = _run_totals([c for c in calls if c.session == key])
    rank = session_ranks(calls)  # (newest first, as the forecast and plan pick the newest)
    return sorted(out.values(), key=lambda s: rank[s["session"]], reverse=True)


def _run_totals(calls: list[Call]) -> dict[str, Any] | None:
    """A session's totals as its log states them for the whole run when no call reports its own usage
    (SWE-agent's ``info.model_stats``: ``tokens_sent``, ``tokens_received``, ``instance_cost``, ``api_calls``),
    or ``None``.  Kept apart from the per-call sums, which stay ``null``: the split over calls is unknown."""
    stats = next((c.provenance.cumulative for c in calls if isinstance(c.provenance.cumulative, dict)), None)
    if stats is None or "tokens_sent" not in stats:
        return None

    from ctxwatch.formats import count_or_none

    cost = stats.get("instance_cost")
    return {"input_tokens": count_or_none(stats.get("tokens_sent")),
            "output_tokens": count_or_none(stats.get("tokens_received")),
            "cost_usd": float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None,
            "api_calls": count_or_none(stats.get("api_calls")), "source": "model_stats"}


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
                     "reserve": st.reserve, "keep_recent": st.keep_recent},
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
        "sessions": session_totals(run.calls, costs) if sessions is None else sessions,
        "resets": run.resets,
        "issues": [issue_json(i) for i in run.issues if i.kind != "reset"],
    })
    doc.update(analysis())
    return doc
