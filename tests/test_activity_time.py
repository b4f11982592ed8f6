"""A session's "last call" time, as the session picker reads it from the end of the file
(:func:`ctxwatch.engine.activity.last_call_time`), is the time ``report`` gives its last call: a Claude Code
response is written a line per content block, and the call's time is its first line's."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from ctxwatch.engine import load_run
from ctxwatch.engine.activity import ACTIVITY_CHUNK_BYTES, last_call_time


def _responses(path: Path) -> list[tuple[int, float]]:
    """A simple reader: each response (``message.id`` + ``requestId``) of a Claude Code transcript with a usage
    block, as ``(byte offset of its first line, that line's timestamp in epoch seconds)``."""
    firsts: dict[tuple[str, str], tuple[int, float]] = {}
    at = 0
    for raw in path.read_bytes().split(b"\n"):
        start, at = at, at + len(raw) + 1
        try:
            v = json.loads(raw)
        except ValueError:
            continue
        msg = v.get("message") if isinstance(v, dict) else None
        if v.get("type") != "assistant" or not isinstance(msg, dict) or not isinstance(msg.get("usage"), dict):
            continue
        if msg.get("model") == "<synthetic>" or v.get("isApiErrorMessage"):
            continue
        when = datetime.fromisoformat(v["timestamp"].replace("Z", "+00:00")).timestamp()
        firsts.setdefault((str(msg.get("id")), str(v.get("requestId"))), (start, when))
    return list(firsts.values())


def test_a_claude_code_sessions_last_call_is_its_first_lines_time(shared_logs: Path) -> None:
    """On every real Claude Code sample: the time read from the file's end is its latest response's first-line
    time (the simple reader above), as the engine's run (what ``report`` and ``report --sessions`` show) gives
    it, when that response starts in the part read from the end (:data:`ACTIVITY_CHUNK_BYTES`); a response's
    later lines, written seconds after its first, do not count.  A file whose latest call lies further back
    (lines written out of order: a v1.0 inline sidechain) gives an earlier time, never a later one."""
    samples = sorted((shared_logs / "claude-code").glob("*.jsonl"))
    if not samples:
        pytest.skip("no Claude Code samples")
    exact = later_lines = 0
    for path in samples:
        start, expected = max(_responses(path), key=lambda r: r[1])
        got, from_call = last_call_time(str(path))
        assert from_call and got is not None, path.name
        if start < path.stat().st_size - ACTIVITY_CHUNK_BYTES:
            assert got <= expected, path.name
            continue
        exact += 1
        assert abs(got - expected) < 1e-3, (path.name, got, expected)
        engine = max(c.timestamp for c in load_run(str(path)).calls if c.timestamp is not None)
        assert abs(engine - expected) < 1e-3, path.name
        last_line = max(datetime.fromisoformat(json.loads(raw)["timestamp"].replace("Z", "+00:00")).timestamp()
                        for raw in path.read_bytes().splitlines()
                        if b'"type":"assistant"' in raw and b'"usage"' in raw)
        later_lines += last_line > expected + 0.5
    assert exact >= len(samples) - 1 and later_lines  # (responses whose last line is later than their first)


def test_calls_that_share_one_id_are_calls_of_their_own(tmp_path: Path) -> None:
    """A mock server answering every call with one response id, a call a line: each line is a call of its own,
    and the last one's time is the file's last call time; lines of one Claude Code response (the same
    ``message.id`` and ``requestId``) are one call, at its first line's time."""
    def call(ts: str, **ids: str) -> dict:
        return {"type": "assistant", "timestamp": ts, **ids, "usage": {"prompt_tokens": 1}}

    mock = tmp_path / "mock.jsonl"
    mock.write_text("".join(json.dumps(call(f"2026-01-01T10:00:0{s}Z", id="chatcmpl-same")) + "\n" for s in "059"))
    assert last_call_time(str(mock)) == (datetime.fromisoformat("2026-01-01T10:00:09+00:00").timestamp(), True)
    one = tmp_path / "one.jsonl"
    lines = [{"type": "user", "timestamp": "2026-01-01T09:59:00Z"},
             *({"type": "assistant", "timestamp": f"2026-01-01T10:00:0{s}Z", "requestId": "req_1",
                "message": {"id": "msg_1", "usage": {"input_tokens": 1}}} for s in "059")]
    one.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert last_call_time(str(one)) == (datetime.fromisoformat("2026-01-01T10:00:00+00:00").timestamp(), True)
