"""The cache shared by two processes: an entry another ctxwatch saved again, further on, between this process's
check of it and its load, is not read on from the offset this process checked (its lines would be counted
twice).  Expected: the calls of a read without the cache, of the same bytes."""

from __future__ import annotations

from pathlib import Path

import orjson

from ctxwatch.config import Settings
from ctxwatch.engine import load_run
from ctxwatch.engine.cache import RunCache

ROOT = Path(__file__).resolve().parent.parent


def _without_response_id(line: bytes) -> bytes:
    """The record without its response's id: a line read twice is then two calls, not one merged by its key."""
    record = orjson.loads(line)
    record["response"].pop("id", None)
    return orjson.dumps(record) + b"\n"


def test_an_entry_saved_again_after_its_check_is_not_read_on_from_the_checked_offset(tmp_path: Path) -> None:
    lines = [_without_response_id(line)
             for line in (ROOT / "sample_logs" / "openai_chat_demo.jsonl").read_bytes().splitlines()]
    assert len(lines) >= 8
    log, db, settings = tmp_path / "run.jsonl", str(tmp_path / "cache.sqlite3"), Settings()
    log.write_bytes(b"".join(lines[:5]))
    load_run(str(log), None, settings, cache=RunCache(db))  # (saved after 5 lines)
    with open(log, "ab") as fh:
        fh.write(b"".join(lines[5:8]))
    mine = RunCache(db)
    # (this process checks the entry: 3 lines to read on)
    assert mine.unread(str(log), mine.key(str(log), None, settings)) == len(b"".join(lines[5:8]))
    load_run(str(log), None, settings, cache=RunCache(db))  # (another one reads on and saves after 8 lines)
    run = load_run(str(log), None, settings, cache=mine)
    want = load_run(str(log), None, settings)
    assert len(want.calls) == 8  # (one call a line)
    assert [(c.source.line, c.usage) for c in run.calls] == [(c.source.line, c.usage) for c in want.calls]
