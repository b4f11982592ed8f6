"""``estimate_disagrees`` raises one flag per run of consecutive calls whose estimate disagrees with the report;
its reason names the run's worst call too, so that a call far more off than the first (a message of 20,000 words
reported as a 60-token prompt) is said, not only counted in the evidence."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from ctxwatch.cli import main


def line(messages: list[dict], reported: int) -> str:
    return json.dumps({"request": {"model": "gpt-4o", "messages": messages},
                       "response": {"choices": [{"message": {"role": "assistant", "content": "ok"}}],
                                    "usage": {"prompt_tokens": reported, "completion_tokens": 1}}})


def test_the_worst_call_of_a_streak_is_named(tmp_path: Path) -> None:
    first = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "hello there"}]
    second = [*first, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "word " * 20_000}]
    log = tmp_path / "run.jsonl"
    log.write_text(line(first, 54) + "\n" + line(second, 60) + "\n")
    res = CliRunner().invoke(main, ["report", "--json", "--no-cache", str(log)])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    flags = [f for f in doc["flags"] if f["kind"] == "estimate_disagrees"]
    assert len(flags) == 1  # (one streak: both calls disagree)
    f = flags[0]
    assert f["call"] == 0 and f["evidence"]["calls"] == 2 and f["evidence"]["max_call"] == 1
    estimated = doc["calls"][1]["prompt_tokens_estimated"]
    assert estimated > 20_000  # (each "word " a token at least: the report of 60 is far off)
    assert f["severity"] == "warn"
    assert f"the largest gap of these calls in a row: #2, estimate {estimated:,} " in f["reason"]
    # (a gap of more than 10 times the reported prompt is said as a multiple of it)
    assert f"vs the reported 60 ({(estimated - 60) / 60:,.0f} times its size)" in f["reason"]
