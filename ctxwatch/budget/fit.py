"""The context budget of a loop: :class:`ContextBudget` fits a history to the budget with the eviction planner.

The planner is the one ``ctxwatch plan`` previews (:mod:`ctxwatch.planner`): the system prompt is pinned and
never rewritten, the tool schemas count as the floor, tool calls stay with their results and the newest
``keep_recent`` exchanges stay as they are.  Unlike ``plan``, a loop compacts at the **trigger** by default
(``compact_at="trigger"``), so it then runs several calls below it before it compacts again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from ctxwatch.accounting import reserve_for
from ctxwatch.budget.messages import infer_provider, system_blocks, to_message
from ctxwatch.budget.report import BudgetReport, FitResult
from ctxwatch.config import Settings
from ctxwatch.model import Message
from ctxwatch.planner import (
    COMPACT_AT,
    SUMMARY_HEADER,
    UNITS,
    CompactAt,
    Mode,
    Plan,
    Policy,
    Unit,
    plan_messages,
    text_message_tokens,
)
from ctxwatch.tokens import REPLY_PRIMER, Counter, counter_for

#: A summariser: called with the evicted messages (the original dicts, in order); returns the summary text.
Summariser = Callable[[list[dict[str, Any]]], str]


class ContextBudget:
    """Keep an agent loop's prompt within a budget, with the ctxwatch eviction planner.

    Args:
        model: the model id (picks the tokenizer and, when ``window`` is not given, the catalogue window).
        window: the context window in tokens; default ``settings.window``, else the genai-prices catalogue.
        system: the system prompt (a string, text blocks, or Anthropic ``{"type":"text","text":...}`` blocks).
            Pinned: counted as floor, never evicted or rewritten.
        tools: the tool schemas (OpenAI or Anthropic shape), counted once as floor.
        settings: thresholds (budget fraction 0.6, reserve 0.15, keep_recent 6, summary_tokens 2000 by
            default; see :mod:`ctxwatch.config`).
        provider: ``openai`` | ``anthropic`` | ``google``; default inferred by :func:`infer_provider`.
        max_tokens: the ``max_tokens`` you request; used as the completion reserve instead of the fraction (capped
            at the window, as report does: a limit at or above the window leaves no budget).
        keep_recent: overrides ``settings.keep_recent`` (units always kept, see ``unit``).
        unit: what ``keep_recent`` counts: ``exchange`` (default; an assistant message with all its tool
            results, or one other message; the cut may fall inside a user turn) or ``turn`` (a user message
            and everything up to the next one, which in a tool loop protects the whole run after the last
            prompt).
        reinject: re-inject the task, plan, task list and edited file after a compaction (default True).
            With ``reinject=False`` and no summariser, a cut inside a user turn has nothing to start the
            history with, so the cut goes to a user message (see :meth:`fit`).
        compact_at: ``trigger`` (default, field practice for a live loop): when the prompt is above the
            compaction trigger (``settings.trigger`` x the budget, 0.8 x 0.6 of the window by default),
            compact fully: everything older than the newest ``keep_recent`` units is summarised (or dropped);
            at or below the trigger nothing changes.  ``budget``: compact only above the budget, and only
            the minimum that fits (what ``ctxwatch plan`` previews); in a loop that lands just under the
            budget, above the trigger, and compacts again a call or two later.

    Attributes:
        system: the system text blocks, unchanged. For Anthropic pass them as the ``system`` parameter
            (:meth:`fit` does not insert a system message for that provider).
        window, provider, counter, policy: as resolved.
        tokenizer / exact / note: the encoding used, whether it is the model's own, and why it fell back to
            ``chars/4`` (``None`` when it did not).
        last_report: the report of the latest :meth:`fit`.

    Raises:
        ValueError: the window is unknown (pass ``window=``), a setting is out of range, or ``unit`` or
            ``compact_at`` is unknown.
    """

    def __init__(self, model: str | None = None, *, window: int | None = None,
                 system: str | Sequence[Any] | None = None, tools: Sequence[dict[str, Any]] | None = None,
                 settings: Settings | None = None, provider: str | None = None, max_tokens: int | None = None,
                 keep_recent: int | None = None, reinject: bool = True, unit: Unit = "exchange",
                 compact_at: CompactAt = "trigger") -> None:
        self.settings = settings or Settings()
        self.model = model
        self.tools: list[dict[str, Any]] = [t for t in (tools or []) if isinstance(t, dict)]
        self.provider = provider or infer_provider(model, self.tools)
        if window is None:
            window = self.settings.window
        if window is None:
            from ctxwatch.catalog.windows import catalog_window

            window = catalog_window(model, self.provider)
        if not window:
            raise ValueError(f"context window of model {model!r} is unknown; pass window=<tokens>")
        self.window = int(window)
        self.system: list[str] = system_blocks(system)
        self.counter: Counter = counter_for(model, self.provider)
        self.tokenizer = self.counter.name
        self.exact = self.counter.exact
        self.note = self.counter.tokenizer.note
        if unit not in UNITS:
            raise ValueError(f"unit must be 'exchange' or 'turn', got {unit!r}")
        if compact_at not in COMPACT_AT:
            raise ValueError(f"compact_at must be 'budget' or 'trigger', got {compact_at!r}")
        extra: dict[str, Any] = {"unit": unit, "compact_at": compact_at}
        if keep_recent is not None:
            extra["keep_recent"] = keep_recent
        if not reinject:
            extra.update(reinject_task=False, reinject_plan=False, reinject_tasks=False, reinject_file=False)
        # (the reserve rule of report and plan, accounting.reserve_for: max_tokens capped at the window)
        reserve = reserve_for(max_tokens, self.window, self.settings)[0] if max_tokens else None
        self.policy = Policy.from_settings(self.settings, self.window, reserve_tokens=reserve, **extra)
        self.system_tokens = self.counter.system_tokens(self.system)
        self.tools_tokens = self.counter.tools_tokens(self.tools)
        self.last_report: BudgetReport | None = None

    @property
    def floor_tokens(self) -> int:
        """System prompt + tool schemas, in tokens."""
        return self.system_tokens + self.tools_tokens

    @property
    def budget_tokens(self) -> int:
        """The prompt budget in tokens (:attr:`ctxwatch.planner.Policy.budget_tokens`)."""
        return self.policy.budget_tokens

    def _split(self, messages: Sequence[dict[str, Any]]) -> tuple[list[Message], bool]:
        """Normalized messages, and whether the constructor's system prompt must be counted on its own
        (False when the messages already carry it as a system message with the same text)."""
        msgs = [to_message(m) for m in messages]
        if not self.system:
            return msgs, False
        joined = "\n".join(self.system)
        carried = any(m.role in ("system", "developer") and m.text() == joined for m in msgs)
        return msgs, not carried

    def count(self, messages: Sequence[dict[str, Any]]) -> int:
        """Prompt tokens of ``messages`` with this budget's floor (system prompt + tools), framing and the reply
        primer included (:data:`ctxwatch.tokens.REPLY_PRIMER`): the prompt ``report`` estimates for the same
        request, so the budget compacts at the trigger ``check`` flags."""
        msgs, own = self._split(messages)
        return (self.system_tokens if own else 0) + self.tools_tokens + sum(self.counter.message_tokens(m)
                                                                            for m in msgs) + REPLY_PRIMER

    def plan(self, messages: Sequence[dict[str, Any]], *, mode: Mode = "summarise", unit: Unit | None = None,
             compact_at: CompactAt | None = None) -> Plan:
        """The eviction plan for ``messages`` (nothing is changed). ``mode``: ``summarise`` | ``drop``;
        ``unit``: ``exchange`` | ``turn``; ``compact_at``: ``trigger`` | ``budget`` (defaults: the
        constructor's)."""
        msgs, own = self._split(messages)
        policy = replace(self.policy, mode=mode) if mode != self.policy.mode else self.policy
        if unit is not None and unit != policy.unit:
            policy = replace(policy, unit=unit)
        if compact_at is not None and compact_at != policy.compact_at:
            policy = replace(policy, compact_at=compact_at)
        return plan_messages(msgs, policy, system=self.system if own else None, tools=self.tools,
                             counter=self.counter, overhead=REPLY_PRIMER)

    def fit(self, messages: Sequence[dict[str, Any]], summariser: Summariser | None = None) -> FitResult:
        """Return ``messages`` fitted to the budget, and a :class:`BudgetReport`.

        Args:
            messages: the history as dicts (OpenAI or Anthropic shape); ``system``/``developer`` messages in
                it are pinned and passed through unchanged.  Not modified.
            summariser: called once with the evicted messages (the original dicts, in order) when something
                must go; returns the summary text.  ``None`` drops the evicted span instead (mode ``drop``).

        Returns:
            ``FitResult(messages, report)``.  When the prompt is at or below the compaction trigger (with
            ``compact_at="budget"``: within the budget) the messages are returned as given (plus the system
            message, see below).  Otherwise everything older than the newest ``keep_recent`` units goes
            (``compact_at="budget"``: the least that fits) and the result is: the system message first (for
            OpenAI/Google, when the constructor got a system prompt the messages do not carry), pinned
            messages before the cut, a user message with the summary (``SUMMARY_HEADER`` + summary), one user
            message per re-injected item (task, plan, task list, edited file), then the kept exchanges
            verbatim (``report.lead`` lists what stands before them).

            The kept span may start on an assistant message (the cut fell inside a user turn, between
            exchanges); the summary or the re-injected items, all user messages, then stand before it, so
            the non-system history always starts on a user message.  Without a summariser (drop mode) and
            with nothing to re-inject, the cut goes to a user message instead (``report.reason`` says so),
            and the history is never emptied.

        Raises:
            TypeError: a message is not a dict, or the summariser does not return a string.
            Whatever ``summariser`` raises.
        """
        originals = list(messages)
        msgs, own = self._split(originals)
        policy = self.policy
        if summariser is None and policy.mode == "summarise":
            policy = replace(policy, mode="drop")
        plan = plan_messages(msgs, policy, system=self.system if own else None, tools=self.tools,
                             counter=self.counter, overhead=REPLY_PRIMER)
        out: list[dict[str, Any]] = []
        if own and self.provider != "anthropic":
            out.append({"role": "system", "content": "\n".join(self.system)})
        evicted = [originals[m.source_index] for m in plan.evicted if m.source_index is not None]
        summary_msg: dict[str, Any] | None = None
        if evicted and policy.mode == "summarise" and summariser is not None:
            text = summariser(evicted)
            if not isinstance(text, str):
                raise TypeError(f"the summariser must return a str, got {type(text).__name__}")
            summary_msg = {"role": "user", "content": SUMMARY_HEADER + text}
        cut = plan.cut if plan.cut is not None else len(plan.messages)
        for m in plan.messages:
            if m.source_index is None or m.index >= cut:
                continue
            if m.fate == "pinned":
                out.append(originals[m.source_index])
        if summary_msg is not None:
            out.append(summary_msg)
        for item in plan.reinject:
            out.append({"role": "user", "content": item.text})
        for m in plan.messages:
            if m.source_index is not None and m.index >= cut:
                out.append(originals[m.source_index])
        summary_tokens = text_message_tokens(self.counter, summary_msg["content"]) if summary_msg else 0
        after = self.count(out)  # counts the constructor's system prompt once, carried in `out` or not
        reason = plan.reason
        if summary_msg is not None and summary_tokens > policy.summary_tokens:
            reason += (f"; the summary took {summary_tokens:,} tokens, more than the {policy.summary_tokens:,} "
                       "planned")
        if summary_msg is not None and (after <= plan.budget_tokens) != plan.fits:
            reason += (f"; with the real summary ({summary_tokens:,} tokens) the result is {after:,} tokens and "
                       + ("fits" if after <= plan.budget_tokens else "does not fit"))
        trig = plan.trigger_tokens
        if (summary_msg is not None and policy.compact_at == "trigger"
                and (after > trig) != (plan.after_tokens > trig)):
            reason += (f"; with the real summary the result is {after:,} tokens, "
                       + ("above" if after > trig else "not above") + f" the compaction trigger of {trig:,}")
        if summariser is None and plan.evicted and self.policy.mode == "summarise":
            reason += "; no summariser given, so the evicted span was dropped"
        report = BudgetReport(
            before_tokens=plan.before_tokens, after_tokens=after, planned_after_tokens=plan.after_tokens,
            budget_tokens=plan.budget_tokens, window=self.window, reserve_tokens=plan.reserve_tokens,
            floor_tokens=plan.floor_tokens, system_tokens=plan.system_tokens, tools_tokens=plan.tools_tokens,
            summary_tokens=summary_tokens, evicted=len(evicted), kept=len(plan.kept), kept_units=plan.kept_units,
            unit=plan.unit, lead=(["summary"] if summary_msg is not None else []) + [r.kind for r in plan.reinject],
            reinjected=[(r.kind, r.tokens) for r in plan.reinject], fits=after <= plan.budget_tokens,
            trigger_tokens=plan.trigger_tokens, compact_at=policy.compact_at,
            reason=reason, mode=policy.mode, tokenizer=self.tokenizer, exact=self.exact, note=self.note, plan=plan,
        )
        self.last_report = report
        return FitResult(out, report)
