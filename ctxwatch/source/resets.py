"""What following a file by path can say besides its lines: that the file restarted (:class:`Reset`), and the
timings and byte counts the tailer (:mod:`ctxwatch.source.tailer`) goes by to tell a file that grew from one
that was rotated, replaced or rewritten.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxwatch.model import Issue, Resolved
from ctxwatch.source.lines import Line

#: Seconds a half-written last line may stay unchanged before it is reported as a truncated tail.  Agent
#: loggers write a record in one ``write`` call, so 2 s of silence in the middle of a line means the writer
#: stopped.
DEFAULT_IDLE_GRACE = 2.0

#: Seconds a file renamed away (rotated) must stay unchanged before it is let go for the new file at the path: a
#: writer that still holds it (logrotate's ``create`` mode) reopens the path within moments; its records written
#: to the old handle until then are read first.  The same 2 s of silence as :data:`DEFAULT_IDLE_GRACE`.
DEFAULT_ROTATED_QUIET = 2.0

#: Bytes before the read offset remembered to notice a file rewritten in place to at least its old size between
#: two polls (a truncation the size check alone cannot see): 64 bytes make a false match negligible.
SIGNATURE_BYTES = 64

#: Bytes of the file's head remembered too: a file cut and rewritten past the old offset whose bytes just before
#: it happen to match (records that end alike) is noticed by its head, which a new file of another session or
#: run does not share (its first record carries its own ids and times).
HEAD_BYTES = 256

#: Reasons a :class:`Reset` may carry.
RESET_REASONS = ("truncated", "rotated", "replaced", "recreated", "deleted")

Identity = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Reset:
    """The followed file restarted: everything read before belongs to a file that is gone or was cut.

    Consumers drop the history they built from ``path`` and start fresh; the lines after the reset come from
    the new file, from byte 0, line 1.

    Attributes:
        reason: ``truncated`` (size fell below the read offset, or the bytes before it changed), ``rotated``
            (renamed away and still linked elsewhere), ``replaced`` (a new file took the path and the old one is
            unlinked: ``mv tmp path``, or ``rm`` and a new file between two polls), ``deleted`` (the path is
            gone), ``recreated`` (a file appeared again where one had been deleted or rotated away).
        path: the followed path.
    """

    reason: str
    path: str


#: What :meth:`FileTailer.poll` gives, in file order.
TailEvent = Line | Issue | Reset | Resolved
