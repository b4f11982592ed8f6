"""Threshold checks: each call's occupancy against the window minus its reserve, the budget and the compaction
trigger the user set, and the next call forecast over the window.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from ctxwatch.analysis.flags import Flag, FlagSink, num
from ctxwatch.analysis.trend import MIN_FORECAST_CALLS, RISK_CALLS_HIGH, Limits, theil_sen
from ctxwatch.config import Settings, share
from ctxwatch.model import Call, Src

#: Whose a completion reserve is, in a flag's reason, by its source (another source is named as it is).
_RESERVE_WHOSE = {Src.OPTION: "the one given (--reserve or the config file)", Src.DEFAULT: "the default share",
                  Src.HARNESS: "the harness's own", Src.DOCUMENTED: "the provider's documented output limit"}


class Thresholds:
    """The ``reserve_breached``, ``over_budget``, ``trigger_no_compaction`` and ``window_forecast`` checks.

    ``over_budget``, the trigger crossing and ``window_forecast`` are raised at most once per episode (the
    budget flag counts the calls over it); ``reserve_breached`` once per run of consecutive calls over the
    limit.  A trigger crossing is flagged when its episode ends without a compaction after it.
    """

    def __init__(self, st: Settings, out: FlagSink) -> None:
        self.st, self.out = st, out
        self.reserve_flag: Flag | None = None  # the reserve breach of the calls in a row over the limit
        self.over: Flag | None = None  # this episode's over_budget flag
        self.crossing: Flag | None = None  # trigger crossing waiting for "no compaction followed"
        self.crossing_pos = 0
        self.crossed = False  # the trigger was crossed in this episode (flagged at most once per episode)
        self.window_forecast = False  # this episode has its window_forecast flag
        self.last_pos = 0  # position of the last call stepped

    def step(self, pos: int, c: Call, occ: int | None, lim: Limits, points: Sequence[tuple[int, int]],
             boundary: str | None) -> float | None:
        """Check call ``c`` at ``pos`` (occupancy ``occ``, limits ``lim``); ``points`` are the episode's
        ``(position, occupancy)`` points so far (:attr:`Episodes.points`), ``boundary`` why an episode starts
        at ``c`` (``None``: it does not).  Returns the Theil-Sen slope of the points (tokens per call) when the
        call is near its limit, else ``None``."""
        if boundary is not None:
            self.end_episode(boundary)
            self.over, self.window_forecast, self.crossed = None, False, False
            self.reserve_flag = None
        self.last_pos = pos
        window = lim.window
        if occ is None or not window:
            return None
        self._reserve(c, occ, window, lim)
        self._budget(c, occ, window, lim)
        self._trigger(pos, c, occ, window, lim)
        return self._window_forecast(c, occ, window, lim, points)

    def end_episode(self, ended_by: str) -> None:
        """Raise the episode's trigger crossing, when calls followed it without a compaction (``ended_by``:
        what ends the episode, for the reason)."""
        if self.crossing is not None:
            calls_after = (self.last_pos - self.crossing_pos)
            if calls_after > 0:
                f = self.crossing
                f.evidence["calls_after_crossing"] = calls_after
                f.evidence["ended_by"] = ended_by
                f.reason += (f" and no compaction followed for {calls_after} call"
                             f"{'s' if calls_after != 1 else ''} ({ended_by})")
                self.out.append(f)
        self.crossing = None

    def finish(self) -> None:
        """End the last episode at the end of the log."""
        self.end_episode("end of log")

    def _reserve(self, c: Call, occ: int, window: int, lim: Limits) -> None:
        limit, reserve = lim.limit, lim.reserve
        if limit is not None and occ > limit:
            if self.reserve_flag is None:
                reported = c.prompt_reported
                # With the request's own max tokens, the request as sent cannot fit: the provider rejects it
                # or cuts the completion short. A default reserve is policy: a long answer may be cut off.
                own = c.reserve_src == Src.REQUEST
                # A prompt above the model's own window that the request's estimate confirms (not implausible,
                # see Call.report_implausible): the request was sent and counted, so the window is wrong.
                pw = c.plausible_window
                confirmed = bool(reported and pw and c.window_src != Src.OPTION and reported > pw)
                # The prompt alone over the window (a --window what-if, a deployment limit): no request fits.
                alone = occ > window
                self.reserve_flag = self.out.add(
                    "reserve_breached", "critical" if own or alone else "warn", c,
                    f"prompt {num(occ)} + completion reserve {num(reserve)} exceed the {num(window)}-token "
                    f"window at #{c.index + 1} by {num(occ - limit)} tokens "
                    + (f"(the prompt alone is {num(occ - window)} tokens over the window: the request "
                       "cannot fit)" if alone else
                       "(the request's max tokens cannot fit: a full completion fails)" if own else
                       f"(the reserve is {_RESERVE_WHOSE.get(c.reserve_src, str(c.reserve_src))}, capped at the "
                       "whole window: no prompt fits)" if reserve is not None and reserve >= window else
                       f"(the reserve is {_RESERVE_WHOSE.get(c.reserve_src, str(c.reserve_src))}: less room is "
                       "left than a long completion may need)")
                    + (f"; the logged request is that big (estimate {num(c.prompt_estimated)}), so the "
                       f"{c.window_src} window is probably too small (pass --window)" if confirmed else ""),
                    prompt_tokens=occ, reserve_tokens=reserve, reserve_source=str(c.reserve_src),
                    window=window, free_tokens=limit - occ, calls=1, window_suspect=confirmed)
            else:
                self.reserve_flag.evidence["calls"] += 1
        else:
            self.reserve_flag = None

    def _budget(self, c: Call, occ: int, window: int, lim: Limits) -> None:
        st, budget = self.st, lim.budget
        if budget is not None and occ > budget:
            if self.over is None:
                # (the budget is the smaller of budget_fraction x window and window - reserve: say which)
                basis = (f"{lim.budget_rule}'s own limit in the {num(window)}-token window" if lim.budget_rule
                         else
                         f"{st.budget_fraction:g} of the {num(window)}-token window"
                         if not window or budget >= share(window, st.budget_fraction) else
                         f"the {num(window)}-token window minus the completion reserve {num(lim.reserve)}, less "
                         f"than {st.budget_fraction:g} of the window")
                self.over = self.out.add("over_budget", "warn", c,
                                         f"prompt {num(occ)} tokens at #{c.index + 1} is over the budget "
                                         f"{num(budget)} ({basis})",
                                         prompt_tokens=occ, budget_tokens=budget, window=window,
                                         budget_fraction=st.budget_fraction, calls_over_budget=0,
                                         max_prompt_tokens=occ)
            self.over.evidence["calls_over_budget"] += 1
            self.over.evidence["max_prompt_tokens"] = max(self.over.evidence["max_prompt_tokens"], occ)

    def _trigger(self, pos: int, c: Call, occ: int, window: int, lim: Limits) -> None:
        trig = lim.trigger
        if trig is not None and occ >= trig and self.crossing is None and not self.crossed:
            self.crossing = self.out.make("trigger_no_compaction", "warn", c,
                                          f"prompt {num(occ)} tokens at #{c.index + 1} crossed the compaction "
                                          f"trigger {num(trig)} ("
                                          + (f"{lim.trigger_rule}'s own auto-compact threshold" if lim.trigger_rule
                                             else f"the budget: {lim.trigger_capped}'s own auto-compact threshold "
                                             "is above it" if lim.trigger_capped
                                             else f"{self.st.trigger:g} of {lim.budget_rule}'s budget "
                                             f"{num(lim.budget)}" if lim.budget_rule
                                             else f"{self.st.trigger:g} of the budget") + ")",
                                          prompt_tokens=occ, trigger_tokens=trig, window=window)
            self.crossing_pos = pos
            self.crossed = True

    def _window_forecast(self, c: Call, occ: int, window: int, lim: Limits,
                         points: Sequence[tuple[int, int]]) -> float | None:
        limit = lim.limit
        # per-call slope only near the limit (cheap pre-check with the largest recent per-call growth)
        # (x steps by at least 1 between points, so no per-call rate exceeds max(y) - min(y): a far-off
        # call skips the pairwise pass.)
        if limit is None or len(points) < MIN_FORECAST_CALLS:
            return None
        sizes = [p[1] for p in points]
        if occ + RISK_CALLS_HIGH * (max(sizes) - min(sizes)) < limit:
            return None
        pts = list(points)
        max_rate = max((y2 - y1) / (x2 - x1) for (x1, y1), (x2, y2) in itertools.pairwise(pts))
        if occ + RISK_CALLS_HIGH * max_rate < limit:
            return None
        slope = theil_sen(pts)
        if (not self.window_forecast and occ <= limit and slope is not None and slope > 0
                and occ + slope > limit):
            self.window_forecast = True
            self.out.add("window_forecast", "critical", c,
                         f"next call after #{c.index + 1} forecast at ~{num(occ + slope)} tokens, above "
                         f"the window minus reserve {num(limit)} (growing ~{num(slope)} tokens/call)",
                         prompt_tokens=occ, slope_tokens_per_call=round(slope, 1),
                         forecast_next_tokens=round(occ + slope), window_limit_tokens=limit,
                         window=window, reserve_tokens=lim.reserve)
        return slope
