"""The ctxwatch dashboard app.

:class:`CtxwatchApp` starts a :class:`~ctxwatch.ui.feed.LogFeed` in a worker thread and receives its
messages; its handlers are the only code that changes the dashboard's state
(:class:`~ctxwatch.ui.state.DashboardState`), after which the main screen draws it.  No widget is touched
from a thread.  A folder is a set of sessions: the newest one is followed (and a newer one taken over
automatically) until the user picks one with ``o``; so are several files given together.  Batch request and
result files are one run instead, joined by ``custom_id``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar

from textual.app import SystemCommand
from textual.binding import Binding, BindingType
from textual.notifications import SeverityLevel
from textual.screen import Screen

from ctxwatch.config import Settings
from ctxwatch.model import Call
from ctxwatch.output.csv import CSV_FIELDS, csv_text, write_csv
from ctxwatch.ui import messages as msg
from ctxwatch.ui import text as tx
from ctxwatch.ui.export import export_dir, export_folder, file_stem, write_new
from ctxwatch.ui.feed import BatchFeed, FolderScan, LogFeed
from ctxwatch.ui.fleet import FleetRow, fleet_rows
from ctxwatch.ui.main import FilterInput, MainScreen
from ctxwatch.ui.screens import (
    DetailScreen,
    DiffScreen,
    FlagsScreen,
    FleetScreen,
    HelpScreen,
    IssuesScreen,
    PlanScreen,
    unique_path,
)
from ctxwatch.ui.screens.help import COMMANDS
from ctxwatch.ui.sessions import SessionActions, newest_session
from ctxwatch.ui.state import STATE_VIEWS, DashboardState
from ctxwatch.ui.widgets.table import CallsTable
from ctxwatch.ui.workers import run_feed, run_scan

__all__ = ["CSV_FIELDS", "CtxwatchApp", "FilterInput", "MainScreen", "csv_text", "export_dir", "write_csv"]


class CtxwatchApp(SessionActions):
    """The dashboard: follow one log (or the sessions of a folder) and show how its context is spent.

    Args:
        path: a log file, or a folder of logs (Claude Code projects folder, Codex sessions tree), or several
            of them (a sequence).  A folder, or several paths, holding session logs is a set of sessions: the
            newest is followed, ``o`` picks another.  When all their files are OpenAI or Anthropic batch files
            they are read as one run, results joined to requests by ``custom_id``
            (:class:`~ctxwatch.ui.feed.BatchFeed`).
        fmt: format name, or ``None`` to detect.
        settings: thresholds (budget 0.6 of the window, trigger 0.8 of the budget, reserve 0.15).
        poll: follow the log by polling it every 250 ms instead of with file events (``--poll``: network,
            WSL and container filesystems).  Without it the feed watches the log's folder with ``watchfiles``
            and falls back to polling by itself, with a notice, when events fail or stay silent; a folder's
            tree is followed the same way (:class:`~ctxwatch.ui.feed.FolderScan`).
        last: show only the last N calls of the existing content.
        pick: open the session picker on the most recent session once the sessions are listed (the dashboard
            started with no path, on the harnesses' logs).

    Attributes: ``state`` (:class:`~ctxwatch.ui.state.DashboardState`: everything shown), ``main`` (the
    :class:`~ctxwatch.ui.main.MainScreen`), ``feed`` (the current :class:`~ctxwatch.ui.feed.LogFeed`),
    ``folder_scan`` (what follows the folder(s), or ``None``) and ``saved`` (files written by ``s`` / ``x``).
    """

    TITLE = "ctxwatch"
    CSS_PATH = "app.tcss"

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
        Binding("F", "flags", "Flags", show=False),
        Binding("W", "fleet", "Fleet", show=False),
        Binding("d", "diff", "Diff", show=False),
        Binding("s", "save_svg", "SVG"),
        Binding("x", "export_csv", "CSV"),
        Binding("question_mark", "help", "Help"),
        Binding("escape", "cancel_backfill", "Cancel backfill", show=False),
    ]

    #: Seconds since the epoch, for the fleet view's ages (a test gives a fixed clock).
    clock: ClassVar[Callable[[], float]] = time.time

    #: Actions that only make sense on the main screen (hidden from other screens' footers).
    MAIN_ONLY = frozenset({"detail", "toggle_follow", "toggle_pause", "toggle_xaxis", "filter", "cycle_context",
                           "sessions", "cancel_backfill", "issues", "flags", "diff", "fleet"})

    def __init__(self, path: str | Sequence[str], *, fmt: str | None = None, settings: Settings | None = None,
                 poll: bool = False, last: int | None = None, pick: bool = False) -> None:
        super().__init__()
        paths = [path] if isinstance(path, str) else list(path)
        if not paths:
            raise ValueError("CtxwatchApp needs at least one path")
        self.state = DashboardState(paths, poll=poll)
        self.fmt = fmt
        self.settings = settings or Settings()
        self.last = last
        self.pick_on_open = pick
        self.feed: LogFeed | None = None  # (a BatchFeed, a LogFeed, for joined batch files)
        self.folder_scan: FolderScan | None = None
        self.saved: list[str] = []
        self._feed_id = 0
        self._stop = threading.Event()
        self._cancel = threading.Event()
        self._scan_stop = threading.Event()
        self.main: MainScreen | None = None

    if not TYPE_CHECKING:  # (hidden from mypy: the dashboard's own code reads the state itself)
        def __getattr__(self, name: str) -> Any:
            """The state's attributes, read-only, as the app's own (``app.calls``): tests and scripts read them."""
            if name in STATE_VIEWS:
                return getattr(self.state, name)
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = False) -> None:
        """A toast that shows its text literally, always: notifications name files, folders and errors, which
        come from the logs (a file name may carry terminal controls).  ``markup`` is accepted for the base
        signature and ignored: nothing here is ever parsed as markup."""
        super().notify(tx.clean(message), title=tx.clean(title, multiline=False), severity=severity,
                       timeout=timeout, markup=False)

    # ------------------------------------------------------------------ start and stop
    def get_default_screen(self) -> Screen[Any]:
        """The main dashboard screen, drawing :attr:`state`."""
        self.main = MainScreen(self.state, self.settings)
        return self.main

    def on_mount(self) -> None:
        """Start following the file, or scanning the folder(s) and files for sessions or batch files."""
        if self.state.multi:
            self.folder_scan = scan = FolderScan(self.state.paths, self.fmt, poll=self.state.poll)
            self.run_worker(partial(run_scan, scan, self.fmt, self._scan_stop, self.post_message), group="scan",
                            thread=True, exit_on_error=False)
        else:
            self._start_feed(self.state.path)
        self._show()

    def on_unmount(self) -> None:
        """Stop the reading threads."""
        self._stop.set()
        self._scan_stop.set()

    async def action_quit(self) -> None:
        """Stop the reading threads and quit."""
        self.on_unmount()
        self.exit()

    def _start_feed(self, path: str, batch: list[str] | None = None) -> None:
        """Drop the current log's state and follow ``path`` with a fresh feed, or read the ``batch`` files as one
        joined run (``path`` is then their label)."""
        self._stop.set()
        self._feed_id += 1
        self._stop = threading.Event()
        self._cancel = threading.Event()
        if batch is not None:
            self.feed = BatchFeed(batch, self.post_message, self._stop, fmt=self.fmt, settings=self.settings,
                                  last=self.last, feed_id=self._feed_id)
        else:
            self.feed = LogFeed(path, self.post_message, self._stop, fmt=self.fmt, settings=self.settings,
                                last=self.last, feed_id=self._feed_id, cancel_backfill=self._cancel,
                                poll=self.state.poll)
        self.state.start_log(path, batch, self.feed.sweep_interval)
        if (main := self._live()) is not None:
            main.fill_table([])
        self.run_worker(partial(run_feed, self.feed, self.post_message), group="feed", thread=True,
                        exit_on_error=False)
        self._push_issues()  # (an open list of input problems shows the new session's)
        self._show()

    # ------------------------------------------------------------------ the main screen
    def _live(self) -> MainScreen | None:
        """The main screen while it can take the state (:attr:`MainScreen.live`), else ``None``: handlers then
        keep the state and show nothing."""
        return self.main if self.main is not None and self.main.live else None

    def _show(self, chart: bool = True) -> None:
        """Have the main screen draw the state (the chart too unless ``chart`` is false)."""
        if (main := self._live()) is not None:
            main.show_state(chart)

    def on_main_screen_ready(self, message: MainScreen.Ready) -> None:
        """The main screen is there: put the calls read before it in its table."""
        self.rebuild_view()

    # ------------------------------------------------------------------ feed messages
    def _ours(self, message: Any) -> bool:
        return getattr(message, "feed", None) == self._feed_id

    def on_feed_opened(self, message: msg.FeedOpened) -> None:
        """The log's format is known."""
        if self._ours(message):
            self.state.format_name = message.format_name
            self.state.spec = message.spec
            self.state.notice = None
            self._show(chart=False)

    def on_calls_changed(self, message: msg.CallsChanged) -> None:
        """New or updated calls: into the state, then the table, bar and chart (held while paused)."""
        if not self._ours(message):
            return
        if self.state.paused:
            self.state.pending.append(message)
            self._show(chart=False)
            return
        self._apply_calls(message)

    def _apply_calls(self, message: msg.CallsChanged) -> None:
        """Take the message's new and replaced calls, their costs and the run's calibrations with them into the
        state and the table; the newest call is selected while following."""
        s = self.state
        added, updated = message.added, message.updated
        s.take_calls(added, updated, message.calibrations, message.costs)
        if (main := self._live()) is None:
            return
        fresh = [c for c in added if s.in_view(c)]
        s.view.extend(c.index for c in fresh)
        in_view = set(s.view) if updated else set()
        main.add_calls(fresh, [c for c in updated if c.index in in_view])
        if fresh and (s.follow or s.selected_index is None):
            self._select_row(len(s.view) - 1)
        self._show()

    def on_issues_changed(self, message: msg.IssuesChanged) -> None:
        """New input problems (and withdrawn ones): counted in the status line, listed in the side panel."""
        if not self._ours(message):
            return
        self.state.take_issues(message.issues, message.resolved)
        self._push_issues()
        self._show(chart=False)

    def on_reset_seen(self, message: msg.ResetSeen) -> None:
        """The file was truncated, rotated or replaced: say so (the calls read stay unless ``clear``)."""
        if not self._ours(message):
            return
        quiet = self.state.reset_seen(message.reason, message.at_call, message.format_name, message.clear)
        if message.clear and (main := self._live()) is not None:
            main.table.set_calls([], self.settings)
        self._push_issues()
        if not quiet:
            self.notify(f"log {message.reason}; reading it again from the start", severity="warning")
        self._show()

    def on_analysis_changed(self, message: msg.AnalysisChanged) -> None:
        """Fresh flags and forecast: shown in the side panel, drift risk on the bar."""
        if self._ours(message):
            self.state.analyses = message.analyses
            self.state.analysis_error = message.error
            self._show(chart=False)
            self._push_flags()
            self._push_fleet()

    def on_backfill_progress(self, message: msg.BackfillProgress) -> None:
        """Reading the existing content: the progress bar moves."""
        if self._ours(message):
            self.state.progress = (message.done, message.total)
            self._show(chart=False)

    def on_backfill_done(self, message: msg.BackfillDone) -> None:
        """The existing content is read; from now on calls arrive live."""
        if not self._ours(message):
            return
        if self.state.backfill_done(message.cancelled, message.resumed_line, message.skipped_from,
                                    message.calls_before):
            self._push_issues()
        elif self._cancel.is_set() and not message.cancelled:
            # Esc came after the reader had finished (the screen lags behind a fast read): say so, since the
            # toast promised a skip.
            self.notify("the whole file was read before the skip took effect")
        self._show()

    def on_feed_failed(self, message: msg.FeedFailed) -> None:
        """The log cannot be read: say why on the status line and the bar."""
        if self._ours(message):
            self.state.failed = message.message
            self.state.loaded = True
            self._show()
            self._push_issues()

    def on_feed_notice(self, message: msg.FeedNotice) -> None:
        """A sentence about the reading (e.g. waiting for an empty file)."""
        if self._ours(message):
            self.state.notice = message.message
            self._show(chart=False)

    def on_watch_changed(self, message: msg.WatchChanged) -> None:
        """The feed follows with file events or by polling: shown on the status line and in the side panel; a
        fall back to polling (events failed or stayed silent) is also announced."""
        if not self._ours(message):
            return
        s = self.state
        s.watch_mode, s.watch_interval, s.watch_note = message.mode, message.interval, message.message
        if s.watch_fallback():
            self.notify(message.message or "switched to polling", title="watching", severity="warning")
        self._show(chart=False)

    def on_scan_notice(self, message: msg.ScanNotice) -> None:
        """The folder's sessions are looked for by polling although file events were wanted: said once, and
        kept in the side panel."""
        if self.state.scan_note is None:
            self.state.scan_note = message.message
            self.notify(message.message, title="watching", severity="warning")
            self._show(chart=False)

    # ------------------------------------------------------------------ selection
    def _select_row(self, row: int) -> None:
        """Move the table cursor to ``row`` and select its call (programmatic: follow is unchanged)."""
        s = self.state
        if not s.view:
            s.selected_index = None
            return
        row = max(0, min(row, len(s.view) - 1))
        s.selected_index = s.view[row]
        if (main := self._live()) is not None:
            main.table.move_cursor(row=row)

    def on_calls_table_user_moved(self, event: CallsTable.UserMoved) -> None:
        """A person moved the table cursor: following stays on only when they are on the newest call."""
        self.state.follow = event.count > 0 and event.row == event.count - 1
        self._show(chart=False)

    def on_calls_table_highlighted(self, event: CallsTable.Highlighted) -> None:
        """The cursor moved: show that call on the bar."""
        if event.index != self.state.selected_index:
            self.state.selected_index = event.index
            self._show(chart=False)

    def on_calls_table_selected(self, event: CallsTable.Selected) -> None:
        """Enter on a call opens its detail."""
        self.action_detail()

    def _call_under_cursor(self) -> Call | None:
        """The call on the table's cursor row, read from the table itself: a key pressed right after an arrow
        key (``k e``) runs before the table's highlight message reaches the app."""
        s = self.state
        if (main := self._live()) is not None and self.screen is main and s.view:
            row = main.table.cursor_row
            if 0 <= row < len(s.view) and s.view[row] != s.selected_index:
                s.selected_index = s.view[row]
                self._show(chart=False)
        return s.selected_call()

    # ------------------------------------------------------------------ actions
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Main-screen actions are off while another screen is shown, and ``e`` in the eviction preview itself
        and in the list of input problems (no call is on that screen)."""
        if action == "evict" and isinstance(self.screen, PlanScreen | IssuesScreen | FlagsScreen):
            return False
        return not (action in self.MAIN_ONLY and self.main is not None and self.screen is not self.main)

    def action_toggle_follow(self) -> None:
        """Follow the newest call on/off; turning it on jumps to the newest call.  While paused, ``f`` means
        "show me the latest": it ends the pause and follows."""
        s = self.state
        s.follow = True if s.paused else not s.follow
        if s.follow and s.paused:
            self.action_toggle_pause()  # (shows what was read meanwhile; may switch to a newer session)
            if not s.follow:
                return
        if s.follow and s.view:
            self._select_row(len(s.view) - 1)
        self._show(chart=False)

    def action_toggle_pause(self) -> None:
        """Pause/resume the display; calls read while paused are shown on resume."""
        s = self.state
        s.paused = not s.paused
        if not s.paused:
            pending, s.pending = s.pending, []
            for m in pending:
                self._apply_calls(m)
            if s.auto_session and s.sessions:
                newest = newest_session(s.sessions)
                if newest != s.log_path:  # (a newer session appeared while paused)
                    self._follow_newest(newest)
                    return
        self._show(chart=False)

    def action_toggle_xaxis(self) -> None:
        """Chart x axis: call number <-> wall time."""
        self.state.xaxis = "time" if self.state.xaxis == "index" else "index"
        self._show()

    def action_detail(self) -> None:
        """Open the selected call's detail."""
        call = self._call_under_cursor()
        if call is None:
            self.notify("no call selected", severity="warning")
            return
        cal = self.state.calibrations
        self.push_screen(DetailScreen(call, self.state.spec, self.settings, cal.breakdown(call), cal.factor(call),
                                      self.state.costs.get(call.index)))

    def action_diff(self) -> None:
        """Open what changed from the call before the selected one (same context) to it."""
        call = self._call_under_cursor()
        if call is None:
            self.notify("no call selected", severity="warning")
            return
        prev = self.state.previous_in_context(call)
        if prev is None:
            self.notify(f"call #{call.index + 1} is the first of its context read: nothing to compare it with")
            return
        self.push_screen(DiffScreen(call, prev, self.state.spec))

    def action_evict(self) -> None:
        """Open the eviction preview of the selected call, or from a call's detail, of that call."""
        # (the detail shows the call it was opened on; following a live log, the selection has moved on since)
        call = self.screen.call if isinstance(self.screen, DetailScreen) else self._call_under_cursor()
        if call is None:
            self.notify("no call selected", severity="warning")
            return
        try:
            import ctxwatch.planner  # noqa: F401
        except ImportError:
            self.notify("the eviction planner is not available in this build", severity="warning")
            return
        if not isinstance(self.screen, PlanScreen):
            self.push_screen(PlanScreen(call, self.state.spec, self.settings, self.state.calibrations.breakdown(call),
                                        export_to=lambda: export_folder(self.state.paths)))

    def action_filter(self) -> None:
        """Show the filter box and focus it."""
        if (main := self._live()) is not None and self.screen is main:
            main.open_filter(self.state.filter_text)

    def on_main_screen_filter_changed(self, message: MainScreen.FilterChanged) -> None:
        """The filter box's text was typed, kept or cleared."""
        self.apply_filter(message.text)

    def apply_filter(self, text: str) -> None:
        """Show only calls whose row text contains ``text`` (case-insensitive); ``""`` shows all."""
        if text != self.state.filter_text:
            self.state.filter_text = text
            self.rebuild_view()

    def rebuild_view(self) -> None:
        """Recompute the view (context and filter) and refill the table, keeping the selection if visible."""
        s = self.state
        keep = s.selected_index
        s.view = [i for i, c in s.calls.items() if s.in_view(c)]
        if (main := self._live()) is None:
            return
        main.fill_table(s.view_calls())
        if not s.view:
            s.selected_index = None
        else:
            self._select_row(len(s.view) - 1 if s.follow or keep not in s.view else s.view.index(keep))
        self._show()

    def action_issues(self) -> None:
        """List every input problem of the run on a screen of its own; the side panel has room for a few."""
        s = self.state
        if not isinstance(self.screen, IssuesScreen):
            self.push_screen(IssuesScreen(s.issues_title(), s.input_problems(), s.issues_several(),
                                          s.failed or s.skipped, s.issues_before_reset, s.last_reset))

    def action_flags(self) -> None:
        """List every flag of the context shown, whole, on a screen of its own (the side panel cuts them)."""
        s = self.state
        if not isinstance(self.screen, FlagsScreen):
            self.push_screen(FlagsScreen(s.flags_title(), s.context_flags(), s.selected_index))

    def _push_flags(self) -> None:
        """Give an open flags list the context's flags as they are now."""
        for screen in self.screen_stack:
            if isinstance(screen, FlagsScreen) and screen.is_mounted:
                screen.title_text = self.state.flags_title()
                screen.show(self.state.context_flags())

    def _fleet_rows(self) -> list[FleetRow]:
        s = self.state
        flags = [f for a in s.analyses.values() for f in a.flags]
        return fleet_rows(s.calls.values(), flags, s.calibrations, type(self).clock())

    def action_fleet(self) -> None:
        """One row per conversation of the calls read, most at risk first, on a screen of its own."""
        if not isinstance(self.screen, FleetScreen):
            self.push_screen(FleetScreen(self.state.display_name(), self._fleet_rows(), self.state.conversation))

    def _push_fleet(self) -> None:
        """Give an open fleet view the conversations as they are now."""
        for screen in self.screen_stack:
            if isinstance(screen, FleetScreen) and screen.is_mounted:
                screen.show(self._fleet_rows())

    def on_fleet_screen_chosen(self, message: FleetScreen.Chosen) -> None:
        """Enter on a conversation: the dashboard shows it alone, its last call selected (``a``: all again)."""
        while isinstance(self.screen, FleetScreen):
            self.pop_screen()
        self.state.conversation = message.conversation
        self.state.follow = True
        self.rebuild_view()

    def on_flags_screen_chosen(self, message: FlagsScreen.Chosen) -> None:
        """Enter on a flag: back to the main screen with its call selected (shown: its context, the filter
        cleared if it hid the call)."""
        s = self.state
        while isinstance(self.screen, FlagsScreen):
            self.pop_screen()
        if message.context != s.context and message.context in s.contexts:
            s.context = message.context
            self.rebuild_view()
        if message.index not in s.view and message.index in s.calls:
            self._drop_filter()
            self.rebuild_view()
        if message.index in s.view:
            row = s.view.index(message.index)
            s.follow = row == len(s.view) - 1
            self._select_row(row)
            self._show(chart=False)

    def _push_issues(self) -> None:
        """Give an open list of input problems the current ones (it may be under a help screen)."""
        s = self.state
        for screen in self.screen_stack:
            if isinstance(screen, IssuesScreen) and screen.is_mounted:
                screen.stopped = s.failed or s.skipped
                screen.show(s.input_problems(), s.issues_several(), s.issues_title(), s.issues_before_reset,
                            s.last_reset)

    def action_help(self) -> None:
        """Show the help screen."""
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.settings))

    def action_save_svg(self) -> None:
        """Save an SVG screenshot of the screen (:func:`~ctxwatch.ui.export.export_folder`) and say where.

        Written as every export is (:func:`~ctxwatch.ui.export.write_new`): to a new file, never through a
        symlink (Textual's ``save_screenshot`` opens with create-truncate and follows a planted one)."""
        s = self.state
        try:
            path = unique_path(export_folder(s.paths), "ctxwatch-" + file_stem(s.stem_source()), ".svg")
            write_new(path, self.export_screenshot().encode("utf-8"))
        except OSError as exc:  # a read-only folder, a full disk, an XDG path that is a file
            self.notify(f"screenshot not saved: {exc}", title="SVG", severity="error")
            return
        self._saved(path, "screenshot saved to", "SVG")

    def action_export_csv(self) -> None:
        """Write the calls of the current view as CSV (:func:`~ctxwatch.ui.export.export_folder`) and say
        how many, of which view, and where."""
        s = self.state
        try:
            path = unique_path(export_folder(s.paths), "ctxwatch-calls-" + file_stem(s.stem_source()), ".csv")
            write_csv(path, s.view_calls(), s.calibrations)
        except (OSError, ValueError) as exc:  # (ValueError: text the encoder still refuses; nothing is written)
            self.notify(f"CSV not written: {exc}", title="CSV", severity="error")
            return
        scope = [f"context {s.context}"] if s.context is not None and len(s.contexts) > 1 else []
        scope += [f"filter {s.filter_text!r}"] if s.filter_text else []
        of = f" of {len(s.calls):,} ({', '.join(scope)})" if scope else ""
        self._saved(path, f"{len(s.view):,} call{'s' if len(s.view) != 1 else ''}{of} exported to", "CSV")

    def _saved(self, path: str, what: str, title: str) -> None:
        """Keep ``path`` among the files written and say where it is."""
        self.saved.append(path)
        self.notify(f"{what}\n{tx.saved_where(path, tx.toast_width(self.size.width))}", title=title)

    def action_cancel_backfill(self) -> None:
        """Skip the rest of the backfill: read the file's last 8 MiB (whole lines, at least the last one) and
        follow it; once read, Escape clears the filter."""
        if not self.state.loaded:
            self._cancel.set()
            self.notify("skipping to the last 8 MiB of the file (whole lines, at least the last one), then "
                        "following it")
        elif self.state.filter_text and self.screen is self.main:
            self.apply_filter("")

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """Textual's command palette: the dashboard's actions (:data:`COMMANDS`), then Textual's own."""
        for title, help_, action in COMMANDS:
            yield SystemCommand(title, help_, getattr(self, f"action_{action}"))
        yield from super().get_system_commands(screen)
