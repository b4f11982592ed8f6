"""OpenAI Batch and Anthropic Message Batches: per-call usage, the custom_id join, failures, images (B03).

Expected values come from a plain-``json`` reading of the sample files in each test (or are worked by hand),
never from ctxwatch's readers.
"""

from __future__ import annotations

import base64
import json
import random
import struct
import zlib
from pathlib import Path

import pytest

from ctxwatch.formats import detect
from ctxwatch.formats.batch import BatchInputIndex, BatchReader, join_batch, read_batch_pair
from ctxwatch.model import Issue, ParsedCall
from ctxwatch.source import iter_records
from ctxwatch.tokens import counter_for

OPENAI_PAIRS = [
    ("nfosi_B-B_input_first3.jsonl", "nfosi_batch_67df5faa_output.jsonl"),
    ("reviews_batchinput.jsonl", "reviews_batch_output.jsonl"),
]
ANTHROPIC_RESULTS = "msgbatch_01PGaff3EPbQJbpw6JeWoQR5_results.jsonl"
ANTHROPIC_REQUESTS = "B-C_requests_first3_concatenated.jsonl"


# --- a separate, plain-json reader ----------------------------------------------------------------

def _json_lines(path: Path) -> list[tuple[int, dict]]:
    """(1-based line number, object) for every non-blank line."""
    return [(n, json.loads(line)) for n, line in enumerate(path.read_text().splitlines(), 1) if line.strip()]


def _concatenated(path: Path) -> list[dict]:
    """Every JSON object of a file whose objects may be glued together with no separator."""
    text, dec, i, out = path.read_text(), json.JSONDecoder(), 0, []
    while i < len(text):
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            break
        value, i = dec.raw_decode(text, i)
        out.append(value)
    return out


def _read(reader: BatchReader, path: Path) -> tuple[list[ParsedCall], list[Issue]]:
    calls: list[ParsedCall] = []
    issues: list[Issue] = []
    for rec in iter_records(str(path)):
        outs = [rec] if isinstance(rec, Issue) else list(reader.feed(rec))
        for o in outs:
            (calls if isinstance(o, ParsedCall) else issues).append(o)
    for o in reader.finish():
        (calls if isinstance(o, ParsedCall) else issues).append(o)
    return calls, issues


def _content_text(content) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(c.get("text", "") for c in content if isinstance(c, dict))


# --- OpenAI Batch -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("inp", "out"), OPENAI_PAIRS)
def test_openai_join_usage_and_request(shared_logs: Path, inp: str, out: str) -> None:
    in_path, out_path = shared_logs / "openai-batch" / inp, shared_logs / "openai-batch" / out
    requests = {d["custom_id"]: (n, d["body"]) for n, d in _json_lines(in_path)}
    results = _json_lines(out_path)
    ok = [(n, d) for n, d in results if d["error"] is None and d["response"]["status_code"] == 200]
    expected_joined = sum(1 for _, d in ok if d["custom_id"] in requests)

    calls, issues = join_batch(str(in_path), str(out_path))

    assert len(calls) == len(ok)
    assert sum(1 for c in calls if c.messages is not None) == expected_joined
    by_id = {c.provenance.custom_id: c for c in calls}
    for n, d in ok:
        c = by_id[d["custom_id"]]
        body = d["response"]["body"]
        u = body["usage"]
        assert c.source.line == n  # points at the output line
        assert c.usage.prompt_total == u["prompt_tokens"]
        assert c.usage.cache_read == u["prompt_tokens_details"]["cached_tokens"]
        assert c.usage.output == u["completion_tokens"]
        assert c.usage.reasoning == u["completion_tokens_details"]["reasoning_tokens"]
        assert c.model == body["model"]
        assert c.timestamp == body["created"]
        assert c.response.text == body["choices"][0]["message"]["content"]
        if d["custom_id"] in requests:
            line, req = requests[d["custom_id"]]
            assert c.provenance.input_line == line
            assert c.provenance.requested_model == req["model"]
            assert c.system == [m["content"] for m in req["messages"] if m["role"] in ("system", "developer")]
            rest = [m for m in req["messages"] if m["role"] not in ("system", "developer")]
            assert [m.role for m in c.messages] == [m["role"] for m in rest]
            assert [m.text() for m in c.messages] == [_content_text(m["content"]) for m in rest]
            assert c.max_output_tokens == (req.get("max_completion_tokens") or req.get("max_tokens"))
        else:
            assert c.messages is None and c.provenance.joined is False
    unmatched = len(ok) - expected_joined
    kinds = [i.kind for i in issues]
    assert kinds.count("unmatched_result") == (1 if unmatched else 0)
    assert "failed_request" not in kinds and "invalid_json" not in kinds


def test_openai_join_does_not_rely_on_order(shared_logs: Path, tmp_path: Path) -> None:
    in_path = shared_logs / "openai-batch" / "reviews_batchinput.jsonl"
    lines = (shared_logs / "openai-batch" / "reviews_batch_output.jsonl").read_text().splitlines()
    random.Random(7).shuffle(lines)
    shuffled = tmp_path / "out.jsonl"
    shuffled.write_text("\n".join(lines) + "\n")
    requests = {d["custom_id"]: d["body"] for _, d in _json_lines(in_path)}

    calls, issues = join_batch(str(in_path), str(shuffled))

    assert len(calls) == len(lines) == 100
    assert issues == []
    for c in calls:
        req = requests[c.provenance.custom_id]
        assert c.messages[-1].text() == req["messages"][-1]["content"]


def test_read_batch_pair_pairs_files_in_any_order(shared_logs: Path) -> None:
    folder = shared_logs / "openai-batch"
    expected_joined = 0
    total = 0
    for inp, out in OPENAI_PAIRS:
        ids = {d["custom_id"] for _, d in _json_lines(folder / inp)}
        res = _json_lines(folder / out)
        total += len(res)
        expected_joined += sum(1 for _, d in res if d["custom_id"] in ids)
    # outputs first, inputs last, plus the folder itself (deduplicated)
    paths = [str(folder / o) for _, o in reversed(OPENAI_PAIRS)] + [str(folder / i) for i, _ in OPENAI_PAIRS]
    calls, _ = read_batch_pair(paths)
    assert len(calls) == total
    assert sum(1 for c in calls if c.messages is not None) == expected_joined
    calls2, _ = read_batch_pair([str(folder)])
    assert len(calls2) == total
    assert sum(1 for c in calls2 if c.messages is not None) == expected_joined


def test_openai_output_alone_and_input_alone(shared_logs: Path) -> None:
    folder = shared_logs / "openai-batch"
    out_calls, out_issues = _read(BatchReader(str(folder / "nfosi_batch_67df5faa_output.jsonl")),
                                  folder / "nfosi_batch_67df5faa_output.jsonl")
    assert len(out_calls) == len(_json_lines(folder / "nfosi_batch_67df5faa_output.jsonl")) == 20
    assert all(c.messages is None and c.system is None and c.usage.prompt_total for c in out_calls)
    assert out_issues == []
    in_path = folder / "reviews_batchinput.jsonl"
    in_calls, in_issues = _read(BatchReader(str(in_path)), in_path)
    first = _json_lines(folder / "reviews_batchinput.jsonl")[0][1]
    assert len(in_calls) == 100 and in_issues == []
    assert all(c.usage is None for c in in_calls)
    assert in_calls[0].system == [first["body"]["messages"][0]["content"]]
    assert in_calls[0].max_output_tokens == first["body"]["max_tokens"]
    assert in_calls[0].model == first["body"]["model"]


def test_openai_failed_requests_are_issues_not_calls(tmp_path: Path) -> None:
    ok_usage = {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
    lines = [
        {"id": "batch_req_1", "custom_id": "a", "error": None,
         "response": {"status_code": 200, "body": {"model": "gpt-4o-mini", "created": 1, "usage": ok_usage,
                                                   "choices": [{"message": {"content": "hi"}}]}}},
        {"id": "batch_req_2", "custom_id": "b", "error": None,
         "response": {"status_code": 400, "body": {"error": {"type": "invalid_request_error", "message": "bad"}}}},
        {"id": "batch_req_3", "custom_id": "c", "response": None,
         "error": {"code": "batch_expired", "message": "This request could not be executed before the window"}},
    ]
    path = tmp_path / "out.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    calls, issues = _read(BatchReader(str(path)), path)
    assert [c.provenance.custom_id for c in calls] == ["a"]
    failed = [i for i in issues if i.kind == "failed_request"]
    assert [i.line for i in failed] == [2, 3]
    assert "HTTP 400" in failed[0].message and "batch_expired" in failed[1].message


def test_openai_error_file_beside_the_output(tmp_path: Path) -> None:
    """OpenAI writes failed requests to a separate error file: together they answer every request."""
    usage = {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
    inp = tmp_path / "in.jsonl"
    inp.write_text("".join(json.dumps({"custom_id": c, "method": "POST", "url": "/v1/chat/completions",
                                       "body": {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": c}]}})
                           + "\n" for c in "abcd"))
    out = tmp_path / "out.jsonl"
    out.write_text(json.dumps({"id": "batch_req_a", "custom_id": "a", "error": None, "response": {
        "status_code": 200, "body": {"model": "gpt-4o-mini", "usage": usage, "choices": []}}}) + "\n")
    err = tmp_path / "errors.jsonl"
    err.write_text("".join(json.dumps({"id": f"batch_req_{c}", "custom_id": c, "response": None,
                                       "error": {"code": "server_error", "message": "failed"}}) + "\n" for c in "bc"))
    calls, issues = read_batch_pair([str(inp), str(err), str(out)])
    assert [c.provenance.custom_id for c in calls] == ["a"] and calls[0].messages[0].text() == "a"
    assert sorted(i.kind for i in issues) == ["failed_request", "failed_request", "missing_result"]
    (missing,) = [i for i in issues if i.kind == "missing_result"]
    assert missing.message.startswith("1 of 4 requests") and "'d'" in missing.message and missing.line == 4
    # the same with one output alone: the failures in it still count as answered
    calls, issues = join_batch(str(inp), str(err))
    assert calls == [] and sorted(i.kind for i in issues) == ["failed_request", "failed_request", "missing_result"]
    assert next(i for i in issues if i.kind == "missing_result").message.startswith("2 of 4")


def test_openai_responses_endpoint(tmp_path: Path) -> None:
    inp = tmp_path / "in.jsonl"
    inp.write_text(json.dumps({"custom_id": "r1", "method": "POST", "url": "/v1/responses",
                               "body": {"model": "o4-mini", "instructions": "Be brief.", "input": "Hello",
                                        "max_output_tokens": 500}}) + "\n")
    out = tmp_path / "out.jsonl"
    out.write_text(json.dumps({
        "id": "batch_req_r1", "custom_id": "r1", "error": None,
        "response": {"status_code": 200, "body": {
            "object": "response", "created_at": 1700000000, "model": "o4-mini-2025-04-16",
            "output": [{"type": "message", "content": [{"type": "output_text", "text": "Hi."}]}],
            "usage": {"input_tokens": 1200, "input_tokens_details": {"cached_tokens": 1024}, "output_tokens": 300,
                      "output_tokens_details": {"reasoning_tokens": 256}, "total_tokens": 1500}}}}) + "\n")
    calls, issues = join_batch(str(inp), str(out))
    assert issues == []
    (c,) = calls
    # hand-worked: input_tokens is the whole prompt, cached a subset; reasoning a subset of output
    assert (c.usage.prompt_total, c.usage.cache_read, c.usage.input_uncached) == (1200, 1024, 176)
    assert (c.usage.output, c.usage.reasoning) == (300, 256)
    assert c.system == ["Be brief."] and c.messages[0].text() == "Hello" and c.max_output_tokens == 500
    assert c.timestamp == 1700000000 and c.response.text == "Hi."


# --- Anthropic Message Batches ----------------------------------------------------------------------

def test_anthropic_results_usage(shared_logs: Path) -> None:
    path = shared_logs / "anthropic-batch" / ANTHROPIC_RESULTS
    assert not path.read_bytes().endswith(b"\n")  # the pitfall FORMATS.md §4 names
    rows = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    succeeded = [r for r in rows if r["result"]["type"] == "succeeded"]
    failed = [r for r in rows if r["result"]["type"] != "succeeded"]
    calls, issues = _read(BatchReader(str(path)), path)
    assert len(calls) == len(succeeded) == 19
    assert len([i for i in issues if i.kind == "failed_request"]) == len(failed) == 0
    for c, r in zip(calls, succeeded, strict=True):
        u = r["result"]["message"]["usage"]
        assert c.usage.prompt_total == (u["input_tokens"] + u["cache_creation_input_tokens"]
                                        + u["cache_read_input_tokens"])
        assert c.usage.input_uncached == u["input_tokens"]
        assert c.usage.cache_write == u["cache_creation_input_tokens"]
        assert c.usage.output == u["output_tokens"]
        assert c.model == r["result"]["message"]["model"] and c.provider == "anthropic"
        assert c.key == r["result"]["message"]["id"]


def test_anthropic_errored_canceled_expired(shared_logs: Path, tmp_path: Path) -> None:
    src = (shared_logs / "anthropic-batch" / ANTHROPIC_RESULTS).read_text()
    extra = [
        {"custom_id": "e1", "result": {"type": "errored", "error": {"type": "error", "error": {
            "type": "invalid_request_error", "message": "max_tokens: too large"}}}},
        {"custom_id": "c1", "result": {"type": "canceled"}},
        {"custom_id": "x1", "result": {"type": "expired"}},
    ]
    path = tmp_path / "results.jsonl"
    path.write_text(src + "\n" + "\n".join(json.dumps(x) for x in extra))
    calls, issues = _read(BatchReader(str(path)), path)
    assert len(calls) == 19
    failed = [i for i in issues if i.kind == "failed_request"]
    assert len(failed) == 3
    assert "invalid_request_error" in failed[0].message and "canceled" in failed[1].message


def test_anthropic_concatenated_requests_all_read(shared_logs: Path) -> None:
    path = shared_logs / "anthropic-batch" / ANTHROPIC_REQUESTS
    objs = _concatenated(path)
    assert b"\n" not in path.read_bytes().strip()  # one physical line of glued objects
    # FORMATS.md §4 says 19 objects, but this saved excerpt ("first3") holds 3; count what is there.
    assert len(objs) == 3
    index = BatchInputIndex(str(path))
    assert len(index) == len(objs) and index.kind == "anthropic" and index.issues == []
    calls, issues = _read(BatchReader(str(path)), path)
    assert [c.provenance.custom_id for c in calls] == [o["custom_id"] for o in objs]
    for c, o in zip(calls, objs, strict=True):
        p = o["params"]
        assert c.usage is None
        assert c.system == [p["system"]]
        assert c.max_output_tokens == p["max_tokens"] and c.model == p["model"]
        assert [m.text() for m in c.messages] == [_content_text(m["content"]) for m in p["messages"]]
    assert issues == []  # the documented shape (FORMATS.md §4) is a valid JSON stream, not a problem


def test_anthropic_join(shared_logs: Path) -> None:
    folder = shared_logs / "anthropic-batch"
    objs = {o["custom_id"]: o["params"] for o in _concatenated(folder / ANTHROPIC_REQUESTS)}
    rows = [json.loads(x) for x in (folder / ANTHROPIC_RESULTS).read_text().splitlines() if x.strip()]
    calls, issues = read_batch_pair([str(folder)])
    assert len(calls) == len(rows)
    joined = [c for c in calls if c.messages is not None]
    assert sorted(c.provenance.custom_id for c in joined) == sorted(r["custom_id"] for r in rows
                                                                 if r["custom_id"] in objs)
    for c in joined:
        assert c.system == [objs[c.provenance.custom_id]["system"]]
        assert c.provenance.input_part == list(objs).index(c.provenance.custom_id)
    kinds = sorted(i.kind for i in issues)
    assert kinds == ["batch_object", "unmatched_result"]  # the receipt file, and 16 results without request


# --- B03: images in batch requests ------------------------------------------------------------------

def _png_b64(width: int, height: int, pad: int) -> str:
    """A PNG header (signature + IHDR) of the given size, followed by ``pad`` filler bytes, in base64."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    chunk = struct.pack(">I", len(ihdr)) + b"IHDR" + ihdr + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))
    return base64.b64encode(b"\x89PNG\r\n\x1a\n" + chunk + b"\x00" * pad).decode()


def test_b03_images_are_not_base64_text(tmp_path: Path) -> None:
    data = _png_b64(1024, 768, 200_000)
    oa = {"custom_id": "img-oa", "method": "POST", "url": "/v1/chat/completions",
          "body": {"model": "gpt-4o", "messages": [{"role": "user", "content": [
              {"type": "text", "text": "describe"},
              {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{data}", "detail": "high"}}]}]}}
    an = {"custom_id": "img-an", "params": {"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": [
        {"role": "user", "content": [{"type": "text", "text": "describe"},
                                     {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                                  "data": data}}]}]}}
    for req, provider in ((oa, "openai"), (an, "anthropic")):
        path = tmp_path / f"{provider}.jsonl"
        path.write_text(json.dumps(req) + "\n")
        (call,), issues = _read(BatchReader(str(path)), path)
        assert issues == []
        parts = call.messages[0].parts
        assert [p.kind for p in parts] == ["text", "image"]
        img = parts[1]
        assert img.text == "" and (img.meta["width"], img.meta["height"]) == (1024, 768)
        assert all(data[:100] not in p.text for p in parts)
        n = counter_for(call.model, call.provider).message_tokens(call.messages[0])
        assert 0 < n < len(data) / 4 / 50  # a per-image estimate, far below base64-as-text


# --- detection and odd shapes -------------------------------------------------------------------------

def test_detection(shared_logs: Path) -> None:
    for name in ("nfosi_B-B_input_first3.jsonl", "nfosi_batch_67df5faa_output.jsonl",
                 "reviews_batch_output.jsonl", "reviews_batchinput.jsonl"):
        assert detect(str(shared_logs / "openai-batch" / name)).name == "openai-batch"
    for name in (ANTHROPIC_RESULTS, ANTHROPIC_REQUESTS):
        assert detect(str(shared_logs / "anthropic-batch" / name)).name == "anthropic-batch"
    gem = detect(str(shared_logs / "other" / "gemini-batch" / "batch_gemini-2.5-pro-exp-03-25.jsonl"))
    assert gem is not None and gem.name == "gemini"


def test_odd_shapes_never_raise(tmp_path: Path) -> None:
    path = tmp_path / "odd.jsonl"
    odd = [5, [], {}, {"custom_id": 1}, {"custom_id": "x", "response": {"status_code": 200, "body": 7}, "error": None},
           {"custom_id": "y", "result": {"type": "succeeded", "message": "nope"}},
           {"custom_id": "z", "params": {"messages": "not a list", "system": 3}}]
    path.write_text("".join(json.dumps(x) + "\n" for x in odd) + '{"custom_id": "cut", "resp')
    calls, issues = join_batch(str(path), str(path))
    assert all(isinstance(i, Issue) for i in issues)
    assert {i.kind for i in issues} >= {"unknown_record", "failed_request", "truncated_tail"}
    calls, issues = join_batch(str(tmp_path / "missing.jsonl"), str(tmp_path / "missing2.jsonl"))
    assert calls == [] and {i.kind for i in issues} == {"unreadable"}


def test_a_batch_run_has_no_forecast(shared_logs: Path) -> None:
    """Batch requests are independent conversations: the forecast says so instead of 'not enough data'."""
    from ctxwatch.analysis import analysis_json
    from ctxwatch.engine import load_many

    src = shared_logs / "openai-batch"
    run = load_many([str(src / "reviews_batchinput.jsonl"), str(src / "reviews_batch_output.jsonl")], None)
    fc = analysis_json(run)["forecast"]
    assert len(run.calls) == 100 and fc["text"].startswith("none: batch requests are independent")
    assert fc["calls_to_window"] is None


def _standard_price(usage: dict, model: str, provider: str, created: float | None) -> float:
    """genai-prices' standard (non-batch) price of one usage block, asked directly."""
    from datetime import UTC, datetime

    import genai_prices

    if provider == "openai":
        u = genai_prices.Usage(input_tokens=usage["prompt_tokens"], output_tokens=usage["completion_tokens"])
    else:
        u = genai_prices.Usage(
            input_tokens=usage["input_tokens"] + usage.get("cache_creation_input_tokens", 0)
            + usage.get("cache_read_input_tokens", 0),
            cache_read_tokens=usage.get("cache_read_input_tokens") or None,
            cache_write_tokens=usage.get("cache_creation_input_tokens") or None, output_tokens=usage["output_tokens"])
    when = datetime.fromtimestamp(created, UTC) if created is not None else None
    return float(genai_prices.calc_price(u, model, provider_id=provider, genai_request_timestamp=when).total_price)


def test_batch_results_are_priced_at_the_batch_rate(shared_logs: Path) -> None:
    """The OpenAI Batch API and Anthropic Message Batches bill 50 % of the standard price (their pricing
    pages); both sample files were priced at the full rate ($0.0033774 for the reviews pair, $0.786408 for the
    Anthropic results).  Expected: half of genai-prices' standard price of each line's reported usage."""
    from click.testing import CliRunner

    from ctxwatch.cli import main

    folder = shared_logs / "openai-batch"
    inp, out = folder / "reviews_batchinput.jsonl", folder / "reviews_batch_output.jsonl"
    expected = [0.5 * _standard_price(v["response"]["body"]["usage"], v["response"]["body"]["model"], "openai",
                                      v["response"]["body"]["created"]) for _n, v in _json_lines(out)]
    doc = json.loads(CliRunner().invoke(main, ["report", str(inp), str(out), "--json"]).output)
    assert [round(c["cost_usd"], 12) for c in doc["calls"]] == [round(x, 12) for x in expected]
    assert abs(sum(s["cost_usd"] for s in doc["sessions"]) - sum(expected)) < 1e-9

    res = shared_logs / "anthropic-batch" / ANTHROPIC_RESULTS
    lines = [v["result"]["message"] for _n, v in _json_lines(res) if v["result"]["type"] == "succeeded"]
    expected = [0.5 * _standard_price(m["usage"], m["model"], "anthropic", None) for m in lines]
    doc = json.loads(CliRunner().invoke(main, ["report", str(res), "--json"]).output)
    assert [round(c["cost_usd"], 12) for c in doc["calls"]] == [round(x, 12) for x in expected]
    assert abs(sum(expected) - 0.393204) < 1e-6  # the tester's hand sum: 122,726 x $3/M + 27,882 x $15/M, halved


def test_gemini_batch_mode_lines_are_priced_at_the_batch_rate(tmp_path: Path) -> None:
    """A Gemini Batch Mode output line ({key, response}) is billed at 50 % (Gemini API docs, "Batch Mode"); a
    bare generateContent response is not known to come from a batch and keeps the standard price."""
    import genai_prices
    from click.testing import CliRunner

    from ctxwatch.cli import main

    resp = {"candidates": [{"content": {"parts": [{"text": "ok"}], "role": "model"}}],
            "usageMetadata": {"promptTokenCount": 1200, "candidatesTokenCount": 80, "totalTokenCount": 1280},
            "modelVersion": "gemini-2.5-flash", "createTime": "2025-09-01T10:00:00Z"}
    log = tmp_path / "gemini.jsonl"
    log.write_text(json.dumps({"key": "req-1", "response": resp}) + "\n" + json.dumps(resp) + "\n")
    from datetime import UTC, datetime

    std = float(genai_prices.calc_price(genai_prices.Usage(input_tokens=1200, output_tokens=80), "gemini-2.5-flash",
                                        provider_id="google",
                                        genai_request_timestamp=datetime(2025, 9, 1, 10, tzinfo=UTC)).total_price)
    doc = json.loads(CliRunner().invoke(main, ["report", str(log), "--json"]).output)
    assert [c["cost_usd"] for c in doc["calls"]] == pytest.approx([std / 2, std], rel=1e-12)


def _openai_batch(folder: Path, name: str, system: str, prompt_tokens: int, ids: list[str]) -> None:
    """``batch_<name>_input.jsonl`` / ``batch_<name>_output.jsonl``: one request per id, with ``system``."""
    (folder / f"batch_{name}_input.jsonl").write_text("".join(json.dumps({
        "custom_id": c, "method": "POST", "url": "/v1/chat/completions",
        "body": {"model": "gpt-4o-mini", "messages": [{"role": "system", "content": system},
                                                      {"role": "user", "content": f"question {c}"}]}}) + "\n"
        for c in ids))
    usage = {"prompt_tokens": prompt_tokens, "completion_tokens": 3, "total_tokens": prompt_tokens + 3}
    (folder / f"batch_{name}_output.jsonl").write_text("".join(json.dumps({
        "id": f"batch_req_{name}{c}", "custom_id": c, "error": None, "response": {
            "status_code": 200, "body": {"model": "gpt-4o-mini", "usage": usage, "choices": []}}}) + "\n"
        for c in ids))


def test_two_batches_reusing_custom_ids_join_each_output_to_its_own_input(tmp_path: Path) -> None:
    """Two batches in one folder, both with custom_ids request-0..request-4: both outputs were joined to A's
    input (B's results got A's short system prompt) and B's input came out again as 5 request-only calls:
    15 calls, no issue.  Now 10 calls, each joined to the input of its own name, and a note says the ids
    could not decide."""
    ids = [f"request-{i}" for i in range(5)]
    _openai_batch(tmp_path, "A", "short", 14, ids)
    _openai_batch(tmp_path, "B", "long " * 50, 254, ids)
    calls, issues = read_batch_pair([str(tmp_path)])
    assert len(calls) == 10
    by_file = {(Path(c.source.path).name, c.system[0] if c.system else None) for c in calls}
    assert by_file == {("batch_A_output.jsonl", "short"), ("batch_B_output.jsonl", "long " * 50)}
    assert [(Path(i.path).name, i.kind) for i in issues] == [("batch_A_output.jsonl", "batch_pairing"),
                                                              ("batch_B_output.jsonl", "batch_pairing")]


def test_escaped_custom_ids_pair_with_raw_ones(tmp_path: Path) -> None:
    """An input that writes ``caf\\u00e9`` (json.dumps' default) and an output that writes ``café`` raw share
    their ids: the byte scan decoded neither, so a decoy input with one plain shared id won the pairing."""
    ids = ["caf\u00e9-1", "caf\u00e9-2", "plain"]
    (tmp_path / "real_in.jsonl").write_text("".join(json.dumps({
        "custom_id": c, "method": "POST", "url": "/v1/chat/completions",
        "body": {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "real " + c}]}}) + "\n"
        for c in ids))  # (ensure_ascii: é is written \u00e9)
    (tmp_path / "decoy_in.jsonl").write_text(json.dumps({
        "custom_id": "plain", "method": "POST", "url": "/v1/chat/completions",
        "body": {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "decoy"}]}}) + "\n")
    usage = {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
    (tmp_path / "results.jsonl").write_text("".join(json.dumps({
        "id": f"r{n}", "custom_id": c, "error": None, "response": {"status_code": 200, "body": {
            "model": "gpt-4o-mini", "usage": usage, "choices": []}}}, ensure_ascii=False) + "\n"
        for n, c in enumerate(ids)), encoding="utf-8")
    calls, _ = read_batch_pair([str(tmp_path)])
    joined = [c for c in calls if Path(c.source.path).name == "results.jsonl"]
    assert [c.messages[0].text() for c in joined] == ["real " + c for c in ids]
    assert [c.messages[0].text() for c in calls if c not in joined] == ["decoy"]  # (read alone: unpaired)


def test_a_bad_max_tokens_of_a_joined_request_is_reported_at_its_request_line(tmp_path: Path) -> None:
    """``max_tokens: 1024.5`` in a batch request was reported at the line of its *result* (another file, and
    another line: results come in any order), where no such value is.  The issue names the request file and
    the line of that request (found here with plain json), for OpenAI and Anthropic batches alike; the result
    file has no issue."""
    from ctxwatch.engine import load_many

    ids = ["a", "b", "c"]
    usage = {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
    openai = tmp_path / "openai"
    openai.mkdir()
    (openai / "in.jsonl").write_text("".join(json.dumps({
        "custom_id": c, "method": "POST", "url": "/v1/chat/completions",
        "body": {"model": "gpt-4o-mini", "max_tokens": 1024.5 if c == "c" else 100,
                 "messages": [{"role": "user", "content": f"question {c}"}]}}) + "\n" for c in ids))
    (openai / "out.jsonl").write_text("".join(json.dumps({
        "id": f"batch_req_{c}", "custom_id": c, "error": None, "response": {
            "status_code": 200, "body": {"model": "gpt-4o-mini", "usage": usage, "choices": []}}}) + "\n"
        for c in reversed(ids)))  # (result of "c" on line 1)
    anthropic = tmp_path / "anthropic"
    anthropic.mkdir()
    (anthropic / "requests.jsonl").write_text("".join(json.dumps({
        "custom_id": c, "params": {"model": "claude-3-5-haiku-20241022", "max_tokens": 1024.5 if c == "c" else 100,
                                   "messages": [{"role": "user", "content": f"question {c}"}]}}) + "\n"
        for c in ids))
    (anthropic / "results.jsonl").write_text("".join(json.dumps({
        "custom_id": c, "result": {"type": "succeeded", "message": {
            "id": f"msg_{c}", "type": "message", "role": "assistant", "model": "claude-3-5-haiku-20241022",
            "content": [], "usage": {"input_tokens": 10, "output_tokens": 2}}}}) + "\n" for c in reversed(ids)))
    for folder, req_file in ((openai, "in.jsonl"), (anthropic, "requests.jsonl")):
        line = next(n for n, v in _json_lines(folder / req_file) if v["custom_id"] == "c")
        assert line == 3
        run = load_many([str(folder)], None)
        bad = [i for i in run.issues if i.kind == "implausible_value"]
        assert [(Path(i.path).name, i.line) for i in bad] == [(req_file, line)], folder.name
        assert bad[0].message.startswith("max output tokens 1024.5 (not a whole number)"), folder.name
        assert len(run.calls) == 3, folder.name


def test_batches_reusing_custom_ids_pair_by_the_models_the_results_name(tmp_path: Path) -> None:
    """OpenAI names every output batch_<id>_output.jsonl, so names say nothing: two batches reusing
    request-0..2, gpt-4o requests in jan_requests and gpt-4o-mini ones in feb_requests, were paired by name
    (batch_68a1f -> feb).  The results' models now decide: gpt-4o-2024-08-06 is a snapshot of gpt-4o only,
    gpt-4o-mini-2024-07-18 of both, but most specifically of gpt-4o-mini."""
    ids = [f"request-{i}" for i in range(3)]

    def requests(name: str, model: str) -> None:
        (tmp_path / name).write_text("".join(json.dumps({
            "custom_id": c, "method": "POST", "url": "/v1/chat/completions",
            "body": {"model": model, "messages": [{"role": "user", "content": f"{model} {c}"}]}}) + "\n"
            for c in ids))

    def results(name: str, model: str) -> None:
        usage = {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
        (tmp_path / name).write_text("".join(json.dumps({
            "id": f"r-{name}-{c}", "custom_id": c, "error": None, "response": {"status_code": 200, "body": {
                "model": model, "usage": usage, "choices": []}}}) + "\n" for c in ids))

    requests("jan_requests.jsonl", "gpt-4o")
    requests("feb_requests.jsonl", "gpt-4o-mini")
    results("batch_68a1f_output.jsonl", "gpt-4o-2024-08-06")
    results("batch_67b2c_output.jsonl", "gpt-4o-mini-2024-07-18")
    calls, issues = read_batch_pair([str(tmp_path)])
    assert len(calls) == 6
    joined = {(Path(c.source.path).name, c.messages[0].text().split()[0]) for c in calls}
    assert joined == {("batch_68a1f_output.jsonl", "gpt-4o"), ("batch_67b2c_output.jsonl", "gpt-4o-mini")}
    assert all(i.kind == "batch_pairing" and "by model" in i.message for i in issues) and len(issues) == 2


def test_a_batch_request_without_a_system_prompt_is_not_an_eviction(tmp_path: Path) -> None:
    """Three batch requests, only the second without a system message: check raised CRITICAL
    system_prompt_evicted ("absent from request #2 (present in #1)") and exited 1, though batch requests are
    separate conversations and the second one lost nothing.  No eviction flag; a conversation that drops its
    system prompt is still flagged (tests/test_analysis.py)."""
    from click.testing import CliRunner

    from ctxwatch.cli import main

    usage = {"prompt_tokens": 30, "completion_tokens": 2, "total_tokens": 32}
    reqs, outs = [], []
    for k in range(3):
        messages = [{"role": "user", "content": f"question {k}"}]
        if k != 1:
            messages.insert(0, {"role": "system", "content": "Answer in one word."})
        reqs.append({"custom_id": f"r{k}", "method": "POST", "url": "/v1/chat/completions",
                     "body": {"model": "gpt-4o-mini", "messages": messages}})
        outs.append({"id": f"b{k}", "custom_id": f"r{k}", "error": None, "response": {"status_code": 200, "body": {
            "model": "gpt-4o-mini", "usage": usage, "choices": []}}})
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(r) + "\n" for r in reqs))
    (tmp_path / "out.jsonl").write_text("".join(json.dumps(o) + "\n" for o in outs))
    res = CliRunner().invoke(main, ["check", "--json", str(tmp_path / "in.jsonl"), str(tmp_path / "out.jsonl")])
    doc = json.loads(res.output)
    assert res.exit_code == 0, res.output
    assert [f["kind"] for f in doc["flags"] if f["kind"].startswith("system_prompt")] == []


def _gemini_batch_line(shape: str, i: int, text: str, prompt: int, system: bool) -> dict:
    """A Vertex AI batch prediction line ``{request, response, status}`` (no key) or a Gemini Batch Mode line
    ``{key, request, response}`` (Gemini API docs, "Batch Mode": the output echoes the request under ``request``
    when the input gave it inline)."""
    req: dict = {"contents": [{"role": "user", "parts": [{"text": text}]}]}
    if system:
        req["systemInstruction"] = {"parts": [{"text": "You are terse. " * 10}]}
    resp = {"candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": prompt, "candidatesTokenCount": 5,
                              "totalTokenCount": prompt + 5},
            "modelVersion": "gemini-2.5-flash"}
    return {"request": req, "response": resp, "status": ""} if shape == "vertex" else \
        {"key": f"k{i}", "request": req, "response": resp}


@pytest.mark.parametrize("shape", ["vertex", "gemini-batch-mode"])
def test_gemini_batch_lines_are_separate_requests(tmp_path: Path, shape: str) -> None:
    """Vertex AI batch prediction lines are priced as batch but were analysed as one conversation: the 4th line,
    without a systemInstruction, was a CRITICAL system_prompt_evicted (check exited 1), prompts 100 ... 140 gave
    "50,318 calls to trigger", and a short request after long ones was a "compaction".  Like every batch line they
    are separate requests: no eviction, no compaction, and the forecast says why it has none.  (Gemini Batch Mode
    lines carry a key, which already kept them apart; the two shapes now share one mark.)"""
    from click.testing import CliRunner

    from ctxwatch.cli import main

    rows = [_gemini_batch_line(shape, i, f"question {i} " + "alpha beta " * 30, 100 + 10 * i, system=i != 3)
            for i in range(5)]
    path = tmp_path / "batch.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    res = CliRunner().invoke(main, ["check", "--json", str(path)])
    doc = json.loads(res.output)
    assert res.exit_code == 0, res.output
    assert [f["kind"] for f in doc["flags"] if f["kind"].startswith("system_prompt")] == []
    assert doc["forecast"]["text"] == ("none: batch requests are independent conversations, nothing grows from one "
                                       "to the next")
    # two long requests (about 3,000 words of history each) and a short one: no compaction between requests
    rows = [_gemini_batch_line(shape, i, f"document {i} " + "lorem ipsum dolor " * n, p, system=True)
            for i, (n, p) in enumerate([(1000, 3100), (1000, 3200), (10, 60)])]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    doc = json.loads(CliRunner().invoke(main, ["check", "--json", str(path)]).output)
    assert [f["kind"] for f in doc["flags"] if f["kind"] == "compaction"] == []


def test_a_request_file_and_its_results_in_one_file_are_said_to_be_unjoined(tmp_path: Path) -> None:
    """``cat batch_input.jsonl batch_output.jsonl | ctxwatch report -``: each request and each result is read on
    its own (no custom_id join within one file), and one note says so, at the first request line."""
    from click.testing import CliRunner

    from ctxwatch.cli import main

    folder = Path(__file__).resolve().parents[1] / "sample_logs" / "openai-batch"
    inp, out = (folder / "batch_input.jsonl").read_bytes(), (folder / "batch_output.jsonl").read_bytes()
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_bytes(inp + out)
    n_in, n_out = len(inp.splitlines()), len(out.splitlines())
    res = CliRunner().invoke(main, ["report", "--json", "--no-cache", str(mixed)])
    doc = json.loads(res.output)
    assert len(doc["calls"]) == n_in + n_out
    [note] = doc["issues"]
    assert (note["kind"], note["line"]) == ("mixed_batch_file", 1)
    assert f"{n_in} batch request lines and {n_out} result lines" in note["message"]
    # (read as the pair they are, nothing is said and each request gets its result)
    pair = json.loads(CliRunner().invoke(main, ["report", "--json", "--no-cache", str(folder)]).output)
    assert len(pair["calls"]) == n_out and pair["issues"] == []


def test_a_batch_folder_has_a_session_per_batch(shared_logs: Path) -> None:
    # (each results file is one batch job: its calls are one session, named by the file, as the same files are
    # in a folder of other logs; the expected counts are the files' result lines, read here with plain json)
    from ctxwatch.engine import load_many
    from ctxwatch.output.report import report_json

    folder = shared_logs / "openai-batch"
    run = load_many([str(folder)], None)
    doc = report_json(run)
    expected = {out: len(_json_lines(folder / out)) for _inp, out in OPENAI_PAIRS}
    assert {s["session"]: s["calls"] for s in doc["sessions"]} == expected
    assert {c["session"] for c in doc["calls"]} == set(expected)
