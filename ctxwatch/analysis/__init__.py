"""Flags, forecast and drift risk for the calls of a run.

Everything is recomputed from the run's call summaries in one pass per context (O(n) in the calls), so the
dashboard can analyse again after every new call; odd data never raises, it degrades to "unknown" or no flag.
:func:`analyze_run` and :func:`analysis_json` are the entry points; the modules hold one family of checks each.
"""

from ctxwatch.analysis.drift import (
    ECHO_MIN_WORDS,
    OBSERVED_BASELINE,
    SCORE_BROKEN_JSON,
    EchoIndex,
    FormatCheck,
    FormatRule,
    check_format,
    echo_index,
    infer_rule,
    observed_rule,
)
from ctxwatch.analysis.episodes import (
    AUTO_COMPACT_MIN_FRACTION,
    COMPACTION_DROP_FRACTION,
    COMPACTION_MIN_TOKENS,
    DIP_RETURN_FRACTION,
)
from ctxwatch.analysis.estimate import ESTIMATE_MIN_TOKENS, ESTIMATE_TOLERANCE, ESTIMATE_WARN
from ctxwatch.analysis.flags import FLAG_KINDS, SEVERITIES, SEVERITY_RANK, Flag, worst_flag
from ctxwatch.analysis.forecast import SCOPE_CONTEXTS_NAMED, ContextCounts, Forecast, Scope
from ctxwatch.analysis.responses import (
    CHARS_PER_TOKEN,
    COLLAPSE_BASELINE,
    COLLAPSE_MIN_BASELINE_TOKENS,
    COLLAPSE_PROMPT_GROWTH,
    COLLAPSE_RATIO,
    COLLAPSE_REARM,
    COLLAPSE_WINDOW,
    DRIFT_CONFIRM,
    DRIFT_RECOVERY,
    FEATURE_CACHE_SIZE,
    INSTRUCTION_MAX_CHARS,
)
from ctxwatch.analysis.risk import RISK_LEVELS, DriftRisk
from ctxwatch.analysis.run import MAX_SYSTEM_TEXTS, analysis_json, analyze, analyze_run, collect_texts
from ctxwatch.analysis.stream import Analysis
from ctxwatch.analysis.trend import (
    FORECAST_POINTS,
    MIN_FORECAST_CALLS,
    MIN_NET_RISE,
    RISK_CALLS_HIGH,
    Limits,
    theil_sen,
)

# (the names the tests knew these two by, when they were private to one module)
_Scope = Scope
_ContextCounts = ContextCounts

__all__ = [
    "AUTO_COMPACT_MIN_FRACTION", "CHARS_PER_TOKEN", "COLLAPSE_BASELINE", "COLLAPSE_MIN_BASELINE_TOKENS",
    "COLLAPSE_PROMPT_GROWTH", "COLLAPSE_RATIO", "COLLAPSE_REARM", "COLLAPSE_WINDOW", "COMPACTION_DROP_FRACTION",
    "COMPACTION_MIN_TOKENS", "DIP_RETURN_FRACTION", "DRIFT_CONFIRM", "DRIFT_RECOVERY", "ECHO_MIN_WORDS",
    "ESTIMATE_MIN_TOKENS", "ESTIMATE_TOLERANCE", "ESTIMATE_WARN", "FEATURE_CACHE_SIZE", "FLAG_KINDS",
    "FORECAST_POINTS", "INSTRUCTION_MAX_CHARS", "MAX_SYSTEM_TEXTS", "MIN_FORECAST_CALLS", "MIN_NET_RISE",
    "OBSERVED_BASELINE", "RISK_CALLS_HIGH", "RISK_LEVELS", "SCOPE_CONTEXTS_NAMED", "SCORE_BROKEN_JSON",
    "SEVERITIES", "SEVERITY_RANK", "Analysis", "DriftRisk", "EchoIndex", "Flag", "Forecast",
    "FormatCheck", "FormatRule", "Limits", "analysis_json", "analyze", "analyze_run", "check_format", "collect_texts",
    "echo_index", "infer_rule", "observed_rule", "theil_sen", "worst_flag",
]
