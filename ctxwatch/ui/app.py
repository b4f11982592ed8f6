"""The ctxwatch dashboard app.

:class:`CtxwatchApp` starts a :class:`~ctxwatch.ui.feed.LogFeed` in a worker thread and receives its
messages; its handlers own the state (the calls, the issues, the selection, follow / pause / filter /
context / x-axis) and push it down to the widgets of :class:`MainScreen`.  No widget is touched from a
thread.  A folder is a set of sessions: the newest one is followed (and a newer one taken over
automatically) until the user picks one with ``o``; so are several files given together.  Batch request and
result files (a folder of them, or the files) are one run instead, joined by ``custom_id``.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar

from rich.text import Text
from textual import events, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.widgets import Input, ProgressBar, Static
from textual.worker import get_current_worker

from ctxwatch.accounting import NO_CALIBRATION, Calibrations
from ctxwatch.analysis import Flag
from ctxwatch.config import Settings
from ctxwatch.model import Call, Issue, counted_issues, tally_issues
from ctxwatch.output.csv import CSV_FIELDS, csv_text, write_csv
from ctxwatch.ui import text as tx
from ctxwatch.ui.feed import SWEEP_INTERVAL, BatchFeed, FolderScan, LogFeed, is_batch_set
from ctxwatch.ui.messages import (
    AnalysisChanged,
    BackfillDone,
    BackfillProgress,
    CallsChanged,
    FeedFailed,
    FeedNotice,
    FeedOpened,
    IssuesChanged,
    ResetSeen,
    ScanNotice,
    SessionsChanged,
    WatchChanged,
)
from ctxwatch.ui.screens import (
    AUTO,
    DetailScreen,
    HelpScreen,
    IssuesScreen,
    PlanScreen,
    SessionPicker,
    listed_issues,
    unique_path,
)
from ctxwatch.ui.widgets import (
    AdaptiveFooter,
    CallsTable,
    ContextBar,
    SidePanel,
    StatusLine,
    TrendChart,
    chart_legend,
    row_text,
)

__all__ = ["CSV_FIELDS", "CtxwatchApp", "FilterInput", "MainScreen", "csv_text", "export_dir", "write_csv"]

#: Below this size (columns, rows) only a "terminal too small" message and a one-line summary are shown.
MIN_WIDTH, MIN_HEIGHT = 40, 10
#: Below this size the chart and the side panel are hidden (compact layout for small tmux panes).
COMPACT_WIDTH, COMPACT_HEIGHT = 72, 22
#: Seconds the filter waits after the last keystroke before rebuilding the table.
FILTER_DELAY = 0.15
#: Issues listed in the side panel (newest first).
SIDE_ISSUES = 8
#: What the Flags section says before the log's calls are read (reading, or waiting for a file, a folder's first
#: log or an empty file's first record): flags are computed from calls.
FLAGS_PENDING = "none until calls are read"
#: Flags listed in the side panel (newest first).
SIDE_FLAGS = 30
#: How each flag severity is shown: a text mark (reads without colour) and a style.
SEVERITY_MARKS: dict[str, tuple[str, str]] = {"critical": ("!!", "bold red"), "warn": ("!", "yellow"),
                                              "info": ("i", "cyan")}
SEVERITY_ORDER = {"info": 0, "warn": 1, "critical": 2}


class FilterInput(Input):
    """The ``/`` filter box: Enter keeps the filter and returns to the table, Escape clears it."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "clear_filter", "Clear filter")]

    def action_clear_filter(self) -> None:
        """Clear the filter and hide the box."""
        self.value = ""
        app = self.app
        if isinstance(app, CtxwatchApp):
            app.apply_filter("")
            app.hide_filter()


class ChartRow(Horizontal):
    """The chart and the side panel.  The side panel's text depends on the rows this row gets, which change
    with the terminal and with the status line's height, so a resize redraws it."""

    def on_resize(self, event: events.Resize) -> None:
        """Redraw the side panel for the new size."""
        app = self.app
        if isinstance(app, CtxwatchApp):
            app.refresh_panels(chart=False)


class MainScreen(Screen[None]):
    """Status line, progress bar, context bar, trend chart + side panel, calls table, filter box, footer.

    The layout adapts to the terminal: compact below ``COMPACT_WIDTH x COMPACT_HEIGHT`` (no chart, no side
    panel: one line under the bar names the most severe flag instead), and a "terminal too small" message
    below ``MIN_WIDTH x MIN_HEIGHT``.
    """

    DEFAULT_CSS = """
    MainScreen #status { height: auto; max-height: 3; }
    MainScreen #progress { height: 1; padding: 0 1; display: none; }
    MainScreen #progress.-active { display: block; }
    MainScreen #middle { height: 1fr; min-height: 6; }
    MainScreen #chart { width: 2fr; }
    MainScreen #side { width: 1fr; min-width: 26; max-width: 64; border-left: vkey $primary 50%;
        overflow-y: auto; }
    MainScreen #calls { height: 1fr; min-height: 3; }
    MainScreen #flagline { display: none; height: 1; padding: 0 1; }
    MainScreen.-compact #flagline { display: block; }
    MainScreen #filter { display: none; height: 1; border: none; padding: 0 1; }
    MainScreen #filter.-active { display: block; }
    MainScreen #toosmall { display: none; content-align: center middle; width: 100%; height: 100%; }
    MainScreen.-compact #middle { display: none; }
    MainScreen.-compact #status { max-height: 1; }
    MainScreen.-tiny #main { display: none; }
    MainScreen.-tiny AdaptiveFooter { display: none; }
    MainScreen.-tiny #toosmall { display: block; }
    """

    #: True once mounted: from then on the app pushes data into the widgets.
    ready = False

    def compose(self) -> ComposeResult:
        """The widgets; the app fills them."""
        with Vertical(id="main"):
            yield StatusLine(Text("starting…"), id="status")
            yield ProgressBar(id="progress", show_eta=False)
            yield ContextBar(id="bar")
            yield Static(Text(""), id="flagline")
            with ChartRow(id="middle"):
                yield TrendChart(id="chart")
                yield SidePanel(Text("flags: none"), id="side")
            yield CallsTable(id="calls")
            yield FilterInput(placeholder="filter calls (model, context, time, numbers) · enter keeps · esc clears",
                              id="filter")
        yield Static("", id="toosmall")
        yield AdaptiveFooter()

    def on_mount(self) -> None:
        """Apply the layout for the current size, show calls that arrived before mounting, focus the table."""
        self.ready = True
        self.apply_size(self.app.size.width, self.app.size.height)
        self.query_one(CallsTable).focus()
        app = self.app
        if isinstance(app, CtxwatchApp) and app.calls:
            app.rebuild_view()

    def on_resize(self, event: events.Resize) -> None:
        """Switch between full, compact and too-small layouts as the terminal is resized."""
        self.apply_size(event.size.width, event.size.height)

    def apply_size(self, width: int, height: int) -> None:
        """Set the layout classes for a ``width`` x ``height`` terminal."""
        tiny = width < MIN_WIDTH or height < MIN_HEIGHT
        compact = not tiny and (width < COMPACT_WIDTH or height < COMPACT_HEIGHT)
        self.set_class(tiny, "-tiny")
        self.set_class(compact, "-compact")
        table = self.query_one(CallsTable)
        table.set_model_width(16 if width < 100 else 20 if width < 140 else 28)
        app = self.app
        if isinstance(app, CtxwatchApp):
            table.set_compact(compact, app.view_calls(), app.settings)
            app.refresh_panels()


class CtxwatchApp(App[None]):
    """The dashboard: follow one log (or the sessions of a folder) and show how its context is spent.

    Args:
        path: a log file, or a folder of logs (Claude Code projects folder, Codex sessions tree), or several
            of them (a sequence).  A folder, or several paths, holding session logs is a set of sessions: the
            newest is followed, ``o`` picks another.  When all their files are OpenAI or Anthropic batch files
            (requests and results) they are read as one run, results joined to requests by ``custom_id``
            (:class:`~ctxwatch.ui.feed.BatchFeed`).
        fmt: format name, or ``None`` to detect.
        settings: thresholds (budget 0.6 of the window, trigger 0.8 of the budget, reserve 0.15).
        poll: follow the log by polling it every 250 ms instead of with file events (``--poll``: network,
            WSL and container filesystems).  Without it the feed watches the log's folder with ``watchfiles``
            and falls back to polling by itself, with a notice, when events fail or stay silent.  A folder's
            tree is followed the same way (:class:`~ctxwatch.ui.feed.FolderScan`): with ``poll``, by stats of
            its newest files and folders every 2 s and a full listing every 10 s; so it is, with a notice
            (:attr:`scan_note`), when its events fail or its filesystem sends none.
        last: show only the last N calls of the existing content.

    State (read by tests): ``calls`` (index -> :class:`~ctxwatch.model.Call`), ``calibrations`` (the run's,
    :class:`~ctxwatch.accounting.Calibrations`: every floor and history shown goes through its ``breakdown``),
    ``issues`` (the input problems of the log as it is now), ``issues_before_reset`` (those of lines read before its
    last reset: listed, not counted), ``view`` (call indexes in table order), ``selected_index``, ``follow``,
    ``paused``, ``xaxis`` (``index`` | ``time``), ``filter_text``, ``context``, ``contexts``, ``loaded`` (backfill
    done), ``log_path``, ``format_name``, ``last_reset``, ``resets`` (their reasons, in order), ``watch_mode``
    (``events`` | ``polling`` | ``None``), ``watch_note`` (why, or ``None``), ``feed`` (the current
    :class:`~ctxwatch.ui.feed.LogFeed`), ``paths`` (as given), ``sessions``, ``batch_files`` (the joined batch
    files, or ``None``), ``folder_scan`` (what follows the folder(s), or ``None``) and ``scan_note`` (why it polls
    although file events were wanted, or ``None``).
    """

    TITLE = "ctxwatch"
    CSS = """
    Screen { background: $background; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit"),
        # ctrl+c quits too, as in tail and most terminal tools (Textual's default only says "press ctrl+q");
        # a priority binding, so it also quits from the filter box and the detail view.
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True),
        Binding("enter", "detail", "Detail"),
        Binding("f", "toggle_follow", "Follow"),
        Binding("p", "toggle_pause", "Pause"),
        Binding("t", "toggle_xaxis", "X-axis"),
        Binding("e", "evict", "Evict"),
        Binding("slash", "filter", "Filter"),
        Binding("c", "cycle_context", "Context"),
        Binding("o", "sessions", "Sessions", show=False),
        Binding("i", "issues", "Problems", tooltip="Input problems: every bad line and note"),
        Binding("s", "save_svg", "SVG"),
        Binding("x", "export_csv", "CSV"),
        Binding("question_mark", "help", "Help"),
        Binding("escape", "cancel_backfill", "Cancel backfill", show=False),
    ]

    def __init__(self, path: str | Sequence[str], *, fmt: str | None = None, settings: Settings | None = None,
                 poll: bool = False, last: int | None = None) -> None:
        super().__init__()
        self.paths = [path] if isinstance(path, str) else list(path)
        if not self.paths:
            raise ValueError("CtxwatchApp needs at least one path")
        self.path = self.paths[0] if len(self.paths) == 1 else " + ".join(self.paths)
        self.is_dir = len(self.paths) == 1 and os.path.isdir(self.paths[0])
        #: A set of files (a folder, or several paths): sessions to pick from, or one joined batch run.
        self.multi = self.is_dir or len(self.paths) > 1
        self.batch_files: list[str] | None = None
        self.fmt = fmt
        self.settings = settings or Settings()
        self.poll = poll
        self.last = last
        # State owned by the message handlers.
        self.calls: dict[int, Call] = {}
        self.calibrations: Calibrations = NO_CALIBRATION
        self.issues: list[Issue] = []
        # Problems of lines read before the log's last reset (truncated, replaced): the file now does not hold
        # those lines, so they are listed apart and not counted, as check on the file now would not see them.
        self.issues_before_reset: list[Issue] = []
        self.folder_notes: list[Issue] = []  # files of the followed folder(s) left out (see input_problems)
        self.view: list[int] = []
        self._unsplit_seen = False  # a call whose prompt has no floor / history split was seen
        self.contexts: list[str] = []
        self.context: str | None = None
        self.selected_index: int | None = None
        self.follow = True
        self.paused = False
        self.xaxis = "index"
        self.filter_text = ""
        self.loaded = False
        self.log_path: str | None = None if self.multi else self.path
        self.format_name: str | None = None
        self.spec: Any = None
        self.failed: str | None = None
        self.skipped: str | None = None  # (the lines Esc skipped: the problems screen says not every line was read)
        self.notice: str | None = None
        self.progress: tuple[int, int] | None = None
        self.last_reset: str | None = None
        self.resets: list[str] = []  # reasons of the resets of the current log, in order
        self.watch_mode: str | None = None
        self.watch_note: str | None = None
        self.watch_interval = 0.0
        self.feed: LogFeed | None = None  # a BatchFeed (a LogFeed) for joined batch files
        self.sessions: list[str] = []
        self.auto_session = True
        self.saved: list[str] = []  # files written by s / x (for the status line and tests)
        self.analyses: dict[str, Any] = {}  # context -> ctxwatch.analysis.Analysis (None before it lands)
        self.analysis_error: str | None = None
        self._pending: list[CallsChanged] = []
        self._feed_id = 0
        self._stop = threading.Event()
        self._cancel = threading.Event()
        self._scan_stop = threading.Event()
        self.folder_scan: FolderScan | None = None  # (following the folder(s) and files, when several)
        self.scan_note: str | None = None  # (why the folder scan polls although file events were wanted)
        self._filter_timer: Any = None
        self.main: MainScreen | None = None

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = False) -> None:
        """A toast that shows its text literally, always: notifications name files, folders and errors, which
        come from the logs (a file name carrying ``ESC]0;…BEL`` retitled the terminal, ``ESC[2J`` blanked it).
        ``markup`` is accepted for the base signature and ignored: nothing here is ever parsed as markup."""
        super().notify(tx.clean(message), title=tx.clean(title, multiline=False), severity=severity,
                       timeout=timeout, markup=False)

    # ------------------------------------------------------------------ start and stop
    def get_default_screen(self) -> Screen[Any]:
        """The main dashboard screen."""
        self.main = MainScreen()
        return self.main

    def on_mount(self) -> None:
        """Start following the file, or scanning the folder(s) and files for sessions or batch files."""
        if self.multi:
            self._scan_worker(self.paths, self._scan_stop)
        else:
            self._start_feed(self.path)
        self.refresh_panels()

    def on_unmount(self) -> None:
        """Stop the reading threads."""
        self._stop.set()
        self._scan_stop.set()

    async def action_quit(self) -> None:
        """Stop the reading threads and quit."""
        self._stop.set()
        self._scan_stop.set()
        self.exit()

    def _start_feed(self, path: str, batch: list[str] | None = None) -> None:
        """Drop the current state and follow ``path`` with a fresh feed, or read the ``batch`` files as one
        joined run (``path`` is then their label)."""
        self._stop.set()
        self._feed_id += 1
        self._stop = threading.Event()
        self._cancel = threading.Event()
        self.log_path = path
        self.calls = {}
        self.calibrations = NO_CALIBRATION
        self.issues = []
        self.issues_before_reset = []
        self.view = []
        self._unsplit_seen = False
        self.contexts = []
        self.context = None
        self.selected_index = None
        self.follow = True
        self.loaded = False
        self.failed = None
        self.skipped = None
        self.notice = None
        self.format_name = None
        self.spec = None
        self.progress = None
        self.last_reset = None
        self.resets = []
        self.watch_mode = None
        self.watch_note = None
        self.analyses = {}
        self.analysis_error = None
        self._pending = []
        if self._mounted():
            self._table().set_calibrations(NO_CALIBRATION)
            self._table().set_calls([], self.settings)
        self.batch_files = batch
        if batch is not None:
            self.feed = BatchFeed(batch, self.post_message, self._stop, fmt=self.fmt, settings=self.settings,
                                  last=self.last, feed_id=self._feed_id)
        else:
            self.feed = LogFeed(path, self.post_message, self._stop, fmt=self.fmt, settings=self.settings,
                                last=self.last, feed_id=self._feed_id, cancel_backfill=self._cancel,
                                poll=self.poll)
        self._feed_worker(self.feed)
        self._push_issues()  # (an open list of input problems shows the new session's)
        self.refresh_panels()

    @work(thread=True, group="feed", exit_on_error=False)
    def _feed_worker(self, feed: LogFeed) -> None:
        worker = get_current_worker()
        stop = feed.stop
        watcher = threading.Thread(target=_stop_on_cancel, args=(worker, stop), daemon=True)
        watcher.start()
        try:
            feed.run()
        except Exception as exc:  # a bug must show up on screen, not kill the app silently
            self.post_message(FeedFailed(feed.feed_id, f"reading stopped: {type(exc).__name__}: {exc}"))
        finally:
            stop.set()

    @work(thread=True, group="scan", exit_on_error=False)
    def _scan_worker(self, paths: list[str], stop: threading.Event) -> None:
        """Follow the log files of ``paths`` (:class:`~ctxwatch.ui.feed.FolderScan`: file events and the
        newest files' stats, a full listing now and then) and post them when they change, saying whether they
        are batch files to join (detection runs here, off the UI thread)."""
        # (stop is set when the app unmounts or quits: the scan waits on it, in watchfiles or between checks)
        self.folder_scan = scan = FolderScan(paths, self.fmt, poll=self.poll)

        def emit(files: list[str], left_out: list[Issue]) -> None:
            self.post_message(SessionsChanged(files, is_batch_set(files, self.fmt), left_out))

        scan.run(stop, emit, lambda note: self.post_message(ScanNotice(note)))

    # ------------------------------------------------------------------ widgets
    def _table(self) -> CallsTable:
        assert self.main is not None
        return self.main.query_one(CallsTable)

    def _mounted(self) -> bool:
        """True while the main screen's calls table and filter box are there to take the state: from the screen's
        mount until the app takes its screens down.  When the app quits it takes them down while its message
        loop still runs, so a worker's message (new calls, a reset, a newer session) can be handled after one of
        them is gone: the handler then keeps the state and shows nothing, instead of raising NoMatches on the
        way out.  Handlers do not await, so a widget found here is still there when they use it; the panels
        :meth:`refresh_panels` fills are checked there."""
        main = self.main
        if main is None or not main.ready:
            return False
        try:
            main.query_one(CallsTable)
            main.query_one(FilterInput)
        except NoMatches:
            return False
        return True

    def view_calls(self) -> list[Call]:
        """The calls of the current view (context and filter), in table order."""
        return [self.calls[i] for i in self.view]

    def selected_call(self) -> Call | None:
        """The selected call, or ``None``."""
        return self.calls.get(self.selected_index) if self.selected_index is not None else None

    def refresh_panels(self, chart: bool = True) -> None:
        """Push the current state to the status line, bar, chart, side panel and too-small message."""
        if not self._mounted():
            return
        try:
            self._refresh_panels(chart)
        except NoMatches:
            # The main screen is being rebuilt (a session switch, a layout change): its widgets are not
            # all there yet. The next update, at most a quarter of a second away, draws the whole state.
            return

    def _refresh_panels(self, chart: bool) -> None:
        main = self.main
        assert main is not None
        main.query_one(StatusLine).update(self._status_text())
        call = self.selected_call()
        note = self.failed or self.notice or ("reading…" if not self.loaded else "no calls in this view")
        main.query_one(ContextBar).show(call, self.settings, note, self.drift_note(call), self.last_plausible(call),
                                        self.calibrations)
        if chart and not main.has_class("-compact") and not main.has_class("-tiny"):
            main.query_one(TrendChart).show(self.view_calls(), self.settings, self.xaxis, self.calibrations)
        if not main.has_class("-compact") and not main.has_class("-tiny"):
            side = main.query_one(SidePanel)
            # (the panel grows with its text: the rows it may fill are those of the chart's row)
            rows = main.query_one("#middle").size.height
            side.update(self._side_text(rows, max(10, side.size.width)))
        if main.has_class("-compact"):
            main.query_one("#flagline", Static).update(self.flag_line(max(10, self.size.width - 2)))
        if main.has_class("-tiny"):
            main.query_one("#toosmall", Static).update(self._tiny_text())
        bar = main.query_one(ProgressBar)
        if self.progress is not None and not self.loaded:
            bar.add_class("-active")
            done, total = self.progress
            bar.update(total=max(1, total), progress=done)
        else:
            bar.remove_class("-active")

    def _status_text(self) -> Text:
        """Two groups of segments: what is read (file, format, calls, problems, tokenizer, window) and the
        view (follow / paused, reading progress, x axis, filter, last reset, notices).  Compact: one line."""
        assert self.main is not None
        compact = self.main.has_class("-compact")
        width = max(10, self.size.width - 2)
        file_seg = tx.literal(self.display_name(), "bold", limit=24 if compact else 48)
        if self.batch_files is not None and not compact:
            file_seg.append(" (joined by custom_id)", "dim")
        elif self.multi and not compact:
            # (o, the key that picks another session, has no room in an 80-column footer: named here)
            file_seg.append(f" ({self._session_pos()}, {'auto' if self.auto_session else 'picked'} · o: sessions)",
                            "dim")
        n_view, n_all = len(self.view), len(self.calls)
        calls_seg = Text(f"{n_all:,} call{'s' if n_all != 1 else ''}")
        ctx_seg = Text()
        if self.context is not None and len(self.contexts) > 1:
            ctx_seg.append("ctx ")
            ctx_seg.append_text(tx.literal(self.context, limit=24))
            ctx_seg.append(f" {self.contexts.index(self.context) + 1}/{len(self.contexts)} ({n_view:,})")
        bad, notes = tally_issues(self.input_problems())  # (a line with two issues is one bad line, as check)
        bad_seg = Text(f"{bad} bad line{'s' if bad != 1 else ''}", "bold yellow" if bad else "")
        if notes:  # (batch results without their request, skipped files: not damage, still worth a look)
            bad_seg.append(f", {notes} note{'s' if notes != 1 else ''}", "yellow")
        call = self.selected_call() or (self.calls[self.view[-1]] if self.view else None)
        tok_seg = Text()
        win_seg = Text()
        if call is not None:
            tok_seg = Text(f"{call.tokenizer}{'' if call.exact else ' (approx)'}")
            win_seg = Text(f"window {tx.tokens(call.window)} ({call.window_src})" if call.window
                           else "window unknown")
        if self.paused:
            waiting = sum(len(m.added) for m in self._pending)
            mode_seg = Text(f"PAUSED (+{waiting} new)", "bold reverse yellow")
        elif self.follow:
            mode_seg = Text("FOLLOW", "bold green")
        else:
            mode_seg = Text("follow off (f)", "dim")
        read_seg = Text()
        if self.failed:
            read_seg = tx.literal(self.failed, "bold red", limit=200)
        elif not self.loaded and (self.log_path is not None or self.batch_files is not None):
            if self.progress:
                done, total = self.progress
                read_seg = Text(f"reading {tx.pct(done, total, 0)} (esc skips to the end)")
            else:
                read_seg = Text("reading…")
        filter_seg = Text()
        if self.filter_text:
            filter_seg.append("filter ")
            filter_seg.append_text(tx.literal(repr(self.filter_text), "bold", limit=30))
            filter_seg.append(f" ({len(self.view):,} match)")
        reset_seg = Text("last reset: ")
        reset_seg.append(self.last_reset or "none", "bold yellow" if self.last_reset else "")
        # (with no call to show, the bar shows the notice: not twice)
        shown = self.notice and self.selected_call() is not None
        notice_seg = tx.literal(self.notice, "yellow", limit=120) if shown else Text()
        watch_seg = self._watch_text()
        if compact:
            line = tx.flow([file_seg, calls_seg, ctx_seg, bad_seg, mode_seg, read_seg, filter_seg,
                            watch_seg if self._watch_fallback() else Text(),
                            reset_seg if self.last_reset else Text()], 10**6)
            line.no_wrap = True
            line.overflow = "ellipsis"
            return line
        return tx.flow([file_seg, Text(self.format_name or "?"), calls_seg, ctx_seg, bad_seg, tok_seg, win_seg,
                        mode_seg, read_seg, watch_seg, Text(f"x: {self.xaxis}"), filter_seg, reset_seg, notice_seg],
                       width)

    def display_name(self) -> str:
        """What the status line calls the log: the file name, the batch files' names joined by `` + ``, the
        folder's name, or ``N paths`` before the first session of several paths is chosen."""
        if self.batch_files is not None:
            return " + ".join(os.path.basename(f) for f in self.batch_files)
        if self.log_path:
            return os.path.basename(self.log_path) or self.log_path
        if self.is_dir:
            return os.path.basename(self.path.rstrip(os.sep)) or self.path
        return f"{len(self.paths)} paths"

    def _watch_fallback(self) -> bool:
        """True when the feed polls although file events were wanted (not ``--poll``)."""
        return self.watch_mode == "polling" and not self.poll

    def _watch_text(self) -> Text:
        """``live: polling 0.25 s``, with ``(fallback)`` in yellow when file events failed or stayed silent;
        nothing while file events work (the usual case; the side panel says it)."""
        if self.watch_mode != "polling":
            return Text()
        out = Text(f"live: polling {self.watch_interval:g} s")
        if self._watch_fallback():
            out.append(" (fallback)")
            out.stylize("bold yellow")
        return out

    def _session_pos(self) -> str:
        """``session 2/5`` (newest first), counting sessions, not files: a Claude Code subagent transcript
        (``<session>/subagents/agent-*.jsonl``) belongs to its session, so it is shown as ``subagent of session
        2/5`` (or ``subagent`` when its session's file is not among the logs)."""
        mains = [f for f in self.sessions if not _is_subagent_file(f)]
        path = self.log_path or ""
        if not self.sessions:
            return "no log yet"
        if not _is_subagent_file(path):
            pos = mains.index(path) + 1 if path in mains else "?"
            return f"session {pos}/{len(mains)}"
        # v2.1.x: <session>/subagents/agent-x.jsonl belongs to <session>.jsonl (v2.0.x names no session)
        owner = os.path.dirname(os.path.dirname(path)) + ".jsonl"
        owned = os.path.basename(os.path.dirname(path)) == "subagents" and owner in mains
        return f"subagent of session {mains.index(owner) + 1}/{len(mains)}" if owned else "subagent"

    def _side_text(self, height: int = 0, width: int = 0) -> Text:
        """Flags of the current context (newest first), the forecast, input problems, the chart's legend.

        Args:
            height: rows the panel shows (0: unknown, the full text).  When the full text, wrapped at
                ``width``, is taller than that (an 80x24 terminal), every section gets one line instead, cut
                with ``…``, so the forecast and the input problems stay in sight below the flags.
            width: cells per row of the panel's content.
        """
        full = self._side_full()
        if height <= 0 or width <= 0 or len(full.wrap(self.console, width)) <= height:
            return full
        return self._side_tight(height, width)

    def _side_full(self) -> Text:
        out = Text()
        analysis = self.analyses.get(self.context) if self.context is not None else None
        out.append("Flags", "bold")
        if self.analysis_error:
            out.append("\n")
            out.append_text(tx.literal(self.analysis_error, "yellow", limit=200))
            out.append("\n")
        elif analysis is None:
            out.append("\n")
            out.append(f"{FLAGS_PENDING if not self.loaded else 'none yet'}\n", "dim")
        else:
            flags = self._side_flags()
            out.append(f" ({len(flags)}, newest first)\n" if flags else "\n", "bold")
            if not flags:
                out.append("none\n", "dim")
            for f in flags[:SIDE_FLAGS]:
                out.append_text(self._flag_entry(f))
                out.append("\n")
            out.append("\nForecast\n", "bold")
            out.append_text(tx.literal(analysis.forecast.text(), limit=300))
            out.append("\n")
        bad = self.input_problems()
        out.append(f"\nInput problems{_problem_count(bad)}\n", "bold")
        if not bad:
            out.append("none\n", "dim")
        for i in reversed(bad[-SIDE_ISSUES:]):
            out.append_text(_where(i))
            out.append(f": {i.kind}\n", "yellow")
        if bad:
            out.append("i lists them all: file, line, message\n" if len(bad) > 1 else "i shows its message\n", "dim")
        if self.issues_before_reset:
            out.append(f"{self._before_reset()} from before the log's last reset, not counted (i lists them)\n",
                       "dim")
        if self.watch_mode is not None or self.scan_note:
            out.append("\nWatching\n", "bold")
            out.append_text(self._watch_detail("\n"))
            out.append("\n")
        out.append("\nChart\n", "bold")
        out.append_text(chart_legend(self._unsplit_seen))
        return out

    def _side_tight(self, height: int, width: int) -> Text:
        """The side panel in ``height`` rows: a line per flag (newest first, as many as fit; the most severe,
        shortest first, wrap whole into rows left over), then one line each for the forecast, the input
        problems and the watch mode (these wrap into rows still left, in that order); the chart legend is
        left out (the chart names its marks under its axis)."""
        analysis = self.analyses.get(self.context) if self.context is not None else None
        forecast = None
        if analysis is not None and not self.analysis_error:
            forecast = Text.assemble(("Forecast ", "bold"), tx.literal(analysis.forecast.text(), limit=300))
        bad = self.input_problems()
        problems = Text.assemble((f"Input problems{_problem_count(bad, short=True)} ", "bold"))
        if bad:
            problems.append("newest: ", "yellow")
            problems.append_text(_where(bad[-1]))
            problems.append(f": {bad[-1].kind}", "yellow")
        else:
            problems.append("none", "dim")
        if self.issues_before_reset:
            problems.append(f" · {self._before_reset()} before reset", "dim")
        # Each item is its longer forms, then the one it always has room for: the problems name their key (i)
        # only in rows that no other section needs.
        tail = [[Text.assemble(problems, (" · i lists all", "dim")), problems] if bad else [problems]]
        if self.watch_mode is not None or self.scan_note:
            tail.append([Text.assemble(("Watching ", "bold"), self._watch_detail(" · "))])
        rows: list[Text] = []
        room = height - len(tail) - (forecast is not None) - 1  # (rows beyond one line per item and the heading)
        if self.analysis_error:
            rows = [Text("Flags", "bold"), tx.literal(self.analysis_error, "yellow", limit=200)]
            room -= 1
        elif analysis is None:
            pending = Text.assemble(("Flags ", "bold"), ("none yet" if self.loaded else FLAGS_PENDING, "dim"))
            rows = list(pending.wrap(self.console, width))  # (whole, in rows no flag needs; else cut with …)
            if len(rows) - 1 > room:
                rows = [pending]
            room -= len(rows) - 1
        else:
            flags = self._side_flags()
            rows = [Text.assemble(("Flags ", "bold"), ("none", "dim"))] if not flags else \
                [Text(f"Flags ({len(flags)}, newest first)", "bold")]
            # One line per flag, as many as fit (with a "+N older" row for the rest); rows left over let flags
            # wrap whole: the most severe first and, among equals, the shortest (more reasons read whole).
            fit = len(flags) if len(flags) <= room else max(0, room - 1)
            entries = [[self._flag_entry(f)] for f in flags[:fit]]
            spare = room - fit - (fit < len(flags))
            wraps = [list(e[0].wrap(self.console, width)) for e in entries]
            for i in sorted(range(fit), key=lambda i: (-SEVERITY_ORDER.get(flags[i].severity, 0), len(wraps[i]), i)):
                wrapped = wraps[i]
                if len(wrapped) - 1 <= spare:
                    spare -= len(wrapped) - 1
                    entries[i] = wrapped
            rows += [line for entry in entries for line in entry]
            if fit < len(flags):
                hint = f"+{len(flags) - fit} older (a taller terminal lists them)"
                rows.append(Text(hint if len(hint) <= width else f"+{len(flags) - fit} older", "dim"))
            room = spare
        # The forecast, the input problems and the watch mode: a line each, wrapped whole into rows left over.
        items = ([[forecast]] if forecast is not None else []) + tail
        placed: list[list[Text]] = []
        for forms in items:
            wrapped = list(forms[-1].wrap(self.console, width))
            if 1 < len(wrapped) <= room + 1:
                room -= len(wrapped) - 1
                placed.append(wrapped)
            else:
                placed.append([forms[-1]])  # (one line, cut with … if longer)
        # Then a longer form of an item where the rows it adds are still free once every item has its rows.
        for k, forms in enumerate(items):
            for better in forms[:-1]:
                lines = list(better.wrap(self.console, width))
                if len(lines) - len(placed[k]) <= room:
                    room -= len(lines) - len(placed[k])
                    placed[k] = lines
                    break
        rows += [line for lines in placed for line in lines]
        out = Text()
        for i, line in enumerate(rows):
            line.truncate(width, overflow="ellipsis")
            if i:
                out.append("\n")
            out.append_text(line)
        return out

    def _before_reset(self) -> str:
        """``+2``: the number of problems of lines read before the log's last reset, which the counts leave out
        (:attr:`issues_before_reset`)."""
        return f"+{len(self.issues_before_reset):,}"

    def _side_flags(self) -> list[Flag]:
        """The current context's flags, newest first (most severe first within a call)."""
        analysis = self.analyses.get(self.context) if self.context is not None else None
        if analysis is None:
            return []
        return sorted(analysis.flags, key=lambda f: (-f.call, -SEVERITY_ORDER.get(f.severity, 0)))

    @staticmethod
    def _flag_entry(f: Flag) -> Text:
        """``!! #38 system_prompt_evicted: <reason>``, the reason displayed literally."""
        mark, style = SEVERITY_MARKS.get(f.severity, ("?", ""))
        out = Text()
        out.append(f"{mark} #{f.call + 1} {f.kind}", style)
        out.append(": ")
        out.append_text(tx.literal(f.reason, limit=160))
        return out

    def _watch_detail(self, sep: str) -> Text:
        """How the log is watched: the feed's note when it fell back or waits, else events and the sweep (nothing
        before a log is followed); then, after ``sep``, why the folder's sessions are polled, when they are as a
        fall back."""
        out = Text()
        if self.watch_note:
            out = tx.literal(self.watch_note, "yellow" if self._watch_fallback() else "", limit=300)
        elif self.watch_mode is not None:
            sweep = self.feed.sweep_interval if self.feed is not None else SWEEP_INTERVAL
            out = Text(f"file events on the log's folder, and a check every {sweep:g} s")
        if self.scan_note:
            if out:
                out.append(sep)
            out.append_text(tx.literal(f"folder: {self.scan_note}", "yellow", limit=400))
        return out

    def flag_line(self, width: int = 80) -> Text:
        """The compact layout's one line about flags (it has no side panel): the most severe flag raised at or
        before the selected call, the newest of those, e.g. ``!! #38 system prompt evicted (+3 more): system
        prompt absent from request #38 …``, cut to the line with an ellipsis.  ``(+N more)`` counts the other
        flags of the context.  The line follows the selection, so moving up the table tells the run's story.

        Args:
            width: cells available; longer lines end with ``…``.
        """
        analysis = self.analyses.get(self.context) if self.context is not None else None
        if self.analysis_error:
            out = tx.literal(self.analysis_error, "yellow", limit=200)
        elif analysis is None:
            out = Text(f"flags: {'none yet' if self.loaded else FLAGS_PENDING}", "dim")
        else:
            flags = list(analysis.flags)
            upto = self.selected_index if self.selected_index is not None else max((f.call for f in flags),
                                                                                  default=0)
            seen = [f for f in flags if f.call <= upto]
            if not flags:
                out = Text("flags: none", "dim")
            elif not seen:
                out = Text(f"flags: none up to #{upto + 1} ({len(flags)} later)", "dim")
            else:
                f = max(seen, key=lambda f: (SEVERITY_ORDER.get(f.severity, 0), f.call))
                mark, style = SEVERITY_MARKS.get(f.severity, ("?", ""))
                out = Text()
                out.append(f"{mark} #{f.call + 1} {f.kind.replace('_', ' ')}", style)
                if len(flags) > 1:
                    out.append(f" (+{len(flags) - 1} more)", "dim")
                out.append(": ")
                out.append_text(tx.literal(f.reason, limit=300))
        if out.cell_len > width:
            out.truncate(width, overflow="ellipsis")
        return out

    def last_plausible(self, call: Call | None) -> Call | None:
        """For a call whose reported prompt is implausible (B13), the last call before it whose occupancy is
        known, in the same context and stream (model; quota probes apart), as the analysis keeps its "last
        plausible" (the flag names the same call, unless that one was a one-call dip the forecast left out);
        ``None`` otherwise or when there is none.  Walks back from the call: O(calls before it) at worst."""
        if call is None or not call.prompt_implausible:
            return None
        for i in range(call.index - 1, -1, -1):
            c = self.calls.get(i)
            if c is not None and c.context == call.context and c.model == call.model \
                    and not c.extra.get("probe") and c.prompt_tokens is not None:
                return c
        return None

    def drift_note(self, call: Call | None) -> Text | None:
        """``drift risk high: <why> (<headroom>)`` for ``call`` from the current analysis, or ``None``.

        The analysis writes the level at the start of its reason (``high: ...``); it is said once here.
        """
        if call is None:
            return None
        analysis = self.analyses.get(call.context)
        if analysis is None:
            return None
        for risk in analysis.drift_risk:
            if risk.call == call.index:
                style = {"critical": "bold red", "high": "red", "medium": "yellow"}.get(risk.level, "dim")
                out = Text(f"drift risk {risk.level}", style)
                if risk.level != "low":
                    why = risk.reason
                    if why.startswith(f"{risk.level}: "):
                        why = why[len(risk.level) + 2:]
                    out.append(": ")
                    out.append_text(tx.literal(why, limit=200))
                return out
        return None

    def _tiny_text(self) -> Text:
        w, h = self.size
        out = Text(f"Terminal too small ({w}x{h}): ctxwatch needs at least {MIN_WIDTH}x{MIN_HEIGHT}.\n",
                   style="bold")
        call = self.selected_call()
        if call is not None:
            out.append(f"call #{call.index + 1} · used {tx.pct(call.used_tokens, call.window)} · "
                       f"{len(self.calls)} calls")
        return out

    # ------------------------------------------------------------------ feed messages
    def _ours(self, message: Any) -> bool:
        return getattr(message, "feed", None) == self._feed_id

    def on_feed_opened(self, message: FeedOpened) -> None:
        """The log's format is known."""
        if not self._ours(message):
            return
        self.format_name = message.format_name
        self.spec = message.spec
        self.notice = None
        self.refresh_panels(chart=False)

    def on_calls_changed(self, message: CallsChanged) -> None:
        """New or updated calls: update the state, then the table, bar and chart (unless paused)."""
        if not self._ours(message):
            return
        if self.paused:
            self._pending.append(message)
            self.refresh_panels(chart=False)
            return
        self._apply_calls(message.added, message.updated, message.calibrations)

    def _apply_calls(self, added: list[Call], updated: list[Call],
                     calibrations: Calibrations | None = None) -> None:
        """Take new and replaced calls, and the run's calibrations with them (``None``: unchanged), into the state,
        the table, the bar and the chart."""
        if calibrations is not None:
            self.calibrations = calibrations
        new_contexts = False
        for c in (*added, *updated):
            if c.split_unknown and c.prompt_tokens:
                self._unsplit_seen = True  # (the chart draws such prompts apart: the legend names their marker)
                break
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
        if not self._mounted():
            return
        table = self._table()
        table.set_calibrations(self.calibrations)  # (a no-op unless they changed: then every row is shown anew)
        fresh = [c for c in added if self._in_view(c)]
        if fresh:
            table.append_calls(fresh, self.settings)
            self.view.extend(c.index for c in fresh)
        in_view = set(self.view) if updated else set()
        for c in updated:
            if c.index in in_view:
                table.update_call(c, self.settings)
        if fresh and (self.follow or self.selected_index is None):
            self._select_row(len(self.view) - 1)
        self.refresh_panels()

    def _in_view(self, call: Call) -> bool:
        if self.context is not None and call.context != self.context:
            return False
        return not self.filter_text or self.filter_text.lower() in row_text(call, self.calibrations.breakdown(call))

    def on_issues_changed(self, message: IssuesChanged) -> None:
        """New input problems: counted in the status line, listed in the side panel."""
        if not self._ours(message):
            return
        if message.resolved:
            self.issues = [i for i in self.issues if i not in message.resolved]
            self.issues_before_reset = [i for i in self.issues_before_reset if i not in message.resolved]
        self.issues.extend(message.issues)
        self._push_issues()
        self.refresh_panels(chart=False)

    def on_reset_seen(self, message: ResetSeen) -> None:
        """The file was truncated / rotated / replaced: say so (calls read so far stay unless ``clear``)."""
        if not self._ours(message):
            return
        # Batch files that only grew (results still being written) are read again whole: nothing a person needs
        # to hear of, and the calls keep their numbers, so the selection stays.
        quiet = message.reason == "grew"
        if not quiet:
            self.last_reset = f"{message.reason} at {tx.clock(time.time())} (after {message.at_call} calls)"
            self.resets.append(message.reason)
        if message.format_name:
            self.format_name = message.format_name
        if message.clear:
            self.calls = {}
            self.calibrations = NO_CALIBRATION  # (the fresh read's calls bring theirs)
            self.issues = []  # (a fresh read sends every issue again: the old ones would stay twice, or stale)
            self.issues_before_reset = []
            self.view = []
            self.contexts = []
            self.context = None
            if not quiet:
                self.selected_index = None
            if self._mounted():
                self._table().set_calls([], self.settings)
        else:
            # The calls read stay (they happened), but the problems of the lines read so far are not the file's
            # any more (check on it now would not see them): kept apart, listed as from before the reset.  The
            # feed sent every problem of the old file (its notes made final) before this message.
            self.issues_before_reset.extend(listed_issues(self.issues))
            self.issues = []
        self._push_issues()
        if not quiet:
            self.notify(f"log {message.reason}; reading it again from the start", severity="warning",
                        markup=False)
        self.refresh_panels()

    def on_analysis_changed(self, message: AnalysisChanged) -> None:
        """Fresh flags and forecast: shown in the side panel, drift risk on the bar."""
        if not self._ours(message):
            return
        self.analyses = message.analyses
        self.analysis_error = message.error
        self.refresh_panels(chart=False)

    def on_backfill_progress(self, message: BackfillProgress) -> None:
        """Reading the existing content: update the progress bar."""
        if not self._ours(message):
            return
        self.progress = (message.done, message.total)
        self.refresh_panels(chart=False)

    def on_backfill_done(self, message: BackfillDone) -> None:
        """The existing content is read; from now on calls arrive live."""
        if not self._ours(message):
            return
        self.loaded = True
        self.progress = None
        if message.cancelled and message.resumed_line is not None:
            # (the calls in the skipped lines are not read: numbers count the calls read, not the file's, so the
            # notice says where the gap is, which neither the table nor the chart shows)
            first = message.skipped_from or 1
            gap = f"lines {first:,}–{message.resumed_line - 1:,}" if message.resumed_line - 1 > first \
                else f"line {first:,}"
            where = f" (after call #{message.calls_before})" if message.calls_before else ""
            self.skipped = f"esc skipped {gap}{where}"
            self.notice = f"{self.skipped}: numbers count the calls read; report numbers the whole file"
            self._push_issues()
        elif self._cancel.is_set() and not message.cancelled:
            # Esc came after the reader had finished (the screen lags behind a fast read): say so, since the
            # toast promised a skip.
            self.notify("the whole file was read before the skip took effect", markup=False)
        self.refresh_panels()

    def on_feed_failed(self, message: FeedFailed) -> None:
        """The log cannot be read: say why on the status line and the bar."""
        if not self._ours(message):
            return
        self.failed = message.message
        self.loaded = True
        self.refresh_panels()
        self._push_issues()

    def on_feed_notice(self, message: FeedNotice) -> None:
        """A sentence about the reading (e.g. waiting for an empty file)."""
        if not self._ours(message):
            return
        self.notice = message.message
        self.refresh_panels(chart=False)

    def on_watch_changed(self, message: WatchChanged) -> None:
        """The feed follows with file events or by polling: shown on the status line and in the side panel; a
        fall back to polling (events failed or stayed silent) is also announced."""
        if not self._ours(message):
            return
        self.watch_mode = message.mode
        self.watch_interval = message.interval
        self.watch_note = message.message
        if self._watch_fallback():
            self.notify(message.message or "switched to polling", title="watching", severity="warning",
                        markup=False)
        self.refresh_panels(chart=False)

    def on_scan_notice(self, message: ScanNotice) -> None:
        """The folder's new sessions are looked for by polling although file events were wanted: said once, as
        the log's own fall back is (:meth:`on_watch_changed`), and kept in the side panel."""
        if self.scan_note is not None:
            return
        self.scan_note = message.message
        self.notify(message.message, title="watching", severity="warning", markup=False)
        self.refresh_panels(chart=False)

    def on_sessions_changed(self, message: SessionsChanged) -> None:
        """The folder's sessions changed: follow the newest one unless the user picked one.  Batch files are
        read as one joined run instead (again when a file is added or removed).  The files left out become
        notes among the input problems."""
        if message.notes != self.folder_notes:
            self.folder_notes = message.notes
            self._push_issues()
            self.refresh_panels(chart=False)
        if message.batch:
            self.sessions = []
            if self.batch_files is None or set(message.files) != set(self.batch_files):
                files = sorted(message.files)
                self._start_feed(" + ".join(files), batch=files)
            return
        self.sessions = message.files
        if not message.files:
            skipped = (f" ({message.skipped} file{'s' if message.skipped != 1 else ''} in no known format, or "
                       "compressed: decompress to read)" if message.skipped else "")
            self.notice = (f"no logs in this folder yet{skipped}; waiting" if self.is_dir
                           else f"none of these files is a log yet{skipped}; waiting")
            self.refresh_panels(chart=False)
            return
        newest = _newest_session(message.files)
        if self.auto_session and newest != self.log_path and self.paused and self.log_path is not None:
            # Paused: the view stays on its session; the newest is followed on resume (action_toggle_pause).
            self.refresh_panels(chart=False)
        elif self.auto_session and newest != self.log_path:
            self._follow_newest(newest)
        else:
            self.refresh_panels(chart=False)

    # ------------------------------------------------------------------ selection
    def _select_row(self, row: int) -> None:
        """Move the table cursor to ``row`` and select its call (programmatic: follow is unchanged)."""
        if not self.view:
            self.selected_index = None
            return
        row = max(0, min(row, len(self.view) - 1))
        self.selected_index = self.view[row]
        self._table().move_cursor(row=row)

    def user_moved_selection(self, row: int, count: int) -> None:
        """A person moved the table cursor: following stays on only when they are on the newest call."""
        self.follow = count > 0 and row == count - 1
        self.refresh_panels(chart=False)

    def on_calls_table_highlighted(self, event: CallsTable.Highlighted) -> None:
        """The cursor moved: show that call on the bar."""
        if event.index != self.selected_index:
            self.selected_index = event.index
            self.refresh_panels(chart=False)

    def on_calls_table_selected(self, event: CallsTable.Selected) -> None:
        """Enter on a call opens its detail."""
        self.action_detail()

    # ------------------------------------------------------------------ actions
    #: Actions that only make sense on the main screen (hidden from other screens' footers).
    MAIN_ONLY = frozenset({"detail", "toggle_follow", "toggle_pause", "toggle_xaxis", "filter", "cycle_context",
                           "sessions", "cancel_backfill", "issues"})

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Main-screen actions are off while another screen is shown, and ``e`` in the eviction preview itself
        (its footer entry pushed the preview's own knobs off an 80-column screen) and in the list of input
        problems (no call is on that screen: it planned the call hidden under it)."""
        if action == "evict" and isinstance(self.screen, PlanScreen | IssuesScreen):
            return False
        return not (action in self.MAIN_ONLY and self.main is not None and self.screen is not self.main)

    def action_toggle_follow(self) -> None:
        """Follow the newest call on/off; turning it on jumps to the newest call, and ends a pause (following
        a paused display would show nothing new)."""
        # While paused, f means "show me the latest": it ends the pause and follows, whatever following was
        # before (toggling it off first made the first f after p do nothing visible).
        self.follow = True if self.paused else not self.follow
        if self.follow and self.paused:
            self.action_toggle_pause()  # (shows what was read meanwhile; may switch to a newer session)
            if not self.follow:
                return
        if self.follow and self.view:
            self._select_row(len(self.view) - 1)
        self.refresh_panels(chart=False)

    def action_toggle_pause(self) -> None:
        """Pause/resume the display; calls read while paused are shown on resume."""
        self.paused = not self.paused
        if not self.paused:
            pending, self._pending = self._pending, []
            for m in pending:
                self._apply_calls(m.added, m.updated, m.calibrations)
            if self.auto_session and self.sessions:
                newest = _newest_session(self.sessions)
                if newest != self.log_path:  # (a newer session appeared while paused)
                    self._follow_newest(newest)
                    return
        self.refresh_panels(chart=False)

    def _follow_newest(self, newest: str) -> None:
        """Switch to the folder's newest session (automatic mode), saying so when another one was shown."""
        if self.log_path is not None:
            self.notify(f"following the newest session: {os.path.basename(newest)}")
            self._drop_filter()
        self._start_feed(newest)

    def action_toggle_xaxis(self) -> None:
        """Chart x axis: call number <-> wall time."""
        self.xaxis = "time" if self.xaxis == "index" else "index"
        self.refresh_panels()

    def _call_under_cursor(self) -> Call | None:
        """The call on the table's cursor row, read from the table itself: a key pressed right after an arrow
        key (``k e``) runs before the table's highlight message reaches the app, so ``selected_index`` may
        still name the previous row."""
        if self._mounted() and self.screen is self.main and self.view:
            row = self._table().cursor_row
            if 0 <= row < len(self.view) and self.view[row] != self.selected_index:
                self.selected_index = self.view[row]
                self.refresh_panels(chart=False)
        return self.selected_call()

    def action_detail(self) -> None:
        """Open the selected call's detail."""
        call = self._call_under_cursor()
        if call is None:
            self.notify("no call selected", severity="warning", markup=False)
            return
        self.push_screen(DetailScreen(call, self.spec, self.settings, self.calibrations.breakdown(call),
                                      self.calibrations.factor(call)))

    def action_evict(self) -> None:
        """Open the eviction preview of the selected call, or from a call's detail, of that call."""
        if isinstance(self.screen, DetailScreen):
            # The detail shows the call it was opened on; while following a live log the selection has moved
            # on to newer calls since, and the preview must plan the call on screen.
            call: Call | None = self.screen.call
        else:
            call = self._call_under_cursor()
        if call is None:
            self.notify("no call selected", severity="warning", markup=False)
            return
        try:
            import ctxwatch.planner  # noqa: F401
        except ImportError:
            self.notify("the eviction planner is not available in this build", severity="warning", markup=False)
            return
        if isinstance(self.screen, PlanScreen):
            return
        self.push_screen(PlanScreen(call, self.spec, self.settings, self.calibrations.breakdown(call)))

    def action_filter(self) -> None:
        """Show the filter box and focus it."""
        if not self._mounted() or self.screen is not self.main:
            return
        assert self.main is not None
        box = self.main.query_one(FilterInput)
        box.add_class("-active")
        box.value = self.filter_text
        box.focus()

    def hide_filter(self) -> None:
        """Hide the filter box and return to the table."""
        if not self._mounted():
            return
        assert self.main is not None
        self.main.query_one(FilterInput).remove_class("-active")
        self._table().focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        """Filter as the user types (after a short pause, so a 10,000-call table is not rebuilt per key)."""
        if event.input.id != "filter":
            return
        if self._filter_timer is not None:
            self._filter_timer.stop()
        value = event.value
        self._filter_timer = self.set_timer(FILTER_DELAY, lambda: self.apply_filter(value))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter in the filter box: apply now and return to the table."""
        if event.input.id != "filter":
            return
        if self._filter_timer is not None:
            self._filter_timer.stop()
        self.apply_filter(event.value)
        self.hide_filter()

    def apply_filter(self, text: str) -> None:
        """Show only calls whose row text contains ``text`` (case-insensitive); ``""`` shows all."""
        if text == self.filter_text:
            return
        self.filter_text = text
        self.rebuild_view()

    def rebuild_view(self) -> None:
        """Recompute the view (context and filter) and refill the table, keeping the selection if visible."""
        keep = self.selected_index
        self.view = [i for i, c in self.calls.items() if self._in_view(c)]
        if not self._mounted():
            return
        table = self._table()
        table.set_calibrations(self.calibrations)  # (calls read before the screen was mounted brought theirs)
        table.set_calls(self.view_calls(), self.settings)
        if not self.view:
            self.selected_index = None
        elif self.follow or keep not in self.view:
            self._select_row(len(self.view) - 1)
        else:
            self._select_row(self.view.index(keep))
        self.refresh_panels()

    def action_cycle_context(self) -> None:
        """Show the next context (main, then subagents / sidechains)."""
        if len(self.contexts) < 2:
            from ctxwatch.formats.claude_code import subagent_files_of

            n = len(subagent_files_of(self.log_path)) if self.log_path else 0
            how = "press o to pick one" if self.multi else "open the project folder, then press o to pick one"
            more = (f"; its {n} subagent transcript{'s are' if n != 1 else ' is'} in separate files ({how})"
                    if n else "")
            self.notify(f"this log has one context{more}", markup=False)
            return
        i = self.contexts.index(self.context) if self.context in self.contexts else -1
        self.context = self.contexts[(i + 1) % len(self.contexts)]
        self.follow = True
        self.rebuild_view()

    def action_sessions(self) -> None:
        """Pick a session of the followed folder (or of the files given)."""
        if self.batch_files is not None:
            self.notify("sessions: these batch files are one run (results joined to requests by custom_id)",
                        markup=False)
            return
        if not self.multi:
            self.notify("sessions: open a folder of logs to switch between sessions", markup=False)
            return
        self.push_screen(SessionPicker(self._base_folder(), self.sessions, self.log_path, self.auto_session),
                         self._session_picked)

    def _base_folder(self) -> str:
        """The folder the session picker shows paths relative to: the folder opened, or the folder common to the
        paths given."""
        if self.is_dir:
            return self.path
        try:
            return os.path.commonpath([os.path.dirname(os.path.abspath(p)) for p in self.paths])
        except ValueError:  # different drives
            return os.getcwd()

    def _session_picked(self, choice: str | None) -> None:
        if choice is None:
            return
        if self.paused:
            # (picking a session is asking to see it: a pause held over would show it empty, "+12 new")
            self.paused = False
            pending, self._pending = self._pending, []
            if choice in (AUTO, self.log_path):
                for m in pending:  # (the session shown goes on: what was read meanwhile is shown)
                    self._apply_calls(m.added, m.updated, m.calibrations)
        if choice == AUTO:
            self.auto_session = True
            newest = _newest_session(self.sessions) if self.sessions else None
            if newest and newest != self.log_path:
                self._drop_filter()
                self._start_feed(newest)
            else:
                self.refresh_panels(chart=False)
            return
        self.auto_session = False
        if choice != self.log_path:
            self._drop_filter()
            self._start_feed(choice)

    def _drop_filter(self) -> None:
        """Clear the filter when another session is shown, and say so: it was typed for the session shown
        before (a time, a number), and kept it hid every call of the new one ("filter '16:05' (0 match)")."""
        text, self.filter_text = self.filter_text, ""
        if self._filter_timer is not None:
            self._filter_timer.stop()
        if self._mounted() and self.main is not None:
            box = self.main.query_one(FilterInput)
            box.value = ""
            if box.has_class("-active"):
                self.hide_filter()
        if text:
            self.notify(f"filter {text!r} cleared: it was for the session shown before", markup=False)

    def action_issues(self) -> None:
        """List every input problem of the run (bad lines and notes, as ``ctxwatch check`` prints them) on a
        screen of its own; the side panel has room for the newest few only."""
        if isinstance(self.screen, IssuesScreen):
            return
        self.push_screen(IssuesScreen(self._issues_title(), self.input_problems(), self._issues_several(),
                                      self.failed or self.skipped, self.issues_before_reset, self.last_reset))

    def input_problems(self) -> list[Issue]:
        """The input problems shown: the run's issues (``reset`` markers left out), then a note for each file of
        the followed folder(s) that is not read (in no known format, compressed), as ``report`` lists them."""
        return listed_issues(self.issues) + self.folder_notes

    def _issues_title(self) -> str:
        """What the input-problems screen lists the problems of: the shown log, and the followed folder's files
        left out when there are any (their notes are listed too, though they are not the log's)."""
        return self.display_name() + (" and the folder's files left out" if self.folder_notes else "")

    def _issues_several(self) -> bool:
        """True when the run's problems may come from more than one file (joined batch files, problems of
        several files, or of a file other than the followed log: a file left out of the folder): the list then
        names each problem's file, as ``check`` does."""
        paths = {i.path for i in self.input_problems()}
        return self.batch_files is not None or len(paths) > 1 or bool(paths - {self.log_path})

    def _push_issues(self) -> None:
        """Give an open list of input problems the current ones (it may be under a help screen)."""
        for screen in self.screen_stack:
            if isinstance(screen, IssuesScreen) and screen.is_mounted:
                screen.stopped = self.failed or self.skipped
                screen.show(self.input_problems(), self._issues_several(), self._issues_title(),
                            self.issues_before_reset, self.last_reset)

    def action_help(self) -> None:
        """Show the help screen."""
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.settings))

    def export_folder(self) -> str:
        """Where ``s``, ``x`` and the eviction preview's ``w`` write: the current folder, unless it is (inside)
        a folder being followed, where a new file would be listed among the logs; then
        :func:`export_dir` (``$XDG_DATA_HOME/ctxwatch/exports``).  The notification names the file.

        Raises:
            OSError: the export folder cannot be created (the callers say so in a notification).
        """
        cwd = os.getcwd()
        here = os.path.realpath(cwd)
        for p in self.paths:
            if os.path.isdir(p):
                top = os.path.realpath(p)
                if here == top or here.startswith(top.rstrip(os.sep) + os.sep):
                    return export_dir()
        return cwd

    def action_save_svg(self) -> None:
        """Save an SVG screenshot of the screen (see :meth:`export_folder`) and say where."""
        stem = "ctxwatch-" + _stem(self._stem_source())
        try:
            path = unique_path(self.export_folder(), stem, ".svg")
            self.save_screenshot(filename=os.path.basename(path), path=os.path.dirname(path))
        except OSError as exc:  # a read-only folder, a full disk, an XDG path that is a file
            self.notify(f"screenshot not saved: {exc}", title="SVG", severity="error", markup=False)
            return
        self.saved.append(path)
        self.notify(f"screenshot saved to\n{tx.saved_where(path, tx.toast_width(self.size.width))}", title="SVG",
                    markup=False)

    def action_export_csv(self) -> None:
        """Write the calls of the current view as CSV (see :meth:`export_folder`) and say where."""
        stem = "ctxwatch-calls-" + _stem(self._stem_source())
        try:
            path = unique_path(self.export_folder(), stem, ".csv")
            write_csv(path, self.view_calls(), self.calibrations)
        except (OSError, ValueError) as exc:  # (ValueError: text the encoder still refuses; nothing is written)
            self.notify(f"CSV not written: {exc}", title="CSV", severity="error", markup=False)
            return
        self.saved.append(path)
        scope = []  # (the table's view, which may be one context or a filter of the run)
        if self.context is not None and len(self.contexts) > 1:
            scope.append(f"context {self.context}")
        if self.filter_text:
            scope.append(f"filter {self.filter_text!r}")
        of = f" of {len(self.calls):,} ({', '.join(scope)})" if scope else ""
        n = len(self.view)
        self.notify(f"{n:,} call{'s' if n != 1 else ''}{of} exported to\n"
                    f"{tx.saved_where(path, tx.toast_width(self.size.width))}", title="CSV", markup=False)

    def _stem_source(self) -> str:
        """The path saved files are named after: the followed log, or for joined batch files the folder opened
        (``openai-batch``) or the first file."""
        if self.batch_files is not None:
            return self.path if self.is_dir else self.batch_files[0]
        return self.log_path or self.paths[0]

    def action_cancel_backfill(self) -> None:
        """Skip the rest of the backfill: read the file's last 8 MiB (whole lines, at least the last one) and
        follow it."""
        if not self.loaded:
            self._cancel.set()
            self.notify("skipping to the last 8 MiB of the file (whole lines, at least the last one), then "
                        "following it", markup=False)
        elif self.filter_text and self.screen is self.main:
            self.apply_filter("")

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """Textual's command palette: the dashboard's actions, then Textual's own."""
        yield SystemCommand("Call detail", "Every message of the selected call with tokens", self.action_detail)
        yield SystemCommand("Follow newest call", "Toggle following the newest call (f)", self.action_toggle_follow)
        yield SystemCommand("Pause display", "Pause/resume live updates (p)", self.action_toggle_pause)
        yield SystemCommand("Chart x axis", "Call number / wall time (t)", self.action_toggle_xaxis)
        yield SystemCommand("Eviction preview", "Plan the eviction of the selected call (e)", self.action_evict)
        yield SystemCommand("Filter calls", "Filter the calls table (/)", self.action_filter)
        yield SystemCommand("Next context", "Main / subagents / sidechains (c)", self.action_cycle_context)
        yield SystemCommand("Sessions", "Switch session in a folder (o)", self.action_sessions)
        yield SystemCommand("Input problems", "Every bad line and note of the run, with its line (i)",
                            self.action_issues)
        yield SystemCommand("Save SVG screenshot", "To the current folder (s)", self.action_save_svg)
        yield SystemCommand("Export CSV", "The calls table, to the current folder (x)", self.action_export_csv)
        yield SystemCommand("Help", "Keys and legend (?)", self.action_help)
        yield from super().get_system_commands(screen)


def _stop_on_cancel(worker: Any, stop: threading.Event) -> None:
    """Set ``stop`` when the Textual worker is cancelled (the app is closing)."""
    while not stop.wait(0.1):
        if worker.is_cancelled:
            stop.set()
            return


def _stem(path: str) -> str:
    base = os.path.basename(path.rstrip(os.sep)) or "log"
    stem = base.rsplit(".", 1)[0] if "." in base else base
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in stem)[:60] or "log"


def export_dir() -> str:
    """``$XDG_DATA_HOME/ctxwatch/exports`` (default ``~/.local/share/ctxwatch/exports``, the XDG base-directory
    rule for user data), created if missing: where exports go when the current folder is a followed one."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    path = os.path.join(base, "ctxwatch", "exports")
    os.makedirs(path, exist_ok=True)
    return path


def _is_subagent_file(path: str) -> bool:
    """True for a Claude Code subagent transcript (:func:`ctxwatch.formats.claude_code.is_subagent_file`)."""
    from ctxwatch.formats.claude_code import is_subagent_file

    return is_subagent_file(path)


def _problem_count(problems: list[Issue], *, short: bool = False) -> str:
    """`` (3 bad lines)`` or `` (1 bad line, 2 notes)`` after the side panel's "Input problems" (``short``: the
    sum, `` (3)``), counted as the header and ``ctxwatch check`` count them (a line with two issues is one bad
    line, so the count can be lower than the entries listed); `` (0)`` for none."""
    bad, notes = tally_issues(problems)
    return f" ({bad + notes})" if short or not problems else f" ({counted_issues(bad, notes)})"


def _where(issue: Issue) -> Text:
    """Where an input problem is, for the side panel: ``line 12``, or the file's name for a problem of a whole
    file (a file left out of a folder)."""
    if issue.line:
        return Text(f"line {issue.line}", "yellow")
    return tx.literal(os.path.basename(issue.path), "yellow", limit=40)


def _newest_session(files: list[str]) -> str:
    """The newest file that is not a subagent transcript (Claude Code ``subagents/``), else the newest."""
    for f in files:
        if not _is_subagent_file(f):
            return f
    return files[0]
