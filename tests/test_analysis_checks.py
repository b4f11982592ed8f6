"""The check objects of ctxwatch.analysis one at a time: each owns its state and raises its own flags.

Calls are built by hand with the sizes each check reads; expected flags and evidence are worked out here from
those sizes and the default settings (budget 0.6 of the window, trigger 0.8 of the budget, reserve 0.15).
"""

from __future__ import annotations

import ctxwatch.analysis as analysis
from ctxwatch.analysis.drift import FormatCheck, FormatRule
from ctxwatch.analysis.flags import FlagSink
from ctxwatch.analysis.responses import Collapse, FormatDrift
from ctxwatch.analysis.thresholds import Thresholds
from ctxwatch.analysis.trend import Limits
from ctxwatch.config import Settings
from ctxwatch.model import Call, ResponseInfo, SourceRef, Src, Usage

WINDOW = 100_000


def call(i: int, prompt: int | None = None, *, window: int | None = WINDOW, reserve: int | None = None,
         text: str | None = None) -> Call:
    return Call(index=i, source=SourceRef("x", i + 1, i + 1, 0, 0), timestamp=float(i), model=None, provider=None,
                session=None, context="main", window=window, window_src=Src.LOG, system_tokens=None,
                tools_tokens=None, floor_tokens=None, floor_src=Src.UNKNOWN, history_tokens=None,
                history_src=Src.UNKNOWN, reserve_tokens=reserve,
                reserve_src=Src.REQUEST if reserve is not None else Src.DEFAULT, prompt_estimated=None,
                usage=Usage(prompt_total=prompt) if prompt is not None else None, tokenizer="o200k_base",
                exact=True, response=ResponseInfo(text) if text is not None else None)


def test_the_package_still_exports_what_its_importers_use() -> None:
    names = ["Analysis", "DriftRisk", "ECHO_MIN_WORDS", "FLAG_KINDS", "Flag", "Forecast", "SEVERITY_RANK",
             "_ContextCounts", "_Scope", "analysis_json", "analyze", "analyze_run", "collect_texts", "theil_sen"]
    assert [n for n in names if not hasattr(analysis, n)] == []


def test_limits_of_a_call() -> None:
    """100,000-token window: reserve 15,000 (0.15), limit 85,000, budget min(60,000, 85,000), trigger 0.8 of it;
    with the request's own 50,000-token reserve the budget is the window minus it, 50,000."""
    st = Settings()
    assert Limits.of(call(0), st) == Limits(WINDOW, 15_000, 85_000, 48_000, 60_000)
    assert Limits.of(call(0, reserve=50_000), st) == Limits(WINDOW, 50_000, 50_000, 40_000, 50_000)
    assert Limits.of(call(0, window=None), st) == Limits(None, None, None, None, None)


def run_thresholds(prompts: list[int], boundaries: dict[int, str] | None = None) -> FlagSink:
    st, out = Settings(), FlagSink("main")
    check = Thresholds(st, out)
    for pos, p in enumerate(prompts):
        c = call(pos, p)
        check.step(pos, c, p, Limits.of(c, st), [], (boundaries or {}).get(pos))
    check.finish()
    return out


def test_thresholds_count_runs_and_flag_the_crossing_when_the_episode_ends() -> None:
    """Limit 85,000, budget 60,000, trigger 48,000.  Calls 1 and 2 are over the limit (one breach of 2 calls),
    call 4 again (a new breach); 1, 2 and 4 are over the budget (one flag per episode, 3 calls); the trigger is
    crossed at call 1 and 3 calls follow it without a compaction, flagged at the end of the log."""
    out = run_thresholds([40_000, 90_000, 90_000, 40_000, 90_000])
    assert [(f.kind, f.call) for f in out.flags] == [
        ("reserve_breached", 1), ("over_budget", 1), ("reserve_breached", 4), ("trigger_no_compaction", 1)]
    breach, over, breach2, crossing = out.flags
    assert breach.evidence["calls"] == 2 and breach2.evidence["calls"] == 1
    assert breach.severity == "warn"  # (a default reserve is policy: the request may still fit)
    assert over.evidence["calls_over_budget"] == 3 and over.evidence["max_prompt_tokens"] == 90_000
    assert crossing.evidence == {"prompt_tokens": 90_000, "trigger_tokens": 48_000, "window": WINDOW,
                                 "calls_after_crossing": 3, "ended_by": "end of log"}
    assert crossing.reason.endswith("and no compaction followed for 3 calls (end of log)")


def test_a_crossing_followed_at_once_by_a_new_episode_is_no_flag() -> None:
    """Trigger 48,000: crossed at call 1, a compaction before call 2, so no call followed that crossing in its
    episode.  The new episode crosses it at call 3, followed by call 4: one flag, one call after.  Calls 3 and 4
    are over the 60,000 budget: one flag of 2 calls."""
    out = run_thresholds([40_000, 50_000, 10_000, 61_000, 62_000], {2: "compaction before #3"})
    assert [(f.kind, f.call) for f in out.flags] == [("over_budget", 3), ("trigger_no_compaction", 3)]
    over, crossing = out.flags
    assert over.evidence["calls_over_budget"] == 2 and over.evidence["max_prompt_tokens"] == 62_000
    assert crossing.evidence["calls_after_crossing"] == 1


RULE = FormatRule("json_object", ("answer",), "system prompt", "Reply only with JSON")
CLEAN = FormatCheck(0.0, "clean")


def test_format_drift_is_one_flag_per_episode_warn_when_sustained() -> None:
    """Scores 0.3, 0, 0, 0 (recovered after 3 clean), then 0.7, 1.0: two episodes, the first with one drifting
    response (info), the second with two (warn), worst at its second call."""
    out = FormatDrift(FlagSink("main"))
    checks = [FormatCheck(0.3, "extra_text"), CLEAN, CLEAN, CLEAN, FormatCheck(0.7, "broken_json"),
              FormatCheck(1.0, "prose")]
    for i, chk in enumerate(checks):
        out.step(call(i, 1000), 1000, RULE, chk)
    out.finish()
    first, second = out.out.flags
    assert (first.call, first.severity, first.evidence["drifting_responses"], first.evidence["recovered_at"]) == (
        0, "info", 1, 3)
    assert (second.call, second.severity, second.evidence["drifting_responses"]) == (4, "warn", 2)
    assert (second.evidence["worst_call"], second.evidence["worst_kind"]) == (5, "prose")
    assert out.first_drift == 0 and out.open is second
    assert second.reason.startswith("responses drift from #5: invalid JSON (score 0.7), 2 drifting; worst: prose "
                                    "at #6")


def test_collapse_compares_recent_responses_with_the_first_ten() -> None:
    """Ten responses of 400 characters (100 tokens at 4 characters a token) at a 1,000-token prompt, then five of
    40 characters (10 tokens) while the prompt reaches 2,000: the median 10 is under a quarter of 100 and the
    prompt is 2 x the baseline's."""
    check = Collapse(FlagSink("main"))
    for i in range(10):
        check.step(call(i, 1000, text="x" * 400), 1000)
    for i in range(10, 15):
        check.step(call(i, 2000, text="y" * 40), 2000)
    [f] = check.out.flags
    assert (f.kind, f.call) == ("response_collapse", 14)
    assert f.evidence == {"recent_median_output_tokens": 10, "baseline_output_tokens": 100,
                          "baseline_prompt_tokens": 1000, "prompt_tokens": 2000, "window_calls": 5}


def test_a_response_is_judged_against_the_rule_it_is_given_not_a_freed_ones() -> None:
    """The features of a response are kept by the rule object: a rule made where another was freed (at its
    address, as Python reuses it) gets its own verdict.  Verdicts by hand: ``{"action": "run"}`` against a rule
    asking for ``action`` and ``speak`` lacks ``speak``; against one asking for ``action`` alone it is clean."""
    from ctxwatch.analysis.drift import FormatRule
    from ctxwatch.analysis.responses import response_features

    text = '{"action": "run"}'
    both, alone = ("action", "speak"), ("action",)
    kind, source, said = "json_object", "system prompt", "Reply in JSON"
    two = FormatRule(kind, both, source, said)
    chk, _ = response_features(text, two, None)
    assert chk is not None and chk.kind == "missing_keys" and chk.missing == ("speak",)
    del two, chk
    one = FormatRule(kind, alone, source, said)  # (most often at the address the first rule had)
    chk, _ = response_features(text, one, None)
    assert chk is not None and chk.kind == "clean"
