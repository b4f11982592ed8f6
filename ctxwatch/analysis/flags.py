"""Flags: the findings of the analysis, their kinds and severities, and the number formats of their reasons.

A flag's ``call`` is the call's 0-based index (as in ``report --json``); its reason writes a request ``#N`` with
N = index + 1, as people count requests, and its JSON gives that ``number`` too (what ``plan --call`` takes), as
it gives a ``*_number`` beside each call index of its evidence (:data:`CALL_EVIDENCE`).
Every check raises its flags into one :class:`FlagSink` per stream.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ctxwatch.model import Call

#: Severities in increasing order: ``info`` is worth knowing; ``warn``: a threshold the user set was passed, the
#: cache prefix was invalidated, or output drift is sustained; ``critical``: the next request fails or the run has
#: lost its instructions.
SEVERITIES = ("info", "warn", "critical")
#: Rank of each severity (for ``--fail-on`` and sorting).
SEVERITY_RANK = {s: i for i, s in enumerate(SEVERITIES)}


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
        """``{"kind", "severity", "call", "number", "reason", "evidence", "context"}``: ``call`` the index,
        ``number`` the ``#N`` (index + 1), and in ``evidence`` a ``<key>_number`` after each call index
        (:func:`numbered_evidence`)."""
        return {"kind": self.kind, "severity": self.severity, "call": self.call, "number": self.call + 1,
                "reason": self.reason, "evidence": numbered_evidence(self.evidence), "context": self.context}


def worst_flag(flags: Iterable[Flag]) -> Flag | None:
    """The flag that names a run's (a conversation's, an episode's) state now, as the status line and the
    fleet view name it: the most severe, and of those the one on the most recent call (the latest says where
    the run stands; an older flag of the same severity has been overtaken); on one call, the first in
    ``flags`` (the analysis's order).  ``None`` without flags."""
    worst: Flag | None = None
    for f in flags:
        if worst is None or (SEVERITY_RANK[f.severity], f.call) > (SEVERITY_RANK[worst.severity], worst.call):
            worst = f
    return worst


#: Evidence keys that hold a call's 0-based index (or ``null``): each is followed in the JSON by
#: ``<key>_number``, the ``#N`` the reason writes and ``plan --call`` takes.
CALL_EVIDENCE = frozenset({"previous_call", "after_call", "max_call", "present_from", "present_to",
                           "last_plausible_call", "first_call", "worst_call", "recovered_at"})


def call_number(index: Any) -> int | None:
    """The ``#N`` of the call at 0-based ``index`` (``index + 1``); ``None`` for no call."""
    return index + 1 if isinstance(index, int) and not isinstance(index, bool) else None


def numbered_evidence(evidence: dict[str, Any]) -> dict[str, Any]:
    """``evidence`` with ``<key>_number`` inserted after each call index of :data:`CALL_EVIDENCE`: the index
    stays for the programs that read it, and the number beside it is the one people and ``--call`` use."""
    out: dict[str, Any] = {}
    for key, value in evidence.items():
        out[key] = value
        if key in CALL_EVIDENCE:
            out[f"{key}_number"] = call_number(value)
    return out


#: Every flag kind with its severity (``info/warn`` = decided per flag, see the kind's documentation).
FLAG_KINDS: dict[str, str] = {
    "implausible_usage": "warn",          # reported prompt above the window: no occupancy (kept in totals)
    "output_placeholder": "info",         # a streaming placeholder for the output count (too low, cost too)
    "compaction": "info",                 # marker or sharp history drop; tokens freed in evidence
    "trigger_no_compaction": "warn",      # crossed the compaction trigger, and no compaction followed
    "over_budget": "warn",                # prompt above budget_fraction x window
    "reserve_breached": "warn/critical",  # prompt + completion reserve above the window (critical when the
                                          # reserve is the request's own max tokens: that request cannot fit)
    "window_forecast": "critical",        # the next call is forecast above window - reserve
    "system_prompt_evicted": "critical",  # a call lacks the system prompt earlier calls had
    "system_prompt_changed": "warn",      # system text differs from the previous call's: cache prefix invalidated
    "floor_grew": "warn",                 # tool schemas added or enlarged: tokens added to every later call
    "estimate_disagrees": "info/warn",    # calibrated estimate off by > 5 % (warn > 20 %); raw estimate of
                                          # another tokenizer before any calibration: > 20 %, warn
    "format_drift": "info/warn",          # responses leave the inferred format rule (warn when sustained)
    "system_prompt_echo": "warn",         # a response repeats >= 40 words of the system prompt verbatim
    "response_collapse": "warn",          # responses shrink to < 1/4 of the baseline while the prompt grows
}


def rounded(v: float | None, nd: int = 1) -> float | None:
    """``v`` rounded to ``nd`` decimals for JSON, ``None`` kept."""
    return None if v is None else round(v, nd)


def duration(seconds: float | None) -> str:
    """``"45 s"``, ``"12 min"``, ``"1.5 h"`` (switching units at 90 of the smaller), ``"?"`` for ``None``."""
    if seconds is None:
        return "?"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def num(v: int | float | None) -> str:
    """A token count as reasons write it: rounded, with thousands separators (``"12,345"``); ``"?"`` for ``None``."""
    return "?" if v is None else f"{round(v):,}"


def pct(a: float | None, b: float | None) -> str:
    """``a`` as a whole percentage of ``b`` (``"61%"``); ``"?"`` when either is unknown or ``b`` is 0."""
    return "?" if a is None or not b else f"{100 * a / b:.0f}%"


def int_or_none(v: Any) -> int | None:
    """``v`` when it is an int (not a bool), else ``None``: for numbers read from a log's markers."""
    return v if isinstance(v, int) and not isinstance(v, bool) else None


class FlagSink:
    """The flags of one stream in the order its checks raise them (the walk sorts them by call and severity at
    the end, a stable sort, so this order decides among flags of one call and severity)."""

    __slots__ = ("context", "flags")

    def __init__(self, context: str) -> None:
        self.context = context
        self.flags: list[Flag] = []

    def make(self, kind: str, severity: str, c: Call, reason: str, **evidence: Any) -> Flag:
        """A flag on call ``c``, not raised yet (a check that raises it later, or never, keeps it)."""
        return Flag(kind, severity, c.index, reason, evidence, self.context)

    def add(self, kind: str, severity: str, c: Call, reason: str, **evidence: Any) -> Flag:
        """Raise a flag on call ``c``; the check may keep updating its evidence and severity while a condition
        lasts."""
        f = Flag(kind, severity, c.index, reason, evidence, self.context)
        self.flags.append(f)
        return f

    def append(self, f: Flag) -> None:
        """Raise a flag made earlier by :meth:`make`."""
        self.flags.append(f)
