"""What ``ctxwatch check`` prints: the flags of a run, its input problems as notes, the forecast and a summary.

Text, one line per flag in call order::

    CRITICAL  #41   line 41  system_prompt_evicted  system prompt absent from request #41 (present in #1–#40)

``#N`` is the 1-based request number (``report --json``'s index + 1), ``line`` the 1-based line of the call's
record.  Then one ``bad line`` or ``note`` line per input problem, named by file and line (``run.jsonl:2``; the
name alone when it concerns the whole file), at most :data:`MAX_NOTE_LINES` and then a count; the forecast; a
summary.  ``--json``: :func:`check_json`.  Bad lines (:data:`ctxwatch.model.BAD_LINE_KINDS`) and other notes are
information: they never change the exit status by themselves.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from ctxwatch.engine import Run
from ctxwatch.model import Issue, counted_issues, is_bad_line, tally_issues
from ctxwatch.output.fields import file_names
from ctxwatch.output.report import issue_json
from ctxwatch.output.safetext import clean

#: Bad-line notes printed in text mode before summarising the rest as a count (``--json`` lists them all).
MAX_NOTE_LINES = 20


def noted_issues(run: Run) -> list[Issue]:
    """The run's issues that ``check`` lists as notes: all but the resets (a file that started again)."""
    return [i for i in run.issues if i.kind != "reset"]


def check_json(run: Run, analysis: dict[str, Any], fail_on: str, status: int, min_calls: int = 0
               ) -> dict[str, Any]:
    """``check --json``: ``{"file", "format", "fail_on", "min_calls", "calls", "exit_status", "unread", "flags",
    "forecast", "bad_lines", "notes"}`` (``calls``: how many were read, which ``min_calls`` asks at least of;
    ``unread``: :func:`unread_logs`, each also a note).

    ``flags`` and ``forecast`` are those of ``analysis`` (:func:`ctxwatch.analysis.analysis_json`, as in
    ``report --json``); ``notes`` one object per :func:`noted_issues` entry (``severity: "info"``,
    :func:`~ctxwatch.output.report.issue_json`'s ``file``, ``line``, ``kind``, ``message``, and ``bad_line``: true
    for a line that is no valid record, :data:`~ctxwatch.model.BAD_LINE_KINDS`); ``bad_lines`` how many distinct
    lines those are, as the text output counts them (:func:`~ctxwatch.model.tally_issues`)."""
    noted = noted_issues(run)
    return {"file": run.path, "format": run.format_read()[0], "fail_on": fail_on, "min_calls": min_calls,
            "calls": len(run.calls), "exit_status": status, "unread": unread_logs(run),
            "flags": analysis["flags"], "forecast": analysis["forecast"], "bad_lines": tally_issues(noted)[0],
            "notes": [{"severity": "info", **issue_json(i), "bad_line": is_bad_line(i)} for i in noted]}


def unread_logs(run: Run) -> list[str]:
    """The logs (or folders) of the run's input that are there but could not be read (an ``unreadable`` issue:
    no permission, a folder that cannot be listed), in order, each once.  A dangling link or a file removed
    while it was read is no log of the input any more: it has its note, and is not among these."""
    return list(dict.fromkeys(i.path for i in run.issues if i.kind == UNREADABLE and os.path.exists(i.path)))


#: Issue kind of a log (or folder) of the input that could not be read (:mod:`ctxwatch.engine.discovery`).
UNREADABLE = "unreadable"


def check_error_json(paths: tuple[str, ...], error: str, fail_on: str, min_calls: int, status: object
                     ) -> dict[str, Any]:
    """``check --json`` when no check could be made (``paths`` unreadable, :func:`ctxwatch.cli.exits.fail`):
    ``{"file", "format": null, "fail_on", "min_calls", "calls": null, "exit_status", "error"}``, ``file`` the path
    given (a list when several were), ``error`` the message standard error gives after ``ctxwatch: ``."""
    return {"file": paths[0] if len(paths) == 1 else list(paths), "format": None, "fail_on": fail_on,
            "min_calls": min_calls, "calls": None, "exit_status": status, "error": error}


def check_lines(run: Run, analysis: dict[str, Any], paths: tuple[str, ...], fail_on: str,
                status: int, min_calls: int = 0) -> Iterator[str]:
    """The lines of ``check``'s text output, without their newlines (see the module's docstring).

    Args:
        run: the run. analysis: its :func:`ctxwatch.analysis.analysis_json`. paths: the paths the command was
            given (a folder or several paths name each call's file). fail_on: ``info`` | ``warn`` | ``critical``.
            status: the exit status the summary line states. min_calls: the calls ``--min-calls`` asks for
            (named on the summary line when fewer were read).
    """
    flags = analysis["flags"]
    bad = noted_issues(run)
    several = len(paths) > 1 or os.path.isdir(paths[0]) \
        or len({c.source.path for c in run.calls} | {i.path for i in bad}) > 1
    # With several files (a folder, a batch pair) a line number alone does not say where: name the file.
    # A call of a whole-file JSON document (Inspect, OpenHands, Cline) has no line: it says so.
    names = file_names([*(c.source.path for c in run.calls), *(i.path for i in bad)])
    lines = {c.index: clean((f"line {names[c.source.path]}:{c.source.line}" if c.source.line else
                              f"{names[c.source.path]} (whole document)") if several else c.source.where)
             for c in run.calls}
    for f in flags:
        ctx = f"  [{f['context']}]" if f["context"] != "main" else ""
        # (#N from 1, as the flag reasons, the dashboard and --json's "number" give it)
        yield (f"{f['severity'].upper():<8}  #{f['call'] + 1:<4} {lines.get(f['call'], '?')}  {f['kind']}  "
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
        where = f"{names[i.path]}:{i.line}" if i.line else names[i.path]
        yield f"{'INFO':<8}  {label}  {clean(where)}  {i.kind}  {clean(i.message)}"
    if len(bad) > limit:
        rest = bad[limit:]
        numbers = [i.line for i in rest if i.line]  # (in the order read: not always by line)
        span = (f"lines {min(numbers)}–{max(numbers)}" if numbers else "whole files") if not several \
            else f"in {len({i.path for i in rest})} files"
        r_bad, r_notes = tally_issues(rest)
        yield (f"{'INFO':<8}  more  {len(rest)} more issues ({counted_issues(r_bad, r_notes)}; {span}; --json "
               "lists them all)")
    yield f"forecast: {clean(analysis['forecast']['text'])}"  # (it names sessions: a newline there is the log's)
    counts = {s: sum(1 for f in flags if f["severity"] == s) for s in ("critical", "warn", "info")}
    plural = {"call": "s" if len(run.calls) != 1 else "", "flag": "s" if len(flags) != 1 else ""}
    n_bad, n_notes = tally_issues(bad)
    n_unread = len(unread_logs(run))
    unread = f", {n_unread} log{'s' if n_unread != 1 else ''} not read" if n_unread else ""
    yield (f"{len(run.calls)} call{plural['call']}, {len(flags)} flag{plural['flag']} "
           f"({counts['critical']} critical, {counts['warn']} warn, {counts['info']} info), "
           f"{counted_issues(n_bad, n_notes)}; --fail-on {fail_on}"
           f"{f', fewer than --min-calls {min_calls}' if len(run.calls) < min_calls else ''}"
           f"{unread}: exit {status}")
