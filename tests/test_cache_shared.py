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


def test_a_save_left_for_the_next_commit_does_not_hold_the_database(tmp_path: Path) -> None:
    """Two processes reading a folder each save an entry per log without a commit (its result is written with
    it, once its calls are rendered), then the result.  The entry took the database's write lock at once and
    held it through the rendering, so the other process waited on every save.  Now nothing is written before
    the commit: another connection, which waits for no lock at all, writes meanwhile, and both entries are
    kept (each file then reads as it does without the cache)."""
    from ctxwatch.engine.warm import open_warm, read_warm

    sample = (ROOT / "sample_logs" / "openai_chat_demo.jsonl").read_bytes()
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_bytes(sample)
    b.write_bytes(sample)
    db, settings = str(tmp_path / "cache.sqlite3"), Settings()
    first, other = RunCache(db), RunCache(db)
    spec, found = open_warm(first, str(a), None, settings)
    read_warm(first, str(a), spec, found, settings, commit=False)  # (saved, not committed)
    conn = other._connect()
    assert conn is not None
    conn.execute("PRAGMA busy_timeout = 0")  # (a write that finds the database locked fails at once)
    spec, found = open_warm(other, str(b), None, settings)
    read_warm(other, str(b), spec, found, settings)  # (saved and committed meanwhile)
    first.commit()
    first.close()
    other.close()
    check = RunCache(db)
    for log in (a, b):
        assert check.load(str(log), check.key(str(log), None, settings)) is not None, log
    want = load_run(str(a), None, settings)
    for log in (a, b):
        run = load_run(str(log), None, settings, cache=RunCache(db))
        assert [(c.source.line, c.usage) for c in run.calls] == [(c.source.line, c.usage) for c in want.calls]
