"""What the dashboard opened, and the names it shows for it: the paths given, the log shown, the session's place
among a folder's, the notice while no log is there yet.  A base class of :class:`ctxwatch.ui.state.DashboardState`,
whose attributes it reads."""

from __future__ import annotations

import os

from ctxwatch.engine.discovery import unlooked_note
from ctxwatch.formats.claude_code import is_subagent_file


class OpenedNames:
    """The opened paths' properties and names (the methods :class:`~ctxwatch.ui.state.DashboardState` gives)."""

    paths: list[str]
    log_path: str | None
    batch_files: list[str] | None
    sessions: list[str]

    # -- what was opened ---------------------------------------------------------------------------------
    @property
    def path(self) -> str:
        """The path given, or the paths joined by `` + ``."""
        return self.paths[0] if len(self.paths) == 1 else " + ".join(self.paths)

    @property
    def is_dir(self) -> bool:
        """True when one folder was given."""
        return len(self.paths) == 1 and os.path.isdir(self.paths[0])

    @property
    def multi(self) -> bool:
        """True for a set of files (a folder, or several paths): sessions to pick from, or one batch run."""
        return self.is_dir or len(self.paths) > 1

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

    def session_pos(self) -> str:
        """``session 2/5`` (newest first), counting sessions, not files: a Claude Code subagent transcript
        (``<session>/subagents/agent-*.jsonl``) belongs to its session, so it is ``subagent of session 2/5``
        (or ``subagent`` when its session's file is not among the logs)."""
        mains = [f for f in self.sessions if not is_subagent_file(f)]
        path = self.log_path or ""
        if not self.sessions:
            return "no log yet"
        if not is_subagent_file(path):
            pos = mains.index(path) + 1 if path in mains else "?"
            return f"session {pos}/{len(mains)}"
        # <session>/subagents/agent-x.jsonl belongs to <session>.jsonl (older versions name no session)
        owner = os.path.dirname(os.path.dirname(path)) + ".jsonl"
        owned = os.path.basename(os.path.dirname(path)) == "subagents" and owner in mains
        return f"subagent of session {mains.index(owner) + 1}/{len(mains)}" if owned else "subagent"

    def base_folder(self) -> str:
        """The folder the session picker shows paths relative to: the folder opened, or the folder common to the
        paths given."""
        if self.is_dir:
            return self.path
        try:
            return os.path.commonpath([os.path.dirname(os.path.abspath(p)) for p in self.paths])
        except ValueError:  # different drives
            return os.getcwd()

    def no_logs_notice(self, skipped: int) -> str:
        """What the bar says while the folder (or the files given) holds no log yet; ``skipped``: files in no
        known format, or compressed."""
        why = (f" ({skipped} file{'s' if skipped != 1 else ''} in no known format, or compressed: decompress to "
               "read)" if skipped else "")
        if self.is_dir:
            unlooked = unlooked_note([self.path])  # (a log under another name is opened by naming it)
            return f"no logs in this folder yet{why}; waiting{'; ' + unlooked if unlooked else ''}"
        return f"none of these files is a log yet{why}; waiting"

    def stem_source(self) -> str:
        """The path saved files are named after: the followed log, or for joined batch files the folder opened
        or the first file."""
        if self.batch_files is not None:
            return self.path if self.is_dir else self.batch_files[0]
        return self.log_path or self.paths[0]
