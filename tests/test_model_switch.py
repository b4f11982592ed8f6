"""A session that switches model mid-way is one context (issue 21, kind 5): on a real Claude Code session with a
compaction whose middle calls are switched to another model (as /model does), the compaction is measured from
the call just before it, whatever its model, and the forecast is of the session's latest calls."""

from __future__ import annotations

import json
from pathlib import Path

from ctxwatch.analysis import analyze_run
from ctxwatch.config import Settings
from ctxwatch.engine import load_run

SAMPLE = "claude-code/spotter_4d5611e5_lines700-800_compaction.jsonl"


def test_model_switch_is_one_context(shared_logs: Path, tmp_path: Path) -> None:
    recs = [json.loads(x) for x in (shared_logs / SAMPLE).read_text().splitlines() if x.strip()]
    main = [i for i, r in enumerate(recs) if r.get("type") == "assistant" and not r.get("isSidechain")]
    boundary = next(i for i, r in enumerate(recs) if r.get("subtype") == "compact_boundary")
    # Opus, then Haiku up to the compaction and just after it, then Opus again (5 / many / the rest)
    before = [i for i in main if i < boundary]
    switched = set(before[5:]) | {i for i in main if i > boundary}
    first_after = sorted(i for i in main if i > boundary)
    switched -= set(first_after[3:])
    for i in switched:
        recs[i]["message"]["model"] = "claude-haiku-4-5-20251001"
    path = tmp_path / "switch.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    # independent reader: prompt per main-chain message id, in order, and where the compaction falls
    prompts: dict[str, int] = {}
    cut = None
    for i, r in enumerate(recs):
        if i == boundary:
            cut = len(prompts)
        if i in main:
            u = r["message"]["usage"]
            prompts.setdefault(r["message"]["id"], u["input_tokens"] + u["cache_creation_input_tokens"]
                               + u["cache_read_input_tokens"])
    seq = list(prompts.values())
    assert cut is not None
    run = load_run(str(path), settings=Settings())
    assert len({c.model for c in run.calls if c.context == "main"}) == 2
    a = analyze_run(run)["main"]
    (f,) = [f for f in a.flags if f.kind == "compaction"]
    assert f.evidence["prompt_before"] == seq[cut - 1] and f.evidence["prompt_after"] == seq[cut]
    assert f.evidence["tokens_freed"] == seq[cut - 1] - seq[cut] > 0
    assert not [f for f in a.flags if f.kind == "trigger_no_compaction"]
    assert "stream_model" not in f.evidence
    assert a.forecast.since_call == cut  # the episode after the compaction, across the switch back
