"""One stream of calls (one model of one context, or one session of it) walked once, call by call: every flag,
the drift risk of each call and the forecast from the last.
"""

from __future__ import annotations

import itertools
import statistics
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ctxwatch.accounting import (
    NO_CALIBRATION,
    Calibrations,
    calibration_factor,
    median_ratio,
)
from ctxwatch.analysis.drift import (
    ECHO_MIN_WORDS,
    OBSERVED_BASELINE,
    FormatRule,
    infer_rule,
    observed_rule,
)
from ctxwatch.analysis.episodes import AUTO_COMPACT_MIN_FRACTION, drops_and_outliers, reset_reason
from ctxwatch.analysis.estimate import ESTIMATE_WARN, estimate_check
from ctxwatch.analysis.flags import SEVERITY_RANK, Flag, Streak, int_or_none, num, pct
from ctxwatch.analysis.forecast import Forecast, Scope, episode_forecast
from ctxwatch.analysis.occupancy import occupancy
from ctxwatch.analysis.responses import (
    COLLAPSE_BASELINE,
    COLLAPSE_MIN_BASELINE_TOKENS,
    COLLAPSE_PROMPT_GROWTH,
    COLLAPSE_RATIO,
    COLLAPSE_REARM,
    COLLAPSE_WINDOW,
    DRIFT_CONFIRM,
    DRIFT_RECOVERY,
    INSTRUCTION_MAX_CHARS,
    output_tokens,
    response_features,
)
from ctxwatch.analysis.risk import DriftRisk, call_risk
from ctxwatch.analysis.trend import FORECAST_POINTS, MIN_FORECAST_CALLS, RISK_CALLS_HIGH, theil_sen
from ctxwatch.config import Settings
from ctxwatch.model import (
    MAX_PLAUSIBLE_PROMPT,
    Call,
    Src,
    separate_requests,
)


@dataclass(slots=True)
class Analysis:
    """Everything :func:`analyze` found for one context.

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


def same_conversation(a: Call, b: Call) -> bool:
    """False when both calls log their history and it starts with different messages (separate requests that
    happen to share a context, like a helper call beside the agent); True otherwise."""
    if a.messages and b.messages:
        return a.messages[0].content_key == b.messages[0].content_key
    return True


def analyze_stream(cs: list[Call], st: Settings, context: str, reset_set: set[int],
                    system_texts: Mapping[int, str], instruction_text: str | None, want_risks: bool = True,
                    scope: Scope | None = None, calibrations: Calibrations = NO_CALIBRATION) -> Analysis:
    """The single-pass analysis of one stream of calls (see the module docstring); ``scope`` says which of the
    log's calls these are, for the forecast's notes.  ``calibrations``: the run's; the reasons that give the
    system prompt's or the tool schemas' size give them as every surface shows them
    (:meth:`~ctxwatch.accounting.Calibrations.breakdown`: calibrated for a tokenizer that is not the model's own,
    saying so), while the evidence keeps the accounted numbers."""
    n = len(cs)
    flags: list[Flag] = []

    def flag(kind: str, severity: str, c: Call, reason: str, **evidence: Any) -> Flag:
        f = Flag(kind, severity, c.index, reason, evidence, context)
        flags.append(f)
        return f

    # Pass 1: calibration (plausible calls only) and the observed format baseline.
    ratios: list[float] = []
    first_texts: list[str] = []
    for c in cs:
        r, e = c.prompt_reported, c.prompt_estimated
        if r and e and not c.report_implausible:
            ratios.append(r / e)
        txt = c.response.text if c.response is not None else None
        if len(first_texts) < OBSERVED_BASELINE and txt and txt.strip():
            first_texts.append(txt)
    cal = calibration_factor(ratios)
    rejected = median_ratio(ratios) if cal is None else None  # (a median no tokenizer gap explains)
    occs = [occupancy(c, cal) for c in cs]
    drops, outliers = drops_and_outliers(cs, occs, reset_set)
    obs_rule = observed_rule(first_texts)
    instr_rule = infer_rule(instruction_text[:INSTRUCTION_MAX_CHARS], "first user message", strict=True) \
        if instruction_text else None
    armed = False  # a rule from the first user message is judged only once a response has followed it
    sys_rules: dict[int, FormatRule | None] = {}

    # State carried along the calls.
    last_plaus: tuple[int, Call, int] | None = None  # (pos, call, occupancy) of the last plausible call
    points: deque[tuple[int, int]] = deque(maxlen=FORECAST_POINTS)  # (pos, occupancy) in this episode
    times: deque[float] = deque(maxlen=FORECAST_POINTS)
    ep_start = 0
    ep_cross: Flag | None = None  # trigger crossing waiting for "no compaction followed"
    ep_over: Flag | None = None
    ep_window_fc = False
    ep_crossed = False  # the trigger was crossed in this episode (flagged at most once per episode)
    reserve_streak: Streak | None = None
    estimate_streak: Streak | None = None
    echo_streak: Streak | None = None
    prev_sp: bool | None = None
    present_start: Call | None = None
    last_present: Call | None = None
    evicted_since: Call | None = None
    prev_sys_key: int | None = None
    prev_sys_tokens: int | None = None
    prev_sys_call: Call | None = None
    prev_tools: tuple[int | None, int, Call] | None = None  # (tools_key, tools_tokens, call)
    sys_rule: FormatRule | None = None
    sys_text: str | None = None
    drift: Flag | None = None
    drift_clean = 0
    first_drift: int | None = None
    out_base: list[tuple[int, int | None]] = []  # (output tokens, occupancy) of the first text-only responses
    out_recent: deque[int] = deque(maxlen=COLLAPSE_WINDOW)
    base_out = base_occ = None
    collapse_armed = True
    risks: list[DriftRisk] = []
    rule_in_force: FormatRule | None = None

    def end_episode(ended_by: str) -> None:
        nonlocal ep_cross
        if ep_cross is not None:
            after = ep_cross.evidence.pop("_pos")
            calls_after = (pos_last_in_episode - after)
            if calls_after > 0:
                ep_cross.evidence["calls_after_crossing"] = calls_after
                ep_cross.evidence["ended_by"] = ended_by
                ep_cross.reason += (f" and no compaction followed for {calls_after} call"
                                    f"{'s' if calls_after != 1 else ''} ({ended_by})")
                flags.append(ep_cross)
        ep_cross = None

    pos_last_in_episode = 0
    for pos, c in enumerate(cs):
        window = c.window
        reserve = c.reserve_tokens if c.reserve_tokens is not None else (
            st.reserve_tokens(window) if window else None)
        limit = window - reserve if window and reserve is not None else None
        trig = st.trigger_tokens(window, reserve) if window else None
        budget = st.budget_tokens(window, reserve) if window else None

        # -- occupancy and plausibility (B13) --
        occ = occs[pos]
        reported = c.prompt_reported
        if reported is not None and (occ is None or reported <= 0) and c.report_implausible:
            lp = last_plaus
            pw = c.plausible_window  # (the model's window, not a smaller one the user set: that is overflow)
            what = (f"is {num(reported)}, and every request has a prompt" if reported <= 0 else
                    f"exceeds the {num(pw or MAX_PLAUSIBLE_PROMPT)}-token "
                    f"{('model window' if pw != window else 'window') if pw else 'plausible maximum'}")
            # Say what "ignored" covers: the occupancy (used %, free, peak, thresholds, forecast).  A count above
            # the window is still what the provider counted, so the token totals and the cost keep it; a
            # reported 0 is in neither (not summed, not priced), and an estimate may stand in for it.
            if occ is not None:
                how = f"ignored: the estimate ({num(occ)} tokens) stands in"
            else:
                how = (f"ignored as occupancy (last plausible: "
                       f"{num(lp[2]) + ' at #' + str(lp[1].index + 1) if lp else 'none'})"
                       + ("; kept in token totals and cost" if reported > 0 else ""))
            flag("implausible_usage", "warn", c,
                 f"reported prompt {num(reported)} tokens at #{c.index + 1} {what}: implausible, {how}",
                 prompt_reported=reported, window=window,
                 last_plausible_tokens=lp[2] if lp else None, last_plausible_call=lp[1].index if lp else None)

        # -- episode boundaries --
        boundary = reset_reason(cs, pos, reset_set)
        marker = c.compaction if isinstance(c.compaction, dict) else None
        dropped = pos in drops
        if marker is not None or dropped:
            lp = last_plaus
            before_occ = lp[2] if lp else None
            # The size after the compaction: this call's, else (its occupancy unknown, e.g. an implausible
            # report, B13) the first call after it with one, before the next marker or reset.
            after, after_pos = occ, pos
            if after is None:
                after_pos = next((q for q in range(pos + 1, n) if occs[q] is not None or isinstance(
                    cs[q].compaction, dict) or reset_reason(cs, q, reset_set) is not None), n)
                ok = after_pos < n and not isinstance(cs[after_pos].compaction, dict) \
                    and reset_reason(cs, after_pos, reset_set) is None
                after = occs[after_pos] if ok else None
            freed = before_occ - after if before_occ is not None and after is not None else None
            pre = int_or_none(marker.get("pre_tokens")) if marker else None
            post = int_or_none(marker.get("post_tokens")) if marker else None
            freed_pre = pre - after if pre is not None and after is not None else None
            how = "compaction marker in the log" if marker else "history shrank"
            at = f" at #{cs[after_pos].index + 1}, the first known size after it" \
                if after_pos != pos and after is not None else ""
            # ("log preTokens" only for a size the log states: Codex's is the previous call's, already "before")
            logged_pre = pre is not None and marker is not None and "pre_tokens_from" not in marker
            extra = f"; log preTokens {num(pre)}" if logged_pre else ""
            extra += f", postTokens {num(post)}" if post is not None else ""
            suspect = bool(marker and marker.get("trigger") == "auto" and pre is not None and window
                           and pre < AUTO_COMPACT_MIN_FRACTION * window)
            if suspect:
                extra += (f"; auto-compaction at {pct(pre, window)} of the {num(window)}-token window "
                          f"({c.window_src}): the effective window is probably smaller (pass --window)")
            flag("compaction", "info", c,
                 f"compaction before #{c.index + 1} ({how}): prompt {num(before_occ)} -> {num(after)} tokens{at} "
                 f"({num(freed)} freed{extra})",
                 marker=marker is not None, trigger=marker.get("trigger") if marker else None,
                 previous_call=lp[1].index if lp else None, prompt_before=before_occ, prompt_after=after,
                 after_call=cs[after_pos].index if after is not None else None,
                 tokens_freed=freed, pre_tokens=pre, post_tokens=post, tokens_freed_vs_pre_tokens=freed_pre,
                 window_suspect=suspect)
            boundary = boundary or f"compaction before #{c.index + 1}"
        if boundary is not None:
            end_episode(boundary)
            points.clear()
            times.clear()
            ep_start, ep_over, ep_window_fc, ep_crossed = pos, None, False, False
            reserve_streak = None

        pos_last_in_episode = pos
        if c.timestamp is not None:
            times.append(c.timestamp)
        if occ is not None and pos not in outliers:
            points.append((pos, occ))
            last_plaus = (pos, c, occ)

        # -- thresholds --
        slope_here: float | None = None
        if occ is not None and window:
            if limit is not None and occ > limit:
                if reserve_streak is None:
                    # With the request's own max tokens, the request as sent cannot fit: the provider rejects it
                    # or cuts the completion short. A default reserve is policy: a long answer may be cut off.
                    own = c.reserve_src == Src.REQUEST
                    # A prompt above the model's own window that the request's estimate confirms (not implausible,
                    # see Call.report_implausible): the request was sent and counted, so the window is wrong.
                    pw = c.plausible_window
                    confirmed = bool(reported and pw and c.window_src != Src.OPTION and reported > pw)
                    # The prompt alone over the window (a --window what-if, a deployment limit): no request fits.
                    alone = occ > window
                    f = flag("reserve_breached", "critical" if own or alone else "warn", c,
                             f"prompt {num(occ)} + completion reserve {num(reserve)} exceed the {num(window)}-token "
                             f"window at #{c.index + 1} by {num(occ - limit)} tokens "
                             + (f"(the prompt alone is {num(occ - window)} tokens over the window: the request "
                                "cannot fit)" if alone else
                                "(the request's max tokens cannot fit: a full completion fails)" if own else
                                f"(the reserve is {c.reserve_src}: less room is left than a long completion "
                                "may need)")
                             + (f"; the logged request is that big (estimate {num(c.prompt_estimated)}), so the "
                                f"{c.window_src} window is probably too small (pass --window)" if confirmed else ""),
                             prompt_tokens=occ, reserve_tokens=reserve, reserve_source=str(c.reserve_src),
                             window=window, free_tokens=limit - occ, calls=1, window_suspect=confirmed)
                    reserve_streak = Streak(f, pos)
                else:
                    reserve_streak.flag.evidence["calls"] += 1
            else:
                reserve_streak = None
            if budget is not None and occ > budget:
                if ep_over is None:
                    # (the budget is the smaller of budget_fraction x window and window - reserve: say which)
                    basis = (f"{st.budget_fraction:g} of the {num(window)}-token window"
                             if not window or budget >= int(window * st.budget_fraction) else
                             f"the {num(window)}-token window minus the completion reserve {num(reserve)}, less than "
                             f"{st.budget_fraction:g} of the window")
                    ep_over = flag("over_budget", "warn", c,
                                   f"prompt {num(occ)} tokens at #{c.index + 1} is over the budget {num(budget)} "
                                   f"({basis})",
                                   prompt_tokens=occ, budget_tokens=budget, window=window,
                                   budget_fraction=st.budget_fraction, calls_over_budget=0, max_prompt_tokens=occ)
                ep_over.evidence["calls_over_budget"] += 1
                ep_over.evidence["max_prompt_tokens"] = max(ep_over.evidence["max_prompt_tokens"], occ)
            if trig is not None and occ >= trig and ep_cross is None and not ep_crossed:
                ep_cross = Flag("trigger_no_compaction", "warn", c.index,
                                f"prompt {num(occ)} tokens at #{c.index + 1} crossed the compaction trigger "
                                f"{num(trig)} ({st.trigger:g} of the budget)",
                                {"prompt_tokens": occ, "trigger_tokens": trig, "window": window,
                                 "_pos": pos}, context)
                ep_crossed = True
            # per-call slope only near the limit (cheap pre-check with the largest recent per-call growth)
            # (x steps by at least 1 between points, so no per-call rate exceeds max(y) - min(y): a far-off
            # call skips the pairwise pass.)
            if limit is not None and len(points) >= MIN_FORECAST_CALLS \
                    and occ + RISK_CALLS_HIGH * (max(p[1] for p in points) - min(p[1] for p in points)) >= limit:
                pts = list(points)
                max_rate = max((y2 - y1) / (x2 - x1) for (x1, y1), (x2, y2) in itertools.pairwise(pts))
                if occ + RISK_CALLS_HIGH * max_rate >= limit:
                    slope_here = theil_sen(pts)
                    if (not ep_window_fc and occ <= limit and slope_here is not None and slope_here > 0
                            and occ + slope_here > limit):
                        ep_window_fc = True
                        flag("window_forecast", "critical", c,
                             f"next call after #{c.index + 1} forecast at ~{num(occ + slope_here)} tokens, above "
                             f"the window minus reserve {num(limit)} (growing ~{num(slope_here)} tokens/call)",
                             prompt_tokens=occ, slope_tokens_per_call=round(slope_here, 1),
                             forecast_next_tokens=round(occ + slope_here), window_limit_tokens=limit,
                             window=window, reserve_tokens=reserve)

        # -- system prompt (B24) --
        sp = c.system_present
        if sp is True:
            if prev_sp is not True:
                present_start = c
            if (prev_sp is True and c.system_key is not None and prev_sys_key is not None
                    and c.system_key != prev_sys_key and prev_sys_call is not None
                    and same_conversation(prev_sys_call, c)):
                before_b, after_b = calibrations.breakdown(prev_sys_call), calibrations.breakdown(c)
                cal_note = ", calibrated" if before_b.calibrated or after_b.calibrated else ""
                flag("system_prompt_changed", "warn", c,
                     f"system prompt of #{c.index + 1} differs from #{prev_sys_call.index + 1}'s "
                     f"({num(before_b.system_tokens)} -> {num(after_b.system_tokens)} tokens{cal_note}): prompt-cache "
                     "prefix invalidated, every cached turn behind it is billed again",
                     previous_call=prev_sys_call.index, system_tokens_before=prev_sys_tokens,
                     system_tokens_after=c.system_tokens)
            last_present, evicted_since = c, None
            prev_sys_key, prev_sys_tokens, prev_sys_call = c.system_key, c.system_tokens, c
        elif sp is False and prev_sp is True and present_start is not None and last_present is not None \
                and not separate_requests(last_present, c):
            # (only within one conversation: a separate request, a batch line above all, without a system prompt
            # lost nothing that another had)
            rng = (f"#{present_start.index + 1}" if present_start is last_present
                   else f"#{present_start.index + 1}–#{last_present.index + 1}")
            flag("system_prompt_evicted", "critical", c,
                 f"system prompt absent from request #{c.index + 1} (present in {rng})",
                 present_from=present_start.index, present_to=last_present.index,
                 system_tokens_before=last_present.system_tokens, floor_before=last_present.floor_tokens,
                 floor_after=c.floor_tokens, with_compaction=marker is not None or dropped)
            evicted_since = c
        if sp is not None:
            prev_sp = sp

        # -- tool schemas (floor) --
        if c.tools_tokens is not None:
            if prev_tools is not None and c.tools_key != prev_tools[0] and c.tools_tokens > prev_tools[1]:
                added = c.tools_tokens - prev_tools[1]
                new_names = [t for t in c.tool_names if t not in set(prev_tools[2].tool_names)]
                later = n - pos
                names = f" (+{', +'.join(new_names)})" if new_names else ""
                # (as shown: calibrated where the tokenizer is not the model's own; the raw growth where the two
                # calls' factors differ so much that the calibrated one would not be a growth)
                shown_added, cal_note = added, ""
                before_b, after_b = calibrations.breakdown(prev_tools[2]), calibrations.breakdown(c)
                if after_b.calibrated and before_b.calibrated and after_b.tools_tokens is not None \
                        and before_b.tools_tokens is not None and after_b.tools_tokens > before_b.tools_tokens:
                    shown_added, cal_note = after_b.tools_tokens - before_b.tools_tokens, " (calibrated)"
                flag("floor_grew", "warn", c,
                     f"tool schemas grew by {num(shown_added)} tokens{cal_note} at #{c.index + 1}{names}: added to "
                     f"every later call ({num(shown_added * later)} tokens over the {later} "
                     f"call{'s' if later != 1 else ''} logged so far) and the cache prefix is invalidated",
                     previous_call=prev_tools[2].index, tools_tokens_before=prev_tools[1],
                     tools_tokens_after=c.tools_tokens, tokens_added=added, tools_added=new_names,
                     calls_affected=later, tokens_added_total=added * later)
            prev_tools = (c.tools_key, c.tools_tokens, c)

        # -- estimate vs reported --
        e = c.prompt_estimated
        # a call without a comparison (no reported prompt or estimate) neither extends nor ends a streak
        if occ is not None and reported and e:
            cmp = estimate_check(c, reported, e, cal, len(ratios), rejected)
            if cmp is not None:
                diff, tol_desc, what, meaning = cmp
                if estimate_streak is None:
                    c_cal = 1.0 if c.exact else cal
                    f = flag("estimate_disagrees", "info", c,
                             f"{what} differs from the reported prompt {num(reported)} by {100 * diff:.0f}% at "
                             f"#{c.index + 1}{tol_desc}: {meaning}",
                             prompt_reported=reported, prompt_estimated=e,
                             calibration=round(c_cal, 4) if c_cal else None,
                             calibrated_estimate=round(e * c_cal) if c_cal else None, difference=round(diff, 4),
                             raw_difference=round(abs(reported - e) / reported, 4), calls=0,
                             max_difference=round(diff, 4), max_call=c.index)
                    estimate_streak = Streak(f, pos)
                ev = estimate_streak.flag.evidence
                ev["calls"] += 1
                if diff > ev["max_difference"]:
                    ev["max_difference"], ev["max_call"] = round(diff, 4), c.index
                if diff > ESTIMATE_WARN:
                    estimate_streak.flag.severity = "warn"
            else:
                estimate_streak = None

        # -- format rule and drift (B29) --
        if c.system_key is not None and c.system_key in system_texts:
            if c.system_key not in sys_rules:
                sys_rules[c.system_key] = infer_rule(system_texts[c.system_key], "system prompt")
            sys_rule = sys_rules[c.system_key]
            sys_text = system_texts[c.system_key]
        rule = sys_rule or instr_rule or obs_rule
        rule_in_force = rule
        text = c.response.text if c.response is not None else None
        chk, echo_words = response_features(text, rule, sys_text)
        if chk is not None and rule is instr_rule and not armed:
            armed = chk.score == 0
            if not armed:
                chk = None
        if chk is not None:
            if chk.score > 0:
                drift_clean = 0
                if drift is None:
                    if first_drift is None:
                        first_drift = c.index
                    assert rule is not None  # response_features checks only against a rule
                    drift = flag("format_drift", "info", c, "", rule=rule.to_json(), first_call=c.index,
                                 first_score=chk.score, first_kind=chk.kind, worst_score=chk.score,
                                 worst_call=c.index, worst_kind=chk.kind, drifting_responses=0, kinds={},
                                 occupancy_tokens=occ, window=window,
                                 used_fraction=round(occ / window, 4) if occ is not None and window else None,
                                 system_present=sp, recovered_at=None)
                    drift.evidence["_first"] = chk.describe()
                ev = drift.evidence
                ev["drifting_responses"] += 1
                ev["kinds"][chk.kind] = ev["kinds"].get(chk.kind, 0) + 1
                if chk.score > ev["worst_score"]:
                    ev["worst_score"], ev["worst_call"], ev["worst_kind"] = chk.score, c.index, chk.kind
            elif drift is not None:
                drift_clean += 1
                if drift_clean >= DRIFT_RECOVERY:
                    drift.evidence["recovered_at"] = c.index
                    drift, drift_clean = None, 0

        # -- echo of the system prompt (measured above with the format check) --
        if echo_words >= ECHO_MIN_WORDS:
            if echo_streak is None:
                f = flag("system_prompt_echo", "warn", c,
                         f"response of #{c.index + 1} repeats {echo_words} consecutive words of the system "
                         "prompt verbatim",
                         words=echo_words, calls=0, max_words=echo_words)
                echo_streak = Streak(f, pos)
            echo_streak.flag.evidence["calls"] += 1
            echo_streak.flag.evidence["max_words"] = max(echo_streak.flag.evidence["max_words"], echo_words)
        elif text:
            echo_streak = None

        # -- response length collapse --
        out = output_tokens(c)
        if out is not None:
            if len(out_base) < COLLAPSE_BASELINE:
                out_base.append((out, occ))
                if len(out_base) == COLLAPSE_BASELINE:
                    base_out = statistics.median(o for o, _ in out_base)
                    b_occs = [o for _, o in out_base if o is not None]
                    base_occ = statistics.median(b_occs) if b_occs else None
            else:
                out_recent.append(out)
                if base_out is not None and base_out >= COLLAPSE_MIN_BASELINE_TOKENS and \
                        len(out_recent) == COLLAPSE_WINDOW:
                    med = statistics.median(out_recent)
                    if collapse_armed and med < COLLAPSE_RATIO * base_out and occ is not None and base_occ \
                            and occ >= COLLAPSE_PROMPT_GROWTH * base_occ:
                        collapse_armed = False
                        flag("response_collapse", "warn", c,
                             f"responses shrank to a median {num(med)} tokens by #{c.index + 1} (baseline "
                             f"{num(base_out)}) while the prompt grew from {num(base_occ)} to {num(occ)} tokens",
                             recent_median_output_tokens=med, baseline_output_tokens=base_out,
                             baseline_prompt_tokens=base_occ, prompt_tokens=occ, window_calls=COLLAPSE_WINDOW)
                    elif not collapse_armed and med >= COLLAPSE_REARM * base_out:
                        collapse_armed = True

        # -- drift risk of this call --
        if want_risks:
            if occ is None and last_plaus is not None:
                # The last plausible occupancy is judged against its own call's window and reserve: this call's
                # (an implausible record may state another window) would give it a headroom it never had.
                ref = last_plaus[1]
                r_res = ref.reserve_tokens if ref.reserve_tokens is not None else (
                    st.reserve_tokens(ref.window) if ref.window else None)
                r_win, r_occ = ref.window, last_plaus[2]
                r_limit = r_win - r_res if r_win and r_res is not None else None
                r_trig = st.trigger_tokens(r_win, r_res) if r_win else None
                r_budget = st.budget_tokens(r_win, r_res) if r_win else None
                risks.append(call_risk(c, r_occ, c.prompt_implausible, r_win, r_limit, r_trig, r_budget, None,
                                   evicted_since, chk, echo_words, drift is not None, stand_in=ref))
            else:
                risks.append(call_risk(c, occ, c.prompt_implausible, window, limit, trig, budget, slope_here,
                                   evicted_since, chk, echo_words, drift is not None))

    end_episode("end of log")

    # finalise evidence that accumulated over the run
    for f in flags:
        if f.kind == "format_drift":
            ev = f.evidence
            first = ev.pop("_first", "")
            f.severity = "warn" if ev["drifting_responses"] >= DRIFT_CONFIRM else "info"
            rule_j = ev["rule"]
            occ_txt = (f"prompt {num(ev['occupancy_tokens'])} tokens"
                       + (f" = {pct(ev['occupancy_tokens'], ev['window'])} of window" if ev["window"] else ""))
            worst = (f"; worst: {ev['worst_kind'].replace('_', ' ')} at #{ev['worst_call'] + 1}"
                     if ev["worst_call"] != ev["first_call"] else "")
            sysp = "; system prompt absent" if ev["system_present"] is False else ""
            f.reason = (f"responses drift from #{f.call + 1}: {first} (score {ev['first_score']:g}), "
                        f"{ev['drifting_responses']} drifting{worst}; rule: {rule_j['description']}; at {occ_txt}"
                        f"{sysp}")
    flags.sort(key=lambda f: (f.call, -SEVERITY_RANK[f.severity]))
    forecast = episode_forecast(cs, st, list(points), list(times), ep_start, last_plaus, scope or Scope())
    return Analysis(context, flags, forecast, risks, rule_in_force, first_drift, cal)
