"""A count the provider APIs write as a number, given as a JSON string of digits (``"30"``), in the bodies the batch
and claude-trace readers read (a response's usage, a request's ``max_tokens``): read as the count it spells and
said, with an ``invalid_field`` issue naming the field and the value, as the canonical reader says it.

The files are the project samples' own lines with a few numbers turned into strings with plain ``json``; the
expected counts are the sample's numbers and the expected messages are written by hand.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from helpers import report_of

SAMPLES = Path(__file__).resolve().parent.parent / "sample_logs"


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _write(path: Path, values: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(v) + "\n" for v in values), encoding="utf-8")
    return path


def _said(field: str, value: str) -> str:
    """The canonical reader's sentence for ``field`` written as the string ``value``."""
    return f"{field} is a JSON string '{value}', not a number: read as {int(value):,}"


def _invalid(doc: dict[str, Any]) -> list[tuple[str, int, str]]:
    return sorted((Path(i["file"]).name, i["line"], i["message"]) for i in doc["issues"]
                  if i["kind"] == "invalid_field")


def _openai_pair(tmp_path: Path) -> tuple[Path, Path, dict[str, Any], dict[str, Any]]:
    """The sample's first request and its result, with ``max_tokens`` and two usage counts as strings."""
    req = copy.deepcopy(_lines(SAMPLES / "openai-batch" / "batch_input.jsonl")[0])
    res = copy.deepcopy(next(v for v in _lines(SAMPLES / "openai-batch" / "batch_output.jsonl")
                             if v["custom_id"] == req["custom_id"]))
    req["body"]["max_tokens"] = str(req["body"]["max_tokens"])
    usage = res["response"]["body"]["usage"]
    usage["prompt_tokens"] = str(usage["prompt_tokens"])
    usage["prompt_tokens_details"]["cached_tokens"] = str(usage["prompt_tokens_details"]["cached_tokens"])
    inp = _write(tmp_path / "batch_input.jsonl", [req])
    out = _write(tmp_path / "batch_output.jsonl", [res])
    return inp, out, req, res


def test_openai_batch_result_usage_written_as_strings(tmp_path: Path) -> None:
    _, out, _, res = _openai_pair(tmp_path)
    usage = res["response"]["body"]["usage"]
    doc = report_of(str(out))
    assert [(c["prompt_tokens_reported"], c["completion_tokens_reported"]) for c in doc["calls"]] == \
        [(int(usage["prompt_tokens"]), usage["completion_tokens"])]
    assert _invalid(doc) == sorted([
        (out.name, 1, _said("response.body.usage.prompt_tokens", usage["prompt_tokens"])),
        (out.name, 1, _said("response.body.usage.prompt_tokens_details.cached_tokens",
                            usage["prompt_tokens_details"]["cached_tokens"])),
    ])


def test_openai_batch_max_tokens_written_as_a_string_alone_and_joined(tmp_path: Path) -> None:
    """Said at the request's line, read alone or joined (once), and still read: the call's reserve is it."""
    inp, out, req, _ = _openai_pair(tmp_path)
    limit = _said("body.max_tokens", req["body"]["max_tokens"])
    alone = report_of(str(inp))
    assert _invalid(alone) == [(inp.name, 1, limit)]
    assert [c["reserve_tokens"] for c in alone["calls"]] == [int(req["body"]["max_tokens"])]
    joined = report_of(str(inp), str(out))
    assert [m for f, line, m in _invalid(joined) if f == inp.name] == [limit]
    assert [c["reserve_tokens"] for c in joined["calls"]] == [int(req["body"]["max_tokens"])]


def test_anthropic_batch_counts_written_as_strings(tmp_path: Path) -> None:
    req = copy.deepcopy(_lines(SAMPLES / "anthropic-batch" / "requests.jsonl")[0])
    res = copy.deepcopy(next(v for v in _lines(SAMPLES / "anthropic-batch" / "results.jsonl")
                             if v["custom_id"] == req["custom_id"]))
    req["params"]["max_tokens"] = str(req["params"]["max_tokens"])
    usage = res["result"]["message"]["usage"]
    usage["input_tokens"] = str(usage["input_tokens"])
    inp = _write(tmp_path / "requests.jsonl", [req])
    out = _write(tmp_path / "results.jsonl", [res])
    doc = report_of(str(inp), str(out))
    prompt = int(usage["input_tokens"]) + usage["cache_creation_input_tokens"] + usage["cache_read_input_tokens"]
    assert [(c["prompt_tokens_reported"], c["completion_tokens_reported"], c["reserve_tokens"])
            for c in doc["calls"]] == [(prompt, usage["output_tokens"], int(req["params"]["max_tokens"]))]
    assert _invalid(doc) == sorted([
        (inp.name, 1, _said("params.max_tokens", req["params"]["max_tokens"])),
        (out.name, 1, _said("result.message.usage.input_tokens", usage["input_tokens"])),
    ])


def test_the_sample_batches_have_no_string_counts() -> None:
    for sample in ("openai-batch", "anthropic-batch"):
        assert _invalid(report_of(str(SAMPLES / sample))) == [], sample


def _trace_lines() -> list[dict[str, Any]]:
    return _lines(SAMPLES / "claude_trace.jsonl")


def test_claude_trace_body_counts_written_as_strings(tmp_path: Path) -> None:
    """A response body's usage and the request's max_tokens."""
    v = copy.deepcopy(next(x for x in _trace_lines() if isinstance(x["response"].get("body"), dict)
                           and x["response"]["body"]["usage"]["cache_read_input_tokens"]))
    usage = v["response"]["body"]["usage"]
    usage["input_tokens"], usage["cache_read_input_tokens"] = str(usage["input_tokens"]), \
        str(usage["cache_read_input_tokens"])
    v["request"]["body"]["max_tokens"] = str(v["request"]["body"]["max_tokens"])
    log = _write(tmp_path / "trace.jsonl", [v])
    doc = report_of(str(log))
    prompt = int(usage["input_tokens"]) + usage["cache_creation_input_tokens"] + int(usage["cache_read_input_tokens"])
    # (the agent's call, sending tools, keeps Claude Code's own reserve; a side call its request's max_tokens)
    reserve = 20_000 if v["request"]["body"].get("tools") else int(v["request"]["body"]["max_tokens"])
    assert [(c["prompt_tokens_reported"], c["completion_tokens_reported"], c["reserve_tokens"])
            for c in doc["calls"]] == [(prompt, usage["output_tokens"], reserve)]
    assert _invalid(doc) == sorted([
        (log.name, 1, _said("request.body.max_tokens", v["request"]["body"]["max_tokens"])),
        (log.name, 1, _said("response.body.usage.input_tokens", usage["input_tokens"])),
        (log.name, 1, _said("response.body.usage.cache_read_input_tokens", usage["cache_read_input_tokens"])),
    ])


def test_claude_trace_stream_counts_written_as_strings(tmp_path: Path) -> None:
    """An SSE stream's message_start usage and its message_delta's output count (message_start's own
    ``output_tokens`` is a placeholder, never read: not said)."""
    v = copy.deepcopy(next(x for x in _trace_lines() if isinstance(x["response"].get("body_raw"), str)))
    events = []
    start: dict[str, Any] = {}
    delta: dict[str, Any] = {}
    for line in v["response"]["body_raw"].split("\n"):
        if line.startswith("data: "):
            ev = json.loads(line[6:])
            if ev["type"] == "message_start":
                start = ev["message"]["usage"]
                start["input_tokens"], start["output_tokens"] = str(start["input_tokens"]), str(start["output_tokens"])
            elif ev["type"] == "message_delta":
                delta = ev["usage"]
                delta["output_tokens"] = str(delta["output_tokens"])
            line = "data: " + json.dumps(ev)
        events.append(line)
    v["response"]["body_raw"] = "\n".join(events)
    log = _write(tmp_path / "trace.jsonl", [v])
    doc = report_of(str(log))
    prompt = int(start["input_tokens"]) + start["cache_creation_input_tokens"] + start["cache_read_input_tokens"]
    assert [(c["prompt_tokens_reported"], c["completion_tokens_reported"]) for c in doc["calls"]] == \
        [(prompt, int(delta["output_tokens"]))]
    assert _invalid(doc) == sorted([
        (log.name, 1, _said("response.body_raw.message_start.message.usage.input_tokens", start["input_tokens"])),
        (log.name, 1, _said("response.body_raw.message_delta.usage.output_tokens", delta["output_tokens"])),
    ])


def test_the_claude_trace_sample_has_no_string_counts() -> None:
    assert _invalid(report_of(str(SAMPLES / "claude_trace.jsonl"))) == []
