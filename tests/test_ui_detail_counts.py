"""The call detail shows each message with the tokens ``plan`` shows for it (calibrated where a calibration
applies, marked ≈, with this tokenizer's count beside it), and labels the counts it shows unscaled as estimates
of a named tokenizer.  Expected values are read through the CLI's JSON (``plan --json``, ``report --json``) in a
separate process, never from the screen's code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from test_ui_common import loaded, open_detail

from ctxwatch.ui.app import CtxwatchApp

#: The real claude-trace excerpt: Claude Sonnet 4 counted with o200k_base, calibrated (x1.1367 in its
#: report --json), its system prompt and tools logged.
TRACE = "request-response/claude-trace_test-traffic_head14.jsonl"


def cli_json(*args: str) -> Any:
    """``ctxwatch ARGS`` run as a separate process, its standard output decoded as JSON."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    out = subprocess.run([sys.executable, "-m", "ctxwatch", *args], capture_output=True, check=True, env=env,
                         timeout=120)
    return json.loads(out.stdout)


async def test_the_detail_shows_the_calibrated_message_tokens_plan_shows(shared_logs: Path) -> None:
    """The detail showed o200k_base's raw count for each message (3,702) where plan, the preview and the table
    showed the calibrated one (5,134): the same call gave two numbers in two views."""
    log = shared_logs / TRACE
    report = cli_json("report", "--json", str(log))
    calls = report["calls"]
    # the last call carrying the tool schemas (the others are haiku's short side calls)
    last = [c for c in calls if c["calibrated"]["tools_tokens"]][-1]
    assert last["calibration"] is not None and abs(last["calibration"] - 1) > 0.05  # (a calibration applies)
    plan = cli_json("plan", "--json", "--index", str(last["index"]), str(log))
    # plan's messages: the system prompt first, then the history in order
    assert plan["index"] == last["index"] and plan["messages"][0]["role"] == "system"
    want = [m["tokens"] for m in plan["messages"][1:]]
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(160, 50)) as pilot:
        await loaded(pilot, len(calls))
        app.query_one("#calls").move_cursor(row=len(calls) - 1)
        await pilot.pause()
        assert app.selected_index == last["index"]
        screen = await open_detail(pilot, 15.0)
        msgs = [it for it in screen.items if it.kind == "message"]
        assert [it.tokens for it in msgs] == want
        # the system prompt's row is report's calibrated system count
        system = next(it for it in screen.items if it.kind == "system")
        assert system.tokens == last["calibrated"]["system_tokens"]
        # the rows add up to the reported prompt, as plan's 'before' does
        assert sum(it.tokens or 0 for it in screen.items) == plan["before_tokens"] == last["prompt_tokens_reported"]
        # each scaled row is marked as the other views mark a calibrated number, with the raw count beside it
        table = screen.query_one("#items")
        row = [str(c) for c in table.get_row_at(next(k for k, it in enumerate(screen.items) if it.kind == "message"))]
        assert row[2] == f"{msgs[0].tokens:,}≈" and row[3] == f"{msgs[0].raw:,}"
        assert msgs[0].raw != msgs[0].tokens
        head = str(screen.query_one("#detail-head").render())
        assert "rows≈ as plan shows them: " in head and "raw: o200k_base counts" in head


async def test_the_detail_labels_uncalibrated_estimates_with_their_tokenizer(tmp_path: Path) -> None:
    """Without a calibration or a reported prompt to scale to (a Claude model whose log holds no usage) the
    detail's counts are o200k_base's, and it says they are estimates, uncalibrated, and by which tokenizer."""
    from test_ui_common import line, record

    recs = [record(i, model="claude-sonnet-4-5") for i in range(2)]
    for rec in recs:
        del rec["response"]["usage"]
    log = tmp_path / "claude.jsonl"
    log.write_text("".join(line(rec) for rec in recs), encoding="utf-8")
    report = cli_json("report", "--json", str(log))
    assert report["calls"][-1]["calibration"] is None
    plan = cli_json("plan", "--json", "--index", "0", str(log))
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(160, 50)) as pilot:
        await loaded(pilot, 2)
        app.query_one("#calls").move_cursor(row=0)
        await pilot.pause()
        screen = await open_detail(pilot)
        head = str(screen.query_one("#detail-head").render())
        assert "rows: o200k_base estimates, uncalibrated" in head
        assert [it.tokens for it in screen.items if it.kind == "message"] == [
            m["tokens"] for m in plan["messages"][1:]]
        assert not any(it.raw is not None for it in screen.items)
        screen.query_one("#items").move_cursor(row=next(k for k, it in enumerate(screen.items)
                                                        if it.kind == "message"))
        await pilot.pause()
        assert "o200k_base estimate, uncalibrated" in str(screen.query_one("#item-head").render())
