"""Response checks: ``format_drift``, ``system_prompt_echo`` and ``response_collapse``, from the features of each
response (its format score against the rule in force, the system-prompt words it repeats, its size).

The features are cached by response text, so recomputing after each new call costs a lookup per old response.
"""

from __future__ import annotations

import statistics
from collections import deque
from collections.abc import Mapping, Sequence

from ctxwatch.analysis.drift import (
    ECHO_MIN_WORDS,
    OBSERVED_BASELINE,
    FormatCheck,
    FormatRule,
    check_format,
    echo_index,
    infer_rule,
    observed_rule,
)
from ctxwatch.analysis.flags import Flag, FlagSink, num, pct
from ctxwatch.model import Call

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


_FEATURES: dict[tuple[str, int, str | None], tuple[FormatRule | None, FormatCheck | None, int]] = {}


def response_features(text: str | None, rule: FormatRule | None, sys_text: str | None
                      ) -> tuple[FormatCheck | None, int]:
    """``(format check, echoed words)`` of one response text against ``rule`` and the system text ``sys_text``:
    ``(None, 0)`` without a text; the check is ``None`` without a rule, the words 0 without a system text.

    Cached by ``(text, the rule object, system text)`` (string hashes are cached by Python, and a rule is taken
    by identity, kept with its entry: hashing a rule's fields for every call cost more than the lookup), so a hit
    is one dict lookup; the cache is cleared when it holds :data:`FEATURE_CACHE_SIZE` entries.
    """
    if not text:
        return None, 0
    key = (text, id(rule), sys_text)
    got = _FEATURES.get(key)
    if got is None:  # (an entry holds its rule: no other rule can take that address while it lives)
        chk = check_format(text, rule) if rule is not None else None
        echo = echo_index(sys_text).longest_run(text) if sys_text else 0
        if len(_FEATURES) >= FEATURE_CACHE_SIZE:
            _FEATURES.clear()
        got = _FEATURES[key] = (rule, chk, echo)
    return got[1], got[2]


class Rules:
    """Which format rule each response is judged against, and its features against it.

    The system prompt's rule (from ``system_texts``, keyed by :attr:`Call.system_key`), else the first user
    message's (``instruction_text``; judged only once a response has followed it), else the one observed in the
    first :data:`~ctxwatch.analysis.drift.OBSERVED_BASELINE` responses of ``cs``.  ``in_force``: the rule of
    the call last stepped.
    """

    def __init__(self, cs: Sequence[Call], system_texts: Mapping[int, str], instruction_text: str | None) -> None:
        first_texts: list[str] = []
        for c in cs:
            txt = c.response.text if c.response is not None else None
            if len(first_texts) < OBSERVED_BASELINE and txt and txt.strip():
                first_texts.append(txt)
        self.system_texts = system_texts
        self.observed = observed_rule(first_texts)
        self.instruction = infer_rule(instruction_text[:INSTRUCTION_MAX_CHARS], "first user message", strict=True) \
            if instruction_text else None
        self.armed = False  # a rule from the first user message is judged only once a response has followed it
        self.by_key: dict[int, FormatRule | None] = {}
        self.system_rule: FormatRule | None = None
        self.system_text: str | None = None
        self.in_force: FormatRule | None = None

    def step(self, c: Call) -> tuple[FormatRule | None, FormatCheck | None, int]:
        """``(rule, format check, echoed words)`` of call ``c``'s response: the check is ``None`` without a rule,
        a response text, or while a first-user-message rule is not followed yet; echoed words (of the system
        prompt last seen, :func:`response_features`) are 0 without a text."""
        key = c.system_key
        if key is not None and key in self.system_texts:
            if key not in self.by_key:
                self.by_key[key] = infer_rule(self.system_texts[key], "system prompt")
            self.system_rule = self.by_key[key]
            self.system_text = self.system_texts[key]
        rule = self.system_rule or self.instruction or self.observed
        self.in_force = rule
        text = c.response.text if c.response is not None else None
        chk, echo_words = response_features(text, rule, self.system_text)
        if chk is not None and rule is self.instruction and not self.armed:
            self.armed = chk.score == 0
            if not self.armed:
                chk = None
        return rule, chk, echo_words


class FormatDrift:
    """The ``format_drift`` check: one flag per drift episode (from the first response off the rule until
    :data:`DRIFT_RECOVERY` clean ones in a row), ``warn`` once it has :data:`DRIFT_CONFIRM` drifting responses.

    ``open``: the flag of the episode in progress; ``first_drift``: index of the first call whose response
    drifted.
    """

    def __init__(self, out: FlagSink) -> None:
        self.out = out
        self.open: Flag | None = None
        self.clean = 0  # clean responses in a row since the last drifting one
        self.first_drift: int | None = None
        self.raised: list[tuple[Flag, str]] = []  # (flag, its first response described)

    def step(self, c: Call, occ: int | None, rule: FormatRule | None, chk: FormatCheck | None) -> None:
        """Take call ``c`` (occupancy ``occ``) and the check of its response against ``rule``."""
        if chk is None:
            return
        if chk.score > 0:
            self.clean = 0
            if self.open is None:
                if self.first_drift is None:
                    self.first_drift = c.index
                assert rule is not None  # response_features checks only against a rule
                window = c.window
                self.open = self.out.add(
                    "format_drift", "info", c, "", rule=rule.to_json(), first_call=c.index,
                    first_score=chk.score, first_kind=chk.kind, worst_score=chk.score,
                    worst_call=c.index, worst_kind=chk.kind, drifting_responses=0, kinds={},
                    occupancy_tokens=occ, window=window,
                    used_fraction=round(occ / window, 4) if occ is not None and window else None,
                    system_present=c.system_present, recovered_at=None)
                self.raised.append((self.open, chk.describe()))
            ev = self.open.evidence
            ev["drifting_responses"] += 1
            ev["kinds"][chk.kind] = ev["kinds"].get(chk.kind, 0) + 1
            if chk.score > ev["worst_score"]:
                ev["worst_score"], ev["worst_call"], ev["worst_kind"] = chk.score, c.index, chk.kind
        elif self.open is not None:
            self.clean += 1
            if self.clean >= DRIFT_RECOVERY:
                self.open.evidence["recovered_at"] = c.index
                self.open, self.clean = None, 0

    def finish(self) -> None:
        """Give each flag its severity and reason, from the evidence gathered over the run."""
        for f, first in self.raised:
            ev = f.evidence
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


class Echo:
    """The ``system_prompt_echo`` check: one flag per run of responses that copy at least
    :data:`~ctxwatch.analysis.drift.ECHO_MIN_WORDS` consecutive words of the system prompt."""

    def __init__(self, out: FlagSink) -> None:
        self.out = out
        self.streak: Flag | None = None

    def step(self, c: Call, echo_words: int) -> None:
        """Take call ``c`` and the longest run of system-prompt words its response repeats."""
        if echo_words >= ECHO_MIN_WORDS:
            if self.streak is None:
                self.streak = self.out.add("system_prompt_echo", "warn", c,
                                           f"response of #{c.index + 1} repeats {echo_words} consecutive words of "
                                           "the system prompt verbatim",
                                           words=echo_words, calls=0, max_words=echo_words)
            self.streak.evidence["calls"] += 1
            self.streak.evidence["max_words"] = max(self.streak.evidence["max_words"], echo_words)
        elif c.response is not None and c.response.text:
            self.streak = None


class Collapse:
    """The ``response_collapse`` check: text responses shrinking to under :data:`COLLAPSE_RATIO` of their
    baseline while the prompt grows; re-armed once they are back to :data:`COLLAPSE_REARM` of it."""

    def __init__(self, out: FlagSink) -> None:
        self.out = out
        self.base: list[tuple[int, int | None]] = []  # (output tokens, occupancy) of the first text-only responses
        self.recent: deque[int] = deque(maxlen=COLLAPSE_WINDOW)
        self.base_out: float | None = None
        self.base_occ: float | None = None
        self.armed = True

    def step(self, c: Call, occ: int | None) -> None:
        """Take call ``c`` (occupancy ``occ``)."""
        out = output_tokens(c)
        if out is None:
            return
        if len(self.base) < COLLAPSE_BASELINE:
            self.base.append((out, occ))
            if len(self.base) == COLLAPSE_BASELINE:
                self.base_out = statistics.median(o for o, _ in self.base)
                b_occs = [o for _, o in self.base if o is not None]
                self.base_occ = statistics.median(b_occs) if b_occs else None
            return
        self.recent.append(out)
        base_out, base_occ = self.base_out, self.base_occ
        if base_out is None or base_out < COLLAPSE_MIN_BASELINE_TOKENS or len(self.recent) != COLLAPSE_WINDOW:
            return
        med = statistics.median(self.recent)
        if self.armed and med < COLLAPSE_RATIO * base_out and occ is not None and base_occ \
                and occ >= COLLAPSE_PROMPT_GROWTH * base_occ:
            self.armed = False
            self.out.add("response_collapse", "warn", c,
                         f"responses shrank to a median {num(med)} tokens by #{c.index + 1} (baseline "
                         f"{num(base_out)}) while the prompt grew from {num(base_occ)} to {num(occ)} tokens",
                         recent_median_output_tokens=med, baseline_output_tokens=base_out,
                         baseline_prompt_tokens=base_occ, prompt_tokens=occ, window_calls=COLLAPSE_WINDOW)
        elif not self.armed and med >= COLLAPSE_REARM * base_out:
            self.armed = True
