"""Flags, forecast and drift risk for the calls of one run (issue 6; failure cases B13, B23, B24, B29).

Pure core: no Textual, no I/O except in :func:`collect_texts` (which re-reads a few system prompts from disk
through :func:`ctxwatch.engine.run.reload_call`).  Everything is recomputed from the list of calls in one pass
(O(n) in the number of calls, plus O(K²) with K = :data:`FORECAST_POINTS` for the final forecast), so the
dashboard can call :func:`analyze` again after every new call of a 10,000-call run.  Odd data never raises:
unknown windows, missing usage, unlogged system prompts all degrade to "unknown" / no flag.

Entry points
------------
* :func:`analyze` -> :class:`Analysis` (``flags``, ``forecast``, ``drift_risk`` per call) for one context;
* :func:`analyze_run` -> one :class:`Analysis` per context of a :class:`~ctxwatch.engine.run.Run`;
* :func:`analysis_json` -> ``{"flags": [...], "forecast": {...}}`` for ``report --json`` and ``check --json``.

Numbering
---------
``Flag.call`` and ``DriftRisk.call`` are :attr:`Call.index` (0-based, the ``index`` of ``report --json``).
In reason texts a request is written ``#N`` with N = index + 1 (1-based: "request #41" is the 41st request,
index 40), because that is how people count requests and how failure case B24 states its expectation.

Occupancy
---------
The occupancy of a call is its prompt size in tokens: the provider-reported prompt total when present and
plausible; else our estimate scaled by the run's calibration (median reported/estimated ratio of this context);
else floor + history; else ``None``.  A reported prompt larger than the call's window (the model's, not one the
user set: :attr:`Call.plausible_window`; or than :data:`MAX_PLAUSIBLE_PROMPT` when the window is unknown) that
the call's own estimate of its logged request does not confirm, or of 0 or less, is **implausible** (B13,
:attr:`Call.report_implausible`): it is flagged,
ignored by every other check and by the forecast, and the last plausible occupancy stays current
(:attr:`Call.prompt_implausible`: the call's own used %, free and peak are unknown too).  A count above the
window is still the provider's count: the token totals and the cost of ``report`` keep it, and the flag says so.

Episodes
--------
The forecast and the threshold flags work per *episode*: the calls since the last reset.  A reset is the start
of the log, a file reset (``Run.resets``), a change of session id, or a compaction (a ``Call.compaction`` marker,
or the history shrinking by at least :data:`COMPACTION_DROP_FRACTION` and :data:`COMPACTION_MIN_TOKENS`).
After a compaction the slope starts again from the post-compaction calls (B23).

Streams
-------
One context may interleave unrelated requests: claude-trace captures hold the agent's calls, small helper calls
on another model (titles, topic detection) and ``max_tokens: 1`` quota probes.  Comparing them with each other
would report the system prompt "evicted" on every helper call.  So a context is analysed as one stream per model
(``Call.model``); calls marked ``extra["probe"]`` are left out (drift risk "low: quota probe").  The forecast,
format rule and calibration of the context are those of the stream whose latest occupancy is largest among the
streams that have a forecast (enough calls since their last reset, building on each other), else among all.  Flags of
a multi-stream context carry ``evidence["stream_model"]``.  Sessions that interleave in one context (two agent
runs logging to one file, each record with its ``session``) are streams of their own too, one per session and
model (:func:`_sessions_interleave`), their flags carrying ``evidence["stream_session"]``: compared call by
call, every switch between them was a "new session" reset and the other session's calls looked like its
system prompt evicted.  Sessions that follow one another (a folder of session files) stay one stream, reset
at each change.  Limitation: a model switch in the middle of one
conversation starts a new stream (nothing is compared across the switch).  "System prompt changed" is only
reported within one conversation (the two calls' histories start with the same message), because otherwise no
cached turn sits behind the prefix.  So the forecast's counts are of one context and one model: its notes name
them, and say how many of the log's calls are elsewhere, whenever the log has calls in other contexts or on
other models (:class:`_Scope`).

Calls that do not build on each other get no forecast, since nothing grows from one to the next: batch requests
and other requests with their own ``custom_id`` (each its own episode, :func:`ctxwatch.model.separate_requests`;
a batch line without a system prompt is no eviction either), and an episode whose calls each send only
new user messages, none re-sending the call before it, their prompt sizes showing no rising trend
(:func:`_independent`, :func:`_rising`: Claude Code's helper calls).  A run whose logged requests hold one
new user message each while the reported prompt rises (it builds on something the log does not show) keeps its
forecast.

Texts and memory
----------------
:class:`Call` holds no request text, but the format rule (B29) and the echo check need the system prompt.  The
caller passes ``system_texts`` keyed by :attr:`Call.system_key` (the content hash), so a run needs one entry
per *distinct* system prompt, not per call; :func:`collect_texts` re-reads at most :data:`MAX_SYSTEM_TEXTS` of
them from disk.  The echo check keeps only word-window hashes of each text (:class:`ctxwatch.analysis.drift.EchoIndex`,
bounded), and per-response results are cached (:data:`FEATURE_CACHE_SIZE` entries).  Without texts, the rule
falls back to the first user message or to the observed format of the first responses, and the echo check is
off.  Response texts come from :attr:`Call.response` (already in memory).

Incremental use (UI)
--------------------
Recompute with :func:`analyze_run` (or :func:`analyze` with cached texts) after each change, in a worker:
O(n) per run, ~0.2 s for 10,000 calls once the response cache is warm.  :attr:`Flag.key` is stable across
recomputations, so "a new critical flag appeared" is a set difference of keys.  Flags are recomputed, not
appended: a flag may move (e.g. a sharp drop judged a one-call dip once the next call arrives) and evidence
counts grow while a condition lasts.

Severity
--------
``critical`` = the next request fails or the run has lost its instructions; ``warn`` = a threshold the user set
was passed, the cache prefix was invalidated, or output drift is sustained; ``info`` = worth knowing.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ctxwatch.accounting import (
    MAX_CALIBRATION,
    MIN_CALIBRATION_CALLS,
    NO_CALIBRATION,
    Calibrations,
    calibration_factor,
    calibrations_of,
    median_ratio,
)
from ctxwatch.analysis.drift import (
    ECHO_MIN_WORDS,
    OBSERVED_BASELINE,
    SCORE_BROKEN_JSON,
    FormatCheck,
    FormatRule,
    check_format,
    echo_index,
    infer_rule,
    observed_rule,
)
from ctxwatch.config import Settings
from ctxwatch.model import (
    MAX_PLAUSIBLE_PROMPT,
    Call,
    Src,
    own_request,
    separate_requests,
    session_ranks,
)
from ctxwatch.tokens import own_tokenizer

if TYPE_CHECKING:
    from ctxwatch.engine import Run

# --- constants (each with its source or rationale) ---------------------------------------------------------------

#: Severities in increasing order.
SEVERITIES = ("info", "warn", "critical")
#: Rank of each severity (for ``--fail-on`` and sorting).
SEVERITY_RANK = {s: i for i, s in enumerate(SEVERITIES)}
#: Drift-risk levels in increasing order.
RISK_LEVELS = ("low", "medium", "high", "critical")

#: Calls needed since the last reset before the forecast projects anything (issue 6: "not enough data when
#: fewer than 3 calls since the last reset"): two deltas are the least that can show a trend.
MIN_FORECAST_CALLS = 3
#: Most recent plausible calls of the episode the slope is fitted on.  Eight calls is about one agent task step
#: (read, edit, test...) so the slope follows the current phase; Theil-Sen over 8 points (28 pairwise slopes)
#: tolerates 2 outliers (breakdown point ~29 %).
FORECAST_POINTS = 8
#: Calibrated estimate vs reported prompt: beyond 5 % the log does not show what was sent (issue 6).
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
#: A history (or prompt, when the history is not known) shrinking by a quarter or more between consecutive
#: calls is a compaction or truncation: normal turns only append; Claude Code and Codex compactions free
#: 70-95 % (the Claude Code sample: 164,831 -> 36,081 tokens).
COMPACTION_DROP_FRACTION = 0.25
#: ...and by at least this many tokens, so that small prompts that lose one short message are not compactions.
COMPACTION_MIN_TOKENS = 1000
#: An automatic compaction fires near the end of the window (Claude Code and Codex auto-compact at roughly
#: 80-95 % of it).  One that fired below half of the window says the window in use was smaller than the one
#: we resolved (e.g. the catalogue's 1M-token window for a model run with the default 200k one).
AUTO_COMPACT_MIN_FRACTION = 0.5
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
#: Drift risk is ``high`` when the forecast reaches the window within this many calls.
RISK_CALLS_HIGH = 5
#: Distinct system prompts re-read from disk per context by :func:`collect_texts` (bounds I/O and memory).
MAX_SYSTEM_TEXTS = 8
#: Responses whose format check and echo measure are cached (keys reference texts the calls already hold, so
#: the cache adds ~100 bytes per entry; 50k covers a 10k-call run with room for a few runs in one process).
FEATURE_CACHE_SIZE = 50_000
#: Characters of the first user message kept for rule inference (a CLAUDE.md-like preamble fits).
INSTRUCTION_MAX_CHARS = 20_000


# --- result types -------------------------------------------------------------------------------------------------

@dataclass(slots=True)
class Flag:
    """One finding.

    Attributes:
        kind: machine-readable kind (see :data:`FLAG_KINDS`).
        severity: ``info`` | ``warn`` | ``critical``.
        call: the call's index (0-based, as in ``report --json``).
        reason: one line for a person; requests are written ``#N`` = index + 1.
        evidence: the numbers behind the reason (tokens, indexes, fractions); JSON-serialisable.
        context: the context the call belongs to (``main`` or a sidechain id).
    """

    kind: str
    severity: str
    call: int
    reason: str
    evidence: dict[str, Any] = field(default_factory=dict)
    context: str = "main"

    @property
    def key(self) -> tuple[str, str, int]:
        """``(context, kind, call)``: stable across recomputations, for "is this flag new?" in the UI."""
        return (self.context, self.kind, self.call)

    def to_json(self) -> dict[str, Any]:
        """``{"kind", "severity", "call", "reason", "evidence", "context"}``."""
        return {"kind": self.kind, "severity": self.severity, "call": self.call, "reason": self.reason,
                "evidence": self.evidence, "context": self.context}


#: Every flag kind with its severity (``info/warn`` = decided per flag, see the kind's documentation).
FLAG_KINDS: dict[str, str] = {
    "implausible_usage": "warn",          # B13: reported prompt above the window; no occupancy (kept in totals)
    "compaction": "info",                 # marker or sharp history drop; tokens freed in evidence
    "trigger_no_compaction": "warn",      # crossed the compaction trigger, and the next call did not compact
    "over_budget": "warn",                # prompt above budget_fraction x window
    "reserve_breached": "warn/critical",  # prompt + completion reserve above the window (critical when the
                                          # reserve is the request's own max tokens: that request cannot fit)
    "window_forecast": "critical",        # the next call is forecast above window - reserve
    "system_prompt_evicted": "critical",  # B24: a call lacks the system prompt earlier calls had
    "system_prompt_changed": "warn",      # system text differs from the previous call's: cache prefix invalidated
    "floor_grew": "warn",                 # tool schemas added or enlarged: tokens added to every later call
    "estimate_disagrees": "info/warn",    # calibrated estimate off by > 5 % (warn > 20 %); raw estimate of
                                          # another tokenizer before any calibration: > 20 %, warn
    "format_drift": "info/warn",          # B29: responses leave the inferred format rule (warn when sustained)
    "system_prompt_echo": "warn",         # a response repeats >= 40 words of the system prompt verbatim
    "response_collapse": "warn",          # responses shrink to < 1/4 of the baseline while the prompt grows
}


@dataclass(slots=True)
class Forecast:
    """When the prompt reaches each threshold, from its recent growth.

    ``calls_to_*`` are further calls (0 = already at or above; ``None`` = unknown: not enough data, window
    unknown, or the prompt is not growing); ``seconds_to_*`` are those calls times the median seconds per call
    (``None`` without timestamps).  Thresholds in tokens: trigger = ``trigger x budget``, budget =
    ``budget_fraction x window``, window = ``window - reserve`` (the window and reserve of the call the forecast
    starts from: the episode's last plausible call, else the last call).

    Attributes:
        slope_tokens_per_call: Theil-Sen slope of the occupancy over the last :data:`FORECAST_POINTS`
            plausible calls of the episode (tokens per call).
        seconds_per_call: median interval between those calls, in seconds.
        basis: how the slope was obtained (one line).
        note: why something is unknown, or ``None``.
        enough_data: at least :data:`MIN_FORECAST_CALLS` plausible calls since the last reset.
        at_call: index of the last plausible call (the forecast starts from its occupancy).
        since_call: index of the first call of the episode.
        occupancy_tokens: the last plausible occupancy.
        trigger_tokens / budget_tokens / window_limit_tokens / window_tokens: the thresholds.
    """

    calls_to_trigger: int | None = None
    seconds_to_trigger: float | None = None
    calls_to_budget: int | None = None
    seconds_to_budget: float | None = None
    calls_to_window: int | None = None
    seconds_to_window: float | None = None
    slope_tokens_per_call: float | None = None
    seconds_per_call: float | None = None
    basis: str = ""
    note: str | None = "no calls"
    enough_data: bool = False
    at_call: int | None = None
    since_call: int | None = None
    occupancy_tokens: int | None = None
    trigger_tokens: int | None = None
    budget_tokens: int | None = None
    window_limit_tokens: int | None = None
    window_tokens: int | None = None

    def text(self) -> str:
        """``"12 calls / ~6 min to trigger · budget crossed · 40 calls / ~20 min to window"``, or the note."""
        if not self.enough_data or self.slope_tokens_per_call is None:
            return self.note or "not enough data"
        rows = (("trigger", self.calls_to_trigger, self.seconds_to_trigger),
                ("budget", self.calls_to_budget, self.seconds_to_budget),
                ("window", self.calls_to_window, self.seconds_to_window))
        crossed = [name for name, n, _ in rows if n == 0]
        done = f"; {', '.join(crossed)} crossed" if crossed else ""
        if self.window_tokens is None:
            slope = self.slope_tokens_per_call
            trend = f"growing ~{_n(slope)}" if slope > 0 else f"shrinking ~{_n(-slope)}" if slope < 0 else "flat, 0"
            return f"window unknown: pass --window to forecast ({trend} tokens/call)"
        if self.slope_tokens_per_call <= 0:
            return f"prompt not growing ({_n(self.slope_tokens_per_call)} tokens/call){done}"
        parts = []
        for name, n, s in rows:
            if n is None:
                parts.append(f"{name} unknown")
            elif n == 0:
                parts.append(f"{name} crossed")
            else:
                # (calls logged within the same second, a scripted loop: "~0 s" said nothing)
                t = "" if s is None else f" / ~{_duration(s)}" if s >= 0.5 else " / under 1 s"
                parts.append(f"{n:,} call{'s' if n != 1 else ''}{t} to {name}")
        out = " · ".join(parts)
        note = "; ".join(x for x in (self.note or "").split("; ") if x and not x.startswith(("window unknown",
                                                                                              "prompt not growing")))
        return f"{out} ({note})" if note else out

    def to_json(self) -> dict[str, Any]:
        """The ``forecast`` object of ``report --json`` (the issue-6 keys first, then details and ``text``)."""
        return {
            "calls_to_trigger": self.calls_to_trigger, "seconds_to_trigger": _r(self.seconds_to_trigger),
            "calls_to_budget": self.calls_to_budget, "seconds_to_budget": _r(self.seconds_to_budget),
            "calls_to_window": self.calls_to_window, "seconds_to_window": _r(self.seconds_to_window),
            "slope_tokens_per_call": _r(self.slope_tokens_per_call), "basis": self.basis, "note": self.note,
            "enough_data": self.enough_data, "seconds_per_call": _r(self.seconds_per_call),
            "at_call": self.at_call, "since_call": self.since_call, "occupancy_tokens": self.occupancy_tokens,
            "trigger_tokens": self.trigger_tokens, "budget_tokens": self.budget_tokens,
            "window_limit_tokens": self.window_limit_tokens, "window_tokens": self.window_tokens,
            "text": self.text(),
        }


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
                "used_fraction": _r(self.used_fraction, 4)}


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


@dataclass(frozen=True, slots=True)
class _Scope:
    """Which of the log's calls a forecast counts, so that its notes can say so.

    The forecast follows one context at a time, and within a context one model (stream) at a time (see the
    module docstring), so its call counts are of that context and model, not of the log.

    Attributes:
        model: the stream's model, named when the context has calls on other models too.
        context: the context, named when the log has calls in other contexts too.
        elsewhere: ``(calls, where)`` of the calls left out, e.g. ``(7, "on 7 other models")``,
            ``(1, "in context scorer:model_graded_fact")``.
        whose: whose other calls those are: ``the log's``, or ``the session's`` for one session of a folder.
    """

    model: str | None = None
    context: str | None = None
    elsewhere: tuple[tuple[int, str], ...] = ()
    whose: str = "the log's"
    session: str | None = None

    def label(self) -> str:
        """`` in context main on o3-mini``: the calls counted (empty when they are all of the log's)."""
        out = f" in context {self.context}" if self.context is not None else ""
        out += f" of session {self.session}" if self.session is not None else ""
        return out + (f" on {self.model}" if self.model is not None else "")

    def left_out(self) -> str:
        """``; each context and each model is forecast on its own calls: the log's other 7 calls are on 7 other
        models`` (empty when no call is left out)."""
        total = sum(n for n, _ in self.elsewhere)
        if not total:
            return ""
        parts = [f"{n:,} {w}" if len(self.elsewhere) > 1 else w for n, w in self.elsewhere]
        where = parts[-1] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"
        other = f"other call is {where}" if total == 1 else f"other {total:,} calls are {where}"
        each = "each context, session and model" if self.session is not None else "each context and each model"
        return f"; {each} is forecast on its own calls: {self.whose} {other}"


#: At most this many other contexts are named in a forecast note; the rest are counted together (a Claude Code
#: session can have dozens of subagent contexts, and the note must fit the dashboard's 300-character line).
SCOPE_CONTEXTS_NAMED = 3


class _ContextCounts:
    """Calls per context of a log (contexts in the log's order), to say which calls a context's forecast left
    out in O(:data:`SCOPE_CONTEXTS_NAMED`) per context: a Claude Code folder can hold thousands of subagent
    contexts, and the dashboard analyses every context after each new call."""

    def __init__(self, counts: Mapping[str, int]) -> None:
        self.items = [(ctx, n) for ctx, n in counts.items() if n]
        self.by_context = dict(self.items)
        self.total = sum(n for _, n in self.items)

    def elsewhere(self, context: str) -> list[tuple[int, str]]:
        """``(calls, "in context X")`` for the first :data:`SCOPE_CONTEXTS_NAMED` contexts other than
        ``context``, then one entry for the rest."""
        own = self.by_context.get(context, 0)
        out = [(n, f"in context {ctx}") for ctx, n in self.items[:SCOPE_CONTEXTS_NAMED + 1]
               if ctx != context][:SCOPE_CONTEXTS_NAMED]
        rest_contexts = len(self.items) - len(out) - (1 if own else 0)
        if rest_contexts > 0:
            rest = self.total - own - sum(n for n, _ in out)
            out.append((rest, f"in {rest_contexts} more context{'s' if rest_contexts != 1 else ''}"))
        return out


# --- helpers ------------------------------------------------------------------------------------------------------

def _r(v: float | None, nd: int = 1) -> float | None:
    return None if v is None else round(v, nd)


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _n(v: int | float | None) -> str:
    return "?" if v is None else f"{round(v):,}"


def _pct(a: float | None, b: float | None) -> str:
    return "?" if a is None or not b else f"{100 * a / b:.0f}%"


def theil_sen(points: Sequence[tuple[float, float]]) -> float | None:
    """Theil-Sen slope (median of all pairwise slopes) of ``(x, y)`` points; ``None`` with fewer than 2 x values.

    Robust to outliers (breakdown point ~29 %); O(k²) for k points.
    """
    slopes = [(y2 - y1) / (x2 - x1) for i, (x1, y1) in enumerate(points) for (x2, y2) in points[i + 1:]
              if x2 != x1]
    return statistics.median(slopes) if slopes else None


def _calls_to(occ: int, thr: int | None, slope: float | None) -> int | None:
    """Further calls until ``occ + k * slope >= thr``: 0 if already there, ``None`` if unknown or not growing."""
    if thr is None:
        return None
    if occ >= thr:
        return 0
    if slope is None or slope <= 0:
        return None
    return max(1, math.ceil((thr - occ) / slope))


def _output_tokens(c: Call) -> int | None:
    """Output size of a text-only response in tokens (reported, else characters / :data:`CHARS_PER_TOKEN`)."""
    r = c.response
    if r is None or r.tool_calls or not r.text or not r.text.strip():
        return None
    if c.usage is not None and c.usage.output is not None:
        return c.usage.output
    return len(r.text) // CHARS_PER_TOKEN


def _int_or_none(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


@dataclass(slots=True)
class _Streak:
    """A flag whose evidence is still being updated while a condition lasts."""

    flag: Flag
    last_pos: int


# --- the analysis -------------------------------------------------------------------------------------------------

def analyze(calls: Sequence[Call], settings: Settings, *, context: str = "main", resets: Iterable[int] = (),
            system_texts: Mapping[int, str] | None = None, instruction_text: str | None = None,
            pending_compaction: Mapping[str, Any] | None = None,
            calibrations: Calibrations | None = None) -> Analysis:
    """Flags, forecast and per-call drift risk for the calls of one context.

    Args:
        calls: the run's calls in order (``Run.calls``); calls of other contexts are ignored.
        settings: thresholds (budget fraction, trigger, reserve); the window override is already applied to
            each :attr:`Call.window` by the accounting.
        context: the context to analyse (``main`` or a sidechain id).
        resets: call indexes at which the log was truncated or replaced (``Run.resets[*]["at_call"]``): the
            history starts over there.
        system_texts: system prompt texts keyed by :attr:`Call.system_key` (the content hash, so one entry per
            distinct prompt, not per call).  Needed for the format rule and the echo check; without it those
            fall back to ``instruction_text`` / the observed rule, or stay silent.  See :func:`collect_texts`.
        instruction_text: the first user message of the context, where a ``CLAUDE.md``-like preamble may state
            the format rule when the system prompt does not (or is not logged).
        pending_compaction: a compaction marker logged after the last call, whose next call has not arrived
            (``Run.pending_compactions()[context]``): the forecast restarts at once (B23), from the
            marker's ``post_tokens`` when the log gives it.
        calibrations: the run's (:meth:`ctxwatch.engine.run.Run.factors`), with which the reasons give a floor's parts
            as every surface shows them (:meth:`~ctxwatch.accounting.Calibrations.breakdown`); default: those of
            ``calls`` (:func:`~ctxwatch.accounting.calibrations_of`).

    Returns:
        The :class:`Analysis`.  Never raises for odd data.
    """
    cs = [c for c in calls if c.context == context]
    counts: dict[str, int] = {}
    for c in calls:
        counts[c.context] = counts.get(c.context, 0) + 1
    a = _analyze(cs, settings, context, set(resets), system_texts or {}, instruction_text,
                 contexts=_ContextCounts(counts),
                 calibrations=calibrations if calibrations is not None else calibrations_of(calls))
    if pending_compaction is not None:
        a.forecast = _pending_forecast(a.forecast, cs, pending_compaction)
    return a


def _pending_forecast(fc: Forecast, cs: list[Call], marker: Mapping[str, Any]) -> Forecast:
    """The forecast right after a compaction whose next call is not logged yet: nothing to project from."""
    post = _int_or_none(marker.get("post_tokens"))
    after = f"after #{cs[-1].index + 1}" if cs else "at the start"
    return Forecast(
        note=f"not enough data: compacted {after}"
             + (f" (postTokens {_n(post)})" if post is not None else "") + "; no call since",
        basis="none", occupancy_tokens=post, since_call=None, at_call=None, trigger_tokens=fc.trigger_tokens,
        budget_tokens=fc.budget_tokens, window_limit_tokens=fc.window_limit_tokens, window_tokens=fc.window_tokens)


def _analyze(cs: list[Call], st: Settings, context: str, reset_set: set[int], system_texts: Mapping[int, str],
             instruction_text: str | None, risks: bool = True, *, contexts: _ContextCounts | None = None,
             whose: str = "the log's", calibrations: Calibrations = NO_CALIBRATION) -> Analysis:
    """Split a context into streams (one per model; quota probes apart), analyse each, merge the results.
    ``risks=False`` leaves ``drift_risk`` empty (a report without per-call risk skips building them).
    ``contexts``: the calls of the log (``whose``) per context, so that the forecast's notes can say which
    calls they left out (:class:`_Scope`).  ``calibrations``: the run's, for the floor's parts in the reasons
    (:func:`_analyze_stream`)."""
    probes = [c for c in cs if c.extra.get("probe")]
    analysed = [c for c in cs if not c.extra.get("probe")]
    by_session = _sessions_interleave(analysed)
    streams: dict[tuple[str | None, str | None], list[Call]] = {}
    for c in analysed:
        streams.setdefault((c.session if by_session else None, c.model), []).append(c)
    models = {model for _, model in streams}
    sessions = {session for session, _ in streams}
    elsewhere_ctx = contexts.elsewhere(context) if contexts is not None else []

    def scope(key: tuple[str | None, str | None], calls: list[Call]) -> _Scope:
        left: list[tuple[int, str]] = []
        if len(streams) > 1:
            n = len(streams) - 1
            where = (f"on {n} other model{'s' if n != 1 else ''}" if not by_session
                     else f"in {n} other session{'s' if n != 1 else ''}" if len(models) == 1
                     else f"in {n} other session and model stream{'s' if n != 1 else ''}")
            left.append((len(analysed) - len(calls), where))
        if probes:
            left.append((len(probes), f"quota probe{'s' if len(probes) != 1 else ''} (max_tokens 1), left out"))
        session, model = key
        return _Scope(model=(model or "an unlogged model") if len(models) > 1 else None,
                      context=context if elsewhere_ctx else None, elsewhere=tuple(left + elsewhere_ctx),
                      whose=whose, session=(session or "without id") if len(sessions) > 1 else None)

    if len(streams) <= 1 and not probes:
        return _analyze_stream(cs, st, context, reset_set, system_texts, instruction_text, risks,
                               scope((None, cs[0].model if cs else None), cs), calibrations)
    results = [_analyze_stream(calls, st, context, reset_set, system_texts, instruction_text, risks,
                               scope(key, calls), calibrations)
               for key, calls in streams.items()]
    if len(results) > 1:
        for (session, model), res in zip(streams, results, strict=True):
            for f in res.flags:
                if len(models) > 1:
                    f.evidence["stream_model"] = model
                if by_session:
                    f.evidence["stream_session"] = session
    # The primary stream is one that can be forecast (enough calls, building on each other), and among those the
    # one whose latest occupancy is largest: the context at risk of overflowing.  A helper model's two calls,
    # larger than the agent's but too few to project, would otherwise hide the agent's forecast behind "not
    # enough data".  When no stream can be forecast, the largest one says why.
    primary = max(results, key=lambda a: (a.forecast.enough_data, a.forecast.occupancy_tokens or -1), default=None)
    flags = sorted((f for a in results for f in a.flags), key=lambda f: (f.call, -SEVERITY_RANK[f.severity]))
    all_risks = [r for a in results for r in a.drift_risk]
    if risks:
        all_risks += [DriftRisk(c.index, "low", "low: quota probe (max_tokens 1), not analysed") for c in probes]
    all_risks.sort(key=lambda r: r.call)
    drifts = [a.first_drift for a in results if a.first_drift is not None]
    if primary is None:
        n = len(probes)
        note = (f"none: only quota probes ({n} call{'s' if n != 1 else ''} with max_tokens 1), which are left out "
                "of the forecast") if probes else "no calls"
        return Analysis(context, flags, Forecast(note=note), all_risks)
    return Analysis(context, flags, primary.forecast, all_risks, primary.format_rule, min(drifts, default=None),
                    primary.calibration)


def _sessions_interleave(calls: Sequence[Call]) -> bool:
    """True when a session id comes back after another session's call (``A B A``): unrelated runs logging to
    one file, which must be analysed apart.  Sessions that follow one another (``A A B B``: a folder's session
    files, read one after the other) do not interleave."""
    done: set[str | None] = set()
    prev: Call | None = None
    for c in calls:
        if prev is not None and c.session != prev.session:
            if c.session in done:
                return True
            done.add(prev.session)
        prev = c
    return False


def _same_conversation(a: Call, b: Call) -> bool:
    """False when both calls log their history and it starts with different messages (separate requests that
    happen to share a context, like a helper call beside the agent); True otherwise."""
    if a.messages and b.messages:
        return a.messages[0].content_key == b.messages[0].content_key
    return True


#: Roles whose message in a request's history carries an earlier answer: the model's own turn, a tool result.
_ANSWER_ROLES = frozenset({"assistant", "tool"})


def _independent(calls: Sequence[Call], occupancies: Sequence[int]) -> bool:
    """True when ``calls`` (an episode of one stream, in order) do not build on each other, so a forecast of
    their growth means nothing: at least two calls, and

    * each logs its whole history (``history_src`` estimated: the messages are in the log, not inferred);
    * no message of any call carries an earlier answer: no assistant or tool message, no tool call or tool
      result (a conversation re-sends the model's earlier turns; a request that holds none of them cannot be
      the next turn of another);
    * no call re-sends a message of the call before it (equal content hashes): the same question asked again
      is a retry, not a fresh request;
    * the prompt shows no rising trend (:func:`_rising`, on ``occupancies``, the episode's recent plausible
      prompt sizes): an agent that pastes its transcript into one ever-longer user message, or whose prompt
      grows by content the log does not show (the reported prompt rises while each logged request holds one
      new user message), sends only user messages too, but builds on something all the same, while
      independent requests go up and down.

    This is the history-based counterpart of the batch rule (each ``custom_id`` its own conversation): what
    Claude Code's helper calls look like (claude-trace's "side" context: a title, a topic verb, the paths a
    command touched, each one user message under its own system prompt).
    """
    if len(calls) < 2:
        return False
    prev: set[int] | None = None
    for c in calls:
        if not c.messages or c.history_src != Src.ESTIMATED:
            return False
        keys: set[int] = set()
        for m in c.messages:
            if m.role in _ANSWER_ROLES or m.tool_call_ids or m.tool_result_ids:
                return False
            keys.add(m.content_key)
        if prev is not None and not keys.isdisjoint(prev):
            return False
        prev = keys
    return not _rising(occupancies)


#: Least net rise (steps up minus steps down, as a fraction of the steps) of a run of prompt sizes that builds on
#: something (:func:`_rising`).  A growing run rises at nearly every call: a flat step (a turn whose addition the
#: log does not count) or one drop (a compaction the log does not mark) leaves it at 5/7 or more over the
#: :data:`FORECAST_POINTS` = 8 points.  Unrelated sizes rise and fall like a shuffled list: over 8 points a net
#: rise of half the steps needs 6 or 7 rises out of 7, which a random order gives 248 times in 8! = 40,320
#: (0.6 %; Eulerian numbers A(8, 6) + A(8, 7)), and over 4 points 1 time in 24 (all 3 steps up).
MIN_NET_RISE = 0.5


def _rising(occupancies: Sequence[int]) -> bool:
    """True when prompt sizes (tokens, in call order) show a rising trend: ``(rises - falls) / steps`` is at
    least :data:`MIN_NET_RISE` over consecutive steps (equal sizes count neither way).

    Not the Theil-Sen slope's sign: the median of pairwise slopes of a few unrelated sizes is positive about half
    the time (claude-trace's four helper calls, 96, 226, 216, 174 tokens: +8 tokens/call, with 1 rise and 2
    falls), and "growing at every call" was too strict the other way (one flat step among seven rises hid the
    forecast of a run growing 1,000 tokens a call)."""
    steps = len(occupancies) - 1
    if steps < 1:
        return False
    net = sum((b > a) - (b < a) for a, b in itertools.pairwise(occupancies))
    return net >= MIN_NET_RISE * steps


def _analyze_stream(cs: list[Call], st: Settings, context: str, reset_set: set[int],
                    system_texts: Mapping[int, str], instruction_text: str | None, want_risks: bool = True,
                    scope: _Scope | None = None, calibrations: Calibrations = NO_CALIBRATION) -> Analysis:
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
    occs = [_occupancy(c, cal) for c in cs]
    drops, outliers = _drops_and_outliers(cs, occs, reset_set)
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
    reserve_streak: _Streak | None = None
    estimate_streak: _Streak | None = None
    echo_streak: _Streak | None = None
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
            what = (f"is {_n(reported)}, and every request has a prompt" if reported <= 0 else
                    f"exceeds the {_n(pw or MAX_PLAUSIBLE_PROMPT)}-token "
                    f"{('model window' if pw != window else 'window') if pw else 'plausible maximum'}")
            # Say what "ignored" covers: the occupancy (used %, free, peak, thresholds, forecast).  A count above
            # the window is still what the provider counted, so the token totals and the cost keep it; a
            # reported 0 is in neither (not summed, not priced), and an estimate may stand in for it.
            if occ is not None:
                how = f"ignored: the estimate ({_n(occ)} tokens) stands in"
            else:
                how = (f"ignored as occupancy (last plausible: "
                       f"{_n(lp[2]) + ' at #' + str(lp[1].index + 1) if lp else 'none'})"
                       + ("; kept in token totals and cost" if reported > 0 else ""))
            flag("implausible_usage", "warn", c,
                 f"reported prompt {_n(reported)} tokens at #{c.index + 1} {what}: implausible, {how}",
                 prompt_reported=reported, window=window,
                 last_plausible_tokens=lp[2] if lp else None, last_plausible_call=lp[1].index if lp else None)

        # -- episode boundaries --
        boundary = _reset_reason(cs, pos, reset_set)
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
                    cs[q].compaction, dict) or _reset_reason(cs, q, reset_set) is not None), n)
                ok = after_pos < n and not isinstance(cs[after_pos].compaction, dict) \
                    and _reset_reason(cs, after_pos, reset_set) is None
                after = occs[after_pos] if ok else None
            freed = before_occ - after if before_occ is not None and after is not None else None
            pre = _int_or_none(marker.get("pre_tokens")) if marker else None
            post = _int_or_none(marker.get("post_tokens")) if marker else None
            freed_pre = pre - after if pre is not None and after is not None else None
            how = "compaction marker in the log" if marker else "history shrank"
            at = f" at #{cs[after_pos].index + 1}, the first known size after it" \
                if after_pos != pos and after is not None else ""
            # ("log preTokens" only for a size the log states: Codex's is the previous call's, already "before")
            logged_pre = pre is not None and marker is not None and "pre_tokens_from" not in marker
            extra = f"; log preTokens {_n(pre)}" if logged_pre else ""
            extra += f", postTokens {_n(post)}" if post is not None else ""
            suspect = bool(marker and marker.get("trigger") == "auto" and pre is not None and window
                           and pre < AUTO_COMPACT_MIN_FRACTION * window)
            if suspect:
                extra += (f"; auto-compaction at {_pct(pre, window)} of the {_n(window)}-token window "
                          f"({c.window_src}): the effective window is probably smaller (pass --window)")
            flag("compaction", "info", c,
                 f"compaction before #{c.index + 1} ({how}): prompt {_n(before_occ)} -> {_n(after)} tokens{at} "
                 f"({_n(freed)} freed{extra})",
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
                             f"prompt {_n(occ)} + completion reserve {_n(reserve)} exceed the {_n(window)}-token "
                             f"window at #{c.index + 1} by {_n(occ - limit)} tokens "
                             + (f"(the prompt alone is {_n(occ - window)} tokens over the window: the request "
                                "cannot fit)" if alone else
                                "(the request's max tokens cannot fit: a full completion fails)" if own else
                                f"(the reserve is {c.reserve_src}: less room is left than a long completion "
                                "may need)")
                             + (f"; the logged request is that big (estimate {_n(c.prompt_estimated)}), so the "
                                f"{c.window_src} window is probably too small (pass --window)" if confirmed else ""),
                             prompt_tokens=occ, reserve_tokens=reserve, reserve_source=str(c.reserve_src),
                             window=window, free_tokens=limit - occ, calls=1, window_suspect=confirmed)
                    reserve_streak = _Streak(f, pos)
                else:
                    reserve_streak.flag.evidence["calls"] += 1
            else:
                reserve_streak = None
            if budget is not None and occ > budget:
                if ep_over is None:
                    # (the budget is the smaller of budget_fraction x window and window - reserve: say which)
                    basis = (f"{st.budget_fraction:g} of the {_n(window)}-token window"
                             if not window or budget >= int(window * st.budget_fraction) else
                             f"the {_n(window)}-token window minus the completion reserve {_n(reserve)}, less than "
                             f"{st.budget_fraction:g} of the window")
                    ep_over = flag("over_budget", "warn", c,
                                   f"prompt {_n(occ)} tokens at #{c.index + 1} is over the budget {_n(budget)} "
                                   f"({basis})",
                                   prompt_tokens=occ, budget_tokens=budget, window=window,
                                   budget_fraction=st.budget_fraction, calls_over_budget=0, max_prompt_tokens=occ)
                ep_over.evidence["calls_over_budget"] += 1
                ep_over.evidence["max_prompt_tokens"] = max(ep_over.evidence["max_prompt_tokens"], occ)
            if trig is not None and occ >= trig and ep_cross is None and not ep_crossed:
                ep_cross = Flag("trigger_no_compaction", "warn", c.index,
                                f"prompt {_n(occ)} tokens at #{c.index + 1} crossed the compaction trigger "
                                f"{_n(trig)} ({st.trigger:g} of the budget)",
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
                             f"next call after #{c.index + 1} forecast at ~{_n(occ + slope_here)} tokens, above "
                             f"the window minus reserve {_n(limit)} (growing ~{_n(slope_here)} tokens/call)",
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
                    and _same_conversation(prev_sys_call, c)):
                before_b, after_b = calibrations.breakdown(prev_sys_call), calibrations.breakdown(c)
                cal_note = ", calibrated" if before_b.calibrated or after_b.calibrated else ""
                flag("system_prompt_changed", "warn", c,
                     f"system prompt of #{c.index + 1} differs from #{prev_sys_call.index + 1}'s "
                     f"({_n(before_b.system_tokens)} -> {_n(after_b.system_tokens)} tokens{cal_note}): prompt-cache "
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
                     f"tool schemas grew by {_n(shown_added)} tokens{cal_note} at #{c.index + 1}{names}: added to "
                     f"every later call ({_n(shown_added * later)} tokens over the {later} "
                     f"call{'s' if later != 1 else ''} logged so far) and the cache prefix is invalidated",
                     previous_call=prev_tools[2].index, tools_tokens_before=prev_tools[1],
                     tools_tokens_after=c.tools_tokens, tokens_added=added, tools_added=new_names,
                     calls_affected=later, tokens_added_total=added * later)
            prev_tools = (c.tools_key, c.tools_tokens, c)

        # -- estimate vs reported --
        e = c.prompt_estimated
        # a call without a comparison (no reported prompt or estimate) neither extends nor ends a streak
        if occ is not None and reported and e:
            cmp = _estimate_check(c, reported, e, cal, len(ratios), rejected)
            if cmp is not None:
                diff, tol_desc, what, meaning = cmp
                if estimate_streak is None:
                    c_cal = 1.0 if c.exact else cal
                    f = flag("estimate_disagrees", "info", c,
                             f"{what} differs from the reported prompt {_n(reported)} by {100 * diff:.0f}% at "
                             f"#{c.index + 1}{tol_desc}: {meaning}",
                             prompt_reported=reported, prompt_estimated=e,
                             calibration=round(c_cal, 4) if c_cal else None,
                             calibrated_estimate=round(e * c_cal) if c_cal else None, difference=round(diff, 4),
                             raw_difference=round(abs(reported - e) / reported, 4), calls=0,
                             max_difference=round(diff, 4), max_call=c.index)
                    estimate_streak = _Streak(f, pos)
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
        chk, echo_words = _response_features(text, rule, sys_text)
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
                    assert rule is not None  # _response_features checks only against a rule
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
                echo_streak = _Streak(f, pos)
            echo_streak.flag.evidence["calls"] += 1
            echo_streak.flag.evidence["max_words"] = max(echo_streak.flag.evidence["max_words"], echo_words)
        elif text:
            echo_streak = None

        # -- response length collapse --
        out = _output_tokens(c)
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
                             f"responses shrank to a median {_n(med)} tokens by #{c.index + 1} (baseline "
                             f"{_n(base_out)}) while the prompt grew from {_n(base_occ)} to {_n(occ)} tokens",
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
                risks.append(_risk(c, r_occ, c.prompt_implausible, r_win, r_limit, r_trig, r_budget, None,
                                   evicted_since, chk, echo_words, drift is not None, stand_in=ref))
            else:
                risks.append(_risk(c, occ, c.prompt_implausible, window, limit, trig, budget, slope_here,
                                   evicted_since, chk, echo_words, drift is not None))

    end_episode("end of log")

    # finalise evidence that accumulated over the run
    for f in flags:
        if f.kind == "format_drift":
            ev = f.evidence
            first = ev.pop("_first", "")
            f.severity = "warn" if ev["drifting_responses"] >= DRIFT_CONFIRM else "info"
            rule_j = ev["rule"]
            occ_txt = (f"prompt {_n(ev['occupancy_tokens'])} tokens"
                       + (f" = {_pct(ev['occupancy_tokens'], ev['window'])} of window" if ev["window"] else ""))
            worst = (f"; worst: {ev['worst_kind'].replace('_', ' ')} at #{ev['worst_call'] + 1}"
                     if ev["worst_call"] != ev["first_call"] else "")
            sysp = "; system prompt absent" if ev["system_present"] is False else ""
            f.reason = (f"responses drift from #{f.call + 1}: {first} (score {ev['first_score']:g}), "
                        f"{ev['drifting_responses']} drifting{worst}; rule: {rule_j['description']}; at {occ_txt}"
                        f"{sysp}")
    flags.sort(key=lambda f: (f.call, -SEVERITY_RANK[f.severity]))
    forecast = _forecast(cs, st, list(points), list(times), ep_start, last_plaus, scope or _Scope())
    return Analysis(context, flags, forecast, risks, rule_in_force, first_drift, cal)


_FEATURES: dict[tuple[str, FormatRule | None, str | None], tuple[FormatCheck | None, int]] = {}


def _response_features(text: str | None, rule: FormatRule | None, sys_text: str | None
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


def _estimate_check(c: Call, reported: int, e: int, cal: float | None, n_ratios: int,
                    rejected: float | None = None) -> tuple[float, str, str, str] | None:
    """Whether call ``c``'s estimate ``e`` disagrees with its reported prompt ``reported`` (tokens): ``None``
    when it agrees, else ``(difference as a fraction of the report, the tolerance said in the reason, what
    was compared, what it means)``.

    The model's own tokenizer is compared as it is, within :data:`ESTIMATE_TOLERANCE`.  Another tokenizer's
    estimate is scaled by the stream's calibration ``cal`` (the median reported/estimated ratio of its
    ``n_ratios`` calls) and compared within :data:`ESTIMATE_TOLERANCE` as well, but a call whose raw estimate
    is itself within that tolerance is not blamed: its log shows what was sent, and what sets it apart is the
    calibration (the other calls' content, or the median of a few calls).  Without a calibration (fewer than
    :data:`~ctxwatch.accounting.MIN_CALIBRATION_CALLS` calls) the raw estimate is compared within
    :data:`ESTIMATE_WARN`, the most that tokenizers differ by: only a gap beyond that says the log and the
    request differ.  So it is when the median ratio ``rejected`` of enough calls is no tokenizer gap
    (:func:`~ctxwatch.accounting.plausible_calibration`), and the reason says so.  Under
    :data:`ESTIMATE_MIN_TOKENS` nothing disagrees.  The meaning follows the numbers:
    where the calibrated estimate and the raw one lie on two sides of the report, the reason says so.
    """
    def off(x: float, tol: float) -> bool:
        return abs(reported - x) / reported > tol and abs(reported - x) >= ESTIMATE_MIN_TOKENS

    if c.exact or cal is None:
        tol = ESTIMATE_TOLERANCE if c.exact else ESTIMATE_WARN
        if not off(e, tol):
            return None
        if c.exact:
            what, tol_desc = f"estimate {_n(e)} (the model's own tokenizer)", ""
        else:
            calls = f"{n_ratios} call{'s' if n_ratios != 1 else ''}"
            why = (f"the median reported/estimated ratio of its {calls}, {rejected:,.3f}, is more than tokenizers "
                   f"differ by (1/{MAX_CALIBRATION:g} to {MAX_CALIBRATION:g})" if rejected is not None else
                   f"{calls} with a reported and an estimated prompt, {MIN_CALIBRATION_CALLS} needed")
            # (the model's own tokenizer, inexact because of an image or a text cut to be counted, is not called
            # another tokenizer)
            whose = ("the model's tokenizer, with images or a cut text estimated"
                     if own_tokenizer(c.model, c.provider, c.tokenizer) else "not the model's tokenizer")
            what = f"estimate {_n(e)} ({c.tokenizer}, {whose}, uncalibrated: {why})"
            tol_desc = f", more than tokenizers differ ({100 * ESTIMATE_WARN:.0f}%)"
        est = float(e)
    else:
        est = e * cal
        if not off(est, ESTIMATE_TOLERANCE) or not off(e, ESTIMATE_TOLERANCE):
            return None
        what, tol_desc = f"calibrated estimate {_n(est)} ({_n(e)} x calibration {cal:.3f})", ""
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


def _occupancy(c: Call, cal: float | None) -> int | None:
    """The plausible prompt size of a call in tokens (see the module docstring), ``None`` if unknown/implausible."""
    reported = c.prompt_reported
    if reported is not None and reported > 0:
        return None if c.report_implausible else reported
    if reported is not None:
        # A reported 0 is no size: what stands in for it is the table's (Call.prompt_tokens: the raw estimate,
        # else floor + history), so that the implausible_usage flag, free and used % name one number (the flag
        # said the calibrated estimate, 541, beside a free of window - reserve - 451).
        return c.prompt_tokens
    # (no report at all: the estimate, calibrated to what the provider would count)
    if c.prompt_estimated is not None:
        return round(c.prompt_estimated * cal) if cal else c.prompt_estimated
    if c.prompt_tokens is not None:
        return c.prompt_tokens
    if isinstance(c.compaction, dict):
        return _int_or_none(c.compaction.get("post_tokens"))
    return None


def _reset_reason(cs: list[Call], pos: int, reset_set: set[int]) -> str | None:
    """Why the history starts over at ``cs[pos]`` (file reset, new session), or ``None``."""
    if pos == 0:
        return None
    c, prev = cs[pos], cs[pos - 1]
    if c.index in reset_set:
        return f"file reset before #{c.index + 1}"
    if c.session and prev.session and c.session != prev.session:
        return f"new session at #{c.index + 1}"
    if c.extra.get("history_cut") and c.source.path != prev.source.path:
        # The next file starts mid-session (an excerpt, a slice of a longer log): whatever lies between the
        # two is not in the logs, so growth measured across the gap says nothing.
        return f"log resumes mid-session at #{c.index + 1}"
    if separate_requests(prev, c):
        # Batch requests are independent: each one is its own conversation, not the next turn of the last.
        if own_request(c) == "batch request":
            return f"separate batch request at #{c.index + 1}"
        return f"separate request (its own custom_id) at #{c.index + 1}"
    return None


def _shrinks(a: Call, a_occ: int, b: Call, b_occ: int) -> bool:
    """True when ``b`` holds sharply less than ``a``: by :data:`COMPACTION_DROP_FRACTION` and
    :data:`COMPACTION_MIN_TOKENS`, measured on the history when both calls know it, else on the prompt.

    A history that shrank inside a prompt that did not is no compaction (nothing was freed): the floor
    changed, or one of the two histories is only the visible part of a log that starts mid-session."""
    if a.history_tokens is not None and b.history_tokens is not None:
        if b_occ >= a_occ:
            return False
        before, after = a.history_tokens, b.history_tokens
    else:
        before, after = a_occ, b_occ
    shrink = before - after
    return shrink >= COMPACTION_MIN_TOKENS and shrink >= COMPACTION_DROP_FRACTION * before


#: A call is "back" after a one-call dip when it holds at least this fraction of the level before the dip.
#: History only grows between compactions, so after a real dip (a retry or side call with a short prompt)
#: the next call is at or above the earlier level; 5 % absorbs estimate noise.  A compaction followed by
#: fast growth stays below it.
DIP_RETURN_FRACTION = 0.95


def _back(a: Call, a_occ: int, b: Call, b_occ: int) -> bool:
    """True when ``b`` is back at ``a``'s level (see :data:`DIP_RETURN_FRACTION`), on history when known."""
    if a.history_tokens is not None and b.history_tokens is not None:
        return b.history_tokens >= DIP_RETURN_FRACTION * a.history_tokens
    return b_occ >= DIP_RETURN_FRACTION * a_occ


def _drops_and_outliers(cs: list[Call], occs: list[int | None], reset_set: set[int]) -> tuple[set[int], set[int]]:
    """Positions where the history shrank sharply (compactions without a marker), and one-call outliers.

    A sharp drop at ``p`` (against the last representative call ``q``) is **not** a compaction when the prompt
    is back the next call (``p`` was a one-call dip: a retry or side request with a short prompt), or when ``p``
    is back at the level before ``q`` (``q`` was a one-call spike).  Outliers are left out of the forecast; they
    still count for the thresholds of their own call.  Drops across a file reset or a session change are
    resets, not compactions.  A drop on the last call is taken as a compaction (no next call to say otherwise).
    """
    known = [p for p, o in enumerate(occs) if o is not None]
    drops: set[int] = set()
    outliers: set[int] = set()
    base: list[int] = []  # representative positions so far
    for k, p in enumerate(known):
        # (a marker or a reset on a call of unknown occupancy since the last known one, e.g. an implausible first
        # call after a compaction, B13, explains this call's drop: it is that compaction, not another one)
        since = known[k - 1] + 1 if k else 0
        if not base or any(isinstance(cs[i].compaction, dict) or _reset_reason(cs, i, reset_set) is not None
                           for i in range(since, p + 1)):
            base.append(p)
            continue
        q = base[-1]
        o = occs
        if not _shrinks(cs[q], o[q] or 0, cs[p], o[p] or 0):
            base.append(p)
            continue
        r = known[k + 1] if k + 1 < len(known) else None
        if r is not None and _back(cs[q], o[q] or 0, cs[r], o[r] or 0):
            outliers.add(p)  # a dip: the next call is back at the level before it
            continue
        if len(base) >= 2 and _back(cs[base[-2]], o[base[-2]] or 0, cs[p], o[p] or 0):
            outliers.add(q)  # q was a spike: p is back where the run was before it
            base[-1] = p
            continue
        drops.add(p)
        base.append(p)
    return drops, outliers


def _risk(c: Call, occ: int | None, implausible: bool, window: int | None, limit: int | None, trig: int | None,
          budget: int | None, slope: float | None, evicted_since: Call | None, chk: Any, echo_words: int,
          drifting: bool, stand_in: Call | None = None) -> DriftRisk:
    """The drift-risk level of one call: the strongest signal wins; the reason names it and the headroom.

    ``occ`` (tokens) is the call's own occupancy, or with ``stand_in`` that call's (the last plausible one,
    when this call's is unknown or ``implausible``), measured against ``stand_in``'s ``window`` and thresholds
    (tokens); the reason then names ``stand_in``, and the risk's ``occupancy`` stays ``None``."""
    cands: list[tuple[int, str]] = []  # (level rank, text)
    if evicted_since is not None:
        cands.append((3, f"system prompt absent since #{evicted_since.index + 1}"))
    if occ is not None and limit is not None:
        if occ > limit:
            cands.append((3, "prompt + reserve exceed the window"))
        elif slope is not None and slope > 0:
            k = _calls_to(occ, limit, slope)
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
    if occ is not None and trig is not None and budget is not None and trig <= occ <= budget:
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
        head = f"{what} {_n(occ)}{at} = {_pct(occ, window)} of {of}"
        if budget:
            head += f", {_pct(occ, budget)} of budget"
    elif occ is not None:
        head = f"{what} {_n(occ)} tokens{at}, window unknown"
    else:
        head = "occupancy unknown"
    level = max((lv for lv, _ in cands), default=0)
    top = [t for lv, t in cands if lv == level][:2]
    reason = f"{RISK_LEVELS[level]}: {'; '.join(top)} ({head})" if top else f"low: no drift signal ({head})"
    own = stand_in is None and not implausible
    return DriftRisk(c.index, RISK_LEVELS[level], reason, chk.score if chk is not None else None,
                     chk.kind if chk is not None else None, occ if own else None,
                     occ / window if occ is not None and window and own else None)


def _forecast(cs: list[Call], st: Settings, points: list[tuple[int, int]], times: list[float], ep_start: int,
              last_plaus: tuple[int, Call, int] | None, scope: _Scope) -> Forecast:
    """The forecast from the current episode's points (see :class:`Forecast`); its notes name the calls
    counted (``scope``: a context, a model) when they are not all of the log's."""
    if not cs:
        return Forecast(note="no calls")
    last = cs[-1]
    # The thresholds are those of the call the forecast starts from (the last plausible one of the episode):
    # its window with its own reserve.  The last call's reserve could belong to another window (an implausible
    # record that states one, B13: 15 % of 570,000 taken from a 272,000-token window).
    ref = last_plaus[1] if last_plaus is not None and last_plaus[0] >= ep_start and last_plaus[1].window else last
    window = ref.window
    reserve = ref.reserve_tokens if ref.reserve_tokens is not None else (
        st.reserve_tokens(window) if window else None)
    fc = Forecast(since_call=cs[ep_start].index, window_tokens=window, note=None)
    if window:
        fc.trigger_tokens, fc.budget_tokens = st.trigger_tokens(window, reserve), st.budget_tokens(window, reserve)
        fc.window_limit_tokens = window - reserve if reserve is not None else window
    label = scope.label()
    start = cs[ep_start].index + 1
    # (the stream's first call is the log's only when it is #1: a context or model may start later)
    since = ("the start of the log" if start == 1 else
             f"its first call, #{start}" if ep_start == 0 and label else f"#{start}")
    if last_plaus is not None:
        fc.at_call, fc.occupancy_tokens = last_plaus[1].index, last_plaus[2]
    if (own := own_request(last)) is not None:
        # Batch requests are separate conversations (each its own episode): nothing grows from one to the next.
        # (A custom_id outside a batch file, as in the saved Gemini sample, marks separate requests all the same.)
        what = "batch requests" if own == "batch request" else "requests with their own custom_id"
        fc.note = f"none: {what} are independent conversations, nothing grows from one to the next"
        fc.basis = "none"
        return fc
    episode = cs[ep_start:]
    if _independent(episode, [occ for _, occ in points]):
        fc.note = (f"none: the {len(episode):,} calls{label}{'' if ep_start == 0 else ' since ' + since} are "
                   "independent requests (each sends only new user messages: no earlier answer, nothing of the call "
                   "before it), nothing grows from one to the next")
        fc.basis = "none"
        return fc
    if len(points) < MIN_FORECAST_CALLS:
        # (an implausible report is a call with a reported size that is not counted here: say why)
        odd = sum(c.prompt_implausible for c in cs[ep_start:])
        fc.note = (f"not enough data: {len(points)} call{'s' if len(points) != 1 else ''}{label} with a known prompt "
                   f"size since {since} (need {MIN_FORECAST_CALLS}"
                   + (f"; {odd} implausible report{'s' if odd != 1 else ''} left out" if odd else "")
                   + f"{scope.left_out()})")
        fc.basis = "none"
        return fc
    fc.enough_data = True
    slope = theil_sen(points)
    fc.slope_tokens_per_call = slope
    first, lastp = cs[points[0][0]].index, cs[points[-1][0]].index
    fc.basis = (f"Theil-Sen slope over the last {len(points)} calls{label} (#{first + 1}–#{lastp + 1}) "
                f"since {since}")
    gaps = [b - a for a, b in itertools.pairwise(times) if b > a]
    fc.seconds_per_call = statistics.median(gaps) if gaps else None
    occ = points[-1][1]
    # (a context with calls on several models is forecast on one of them: the text names it, as the basis does)
    notes = [f"calls on {scope.model}{scope.left_out()}"] if scope.model is not None else []
    if not window:
        notes.append("window unknown (pass --window)")
    if slope is None or slope <= 0:
        notes.append(f"prompt not growing ({_n(slope)} tokens/call)")
    if fc.seconds_per_call is None:
        # (calls that all share one timestamp give no time between calls either, but they have timestamps)
        notes.append("no time between the calls: they share one timestamp" if len(times) > 1 else "no timestamps")
    for name, thr in (("trigger", fc.trigger_tokens), ("budget", fc.budget_tokens),
                      ("window", fc.window_limit_tokens)):
        k = _calls_to(occ, thr, slope)
        secs = k * fc.seconds_per_call if k is not None and fc.seconds_per_call is not None else None
        setattr(fc, f"calls_to_{name}", k)
        setattr(fc, f"seconds_to_{name}", secs)
    fc.note = "; ".join(notes) or None
    return fc


# --- whole runs -----------------------------------------------------------------------------------------------------

def collect_texts(run: Run, context: str = "main", *, max_texts: int = MAX_SYSTEM_TEXTS
                  ) -> tuple[dict[int, str], str | None]:
    """Re-read the system prompts and the first user message of one context from disk.

    Args:
        run: the run (its calls hold hashes, not text).
        context: the context.
        max_texts: most distinct system prompts re-read (the first ones seen).

    Returns:
        ``({system_key: text}, first user message text or None)``.  One disk read per distinct system prompt
        plus one for the first call; failures (file changed, reader error) just leave entries out.
    """
    from ctxwatch.engine import reload_call

    first: Call | None = None
    want: dict[int, int] = {}
    for c in run.calls:
        if c.context != context:
            continue
        if first is None:
            first = c
        if c.system_key is not None and c.system_key not in want and len(want) < max_texts:
            want[c.system_key] = c.index
    texts: dict[int, str] = {}
    instruction: str | None = None
    if first is None:
        return texts, None
    todo = dict.fromkeys(want.values())
    todo.setdefault(first.index)
    for idx in todo:
        try:
            pc = reload_call(run, idx)
        except Exception:  # a reader bug or a changed file must not stop the analysis
            pc = None
        if pc is None:
            continue
        key = run.calls[idx].system_key
        if pc.system and key is not None:
            texts[key] = "\n".join(pc.system)
        if idx == first.index and pc.messages:
            for m in pc.messages:
                if m.role == "user":
                    instruction = m.text()[:INSTRUCTION_MAX_CHARS]
                    break
    return texts, instruction


def analyze_run(run: Run, *, texts: bool = True,
                text_cache: dict[str, tuple[dict[int, str], str | None]] | None = None,
                risks: bool = True) -> dict[str, Analysis]:
    """One :class:`Analysis` per context of ``run`` (``main`` first), with the run's resets and the reader's
    pending compactions (a boundary whose next call has not arrived restarts the forecast at once).

    Args:
        run: the run.
        texts: re-read system prompts / the first user message for the format rule and the echo check
            (:func:`collect_texts`); ``False`` keeps it to the call summaries (no disk reads).
        text_cache: a dict the caller keeps between calls (one per run): ``context -> (system texts, first user
            message)``.  Texts are re-read only when a context shows a system prompt not in its entry, so a live
            dashboard reads each system prompt once.
        risks: build each call's :class:`DriftRisk` (``False``: ``drift_risk`` stays empty, for reports that
            do not print them).
    """
    resets = {int(at) for r in run.resets if isinstance(at := r.get("at_call"), int)}
    try:
        pending = run.pending_compactions()
    except Exception:  # a reader without the hook, or a reader bug: no pending compaction
        pending = {}
    by_ctx: dict[str, list[Call]] = {}
    for c in run.calls:
        by_ctx.setdefault(c.context, []).append(c)
    out: dict[str, Analysis] = {}
    counts = _ContextCounts({ctx: len(by_ctx.get(ctx, [])) for ctx in run.contexts()})
    factors = run.factors()  # (the floor's parts in the reasons, as report and the dashboard show them)
    for ctx in run.contexts():
        calls = by_ctx.get(ctx, [])
        # re-read text only where it can matter: the main context, and contexts whose system prompt is logged
        # (a Claude Code sidechain re-read would scan the file from its start for nothing)
        keys = {c.system_key for c in calls if c.system_key is not None}
        want = texts and (ctx == "main" or bool(keys))
        sys_texts: dict[int, str] = {}
        instr: str | None = None
        if want:
            cached = text_cache.get(ctx) if text_cache is not None else None
            if cached is not None and (keys <= cached[0].keys() or len(cached[0]) >= MAX_SYSTEM_TEXTS):
                sys_texts, instr = cached
            else:
                sys_texts, instr = collect_texts(run, ctx)
                if text_cache is not None:
                    text_cache[ctx] = (sys_texts, instr)
        out[ctx] = a = _analyze(calls, run.settings, ctx, resets, sys_texts, instr, risks, contexts=counts,
                                calibrations=factors)
        marker = pending.get(ctx) or (pending.get("") if ctx == "main" else None)
        if marker is not None:
            a.forecast = _pending_forecast(a.forecast, calls, marker)
    return out


def _newest_session_forecast(run: Run, main: Analysis | None) -> dict[str, Any]:
    """The forecast object of ``report --json``: the context's own, or, when its calls come from several
    sessions (a folder of sessions), the newest session's, analysed on its own calls and named by a
    ``session`` key and a ``session <id>:`` prefix of its text.  Newest is by the last call's timestamp, as
    ``report`` orders its sessions; sessions without timestamps rank below those with, and among equals the
    one read last (files are read oldest-modified first) is newest."""
    if main is None:
        return Forecast().to_json()
    ctx = main.context
    rank = session_ranks(run.calls, ctx)
    if len(rank) < 2:
        return main.forecast.to_json()
    newest = max(rank, key=lambda s: rank[s])
    resets = {int(at) for r in run.resets if isinstance(at := r.get("at_call"), int)}
    calls = [c for c in run.calls if c.context == ctx and c.session == newest]
    if all(c.timestamp is not None for c in calls):
        # (a session split over files, excerpts of one transcript, is read in file order: its end is its
        # latest call, wherever that was read)
        calls.sort(key=lambda c: (c.timestamp, c.index))
    counts: dict[str, int] = {}
    for c in run.calls:
        if c.session == newest:
            counts[c.context] = counts.get(c.context, 0) + 1
    forecast = _analyze(calls, run.settings, ctx, resets, {}, None, risks=False, contexts=_ContextCounts(counts),
                        whose="the session's").forecast
    try:
        marker = run.pending_compactions().get(ctx)
    except Exception:  # (as in analyze_run: a reader bug leaves no pending compaction)
        marker = None
    last = next((c for c in reversed(run.calls) if c.context == ctx), None)
    # (a marker names its session when the reader knows it; else it belongs to the last file read)
    if marker is not None and (marker.get("session") == newest
                               or ("session" not in marker and last is not None and last.session == newest)):
        forecast = _pending_forecast(forecast, calls, marker)
    doc = forecast.to_json()
    doc["session"] = newest
    doc["text"] = f"session {newest}: {doc['text']}"
    return doc


def analysis_json(run: Run, *, texts: bool = True, per_call: bool = False) -> dict[str, Any]:
    """The ``flags`` and ``forecast`` keys of ``report --json`` / ``check --json``.

    Args:
        run: the run.
        texts: see :func:`analyze_run`.
        per_call: also return ``drift_risk`` (one object per call, every context) and ``format_rule``.

    Returns:
        ``{"flags": [flag objects of every context, in call order], "forecast": {...}}`` where the forecast is
        the ``main`` context's (else the first context's); of its newest session when it has several.  Flag
        objects: ``kind``, ``severity``, ``call`` (index as in ``report --json``), ``reason``, ``evidence``,
        ``context``.
    """
    res = analyze_run(run, texts=texts, risks=per_call)
    flags = sorted((f for a in res.values() for f in a.flags), key=lambda f: (f.call, -SEVERITY_RANK[f.severity]))
    main = res.get("main") or next(iter(res.values()), None)
    doc: dict[str, Any] = {"flags": [f.to_json() for f in flags],
                           "forecast": _newest_session_forecast(run, main)}
    if per_call:
        risks = sorted((r for a in res.values() for r in a.drift_risk), key=lambda r: r.call)
        doc["drift_risk"] = [r.to_json() for r in risks]
        doc["format_rule"] = main.format_rule.to_json() if main and main.format_rule else None
    return doc
