"""The numbers the checks, the drift risk and the forecast share: a call's limits in tokens, the Theil-Sen slope,
the calls left until a threshold, and whether a run of prompt sizes rises.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from ctxwatch.accounting import rule_limits
from ctxwatch.config import Settings, share
from ctxwatch.model import Call, Src

#: Plausible calls needed since the last reset before the forecast projects anything: two deltas are the least
#: that can show a trend.
MIN_FORECAST_CALLS = 3
#: Most recent plausible calls of the episode the slope is fitted on.  Eight calls is about one agent task step
#: (read, edit, test...) so the slope follows the current phase; Theil-Sen over 8 points (28 pairwise slopes)
#: tolerates 2 outliers (breakdown point ~29 %).
FORECAST_POINTS = 8
#: Drift risk is ``high`` when the forecast reaches the window within this many calls; the slope of a call is
#: computed only when it could (so a call far from its limit skips the pairwise pass).
RISK_CALLS_HIGH = 5
#: Least net rise (steps up minus steps down, as a fraction of the steps) of a run of prompt sizes that builds on
#: something (:func:`rising`).  A growing run rises at nearly every call: a flat step (a turn whose addition the
#: log does not count) or one drop (a compaction the log does not mark) leaves it at 5/7 or more over the
#: :data:`FORECAST_POINTS` = 8 points.  Unrelated sizes rise and fall like a shuffled list: over 8 points a net
#: rise of half the steps needs 6 or 7 rises out of 7, which a random order gives 248 times in 8! = 40,320
#: (0.6 %; Eulerian numbers A(8, 6) + A(8, 7)), and over 4 points 1 time in 24 (all 3 steps up).
MIN_NET_RISE = 0.5


@dataclass(slots=True, frozen=True)
class Limits:
    """A call's thresholds in tokens (``None`` where its window is unknown).

    Attributes:
        window: the call's window (:attr:`Call.window`, the ``--window`` override applied).
        reserve: its completion reserve: the request's (:attr:`Call.reserve_tokens`), else ``settings.reserve``
            of the window.
        limit: ``window - reserve``: the largest prompt a full completion leaves room for.
        trigger: the compaction trigger: the harness's (:attr:`trigger_rule`), at most the budget, else
            ``trigger x budget`` (:meth:`Settings.trigger_tokens`).
        budget: the prompt budget: the harness's (:attr:`budget_rule`), else :meth:`Settings.budget_tokens`.
    """

    window: int | None
    reserve: int | None
    limit: int | None
    trigger: int | None
    budget: int | None

    #: Whose rule the budget follows: ``None`` for the settings', else the harness's name
    #: (:func:`ctxwatch.accounting.rule_limits`: ``"Claude Code"``, ``"Codex"``); ``None`` too where the user set
    #: the budget fraction.
    budget_rule: str | None = None
    #: Whose rule the trigger follows, as :attr:`budget_rule` (``None`` where the user set the trigger).
    trigger_rule: str | None = None
    #: The harness whose own trigger lies above the budget the user set (``--budget-fraction``), so that the
    #: trigger is that budget (as a plan's policy has it: a trigger is at most its budget); else ``None``.
    trigger_capped: str | None = None

    @property
    def rule(self) -> str | None:
        """The harness whose rule sets the budget or the trigger (or both), ``None`` when the settings set both."""
        return self.budget_rule or self.trigger_rule

    @classmethod
    def of(cls, c: Call, st: Settings) -> Limits:
        """The limits of call ``c`` under settings ``st`` (:meth:`given` its window, reserve and harness)."""
        return cls.given(c.window, c.reserve_tokens, c.reserve_src, c.window_src, c.provenance.harness, st)

    @classmethod
    def given(cls, window: int | None, reserve: int | None, reserve_src: Src | None, window_src: Src | None,
              harness: str | None, st: Settings) -> Limits:
        """The limits of a call with that window and reserve (tokens, with their sources) in ``harness``'s log
        under settings ``st``: the harness's own budget and trigger (:func:`ctxwatch.accounting.rule_limits`)
        where the user set neither, else the settings'.  A ``report --json`` call object has every argument,
        so the text report names the limits the analysis judged its calls by."""
        if reserve is None and window:
            reserve = st.reserve_tokens(window)
        if not window:
            return cls(window, reserve, None, None, None)
        limit = window - reserve if reserve is not None else None
        hl = rule_limits(harness, window, window_src, reserve, reserve_src, st)
        if hl is None or (hl.budget is None and hl.trigger is None):
            return cls(window, reserve, limit, st.trigger_tokens(window, reserve), st.budget_tokens(window, reserve))
        budget = hl.budget if hl.budget is not None else st.budget_tokens(window, reserve)
        if hl.trigger is not None and hl.trigger > budget:
            return cls(window, reserve, limit, budget, budget, trigger_capped=hl.name)
        trigger = hl.trigger if hl.trigger is not None else share(budget, st.trigger)
        return cls(window, reserve, limit, trigger, budget, hl.name if hl.budget is not None else None,
                   hl.name if hl.trigger is not None else None)


def theil_sen(points: Sequence[tuple[float, float]]) -> float | None:
    """Theil-Sen slope (median of all pairwise slopes) of ``(x, y)`` points; ``None`` with fewer than 2 x values.

    Robust to outliers (breakdown point ~29 %); O(k²) for k points.
    """
    slopes = [(y2 - y1) / (x2 - x1) for i, (x1, y1) in enumerate(points) for (x2, y2) in points[i + 1:]
              if x2 != x1]
    return statistics.median(slopes) if slopes else None


def calls_to(occ: int, thr: int | None, slope: float | None) -> int | None:
    """Further calls until ``occ + k * slope >= thr`` (tokens, tokens per call): 0 if already there, ``None`` if
    the threshold is unknown or the prompt is not growing."""
    if thr is None:
        return None
    if occ >= thr:
        return 0
    if slope is None or slope <= 0:
        return None
    return max(1, math.ceil((thr - occ) / slope))


def rising(occupancies: Sequence[int]) -> bool:
    """True when prompt sizes (tokens, in call order) show a rising trend: ``(rises - falls) / steps`` is at
    least :data:`MIN_NET_RISE` over consecutive steps (equal sizes count neither way).

    Not the Theil-Sen slope's sign: the median of pairwise slopes of a few unrelated sizes is positive about half
    the time (claude-trace's four helper calls, 96, 226, 216, 174 tokens: +8 tokens/call, with 1 rise and 2
    falls).  Nor "growing at every call", which one flat step among seven rises would fail."""
    steps = len(occupancies) - 1
    if steps < 1:
        return False
    net = sum((b > a) - (b < a) for a, b in itertools.pairwise(occupancies))
    return net >= MIN_NET_RISE * steps
