"""The calls table's cells: which columns it has, and the text of each of a call's cells (pure functions of the
call and the settings, so that the table, the CSV export and the tests lay them out alike)."""

from __future__ import annotations

from rich.text import Text

from ctxwatch.analysis import Limits
from ctxwatch.config import Settings
from ctxwatch.model import Breakdown, Call, raw_breakdown, shown_fraction, shown_used
from ctxwatch.ui import text as tx

#: Columns of the calls table: (key, label, fixed width or None for automatic).
COLUMNS: tuple[tuple[str, str, int | None], ...] = (
    ("index", "#", None),
    ("time", "time", 8),
    ("model", "model", 18),
    ("floor", "floor", None),
    ("history", "history", None),
    ("reserve", "reserve", None),
    ("used", "used%  ", None),
    ("reported", "reported", None),
)
#: The columns kept in the compact layout (60-column panes): no time, no model (the bar names the model).
COMPACT_KEYS = ("index", "floor", "history", "reserve", "used", "reported")


def used_cell(call: Call, settings: Settings, shown: Breakdown | None = None) -> Text:
    """``6.9%``; ``72.0%!`` at or above the trigger, ``!!`` at or above the budget (bold red), ``?`` unknown
    (an implausible reported prompt included: it is no occupancy).  ``shown``: the call's breakdown as shown
    (:func:`ctxwatch.model.shown_used`: a calibrated estimate where the call reports no prompt)."""
    frac = shown_fraction(call, shown)
    if frac is None:
        return Text("?  ", justify="right")  # (under the numbers' % signs: the two cells after are for ! marks)
    s = f"{100 * frac:.1f}%"
    used = shown_used(call, shown) or 0
    lim = Limits.of(call, settings)  # (as report and check judge the call: its harness's rule where it has one)
    if lim.budget is not None and used >= lim.budget:
        return Text(s + "!!", style="bold red", justify="right")
    if lim.trigger is not None and used >= lim.trigger:
        return Text(s + "! ", style="yellow", justify="right")
    return Text(s + "  ", justify="right")


def short_model(model: str | None) -> str:
    """A model id without its trailing date (``claude-3-5-haiku-20241022`` -> ``claude-3-5-haiku``)."""
    m = model or "?"
    head, _, tail = m.rpartition("-")
    if head and len(tail) == 8 and tail.isdigit():
        return head
    return m


def cell_texts(call: Call, settings: Settings, shown: Breakdown | None = None) -> tuple[list[str], str]:
    """Plain cell strings of one call by :data:`COLUMNS` order, and the style of its ``used%`` cell.  The ``#``
    cell is the call number (index + 1), with `` C`` when a compaction happened just before the call.  The floor
    and history cells are ``shown``'s (calibrated ones marked ``≈``), else the call's own."""
    used = used_cell(call, settings, shown)
    b = shown or raw_breakdown(call)
    return [
        f"{call.index + 1}{' C' if call.compaction else ''}",
        tx.clock(call.timestamp),
        tx.clean(short_model(call.model), multiline=False),
        tx.marked(b.floor_tokens, b.floor_src),
        tx.marked(b.history_tokens, b.history_src),
        tx.marked(call.reserve_tokens, call.reserve_src),
        used.plain,
        # ("?" when the log reports no usage for the call; "!" marks an implausible report, as in report)
        tx.tokens(call.prompt_reported) + ("!" if call.report_implausible else ""),
    ], str(used.style or "")


#: Minimum width of each column (cells); numeric columns grow to their widest value.
MIN_WIDTHS = {"index": 3, "time": 8, "model": 8, "floor": 7, "history": 7, "reserve": 7, "used": 8, "reported": 8}


def used_width(frac: float) -> int:
    """The cells of a ``used%`` cell of ``frac`` (:func:`used_cell`: the percent and two cells of marks)."""
    return len(f"{100 * frac:.1f}%") + 2
