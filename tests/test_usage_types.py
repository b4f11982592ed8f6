"""A usage block of the wrong JSON type, or a count in it written as a JSON string, is an ``invalid_field`` issue
of its line in every reader of Anthropic, OpenAI and Gemini usage, in the canonical reader's words.

Expected values are read from the files with plain ``json`` in the test, or written by hand.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import report_of


def _edit_call(log: Path, shared_logs: Path, index: int, edit) -> tuple[list[int], dict]:  # type: ignore[no-untyped-def]
    """Copy spotter_tool_heavy.jsonl to ``log`` with ``edit(message)`` applied to each assistant line of its
    ``index``-th call (by ``message.id``); the lines edited and the call's original usage."""
    shutil.copy(shared_logs / "claude-code" / "spotter_tool_heavy.jsonl", log)
    rows = [json.loads(x) for x in log.read_text().splitlines()]
    ids = list(dict.fromkeys(r["message"]["id"] for r in rows if r.get("type") == "assistant"))
    lines = [n for n, r in enumerate(rows, 1) if r.get("type") == "assistant" and r["message"]["id"] == ids[index]]
    usage = dict(rows[lines[0] - 1]["message"]["usage"])
    for n in lines:
        edit(rows[n - 1]["message"])
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return lines, usage


def test_claude_code_null_usage_is_an_issue_of_each_line(shared_logs: Path, tmp_path: Path) -> None:
    log = tmp_path / "null_usage.jsonl"
    lines, _ = _edit_call(log, shared_logs, 1, lambda m: m.update(usage=None))
    doc = report_of(str(log))
    assert len(doc["calls"]) == 4  # (the call is kept)
    assert [(i["line"], i["kind"]) for i in doc["issues"]] == [(n, "invalid_field") for n in lines]
    assert all("message.usage is a JSON null" in i["message"] for i in doc["issues"])
    assert doc["calls"][1]["prompt_tokens_reported"] is None


def test_claude_code_count_as_a_string_is_read_and_said(shared_logs: Path, tmp_path: Path) -> None:
    log = tmp_path / "string_count.jsonl"

    def stringify(m: dict) -> None:
        m["usage"]["cache_read_input_tokens"] = str(m["usage"]["cache_read_input_tokens"])

    lines, usage = _edit_call(log, shared_logs, 2, stringify)
    doc = report_of(str(log))
    assert [(i["line"], i["kind"]) for i in doc["issues"]] == [(n, "invalid_field") for n in lines]
    want = usage["cache_read_input_tokens"]
    assert all(i["message"] == f"message.usage.cache_read_input_tokens is a JSON string '{want}', not a number: "
                                f"read as {want:,}" for i in doc["issues"])
    call = doc["calls"][2]
    assert call["cache_read_tokens"] == want
    assert call["prompt_tokens_reported"] == (usage["input_tokens"] + usage["cache_creation_input_tokens"] + want)


def test_gemini_count_as_a_string_is_read_and_said(tmp_path: Path) -> None:
    log = tmp_path / "gemini.jsonl"
    log.write_text(json.dumps({"modelVersion": "gemini-2.5-pro", "candidates": [{"content": {"parts": [
        {"text": "ok"}]}}], "usageMetadata": {"promptTokenCount": "1200", "candidatesTokenCount": 30,
                                              "totalTokenCount": 1230}}) + "\n")
    doc = report_of(str(log))
    assert [(i["line"], i["kind"], i["message"]) for i in doc["issues"]] == [
        (1, "invalid_field", "usageMetadata.promptTokenCount is a JSON string '1200', not a number: read as 1,200")]
    assert doc["calls"][0]["prompt_tokens_reported"] == 1200


def _first(rows: list, pick) -> tuple[int, dict]:  # type: ignore[no-untyped-def]
    """The line (from 1) and the usage block ``pick(row)`` of the first row that has one."""
    return next((n, block) for n, r in enumerate(rows, 1) if (block := pick(r)) is not None)


def _codex_usage(r: dict) -> dict | None:
    p = r.get("payload")
    if r.get("type") == "event_msg" and isinstance(p, dict) and p.get("type") == "token_count" and p.get("info"):
        return p["info"]["last_token_usage"]
    return None


#: (sample, the block of a row, its name in the issue, the count written as a string)
SAMPLES = {
    "codex": ("codex-rollout/rollout-2025-11-17T15-30-28-019a93b9_codex0.58.0.jsonl", _codex_usage,
              "payload.info.last_token_usage", "input_tokens"),
    "gemini-cli": ("gemini-cli/derived_schema_fixture_agent-sessions_gemini_jsonl_v040.jsonl",
                   lambda r: r["tokens"] if r.get("type") == "gemini" and isinstance(r.get("tokens"), dict) else None,
                   "a gemini message's tokens", "input"),
    "openhands-eval": ("request-response/openhands/multi_swe_bench_output_line1.jsonl",
                       lambda r: r["metrics"]["token_usages"][0], "metrics.token_usages[0]", "prompt_tokens"),
}


@pytest.mark.parametrize("case", list(SAMPLES))
def test_every_reader_says_a_count_written_as_a_string(shared_logs: Path, tmp_path: Path, case: str) -> None:
    sample, pick, where, key = SAMPLES[case]
    src = shared_logs / sample
    rows = [json.loads(x) for x in src.read_text().splitlines() if x.strip()]
    before = {(i["line"], i["kind"], i["message"]) for i in report_of(str(src))["issues"]}
    line, block = _first(rows, pick)
    n = block[key]
    block[key] = str(n)
    log = tmp_path / src.name
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    new = [i for i in report_of(str(log))["issues"] if (i["line"], i["kind"], i["message"]) not in before]
    assert [(i["line"], i["kind"], i["message"]) for i in new] == [
        (line, "invalid_field", f"{where}.{key} is a JSON string '{n}', not a number: read as {n:,}")]
