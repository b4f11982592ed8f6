"""A file's written calls (:class:`ctxwatch.engine.files.Pieces`): the bytes and the costs given back as made."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

from ctxwatch.engine.files import Pieces
from ctxwatch.model import Call


def test_pieces_give_back_each_calls_bytes_and_cost() -> None:
    """Each piece's bytes and cost come back as the renderer gave them, an unpriced call's as ``None`` (not 0, not
    NaN), and what the renderer added up, also after a trip through pickle (the cache keeps them so)."""
    bodies = [b'"model": "a"\n}', b"", b'"model": "c"\n}']
    costs: list[float | None] = [0.0123, None, 0.0]

    def render(calls: list[Call]) -> tuple[list[bytes], list[float | None], object]:
        return bodies, costs, "totals"

    pieces = pickle.loads(pickle.dumps(Pieces.of([], render)))
    whole = pieces.inflated()
    starts = [0, *pieces.ends[:-1]]
    assert [whole[a:b] for a, b in zip(starts, pieces.ends, strict=True)] == bodies
    assert [pieces.cost(i) for i in range(3)] == [0.0123, None, 0.0]
    assert pieces.totals == "totals"


def test_a_folder_written_from_its_files_pieces_is_the_uncached_report(own_cache: Path, shared_logs: Path,
                                                                        tmp_path: Path) -> None:
    """A Claude Code folder (real sessions, one with its subagent, and one file copied whole into another
    project) through the cache, first and second read: the calls of each file held whole are written as the
    file's read wrote them, the copy's (held by the first file) one by one, and the bytes are those of a read
    with the cache off.  The calls are numbered 1..N in order, N being the distinct responses a simple reader
    counts (``message.id`` + ``requestId`` of the assistant lines)."""
    import shutil

    from helpers import report_bytes

    src = shared_logs / "claude-code"
    root = tmp_path / "projects"
    names = ["spotter_short.jsonl", "spotter_tool_heavy.jsonl", "spotter_subagent_parent.jsonl",
             "ccviewer_5c0375b4_v1.0.108_inline_sidechain.jsonl"]
    for i, name in enumerate(names):
        (root / f"p{i}").mkdir(parents=True)
        shutil.copy(src / name, root / f"p{i}" / name)
    agents = root / "p0" / "sess" / "subagents"
    agents.mkdir(parents=True)
    shutil.copy(src / "spotter_4d5611e5_subagents_agent-a2898e3.jsonl", agents / "agent-a2898e3.jsonl")
    shutil.copy(src / "spotter_short.jsonl", root / "p3" / "copy.jsonl")
    responses: set[tuple[str, str]] = set()
    for path in root.rglob("*.jsonl"):
        for line in path.read_bytes().splitlines():
            rec = json.loads(line)
            msg = rec.get("message")
            if rec.get("type") == "assistant" and isinstance(msg, dict) and msg.get("model") != "<synthetic>" \
                    and not rec.get("isApiErrorMessage"):
                responses.add((msg["id"], rec["requestId"]))
    uncached = report_bytes(root, "--no-cache")
    doc = json.loads(uncached)
    assert [c["number"] for c in doc["calls"]] == list(range(1, len(responses) + 1))
    for _ in range(2):
        assert report_bytes(root) == uncached
