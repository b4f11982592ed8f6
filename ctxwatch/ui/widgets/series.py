"""What the trend chart plots, worked out apart from drawing it: the calls downsampled to about one point
per column (:func:`build_series`) and a y axis whose labels are the exact values of their rows
(:func:`y_axis`).  Pure functions of calls and sizes, so they are tested without a terminal.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ctxwatch.accounting import NO_CALIBRATION, Calibrations
from ctxwatch.analysis import Limits
from ctxwatch.config import Settings
from ctxwatch.model import Call
from ctxwatch.ui import text as tx


@dataclass(slots=True)
class Series:
    """What the trend chart plots (already downsampled), all token values in tokens.

    Attributes:
        x: x positions (call number = index + 1, or minutes since the first call).
        floor, total: floor and floor + history per point (0 where the split is unknown).
        unsplit: the prompt of a point whose floor / history split is unknown (a log that starts mid-session),
            else 0: drawn apart, never as history.
        reported: reported prompt tokens per point (``None`` where unknown or implausible).
        compactions: x positions of compaction events.
        steps: indexes of the points whose bucket holds a compaction (the context dropped just before them).
        window, trigger, budget, limit: threshold lines (limit = window - reserve); ``None`` when unknown.
        xlabel: the x axis title.
    """

    x: list[float]
    floor: list[float]
    total: list[float]
    unsplit: list[float]
    reported: list[float | None]
    compactions: list[float]
    steps: list[int]
    window: int | None
    trigger: int | None
    budget: int | None
    limit: int | None
    xlabel: str


def stepped(x: Sequence[float], steps: Sequence[int], *ys: Sequence[Any]) -> tuple[list[Any], ...]:
    """``x`` and each of ``ys`` with, before each point index in ``steps``, a point at that point's x holding the
    previous point's values: a line then stays level until the compaction and drops there, instead of sloping
    down across the time between the calls as if the context had shrunk gradually."""
    out: tuple[list[Any], ...] = tuple([] for _ in range(len(ys) + 1))
    at = set(steps)
    for i, xi in enumerate(x):
        if i in at and i > 0:
            out[0].append(xi)
            for k, y in enumerate(ys, 1):
                out[k].append(y[i - 1])
        out[0].append(xi)
        for k, y in enumerate(ys, 1):
            out[k].append(y[i])
    return out


def downsample(n: int, target: int) -> list[range]:
    """Split ``range(n)`` into at most ``target`` consecutive buckets of near-equal size."""
    if n <= 0:
        return []
    target = max(1, min(n, target))
    edges = [round(i * n / target) for i in range(target + 1)]
    return [range(edges[i], edges[i + 1]) for i in range(target) if edges[i + 1] > edges[i]]


def build_series(calls: Sequence[Call], settings: Settings, xmode: str, points: int,
                 calibrations: Calibrations = NO_CALIBRATION) -> Series:
    """Chart data for ``calls`` (in order), at most ``points`` points: each bucket keeps its largest call.

    Args:
        calls: the calls of the current view.
        settings: thresholds.
        xmode: ``index`` (x = call number, index + 1) or ``time`` (x = minutes, or seconds for a run shorter than
            :data:`SECONDS_AXIS_SPAN`, since the earliest timestamped call,
            in time order: a batch's results are not written in the order they ran; calls without a timestamp
            are left out).
        points: the most points to plot (about the chart's width in cells).
        calibrations: the run's: the floor and history are plotted as the table and the bar show them
            (:meth:`~ctxwatch.accounting.Calibrations.breakdown`), so that floor + history meets the reported
            prompt of a call counted with another tokenizer.
    """
    if xmode == "time":
        calls = sorted((c for c in calls if c.timestamp is not None), key=lambda c: (c.timestamp, c.index))
    t0 = calls[0].timestamp if calls and xmode == "time" else None
    # A short run is plotted in seconds: minutes would label its ticks 0.000, 0.044, 0.089...
    span = (calls[-1].timestamp or 0) - (t0 or 0) if t0 is not None else 0
    unit = 1.0 if span < SECONDS_AXIS_SPAN else 60.0
    x: list[float] = []
    floor: list[float] = []
    total: list[float] = []
    unsplit: list[float] = []
    reported: list[float | None] = []
    steps: list[int] = []
    for bucket in downsample(len(calls), points):
        if x and any(calls[i].compaction for i in bucket):
            steps.append(len(x))
        best = max((calls[i] for i in bucket), key=lambda c: c.used_tokens or 0)
        b = calibrations.breakdown(best)
        f = b.floor_tokens or 0
        h = b.history_tokens or 0
        u = (best.prompt_tokens or 0) if best.split_unknown else 0
        x.append(_x(best, xmode, t0, unit))
        floor.append(f)
        total.append(f + h)
        unsplit.append(u)
        # (an implausible report is no occupancy: no point, as for an unknown prompt, not a 750 % spike)
        reported.append(None if best.prompt_implausible else best.prompt_reported)
    compactions = [_x(c, xmode, t0, unit) for c in calls if c.compaction]
    # The threshold lines are those of the latest plausible call, as the forecast's: an implausible record may
    # state another window (570,000 after 272,000).
    # (its trigger and budget as report and check judge that call: its harness's where it has one)
    last = next((c for c in reversed(calls) if c.window and not c.prompt_implausible), None) or next(
        (c for c in reversed(calls) if c.window), None)
    window = last.window if last is not None else None
    reserve = next((c.reserve_tokens for c in reversed(calls)
                    if c.reserve_tokens is not None and not c.prompt_implausible), None)
    if reserve is None:
        reserve = next((c.reserve_tokens for c in reversed(calls) if c.reserve_tokens is not None), None)
    lim = Limits.of(last, settings) if last is not None else None
    return Series(
        x, floor, total, unsplit, reported, compactions, steps, window,
        lim.trigger if lim is not None else None,
        lim.budget if lim is not None else None,
        window - reserve if window and reserve is not None else None,
        "call #" if xmode == "index" else (f"{_UNIT_NAMES[unit]} since {tx.clock(t0)}" if t0 is not None
                                           else _UNIT_NAMES[unit]),
    )


#: Runs shorter than this (seconds) are plotted against seconds, longer ones against minutes.
SECONDS_AXIS_SPAN = 120.0
_UNIT_NAMES = {1.0: "seconds", 60.0: "minutes"}


def _x(call: Call, xmode: str, t0: float | None, unit: float = 60.0) -> float:
    """A call's x: its number, or the time since ``t0`` in ``unit`` seconds (60: minutes)."""
    if xmode == "time" and call.timestamp is not None and t0 is not None:
        return round((call.timestamp - t0) / unit, 3)
    return float(call.index + 1)


#: Rows of the chart widget that are not plot area: plotext's top and bottom frame lines and the row of x tick
#: labels (there is no chart title once there is data, and the x axis title is on the legend's line under the
#: chart).  Used to know how many rows the y axis spans, so that every tick label sits on the row its value is
#: drawn on.
CHART_FRAME_ROWS = 3
#: Room above the highest value or threshold line, as a factor of it (the top row is not a ceiling).
CHART_HEADROOM = 1.04
#: Round steps between two labelled y ticks (times a power of ten): 0, 2k, 4k, 6k..., 0, 25k, 50k...
TICK_STEPS = (1, 2, 2.5, 3, 4, 5, 6, 8)
#: The most labelled intervals on the y axis (4 or 5 read well; more crowd a short chart).
MAX_TICK_INTERVALS = 5
#: Plot rows from which threshold lines whose axis label is a value alone are named on the line itself
#: ("trigger", ...); on shorter charts the names would cover most of the data, and the legend names them.
NAMED_LINE_ROWS = 10
#: The chart's threshold lines: Series attribute, key (the bar's ``T`` and ``B`` marks; never shown on the chart,
#: whose labels and legend use the name), name beside the y axis, in the legend and on the line in tall charts,
#: plotext colour ("orange" is ANSI yellow, "gray" ANSI white).
THRESHOLD_LINES: tuple[tuple[str, str, str, str], ...] = (
    ("trigger", "T", "trigger", "orange"),
    ("budget", "B", "budget", "red"),
    ("limit", "W-R", "window-reserve", "gray"),
)


def canvas_row(value: float, top: float, rows: int) -> int:
    """The plot row (0 = bottom) on which plotext draws ``value`` for a y axis from 0 to ``top`` over ``rows``
    rows: plotext's own rule (``plotext._utility.get_matrix_data``), ``floor(0.5 + (rows - 1) * value / top)``,
    rounded to 8 places first as plotext does."""
    if top <= 0 or rows <= 1:
        return 0
    return math.floor(round(0.5 + (rows - 1) * value / top, 8))


def tick_label(value: float) -> str:
    """An exact compact label for a y tick: ``0``, ``750``, ``2.5k``, ``40k``, ``1.25M`` (never rounded, so
    that the label is the value of its row)."""
    if abs(value) >= 1_000_000:
        return f"{value / 1_000_000:g}M"
    if abs(value) >= 1000:
        return f"{value / 1000:g}k"
    return f"{value:g}"


@dataclass(frozen=True, slots=True)
class YAxis:
    """The y axis of the trend chart for a given plot height.

    Attributes:
        top: the value of the top row (tokens); the axis runs from 0.
        rows: plot rows the axis spans.
        ticks, labels: y tick positions (tokens) and their labels, for ``plt.yticks``.  A numeric label is the
            exact value of its row; on a row that carries threshold lines the label names them where it has
            room (``trigger 15k``, or ``trigger/budget 15k/19k`` when two lines fall on the same row).
        lines: one entry per row that carries threshold lines: ``(row, value, names, colour)``, with the
            value of the first line on it (for ``plt.hline``), the names joined by `` · `` and the colour of
            the first line.
    """

    top: float
    rows: int
    ticks: list[float]
    labels: list[str]
    lines: list[tuple[int, float, str, str]]


def y_axis(rows: int, data_top: float, thresholds: Sequence[tuple[float, str, str, str]],
           label_chars: int | None = None) -> YAxis:
    """Lay out the y axis so that every label tells the truth about the row it is on.

    The axis runs from 0 to ``top`` over ``rows`` plot rows; row ``r`` holds the values nearest to
    ``r * top / (rows - 1)`` (plotext's mapping, :func:`canvas_row`).  ``top`` is chosen as the smallest value
    at or above the data and the thresholds (times :data:`CHART_HEADROOM`) for which some round step of
    :data:`TICK_STEPS` falls exactly on rows, with at most :data:`MAX_TICK_INTERVALS` labelled intervals.
    A row that carries threshold lines is labelled with their names and values (``budget 19k``) instead of a
    number; lines that fall on the same row (a short chart) share one label: their names and values
    (``budget/window-reserve 177k/180k``), or where that is wider than ``label_chars`` the names and the lowest
    value, which is the row's tick (``trigger/budget 167k``), else that value alone (``167k``), the legend
    under the chart naming each line by its colour.

    Args:
        rows: plot rows (the chart's height minus :data:`CHART_FRAME_ROWS`); at least 2 are used.
        data_top: the highest value plotted (tokens).
        thresholds: ``(value, key, name, colour)`` of the threshold lines to draw (tokens).
        label_chars: the widest label of a shared row (``None``: any width).
    """
    rows = max(2, rows)
    steps = rows - 1
    need = max([data_top, 1.0, *(t[0] for t in thresholds)]) * CHART_HEADROOM
    best: tuple[float, int, float] | None = None  # (top, rows per labelled step, labelled step)
    lo = math.floor(math.log10(need / steps)) - 1
    for exp in range(lo, math.ceil(math.log10(need)) + 2):
        for m in TICK_STEPS:
            step = m * 10.0 ** exp
            for k in range(1, steps + 1):
                top = steps * step / k
                if top < need or steps // k > MAX_TICK_INTERVALS:
                    continue
                if best is None or (top, k) < (best[0], best[1]):
                    best = (top, k, step)
    assert best is not None  # k = steps with a step >= need always fits
    top, k, step = best
    on_row: dict[int, list[tuple[float, str, str, str]]] = {}
    for t in sorted(thresholds):
        on_row.setdefault(canvas_row(t[0], top, rows), []).append(t)
    ticks: list[float] = []
    labels: list[str] = []
    for i in range(steps // k + 1):
        value = round(i * step, 6)
        if canvas_row(value, top, rows) not in on_row:
            ticks.append(value)
            labels.append(tick_label(value))
    lines: list[tuple[int, float, str, str]] = []
    for row, group in sorted(on_row.items()):
        ticks.append(group[0][0])
        names = "/".join(g[2] for g in group)
        lowest = tx.short_tokens(group[0][0])
        forms = [names + " " + "/".join(tx.short_tokens(g[0]) for g in group), names + " " + lowest]
        # (a row too narrow for its lines' names says its value, like every other row: the legend names them)
        labels.append(next((f for f in forms if label_chars is None or len(f) <= label_chars), lowest))
        lines.append((row, group[0][0], " · ".join(g[2] for g in group), group[0][3]))
    return YAxis(top, rows, ticks, labels, lines)
