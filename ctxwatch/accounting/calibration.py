"""Calibration: the median ratio of reported to estimated prompt tokens that scales the estimates of a tokenizer
that is not the model's own (an Anthropic or Gemini model counted with ``o200k_base``), per model and per run.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ctxwatch.model import Breakdown, Call, shown_breakdown

#: Calls (with both a reported and an estimated prompt) needed before the median of their reported/estimated
#: ratios calibrates the estimates of a tokenizer that is not the model's own (:func:`calibration_factor`).
#: Three is the fewest values whose median outvotes one call that disagrees with the others: the median of two
#: is their mean, which lies between them, so both calls seem off and the one whose log is complete is
#: blamed.
MIN_CALIBRATION_CALLS = 3


#: Largest calibration factor, and its inverse the smallest, that a tokenizer gap can explain (dimensionless).
#: Tokenizers of current models differ from ``o200k_base`` by tens of percent (measured on the real samples:
#: 1.137 on claude-trace's Sonnet 4 calls, 1.223 on the Anthropic batch; Anthropic says its newer tokenizer uses
#: up to ~35 % more tokens than its older one for the same text).  A median ratio of 2 or more (or 1/2 or less)
#: says the log does not show what the provider counted (a wrapper that logs part of the request, a prompt
#: counted elsewhere): scaling by it would show numbers the log cannot support, so such a median calibrates
#: nothing and the estimates are compared raw (``estimate_disagrees`` says why).
MAX_CALIBRATION = 2.0


def median_ratio(ratios: Sequence[float]) -> float | None:
    """The median of ``ratios`` (reported / estimated prompt tokens, one per call; dimensionless) once there are
    :data:`MIN_CALIBRATION_CALLS` of them, whether or not it is a plausible calibration; else ``None``."""
    return statistics.median(ratios) if len(ratios) >= MIN_CALIBRATION_CALLS else None


def plausible_calibration(factor: float | None) -> bool:
    """True for a median ratio (dimensionless) that a tokenizer gap can explain: within
    [1 / :data:`MAX_CALIBRATION`, :data:`MAX_CALIBRATION`]."""
    return factor is not None and 1 / MAX_CALIBRATION < factor < MAX_CALIBRATION


def calibration_factor(ratios: Sequence[float]) -> float | None:
    """The calibration of a tokenizer's estimates: the median of ``ratios`` (reported / estimated prompt tokens,
    one per call; dimensionless), or ``None`` with fewer than :data:`MIN_CALIBRATION_CALLS` of them (too few to
    tell a tokenizer gap from one call's missing content: nothing is calibrated) or when the median is no
    tokenizer gap (:func:`plausible_calibration`: the log does not show what was counted)."""
    factor = median_ratio(ratios)
    return factor if plausible_calibration(factor) else None


@dataclass(frozen=True, slots=True)
class Calibrations:
    """The calibration factors of a run (dimensionless): what turns a call's estimate with another tokenizer into
    the breakdown every surface shows (:meth:`breakdown`, :func:`ctxwatch.model.shown_breakdown`).

    Attributes:
        per_model: model -> the median reported / estimated prompt ratio of its calls (``None`` for a model
            with fewer than :data:`MIN_CALIBRATION_CALLS` calls that have both: not calibrated);
            :meth:`ctxwatch.engine.run.Run.calibrations`.
        run: the run's median over all its calls (:meth:`ctxwatch.engine.run.Run.calibration`), for a model none of
            whose calls has both a reported and an estimated prompt; ``None`` below
            :data:`MIN_CALIBRATION_CALLS` calls.

    The empty value (``Calibrations()``) calibrates nothing.
    """

    per_model: Mapping[str | None, float | None] = field(default_factory=dict)
    run: float | None = None

    def factor(self, call: Call) -> float | None:
        """The calibration of ``call``'s model, else the run's when the model has no call with both a reported
        and an estimated prompt; ``None`` for a call counted with its model's own tokenizer (``exact``), or
        when there is none (as ``report --json``'s per-call ``calibration``)."""
        return None if call.exact else self.of_model(call.model)

    def of_model(self, model: str | None) -> float | None:
        """The factor of ``model``'s calls that are not counted with its own tokenizer: its calibration, else the
        run's when none of its calls has both a reported and an estimated prompt."""
        return self.per_model.get(model, self.run)

    def breakdown(self, call: Call) -> Breakdown:
        """``call``'s floor and history as shown: :func:`ctxwatch.model.shown_breakdown` with :meth:`factor`."""
        return shown_breakdown(call, self.factor(call))


#: Calibrates nothing: every breakdown is the call's own (before a run has calls, or where none applies).
NO_CALIBRATION = Calibrations()


def calibrations_of(calls: Iterable[Call]) -> Calibrations:
    """The calibrations of a run's ``calls`` (one pass):

    * per model, the median reported / estimated prompt ratio over its calls that have both, quota probes
      (:attr:`~ctxwatch.model.Provenance.probe`: ``max_tokens: 1`` calls of a handful of tokens, whose ratio says
      nothing about the
      tokenizer) and implausible reports (:attr:`Call.report_implausible`) left out;
    * the run's, over the same calls of every model (the same calls left out: one rule for both),

    each ``None`` below :data:`MIN_CALIBRATION_CALLS` ratios (:func:`calibration_factor`).  These are
    :meth:`ctxwatch.engine.run.Run.calibrations` and :meth:`ctxwatch.engine.run.Run.calibration`."""
    per_model: dict[str | None, list[float]] = {}
    run: list[float] = []
    for c in calls:
        reported, estimated = c.prompt_reported, c.prompt_estimated
        if not reported or not estimated:
            continue
        if c.provenance.probe or c.report_implausible:
            continue
        run.append(reported / estimated)
        per_model.setdefault(c.model, []).append(reported / estimated)
    return Calibrations({m: calibration_factor(r) for m, r in per_model.items()}, calibration_factor(run))
