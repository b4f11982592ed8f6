"""The biggest offenders of a plan: what evicting each message would free (its whole exchange, since a tool call
goes with its results) and the few exchanges that matter most.  ``plan``'s text and JSON and the dashboard's
eviction preview mark the same ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class MessagePlan(Protocol):
    """What this module reads of a :class:`ctxwatch.planner.MessagePlan` (a protocol, so that the plan's
    ``to_json`` can use it without an import cycle)."""

    @property
    def fate(self) -> str: ...
    @property
    def exchange(self) -> int: ...
    @property
    def tokens(self) -> int: ...

#: Exchanges marked as the biggest offenders at most (and at least 3 when there are that many): a handful a
#: reader can act on, not a ranking of the whole history.
OFFENDERS = 5
MIN_OFFENDERS = 3


def _exchange_sizes(messages: Sequence[MessagePlan]) -> dict[int, int]:
    """Exchange number -> its messages' tokens, over the messages a plan may evict (not pinned)."""
    sizes: dict[int, int] = {}
    for m in messages:
        if m.fate != "pinned" and m.exchange >= 0:
            sizes[m.exchange] = sizes.get(m.exchange, 0) + m.tokens
    return sizes


def exchange_savings(messages: Sequence[MessagePlan]) -> list[int | None]:
    """For each message, the tokens evicting it would free: the tokens of every message of its exchange (an
    assistant message with its tool results travel together), ``None`` for a pinned message (the floor and pinned
    instructions are never evicted)."""
    totals = _exchange_sizes(messages)
    return [None if m.fate == "pinned" else totals.get(m.exchange, m.tokens) if m.exchange >= 0 else m.tokens
            for m in messages]


def offenders(messages: Sequence[MessagePlan], before: int, budget: int) -> set[int]:
    """The exchanges that matter most: the biggest, as many as it takes for their eviction alone to bring the
    prompt (``before`` tokens) within ``budget``, at least :data:`MIN_OFFENDERS` and at most :data:`OFFENDERS`
    (ties: the older exchange first); returned as the positions (in ``messages``) of their messages."""
    chosen: list[int] = []
    freed = 0
    for ex, n in sorted(_exchange_sizes(messages).items(), key=lambda kv: (-kv[1], kv[0])):
        if len(chosen) >= OFFENDERS or (len(chosen) >= MIN_OFFENDERS and before - freed <= budget):
            break
        chosen.append(ex)
        freed += n
    picked = set(chosen)
    return {i for i, m in enumerate(messages) if m.fate != "pinned" and m.exchange in picked}
