"""The dashboard's sessions: following a folder's newest session, the session picker (``o``), and opening on
the picker when the dashboard was started with no path (the harnesses' logs, :func:`ctxwatch.engine.found_places`).

:class:`SessionActions` is the part of the app (:class:`~ctxwatch.ui.app.CtxwatchApp` derives from it) that
handles :class:`~ctxwatch.ui.messages.SessionsChanged` and the picker's choice; like every handler it changes the
state (:class:`~ctxwatch.ui.state.DashboardState`) and then has the main screen draw it.
"""

from __future__ import annotations

import os
from functools import partial
from typing import TYPE_CHECKING

from textual.app import App

from ctxwatch.formats.claude_code import is_subagent_file, subagent_files_of
from ctxwatch.formats.claude_code.files import named_session_of, session_id_of
from ctxwatch.ui import messages as msg
from ctxwatch.ui.screens import AUTO, SessionPicker
from ctxwatch.ui.state import DashboardState
from ctxwatch.ui.summaries import summarize

if TYPE_CHECKING:
    from ctxwatch.ui.main import MainScreen


def session_files(path: str, session: str | None = None) -> list[str]:
    """A Claude Code session's file and its subagents' transcripts (:func:`subagent_files_of`: under
    ``<session>/subagents/`` or beside the session file), in that order, for ``path`` the session's file or one
    of those transcripts; ``[path]`` for any other log, or a transcript whose session is not found.  For a
    transcript, ``session`` (the session it was reached from) is taken when the transcript is one of its own."""
    if is_subagent_file(path):
        if session is None or path not in subagent_files_of(session):
            session = session_of(path)
        if session is None:
            return [path]
        path = session
    return [path, *subagent_files_of(path)]


def session_of(transcript: str) -> str | None:
    """The session file of the Claude Code subagent transcript ``transcript``: ``<session>.jsonl`` for one under
    ``<session>/subagents/``; for one beside it, the file there with the same ``sessionId`` that lists it,
    ``<sessionId>.jsonl`` (as Claude Code names it) before the others and else the largest (copies cut from a
    session share its id: the whole one is the session); ``None`` when there is none."""
    folder = os.path.dirname(transcript)
    named = named_session_of(transcript)
    if os.path.basename(folder) == "subagents":
        return named if named is not None and os.path.isfile(named) else None
    sid = session_id_of(transcript)
    try:
        names = os.listdir(folder or ".")
    except OSError:
        return None
    found = [os.path.join(folder, n) for n in sorted(names) if n.endswith(".jsonl") and not is_subagent_file(n)]
    found = [f for f in found if sid is not None and session_id_of(f) == sid and transcript in subagent_files_of(f)]
    if named in found:
        return named
    return max(found, key=_size) if found else None


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def transcripts_of(path: str) -> int:
    """How many subagent transcripts the Claude Code session file ``path`` has (:func:`session_files`); 0 for
    a transcript itself or any other log."""
    if is_subagent_file(path):
        return 0
    return len(session_files(path)) - 1


def newest_session(files: list[str]) -> str:
    """The newest of ``files`` (newest first) that is not a Claude Code subagent transcript, else the newest."""
    for f in files:
        if not is_subagent_file(f):
            return f
    return files[0]


class SessionActions(App[None]):
    """Sessions of the folder(s) followed: the newest followed in automatic mode, another picked with ``o``.

    Attributes (set by the app): ``state``; ``pick_on_open`` (open the picker once the first sessions are
    listed, on the most recent: the dashboard started with no path).
    """

    state: DashboardState
    pick_on_open: bool = False
    if TYPE_CHECKING:  # (set by the app)
        from ctxwatch.config import Settings

        fmt: str | None
        settings: Settings

    if TYPE_CHECKING:  # (the app's own, used here)
        def _start_feed(self, path: str, batch: list[str] | None = None) -> None: ...
        def _show(self, chart: bool = True) -> None: ...
        def _live(self) -> MainScreen | None: ...
        def _push_issues(self) -> None: ...
        def rebuild_view(self) -> None: ...
        def _apply_calls(self, message: msg.CallsChanged) -> None: ...

    def on_sessions_changed(self, message: msg.SessionsChanged) -> None:
        """The folder's sessions changed: follow the newest one unless the user picked one.  Batch files are
        read as one joined run instead (again when a file is added or removed).  The files left out become
        notes among the input problems."""
        s = self.state
        if message.notes != s.folder_notes:
            s.folder_notes = message.notes
            self._push_issues()
            self._show(chart=False)
        if message.batch:
            s.sessions = []
            if s.batch_files is None or set(message.files) != set(s.batch_files):
                files = sorted(message.files)
                self._start_feed(" + ".join(files), batch=files)
            return
        s.sessions = message.files
        if not message.files:
            s.notice = s.no_logs_notice(message.skipped)
            self._show(chart=False)
            return
        newest = newest_session(message.files)
        # (paused, the view stays on its session; the newest is followed on resume: action_toggle_pause)
        if s.auto_session and newest != s.log_path and not (s.paused and s.log_path is not None):
            self._follow_newest(newest)
        else:
            self._show(chart=False)
        self._pick_on_open()

    def _follow_newest(self, newest: str) -> None:
        """Switch to the folder's newest session (automatic mode), saying so when another one was shown."""
        if self.state.log_path is not None:
            self.notify(f"following the newest session: {os.path.basename(newest)}")
            self._drop_filter()
        self._start_feed(newest)

    def action_sessions(self) -> None:
        """Pick a session of the followed folder (or of the files given)."""
        s = self.state
        if s.batch_files is not None:
            self.notify("sessions: these batch files are one run (results joined to requests by custom_id)")
        elif not s.multi:
            self.notify("sessions: open a folder of logs to switch between sessions")
        else:
            self.push_screen(self._picker(), self._session_picked)

    def _session_picked(self, choice: str | None) -> None:
        """The session picker closed on ``choice`` (a path, ``AUTO``, or ``None``: cancelled)."""
        s = self.state
        if choice is None:
            return
        if s.paused:
            # (picking a session is asking to see it: a pause held over would show it empty, "+12 new")
            s.paused = False
            pending, s.pending = s.pending, []
            if choice in (AUTO, s.log_path):
                for m in pending:  # (the session shown goes on: what was read meanwhile is shown)
                    self._apply_calls(m)
        if choice == AUTO:
            s.auto_session = True
            newest = newest_session(s.sessions) if s.sessions else None
            if newest and newest != s.log_path:
                self._drop_filter()
                self._start_feed(newest)
            else:
                self._show(chart=False)
            return
        s.auto_session = False
        if choice != s.log_path:
            self._drop_filter()
            self._start_feed(choice)
        else:
            self._show(chart=False)  # (the status line says the session is picked now)

    def _drop_filter(self, why: str = "it was for the session shown before") -> None:
        """Clear the filter and say so, and ``why``: by default, another session is shown (the filter was typed
        for the one before, a time, a number, and kept it would hide every call of the new one)."""
        text, self.state.filter_text = self.state.filter_text, ""
        if (main := self._live()) is not None:
            main.close_filter()
        if text:
            self.notify(f"filter {text!r} cleared: {why}")

    def action_cycle_context(self) -> None:
        """Show the next context: the log's own (main, then subagents / sidechains), then, for a Claude Code
        session whose subagents have transcripts of their own, each of those files in turn and back to the
        session (the one followed then is the one picked: a newer session no longer takes over)."""
        s = self.state
        files: list[str] = []
        if s.log_path and s.batch_files is None:
            # (listed again on each press: a live session starts new subagents; the session last gone through
            # is the one a transcript reached from it goes on in)
            files = session_files(s.log_path, s.cycled[0] if s.log_path in s.cycled[1:] else None)
        i = s.contexts.index(s.context) if s.context in s.contexts else -1
        if len(s.contexts) >= 2 and (i + 1 < len(s.contexts) or len(files) < 2):
            s.context = s.contexts[(i + 1) % len(s.contexts)]
            s.follow = True
            self.rebuild_view()
            return
        if len(files) < 2:
            self.notify("this log has one context")
            return
        assert s.log_path is not None
        nxt = files[(files.index(s.log_path) + 1) % len(files)] if s.log_path in files else files[0]
        s.auto_session = False
        s.cycled = files
        self._drop_filter()
        self._start_feed(nxt)
        k = files.index(nxt)
        self.notify(f"context: {'the session' if k == 0 else 'subagent transcript'} {os.path.basename(nxt)} "
                    f"(file {k + 1}/{len(files)} of the session; c: next)")

    def _picker(self, cursor: str | None = None) -> SessionPicker:
        """The session picker on the sessions now, with what is known of them (read again where stale)."""
        s = self.state
        return SessionPicker(s.base_folder(), s.sessions, s.log_path, s.auto_session, cursor=cursor,
                             infos=s.session_info, read=partial(summarize, fmt=self.fmt, settings=self.settings))

    def on_session_picker_info_read(self, message: SessionPicker.InfoRead) -> None:
        """The picker read a session: kept for its next opening."""
        self.state.session_info[message.path] = message.info

    def _pick_on_open(self) -> None:
        """Started with no path: once the harnesses' sessions are listed, open the picker with its cursor on the
        most recent (Enter opens it, Escape stays on it, followed automatically)."""
        s = self.state
        if not self.pick_on_open or not s.sessions or isinstance(self.screen, SessionPicker):
            return
        self.pick_on_open = False
        newest = newest_session(s.sessions)
        self.push_screen(self._picker(cursor=newest), self._session_picked)
