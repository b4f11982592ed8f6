"""``ctxwatch check PATH``: the flags of a log, for CI and cron (issue 6).

Output (text): one line per flag, in call order::

    CRITICAL  #41   line 41  system_prompt_evicted  system prompt absent from request #41 (present in #1–#40)

``call`` is the 0-based index of ``report --json``; ``#N`` in reasons is the 1-based request number (index + 1);
``line`` is the 1-based line of the call's record in the file.  Then one ``bad line`` or ``note`` line per input
problem, with the file's name and its line (``run.jsonl:2``, as ``report`` names it; the name alone when it
concerns the whole file), at most :data:`MAX_NOTE_LINES`, then a count; the forecast; and a summary.

``--json`` prints ``{"file", "format", "fail_on", "exit_status", "flags", "forecast", "notes"}``; ``flags`` and
``forecast`` are the same objects as in ``report --json`` (:func:`ctxwatch.analysis.analysis_json`), ``notes`` one
object per bad line (``severity: "info"``, ``file``, ``line``, ``kind``, ``message``).

Exit status:

* 0: no flag at or above ``--fail-on`` (default ``critical``);
* 1: at least one flag at or above it;
* 2: usage error (bad option, bad config file), or the file cannot be read: missing, a directory, unknown format,
  or not a single call could be read from a file that has bad lines.

Bad lines (invalid JSON, unknown records, truncated tails: :data:`ctxwatch.model.BAD_LINE_KINDS`) and other notes
(a batch result without its request, a failed batch request, a file in no known format) are **info-level notes**:
listed with their line numbers and counted (bad lines apart from the other notes), but they do not change the exit
status by themselves, because a live log's half-written last line or one corrupt record must not fail a cron job
whose calls are fine.  The exception is a log where no call could be read and a line is damaged (other than a
half-written last line): that is an unreadable file, exit 2.
"""

from __future__ import annotations

import os
import sys

import click
import orjson

from ctxwatch.cli import counted_issues as _counted
from ctxwatch.cli import exit_if_nothing_read, make_settings, settings_options
from ctxwatch.model import is_bad_line, tally_issues
from ctxwatch.output.safetext import clean, json_bytes, on_closed_output_exit, shown, write_out
from ctxwatch.output.safetext import echo as _echo

#: Exit status when something is at or above ``--fail-on``.
EXIT_FLAGGED = 1
#: Bad-line notes printed in text mode before summarising the rest as a count (``--json`` lists them all).
MAX_NOTE_LINES = 20


@click.command("check")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@settings_options
@click.option("--fail-on", "fail_on", type=click.Choice(["warn", "critical"]), default="critical", show_default=True,
              help="Exit 1 when a flag at or above this severity is found.")
@click.option("--json", "as_json", is_flag=True, help="Print flags, forecast and notes as JSON.")
def check_cmd(paths: tuple[str, ...], config: str | None, window: int | None, budget_fraction: float | None,
              trigger: float | None, reserve: float | None, fmt: str | None, fail_on: str, as_json: bool) -> None:
    """Print the flags of PATH; exit 1 if any is at or above --fail-on, 2 if PATH cannot be read.

    PATH is a log file, or (like `report`) a batch input/output pair or a folder of logs.
    """
    from ctxwatch.analysis import SEVERITY_RANK, analysis_json
    from ctxwatch.cli import load_paths, steady_heap
    from ctxwatch.output.report import issue_json

    settings = make_settings(config, window=window, budget_fraction=budget_fraction, trigger=trigger,
                             reserve=reserve)
    run = load_paths(paths, fmt, settings)
    path = run.path
    bad = [i for i in run.issues if i.kind != "reset"]
    n_bad, n_notes = tally_issues(bad)
    exit_if_nothing_read(run, paths)

    with steady_heap():
        doc = analysis_json(run)
    flags = doc["flags"]
    level = SEVERITY_RANK[fail_on]
    failing = [f for f in flags if SEVERITY_RANK[f["severity"]] >= level]
    status = EXIT_FLAGGED if failing else 0
    on_closed_output_exit(status)  # (`check | head` keeps the status a CI job reads)
    several = len(paths) > 1 or os.path.isdir(paths[0]) \
        or len({c.source.path for c in run.calls} | {i.path for i in bad}) > 1
    # With several files (a folder, a batch pair) a line number alone does not say where: name the file.
    # A call of a whole-file JSON document (Inspect, OpenHands, Cline) has no line: it says so.
    lines = {c.index: ((f"line {os.path.basename(c.source.path)}:{c.source.line}" if c.source.line else
                        f"{os.path.basename(c.source.path)} (whole document)") if several else c.source.where)
             for c in run.calls}

    if as_json:
        out = {"file": path, "format": run.spec.name, "fail_on": fail_on, "exit_status": status, "flags": flags,
               "forecast": doc["forecast"],
               "notes": [{"severity": "info", **issue_json(i)} for i in bad]}
        write_out(shown(json_bytes(out, orjson.OPT_INDENT_2).decode()) + "\n")
        sys.exit(status)

    for f in flags:
        ctx = f"  [{f['context']}]" if f["context"] != "main" else ""
        # Text numbers calls from 1 (#N), as the flag reasons and the dashboard do; --json keeps the 0-based index.
        _echo(f"{f['severity'].upper():<8}  #{f['call'] + 1:<4} {lines.get(f['call'], '?')}  {f['kind']}  "
                   f"{clean(f['reason'])}{clean(ctx)}")
    # (one line more is printed rather than a line saying "1 more"; the cut never splits the issues of one
    # line, so that no bad line is counted on both sides of it)
    limit = len(bad) if len(bad) <= MAX_NOTE_LINES + 1 else MAX_NOTE_LINES
    while 0 < limit < len(bad) and bad[limit].line and (bad[limit].path, bad[limit].line) == (
            bad[limit - 1].path, bad[limit - 1].line):
        limit += 1
    for i in bad[:limit]:
        # (a damaged line says so; other notes are about readable data; line 0 = the whole file)
        label = "bad line" if is_bad_line(i) else "note"
        # (named by file, as report and a check of several files name it: `run.jsonl:2`, or the file alone)
        where = f"{os.path.basename(i.path)}:{i.line}" if i.line else os.path.basename(i.path)
        _echo(f"{'INFO':<8}  {label}  {clean(where)}  {i.kind}  {clean(i.message)}")
    if len(bad) > limit:
        rest = bad[limit:]
        numbers = [i.line for i in rest if i.line]  # (in the order read: not always by line)
        span = (f"lines {min(numbers)}–{max(numbers)}" if numbers else "whole files") if not several \
            else f"in {len({i.path for i in rest})} files"
        r_bad, r_notes = tally_issues(rest)
        _echo(f"{'INFO':<8}  more  {len(rest)} more issues ({_counted(r_bad, r_notes)}; {span}; --json lists them "
              "all)")
    _echo(f"forecast: {doc['forecast']['text']}")
    counts = {s: sum(1 for f in flags if f["severity"] == s) for s in ("critical", "warn", "info")}
    plural = {"call": "s" if len(run.calls) != 1 else "", "flag": "s" if len(flags) != 1 else ""}
    _echo(f"{len(run.calls)} call{plural['call']}, {len(flags)} flag{plural['flag']} "
          f"({counts['critical']} critical, {counts['warn']} warn, "
               f"{counts['info']} info), {_counted(n_bad, n_notes)}; "
               f"--fail-on {fail_on}: exit {status}")
    sys.exit(status)


def _register() -> None:
    """Add ``check`` to the ``ctxwatch`` group when this module was imported before :mod:`ctxwatch.cli`.

    ``ctxwatch.cli`` registers ``check_cmd`` itself when it imports this module; but if this module is imported
    first, ``cli`` finishes importing while this module is still half-initialised and skips it.
    """
    from ctxwatch import cli

    if "check" not in cli.main.commands:
        cli.main.add_command(check_cmd)


_register()
