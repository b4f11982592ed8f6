"""One API call of a Claude Code transcript as its lines arrive: one line per content block, each with a copy of
the response's usage.

Claude Code writes every content block of a response on a line of its own, each with a copy of
``message.usage`` whose ``output_tokens`` is a streaming placeholder on the early lines: the call's usage is the
line with the largest ``output_tokens``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ctxwatch.formats import count_issue_kind, count_or_none, not_a_count
from ctxwatch.formats.wire.anthropic import usage_non_counts
from ctxwatch.model import Issue, Message, Part, Provenance
from ctxwatch.model.pickling import fast_pickle
from ctxwatch.source import Record, show_value

#: Rank of a damaged ``output_tokens`` when a response's lines compete for its usage: above every real count.
DAMAGED_RANK = 2**63


@fast_pickle  # (a live log's saved reader state holds one per call of the file)
@dataclass(slots=True)
class CallState:
    """Everything known about one API call (one ``message.id`` + ``requestId``), its lines folded in as they
    arrive: place on disk, content blocks in line order, the fullest usage, the last stop reason."""

    key: str
    context: str
    parent: str | None
    session: str | None
    model: str | None
    timestamp: float | None
    history: list[Message] | None  # dropped (None) once a later call starts in the context; rebuilt if needed
    compaction: dict[str, Any] | None
    provenance: Provenance
    line: int = 0  # first line's number and byte offset; last line's end (the furthest seen)
    line_end: int = 0
    byte_start: int = 0
    byte_end: int = 0
    lines: int = 0
    parts: list[Part] = field(default_factory=list)  # summary pass: the text blocks only
    tool_calls: int = 0
    stop_reason: str | None = None
    uuids: set[str] = field(default_factory=set)
    best: dict[str, Any] | None = None
    best_out: int = -1
    best_line: int = 0  # the line whose usage is kept (named by an issue about that usage)
    implausible: str | None = None  # the implausible_usage note given for the kept usage (given once)
    lazy: bool = False  # summary pass: sent without history (the context's floor is known)
    floor_key: tuple[str | None, str] = (None, "")  # (session, context) whose floor it belongs to
    ordinal: int = 0  # calls of the file before it: its place in the run's order (Call.index) within the file
    _message: Message | None = None

    def add(self, uid: str, rec: Record, parts: list[Part], tool_calls: int, usage: dict[str, Any] | None,
            stop_reason: str | None) -> tuple[dict[str, Any], int] | None:
        """Fold in one line; the line with the largest ``output_tokens`` (the later one on ties) gives the
        usage, the last line that has a stop reason gives it.  Returns the usage this line leaves unread and
        its line's number (the line's own, or the one it supersedes), ``None`` when none is."""
        if not self.lines:
            self.line, self.byte_start = rec.line, rec.byte_start
        self.lines += 1
        self.line_end = max(self.line_end, rec.line_end)
        self.byte_end = max(self.byte_end, rec.byte_end)
        self.parts.extend(parts)
        self.tool_calls += tool_calls
        if stop_reason:
            self.stop_reason = stop_reason
        self.uuids.add(uid)
        self._message = None
        if usage is not None:
            raw = usage.get("output_tokens")
            n = count_or_none(raw)
            out = n if n is not None else -1 if "output_tokens" not in usage else DAMAGED_RANK
            # The line with the largest output is the final one (lines may come out of order: copies in resumed
            # sessions); a damaged or null output on a later line outranks the streaming placeholder (output 1
            # to 10) before it, so that the output is unknown (a damaged one reported), not the placeholder's; a
            # valid count on a later line supersedes a damaged one before it (the damage was in a placeholder).
            if self.best is None or out >= self.best_out or (self.best_out == DAMAGED_RANK and n is not None):
                # (the first usage is kept whatever its output says: a damaged one is then reported, not lost)
                left = None if self.best is None else (self.best, self.best_line)
                self.best, self.best_out, self.best_line = usage, out, rec.line
                return left
            return usage, rec.line
        return None

    def message(self) -> Message:
        """The call's whole response as one assistant message (all lines' blocks in line order)."""
        if self._message is None:
            self._message = Message("assistant", list(self.parts))
        return self._message

    def tool_use_ids(self) -> list[str]:
        """Ids of the tool calls the response makes, in order."""
        return [p.call_id for p in self.parts if p.kind == "tool_call" and p.call_id]


def unread_damage(path: str, left: tuple[dict[str, Any], int] | None) -> list[Issue]:
    """The issue of a usage a response's later line supersedes (``left``: the usage and its line, from
    :meth:`CallState.add`) when one of its counts is no count: the call's usage comes from another line, so
    the sanitizer never sees it, yet its line is damaged (:func:`count_issue_kind`: a bad line for a value of
    the wrong JSON type, a note for an impossible number).  ``[]`` when nothing is wrong."""
    if left is None:
        return []
    usage, line = left
    wrong = usage_non_counts(usage)
    if not wrong:
        return []
    kind = "invalid_field" if any(count_issue_kind(v) == "invalid_field" for _, v in wrong) else "implausible_value"
    said = "; ".join(f"message.usage.{name} {show_value(v)} ({not_a_count(v)})" for name, v in wrong)
    return [Issue(path, line, kind, f"{said}: not read, a later line of the response gives the call's usage")]
