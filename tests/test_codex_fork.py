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


def test_b37_fork_read_alone_gives_its_parent_the_copied_calls(shared_logs):
    """The fork's rollout alone: its own session has its one call, as read with the parent; the two copied
    calls (stamped at the fork's session_meta) are the parent's, counted once, with a note saying so."""
    folder = Path(shared_case(shared_logs, "b37_codex_fork"))
    parent, child = sorted(folder.glob("*.jsonl"))
    parent_id = json.loads(parent.read_text().splitlines()[0])["payload"]["id"]
    child_id = json.loads(child.read_text().splitlines()[0])["payload"]["id"]
    alone = report_of(str(child))
    both = report_of(str(folder))
    by_session = {s["session"]: (s["calls"], s["input_tokens"], s["output_tokens"]) for s in alone["sessions"]}
    parent_usages = _last_usages(parent)
    assert by_session == {
        child_id: (1, 10_000, 250),
        parent_id: (2, sum(u["input_tokens"] for u in parent_usages), sum(u["output_tokens"] for u in parent_usages)),
    }
    assert by_session[child_id] == next((s["calls"], s["input_tokens"], s["output_tokens"])
                                        for s in both["sessions"] if s["session"] == child_id)
    notes = [i for i in alone["issues"] if i["kind"] == "fork_copies"]
    assert len(notes) == 1 and notes[0]["message"].startswith(f"2 calls of session {parent_id} copied into ")


def test_a_fork_own_calls_after_its_copy_are_its_own(shared_logs, tmp_path):
    """A call stamped later than the copy (the fork's own) stays the fork's; a rollout without
    ``forked_from_id`` keeps every call as its own."""
    folder = Path(shared_case(shared_logs, "b37_codex_fork"))
    child = sorted(folder.glob("*.jsonl"))[1]
    lines = child.read_text().splitlines()
    meta = json.loads(lines[0])
    late = [ln.replace('"2025-10-23T11:00:00.000Z"', '"2025-10-23T11:00:03.000Z"') if i else ln
            for i, ln in enumerate(lines)]  # (every record but the session_meta stamped 3 s after it)
    (tmp_path / "late.jsonl").write_text("\n".join(late) + "\n")
    doc = report_of(str(tmp_path / "late.jsonl"))
    assert [s["session"] for s in doc["sessions"]] == [meta["payload"]["id"]]
    assert not [i for i in doc["issues"] if i["kind"] == "fork_copies"]
    meta["payload"].pop("forked_from_id")
    (tmp_path / "plain.jsonl").write_text("\n".join([json.dumps(meta), *lines[1:]]) + "\n")
    doc = report_of(str(tmp_path / "plain.jsonl"))
    assert [(s["session"], s["calls"]) for s in doc["sessions"]] == [(meta["payload"]["id"], 3)]
