"""Cost and cache reads / writes on the main screen: the selected call's and the log's, as ``report --json``
knows them; unknown is ``?``, never 0."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from test_ui_common import line, loaded, record, wait_for, write_log
from textual.widgets import Static

from ctxwatch.cli import main
from ctxwatch.ui.app import CtxwatchApp
from ctxwatch.ui.costs import Totals, dollars
from ctxwatch.ui.widgets.packed import PackedText

FULL = "claude-code/spotter_4d5611e5_full.jsonl"


def costline(app: CtxwatchApp) -> str:
    return str(app.screen.query_one("#costline", Static).render())


def usages(path: Path) -> list[dict]:
    """Each assistant message's usage by message id, in order, read with plain json."""
    out: dict[str, dict] = {}
    for raw in path.read_text().splitlines():
        d = json.loads(raw)
        if d.get("type") == "assistant" and (u := d["message"].get("usage")):
            out[d["message"]["id"]] = u
    return list(out.values())


async def test_cost_and_cache_of_a_real_claude_code_session(shared_logs: Path) -> None:
    """The spotter session's last call: 1 input, 7,330 cache-write and 98,729 cache-read tokens, 1 output, on
    claude-opus-4-6 at its list prices ($5 / $6.25 / $0.50 / $25 per million) = $0.095207; the log's cache
    reads summed from the file; the log's cost as ``report --json``'s session cost."""
    path = shared_logs / FULL
    us = usages(path)
    last = us[-1]
    assert (last["input_tokens"], last["cache_creation_input_tokens"], last["cache_read_input_tokens"],
            last["output_tokens"]) == (1, 7330, 98729, 1)
    by_hand = (1 * 5 + 7330 * 6.25 + 98729 * 0.5 + 1 * 25) / 1e6
    assert round(by_hand, 6) == 0.095207
    reads = sum(u["cache_read_input_tokens"] for u in us)
    res = CliRunner().invoke(main, ["report", "--json", "--no-cache", str(path)])
    session_cost = json.loads(res.stdout)["sessions"][0]["cost_usd"]
    app = CtxwatchApp(str(path))
    async with app.run_test(size=(140, 40)) as pilot:
        await loaded(pilot, 139)
        text = costline(app)
        assert text.startswith("#139 $0.0952 · cache r 98,729 w 7,330 │ log ")  # ($0.095207, four decimals)
        assert session_cost >= 1 and f"log ${session_cost:,.2f} · cache r {reads / 1e6:.1f}M w " in text
        assert app.totals.cache_read == reads and app.totals.unpriced == 0
        await pilot.press("home")
        await pilot.pause()
        first = us[0]
        cost = (first["input_tokens"] * 5 + first["cache_creation_input_tokens"] * 6.25
                + first["cache_read_input_tokens"] * 0.5 + first["output_tokens"] * 25) / 1e6
        assert round(cost, 4) == 0.0997 and costline(app).startswith("#1 $0.0997 · ")
        assert f"cache r {first['cache_read_input_tokens']:,} w {first['cache_creation_input_tokens']:,}" \
            in costline(app)


async def test_unknown_is_a_question_mark(tmp_path: Path) -> None:
    """An OpenAI-shaped log reports no cache reads or writes: ``?``; a model no catalogue prices: ``$?``, and
    the log's total says how many calls it prices.  gpt-4o at $2.50 / $10 per million: call #3 (3,258 prompt
    tokens, 5 completion) costs $0.008195."""
    log = tmp_path / "run.jsonl"
    write_log(log, 3)
    with open(log, "a", encoding="utf-8") as fh:
        fh.write(line(record(3, model="no-such-model-xyz")))
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(120, 32)) as pilot:
        await loaded(pilot, 4)
        assert costline(app).startswith("#4 ? · cache r ? w ? │ log $? (")
        priced = sum((1130 + 1064 * i) * 2.5 + 5 * 10 for i in range(3)) / 1e6
        assert round(priced, 6) == 0.016605
        assert "log $? ($0.0166 for 3 of 4 calls) · cache r ? w ?" in costline(app)
        await pilot.press("up")
        await pilot.pause()
        assert costline(app).startswith("#3 $0.0082 · ")  # ($0.008195)


def test_dollars_shows_cents_above_a_dollar_and_four_decimals_below() -> None:
    """The screen's costs (the tests above compare them to these strings, not to this function's output)."""
    assert [dollars(x) for x in (9.52614975, 1234.5, 1.0, 0.095207, 0.008195, 0.00005, 0.0, None)] == [
        "$9.53", "$1,234.50", "$1.00", "$0.0952", "$0.0082", "<$0.0001", "$0.00", "?"]


def test_totals_take_a_replaced_call_once() -> None:
    from ctxwatch.model import Usage

    class C:
        def __init__(self, read: int | None) -> None:
            self.usage = Usage(prompt_total=100, input_uncached=100 - (read or 0), cache_read=read,
                               cache_write=None, output=1)

    t = Totals()
    a, b = C(40), C(60)
    t.take(a, 0.5)  # type: ignore[arg-type]
    t.take(a, 0.5, -1)  # type: ignore[arg-type]
    t.take(b, None)  # type: ignore[arg-type]
    assert (t.calls, t.cost, t.unpriced, t.cache_read, t.with_read, t.with_write) == (1, 0.0, 1, 60, 1, 0)
    assert t.cost_text() == "$?" and t.cache_text() == "cache r 60 w ?"


async def test_at_80x24_the_costs_are_on_the_status_line_and_in_the_detail(shared_logs: Path) -> None:
    """An 80x24 terminal keeps its chart rows: no cost line, the log's and the call's cost on the status line;
    the call's detail (Enter) gives its cost and cache reads / writes (summed by hand as above)."""
    from ctxwatch.ui.screens import DetailScreen

    path = shared_logs / FULL
    last = usages(path)[-1]
    by_hand = (last["input_tokens"] * 5 + last["cache_creation_input_tokens"] * 6.25
               + last["cache_read_input_tokens"] * 0.5 + last["output_tokens"] * 25) / 1e6
    res = CliRunner().invoke(main, ["report", "--json", "--no-cache", str(path)])
    session_cost = json.loads(res.stdout)["sessions"][0]["cost_usd"]
    app = CtxwatchApp(str(path))
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, 139)
        assert not app.screen.query_one("#costline").display
        status = " ".join(str(app.screen.query_one("#status").render()).split())
        assert round(by_hand, 4) == 0.0952 and session_cost >= 1
        assert f"log ${session_cost:,.2f} · #139 $0.0952" in status
        await pilot.press("enter")
        assert await wait_for(pilot, lambda: isinstance(app.screen, DetailScreen))
        head = " ".join(str(app.screen.query_one("#detail-head", PackedText).render()).split())
        assert "cost $0.0952 · cache r 98,729 w 7,330" in head


async def test_the_cache_totals_count_the_calls_report_counts(tmp_path: Path) -> None:
    """The OTel sample: 12 calls, one of which reports no prompt; ``report`` sums the prompt's parts over the 11
    that do ("cache read … in 7 of 11 calls"), and so does the dashboard's total (the counts taken from
    ``report --json``: the calls that report a prompt, and those of them with a cache read)."""
    import json

    path = Path(__file__).resolve().parents[1] / "sample_logs" / "otel_collector.jsonl"
    from click.testing import CliRunner

    from ctxwatch.cli import main

    calls = json.loads(CliRunner().invoke(main, ["report", "--json", "--no-cache", str(path)]).stdout)["calls"]
    prompted = [c for c in calls if c["prompt_tokens_reported"]]
    reads = [c["cache_read_tokens"] for c in prompted if c["cache_read_tokens"] is not None]
    assert (len(calls), len(prompted), len(reads)) == (12, 11, 7)
    app = CtxwatchApp(str(path))
    async with app.run_test(size=(160, 40)) as pilot:
        await loaded(pilot, 12)
        assert (app.totals.prompted, app.totals.with_read) == (11, 7)
        assert f"({len(reads)} of {len(prompted)} calls)" in app.totals.cache_text()
