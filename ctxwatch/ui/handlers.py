"""The dashboard's feed handlers: what the app does with each message of its :class:`~ctxwatch.ui.feed.LogFeed`
(:mod:`ctxwatch.ui.messages`), posted from the feed's thread.

:class:`FeedHandlers` is the part of the app (:class:`~ctxwatch.ui.app.CtxwatchApp` derives from it) that takes
the calls, issues, resets, analyses and notices the feed reads; like every handler it changes the state
(:class:`~ctxwatch.ui.state.DashboardState`) and then has the main screen draw it.  A message of a feed the app
has since replaced (another session picked) is dropped.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from textual.app import App

from ctxwatch.ui import messages as msg
from ctxwatch.ui.state import DashboardState

if TYPE_CHECKING:
    from ctxwatch.config import Settings
    from ctxwatch.ui.main import MainScreen


class FeedHandlers(App[None]):
    """The feed's messages: calls, issues, resets, analyses, backfill progress, watch mode and notices.

    Attributes (set by the app): ``state``, ``settings``, ``_feed_id`` (the current feed's), ``_cancel`` (set by
    Escape to skip the backfill's middle).
    """

    state: DashboardState
    if TYPE_CHECKING:  # (set by the app)
        settings: Settings
        _feed_id: int
        _cancel: threading.Event

        # (the app's own, used here)
        def _show(self, chart: bool = True) -> None: ...
        def _live(self) -> MainScreen | None: ...
        def _select_row(self, row: int) -> None: ...
        def _push_issues(self) -> None: ...
        def _push_flags(self) -> None: ...
        def _push_fleet(self) -> None: ...

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
        if message.spec is not None:
            self.state.spec = message.spec  # (the new content's calls are re-read in its own format)
        if message.clear and (main := self._live()) is not None:
            main.table.set_calls([], self.settings)
        self._push_issues()
        if not quiet:
            self.notify(f"log {message.reason}; reading it again from the start", severity="warning")
        self._show()

    def on_format_seen(self, message: msg.FormatSeen) -> None:
        """The file, empty since its reset, is in another format: read (and its calls re-read) in that one."""
        if self._ours(message):
            self.state.format_name = message.format_name
            self.state.spec = message.spec
            self._show(chart=False)

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
