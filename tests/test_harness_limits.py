"""For logs of a harness, the default reserve, budget and trigger follow the harness's own rule, labelled
harness; options still override (issue 21, kind 4).  Expected values by hand from the rules in
ctxwatch/accounting/harness.py's docstring and from the logs with plain json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import report_of, shared_case

from ctxwatch.analysis import analyze_run
from ctxwatch.config import Settings
from ctxwatch.engine import load_run


def _claude_code_samples(shared_logs: Path) -> list[Path]:
    return sorted((shared_logs / "claude-code").glob("*.jsonl"))


def test_healthy_claude_code_sessions_raise_no_warning_by_default(shared_logs: Path) -> None:
    samples = _claude_code_samples(shared_logs)
    assert len(samples) >= 5
    for path in samples:
        doc = json.loads(_check_json(path))
        bad = [f for f in doc["flags"] if f["severity"] in ("warn", "critical")]
        assert bad == [], (path.name, [(f["kind"], f["reason"]) for f in bad])


def _check_json(path: Path, *args: str) -> str:
    from click.testing import CliRunner

    from ctxwatch.cli import main

    res = CliRunner().invoke(main, ["check", "--json", str(path), *args])
    assert res.exit_code in (0, 1), res.output
    return res.output


def test_claude_code_calls_follow_claude_codes_rule(shared_logs: Path) -> None:
    path = shared_logs / "claude-code" / "spotter_4d5611e5_lines700-800_compaction.jsonl"
    doc = report_of(str(path))
    main = [c for c in doc["calls"] if c["context"] == "main"]
    assert main and all(c["harness"] == "claude-code" for c in main)
    assert {(c["window"], c["reserve_tokens"], c["reserve_source"]) for c in main} == {(200_000, 20_000, "harness")}
    run = load_run(str(path), settings=Settings())
    fc = analyze_run(run)["main"].forecast
    # 200,000 - 20,000 (summary output) - 13,000 (auto-compact buffer); - 3,000 (blocking buffer)
    assert (fc.trigger_tokens, fc.budget_tokens, fc.window_limit_tokens) == (167_000, 177_000, 180_000)


def test_claude_code_options_still_override(shared_logs: Path) -> None:
    path = shared_logs / "claude-code" / "spotter_4d5611e5_lines700-800_compaction.jsonl"
    run = load_run(str(path), settings=Settings(budget_fraction=0.5, trigger=0.9, reserve=0.1))
    c = next(c for c in run.calls if c.context == "main")
    assert (c.reserve_tokens, str(c.reserve_src)) == (20_000, "option")
    fc = analyze_run(run)["main"].forecast
    assert (fc.budget_tokens, fc.trigger_tokens) == (100_000, 90_000)


def test_codex_rule_on_a_real_rollout(shared_logs: Path) -> None:
    path = shared_logs / "codex-rollout" / "rollout-2025-11-17T15-30-28-019a93b9_codex0.58.0.jsonl"
    windows = {json.loads(x)["payload"]["info"]["model_context_window"]
               for x in path.read_text().splitlines()
               if '"token_count"' in x and json.loads(x).get("payload", {}).get("info")}
    assert windows == {258_400}  # Codex's effective window: 95 % of GPT-5's 272,000
    doc = report_of(str(path))
    assert {(c["window"], c["window_source"], c["reserve_tokens"], c["reserve_source"]) for c in doc["calls"]} \
        == {(258_400, "log", 0, "harness")}
    fc = analyze_run(load_run(str(path), settings=Settings()))["main"].forecast
    # auto-compact at 90 % of the model's 272,000 = 244,800; budget the effective window
    assert (fc.trigger_tokens, fc.budget_tokens) == (244_800, 258_400)


def test_b36b_codex_without_a_window_gets_95_percent_of_the_input_limit(shared_logs: Path) -> None:
    doc = report_of(shared_case(shared_logs, "b36b_codex_window_null_gpt5.jsonl"))
    assert {(c["window"], c["window_source"]) for c in doc["calls"]} == {(272_000 * 95 // 100, "harness")}
    assert not any(c["prompt_implausible"] for c in doc["calls"])  # (judged against the model's 272,000)


@pytest.mark.parametrize("window", [None, 150_000])
def test_a_window_option_turns_the_harness_window_off(shared_logs: Path, window: int | None) -> None:
    path = shared_case(shared_logs, "b36b_codex_window_null_gpt5.jsonl")
    doc = report_of(path, *(["--window", str(window)] if window else []))
    src = {c["window_source"] for c in doc["calls"]}
    assert src == ({"harness"} if window is None else {"option"})
