"""The exit rules of the commands: which status ends them, and when a log counts as unreadable.

0 success; 1 ``check`` found a flag at or above ``--fail-on``; 2 a usage error or a log that cannot be read
(click's own status for usage errors); 130 interrupted (Ctrl-C).  No other failure exits with 1, so that a CI
job never reads one as a flag.  One module, so that every command ends the same way on the same input.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, NoReturn

from ctxwatch.cli.console import echo
from ctxwatch.model import counted_issues
from ctxwatch.output.safetext import clean

if TYPE_CHECKING:
    from ctxwatch.engine import Run

#: Status of a usage error or an unreadable log (click exits with 2 on its own usage errors).
EXIT_USAGE = 2
#: Status of ``check`` when a flag is at or above ``--fail-on``.
EXIT_FLAGGED = 1
#: Status of a command interrupted by Ctrl-C: 128 + SIGINT, what a shell reports for it (click's own is 1, which
#: is ``check``'s for a flag).
EXIT_INTERRUPTED = 130


class CommandFailed(SystemExit):
    """The exit of :func:`fail`: a ``SystemExit`` with its status that also holds the message (``message``, as
    printed after ``ctxwatch: ``), for a command that states the failure in its own output too
    (``check --json``)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(status)
        self.message = message


def fail(message: str, status: int = EXIT_USAGE) -> NoReturn:
    """Print ``ctxwatch: <message>`` on standard error and exit with ``status`` (:data:`EXIT_USAGE`), by raising
    :class:`CommandFailed`."""
    echo(f"ctxwatch: {message}", err=True)
    raise CommandFailed(message, status)


def flagged_status(flags: list[dict[str, Any]], fail_on: str) -> int:
    """``check``'s status for the flag objects of :func:`ctxwatch.analysis.analysis_json`: :data:`EXIT_FLAGGED`
    when one is at or above the severity ``fail_on`` (``info`` | ``warn`` | ``critical``; ``info``: any flag),
    else 0."""
    from ctxwatch.analysis import SEVERITY_RANK

    level = SEVERITY_RANK[fail_on]
    return EXIT_FLAGGED if any(SEVERITY_RANK[f["severity"]] >= level for f in flags) else 0


def _unreadable(issue: Any) -> bool:
    """True for an issue that, in a log with no call at all, makes it unreadable (exit 2): a damaged line other
    than a half-written last one, a file that cannot be read, a forced format that reads nothing."""
    from ctxwatch.model import is_bad_line

    if issue.kind in ("unreadable", "format_mismatch"):
        return True
    return is_bad_line(issue) and issue.kind != "truncated_tail"


def exit_if_nothing_read(run: Run, paths: tuple[str, ...]) -> None:
    """Exit with status 2 and a message naming the file when ``run`` has no call and is damaged or could not be
    read (report and check alike).  Notes alone (a skipped file beside an empty log) and a half-written last
    line (a live log writing its first call) are not that: an empty log is a log with no call yet.  With
    several files (``paths`` holds a folder, or more than one path), a file that could not be read is a note
    beside the others (a run in which no file at all could be read stops earlier, in the folder read)."""
    from ctxwatch.engine.opening import nothing_in
    from ctxwatch.model import tally_issues

    several = len(paths) > 1 or any(os.path.isdir(p) for p in paths)
    bad = [i for i in run.issues if i.kind != "reset"]
    fatal = [i for i in bad if _unreadable(i) and not (several and i.kind == "unreadable")]
    if (run.calls and not nothing_in(run.calls)) or not fatal:
        return  # (calls with nothing in them, a forced format's misreading, are no call read)
    why = fatal[0]
    at = f"{why.path}:{why.line}" if why.line else why.path
    counted = counted_issues(*tally_issues(bad))
    fail(f"{clean(run.path)}: no call could be read ({counted}; {clean(at)}: {clean(why.message)})")
