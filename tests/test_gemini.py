"""Gemini usageMetadata records and Gemini CLI chat recordings.

Expected values are read from the files with plain ``json`` in the test, or worked by hand.
"""

from __future__ import annotations

import base64
import json
import struct
from pathlib import Path

import pytest

from ctxwatch.formats import GeminiCliReader, detect
from ctxwatch.formats.gemini import GeminiReader, gemini_usage
from ctxwatch.model import Issue, ParsedCall
from ctxwatch.source import iter_records

BATCH = "other/gemini-batch/batch_gemini-2.5-pro-exp-03-25.jsonl"
CLI = "gemini-cli/derived_schema_fixture_agent-sessions_gemini_jsonl_v040.jsonl"


def _read(reader, path: Path) -> tuple[list[ParsedCall], list[Issue]]:
    """Feed a file's records; later outputs with a known key replace earlier ones (as a Run does)."""
    calls: dict[str, ParsedCall] = {}
    order: list[str] = []
    issues: list[Issue] = []
    for rec in iter_records(str(path)):
        outs = [rec] if isinstance(rec, Issue) else list(reader.feed(rec))
        for o in outs:
            if isinstance(o, Issue):
                issues.append(o)
                continue
            key = o.key or f"#{len(order)}"
            if key not in calls:
                order.append(key)
            calls[key] = o
    return [calls[k] for k in order], issues


def _write(path: Path, rows: list) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_batch_sample_usage_per_call(shared_logs: Path) -> None:
    path = shared_logs / BATCH
    rows = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    calls, issues = _read(GeminiReader(str(path)), path)
    assert issues == []
    assert len(calls) == len(rows) == 20
    for c, r in zip(calls, rows, strict=True):
        um = r["usageMetadata"]
        assert c.usage.prompt_total == um["promptTokenCount"]
        assert c.usage.cache_read == um.get("cachedContentTokenCount", 0)
        assert c.usage.output == um["candidatesTokenCount"] + um.get("thoughtsTokenCount", 0)
        assert c.usage.prompt_total + c.usage.output == um["totalTokenCount"]  # no thoughts in this sample
        assert c.model == r["modelVersion"] and c.provider == "google"
        assert c.provenance.custom_id == r["custom_id"]
        assert c.response.text == "".join(p["text"] for p in r["candidates"][0]["content"]["parts"])
        assert c.messages is None  # the request is not in these lines: not logged


def test_usage_rule_by_hand() -> None:
    # thoughts are counted apart from candidates; cached is inside the prompt (FORMATS.md §0); the tool-use
    # prompt is input beside promptTokenCount (total 1,280 = 1,000 + 30 + 50 + 200)
    u, tool = gemini_usage({"promptTokenCount": 1000, "cachedContentTokenCount": 600, "candidatesTokenCount": 50,
                            "thoughtsTokenCount": 200, "toolUsePromptTokenCount": 30, "totalTokenCount": 1280})
    assert (u.prompt_total, u.input_uncached, u.cache_read, u.output, u.reasoning, tool) == (1030, 430, 600, 250,
                                                                                           200, 30)
    u, _ = gemini_usage({"prompt_token_count": 10, "candidates_token_count": 2})  # SDK spelling
    assert (u.prompt_total, u.output, u.cache_read, u.reasoning) == (10, 2, 0, 0)
    assert gemini_usage({}) == (None, None)


def test_a_gemini_count_that_is_not_a_count_is_reported() -> None:
    """"1e3" as the thoughts count is passed on for the sanitizer to report (it was made unknown silently, and
    the output summed without it); the other fields keep their values."""
    from ctxwatch.engine.sanitize import sanitize as _sanitize
    from ctxwatch.model import ParsedCall, SourceRef

    u, _ = gemini_usage({"promptTokenCount": 100, "candidatesTokenCount": 5, "thoughtsTokenCount": "1e3"})
    pc = ParsedCall(source=SourceRef("g.jsonl", 1, 1, 0, 10), timestamp=None, model="gemini-2.5-pro",
                    provider="google", session=None, context="main", system=None, tools=None, messages=None, usage=u)
    pc, (issue,) = _sanitize(pc)
    assert "reasoning tokens '1e3'" in issue.message and "output tokens '1e3'" in issue.message
    assert pc.usage is not None
    assert (pc.usage.prompt_total, pc.usage.output, pc.usage.reasoning, pc.usage.cache_read) == (100, None, None, 0)


def _png_b64(w: int, h: int) -> str:
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    return base64.b64encode(b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + ihdr + b"\0" * 4000).decode()


def test_batch_wrappers_requests_and_failures(tmp_path: Path) -> None:
    img = _png_b64(640, 480)
    rows = [
        {"key": "k1", "response": {"candidates": [{"content": {"parts": [{"text": "ok"}], "role": "model"},
                                                   "finishReason": "STOP"}],
                                   "usageMetadata": {"promptTokenCount": 300, "candidatesTokenCount": 5},
                                   "modelVersion": "gemini-2.5-flash", "responseId": "resp-1"}},
        {"key": "k2", "error": {"code": 400, "message": "Request contains an invalid argument."}},
        {"request": {"systemInstruction": {"parts": [{"text": "Be terse."}]},
                     "contents": [{"role": "user", "parts": [{"text": "look"},
                                                             {"inlineData": {"mimeType": "image/png", "data": img}}]},
                                  {"role": "model", "parts": [{"functionCall": {"name": "zoom", "args": {"x": 1}}}]},
                                  {"role": "user", "parts": [{"functionResponse": {"name": "zoom",
                                                                                   "response": {"ok": True}}}]}],
                     "tools": [{"functionDeclarations": [{"name": "zoom", "description": "Zoom in",
                                                          "parameters": {"type": "object"}}]}],
                     "generationConfig": {"maxOutputTokens": 256}},
         "response": {"candidates": [{"content": {"parts": [{"text": "a cat"}]}}],
                      "usageMetadata": {"promptTokenCount": 700, "candidatesTokenCount": 3}},
         "status": ""},
        {"request": {"contents": []}, "status": "INVALID_ARGUMENT: bad"},
    ]
    path = _write(tmp_path / "g.jsonl", rows)
    calls, issues = _read(GeminiReader(str(path)), path)
    assert [c.usage.prompt_total for c in calls] == [300, 700]
    assert calls[0].key == "resp-1" and calls[0].model == "gemini-2.5-flash"
    assert [i.kind for i in issues] == ["failed_request", "failed_request"] and [i.line for i in issues] == [2, 4]
    c = calls[1]
    assert c.system == ["Be terse."] and c.max_output_tokens == 256
    assert c.tools == [{"type": "function", "function": {"name": "zoom", "description": "Zoom in",
                                                         "parameters": {"type": "object"}}}]
    assert [m.role for m in c.messages] == ["user", "assistant", "tool"]
    image = c.messages[0].parts[1]
    assert image.kind == "image" and (image.meta["width"], image.meta["height"]) == (640, 480)  # B03
    assert image.text == "" and img[:50] not in c.messages[0].text()
    assert c.messages[1].parts[0].kind == "tool_call" and c.messages[1].parts[0].name == "zoom"


def test_cli_recording_sample(shared_logs: Path) -> None:
    path = shared_logs / CLI
    rows = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    gem = [r for r in rows if r.get("type") == "gemini" and "tokens" in r]
    calls, issues = _read(GeminiCliReader(str(path)), path)
    assert issues == []
    assert len(calls) == len(gem) == 2
    for c, r in zip(calls, gem, strict=True):
        t = r["tokens"]
        assert c.usage.prompt_total == t["input"]
        assert c.usage.cache_read == t["cached"]
        assert c.usage.input_uncached == t["input"] - t["cached"]
        assert c.usage.output == t["output"] + t["thoughts"]
        assert c.model == r["model"] and c.session == rows[0]["sessionId"]
        assert c.system is None and c.tools is None and c.history_reported_only
    # hand-worked: call 2 = 12,069 prompt of which 11,502 cached
    assert (calls[1].usage.prompt_total, calls[1].usage.cache_read, calls[1].usage.input_uncached) == (12069, 11502,
                                                                                                       567)
    assert [m.role for m in calls[0].messages] == ["user"]
    assert [m.role for m in calls[1].messages] == ["user", "assistant", "tool"]
    call_part = calls[1].messages[1].parts[0]
    assert (call_part.kind, call_part.name, call_part.call_id) == ("tool_call", "run_shell_command",
                                                                   "run_shell_command_stage0")
    assert calls[1].messages[2].parts[0].call_id == "run_shell_command_stage0"
    assert detect(str(path)).name == "gemini-cli"


def test_cli_patches_rewind_and_rewrites(tmp_path: Path) -> None:
    tok = {"input": 100, "output": 10, "cached": 0, "thoughts": 5, "tool": 0, "total": 115}
    rows = [
        {"sessionId": "s1", "projectHash": "h", "startTime": "2026-01-01T00:00:00Z", "kind": "main"},
        {"id": "u1", "timestamp": "2026-01-01T00:00:01Z", "type": "user", "content": [{"text": "hi"}]},
        {"id": "g1", "timestamp": "2026-01-01T00:00:02Z", "type": "gemini", "content": "", "model": "gemini-x"},
        {"$set": {"lastUpdated": "2026-01-01T00:00:02Z"}},
        {"id": "g1", "timestamp": "2026-01-01T00:00:02Z", "type": "gemini", "content": "", "model": "gemini-x",
         "tokens": tok},
        {"id": "g1", "timestamp": "2026-01-01T00:00:02Z", "type": "gemini", "content": "", "model": "gemini-x",
         "tokens": tok, "toolCalls": [{"id": "t1", "name": "ls", "args": {}, "result": [
             {"functionResponse": {"id": "t1", "name": "ls", "response": {"output": "a b"}}}]}]},
        {"id": "i1", "timestamp": "2026-01-01T00:00:03Z", "type": "info", "content": "notice"},
        {"id": "g2", "timestamp": "2026-01-01T00:00:04Z", "type": "gemini", "content": "done", "model": "gemini-x",
         "tokens": {**tok, "input": 200}},
        {"$rewindTo": "g2"},
        {"$set": {"messages": [{"id": "u0", "type": "user", "content": "<session_context>ctx</session_context>"}]}},
        {"id": "u2", "timestamp": "2026-01-01T00:00:05Z", "type": "user", "content": "again"},
        {"id": "g3", "timestamp": "2026-01-01T00:00:06Z", "type": "gemini", "content": "ok", "model": "gemini-x",
         "tokens": {**tok, "input": 50}},
        "junk",
    ]
    path = _write(tmp_path / "session.jsonl", rows)
    calls, issues = _read(GeminiCliReader(str(path)), path)
    assert [c.key for c in calls] == ["s1:g1", "s1:g2", "s1:g3"]  # g1 written three times, counted once
    assert [c.usage.prompt_total for c in calls] == [100, 200, 50]
    assert calls[0].usage.output == 15 and calls[0].usage.reasoning == 5
    assert calls[0].source.line == 6 and calls[0].response.tool_calls == 1  # the last copy of g1 wins
    assert [m.role for m in calls[1].messages] == ["user", "assistant", "tool"]  # info notices are not sent
    assert [m.text() for m in calls[2].messages] == ["<session_context>ctx</session_context>", "again"]
    assert [i.kind for i in issues] == ["unknown_record"] and issues[0].line == 13


def test_cli_legacy_json_document(tmp_path: Path) -> None:
    doc = {"sessionId": "old", "projectHash": "h", "startTime": "2025-07-01T00:00:00Z",
           "lastUpdated": "2025-07-01T00:01:00Z",
           "messages": [{"id": "u", "type": "user", "content": "hello"},
                        {"id": "g", "type": "gemini", "content": "hi", "model": "gemini-2.5-pro",
                         "tokens": {"input": 900, "output": 7, "cached": 100, "thoughts": 40, "tool": 0,
                                    "total": 947}}]}
    path = tmp_path / "session-2025-07-01T00-00-old.json"
    path.write_text(json.dumps(doc, indent=2))
    assert detect(str(path)).name == "gemini-cli-json"
    out = list(GeminiCliReader(str(path)).feed_document(json.loads(path.read_text())))
    (c,) = out
    assert (c.usage.prompt_total, c.usage.cache_read, c.usage.output) == (900, 100, 47)
    assert c.source.line == 0 and c.source.byte_end == path.stat().st_size
    assert [i.kind for i in GeminiCliReader(str(path)).feed_document([1, 2])] == ["unknown_record"]


def test_saved_sample_is_priced_at_the_standard_rate_and_says_as_which_model(shared_logs: Path) -> None:
    """The saved sample is not a Batch Mode result: nf-osi/jobs' ``submit_batch_gemini.sh`` (SOURCES.md) POSTs
    each input line to ``models/gemini-2.5-pro-exp-03-25:generateContent`` one by one and appends the response
    with ``jq '. + {custom_id}'``, so each line is a synchronous call, billed at the standard rate (Batch Mode
    results are ``{key, response}`` lines, and only those are billed at 50 %).  genai-prices matches the
    experimental name to Gemini 2.5 Pro, whose entry lists no context window: the cost says it was priced as
    gemini-2.5-pro, and the window is the input limit Google documents for that entry (1,048,576 tokens, the
    Gemini API's model page), labelled documented, unless given.

    Expected cost per line by hand from Google's Gemini API pricing for Gemini 2.5 Pro, prompts up to 200k
    tokens: $1.25 per 1M input tokens, $10.00 per 1M output tokens (thinking included; none in this file)."""
    from click.testing import CliRunner

    from ctxwatch.cli import main

    path = shared_logs / BATCH
    rows = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    assert all("key" not in r and "response" not in r for r in rows)  # bare responses, not Batch Mode lines
    want = []
    for r in rows:
        um = r["usageMetadata"]
        assert um["promptTokenCount"] <= 200_000
        want.append((um["promptTokenCount"] * 1.25 + (um["candidatesTokenCount"] + um.get("thoughtsTokenCount", 0))
                     * 10.00) / 1_000_000)
    assert abs(want[0] - 0.0111975) < 1e-12  # line 1: 5,302 in, 457 out (the tester's figure: the full price)
    res = CliRunner().invoke(main, ["report", str(path), "--json"])
    assert res.exit_code == 0, res.output
    calls = json.loads(res.output)["calls"]
    assert [c["cost_usd"] for c in calls] == [pytest.approx(w, rel=1e-12) for w in want]
    assert all(c["priced_as"] == {"provider": "google", "model": "gemini-2.5-pro"} for c in calls)
    assert all((c["window"], c["window_source"]) == (1_048_576, "documented") for c in calls)
    text = CliRunner().invoke(main, ["report", str(path)]).output
    assert "gemini-2.5-pro-exp-03-25 -> gemini-2.5-pro (google)" in text
    assert "window of gemini-2.5-pro-exp-03-25 (documented): input limit 1,048,576" in text
    # A window given is used instead.
    calls = json.loads(CliRunner().invoke(main, ["report", str(path), "--json", "--window", "500000"]).output)["calls"]
    assert all((c["window"], c["window_source"]) == (500_000, "option") for c in calls)


def test_a_request_response_line_without_status_is_not_a_vertex_batch_line(tmp_path: Path) -> None:
    """Vertex AI batch prediction writes ``status`` on every output row (``""`` when the request succeeded), so
    ``{request, response, status}`` is a batch line: priced at the batch rate, half the standard one (Vertex AI
    pricing: batch requests are discounted 50 %).  The same line without ``status`` is also how a request logger
    writes a synchronous generateContent call, and nothing in it says it came from a batch: it stays a
    synchronous call at the standard rate (the decision is written down in ``GeminiReader.feed``)."""
    from click.testing import CliRunner

    from ctxwatch.cli import main

    line = {"request": {"contents": [{"role": "user", "parts": [{"text": "summarise the report"}]}]},
            "response": {"candidates": [{"content": {"parts": [{"text": "ok"}], "role": "model"}}],
                         "usageMetadata": {"promptTokenCount": 100_000, "candidatesTokenCount": 1_000},
                         "modelVersion": "gemini-2.5-flash"}}
    path = tmp_path / "g.jsonl"
    path.write_text(json.dumps({**line, "status": ""}) + "\n" + json.dumps(line) + "\n")
    calls, issues = _read(GeminiReader(str(path)), path)
    assert issues == [] and [c.provenance.batch_side for c in calls] == ["output", None]
    res = CliRunner().invoke(main, ["report", str(path), "--format", "gemini", "--json"])
    batch, synchronous = (c["cost_usd"] for c in json.loads(res.output)["calls"])
    assert batch is not None and synchronous == pytest.approx(2 * batch)


def test_cli_floor_is_inferred_once_and_held(shared_logs: Path, tmp_path: Path) -> None:
    """The system prompt and tools are not recorded: the first call's reported prompt minus its counted history
    is the floor, and a later call's history is its reported prompt minus that floor (an audit found the floor
    inferred again on every call, moving 11,845 -> 12,004 with nothing changed).  Hand-worked from the file:
    call 1 sends only the user message ("Say hello and list files.", o200k tokens + 4 of framing)."""
    from ctxwatch.engine import Run, resolve_spec
    from ctxwatch.engine.reading import read_file
    from ctxwatch.tokens import get_tokenizer

    path = shared_logs / CLI
    rows = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    reported = [r["tokens"]["input"] for r in rows if r.get("type") == "gemini" and "tokens" in r]
    history_1 = 4 + get_tokenizer("o200k_base").count(rows[1]["content"][0]["text"])
    floor = reported[0] - history_1
    run = Run(str(path), resolve_spec(str(path), None), None)
    read_file(run, str(path))
    assert [c.floor_tokens for c in run.calls] == [floor, floor]
    assert [c.history_tokens for c in run.calls] == [history_1, reported[1] - floor]
    assert reported[1] - floor == 224  # (12,069 - 11,845)
    assert [c.floor_tokens + c.history_tokens for c in run.calls] == reported

    # A $set that replaces the message list (a compressed chat) infers the floor afresh from the next call.
    tok = {"output": 1, "cached": 0, "thoughts": 0, "tool": 0}
    recs = [
        {"sessionId": "s", "projectHash": "h", "startTime": "2026-01-01T00:00:00Z", "kind": "main"},
        {"id": "u1", "type": "user", "content": "hi"},
        {"id": "g1", "type": "gemini", "content": "a", "model": "gemini-x", "tokens": {**tok, "input": 1000}},
        {"id": "u2", "type": "user", "content": "more"},
        {"id": "g2", "type": "gemini", "content": "b", "model": "gemini-x", "tokens": {**tok, "input": 1500}},
        {"$set": {"messages": [{"id": "u0", "type": "user", "content": "summary"}]}},
        {"id": "g3", "type": "gemini", "content": "c", "model": "gemini-x", "tokens": {**tok, "input": 900}},
        {"id": "u3", "type": "user", "content": "next"},
        {"id": "g4", "type": "gemini", "content": "d", "model": "gemini-x", "tokens": {**tok, "input": 1200}},
    ]
    p = _write(tmp_path / "s.jsonl", recs)
    run = Run(str(p), resolve_spec(str(p), None), None)
    read_file(run, str(p))
    count = get_tokenizer("o200k_base").count
    floor_a = 1000 - (4 + count("hi"))
    floor_b = 900 - (4 + count("summary"))
    assert [c.floor_tokens for c in run.calls] == [floor_a, floor_a, floor_b, floor_b]
    assert [c.history_tokens for c in run.calls] == [4 + count("hi"), 1500 - floor_a, 4 + count("summary"),
                                                     1200 - floor_b]
