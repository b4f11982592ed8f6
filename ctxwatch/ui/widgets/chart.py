"""The trend chart (``textual-plotext``): tokens per call, floor and history stacked, the reported prompt,
the threshold lines and the compactions, over call number or wall time.

It draws the :class:`~ctxwatch.ui.widgets.series.Series` of the calls pushed to it, at most every
:data:`CHART_MIN_INTERVAL` seconds while calls stream in.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Literal

from rich.text import Text
from textual.app import RenderResult
from textual.message import Message
from textual.timer import Timer
from textual_plotext import PlotextPlot

from ctxwatch.accounting import NO_CALIBRATION, Calibrations
from ctxwatch.config import Settings
from ctxwatch.model import Call
from ctxwatch.ui import text as tx
from ctxwatch.ui.widgets.series import (
    CHART_FRAME_ROWS,
    NAMED_LINE_ROWS,
    THRESHOLD_LINES,
    Series,
    YAxis,
    build_series,
    stepped,
    y_axis,
)

#: Seconds between two redraws of the trend chart while data streams in.
CHART_MIN_INTERVAL = 0.5

#: Markers of the chart's series (distinct so the chart reads without colour).
CHART_MARKERS = {"history": "▒", "floor": "█", "reported": "•", "unsplit": "?"}


#: The legend's series marks: (mark, colour, name, shorter name).
_LEGEND_MARKS = (("█", "magenta", "floor", "floor"), ("▒", "cyan", "history", "hist"),
                 ("•", "blue", "reported", "reported"))
_LEGEND_UNSPLIT = (CHART_MARKERS["unsplit"], "bright_black", "prompt, split unknown", "unsplit")
_LEGEND_COMPACTION = ("│", "green", "compaction", "compaction")
#: The legend's threshold lines: (key, as :data:`THRESHOLD_LINES`, Rich colour of the line, its name).
_LEGEND_LINES = tuple((key, colour, name) for _a, key, name, colour in THRESHOLD_LINES)
_RICH_COLOURS = {"orange": "yellow", "gray": "white"}


def chart_legend(unsplit: bool = False, width: int | None = None, titles: Sequence[str] = (),
                 lines: Sequence[str] | None = None, values: Mapping[str, float] | None = None) -> Text:
    """The chart's legend on one line (under the chart, in every layout that has one): the x axis title, then
    the series marks, the compaction mark and the threshold lines by name, in their colours.

    ``unsplit``: also name the mark of prompts whose floor / history split is unknown (only when the chart has
    some).  ``titles``: the x axis title's forms, longest first (:attr:`TrendChart.titles`; none before the
    chart has data).  ``width``: the cells it may take.  ``lines``: the keys of the threshold lines the chart
    draws (:attr:`TrendChart.lines`; ``None``: all), the others being named by the title (``above: …``).
    ``values``: the lines' tokens by key (:attr:`TrendChart.values`): each line is then named with its value
    (``─ window-reserve 180k``), since a narrow axis labels a row its lines share by its value alone.

    The first form that fits is taken, the lines' values kept before the title's length and the title's
    length before the marks' width: spaced with each line's ``─``, then tight with the names coloured as their
    lines, then ``hist`` for history; then the same without the values; then the series alone.  Nothing is
    ever shown by a letter standing for a word."""
    series = [*_LEGEND_MARKS, *((_LEGEND_UNSPLIT,) if unsplit else ()), _LEGEND_COMPACTION]
    drawn = [ln for ln in _LEGEND_LINES if lines is None or ln[0] in lines]
    valued = values is not None and all(ln[0] in values for ln in drawn)

    def marks(sep: str, series_at: int, named: bool, with_values: bool) -> Text:
        out = Text()
        for k, (mark, colour, *names) in enumerate(series):
            out.append(sep if k else "")
            out.append(mark, colour)
            out.append(" " + names[series_at - 2])
        for k, (key, colour, name) in enumerate(drawn if named else ()):
            out.append(sep + (" " if k == 0 else ""))  # (a wider gap before the lines)
            rich = _RICH_COLOURS.get(colour, colour)
            if sep == "  ":
                out.append("─ ", rich)
                out.append(name)
            else:
                out.append(name, rich)
            if with_values and values is not None:
                out.append(" " + tx.short_tokens(values[key]))
        return out

    shapes = [("  ", 2), (" ", 2), (" ", 3)]
    tiers = []
    if drawn and valued:
        tiers.append([marks(sep, at, True, True) for sep, at in shapes])
    if drawn:
        tiers.append([marks(sep, at, True, False) for sep, at in shapes])
    tiers.append([marks(sep, at, False, False) for sep, at in shapes])
    heads = [Text.assemble((title, "bold"), "  ") for title in titles] or [Text()]
    out = Text.assemble(heads[-1], tiers[-1][-1])
    for tier in tiers:
        fit = next((Text.assemble(h, m) for h in heads for m in tier
                    if width is None or h.cell_len + m.cell_len <= width), None)
        if fit is not None:
            out = fit
            break
    if width is not None:
        out.truncate(width, overflow="ellipsis")
    return out


def x_titles(xlabel: str, above: Sequence[tuple[float, str, str]]) -> list[str]:
    """The x axis title's forms, longest first, for the legend's line to take the longest that fits: ``call # ·
    above: trigger 61k, budget 77k, window-reserve 128k``, then without commas, then the lowest of them with
    ``…`` for the rest (``call # · above: trigger 61k, …``), then the axis name alone, and for wall time its
    unit alone (``minutes``).  ``above`` lists the thresholds too high to draw (``(tokens,
    key, name)``): the chart draws those within twice the data's peak, so that a run far from its limits still
    shows its own trend."""
    named = [f"{name} {tx.short_tokens(v)}" for v, _k, name in above]
    forms = [xlabel + " · above: " + ", ".join(named), xlabel + " · above: " + " ".join(named)] if above else []
    # (then the lowest ones, the others left out with "…": at 80 columns the lowest still has room)
    forms += [xlabel + " · above: " + ", ".join(named[:k]) + ", …" for k in range(len(named) - 1, 0, -1)]
    unit = xlabel.split(" since ")[0]  # (``minutes`` of ``minutes since 12:00:00``: the status line says "x: time")
    return list(dict.fromkeys([*forms, xlabel, unit]))  # (one threshold: the two forms are the same)


def _int_ticks(lo: float, hi: float, most: int) -> list[float]:
    """Whole-number ticks from ``lo`` to ``hi``, at most ``most`` of them, on a round step."""
    span = max(1.0, hi - lo)
    step = 1
    for m in (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000, 10000):
        step = m
        if span / m <= most:
            break
    first = int(lo // step * step)
    if first < lo:
        first += step
    return [float(v) for v in range(first, int(hi) + 1, step)]


#: Width of a call's bar in x units (calls are 1 apart): gaps between bars keep the calls apart.
BAR_WIDTH = 0.6


def _clear_of_data(xs: Sequence[float], heights: Sequence[float], lo: float, hi: float, below: float,
                   bar_half: float | None) -> bool:
    """True when nothing drawn between x ``lo`` and ``hi`` reaches ``below`` (tokens): bars (``bar_half``: half
    a bar's width) are drawn only around their calls; areas and lines run between neighbouring calls, so the
    calls on either side of the span count too."""
    if bar_half is not None:
        return all(h < below for x, h in zip(xs, heights, strict=True) if lo - bar_half <= x <= hi + bar_half)
    inside = [i for i, x in enumerate(xs) if lo <= x <= hi]
    first = inside[0] if inside else next((i for i, x in enumerate(xs) if x > hi), len(xs))
    last = inside[-1] if inside else first - 1
    near = range(max(0, first - 1), min(len(xs), last + 2))
    return all(heights[i] < below for i in near)


class TrendChart(PlotextPlot):
    """Tokens per call: floor (``█``) and history (``▒``) stacked, reported prompt (``•``), thresholds.

    The y axis is laid out for the chart's height (:func:`y_axis`): numbers are the exact values of their rows,
    and a row with threshold lines is labelled with their names and values (``trigger 15k``) where they fit.
    Push data with :meth:`show`; the chart is rebuilt at its current size when it renders.
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._calls: Sequence[Call] = ()
        self._settings = Settings()
        self._xmode = "index"
        self._filtered = False
        self._cal: Calibrations = NO_CALIBRATION
        self._last_draw = 0.0
        self._timer: Timer | None = None
        self.series: Series | None = None
        #: The y axis of the last drawing (``None`` before the first plot with data).
        self.axis: YAxis | None = None
        #: The x axis title's forms, longest first (:func:`x_titles`), drawn on the legend's line under the chart.
        self.titles: list[str] = []
        #: The keys of the threshold lines drawn (``T``, ``B``, ``W-R``: :data:`THRESHOLD_LINES`), for the legend.
        self.lines: list[str] = []
        #: The tokens of each threshold line drawn, by key, for the legend to give each its own value.
        self.values: dict[str, float] = {}

    class Titled(Message):
        """The chart's x axis title or its lines changed (:attr:`TrendChart.titles`, :attr:`TrendChart.lines`): the
        legend's line is to be drawn again."""

    def show(self, calls: Sequence[Call], settings: Settings, xmode: str,
             calibrations: Calibrations = NO_CALIBRATION, filtered: bool = False) -> None:
        """Plot ``calls`` with ``settings`` thresholds and x-axis mode ``index`` or ``time``; ``calibrations``:
        the run's (:func:`build_series`); ``filtered``: ``calls`` are those a filter kept (when there are none,
        the chart says that no call matches it rather than that none was read yet).

        Redraws are throttled to one per :data:`CHART_MIN_INTERVAL` seconds (a plotext build of a wide chart
        takes tens of milliseconds); the last data pushed is always drawn.  A change of x-axis mode or of the
        thresholds is drawn at once.
        """
        urgent = xmode != self._xmode or settings is not self._settings or filtered != self._filtered
        self._filtered = filtered
        self._calls = calls
        self._settings = settings
        self._xmode = xmode
        self._cal = calibrations
        wait = CHART_MIN_INTERVAL - (time.monotonic() - self._last_draw)
        if urgent or wait <= 0:
            self._redraw()
        elif self._timer is None:
            self._timer = self.set_timer(wait, self._redraw)

    def _redraw(self) -> None:
        self._timer = None
        self._last_draw = time.monotonic()
        self.refresh()

    def render(self) -> RenderResult:
        """Rebuild the plot for the current size and data."""
        plt = self.plt
        plt.clear_figure()
        width = max(10, self.size.width)
        s = self.series = build_series(self._calls, self._settings, self._xmode, max(10, width - 8), self._cal)
        if not s.x:
            plt.title("no calls match the filter" if self._filtered and not self._calls else
                      "no calls to plot yet" if self._xmode == "index" else "no timestamped calls to plot")
            self._set_titles([], [], {})
            return super().render()
        data_top = max([*s.total, *s.unsplit, *(r for r in s.reported if r is not None), 1])
        values = {"trigger": s.trigger, "budget": s.budget, "limit": s.limit}
        lines = [(v, key, name, colour) for attr, key, name, colour in THRESHOLD_LINES
                 if (v := values[attr]) is not None]
        # Thresholds within twice the data's peak are drawn; the others are named under the chart so
        # that a run far from its limits still shows its own trend.
        shown = [ln for ln in lines if ln[0] <= 2 * data_top]
        above = [(v, key, name) for v, key, name, _c in lines if v > 2 * data_top]
        # (a narrow chart keeps its plot: a row whose lines' names do not fit is labelled by its value)
        axis = self.axis = y_axis(self.size.height - CHART_FRAME_ROWS, data_top, shown, max(12, width // 4))
        # The legend is a line under the chart (chart_legend): plotext's own covers the data on short charts.
        bars = self._xmode == "index" and len(s.x) <= max(4, (width - 8) // 3)
        unsplit = any(s.unsplit)
        if bars:
            # Few calls: one stacked bar per call (a prompt of unknown split is its own part, never history).
            # (plotext takes one colour and marker per stacked series; its annotations say one for all)
            parts = [s.floor, [t - f for t, f in zip(s.total, s.floor, strict=True)]]
            colours, markers = ["magenta", "cyan"], [CHART_MARKERS["floor"], CHART_MARKERS["history"]]
            if unsplit:
                parts.append(s.unsplit)
                colours.append("gray")
                markers.append(CHART_MARKERS["unsplit"])
            plt.stacked_bar(s.x, parts, color=colours, marker=markers, width=BAR_WIDTH)  # type: ignore[arg-type]
        else:
            # Many calls (or wall time): stacked areas, floor drawn over floor + history; prompts of unknown
            # split first, so that the known areas are drawn over them.
            sx, s_unsplit, s_total, s_floor, s_reported = stepped(s.x, s.steps, s.unsplit, s.total, s.floor,
                                                                  s.reported)
            if unsplit:
                plt.plot(sx, s_unsplit, fillx=True, marker=CHART_MARKERS["unsplit"], color="gray")
            plt.plot(sx, s_total, fillx=True, marker=CHART_MARKERS["history"], color="cyan")
            plt.plot(sx, s_floor, fillx=True, marker=CHART_MARKERS["floor"], color="magenta")
        known = [(x, r) for x, r in zip(s.x, s.reported, strict=True) if r is not None] if bars else \
            [(x, r) for x, r in zip(sx, s_reported, strict=True) if r is not None]
        if known:
            draw = plt.scatter if bars else plt.plot  # a point on each bar; a line over the areas
            draw([k[0] for k in known], [k[1] for k in known], marker=CHART_MARKERS["reported"], color="blue")
        x0 = s.x[0]
        x1 = s.x[-1] if len(s.x) > 1 and s.x[-1] > x0 else x0 + 1
        if self._xmode == "index":
            x0, x1 = x0 - 0.5, x1 + 0.5  # room for the first and last bars
        # Each threshold row is labelled beside the axis (y_axis); where that label is the row's value alone
        # (no room for the names), tall charts name the lines on them, at different places along the rows so
        # that names on neighbouring rows do not run into each other, and only where no bar or point reaches
        # the line (a name drawn over the data hid it).
        where: list[tuple[float, Literal["left", "right", "center"]]] = [
            (x0, "left"), (x1, "right"), ((x0 + x1) / 2, "center")]
        heights = [max(t, u, r or 0) for t, u, r in zip(s.total, s.unsplit, s.reported, strict=True)]
        per_col = (x1 - x0) / max(1, width - 8)  # (x units per character of the plot)
        label_of = dict(zip(axis.ticks, axis.labels, strict=True))
        for n, (_row, value, names, colour) in enumerate(axis.lines):
            plt.hline(value, colour)
            if axis.rows < NAMED_LINE_ROWS or label_of[value][:1].isalpha():
                continue
            clear = value - axis.top / max(1, axis.rows) / 2  # (data at or above this is drawn on the line's row)
            span = (len(names) + 1) * per_col
            for k in range(len(where)):
                x, align = where[(n + k) % len(where)]
                lo = x if align == "left" else x - span if align == "right" else x - span / 2
                if _clear_of_data(s.x, heights, lo - per_col, lo + span + per_col, clear, BAR_WIDTH / 2 if bars
                                  else None):
                    plt.text(names, x=x, y=value, color=colour, alignment=align)
                    break
        for cx in s.compactions:
            plt.vline(cx, "green")
        plt.ylim(0, axis.top)
        plt.xlim(x0, x1)
        plt.yticks(axis.ticks, axis.labels)
        if self._xmode == "index":
            xt = _int_ticks(s.x[0], s.x[-1], max(2, width // 12))
            plt.xticks(xt, [str(int(v)) for v in xt])
        # The x axis title goes on the legend's line under the chart, which has the screen's width (plotext's
        # own, centred under the plot, took a plot row and was cut to the plot's width).
        self._set_titles(x_titles(s.xlabel, above), [key for _v, key, _n, _c in shown],
                         {key: v for v, key, _n, _c in shown})
        return super().render()

    def _set_titles(self, titles: list[str], lines: list[str], values: dict[str, float]) -> None:
        """Keep the x axis title's forms and the lines drawn with their values, and say so when they changed
        (:class:`Titled`)."""
        if (titles, lines, values) != (self.titles, self.lines, self.values):
            self.titles, self.lines, self.values = titles, lines, values
            self.post_message(self.Titled())
