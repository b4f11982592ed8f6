"""Usage dialects, provider by provider: each expected value by hand from the provider's documented rule and the
usage block in the file (cases B35, B40, B43, B45, B47 of the shared failure cases, and the other
OpenAI-compatible shapes of the same kind)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import report_of, shared_case


def _write(tmp_path: Path, *records: dict) -> str:
    path = tmp_path / "calls.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


def _chat(model: str, usage: dict, **resp: object) -> dict:
    return {"request": {"model": model, "messages": [{"role": "user", "content": "hi"}]},
            "response": {"id": f"r-{model}-{len(json.dumps(usage))}", "model": model, "usage": usage,
                         "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"},
                                      "finish_reason": "stop"}], **resp}}


def test_b40_service_tier_priced_as_served(shared_logs):
    doc = report_of(shared_case(shared_logs, "b40_service_tier_flex_priority.jsonl"))
    by_session = {c["session"]: c for c in doc["calls"]}
    # OpenAI pricing for gpt-5: standard $1.25 / $10, flex $0.625 / $5, priority $2.50 / $20 per MTok.
    for session, (rin, rout) in {"b40-default": (1.25, 10), "b40-flex": (0.625, 5),
                                 "b40-priority": (2.50, 20)}.items():
        c = by_session[session]
        assert c["cost_usd"] == pytest.approx((22 * rin + 2000 * rout) / 1e6, rel=1e-9), session
        assert c["service_tier"] == session.split("-")[1]
    assert by_session["b40-flex"]["cost_usd"] == pytest.approx(0.01001375)
    assert by_session["b40-priority"]["cost_usd"] == pytest.approx(0.040055)


def test_the_served_tier_wins_over_the_asked_one(tmp_path):
    rec = _chat("gpt-5", {"prompt_tokens": 22, "completion_tokens": 2000})
    rec["request"]["service_tier"] = "flex"
    rec["response"]["service_tier"] = "default"  # (asked for flex, served at the standard tier)
    doc = report_of(_write(tmp_path, rec))
    assert doc["calls"][0]["service_tier"] == "default"
    assert doc["calls"][0]["cost_usd"] == pytest.approx((22 * 1.25 + 2000 * 10) / 1e6)


@pytest.mark.parametrize("name", ["b43_openai_stream_usage_chunk.jsonl", "b43b_openai_stream_chunks_canonical.jsonl"])
def test_b43_stream_usage_from_the_final_chunk(shared_logs, name):
    path = shared_case(shared_logs, name)
    # (independent reader: the last chunk whose usage is an object)
    line = json.loads(Path(path).read_text().splitlines()[0])
    resp = line["response"]
    chunks = resp if isinstance(resp, list) else [
        json.loads(x[5:]) for x in resp["body_raw"].splitlines() if x.startswith("data:") and "[DONE]" not in x]
    usage = [c["usage"] for c in chunks if isinstance(c.get("usage"), dict)][-1]
    assert (usage["prompt_tokens"], usage["completion_tokens"]) == (28, 4)
    doc = report_of(path)
    c = doc["calls"][0]
    assert (c["prompt_tokens_reported"], c["completion_tokens_reported"]) == (28, 4)
    # gpt-4o: $2.50 input, $10 output per MTok
    assert c["cost_usd"] == pytest.approx((28 * 2.5 + 4 * 10) / 1e6)
    assert doc["issues"] == []


def test_a_stream_without_usage_says_so(tmp_path):
    chunks = [{"id": "c1", "object": "chat.completion.chunk", "model": "gpt-4o",
               "choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}]}]
    rec = {"request": {"model": "gpt-4o", "stream": True, "messages": [{"role": "user", "content": "x"}]},
           "response": chunks}
    doc = report_of(_write(tmp_path, rec))
    assert doc["calls"][0]["prompt_tokens_reported"] is None
    assert [i["kind"] for i in doc["issues"]] == ["no_usage"]
    assert "include_usage" in doc["issues"][0]["message"]


def test_responses_stream_events_read_from_response_completed(tmp_path):
    events = [{"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}},
              {"type": "response.output_text.delta", "delta": "ok"},
              {"type": "response.completed", "response": {
                  "id": "resp_1", "object": "response", "model": "gpt-5", "status": "completed",
                  "output": [{"type": "message", "content": [{"type": "output_text", "text": "ok"}]}],
                  "usage": {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 40},
                            "output_tokens": 50, "output_tokens_details": {"reasoning_tokens": 30},
                            "total_tokens": 150}}}]
    rec = {"request": {"model": "gpt-5", "stream": True, "input": "x"}, "response": events}
    c = report_of(_write(tmp_path, rec))["calls"][0]
    assert (c["prompt_tokens_reported"], c["cache_read_tokens"], c["completion_tokens_reported"]) == (100, 40, 50)


def test_b45_gemini_tool_use_prompt_is_input(shared_logs):
    path = shared_case(shared_logs, "b45_gemini_tool_use_prompt_tokens.jsonl")
    doc = report_of(path)
    calls = doc["calls"]
    assert [c["prompt_tokens_reported"] for c in calls] == [26 + 12_504, 151 + 18_329] == [12_530, 18_480]
    assert [c["completion_tokens_reported"] for c in calls] == [103, 1089 + 1120]
    # gemini-2.5-flash: $0.30 input, $2.50 output (thinking included) per MTok
    assert [c["cost_usd"] for c in calls] == [pytest.approx(0.0040165), pytest.approx(0.0110665)]
    assert doc["issues"] == []  # (prompt + tool-use prompt + candidates + thoughts = totalTokenCount)


def test_b35_gemini_cache_inside_the_prompt_thoughts_in_the_output(shared_logs):
    c = report_of(shared_case(shared_logs, "b35_gemini_cached_thoughts.jsonl"))["calls"][0]
    assert (c["prompt_tokens_reported"], c["cache_read_tokens"], c["input_uncached_tokens"]) == (50_000, 40_000, 10_000)
    assert (c["completion_tokens_reported"], c["reasoning_tokens_reported"]) == (1_000, 800)
    assert c["cost_usd"] == pytest.approx((10_000 * 1.25 + 40_000 * 0.125 + 1_000 * 10) / 1e6) == pytest.approx(0.0275)


def test_gemini_total_that_does_not_add_up_is_an_issue(tmp_path):
    rec = {"candidates": [{"content": {"parts": [{"text": "ok"}], "role": "model"}}],
           "modelVersion": "gemini-2.5-flash",
           "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 500}}
    doc = report_of(_write(tmp_path, rec))
    assert [i["kind"] for i in doc["issues"]] == ["usage_total"]
    assert "500" in doc["issues"][0]["message"] and "110" in doc["issues"][0]["message"]


def test_b47_deepseek_cache_hit_fields(shared_logs):
    c = report_of(shared_case(shared_logs, "b47_deepseek_cache_hit_fields.jsonl"))["calls"][0]
    assert (c["cache_read_tokens"], c["input_uncached_tokens"]) == (21_600, 14_500)
    # the catalogue's deepseek-chat rates for that hour: $0.27 miss, $0.07 hit, $1.10 output per MTok
    assert c["cost_usd"] == pytest.approx((14_500 * 0.27 + 21_600 * 0.07 + 1_200 * 1.10) / 1e6) \
        == pytest.approx(0.006747)


def test_deepseek_prompt_from_hit_plus_miss_when_prompt_tokens_is_absent(tmp_path):
    rec = _chat("deepseek-chat", {"prompt_cache_hit_tokens": 600, "prompt_cache_miss_tokens": 400,
                                  "completion_tokens": 10, "total_tokens": 1010})
    c = report_of(_write(tmp_path, rec))["calls"][0]
    assert (c["prompt_tokens_reported"], c["cache_read_tokens"], c["input_uncached_tokens"]) == (1000, 600, 400)


def test_moonshot_top_level_cached_tokens(tmp_path):
    # Kimi API: usage.cached_tokens beside prompt_tokens, inside it
    rec = _chat("kimi-k2-0905-preview", {"prompt_tokens": 5000, "completion_tokens": 20, "total_tokens": 5020,
                                         "cached_tokens": 4096})
    c = report_of(_write(tmp_path, rec))["calls"][0]
    assert (c["prompt_tokens_reported"], c["cache_read_tokens"], c["input_uncached_tokens"]) == (5000, 4096, 904)


def test_reasoning_reported_beside_the_completion(tmp_path):
    # xAI reasoning models: total_tokens = prompt + completion + reasoning (the reasoning is not in completion)
    rec = _chat("grok-3-mini", {"prompt_tokens": 30, "completion_tokens": 10, "total_tokens": 340,
                                "completion_tokens_details": {"reasoning_tokens": 300}})
    doc = report_of(_write(tmp_path, rec))
    c = doc["calls"][0]
    assert (c["completion_tokens_reported"], c["reasoning_tokens_reported"]) == (310, 300)
    assert doc["issues"] == []


def test_openai_reasoning_inside_the_completion_stays_inside(tmp_path):
    rec = _chat("o4-mini", {"prompt_tokens": 30, "completion_tokens": 310, "total_tokens": 340,
                            "completion_tokens_details": {"reasoning_tokens": 300}})
    c = report_of(_write(tmp_path, rec))["calls"][0]
    assert c["completion_tokens_reported"] == 310


def test_openai_total_that_does_not_add_up_is_an_issue(tmp_path):
    rec = _chat("gpt-4o", {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 150})
    doc = report_of(_write(tmp_path, rec))
    assert len(doc["calls"]) == 1
    notes = [i for i in doc["issues"] if "total_tokens 150" in i["message"]]
    assert len(notes) == 1 and "110" in notes[0]["message"]


def test_responses_web_search_calls_are_billed_per_call(tmp_path):
    # OpenAI pricing: web search tool calls $10 per 1,000 (gpt-5), on top of the tokens ($1.25 / $10 per MTok)
    rec = {"request": {"model": "gpt-5", "input": "news?", "tools": [{"type": "web_search"}]},
           "response": {"id": "resp_ws", "object": "response", "model": "gpt-5", "status": "completed",
                        "output": [{"type": "web_search_call", "id": "ws_1", "status": "completed"},
                                   {"type": "web_search_call", "id": "ws_2", "status": "completed"},
                                   {"type": "message", "content": [{"type": "output_text", "text": "..."}]}],
                        "usage": {"input_tokens": 1000, "output_tokens": 100, "total_tokens": 1100}}}
    c = report_of(_write(tmp_path, rec))["calls"][0]
    assert c["web_searches"] == 2
    assert c["cost_usd"] == pytest.approx((1000 * 1.25 + 100 * 10) / 1e6 + 2 * 0.01)
