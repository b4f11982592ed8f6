"""The panel beside the chart (the flags of the context shown, newest first, the forecast, the input problems,
how the log is watched; the chart's legend is the line under the chart) and the one line about flags that
replaces it in the compact layout.

Drawn from the dashboard's state (:class:`ctxwatch.ui.state.DashboardState`), which the main screen hands it
with the rows the panel may fill.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from rich.console import Console
from rich.text import Text
from textual.widgets import Static

from ctxwatch.analysis import Flag
from ctxwatch.model import Issue, counted_issues, tally_issues
from ctxwatch.ui import text as tx

if TYPE_CHECKING:
    from ctxwatch.ui.state import DashboardState

#: Issues listed in the side panel (newest first).
SIDE_ISSUES = 8
#: What the Flags section says before the log's calls are read (reading, or waiting for a file, a folder's first
#: log or an empty file's first record): flags are computed from calls.
FLAGS_PENDING = "none until calls are read"
#: Flags listed in the side panel (newest first).
SIDE_FLAGS = 30
#: How each flag severity is shown: a text mark (reads without colour) and a style.
SEVERITY_MARKS: dict[str, tuple[str, str]] = {"critical": ("!!", "bold red"), "warn": ("!", "yellow"),
                                              "info": ("i", "cyan")}
SEVERITY_ORDER = {"info": 0, "warn": 1, "critical": 2}


def problem_count(problems: list[Issue], *, short: bool = False) -> str:
    """`` (3 bad lines)`` or `` (1 bad line, 2 notes)`` after "Input problems" (``short``: the sum, `` (3)``),
    counted as ``ctxwatch check`` counts them (a line with two issues is one bad line); `` (0)`` for none."""
    bad, notes = tally_issues(problems)
    return f" ({bad + notes})" if short or not problems else f" ({counted_issues(bad, notes)})"


def where(issue: Issue) -> Text:
    """Where an input problem is: ``line 12``, or the file's name for a problem of a whole file."""
    if issue.line:
        return Text(f"line {issue.line}", "yellow")
    return tx.literal(os.path.basename(issue.path), "yellow", limit=40)


def before_reset(s: DashboardState) -> str:
    """``+2``: the problems of lines read before the log's last reset, which the counts leave out."""
    return f"+{len(s.issues_before_reset):,}"


def side_flags(s: DashboardState) -> list[Flag]:
    """The flags of the context shown, newest first (most severe first within a call)."""
    analysis = s.analysis
    if analysis is None:
        return []
    return sorted(analysis.flags, key=lambda f: (-f.call, -SEVERITY_ORDER.get(f.severity, 0)))


def flag_entry(f: Flag) -> Text:
    """``!! #38 system_prompt_evicted: <reason>``, the reason displayed literally."""
    mark, style = SEVERITY_MARKS.get(f.severity, ("?", ""))
    out = Text()
    out.append(f"{mark} #{f.call + 1} {f.kind}", style)
    out.append(": ")
    out.append_text(tx.literal(f.reason, limit=160))
    return out


def side_text(s: DashboardState, console: Console, height: int = 0, width: int = 0) -> Text:
    """The side panel's text for ``height`` rows of ``width`` cells (0: unknown, the whole text).  When the
    whole text, wrapped at ``width``, is taller (an 80x24 terminal), every section gets one line instead, cut
    with ``…``, so that the forecast and the input problems stay in sight below the flags."""
    full = side_full(s)
    if height <= 0 or width <= 0 or len(full.wrap(console, width)) <= height:
        return full
    return side_tight(s, console, height, width)


def side_full(s: DashboardState) -> Text:
    """The side panel's whole text: flags of the context shown (newest first), the forecast, the input
    problems and how the log is watched.  A section of one entry starts on its heading's line (``Forecast 5
    calls / ~3 s to trigger``, ``Flags none``); a list of entries starts on the line under its heading."""
    out = Text()
    analysis = s.analysis
    out.append("Flags", "bold")
    if s.analysis_error:
        out.append(" ")
        out.append_text(tx.literal(s.analysis_error, "yellow", limit=200))
        out.append("\n")
    elif analysis is None:
        out.append(f" {FLAGS_PENDING if not s.loaded else 'none yet'}\n", "dim")
    else:
        flags = side_flags(s)
        out.append(f" ({len(flags)}, newest first)\n" if flags else " ", "bold")
        if not flags:
            out.append("none\n", "dim")
        for f in flags[:SIDE_FLAGS]:
            out.append_text(flag_entry(f))
            out.append("\n")
        out.append("\nForecast ", "bold")
        out.append_text(tx.literal(analysis.forecast.text(), limit=300))
        out.append("\n")
    bad = s.input_problems()
    out.append(f"\nInput problems{problem_count(bad)}" + ("\n" if bad else " "), "bold")
    if not bad:
        out.append("none\n", "dim")
    for i in reversed(bad[-SIDE_ISSUES:]):
        out.append_text(where(i))
        out.append(f": {i.kind}\n", "yellow")
    if bad:
        out.append("i lists them all: file, line, message\n" if len(bad) > 1 else "i shows its message\n", "dim")
    if s.issues_before_reset:
        out.append(f"{before_reset(s)} from before the log's last reset, not counted (i lists them)\n",
                   "dim")
    if s.watch_mode is not None or s.scan_note:
        out.append("\nWatching ", "bold")
        out.append_text(watch_detail(s, "\n"))
        out.append("\n")
    return out


def side_tight(s: DashboardState, console: Console, height: int, width: int) -> Text:
    """The side panel in ``height`` rows: a line per flag (newest first, as many as fit; the most severe,
    shortest first, wrap whole into rows left over), then one line each for the forecast, the input
    problems and the watch mode (these wrap into rows still left, in that order; the forecast into the rows
    left even when it needs more)."""
    analysis = s.analysis
    forecast = None
    if analysis is not None and not s.analysis_error:
        forecast = Text.assemble(("Forecast ", "bold"), tx.literal(analysis.forecast.text(), limit=300))
    bad = s.input_problems()
    problems = Text.assemble((f"Input problems{problem_count(bad, short=True)} ", "bold"))
    if bad:
        problems.append("newest: ", "yellow")
        problems.append_text(where(bad[-1]))
        problems.append(f": {bad[-1].kind}", "yellow")
    else:
        problems.append("none", "dim")
    if s.issues_before_reset:
        problems.append(f" · {before_reset(s)} before reset", "dim")
    # Each item is its longer forms, then the one it always has room for: the problems name their key (i)
    # only in rows that no other section needs.
    tail = [[Text.assemble(problems, (" · i lists all", "dim")), problems] if bad else [problems]]
    if s.watch_mode is not None or s.scan_note:
        tail.append([Text.assemble(("Watching ", "bold"), watch_detail(s, " · "))])
    rows: list[Text] = []
    room = height - len(tail) - (forecast is not None) - 1  # (rows beyond one line per item and the heading)
    # (a forecast of two lines keeps its second before a flag past the first takes it: a flag left out is one
    # key away, F, while the forecast cut mid-number said nothing)
    held = 1 if forecast is not None and room > 1 and len(forecast.wrap(console, width)) > 1 else 0
    room -= held
    if s.analysis_error:
        rows = [Text("Flags", "bold"), tx.literal(s.analysis_error, "yellow", limit=200)]
        room -= 1
    elif analysis is None:
        pending = Text.assemble(("Flags ", "bold"), ("none yet" if s.loaded else FLAGS_PENDING, "dim"))
        rows = list(pending.wrap(console, width))  # (whole, in rows no flag needs; else cut with …)
        if len(rows) - 1 > room:
            rows = [pending]
        room -= len(rows) - 1
    else:
        flags = side_flags(s)
        rows = [Text.assemble(("Flags ", "bold"), ("none", "dim"))] if not flags else \
            [Text(f"Flags ({len(flags)}, newest first)", "bold")]
        # One line per flag, as many as fit (with a "+N older" row for the rest); rows left over let flags
        # wrap whole: the most severe first and, among equals, the shortest (more reasons read whole).
        fit = len(flags) if len(flags) <= room else max(0, room - 1)
        entries = [[flag_entry(f)] for f in flags[:fit]]
        spare = room - fit - (fit < len(flags))
        wraps = [list(e[0].wrap(console, width)) for e in entries]
        for i in sorted(range(fit), key=lambda i: (-SEVERITY_ORDER.get(flags[i].severity, 0), len(wraps[i]), i)):
            wrapped = wraps[i]
            if len(wrapped) - 1 <= spare:
                spare -= len(wrapped) - 1
                entries[i] = wrapped
        rows += [line for entry in entries for line in entry]
        if fit < len(flags):
            hint = f"+{len(flags) - fit} older (a taller terminal lists them)"
            rows.append(Text(hint if len(hint) <= width else f"+{len(flags) - fit} older", "dim"))
        room = spare
    room += held
    # The forecast, the input problems and the watch mode: a line each, wrapped whole into rows left over; the
    # forecast, read first, takes the rows left even when it needs more (its last one cut with …).
    items = ([[forecast]] if forecast is not None else []) + tail
    placed: list[list[Text]] = []
    for k, forms in enumerate(items):
        wrapped = list(forms[-1].wrap(console, width))
        if 1 < len(wrapped) <= room + 1:
            room -= len(wrapped) - 1
            placed.append(wrapped)
        elif k == 0 and forecast is not None and room > 0 and len(wrapped) > 1:
            kept, last = wrapped[:room], wrapped[room].copy()
            last.truncate(max(1, width - 1))
            last.append("…")
            placed.append([*kept, last])
            room = 0
        else:
            placed.append([forms[-1]])  # (one line, cut with … if longer)
    # Then a longer form of an item where the rows it adds are still free once every item has its rows.
    for k, forms in enumerate(items):
        for better in forms[:-1]:
            lines = list(better.wrap(console, width))
            if len(lines) - len(placed[k]) <= room:
                room -= len(lines) - len(placed[k])
                placed[k] = lines
                break
    rows += [line for lines in placed for line in lines]
    out = Text()
    for i, line in enumerate(rows):
        line.truncate(width, overflow="ellipsis")
        if i:
            out.append("\n")
        out.append_text(line)
    return out


def watch_detail(s: DashboardState, sep: str) -> Text:
    """How the log is watched: the feed's note when it fell back or waits, else events and the sweep (nothing
    before a log is followed); then, after ``sep``, why the folder's sessions are polled, when they are as a
    fall back."""
    out = Text()
    if s.watch_note:
        out = tx.literal(s.watch_note, "yellow" if s.watch_fallback() else "", limit=300)
    elif s.watch_mode is not None:
        sweep = s.sweep_interval
        out = Text(f"file events on the log's folder, and a check every {sweep:g} s")
    if s.scan_note:
        if out:
            out.append(sep)
        out.append_text(tx.literal(f"folder: {s.scan_note}", "yellow", limit=400))
    return out


def flag_line(s: DashboardState, width: int = 80) -> Text:
    """The compact layout's one line about flags (it has no side panel): the most severe flag raised at or
    before the selected call, the newest of those, e.g. ``!! #38 system prompt evicted (+3 more): system
    prompt absent from request #38 …``, cut to the line with an ellipsis.  ``(+N more)`` counts the other
    flags of the context.  The line follows the selection, so moving up the table tells the run's story.

    Args:
        width: cells available; longer lines end with ``…``.
    """
    analysis = s.analysis
    if s.analysis_error:
        out = tx.literal(s.analysis_error, "yellow", limit=200)
    elif analysis is None:
        out = Text(f"flags: {'none yet' if s.loaded else FLAGS_PENDING}", "dim")
    else:
        flags = list(analysis.flags)
        upto = s.selected_index if s.selected_index is not None else max((f.call for f in flags),
                                                                              default=0)
        seen = [f for f in flags if f.call <= upto]
        if not flags:
            out = Text("flags: none", "dim")
        elif not seen:
            out = Text(f"flags: none up to #{upto + 1} ({len(flags)} later)", "dim")
        else:
            f = max(seen, key=lambda f: (SEVERITY_ORDER.get(f.severity, 0), f.call))
            mark, style = SEVERITY_MARKS.get(f.severity, ("?", ""))
            out = Text()
            out.append(f"{mark} #{f.call + 1} {f.kind.replace('_', ' ')}", style)
            if len(flags) > 1:
                out.append(f" (+{len(flags) - 1} more)", "dim")
            out.append(": ")
            out.append_text(tx.literal(f.reason, limit=300))
    if out.cell_len > width:
        out.truncate(width, overflow="ellipsis")
    return out


class SidePanel(Static):
    """The panel beside the chart (:func:`side_text`)."""

    def show(self, state: DashboardState, rows: int) -> None:
        """Draw ``state`` in at most ``rows`` rows of the panel's width."""
        self.update(side_text(state, self.app.console, rows, max(10, self.size.width)))
