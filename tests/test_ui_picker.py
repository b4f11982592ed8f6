"""The session picker (``o``) on a Claude Code projects folder: ``<project-dir>/<session-uuid>.jsonl`` with
``<session-uuid>/subagents/agent-*.jsonl``, project folders named after the project's path
(``-home-alice-src-github-acme-billing-service``), so that every name starts the same way."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from test_ui_common import wait_for

from ctxwatch.ui.app import CtxwatchApp
from ctxwatch.ui.screens import SessionPicker

BILLING = "-home-alice-src-github-acme-billing-service"
FRONTEND = "-home-alice-src-github-acme-frontend-app"
BILLING_SESSION = "3f2a9c1e-8b7d-4414-9ccd-011d40f70b2a"
FRONTEND_SESSION = "5c0375b4-2ae5-4f1b-8a6e-7d1e2f3a4b5c"


def projects(tmp_path: Path, shared_logs: Path) -> tuple[Path, Path, Path, Path]:
    """``(folder, billing, agent, frontend)``: a projects folder of two projects holding real Claude Code
    sessions: billing's (2026-02-10, newest: followed) with a subagent transcript, and frontend's (2025)."""
    cc = shared_logs / "claude-code"
    folder = tmp_path / "projects"
    billing = folder / BILLING / f"{BILLING_SESSION}.jsonl"
    agent = folder / BILLING / BILLING_SESSION / "subagents" / "agent-acompact-e1f845.jsonl"
    frontend = folder / FRONTEND / f"{FRONTEND_SESSION}.jsonl"
    for src, dst in ((cc / "spotter_short.jsonl", billing),
                     (cc / "spotter_4d5611e5_subagents_agent-acompact-e1f845.jsonl", agent),
                     (cc / "ccviewer_1af7fc5e_v1.0.98_init.jsonl", frontend)):
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
    return folder, billing, agent, frontend


async def open_picker(pilot: Any, app: CtxwatchApp, shown: Path) -> SessionPicker:
    """Wait until ``shown`` is read, press ``o`` and return the picker."""
    assert await wait_for(pilot, lambda: app.loaded and app.log_path == str(shown) and len(app.sessions) == 3, 15)
    await pilot.press("o")
    assert await wait_for(pilot, lambda: isinstance(app.screen, SessionPicker))
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, SessionPicker)
    return screen


def rows(screen: SessionPicker) -> list[str]:
    """The text of the picker's rows, in order."""
    from textual.widgets import OptionList

    ol = screen.query_one(OptionList)
    return [str(ol.get_option_at_index(i).prompt) for i in range(ol.option_count)]


async def test_the_picker_uses_a_wide_terminal(tmp_path: Path, shared_logs: Path) -> None:
    """The dialog stayed 100 columns wide on a 160-column terminal and cut every name; it is as wide as its
    rows, up to the terminal's width less a margin: at 160 columns the sessions' paths are whole."""
    from textual.containers import Vertical

    folder, billing, _agent, _frontend = projects(tmp_path, shared_logs)
    app = CtxwatchApp(str(folder))
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await open_picker(pilot, app, billing)
        box = screen.query_one(Vertical)
        assert 100 < box.outer_size.width <= 160 - 2 * 2
        shown = rows(screen)
        assert f"{BILLING}/{BILLING_SESSION}.jsonl" in shown[2 if shown[1].endswith("subagent") else 1]
        assert any(f"{FRONTEND}/{FRONTEND_SESSION}.jsonl" in r for r in shown)
        assert sum("…" not in r for r in shown) == 3  # (auto and both sessions; the subagent's path is longer)
