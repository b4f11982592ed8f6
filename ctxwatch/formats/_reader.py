"""The interface a log format implements: its :class:`FormatSpec`, its :class:`Reader`, what detection hands
its sniffer (:class:`Sniff`), and the helpers readers of whole-file documents share.

A reader is *incremental*: it is fed one :class:`~ctxwatch.source.decode.Record` at a time (so the same code
serves a past run and a live tail) and returns the calls and issues each record completes.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ctxwatch.model import Issue, ParsedCall, Resolved, SourceRef
from ctxwatch.source import Record

#: What a reader gives per record: calls, issues, and the withdrawal of an issue it gave earlier (an issue about
#: a copy of a call that a more complete copy read later replaced).
Output = ParsedCall | Issue | Resolved

class Reader:
    """Base class of a format reader (one per file being read).

    Args:
        path: the file being read (for issues and :class:`~ctxwatch.model.SourceRef`).
    """

    #: Optional cheap pre-filter on raw line bytes: truthy = skip without parsing, checked to be JSON unless it
    #: returns :data:`~ctxwatch.source.SKIP_CHECKED` (see :func:`~ctxwatch.source.records`).
    skip: Callable[[bytes], int] | None = None

    #: Optional decoder of a line that is one JSON value, used in place of ``orjson.loads`` (bytes -> the value;
    #: it raises ``orjson.JSONDecodeError`` where ``orjson.loads`` does, so that a damaged line is decoded and
    #: reported as any other): a reader may decode only what it reads, or reuse what the previous line held
    #: (:class:`ctxwatch.formats.wire.resend.ResendDecoder`).
    decode: Callable[[bytes], Any] | None = None

    #: Whether every call carries its full visible history.  A reader may leave it out of calls whose
    #: numbers do not need it (the Claude Code reader); opening a call sets this to True before feeding.
    full_history: bool = True

    #: Set while a whole file is read at once (not followed): a reader may then emit an updated call once,
    #: when a record of another call arrives or at :meth:`finish`, instead of on each of its records.
    coalesce: bool = False

    def __init__(self, path: str) -> None:
        self.path = path

    def feed(self, rec: Record) -> Iterable[Output]:
        """Consume one record; return the calls (new or updated) and issues it completes."""
        return ()

    def flush(self) -> Iterable[Output]:
        """Give now the calls a coalescing read still holds back (:attr:`coalesce`), as :meth:`finish` would, but
        without ending the file: reading may go on.  Default: none held."""
        return ()

    def finish(self) -> Iterable[Output]:
        """The file is complete: return anything still held back (the notes of :meth:`notes` included)."""
        return ()

    def notes(self) -> list[Issue]:
        """The notes about the whole file read so far that :meth:`finish` would add now (Claude Code's
        ``subagent_calls_elsewhere``), without finishing anything: a followed file never ends, so the dashboard
        shows them as the file is read, as ``check`` lists them after reading it.  Default: none."""
        return []

    def feed_document(self, value: Any) -> Iterable[Output]:
        """Consume a whole-file JSON document (document formats only)."""
        return ()

    def pending_compactions(self) -> dict[str, dict[str, Any]]:
        """Compactions seen whose next call has not arrived yet, by context (``{}`` if none).

        Each value is the marker the next call will carry (``kind``, ``pre_tokens``, ``post_tokens``...).
        Lets the UI show the post-compaction occupancy at once instead of the stale pre-compaction one.
        """
        pending = getattr(self, "_pending", None)
        if isinstance(pending, dict) and all(isinstance(v, dict) for v in pending.values()):
            return dict(pending)
        return {}


@dataclass(frozen=True)
class Sniff:
    """What detection knows about a file: its path, its head's JSON values and whether it is a document.

    Attributes:
        path: the file path.
        values: up to the first 50 JSON values decoded from the first ``SNIFF_BYTES`` (line by line).
        document: the parsed whole document, when the file is a single (pretty-printed) JSON value and small
            enough to have been read for detection; else ``None``.
        head: the raw first bytes.
        problem: ``line N: why`` of the first line that starts like a record and does not decode (``None``:
            none), for an error that names why no format reads the file.
    """

    path: str
    values: list[Any]
    document: Any = None
    head: bytes = b""
    problem: str | None = None


@dataclass(frozen=True)
class FormatSpec:
    """A registered log format.

    Attributes:
        name: short name for ``--format``.
        description: one line for ``ctxwatch formats``.
        sniff: returns a confidence in [0, 1] that a file is in this format.
        reader: builds a :class:`Reader` for a path (the batch formats' readers also take ``input_path``, the
            request file a joined call was read with).
        document: the format is a whole-file JSON document, not a stream of records.
        needs_prefix: re-reading one call's text needs the file from its start (state spans records).
        records_independent: every record is read and accounted the same whatever came before it (the
            reader keeps no state across records other than caches), so a big file may be cut into line
            ranges read by separate processes (:mod:`ctxwatch.engine.parallel`).
        joined: a provider's batch files: requests and results are separate files, joined by ``custom_id``
            (a folder's are read together, never one by one).
        example: a one-line example or pointer to a sample.
    """

    name: str
    description: str
    sniff: Callable[[Sniff], float]
    reader: Callable[..., Reader]
    document: bool = False
    needs_prefix: bool = False
    records_independent: bool = False
    joined: bool = False
    example: str = ""
    aliases: tuple[str, ...] = field(default=())


def document_source(path: str) -> SourceRef:
    """The source of a call read from a whole-file document: the whole file (line 0: tied to no line; the byte
    range is the file's size, 0 when it cannot be read)."""
    try:
        size = os.path.getsize(path)
    except OSError:
        size = 0
    return SourceRef(path, 0, 0, 0, size)


_T = TypeVar("_T")


def _positive(n: object) -> bool:
    """True for a count above 0; a reported value that is no count (a list, ``"x"``, NaN: the usage readers pass
    such values on for the run to report) is not one."""
    return n.__class__ is int and n > 0  # type: ignore[operator]


def floor_once(calls: list[_T]) -> list[_T]:
    """Mark the calls of one conversation whose system prompt and tools are not logged (``history_reported_only``)
    so that the floor is inferred once, from the first call with a reported prompt, and each later call's
    history is its reported prompt minus that floor (:attr:`~ctxwatch.model.Provenance.floor_call`,
    :mod:`ctxwatch.accounting`);
    return ``calls`` (other outputs among them are passed over).

    Inferred for every call (reported prompt minus the history as counted here), the floor would take in the
    tokenizer's error on each history: on a Cline run of Claude calls counted with o200k_base it would climb
    from 11,148 to 40,106 tokens in 12 calls.  The Claude Code, Codex and Gemini CLI readers keep the same rule.
    """
    first: str | None = None
    for c in calls:
        if not isinstance(c, ParsedCall) or not c.history_reported_only or c.key is None:
            continue
        if first is not None:
            c.provenance.floor_call = first
        elif c.usage is not None and _positive(c.usage.prompt_total) and c.messages is not None:
            first = c.key
    return calls
