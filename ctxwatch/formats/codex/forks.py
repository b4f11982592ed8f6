"""A forked rollout's copy of its parent's calls: whose calls they are.

``codex fork`` (and a subagent spawned from a thread) writes a new rollout whose ``session_meta`` names the
parent (``forked_from_id``) and which starts with a copy of the parent's records, its ``token_count`` events
included, each stamped with the time it was written: the moment of the fork.  Those calls were the parent's;
the fork's own come after a new input, seconds later at the least.  So a call of a fork whose ``token_count`` is
stamped within :data:`COPY_SECONDS` of the fork's ``session_meta`` is the parent's: it is keyed by the parent's
session, as every call of a fork is (a copy read beside the parent's rollout is counted once), and named as the
parent's session, so that the fork's own calls, cost and sessions are the same whether or not the parent's
rollout is read too.  One note per file says how many were read from such a copy.
"""

from __future__ import annotations

from ctxwatch.model import Issue

#: Seconds after a fork's ``session_meta`` within which a ``token_count`` is part of the parent's copied records:
#: they are written in one go when the fork is made, while a call of the fork itself needs a new input and the
#: model's answer first.
COPY_SECONDS = 2.0

#: The note's kind: calls read from a fork's copy of its parent's records.
FORK_COPIES = "fork_copies"


class ForkCopies:
    """The copied calls of the forks in one rollout file (a file may hold several sessions one after another)."""

    def __init__(self) -> None:
        self._parent: str | None = None
        self._until: float | None = None
        self._child: str | None = None
        self.copied: dict[tuple[str, str | None], int] = {}  # (parent, fork) -> calls read from the copy

    def start(self, parent: str | None, child: str | None, at: float | None) -> None:
        """A session starts: ``parent`` the session it was forked from (or ``None``), ``child`` its own id,
        ``at`` its ``session_meta``'s time (epoch seconds; ``None``: no copy can be told from the fork's own)."""
        self._parent, self._child = parent, child
        self._until = at + COPY_SECONDS if parent is not None and at is not None else None

    def session_of(self, at: float | None) -> str | None:
        """The parent session when a call stamped ``at`` is a copy of one of its calls, else ``None``.  The copy
        ends at the first call stamped later: every call after it is the fork's own."""
        if self._parent is None or self._until is None:
            return None
        if at is None or at > self._until:
            self._until = None
            return None
        key = (self._parent, self._child)
        self.copied[key] = self.copied.get(key, 0) + 1
        return self._parent

    def notes(self, path: str) -> list[Issue]:
        """A :data:`FORK_COPIES` note per fork whose copy of its parent's calls was read."""
        return [Issue(path, 0, FORK_COPIES,
                      f"{n} call{'s' if n != 1 else ''} of session {parent} copied into the rollout of its fork "
                      f"{child or '(no id)'} when the fork was made: counted once, as {parent}'s")
                for (parent, child), n in self.copied.items()]
