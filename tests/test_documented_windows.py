"""The table of documented windows (ctxwatch.catalog.documented) only fills gaps in genai-prices or corrects a
figure known wrong; the windows it gives (B36 GPT-5's 272K input limit, B47 DeepSeek's 128K, B35 Gemini 2.5 Pro)."""

from __future__ import annotations

import pytest
from genai_prices import data_snapshot
from helpers import report_of as _report
from helpers import shared_case

from ctxwatch.catalog.documented import DOCUMENTED_WINDOWS
from ctxwatch.catalog.windows import resolve_window
from ctxwatch.model import Src


def _catalogue_window(provider: str, model: str) -> tuple[bool, int | None]:
    """(the entry exists, its context_window) read straight off genai-prices' snapshot, by id."""
    snap = data_snapshot.get_snapshot()
    for p in snap.providers:
        if p.id == provider:
            for m in p.models:
                if m.id == model:
                    return True, m.context_window
    return False, None


@pytest.mark.parametrize("row", DOCUMENTED_WINDOWS, ids=lambda r: f"{r.provider}/{r.model}")
def test_each_row_fills_a_gap_or_corrects_a_known_figure(row):
    exists, cw = _catalogue_window(row.provider, row.model)
    assert exists, "the row names a catalogue entry that does not exist"
    # The row states what the catalogue says; a catalogue that changed (caught up) fails here: drop the row.
    assert cw == row.catalog
    if row.why == "missing":
        assert cw is None
    else:
        assert cw is not None and cw != row.window
    if row.why == "total includes output":
        # (OpenAI: 272,000 input + 128,000 output = 400,000)
        assert cw == row.window + 128_000
    assert row.url.startswith("https://")


def test_a_model_outside_the_table_keeps_the_catalogue_window():
    assert resolve_window("gpt-4o", "openai", None, None) == (128_000, Src.CATALOG)
    assert resolve_window("gemini-2.5-flash", "google", None, None) == (1_048_576, Src.CATALOG)


def test_the_log_and_the_option_still_win_over_the_table():
    assert resolve_window("gpt-5", "openai", 258_400, None) == (258_400, Src.LOG)
    assert resolve_window("gpt-5", "openai", None, 100_000) == (100_000, Src.OPTION)


def test_dated_and_routed_ids_get_the_documented_window():
    for model in ("gpt-5", "gpt-5-2025-08-07", "openai/gpt-5", "azure/gpt-5", "gpt-5-codex"):
        assert resolve_window(model, None, None, None) == (272_000, Src.DOCUMENTED), model
    assert resolve_window("gemini-2.5-pro-preview-06-05", None, None, None) == (1_048_576, Src.DOCUMENTED)


def test_b36_gpt5_input_cap(shared_logs):
    doc = _report(shared_case(shared_logs, "b36_gpt5_input_cap_272k.jsonl"))
    calls = doc["calls"]
    assert [c["window"] for c in calls] == [272_000] * 4
    assert {c["window_source"] for c in calls} == {"documented"}
    assert "272,000" in calls[0]["window_note"] and "openai.com" in calls[0]["window_note"]
    # The output has its own 128K beside the 272K input: no reserve is taken from the prompt's room.
    assert calls[3]["reserve_tokens"] == 0
    assert calls[3]["free_tokens"] == 272_000 - 257_184 == 14_816
    assert calls[3]["used_fraction"] == round(257_184 / 272_000, 4)
    forecast = [f for f in doc["flags"] if f["kind"] == "window_forecast"]
    assert len(forecast) == 1 and forecast[0]["severity"] == "critical" and forecast[0]["call"] <= 3


def test_b36_reserve_option_still_overrides(shared_logs):
    doc = _report(shared_case(shared_logs, "b36_gpt5_input_cap_272k.jsonl"), "--reserve", "0.1")
    assert doc["calls"][3]["reserve_tokens"] == 27_200 and doc["calls"][3]["reserve_source"] == "option"


def test_b36b_codex_null_window_gets_the_input_limit(shared_logs):
    doc = _report(shared_case(shared_logs, "b36b_codex_window_null_gpt5.jsonl"))
    # Codex works in 95 % of the model's window: of the documented 272,000, not of the catalogue's 400,000
    assert {(c["window"], c["window_source"]) for c in doc["calls"]} == {(258_400, "harness")}


def test_b47_deepseek_window(shared_logs):
    doc = _report(shared_case(shared_logs, "b47_deepseek_cache_hit_fields.jsonl"))
    c = doc["calls"][0]
    assert (c["window"], c["window_source"]) == (128_000, "documented")
    assert abs(c["used_fraction"] - 36_100 / 128_000) < 1e-4  # about 28 %


def test_b35_gemini_pro_window(shared_logs):
    doc = _report(shared_case(shared_logs, "b35_gemini_cached_thoughts.jsonl"))
    c = doc["calls"][0]
    assert (c["window"], c["window_source"]) == (1_048_576, "documented")
