"""Shared helpers for the dashboard tests (no tests here): fixed canonical logs and pilot waiting loops.

Logs are written with plain ``json`` and fixed timestamps (2025-01-01T00:00:00Z plus 30 s per call) so
that screens are deterministic.  Expected values in the tests are worked out from these inputs, not by
calling the code under test.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

#: 2025-01-01T00:00:00Z in epoch seconds.
T0 = 1_735_689_600
#: The context window written into every canonical record (small, so the thresholds are reached quickly):
#: budget 0.6 x 20,000 = 12,000 tokens, trigger 0.8 x 12,000 = 9,600 tokens.
WINDOW = 20_000
SYSTEM = "You are a careful coding agent. Answer briefly."
TOOLS = [{"type": "function", "function": {"name": "read_file", "description": "Read a file from disk.",
                                            "parameters": {"type": "object",
                                                           "properties": {"path": {"type": "string"}},
                                                           "required": ["path"]}}}]


def words(n: int, seed: int) -> str:
    """``n`` distinct-ish words, deterministic for ``seed``."""
    return " ".join(f"w{(seed * 7919 + j * 104729) % 100003}" for j in range(n))


def record(i: int, *, model: str = "gpt-4o", turn_words: int = 350, user_text: str | None = None,
           reported: int | None = None, window: int | None = WINDOW, t0: float = T0) -> dict[str, Any]:
    """Canonical record of call ``i``: system prompt, one tool, ``i + 1`` user turns of ``turn_words`` words
    each with assistant replies in between, ``max_tokens`` 1,000, and reported usage; timestamped
    ``t0 + 30 * i``."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
    for k in range(i + 1):
        text = user_text if (user_text is not None and k == i) else f"step {k}: " + words(turn_words, k)
        messages.append({"role": "user", "content": text})
        if k < i:
            messages.append({"role": "assistant", "content": f"done with step {k}"})
    rec: dict[str, Any] = {
        "timestamp": t0 + 30 * i,
        "request": {"model": model, "messages": messages, "tools": TOOLS, "max_tokens": 1000},
        "response": {"id": f"resp-{i}", "model": model,
                     "choices": [{"index": 0, "finish_reason": "stop",
                                  "message": {"role": "assistant", "content": f"done with step {i}"}}],
                     "usage": {"prompt_tokens": reported if reported is not None else 1130 + 1064 * i,
                               "completion_tokens": 5}},
    }
    if window is not None:
        rec["window"] = window
    return rec


def line(rec: dict[str, Any]) -> str:
    """One JSONL line."""
    return json.dumps(rec) + "\n"


def write_log(path: Path, n: int, **kw: Any) -> Path:
    """Write calls ``0..n-1`` to ``path``."""
    path.write_text("".join(line(record(i, **kw)) for i in range(n)), encoding="utf-8")
    return path


def append(path: Path, text: str) -> None:
    """Append ``text`` to ``path`` in one write (like an agent logger)."""
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(text)


async def wait_for(pilot: Any, cond: Callable[[], bool], seconds: float = 5.0, step: float = 0.05) -> bool:
    """Pause the pilot until ``cond()`` is true, for at most ``seconds``; return whether it became true."""
    deadline = time.monotonic() + seconds
    for _ in range(int(seconds / step) + 1):
        if cond():
            return True
        if time.monotonic() > deadline:
            break
        await pilot.pause(step)
    return cond()


async def loaded(pilot: Any, calls: int | None = None, analysed: bool = True) -> None:
    """Wait until the app has read its log (and shows ``calls`` calls, when given) and, with ``analysed``,
    until the first flags and forecast arrived (so that screens are complete and deterministic)."""
    app = pilot.app

    def done() -> bool:
        if not app.loaded or (calls is not None and len(app.calls) != calls):
            return False
        return not analysed or bool(app.analyses) or app.analysis_error is not None or app.failed is not None

    ok = await wait_for(pilot, done, 15.0)
    assert ok, f"log not loaded: loaded={app.loaded} calls={len(app.calls)} failed={app.failed}"
    await pilot.pause()


def set_utc(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make local time UTC for this test (times on screen must not depend on the machine)."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()


def two_sessions(tmp_path: Path) -> tuple[Path, Path, Path]:
    """``(folder, a, b)``: a folder of two logs, ``a.jsonl`` (2 calls at 2023-11-14 22:13:20 and 22:13:50 UTC)
    and the newer ``b.jsonl`` (3 calls at 22:30:00, 22:30:30, 22:31:00)."""
    folder = tmp_path / "runs"
    folder.mkdir()
    return (folder, write_log(folder / "a.jsonl", 2, t0=1_700_000_000),
            write_log(folder / "b.jsonl", 3, t0=1_700_001_000))


async def open_preview(pilot: Any) -> Any:
    """Press ``e`` on the selected call and wait until its eviction preview (a ``PlanScreen``) has a plan."""
    from ctxwatch.ui.screens import PlanScreen

    app = pilot.app
    await pilot.press("e")
    screen = app.screen
    assert isinstance(screen, PlanScreen)
    assert await wait_for(pilot, lambda: screen.plan is not None, 10.0)
    return screen


async def open_fleet(pilot: Any) -> Any:
    """Press ``W`` and wait until the fleet view (a ``FleetScreen``) is on screen, drawn."""
    from ctxwatch.ui.screens import FleetScreen

    app = pilot.app
    await pilot.press("W")
    assert await wait_for(pilot, lambda: isinstance(app.screen, FleetScreen))
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, FleetScreen)
    return screen


async def open_detail(pilot: Any, seconds: float = 5.0) -> Any:
    """Press Enter on the selected call and wait until its detail view (a ``DetailScreen``) has loaded."""
    from ctxwatch.ui.screens import DetailScreen

    await pilot.press("enter")
    screen = pilot.app.screen
    assert isinstance(screen, DetailScreen)
    assert await wait_for(pilot, lambda: screen.loaded, seconds)
    return screen


def help_shown(screen: Any) -> str:
    """The text of the help screen ``screen`` shows, its sections in reading order a blank line apart."""
    return "\n\n".join(str(w.render()) for w in screen.query(".help-section, #help-close"))


def listening(app: Any) -> list[str]:
    """The messages the app's toasts say, in order, from now on."""
    said: list[str] = []
    real = app.notify

    def notify(message: str, **kw: object) -> None:
        said.append(message)
        real(message, **kw)

    app.notify = notify
    return said
