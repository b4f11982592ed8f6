"""claude-trace records Claude Code's own traffic: the agent's calls (those sending tools) follow Claude Code's
limits, as the same session's transcript does (reserve 20,000 for the compaction summary, trigger 33,000 and
budget 23,000 below the 200,000-token window: by hand from Claude Code's rule), while its side calls (probes,
topic detection) keep their request's own ``max_tokens`` as the reserve.  Expected values from the file with
plain json, or by hand."""

from __future__ import annotations

import json
from pathlib import Path

from ctxwatch.config import Settings
from ctxwatch.engine import load_run
from ctxwatch.output.report import report_json


def test_the_agents_calls_follow_claude_codes_limits(shared_logs: Path) -> None:
    path = shared_logs / "request-response" / "claude-trace_test-traffic_head14.jsonl"
    bodies = [json.loads(line)["request"]["body"] for line in path.read_text(encoding="utf-8").splitlines()]
    doc = report_json(load_run(str(path), None, Settings()))
    calls = doc["calls"]
    assert len(calls) == len(bodies)
    for call, body in zip(calls, bodies, strict=True):
        if body.get("tools"):
            assert (call["harness"], call["window"], call["reserve_tokens"], call["reserve_source"]) == \
                ("claude-code", 200_000, 20_000, "harness")
        else:
            assert call["harness"] is None and call["reserve_tokens"] == body["max_tokens"]
    assert sum(1 for b in bodies if b.get("tools")) == 4
    forecast = doc["forecast"]
    assert (forecast["trigger_tokens"], forecast["budget_tokens"]) == (200_000 - 33_000, 200_000 - 23_000)
