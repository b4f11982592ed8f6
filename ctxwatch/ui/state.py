"""What the dashboard knows, in one object: the calls read, the view, the selection, the analyses, the
input problems, the calibrations and how the log is being read.

The app's message handlers are the only code that changes it; the main screen and its widgets are handed it
and draw from it, and read-only questions about it (which calls are in view, what the log is called) are
answered here, so that every widget asks them the same way.
"""

from __future__ import annotations

import time
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ctxwatch.accounting import NO_CALIBRATION, Calibrations
from ctxwatch.model import Call, Issue
from ctxwatch.ui import text as tx
from ctxwatch.ui.costs import Totals
from ctxwatch.ui.feed import SWEEP_INTERVAL
from ctxwatch.ui.fleet import Conversation, conversation_of
from ctxwatch.ui.messages import CallsChanged
from ctxwatch.ui.opened import OpenedNames


def listed_issues(issues: Sequence[Issue]) -> list[Issue]:
    """The input problems a person is shown, in the order read: every issue but ``reset`` (a truncated or
    replaced file is said on the status line), as ``ctxwatch check`` and ``report --json`` list them."""
    return [i for i in issues if i.kind != "reset"]


#: The state's attributes and questions that can be read as the app's own (``app.calls`` is ``app.state.calls``:
#: tests and scripts read them so).
STATE_VIEWS = frozenset({
    "calls", "calibrations", "costs", "totals", "issues", "issues_before_reset", "view", "contexts", "context",
    "selected_index", "follow", "paused", "xaxis", "filter_text", "conversation", "loaded", "log_path",
    "format_name", "failed", "notice", "progress", "last_reset", "resets", "watch_mode", "watch_note", "sessions",
    "auto_session", "analyses", "analysis_error", "batch_files", "scan_note", "folder_notes", "paths", "path", "is_dir",
    "multi",
    "input_problems", "selected_call", "view_calls", "display_name",
})


@dataclass(eq=False)
class DashboardState(OpenedNames):
    """The dashboard's state.

    Attributes set once, from the command line: ``paths`` (the files or folders as given) and ``poll``
    (``--poll``).

    Attributes of the log shown, dropped by :meth:`start_log`: ``transcripts`` (set again by the app),
    ``log_path`` (``None`` before a folder's first
    session), ``batch_files`` (joined batch files, or ``None``), ``calls`` (index -> :class:`Call`), ``costs``
    (index -> estimated USD, ``None`` unknown) and ``totals`` (the log's cost and cache reads / writes),
    ``calibrations`` (the run's: every floor and history shown goes through its ``breakdown``), ``issues``
    (input problems of the log as it is now), ``issues_before_reset`` (those of lines read before its last
    reset: listed, not counted), ``view`` (call indexes in table order), ``unsplit_seen`` (a prompt with no
    floor / history split was seen), ``contexts`` and ``context`` (the one shown), ``selected_index``,
    ``follow``, ``loaded`` (backfill done), ``failed``, ``skipped`` (the lines Esc skipped), ``notice``,
    ``format_name``, ``spec`` (the feed's format spec, to re-read calls), ``progress`` (bytes done, total),
    ``last_reset`` and ``resets`` (their reasons, in order), ``watch_mode`` (``events`` | ``polling`` |
    ``None``), ``watch_note``, ``watch_interval`` and ``sweep_interval`` (seconds), ``analyses`` (context ->
    :class:`ctxwatch.analysis.Analysis`), ``analysis_error`` and ``pending`` (updates held while paused).

    Attributes kept from one log to the next: ``folder_notes`` (files of the followed folder left out),
    ``sessions`` (newest first), ``session_info`` (path -> :class:`~ctxwatch.ui.summaries.SessionInfo` the
    session picker read, ``None`` for one it could not), ``auto_session``, ``paused``, ``xaxis`` (``index`` | ``time``),
    ``filter_text`` and ``scan_note`` (why the folder is polled although file events were wanted).
    """

    paths: list[str]
    poll: bool = False
    log_path: str | None = None
    batch_files: list[str] | None = None
    #: Subagent transcripts of the Claude Code session shown (files of their own, which ``c`` goes through).
    transcripts: int = 0
    calls: dict[int, Call] = field(default_factory=dict)
    calibrations: Calibrations = NO_CALIBRATION
    costs: dict[int, float | None] = field(default_factory=dict)
    totals: Totals = field(default_factory=Totals)
    issues: list[Issue] = field(default_factory=list)
    issues_before_reset: list[Issue] = field(default_factory=list)
    view: list[int] = field(default_factory=list)
    unsplit_seen: bool = False
    contexts: list[str] = field(default_factory=list)
    context: str | None = None
    selected_index: int | None = None
    follow: bool = True
    loaded: bool = False
    failed: str | None = None
    skipped: str | None = None
    skipped_after: int | None = None  # the index of the last call read before the lines Esc skipped, or None
    notice: str | None = None
    format_name: str | None = None
    spec: Any = None
    progress: tuple[int, int] | None = None
    last_reset: str | None = None
    resets: list[str] = field(default_factory=list)
    watch_mode: str | None = None
    watch_note: str | None = None
    watch_interval: float = 0.0
    sweep_interval: float = SWEEP_INTERVAL
    analyses: dict[str, Any] = field(default_factory=dict)
    analysis_error: str | None = None
    pending: list[CallsChanged] = field(default_factory=list)
    folder_notes: list[Issue] = field(default_factory=list)
    sessions: list[str] = field(default_factory=list)
    session_info: dict[str, Any] = field(default_factory=dict)
    auto_session: bool = True
    paused: bool = False
    xaxis: str = "index"
    filter_text: str = ""
    #: The one conversation shown (the fleet view's choice, :func:`ctxwatch.ui.fleet.conversation_of`), or all.
    conversation: Conversation | None = None
    scan_note: str | None = None
    #: The files of the Claude Code session ``c`` went through last (its own, then its transcripts): a transcript
    #: goes on in that session, the one it was reached from (copies cut from a session share its id).
    cycled: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.multi:
            self.log_path = self.path

    # -- changes (called by the app's handlers only) -----------------------------------------------------
    def start_log(self, path: str, batch: list[str] | None, sweep_interval: float) -> None:
        """Drop what was known of the log shown: ``path`` is followed next (or ``batch`` read as one run)."""
        self.log_path = path
        self.batch_files = batch
        self.transcripts = 0
        self.calls = {}
        self.calibrations = NO_CALIBRATION
        self.costs = {}
        self.totals = Totals()
        self.issues = []
        self.issues_before_reset = []
        self.view = []
        self.unsplit_seen = False
        self.contexts = []
        self.context = None
        self.conversation = None
        self.selected_index = None
        self.follow = True
        self.loaded = False
        self.failed = self.skipped = self.notice = self.skipped_after = None
        self.format_name = None
        self.spec = None
        self.progress = None
        self.last_reset = None
        self.resets = []
        self.watch_mode = self.watch_note = None
        self.sweep_interval = sweep_interval
        self.analyses = {}
        self.analysis_error = None
        self.pending = []

    def take_calls(self, added: list[Call], updated: list[Call], calibrations: Calibrations | None,
                   costs: dict[int, float | None] | None = None) -> bool:
        """Take new and replaced calls, their ``costs`` (index -> USD, ``None`` unknown) into the log's totals,
        and the run's calibrations (``None``: unchanged); the first context seen becomes the one shown (``main``
        first).  Returns whether the selected call was replaced."""
        costs = costs or {}
        for c in updated:
            if (old := self.calls.get(c.index)) is not None:
                self.totals.take(old, self.costs.get(old.index), -1)
                self.costs[c.index] = costs.get(c.index)
                self.totals.take(c, self.costs[c.index])
        for c in added:
            if (old := self.calls.get(c.index)) is not None:  # (given again as new: counted once)
                self.totals.take(old, self.costs.get(old.index), -1)
            self.costs[c.index] = costs.get(c.index)
            self.totals.take(c, self.costs[c.index])
        if calibrations is not None:
            self.calibrations = calibrations
        if any(c.split_unknown and c.prompt_tokens for c in (*added, *updated)):
            self.unsplit_seen = True  # (the chart draws such prompts apart: the legend names their marker)
        new_contexts = False
        for c in added:
            self.calls[c.index] = c
            if c.context not in self.contexts:
                self.contexts.append(c.context)
                new_contexts = True
        changed_selected = False
        for c in updated:
            if c.index in self.calls:
                self.calls[c.index] = c
                changed_selected |= c.index == self.selected_index
        if new_contexts:
            if "main" in self.contexts:
                self.contexts.remove("main")
                self.contexts.insert(0, "main")
            if self.context is None:
                self.context = self.contexts[0]
        return changed_selected

    def take_issues(self, issues: list[Issue], resolved: list[Issue]) -> None:
        """New input problems, and earlier ones the reader withdrew (``resolved``)."""
        if resolved:
            self.issues = [i for i in self.issues if i not in resolved]
            self.issues_before_reset = [i for i in self.issues_before_reset if i not in resolved]
        self.issues.extend(issues)

    def clear_calls(self) -> None:
        """Forget the calls and problems read (the log is read again from its start)."""
        self.calls = {}
        self.calibrations = NO_CALIBRATION
        self.costs = {}
        self.totals = Totals()
        self.issues = []
        self.issues_before_reset = []
        self.view = []
        self.contexts = []
        self.context = None

    def reset_seen(self, reason: str, at_call: int, format_name: str | None, clear: bool) -> bool:
        """The log was truncated, rotated or replaced (``reason``) after ``at_call`` calls; ``clear``: its calls
        are read again from its start.  Returns whether it is quiet: batch files that only grew (``grew``) are
        read again whole, which nobody needs to hear of, and the calls keep their numbers and the selection."""
        quiet = reason == "grew"
        if not quiet:
            self.last_reset = f"{reason} at {tx.clock(time.time())} (after {at_call} calls)"
            self.resets.append(reason)
        if format_name:
            self.format_name = format_name
        if clear:
            self.clear_calls()  # (a fresh read sends every call and issue again)
            if not quiet:
                self.selected_index = None
        else:
            # The calls read stay (they happened), but the problems of the lines read so far are not the file's
            # any more: kept apart, listed as from before the reset.  The feed sent every problem of the old file
            # (its notes made final) before the reset.
            self.issues_before_reset.extend(listed_issues(self.issues))
            self.issues = []
        return quiet

    def backfill_done(self, cancelled: bool, resumed_line: int | None, skipped_from: int | None,
                      calls_before: int) -> bool:
        """The existing content is read; ``cancelled`` with ``resumed_line``: Esc skipped the lines from
        ``skipped_from`` (1-based) to the one before ``resumed_line``, after ``calls_before`` calls.  Returns
        whether lines were skipped (``skipped`` then says where the gap is, which no table or chart shows: the
        status line keeps it)."""
        self.loaded = True
        self.progress = None
        if not (cancelled and resumed_line is not None):
            return False
        first = skipped_from or 1
        gap = f"lines {first:,}–{resumed_line - 1:,}" if resumed_line - 1 > first else f"line {first:,}"
        where = f" (after call #{calls_before})" if calls_before else ""
        self.skipped = f"esc skipped {gap}{where}"
        self.skipped_after = calls_before - 1  # (the index of the last call read before the gap)
        return True

    # -- questions ---------------------------------------------------------------------------------------
    def in_view(self, call: Call) -> bool:
        """True when ``call`` is in the context and the conversation shown and its row text holds the filter
        (ignoring case)."""
        if self.context is not None and call.context != self.context:
            return False
        if self.conversation is not None and conversation_of(call) != self.conversation:
            return False
        return not self.filter_text or self.filter_text.lower() in tx.row_text(call, self.calibrations.breakdown(call))

    def view_calls(self) -> list[Call]:
        """The calls of the current view (context and filter), in table order."""
        return [self.calls[i] for i in self.view]

    def selected_call(self) -> Call | None:
        """The selected call, or ``None``: none is selected, or the view does not show it (the keys about the
        selected call act on a call the table shows, or say there is none)."""
        idx, view = self.selected_index, self.view
        at = bisect_left(view, idx) if idx is not None else 0  # (the view is in call order: searched, not scanned)
        return self.calls.get(idx) if idx is not None and at < len(view) and view[at] == idx else None

    @property
    def analysis(self) -> Any:
        """The analysis of the context shown (:class:`ctxwatch.analysis.Analysis`), or ``None``."""
        return self.analyses.get(self.context) if self.context is not None else None

    def context_flags(self) -> list[Any]:
        """The flags of the context shown (:class:`ctxwatch.analysis.Flag`), in the analysis's order."""
        analysis = self.analysis
        return list(analysis.flags) if analysis is not None else []

    def flags_title(self) -> str:
        """What the flags list is of: the log's name, and the context when the log has several."""
        ctx = f", context {self.context}" if self.context is not None and len(self.contexts) > 1 else ""
        return self.display_name() + ctx

    def input_problems(self) -> list[Issue]:
        """The input problems shown: the run's issues (``reset`` markers left out), then a note for each file of
        the followed folder(s) that is not read (in no known format, compressed), as ``report`` lists them."""
        return listed_issues(self.issues) + self.folder_notes

    def issues_several(self) -> bool:
        """True when the problems may come from more than one file (joined batch files, several files, or a
        file other than the followed log): the list then names each problem's file, as ``check`` does."""
        paths = {i.path for i in self.input_problems()}
        return self.batch_files is not None or len(paths) > 1 or bool(paths - {self.log_path})

    def issues_title(self) -> str:
        """What the input-problems screen lists the problems of: the log shown, and the folder's files left out
        when there are any."""
        return self.display_name() + (" and the folder's files left out" if self.folder_notes else "")

    def watch_fallback(self) -> bool:
        """True when the log is polled although file events were wanted (not ``--poll``)."""
        return self.watch_mode == "polling" and not self.poll

    def previous_in_context(self, call: Call) -> Call | None:
        """The call before ``call`` in its context (and session), or ``None``: O(calls before it) at worst."""
        for i in range(call.index - 1, -1, -1):
            c = self.calls.get(i)
            if c is not None and c.context == call.context and c.session == call.session:
                return c
        return None

    def last_plausible(self, call: Call | None) -> Call | None:
        """For a call whose reported prompt is implausible, the last call before it whose occupancy is known, in
        the same context and stream (model; quota probes apart), as the analysis keeps its "last plausible";
        ``None`` otherwise or when there is none.  Walks back from the call: O(calls before it) at worst."""
        if call is None or not call.prompt_implausible:
            return None
        for i in range(call.index - 1, -1, -1):
            c = self.calls.get(i)
            if c is not None and c.context == call.context and c.model == call.model \
                    and not c.provenance.probe and c.prompt_tokens is not None:
                return c
        return None
