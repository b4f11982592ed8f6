"""What one :meth:`ContextBudget.fit <ctxwatch.budget.ContextBudget.fit>` did: the :class:`BudgetReport`, and
the :class:`FitResult` pair it comes back in."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ctxwatch.planner import Plan


@dataclass(slots=True)
class BudgetReport:
    """What one :meth:`ContextBudget.fit` did. All values in tokens unless stated.

    Attributes:
        before_tokens: floor + history as given.
        after_tokens: floor + the returned messages, counted on what is returned (real summary included).
        planned_after_tokens: the planner's figure (with the assumed ``summary_tokens``).
        budget_tokens / window / reserve_tokens: the limits (see :class:`~ctxwatch.planner.Policy`).
        trigger_tokens: the compaction trigger (0.8 of the budget by default).
        compact_at: ``trigger`` or ``budget`` (see :class:`ContextBudget`).
        floor_tokens / system_tokens / tools_tokens: the pinned floor and its parts.
        summary_tokens: tokens of the summary message actually inserted (0 if none).
        evicted: number of messages removed (summarised or dropped); kept: history messages kept verbatim.
        kept_units: how many whole units (``unit``) the kept messages make.
        reinjected: ``[(kind, tokens)]`` of the items re-injected.
        fits: ``after_tokens <= budget_tokens``.
        reason: the planner's sentence(s), plus a note when the real summary changed the outcome.
        mode: ``summarise`` or ``drop`` (``drop`` when no summariser was given).
        tokenizer / exact / note: the encoding, whether it is the model's own, and why it fell back.
        unit: ``exchange`` or ``turn`` (what ``keep_recent`` counted).
        lead: what the returned history puts before the kept messages, in order (``"summary"`` and the
            re-injected kinds), all user messages; empty when nothing was evicted.
        plan: the full :class:`~ctxwatch.planner.Plan`.
    """

    before_tokens: int
    after_tokens: int
    planned_after_tokens: int
    budget_tokens: int
    window: int
    reserve_tokens: int
    floor_tokens: int
    system_tokens: int
    tools_tokens: int
    summary_tokens: int
    evicted: int
    kept: int
    reinjected: list[tuple[str, int]]
    fits: bool
    reason: str
    mode: str
    tokenizer: str
    exact: bool
    note: str | None = None
    kept_units: int = 0
    unit: str = "exchange"
    lead: list[str] = field(default_factory=list)
    trigger_tokens: int = 0
    compact_at: str = "trigger"
    plan: Plan | None = field(default=None, repr=False)

    def to_json(self) -> dict[str, Any]:
        """Every attribute except ``plan``, as a JSON-ready dict (``reinjected`` as objects)."""
        return {
            "before_tokens": self.before_tokens, "after_tokens": self.after_tokens,
            "planned_after_tokens": self.planned_after_tokens, "budget_tokens": self.budget_tokens,
            "window": self.window, "reserve_tokens": self.reserve_tokens, "floor_tokens": self.floor_tokens,
            "system_tokens": self.system_tokens, "tools_tokens": self.tools_tokens,
            "summary_tokens": self.summary_tokens, "evicted": self.evicted, "kept": self.kept,
            "reinjected": [{"kind": k, "tokens": t} for k, t in self.reinjected], "fits": self.fits,
            "reason": self.reason, "mode": self.mode, "tokenizer": self.tokenizer, "exact": self.exact,
            "note": self.note, "kept_units": self.kept_units, "unit": self.unit, "lead": list(self.lead),
            "trigger_tokens": self.trigger_tokens, "compact_at": self.compact_at,
        }

    def __str__(self) -> str:
        return (f"{self.before_tokens:,} -> {self.after_tokens:,} tokens (budget {self.budget_tokens:,}, "
                f"{'fits' if self.fits else 'does NOT fit'}; evicted {self.evicted}, kept {self.kept} "
                f"({self.kept_units} {self.unit}{'s' if self.kept_units != 1 else ''}); "
                f"{self.tokenizer}{'' if self.exact else ' estimate'})")


class FitResult(NamedTuple):
    """``(messages, report)`` from :meth:`ContextBudget.fit`; unpacks like a tuple."""

    messages: list[dict[str, Any]]
    report: BudgetReport
