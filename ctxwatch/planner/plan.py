"""The planner's answer: the fate of every message (pinned, kept, summarised, evicted), the sizes before and
after, and the ``plan --json`` document.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ctxwatch.planner.offenders import exchange_savings, offenders
from ctxwatch.planner.policy import Fate, Policy
from ctxwatch.planner.reinject import ReinjectItem


@dataclass(slots=True)
class MessagePlan:
    """The fate of one message of the call.

    Attributes:
        index: 0-based position in the call as the model sees it: the system prompt (when given as blocks)
            is index 0, then the history in order.
        role: the message role.
        tokens: tokens before the plan (framing included).
        fate: ``pinned`` | ``kept`` | ``summarised`` | ``evicted``.
        tokens_after: tokens after the plan (``tokens`` if pinned/kept, else 0).
        source_index: position in the ``messages`` argument, ``None`` for the system-blocks entry.
        turn: 0-based turn number (-1 for pinned messages and history before the first user turn).
        label: the message's :attr:`~ctxwatch.model.Message.label`.
        tool_call_ids / tool_result_ids: ids of the tool calls it makes / answers.
        exchange: 0-based exchange number (-1 for pinned messages and tool results before the first
            exchange).  Both ``turn`` and ``exchange`` are filled whatever :attr:`Policy.unit` is.
    """

    index: int
    role: str
    tokens: int
    fate: Fate
    tokens_after: int
    source_index: int | None
    turn: int = -1
    label: str | None = None
    tool_call_ids: tuple[str, ...] = ()
    tool_result_ids: tuple[str, ...] = ()
    exchange: int = -1

    @property
    def number(self) -> int:
        """The ``#`` people see for it, as the call detail, the eviction preview and ``plan``'s text give it: 0
        for the system prompt (or the floor), the history from 1, with or without a system prompt (``index``
        starts the history at 0 when the request has none)."""
        return 0 if self.source_index is None else self.source_index + 1


@dataclass(slots=True)
class Plan:
    """The planner's answer for one call. All token values are in tokens.

    Attributes:
        messages: one :class:`MessagePlan` per message of the call, in order (system prompt first).
        before_tokens: the prompt as it is: floor + history.
        after_tokens: floor + kept history + summary + reinjected items.
        budget_tokens: the budget the plan aims for (:attr:`Policy.budget_tokens`).
        fits: ``after_tokens <= budget_tokens``.
        reason: one or more human sentences: what was done and why, or why it does not fit.
        reinject: the items the plan re-injects (a subset of ``found``).
        found: every reinjection candidate detected, re-injected or not.
        floor_tokens / system_tokens / tools_tokens: the floor (system prompt + tool schemas, as ``report``
            counts it) and its parts.
        pinned_tokens: pinned messages inside the history (a mid-run ``system`` message, AGENTS.md
            instructions, Codex's environment context): never evicted, like the floor, but counted as history
            by ``report`` (0 when there are none).
        summary_tokens: tokens of the summary in the plan (0 when nothing is summarised or mode is drop).
        overhead_tokens: tokens the request carries outside its messages and floor, before and after the plan
            alike (the reply primer of a counted prompt, :data:`ctxwatch.tokens.REPLY_PRIMER`; else 0).
        floor_split: False for a format that logs neither the system prompt nor the tools (Claude Code, Codex):
            the floor is inferred whole, held by the first entry, and cannot be split into its two parts.
        trigger_tokens / reserve_tokens / window: from the policy.
        triggered: the prompt before the plan is above the compaction trigger.
        compact_at: the policy's :attr:`Policy.compact_at` (``budget`` | ``trigger``): with ``trigger`` a
            plan compacts whenever ``triggered``.
        cut: plan index of the first kept history message (``None`` when all history is evicted or there
            is none).
        moved: a sentence when the cut was moved to avoid splitting a tool call or a unit, or to make the
            sent history start on a user message, else ``None``.
        lead: what stands before the kept history after the plan, in order: ``"summary"`` and the
            re-injected kinds (``"task"``, ...), all user messages; empty when nothing is evicted.
        unit: the policy's unit (``exchange`` | ``turn``); kept_units: how many units are kept whole.
        tokenizer: the encoding used for counting (``chars/4`` after a fallback).
        policy: the policy the plan was made with.
    """

    messages: list[MessagePlan]
    before_tokens: int
    after_tokens: int
    budget_tokens: int
    fits: bool
    reason: str
    reinject: list[ReinjectItem]
    found: list[ReinjectItem] = field(default_factory=list)
    floor_tokens: int = 0
    system_tokens: int = 0
    tools_tokens: int = 0
    pinned_tokens: int = 0
    summary_tokens: int = 0
    trigger_tokens: int = 0
    reserve_tokens: int = 0
    window: int = 0
    triggered: bool = False
    cut: int | None = None
    moved: str | None = None
    tokenizer: str = ""
    policy: Policy | None = None
    lead: list[str] = field(default_factory=list)
    unit: str = "exchange"
    kept_units: int = 0
    compact_at: str = "budget"
    overhead_tokens: int = 0
    floor_split: bool = True

    @property
    def evicted(self) -> list[MessagePlan]:
        """The messages that leave the prompt (summarised or evicted), in order."""
        return [m for m in self.messages if m.fate in ("summarised", "evicted")]

    @property
    def kept(self) -> list[MessagePlan]:
        """The history messages kept verbatim, in order."""
        return [m for m in self.messages if m.fate == "kept"]

    def to_json(self) -> dict[str, Any]:
        """The ``plan --json`` document: ``messages`` (``index``, ``number``: :attr:`MessagePlan.number`, ``role``,
        ``tokens``, ``tokens_after``, ``fate``,
        ``saves``: the tokens evicting its exchange frees, ``null`` when pinned; ``offender``: one of the biggest
        offenders, :func:`~ctxwatch.planner.offenders`), ``before_tokens``, ``after_tokens``, ``budget_tokens``,
        ``fits``, ``reason``, ``reinject``
        (``kind``, ``tokens``, ``index``, ``detail`` per item), and what is in no message row, so that the sizes
        add up from the document alone: ``system_tokens`` / ``tools_tokens`` / ``floor_tokens`` (the system
        prompt's row holds ``system_tokens``; the tool schemas have no row; where the floor is inferred whole,
        :attr:`floor_split` False, the first row holds it and its parts are ``null``: unknown, never 0),
        ``summary_tokens`` and ``overhead_tokens`` (the reply primer).  ``before_tokens`` = the rows' ``tokens``
        + ``tools_tokens`` (``null``: 0) + ``overhead_tokens``; ``after_tokens`` = the rows' ``tokens_after`` +
        ``tools_tokens`` + ``summary_tokens`` + the ``reinject`` items' tokens + ``overhead_tokens``."""
        saves = exchange_savings(self.messages)
        worst = offenders(self.messages, self.before_tokens, self.budget_tokens)
        return {
            "messages": [{"index": m.index, "number": m.number, "role": m.role, "tokens": m.tokens,
                          "tokens_after": m.tokens_after,
                          "fate": m.fate, "saves": saves[k], "offender": k in worst}
                         for k, m in enumerate(self.messages)],
            "before_tokens": self.before_tokens,
            "after_tokens": self.after_tokens,
            "budget_tokens": self.budget_tokens,
            "fits": self.fits,
            "reason": self.reason,
            "reinject": [r.to_json() for r in self.reinject],
            "system_tokens": self.system_tokens if self.floor_split else None,
            "tools_tokens": self.tools_tokens if self.floor_split else None,
            "floor_tokens": self.floor_tokens,
            "summary_tokens": self.summary_tokens,
            "overhead_tokens": self.overhead_tokens,
        }
