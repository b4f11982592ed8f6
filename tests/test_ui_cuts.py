"""Every place the dashboard cuts text shows that it cut: the cut text ends with ``…`` inside what is on screen.

The flags list at 80 columns scrolls once its flags outgrow the rows (the demo run's 6 flags at 80x12): the
table's 2-cell scrollbar then takes the reason's last cells, which held its ``…``.  The session picker's first
prompt and the turn diff's previews read only the start of a long text: what they leave out is marked too.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.cells import cell_len
from test_ui_common import loaded, wait_for, write_log
from textual.widgets import DataTable

from ctxwatch.ui import text as tx
from ctxwatch.ui.app import CtxwatchApp
from ctxwatch.ui.screens import FlagsScreen
from ctxwatch.ui.summaries import PROMPT_CHARS, summarize


@pytest.fixture(scope="module")
def demo_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The 60-call demo run (``ctxwatch demo --write``): 6 flags, each reason longer than 80 columns leave."""
    from ctxwatch.demo import write_run

    path = tmp_path_factory.mktemp("demo") / "d.jsonl"
    write_run(path)
    return path


@pytest.mark.parametrize("size", [(80, 12), (80, 24)])
async def test_flag_reasons_cut_at_80_columns_end_with_an_ellipsis_on_screen(demo_log: Path,
                                                                            size: tuple[int, int]) -> None:
    app = CtxwatchApp(str(demo_log))
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, 60)
        await pilot.press("F")
        assert await wait_for(pilot, lambda: isinstance(app.screen, FlagsScreen))
        await pilot.pause()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, FlagsScreen)
        table = screen.query_one("#flags", DataTable)
        if size[1] == 12:
            assert table.show_vertical_scrollbar  # (the case: 6 flags, fewer rows)
        assert not table.show_horizontal_scrollbar  # (the table fits: nothing of a row is off screen)
        visible = table.scrollable_content_region.width
        rows = ["".join(seg.text for seg in table.render_line(y)).rstrip()
                for y in range(1, table.scrollable_content_region.height)]
        rows = [r for r in rows if r]
        assert rows
        reasons = {f"#{f.call + 1}": f.reason for f in screen.flags}
        for row in rows:
            assert cell_len(row) <= visible, (row, visible)
            call = row.split()[1]
            reason = reasons[call]
            # (each of the demo's reasons is longer than the cells left for it: cut, and saying so)
            shown = row[row.index(reason[:12]):]
            assert shown.endswith("…") and reason.startswith(shown[:-1]), (row, reason)


def test_the_pickers_first_prompt_says_it_was_cut(tmp_path: Path) -> None:
    # the first user message: "step 0: " then 350 words, about 2,800 characters
    path = write_log(tmp_path / "s.jsonl", 1)
    info = summarize(str(path))
    assert info is not None and info.prompt is not None
    assert info.prompt.startswith("step 0: w0 ") and info.prompt.endswith("…")
    assert cell_len(info.prompt) == PROMPT_CHARS


def test_the_start_of_a_long_text_is_marked_cut_even_where_what_was_read_fits() -> None:
    # 1,000 spaces then a word: the first 4 x 20 + 4 characters read collapse to nothing, the rest was cut
    assert tx.flat_start(" " * 1000 + "tail", 20) == "…"
    assert tx.flat_start("a  b\n\nc", 20) == "a b c"  # (whole: nothing cut, nothing marked)
    assert tx.flat_start("word " * 100, 12) == "word word w…"
    assert tx.one_line("x" * 50, 10).plain == "xxxxxxxxx…"
    # (wide characters: the cut counts cells; a whole text that fits is never marked)
    assert tx.cut_cells("日本語のテキスト", 7) == "日本語…" and tx.cut_cells("日本", 4) == "日本"
    assert tx.cut_cells("abcdefghij", 7, middle=True) == "abc…hij"
