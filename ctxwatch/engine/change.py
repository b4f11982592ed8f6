"""What feeding a run changed (:class:`Change`): the calls added and updated, the issues given and withdrawn, as
the dashboard and ``report --follow`` pass them on."""

from __future__ import annotations

from dataclasses import dataclass, field

from ctxwatch.model import Issue


@dataclass
class Change:
    """What one fed record did to the run.

    Attributes:
        added: indexes of new calls.
        updated: indexes of calls whose summary was replaced.
        issues: new issues.
        resolved: issues withdrawn (a truncated last line that its writer completed later).
    """

    added: list[int] = field(default_factory=list)
    updated: list[int] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)
    resolved: list[Issue] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.added or self.updated or self.issues or self.resolved)

    def withdraw(self, issue: Issue) -> None:
        """Withdraw ``issue``: dropped from :attr:`issues` when this change gave it (a consumer never saw it, and
        one told of its withdrawal before it is given would keep it), else added to :attr:`resolved`."""
        if any(i is issue for i in self.issues):
            self.issues = [i for i in self.issues if i is not issue]
        else:
            self.resolved.append(issue)
