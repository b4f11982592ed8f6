"""The model's call summaries survive a pickle round trip (the workers' results and the cache's kept results are
pickles): every field equal, frozen objects still frozen and hashed alike, and a frozen object rebuilt by its
class's own maker, named by reference."""

from __future__ import annotations

import dataclasses
import json
import pickle
from pathlib import Path

import pytest

from ctxwatch.engine import load_run
from ctxwatch.model import SourceRef, Usage
from ctxwatch.model.call import MessageStat


@pytest.mark.parametrize("obj", [
    SourceRef(path="/logs/a.jsonl", line=3, line_end=4, byte_start=120, byte_end=977),
    Usage(prompt_total=15343, input_uncached=2, cache_read=15044, cache_write=297, output=95, service_tier="standard"),
    MessageStat("tool", 41, 7_431_002, tool_result_ids=("call_1", "call_2"), label="meta", text_cut=True),
])
def test_a_frozen_summary_comes_back_whole_and_frozen(obj: object) -> None:
    blob = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    back = pickle.loads(blob)
    assert type(back) is type(obj)
    assert dataclasses.astuple(back) == dataclasses.astuple(obj)  # type: ignore[call-overload]
    assert back == obj and hash(back) == hash(obj)
    assert f"{type(obj).__qualname__}._unpickle".encode() in blob  # (its maker, not the frozen __init__)
    field = dataclasses.fields(obj)[0].name  # type: ignore[arg-type]
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(back, field, None)


def test_a_name_every_call_repeats_is_pickled_once(shared_logs: Path) -> None:
    """A real Claude Code session (``spotter_4d5611e5_full.jsonl``): its calls' session id, model and service
    tier each appear once in the pickle of its calls (one object, referred to after), not once per call, as each
    line's parse made them.  The expected counts are read from the file by a separate simple reader."""
    path = shared_logs / "claude-code" / "spotter_4d5611e5_full.jsonl"
    sessions, models = set(), set()
    for line in path.read_bytes().splitlines():
        rec = json.loads(line)
        if rec.get("type") == "assistant" and not rec.get("isSidechain"):
            sessions.add(rec["sessionId"])
            models.add(rec["message"]["model"])
    run = load_run(str(path))
    assert len(run.calls) > 100
    blob = pickle.dumps(run.calls, protocol=pickle.HIGHEST_PROTOCOL)
    for value in [*sorted(sessions | models - {"<synthetic>"}), "standard"]:
        assert blob.count(value.encode()) == 1, value
