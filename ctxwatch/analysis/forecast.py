"""The forecast: when the prompt of the current episode reaches the trigger, the budget and the window, from the
Theil-Sen slope of its recent plausible calls; and which of the log's calls it counts (:class:`Scope`).

Calls that do not build on each other get none: batch requests, requests with their own ``custom_id``, and
episodes of independent requests (:func:`independent`).
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ctxwatch.analysis.flags import call_number, duration, int_or_none, num, rounded
from ctxwatch.analysis.trend import MIN_FORECAST_CALLS, Limits, calls_to, rising, theil_sen
from ctxwatch.config import Settings
from ctxwatch.model import Call, Src, own_request


@dataclass(slots=True)
class Forecast:
    """When the prompt reaches each threshold, from its recent growth.

    ``calls_to_*`` are further calls (0 = already at or above; ``None`` = unknown: not enough data, window
    unknown, or the prompt is not growing); ``seconds_to_*`` are those calls times the median seconds per call
    (``None`` without timestamps).  Thresholds in tokens: trigger = ``trigger x budget``, budget =
    ``budget_fraction x window``, window = ``window - reserve`` (the window and reserve of the call the forecast
    starts from: the episode's last plausible call, else the last call).

    Attributes:
        slope_tokens_per_call: Theil-Sen slope of the occupancy over the last
            :data:`~ctxwatch.analysis.trend.FORECAST_POINTS` plausible calls of the episode (tokens per call).
        seconds_per_call: median interval between those calls, in seconds.
        basis: how the slope was obtained (one line).
        note: why something is unknown, or ``None``.
        enough_data: at least :data:`~ctxwatch.analysis.trend.MIN_FORECAST_CALLS` plausible calls since the
            last reset.
        at_call: index of the last plausible call (the forecast starts from its occupancy); the JSON gives its
            ``#N`` as ``at_call_number`` too.
        since_call: index of the first call of the episode (``since_call_number``: its ``#N``).
        occupancy_tokens: the last plausible occupancy.
        trigger_tokens / budget_tokens / window_limit_tokens / window_tokens: the thresholds.
    """

    calls_to_trigger: int | None = None
    seconds_to_trigger: float | None = None
    calls_to_budget: int | None = None
    seconds_to_budget: float | None = None
    calls_to_window: int | None = None
    seconds_to_window: float | None = None
    slope_tokens_per_call: float | None = None
    seconds_per_call: float | None = None
    basis: str = ""
    note: str | None = "no calls"
    enough_data: bool = False
    at_call: int | None = None
    since_call: int | None = None
    occupancy_tokens: int | None = None
    trigger_tokens: int | None = None
    budget_tokens: int | None = None
    window_limit_tokens: int | None = None
    window_tokens: int | None = None

    def text(self) -> str:
        """``"12 calls / ~6 min to trigger · budget crossed · 40 calls / ~20 min to window"``, or the note."""
        if not self.enough_data or self.slope_tokens_per_call is None:
            return self.note or "not enough data"
        rows = (("trigger", self.calls_to_trigger, self.seconds_to_trigger),
                ("budget", self.calls_to_budget, self.seconds_to_budget),
                ("window", self.calls_to_window, self.seconds_to_window))
        crossed = [name for name, n, _ in rows if n == 0]
        done = f"; {', '.join(crossed)} crossed" if crossed else ""
        if self.window_tokens is None:
            slope = self.slope_tokens_per_call
            trend = f"growing ~{num(slope)}" if slope > 0 else f"shrinking ~{num(-slope)}" if slope < 0 else "flat, 0"
            return f"window unknown: pass --window to forecast ({trend} tokens/call)"
        if self.slope_tokens_per_call <= 0:
            return f"prompt not growing ({num(self.slope_tokens_per_call)} tokens/call){done}"
        parts = []
        for name, n, s in rows:
            if n is None:
                parts.append(f"{name} unknown")
            elif n == 0:
                parts.append(f"{name} crossed")
            else:
                # (calls logged within the same second, a scripted loop: "~0 s" would say nothing)
                t = "" if s is None else f" / ~{duration(s)}" if s >= 0.5 else " / under 1 s"
                parts.append(f"{n:,} call{'s' if n != 1 else ''}{t} to {name}")
        out = " · ".join(parts)
        note = "; ".join(x for x in (self.note or "").split("; ") if x and not x.startswith(("window unknown",
                                                                                              "prompt not growing")))
        return f"{out} ({note})" if note else out

    def to_json(self) -> dict[str, Any]:
        """The ``forecast`` object of ``report --json``: the ``calls_to_*`` / ``seconds_to_*`` keys first, then
        the details and ``text``."""
        return {
            "calls_to_trigger": self.calls_to_trigger, "seconds_to_trigger": rounded(self.seconds_to_trigger),
            "calls_to_budget": self.calls_to_budget, "seconds_to_budget": rounded(self.seconds_to_budget),
            "calls_to_window": self.calls_to_window, "seconds_to_window": rounded(self.seconds_to_window),
            "slope_tokens_per_call": rounded(self.slope_tokens_per_call), "basis": self.basis, "note": self.note,
            "enough_data": self.enough_data, "seconds_per_call": rounded(self.seconds_per_call),
            "at_call": self.at_call, "at_call_number": call_number(self.at_call), "since_call": self.since_call,
            "since_call_number": call_number(self.since_call), "occupancy_tokens": self.occupancy_tokens,
            "trigger_tokens": self.trigger_tokens, "budget_tokens": self.budget_tokens,
            "window_limit_tokens": self.window_limit_tokens, "window_tokens": self.window_tokens,
            "text": self.text(),
        }


@dataclass(frozen=True, slots=True)
class Scope:
    """Which of the log's calls a forecast counts, so that its notes can say so.

    The forecast follows one context at a time, and within a context one stream (model, or session and model)
    at a time (:mod:`ctxwatch.analysis.context`), so its call counts are of that stream, not of the log.

    Attributes:
        model: the stream's model, named when the context has calls on other models too.
        context: the context, named when the log has calls in other contexts too.
        elsewhere: ``(calls, where)`` of the calls left out, e.g. ``(7, "on 7 other models")``,
            ``(1, "in context scorer:model_graded_fact")``.
        whose: whose other calls those are: ``the log's``, or ``the session's`` for one session of a folder.
        session: the stream's session, named when sessions interleave in the context.
    """

    model: str | None = None
    context: str | None = None
    elsewhere: tuple[tuple[int, str], ...] = ()
    whose: str = "the log's"
    session: str | None = None

    def label(self) -> str:
        """`` in context main on o3-mini``: the calls counted (empty when they are all of the log's)."""
        out = f" in context {self.context}" if self.context is not None else ""
        out += f" of session {self.session}" if self.session is not None else ""
        return out + (f" on {self.model}" if self.model is not None else "")

    def left_out(self) -> str:
        """``; each context and each model is forecast on its own calls: the log's other 7 calls are on 7 other
        models`` (empty when no call is left out)."""
        total = sum(n for n, _ in self.elsewhere)
        if not total:
            return ""
        parts = [f"{n:,} {w}" if len(self.elsewhere) > 1 else w for n, w in self.elsewhere]
        where = parts[-1] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"
        other = f"other call is {where}" if total == 1 else f"other {total:,} calls are {where}"
        each = "each context, session and model" if self.session is not None else "each context and each model"
        return f"; {each} is forecast on its own calls: {self.whose} {other}"


#: At most this many other contexts are named in a forecast note; the rest are counted together (a Claude Code
#: session can have dozens of subagent contexts, and the note must fit the dashboard's 300-character line).
SCOPE_CONTEXTS_NAMED = 3


class ContextCounts:
    """Calls per context of a log (contexts in the log's order), to say which calls a context's forecast left
    out in O(:data:`SCOPE_CONTEXTS_NAMED`) per context: a Claude Code folder can hold thousands of subagent
    contexts, and the dashboard analyses every context after each new call."""

    def __init__(self, counts: Mapping[str, int]) -> None:
        self.items = [(ctx, n) for ctx, n in counts.items() if n]
        self.by_context = dict(self.items)
        self.total = sum(n for _, n in self.items)

    def elsewhere(self, context: str) -> list[tuple[int, str]]:
        """``(calls, "in context X")`` for the first :data:`SCOPE_CONTEXTS_NAMED` contexts other than
        ``context``, then one entry for the rest."""
        own = self.by_context.get(context, 0)
        out = [(n, f"in context {ctx}") for ctx, n in self.items[:SCOPE_CONTEXTS_NAMED + 1]
               if ctx != context][:SCOPE_CONTEXTS_NAMED]
        rest_contexts = len(self.items) - len(out) - (1 if own else 0)
        if rest_contexts > 0:
            rest = self.total - own - sum(n for n, _ in out)
            out.append((rest, f"in {rest_contexts} more context{'s' if rest_contexts != 1 else ''}"))
        return out


#: Roles whose message in a request's history carries an earlier answer: the model's own turn, a tool result.
ANSWER_ROLES = frozenset({"assistant", "tool"})


def independent(calls: Sequence[Call], occupancies: Sequence[int]) -> bool:
    """True when ``calls`` (an episode of one stream, in order) do not build on each other, so a forecast of
    their growth means nothing: at least two calls, and

    * each logs its whole history (``history_src`` estimated: the messages are in the log, not inferred);
    * no message of any call carries an earlier answer: no assistant or tool message, no tool call or tool
      result (a conversation re-sends the model's earlier turns; a request that holds none of them cannot be
      the next turn of another);
    * no call re-sends a message of the call before it (equal content hashes): the same question asked again
      is a retry, not a fresh request;
    * the prompt shows no rising trend (:func:`rising`, on ``occupancies``, the episode's recent plausible
      prompt sizes): an agent that pastes its transcript into one ever-longer user message, or whose prompt
      grows by content the log does not show (the reported prompt rises while each logged request holds one
      new user message), sends only user messages too, but builds on something all the same, while
      independent requests go up and down.

    This is the history-based counterpart of the batch rule (each ``custom_id`` its own conversation): what
    Claude Code's helper calls look like (claude-trace's "side" context: a title, a topic verb, the paths a
    command touched, each one user message under its own system prompt).
    """
    if len(calls) < 2:
        return False
    prev: set[int] | None = None
    for c in calls:
        if not c.messages or c.history_src != Src.ESTIMATED:
            return False
        keys: set[int] = set()
        for m in c.messages:
            if m.role in ANSWER_ROLES or m.tool_call_ids or m.tool_result_ids:
                return False
            keys.add(m.content_key)
        if prev is not None and not keys.isdisjoint(prev):
            return False
        prev = keys
    return not rising(occupancies)


def pending_forecast(fc: Forecast, cs: list[Call], marker: Mapping[str, Any]) -> Forecast:
    """The forecast right after a compaction ``marker`` whose next call is not logged yet: nothing to project
    from, so a note, the marker's ``post_tokens`` as the occupancy, and ``fc``'s thresholds."""
    post = int_or_none(marker.get("post_tokens"))
    after = f"after #{cs[-1].index + 1}" if cs else "at the start"
    return Forecast(
        note=f"not enough data: compacted {after}"
             + (f" (postTokens {num(post)})" if post is not None else "") + "; no call since",
        basis="none", occupancy_tokens=post, since_call=None, at_call=None, trigger_tokens=fc.trigger_tokens,
        budget_tokens=fc.budget_tokens, window_limit_tokens=fc.window_limit_tokens, window_tokens=fc.window_tokens)


def episode_forecast(cs: list[Call], st: Settings, points: list[tuple[int, int]], times: list[float],
                     ep_start: int, last_plaus: tuple[int, Call, int] | None, scope: Scope) -> Forecast:
    """The forecast of stream ``cs`` from its last episode (:class:`~ctxwatch.analysis.episodes.Episodes`):
    ``points`` its ``(position, occupancy)`` points, ``times`` its timestamps (seconds), ``ep_start`` the
    position of its first call, ``last_plaus`` the ``(position, call, occupancy)`` of the last plausible call.
    The notes name the calls counted (``scope``: a context, a model) when they are not all of the log's."""
    if not cs:
        return Forecast(note="no calls")
    last = cs[-1]
    # The thresholds are those of the call the forecast starts from (the last plausible one of the episode):
    # its window with its own reserve.  The last call's reserve could belong to another window (an implausible
    # record that states one: 15 % of 570,000 taken from a 272,000-token window).
    ref = last_plaus[1] if last_plaus is not None and last_plaus[0] >= ep_start and last_plaus[1].window else last
    lim = Limits.of(ref, st)
    window = lim.window
    fc = Forecast(since_call=cs[ep_start].index, window_tokens=window, note=None)
    if window:
        fc.trigger_tokens, fc.budget_tokens, fc.window_limit_tokens = lim.trigger, lim.budget, lim.limit
    label = scope.label()
    start = cs[ep_start].index + 1
    # (the stream's first call is the log's only when it is #1: a context or model may start later)
    since = ("the start of the log" if start == 1 else
             f"its first call, #{start}" if ep_start == 0 and label else f"#{start}")
    if last_plaus is not None:
        fc.at_call, fc.occupancy_tokens = last_plaus[1].index, last_plaus[2]
    if (own := own_request(last)) is not None:
        # Batch requests are separate conversations (each its own episode): nothing grows from one to the next.
        # (A custom_id outside a batch file, as in the saved Gemini sample, marks separate requests all the same.)
        what = "batch requests" if own == "batch request" else "requests with their own custom_id"
        fc.note = f"none: {what} are independent conversations, nothing grows from one to the next"
        fc.basis = "none"
        return fc
    episode = cs[ep_start:]
    if independent(episode, [occ for _, occ in points]):
        fc.note = (f"none: the {len(episode):,} calls{label}{'' if ep_start == 0 else ' since ' + since} are "
                   "independent requests (each sends only new user messages: no earlier answer, nothing of the call "
                   "before it), nothing grows from one to the next")
        fc.basis = "none"
        return fc
    if len(points) < MIN_FORECAST_CALLS:
        # (an implausible report is a call with a reported size that is not counted here: say why)
        odd = sum(c.prompt_implausible for c in cs[ep_start:])
        fc.note = (f"not enough data: {len(points)} call{'s' if len(points) != 1 else ''}{label} with a known prompt "
                   f"size since {since} (need {MIN_FORECAST_CALLS}"
                   + (f"; {odd} implausible report{'s' if odd != 1 else ''} left out" if odd else "")
                   + f"{scope.left_out()})")
        fc.basis = "none"
        return fc
    fc.enough_data = True
    slope = theil_sen(points)
    fc.slope_tokens_per_call = slope
    first, lastp = cs[points[0][0]].index, cs[points[-1][0]].index
    fc.basis = (f"Theil-Sen slope over the last {len(points)} calls{label} (#{first + 1}–#{lastp + 1}) "
                f"since {since}")
    gaps = [b - a for a, b in itertools.pairwise(times) if b > a]
    fc.seconds_per_call = statistics.median(gaps) if gaps else None
    occ = points[-1][1]
    # (a context with calls on several models is forecast on one of them: the text names it, as the basis does)
    notes = [f"calls on {scope.model}{scope.left_out()}"] if scope.model is not None else []
    if not window:
        notes.append("window unknown (pass --window)")
    if slope is None or slope <= 0:
        notes.append(f"prompt not growing ({num(slope)} tokens/call)")
    if fc.seconds_per_call is None:
        # (calls that all share one timestamp give no time between calls either, but they have timestamps)
        notes.append("no time between the calls: they share one timestamp" if len(times) > 1 else "no timestamps")
    for name, thr in (("trigger", fc.trigger_tokens), ("budget", fc.budget_tokens),
                      ("window", fc.window_limit_tokens)):
        k = calls_to(occ, thr, slope)
        secs = k * fc.seconds_per_call if k is not None and fc.seconds_per_call is not None else None
        setattr(fc, f"calls_to_{name}", k)
        setattr(fc, f"seconds_to_{name}", secs)
    fc.note = "; ".join(notes) or None
    return fc
