"""One context analysed as streams, the results merged.

A context may interleave unrelated requests (claude-trace: the agent's calls, helper calls on another model,
``max_tokens: 1`` quota probes); compared call by call, every helper call would look like the system prompt
evicted.  So each model is a stream of its own, and each session and model where sessions interleave; probes
are left out.  Flags of a multi-stream context name their stream in ``evidence``; the forecast, format rule and
calibration are those of the stream most at risk.  A harness's transcript (Claude Code, Codex) is one
conversation whatever the model: its calls of a context build on one history (a ``/model`` switch mid-session
keeps it, and the harness's side calls on other models are not in the transcript), so it is one stream.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ctxwatch.accounting import HARNESS_NAMES, NO_CALIBRATION, Calibrations
from ctxwatch.analysis.flags import SEVERITY_RANK
from ctxwatch.analysis.forecast import ContextCounts, Forecast, Scope
from ctxwatch.analysis.risk import DriftRisk
from ctxwatch.analysis.stream import Analysis, analyze_stream
from ctxwatch.config import Settings
from ctxwatch.model import Call


def analyze_context(cs: list[Call], st: Settings, context: str, reset_set: set[int],
                    system_texts: Mapping[int, str], instruction_text: str | None, risks: bool = True, *,
                    contexts: ContextCounts | None = None, whose: str = "the log's",
                    calibrations: Calibrations = NO_CALIBRATION) -> Analysis:
    """Split the calls ``cs`` of one context into streams, analyse each (:func:`analyze_stream`), merge the
    results.  ``risks=False`` leaves ``drift_risk`` empty (a report without per-call risk skips building them).
    ``contexts``: the calls of the log (``whose``) per context, so that the forecast's notes can say which
    calls they left out (:class:`Scope`).  ``calibrations``: the run's, for the floor's parts in the reasons
    (:func:`analyze_stream`)."""
    probes = [c for c in cs if c.provenance.probe]
    analysed = [c for c in cs if not c.provenance.probe]
    by_session = sessions_interleave(analysed)
    one_conversation = bool(analysed) and all(c.provenance.harness in HARNESS_NAMES for c in analysed)
    streams: dict[tuple[str | None, str | None], list[Call]] = {}
    for c in analysed:
        streams.setdefault((c.session if by_session else None, None if one_conversation else c.model), []).append(c)
    models = {model for _, model in streams}
    sessions = {session for session, _ in streams}
    elsewhere_ctx = contexts.elsewhere(context) if contexts is not None else []

    def scope(key: tuple[str | None, str | None], calls: list[Call]) -> Scope:
        left: list[tuple[int, str]] = []
        if len(streams) > 1:
            n = len(streams) - 1
            where = (f"on {n} other model{'s' if n != 1 else ''}" if not by_session
                     else f"in {n} other session{'s' if n != 1 else ''}" if len(models) == 1
                     else f"in {n} other session and model stream{'s' if n != 1 else ''}")
            left.append((len(analysed) - len(calls), where))
        if probes:
            left.append((len(probes), f"quota probe{'s' if len(probes) != 1 else ''} (max_tokens 1), left out"))
        session, model = key
        return Scope(model=(model or "an unlogged model") if len(models) > 1 else None,
                     context=context if elsewhere_ctx else None, elsewhere=tuple(left + elsewhere_ctx),
                     whose=whose, session=(session or "without id") if len(sessions) > 1 else None)

    if len(streams) <= 1 and not probes:
        return analyze_stream(cs, st, context, reset_set, system_texts, instruction_text, risks,
                              scope((None, cs[0].model if cs else None), cs), calibrations)
    results = [analyze_stream(calls, st, context, reset_set, system_texts, instruction_text, risks,
                              scope(key, calls), calibrations)
               for key, calls in streams.items()]
    if len(results) > 1:
        for (session, model), res in zip(streams, results, strict=True):
            for f in res.flags:
                if len(models) > 1:
                    f.evidence["stream_model"] = model
                if by_session:
                    f.evidence["stream_session"] = session
    # The primary stream is one that can be forecast (enough calls, building on each other), and among those the
    # one whose latest occupancy is largest: the context at risk of overflowing.  A helper model's two calls,
    # larger than the agent's but too few to project, would otherwise hide the agent's forecast behind "not
    # enough data".  When no stream can be forecast, the largest one says why.
    primary = max(results, key=lambda a: (a.forecast.enough_data, a.forecast.occupancy_tokens or -1), default=None)
    flags = sorted((f for a in results for f in a.flags), key=lambda f: (f.call, -SEVERITY_RANK[f.severity]))
    all_risks = [r for a in results for r in a.drift_risk]
    if risks:
        all_risks += [DriftRisk(c.index, "low", "low: quota probe (max_tokens 1), not analysed") for c in probes]
    all_risks.sort(key=lambda r: r.call)
    drifts = [a.first_drift for a in results if a.first_drift is not None]
    if primary is None:
        n = len(probes)
        note = (f"none: only quota probes ({n} call{'s' if n != 1 else ''} with max_tokens 1), which are left out "
                "of the forecast") if probes else "no calls"
        return Analysis(context, flags, Forecast(note=note), all_risks)
    return Analysis(context, flags, primary.forecast, all_risks, primary.format_rule, min(drifts, default=None),
                    primary.calibration)


def sessions_interleave(calls: Sequence[Call]) -> bool:
    """True when a session id comes back after another session's call (``A B A``): unrelated runs logging to
    one file, which must be analysed apart.  Sessions that follow one another (``A A B B``: a folder's session
    files, read one after the other) do not interleave."""
    done: set[str | None] = set()
    prev: Call | None = None
    for c in calls:
        if prev is not None and c.session != prev.session:
            if c.session in done:
                return True
            done.add(prev.session)
        prev = c
    return False
