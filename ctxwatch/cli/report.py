"""``ctxwatch report PATHS``: per-call floor / history / reserve numbers, headless.

Three shapes of the same numbers: a text table (:mod:`ctxwatch.output.text`), one JSON document or JSON lines
(:mod:`ctxwatch.output.report`), and with ``--follow`` JSON lines as calls complete
(:mod:`ctxwatch.engine.follow`).  This module checks which options go together and prints.
"""

from __future__ import annotations

import signal
import sys
import threading
from typing import Any

import click

from ctxwatch.cli.console import echo, output_width, write_chunks
from ctxwatch.cli.exits import exit_if_nothing_read, fail
from ctxwatch.cli.load import KeptOutput, given_or_found, load_paths, steady_heap
from ctxwatch.cli.options import cache_option, idle_grace_option, make_settings, settings_options
from ctxwatch.cli.spool import STDIN_NAME, is_pipe
from ctxwatch.config import Settings
from ctxwatch.output.safetext import clean


@click.command("report")
@click.argument("paths", nargs=-1, type=click.Path(readable=False))
@settings_options
@cache_option
@click.option("--json", "as_json", is_flag=True,
              help="Print the JSON document (schema in docs/json-schema.md): each call and flag gives its "
                   "`number` (#N, from 1, what `plan --call` takes) beside its 0-based `index`/`call`.")
@click.option("--follow", is_flag=True, help="Keep reading one log file as it grows, printing JSON lines (as --jsonl) "
                                          "as calls complete. One file only: to follow a folder's newest session, "
                                          "open the folder in the dashboard (ctxwatch FOLDER).")
@click.option("--jsonl", is_flag=True, help="One JSON object per line per call, and an {\"event\": \"issue\"} line per "
                                            "problem (with --follow: as each completes).")
@click.option("--poll", is_flag=True, help="With --follow: poll instead of filesystem events.")
@idle_grace_option
@click.option("--sessions", "sessions_only", is_flag=True,
              help="Text: one row per session (calls, peak prompt, tokens, cost) instead of one per call.")
def report_cmd(paths: tuple[str, ...], config: str | None, window: int | None, budget_fraction: float | None,
               trigger: float | None, reserve: float | None, fmt: str | None, as_json: bool, follow: bool,
               jsonl: bool, poll: bool, sessions_only: bool, idle_grace: float | None = None) -> None:
    """Per-call floor / history / reserve numbers for PATH, headless (on a terminal, the tables fit its
    width; piped, the width COLUMNS gives, if any; --sessions: one row per session).

    Without PATH: the session logs of the harnesses installed (Claude Code, Codex, Gemini CLI).
    """
    if as_json and jsonl:
        raise click.UsageError("--json and --jsonl are two output shapes: choose one")
    if follow and (STDIN_NAME in paths or any(is_pipe(p) for p in paths)):
        raise click.UsageError("--follow reads a file as it grows; standard input ('-') or a pipe is read whole: "
                               "drop --follow, or give the log's path")
    if follow and as_json:
        raise click.UsageError("--follow prints JSON lines as calls complete (--jsonl); --json is one document "
                               "of a log as it stands: choose one")
    if poll and not follow:
        raise click.UsageError("--poll applies to --follow only")
    if idle_grace is not None and not follow:
        raise click.UsageError("--idle-grace applies to --follow only (a whole read reports a cut last line at once)")
    if sessions_only and (as_json or jsonl or follow):
        raise click.UsageError("--sessions is a view of the text report (--json has the sessions as \"sessions\")")
    settings = make_settings(config, window=window, budget_fraction=budget_fraction, trigger=trigger,
                             reserve=reserve)
    if follow:
        if len(paths) != 1:
            raise click.UsageError("--follow takes exactly one PATH")
        _follow(paths[0], fmt, settings, poll, idle_grace)
        return
    paths = given_or_found(paths)
    if jsonl or as_json:
        kept = KeptOutput.find("report --jsonl" if jsonl else "report --json", paths, fmt, settings)
        if kept is not None and kept.replay():
            return
        # (imported here: a kept output written again needs none of the readers, the accounting or the analysis)
        from ctxwatch.output.chunks import call_pieces, report_json_chunks, report_jsonl_chunks

        run = load_paths(paths, fmt, settings, render=None if jsonl else call_pieces)
        exit_if_nothing_read(run, paths)
        with steady_heap():  # (written as made: one call object at a time)
            chunks = report_jsonl_chunks(run) if jsonl else report_json_chunks(run)
            write_chunks(kept.keep(chunks) if kept is not None else chunks)
        return
    # (on a terminal the tables are narrowed to its width; a pipe or a file gets every column, or COLUMNS' width)
    width = output_width()
    kept = KeptOutput.find(f"report text {width} {sessions_only}", paths, fmt, settings)
    if kept is not None and kept.replay_lines():
        return
    run = load_paths(paths, fmt, settings)
    exit_if_nothing_read(run, paths)
    from ctxwatch.output.report import report_json

    with steady_heap():
        doc = report_json(run)
    from ctxwatch.output.text import report_lines

    lines = []
    for line in report_lines(doc, run.issues, settings, width=width, sessions_only=sessions_only):
        echo(line)
        lines.append(line)
    if kept is not None:
        kept.keep_lines(lines)


def _follow(path: str, fmt: str | None, settings: Settings, poll: bool, idle_grace: float | None = None) -> None:
    """``report --follow --jsonl``: print each call of ``path`` as it completes, until Ctrl-C (exit 0)."""
    import logging

    from ctxwatch.engine import LogError
    from ctxwatch.output.follow import follow_jsonl
    from ctxwatch.source import DEFAULT_IDLE_GRACE

    # watchfiles logs a warning on Ctrl-C; stopping on Ctrl-C is the normal end of a follow (exit 0).
    logging.getLogger("watchfiles").setLevel(logging.ERROR)
    stop = threading.Event()
    # Ctrl-C sets the stop event instead of raising KeyboardInterrupt: a KeyboardInterrupt raised while
    # watchfiles waits in its Rust loop can be taken by watchfiles as the end of one watch, after which
    # the follow loop would simply watch again and the command never exit.
    previous = _on_sigint(stop)
    try:
        follow_jsonl(path, fmt, settings, sys.stdout, stop, poll=poll,
                     idle_grace=DEFAULT_IDLE_GRACE if idle_grace is None else idle_grace)
    except KeyboardInterrupt:
        stop.set()
    except LogError as exc:
        fail(clean(exc))
    finally:
        _restore_sigint(previous)


def _on_sigint(stop: threading.Event) -> Any:
    """Make SIGINT set ``stop``; return the previous handler, or ``None`` when no handler can be installed (not
    the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGINT, lambda _sig, _frame: stop.set())


def _restore_sigint(previous: Any) -> None:
    """Put back the SIGINT handler :func:`_on_sigint` replaced."""
    if previous is not None:
        signal.signal(signal.SIGINT, previous)
