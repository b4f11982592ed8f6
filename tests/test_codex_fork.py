"""B37: a forked Codex rollout replays its parent's records; read with the parent, the copies count once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import report_of, shared_case


def _last_usages(path: Path) -> list[dict]:
    out = []
    for line in path.read_text().splitlines():
        v = json.loads(line)
        info = v.get("payload", {}).get("info") if v.get("type") == "event_msg" else None
        if info:
            out.append(info["last_token_usage"])
    return out


def test_b37_fork_copies_counted_once(shared_logs):
    folder = Path(shared_case(shared_logs, "b37_codex_fork"))
    parent, child = sorted(folder.glob("*.jsonl"))
    meta = json.loads(child.read_text().splitlines()[0])["payload"]
    assert meta["forked_from_id"] == json.loads(parent.read_text().splitlines()[0])["payload"]["id"]
    # independent: the child's token_count events are the parent's two, then one of its own
    assert _last_usages(child)[:2] == _last_usages(parent)
    own = _last_usages(child)[2]
    doc = report_of(str(folder))
    calls = doc["calls"]
    assert len(calls) == 3
    assert sum(c["prompt_tokens_reported"] for c in calls) == 8_000 + 9_000 + 10_000 == 27_000
    assert sum(c["completion_tokens_reported"] for c in calls) == 950
    # gpt-5 rates: $1.25 input, $0.125 cached, $10 output per MTok (about $0.0237)
    by_hand = (8000 * 1.25 + 300 * 10 + 1200 * 1.25 + 7800 * 0.125 + 400 * 10 + 400 * 1.25 + 9600 * 0.125
               + 250 * 10) / 1e6
    assert sum(c["cost_usd"] for c in calls) == pytest.approx(by_hand) == pytest.approx(0.0237, abs=5e-5)
    sessions = {s["session"]: s for s in doc["sessions"]}
    assert sessions[meta["id"]]["calls"] == 1 and sessions[meta["id"]]["input_tokens"] == own["input_tokens"] == 10_000
