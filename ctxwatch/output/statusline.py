"""``ctxwatch statusline``: one short line on a session's context, for Claude Code's status line hook and tmux.

``ctx 53% of 200k · floor 32k / hist 74k · 43k to trigger · ! over_budget #43``: the main context's occupancy
of the window (its last plausible call, or the size a pending compaction left), the floor (system prompt +
tool schemas) and the history of that call as every view shows them (calibrated where the tokenizer is not
the model's), the distance to compaction, and the worst flag of the current episode (since the last
compaction or reset; :func:`ctxwatch.analysis.worst_flag`: the most severe, then the most recent).  Unknown
numbers are ``?``, never 0.

The distance to compaction is to the size the harness last compacted at when the log says it (Claude Code's
``compact_boundary`` ``preTokens``: ``to compaction (seen at 170k)``) and the call's trigger is the harness's own
in that same window, else to the call's own compaction trigger as every view draws it
(:class:`ctxwatch.analysis.Limits`: its harness's rule, else ``trigger`` x budget; a ``--window`` or ``--trigger``
given is the user's what-if, which the harness's compactions say nothing of, and a window the hook states is
the session's now, not necessarily the one its earlier compactions ran in).
"""

from __future__ import annotations

from ctxwatch.analysis import Analysis, Limits, analyze_run, worst_flag
from ctxwatch.engine import Run
from ctxwatch.model import Call, Src

#: The mark of each flag severity on the line (as the dashboard's side panel marks them).
SEVERITY_MARK = {"critical": "!!", "warn": "!", "info": "i"}


def short(n: int | float | None) -> str:
    """A token count in a few characters: ``950``, ``32k``, ``1.2M``; ``?`` for ``None``."""
    if n is None:
        return "?"
    n = round(n)
    if abs(n) < 1000:
        return str(n)
    if abs(n) < 1_000_000:
        return f"{n / 1000:.0f}k" if abs(n) >= 9_950 else f"{n / 1000:.1f}k"
    return f"{n / 1_000_000:.1f}M"


def _last_call(run: Run, context: str) -> Call | None:
    """The context's last call with a plausible prompt size, else its last call."""
    calls = [c for c in run.calls if c.context == context]
    return next((c for c in reversed(calls) if c.prompt_tokens is not None), calls[-1] if calls else None)


def _seen_compaction(run: Run, call: Call) -> int | None:
    """The prompt size (tokens) the log says the harness last compacted ``call``'s context at (a compaction
    marker's ``pre_tokens`` on a call up to ``call`` in the same window), or ``None``.  A marker of another
    window (a switch to a 1M model) says nothing of this call's compaction point."""
    for c in reversed(run.calls):
        if c.context == call.context and c.index <= call.index and c.compaction:
            pre = c.compaction.get("pre_tokens")
            if isinstance(pre, int) and pre > 0 and c.compaction.get("pre_tokens_from") is None:
                return pre if c.window == call.window else None
    return None


def line_context(run: Run) -> str:
    """The context the line is of: the main context, else the run's first."""
    return "main" if any(c.context == "main" for c in run.calls) else (run.contexts() or ["main"])[0]


def statusline(run: Run, analyses: dict[str, Analysis] | None = None) -> str:
    """The status line of ``run`` (see the module's docstring); ``analyses``: :func:`analyze_run`'s, computed
    here (without re-reading texts or building drift risks) when ``None``."""
    context = line_context(run)
    call = _last_call(run, context)
    if call is None:
        return "ctx ? · no call yet"
    factors = run.factors()  # (O(calls): worked out once, for the size, the parts and the analysis)
    occupancy, _src = run.occupancy(context, factors)
    window = call.window
    used = f"{100 * occupancy / window:.0f}%" if occupancy is not None and window else "?"
    shown = factors.breakdown(call)
    # (an occupancy unknown since the last call, a compaction after it with no size logged, leaves that call's
    # history stale: only its floor, the system prompt and tools, is still sent)
    history = shown.history_tokens if occupancy is not None else None
    parts = [f"ctx {used} of {short(window)}", f"floor {short(shown.floor_tokens)} / hist {short(history)}"]
    if analyses is None:
        analyses = analyze_run(run, texts=False, risks=False, calibrations=factors)
    analysis = analyses.get(context)
    # (the trigger of the call shown, as the dashboard draws it: a log of several sessions and models, an
    # OpenTelemetry export, has one per call, where the forecast's is its newest session's)
    lim = Limits.of(call, run.settings)
    # (where the harness's rule sets the trigger, the size it was seen compacting at is the closer figure; a
    # --window or --trigger of the user's is a what-if the harness never ran, judged by the call's own trigger)
    # A window the harness states now (its hook's) says nothing of the window earlier compactions ran in.
    stated = run.settings.stated_window is not None and call.window_src == Src.HARNESS
    seen = _seen_compaction(run, call) if lim.trigger_rule and not stated else None
    limit, what = (seen, f"compaction (seen at {short(seen)})") if seen else (lim.trigger, "trigger")
    if limit is None or occupancy is None:
        parts.append(f"? to {what}")
    elif occupancy >= limit:
        parts.append(f"{what} crossed by {short(occupancy - limit)}")
    else:
        parts.append(f"{short(limit - occupancy)} to {what}")
    # (the flags of the call's own session since its last compaction or reset: another session's, or those
    # of a context compacted since, are not this line's)
    ours = {c.index for c in run.calls if c.context == context and c.session == call.session}
    resets = [at for r in run.resets if isinstance(at := r.get("at_call"), int)]
    since = max([c.index for c in run.calls if c.index in ours and c.compaction] + resets + [0])
    flags = [f for f in (analysis.flags if analysis is not None else []) if f.call >= since and f.call in ours]
    worst = worst_flag(flags)
    if worst is not None:
        parts.append(f"{SEVERITY_MARK.get(worst.severity, '!')} {worst.kind} #{worst.call + 1}")
    else:
        parts.append("no flags")
    return " · ".join(parts)
