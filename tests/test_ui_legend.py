"""The chart's legend is a line of its own under the chart, in every layout that draws the chart, and the y
axis labels stay narrow at 80 columns.

The spotter session is a Claude Code log: its limits are Claude Code's own (by hand: trigger 200,000 - 33,000 =
167,000, budget 200,000 - 23,000 = 177,000, window - reserve 200,000 - 20,000 = 180,000), all three within
twice the data's peak (106,060 reported at #139), so all three lines are drawn and the legend names them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.cells import cell_len
from test_ui_common import loaded, wait_for

from ctxwatch.ui.app import CtxwatchApp


@pytest.mark.parametrize("size", [(80, 24), (140, 40)])
async def test_the_legend_is_under_the_chart_at_80x24_and_140x40(shared_logs: Path, size: tuple[int, int]) -> None:
    from ctxwatch.ui.widgets import TrendChart

    app = CtxwatchApp(str(shared_logs / "claude-code" / "spotter_4d5611e5_full.jsonl"))
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, 139)
        main = app.main
        assert main is not None
        legend = main.query_one("#legend")
        chart = main.query_one(TrendChart)
        # (the chart redraws at most twice a second, later on a loaded machine: until it has drawn the last
        # calls, the thresholds are above its scale and the legend says so)
        assert await wait_for(pilot, lambda: "above:" not in str(legend.render()), 10)
        text = str(legend.render())
        assert legend.display and legend.region.height == 1 and legend.region.y == chart.region.bottom
        assert cell_len(text) <= size[0] - 2
        assert text.startswith("call #")  # (the x axis's name: the chart no longer spends a row on it)
        for mark in ("█ floor", "▒ hist", "• reported", "│ compaction"):
            assert mark in text, (mark, text)
        # each line by its word; with its own value where there is room (the axis may label a row the three
        # share by its value alone, 167k)
        for mark in ("trigger", "budget", "window-reserve") if size[0] == 80 else (
                "─ trigger 167k", "─ budget 177k", "─ window-reserve 180k"):
            assert mark in text, (mark, text)
        # the y labels: each at most 12 cells at 80 columns; a threshold row says its lines' names, or (too
        # narrow for them) the value of its lowest line: never letters standing for them
        labels = [ln.split("┤")[0].split("├")[0].strip() for ln in chart.render().plain.splitlines()
                  if "┤" in ln or "├" in ln]
        assert labels and max(len(lab) for lab in labels) <= (12 if size[0] == 80 else chart.size.width // 4), labels
        assert not any(w in lab.replace("/", " ").split() for lab in labels for w in ("T", "B", "W-R")), labels
        if size[0] == 80:
            assert "167k" in labels, labels
        else:
            assert "trigger/budget/window-reserve 167k" in labels or "trigger 167k" in labels, labels
        assert "0" in labels


async def test_the_compact_layout_has_neither_chart_nor_legend(shared_logs: Path) -> None:
    app = CtxwatchApp(str(shared_logs / "claude-code" / "spotter_4d5611e5_full.jsonl"))
    async with app.run_test(size=(60, 15)) as pilot:
        await loaded(pilot, 139)
        main = app.main
        assert main is not None and main.has_class("-compact")
        assert not main.query_one("#middle").display and not main.query_one("#legend").display
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        await pilot.pause()
        assert main.query_one("#legend").display and "█ floor" in str(main.query_one("#legend").render())
