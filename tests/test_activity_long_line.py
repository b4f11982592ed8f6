"""A log's last call time (:func:`~ctxwatch.engine.activity.last_call_time`, which orders a folder's sessions for
the status line, the session picker and the newest session the dashboard follows) when the last call's line is
longer than a read from the end (:data:`~ctxwatch.engine.activity.ACTIVITY_CHUNK_BYTES`): the line is read whole,
its timestamp at the start and its usage at the end."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from ctxwatch.engine.activity import ACTIVITY_CHUNK_BYTES, last_call_time
from tests.helpers import report_of

SAMPLE = ("request-response", "claude-trace_test-traffic_head14.jsonl")


def test_a_last_call_line_longer_than_a_read_gives_its_own_time(shared_logs: Path, tmp_path: Path) -> None:
    rows = [json.loads(x) for x in shared_logs.joinpath(*SAMPLE).read_text().splitlines()]
    # (the last call's request carries a long tool result, as agent logs' lines often do)
    big = rows[-1]["request"]["body"]["messages"][-1]
    big["content"] = [{"type": "text", "text": "x" * (3 * ACTIVITY_CHUNK_BYTES)}]
    del rows[-1]["response"]["timestamp"]  # (the call's one time is then at the line's start, before the long part)
    log = tmp_path / "long.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    lines = log.read_bytes().splitlines()
    assert len(lines[-1]) > 2 * ACTIVITY_CHUNK_BYTES and lines[-1].index(b'"usage"') > ACTIVITY_CHUNK_BYTES
    got, from_call = last_call_time(str(log))
    assert from_call and got == rows[-1]["request"]["timestamp"]  # (a separate reader: the line's own field)
    calls = report_of(str(log))["calls"]
    assert calls[-1]["line"] == len(rows)
    assert abs(datetime.fromisoformat(calls[-1]["timestamp"]).timestamp() - got) < 1e-3  # (as report dates it)
