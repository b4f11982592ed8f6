"""Episodes: where the history starts over (file reset, new session, separate request) and where it was compacted
(a compaction marker, or a sharp drop that is not a one-call dip or spike).
"""

from __future__ import annotations

from ctxwatch.model import (
    Call,
    own_request,
    separate_requests,
)

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
    """Why the history starts over at ``cs[pos]`` (file reset, new session), or ``None``."""
    if pos == 0:
        return None
    c, prev = cs[pos], cs[pos - 1]
    if c.index in reset_set:
        return f"file reset before #{c.index + 1}"
    if c.session and prev.session and c.session != prev.session:
        return f"new session at #{c.index + 1}"
    if c.extra.get("history_cut") and c.source.path != prev.source.path:
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


def drops_and_outliers(cs: list[Call], occs: list[int | None], reset_set: set[int]) -> tuple[set[int], set[int]]:
    """Positions where the history shrank sharply (compactions without a marker), and one-call outliers.

    A sharp drop at ``p`` (against the last representative call ``q``) is **not** a compaction when the prompt
    is back the next call (``p`` was a one-call dip: a retry or side request with a short prompt), or when ``p``
    is back at the level before ``q`` (``q`` was a one-call spike).  Outliers are left out of the forecast; they
    still count for the thresholds of their own call.  Drops across a file reset or a session change are
    resets, not compactions.  A drop on the last call is taken as a compaction (no next call to say otherwise).
    """
    known = [p for p, o in enumerate(occs) if o is not None]
    drops: set[int] = set()
    outliers: set[int] = set()
    base: list[int] = []  # representative positions so far
    for k, p in enumerate(known):
        # (a marker or a reset on a call of unknown occupancy since the last known one, e.g. an implausible first
        # call after a compaction, B13, explains this call's drop: it is that compaction, not another one)
        since = known[k - 1] + 1 if k else 0
        if not base or any(isinstance(cs[i].compaction, dict) or reset_reason(cs, i, reset_set) is not None
                           for i in range(since, p + 1)):
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
