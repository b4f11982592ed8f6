"""The call detail's title of the item selected (``#0 floor: … · 25,793 tokens · …``) on a real Claude Code
session.  The item's label was cut at 50 characters in the middle of a word (``(inferre…``) and the whole line
at the screen's edge with no ``…`` (at 80 columns the token count of a long label was gone).  The title now
fits its width: the number, the label (giving up whole words) and the token count first, then the rest as far
as it fits, and ``…`` wherever anything was left out."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.cells import cell_len
from test_ui_common import loaded, wait_for
from textual.widgets import Static

from ctxwatch.ui.app import CtxwatchApp
from ctxwatch.ui.screens import DetailScreen

FULL = "claude-code/spotter_4d5611e5_full.jsonl"
#: Items looked at: the inferred floor (a long label), then the first messages.
ROWS = 4


async def titles(path: Path, width: int) -> list[tuple[str, str, int]]:
    """(title, ``#N``, the head's width) of the first :data:`ROWS` items of the newest call's detail."""
    app = CtxwatchApp(str(path))
    out = []
    async with app.run_test(size=(width, 24)) as pilot:
        await loaded(pilot, 139)
        await pilot.press("enter")
        assert await wait_for(pilot, lambda: isinstance(app.screen, DetailScreen) and app.screen.loaded, 15.0)
        screen = app.screen
        assert isinstance(screen, DetailScreen)
        for row in range(ROWS):
            screen.query_one("#items").move_cursor(row=row)
            await pilot.pause()
            head = screen.query_one("#item-head", Static)
            it = screen.selected_item()
            assert it is not None
            out.append((str(head.render()), f"{it.tokens:,}", head.size.width))
    return out


def cut_at_words(shown: str, whole: str) -> bool:
    """Whether ``shown`` is ``whole`` with runs of it left out, each marked ``…``, and every piece kept ending
    where a word of ``whole`` ends (not inside one)."""
    at = 0
    for piece in shown.split("…"):
        piece = piece.rstrip()
        found = whole.find(piece, at)
        if found < 0:
            return False
        end = found + len(piece)
        if end < len(whole) and whole[end].isalnum() and piece and piece[-1].isalnum():
            return False
        at = end
    return True


@pytest.mark.parametrize("width", [130, 80])
async def test_the_item_title_fits_and_cuts_between_words(shared_logs: Path, width: int) -> None:
    path = shared_logs / FULL
    whole = await titles(path, 400)  # (wide enough for every title whole)
    assert whole[0][0].startswith("#0 floor: system prompt + tools, not logged (inferred once for the context")
    for (title, tokens, room), (full, _tokens, _room) in zip(await titles(path, width), whole, strict=True):
        assert cell_len(title) <= room, (title, room)
        assert title.split(" ")[0] == full.split(" ")[0]  # (the item's #N)
        assert f" · {tokens}" in title, title  # (its token count, whatever the label left)
        if title != full:
            assert "…" in title and cut_at_words(title, full), (title, full)
