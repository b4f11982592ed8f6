"""A Codex rollout from before token_count events (codex-rs, mid-2025) is read as a Codex rollout whose calls
have unknown usage, not as a file of no known format (issue 21, kind 6)."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import report_of

LINES = [
    {"id": "0197aaaa-0000-7000-8000-000000000001", "timestamp": "2025-06-10T09:00:00.000Z",
     "instructions": None, "git": {"commit_hash": "abc", "branch": "main"}},
    {"record_type": "state"},
    {"type": "message", "id": None, "role": "user", "content": [{"type": "input_text", "text": "List the files."}]},
    {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Use ls."}]},
    {"type": "function_call", "id": "fc_1", "name": "shell", "arguments": "{\"command\":[\"ls\"]}", "call_id": "c1"},
    {"type": "function_call_output", "call_id": "c1", "output": "{\"output\":\"a.py\\nb.py\\n\"}"},
    {"record_type": "state"},
    {"type": "message", "id": "msg_1", "role": "assistant", "content": [{"type": "output_text", "text": "a.py, b.py"}]},
    {"type": "message", "id": None, "role": "user", "content": [{"type": "input_text", "text": "Thanks."}]},
    {"type": "message", "id": "msg_2", "role": "assistant", "content": [{"type": "output_text", "text": "Welcome."}]},
]


def test_legacy_rollout_calls_with_unknown_usage(tmp_path: Path) -> None:
    path = tmp_path / "rollout-2025-06-10T09-00-00-0197aaaa.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in LINES))
    doc = report_of(str(path))
    assert doc["format"] == "codex"
    calls = doc["calls"]
    # three model turns: after the first user message, after the tool output, after the second user message
    assert len(calls) == 3
    assert all(c["prompt_tokens_reported"] is None and c["completion_tokens_reported"] is None for c in calls)
    assert all(c["cost_usd"] is None for c in calls)
    assert [c["messages"] for c in calls] == [1, 4, 6]
    assert {c["session"] for c in calls} == {"0197aaaa-0000-7000-8000-000000000001"}
