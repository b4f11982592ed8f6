"""The cases of ../shared/cases/failure_cases_2.md that passed when it was written, pinned with their expected
values (by hand from the provider's pricing and the usage in each file); the others have tests of their own
kind (test_documented_windows, test_usage_dialects, test_harness_limits, test_codex_fork, test_text_widths,
test_microcompaction, test_prior_thinking, test_tail)."""

from __future__ import annotations

import pytest
from helpers import report_of, shared_case


def _call(shared_logs, name: str) -> dict:
    doc = report_of(shared_case(shared_logs, name))
    assert len(doc["calls"]) == 1
    return doc["calls"][0]


def test_b32_one_hour_cache_writes(shared_logs):
    c = _call(shared_logs, "b32_cache_1h_ttl.jsonl")
    # Sonnet 4.5: $3 input, $6 1-hour cache write, $15 output per MTok
    assert c["cost_usd"] == pytest.approx((10 * 3 + 100_000 * 6 + 1000 * 15) / 1e6) == pytest.approx(0.61503)
    assert c["cache_write_tokens"] == 100_000


def test_b33_aggregate_is_authoritative(shared_logs):
    c = _call(shared_logs, "b33_cache_breakdown_partial.jsonl")
    # 68,000 at the 1-hour rate ($6), 32,000 at the 5-minute rate ($3.75)
    assert c["cost_usd"] == pytest.approx((10 * 3 + 68_000 * 6 + 32_000 * 3.75 + 1000 * 15) / 1e6) \
        == pytest.approx(0.54303)


def test_b34_web_searches(shared_logs):
    c = _call(shared_logs, "b34_server_tool_use.jsonl")
    # $0.30 per MTok cache read, $10 per 1,000 searches, web fetch free beyond tokens
    assert c["web_searches"] == 2
    assert c["cost_usd"] == pytest.approx((10 * 3 + 20_000 * 0.3 + 500 * 15) / 1e6 + 2 * 0.01) \
        == pytest.approx(0.03353)


def test_b38_synthetic_api_error_is_no_call(shared_logs):
    doc = report_of(shared_case(shared_logs, "b38_synthetic_api_error.jsonl"))
    assert len(doc["calls"]) == 1 and doc["calls"][0]["prompt_tokens_reported"] == 120_008
    assert doc["calls"][0]["used_fraction"] == pytest.approx(120_008 / 200_000, abs=1e-4)
    assert not [f for f in doc["flags"] if f["kind"] == "implausible_usage"]


def test_b41_long_context_premium(shared_logs):
    c = _call(shared_logs, "b41_long_context_premium.jsonl")
    # above 200K input: $6 input, $7.50 5-minute write, $0.60 read, $22.50 output per MTok
    assert c["cost_usd"] == pytest.approx((10 * 6 + 10_000 * 7.5 + 290_000 * 0.6 + 2000 * 22.5) / 1e6) \
        == pytest.approx(0.29406)
    assert (c["window"], c["window_source"]) == (1_000_000, "inferred")


def test_b42_trailing_zero_usage_frame(shared_logs):
    c = _call(shared_logs, "b42_sse_trailing_zero_usage.jsonl")
    assert (c["input_uncached_tokens"], c["cache_read_tokens"], c["cache_write_tokens"],
            c["completion_tokens_reported"]) == (2, 169_296, 2_613, 1_378)
    assert c["prompt_tokens_reported"] == 171_911
