"""Pilot tests of the dashboard: every key, with assertions on the app's state and on files written."""

from __future__ import annotations

import csv
import json
import math
import os
import statistics
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_ui_common import (
    WINDOW,
    append,
    line,
    listening,
    loaded,
    open_detail,
    open_preview,
    record,
    two_sessions,
    wait_for,
    write_log,
)

from ctxwatch.config import Settings
from ctxwatch.model import Src
from ctxwatch.ui.app import CtxwatchApp, MainScreen
from ctxwatch.ui.screens import DetailScreen, HelpScreen, PlanScreen, SessionPicker
from ctxwatch.ui.widgets import CallsTable, ContextBar, TrendChart


@pytest.fixture
def log(tmp_path: Path) -> Path:
    return write_log(tmp_path / "agent-run.jsonl", 12)


def table(app: CtxwatchApp) -> CallsTable:
    assert app.main is not None
    return app.main.query_one(CallsTable)


async def test_opens_on_latest_call_and_shows_status(log: Path) -> None:
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 12)
        assert app.format_name == "canonical"
        assert app.selected_index == 11 and app.follow and not app.paused
        assert table(app).row_count == 12 and table(app).cursor_row == 11
        assert [table(app).cell(r, "index") for r in (0, 11)] == ["1", "12"]  # numbered from 1
        status = str(app.main.query_one("#status").render())
        assert "agent-run.jsonl" in status and "12 calls" in status and "0 bad lines" in status
        assert "window 20,000 (log)" in status and str(log.parent) not in status
        bar = app.main.query_one(ContextBar)
        assert bar.call is not None and bar.call.index == 11


async def test_arrows_and_jk_select_and_stop_following(log: Path) -> None:
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 12)
        await pilot.press("up")
        assert app.selected_index == 10 and not app.follow
        await pilot.press("k", "k")
        assert app.selected_index == 8
        await pilot.press("j")
        assert app.selected_index == 9 and not app.follow
        assert app.main.query_one(ContextBar).call.index == 9
        await pilot.press("down", "down")  # back on the newest call: following again
        assert app.selected_index == 11 and app.follow


async def test_f_toggles_follow_and_jumps_to_latest(log: Path) -> None:
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 12)
        await pilot.press("up", "up", "up")
        assert app.selected_index == 8 and not app.follow
        await pilot.press("f")
        assert app.follow and app.selected_index == 11
        await pilot.press("f")
        assert not app.follow and app.selected_index == 11


async def test_appended_call_appears_within_a_second(log: Path) -> None:
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 12)
        # Another process's logger appends while the app runs (a thread here, writing in one call).
        # The latency figure is bench_follow.py's; here the row must come while the app runs.
        writer = threading.Thread(target=append, args=(log, line(record(12))))
        writer.start()
        assert await wait_for(pilot, lambda: table(app).row_count == 13, 10.0), "new row did not appear"
        writer.join()
        assert app.selected_index == 12  # following: the new call is selected
        assert app.calls[12].usage.prompt_total == 1130 + 1064 * 12
        # Not following: a new row appears but the selection stays.
        await pilot.press("up")
        append(log, line(record(13)))
        assert await wait_for(pilot, lambda: table(app).row_count == 14, 10.0)
        assert app.selected_index == 11


def status(app: CtxwatchApp) -> str:
    return str(app.main.query_one("#status").render())


async def test_appended_call_arrives_by_file_event(log: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import ctxwatch.ui.feed as feed_mod

    monkeypatch.setattr(feed_mod, "SWEEP_INTERVAL", 60.0)  # no sweep during the test: only an event can wake it
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 12)
        assert app.watch_mode == "events" and app.watch_note is None
        assert "live:" not in status(app)  # the usual case is not on the status line ...
        assert "file events on the log's folder" in " ".join(str(app.main.query_one("#side").render()).split())
        await pilot.pause(0.3)  # the watch is set up once the backfill is done
        writer = threading.Thread(target=append, args=(log, line(record(12))))
        writer.start()
        # Long before the 60 s sweep: only a file event can have woken the feed.
        assert await wait_for(pilot, lambda: table(app).row_count == 13, 20.0), "no event-driven update"
        writer.join()
        assert app.selected_index == 12


async def test_appended_call_arrives_with_poll(log: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import watchfiles

    started: list[object] = []
    monkeypatch.setattr(watchfiles, "watch", lambda *a, **k: started.append(a) or iter(()))
    app = CtxwatchApp(str(log), poll=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 12)
        assert app.watch_mode == "polling" and "--poll" in (app.watch_note or "")
        assert "live: polling 0.25 s" in status(app) and "fallback" not in status(app)
        writer = threading.Thread(target=append, args=(log, line(record(12))))
        writer.start()
        assert await wait_for(pilot, lambda: table(app).row_count == 13, 10.0)
        writer.join()
        append(log, line(record(13)))
        assert await wait_for(pilot, lambda: table(app).row_count == 14, 10.0)
    assert started == []  # --poll never starts a file watcher


class SilentWatch:
    """A ``watchfiles.watch`` stand-in on a filesystem that sends no events (an NFS mount): it starts, then only
    ever reports "no change", and each of its wake-ups is given by the test (:meth:`tick`), so that which append
    a sweep finds does not depend on how fast the machine runs.  ``asked`` counts the feed's requests for a
    wake-up: when it grows, the feed has handled the previous one (its sweep included)."""

    def __init__(self) -> None:
        self.wakeups = threading.Semaphore(0)
        self.asked = 0

    def __call__(self, *paths: str, stop_event: threading.Event, **kw: object) -> Iterator[set[tuple[int, str]]]:
        """The watch: one empty change set per wake-up the test gives, until ``stop_event`` is set."""
        while True:
            self.asked += 1
            while not self.wakeups.acquire(timeout=0.01):
                if stop_event.is_set():
                    return
            yield set()

    async def tick(self, pilot: Any) -> None:
        """Wake the feed once and wait until it has handled the wake-up and asks for the next one."""
        asked = self.asked
        self.wakeups.release()
        assert await wait_for(pilot, lambda: self.asked > asked, 10.0)


async def test_silent_events_fall_back_to_polling_with_a_notice(log: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two sweeps in a row that find the log grown while no event said so: the feed polls, and says so.  (The
    watch used to wake the feed every 250 ms by itself: on a loaded machine a sweep fell between the two
    appends, found nothing, and started the count again.  The test now gives each wake-up.)"""
    import watchfiles

    import ctxwatch.ui.feed as feed_mod

    watch = SilentWatch()
    monkeypatch.setattr(watchfiles, "watch", watch)
    monkeypatch.setattr(feed_mod, "SWEEP_INTERVAL", 0.0)  # every wake-up sweeps
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 12)
        assert app.watch_mode == "events"
        assert await wait_for(pilot, lambda: watch.asked == 1, 10.0)  # (the live phase waits for its first wake-up)
        await watch.tick(pilot)  # (the first: the feed reads what came before the watch, then sweeps: nothing)
        append(log, line(record(12)))
        await watch.tick(pilot)  # one sweep found growth that no event announced: not yet a reason to poll
        assert app.feed is not None and app.feed.watch_mode == "events"
        append(log, line(record(13)))
        watch.wakeups.release()  # the second sweep in a row
        assert await wait_for(pilot, lambda: app.watch_mode == "polling", 10.0)
        assert app.watch_note == "no file events received although the log grew; switched to polling every 0.25 s"
        assert await wait_for(pilot, lambda: 12 in app.calls and 13 in app.calls, 10.0)
        assert "live: polling 0.25 s (fallback)" in status(app)
        assert "no file events received" in str(app.main.query_one("#side").render())
        append(log, line(record(14)))
        assert await wait_for(pilot, lambda: 14 in app.calls, 10.0)


async def test_rotation_shows_the_reset_and_keeps_every_call_once(log: Path) -> None:
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 12)
        await pilot.pause(0.3)

        def rotate() -> None:  # a logger rotating its file: last write, rename, new file
            append(log, line(record(12)))
            os.rename(log, log.with_name("agent-run.1.jsonl"))
            log.write_text(line(record(13)) + line(record(14)))

        writer = threading.Thread(target=rotate)
        writer.start()
        writer.join()
        assert await wait_for(pilot, lambda: len(app.calls) == 15, 10.0)
        append(log, line(record(15)))
        assert await wait_for(pilot, lambda: len(app.calls) == 16, 10.0)
        await pilot.pause(0.3)
        assert app.resets[0] == "rotated" and app.last_reset is not None
        assert f"last reset: {app.resets[-1]} at " in status(app)
        assert [app.calls[i].usage.prompt_total for i in sorted(app.calls)] == [1130 + 1064 * i for i in range(16)]
        assert table(app).row_count == 16 and app.selected_index == 15


async def test_p_pauses_the_display_and_resume_catches_up(log: Path) -> None:
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 12)
        await pilot.press("p")
        assert app.paused
        append(log, line(record(12)))
        assert await wait_for(pilot, lambda: len(app.state.pending) > 0, 10.0)  # read, but not shown
        assert table(app).row_count == 12 and 12 not in app.calls
        assert "PAUSED (+1 new)" in str(app.main.query_one("#status").render())
        await pilot.press("p")
        assert not app.paused and table(app).row_count == 13 and app.selected_index == 12


async def test_one_f_after_p_resumes_and_follows(log: Path) -> None:
    """While following, p paused the display; the first f then turned following off (the pause stayed, showing
    "PAUSED (+1 new)"), and only a second f resumed.  One f now ends the pause and follows the newest call."""
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 12)
        assert app.follow
        await pilot.press("p")
        append(log, line(record(12)))
        assert await wait_for(pilot, lambda: len(app.state.pending) > 0, 10.0)
        await pilot.press("f")
        await pilot.pause()
        assert not app.paused and app.follow
        assert table(app).row_count == 13 and app.selected_index == 12
        assert "PAUSED" not in str(app.main.query_one("#status").render())


async def test_t_toggles_the_chart_x_axis(log: Path) -> None:
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 12)
        chart = app.main.query_one(TrendChart)
        await pilot.pause()
        assert app.xaxis == "index" and chart.series is not None and chart.series.x[-1] == 12  # call #12
        assert chart.series.xlabel == "call #"
        await pilot.press("t")
        await pilot.pause()
        assert app.xaxis == "time"
        assert chart.series.x[-1] == 11 * 30 / 60  # minutes since the first call (30 s apart)
        assert chart.series.xlabel == "minutes since 00:00:00"
        await pilot.press("t")
        assert app.xaxis == "index"


async def test_chart_thresholds_follow_settings(log: Path) -> None:
    app = CtxwatchApp(str(log), settings=Settings(budget_fraction=0.5, trigger=0.5))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 12)
        await pilot.pause()
        s = app.main.query_one(TrendChart).series
        assert (s.budget, s.trigger, s.limit) == (WINDOW // 2, WINDOW // 4, WINDOW - 1000)


async def test_enter_opens_detail_with_every_item(log: Path) -> None:
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 12)
        await pilot.press("up", "up", "up", "up", "up", "up", "up", "up", "up")  # call 2
        await pilot.press("enter")
        assert isinstance(app.screen, DetailScreen)
        screen = app.screen
        assert await wait_for(pilot, lambda: screen.loaded)
        # call 2: system prompt, one tool schema, then user/assistant/user/assistant/user.
        labels = [it.label for it in screen.items]
        assert labels[:7] == ["system prompt", "schema: read_file", "user", "assistant", "user", "assistant", "user"]
        # then the tool preamble and reply primer; the reported prompt (1130 + 1064 x 2) is more than the model's
        # own tokenizer counted, and the tool schema takes the difference, as plan sizes it (its raw count kept)
        assert [it.kind for it in screen.items[7:]] == ["framing"]
        assert screen.items[1].raw is not None and screen.items[1].tokens > screen.items[1].raw
        assert sum(it.tokens for it in screen.items) == 1130 + 1064 * 2
        assert screen.items[2].text.startswith("step 0: ")
        assert screen.error is None
        await pilot.press("down", "down")  # on the first user message
        assert screen.selected_item().label == "user"
        await pilot.press("o")  # biggest first, from the top
        assert screen.order == "size"
        biggest = max(screen.items, key=lambda it: it.tokens or 0)
        assert screen.selected_item() is biggest
        await pilot.press("end")  # the smallest (of those tied, the last)
        assert screen.selected_item().tokens == min(it.tokens or 0 for it in screen.items)
        assert screen.query_one("#items").cursor_row == len(screen.items) - 1
        await pilot.press("home")
        assert screen.selected_item() is biggest
        await pilot.press("o")  # back to prompt order: the cursor stays on its item
        assert screen.order == "prompt" and screen.selected_item() is biggest
        await pilot.press("space")
        assert screen.expanded
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)


async def test_detail_folds_huge_content(tmp_path: Path) -> None:
    huge = "x" * 3_000_000 + " end"
    log = tmp_path / "big.jsonl"
    log.write_text(line(record(0, turn_words=5, user_text=huge, window=None)))
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(100, 30)) as pilot:
        await loaded(pilot, 1)
        screen = await open_detail(pilot, 15)
        await pilot.press("o", "ctrl+home")  # biggest first: the 3 MB message on top
        it = screen.selected_item()
        assert it.chars == len(huge) and len(it.text) == 200_000
        area = screen.query_one("#body")
        assert len(area.text) <= 2_000 + 2
        await pilot.press("space")
        assert len(area.text) <= 200_000 + 2 and "end" not in area.text
        assert app.is_running


async def test_eviction_preview_of_a_claude_code_call_starts_from_its_reported_prompt(shared_logs: Path) -> None:
    """The history of a Claude Code call is the provider's count; the preview scales the messages' counts to it,
    so its 'before' is the prompt the main screen shows (not the smaller o200k sum)."""
    path = shared_logs / "claude-code" / "spotter_4d5611e5_head200.jsonl"
    app = CtxwatchApp(str(path))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        call = app.selected_call()
        assert call is not None and call.history_src == Src.INFERRED and call.prompt_reported
        screen = await open_preview(pilot)
        assert screen.plan.before_tokens == call.prompt_reported


async def test_eviction_preview_of_a_counted_call_starts_from_its_reported_prompt(shared_logs: Path) -> None:
    """claude-trace logs the system prompt and tools of a Claude model, counted here with o200k_base: the preview
    scales every count to the reported prompt (as `plan` does) and says so, so that its 'before' is the
    prompt the main screen and check use."""
    path = shared_logs / "request-response" / "claude-trace_test-traffic_head14.jsonl"
    app = CtxwatchApp(str(path))
    async with app.run_test(size=(160, 40)) as pilot:
        await loaded(pilot)
        call = app.calls[12]  # the last sonnet call (the haiku lines after it are quota probes)
        assert call.prompt_reported and call.prompt_estimated and call.prompt_reported != call.prompt_estimated
        table(app).move_cursor(row=12)
        await pilot.pause()
        assert app.selected_index == 12
        screen = await open_preview(pilot)
        assert screen.plan.before_tokens == call.prompt_reported
        assert "scaled to the provider's count" in str(screen.query_one("#plan-head").render())


async def test_e_opens_eviction_preview_and_knobs_replan(log: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 12)
        screen = await open_preview(pilot)
        # Call 11: about 12,800 tokens against a budget of 12,000: over budget, so something is evicted.
        first = screen.plan
        assert first.budget_tokens == 12_000 and first.before_tokens > 12_000
        assert screen.knobs.keep_recent == 6 and screen.knobs.reserve_tokens == 1000
        await pilot.press("minus", "minus")
        assert await wait_for(pilot, lambda: screen.plan is not first and screen.plan.policy.keep_recent == 4)
        await pilot.press("plus")
        assert await wait_for(pilot, lambda: screen.plan.policy.keep_recent == 5)
        await pilot.press("B")
        assert await wait_for(pilot, lambda: screen.plan.budget_tokens == 13_000)
        await pilot.press("b", "B")
        assert await wait_for(pilot, lambda: screen.plan.policy.budget_fraction == 0.65)
        await pilot.press("R")  # reserve +1% of the 20,000-token window
        assert await wait_for(pilot, lambda: screen.plan.reserve_tokens == 1200)
        await pilot.press("r")
        assert await wait_for(pilot, lambda: screen.plan.reserve_tokens == 1000)
        await pilot.press("U")
        assert await wait_for(pilot, lambda: screen.plan.policy.summary_tokens == 2500)
        await pilot.press("u")
        assert await wait_for(pilot, lambda: screen.plan.policy.summary_tokens == 2000)
        await pilot.press("m")
        assert await wait_for(pilot, lambda: screen.plan.policy.mode == "drop")
        await pilot.press("w")
        written = tmp_path / "ctxwatch-plan-call12.json"  # call #12 = index 11
        assert written.exists() and screen.written == str(written)
        doc = json.loads(written.read_text())
        assert set(doc) == {"number", "index", "line", "file", "session", "context", "model", "messages",
                            "before_tokens", "after_tokens", "budget_tokens", "fits", "reason",
                            "reinject", "system_tokens", "tools_tokens", "floor_tokens", "summary_tokens",
                            "overhead_tokens", "call", "settings"}  # plan --json's keys, then what it was made from
        assert doc["budget_tokens"] == 13_000
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)


async def test_slash_filters_calls(tmp_path: Path) -> None:
    log = tmp_path / "mixed.jsonl"
    log.write_text("".join(line(record(i, model="gpt-4o" if i % 2 else "gpt-4o-mini", turn_words=5))
                           for i in range(10)))
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 10)
        await pilot.press("slash")
        assert app.focused is not None and app.focused.id == "filter"
        await pilot.press(*"mini", "enter")
        assert app.filter_text == "mini"
        assert app.view == [0, 2, 4, 6, 8] and table(app).row_count == 5
        assert app.selected_index == 8 and app.focused is table(app)
        await pilot.press("slash", "escape")
        assert app.filter_text == "" and table(app).row_count == 10


async def test_the_filter_matches_numbers_as_the_table_shows_them(log: Path) -> None:
    """A number typed as the table shows it (with thousands separators, or a used % with one decimal) finds
    its call, as the bare number does."""
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 12)
        call = app.calls[11]
        reported = call.prompt_reported
        assert reported is not None and reported >= 1000 and call.used_fraction is not None
        for query in (f"{reported:,}", str(reported), f"{100 * call.used_fraction:.1f}%"):
            await pilot.press("slash", *query, "enter")
            assert app.filter_text == query and 11 in app.view, query
            await pilot.press("slash", "escape")
        await pilot.press("slash", *f"{reported + 1:,}", "enter")
        assert 11 not in app.view


async def test_question_mark_opens_help(log: Path) -> None:
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(100, 30)) as pilot:
        await loaded(pilot, 12)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)
        await pilot.press("question_mark")
        await pilot.press("q")  # q quits from the help screen too
        await pilot.pause()
        assert app.return_code is not None or not app.is_running


async def test_s_saves_svg_and_x_exports_csv(log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out"
    out.mkdir()
    monkeypatch.chdir(out)
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(100, 30)) as pilot:
        await loaded(pilot, 12)
        await pilot.press("s")
        svg = out / "ctxwatch-agent-run.svg"
        assert svg.exists() and svg.read_text().startswith("<svg")
        await pilot.press("x")
        path = out / "ctxwatch-calls-agent-run.csv"
        assert path.exists()
        rows = list(csv.DictReader(path.open()))
        assert list(rows[0])[:2] == ["call", "index"]
        assert [int(r["call"]) for r in rows] == list(range(1, 13))  # as in the table's # column
        assert [int(r["index"]) for r in rows] == list(range(12))  # as in report --json
        assert rows[3]["prompt_tokens_reported"] == str(1130 + 1064 * 3)
        assert rows[3]["timestamp"] == "2025-01-01T00:01:30Z" and rows[3]["window"] == str(WINDOW)
        await pilot.press("s")  # never overwrites
        assert (out / "ctxwatch-agent-run-2.svg").exists()
        assert app.saved == [str(svg), str(path), str(out / "ctxwatch-agent-run-2.svg")]


async def test_q_quits(log: Path) -> None:
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(100, 30)) as pilot:
        await loaded(pilot, 12)
        assert app.watch_mode == "events"
        await pilot.pause(0.3)  # the feed is inside watchfiles' wait now
        await pilot.press("q")
        await pilot.pause()
        assert not app.is_running
    assert app._stop.is_set()
    assert app.feed is not None and app.feed.done.wait(1.0), "the reading thread did not end"


@pytest.mark.parametrize("where", ["table", "filter box", "detail"])
async def test_ctrl_q_quits_from_anywhere(log: Path, where: str) -> None:
    """ctrl+q quits from the table, the filter box and the detail view (ctrl+c copies: tests/test_ui_copy.py)."""
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(100, 30)) as pilot:
        await loaded(pilot, 12)
        if where == "filter box":
            await pilot.press("slash", "g")
            assert app.focused is not None and app.focused.id == "filter"
        elif where == "detail":
            await pilot.press("enter")
            assert isinstance(app.screen, DetailScreen)
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert not app.is_running
    assert app._stop.is_set()
    assert app.feed is not None and app.feed.done.wait(1.0), "the reading thread did not end"


@pytest.mark.parametrize("gone", ["calls table", "filter box", "main screen"])
@pytest.mark.parametrize("kind", ["calls", "reset", "new session"])
async def test_a_message_while_the_app_quits_is_kept_with_no_widget_to_show_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gone: str, kind: str) -> None:
    """When the app quits it takes its screens down while its message loop still runs, and a worker's message
    that came in between (new calls, a reset, a newer session of the folder) found the calls table or the filter
    box gone: NoMatches, an error on the way out.  The message is played here at the moment the widget goes
    (its Unmount: it is out of the screen before the app handles anything else); its state is still taken."""
    from dataclasses import replace

    from ctxwatch.ui.app import FilterInput
    from ctxwatch.ui.messages import CallsChanged, ResetSeen, SessionsChanged

    folder, a, b = two_sessions(tmp_path)
    app = CtxwatchApp(str(folder))
    async with app.run_test(size=(120, 40)) as pilot:
        assert await wait_for(pilot, lambda: app.log_path == str(b) and app.loaded and len(app.calls) == 3, 15)
        if kind == "calls":
            message: Any = CallsChanged(app._feed_id, [replace(app.calls[2], index=3)], [], None)
        elif kind == "reset":
            message = ResetSeen(app._feed_id, "truncated", 3, clear=True)
        else:
            c = write_log(folder / "c.jsonl", 1, t0=1_700_002_000)  # (newer than b: followed)
            message = SessionsChanged([str(c), str(b), str(a)])
        widget = {"calls table": CallsTable, "filter box": FilterInput, "main screen": MainScreen}[gone]
        posted: list[bool] = []

        def on_unmount(self: Any) -> None:
            if not posted:
                posted.append(app.post_message(message))

        monkeypatch.setattr(widget, "on_unmount", on_unmount, raising=False)
    # (leaving the block takes the screens down: an error in a handler meanwhile is raised here)
    assert posted == [True]
    if kind == "calls":
        assert sorted(app.calls) == [0, 1, 2, 3]
    elif kind == "reset":
        assert app.calls == {} and app.resets == ["truncated"]
    else:
        assert app.log_path == str(folder / "c.jsonl")


async def test_command_palette_lists_the_actions(log: Path) -> None:
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(100, 30)) as pilot:
        await loaded(pilot, 12)
        titles = [c.title for c in app.get_system_commands(app.screen)]
        for t in ("Call detail", "Follow newest call", "Pause display", "Chart x axis", "Eviction preview",
                  "Filter calls", "Save SVG screenshot", "Export CSV", "Help"):
            assert t in titles
        await pilot.press("ctrl+p")
        await pilot.pause()
        assert type(app.screen).__name__ == "CommandPalette"


async def test_markup_ansi_and_control_characters_are_shown_literally(tmp_path: Path) -> None:
    evil = "[bold]loud[/bold] [@click=app.quit]quit[/] \x1b[31mred\x1b[0m \x07bell\x08 \x1b]0;title\x07"
    log = tmp_path / "evil.jsonl"
    log.write_text(line(record(0, turn_words=3, user_text=evil, model="[@click=app.quit]m\x1b[2J")))
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 1)
        assert table(app).cell(0, "model") == "[@click=app.quit]m\\x1b[2J"
        await pilot.click(CallsTable, offset=(20, 1))  # clicking the row's text triggers no action
        await pilot.press("enter")
        screen = app.screen
        assert isinstance(screen, DetailScreen)
        assert await wait_for(pilot, lambda: screen.loaded)
        user = [it for it in screen.items if it.role == "user"][-1]
        assert user.text == evil  # the item holds the text as logged ...
        for _ in range(screen.items.index(user)):
            await pilot.press("down")
        shown = screen.query_one("#body").text  # ... and the screen shows it escaped, literally
        assert "[bold]loud[/bold] [@click=app.quit]quit[/]" in shown
        assert "\\x1b[31mred\\x1b[0m \\x07bell\\x08 \\x1b]0;title\\x07" in shown
        assert "\x1b" not in shown and "\x07" not in shown
        await pilot.press("escape")
        assert app.is_running and isinstance(app.screen, MainScreen)


async def test_c_cycles_contexts_on_claude_code_sidechains(shared_logs: Path) -> None:
    path = shared_logs / "claude-code" / "ccviewer_5c0375b4_v1.0.108_inline_sidechain.jsonl"
    app = CtxwatchApp(str(path))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        assert app.context == "main" and len(app.contexts) == 3
        main_view = list(app.view)
        assert main_view and all(app.calls[i].context == "main" for i in main_view)
        await pilot.press("c")
        assert app.context == app.contexts[1] and app.context.startswith("sidechain-")
        assert app.view and all(app.calls[i].context == app.context for i in app.view)
        assert app.selected_index == app.view[-1]
        await pilot.press("c", "c")
        assert app.context == "main" and app.view == main_view


async def test_real_claude_trace_capture_and_its_bar(shared_logs: Path) -> None:
    path = shared_logs / "request-response" / "claude-trace_test-traffic_head14.jsonl"
    app = CtxwatchApp(str(path))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 14)
        await pilot.press("up")  # #10 (index 9; the main context holds the Sonnet calls): a 12k floor in o200k
        bar = str(app.main.query_one(ContextBar).render())
        c = app.calls[9]
        assert app.selected_index == 9 and c.window == 200_000
        # o200k_base is not Claude's tokenizer: the floor is calibrated by the median reported/estimated ratio of
        # the Sonnet calls (this call's own ratio is above it, so it is not capped), marked ≈
        sonnet = [x for x in app.calls.values() if x.model == c.model]
        factor = statistics.median(x.prompt_reported / x.prompt_estimated for x in sonnet)
        assert len(sonnet) == 4 and c.prompt_reported > factor * c.prompt_estimated
        # (Claude Code's own limits: its traffic, as its transcript's calls, by hand 200k - 33k and 200k - 23k)
        assert f"floor {round(c.floor_tokens * factor):,}≈" in bar
        assert "T trigger 167k" in bar and "B budget 177k" in bar


async def test_compact_layout_tiny_terminal_and_live_resize(log: Path) -> None:
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 12)
        main = app.main
        middle = main.query_one("#middle")
        assert middle.display and not main.has_class("-compact")
        await pilot.resize_terminal(60, 15)
        await pilot.pause()
        assert main.has_class("-compact") and not middle.display
        assert table(app).compact and table(app).row_count == 12 and app.selected_index == 11
        await pilot.resize_terminal(30, 8)
        await pilot.pause()
        assert main.has_class("-tiny")
        msg = str(main.query_one("#toosmall").render())
        assert "too small" in msg and "40x10" in msg
        await pilot.resize_terminal(10, 3)
        await pilot.pause()
        await pilot.resize_terminal(120, 40)
        await pilot.pause()
        assert not main.has_class("-tiny") and not main.has_class("-compact") and middle.display
        assert not table(app).compact and app.is_running


def session_files(folder: Path, *logs: tuple[str, int]) -> list[Path]:
    """Write ``(relative path, calls)`` logs under ``folder``, each 100 s newer than the one before it (its
    calls' timestamps, by which sessions are ordered, and its modification time)."""
    out = []
    for i, (rel, n) in enumerate(logs):
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        write_log(path, n, turn_words=5, t0=1_700_000_000 + 100 * i - 30 * n)
        os.utime(path, (1_700_000_000 + 100 * i, 1_700_000_000 + 100 * i))
        out.append(path)
    return out


async def test_folder_follows_newest_session_and_o_switches(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    old, new = session_files(folder, ("old.jsonl", 2), ("new.jsonl", 3))
    app = CtxwatchApp(str(folder))
    async with app.run_test(size=(120, 40)) as pilot:
        assert await wait_for(pilot, lambda: app.log_path == str(new) and app.loaded and len(app.calls) == 3)
        assert app.sessions == [str(new), str(old)] and app.auto_session
        await pilot.press("o")
        assert isinstance(app.screen, SessionPicker)
        await pilot.press("j", "j", "k", "j", "enter")  # auto, new, old (j/k move as in the calls table)
        assert await wait_for(pilot, lambda: app.log_path == str(old) and app.loaded and len(app.calls) == 2)
        assert not app.auto_session and isinstance(app.screen, MainScreen)


async def test_the_session_counter_counts_sessions_not_subagent_files(tmp_path: Path) -> None:
    """Two sessions, one with a subagent transcript: the status says 1/2, and the subagent file, picked, is
    'subagent of session 2/2' (its session's file is the older one)."""
    folder = tmp_path / "proj"
    s1, sub, s2 = session_files(folder, ("s1.jsonl", 2), ("s1/subagents/agent-a1.jsonl", 1), ("s2.jsonl", 3))
    app = CtxwatchApp(str(folder))
    async with app.run_test(size=(160, 40)) as pilot:
        assert await wait_for(pilot, lambda: app.log_path == str(s2) and app.loaded and len(app.calls) == 3)
        assert app.sessions == [str(s2), str(sub), str(s1)]
        assert "(session 1/2, auto · o: sessions)" in status(app)
        await pilot.press("o")
        await pilot.press("down", "down", "down", "enter")  # auto, s2, s1, agent-a1 (grouped under its session)
        assert await wait_for(pilot, lambda: app.log_path == str(sub) and app.loaded and len(app.calls) == 1)
        assert "(subagent of session 2/2, picked · o: sessions)" in status(app)


async def test_a_subagent_file_beside_its_session_is_not_a_session(tmp_path: Path) -> None:
    """Claude Code v2.0.x writes agent-<id>.jsonl beside the session file: newer or not, it is not followed as
    the newest session nor counted as one."""
    folder = tmp_path / "proj"
    s1, agent = session_files(folder, ("s1.jsonl", 2), ("agent-a2898e3.jsonl", 1))
    app = CtxwatchApp(str(folder))
    async with app.run_test(size=(160, 40)) as pilot:
        assert await wait_for(pilot, lambda: app.log_path == str(s1) and app.loaded and len(app.calls) == 2)
        assert app.sessions == [str(agent), str(s1)] and "(session 1/1, auto · o: sessions)" in status(app)


async def test_folder_takes_over_a_newer_session(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    (first,) = session_files(folder, ("a.jsonl", 2))
    app = CtxwatchApp(str(folder))
    async with app.run_test(size=(120, 40)) as pilot:
        assert await wait_for(pilot, lambda: app.log_path == str(first) and app.loaded)
        second = write_log(folder / "b.jsonl", 1, turn_words=5)
        assert await wait_for(pilot, lambda: app.log_path == str(second) and len(app.calls) == 1, 6.0)


async def test_a_file_in_no_known_format_is_not_a_session_to_follow(tmp_path: Path) -> None:
    """A newer file that is not a log (an agent's config.json) must not take the dashboard off a readable
    session; a newer log still does."""
    folder = tmp_path / "sessions"
    (first,) = session_files(folder, ("a.jsonl", 2))
    app = CtxwatchApp(str(folder))
    async with app.run_test(size=(120, 40)) as pilot:
        assert await wait_for(pilot, lambda: app.log_path == str(first) and app.loaded)
        (folder / "config.json").write_text('{"theme": "dark", "tools": ["a", "b"]}\n')
        (folder / "settings.json").write_text("")  # a JSON document being created: not a log being appended
        await pilot.pause(2.5)  # (longer than the folder scan interval)
        assert app.log_path == str(first) and app.failed is None and app.sessions == [str(first)]
        second = write_log(folder / "b.jsonl", 1, turn_words=5)
        assert await wait_for(pilot, lambda: app.log_path == str(second) and len(app.calls) == 1, 6.0)


def _no_log_folder(tmp_path: Path) -> Path:
    """A folder of two files that are no logs: a JSON config and a text file."""
    folder = tmp_path / "nolog"
    folder.mkdir()
    (folder / "config.json").write_text('{"a": 1}\n')
    (folder / "notes.jsonl").write_text("hello\n")
    return folder


async def test_a_folder_of_no_logs_says_so_once(tmp_path: Path) -> None:
    """Only non-log files: the status says there is no log yet (not 'session ?/0', not 'reading…'), and the
    bar's notice counts the files that were left out; the status line does not repeat it."""
    folder = _no_log_folder(tmp_path)
    app = CtxwatchApp(str(folder))
    async with app.run_test(size=(120, 30)) as pilot:
        assert await wait_for(pilot, lambda: app.notice is not None)
        assert app.notice == ("no logs in this folder yet (2 files in no known format, or compressed: decompress "
                              "to read); waiting")
        shown = status(app)
        assert "(no log yet, auto · o: sessions)" in shown and "reading" not in shown and "waiting" not in shown
        write_log(folder / "run.jsonl", 2, turn_words=5)
        assert await wait_for(pilot, lambda: app.loaded and len(app.calls) == 2, 6.0)
        assert "(session 1/1, auto · o: sessions)" in status(app)


async def test_the_no_logs_notice_wraps_at_80_columns(tmp_path: Path) -> None:
    """At 80 columns the bar's notice (longer than the line) is on two lines, whole: cut at the edge, it lost why
    the files were left out and that it waits."""
    folder = _no_log_folder(tmp_path)
    app = CtxwatchApp(str(folder))
    async with app.run_test(size=(80, 24)) as pilot:
        assert await wait_for(pilot, lambda: app.notice is not None)
        await pilot.pause()
        bar = app.query_one(ContextBar)
        lines = bar.render().plain.split("\n")
        assert len(lines) == 2 and bar.size.height == 2
        assert all(len(line) <= bar.size.width for line in lines)
        assert " ".join(lines) == app.notice


async def test_exports_do_not_land_in_a_followed_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run from inside the folder it follows, the dashboard writes its plan, screenshot and CSV to the XDG data
    folder: a plan JSON written beside the logs became the newest 'session' and replaced the view by an error."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    write_log(folder / "a.jsonl", 12)
    data = tmp_path / "data"
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    monkeypatch.chdir(folder)
    app = CtxwatchApp(str(folder))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 12)
        screen = await open_preview(pilot)
        await pilot.press("w")
        exports = data / "ctxwatch" / "exports"
        assert screen.written == str(exports / "ctxwatch-plan-call12.json")
        await pilot.press("escape", "s", "x")
        await pilot.pause(2.5)
        assert sorted(p.name for p in folder.iterdir()) == ["a.jsonl"]
        assert sorted(p.suffix for p in exports.iterdir()) == [".csv", ".json", ".svg"]
        assert app.log_path == str(folder / "a.jsonl") and len(app.calls) == 12 and app.failed is None


async def test_an_export_that_cannot_be_written_is_a_notification(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The export folder cannot be created (XDG_DATA_HOME is a file): s, x and w say so and the app runs on."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    write_log(folder / "a.jsonl", 12)
    blocker = tmp_path / "data"
    blocker.write_text("not a folder")
    monkeypatch.setenv("XDG_DATA_HOME", str(blocker))
    monkeypatch.chdir(folder)
    app = CtxwatchApp(str(folder))
    said: list[tuple[str, str]] = []
    real = app.notify

    def notify(message: str, **kw: object) -> None:
        said.append((str(kw.get("severity", "information")), message))
        real(message, **kw)  # type: ignore[arg-type]

    app.notify = notify  # type: ignore[method-assign]
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 12)
        await pilot.press("s", "x")
        screen = await open_preview(pilot)
        await pilot.press("w")
        await pilot.pause()
        assert [(sev, msg.split(":")[0]) for sev, msg in said] == [
            ("error", "screenshot not saved"), ("error", "CSV not written"), ("error", "plan not written")]
        assert app.is_running and screen.written is None and app.saved == []
        assert sorted(p.name for p in folder.iterdir()) == ["a.jsonl"]


async def test_truncation_is_reported_and_reading_restarts(log: Path) -> None:
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 12)
        # Truncated and rewritten with a new call (response id resp-12; a copy of a call already read, with
        # the same response id, would update that call instead of counting it twice).
        log.write_text(line(record(12, turn_words=5, model="gpt-4o-mini")))
        assert await wait_for(pilot, lambda: app.last_reset is not None, 10.0)
        assert app.last_reset.startswith("truncated")
        assert await wait_for(pilot, lambda: len(app.calls) == 13, 10.0)
        assert app.calls[12].model == "gpt-4o-mini"
        assert "last reset: truncated at " in str(app.main.query_one("#status").render())


async def test_escape_cancels_backfill_of_a_big_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import ctxwatch.engine.follow as follow_mod

    class SlowTailer(follow_mod.FileTailer):
        """Backfill slices of 16 KiB, 20 ms each: a big file, slowly, so the test can cancel it."""

        def poll(self, max_bytes: int | None = None):  # type: ignore[no-untyped-def]
            if max_bytes is not None:
                time.sleep(0.02)
                max_bytes = min(max_bytes, 16 * 1024)
            return super().poll(max_bytes)

    monkeypatch.setattr(follow_mod, "FileTailer", SlowTailer)
    big = tmp_path / "big.jsonl"
    big.write_text("".join(line(record(i, turn_words=40, window=None)) for i in range(400)))  # ~0.5 MB
    app = CtxwatchApp(str(big))
    async with app.run_test(size=(100, 30)) as pilot:
        assert await wait_for(pilot, lambda: app.progress is not None, 10)
        progress_bar = app.main.query_one("#progress")
        assert progress_bar.has_class("-active") and not app.loaded
        await pilot.press("escape")
        assert app._cancel.is_set()
        assert await wait_for(pilot, lambda: app.loaded, 10)
        assert not progress_bar.has_class("-active")
        assert app.state.skipped is not None and app.state.skipped in str(app.main.query_one("#status").render())
        assert len(app.calls) < 400
        append(big, line(record(400, turn_words=5, window=None)))
        assert await wait_for(pilot, lambda: any(c.source.line == 401 for c in app.calls.values()), 10.0)


async def test_ten_thousand_calls_stay_responsive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """10,000 calls are put in the table once each and never rebuilt while they stream in; only the rows on
    screen are formatted, and the chart plots about one point per column.  (The event loop's gaps during such
    a backfill are timed by tests/benchmarks/bench_ui.py.)"""
    log = tmp_path / "many.jsonl"
    base = record(0, turn_words=3)
    rows = []
    for i in range(10_000):
        base["timestamp"] = 1_735_689_600 + i
        base["response"]["id"] = f"r{i}"
        rows.append(json.dumps(base) + "\n")
    log.write_text("".join(rows))
    given: list[tuple[str, int]] = []  # (what the table was asked to do, with how many calls)
    set_calls, append_calls = CallsTable.set_calls, CallsTable.append_calls

    def counted_set(self: CallsTable, calls: Any, settings: Settings) -> None:
        calls = list(calls)
        given.append(("set", len(calls)))
        set_calls(self, calls, settings)

    def counted_append(self: CallsTable, calls: Any, settings: Settings) -> None:
        calls = list(calls)
        given.append(("append", len(calls)))
        append_calls(self, calls, settings)

    monkeypatch.setattr(CallsTable, "set_calls", counted_set)
    monkeypatch.setattr(CallsTable, "append_calls", counted_append)
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 10_000)
        await pilot.pause()
        t = table(app)
        assert t.row_count == 10_000
        # Every call reached the table once: appended as it was read (set_calls refills only the calls read
        # before the screen was there), not the whole table again for each update.
        refills = [n for what, n in given if what == "set" and n]
        appends = [n for what, n in given if what == "append"]
        assert len(refills) <= 1 and sum(appends) <= 10_000 <= sum(appends) + sum(refills), given
        # The reader batches its updates (per slice read or quarter second), not one per call...
        assert len(appends) <= 100, len(appends)
        # ...and each formats the rows on screen (their cells are kept once drawn; a frame may catch the table
        # before it scrolled to the new rows: two screenfuls an update at most), never all the rows.
        assert 0 < len(t._cache) <= 2 * t.size.height * (len(given) + 1), (len(t._cache), len(given))
        s = app.main.query_one(TrendChart).series
        assert s is not None and len(s.x) <= 120  # downsampled to about the chart's width
        await pilot.press("up", "up")
        assert app.selected_index == 9997
        await pilot.press("home")
        assert app.selected_index == 0 and not app.follow
        await pilot.press("end")
        assert app.selected_index == 9999 and app.follow


async def test_last_n_shows_only_the_newest_calls(log: Path) -> None:
    app = CtxwatchApp(str(log), last=3)
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 3)
        assert sorted(app.calls) == [9, 10, 11] and app.view == [9, 10, 11]
        append(log, line(record(12)))
        assert await wait_for(pilot, lambda: app.view == [9, 10, 11, 12], 10.0)


async def test_compaction_is_marked_in_table_and_chart(shared_logs: Path) -> None:
    path = shared_logs / "claude-code" / "spotter_4d5611e5_lines700-800_compaction.jsonl"
    app = CtxwatchApp(str(path))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        marked = [i for i in app.view if app.calls[i].compaction]
        assert marked, "the sample has a compaction boundary"
        await pilot.pause(0.6)  # the chart redraws at most twice a second
        s = app.main.query_one(TrendChart).series
        assert s.compactions == [float(i + 1) for i in marked]  # call numbers, from 1
        assert table(app).cell(table(app).position_of(marked[0]), "index") == f"{marked[0] + 1} C"


async def test_unreadable_log_is_shown_not_raised(tmp_path: Path) -> None:
    bad = tmp_path / "notes.jsonl"
    bad.write_text("hello\n")
    app = CtxwatchApp(str(bad))
    async with app.run_test(size=(100, 30)) as pilot:
        assert await wait_for(pilot, lambda: app.failed is not None)
        assert "not recognised" in app.failed and app.is_running


async def test_flags_show_newest_first_with_the_drift_risk_on_the_bar(log: Path) -> None:
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(140, 50)) as pilot:
        await loaded(pilot, 12)
        analysis = app.analyses["main"]
        assert analysis.flags, "the 12-call run crosses the trigger and the budget"
        side = str(app.main.query_one("#side").render())
        newest = max(f.call for f in analysis.flags)
        first_line = side.split("\n")[1]
        assert first_line.startswith(("!! ", "! ", "i ")) and f" #{newest + 1} " in first_line  # numbered from 1
        assert "Forecast" in side
        bar = str(app.main.query_one(ContextBar).render())
        assert "call #12 · gpt-4o" in bar
        (risk,) = [r for r in analysis.drift_risk if r.call == 11]
        assert risk.reason.startswith(f"{risk.level}: ")  # the analysis starts its reason with the level ...
        assert f"drift risk {risk.level}" in bar and f"{risk.level}: {risk.level}" not in bar  # ... said once


async def test_detail_rereads_a_claude_code_call_from_disk(shared_logs: Path) -> None:
    # Claude Code calls depend on earlier lines (needs_prefix): reload_parsed re-reads the file up to the call.
    path = shared_logs / "claude-code" / "spotter_tool_heavy.jsonl"
    app = CtxwatchApp(str(path))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        call = app.selected_call()
        # The summary pass keeps no text (the latest call carries no history at all): it is read when opened.
        assert call is not None and not call.messages and call.history_src == Src.INFERRED
        await pilot.press("enter")
        screen = app.screen
        assert isinstance(screen, DetailScreen)
        assert await wait_for(pilot, lambda: screen.loaded, 10)
        assert screen.error is None
        messages = [it for it in screen.items if it.kind == "message"]
        # Counted independently: the visible history as a plain json walk of the parentUuid chain sees it.
        recs = {d["uuid"]: d for d in (json.loads(x) for x in path.read_text().splitlines() if x.strip())
                if "uuid" in d}
        first = next(d for d in recs.values() if d.get("message", {}).get("id") == call.provenance.message_id)
        chain, u = [], first["parentUuid"]
        while u in recs:
            chain.append(recs[u])
            u = recs[u].get("parentUuid")
        user_msgs = sum(1 for d in chain if d["type"] == "user")
        responses = {d["message"]["id"] for d in chain if d["type"] == "assistant"}
        # Parallel tool calls: results hanging off sibling lines of a response were sent too (the API needs one
        # result per tool_use), so they count although the chain passes through only one of them.
        uses = {b["id"] for d in recs.values() if d["type"] == "assistant" and d["message"]["id"] in responses
                for b in d["message"]["content"] if isinstance(b, dict) and b.get("type") == "tool_use"}
        in_chain = {d["uuid"] for d in chain}
        siblings = [d for d in recs.values() if d["type"] == "user" and d["uuid"] not in in_chain
                    and isinstance(d["message"]["content"], list)
                    and any(isinstance(b, dict) and b.get("tool_use_id") in uses for b in d["message"]["content"])]
        assert len(messages) == user_msgs + len(responses) + len(siblings)
        assert all(it.tokens for it in messages)  # counted on opening
        assert any(it.text for it in messages)  # the bodies came back from disk
        # floor + rows add up to what the provider reported: the rows scaled to the inferred history, as plan
        # scales them (no gap row), each keeping this tokenizer's count
        assert not [it for it in screen.items if it.kind == "gap"]
        assert sum(it.tokens or 0 for it in messages) == call.history_tokens
        assert all(it.raw is not None for it in messages)
        assert sum(it.tokens or 0 for it in screen.items) == call.prompt_reported


@pytest.fixture(scope="module")
def demo_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The 60-call demo run (``ctxwatch demo --write``): a 32,000-token window, ``max_tokens`` 2,000."""
    from ctxwatch.demo import write_run

    path = tmp_path_factory.mktemp("demo") / "d.jsonl"
    write_run(path)
    return path


def chart_rows(chart: TrendChart) -> list[tuple[str, str, str]]:
    """The plot rows of the rendered chart, bottom row first: (label left of the y axis, axis glyph, plot)."""
    lines = chart.render().plain.split("\n")
    top = next(i for i, ln in enumerate(lines) if "┌" in ln)
    bottom = next(i for i, ln in enumerate(lines) if "└" in ln)
    col = lines[top].index("┌")
    return [(ln[:col].strip(), ln[col], ln[col + 1:]) for ln in reversed(lines[top + 1:bottom])]


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (120, 40)])
async def test_chart_y_labels_name_the_rows_they_sit_on(demo_log: Path, size: tuple[int, int]) -> None:
    # The demo's thresholds, by hand: window 32,000 (in the log), budget 0.6 x 32,000 = 19,200, trigger
    # 0.8 x 19,200 = 15,360, window - reserve = 32,000 - 2,000 (max_tokens) = 30,000.
    expected = {"trigger": (15_360, "15k"), "budget": (19_200, "19k"), "window-reserve": (30_000, "30k")}
    app = CtxwatchApp(str(demo_log))
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, 60)
        await pilot.pause(0.6)  # the chart redraws at most twice a second
        chart = app.main.query_one(TrendChart)
        rows = chart_rows(chart)
        # (a row with a threshold line is drawn "├" and labelled by the line; the others are numbers)
        numeric = {r: lab for r, (lab, g, _p) in enumerate(rows) if lab and g != "├"}
        named = {r: lab for r, (lab, g, _p) in enumerate(rows) if lab and g == "├"}
        assert numeric.get(0) == "0"

        def value(label: str) -> float:
            return float(label[:-1]) * 1000 if label.endswith("k") else float(label)

        # Numeric ticks are the exact values of their rows: one value per row, from 0 on the bottom row.
        per_row = {value(lab) / r for r, lab in numeric.items() if r}
        assert len(per_row) == 1, numeric
        (row_value,) = per_row
        # Each threshold line sits on the row nearest its value, drawn there and labelled there by its name and
        # value where they fit the axis (at most a quarter of the chart's width), else by its value alone.
        room = max(12, chart.size.width // 4)
        on_row: dict[int, list[tuple[str, str]]] = {}
        for name, (tokens, short) in expected.items():
            on_row.setdefault(math.floor(0.5 + tokens / row_value), []).append((name, short))
        for row, group in on_row.items():
            label, glyph, plot = rows[row]
            assert row in named and row not in numeric, (group, row, rows)
            # (lines sharing a row: their names and values, else the lowest value, else that value alone)
            names = "/".join(n for n, _s in group)
            forms = [f"{names} {'/'.join(s for _n, s in group)}", f"{names} {group[0][1]}"]
            assert label == next((f for f in forms if len(f) <= room), group[0][1]), (group, label, room)
            assert glyph == "├" and "─" in plot
        assert len(named) == len(on_row), named
        assert chart.axis is not None and chart.axis.rows == len(rows)
        # tall charts name a line on it where the axis does not (its label a value alone), never twice
        for name in expected:
            label, _glyph, plot = rows[math.floor(0.5 + expected[name][0] / row_value)]
            named_there = label[:1].isalpha()
            assert (name in plot) == (len(rows) >= 10 and not named_there), (name, label, plot)


async def test_compact_layout_names_the_most_severe_flag_up_to_the_selected_call(demo_log: Path) -> None:
    # The demo's story (README, "The demo in one minute"): #17 trigger crossed with no compaction (warn), #38
    # system prompt evicted (critical), #60 reserve breached (critical); 6 flags in all.
    app = CtxwatchApp(str(demo_log))
    async with app.run_test(size=(60, 15)) as pilot:
        await loaded(pilot, 60)
        main = app.main
        assert main.has_class("-compact") and not main.query_one("#middle").display
        line = main.query_one("#flagline")
        assert line.display and line.size.height == 1

        def shown() -> str:
            return str(line.render())

        assert shown().startswith("!! #60 reserve breached (+5 more): prompt 36,891")
        assert shown().endswith("…") and len(shown()) <= 58  # one line of the 60-column pane, cut
        await pilot.press(*["up"] * 20)  # call #40: the newest critical flag up to here is the eviction
        assert app.selected_index == 39
        assert shown().startswith("!! #38 system prompt evicted (+5 more): system prompt abs")
        await pilot.press(*["up"] * 20)  # call #20: only the trigger warning so far
        assert shown().startswith("! #17 trigger no compaction (+5 more)")
        await pilot.press(*["up"] * 10)  # call #10: nothing yet
        assert shown() == "flags: none up to #10 (6 later)"
        await pilot.resize_terminal(36, 8)  # too small: the message only, as before
        await pilot.pause()
        assert main.has_class("-tiny") and not line.display
        await pilot.resize_terminal(120, 40)  # full layout: the side panel lists the flags instead
        await pilot.pause()
        assert not line.display and main.query_one("#side").display


SAMPLES = Path(__file__).resolve().parent.parent / "sample_logs"


def batch_results(path: Path) -> dict[str, int]:
    """custom_id -> reported prompt tokens of each succeeded result of a batch output file, read with json."""
    out: dict[str, int] = {}
    for raw in path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(raw)
        if "response" in rec:  # OpenAI: {custom_id, response: {status_code, body: {usage}}}
            if rec["response"] and rec["response"]["status_code"] == 200:
                out[rec["custom_id"]] = rec["response"]["body"]["usage"]["prompt_tokens"]
        elif rec["result"]["type"] == "succeeded":  # Anthropic: prompt = input + cache writes + cache reads
            u = rec["result"]["message"]["usage"]
            out[rec["custom_id"]] = (u["input_tokens"] + u.get("cache_creation_input_tokens", 0)
                                     + u.get("cache_read_input_tokens", 0))
    return out


@pytest.mark.parametrize(("opened", "results", "fmt"), [
    (["openai-batch"], "openai-batch/batch_output.jsonl", "openai-batch"),
    (["openai-batch/batch_input.jsonl", "openai-batch/batch_output.jsonl"], "openai-batch/batch_output.jsonl",
     "openai-batch"),
    (["openai-batch/batch_output.jsonl", "openai-batch/batch_input.jsonl"], "openai-batch/batch_output.jsonl",
     "openai-batch"),
    (["anthropic-batch"], "anthropic-batch/results.jsonl", "anthropic-batch"),
])
async def test_batch_pair_opens_as_one_joined_run(opened: list[str], results: str, fmt: str) -> None:
    paths = [str(SAMPLES / p) for p in opened]
    expected = batch_results(SAMPLES / results)
    folder = (SAMPLES / results).parent
    app = CtxwatchApp(paths[0] if len(paths) == 1 else paths)
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, len(expected))
        assert app.format_name == fmt and app.failed is None
        assert app.batch_files is not None
        assert sorted(app.batch_files) == sorted(str(p) for p in folder.iterdir() if p.suffix == ".jsonl")
        calls = list(app.calls.values())
        # Every succeeded result is one call, joined to its request: the floor (system prompt) and the history
        # are known, and the reported prompt is the result's own usage.
        assert {c.provenance.custom_id: c.prompt_reported for c in calls} == expected
        assert all(c.provenance.joined and c.floor_tokens and c.history_tokens for c in calls)
        assert "?" not in table(app).cell(0, "floor") and "?" not in table(app).cell(0, "history")
        assert not app.sessions  # one run, not sessions to pick from
        shown = status(app)
        assert " + " in shown and "joined by custom_id" in shown and str(folder) not in shown
        await pilot.press("o")  # no session picker: the files are one run
        assert isinstance(app.screen, MainScreen)
        await pilot.press("enter")  # the detail re-reads the request from the input file
        screen = app.screen
        assert isinstance(screen, DetailScreen)
        assert await wait_for(pilot, lambda: screen.loaded, 10)
        assert screen.error is None and any(it.kind == "message" and it.text for it in screen.items)


async def test_status_counts_notes_apart_from_bad_lines(tmp_path: Path) -> None:
    """A batch result whose request is not in the input file is a note (usage only), not a damaged line."""
    requests = (SAMPLES / "openai-batch" / "batch_input.jsonl").read_text().splitlines(keepends=True)
    inp = tmp_path / "batch_input.jsonl"
    inp.write_text("".join(requests[1:]))
    out = tmp_path / "batch_output.jsonl"
    out.write_text((SAMPLES / "openai-batch" / "batch_output.jsonl").read_text())
    expected = batch_results(out)
    app = CtxwatchApp([str(inp), str(out)])
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, len(expected))
        assert [i.kind for i in app.issues] == ["unmatched_result"]
        assert "0 bad lines, 1 note" in status(app)


async def test_several_session_files_are_sessions_newest_followed(tmp_path: Path) -> None:
    old = write_log(tmp_path / "old.jsonl", 2, turn_words=5)
    (tmp_path / "sub").mkdir()
    new = write_log(tmp_path / "sub" / "new.jsonl", 3, turn_words=5)
    os.utime(old, (1_700_000_000, 1_700_000_000))
    os.utime(new, (1_700_000_100, 1_700_000_100))
    app = CtxwatchApp([str(old), str(new)])
    async with app.run_test(size=(120, 40)) as pilot:
        assert await wait_for(pilot, lambda: app.log_path == str(new) and app.loaded and len(app.calls) == 3)
        assert app.batch_files is None and app.sessions == [str(new), str(old)]
        assert "new.jsonl (session 1/2, auto · o: sessions)" in status(app)
        await pilot.press("o")
        assert isinstance(app.screen, SessionPicker)
        await pilot.press("down", "down", "enter")  # auto, new, old
        assert await wait_for(pilot, lambda: app.log_path == str(old) and app.loaded and len(app.calls) == 2)


def test_watch_takes_several_paths(tmp_path: Path) -> None:
    """``ctxwatch in.jsonl out.jsonl`` is accepted (without a terminal it prints the joined report)."""
    from click.testing import CliRunner

    from ctxwatch.cli import main

    pair = [str(SAMPLES / "openai-batch" / "batch_input.jsonl"), str(SAMPLES / "openai-batch" / "batch_output.jsonl")]
    n = len(batch_results(SAMPLES / "openai-batch" / "batch_output.jsonl"))
    for argv in (pair, ["watch", *pair]):
        res = CliRunner().invoke(main, argv)
        assert res.exit_code == 0, res.output
        assert "unexpected extra argument" not in res.output
        assert f"format=openai-batch  calls={n}" in res.output
    res = CliRunner().invoke(main, [pair[0], str(tmp_path / "missing.jsonl")])
    assert res.exit_code == 2 and "missing.jsonl: no such file or directory" in res.output


async def test_the_session_picker_marks_subagent_transcripts(tmp_path: Path) -> None:
    """A session with a subagent transcript under ``<session>/subagents/``: the picker counts 1 session and 1
    subagent transcript and tags the subagent's row (the status line said "session 1/1" over 2 rows)."""
    from textual.widgets import OptionList, Static

    session = write_log(tmp_path / "s1.jsonl", 2, turn_words=5)
    (tmp_path / "s1" / "subagents").mkdir(parents=True)
    agent = write_log(tmp_path / "s1" / "subagents" / "agent-a12345.jsonl", 1, turn_words=5)
    os.utime(agent, (1_700_000_000, 1_700_000_000))
    os.utime(session, (1_700_000_100, 1_700_000_100))
    app = CtxwatchApp(str(tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        assert await wait_for(pilot, lambda: app.log_path == str(session) and app.loaded)
        await pilot.press("o")
        assert isinstance(app.screen, SessionPicker)
        title = str(app.screen.query_one(Static).render())
        assert title.endswith("(newest first): 1 session log, 1 subagent transcript")
        ol = app.screen.query_one(OptionList)
        rows = [str(ol.get_option_at_index(i).prompt) for i in range(ol.option_count)]
        assert [" subagent  " in r for r in rows] == [False, False, True]


async def test_c_on_a_session_file_goes_to_its_subagent_transcripts(tmp_path: Path) -> None:
    """``c`` on a Claude Code session file of one context said only "this log has one context"; with two
    subagent transcripts under ``<session>/subagents/`` it now opens the first of them (opened alone, or from
    its folder), and a log with none says it has one context."""
    session = write_log(tmp_path / "s1.jsonl", 2, turn_words=5)
    (tmp_path / "s1" / "subagents").mkdir(parents=True)
    for name in ("agent-a1.jsonl", "agent-b2.jsonl"):
        write_log(tmp_path / "s1" / "subagents" / name, 1, turn_words=5)
    alone = write_log(tmp_path / "other.jsonl", 1, turn_words=5)
    os.utime(alone, (1_700_000_000, 1_700_000_000))  # (the folder then follows s1.jsonl, the newest session)
    first = tmp_path / "s1" / "subagents" / "agent-a1.jsonl"
    for path, expected, shown in (
            (session, "context: subagent transcript agent-a1.jsonl (file 2/3 of the session; c: next)", first),
            (alone, "this log has one context", alone),
            (tmp_path, "context: subagent transcript agent-a1.jsonl (file 2/3 of the session; c: next)", first)):
        app = CtxwatchApp(str(path))
        said = listening(app)
        async with app.run_test(size=(120, 40)) as pilot:
            assert await wait_for(pilot, lambda app=app: app.loaded)
            await pilot.press("c")
            assert await wait_for(pilot, lambda app=app, shown=shown: app.log_path == str(shown) and app.loaded)
            assert said and said[-1] == expected, said


async def test_toasts_show_file_names_literally(tmp_path: Path) -> None:
    """A new session file whose name carries an OSC title sequence, a screen clear, a bidi override and Rich
    markup reached the terminal raw through the "following the newest session" toast (the pane was retitled
    PWNED and blanked).  Every toast now shows its text escaped, and never as markup."""
    folder = tmp_path / "runs"
    folder.mkdir()
    write_log(folder / "first.jsonl", 2)
    app = CtxwatchApp(str(folder))
    async with app.run_test(size=(120, 40)) as pilot:
        assert await wait_for(pilot, lambda: app.loaded)
        evil = "evil[@click=app.quit]\x1b]0;PWNED\x07\x1b[2J\u202e[red]x.jsonl"
        write_log(folder / evil, 3)
        assert await wait_for(pilot, lambda: any("following the newest" in n.message for n in app._notifications),
                              seconds=30)
        toast = next(n for n in app._notifications if "following the newest" in n.message)
        assert not any(ch in toast.message for ch in "\x1b\x07\u202e")
        assert "[@click=app.quit]" in toast.message and toast.markup is False
        # (the new session is read before the test ends, so that no message of its feed arrives at a closing app)
        assert await wait_for(pilot, lambda: app.loaded and app.log_path == str(folder / evil), seconds=30)
        assert app.is_running  # (the [@click=app.quit] text did nothing)


@pytest.mark.parametrize("width", [40, 60, 80, 160])
async def test_the_session_picker_gives_each_file_one_line_at_any_width(tmp_path: Path, width: int) -> None:
    """At 80 columns the picker's rows wrapped (the size and the subagent tag on a line of their own): the
    path is now cut in the middle to what the date, size and tag leave, and on narrower screens the time and
    then the size are left out."""
    from textual.widgets import OptionList

    long = "spotter_4d5611e5_lines700-800_compaction_with_a_long_descriptive_name.jsonl"
    write_log(tmp_path / long, 2, turn_words=5)
    (tmp_path / "s1" / "subagents").mkdir(parents=True)
    write_log(tmp_path / "s1" / "subagents" / ("agent-" + "a" * 60 + ".jsonl"), 1, turn_words=5)
    app = CtxwatchApp(str(tmp_path))
    async with app.run_test(size=(width, 30)) as pilot:
        assert await wait_for(pilot, lambda: app.loaded)
        await pilot.press("o")
        await pilot.pause()
        ol = app.screen.query_one(OptionList)
        room = ol.scrollable_content_region.width
        rows = [ol.get_option_at_index(i).prompt for i in range(ol.option_count)]
        assert len(rows) == 3
        assert all(r.cell_len <= room for r in rows[1:]), (room, [r.cell_len for r in rows])  # (the files)
        assert " subagent  " in str(rows[2]) or " subagent  " in str(rows[1])  # (the tag after its name)
        # The dates line up: one column for the paths, whatever each one's length (they shifted with each cut).
        import re

        dates = [m.start() for r in rows[1:] if (m := re.search(r"\d{4}-\d\d-\d\d", str(r)))]
        assert len(dates) == 2 and len(set(dates)) == 1, [str(r) for r in rows]


def _canonical_then_rollout(tmp_path: Path) -> tuple[Path, Path, int]:
    """A log of 3 canonical calls to follow, the Codex rollout to put in its place, and the rollout's call count
    (read by the engine on its own)."""
    from ctxwatch.engine import load_run

    samples = Path(__file__).resolve().parents[1] / "sample_logs"
    rollout = samples / "codex_rollout.jsonl"
    log = tmp_path / "a.jsonl"
    log.write_text("".join((samples / "openai_chat_demo.jsonl").read_text().splitlines(keepends=True)[:3]))
    return log, rollout, len(load_run(str(rollout)).calls)


async def test_a_log_replaced_by_another_format_is_read_in_that_format(tmp_path: Path) -> None:
    """The followed file replaced (mv) by a Codex rollout: the dashboard kept its canonical reader (one
    unknown_record per line, no call).  It now detects the new file's format, says so in the header, and
    adds the rollout's calls after the ones already read."""
    import shutil

    log, rollout, n_rollout = _canonical_then_rollout(tmp_path)
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(120, 36)) as pilot:
        assert await wait_for(pilot, lambda: app.loaded and len(app.calls) == 3)
        assert app.format_name == "canonical"
        shutil.copy(rollout, tmp_path / "new")
        os.replace(tmp_path / "new", log)
        assert await wait_for(pilot, lambda: len(app.calls) == 3 + n_rollout, seconds=30)
        assert app.format_name == "codex" and app.resets == ["replaced"]
        assert await wait_for(pilot, lambda: not any(i.kind == "unknown_record" for i in app.issues), seconds=5)


async def test_a_log_emptied_then_written_in_another_format_is_one_reset(tmp_path: Path) -> None:
    """The followed canonical log cut to nothing, then written with a Codex rollout: one reset (truncated), not a
    second "replaced" when the first line shows the new format; the header names it, the empty file's note is
    withdrawn, and a new call's detail is re-read in the new format (its error is None)."""
    log, rollout, n_rollout = _canonical_then_rollout(tmp_path)
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(120, 36)) as pilot:
        assert await wait_for(pilot, lambda: app.loaded and len(app.calls) == 3)
        log.write_bytes(b"")
        assert await wait_for(pilot, lambda: any(i.kind == "empty_file" for i in app.issues), seconds=15)
        log.write_bytes(rollout.read_bytes())
        assert await wait_for(pilot, lambda: len(app.calls) == 3 + n_rollout, seconds=30)
        assert app.format_name == "codex" and app.resets == ["truncated"]
        assert await wait_for(pilot, lambda: not any(i.kind == "empty_file" for i in app.issues), seconds=5)
        await pilot.press("end", "enter")
        assert await wait_for(pilot, lambda: isinstance(app.screen, DetailScreen) and app.screen.loaded)
        assert app.screen.call.index == 2 + n_rollout and app.screen.error is None


async def test_the_eviction_preview_reserves_what_report_reserves(tmp_path: Path) -> None:
    """A max_tokens beyond the window reserves the whole window (report, check, plan); the preview replaced it
    with 0.15 x window and showed a plan that fits in a budget of 19,200."""
    rec = {"window": 32000, "request": {"model": "gpt-4o", "max_tokens": 40000, "messages": [
        {"role": "system", "content": "Be brief."}, {"role": "user", "content": "word " * 300}]},
        "response": {"choices": [{"message": {"role": "assistant", "content": "ok"}}]}}
    log = tmp_path / "b40k.jsonl"
    log.write_text(json.dumps(rec) + "\n")
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, calls=1)
        assert app.calls[0].reserve_tokens == 32000
        await pilot.press("e")
        assert await wait_for(pilot, lambda: isinstance(app.screen, PlanScreen) and app.screen.plan is not None)
        screen = app.screen
        assert isinstance(screen, PlanScreen) and screen.plan is not None
        assert screen.knobs.reserve_tokens == 32000
        assert (screen.plan.reserve_tokens, screen.plan.budget_tokens, screen.plan.fits) == (32000, 0, False)


async def test_the_dashboard_waits_for_a_log_that_does_not_exist_yet(tmp_path: Path) -> None:
    """`ctxwatch demo --write run.jsonl & ctxwatch run.jsonl` (README): the dashboard started before the writer
    created the file and stopped with "no such file"; it now says it waits, and follows the file once it is
    there, like tail -F."""
    log = tmp_path / "later.jsonl"
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(120, 36)) as pilot:
        assert await wait_for(pilot, lambda: "does not exist yet" in (app.notice or ""))
        write_log(log, 3)
        assert await wait_for(pilot, lambda: app.loaded and len(app.calls) == 3, seconds=30)
        assert app.format_name == "canonical"


async def test_e_right_after_an_arrow_opens_the_call_under_the_cursor(log: Path) -> None:
    """``Up e`` (or ``k e``) opened the preview of the call the cursor had just left: the key ran before the
    table's highlight message reached the app."""
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        from textual import events

        last = len(app.calls) - 1
        # (both keys queued at once, as a terminal delivers a fast typist's keys; pilot.press waits between keys)
        app.post_message(events.Key("up", None))
        app.post_message(events.Key("e", "e"))
        assert await wait_for(pilot, lambda: isinstance(app.screen, PlanScreen))
        assert app.screen.call.index == last - 1
        await pilot.press("escape")
        await pilot.pause()
        app.post_message(events.Key("k", "k"))
        app.post_message(events.Key("enter", "\r"))
        assert await wait_for(pilot, lambda: isinstance(app.screen, DetailScreen))
        assert app.screen.call.index == last - 2


async def test_pause_keeps_the_session_when_a_newer_one_appears(tmp_path: Path) -> None:
    """Following a folder, paused: a new session file replaced the paused view with "0 calls, PAUSED (+30
    new)".  The paused view now stays; the newer session is followed on resume."""
    folder = tmp_path / "runs"
    folder.mkdir()
    first = write_log(folder / "a.jsonl", 2)
    app = CtxwatchApp(str(folder))
    async with app.run_test(size=(120, 40)) as pilot:
        assert await wait_for(pilot, lambda: app.loaded and app.log_path == str(first))
        await pilot.press("p")
        second = write_log(folder / "b.jsonl", 3, t0=1_800_000_000)
        assert await wait_for(pilot, lambda: str(second) in app.sessions, seconds=30)
        await pilot.pause(0.5)
        assert app.log_path == str(first) and len(app.calls) == 2 and app.paused
        await pilot.press("p")
        assert await wait_for(pilot, lambda: app.log_path == str(second) and app.loaded and len(app.calls) == 3,
                              seconds=30)


async def test_the_preview_says_when_the_tool_schemas_took_the_gap(tmp_path: Path) -> None:
    """With gpt-4o's own tokenizer the preview sizes the tool schemas to the reported prompt, as plan does,
    and says so (the header had spoken of scaled sizes only)."""
    from textual.widgets import Static

    rec = record(0, turn_words=20, reported=600)
    log = tmp_path / "a.jsonl"
    log.write_text(line(rec))
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(140, 36)) as pilot:
        await loaded(pilot, calls=1)
        await pilot.press("e")
        assert await wait_for(pilot, lambda: isinstance(app.screen, PlanScreen) and app.screen.plan is not None)
        screen = app.screen
        assert isinstance(screen, PlanScreen) and screen.plan is not None
        head = str(screen.query_one("#plan-head", Static).render())
        assert f"tool schemas {screen.plan.tools_tokens:,}: sized to the provider's count" in head
        assert screen.plan.before_tokens == 600


async def test_f_ends_a_pause_and_picking_a_session_shows_it(tmp_path: Path) -> None:
    """While paused, `f` toggled follow out of sight ("PAUSED (+0 new)" stayed), and a session picked with `o`
    showed "0 calls, PAUSED (+12 new)"."""
    folder, first, second = two_sessions(tmp_path)
    app = CtxwatchApp(str(folder))
    async with app.run_test(size=(120, 40)) as pilot:
        assert await wait_for(pilot, lambda: app.loaded and app.log_path == str(second))
        await pilot.press("p")
        assert app.paused
        await pilot.press("up", "f")
        await pilot.pause()
        assert not app.paused and app.follow and app.selected_index == 2
        await pilot.press("p", "o")
        assert await wait_for(pilot, lambda: isinstance(app.screen, SessionPicker))
        await pilot.press("down", "down", "enter")  # auto, b, a
        assert await wait_for(pilot, lambda: app.log_path == str(first) and app.loaded and len(app.calls) == 2)
        assert not app.paused and await wait_for(pilot, lambda: table(app).row_count == 2)


async def test_the_picker_says_which_times_are_file_times(tmp_path: Path) -> None:
    """Files whose calls carry no timestamp are listed last, by their file time, which the picker showed as
    if it were a call's (today's date below a 2025 session looked out of order)."""
    from textual.widgets import OptionList

    timed = write_log(tmp_path / "timed.jsonl", 2)
    bare = tmp_path / "bare.jsonl"
    bare.write_text("".join(line({k: v for k, v in record(i).items() if k != "timestamp"}) for i in range(2)))
    app = CtxwatchApp(str(tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        assert await wait_for(pilot, lambda: app.loaded and app.log_path == str(timed))
        await pilot.press("o")
        assert await wait_for(pilot, lambda: isinstance(app.screen, SessionPicker))
        ol = app.screen.query_one(OptionList)
        rows = [str(ol.get_option_at_index(i).prompt) for i in range(ol.option_count)]
        assert "timed.jsonl" in rows[1] and "(file time)" not in rows[1]
        assert "bare.jsonl" in rows[2] and "(file time)" in rows[2]


async def test_side_panel_keeps_every_section_in_sight_at_80x24(log: Path) -> None:
    """At 80x24 the chart's row has 8 rows: the full side panel (flags with wrapped reasons, then the
    forecast, input problems, watch mode, legend) needed 15, so everything below the flags was off screen.
    (The legend has since moved to a line of its own under the chart: tests/test_ui_main.py.)
    The panel now gives each flag a line and keeps the other sections in sight; a tall terminal keeps the
    full text.  The 12-call fixture (20,000-token window) crosses the trigger at call 9 and the budget at 12."""
    from rich.cells import cell_len

    from ctxwatch.ui.widgets import SidePanel

    app = CtxwatchApp(str(log))
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, 12)
        await pilot.pause()
        side = app.main.query_one(SidePanel)
        lines = str(side.render()).split("\n")
        # (8 rows but the legend's line under the chart)
        assert app.main.query_one("#middle").size.height == 7
        assert len(lines) <= 7, lines
        assert all(cell_len(x) <= side.size.width for x in lines), lines
        assert lines[0] == "Flags (2, newest first)"
        assert lines[1].startswith("! #12 over_budget: ") and lines[2].startswith("! #9 trigger_no_compact")
        # (two rows, the second cut with …: a forecast keeps its second row before a third flag would take it)
        assert lines[3].startswith("Forecast trigger cross") and lines[4].endswith("…")
        assert lines[-2] == "Input problems (0) none" and lines[-1].startswith("Watching file events")
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(160, 60)) as pilot:
        await loaded(pilot, 12)
        await pilot.pause()
        text = str(app.main.query_one(SidePanel).render())
        # (the full text: a heading per section, each one-entry section starting on its heading's line, never a
        # heading alone on its line)
        lines = text.split("\n")
        assert "Flags (2, newest first)" in lines and lines[lines.index("Flags (2, newest first)") + 1].startswith(
            "! #12 over_budget: ")
        assert any(ln.startswith("Forecast trigger cross") for ln in lines)
        assert "Input problems (0) none" in lines and any(ln.startswith("Watching file events") for ln in lines)
        assert not {"Flags", "Forecast", "Watching"} & {ln.strip() for ln in lines}
        assert "\nChart\n" not in text  # (the legend is the line under the chart)
        assert "no compaction followed for 3 calls (end of log)" in text  # (the reasons whole)


async def test_at_80x24_the_forecast_keeps_two_rows_before_more_flags(shared_logs: Path) -> None:
    """A real session of 4 flags at 80x24: the panel gave its rows to two flags and cut the forecast after
    "195 calls / ~2…", in the middle of its time.  The newest flag keeps its row, the others are counted
    (F lists them), and the forecast reads on to its second row."""
    from ctxwatch.ui.widgets import SidePanel

    app = CtxwatchApp(str(shared_logs / "claude-code" / "spotter_4d5611e5_full.jsonl"))
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.pause()
        lines = str(app.main.query_one(SidePanel).render()).split("\n")
        analysis = app.state.analysis
        assert analysis is not None
        flags, forecast = analysis.flags, analysis.forecast.text()
    assert len(flags) > 2
    assert lines[0] == f"Flags ({len(flags)}, newest first)"
    assert lines[2].startswith(f"+{len(flags) - 1} older")
    at = next(i for i, ln in enumerate(lines) if ln.startswith("Forecast "))
    shown = " ".join(ln.rstrip("…") for ln in lines[at:at + 2]).removeprefix("Forecast ")
    # (the forecast's words in order over two rows, the time to the trigger whole among them)
    assert " ".join(forecast.split()).startswith(" ".join(shown.split()[:-1]))
    assert "to trigger" in shown


async def test_footer_keys_fit_the_width(log: Path) -> None:
    """At 80 columns the footer's spacing and palette key pushed s (SVG), x (CSV) and ? (help) off screen; and
    it never showed Enter (a call's messages) or i (input problems).  Below 124 columns the footer gives the
    room of t, s and x (listed by ? and the palette) to Enter and i; from 124 it shows every key, spaced."""
    from textual.widgets._footer import FooterKey

    main_keys = {"enter", "q", "f", "p", "e", "slash", "c", "i", "question_mark"}
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, 12)
        for width, shown in ((80, main_keys), (123, main_keys), (124, main_keys | {"t", "s", "x"}), (80, main_keys)):
            await pilot.resize_terminal(width, 24)
            await pilot.pause()
            await pilot.pause()
            keys = {k.key: k.region for k in app.main.query(FooterKey) if not k.has_class("-command-palette")}
            assert set(keys) == shown, width
            assert all(r.right <= width and r.width > 0 for r in keys.values()), (width, keys)


async def test_chart_line_names_are_not_drawn_over_the_data(demo_log: Path) -> None:
    """The last 5 calls of the demo (prompts 29,000-37,000 tokens, bars 1 apart) cross every threshold row: a
    name written on a row hid the bars and points there ('B 19k├budget▒▒▒').  Names now go only where no bar
    or point reaches their row; the axis still names every row (trigger 15k, budget 19k, window-reserve 30k)."""
    app = CtxwatchApp(str(demo_log), last=5)
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        await pilot.pause(0.6)
        chart = app.main.query_one(TrendChart)
        rows = chart_rows(chart)
        assert len(rows) >= 10 and len(app.view) == 5
        labels = " ".join(lab for lab, _g, _p in rows)
        assert all(f" {x}" in f" {labels}" for x in ("trigger 15k", "budget 19k", "window-reserve 30k"))
        for name in ("trigger", "budget", "window-reserve"):
            assert not any(name in plot for _lab, _g, plot in rows), (name, rows)


async def test_detail_and_preview_footers_fit_80_columns(log: Path) -> None:
    """At 80 columns the detail view's footer dropped ? (help) and the eviction preview's dropped m (mode) and
    q: every footer is compact below 100 columns, and the preview's footer gives its room to its own knobs
    (q, s and x still work there; e, the preview itself, is off)."""
    from textual.widgets._footer import FooterKey

    from ctxwatch.ui.screens import PlanScreen

    app = CtxwatchApp(str(log))
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, 12)

        def shown() -> dict[str, int]:
            return {k.key: k.region.right for k in app.screen.query(FooterKey) if k.region.width > 0}

        await pilot.press("enter")
        assert await wait_for(pilot, lambda: isinstance(app.screen, DetailScreen))
        await pilot.pause()
        keys = shown()
        assert {"escape", "e", "question_mark"} <= set(keys) and max(keys.values()) <= 80, keys
        await pilot.press("escape")
        await pilot.press("e")
        assert await wait_for(pilot, lambda: isinstance(app.screen, PlanScreen))
        await pilot.pause()
        keys = shown()
        assert {"escape", "w", "B", "R", "U", "m", "question_mark"} <= set(keys), keys
        assert "e" not in keys and max(keys.values()) <= 80, keys


async def test_a_folder_of_compressed_logs_only_says_they_are_there(tmp_path: Path) -> None:
    """A folder holding only run.jsonl.gz said "no logs in this folder yet; waiting", as if it were empty: the
    compressed log is now counted among the files left out, with how to read it."""
    import gzip

    folder = tmp_path / "gz"
    folder.mkdir()
    with gzip.open(folder / "run.jsonl.gz", "wb") as fh:
        fh.write(line(record(0, turn_words=5)).encode())
    app = CtxwatchApp(str(folder))
    async with app.run_test(size=(120, 30)) as pilot:
        assert await wait_for(pilot, lambda: app.notice is not None)
        assert app.notice == ("no logs in this folder yet (1 file in no known format, or compressed: decompress "
                              "to read); waiting")
