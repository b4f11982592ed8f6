"""Response checks: the features of each response (format score against the rule, echoed system-prompt words,
output size), cached across recomputations.
"""

from __future__ import annotations

from ctxwatch.analysis.drift import (
    FormatCheck,
    FormatRule,
    check_format,
    echo_index,
)
from ctxwatch.model import (
    Call,
)

#: A drift episode of at least this many drifting responses is ``warn`` (one odd response is ``info``).
DRIFT_CONFIRM = 2
#: Consecutive clean responses that end a drift episode (a later drift is a new episode and a new flag).
DRIFT_RECOVERY = 3
#: Text-only responses whose median output length is the baseline of the collapse check.
COLLAPSE_BASELINE = 10
#: Recent text-only responses whose median output length is compared with the baseline.
COLLAPSE_WINDOW = 5
#: Collapse = the recent median output is below a quarter of the baseline median...
COLLAPSE_RATIO = 0.25
#: ...while the prompt is at least 1.5 times the baseline prompt (it "keeps growing").
COLLAPSE_PROMPT_GROWTH = 1.5
#: Baselines shorter than this (tokens) are too short to collapse meaningfully (one-line answers by design).
COLLAPSE_MIN_BASELINE_TOKENS = 50
#: After a collapse flag, the check re-arms when the recent median is back to half the baseline.
COLLAPSE_REARM = 0.5
#: Characters per token for responses whose output tokens are not reported (OpenAI's rule of thumb for English).
CHARS_PER_TOKEN = 4


#: Responses whose format check and echo measure are cached (keys reference texts the calls already hold, so
#: the cache adds ~100 bytes per entry; 50k covers a 10k-call run with room for a few runs in one process).
FEATURE_CACHE_SIZE = 50_000
#: Characters of the first user message kept for rule inference (a CLAUDE.md-like preamble fits).
INSTRUCTION_MAX_CHARS = 20_000


def output_tokens(c: Call) -> int | None:
    """Output size of a text-only response in tokens (reported, else characters / :data:`CHARS_PER_TOKEN`)."""
    r = c.response
    if r is None or r.tool_calls or not r.text or not r.text.strip():
        return None
    if c.usage is not None and c.usage.output is not None:
        return c.usage.output
    return len(r.text) // CHARS_PER_TOKEN


_FEATURES: dict[tuple[str, FormatRule | None, str | None], tuple[FormatCheck | None, int]] = {}


def response_features(text: str | None, rule: FormatRule | None, sys_text: str | None
                       ) -> tuple[FormatCheck | None, int]:
    """``(format check, echoed words)`` of one response, cached by ``(text, rule, system text)``.

    The cache makes recomputing the analysis after each new call cost a dict lookup per old response (string
    hashes are cached by Python); it is cleared when it holds :data:`FEATURE_CACHE_SIZE` entries.
    """
    if not text:
        return None, 0
    key = (text, rule, sys_text)
    got = _FEATURES.get(key)
    if got is None:
        chk = check_format(text, rule) if rule is not None else None
        echo = echo_index(sys_text).longest_run(text) if sys_text else 0
        if len(_FEATURES) >= FEATURE_CACHE_SIZE:
            _FEATURES.clear()
        got = _FEATURES[key] = (chk, echo)
    return got
