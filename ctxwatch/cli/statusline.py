"""``ctxwatch statusline [PATH]``: one line on a session's context window (:mod:`ctxwatch.output.statusline`).

Without PATH it reads Claude Code's ``statusLine`` hook JSON on standard input (``transcript_path``, and
``context_window.context_window_size``: the window Claude Code runs the session in, at which its own limits
apply, :attr:`ctxwatch.config.Settings.stated_window`; a ``--window`` is the user's what-if instead); with
PATH (a log, or a folder: its newest session) it is for tmux's ``status-right``.  Run on every prompt, so it
reads through the cache of earlier reads (only what the log grew by is read) and never imports the dashboard.

Exit status: 0 with the line; with PATH, 2 when the log cannot be read.  Fed by the hook, a problem is the line
itself (``ctxwatch: ...``) with status 0: Claude Code blanks the status line of a command that fails.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import click
import orjson

from ctxwatch.cli.console import echo
from ctxwatch.cli.exits import fail
from ctxwatch.cli.load import user_cache
from ctxwatch.cli.options import cache_option, make_settings, settings_options
from ctxwatch.config import MAX_COUNT
from ctxwatch.output.safetext import clean


@click.command("statusline")
@click.argument("path", required=False, type=click.Path(readable=False))
@settings_options
@cache_option
def statusline_cmd(path: str | None, config: str | None, window: int | None, budget_fraction: float | None,
                   trigger: float | None, reserve: float | None, fmt: str | None) -> None:
    """One line: occupancy, floor / history, distance to compaction, worst flag.

    \b
    Without PATH: Claude Code's statusLine hook JSON on standard input
    ({"statusLine": {"type": "command", "command": "ctxwatch statusline"}}).
    With PATH (a log, or a folder: its newest session): for tmux's status-right.
    """
    if path == "-":
        fail("statusline reads Claude Code's statusLine JSON on standard input when given no PATH: drop the '-'")
    hook = path is None
    stated: int | None = None
    if hook and sys.stdin.isatty():  # (run by hand: nothing would ever come on standard input)
        fail("statusline reads Claude Code's statusLine JSON on standard input; give a PATH for tmux or by hand")
    if hook:
        given = sys.stdin.buffer.read()
        try:
            data: Any = orjson.loads(given or b"null")
        except orjson.JSONDecodeError as exc:
            # (orjson's own words: where it stopped, a number out of range)
            _say(f"ctxwatch: the statusLine JSON on standard input cannot be read ({clean(str(exc))})", hook)
            return
        if not isinstance(data, dict):
            _say("ctxwatch: no statusLine JSON on standard input (give a PATH for tmux)" if data is None else
                 "ctxwatch: the statusLine JSON on standard input is no object", hook)
            return
        transcript = data.get("transcript_path")
        if transcript is not None and not isinstance(transcript, str):
            from ctxwatch.model.fields import json_type

            _say(f"ctxwatch: the statusLine JSON's transcript_path is a JSON {json_type(transcript)}, not a path",
                 hook)
            return
        if not transcript:  # (none yet: a session before its first message)
            _say("ctxwatch: no transcript yet", hook)
            return
        path = transcript
        cw = data.get("context_window")
        size = cw.get("context_window_size") if isinstance(cw, dict) else None
        if isinstance(size, int) and not isinstance(size, bool) and 0 < size < MAX_COUNT:
            # (Claude Code's word on the window it runs the session in: its own limits at that window, where a
            # --window would be the user's what-if, judged by ctxwatch's defaults)
            stated = size
    try:
        settings = make_settings(config, window=window, budget_fraction=budget_fraction, trigger=trigger,
                                 reserve=reserve, stated_window=stated)
    except click.UsageError as exc:
        if not hook:
            raise
        # (Claude Code blanks the line of a command that fails: a typo in the config file is said there)
        _say(f"ctxwatch: {clean(exc.format_message())}", hook)
        return
    from ctxwatch.engine import LogError, list_paths, load_run
    from ctxwatch.formats.claude_code import is_subagent_file
    from ctxwatch.output.statusline import statusline

    assert path is not None
    log = path
    if os.path.isdir(path):
        sessions = [f for f in list_paths([path]) if not is_subagent_file(f)]
        if not sessions:
            _say(f"ctxwatch: no logs in {clean(path)}", hook)
            return
        log = sessions[0]
    try:
        run = load_run(log, fmt, settings, cache=user_cache())
    except LogError as exc:
        _say(f"ctxwatch: {clean(exc)}", hook)
        return
    echo(clean(statusline(run)))


def _say(message: str, hook: bool) -> None:
    """A problem: the status line itself when fed by the hook (status 0), else a message and status 2."""
    if hook:
        echo(message)
    else:
        fail(message.removeprefix("ctxwatch: "))
