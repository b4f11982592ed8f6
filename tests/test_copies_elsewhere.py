"""A log of a folder every call of which is a copy of a call kept with another file (a resumed or copied Claude
Code session: the same message and request ids under another session id) has no session row of its own; a
``copies_elsewhere`` note says why, in the serial, parallel and cached reads alike.  A log with one call of its
own besides the copies gets no note."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from helpers import serial_and_parallel

from ctxwatch.config import Settings
from ctxwatch.engine import folder as multi
from ctxwatch.engine.cache import RunCache, default_path
from ctxwatch.output.report import report_json


def reads(folder: Path) -> list[dict]:
    """``report --json`` of the folder read serially, by workers, and twice through a cache of its own."""
    serial, par = serial_and_parallel(folder)
    cached = [report_json(multi.load_many([str(folder)], None, Settings(), cache=RunCache(default_path())))
              for _ in range(2)]
    return [serial, par, *cached]


def test_a_log_of_copies_only_is_noted(shared_logs: Path, tmp_path: Path, own_cache: Path) -> None:
    folder = tmp_path / "proj"
    folder.mkdir()
    src = (shared_logs / "claude-code" / "ccviewer_fe5e1c67_v1.0.98_head200.jsonl").read_bytes()
    (folder / "a.jsonl").write_bytes(src)
    (folder / "b.jsonl").write_bytes(src.replace(b'"sessionId":"', b'"sessionId":"copy-'))
    then = time.time() - 3600
    os.utime(folder / "a.jsonl", (then, then))  # (read first: the original)
    ids = {json.loads(ln)["sessionId"] for ln in src.splitlines() if b'"type":"assistant"' in ln}
    for doc in reads(folder):
        assert [s["session"] for s in doc["sessions"]] == sorted(ids)
        assert {Path(c["file"]).name for c in doc["calls"]} == {"a.jsonl"}
        assert [(Path(i["file"]).name, i["kind"]) for i in doc["issues"]] == [("b.jsonl", "copies_elsewhere")]

    other = (shared_logs / "claude-code" / "spotter_short.jsonl").read_bytes()
    (folder / "b.jsonl").write_bytes(src.replace(b'"sessionId":"', b'"sessionId":"copy-') + other)
    for doc in reads(folder):
        assert "copies_elsewhere" not in {i["kind"] for i in doc["issues"]}
        assert "b.jsonl" in {Path(c["file"]).name for c in doc["calls"]}
