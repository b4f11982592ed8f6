"""One floor per call: a Claude or Gemini call counted with o200k_base shows the same calibrated floor and history
in the text report, the dashboard (table, bar, detail), ``plan`` and ``check``'s reasons, as ``report --json``'s
``calibrated`` gives them.

The defect: the dashboard and ``report`` showed the raw o200k counts (claude-trace call #13: floor 12,036 ·
history 1,683, the 1,958 tokens to its reported 15,677 unlabelled), ``report --json`` a calibrated floor of 13,681,
and ``plan`` 13,751 (every count scaled by the call's own ratio, "x1.14"): three floors for one call.

Expected values are worked out here from ``report --json``'s raw fields (``prompt_tokens_reported``,
``prompt_tokens_estimated``, ``system_tokens``, ``tools_tokens``, ``floor_tokens``, ``history_tokens``) with plain
``json`` and ``statistics``: the factor of a model is the median of reported / estimated over its calls that have
both (quota probes, claude-trace's context ``probe``, left out); the floor is the raw count times it, rounded
(system and tools share the rounded floor by largest remainder), capped at the reported prompt less the 3-token
reply primer; the history is what the reported prompt leaves (reported - primer - floor), or the raw count times
the factor for a call without a report.
"""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from test_ui_common import loaded, open_detail

from ctxwatch.cli import main

TRACE = ("request-response", "claude-trace_test-traffic_head14.jsonl")
BATCH = ("anthropic-batch", "B-C_requests_first3_concatenated.jsonl",
         "msgbatch_01PGaff3EPbQJbpw6JeWoQR5_results.jsonl")
#: Tokens of the reply primer every counted prompt ends with (OpenAI cookbook, "How to count tokens"); the
#: estimate is system + tools + history + it.
PRIMER = 3


def run(*args: str) -> str:
    res = CliRunner().invoke(main, list(args))
    assert res.exit_code == 0, res.output
    return res.output


def report_doc(*paths: Path) -> dict[str, Any]:
    return json.loads(run("report", *map(str, paths), "--json"))


def factor_of(doc: dict[str, Any], call: dict[str, Any]) -> float:
    """The factor ``call``'s floor is scaled by: its model's median ratio over the calls that have both
    (quota probes left out)."""
    ratios = [c["prompt_tokens_reported"] / c["prompt_tokens_estimated"] for c in doc["calls"]
              if c["model"] == call["model"] and c["context"] != "probe" and c["prompt_tokens_reported"]
              and c["prompt_tokens_estimated"]]
    assert len(ratios) >= 3
    return statistics.median(ratios)


def expected(doc: dict[str, Any], call: dict[str, Any]) -> dict[str, int]:
    """The calibrated system, tools, floor and history of ``call`` by hand."""
    f = factor_of(doc, call)
    floor = round(call["floor_tokens"] * f)
    reported = call["prompt_tokens_reported"]
    room = reported - PRIMER if reported else None
    if room is not None and floor > room:
        floor, f = room, room / call["floor_tokens"]
    s, t = call["system_tokens"] * f, call["tools_tokens"] * f
    parts = [math.floor(s), math.floor(t)]
    rests = sorted(range(2), key=lambda i: [s, t][i] - parts[i], reverse=True)
    for i in rests[: floor - sum(parts)]:
        parts[i] += 1
    history = room - floor if room is not None else round(call["history_tokens"] * f)
    return {"system": parts[0], "tools": parts[1], "floor": floor, "history": history}


def cell(raw: int, value: int) -> str:
    """A calibrated floor or history cell as the table shows it: ``value`` marked ``≈``, but for a raw count of 0,
    which any factor leaves 0 (nothing was calibrated: a plain ``0``)."""
    return f"{value:,}" + ("≈" if raw else "")


@pytest.fixture(scope="module")
def trace(shared_logs: Path) -> tuple[Path, dict[str, Any]]:
    path = shared_logs.joinpath(*TRACE)
    return path, report_doc(path)


def test_json_keeps_the_raw_estimate_and_gives_the_calibrated_breakdown(trace: tuple[Path, dict[str, Any]]) -> None:
    """report --json: floor_tokens etc. stay this tokenizer's counts (#13: 3,025 + 9,011 = 12,036, history 1,683);
    the ``calibrated`` object holds the numbers shown everywhere else, system + tools adding up to the floor."""
    _path, doc = trace
    c = doc["calls"][12]
    assert (c["system_tokens"], c["tools_tokens"], c["floor_tokens"], c["history_tokens"]) == (3025, 9011, 12036, 1683)
    assert c["prompt_tokens_estimated"] == 12036 + 1683 + PRIMER
    want = expected(doc, c)
    assert c["calibrated"] == {"system_tokens": want["system"], "tools_tokens": want["tools"],
                               "floor_tokens": want["floor"], "history_tokens": want["history"]}
    assert want["floor"] == 13_681 and want["system"] + want["tools"] == want["floor"]


def report_rows(text: str) -> dict[int, list[str]]:
    """The text report's table: call number -> its cells (split on blanks; the model has none)."""
    rows = {}
    for ln in text.splitlines():
        cells = ln.split()
        if len(cells) >= 10 and cells[0].isdigit() and cells[1].isdigit():
            rows[int(cells[0])] = cells
    return rows


def test_text_report_shows_the_calibrated_floor_and_history(trace: tuple[Path, dict[str, Any]]) -> None:
    """The text report showed #13 as floor 12,036 · history 1,683 beside a reported 15,677 (99.0 % of the window
    with the reserve and free: the gap unlabelled).  It shows the calibrated numbers, marked ≈, and names the
    factor in its footnote, as report --json gives it (4 places)."""
    path, doc = trace
    text = run("report", str(path))
    rows = report_rows(text)
    for c in doc["calls"]:
        if c["calibrated"] is None:
            continue
        want = expected(doc, c)
        cells = rows[c["index"] + 1]
        assert cells[4:6] == [cell(c["floor_tokens"], want["floor"]), cell(c["history_tokens"], want["history"])], \
            cells
    assert rows[13][4:6] == ["13,681≈", "1,993≈"]  # (1,993 = 15,677 reported - 3 primer - 13,681)
    # the parts add up to the reported prompt, less the reply primer
    c = doc["calls"][12]
    w = expected(doc, c)
    assert c["prompt_tokens_reported"] - (w["floor"] + w["history"]) == PRIMER
    sonnet = statistics.median(x["prompt_tokens_reported"] / x["prompt_tokens_estimated"] for x in doc["calls"]
                               if x["model"] == c["model"])
    assert f"{c['model']} x{sonnet:.4f}" in text and "≈ = calibrated" in text


def test_text_report_of_the_anthropic_batch_sample(shared_logs: Path) -> None:
    """Anthropic batch: #1 showed floor 17 · history 4,267 beside a reported 5,253 (calibration 1.22); only the
    first three results have their request (the rest report usage only, and stay unknown, ?)."""
    paths = [shared_logs / BATCH[0] / BATCH[1], shared_logs / BATCH[0] / BATCH[2]]
    doc = report_doc(*paths)
    rows = report_rows(run("report", *map(str, paths)))
    calibrated = [c for c in doc["calls"] if c["calibrated"] is not None]
    assert [c["index"] for c in calibrated] == [0, 1, 2]
    for c in calibrated:
        want = expected(doc, c)
        assert rows[c["index"] + 1][4:6] == [f"{want['floor']:,}≈", f"{want['history']:,}≈"]
    assert rows[1][4:6] == ["21≈", "5,229≈"]  # (5,229 = 5,253 reported - 3 primer - 21)
    assert rows[4][4:6] == ["?", "?"]


def test_plan_pins_the_floor_report_shows(trace: tuple[Path, dict[str, Any]]) -> None:
    """plan --call 13 said ``floor: system 3,456 + tools 10,295 = 13,751 ... x1.14`` (the call's own ratio, 2
    places) where report --json said 13,681 (calibration 1.1367).  It pins the calibrated floor and names the same
    factor; the messages take the rest of the reported prompt, so 'before' is still the report."""
    path, doc = trace
    c = doc["calls"][12]
    want = expected(doc, c)
    f = factor_of(doc, c)
    assert f == statistics.median(x["prompt_tokens_reported"] / x["prompt_tokens_estimated"]
                                  for x in doc["calls"] if x["model"] == c["model"])  # (not capped)
    text = run("plan", str(path), "--call", "13")
    assert f"floor: system {want['system']:,} + tools {want['tools']:,} = {want['floor']:,} (calibrated" in text
    assert f"x{f:.4f}" in text and f"{c['calibration']:.4f}" == f"{f:.4f}"
    plan = json.loads(run("plan", str(path), "--call", "13", "--json"))
    msgs = plan["messages"]
    assert msgs[0]["role"] == "system" and msgs[0]["tokens"] == want["system"]
    # the history messages: this tokenizer's counts (1,683 in all) scaled to the reported prompt less the floor
    assert sum(m["tokens"] for m in msgs[1:]) == c["prompt_tokens_reported"] - PRIMER - want["floor"]
    assert plan["before_tokens"] == c["prompt_tokens_reported"]
    # ... which is the history the table shows: plan and dashboard give one history for the call
    assert sum(m["tokens"] for m in msgs[1:]) == want["history"] == c["calibrated"]["history_tokens"]


async def test_eviction_preview_pins_the_floor_the_bar_shows(trace: tuple[Path, dict[str, Any]]) -> None:
    """The dashboard's eviction preview (e) of #13 planned from a floor of 13,751 (every count x the call's own
    ratio) beside the bar's; it pins the calibrated floor, as plan does, and its 'before' is still the report."""
    from test_ui_common import open_preview

    from ctxwatch.ui.app import CtxwatchApp
    from ctxwatch.ui.widgets import CallsTable

    path, doc = trace
    c = doc["calls"][12]
    want = expected(doc, c)
    app = CtxwatchApp(str(path))
    async with app.run_test(size=(160, 40)) as pilot:
        await loaded(pilot, 14)
        assert app.main is not None
        app.main.query_one(CallsTable).move_cursor(row=app.view.index(12))
        await pilot.pause()
        assert app.selected_index == 12
        screen = await open_preview(pilot)
        plan = screen.plan
        assert (plan.system_tokens, plan.tools_tokens, plan.floor_tokens) == (want["system"], want["tools"],
                                                                             want["floor"])
        assert plan.before_tokens == c["prompt_tokens_reported"]
        assert f"floor {want['floor']:,}≈ calibrated" in str(screen.query_one("#plan-head").render())


async def test_dashboard_shows_the_calibrated_floor_and_history(trace: tuple[Path, dict[str, Any]]) -> None:
    """The table, the bar's legend and the detail's header of #13 showed 12,036 · 1,683; they show the calibrated
    numbers marked ≈ (the detail keeps the raw counts beside them, and in its rows), and the bar's parts add up
    to the reported prompt but for the calibration's error on this call."""
    from ctxwatch.ui.app import CtxwatchApp
    from ctxwatch.ui.widgets import CallsTable, ContextBar

    path, doc = trace
    app = CtxwatchApp(str(path))
    async with app.run_test(size=(140, 40)) as pilot:
        await loaded(pilot, 14)
        assert app.main is not None
        table = app.main.query_one(CallsTable)
        for row, index in enumerate(app.view):
            c = doc["calls"][index]
            if c["calibrated"] is not None:
                want = expected(doc, c)
                assert (table.cell(row, "floor"), table.cell(row, "history")) == (
                    cell(c["floor_tokens"], want["floor"]), cell(c["history_tokens"], want["history"]))
        table.move_cursor(row=app.view.index(12))
        await pilot.pause()
        assert app.selected_index == 12
        c = doc["calls"][12]
        want = expected(doc, c)
        bar = app.main.query_one(ContextBar)
        shown = bar.shown
        assert shown is not None and (shown.floor_tokens, shown.history_tokens) == (want["floor"], want["history"])
        text = str(bar.render())
        assert f"floor {want['floor']:,}≈" in text and f"history {want['history']:,}≈" in text
        assert f"free {c['free_tokens']:,}" in text
        parts = want["floor"] + want["history"] + c["reserve_tokens"] + c["free_tokens"]
        assert parts == c["window"] - PRIMER
        screen = await open_detail(pilot)
        head = str(screen.query_one("#detail-head").render())
        assert f"floor {want['floor']:,}≈ · history {want['history']:,}≈" in " ".join(head.split())
        assert f"floor {c['floor_tokens']:,} · history {c['history_tokens']:,}" in " ".join(head.split())


def claude_run(tmp_path: Path, reported: list[int] | None = None) -> Path:
    """Eight calls of claude-sonnet-4 (counted with o200k_base): the tool schemas grow at #5 (a second tool) and
    the system prompt changes at #7; each reports ``reported[i]`` prompt tokens (default 1,000)."""
    sys_a = "You are a careful research agent. Reply in JSON."
    sys_b = sys_a + " Cite every source you use with its URL, and say how sure you are of each claim."
    tool1 = {"name": "search", "description": "Search the web.",
             "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}}}
    tool2 = {"name": "fetch", "description": "Fetch a URL and return its text, cut to max_bytes bytes.",
             "input_schema": {"type": "object", "properties": {"url": {"type": "string"},
                                                                "max_bytes": {"type": "integer"}}}}
    lines = []
    for i in range(8):
        msgs = [{"role": "system", "content": sys_b if i >= 6 else sys_a}]
        for k in range(i + 1):
            msgs.append({"role": "user", "content": f"step {k}: " + " ".join(f"topic{k}x{j}" for j in range(60))})
            if k < i:
                msgs.append({"role": "assistant", "content": f"done with step {k}"})
        lines.append({"timestamp": 1_700_000_000 + 10 * i,
                      "request": {"model": "claude-sonnet-4-20250514", "messages": msgs,
                                  "tools": [tool1, tool2] if i >= 4 else [tool1], "max_tokens": 2000},
                      "response": {"id": f"r{i}", "choices": [{"message": {"role": "assistant",
                                                                           "content": f"done with step {i}"}}],
                                   "usage": {"input_tokens": reported[i] if reported else 1000,
                                             "output_tokens": 5}}})
    path = tmp_path / "claude.jsonl"
    path.write_text("".join(json.dumps(rec) + "\n" for rec in lines))
    return path


def test_check_gives_the_floor_parts_as_shown(tmp_path: Path) -> None:
    """check's floor_grew and system_prompt_changed reasons gave this tokenizer's counts where every other surface
    shows the calibrated ones; they give those, and say so.  The reports are 1.15 x the estimate (the estimates
    read from a first report --json, whose raw fields do not depend on the reports)."""
    first = report_doc(claude_run(tmp_path))
    reported = [round(1.15 * c["prompt_tokens_estimated"]) for c in first["calls"]]
    path = claude_run(tmp_path, reported)
    doc = report_doc(path)
    calls = doc["calls"]
    assert [c["prompt_tokens_reported"] for c in calls] == reported
    assert all(c["calibrated"] is not None for c in calls)
    want = [expected(doc, c) for c in calls]
    text = run("check", str(path))
    grew = want[4]["tools"] - want[3]["tools"]
    assert grew > calls[4]["tools_tokens"] - calls[3]["tools_tokens"]
    assert f"tool schemas grew by {grew:,} tokens (calibrated) at #5" in text
    assert f"({want[5]['system']:,} -> {want[6]['system']:,} tokens, calibrated)" in text
    # the evidence keeps the accounted numbers, as report --json's floor_tokens etc.
    (f,) = [f for f in json.loads(run("check", str(path), "--json"))["flags"] if f["kind"] == "floor_grew"]
    assert f["evidence"]["tokens_added"] == calls[4]["tools_tokens"] - calls[3]["tools_tokens"]


async def test_csv_export_has_the_calibrated_breakdown_the_table_shows(trace: tuple[Path, dict[str, Any]]) -> None:
    """x exported only the raw floor and history (#13: 12,036 and 1,683) beside a table showing 13,681≈ and
    1,913≈: the CSV now ends with the calibration and the calibrated parts (worked out by hand here), and leaves
    them empty where nothing is scaled (the raw columns are then the shown ones)."""
    import csv
    import io

    from ctxwatch.ui.app import CtxwatchApp, csv_text

    path, doc = trace
    app = CtxwatchApp(str(path))
    async with app.run_test(size=(140, 40)) as pilot:
        await loaded(pilot, 14)
        rows = list(csv.DictReader(io.StringIO(csv_text([app.calls[i] for i in sorted(app.calls)],
                                                         app.calibrations))))
    assert len(rows) == len(doc["calls"]) == 14
    scaled = 0
    for row, c in zip(rows, doc["calls"], strict=True):
        assert row["floor_tokens"] == str(c["floor_tokens"])  # (the raw columns keep their meaning)
        if c["calibrated"] is None:
            assert [row[k] for k in ("calibration", "floor_tokens_calibrated", "history_tokens_calibrated")] == \
                ["", "", ""]
            continue
        scaled += 1
        want = expected(doc, c)
        assert (row["system_tokens_calibrated"], row["tools_tokens_calibrated"], row["floor_tokens_calibrated"],
                row["history_tokens_calibrated"]) == tuple(str(want[k]) for k in ("system", "tools", "floor",
                                                                                    "history"))
        assert abs(float(row["calibration"]) - factor_of(doc, c)) < 5e-5
    assert scaled >= 4 and rows[12]["floor_tokens_calibrated"] == "13681"


def probe_indexes(path: Path) -> list[int]:
    """The calls of the trace that are quota probes sent with no system prompt and no tools (read with plain
    ``json``): their floor is 0 tokens by hand."""
    bodies = [json.loads(ln)["request"]["body"] for ln in path.read_text().splitlines() if ln.strip()]
    return [i for i, b in enumerate(bodies) if b.get("max_tokens") == 1 and "system" not in b and "tools" not in b]


def test_a_floor_of_0_is_a_plain_0_in_report_and_plan(trace: tuple[Path, dict[str, Any]]) -> None:
    """claude-trace's quota probes (no system prompt, no tools) showed a floor of ``0≈`` in report: 0 scaled by
    any calibration is 0, so nothing was calibrated.  It is a plain 0 (their history, 5 tokens here, is still
    marked), and plan no longer calls a floor of 0 calibrated."""
    path, doc = trace
    probes = probe_indexes(path)
    assert len(probes) == 6
    rows = report_rows(run("report", str(path)))
    for i in probes:
        c = doc["calls"][i]
        assert c["calibrated"] is not None and c["floor_tokens"] == 0 and c["history_tokens"] > 0
        assert rows[i + 1][4:6] == ["0", f"{expected(doc, c)['history']:,}≈"], rows[i + 1]
    text = run("plan", str(path), "--call", str(probes[-1] + 1))
    assert "floor: system 0 + tools 0 = 0;" in text and "calibrated" not in text and "≈" not in text


async def test_a_floor_of_0_is_a_plain_0_on_the_dashboard(trace: tuple[Path, dict[str, Any]]) -> None:
    """The table, the bar's legend, the detail's header and the eviction preview of a quota probe showed its floor
    as ``0≈``; it is a plain 0 there too, and the history beside it stays marked."""
    from test_ui_common import open_preview

    from ctxwatch.ui.app import CtxwatchApp
    from ctxwatch.ui.widgets import CallsTable, ContextBar

    path, doc = trace
    probe = probe_indexes(path)[-1]
    c = doc["calls"][probe]
    history = f"{expected(doc, c)['history']:,}≈"
    app = CtxwatchApp(str(path))
    async with app.run_test(size=(160, 40)) as pilot:
        await loaded(pilot, 14)
        assert app.main is not None
        for _ in range(len(app.contexts)):  # (the table shows one context: main first, then c cycles)
            if app.context == c["context"]:
                break
            await pilot.press("c")
            await pilot.pause()
        assert app.context == c["context"] == "probe"
        table = app.main.query_one(CallsTable)
        row = app.view.index(probe)
        assert (table.cell(row, "floor"), table.cell(row, "history")) == ("0", history)
        table.move_cursor(row=row)
        await pilot.pause()
        assert app.selected_index == probe
        bar = " ".join(str(app.main.query_one(ContextBar).render()).split())
        assert "floor 0 " in bar and "0≈" not in bar and f"history {history}" in bar
        screen = await open_detail(pilot)
        head = " ".join(str(screen.query_one("#detail-head").render()).split())
        assert f"floor 0 · history {history}" in head and "0≈" not in head
        await pilot.press("escape")
        await pilot.pause()
        screen = await open_preview(pilot)
        assert screen.plan.floor_tokens == 0
        assert "0≈" not in str(screen.query_one("#plan-head").render())


def test_calibration_is_a_tokenizer_gap_or_nothing() -> None:
    """A median ratio of 2 or more (or 1/2 or less) is no tokenizer gap: it calibrates nothing."""
    from ctxwatch.accounting import calibration_factor

    assert calibration_factor([1.9, 1.95, 1.99]) == 1.95
    assert calibration_factor([0.55, 0.6, 0.7]) == 0.6
    assert calibration_factor([2.1, 2.1, 2.1]) is None
    assert calibration_factor([0.4, 0.45, 0.49]) is None
    assert calibration_factor([1.1, 1.2]) is None  # (fewer than 3 calls, as before)


def test_an_absurd_ratio_is_not_applied_and_the_estimate_is_flagged_with_why(tmp_path: Path) -> None:
    """A new user's Anthropic records: a 2-word system prompt and one short user message, reporting 150,000 to
    260,000 input tokens.  The report showed floor 37,500≈ and history 93,750≈, 'calibrated' x10,416.7, with
    estimate_disagrees on #1 only.  Now nothing is scaled (calibration null, the raw counts shown, unmarked)
    and every call's raw estimate is flagged, the reason naming the median ratio."""
    reported = [150_000, 180_000, 200_000, 230_000, 260_000]
    path = tmp_path / "absurd.jsonl"
    path.write_text("".join(json.dumps({
        "timestamp": 1_700_000_000 + 10 * i,
        "request": {"model": "claude-sonnet-4-20250514", "system": "be brief", "max_tokens": 1000,
                    "messages": [{"role": "user", "content": "hello there, how are you"}]},
        "response": {"id": f"msg_{i}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-20250514",
                     "content": [{"type": "text", "text": "ok"}], "usage": {"input_tokens": p, "output_tokens": 5}},
    }) + "\n" for i, p in enumerate(reported)))
    doc = json.loads(run("report", "--json", str(path)))
    calls = doc["calls"]
    assert doc["calibration"] is None and all(c["calibration"] is None and c["calibrated"] is None for c in calls)
    estimates = {c["prompt_tokens_estimated"] for c in calls}
    (e,) = estimates  # (every request is the same)
    assert e < 100  # a few words: nowhere near 150,000
    median = statistics.median(p / e for p in reported)
    assert median > 2
    text = run("report", str(path))
    row = next(line for line in text.splitlines() if line.split()[:2] == ["1", "1"])
    assert "≈" not in text and row.split()[4:6] == [str(calls[0]["floor_tokens"]), str(calls[0]["history_tokens"])]
    (f,) = [f for f in doc["flags"] if f["kind"] == "estimate_disagrees"]
    assert f["severity"] == "warn" and f["evidence"]["calls"] == 5
    assert f"the median reported/estimated ratio of its 5 calls, {median:,.3f}, is more than tokenizers differ by" \
        in f["reason"]


def test_plan_leaves_counts_raw_where_the_report_is_no_tokenizer_gap(tmp_path: Path) -> None:
    """A verifier's log: "Be brief." and a short question, reported as about 5,000 tokens (x100 the estimate).
    report shows the raw counts (no calibration); plan scaled every count by the call's own ratio (a floor of 758
    for a 2-word system prompt, x217 on another call).  It keeps the counts as counted, as report does, and says
    why 'before' is not the report."""
    from ctxwatch.tokens import get_tokenizer

    path = tmp_path / "big.jsonl"
    path.write_text("".join(json.dumps({
        "timestamp": 1_700_000_000 + 10 * i,
        "request": {"model": "claude-sonnet-4-20250514", "system": "Be brief.", "max_tokens": 500,
                    "messages": [{"role": "user", "content": f"What is {i} plus {i}?"}]},
        "response": {"id": f"msg_{i}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-20250514",
                     "content": [{"type": "text", "text": str(2 * i)}],
                     "usage": {"input_tokens": 5000 + i, "output_tokens": 2}},
    }) + "\n" for i in range(5)))
    doc = report_doc(path)
    c = doc["calls"][2]
    assert doc["calibration"] is None and c["calibrated"] is None
    # by hand: the system prompt is its text's tokens + 4 of framing (o200k_base); no tools
    system = 4 + get_tokenizer("o200k_base").count("Be brief.")
    assert c["system_tokens"] == c["floor_tokens"] == system
    text = run("plan", str(path), "--call", "3")
    assert f"floor: system {system:,} + tools 0 = {system:,};" in text
    assert "not scaled: the provider's reported prompt (5,002) is x" in text
    plan = json.loads(run("plan", str(path), "--call", "3", "--json"))
    assert plan["messages"][0]["tokens"] == system
    assert plan["before_tokens"] == c["prompt_tokens_estimated"]  # (the count, not the report: said above)


def test_the_runs_calibration_leaves_the_quota_probes_out_as_each_models_does(
        trace: tuple[Path, dict[str, Any]]) -> None:
    """claude-trace: the run's calibration took the six quota probes (8 reported of 8 estimated) that no model's
    calibration takes, so the two medians followed two rules (1.0841 against haiku's 1.1162 and sonnet's
    1.1367).  Worked from the raw fields with plain statistics: the median over the calls that are not probes."""
    _path, doc = trace
    probes = [c for c in doc["calls"] if c["context"] == "probe"]
    assert len(probes) == 6 and all(c["prompt_tokens_reported"] == 8 for c in probes)
    ratios = [c["prompt_tokens_reported"] / c["prompt_tokens_estimated"] for c in doc["calls"]
              if c["context"] != "probe" and c["prompt_tokens_reported"] and c["prompt_tokens_estimated"]]
    assert doc["calibration"] == round(statistics.median(ratios), 4) != 1.0841


def no_usage_run(tmp_path: Path) -> Path:
    """Six Claude calls of one request shape (a system prompt, a tool, a 40-word user message), five reporting
    about 0.79 x their o200k_base estimate, the 4th reporting no usage at all (a verifier's case)."""
    rows = []
    for i in range(6):
        row: dict[str, Any] = {
            "timestamp": 1_700_000_000 + 10 * i,
            "request": {"model": "claude-sonnet-4-20250514", "system": "You are a careful agent. Reply in JSON.",
                        "max_tokens": 1024,
                        "tools": [{"name": "search", "description": "Search the web.", "input_schema": {
                            "type": "object", "properties": {"q": {"type": "string"}}}}],
                        "messages": [{"role": "user", "content": " ".join(f"item{j}x{i}" for j in range(40))}]},
            "response": {"id": f"m{i}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-20250514",
                         "content": [{"type": "text", "text": "{}"}]}}
        if i != 3:
            row["response"]["usage"] = {"input_tokens": 438 + i, "output_tokens": 2}
        rows.append(row)
    path = tmp_path / "no-usage.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_a_calibrated_call_without_usage_shows_free_and_used_from_its_calibrated_parts(tmp_path: Path) -> None:
    """Its floor and history were shown calibrated, but free and used % came from the raw estimate (a prompt of
    886 beside parts of 583 + 116), and plan's 'before' was a third number.  Now free = window - reserve -
    (floor + history + the 3-token primer), calibrated, in report --json, the text report and plan alike."""
    path = no_usage_run(tmp_path)
    doc = report_doc(path)
    c = doc["calls"][3]
    assert c["prompt_tokens_reported"] is None and c["calibrated"] is not None
    cal = statistics.median(x["prompt_tokens_reported"] / x["prompt_tokens_estimated"] for x in doc["calls"]
                            if x["prompt_tokens_reported"])
    floor = round(c["floor_tokens"] * cal)
    history = round(c["history_tokens"] * cal)
    assert (c["calibrated"]["floor_tokens"], c["calibrated"]["history_tokens"]) == (floor, history)
    used = floor + history + PRIMER
    assert c["free_tokens"] == c["window"] - c["reserve_tokens"] - used
    assert c["used_fraction"] == round(used / c["window"], 4)
    rows = report_rows(run("report", str(path)))
    assert rows[4][7].replace(",", "") == str(c["free_tokens"])
    assert f"before {used:,} -> after {used:,} tokens" in run("plan", str(path), "--call", "4")


async def test_the_dashboard_bar_of_a_calibrated_call_without_usage_adds_up(tmp_path: Path) -> None:
    """The bar's free and the table's used % of that call are report --json's: floor + history + reserve + free
    + the 3-token primer is the window."""
    from ctxwatch.ui.app import CtxwatchApp
    from ctxwatch.ui.widgets import CallsTable, ContextBar, bar_parts

    path = no_usage_run(tmp_path)
    c = report_doc(path)["calls"][3]
    app = CtxwatchApp(str(path))
    async with app.run_test(size=(140, 40)) as pilot:
        await loaded(pilot, 6)
        assert app.main is not None
        table = app.main.query_one(CallsTable)
        table.move_cursor(row=app.view.index(3))
        await pilot.pause()
        bar = app.main.query_one(ContextBar)
        parts = bar_parts(app.calls[3], app.settings, bar.shown)
        assert parts.free == c["free_tokens"] and f"free {c['free_tokens']:,}" in str(bar.render())
        assert parts.floor + parts.history + parts.reserve + parts.free + PRIMER == c["window"]
        assert table.cell(app.view.index(3), "used").startswith(f"{100 * c['used_fraction']:.1f}%")
