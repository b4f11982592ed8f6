"""Model ids as clouds and proxies write them get the base model's window and price, and "priced as" names the
catalogue entry matched (issue 21, kind 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import report_of

from ctxwatch.catalog.windows import has_long_context

#: Claude Sonnet 4.5 (Anthropic pricing): $3 input, $15 output per MTok; window 200K.
SONNET_45 = ("anthropic", "claude-sonnet-4-5")


@pytest.mark.parametrize("model", [
    "claude-sonnet-4-5-20250929",                       # Anthropic's own dated id
    "anthropic/claude-sonnet-4.5",                      # OpenRouter
    "openrouter/anthropic/claude-sonnet-4.5",           # LiteLLM routing to OpenRouter
    "claude-sonnet-4-5@20250929",                       # Vertex AI
    "vertex_ai/claude-sonnet-4-5@20250929",             # LiteLLM's Vertex spelling
    "anthropic.claude-sonnet-4-5-20250929-v1:0",        # Bedrock
    "us.anthropic.claude-sonnet-4-5-20250929-v1:0",     # Bedrock cross-region inference profile
    "global.anthropic.claude-sonnet-4-5-20250929-v1:0",
    "bedrock/eu.anthropic.claude-sonnet-4-5-20250929-v1:0",
    "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-5-20250929-v1:0",
])
def test_cloud_and_proxy_ids_of_claude_sonnet_45(tmp_path: Path, model: str) -> None:
    rec = {"request": {"model": model, "messages": [{"role": "user", "content": "hi"}]},
           "response": {"id": "r1", "model": model, "usage": {"prompt_tokens": 1000, "completion_tokens": 100},
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}}]}}
    path = tmp_path / "calls.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    c = report_of(str(path))["calls"][0]
    assert (c["window"], c["window_source"]) == (200_000, "catalog")
    assert c["priced_as"] == dict(zip(("provider", "model"), SONNET_45, strict=True))
    assert c["cost_usd"] == pytest.approx((1000 * 3 + 100 * 15) / 1e6)
    assert has_long_context(model)  # (the 1M beta of Sonnet 4.5 is the same model's, whatever the spelling)


@pytest.mark.parametrize("model,window,entry", [
    ("openai/gpt-5", 272_000, "gpt-5"),            # OpenRouter / LiteLLM
    ("azure/gpt-5", 272_000, "gpt-5"),             # LiteLLM's Azure spelling
    ("gpt-5-2025-08-07", 272_000, "gpt-5"),        # dated snapshot
    ("gemini/gemini-2.5-pro", 1_048_576, "gemini-2.5-pro"),
    ("gemini-2.5-pro@001", 1_048_576, "gemini-2.5-pro"),
    ("deepseek/deepseek-chat", 128_000, "deepseek-chat"),
])
def test_routed_ids_get_the_base_models_window(tmp_path: Path, model: str, window: int, entry: str) -> None:
    rec = {"request": {"model": model, "messages": [{"role": "user", "content": "hi"}]},
           "response": {"id": "r1", "usage": {"prompt_tokens": 1000, "completion_tokens": 100},
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}}]}}
    path = tmp_path / "calls.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    c = report_of(str(path))["calls"][0]
    assert c["window"] == window and c["priced_as"]["model"] == entry


def test_an_azure_deployment_name_is_read_as_the_model_its_response_names(tmp_path: Path) -> None:
    # An Azure OpenAI request names the deployment; the response names the model that served it.
    rec = {"request": {"model": "prod-chat-deployment", "messages": [{"role": "user", "content": "hi"}]},
           "response": {"id": "r1", "model": "gpt-4o-2024-11-20",
                        "usage": {"prompt_tokens": 1000, "completion_tokens": 100},
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}}]}}
    path = tmp_path / "calls.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    doc = report_of(str(path))
    c = doc["calls"][0]
    assert c["model"] == "gpt-4o-2024-11-20" and c["window"] == 128_000
    assert c["priced_as"] == {"provider": "openai", "model": "gpt-4o"}
    assert c["cost_usd"] == pytest.approx((1000 * 2.5 + 100 * 10) / 1e6)
