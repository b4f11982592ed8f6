"""A Claude Code compaction summariser's call (context ``agent-acompact-*``) sends nearly the whole window: it is
the compaction, so its drift risk does not say "past the compaction trigger" (the same call outside a summariser's
transcript does)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from ctxwatch.analysis.run import analyze_run
from ctxwatch.engine import load_run


def test_the_summariser_call_is_not_past_its_own_trigger(shared_logs: Path) -> None:
    path = shared_logs / "claude-code" / "spotter_4d5611e5_subagents_agent-acompact-e1f845.jsonl"
    usage = [json.loads(ln)["message"]["usage"] for ln in path.read_text().splitlines()
             if json.loads(ln).get("type") == "assistant"][-1]
    prompt = usage["input_tokens"] + usage["cache_read_input_tokens"] + usage["cache_creation_input_tokens"]
    assert 200_000 - 33_000 <= prompt <= 200_000 - 23_000  # (between Claude Code's trigger and its budget)
    run = load_run(str(path))
    [call] = run.calls
    assert call.provenance.compaction_summarizer and call.prompt_tokens == prompt
    [risk] = analyze_run(run, texts=False)[call.context].drift_risk
    assert risk.level == "low" and "trigger" not in risk.reason
    run.calls[0] = replace(call, provenance=replace(call.provenance, compaction_summarizer=False))
    [risk] = analyze_run(run, texts=False)[call.context].drift_risk
    assert risk.level == "medium" and "past the compaction trigger" in risk.reason
