"""The status line: what is read (file, format, calls, problems, tokenizer, window) and how it is viewed
(follow or paused, reading progress, x axis, filter, last reset, notices).

Drawn from the dashboard's state (:class:`ctxwatch.ui.state.DashboardState`), which the main screen hands it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.widgets import Static

from ctxwatch.model import tally_issues
from ctxwatch.ui import text as tx

if TYPE_CHECKING:
    from ctxwatch.ui.state import DashboardState


def watch_text(s: DashboardState) -> Text:
    """``live: polling 0.25 s``, with ``(fallback)`` in yellow when file events failed or stayed silent;
    nothing while file events work (the usual case; the side panel says it)."""
    if s.watch_mode != "polling":
        return Text()
    out = Text(f"live: polling {s.watch_interval:g} s")
    if s.watch_fallback():
        out.append(" (fallback)")
        out.stylize("bold yellow")
    return out


def status_text(s: DashboardState, compact: bool, width: int, cost: Text | None = None) -> Text:
    """The status line's segments for a line of ``width`` cells, wrapped between segments; ``compact``: one
    line of the essentials, cut with an ellipsis.  ``cost``: a cost segment to show last (a short terminal has
    no row for the cost line)."""
    file_seg = tx.literal(s.display_name(), "bold", limit=24 if compact else 48)
    if s.batch_files is not None and not compact:
        file_seg.append(" (joined by custom_id)", "dim")
    elif s.multi and not compact:
        # (o, the key that picks another session, has no room in an 80-column footer: named here)
        file_seg.append(f" ({s.session_pos()}, {'auto' if s.auto_session else 'picked'} · o: sessions)", "dim")
    if s.transcripts and not compact and width >= 120:
        # (their calls are in files of their own, which report counts in the session: said where a line has
        # room for it; at 80 columns it would take a row, and the session's note says where they are)
        file_seg.append(f" (+{s.transcripts} subagent transcript{'s' if s.transcripts != 1 else ''}: c)", "dim")
    n_view, n_all = len(s.view), len(s.calls)
    calls_seg = Text(f"{n_all:,} call{'s' if n_all != 1 else ''}")
    ctx_seg = Text()
    if s.context is not None and len(s.contexts) > 1:
        ctx_seg.append("ctx ")
        ctx_seg.append_text(tx.literal(s.context, limit=24))
        ctx_seg.append(f" {s.contexts.index(s.context) + 1}/{len(s.contexts)} ({n_view:,})")
    bad, notes = tally_issues(s.input_problems())  # (a line with two issues is one bad line, as check)
    bad_seg = Text(f"{bad} bad line{'s' if bad != 1 else ''}", "bold yellow" if bad else "")
    if notes:  # (batch results without their request, skipped files: not damage, still worth a look)
        bad_seg.append(f", {notes} note{'s' if notes != 1 else ''}", "yellow")
    call = s.selected_call() or (s.calls[s.view[-1]] if s.view else None)
    tok_seg = Text()
    win_seg = Text()
    if call is not None:
        tok_seg = Text(f"{call.tokenizer}{'' if call.exact else ' (approx)'}")
        win_seg = Text(f"window {tx.tokens(call.window)} ({call.window_src})" if call.window else "window unknown")
    if s.paused:
        waiting = sum(len(m.added) for m in s.pending)
        mode_seg = Text(f"PAUSED (+{waiting} new)", "bold reverse yellow")
    elif s.follow:
        mode_seg = Text("FOLLOW", "bold green")
    else:
        mode_seg = Text("follow off (f)", "dim")
    read_seg = Text()
    if s.failed:
        read_seg = tx.literal(s.failed, "bold red", limit=200)
    elif not s.loaded and (s.log_path is not None or s.batch_files is not None):
        if s.progress:
            done, total = s.progress
            read_seg = Text(f"reading {tx.pct(done, total, 0)} (esc skips to the end)")
        else:
            read_seg = Text("reading…")
    filter_seg = Text()
    if s.conversation is not None:
        inst, session = s.conversation
        filter_seg.append("conversation ")
        filter_seg.append_text(tx.literal(" · ".join(x for x in (inst, session) if x) or "-", "bold", limit=40,
                                          middle=True))
        filter_seg.append(" (W: all) ")
    if s.filter_text:
        filter_seg.append("filter ")
        filter_seg.append_text(tx.literal(repr(s.filter_text), "bold", limit=30))
        filter_seg.append(f" ({len(s.view):,} match{'' if len(s.view) == 1 else 'es'})")
    reset_seg = Text("last reset: ")
    reset_seg.append(s.last_reset or "none", "bold yellow" if s.last_reset else "")
    # (with no call to show, the bar shows the notice: not twice)
    shown = s.notice and s.selected_call() is not None
    notice_seg = tx.literal(s.notice, "yellow", limit=120) if shown else Text()
    # Lines skipped with Esc are said beside the call count for as long as the log is shown (a notice would be
    # replaced, and at 80x24 falls below the status line's rows): the calls after the gap are numbered on from
    # those before it, so #N here is not report's #N.
    skip_seg = Text(f"{s.skipped}: #N counts the calls read", "bold yellow") if s.skipped else Text()
    watch_seg = watch_text(s)
    if compact:
        line = tx.flow([file_seg, calls_seg, skip_seg, filter_seg, ctx_seg, bad_seg, mode_seg, read_seg,
                        watch_seg if s.watch_fallback() else Text(), reset_seg if s.last_reset else Text(),
                        cost or Text()], 10**6)
        line.no_wrap = True
        line.overflow = "ellipsis"
        return line
    # (what hides calls, a filter or a conversation, comes early: at 80x24 the status line has three rows)
    return tx.flow([file_seg, Text(s.format_name or "?"), calls_seg, skip_seg, filter_seg, ctx_seg, bad_seg, tok_seg,
                    win_seg, mode_seg, read_seg, watch_seg, Text(f"x: {s.xaxis}"), reset_seg, cost or Text(),
                    notice_seg], width)


class StatusLine(Static):
    """The status line of the main screen (:func:`status_text`)."""

    def show(self, state: DashboardState, compact: bool, width: int, cost: Text | None = None) -> None:
        """Draw ``state`` for a line of ``width`` cells (``compact``: the small-terminal layout; ``cost``: a
        cost segment, :func:`status_text`)."""
        self.update(status_text(state, compact, width, cost))
