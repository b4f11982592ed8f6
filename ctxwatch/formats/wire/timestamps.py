"""The one timestamp rule of every reader: epoch seconds from what logs write (ISO-8601 text or numbers).

Claude Code and Codex write ISO-8601 with ``Z``; request loggers write epoch seconds or milliseconds; Inspect
writes an offset; OpenHands events write no zone.  One parser reads them all, so that two formats never date
the same instant differently.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from ctxwatch.model import note_bad_field
from ctxwatch.source import show_value

#: A number above this is taken as milliseconds: 1e11 seconds is the year 5138, 1e11 milliseconds 1973.
MILLISECONDS_ABOVE = 1e11
#: The epoch seconds of the first and the last instant a :class:`datetime` holds (years 1 to 9999): a time
#: outside would raise OverflowError or ValueError wherever it is shown.
FIRST_SECOND = datetime(1, 1, 1, tzinfo=UTC).timestamp()
LAST_SECOND = datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC).timestamp()


def parse_timestamp(v: Any) -> float | None:
    """Epoch seconds (UTC) from an ISO-8601 string or a number, or ``None`` when the value is no time.

    A number is seconds, or milliseconds above :data:`MILLISECONDS_ABOVE` (JavaScript's ``Date.now()``);
    an int beyond a double (10**309) is ``None``.  A string is ISO-8601 (``2026-02-10T21:11:56.846Z``,
    ``2024-11-05T13:31:45-05:00``); one without a zone is UTC, so a report does not depend on the machine's
    zone; a string that is no ISO time is read as a number of seconds (``"1748554706.0"``), else ``None``.
    A time outside the years 1 to 9999 (:data:`FIRST_SECOND`, :data:`LAST_SECOND`), NaN and infinities are
    ``None``.  ``None`` and ``""`` (no time written) are ``None``; any other value that gives ``None`` (booleans,
    objects, ``"yesterday"``, ``"99999-01-01T00:00:00Z"``) is noted as an ``invalid_field`` issue of the record
    being read (:func:`~ctxwatch.model.note_bad_field`).  Never raises.
    """
    seconds = _seconds(v)
    if seconds is not None and FIRST_SECOND <= seconds <= LAST_SECOND:  # (False for NaN)
        return seconds
    if v is not None and not (isinstance(v, str) and not v.strip()):
        # (the line's: several readers parse a time for a record that is no call, a Codex session_meta)
        note_bad_field(f"a timestamp {show_value(v)} is no time (ISO-8601 or epoch seconds in the years 1 to "
                       "9999): the line's time is unknown")
    return None


def _seconds(v: Any) -> float | None:
    """:func:`parse_timestamp` without its range check and its note: epoch seconds, or ``None``."""
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int | float):
        try:
            seconds = float(v)
        except OverflowError:  # (an int beyond a double: 10**309, or a string of 400 digits read as a count)
            return None
        return seconds / 1000.0 if seconds > MILLISECONDS_ABOVE else seconds
    if not isinstance(v, str):
        return None
    s = v.strip()
    if not s:
        return None
    try:
        dt = datetime.fromisoformat(s.replace("Z", "+00:00"))
        return (dt if dt.tzinfo is not None else dt.replace(tzinfo=UTC)).timestamp()
    except (ValueError, OverflowError):
        try:
            return float(s)
        except ValueError:
            return None
