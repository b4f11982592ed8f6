"""Pilot tests of the call detail and the eviction preview opened from it (tester's report, items 1, 2, 4,
5 and 6).  Expected values come from the log files written here, or from the tokenizer on their text."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from test_ui_common import append, line, loaded, open_detail, open_preview, record, wait_for, write_log

from ctxwatch.cli import main
from ctxwatch.ui.app import CtxwatchApp
from ctxwatch.ui.screens import DetailScreen, PlanScreen
from ctxwatch.ui.widgets.packed import PackedText


async def test_e_in_the_detail_of_a_followed_log_previews_the_call_on_screen(tmp_path: Path) -> None:
    """Following a live log, the selection moves on to each new call; `e` pressed in the detail of call #12
    planned the newest call (#14) instead of the one on screen."""
    log = write_log(tmp_path / "live.jsonl", 12)
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 12)
        await pilot.press("enter")
        detail = app.screen
        assert isinstance(detail, DetailScreen) and detail.call.index == 11  # call #12, the newest
        append(log, line(record(12)) + line(record(13)))
        assert await wait_for(pilot, lambda: app.selected_index == 13, 10.0)  # following: #14 is selected
        assert app.screen is detail
        await pilot.press("e")
        screen = app.screen
        assert isinstance(screen, PlanScreen)
        assert screen.call.index == 11
        assert await wait_for(pilot, lambda: screen.plan is not None, 10.0)
        # call #12 (index 11) holds 12 user turns and 11 assistant replies after the system prompt
        assert len(screen.plan.messages) == 1 + 12 + 11


async def test_the_detail_of_a_call_from_before_a_rotation_says_the_file_changed(tmp_path: Path) -> None:
    """After the followed log was rotated, the detail of an older call said its floor was "not logged" and each
    message "no text in the log for this item", while `e` on it said the file changed. The detail says the
    file changed too, and shows the logged system prompt and tool schemas as such."""
    from textual.widgets import Static

    from ctxwatch.tokens import counter_for

    log = write_log(tmp_path / "agent-run.jsonl", 4)
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 4)
        await pilot.pause(0.3)
        os.rename(log, log.with_name("agent-run.1.jsonl"))  # rotated: call #2's record is no longer in the file
        log.write_text(line(record(4)) + line(record(5)))
        assert await wait_for(pilot, lambda: len(app.calls) == 6 and app.resets == ["rotated"], 10.0)
        app.query_one("#calls").move_cursor(row=1)  # call #2
        await pilot.pause()
        assert app.selected_index == 1
        await pilot.press("enter")
        screen = app.screen
        assert isinstance(screen, DetailScreen) and screen.call.index == 1
        assert await wait_for(pilot, lambda: screen.loaded)
        # call #2: the system prompt, the one tool's schema, then user, assistant, user (from record(1))
        labels = [it.label for it in screen.items]
        assert labels[:2] == ["system prompt", "tool schemas (1 tool)"]
        assert labels[2:5] == ["user", "assistant", "user"]
        assert not any("not logged" in it.label for it in screen.items)
        enc = counter_for("gpt-4o", "openai").tokenizer
        system = 3 + enc.count("system") + enc.count(record(1)["request"]["messages"][0]["content"])
        assert screen.items[0].tokens == system  # counted when the call was read (framing: 3 + the role)
        for row, it in enumerate(screen.items):
            if it.kind not in ("system", "tool", "message"):
                continue  # (the framing and gap rows explain themselves: they are no log text)
            screen.query_one("#items").move_cursor(row=row)
            await pilot.pause()
            note = str(screen.query_one("#item-head", Static).render())
            assert "the file changed" in note and "no text in the log" not in note
        assert screen.error == "the call could not be re-read from disk (the file changed)"
        assert "file changed" in str(screen.query_one("#detail-head", PackedText).render())
        await pilot.press("e")  # the preview says the same
        plan = app.screen
        assert isinstance(plan, PlanScreen)
        assert await wait_for(pilot, lambda: plan.error is not None)
        assert plan.error == screen.error


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_the_eviction_preview_shows_its_whole_reason(shared_logs: Path, size: tuple[int, int]) -> None:
    """Call #10 of a Claude Code session at a budget of about 0.20: the reason (what the plan did, why it does not fit,
    what to change) was cut at 400 characters, "…the smalles…". It wraps whole now: at once at 120x40, after ``y``
    at 80x24 (where the header is condensed to leave the screen to the messages)."""
    from textual.widgets import Static

    path = shared_logs / "claude-code" / "spotter_4d5611e5_head200.jsonl"
    app = CtxwatchApp(str(path))
    async with app.run_test(size=size) as pilot:
        await loaded(pilot)
        app.query_one("#calls").move_cursor(row=9)
        await pilot.pause()
        assert app.selected_index == 9
        await pilot.press("e")
        screen = app.screen
        assert isinstance(screen, PlanScreen)
        assert await wait_for(pilot, lambda: screen.plan is not None, 10.0)
        # (from the harness's own budget, 177,000 of 200,000: b lowers it by 0.05 a press, to about 0.2)
        presses = round((screen.knobs.budget_fraction - 0.2) / 0.05)
        for _ in range(presses):
            await pilot.press("b")
        assert await wait_for(pilot, lambda: abs(screen.plan.policy.budget_fraction - 0.2) < 0.03, 10.0)
        await pilot.pause()
        reason = screen.plan.reason
        assert not screen.plan.fits and len(reason) > 400
        head = screen.query_one("#plan-head", Static)
        if size == (80, 24):
            assert not screen.whole_shown and head.content_size.height == 3
            await pilot.press("y")
            await pilot.pause()
        assert screen.whole_shown
        shown = head.render()
        assert " ".join(reason.split()) in " ".join(str(shown).split())
        # every wrapped line is on screen: the header is as tall as its text
        lines = shown.wrap(head.content_size.width)
        assert head.content_size.height == len(lines)
        assert "lower keep_recent or raise the budget" in " ".join(str(ln) for ln in lines[-3:])
        assert screen.query_one("#plan-table").size.height >= 3  # and the messages stay in sight


async def test_the_eviction_preview_redraws_its_bars_when_the_terminal_shrinks(tmp_path: Path) -> None:
    """The before/after bars were drawn for the width the preview opened at: shrunk from 120 to 80 columns,
    each bar wrapped over three rows and pushed the messages off screen."""
    from textual.widgets import Static

    log = write_log(tmp_path / "a.jsonl", 12)
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 12)
        screen = await open_preview(pilot)
        await pilot.resize_terminal(80, 24)
        await pilot.pause(0.3)
        bars = screen.query_one("#plan-bars", Static)
        rows = str(bars.render()).split("\n")
        assert [r.split()[0] for r in rows[:2]] == ["before", "after"]
        assert all(len(r) <= bars.content_size.width for r in rows)  # one row per bar: none wraps
        assert bars.content_size.height == 3


def _by_hand(rec: dict) -> tuple[int, int, int]:
    """(floor, history, prompt) of a canonical gpt-4o record counted by the OpenAI cookbook's rules
    ("How to count tokens with tiktoken"): 3 + the role per message, 3 for the reply primer; the tools as
    compact JSON plus 7 per function and 12 per request (num_tokens_for_tools)."""
    from ctxwatch.tokens import get_tokenizer

    enc = get_tokenizer("o200k_base")  # (tiktoken's own files, loaded offline; the framing rules are the test's)
    req = rec["request"]

    def msg(m: dict) -> int:
        return 3 + enc.count(m["role"]) + enc.count(m["content"])

    system = msg(req["messages"][0])
    tools = sum(enc.count(json.dumps(t, separators=(",", ":"), ensure_ascii=False)) + 7 for t in req["tools"]) + 12
    history = sum(msg(m) for m in req["messages"][1:])
    return system + tools, history, system + tools + history + 3


@pytest.mark.parametrize(("extra", "n_tools"), [(0, 1), (40, 1), (0, 70)])
async def test_the_detail_rows_add_up_to_the_prompt(tmp_path: Path, extra: int, n_tools: int) -> None:
    """system + schemas + messages fell short of the prompt by the tool preamble and the reply primer (12 + 3
    with OpenAI tools), which had no row. A framing row holds them: with the model's own tokenizer the rows add
    up to the reported prompt exactly; where the provider counted more, a last row says by how much.  Above 64
    tools (costed one at a time) each tool's row carried the preamble again."""

    rec = record(2, turn_words=40)
    base = rec["request"]["tools"][0]
    rec["request"]["tools"] = [{"type": "function", "function": {**base["function"], "name": f"tool_{k}"}}
                               for k in range(n_tools)]
    floor, history, prompt = _by_hand(rec)
    rec["response"]["usage"]["prompt_tokens"] = prompt + extra
    log = tmp_path / "one.jsonl"
    log.write_text(line(rec))
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 1)
        screen = await open_detail(pilot)
        head = str(screen.query_one("#detail-head", PackedText).render())
        assert f"prompt {prompt + extra:,}" in head
        kinds = [it.kind for it in screen.items]
        assert kinds[:2] == ["system", "tool"] and kinds.count("tool") == n_tools and kinds.count("message") == 5
        framing = [it for it in screen.items if it.kind == "framing"]
        assert len(framing) == 1 and framing[0].label == "framing: tools 12 + primer 3"
        def raw(it: Any) -> int:
            return it.raw if it.raw is not None else it.tokens

        assert raw(framing[0]) == 12 + 3
        assert sum(raw(it) for it in screen.items if it.kind in ("system", "tool")) + 12 == floor
        assert sum(it.tokens for it in screen.items if it.kind == "message") == history
        # Where the provider counted more, the model's own tokenizer counted the system prompt and the messages
        # exactly, so the tool schemas take the gap (as plan sizes them): no gap row, the system prompt and the
        # messages as counted.
        assert not [it for it in screen.items if it.kind == "gap"]
        assert sum(it.tokens for it in screen.items if it.kind == "tool") + framing[0].tokens - 3 == (
            floor - screen.items[0].tokens + extra)
        assert sum(it.tokens for it in screen.items) == prompt + extra


async def test_the_written_plan_says_what_it_was_made_with(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The plan JSON written by `w` held the plan only: not which call of which file, nor the knobs, model and
    window it was made with."""
    monkeypatch.chdir(tmp_path)
    log = write_log(tmp_path / "agent-run.jsonl", 12)  # one record per line: call #12 is on line 12
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 12)
        await pilot.press("up")  # call #11
        screen = await open_preview(pilot)
        # keep_recent 6 - 1, budget 0.6 + 0.05, reserve max_tokens 1,000 + 1% of the 20,000 window, summary
        # 2,000 + 500, drop
        await pilot.press("minus", "B", "R", "U", "m")
        assert await wait_for(pilot, lambda: screen.plan.policy.mode == "drop", 10.0)
        await pilot.press("w")
        written = tmp_path / "ctxwatch-plan-call11.json"
        assert await wait_for(pilot, lambda: written.exists())
        doc = json.loads(written.read_text())
        assert doc["call"] == {"number": 11, "index": 10, "file": str(log), "line": 11, "context": "main",
                               "model": "gpt-4o", "window": 20_000}
        assert doc["settings"] == {"keep_recent": 5, "unit": "exchange", "budget_fraction": 0.65, "trigger": 0.8,
                                   "reserve_tokens": 1_200, "summary_tokens": 2_500, "mode": "drop",
                                   "compact_at": "budget"}
        assert doc["budget_tokens"] == 13_000  # 0.65 x 20,000 (the plan itself is still there)
    # (the plan --json document of the call, its keys in its order, then call and settings: as docs/plan.md says)
    res = CliRunner().invoke(main, ["plan", "--json", "--call", "11", str(log)])
    assert res.exit_code == 0, res.output
    plan = json.loads(res.output)
    assert list(doc) == [*plan, "call", "settings"]
    assert {k: doc[k] for k in ("number", "index", "line", "file", "session", "context", "model")} == \
        {k: plan[k] for k in ("number", "index", "line", "file", "session", "context", "model")}




async def test_the_preview_names_messages_as_the_detail_view_does(shared_logs: Path) -> None:
    """The detail view said "tool result (Bash)" where the eviction preview said "user" for the same message.
    Both name it now; the names come from the raw file: each tool_result answers the tool_use of that id."""
    from textual.widgets import DataTable

    path = shared_logs / "claude-code" / "spotter_4d5611e5_head200.jsonl"
    tool_names: dict[str, str] = {}
    for raw in path.read_text().splitlines():
        d = json.loads(raw)
        content = (d.get("message") or {}).get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                tool_names[block["id"]] = block["name"]
    app = CtxwatchApp(str(path))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        app.query_one("#calls").move_cursor(row=1)
        detail = await open_detail(pilot)
        in_detail = [it.label for it in detail.items if it.kind == "message"]
        assert any(label.startswith("tool result (") for label in in_detail)
        await pilot.press("escape")
        await pilot.pause()
        preview = await open_preview(pilot)
        table = preview.query_one("#plan-table", DataTable)
        shown = [str(table.get_row_at(r)[1]) for r in range(table.row_count)]
        pc = preview._pc
        assert pc is not None and pc.messages
        by_source = {m.source_index: shown[i] for i, m in enumerate(preview.plan.messages)
                     if m.source_index is not None}
        for i, msg in enumerate(pc.messages):
            ids = [p.call_id for p in msg.parts if p.kind == "tool_result"]
            if ids:
                assert by_source[i] == "tool result (" + ", ".join(tool_names[x] for x in ids) + ")"
        assert [by_source[i] for i in sorted(by_source)] == in_detail[:len(by_source)]


@pytest.mark.parametrize("log", ["claude", "canonical"])
async def test_message_numbers_agree_between_the_detail_and_the_preview(shared_logs: Path, tmp_path: Path,
                                                                       log: str) -> None:
    """The detail view numbered its rows (the system prompt 0, each tool schema, then the messages) where the
    eviction preview numbers the messages (the floor 0, tool schemas ``-``): message #N of one was another
    message in the other.  Both number them as plan does now."""
    from textual.widgets import DataTable

    path = shared_logs / "claude-code" / "spotter_4d5611e5_full.jsonl" if log == "claude" else \
        write_log(tmp_path / "run.jsonl", 4)
    app = CtxwatchApp(str(path))
    async with app.run_test(size=(140, 40)) as pilot:
        await loaded(pilot)
        detail = await open_detail(pilot)
        table = detail.query_one("#items", DataTable)
        in_detail = [(str(table.get_row_at(r)[0]), str(table.get_row_at(r)[1])) for r in range(table.row_count)]
        await pilot.press("escape")
        await pilot.pause()
        preview = await open_preview(pilot)
        ptable = preview.query_one("#plan-table", DataTable)
        in_preview = [(str(ptable.get_row_at(r)[0]), str(ptable.get_row_at(r)[1])) for r in range(ptable.row_count)]
        numbered = [(n, label) for n, label in in_preview if n != "-"]
        messages = [(n, label) for n, label in in_detail if n not in ("-", "0")]
        assert len(messages) >= 3
        assert messages == [(n, label) for n, label in numbered if n != "0"][:len(messages)]
        if log == "canonical":  # (one row per tool schema in the detail, one row for them all in the preview)
            assert ("-", "schema: read_file") in in_detail and ("-", "tool schemas") in in_preview


async def test_find_in_the_items_text(shared_logs: Path) -> None:
    """``/`` in the call's detail finds text in its items (toolong's find): Enter goes to the next item holding
    it, its first occurrence selected in the body, ``n`` to the one after; Escape closes the box only."""
    from textual.widgets import DataTable, TextArea

    path = shared_logs / "claude-code" / "spotter_4d5611e5_full.jsonl"
    app = CtxwatchApp(str(path))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 139)
        detail = await open_detail(pilot)
        await pilot.press("slash", *"Phoenix", "enter")
        await pilot.pause()
        hits = [it for it in detail.items if "phoenix" in f"{it.label}\n{it.text}".casefold()]
        assert detail.matches == len(hits) > 1
        first = detail.selected_item()
        assert first is hits[0]
        area = detail.query_one("#body", TextArea)
        assert area.selected_text.casefold() == "phoenix"
        await pilot.press("n")
        await pilot.pause()
        assert detail.selected_item() is hits[1]
        await pilot.press("slash", "escape")  # (Escape closes the find box, not the detail)
        await pilot.pause()
        assert isinstance(app.screen, DetailScreen) and detail.query_one("#items", DataTable).has_focus


def _reported_reasoning(path: Path) -> list[int]:
    """By hand from the rollout: each ``reasoning`` item's size as the provider reported it, the
    ``reasoning_output_tokens`` of the latest ``token_count`` before it (a call's usage event comes before its
    output items; the first reasoning item after it is the one that call produced)."""
    sizes, last, taken = [], 0, True
    for raw in path.read_text().splitlines():
        rec = json.loads(raw)
        p = rec.get("payload") or {}
        if rec.get("type") == "event_msg" and p.get("type") == "token_count" and p.get("info"):
            last, taken = p["info"]["last_token_usage"]["reasoning_output_tokens"], False
        elif rec.get("type") == "response_item" and p.get("type") == "reasoning":
            sizes.append(0 if taken else last)
            taken = True
    return sizes


async def test_a_codex_reasoning_rows_reported_size_says_it_is_reported(shared_logs: Path) -> None:
    """A Codex reasoning item's count is the provider's ``reasoning_output_tokens`` (its encrypted content
    cannot be counted here) wherever that is above the local count of its summary: the row and the item's
    head say so, and the header's message count says how much of it is reported, the other rows being this
    tokenizer's counts."""
    from rich.text import Text
    from textual.widgets import DataTable, Static

    path = shared_logs / "codex-rollout" / "rollout-2025-11-17T15-30-28-019a93b9_codex0.58.0.jsonl"
    app = CtxwatchApp(str(path))
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, 39)
        detail = await open_detail(pilot)
        rows = [it for it in detail.items if it.label == "assistant [reasoning]"]
        sizes = _reported_reasoning(path)
        # (the 38th is the output of call #39 itself: in no prompt yet)
        assert len(rows) == 37 and len(sizes) == 38
        sizes = sizes[:37]
        # every reported part is the log's own figure for that item; the rest are counted here
        assert all(it.reported in (0, want) for it, want in zip(rows, sizes, strict=True))
        assert [it.reported for it in rows][:4] == [0, 0, 64, 0] == [0, 0, sizes[2], 0]
        assert all(it.reported == want for it, want in zip(rows, sizes, strict=True) if want > 200)
        table = detail.query_one("#items", DataTable)
        third = rows[2]  # item #9 of the call (row 9 of the table)
        label = table.get_row(str(third.position))[1]
        assert isinstance(label, Text) and label.plain == "assistant [reasoning] · reported"
        assert table.get_row(str(rows[0].position))[1].plain == "assistant [reasoning]"
        head = str(detail.query_one("#detail-head", PackedText).render())
        msgs = [it for it in detail.items if it.kind == "message"]
        # (the raw counts: the rows are scaled to the inferred history, as plan scales them)
        rows_sum = sum(it.raw if it.raw is not None else it.tokens or 0 for it in msgs)
        rs = sum(it.reported for it in rows)
        assert f"({rows_sum:,}: {rows_sum - rs:,} by o200k_base, {rs:,} reasoning as reported, counted" in head
        table.move_cursor(row=table.get_row_index(str(third.position)))
        await pilot.resize_terminal(200, 24)  # (the item's head whole: at 80 columns how it was counted is cut)
        await pilot.pause(0.3)
        item_head = str(detail.query_one("#item-head", Static).render())
        # (scaled to the inferred history, as plan shows it, the raw count split into its two parts)
        assert third.raw is not None
        assert (f"{third.tokens}≈ tokens (scaled x" in item_head
                and f"raw 64 reasoning reported + {third.raw - 64} by o200k_base)" in item_head)


async def test_the_detail_of_a_request_without_a_system_prompt_says_it_carries_none(tmp_path: Path) -> None:
    """A request logged whole without a system message (evicted by the client): its system row said "0 tokens
    · no text in the log for this item", as if the log had lost it, beside the "system prompt evicted" flag.
    It says the request carries none."""
    from textual.widgets import Static

    log = write_log(tmp_path / "agent-run.jsonl", 3)
    records = [json.loads(ln) for ln in log.read_text().splitlines()]
    msgs = records[2]["request"]["messages"]
    assert msgs[0]["role"] == "system"
    records[2]["request"]["messages"] = msgs[1:]  # call #3: the same request with its system message dropped
    log.write_text("".join(line(r) for r in records))
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 3)
        assert app.calls[2].system_present is False and app.calls[1].system_present is True
        await pilot.press("enter")
        screen = app.screen
        assert isinstance(screen, DetailScreen) and screen.call.index == 2
        assert await wait_for(pilot, lambda: screen.loaded)
        first = screen.items[0]
        assert (first.kind, first.label, first.tokens) == ("system", "system prompt: absent from this request", 0)
        screen.query_one("#items").move_cursor(row=0)
        await pilot.pause()
        note = str(screen.query_one("#item-head", Static).render())
        assert "carries no system prompt" in note and "no text in the log" not in note
