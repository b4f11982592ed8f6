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
from ctxwatch.ui import text as tx
from ctxwatch.ui.export import export_dir
from ctxwatch.ui.feed import BatchFeed, FolderScan, LogFeed
from ctxwatch.ui.handlers import FeedHandlers
from ctxwatch.ui.main import FilterInput, MainScreen
from ctxwatch.ui.outputs import OutputActions
from ctxwatch.ui.screens import FlagsScreen, IssuesScreen, PlanScreen
from ctxwatch.ui.screens.help import COMMANDS
from ctxwatch.ui.sessions import SessionActions, newest_session, transcripts_of
from ctxwatch.ui.state import STATE_VIEWS, DashboardState
from ctxwatch.ui.views import ViewActions
from ctxwatch.ui.widgets.table import CallsTable
from ctxwatch.ui.workers import run_feed, run_scan

__all__ = ["CSV_FIELDS", "CtxwatchApp", "FilterInput", "MainScreen", "csv_text", "export_dir", "write_csv"]


class CtxwatchApp(FeedHandlers, ViewActions, OutputActions, SessionActions):
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
        idle_grace: seconds a half-written last line may stay unchanged before it is reported (``--idle-grace``;
            ``None``: the follower's default).
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
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True),
        # ctrl+c copies, as in a desktop app: the selection, else the highlighted item (:meth:`action_copy`); a
        # priority binding, so that it does the same on every screen and in the filter and find boxes.
        Binding("ctrl+c", "copy", "Copy", show=False, priority=True),
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
    #: Actions off while the main screen says the terminal is too small: each opens a screen (or writes one) that
    #: would cover that message at a size it is not laid out for; quitting, following, pausing, the exports of
    #: the calls and the session picker (laid out down to 36 columns, and a folder's way to another session)
    #: still work.
    TOO_SMALL_OFF = frozenset({"detail", "diff", "evict", "issues", "flags", "fleet", "help", "filter",
                               "save_svg"})

    def __init__(self, path: str | Sequence[str], *, fmt: str | None = None, settings: Settings | None = None,
                 poll: bool = False, last: int | None = None, pick: bool = False,
                 idle_grace: float | None = None) -> None:
        super().__init__()
        paths = [path] if isinstance(path, str) else list(path)
        if not paths:
            raise ValueError("CtxwatchApp needs at least one path")
        self.state = DashboardState(paths, poll=poll)
        self.fmt = fmt
        self.settings = settings or Settings()
        self.last = last
        self.idle_grace = idle_grace
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
                                poll=self.state.poll, idle_grace=self.idle_grace)
        self.state.start_log(path, batch, self.feed.sweep_interval)
        self.state.transcripts = transcripts_of(path) if batch is None else 0
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
        """The cursor moved: show that call on the bar.  A highlight posted before the table was filled again
        (a filter, a context) names a row that is gone: it is dropped, or the call would stay selected, hidden."""
        s = self.state
        if not (0 <= event.row < len(s.view) and s.view[event.row] == event.index):
            return
        if event.index != self.state.selected_index:
            self.state.selected_index = event.index
            self._show(chart=False)

    def on_calls_table_selected(self, event: CallsTable.Selected) -> None:
        """Enter on a call opens its detail (not while the terminal is too small: :data:`TOO_SMALL_OFF`)."""
        if self.check_action("detail", ()) is not False:
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
        and in the list of input problems (no call is on that screen); the screens' keys are off while the main
        screen says the terminal is too small (:data:`TOO_SMALL_OFF`)."""
        if action == "evict" and isinstance(self.screen, PlanScreen | IssuesScreen | FlagsScreen):
            return False
        if action in self.TOO_SMALL_OFF and self.main is not None and self.screen is self.main \
                and self.main.too_small:
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
