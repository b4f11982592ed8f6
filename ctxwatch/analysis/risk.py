"""Drift risk: how likely each call's response is to drift, from its headroom and the signals seen so far (an
evicted system prompt, a format off the rule, an echo of the system prompt).  The strongest signal sets the level.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ctxwatch.analysis.drift import ECHO_MIN_WORDS, SCORE_BROKEN_JSON, FormatCheck
from ctxwatch.analysis.flags import num, pct, rounded
from ctxwatch.analysis.trend import RISK_CALLS_HIGH, Limits, calls_to
from ctxwatch.config import Settings
from ctxwatch.model import Call

#: Drift-risk levels in increasing order.
RISK_LEVELS = ("low", "medium", "high", "critical")


@dataclass(frozen=True, slots=True)
class DriftRisk:
    """How likely the response of one call is to drift, and why.

    Attributes:
        call: the call's index.
        level: ``low`` | ``medium`` | ``high`` | ``critical``.
        reason: one line: the level, the strongest reasons, and the headroom.
        format_score: the response's format score against the inferred rule (0 clean .. 1 prose), ``None`` when
            there is no rule or no response text (see :mod:`ctxwatch.analysis.drift`).
        format_kind: ``clean`` | ``extra_text`` | ``missing_keys`` | ``broken_json`` | ``prose`` | ``None``.
        occupancy: the call's plausible occupancy in tokens (``None`` if unknown or implausible).
        used_fraction: occupancy / window, or ``None``.
    """

    call: int
    level: str
    reason: str
    format_score: float | None = None
    format_kind: str | None = None
    occupancy: int | None = None
    used_fraction: float | None = None

    def to_json(self) -> dict[str, Any]:
        """``{"call", "level", "reason", "format_score", "format_kind", "occupancy", "used_fraction"}``."""
        return {"call": self.call, "level": self.level, "reason": self.reason, "format_score": self.format_score,
                "format_kind": self.format_kind, "occupancy": self.occupancy,
                "used_fraction": rounded(self.used_fraction, 4)}


def drift_risk(c: Call, occ: int | None, lim: Limits, st: Settings, last_plausible: tuple[int, Call, int] | None,
               slope: float | None, evicted_since: Call | None, chk: FormatCheck | None, echo_words: int,
               drifting: bool) -> DriftRisk:
    """The drift risk of call ``c``: its occupancy ``occ`` (tokens) against its limits ``lim``, or, when ``occ``
    is unknown, the last plausible call's (``last_plausible``: ``(pos, call, occupancy)``) against that call's
    limits under ``st``.  ``slope``: the episode's slope near the limit (tokens per call, or ``None``);
    ``evicted_since``: the call since which the system prompt is absent; ``chk`` / ``echo_words``: the
    response's format check and echoed system-prompt words; ``drifting``: a format drift is not recovered."""
    if occ is None and last_plausible is not None:
        # The last plausible occupancy is judged against its own call's window and reserve: this call's
        # (an implausible record may state another window) would give it a headroom it never had.
        ref = last_plausible[1]
        return _risk(c, last_plausible[2], c.prompt_implausible, Limits.of(ref, st), None, evicted_since, chk,
                     echo_words, drifting, stand_in=ref)
    return _risk(c, occ, c.prompt_implausible, lim, slope, evicted_since, chk, echo_words, drifting)


def _risk(c: Call, occ: int | None, implausible: bool, lim: Limits, slope: float | None, evicted_since: Call | None,
          chk: FormatCheck | None, echo_words: int, drifting: bool, stand_in: Call | None = None) -> DriftRisk:
    """The drift-risk level of one call: the strongest signal wins; the reason names it and the headroom.

    ``occ`` (tokens) is the call's own occupancy, or with ``stand_in`` that call's (the last plausible one,
    when this call's is unknown or ``implausible``), measured against ``stand_in``'s limits ``lim``
    (tokens); the reason then names ``stand_in``, and the risk's ``occupancy`` stays ``None``."""
    window, limit, trig, budget = lim.window, lim.limit, lim.trigger, lim.budget
    cands: list[tuple[int, str]] = []  # (level rank, text)
    if evicted_since is not None:
        cands.append((3, f"system prompt absent since #{evicted_since.index + 1}"))
    if occ is not None and limit is not None:
        if occ > limit:
            cands.append((3, "prompt + reserve exceed the window"))
        elif slope is not None and slope > 0:
            k = calls_to(occ, limit, slope)
            if k is not None and k <= 1:
                cands.append((3, "next call forecast over the window"))
            elif k is not None and k <= RISK_CALLS_HIGH:
                cands.append((2, f"~{k} calls to the window"))
    if occ is not None and budget is not None and occ > budget:
        cands.append((2, "over budget"))
    if chk is not None and chk.score >= SCORE_BROKEN_JSON:
        cands.append((2, f"response is {chk.describe()}"))
    if echo_words >= ECHO_MIN_WORDS:
        cands.append((2, f"response repeats {echo_words} words of the system prompt"))
    if occ is not None and trig is not None and budget is not None and trig <= occ <= budget \
            and not c.provenance.compaction_summarizer:  # (a summariser's call is the compaction itself)
        cands.append((1, "past the compaction trigger"))
    if chk is not None and 0 < chk.score < SCORE_BROKEN_JSON:
        cands.append((1, f"response is {chk.describe()}"))
    elif chk is not None and chk.score == 0 and drifting:
        cands.append((1, "format drift not yet recovered"))
    if implausible:
        cands.append((1, "reported usage implausible" + ("; using the last plausible occupancy" if stand_in else "")))
    if stand_in is None:
        what, at, of = "prompt", "", "window"
    else:
        what = "last plausible prompt" if implausible else "occupancy unknown; last known prompt"
        at, of = f" at #{stand_in.index + 1}", "its window"
    if window and occ is not None:
        head = f"{what} {num(occ)}{at} = {pct(occ, window)} of {of}"
        if budget:
            head += f", {pct(occ, budget)} of budget"
    elif occ is not None:
        head = f"{what} {num(occ)} tokens{at}, window unknown"
    else:
        head = "occupancy unknown"
    level = max((lv for lv, _ in cands), default=0)
    top = [t for lv, t in cands if lv == level][:2]
    reason = f"{RISK_LEVELS[level]}: {'; '.join(top)} ({head})" if top else f"low: no drift signal ({head})"
    own = stand_in is None and not implausible
    return DriftRisk(c.index, RISK_LEVELS[level], reason, chk.score if chk is not None else None,
                     chk.kind if chk is not None else None, occ if own else None,
                     occ / window if occ is not None and window and own else None)
