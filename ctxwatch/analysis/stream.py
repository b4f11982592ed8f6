"""One stream of calls (one model of one context, or one session of it) walked once, call by call: every flag,
the drift risk of each call and the forecast from the last.

Each family of checks is an object with its own state (its module says what it flags); the walk steps them in
a fixed order, so the flags of one call keep one order, and later checks read what earlier ones found.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ctxwatch.accounting import NO_CALIBRATION, Calibrations
from ctxwatch.analysis.drift import FormatRule
from ctxwatch.analysis.episodes import Episodes
from ctxwatch.analysis.estimate import Estimates
from ctxwatch.analysis.flags import SEVERITY_RANK, Flag, FlagSink
from ctxwatch.analysis.floor import SystemPrompt, ToolSchemas
from ctxwatch.analysis.forecast import Forecast, Scope, episode_forecast
from ctxwatch.analysis.occupancy import Placeholder, Plausibility, calibrate, occupancy
from ctxwatch.analysis.responses import Collapse, Echo, FormatDrift, Rules
from ctxwatch.analysis.risk import DriftRisk, drift_risk
from ctxwatch.analysis.thresholds import Thresholds
from ctxwatch.analysis.trend import Limits
from ctxwatch.config import Settings
from ctxwatch.model import Call, unrelated_requests


@dataclass(slots=True)
class Analysis:
    """Everything :func:`~ctxwatch.analysis.run.analyze` found for one context.

    Attributes:
        context: the context analysed.
        flags: findings in call order (critical first within a call).
        forecast: the forecast from the last call.
        drift_risk: one entry per call of the context, in order.
        format_rule: the format rule in force at the last call (``None``: the drift detector is silent).
        first_drift: index of the first call whose response drifted from the rule, or ``None``.
        calibration: median reported/estimated prompt ratio of the context's plausible calls, or ``None``.
    """

    context: str
    flags: list[Flag]
    forecast: Forecast
    drift_risk: list[DriftRisk]
    format_rule: FormatRule | None = None
    first_drift: int | None = None
    calibration: float | None = None

    def worst(self) -> str | None:
        """The highest flag severity, or ``None`` when there are no flags."""
        return max((f.severity for f in self.flags), key=SEVERITY_RANK.__getitem__, default=None)


def new_conversation(prev: Call, c: Call, reset_set: set[int]) -> bool:
    """True when ``c`` starts another conversation than ``prev``'s though it may re-send the same first message
    (a task run again): a new session id, or the log reset before it (``reset_set``: ``Run.resets`` indexes)."""
    return c.index in reset_set or bool(c.session and prev.session and c.session != prev.session)


def analyze_stream(cs: list[Call], st: Settings, context: str, reset_set: set[int],
                   system_texts: Mapping[int, str], instruction_text: str | None, want_risks: bool = True,
                   scope: Scope | None = None, calibrations: Calibrations = NO_CALIBRATION) -> Analysis:
    """The analysis of one stream ``cs`` (calls in order) of ``context`` under settings ``st``.

    ``reset_set``: indexes of the calls where the log was reset; ``system_texts`` / ``instruction_text``: for
    the format rule and the echo check (:class:`~ctxwatch.analysis.responses.Rules`); ``want_risks=False``
    leaves ``drift_risk`` empty; ``scope``: which of the log's calls these are, for the forecast's notes;
    ``calibrations``: the run's, for the floor's sizes in the reasons and the size of a call that reports none.
    O(n) in the calls.
    """
    out = FlagSink(context)
    cal = calibrate(cs)
    occs = [occupancy(c, calibrations) for c in cs]
    # The checks, in the order they see each call: that is the order of their flags within a call and severity,
    # and a later check may use what an earlier one found (the episode's points, the slope, the eviction).
    plausibility, placeholder = Plausibility(out), Placeholder(out)
    episodes = Episodes(cs, occs, reset_set, out)
    thresholds = Thresholds(st, out)
    system = SystemPrompt(out, calibrations)
    tools = ToolSchemas(out, calibrations, len(cs))
    estimates = Estimates(out, cal)
    rules = Rules(cs, system_texts, instruction_text)
    drift, echo, collapse = FormatDrift(out), Echo(out), Collapse(out)
    first_drift: int | None = None
    risks: list[DriftRisk] = []
    # (a stream's calls mostly share their window and reserve: their limits are worked out once for each)
    limits: dict[tuple[object, ...], Limits] = {}
    for pos, c in enumerate(cs):
        if pos and (unrelated_requests(cs[pos - 1], c) or new_conversation(cs[pos - 1], c, reset_set)):
            # (independent requests, or a new session or file: their responses are not one conversation's, so
            # the response checks start over, dropping what they held, rather than compare two of them)
            first_drift = first_drift if first_drift is not None else drift.first_drift
            # (the drift flags get their severity and reason from their whole episode: the episodes this
            # tracker saw are over, so they are final now; the next tracker finishes its own)
            drift.finish()
            drift, echo, collapse = FormatDrift(out), Echo(out), Collapse(out)
        given = (c.window, c.reserve_tokens, c.reserve_src, c.window_src, c.provenance.harness)
        lim = limits.get(given)
        if lim is None:
            lim = limits[given] = Limits.of(c, st)
        occ = occs[pos]
        plausibility.step(c, occ, episodes.last_plausible)
        placeholder.step(c)
        boundary = episodes.step(pos, c, occ)
        slope = thresholds.step(pos, c, occ, lim, episodes.points, boundary)
        evicted_since = system.step(c, episodes.compacted)
        tools.step(pos, c)
        estimates.step(c, occ)
        rule, chk, echo_words = rules.step(c)
        drift.step(c, occ, rule, chk)
        echo.step(c, echo_words)
        collapse.step(c, occ)
        if want_risks:
            risks.append(drift_risk(c, occ, lim, st, episodes.last_plausible, slope, evicted_since, chk, echo_words,
                                    drift.open is not None))
    thresholds.finish()
    drift.finish()
    flags = sorted(out.flags, key=lambda f: (f.call, -SEVERITY_RANK[f.severity]))
    forecast = episode_forecast(cs, st, list(episodes.points), list(episodes.times), episodes.start,
                                episodes.last_plausible, scope or Scope())
    return Analysis(context, flags, forecast, risks, rules.in_force,
                    first_drift if first_drift is not None else drift.first_drift, cal.factor)
