"""``plan`` marks the biggest offenders, the same ones the dashboard's eviction preview marks.

The expected offenders are worked out here from the plan's own table, read as a user reads it: an
``assistant → …`` row and the ``tool result`` rows after it are one exchange (a tool call goes with its
results), any other unpinned row is one alone; the biggest exchanges by their rows' tokens, as many as it
takes for their eviction to bring 'before' within the budget, 3 to 5.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from ctxwatch.cli import main

ROW = re.compile(r"^\s*(\d+) (.+?)\s{2,}([\d,]+)\s+([\d,]+)\s+([\d,-]+)\s+(pinned|kept|summarised|evicted)(  ◆)?$")


def _plan(path: Path, *args: str) -> tuple[list[re.Match[str]], dict]:
    text = CliRunner().invoke(main, ["plan", str(path), *args])
    assert text.exit_code == 0, text.output
    doc = CliRunner().invoke(main, ["plan", str(path), *args, "--json"])
    assert doc.exit_code == 0, doc.output
    rows = [m for ln in text.stdout.splitlines() if (m := ROW.match(ln))]
    return rows, json.loads(doc.stdout)


def _expected(rows: list[re.Match[str]], before: int, budget: int) -> set[int]:
    exchanges: list[list[int]] = []
    sizes: list[int] = []
    for r in rows:
        index, label, tokens, fate = int(r[1]), r[2], int(r[3].replace(",", "")), r[6]
        if fate == "pinned":
            continue
        if label.startswith("tool result") and exchanges:
            exchanges[-1].append(index)
            sizes[-1] += tokens
        else:
            exchanges.append([index])
            sizes.append(tokens)
    order = sorted(range(len(sizes)), key=lambda k: (-sizes[k], k))
    chosen: list[int] = []
    freed = 0
    for k in order:
        if len(chosen) >= 5 or (len(chosen) >= 3 and before - freed <= budget):
            break
        chosen.append(k)
        freed += sizes[k]
    return {i for k in chosen for i in exchanges[k]}


@pytest.mark.parametrize("window", [None, "60000"])
def test_plan_marks_the_biggest_offenders_in_text_and_json(shared_logs: Path, window: str | None) -> None:
    path = shared_logs / "claude-code" / "spotter_4d5611e5_full.jsonl"
    rows, doc = _plan(path, *(["--window", window] if window else []))
    assert len(rows) == len(doc["messages"]) > 20
    want = _expected(rows, doc["before_tokens"], doc["budget_tokens"])
    marked = {int(r[1]) for r in rows if r[7]}
    flagged = {m["index"] for m in doc["messages"] if m["offender"]}
    assert marked == flagged == want
    # (the spotter run's two Read results, 11,947 and 4,473 tokens at the 60k window, are one exchange with
    # the assistant message that asked for them)
    assert {10, 11, 12} <= want
    if window:
        # the window's budget is 36,000 of a 51,555-token prompt: the 16,555-token exchange and the 5,134-token
        # compaction summary are not enough, so more are marked, up to 5 exchanges
        assert doc["before_tokens"] - doc["budget_tokens"] > 16_555 + 5_134
    # each row's saves is its exchange's tokens; pinned rows save nothing
    for r, m in zip(rows, doc["messages"], strict=True):
        assert (r[5] == "-") == (m["saves"] is None) == (r[6] == "pinned")


async def test_the_dashboard_marks_the_offenders_plan_marks(shared_logs: Path) -> None:
    from test_ui_common import loaded, open_preview

    from ctxwatch.ui.app import CtxwatchApp

    path = shared_logs / "claude-code" / "spotter_4d5611e5_full.jsonl"
    _rows, doc = _plan(path)
    app = CtxwatchApp(str(path))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 139)
        screen = await open_preview(pilot)
        table = screen.query_one("#plan-table")
        cells = [[str(c) for c in table.get_row_at(r)] for r in range(table.row_count)]
        shown = {int(c[0]) for c in cells if c[2] == "◆"}  # (columns: #, message, ◆, tokens, saves, ...)
    assert shown == {m["index"] for m in doc["messages"] if m["offender"]} and len(shown) >= 3


async def test_the_preview_says_what_the_mark_is_and_home_end_move_the_cursor(shared_logs: Path) -> None:
    """The preview's legend names ``◆`` and ``saves``; End goes to the last message and Home to the first, the
    table not scrolled sideways (its own End scrolled it to its right edge, hiding the message numbers)."""
    from test_ui_common import loaded, open_preview
    from textual.widgets import DataTable, Static

    from ctxwatch.ui.app import CtxwatchApp

    path = shared_logs / "claude-code" / "spotter_4d5611e5_full.jsonl"
    app = CtxwatchApp(str(path))
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, 139)
        screen = await open_preview(pilot)
        table = screen.query_one("#plan-table", DataTable)
        legend = " ".join(str(w.render()) for w in screen.query(Static))
        assert "◆ biggest offenders" in legend  # (at 80 columns; with room, "(saves: what evicting one frees)")
        await pilot.press("end")
        await pilot.pause()
        assert table.cursor_row == table.row_count - 1 > 0 and table.scroll_x == 0
        await pilot.press("home")
        await pilot.pause()
        assert table.cursor_row == 0 and table.scroll_x == 0


def test_one_offender_is_said_in_the_singular(shared_logs: Path) -> None:
    """A plan with one offending exchange of one message said "the 1 exchange ... (12 tokens: messages 1)"; the
    legend counts the ◆ rows of the table it stands under, in the singular where there is one."""
    text = CliRunner().invoke(main, ["plan", "--no-cache", str(shared_logs / "claude-code" / "spotter_short.jsonl")])
    assert text.exit_code == 0, text.output
    marked = [m for ln in text.stdout.splitlines() if (m := ROW.match(ln)) and m.group(7)]
    assert [m.group(1) for m in marked] == ["1"]
    tokens = int(marked[0].group(3).replace(",", ""))
    assert (f"◆ biggest offenders: the exchange whose eviction frees the most ({tokens:,} tokens: message 1)"
            in text.stdout)
