"""Problems with the input, counted and reported instead of crashing: an :class:`Issue` names the file and line."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ctxwatch.model.pickling import fast_pickle as _fast_pickle


@_fast_pickle
@dataclass(slots=True)
class Issue:
    """A problem with the input that was counted and reported instead of crashing.

    Attributes:
        path: the file.
        line: 1-based line number (0 when the problem is not tied to one line).
        kind: short machine-readable kind, e.g. ``invalid_json``, ``invalid_utf8``, ``truncated_tail``,
            ``unknown_record``, ``implausible_usage``, ``implausible_value``, ``estimate_disagrees``, ``reset``;
            notes (not bad lines): ``same_file``, ``skipped_file``, ``batch_pairing``, ``totals_restart``,
            ``subagent_calls_elsewhere``, ``fork_copies``.
        message: one human-readable sentence.
        call_key: the dedupe key of the call the problem is about (implausible counts), so that a call logged
            again in another file reports its damage once; ``None`` for problems of a line or a file.
    """

    path: str
    line: int
    kind: str
    message: str
    call_key: str | None = None


#: Issue kinds meaning that a line of the log is damaged or is not a usable record: what "bad lines" counts
#: (the status line, ``check``).  Every other kind is a note about data that was read: a batch request that
@dataclass(frozen=True, slots=True)
class Resolved:
    """An issue reported earlier no longer holds: a last line reported as ``truncated_tail`` (the writer was
    idle for the grace period) was completed later and read as records.  Consumers drop the issue.

    Attributes:
        path: the file.  line: its 1-based line number.  kind: the issue kind (``truncated_tail``).
    """

    path: str
    line: int
    kind: str


#: failed or has no result, a file in no known format, an implausible count, a rotation.
BAD_LINE_KINDS = frozenset({"invalid_json", "invalid_utf8", "nul_bytes", "glued_records", "truncated_tail",
                            "oversized_line", "unknown_record", "invalid_field", "reader_error"})


def is_bad_line(issue: Issue) -> bool:
    """True when ``issue`` is a damaged or unusable line (see :data:`BAD_LINE_KINDS`), not a note."""
    return issue.kind in BAD_LINE_KINDS


def counted_issues(bad_lines: int, notes: int) -> str:
    """``3 bad lines`` or ``1 bad line, 2 notes``: damaged lines (each counted once, however many issues it
    has: :func:`tally_issues`), then the other notes (batch results without their request,
    skipped files), which are not damage and are not called bad lines."""
    text = f"{bad_lines} bad line{'s' if bad_lines != 1 else ''}"
    return f"{text}, {notes} note{'s' if notes != 1 else ''}" if notes else text


def tally_issues(issues: Iterable[Issue]) -> tuple[int, int]:
    """``(bad lines, notes)`` among ``issues`` (``reset`` markers left out): bad lines are the distinct lines
    with a bad-line issue (a line with NUL bytes that is also invalid JSON is one bad line, with two issues;
    a file-level one, line 0, counts as one each); notes are the other issues."""
    lines: set[tuple[str, int]] = set()
    whole = notes = 0
    for i in issues:
        if i.kind == "reset":
            continue
        if i.kind not in BAD_LINE_KINDS:
            notes += 1
        elif i.line:
            lines.add((i.path, i.line))
        else:
            whole += 1
    return len(lines) + whole, notes
