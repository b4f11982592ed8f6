"""The ``sessions`` of ``report --json``: per-session sums of reported usage, newest session first.

They are added up a call at a time (:meth:`SessionTotals.add`), or a folder's file at once: the worker that read
the file added up its calls (:func:`ctxwatch.output.chunks.call_pieces`), and the totals of the run take those
sums whole (:meth:`SessionTotals.merge`) where the run holds that file's calls unchanged, one after the other.
Both ways give the same document (the costs are added in call order, each sum rounded as it is made).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from ctxwatch.model import Call, Span, span_with
from ctxwatch.output.fields import instance_of, iso

#: The per-session sums a call adds to, each ``None`` until a call reports it (unknown, never 0).
_SUMMED = ("input_tokens", "input_uncached_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")


class SessionTotals:
    """Per-session sums in the making: :meth:`add` a call, :meth:`merge` the totals of calls that follow, then
    :meth:`result`.  Besides each session's object (its keys in the document's order) it keeps each session's
    calls' costs in USD in call order (summed at the end, as the document's rounding needs), its first and last
    timestamps (epoch seconds) and its rank (:func:`ctxwatch.model.session_ranks`: newest last timestamp, then
    the last position among the calls added)."""

    __slots__ = ("costs", "count", "out", "ranks", "times")

    def __init__(self) -> None:
        self.out: dict[str | None, dict[str, Any]] = {}
        self.costs: dict[str | None, list[float | None]] = {}
        self.times: dict[str | None, Span] = {}
        self.ranks: dict[str | None, tuple[float, int]] = {}
        self.count = 0  # (calls added so far: the position of the next one)

    def add(self, c: Call, cost: Decimal | float | None) -> None:
        """Add call ``c``, whose cost in USD is ``cost`` (``None``: it could not be priced)."""
        s = self.out.get(c.session)
        if s is None:
            s = self.out[c.session] = _new(c.session)
            self.costs[c.session] = []
        s["calls"] += 1
        if (inst := instance_of(c)) is not None and inst not in s.setdefault("instances", []):
            s["instances"].append(inst)
        if c.source.path not in s["files"]:
            s["files"].append(c.source.path)
        if c.context not in s["contexts"]:
            s["contexts"].append(c.context)
        ts = c.timestamp
        if (span := span_with(self.times.get(c.session), ts)) is not None:
            self.times[c.session] = span
        u = c.usage
        if u:
            s["calls_with_usage"] += 1
            # (a reported prompt of 0 is no prompt size, see Call.report_implausible: not summed as one)
            prompt = u.prompt_total if u.prompt_total else None
            # (the prompt's parts are summed over the calls whose prompt is known, so that they add up to
            # input_tokens: a call whose prompt a damaged part made unknown adds none of its parts)
            if prompt is not None:
                s["input_tokens"] = (s["input_tokens"] or 0) + prompt
                if (v := u.input_uncached) is not None:
                    s["input_uncached_tokens"] = (s["input_uncached_tokens"] or 0) + v
                if (v := u.cache_read) is not None:
                    s["cache_read_tokens"] = (s["cache_read_tokens"] or 0) + v
                if (v := u.cache_write) is not None:
                    s["cache_write_tokens"] = (s["cache_write_tokens"] or 0) + v
            if (v := u.output) is not None:
                s["output_tokens"] = (s["output_tokens"] or 0) + v
        # (Call.prompt_tokens is None for an implausible report: it is summed above, but no peak occupancy)
        report_implausible, implausible, p = c.prompt_judged()
        s["implausible_prompts"] += implausible
        if c.context == "main" and p is not None and (s["peak_prompt_tokens"] is None or p > s["peak_prompt_tokens"]):
            s["peak_prompt_tokens"] = p
            # (Call.prompt_tokens takes the report when it is plausible, else the call's own estimate)
            s["peak_prompt_source"] = "reported" if c.prompt_reported and not report_implausible else "estimated"
        self.costs[c.session].append(None if cost is None else float(cost))
        prev = self.ranks.get(c.session)
        latest = ts if ts is not None else -math.inf
        self.ranks[c.session] = (latest if prev is None else max(prev[0], latest), self.count)
        self.count += 1

    def merge(self, later: SessionTotals) -> None:
        """Add the totals of calls that follow those added so far (``later`` is left as it was)."""
        for key, theirs in later.out.items():
            s = self.out.get(key)
            if s is None:
                self.out[key] = {k: list(v) if isinstance(v, list) else v for k, v in theirs.items()}
                self.costs[key] = list(later.costs[key])
            else:
                _merge_one(s, theirs)
                self.costs[key].extend(later.costs[key])
            if (span := later.times.get(key)) is not None:
                # (a span is widened to both ends of the other: the same rule as one call at a time)
                self.times[key] = span_with(span_with(self.times.get(key), span[0]), span[1]) or span
            latest, pos = later.ranks[key]
            prev = self.ranks.get(key)
            self.ranks[key] = (latest if prev is None else max(prev[0], latest), self.count + pos)
        self.count += later.count

    def result(self, calls: Sequence[Call]) -> list[dict[str, Any]]:
        """The document's ``sessions`` (:func:`session_totals`); ``calls``: every call added, in order (for the
        run totals of a session none of whose calls reports usage)."""
        for key, s in self.out.items():
            total: float | None = 0.0
            for cost in self.costs[key]:
                # (rounded to 1e-12 dollars as each is added: float sums of Decimal costs print as
                # 2.3195675000000002)
                total = None if cost is None or total is None else round(total + cost, 12)
            s["cost_usd"] = total
            if (span := self.times.get(key)) is not None:
                s["first_timestamp"], s["last_timestamp"] = iso(span[0]), iso(span[1])
            if not s["calls_with_usage"]:
                s["run_totals"] = _run_totals([c for c in calls if c.session == key])
        return sorted(self.out.values(), key=lambda s: self.ranks[s["session"]], reverse=True)


def _new(session: str | None) -> dict[str, Any]:
    """A session's object before its first call is added, its keys in the document's order."""
    return {"session": session, "files": [], "first_timestamp": None, "last_timestamp": None, "calls": 0,
            "contexts": [], "calls_with_usage": 0, "input_tokens": None, "input_uncached_tokens": None,
            "output_tokens": None, "cache_read_tokens": None, "cache_write_tokens": None,
            "peak_prompt_tokens": None, "peak_prompt_source": None, "cost_usd": 0.0, "run_totals": None,
            "implausible_prompts": 0}


def _merge_one(s: dict[str, Any], theirs: dict[str, Any]) -> None:
    """Add ``theirs``, one session's sums over calls that follow, to ``s``, its sums so far: as adding those calls
    one by one would (lists in first-seen order, the first of equal peaks kept)."""
    s["calls"] += theirs["calls"]
    s["calls_with_usage"] += theirs["calls_with_usage"]
    s["implausible_prompts"] += theirs["implausible_prompts"]
    for name in ("instances", "files", "contexts"):
        if name in theirs:
            mine = s.setdefault(name, [])
            mine.extend(v for v in theirs[name] if v not in mine)
    for name in _SUMMED:
        if theirs[name] is not None:
            s[name] = (s[name] or 0) + theirs[name]
    peak = theirs["peak_prompt_tokens"]
    if peak is not None and (s["peak_prompt_tokens"] is None or peak > s["peak_prompt_tokens"]):
        s["peak_prompt_tokens"], s["peak_prompt_source"] = peak, theirs["peak_prompt_source"]


def session_totals(calls: Sequence[Call], costs: Sequence[Decimal | float | None]) -> list[dict[str, Any]]:
    """Per-session sums of reported usage (each response once; calls are already deduplicated); ``costs``: each
    call's cost in USD (:func:`ctxwatch.output.report.cost_of`, or that as a float).

    Returns one object per session, **newest first** (by its last call's timestamp): ``session``,
    ``files`` (the logs it was read from), ``first_timestamp``/``last_timestamp`` (ISO-8601), ``calls``,
    ``contexts`` (main and subagent contexts seen), ``calls_with_usage`` (calls whose log reports usage),
    ``input_tokens`` (whole prompts, cache reads and writes included: OpenAI's ``prompt_tokens``),
    ``input_uncached_tokens`` (neither read from nor written to the cache: Anthropic's and ccusage's
    ``input_tokens``), ``output_tokens``, ``cache_read_tokens``,
    ``cache_write_tokens`` (each the sum over the calls that report it, the prompt's three parts over the calls
    that report a prompt, so that they add up to it; ``null`` when none does: unknown, never 0),
    ``peak_prompt_tokens`` (main context: the largest plausible prompt, :attr:`Call.prompt_tokens`; an
    implausible report is no occupancy), ``peak_prompt_source`` (``reported``, or ``estimated`` when the peak
    call reports no prompt and its size is ctxwatch's count: an estimate is labelled as one; ``null`` with no
    peak), ``cost_usd`` (``null`` when any call of the session could not be
    priced), ``implausible_prompts`` (calls whose reported prompt is implausible,
    :attr:`Call.prompt_implausible`: one above the window is still in the token sums and the cost as
    reported, since that is what the provider counted; a reported 0 is in neither), ``run_totals`` (the log's own
    totals for the whole run when no call reports usage, see :func:`_run_totals`; else ``null``), and
    ``instances`` (the agent instances its calls name, :func:`~ctxwatch.output.fields.instance_of`; only for a
    log that names them).
    """
    totals = SessionTotals()
    for c, cost in zip(calls, costs, strict=True):
        totals.add(c, cost)
    return totals.result(calls)


def _run_totals(calls: list[Call]) -> dict[str, Any] | None:
    """A session's totals as its log states them for the whole run when no call reports its own usage
    (SWE-agent's ``info.model_stats``: ``tokens_sent``, ``tokens_received``, ``instance_cost``, ``api_calls``),
    or ``None``.  Kept apart from the per-call sums, which stay ``null``: the split over calls is unknown."""
    stats = next((c.provenance.cumulative for c in calls if isinstance(c.provenance.cumulative, dict)), None)
    if stats is None or "tokens_sent" not in stats:
        return None

    from ctxwatch.formats import count_or_none

    cost = stats.get("instance_cost")
    return {"input_tokens": count_or_none(stats.get("tokens_sent")),
            "output_tokens": count_or_none(stats.get("tokens_received")),
            "cost_usd": float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None,
            "api_calls": count_or_none(stats.get("api_calls")), "source": "model_stats"}


class RunSessions:
    """A run's session totals added up as its calls are written, in the run's order: the calls of one file that
    the run holds whole, unchanged and one after the other are taken as the file's worker added them up (the
    :class:`SessionTotals` kept with the file's pieces), any other call one by one."""

    __slots__ = ("_held", "_next", "_part", "totals")

    def __init__(self) -> None:
        self.totals = SessionTotals()
        self._part: SessionTotals | None = None  # (the file being taken whole, its next call's place, its calls)
        self._next = 0
        self._held: list[tuple[Call, float | None]] = []

    def add(self, call: Call, cost: Decimal | float | None, part: SessionTotals | None = None, i: int = 0,
            n: int = 0) -> None:
        """Add ``call`` (its cost in USD ``cost``); ``part``: the totals of the ``n`` calls of its file, the
        ``i``-th of which it is, when the run holds it as that file's worker added it up."""
        if self._part is not None:
            if part is self._part and i == self._next:
                self._held.append((call, None if cost is None else float(cost)))
                self._next += 1
                if self._next == n:
                    self.totals.merge(part)
                    self._part, self._held = None, []
                return
            self._one_by_one()
        if part is not None and i == 0:
            if n == 1:
                self.totals.merge(part)
                return
            self._part, self._next, self._held = part, 1, [(call, None if cost is None else float(cost))]
            return
        self.totals.add(call, cost)

    def add_file(self, part: SessionTotals) -> None:
        """Add a file's calls held whole by the run, in its order, as its worker added them up (``part``): what
        :meth:`add` of each of them in turn gives."""
        self._one_by_one()
        self.totals.merge(part)

    def _one_by_one(self) -> None:
        """Add the calls of a file begun whole but not held whole by the run (a copy kept in another file), one
        by one."""
        for call, cost in self._held:
            self.totals.add(call, cost)
        self._part, self._held = None, []

    def result(self, calls: Sequence[Call]) -> list[dict[str, Any]]:
        """:meth:`SessionTotals.result` of every call added (``calls``: those, in order)."""
        self._one_by_one()
        return self.totals.result(calls)
