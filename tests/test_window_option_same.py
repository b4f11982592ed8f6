"""``--window`` of the window the model has anyway is no what-if: the report is the one without it (the calls keep
their window's source and so their harness's rules, as ``plan --window`` of the call's own window keeps them);
another window is the user's, judged by ctxwatch's defaults."""

from __future__ import annotations

from pathlib import Path

from ctxwatch.config import Settings
from ctxwatch.engine import load_run
from ctxwatch.output.report import report_json


def _calls(path: Path, window: int | None) -> list[dict]:
    run = load_run(str(path), None, Settings(window=window) if window else Settings())
    return report_json(run)["calls"]


def test_the_models_own_window_given_changes_nothing(shared_logs: Path) -> None:
    path = shared_logs / "claude-code" / "spotter_4d5611e5_full.jsonl"
    plain = _calls(path, None)
    # (Claude Code's window: the standard 200k, and its own reserve of 20,000 for the summary)
    assert {c["window"] for c in plain} == {200_000} and {c["reserve_tokens"] for c in plain} == {20_000}
    assert _calls(path, 200_000) == plain


def test_another_window_is_the_users(shared_logs: Path) -> None:
    path = shared_logs / "claude-code" / "spotter_4d5611e5_full.jsonl"
    calls = _calls(path, 100_000)
    assert {c["window_source"] for c in calls} == {"option"}
    # (ctxwatch's default reserve, 0.15 of the window, by hand)
    assert {c["reserve_tokens"] for c in calls} == {15_000}
