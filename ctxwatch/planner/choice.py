"""Which call ``plan`` and ``schema`` look at when none is named: the one a person would open."""

from __future__ import annotations

from ctxwatch.model import Call, session_ranks


def default_plan_call(calls: list[Call]) -> int:
    """The call ``plan`` looks at by default: the last call of the ``main`` context that is not a
    ``max_tokens: 1`` probe (claude-trace logs those beside the real calls), of the newest session when there
    are several (:func:`ctxwatch.model.session_ranks`, as the forecast and the dashboard pick it: a folder's
    last call read belongs to the file modified last); else the last call."""
    main = [c for c in calls if c.context == "main" and not c.provenance.probe]
    if not main:
        return calls[-1].index
    rank = session_ranks(main)
    newest = max(rank, key=lambda s: rank[s])
    return next(c for c in reversed(main) if c.session == newest).index


def default_schema_call(calls: list[Call]) -> int:
    """The call ``schema`` looks at by default: the last call that carries tool schemas, else the last call."""
    for c in reversed(calls):
        if c.tool_names:
            return c.index
    return calls[-1].index
