"""The cut search: where the kept history of one call may start, what each such cut costs, and which one the
policy chooses.

The history sent after a plan starts with a user message: the summary or a re-injected item when the cut falls
inside a user turn, else the cut goes to a user message.  A plan never sends an empty history.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ctxwatch.model import Message, MessageStat
from ctxwatch.planner.plan import MessagePlan
from ctxwatch.planner.policy import Fate, Policy
from ctxwatch.planner.reinject import ReinjectItem, find_reinject
from ctxwatch.planner.units import Entry, blocked_cuts, numbering
from ctxwatch.tokens import Counter


@dataclass(slots=True)
class Choice:
    """The cut a :class:`CutSearch` chose, and what it gives (tokens).

    Attributes:
        cut: the history position of the first kept message (0: nothing evicted; ``H``: the whole history).
        free_cut: where the unit and the tool pairs alone would put it (differs from ``cut`` only when the
            sent history must start on a user message and nothing stands before it: drop mode, nothing
            re-injected).
        after: the prompt with that cut.  fits: ``after`` is within the budget.
        reinjected: the items re-injected with it.  lead: what stands before the kept history, in order
            (``"summary"`` and the re-injected kinds).
        kept_units: units kept whole.
        beyond: the smallest prompt a lower ``keep_recent`` would allow (``None``: no cut lies beyond the
            newest units).
    """

    cut: int
    free_cut: int
    after: int
    fits: bool
    reinjected: list[ReinjectItem]
    lead: list[str]
    kept_units: int
    beyond: int | None


class CutSearch:
    """The cut search of one call under ``policy``.

    The history ``hist`` is every entry that is not pinned, in order; a cut ``c`` (``0 <= c <= H``) keeps
    ``hist[c:]`` verbatim and summarises or evicts ``hist[:c]``.  A cut may fall at 0, at a unit start or at
    the end, never across a tool-call pair (:func:`~ctxwatch.planner.units.blocked_cuts`), and never among the
    newest ``keep_recent`` units or ``keep_recent_messages`` messages.  Sizes are tokens, the reply primer
    (``overhead``) included.

    Attributes (positions are history positions; ``hist_pos`` maps them to plan indexes):
        floor: everything no plan can evict (the pinned entries and the tool schemas).
        starts: the unit starts (exchanges or turns, by :attr:`Policy.unit`); user_starts: the turn starts.
        suffix: ``suffix[c]`` = tokens of ``hist[c:]``.
        found: the re-injection candidates; found_pos: their history positions (by ``id``).
        max_cut: the latest cut the newest units allow.  free: the cuts the unit and the tool pairs allow;
        valid: those whose sent history starts on a user message; allowed: the valid ones up to ``max_cut``.
        want: the latest cut ``keep_recent_messages`` allows (``H`` when it is 0).
    """

    def __init__(self, entries: list[Entry], messages: Sequence[Message | MessageStat], policy: Policy,
                 counter: Counter, tools_tokens: int, overhead: int) -> None:
        self.entries, self.policy, self.tools_tokens, self.overhead = entries, policy, tools_tokens, overhead
        self.pinned_tokens = sum(e.tokens for e in entries if e.pinned)
        self.floor = self.pinned_tokens + tools_tokens
        self.hist_pos = [k for k, e in enumerate(entries) if not e.pinned]  # plan index of each history entry
        # the #N people see for each (MessagePlan.number: the history from 1), which the reasons name
        self.hist_num = [(entries[k].source or 0) + 1 for k in self.hist_pos]
        self.hist = hist = [entries[k] for k in self.hist_pos]
        self.H = H = len(hist)
        blocked = blocked_cuts(hist)

        # Turns start at a user message that is not a tool result (these are also the "user starts": a kept
        # history may begin there without anything before it).  Exchanges start at every message that is not
        # a tool result and does not sit inside a tool call's span.
        self.user_starts = [j for j, e in enumerate(hist) if e.role == "user" and not e.is_result]
        ex_starts = [j for j, e in enumerate(hist) if not e.is_result and not blocked[j]]
        self.unit = policy.unit
        self.starts = ex_starts if self.unit == "exchange" else self.user_starts
        self.turn_of = numbering(self.user_starts, H)
        self.exchange_of = numbering(ex_starts, H)
        self.user_set = set(self.user_starts)

        # Reinjection candidates, by history position.
        hist_msgs = [messages[e.source] for e in hist if e.source is not None]
        self.found = find_reinject(hist_msgs, counter, self.hist_pos, self.hist_num)
        self.wanted = {"task": policy.reinject_task, "plan": policy.reinject_plan, "tasks": policy.reinject_tasks,
                       "file": policy.reinject_file}
        self.hist_j = {k: j for j, k in enumerate(self.hist_pos)}
        self.found_pos = {id(f): self.hist_j[f.index] for f in self.found}

        self.suffix = suffix = [0] * (H + 1)
        for j in range(H - 1, -1, -1):
            suffix[j] = suffix[j + 1] + hist[j].tokens
        self.summarise = policy.mode == "summarise"
        self.summary = policy.summary_tokens if self.summarise else 0

        self.budget = policy.budget_tokens
        self.trigger = policy.trigger_tokens
        self.at_trigger = policy.compact_at == "trigger"
        # The plan compacts when the prompt is above this (the budget, or the trigger with compact_at="trigger").
        self.threshold = self.trigger if self.at_trigger else self.budget
        self.before = self.size(0)

        # Where the cut may go: 0 (nothing evicted), a unit start, or the end; never across a tool-call pair.
        K, starts = policy.keep_recent, self.starts
        if K == 0:
            max_cut = H
        elif not starts:
            max_cut = 0
        else:
            max_cut = starts[max(len(starts) - K, 0)]
        # ``free``: the positions the unit and the tool pairs allow; ``valid``: those whose sent history
        # starts on a user message (differs only in drop mode with nothing re-injected).
        self.free = [c for c in sorted({0, *starts, H}) if c == 0 or not blocked[c]]
        self.free_set = set(self.free)
        self.valid = [c for c in self.free if self.starts_on_user(c)]
        self.valid_set = set(self.valid)
        self.want = max(H - policy.keep_recent_messages, 0) if policy.keep_recent_messages else H
        if self.want < max_cut:
            max_cut = self.want
        self.max_cut = max_cut
        self.allowed = [c for c in self.valid if c <= max_cut]

    def reinjected(self, c: int) -> list[ReinjectItem]:
        """The wanted re-injection candidates that cut ``c`` evicts."""
        return [f for f in self.found if self.wanted[f.kind] and self.found_pos[id(f)] < c] if c > 0 else []

    def size(self, c: int) -> int:
        """The prompt with cut ``c``: floor + kept history, plus the summary and re-injected items if ``c > 0``."""
        if c == 0:
            return self.overhead + self.floor + self.suffix[0]
        return self.overhead + self.floor + self.suffix[c] + self.summary + sum(f.tokens for f in self.reinjected(c))

    def has_lead(self, c: int) -> bool:
        """A user message (the summary or a re-injected item) stands before the kept span of cut ``c``."""
        return c > 0 and (self.summarise or bool(self.reinjected(c)))

    def starts_on_user(self, c: int) -> bool:
        """The history sent with cut ``c`` starts with a user message (or is the original, for ``c == 0``)."""
        return c == 0 or self.has_lead(c) or (c < self.H and c in self.user_set)

    def choose(self, cands: list[int]) -> int:
        """The cut among ``cands`` the policy asks for (0 when the prompt is within its threshold)."""
        if self.before <= self.threshold or self.H == 0:
            return 0
        if self.at_trigger:
            # Full compaction: the smallest plan, ties to the later cut (so the newest keep_recent units).
            return min(cands, key=lambda c: (self.size(c), -c))
        fitting = [c for c in cands if c > 0 and self.size(c) <= self.budget]
        return min(fitting) if fitting else min(cands, key=lambda c: (self.size(c), c))

    def decide(self) -> Choice:
        """Choose the cut among the allowed ones, and mark the found items it re-injects
        (:attr:`ReinjectItem.reinjected`)."""
        cut = self.choose(self.allowed)
        # The cut the unit alone would give (no user-start rule): when it differs, say why the cut moved.
        free_cut = cut if len(self.valid) == len(self.free) else self.choose([c for c in self.free
                                                                              if c <= self.max_cut])
        after = self.size(cut)
        chosen = self.reinjected(cut)
        for f in self.found:
            f.reinjected = f in chosen
        lead = (["summary"] if cut > 0 and self.summarise else []) + [f.kind for f in chosen]
        kept_units = sum(1 for c in self.starts if c >= cut)
        # The smallest plan a lower keep_recent would allow (the cuts the newest units now protect), for the hint.
        beyond = min((self.size(c) for c in self.valid if c > self.max_cut), default=None)
        return Choice(cut, free_cut, after, after <= self.budget, chosen, lead, kept_units, beyond)

    def naive_cut(self) -> int | None:
        """The earliest position where a cut ignoring units and tool pairs would fit the budget, or ``None``."""
        extras = sorted((self.found_pos[id(f)], f.tokens) for f in self.found if self.wanted[f.kind])
        extra, k = 0, 0
        for p in range(1, self.H + 1):
            while k < len(extras) and extras[k][0] < p:
                extra += extras[k][1]
                k += 1
            if self.overhead + self.floor + self.suffix[p] + self.summary + extra <= self.budget:
                return p
        return None

    def fates(self, cut: int) -> list[MessagePlan]:
        """One :class:`MessagePlan` per entry with cut ``cut``, in order."""
        plans: list[MessagePlan] = []
        for k, e in enumerate(self.entries):
            if e.pinned:
                fate: Fate = "pinned"
                turn = exchange = -1
            else:
                j = self.hist_j[k]
                turn, exchange = self.turn_of[j], self.exchange_of[j]
                fate = "kept" if j >= cut else ("summarised" if self.summarise else "evicted")
            plans.append(MessagePlan(k, e.role, e.tokens, fate, e.tokens if fate in ("pinned", "kept") else 0,
                                     e.source, turn, e.label, e.calls, e.results, exchange))
        return plans

    def at(self, c: int) -> str:
        """Cut position ``c`` as the reasons name it: ``message 7 (assistant)``, or ``the end``."""
        return f"message {self.hist_num[c]} ({self.hist[c].role})" if c < self.H else "the end"
