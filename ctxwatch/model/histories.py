"""Call summaries packed for a cache: each call's history as the part it shares with the previous call's, plus
its own tail.

An agent's request re-sends its whole history, so each call's ``messages`` repeats the one before it with a
message or two more: 600 calls of a re-sending log hold about 360,000 message summaries, of which 1,200
differ.  Pickled as they stand, every call writes a reference to each of them (2 MB and 20 ms for that log);
packed, only the tails are written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from typing import Any

from ctxwatch.model.call import Call, MessageStat
from ctxwatch.model.pickling import field_values

_VALUES = field_values(Call)
#: Where ``messages`` stands among a call's field values (the order ``Call(...)`` takes them).
_AT = [f.name for f in fields(Call)].index("messages")

#: One packed call: the call itself when it has no history, else (how many of the previous history's messages
#: it starts with, its field values with its own tail in place of ``messages``).
Packed = Call | None | tuple[int, tuple[Any, ...]]


def shared_prefix(a: Sequence[MessageStat], b: Sequence[MessageStat]) -> int:
    """How many leading summaries ``a`` and ``b`` have equal; compared a slice at a time (in C, each element by
    identity first), halving the span where they first differ, so a re-sent history costs a few slice
    comparisons rather than a Python step per message."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n  # (a[:lo] == b[:lo]; a[:hi] != b[:hi])
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid
    return lo


def pack_calls(calls: Sequence[Call | None]) -> list[Packed]:
    """``calls`` (``None`` for a slot not filled) with each history cut to what the previous call with a history
    does not start it with; :func:`unpack_calls` gives them back equal."""
    out: list[Packed] = []
    prev: tuple[MessageStat, ...] = ()
    for c in calls:
        if c is None or not c.messages:
            out.append(c)
            continue
        m = c.messages
        n = shared_prefix(prev, m)
        values = list(_VALUES(c))
        values[_AT] = m[n:]
        out.append((n, tuple(values)))
        prev = m
    return out


def unpack_calls(packed: Sequence[Packed]) -> list[Call | None]:
    """The calls :func:`pack_calls` packed, each history whole again (its shared part the previous call's own
    summaries, not copies)."""
    out: list[Call | None] = []
    prev: tuple[MessageStat, ...] = ()
    for p in packed:
        if p is None or isinstance(p, Call):
            out.append(p)
            continue
        n, values = p
        m = prev[:n] + values[_AT]
        out.append(Call(*(*values[:_AT], m, *values[_AT + 1:])))
        prev = m
    return out


class PackedHistories:
    """Pickles an object's ``_calls`` (a run's calls, :class:`ctxwatch.engine.run.Run`) packed by
    :func:`pack_calls`: what the cache keeps of a re-sending log's histories is then about one history's
    summaries, not one per call."""

    _calls: list[Call | None]

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_calls"] = pack_calls(self._calls)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        state["_calls"] = unpack_calls(state["_calls"])
        self.__dict__.update(state)
