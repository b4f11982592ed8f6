"""``d``: what changed from the call before (same context) to the selected one: messages added, messages that
left the context, floor changes, the reported prompt's move."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_ui_common import SYSTEM, TOOLS, loaded, set_utc, wait_for
from textual.widgets import Static

from ctxwatch.ui.app import CtxwatchApp
from ctxwatch.ui.screens import DiffScreen

FULL = "claude-code/spotter_4d5611e5_full.jsonl"


def assistant_messages(path: Path) -> list[tuple[list[str], int]]:
    """Each main-context assistant message of a transcript in order: its tool_use names and its reported
    prompt (input + cache write + cache read), read with plain json."""
    out: dict[str, tuple[list[str], int]] = {}
    for raw in path.read_text().splitlines():
        d = json.loads(raw)
        if d.get("type") != "assistant" or d.get("isSidechain") or not (u := d["message"].get("usage")):
            continue
        names = out.get(d["message"]["id"], ([], 0))[0]
        names += [b["name"] for b in d["message"]["content"] if b.get("type") == "tool_use"]
        out[d["message"]["id"]] = (names, u["input_tokens"] + u["cache_creation_input_tokens"]
                                   + u["cache_read_input_tokens"])
    return list(out.values())


async def open_diff(pilot: Any, app: CtxwatchApp, row: int) -> DiffScreen:
    app._select_row(row)
    await pilot.pause()
    await pilot.press("d")
    assert await wait_for(pilot, lambda: isinstance(app.screen, DiffScreen) and app.screen.diff is not None, 10)
    screen = app.screen
    assert isinstance(screen, DiffScreen)
    return screen


async def test_the_diff_of_a_real_session(shared_logs: Path) -> None:
    """#139 against #138: #138's own reply (its tool calls) and the tool result came in, nothing left; #62
    against #61: the compaction summary came in and the whole history left."""
    path = shared_logs / FULL
    msgs = assistant_messages(path)
    assert len(msgs) == 139
    app = CtxwatchApp(str(path))
    async with app.run_test(size=(100, 40)) as pilot:
        await loaded(pilot, 139)
        screen = await open_diff(pilot, app, 138)
        d = screen.diff
        assert d is not None and (d.prev.index, d.cur.index) == (137, 138)
        names = msgs[137][0]
        assert [it.label for _n, it in d.added] == ["assistant → " + ", ".join(names),
                                                   "tool result (" + ", ".join(names) + ")"]
        assert d.left == [] and d.floor == []
        body = " ".join(str(screen.query_one("#diff-body", Static).render()).split())
        delta = msgs[138][1] - msgs[137][1]
        assert f"reported prompt {msgs[137][1]:,} → {msgs[138][1]:,} ({delta:+,})" in body
        await pilot.press("escape")
        screen = await open_diff(pilot, app, 61)
        d = screen.diff
        assert d is not None and d.cur.compaction is not None
        assert [it.label for _n, it in d.added] == ["user [compaction_summary]"] and d.kept == 0
        assert len(d.left) > 100 and d.left[0][0] == 1
        body = " ".join(str(screen.query_one("#diff-body", Static).render()).split())
        assert f"({msgs[61][1] - msgs[60][1]:+,})" in body and "tokens (compacted)" in body
        # (the floor, inferred, is inferred again from this call: no system prompt or tool changed)
        assert len(d.floor) == 1 and d.floor[0].startswith("floor ") \
            and d.floor[0].endswith("; inferred again from this call)")


def canonical(model: str, system: str, tools: list[dict[str, Any]], turns: list[str], prompt: int, t: int) -> str:
    messages = [{"role": "system", "content": system}] + [{"role": "user", "content": x} for x in turns]
    return json.dumps({"timestamp": 1_735_689_600 + t, "window": 20_000,
                       "request": {"model": model, "messages": messages, "tools": tools, "max_tokens": 1000},
                       "response": {"id": f"r{t}", "model": model, "choices": [{"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": "ok"}}],
                                    "usage": {"prompt_tokens": prompt, "completion_tokens": 2}}}) + "\n"


def test_the_diff_screen_80x24(snap_compare: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A client that edits its system prompt, adds a tool and drops its oldest message: each said."""
    set_utc(monkeypatch)
    grep = {"type": "function", "function": {"name": "grep", "description": "Search files.",
                                             "parameters": {"type": "object", "properties": {}}}}
    log = tmp_path / "edits.jsonl"
    log.write_text(canonical("gpt-4o", SYSTEM, TOOLS, ["first question", "second question"], 120, 0)
                   + canonical("gpt-4o", SYSTEM + " Be terse.", [*TOOLS, grep], ["second question", "third one"],
                               150, 30), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    app = CtxwatchApp("edits.jsonl")

    async def run_before(pilot: Any) -> None:
        await loaded(pilot, 2)
        screen = await open_diff(pilot, app, 1)
        d = screen.diff
        assert d is not None
        assert d.floor[0].startswith("the system prompt was edited") and d.floor[1] == "tool added: grep"
        assert [(n, it.text) for n, it in d.left] == [(1, "first question")]
        assert [(n, it.text) for n, it in d.added] == [(2, "third one")] and d.kept == 1

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


async def test_the_diff_says_its_counts_are_the_ones_the_detail_shows_raw(shared_logs: Path) -> None:
    """#139's added messages are 44 and 6,899 tokens in the diff, 61≈ and 9,568≈ in the detail (scaled to the
    reported prompt, the raw count beside): the diff now says its numbers are the tokenizer's own, and they are
    the detail's raw column."""
    app = CtxwatchApp(str(shared_logs / FULL))
    async with app.run_test(size=(100, 40)) as pilot:
        await loaded(pilot, 139)
        app._select_row(138)
        await pilot.pause()
        await pilot.press("enter")
        detail = app.screen
        assert await wait_for(pilot, lambda: getattr(detail, "loaded", False), 10)
        raw = {it.label: it.raw for it in detail.items if it.kind == "message"}  # type: ignore[attr-defined]
        await pilot.press("escape")
        screen = await open_diff(pilot, app, 138)
        d = screen.diff
        assert d is not None and len(d.added) == 2
        assert [it.tokens for _n, it in d.added] == [raw[it.label] for _n, it in d.added]
        body = str(screen.query_one("#diff-body", Static).render())
        assert "o200k_base's own counts, added and left alike; the floor and history above are scaled≈ to the " \
            "prompt, as the detail and plan scale these" in " ".join(body.split())
