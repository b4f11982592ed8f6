"""An output count no call can have (above the largest window of its model, or the 10M tokens of the largest
windows when the model is unknown) is an ``implausible_value`` issue of its line, in every format; the call is
kept, its output unknown, left out of the token sums and the cost.

Expected values are read from the files with plain ``json`` in the test, or written by hand.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import report_of

from ctxwatch.cli import main

HUGE = 10**12


def _claude_code_calls(path: Path) -> dict[str, list[tuple[int, dict]]]:
    """``message.id -> [(line, usage)]`` of the assistant lines of a Claude Code transcript (plain json)."""
    calls: dict[str, list[tuple[int, dict]]] = {}
    for n, text in enumerate(path.read_text().splitlines(), 1):
        v = json.loads(text)
        if v.get("type") == "assistant":
            calls.setdefault(v["message"]["id"], []).append((n, v["message"]["usage"]))
    return calls


def test_claude_code_output_above_the_window_is_an_issue_and_unknown(shared_logs: Path, tmp_path: Path) -> None:
    """``message.usage.output_tokens`` of 10**12 on the last line of a call: an issue naming that line, the call
    kept with its output and cost unknown, the other calls' outputs summed as the file has them."""
    log = tmp_path / "huge_output.jsonl"
    shutil.copy(shared_logs / "claude-code" / "spotter_tool_heavy.jsonl", log)
    lines = log.read_text().splitlines()
    calls = _claude_code_calls(log)
    mid = list(calls)[-1]
    target = calls[mid][-1][0]  # (the line whose usage the call keeps: its final count)
    v = json.loads(lines[target - 1])
    v["message"]["usage"]["output_tokens"] = HUGE
    lines[target - 1] = json.dumps(v)
    log.write_text("\n".join(lines) + "\n")
    others = sum(max(u["output_tokens"] for _, u in rows) for m, rows in calls.items() if m != mid)

    doc = report_of(str(log))
    assert len(doc["calls"]) == len(calls)
    issues = [i for i in doc["issues"] if i["kind"] == "implausible_value"]
    assert [i["line"] for i in issues] == [target]
    assert "1,000,000,000,000" in issues[0]["message"] and "unknown" in issues[0]["message"]
    last = doc["calls"][-1]
    assert last["completion_tokens_reported"] is None and last["cost_usd"] is None
    assert sum(c["completion_tokens_reported"] or 0 for c in doc["calls"]) == others

    res = CliRunner().invoke(main, ["check", "--json", str(log)])
    notes = json.loads(res.output)["notes"]
    assert [(n["line"], n["kind"]) for n in notes] == [(target, "implausible_value")]


def _canonical(model: str, usage: dict, **top: object) -> str:
    return json.dumps({"request": {"model": model, "messages": [{"role": "user", "content": "hi"}]},
                       "response": {"usage": usage}, **top}) + "\n"


def _gemini(model: str, candidates: int, thoughts: int) -> str:
    return json.dumps({"modelVersion": model, "candidates": [{"content": {"parts": [{"text": "ok"}]}}],
                       "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": candidates,
                                         "thoughtsTokenCount": thoughts,
                                         "totalTokenCount": 10 + candidates + thoughts}}) + "\n"


# (record, the number of implausible_value issues) ; gpt-4o's window is 128,000, Claude Sonnet 4.5's largest
# 1,000,000 (its beta), Gemini 2.5 Pro's 1,048,576; an unknown model's bound is 10,000,000.
CASES = {
    "openai": (_canonical("gpt-4o", {"prompt_tokens": 10, "completion_tokens": HUGE}), 1),
    "openai_reasoning": (_canonical("o3", {"prompt_tokens": 10, "completion_tokens": 20,
                                            "completion_tokens_details": {"reasoning_tokens": HUGE}}), 1),
    "anthropic": (_canonical("claude-sonnet-4-5", {"input_tokens": 10, "output_tokens": HUGE}), 1),
    "gemini": (_gemini("gemini-2.5-pro", HUGE, 0), 1),
    "unknown_model_huge": (_canonical("my-own-model", {"prompt_tokens": 10, "completion_tokens": 20_000_000}), 1),
    "unknown_model_fits": (_canonical("my-own-model", {"prompt_tokens": 10, "completion_tokens": 5_000_000}), 0),
    "log_window": (_canonical("my-own-model", {"prompt_tokens": 10, "completion_tokens": 5_000}, window=4_000), 1),
    "plausible": (_canonical("gpt-4o", {"prompt_tokens": 10, "completion_tokens": 16_000}), 0),
    # (cache counts are judged by the bound when no prompt is reported; with one, the prompt is judged)
    "cache_without_prompt": (_canonical("gpt-4o", {"completion_tokens": 5,
                                                   "prompt_tokens_details": {"cached_tokens": HUGE}}), 1),
}


@pytest.mark.parametrize("case", list(CASES))
def test_every_format_judges_the_output_by_the_window(tmp_path: Path, case: str) -> None:
    record, wanted = CASES[case]
    log = tmp_path / f"{case}.jsonl"
    log.write_text(record)
    doc = report_of(str(log))
    assert len(doc["calls"]) == 1
    issues = [i for i in doc["issues"] if i["kind"] == "implausible_value"]
    assert len(issues) == wanted, doc["issues"]
    call = doc["calls"][0]
    if wanted:
        assert issues[0]["line"] == 1
        assert call["cost_usd"] is None
        field = ("reasoning_tokens_reported" if "reasoning" in case else "cache_read_tokens" if "cache" in case
                 else "completion_tokens_reported")
        assert call[field] is None
    else:
        assert call["completion_tokens_reported"] is not None
