"""Estimate checks: does our estimate of a logged request, calibrated to the provider's counts, agree with the
prompt the provider reported?  A gap beyond what tokenizers differ by says the log does not show what was sent.
"""

from __future__ import annotations

from ctxwatch.accounting import MAX_CALIBRATION, MIN_CALIBRATION_CALLS
from ctxwatch.analysis.flags import Flag, FlagSink, num
from ctxwatch.analysis.occupancy import Calibration
from ctxwatch.model import Call
from ctxwatch.tokens import own_tokenizer

#: Calibrated estimate vs reported prompt: beyond 5 % the log does not show what was sent.
ESTIMATE_TOLERANCE = 0.05
#: ...and by at least this many tokens: on a prompt of a hundred tokens, 5 % is the framing of two messages (the
#: OpenAI cookbook counts 3 tokens per message and 3 for the reply; Anthropic does not publish its framing),
#: not content missing from the log (a claude-trace probe call: estimate 102, reported 96).
ESTIMATE_MIN_TOKENS = 16
#: Beyond 20 % the gap is more than tokenizer differences (measured: o200k vs Claude tokenizers differ by
#: ~10-15 % on English and code, absorbed by calibration): content is missing from the log -> ``warn``.  It is
#: also the tolerance of another tokenizer's estimate that has no calibration yet (fewer than
#: :data:`~ctxwatch.accounting.MIN_CALIBRATION_CALLS` calls): within it, the gap may be the tokenizers'.
ESTIMATE_WARN = 0.20


def estimate_check(c: Call, reported: int, e: int, cal: float | None, n_ratios: int,
                   rejected: float | None = None) -> tuple[float, str, str, str] | None:
    """Whether call ``c``'s estimate ``e`` disagrees with its reported prompt ``reported`` (tokens): ``None``
    when it agrees, else ``(difference as a fraction of the report, the tolerance said in the reason, what
    was compared, what it means)``.

    The model's own tokenizer is compared as it is, within :data:`ESTIMATE_TOLERANCE`.  Another tokenizer's
    estimate is scaled by the stream's calibration ``cal`` (the median reported/estimated ratio of its
    ``n_ratios`` calls) and compared within the same tolerance, unless its raw estimate is itself within it
    (then the log shows what was sent, and the calibration sets the call apart).  Without a calibration (too
    few calls, or a median ``rejected`` that no tokenizer gap explains) the raw estimate is compared within
    :data:`ESTIMATE_WARN`, the most that tokenizers differ by.  Under :data:`ESTIMATE_MIN_TOKENS` nothing
    disagrees.
    """
    def off(x: float, tol: float) -> bool:
        return abs(reported - x) / reported > tol and abs(reported - x) >= ESTIMATE_MIN_TOKENS

    if c.exact or cal is None:
        tol = ESTIMATE_TOLERANCE if c.exact else ESTIMATE_WARN
        if not off(e, tol):
            return None
        if c.exact:
            what, tol_desc = f"estimate {num(e)} (the model's own tokenizer)", ""
        else:
            calls = f"{n_ratios} call{'s' if n_ratios != 1 else ''}"
            why = (f"the median reported/estimated ratio of its {calls}, {rejected:,.3f}, is more than tokenizers "
                   f"differ by (1/{MAX_CALIBRATION:g} to {MAX_CALIBRATION:g})" if rejected is not None else
                   f"{calls} with a reported and an estimated prompt, {MIN_CALIBRATION_CALLS} needed")
            # (the model's own tokenizer, inexact because of an image or a text cut to be counted, is not called
            # another tokenizer)
            whose = ("the model's tokenizer, with images or a cut text estimated"
                     if own_tokenizer(c.model, c.provider, c.tokenizer) else "not the model's tokenizer")
            what = f"estimate {num(e)} ({c.tokenizer}, {whose}, uncalibrated: {why})"
            tol_desc = f", more than tokenizers differ ({100 * ESTIMATE_WARN:.0f}%)"
        est = float(e)
    else:
        est = e * cal
        if not off(est, ESTIMATE_TOLERANCE) or not off(e, ESTIMATE_TOLERANCE):
            return None
        what, tol_desc = f"calibrated estimate {num(est)} ({num(e)} x calibration {cal:.3f})", ""
    above, raw_above = est > reported, e > reported
    if above == raw_above:
        # (below the report: the log misses part of what was sent; above it: the log shows more than the request
        # held, e.g. a batch result joined to another batch's request)
        meaning = "the log shows more than the provider counted (another request's content?)" if above else \
            "the log may not show everything that was sent"
    else:
        side, raw_side = ("above", "below") if above else ("below", "above")
        meaning = (f"the raw estimate is {raw_side} the report, and only the calibration puts it {side}: this "
                   f"call's ratio {reported / e:.3f} is {'under' if above else 'over'} the run's {cal:.3f} (its "
                   "content counts differently from the other calls', or they miss content)")
    return abs(reported - est) / reported, tol_desc, what, meaning


def gap_words(diff: float) -> str:
    """A relative gap (``diff``: the difference over the reported prompt, 0.35 = 35 %) in words: a percentage up
    to 10 times the reported prompt, beyond that a multiple of it (a 20 MB message against a reported prompt of
    10 tokens is "262,144 times its size", not "26214430%")."""
    return f"{100 * diff:,.0f}%" if diff < 10 else f"{diff:,.0f} times its size"


class Estimates:
    """The ``estimate_disagrees`` check: one flag per run of consecutive calls whose estimate disagrees with the
    report (``warn`` once one is off by more than :data:`ESTIMATE_WARN`), with the stream's calibration
    ``cal``."""

    def __init__(self, out: FlagSink, cal: Calibration) -> None:
        self.out, self.cal = out, cal
        self.streak: Flag | None = None  # the flag of the disagreeing calls in a row
        self._first = ""  # (its reason as its first call gave it)

    def step(self, c: Call, occ: int | None) -> None:
        """Check call ``c`` (occupancy ``occ``: ``None`` for an implausible report, which is not compared)."""
        reported, e = c.prompt_reported, c.prompt_estimated
        # a call without a comparison (no reported prompt or estimate) neither extends nor ends a streak
        if occ is None or not reported or not e:
            return
        cal = self.cal.factor
        cmp = estimate_check(c, reported, e, cal, self.cal.calls, self.cal.rejected)
        if cmp is None:
            self.streak = None
            return
        diff, tol_desc, what, meaning = cmp
        if self.streak is None:
            c_cal = 1.0 if c.exact else cal
            self.streak = self.out.add(
                "estimate_disagrees", "info", c,
                f"{what} differs from the reported prompt {num(reported)} by {gap_words(diff)} at "
                f"#{c.index + 1}{tol_desc}: {meaning}",
                prompt_reported=reported, prompt_estimated=e,
                calibration=round(c_cal, 4) if c_cal else None,
                calibrated_estimate=round(e * c_cal) if c_cal else None, difference=round(diff, 4),
                raw_difference=round(abs(reported - e) / reported, 4), calls=0,
                max_difference=round(diff, 4), max_call=c.index)
            self._first = self.streak.reason
        ev = self.streak.evidence
        ev["calls"] += 1
        worst = diff > ev["max_difference"]
        if worst:
            ev["max_difference"], ev["max_call"] = round(diff, 4), c.index
        if worst and diff > ev["difference"] + ESTIMATE_WARN:
            # (the streak's worst call is said too when it is well past the first: a call far more off must not
            # hide behind it)
            self.streak.reason = (f"{self._first}; the largest gap of these calls in a row: #{c.index + 1}, "
                                  f"{what} vs the reported {num(reported)} ({gap_words(diff)})")
        if diff > ESTIMATE_WARN:
            self.streak.severity = "warn"
