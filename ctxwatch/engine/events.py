"""What following a log tells its consumer: plain values, one kind per thing that happened.

:class:`~ctxwatch.engine.follow.Follower` gives them to a callback; the dashboard wraps each in a Textual
message, ``report --follow --jsonl`` prints them.  Calls are accounted summaries (no message text).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ctxwatch.accounting import NO_CALIBRATION, Calibrations
from ctxwatch.formats import FormatSpec
from ctxwatch.model import Call, Issue


@dataclass(frozen=True, slots=True)
class Opened:
    """The log was opened and its format is known; ``size`` in bytes when opened."""

    path: str
    spec: FormatSpec
    size: int


@dataclass(frozen=True, slots=True)
class Waiting:
    """Something about the reading a person should see while nothing can be read yet (one sentence).

    ``kind``: ``waiting`` (the file does not exist yet), ``empty`` (it exists, with no record to detect its
    format from) or ``format_unknown`` (its records are in no format recognised yet)."""

    kind: str
    message: str


@dataclass(frozen=True, slots=True)
class Failed:
    """The log cannot be read at all; ``message`` names the file and the reason."""

    message: str


@dataclass(frozen=True, slots=True)
class CallsChanged:
    """New calls and calls whose summary was replaced (a later line of the same response), in index order, with the
    run's calibrations over every call read (:meth:`ctxwatch.engine.run.Run.factors`)."""

    added: list[Call]
    updated: list[Call]
    calibrations: Calibrations = NO_CALIBRATION


@dataclass(frozen=True, slots=True)
class IssuesChanged:
    """New problems with the input, in file order, and issues given earlier that no longer hold."""

    issues: list[Issue]
    resolved: list[Issue] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Progress:
    """Reading the existing content: ``done`` of ``total`` bytes."""

    done: int
    total: int


@dataclass(frozen=True, slots=True)
class BackfillDone:
    """The existing content has been read; from now on the file is followed live.

    Attributes:
        cancelled: the user cancelled the backfill (the middle of the file was skipped).
        resumed_line: with ``cancelled``, the 1-based line reading went on from, or ``None`` when nothing was
            skipped.
        skipped_from: with ``resumed_line``, the first line not read (lines ``skipped_from`` to
            ``resumed_line - 1`` were skipped).
        calls_before: with ``resumed_line``, how many calls were read before the skip.
    """

    cancelled: bool = False
    resumed_line: int | None = None
    skipped_from: int | None = None
    calls_before: int = 0


@dataclass(frozen=True, slots=True)
class ResetSeen:
    """The followed file was truncated, rotated, replaced or deleted, or a log written whole changed.

    Attributes:
        reason: a :data:`~ctxwatch.source.resets.RESET_REASONS` reason, ``rewritten`` (a whole-file log changed),
            or ``grew`` (batch files that only grew, read again whole: nothing a person needs to hear of).
        at_call: number of calls read before the reset.
        clear: the calls and issues read so far are replaced by a fresh read (a log written whole); False when
            they are kept (they happened).
        format_name: the format the file is read in from now on, when it changed; else ``None``.
    """

    reason: str
    at_call: int
    clear: bool = False
    format_name: str | None = None


@dataclass(frozen=True, slots=True)
class FormatSeen:
    """The followed file, empty since its last reset, got its first line, in another format than the run's: it is
    read in ``format_name`` from now on.  Not a reset of its own: nothing was read since the last one."""

    format_name: str


@dataclass(frozen=True, slots=True)
class WatchChanged:
    """How changes to the log are noticed once the backfill is done, and each time that changes: ``mode``
    ``events`` or ``polling`` (every ``interval`` seconds), and why in one sentence (``None`` for plain events)."""

    mode: str
    interval: float
    message: str | None = None


FollowEvent = (Opened | Waiting | Failed | CallsChanged | IssuesChanged | Progress | BackfillDone | ResetSeen
               | FormatSeen | WatchChanged)
