"""The flags list (``F``) on a real Claude Code session: every flag ``check`` lists for the main context,
each whole; Enter selects its call in the table, clearing a filter that hides it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from test_ui_common import loaded, wait_for
from textual.widgets import Static

from ctxwatch.cli import main
from ctxwatch.ui.app import CtxwatchApp
from ctxwatch.ui.screens import FlagsScreen

FULL = "claude-code/spotter_4d5611e5_full.jsonl"


def main_prompts(path: Path) -> list[int]:
    """The reported prompt of each main-context call (input + cache write + cache read), by message id, in
    order, read with plain json."""
    prompts: dict[str, int] = {}
    for line in path.read_text().splitlines():
        d = json.loads(line)
        if d.get("type") == "assistant" and not d.get("isSidechain") and (u := d["message"].get("usage")):
            prompts[d["message"]["id"]] = (u["input_tokens"] + u["cache_creation_input_tokens"]
                                           + u["cache_read_input_tokens"])
    return list(prompts.values())


async def test_flags_list_and_enter_selects_the_call(shared_logs: Path) -> None:
    path = shared_logs / FULL
    prompts = main_prompts(path)
    assert len(prompts) == 139 and prompts[60] == 164_831
    res = CliRunner().invoke(main, ["check", "--json", "--no-cache", str(path)])
    expected = [(f["call"], f["kind"], f["reason"]) for f in json.loads(res.stdout)["flags"]
                if f["context"] == "main"]
    # (under Claude Code's own limits, the defaults for its logs, the session's flags are its compaction at
    # #62 and three output placeholders; the test walks to the compaction)
    assert len(expected) == 4 and expected[1][:2] == (61, "compaction")
    app = CtxwatchApp(str(path))
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, 139)
        await pilot.press("slash", *"20:24", "enter")  # (a filter that hides call #62)
        assert await wait_for(pilot, lambda: app.filter_text == "20:24" and 61 not in app.view)
        await pilot.press("F")
        assert await wait_for(pilot, lambda: isinstance(app.screen, FlagsScreen))
        screen = app.screen
        assert isinstance(screen, FlagsScreen)
        await pilot.pause()
        assert [(f.call, f.kind, f.reason) for f in screen.flags] == expected
        await pilot.press("home", "down")  # the compaction flag at #62
        await pilot.pause()
        body = str(screen.query_one("#flag-body", Static).render())
        assert expected[1][2] in body.replace("\n", " ")  # (whole, wrapped at 80 columns)
        assert f"prompt_before {prompts[60]:,}" in body.replace("\n", " ")
        await pilot.press("enter")
        assert await wait_for(pilot, lambda: not isinstance(app.screen, FlagsScreen))
        await pilot.pause()
        assert app.selected_index == 61 and app.filter_text == "" and not app.follow
        assert app.screen.query_one("#calls").cursor_row == app.view.index(61)


def demo_flags(tmp_path: Path) -> tuple[Path, list[dict[str, Any]]]:
    """The demo run written to ``tmp_path`` and its flags as ``check --json`` gives them (plain json)."""
    path = tmp_path / "demo.jsonl"
    assert CliRunner().invoke(main, ["demo", "--write", str(path)]).exit_code == 0
    res = CliRunner().invoke(main, ["check", "--json", "--no-cache", str(path)])
    return path, json.loads(res.stdout)["flags"]


async def open_flags(pilot: Any) -> FlagsScreen:
    """Wait for the log to be read, press ``F`` and wait for the flags screen."""
    app = pilot.app
    await loaded(pilot)
    await pilot.press("F")
    assert await wait_for(pilot, lambda: isinstance(app.screen, FlagsScreen))
    screen = app.screen
    assert isinstance(screen, FlagsScreen)
    await pilot.pause()
    return screen


async def test_flag_evidence_names_calls_by_their_number(tmp_path: Path) -> None:
    """The evidence below the table gave calls as 0-based indexes (``first_call 40 · worst_call 53``) beside a
    reason that writes them ``#41`` and ``#54``.  Every call of the evidence is now its ``#N``, the
    ``<key>_number`` ``check --json`` gives."""
    path, flags = demo_flags(tmp_path)
    flags = [f for f in flags if f["context"] == "main"]
    numbered = [{k[:-len("_number")]: v for k, v in f["evidence"].items() if k.endswith("_number")} for f in flags]
    drift = next(i for i, f in enumerate(flags) if f["kind"] == "format_drift")
    assert numbered[drift] == {"first_call": flags[drift]["evidence"]["first_call"] + 1, "recovered_at": None,
                               "worst_call": flags[drift]["evidence"]["worst_call"] + 1}  # (it never recovered)
    app = CtxwatchApp(str(path))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_flags(pilot)
        assert [(f.call, f.kind) for f in screen.flags] == [(f["call"], f["kind"]) for f in flags]
        await pilot.press("home")
        for i, calls in enumerate(numbered):
            await pilot.pause()
            body = str(screen.query_one("#flag-body", Static).render()).replace("\n", " ")
            assert f"call #{flags[i]['number']} " in body
            for key, number in calls.items():
                index = flags[i]["evidence"][key]
                if number is None:
                    assert f"{key} none" in body, (key, body)
                else:
                    assert f"{key} #{number}" in body and f"{key} {index:,}" not in body, (key, body)
            await pilot.press("down")


async def test_a_rule_in_the_evidence_is_named_by_its_description_and_all_of_it_fits_80x24(tmp_path: Path) -> None:
    """The format_drift flag's evidence gave its rule as JSON (the rule's text, quoted), which pushed the rest of
    the evidence out of the panel at 80x24: ``recovered_at`` was not on screen.  An object that describes itself
    is now given by its description, and every key of the evidence (as ``check --json`` gives them) is on the
    panel's rows."""
    path, flags = demo_flags(tmp_path)
    drift = next(f for f in flags if f["kind"] == "format_drift")
    rule = drift["evidence"]["rule"]
    app = CtxwatchApp(str(path))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_flags(pilot)
        await pilot.press("home", *["down"] * next(i for i, f in enumerate(screen.flags) if f.kind == "format_drift"))
        await pilot.pause()
        panel = screen.query_one("#flag-body", Static)
        rows = str(panel.render()).split("\n")[:panel.content_region.height]
        shown = " ".join(rows)
        assert f"rule {rule['description']}" in " ".join(shown.split()) and rule["text"][:20] not in shown
        for key in drift["evidence"]:
            if not key.endswith("_number"):
                assert f"{key} " in shown, (key, rows)
