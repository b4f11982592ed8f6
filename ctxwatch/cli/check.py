"""``ctxwatch check PATHS``: the flags of a log for CI and cron, as text or ``--json`` (:mod:`ctxwatch.output.check`).

Exit status (:mod:`ctxwatch.cli.exits`):

* 0: no flag at or above ``--fail-on`` (default ``critical``);
* 1: at least one flag at or above it, or fewer calls read than ``--min-calls`` (default 0: none needed);
* 2: usage error (bad option, bad config file), or the file cannot be read: missing, a directory, unknown format,
  or not a single call could be read from a file that has bad lines; or a log of a folder could not be read
  (permissions, removed while read): the others are checked and listed, but the check is no pass;
* 130: interrupted (Ctrl-C).

Bad lines and other notes are listed but do not change the status by themselves: a live log's half-written last
line or one corrupt record must not fail a cron job whose calls are fine.  The exception is a log where no call
could be read and a line is damaged (other than a half-written last line): that is an unreadable file, exit 2.
"""

from __future__ import annotations

import sys

import click
import orjson

from ctxwatch.cli.console import echo, output_width
from ctxwatch.cli.exits import EXIT_FLAGGED, EXIT_USAGE, CommandFailed, exit_if_nothing_read, flagged_status
from ctxwatch.cli.load import given_or_found, load_paths, steady_heap
from ctxwatch.cli.options import cache_option, make_settings, settings_options
from ctxwatch.output.safetext import json_bytes, on_closed_output_exit, shown, write_out


@click.command("check")
@click.argument("paths", nargs=-1, type=click.Path(readable=False))
@settings_options
@cache_option
@click.option("--fail-on", "fail_on", type=click.Choice(["info", "warn", "critical"]), default="critical",
              show_default=True,
              help="Exit 1 when a flag at or above this severity is found (info: any flag).")
@click.option("--min-calls", "min_calls", type=click.IntRange(min=0), default=0, show_default=True,
              help="Exit 1 when fewer calls than this were read (1: a job whose log stayed empty fails).")
@click.option("--json", "as_json", is_flag=True,
              help="Print flags, forecast and notes as JSON (a flag's `number` is its #N, what `plan --call` "
                   "takes; its `call` is the 0-based index).")
def check_cmd(paths: tuple[str, ...], config: str | None, window: int | None, budget_fraction: float | None,
              trigger: float | None, reserve: float | None, fmt: str | None, fail_on: str, min_calls: int,
              as_json: bool) -> None:
    """Print the flags of PATH; exit 1 if any is at or above --fail-on (or fewer calls than --min-calls were
    read), 2 on a usage error or if PATH cannot be read.

    PATH is a log file, or (like `report`) a batch input/output pair or a folder of logs; without
    PATH, the session logs of the harnesses installed (Claude Code, Codex, Gemini CLI).
    """
    from ctxwatch.analysis import analysis_json
    from ctxwatch.output.check import check_error_json, check_json, check_lines, unread_logs

    settings = make_settings(config, window=window, budget_fraction=budget_fraction, trigger=trigger,
                             reserve=reserve)
    paths = given_or_found(paths)
    try:
        run = load_paths(paths, fmt, settings)
        exit_if_nothing_read(run, paths)
    except CommandFailed as exc:
        if as_json:  # (a CI job parsing the output reads why no check was made, not an empty document)
            write_out(shown(json_bytes(check_error_json(paths, exc.message, fail_on, min_calls, exc.code),
                                       orjson.OPT_INDENT_2).decode()) + "\n")
        raise
    with steady_heap():
        doc = analysis_json(run)
    status = flagged_status(doc["flags"], fail_on)
    if len(run.calls) < min_calls:
        status = EXIT_FLAGGED
    if unread_logs(run):
        status = EXIT_USAGE  # (a log of the folder was not checked: the check is no pass, whatever it found)
    on_closed_output_exit(status)  # (`check | head` keeps the status a CI job reads)
    if as_json:
        write_out(shown(json_bytes(check_json(run, doc, fail_on, status, min_calls), orjson.OPT_INDENT_2).decode())
                  + "\n")
    else:
        from ctxwatch.output.text import folded

        # (on a terminal, or under COLUMNS, a line longer than the width is broken between words, as report's are)
        for line in folded(check_lines(run, doc, paths, fail_on, status, min_calls), output_width()):
            echo(line)
    sys.exit(status)
