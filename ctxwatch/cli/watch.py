"""``ctxwatch [watch] PATHS``: the dashboard on a log, a folder, several of them or a batch pair, followed live.

Without a terminal to draw on (a pipe, CI, ``COLUMNS=0``) it prints ``ctxwatch report`` instead.  The paths are
checked here first, so that a missing file or a pipe is a one-line message rather than an empty dashboard.
"""

from __future__ import annotations

import os
import shutil
import sys

import click

from ctxwatch.cli.console import echo
from ctxwatch.cli.exits import fail
from ctxwatch.cli.load import given_or_found
from ctxwatch.cli.options import idle_grace_option, make_settings, settings_options
from ctxwatch.cli.spool import STDIN_NAME, is_pipe
from ctxwatch.output.safetext import clean


@click.command("watch")
@click.argument("paths", nargs=-1, type=click.Path(readable=False))
@settings_options
@click.option("--poll", is_flag=True,
              help="Poll instead of using filesystem events (network, WSL, container filesystems).")
@click.option("--last", type=click.IntRange(min=1), default=None, help="Start from the last N calls.")
@idle_grace_option
def watch_cmd(paths: tuple[str, ...], config: str | None, window: int | None, budget_fraction: float | None,
              trigger: float | None, reserve: float | None, fmt: str | None, poll: bool, last: int | None,
              idle_grace: float | None = None) -> None:
    """Open the dashboard on PATHS and follow it live.

    PATHS: a log file; a folder of logs (sessions, newest first; the newest is followed);
    several logs or folders (the same, over all their files); or an OpenAI/Anthropic batch
    input and output file, or their folder (one run, results joined to requests by custom_id).
    Without PATHS: the session logs of the harnesses installed (Claude Code, Codex, Gemini CLI),
    the session picker open on the most recent.
    """
    settings = make_settings(config, window=window, budget_fraction=budget_fraction, trigger=trigger,
                             reserve=reserve)
    pick = not paths
    paths = given_or_found(paths)
    headless = not sys.stdout.isatty() or shutil.get_terminal_size((0, 0)).columns <= 0
    _check_paths(paths, fmt, headless)
    if headless:
        # No terminal to draw on (a pipe, CI, COLUMNS=0): print the headless report instead.
        echo("ctxwatch: no terminal; printing `ctxwatch report` instead of the dashboard", err=True)
        ctx = click.get_current_context()
        ctx.invoke(_group_command(ctx, "report"), paths=paths, config=config, window=window,
                   budget_fraction=budget_fraction, trigger=trigger, reserve=reserve, fmt=fmt, as_json=False,
                   follow=False, jsonl=False, poll=poll)
        return
    from ctxwatch.ui.app import CtxwatchApp

    app = CtxwatchApp(paths[0] if len(paths) == 1 else list(paths), fmt=fmt, settings=settings, poll=poll,
                      last=last, pick=pick, idle_grace=idle_grace)
    app.run()
    if app.return_code:  # (1: the app ended on an error it did not handle; Textual printed its traceback)
        sys.exit(app.return_code)


def _check_paths(paths: tuple[str, ...], fmt: str | None, headless: bool) -> None:
    """Exit with status 2 and a message unless the dashboard (or, ``headless``, the report) can read ``paths``:
    standard input and pipes are for the headless commands, each path must exist (one log about to be written
    excepted: the dashboard waits for it), and a single file must be in a known format."""
    from ctxwatch.engine import LOG_SUFFIXES, LogError, check_log_file, resolve_spec

    if STDIN_NAME in paths and not headless:
        # (the dashboard reads its keys from the terminal, and follows files: a pipe is for the headless commands)
        fail("-: the dashboard follows a file and reads keys from the terminal; for piped input use "
             "`ctxwatch report -` or `ctxwatch check -`")
    if not headless and (pipe := next((p for p in paths if is_pipe(p)), None)) is not None:
        fail(f"{clean(pipe)}: a pipe: the dashboard follows a file; `ctxwatch report`, `check` and "
             "`plan` read a pipe (or save it to a file first)")
    for path in (p for p in paths if p != STDIN_NAME):  # (standard input: read by the headless report)
        if not os.path.lexists(path):
            # One log file about to be written (`demo --write run.jsonl & ctxwatch run.jsonl`): the dashboard
            # waits for it, like `tail -F`, when its folder exists.
            parent = os.path.dirname(os.path.abspath(path))
            if len(paths) == 1 and os.path.isdir(parent) and path.lower().endswith(LOG_SUFFIXES):
                break
            fail(f"{clean(path)}: no such file or directory")
        if not os.path.isdir(path):
            try:
                check_log_file(path)  # (a pipe or a device among several paths, as alone: refused by name)
            except LogError as exc:
                fail(clean(exc))
    waiting = len(paths) == 1 and not os.path.lexists(paths[0])
    if len(paths) == 1 and not os.path.isdir(paths[0]) and not waiting and paths[0] != STDIN_NAME:
        try:
            resolve_spec(paths[0], fmt)
        except LogError as exc:
            fail(clean(exc))


def _group_command(ctx: click.Context, name: str) -> click.Command:
    """The command ``name`` of the group this command runs in, looked up when it runs: commands do not import
    each other (the group imports them all)."""
    group = ctx.find_root().command
    command = group.get_command(ctx, name) if isinstance(group, click.Group) else None
    if command is None:
        raise click.UsageError(f"no `{name}` command in this group")
    return command
