"""B51: Claude Code's microcompact_boundary (old tool results cleared) is read as a compaction marker."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import shared_case

from ctxwatch.analysis import analyze_run
from ctxwatch.config import Settings
from ctxwatch.engine import load_run


def test_b51_microcompact_boundary(shared_logs):
    path = shared_case(shared_logs, "b51_microcompact_boundary.jsonl")
    recs = [json.loads(x) for x in Path(path).read_text().splitlines() if x.strip()]
    meta = next(r["microcompactMetadata"] for r in recs if r.get("subtype") == "microcompact_boundary")
    prompts = []
    for r in recs:
        if r.get("type") == "assistant":
            u = r["message"]["usage"]
            prompts.append(u["input_tokens"] + u["cache_creation_input_tokens"] + u["cache_read_input_tokens"])
    run = load_run(path, settings=Settings())
    calls = run.calls
    assert [c.prompt_reported for c in calls] == prompts
    marker = calls[11].compaction
    assert marker["kind"] == "microcompact_boundary" and marker["trigger"] == "auto"
    assert (marker["pre_tokens"], marker["tokens_saved"]) == (meta["preTokens"], meta["tokensSaved"]) \
        == (160_080, 60_000)
    a = analyze_run(run)["main"]
    (f,) = [f for f in a.flags if f.kind == "compaction"]
    assert f.call == 11 and f.evidence["marker"] and f.evidence["microcompaction"]
    assert f.evidence["tokens_freed"] == prompts[10] - prompts[11] == 58_420
    assert "microcompaction marker" in f.reason and "tokensSaved 60,000" in f.reason
    assert calls[11].floor_tokens == calls[0].floor_tokens  # the floor stays
    assert a.forecast.since_call == 11  # the forecast restarts
