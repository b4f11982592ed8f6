"""The entry points: one context (:func:`analyze`), every context of a run (:func:`analyze_run`), and the
``flags`` / ``forecast`` keys of ``report --json`` and ``check --json`` (:func:`analysis_json`).

Calls hold no text, but the format rule and the echo check need the system prompt: :func:`collect_texts`
re-reads one per distinct prompt, and a caller's ``text_cache`` keeps them between recomputations.  Flags are
recomputed, not appended; :attr:`Flag.key` is stable, so "a new flag appeared" is a difference of keys.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ctxwatch.accounting import Calibrations, calibrations_of
from ctxwatch.analysis.context import analyze_context
from ctxwatch.analysis.flags import SEVERITY_RANK
from ctxwatch.analysis.forecast import ContextCounts, Forecast, pending_forecast
from ctxwatch.analysis.responses import INSTRUCTION_MAX_CHARS
from ctxwatch.analysis.stream import Analysis
from ctxwatch.config import Settings
from ctxwatch.model import Call, session_ranks

if TYPE_CHECKING:
    from ctxwatch.engine import Run


#: Distinct system prompts re-read from disk per context by :func:`collect_texts` (bounds I/O and memory).
MAX_SYSTEM_TEXTS = 8


def analyze(calls: Sequence[Call], settings: Settings, *, context: str = "main", resets: Iterable[int] = (),
            system_texts: Mapping[int, str] | None = None, instruction_text: str | None = None,
            pending_compaction: Mapping[str, Any] | None = None,
            calibrations: Calibrations | None = None) -> Analysis:
    """Flags, forecast and per-call drift risk for the calls of one context.

    Args:
        calls: the run's calls in order (``Run.calls``); calls of other contexts are ignored.
        settings: thresholds (budget fraction, trigger, reserve); the window override is already applied to
            each :attr:`Call.window` by the accounting.
        context: the context to analyse (``main`` or a sidechain id).
        resets: call indexes at which the log was truncated or replaced (``Run.resets[*]["at_call"]``): the
            history starts over there.
        system_texts: system prompt texts keyed by :attr:`Call.system_key` (the content hash, so one entry per
            distinct prompt, not per call).  Needed for the format rule and the echo check; without it those
            fall back to ``instruction_text`` / the observed rule, or stay silent.  See :func:`collect_texts`.
        instruction_text: the first user message of the context, where a ``CLAUDE.md``-like preamble may state
            the format rule when the system prompt does not (or is not logged).
        pending_compaction: a compaction marker logged after the last call, whose next call has not arrived
            (``Run.pending_compactions()[context]``): the forecast restarts at once, from the marker's
            ``post_tokens`` when the log gives it.
        calibrations: the run's (:meth:`ctxwatch.engine.run.Run.factors`), with which the reasons give a floor's
            parts as every surface shows them (:meth:`~ctxwatch.accounting.Calibrations.breakdown`); default:
            those of ``calls`` (:func:`~ctxwatch.accounting.calibrations_of`).

    Returns:
        The :class:`Analysis`.  Never raises for odd data.
    """
    cs = [c for c in calls if c.context == context]
    counts: dict[str, int] = {}
    for c in calls:
        counts[c.context] = counts.get(c.context, 0) + 1
    a = analyze_context(cs, settings, context, set(resets), system_texts or {}, instruction_text,
                        contexts=ContextCounts(counts),
                        calibrations=calibrations if calibrations is not None else calibrations_of(calls))
    if pending_compaction is not None:
        a.forecast = pending_forecast(a.forecast, cs, pending_compaction)
    return a


def collect_texts(run: Run, context: str = "main", *, max_texts: int = MAX_SYSTEM_TEXTS
                  ) -> tuple[dict[int, str], str | None]:
    """Re-read the system prompts and the first user message of one context from disk.

    Args:
        run: the run (its calls hold hashes, not text).
        context: the context.
        max_texts: most distinct system prompts re-read (the first ones seen).

    Returns:
        ``({system_key: text}, first user message text or None)``.  One disk read per distinct system prompt
        plus one for the first call; failures (file changed, reader error) just leave entries out.
    """
    from ctxwatch.engine import reload_call

    first: Call | None = None
    want: dict[int, int] = {}
    for c in run.calls:
        if c.context != context:
            continue
        if first is None:
            first = c
        if c.system_key is not None and c.system_key not in want and len(want) < max_texts:
            want[c.system_key] = c.index
    texts: dict[int, str] = {}
    instruction: str | None = None
    if first is None:
        return texts, None
    todo = dict.fromkeys(want.values())
    todo.setdefault(first.index)
    for idx in todo:
        try:
            pc = reload_call(run, idx)
        except Exception:  # a reader bug or a changed file must not stop the analysis
            pc = None
        if pc is None:
            continue
        key = run.calls[idx].system_key
        if pc.system and key is not None:
            texts[key] = "\n".join(pc.system)
        if idx == first.index and pc.messages:
            for m in pc.messages:
                if m.role == "user":
                    instruction = m.text()[:INSTRUCTION_MAX_CHARS]
                    break
    return texts, instruction


def analyze_run(run: Run, *, texts: bool = True,
                text_cache: dict[str, tuple[dict[int, str], str | None]] | None = None,
                risks: bool = True, calibrations: Calibrations | None = None) -> dict[str, Analysis]:
    """One :class:`Analysis` per context of ``run`` (``main`` first), with the run's resets and the reader's
    pending compactions (a boundary whose next call has not arrived restarts the forecast at once).

    Args:
        run: the run.
        texts: re-read system prompts / the first user message for the format rule and the echo check
            (:func:`collect_texts`); ``False`` keeps it to the call summaries (no disk reads).
        text_cache: a dict the caller keeps between calls (one per run): ``context -> (system texts, first user
            message)``.  Texts are re-read only when a context shows a system prompt not in its entry, so a live
            dashboard reads each system prompt once.
        risks: build each call's :class:`DriftRisk` (``False``: ``drift_risk`` stays empty, for reports that
            do not print them).
        calibrations: the run's :meth:`~ctxwatch.engine.Run.factors`, when the caller has them (else worked
            out here: O(calls)).
    """
    resets = {int(at) for r in run.resets if isinstance(at := r.get("at_call"), int)}
    try:
        pending = run.pending_compactions()
    except Exception:  # a reader without the hook, or a reader bug: no pending compaction
        pending = {}
    by_ctx: dict[str, list[Call]] = {}
    for c in run.calls:
        by_ctx.setdefault(c.context, []).append(c)
    out: dict[str, Analysis] = {}
    counts = ContextCounts({ctx: len(by_ctx.get(ctx, [])) for ctx in run.contexts()})
    # (the floor's parts in the reasons, as report and the dashboard show them)
    factors = calibrations if calibrations is not None else run.factors()
    for ctx in run.contexts():
        calls = by_ctx.get(ctx, [])
        # re-read text only where it can matter: the main context, and contexts whose system prompt is logged
        # (a Claude Code sidechain re-read would scan the file from its start for nothing)
        keys = {c.system_key for c in calls if c.system_key is not None}
        want = texts and (ctx == "main" or bool(keys))
        sys_texts: dict[int, str] = {}
        instr: str | None = None
        if want:
            cached = text_cache.get(ctx) if text_cache is not None else None
            if cached is not None and (keys <= cached[0].keys() or len(cached[0]) >= MAX_SYSTEM_TEXTS):
                sys_texts, instr = cached
            else:
                sys_texts, instr = collect_texts(run, ctx)
                if text_cache is not None:
                    text_cache[ctx] = (sys_texts, instr)
        out[ctx] = a = analyze_context(calls, run.settings, ctx, resets, sys_texts, instr, risks, contexts=counts,
                                       calibrations=factors)
        marker = pending.get(ctx) or (pending.get("") if ctx == "main" else None)
        if marker is not None:
            a.forecast = pending_forecast(a.forecast, calls, marker)
    return out


def _newest_session_forecast(run: Run, main: Analysis | None, calibrations: Calibrations) -> dict[str, Any]:
    """The forecast object of ``report --json``: the context's own, or, when its calls come from several
    sessions (a folder of sessions), the newest session's, analysed on its own calls and named by a
    ``session`` key and a ``session <id>:`` prefix of its text.  Newest is by the last call's timestamp, as
    ``report`` orders its sessions; sessions without timestamps rank below those with, and among equals the
    one read last (files are read oldest-modified first) is newest."""
    if main is None:
        return Forecast().to_json()
    ctx = main.context
    rank = session_ranks(run.calls, ctx)
    if len(rank) < 2:
        return main.forecast.to_json()
    newest = max(rank, key=lambda s: rank[s])
    resets = {int(at) for r in run.resets if isinstance(at := r.get("at_call"), int)}
    calls = [c for c in run.calls if c.context == ctx and c.session == newest]
    if all(c.timestamp is not None for c in calls):
        # (a session split over files, excerpts of one transcript, is read in file order: its end is its
        # latest call, wherever that was read)
        calls.sort(key=lambda c: (c.timestamp, c.index))
    counts: dict[str, int] = {}
    for c in run.calls:
        if c.session == newest:
            counts[c.context] = counts.get(c.context, 0) + 1
    forecast = analyze_context(calls, run.settings, ctx, resets, {}, None, risks=False,
                               contexts=ContextCounts(counts), whose="the session's",
                               calibrations=calibrations).forecast
    try:
        marker = run.pending_compactions().get(ctx)
    except Exception:  # (as in analyze_run: a reader bug leaves no pending compaction)
        marker = None
    last = next((c for c in reversed(run.calls) if c.context == ctx), None)
    # (a marker names its session when the reader knows it; else it belongs to the last file read)
    if marker is not None and (marker.get("session") == newest
                               or ("session" not in marker and last is not None and last.session == newest)):
        forecast = pending_forecast(forecast, calls, marker)
    doc = forecast.to_json()
    doc["session"] = newest
    doc["text"] = f"session {newest}: {doc['text']}"
    return doc


def analysis_json(run: Run, *, texts: bool = True, per_call: bool = False) -> dict[str, Any]:
    """The ``flags`` and ``forecast`` keys of ``report --json`` / ``check --json``.

    Args:
        run: the run.
        texts: see :func:`analyze_run`.
        per_call: also return ``drift_risk`` (one object per call, every context) and ``format_rule``.

    Returns:
        ``{"flags": [flag objects of every context, in call order], "forecast": {...}}`` where the forecast is
        the ``main`` context's (else the first context's); of its newest session when it has several.  Flag
        objects: ``kind``, ``severity``, ``call`` (index as in ``report --json``), ``reason``, ``evidence``,
        ``context``.
    """
    factors = run.factors()  # (worked out once, for every context and the newest session's forecast)
    res = analyze_run(run, texts=texts, risks=per_call, calibrations=factors)
    flags = sorted((f for a in res.values() for f in a.flags), key=lambda f: (f.call, -SEVERITY_RANK[f.severity]))
    main = res.get("main") or next(iter(res.values()), None)
    doc: dict[str, Any] = {"flags": [f.to_json() for f in flags],
                           "forecast": _newest_session_forecast(run, main, factors)}
    if per_call:
        risks = sorted((r for a in res.values() for r in a.drift_risk), key=lambda r: r.call)
        doc["drift_risk"] = [r.to_json() for r in risks]
        doc["format_rule"] = main.format_rule.to_json() if main and main.format_rule else None
    return doc
