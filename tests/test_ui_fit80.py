"""What a new user saw cut at 80x24: the bar's limits line, the turn diff's rows, the fleet view's worst flag
and the session picker's column heads.  Each now fits its width: broken between its parts, or cut with ….

The spotter session is a Claude Code log: its limits are Claude Code's own (by hand: trigger 200,000 - 33,000 =
167,000, budget 200,000 - 23,000 = 177,000); its call #62 follows a compaction that took 130 messages out of
the context.
"""

from __future__ import annotations

import json
import time
from datetime import datetime
from pathlib import Path

from rich.cells import cell_len
from test_ui_common import loaded, open_fleet, wait_for, write_log

from ctxwatch.ui.app import CtxwatchApp

SPOTTER = ("claude-code", "spotter_4d5611e5_full.jsonl")


async def test_the_bars_limits_line_breaks_between_its_parts_at_80_columns(shared_logs: Path) -> None:
    from ctxwatch.ui.widgets import ContextBar

    app = CtxwatchApp(str(shared_logs.joinpath(*SPOTTER)))
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, 139)
        bar = app.main.query_one(ContextBar)
        lines = str(bar.render()).split("\n")
        assert all(cell_len(ln) <= bar.size.width for ln in lines), lines
        assert len(lines) == bar.size.height  # (the widget is as tall as its lines: none is hidden)
        # (the limits by name and value, without the bar marks' letters, so that the drift risk at the end is
        # read, not cut; never by letters alone, which say nothing to a new reader)
        limits = next(ln for ln in lines if "trigger 167k" in ln)
        assert limits == "trigger 167k · budget 177k (Claude Code) · reported 106,060 · drift risk low"
        assert lines[lines.index(limits) - 1] == "call #139 · claude-opus-4-6 · used 53.0% of 200,000 (default)"
    # a wide terminal keeps it on one line
    app = CtxwatchApp(str(shared_logs.joinpath(*SPOTTER)))
    async with app.run_test(size=(160, 40)) as pilot:
        await loaded(pilot, 139)
        lines = str(app.main.query_one(ContextBar).render()).split("\n")
        assert any(ln.startswith("call #139 ") and "B budget 177k (Claude Code) · reported" in ln for ln in lines)


async def test_the_diffs_rows_are_one_line_each_at_80_columns(shared_logs: Path) -> None:
    from textual.widgets import Static

    from ctxwatch.ui.screens import DiffScreen

    path = shared_logs.joinpath(*SPOTTER)
    app = CtxwatchApp(str(path))
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, 139)
        app.main.table.move_cursor(row=61)
        await pilot.pause()
        await pilot.press("d")
        assert await wait_for(pilot, lambda: isinstance(app.screen, DiffScreen) and app.screen.diff is not None)
        body = app.screen.query_one("#diff-body", Static)
        await pilot.pause()
        lines = str(body.render()).split("\n")
        assert all(cell_len(ln) <= body.size.width for ln in lines), [ln for ln in lines if cell_len(ln) > 76]
        # the messages that left the context, numbered 1, 2, 3... each on its own row, its preview cut with …
        left = lines[next(i for i, ln in enumerate(lines) if ln.startswith("Left the context")) + 1:]
        rows = [ln for ln in left if ln[:7].strip().isdigit()]
        assert [int(ln[:7]) for ln in rows] == list(range(1, len(rows) + 1)) and len(rows) >= 10
        assert all(ln.endswith("…") for ln in rows[:3])
        # the first one is the session's first user message, as the file holds it
        first = next(json.loads(ln) for ln in path.read_text().splitlines()
                     if json.loads(ln).get("type") == "user")
        text = first["message"]["content"]
        text = text if isinstance(text, str) else next(b["text"] for b in text if b.get("type") == "text")
        assert rows[0].split("  ")[-1].rstrip("…") in " ".join(text.split())


async def test_the_fleet_table_fits_80_columns_and_cuts_the_flag_with_an_ellipsis(tmp_path: Path) -> None:
    from textual.widgets import DataTable

    from ctxwatch.demo import write_run

    log = tmp_path / "demo.jsonl"
    write_run(log)
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, 60)
        screen = await open_fleet(pilot)
        table = screen.query_one("#fleet", DataTable)
        assert table.virtual_size.width <= 80  # (no column past the screen's edge)
        (row,) = screen.rows
        assert row.worst is not None
        whole = f"{row.worst[1]} #{row.worst[2] + 1}"
        shown = str(table.get_row_at(0)[-1])
        assert shown == whole or (shown.endswith("…") and whole.startswith(shown[:-1]))


async def test_the_pickers_column_heads_are_words_never_cut(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    for name in ("-home-someone-work-projects-alpha-service-backend",
                 "-home-someone-work-projects-beta-service-frontend"):
        (root / name).mkdir(parents=True)
        write_log(root / name / "3f2a9c1e-8b7d-4414-9ccd-011d40f70b2a.jsonl", 2)
    for width in (80, 44, 36):
        app = CtxwatchApp(str(root))
        async with app.run_test(size=(width, 24)) as pilot:
            await loaded(pilot)
            await pilot.press("o")
            await pilot.pause()
            await pilot.pause()
            head = str(app.screen.query_one("#picker-head").render())
            assert "…" not in head and "last call" in head, (width, head)
            assert set(head.split()) <= {"folder", "dir", "session", "file", "last", "call", "size"}, head


async def test_the_call_after_a_compaction_says_why_its_inferred_floor_moved(shared_logs: Path) -> None:
    """Call #62 follows the compaction: Claude Code attaches files and the to-do list again, which the
    inferred floor (reported prompt minus the counted history) takes in, so it moves from #61's 26,410 to
    32,379 with no system prompt or tool changed.  The bar's limits line says so, at 80 columns short, with
    the compaction and the drift risk kept whole; a call whose floor did not move says nothing of it."""
    from ctxwatch.ui.widgets import ContextBar

    for size, want in (((80, 24), "after compaction · floor re-inferred 26k→32k~ · drift risk low"),
                       ((140, 40), "compacted before this call · floor 26,410~ → 32,379~: re-inferred after "
                                   "compaction · drift risk low")):
        app = CtxwatchApp(str(shared_logs.joinpath(*SPOTTER)))
        async with app.run_test(size=size) as pilot:
            await loaded(pilot, 139)
            c61, c62 = app.calls[60], app.calls[61]
            assert c62.compaction and not c61.compaction
            assert (c61.floor_tokens, c62.floor_tokens) == (26_410, 32_379)
            app.main.table.move_cursor(row=61)
            await pilot.pause()
            bar = app.main.query_one(ContextBar)
            assert app.selected_index == 61 and bar.call is c62
            lines = str(bar.render()).split("\n")
            assert lines[-1] == want, lines
            assert all(cell_len(ln) <= bar.size.width for ln in lines) and len(lines) == bar.size.height
            app.main.table.move_cursor(row=62)  # #63: the same floor as #62
            await pilot.pause()
            assert "re-inferred" not in str(bar.render())


async def test_the_fleet_of_a_folder_gives_its_flag_and_model_the_room_first(shared_logs: Path) -> None:
    """A folder of Claude Code sessions at 80x24: the fleet view cut the model (``claude-…``) and the worst
    flag (``output_placehold…``) to leave room for a session id and an instance column that only said
    ``-``.  The flag and the model now get the room first, the session id is cut in the middle, and the
    instance column is left out when no conversation has one."""
    for width in (80, 100):
        await _fleet_of_the_folder(shared_logs, width)


async def _fleet_of_the_folder(shared_logs: Path, width: int) -> None:
    from textual.widgets import DataTable


    app = CtxwatchApp(str(shared_logs / "claude-code"))
    async with app.run_test(size=(width, 24)) as pilot:
        await loaded(pilot, 139)  # (the newest session: spotter_4d5611e5_full, by its last call)
        screen = await open_fleet(pilot)
        table = screen.query_one("#fleet", DataTable)
        assert table.virtual_size.width <= width
        assert [str(c.label) for c in table.columns.values()][1:4] == ["session", "model", "calls"]
        (row,) = screen.rows
        cells = [str(c) for c in table.get_row_at(0)]
        # (by hand from the file: the session id of its lines, the model of its last call)
        session = json.loads((shared_logs.joinpath(*SPOTTER)).read_text().splitlines()[-1])["sessionId"]
        assert row.conversation == (None, session)
        assert row.worst is not None and cells[-1] == f"{row.worst[1]} #{row.worst[2] + 1}" \
            == "output_placeholder #137"  # (whole; the most recent of the session's four info flags)
        # (80 columns leave the model three cells short: cut in the middle, its version kept)
        assert cells[2] == ("claud…us-4-6" if width == 80 else "claude-opus-4-6")
        assert "…" in cells[1] and session.startswith(cells[1].split("…")[0]) \
            and session.endswith(cells[1].split("…")[1])
        assert len(cells[1]) == (8 if width == 80 else 8 + 20 - 3)  # (20 more cells: 3 to the model)


CJK_SESSION = "会话测试-日本語セッション-長い長い長い名前"


def _cells(s: str) -> int:
    """Terminal cells of ``s``, counted here without Rich: a wide (``W``) or full-width (``F``) character takes
    two, every other character of these tests one."""
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in s)


def test_a_cut_is_measured_in_cells_and_never_splits_a_wide_character() -> None:
    from ctxwatch.ui import text as tx

    for limit in range(1, 30):
        for middle in (False, True):
            cut = tx.literal(CJK_SESSION, limit=limit, middle=middle).plain
            assert _cells(cut) <= limit and _cells(cut) >= limit - 1, (limit, middle, cut)
            head, _, tail = cut.partition("…")
            assert CJK_SESSION.startswith(head) and CJK_SESSION.endswith(tail)
            assert (tail != "") == (middle and limit >= 5)
    assert tx.literal(CJK_SESSION, limit=_cells(CJK_SESSION)).plain == CJK_SESSION  # (46 cells: whole)
    assert tx.literal(CJK_SESSION, limit=9, middle=True).plain == "会话…名前"  # (4 + 1 + 4 cells)
    assert tx.literal(CJK_SESSION, limit=8, middle=True).plain == "会…名前"  # (3 cells hold one: 2 + 1 + 4)
    # (the cells as shown: an ESC shows as the four cells of ``\x1b``, a newline of a one-line cell as ``⏎``)
    assert tx.literal("\x1b[2Jhello", limit=8).plain == "\\x1b[2J…"
    assert tx.literal("a\nb\nc\nd", limit=5).plain == "a⏎b⏎…"


async def test_the_fleet_of_a_cjk_session_id_fits_80_columns(shared_logs: Path, tmp_path: Path) -> None:
    """A Claude Code session whose id is CJK (two cells a character): the fleet view measured the id in
    characters, gave it twice the cells it had room for and pushed the age and the worst flag off an 80-column
    screen.  It is now cut by cells like an ASCII id, and the whole row fits."""
    from textual.widgets import DataTable


    data = shared_logs.joinpath(*SPOTTER).read_bytes()
    # (the age by hand: whole days since the session's last call, read with plain json, before and after)
    last = max(datetime.fromisoformat(d["timestamp"].replace("Z", "+00:00")).timestamp()
               for d in map(json.loads, data.splitlines()) if d.get("type") == "assistant")
    days_before = int((time.time() - last) // 86400)
    old = b'"sessionId":"4d5611e5-241a-462a-8d15-5122611a9569"'
    assert old in data
    (tmp_path / "cjk.jsonl").write_bytes(data.replace(old, f'"sessionId":"{CJK_SESSION}"'.encode()))
    (tmp_path / "spotter_short.jsonl").write_bytes((shared_logs / "claude-code" / "spotter_short.jsonl").read_bytes())
    app = CtxwatchApp(str(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, 139)  # (the newest session: the CJK copy)
        screen = await open_fleet(pilot)
        table = screen.query_one("#fleet", DataTable)
        assert [str(c.label) for c in table.columns.values()] == \
            ["", "session", "model", "calls", "used", "floor", "age", "worst flag"]
        (row,) = screen.rows
        assert row.conversation == (None, CJK_SESSION)
        cells = [str(c) for c in table.get_row_at(0)]
        # (the columns as wide as their widest cell or head, each with a cell of padding either side)
        heads = [str(c.label) for c in table.columns.values()]
        widths = [max(_cells(h), _cells(cell)) for h, cell in zip(heads, cells, strict=True)]
        assert sum(widths) + 2 * len(widths) <= 80, (cells, widths)
        assert table.virtual_size.width <= 80
        # (the same cells as for the ASCII id: session 8, model three cells short, the age and the flag whole)
        assert cells[2] == "claud…us-4-6"
        days = range(days_before, int((time.time() - last) // 86400) + 1)
        assert days_before >= 1 and cells[-2] in [f"{d} d" for d in days], cells
        assert cells[-1] == "output_placeholder #137"
        head, _, tail = cells[1].partition("…")
        assert head and tail and CJK_SESSION.startswith(head) and CJK_SESSION.endswith(tail)
        assert _cells(cells[1]) in (7, 8)  # (8 cells, or 7 where a wide character would be split)
