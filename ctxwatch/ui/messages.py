"""Messages the reading worker posts to the app (thread-safe: ``App.post_message``).

Every message carries ``feed``: the id of the feed that sent it.  When the user switches sessions a new
feed starts and messages still queued from the old one are ignored by the app.
"""

from __future__ import annotations

from typing import Any

from textual.message import Message

from ctxwatch.accounting import NO_CALIBRATION, Calibrations
from ctxwatch.model import Call, Issue


class FeedMessage(Message):
    """Base class: a message from the feed with id ``feed``."""

    def __init__(self, feed: int) -> None:
        super().__init__()
        self.feed = feed


class FeedOpened(FeedMessage):
    """The log was opened and its format is known.

    Attributes:
        path: the log file.
        format_name: the format's registry name.
        size: file size in bytes when opened.
        spec: the :class:`~ctxwatch.formats.FormatSpec` (the detail view re-reads calls with it).
    """

    def __init__(self, feed: int, path: str, format_name: str, size: int, spec: object) -> None:
        super().__init__(feed)
        self.path = path
        self.format_name = format_name
        self.size = size
        self.spec = spec


class CallsChanged(FeedMessage):
    """New calls and calls whose summary was replaced (a later line of the same response).

    Attributes:
        added: new :class:`~ctxwatch.model.Call` summaries, in index order.
        updated: replaced summaries (same ``index`` as an earlier one).
        calibrations: the run's calibrations with these calls (:meth:`ctxwatch.engine.run.Run.factors`, over every
            call read, as ``report`` computes them): the floor and history of a call counted with another
            tokenizer are shown scaled by them, earlier calls included.
        costs: call index -> the call's estimated cost in USD (:func:`ctxwatch.output.report.cost_of`, as
            ``report --json`` prices it), ``None`` when it cannot be priced; for the added and updated calls
            (priced in the feed's thread: a catalogue lookup per call).
    """

    def __init__(self, feed: int, added: list[Call], updated: list[Call],
                 calibrations: Calibrations = NO_CALIBRATION, costs: dict[int, float | None] | None = None) -> None:
        super().__init__(feed)
        self.added = added
        self.updated = updated
        self.calibrations = calibrations
        self.costs = costs if costs is not None else {}


class IssuesChanged(FeedMessage):
    """New problems with the input (bad lines, truncated tail, unreadable file), and withdrawn ones.

    Attributes:
        issues: the new issues, in file order.
        resolved: issues sent earlier that no longer hold (a truncated last line its writer completed).
    """

    def __init__(self, feed: int, issues: list[Issue], resolved: list[Issue] | None = None) -> None:
        super().__init__(feed)
        self.issues = issues
        self.resolved = resolved or []


class ResetSeen(FeedMessage):
    """The followed file was truncated, rotated, replaced or deleted (see :class:`ctxwatch.source.Reset`).

    Attributes:
        reason: ``truncated`` | ``rotated`` | ``replaced`` | ``deleted`` | ``recreated`` | ``rewritten`` |
            ``grew`` (batch files that only grew, read again whole: not a reset a person needs to hear of).
        at_call: number of calls read before the reset.
        clear: True when the calls and issues read so far are replaced by a fresh read (a whole-file document
            or a batch file that changed); False when they are kept (they happened; Run.reset semantics).
        format_name: the format the file is read in from now on (it changes when the file was replaced by one
            in another format), or ``None`` when unchanged.
        spec: that format's :class:`~ctxwatch.formats.FormatSpec` (the detail view re-reads calls with it), or
            ``None`` when unchanged.
    """

    def __init__(self, feed: int, reason: str, at_call: int, clear: bool = False,
                 format_name: str | None = None, spec: object = None) -> None:
        super().__init__(feed)
        self.reason = reason
        self.at_call = at_call
        self.clear = clear
        self.format_name = format_name
        self.spec = spec


class FormatSeen(FeedMessage):
    """The followed file, empty since its last reset, got its first line in another format: it is read in
    ``format_name`` (``spec``, which the detail view re-reads calls with) from now on; no reset of its own."""

    def __init__(self, feed: int, format_name: str, spec: object) -> None:
        super().__init__(feed)
        self.format_name = format_name
        self.spec = spec


class AnalysisChanged(FeedMessage):
    """Fresh flags, forecast and drift risk (:func:`ctxwatch.analysis.analyze_run`), recomputed by the feed.

    Attributes:
        analyses: one :class:`ctxwatch.analysis.Analysis` per context (``main`` first).
        error: one sentence when the analysis failed (the dashboard keeps working without it).
    """

    def __init__(self, feed: int, analyses: dict[str, Any], error: str | None = None) -> None:
        super().__init__(feed)
        self.analyses = analyses
        self.error = error


class BackfillProgress(FeedMessage):
    """Reading the existing content: ``done`` of ``total`` bytes."""

    def __init__(self, feed: int, done: int, total: int) -> None:
        super().__init__(feed)
        self.done = done
        self.total = total


class BackfillDone(FeedMessage):
    """The existing content has been read; from now on the feed follows the file live.

    Attributes:
        cancelled: True when the user cancelled the backfill (the middle of the file was skipped).
        resumed_line: with ``cancelled``, the 1-based line the feed went on reading from (the start of
            its last :data:`~ctxwatch.engine.follow.SKIP_KEEP_BYTES`, or of its last complete line when that alone is
            longer; see :func:`~ctxwatch.ui.feed.skip_to_end`), or ``None`` when nothing was skipped.
        skipped_from: with ``resumed_line``, the 1-based first line not read (lines ``skipped_from`` to
            ``resumed_line - 1`` were skipped).
        calls_before: with ``resumed_line``, how many calls were read before the skip (the first call read
            after it has index ``calls_before``: the gap lies between it and the one before).
    """

    def __init__(self, feed: int, cancelled: bool = False, resumed_line: int | None = None,
                 skipped_from: int | None = None, calls_before: int = 0) -> None:
        super().__init__(feed)
        self.cancelled = cancelled
        self.resumed_line = resumed_line
        self.skipped_from = skipped_from
        self.calls_before = calls_before


class FeedFailed(FeedMessage):
    """The log cannot be read at all; ``message`` names the file and the reason."""

    def __init__(self, feed: int, message: str) -> None:
        super().__init__(feed)
        self.message = message


class FeedNotice(FeedMessage):
    """Something about the reading itself a person should see (one sentence in ``message``)."""

    def __init__(self, feed: int, message: str) -> None:
        super().__init__(feed)
        self.message = message


class WatchChanged(FeedMessage):
    """How the feed learns that the log changed, once the backfill is done, and each time that changes.

    Attributes:
        mode: ``events`` (``watchfiles`` on the log's folder, with a stat sweep every second) or ``polling``
            (a stat every ``interval`` seconds: ``--poll``, a filesystem that sends no events, or the fall back
            after watching failed or stayed silent).
        interval: seconds between two polls in polling mode.
        message: one sentence saying why (``None`` for plain event watching).
    """

    def __init__(self, feed: int, mode: str, interval: float, message: str | None = None) -> None:
        super().__init__(feed)
        self.mode = mode
        self.interval = interval
        self.message = message


class SessionsChanged(Message):
    """The log files of the opened folder(s) or files changed (newest first).

    Attributes:
        files: log paths, newest first (:func:`ctxwatch.ui.feed.list_paths`).
        batch: True when the files are batch requests and results to open as one joined run
            (:func:`ctxwatch.ui.feed.is_batch_set`), False when they are sessions to pick from.
        notes: a note for each file found beside them that is not read (in no known format, compressed,
            unreadable), as ``report`` gives them (:func:`ctxwatch.ui.feed.log_files`).
        skipped: how many those are.
    """

    def __init__(self, files: list[str], batch: bool = False, notes: list[Issue] | None = None) -> None:
        super().__init__()
        self.files = files
        self.batch = batch
        self.notes = list(notes or [])
        self.skipped = len(self.notes)


class ScanNotice(Message):
    """The folder scan (:class:`ctxwatch.ui.feed.FolderScan`) follows the opened folder(s) by polling although file
    events were wanted: the filesystem sends none, or watching could not start or failed.  Sent once at most.

    Attributes:
        message: one sentence saying why, and how often new sessions are looked for.
    """

    def __init__(self, message: str) -> None:
        super().__init__()
        self.message = message
