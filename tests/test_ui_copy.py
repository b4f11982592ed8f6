"""ctrl+c copies (the selection, else the highlighted call, flag or message) and q / ctrl+q quit.

The expected clipboard texts are worked out from the records written here (``test_ui_common.record``): call
#12 of 12 reports 1,130 + 1,064 x 11 = 12,834 prompt tokens, its last user message is ``step 11: `` and 350
words, and its request's ``max_tokens`` (the reserve) is 1,000.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_ui_common import loaded, open_detail, open_preview, set_utc, wait_for, words, write_log

from ctxwatch.ui.app import CtxwatchApp


def _copies(app: CtxwatchApp, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    copied: list[str] = []
    real = app.copy_to_clipboard
    monkeypatch.setattr(app, "copy_to_clipboard", lambda text: (copied.append(text), real(text)))
    return copied


async def test_ctrl_c_copies_the_selected_call_and_does_not_quit(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    set_utc(monkeypatch)
    log = write_log(tmp_path / "run.jsonl", 12)
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 12)
        copied = _copies(app, monkeypatch)
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running and app.screen is app.main  # (ctrl+c no longer quits)
        assert len(copied) == 1 and app.clipboard == copied[0]
        line = copied[0]
        # 2025-01-01T00:00:00Z + 30 s x 11 = 00:05:30; the 12th line of the file
        assert line.startswith("#12 · 00:05:30 · gpt-4o · context main · ")
        assert "reserve 1,000" in line and "reported 12,834" in line and line.endswith(f"{log} line 12")
        assert "\n" not in line
        assert any("copied call #12" in n.message for n in app._notifications)
        # the call above: ↑ then ctrl+c copies #11 (reported 1,130 + 1,064 x 10 = 11,770)
        await pilot.press("up", "ctrl+c")
        await pilot.pause()
        assert copied[-1].startswith("#11 · 00:05:00 · ") and "reported 11,770" in copied[-1]


async def test_ctrl_c_in_the_filter_box_copies_its_selected_text(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    app = CtxwatchApp(str(write_log(tmp_path / "run.jsonl", 3)))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 3)
        copied = _copies(app, monkeypatch)
        await pilot.press("slash", "g", "p", "t", "shift+home", "ctrl+c")
        await pilot.pause()
        assert copied == ["gpt"] and app.is_running


async def test_ctrl_c_copies_a_flag_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ctxwatch.ui.screens import FlagsScreen

    app = CtxwatchApp(str(write_log(tmp_path / "run.jsonl", 12)))
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, 12)
        copied = _copies(app, monkeypatch)
        await pilot.press("F")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, FlagsScreen) and screen.flags
        f = screen.flags[screen.query_one("#flags").cursor_row]
        await pilot.press("ctrl+c")
        await pilot.pause()
        # the whole reason, never cut to the 80-column row
        assert copied[-1].splitlines()[:2] == [f"{f.severity} · call #{f.call + 1} · {f.kind} · context main",
                                               f.reason]
        assert len(f.reason) > 40


async def test_ctrl_c_copies_a_message_of_the_detail_and_of_the_preview(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from ctxwatch.ui.screens import DetailScreen

    app = CtxwatchApp(str(write_log(tmp_path / "run.jsonl", 12)))
    want = "step 11: " + words(350, 11)
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 12)
        copied = _copies(app, monkeypatch)
        screen = await open_detail(pilot)
        assert isinstance(screen, DetailScreen)
        table = screen.query_one("#items")
        labels = [str(table.get_row_at(r)[1]) for r in range(table.row_count)]
        table.move_cursor(row=max(r for r, label in enumerate(labels) if label.startswith("user")))
        await pilot.pause()
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert copied[-1] == want
        await pilot.press("escape")
        await pilot.pause()
        preview = await open_preview(pilot)
        rows = preview.query_one("#plan-table")
        rows.move_cursor(row=max(r for r in range(rows.row_count) if str(rows.get_row_at(r)[1]) == "user"))
        await pilot.pause()
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert copied[-1] == want


@pytest.mark.parametrize("key", ["q", "ctrl+q"])
async def test_q_and_ctrl_q_quit(tmp_path: Path, key: str) -> None:
    app = CtxwatchApp(str(write_log(tmp_path / "run.jsonl", 2)))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 2)
        await pilot.press(key)
        assert await wait_for(pilot, lambda: app._exit)
