"""A line of a Claude Code transcript that is no Claude Code record (no ``type``, or a type Claude Code does not
write and none of its envelope keys) is an ``unknown_record`` issue of its line; Claude Code's own line types,
known or newer than the reader, stay skipped in silence.

Expected values are read from the files with plain ``json`` in the test, or written by hand.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import report_of

CANONICAL = [
    {"request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]},
     "response": {"id": "chatcmpl-1", "usage": {"prompt_tokens": 10, "completion_tokens": 3}}},
    {"request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "again"}]},
     "response": {"id": "chatcmpl-2", "usage": {"prompt_tokens": 20, "completion_tokens": 3}}},
    {"request": {"model": "claude-sonnet-4-5", "messages": [{"role": "user", "content": "hi"}]},
     "response": {"id": "msg_x", "usage": {"input_tokens": 10, "output_tokens": 3}}},
]


def _calls_in(path: Path) -> int:
    """Distinct ``message.id`` of the assistant lines of a transcript (plain json): its calls."""
    rows = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    return len({r["message"]["id"] for r in rows if r.get("type") == "assistant"})


def _appended(shared_logs: Path, tmp_path: Path, extra: list[dict]) -> tuple[Path, int, int]:
    """spotter_short.jsonl with ``extra`` appended: its path, its calls and its line count before them."""
    log = tmp_path / "session.jsonl"
    shutil.copy(shared_logs / "claude-code" / "spotter_short.jsonl", log)
    calls, n = _calls_in(log), len(log.read_text().splitlines())
    with log.open("a") as f:
        f.write("".join(json.dumps(r) + "\n" for r in extra))
    return log, calls, n


def test_canonical_records_in_a_transcript_are_issues(shared_logs: Path, tmp_path: Path) -> None:
    log, calls, n = _appended(shared_logs, tmp_path, CANONICAL)
    doc = report_of(str(log), "--format", "claude-code")
    assert len(doc["calls"]) == calls
    assert [(i["line"], i["kind"]) for i in doc["issues"]] == [(n + k, "unknown_record") for k in (1, 2, 3)]
    assert all("no type key (keys: request, response)" in i["message"] for i in doc["issues"])


def test_records_before_the_transcript_are_issues_too(shared_logs: Path, tmp_path: Path) -> None:
    """Records of another log before the transcript's first line: said once its lines show it is one."""
    log = tmp_path / "session.jsonl"
    own = (shared_logs / "claude-code" / "spotter_short.jsonl").read_text()
    log.write_text("".join(json.dumps(r) + "\n" for r in CANONICAL) + own)
    doc = report_of(str(log), "--format", "claude-code")
    assert len(doc["calls"]) == _calls_in(shared_logs / "claude-code" / "spotter_short.jsonl")
    assert sorted((i["line"], i["kind"]) for i in doc["issues"]) == [(k, "unknown_record") for k in (1, 2, 3)]


@pytest.mark.parametrize(("record", "said"), [
    ({"timestamp": "2025-11-17T15:30:28Z", "type": "response_item", "payload": {"type": "message"}},
     "type 'response_item' without Claude Code's envelope"),
    ({"type": "gemini", "content": "hi", "id": "m1"}, "type 'gemini' without Claude Code's envelope"),
    ({"uuid": "u-1", "parentUuid": None, "message": {"role": "user"}}, "no type key"),
])
def test_a_record_of_another_shape_is_an_issue(shared_logs: Path, tmp_path: Path, record: dict, said: str) -> None:
    log, calls, n = _appended(shared_logs, tmp_path, [record])
    doc = report_of(str(log), "--format", "claude-code")
    assert len(doc["calls"]) == calls
    assert [(i["line"], i["kind"]) for i in doc["issues"]] == [(n + 1, "unknown_record")]
    assert said in doc["issues"][0]["message"]


def test_claude_code_bookkeeping_and_newer_types_stay_silent(shared_logs: Path, tmp_path: Path) -> None:
    """Known bookkeeping lines (some carry no envelope) and a type newer than the reader on a line with
    Claude Code's envelope are no issue."""
    extra = [{"type": "summary", "summary": "A title", "leafUuid": "u-9"},
             {"type": "file-history-snapshot", "messageId": "m", "snapshot": {}, "isSnapshotUpdate": False},
             {"type": "queue-operation", "operation": "enqueue", "timestamp": "2026-01-01T00:00:00Z"},
             {"type": "custom-title", "customTitle": "t"},
             {"type": "a-type-of-a-later-release", "sessionId": "s", "uuid": "u-10", "parentUuid": None}]
    log, calls, _ = _appended(shared_logs, tmp_path, extra)
    doc = report_of(str(log), "--format", "claude-code")
    assert len(doc["calls"]) == calls
    assert doc["issues"] == []


def test_real_transcripts_have_no_foreign_records(shared_logs: Path) -> None:
    for path in sorted((shared_logs / "claude-code").glob("*.jsonl")):
        doc = report_of(str(path), "--format", "claude-code")
        assert [i for i in doc["issues"] if i["kind"] == "unknown_record"] == [], path.name
