"""The screens the dashboard opens over its main screen: a call's detail (Enter), its turn diff (``d``), its
eviction preview (``e``), the input problems (``i``), the flags (``F``), the fleet (``W``) and the help (``?``).

:class:`ViewActions` is the part of the app (:class:`~ctxwatch.ui.app.CtxwatchApp` derives from it) that opens
them with what they show, gives the open ones the state as it changes, and handles their choices (a flag's call,
a conversation); screens render what they are handed and never read the app's state.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.app import App

from ctxwatch.ui.export import export_folder
from ctxwatch.ui.fleet import FleetRow, fleet_rows
from ctxwatch.ui.screens import (
    DetailScreen,
    DiffScreen,
    FlagsScreen,
    FleetScreen,
    HelpScreen,
    IssuesScreen,
    PlanScreen,
)
from ctxwatch.ui.state import DashboardState

if TYPE_CHECKING:
    from collections.abc import Callable

    from ctxwatch.config import Settings
    from ctxwatch.model import Call


def empty_view_reason(s: DashboardState) -> str:
    """Why the view of ``s`` shows no call: its filter matches none, or there are none to show."""
    return f"the filter {s.filter_text!r} matches none (esc clears it)" if s.filter_text and s.calls else \
        "no calls in this view"


class ViewActions(App[None]):
    """Open the screens over the main screen and keep the open ones up to date.

    Attributes (set by the app): ``state``, ``settings``; ``clock`` (seconds since the epoch, for the fleet
    view's ages).
    """

    state: DashboardState
    clock: ClassVar[Callable[[], float]]
    if TYPE_CHECKING:  # (set by the app)
        settings: Settings

        # (the app's own, used here)
        def _call_under_cursor(self) -> Call | None: ...
        def _show(self, chart: bool = True) -> None: ...
        def _select_row(self, row: int) -> None: ...
        def _drop_filter(self, why: str = ...) -> None: ...
        def rebuild_view(self) -> None: ...

    def _no_call(self) -> None:
        """Say why a key about the selected call does nothing: none is selected, or the view shows none."""
        s = self.state
        self.notify("no call selected" if s.view else f"no call selected: {empty_view_reason(s)}", severity="warning")

    def action_detail(self) -> None:
        """Open the selected call's detail."""
        call = self._call_under_cursor()
        if call is None:
            self._no_call()
            return
        cal = self.state.calibrations
        self.push_screen(DetailScreen(call, self.state.spec, self.settings, cal.breakdown(call), cal.factor(call),
                                      self.state.costs.get(call.index), self.state.log_path))

    def action_diff(self) -> None:
        """Open what changed from the call before the selected one (same context) to it."""
        call = self._call_under_cursor()
        if call is None:
            self._no_call()
            return
        prev = self.state.previous_in_context(call)
        if prev is None:
            self.notify(f"call #{call.index + 1} is the first of its context read: nothing to compare it with")
            return
        after = self.state.skipped_after
        gap = self.state.skipped if after is not None and prev.index <= after < call.index else None
        self.push_screen(DiffScreen(call, prev, self.state.spec, gap))

    def action_evict(self) -> None:
        """Open the eviction preview of the selected call, or from a call's detail, of that call."""
        # (the detail shows the call it was opened on; following a live log, the selection has moved on since)
        call = self.screen.call if isinstance(self.screen, DetailScreen) else self._call_under_cursor()
        if call is None:
            self._no_call()
            return
        try:
            import ctxwatch.planner  # noqa: F401
        except ImportError:
            self.notify("the eviction planner is not available in this build", severity="warning")
            return
        if not isinstance(self.screen, PlanScreen):
            self.push_screen(PlanScreen(call, self.state.spec, self.settings, self.state.calibrations.breakdown(call),
                                        export_to=lambda: export_folder(self.state.paths)))

    def action_issues(self) -> None:
        """List every input problem of the run on a screen of its own; the side panel has room for a few."""
        s = self.state
        if not isinstance(self.screen, IssuesScreen):
            self.push_screen(IssuesScreen(s.issues_title(), s.input_problems(), s.issues_several(),
                                          s.failed or s.skipped, s.issues_before_reset, s.last_reset,
                                          others=None if s.batch_files is not None or not (s.is_dir or len(s.paths) > 1)
                                          else "check of the folder reads its other logs too" if s.is_dir
                                          else "check of all the paths reads their other logs too"))

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
            self._drop_filter("it hid the flag's call")
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
