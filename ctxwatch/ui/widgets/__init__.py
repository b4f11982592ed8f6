"""The main screen's widgets, one module each; the screen pushes plain data into them and they render it.

* :mod:`.bar`: :class:`ContextBar`, the stacked bar of one call (floor | history | reserve | free).
* :mod:`.table`: :class:`CallsTable`, one row per call, rendering only the rows on screen; :mod:`.cells`: the
  text of its cells.
* :mod:`.series` and :mod:`.chart`: the trend chart's data (downsampled, y axis laid out) and
  :class:`TrendChart`, which plots it.
* :mod:`.status`, :mod:`.side`: the status line and the panel beside the chart, drawn from the dashboard's
  state (:class:`ctxwatch.ui.state.DashboardState`) handed to them.
* :mod:`.footer`: :class:`AdaptiveFooter`, the key footer of every screen.
* :mod:`.packed`: :class:`PackedText`, text broken only between its `` · ``-separated parts (the detail's
  header).

Calls are numbered for people from 1 (``#12`` is the call with ``index`` 11), as in every text output of
ctxwatch; only JSON keeps the 0-based ``index``.
"""

from ctxwatch.ui.widgets.bar import BarParts, ContextBar, bar_line, bar_parts, legend
from ctxwatch.ui.widgets.cells import short_model
from ctxwatch.ui.widgets.chart import TrendChart, chart_legend, x_titles
from ctxwatch.ui.widgets.footer import AdaptiveFooter
from ctxwatch.ui.widgets.series import Series, build_series, downsample, stepped
from ctxwatch.ui.widgets.side import SidePanel
from ctxwatch.ui.widgets.status import StatusLine
from ctxwatch.ui.widgets.table import CallsTable

__all__ = [
    "AdaptiveFooter", "BarParts", "CallsTable", "ContextBar", "Series", "SidePanel", "StatusLine", "TrendChart",
    "bar_line", "bar_parts", "build_series", "chart_legend", "downsample", "legend", "short_model",
    "stepped", "x_titles",
]
