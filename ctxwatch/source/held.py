"""A followed file's last line while its newline has not come.

Agent loggers write a record in one call, so a line without its newline is being written: it is held back.  If the
writer stays idle past the grace period, the line is given early when it parses whole (a writer that ends records
late) and reported once as a truncated tail when it does not; when the file is complete it is given as final.
Completed later, it is given then with only its new values, and a truncation reported is withdrawn.
"""

from __future__ import annotations

from ctxwatch.model import Issue, Resolved
from ctxwatch.source.decode import decode_line, oversized_issue
from ctxwatch.source.lines import Line


class HeldLine:
    """What was said of the held line: its values given early, its truncation reported (by its start offset).

    The tailer calls :meth:`complete` for each complete line, :meth:`idle` after a poll that found the writer idle
    and :meth:`final` when the file is complete; each appends its events (lines, issues, withdrawals) to
    ``events``.
    """

    def __init__(self) -> None:
        self.given: tuple[int, int] | None = None  # (start, values) of a line given early
        self.reported: int | None = None  # start of a line reported as truncated
        self.checked: tuple[int, int] | None = None  # (start, bytes) examined after idling

    def clear(self) -> None:
        """Forget the held line (the file restarted)."""
        self.given = self.reported = self.checked = None

    def _done(self, start: int) -> int:
        return self.given[1] if self.given is not None and self.given[0] == start else 0

    def complete(self, path: str, ln: Line, events: list[object]) -> None:
        """A complete line: given with the values given early skipped, after the withdrawal of its truncation."""
        ln.skip_values = self._done(ln.start)
        if self.reported == ln.start and not ln.oversized:
            events.append(Resolved(path, ln.number, "truncated_tail"))  # (a slow writer, not a cut line)
        self.clear()
        events.append(ln)

    def idle(self, path: str, start: int, line: int, data: bytes | None, n: int, grace: float,
             events: list[object]) -> None:
        """The writer has been idle for ``grace`` seconds with ``n`` bytes of the line written (``data``: those
        bytes, ``None`` if they cannot be read): give it early if it parses whole, else report it once."""
        if self.checked == (start, n):
            return
        self.checked = (start, n)
        if data is not None:
            values, issues = decode_line(data, path, line, first=start == 0)
            if values and not issues:
                done = self._done(start)
                if len(values) > done:
                    events.append(Line(line, start, start + n, data, skip_values=done))
                self.given = (start, len(values))
                return
            if not data.strip():
                return
        if self.reported != start:
            self.reported = start
            events.append(Issue(path, line, "truncated_tail", f"last line is incomplete ({n} bytes, no newline) and "
                                                               f"the file has been idle for {grace:g} s"))

    def final(self, path: str, start: int, line: int, data: bytes | None, n: int, cap: int,
              events: list[object]) -> None:
        """The file is complete: give the line as final (``unterminated``), or say why it cannot be read."""
        done, reported = self._done(start), self.reported == start
        self.clear()
        if n > cap:
            events.append(oversized_issue(path, Line(line, start, start + n, b"", oversized=True), cap))
        elif data is None:
            if not reported:
                events.append(Issue(path, line, "truncated_tail",
                                    f"last line is incomplete ({n} bytes, no newline) and could not be re-read"))
        else:
            events.append(Line(line, start, start + n, data, unterminated=True, skip_values=done,
                               cut_reported=reported))
