"""Episodes: where a stream's history starts over (file reset, new session, separate request) or was compacted
(a compaction marker, or a sharp drop that is not a one-call dip or spike), and the ``compaction`` flags.

The thresholds and the forecast work per episode: after a compaction the slope starts again from the calls
after it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Any

from ctxwatch.analysis.flags import FlagSink, int_or_none, num, pct
from ctxwatch.analysis.trend import FORECAST_POINTS
from ctxwatch.model import Call, own_request, separate_requests

#: A history (or prompt, when the history is not known) shrinking by a quarter or more between consecutive
#: calls is a compaction or truncation: normal turns only append; Claude Code and Codex compactions free
#: 70-95 % (the Claude Code sample: 164,831 -> 36,081 tokens).
COMPACTION_DROP_FRACTION = 0.25
#: ...and by at least this many tokens, so that small prompts that lose one short message are not compactions.
COMPACTION_MIN_TOKENS = 1000
#: An automatic compaction fires near the end of the window (Claude Code and Codex auto-compact at roughly
#: 80-95 % of it).  One that fired below half of the window says the window in use was smaller than the one
#: we resolved (e.g. the catalogue's 1M-token window for a model run with the default 200k one).
AUTO_COMPACT_MIN_FRACTION = 0.5


def reset_reason(cs: list[Call], pos: int, reset_set: set[int]) -> str | None:
    """Why the history starts over at ``cs[pos]``, or ``None``: a file reset (``reset_set``: the indexes of
    ``Run.resets``), a new session id, a log that resumes mid-session in the next file, or a separate request
    (a batch line, or its own ``custom_id``: :func:`ctxwatch.model.separate_requests`)."""
    if pos == 0:
        return None
    c, prev = cs[pos], cs[pos - 1]
    if c.index in reset_set:
        return f"file reset before #{c.index + 1}"
    if c.session and prev.session and c.session != prev.session:
        return f"new session at #{c.index + 1}"
    if c.provenance.history_cut and c.source.path != prev.source.path:
        # The next file starts mid-session (an excerpt, a slice of a longer log): whatever lies between the
        # two is not in the logs, so growth measured across the gap says nothing.
        return f"log resumes mid-session at #{c.index + 1}"
    if separate_requests(prev, c):
        # Batch requests are independent: each one is its own conversation, not the next turn of the last.
        if own_request(c) == "batch request":
            return f"separate batch request at #{c.index + 1}"
        return f"separate request (its own custom_id) at #{c.index + 1}"
    return None


def _shrinks(a: Call, a_occ: int, b: Call, b_occ: int) -> bool:
    """True when ``b`` holds sharply less than ``a``: by :data:`COMPACTION_DROP_FRACTION` and
    :data:`COMPACTION_MIN_TOKENS`, measured on the history when both calls know it, else on the prompt.

    A history that shrank inside a prompt that did not is no compaction (nothing was freed): the floor
    changed, or one of the two histories is only the visible part of a log that starts mid-session."""
    if a.history_tokens is not None and b.history_tokens is not None:
        if b_occ >= a_occ:
            return False
        before, after = a.history_tokens, b.history_tokens
    else:
        before, after = a_occ, b_occ
    shrink = before - after
    return shrink >= COMPACTION_MIN_TOKENS and shrink >= COMPACTION_DROP_FRACTION * before


#: A call is "back" after a one-call dip when it holds at least this fraction of the level before the dip.
#: History only grows between compactions, so after a real dip (a retry or side call with a short prompt)
#: the next call is at or above the earlier level; 5 % absorbs estimate noise.  A compaction followed by
#: fast growth stays below it.
DIP_RETURN_FRACTION = 0.95


def _back(a: Call, a_occ: int, b: Call, b_occ: int) -> bool:
    """True when ``b`` is back at ``a``'s level (see :data:`DIP_RETURN_FRACTION`), on history when known."""
    if a.history_tokens is not None and b.history_tokens is not None:
        return b.history_tokens >= DIP_RETURN_FRACTION * a.history_tokens
    return b_occ >= DIP_RETURN_FRACTION * a_occ


def drops_and_outliers(cs: list[Call], occs: list[int | None], reset_set: set[int],
                       reasons: Sequence[str | None] | None = None) -> tuple[set[int], set[int]]:
    """Positions where the history shrank sharply (compactions without a marker), and one-call outliers.

    A sharp drop at ``p`` (against the last representative call ``q``) is **not** a compaction when the prompt
    is back the next call (``p`` was a one-call dip: a retry or side request with a short prompt), or when ``p``
    is back at the level before ``q`` (``q`` was a one-call spike).  Outliers are left out of the forecast; they
    still count for the thresholds of their own call.  Drops across a file reset or a session change are
    resets, not compactions.  A drop on the last call is taken as a compaction (no next call to say otherwise).
    ``reasons``: :func:`reset_reason` of each position, when already worked out.
    """
    if reasons is None:
        reasons = [reset_reason(cs, i, reset_set) for i in range(len(cs))]
    known = [p for p, o in enumerate(occs) if o is not None]
    # (where the history starts over: at a compaction marker or a reset)
    restarts = [isinstance(c.compaction, dict) or r is not None for c, r in zip(cs, reasons, strict=True)]
    drops: set[int] = set()
    outliers: set[int] = set()
    base: list[int] = []  # representative positions so far
    for k, p in enumerate(known):
        # (a marker or a reset on a call of unknown occupancy since the last known one, e.g. an implausible first
        # call after a compaction, explains this call's drop: it is that compaction, not another one)
        since = known[k - 1] + 1 if k else 0
        if not base or (restarts[p] if since == p else any(restarts[since:p + 1])):
            base.append(p)
            continue
        q = base[-1]
        o = occs
        if not _shrinks(cs[q], o[q] or 0, cs[p], o[p] or 0):
            base.append(p)
            continue
        r = known[k + 1] if k + 1 < len(known) else None
        if r is not None and _back(cs[q], o[q] or 0, cs[r], o[r] or 0):
            outliers.add(p)  # a dip: the next call is back at the level before it
            continue
        if len(base) >= 2 and _back(cs[base[-2]], o[base[-2]] or 0, cs[p], o[p] or 0):
            outliers.add(q)  # q was a spike: p is back where the run was before it
            base[-1] = p
            continue
        drops.add(p)
        base.append(p)
    return drops, outliers


class Episodes:
    """The episodes of one stream, and its ``compaction`` flags.

    An episode is the calls since the last reset (:func:`reset_reason`) or compaction (a ``Call.compaction``
    marker, or a drop of :func:`drops_and_outliers`).  Attributes, as of the call last stepped:

    * ``start``: position of the episode's first call;
    * ``points``: ``(position, occupancy)`` of its last :data:`~ctxwatch.analysis.trend.FORECAST_POINTS`
      plausible calls (one-call dips and spikes left out), which the slope is fitted on; ``times``: the
      timestamps of its last calls (seconds);
    * ``last_plausible``: ``(position, call, occupancy)`` of the stream's last plausible call (across episodes);
    * ``compacted``: the call follows a compaction.
    """

    def __init__(self, cs: list[Call], occs: list[int | None], reset_set: set[int], out: FlagSink) -> None:
        self.cs, self.occs, self.reset_set, self.out = cs, occs, reset_set, out
        # (why the history starts over at each call, asked for every call twice: worked out once)
        self.reasons = [reset_reason(cs, i, reset_set) for i in range(len(cs))]
        self.drops, self.outliers = drops_and_outliers(cs, occs, reset_set, self.reasons)
        self.start = 0
        self.points: deque[tuple[int, int]] = deque(maxlen=FORECAST_POINTS)
        self.times: deque[float] = deque(maxlen=FORECAST_POINTS)
        self.last_plausible: tuple[int, Call, int] | None = None
        self.compacted = False

    def step(self, pos: int, c: Call, occ: int | None) -> str | None:
        """Take call ``c`` at position ``pos`` (occupancy ``occ``): flag a compaction before it, start a new
        episode there if one starts, and add it to the episode.  Returns why a new episode starts at ``c``
        (``"compaction before #5"``, ``"new session at #5"``...), or ``None``."""
        boundary = self.reasons[pos]
        marker = c.compaction if isinstance(c.compaction, dict) else None
        self.compacted = marker is not None or pos in self.drops
        if self.compacted:
            self._flag_compaction(pos, c, occ, marker)
            boundary = boundary or f"compaction before #{c.index + 1}"
        if boundary is not None:
            self.points.clear()
            self.times.clear()
            self.start = pos
        if c.timestamp is not None:
            self.times.append(c.timestamp)
        if occ is not None and pos not in self.outliers:
            self.points.append((pos, occ))
            self.last_plausible = (pos, c, occ)
        return boundary

    def _flag_compaction(self, pos: int, c: Call, occ: int | None, marker: dict[str, Any] | None) -> None:
        cs, occs, n = self.cs, self.occs, len(self.cs)
        window = c.window
        lp = self.last_plausible
        before_occ = lp[2] if lp else None
        # The size after the compaction: this call's, else (its occupancy unknown, e.g. an implausible
        # report) the first call after it with one, before the next marker or reset.
        after, after_pos = occ, pos
        if after is None:
            after_pos = next((q for q in range(pos + 1, n) if occs[q] is not None or isinstance(
                cs[q].compaction, dict) or self.reasons[q] is not None), n)
            ok = after_pos < n and not isinstance(cs[after_pos].compaction, dict) \
                and self.reasons[after_pos] is None
            after = occs[after_pos] if ok else None
        freed = before_occ - after if before_occ is not None and after is not None else None
        pre = int_or_none(marker.get("pre_tokens")) if marker else None
        post = int_or_none(marker.get("post_tokens")) if marker else None
        freed_pre = pre - after if pre is not None and after is not None else None
        micro = bool(marker and marker.get("kind") == "microcompact_boundary")
        how = ("microcompaction marker in the log: old tool results cleared" if micro else
               "compaction marker in the log" if marker else "inferred: the history shrank, no marker in the log")
        # (a drop with no marker is an inference: say what else drops a prompt, and what the log shows of it)
        others: list[str] = []
        if not marker:
            prev = lp[1] if lp else None
            if prev is not None and prev.tools_key != c.tools_key:
                others.append("the tool list changed at this call")
            if prev is not None and prev.system_key != c.system_key:
                others.append("the system prompt changed at this call")
            others.append("a cleared context (/clear) or a new conversation in the same log would drop it too")
        at = f" at #{cs[after_pos].index + 1}, the first known size after it" \
            if after_pos != pos and after is not None else ""
        # ("log preTokens" only for a size the log states: Codex's is the previous call's, already "before")
        logged_pre = pre is not None and marker is not None and "pre_tokens_from" not in marker
        extra = f"; log preTokens {num(pre)}" if logged_pre else ""
        extra += f", postTokens {num(post)}" if post is not None else ""
        saved = int_or_none(marker.get("tokens_saved")) if marker else None
        extra += f", tokensSaved {num(saved)}" if saved is not None else ""
        suspect = bool(marker and marker.get("trigger") == "auto" and pre is not None and window
                       and pre < AUTO_COMPACT_MIN_FRACTION * window)
        if suspect:
            extra += (f"; auto-compaction at {pct(pre, window)} of the {num(window)}-token window "
                      f"({c.window_src}): the effective window is probably smaller (pass --window)")
        self.out.add("compaction", "info", c,
                     f"compaction before #{c.index + 1} ({how}): prompt {num(before_occ)} -> {num(after)} tokens"
                     f"{at} ({num(freed)} freed{extra})" + (f"; {'; '.join(others)}" if others else ""),
                     marker=marker is not None, trigger=marker.get("trigger") if marker else None,
                     previous_call=lp[1].index if lp else None, prompt_before=before_occ, prompt_after=after,
                     after_call=cs[after_pos].index if after is not None else None,
                     tokens_freed=freed, pre_tokens=pre, post_tokens=post, tokens_freed_vs_pre_tokens=freed_pre,
                     tokens_saved=saved, microcompaction=micro, inferred=not marker,
                     window_suspect=suspect)
