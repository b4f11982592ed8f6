"""Cost and cache on the main screen: each call's estimated cost (priced in the feed's thread, as ``report --json``
prices it), the log's totals kept as calls arrive, and the one line that shows them under the bar.

``#43 $0.0952 · cache r 98,729 w 7,330 │ log $13.27 · cache r 9.2M w 410k`` (cache reads and writes, in
tokens): an unknown
number is ``?``, never 0 (a call whose usage the log does not report, a model the catalogue cannot price, a
provider that reports no cache writes); a total with unknown parts says how many calls it counts.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rich.text import Text

from ctxwatch.model import Call
from ctxwatch.output.report import cost_of
from ctxwatch.ui import text as tx


def call_costs(calls: Iterable[Call]) -> dict[int, float | None]:
    """Each call's estimated cost in USD by index (:func:`~ctxwatch.output.report.cost_of`: genai-prices, 0 for
    a refused request, ``None`` when it cannot be priced).  A catalogue lookup per call (~0.1 ms): run in the
    feed's thread, not the UI's."""
    out: dict[int, float | None] = {}
    for c in calls:
        cost = cost_of(c)
        out[c.index] = float(cost) if cost is not None else None
    return out


def dollars(cost: float | None) -> str:
    """``$13.27``; ``$0.0952`` below a dollar (four decimals: one call costs cents or less), ``<$0.0001``
    below that (a quota probe), never a ``$0.0000`` that reads as free; ``?`` unknown."""
    if cost is None:
        return "?"
    if 0 < cost < 0.0001:
        return "<$0.0001"
    return f"${cost:,.2f}" if cost >= 1 or cost == 0 else f"${cost:.4f}"


@dataclass(slots=True)
class Totals:
    """The log's totals, kept as calls arrive and are replaced (:meth:`take`, :meth:`drop`): calls, cost of the
    priced ones and how many could not be priced, and cache reads and writes (tokens), parts of the prompt:
    summed, as ``report`` sums them, over the calls that report a prompt (``prompted``), with how many of
    those report each part."""

    calls: int = 0
    cost: float = 0.0
    unpriced: int = 0
    prompted: int = 0
    cache_read: int = 0
    with_read: int = 0
    cache_write: int = 0
    with_write: int = 0

    def take(self, call: Call, cost: float | None, sign: int = 1) -> None:
        """Count ``call`` (priced at ``cost``) in the totals; ``sign`` -1 takes it out again (a replaced call)."""
        self.calls += sign
        if cost is None:
            self.unpriced += sign
        else:
            self.cost += sign * cost
        u = call.usage
        if u is None or not u.prompt_total:
            return  # (no prompt size: its parts are not summed, see report's totals)
        self.prompted += sign
        if u.cache_read is not None:
            self.cache_read += sign * u.cache_read
            self.with_read += sign
        if u.cache_write is not None:
            self.cache_write += sign * u.cache_write
            self.with_write += sign

    def cost_text(self) -> str:
        """``$13.27``; ``$? ($12.34 for 130 of 139 calls)`` when some calls cannot be priced; ``$?`` for none."""
        if not self.unpriced:
            return dollars(self.cost)
        priced = self.calls - self.unpriced
        return f"$? ({dollars(self.cost)} for {priced:,} of {self.calls:,} calls)" if priced else "$?"

    def cache_text(self) -> str:
        """``cache r 9.2M w 410k`` (reads, writes), each ``?`` when no call reports it (and ``of N calls`` when
        only some of the calls that report a prompt do, as ``report`` says it)."""
        def part(total: int, n: int) -> str:
            if not n:
                return "?"
            return tx.short_tokens(total) + ("" if n == self.prompted else f" ({n:,} of {self.prompted:,} calls)")

        return f"cache r {part(self.cache_read, self.with_read)} w {part(self.cache_write, self.with_write)}"


def call_cache_text(call: Call) -> str:
    """``cache r 98,729 w 7,330`` (reads, writes) of one call (``?`` for what its log does not report)."""
    u = call.usage
    read = tx.tokens(u.cache_read) if u is not None else "?"
    write = tx.tokens(u.cache_write) if u is not None else "?"
    return f"cache r {read} w {write}"


def cost_segment(call: Call | None, cost: float | None, totals: Totals) -> Text:
    """The status line's cost segment where the screen has no row for the cost line: ``log $9.53 · #139
    $0.0952`` (the cache reads and writes are in the cost line and the call's detail)."""
    if call is None or not totals.calls:
        return Text()
    return Text(f"log {totals.cost_text()} · #{call.index + 1} {call_cost_text(call, cost)}")


def call_cost_text(call: Call, cost: float | None) -> str:
    """The call's cost: :func:`dollars`, ``$0 (not billed)`` for a refused request."""
    return "$0 (not billed)" if cost == 0 and call.usage is None else dollars(cost)


def cost_line(call: Call | None, cost: float | None, totals: Totals, width: int) -> Text:
    """The line under the bar: the selected call's cost and cache reads / writes, then the log's, cut to
    ``width`` cells; nothing before the first call."""
    out = Text()
    if call is None or not totals.calls:
        return out
    out.append(f"#{call.index + 1} ", "bold")
    out.append(call_cost_text(call, cost))
    out.append(f" · {call_cache_text(call)}", "dim")
    out.append(" │ ")
    out.append("log ", "bold")
    out.append(totals.cost_text())
    out.append(f" · {totals.cache_text()}", "dim")
    if out.cell_len > width:
        out.truncate(width, overflow="ellipsis")
    return out
