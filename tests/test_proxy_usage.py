"""Claude models logged in OpenAI's chat shape, as OpenAI-compatible proxies (LiteLLM, OpenRouter) write them.

The request is ``{"model": "claude-...", "messages": [system, user, ...]}`` and the response a ``choices`` body
whose usage is ``prompt_tokens`` (the whole prompt, cache included), ``completion_tokens`` and
``prompt_tokens_details.cached_tokens``, with LiteLLM's ``cache_read_input_tokens`` /
``cache_creation_input_tokens`` beside them.  ctxwatch picked Anthropic's rule from the model name, found no
``input_tokens`` and dropped the prompt: reported ``?``, cost ``?``, and no issue.

Expected values are worked out by hand from the usage each test writes and Anthropic's published prices
(anthropic.com/pricing, Claude Sonnet 4.5: $3 per million input tokens, $15 per million output tokens, $0.30 per
million cache reads, $3.75 per million 5-minute cache writes).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ctxwatch.cli import main

SYS = "You are a careful agent."

#: Claude Sonnet 4.5 prices, USD per token (anthropic.com/pricing).
IN, OUT, READ, WRITE = 3 / 1e6, 15 / 1e6, 0.30 / 1e6, 3.75 / 1e6


def _record(i: int, model: str, usage: dict[str, Any]) -> dict[str, Any]:
    msgs: list[dict[str, Any]] = [{"role": "system", "content": SYS}]
    for j in range(i + 1):
        msgs.append({"role": "user", "content": f"question {j}"})
        if j < i:
            msgs.append({"role": "assistant", "content": f"answer {j}"})
    return {"timestamp": 1_750_000_000 + 10 * i, "request": {"model": model, "max_tokens": 1000, "messages": msgs},
            "response": {"id": f"chatcmpl-{i}", "model": model, "object": "chat.completion",
                         "choices": [{"message": {"role": "assistant", "content": f"answer {i}"},
                                      "finish_reason": "stop"}],
                         "usage": usage}}


def _report(path: Path, records: list[dict[str, Any]]) -> dict[str, Any]:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    res = CliRunner().invoke(main, ["report", str(path), "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


@pytest.mark.parametrize("model", ["claude-sonnet-4-5", "anthropic/claude-sonnet-4-5"])
def test_plain_openai_usage_of_a_claude_model_is_read(tmp_path: Path, model: str) -> None:
    usage = [{"prompt_tokens": 1000 * (i + 1), "completion_tokens": 100, "prompt_tokens_details": {"cached_tokens": 0}}
             for i in range(3)]
    d = _report(tmp_path / "proxy.jsonl", [_record(i, model, u) for i, u in enumerate(usage)])
    calls = d["calls"]
    assert [c["prompt_tokens_reported"] for c in calls] == [1000, 2000, 3000]
    assert [c["completion_tokens_reported"] for c in calls] == [100, 100, 100]
    assert [c["cache_read_tokens"] for c in calls] == [0, 0, 0]
    assert [c["input_uncached_tokens"] for c in calls] == [1000, 2000, 3000]
    # by hand: 1,000 x $3/M + 100 x $15/M = $0.0045; then $0.0075 and $0.0105
    for c, cost in zip(calls, [0.0045, 0.0075, 0.0105], strict=True):
        assert c["cost_usd"] == pytest.approx(cost, abs=1e-9)
    # the system message is the system prompt, as in any chat request: nothing evicted, nothing ambiguous
    assert all(c["system_tokens"] > 0 for c in calls)
    assert not [f for f in d["flags"] if f["kind"] == "system_prompt_evicted"]
    assert d["issues"] == []


def test_litellm_cache_fields_beside_prompt_tokens(tmp_path: Path) -> None:
    # LiteLLM: prompt_tokens 5,000 holds the 3,000 cache reads and the 1,500 cache writes (BerriAI/litellm#11364)
    u = {"prompt_tokens": 5000, "completion_tokens": 200, "total_tokens": 5200,
         "prompt_tokens_details": {"cached_tokens": 3000},
         "cache_read_input_tokens": 3000, "cache_creation_input_tokens": 1500}
    d = _report(tmp_path / "litellm.jsonl", [_record(0, "claude-sonnet-4-5", u)])
    c = d["calls"][0]
    assert (c["prompt_tokens_reported"], c["input_uncached_tokens"], c["cache_read_tokens"],
            c["cache_write_tokens"], c["completion_tokens_reported"]) == (5000, 500, 3000, 1500, 200)
    # by hand: 500 x $3/M + 3,000 x $0.30/M + 1,500 x $3.75/M + 200 x $15/M = $0.0015 + $0.0009 + $0.005625 + $0.003
    assert c["cost_usd"] == pytest.approx(0.011025, abs=1e-9)
    assert d["issues"] == []


def test_litellm_cache_counts_above_prompt_tokens_are_ambiguous(tmp_path: Path) -> None:
    # reads 100 + writes 1,500 > prompt_tokens 1,200: an older LiteLLM left the writes out (1,200 + 1,500 = 2,700),
    # or prompt_tokens is Anthropic's uncached input (1,200 + 100 + 1,500 = 2,800); the first is read, and said
    u = {"prompt_tokens": 1200, "completion_tokens": 10, "prompt_tokens_details": {"cached_tokens": 100},
         "cache_read_input_tokens": 100, "cache_creation_input_tokens": 1500}
    d = _report(tmp_path / "old.jsonl", [_record(0, "claude-sonnet-4-5", u)])
    c = d["calls"][0]
    assert (c["prompt_tokens_reported"], c["input_uncached_tokens"], c["cache_read_tokens"],
            c["cache_write_tokens"]) == (2700, 1100, 100, 1500)
    assert [(i["kind"], i["line"]) for i in d["issues"]] == [("ambiguous_usage", 1)]
    assert "2,700" in d["issues"][0]["message"] and "2,800" in d["issues"][0]["message"]
    # a note, not damage: check's exit status does not change for it
    res = CliRunner().invoke(main, ["check", str(tmp_path / "old.jsonl")])
    assert res.exit_code == 0, res.output


def test_prompt_and_input_tokens_that_disagree_are_ambiguous(tmp_path: Path) -> None:
    u = {"prompt_tokens": 900, "input_tokens": 400, "completion_tokens": 10, "output_tokens": 10}
    d = _report(tmp_path / "both.jsonl", [_record(0, "claude-sonnet-4-5", u)])
    assert d["calls"][0]["prompt_tokens_reported"] == 900
    assert [i["kind"] for i in d["issues"]] == ["ambiguous_usage"]


def test_native_anthropic_usage_still_sums_its_parts(tmp_path: Path) -> None:
    # Anthropic's own shape: input_tokens 10 leaves out cache reads 3,000 and writes 1,500 (prompt 4,510)
    rec = {"request": {"model": "claude-sonnet-4-5", "max_tokens": 100, "system": SYS,
                       "messages": [{"role": "user", "content": "hi"}]},
           "response": {"id": "msg_1", "type": "message", "content": [{"type": "text", "text": "ok"}],
                        "usage": {"input_tokens": 10, "cache_read_input_tokens": 3000,
                                  "cache_creation_input_tokens": 1500, "output_tokens": 20}}}
    d = _report(tmp_path / "native.jsonl", [rec])
    c = d["calls"][0]
    assert (c["prompt_tokens_reported"], c["input_uncached_tokens"], c["cache_read_tokens"],
            c["cache_write_tokens"]) == (4510, 10, 3000, 1500)
    assert d["issues"] == []


def test_openrouter_cache_writes_are_priced_as_cache_writes(tmp_path: Path) -> None:
    """OpenRouter reports cache writes as ``prompt_tokens_details.cache_write_tokens``, inside ``prompt_tokens``
    (openrouter.ai/docs/use-cases/usage-accounting); they were priced as plain input.  Prompt 10,000 = 6,000
    cache reads + 3,000 cache writes + 1,000 uncached; output 200."""
    path = tmp_path / "openrouter.jsonl"
    path.write_text(json.dumps(_record(0, "anthropic/claude-sonnet-4.5", {
        "prompt_tokens": 10_000, "completion_tokens": 200, "total_tokens": 10_200,
        "prompt_tokens_details": {"cached_tokens": 6_000, "cache_write_tokens": 3_000}})) + "\n")
    res = CliRunner().invoke(main, ["report", "--json", str(path)])
    (call,) = json.loads(res.output)["calls"]
    assert (call["prompt_tokens_reported"], call["input_uncached_tokens"], call["cache_read_tokens"],
            call["cache_write_tokens"]) == (10_000, 1_000, 6_000, 3_000)
    assert call["cost_usd"] == pytest.approx(1_000 * IN + 6_000 * READ + 3_000 * WRITE + 200 * OUT)
