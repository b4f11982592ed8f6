"""A folder's finished logs (not written to for :data:`~ctxwatch.engine.cachedb.FINISHED_AFTER`) keep their read's
result in the cache, not their reader's state: a second report reads nothing, one such log written to again is
read once more from its start, and from then on (it is live) its state is kept and it is read on from where it
stopped.  Expected outputs are those of a read with the cache off (``--no-cache``) of the same bytes."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from helpers import finish, half_grown_project, reads_from, report_bytes

from ctxwatch.config import Settings
from ctxwatch.engine import cache as cache_mod


@pytest.fixture(autouse=True)
def _own(own_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cache folder of its own; each log's own entry answers (no command's whole output kept)."""
    monkeypatch.setattr(cache_mod.RunCache, "load_output", lambda self, key: None)
    monkeypatch.setattr(cache_mod.RunCache, "keep_output", lambda self, key, pieces, still: pieces)


def saved_states() -> dict[str, tuple[bool, bool]]:
    """Per log file name: (a reader state is saved, a result is saved), read from the database itself."""
    db = sqlite3.connect(cache_mod.default_path())
    try:
        rows = db.execute("SELECT path, state IS NOT NULL, result IS NOT NULL FROM files").fetchall()
    finally:
        db.close()
    return {os.path.basename(os.fsdecode(p)): (bool(s), bool(r)) for p, s, r in rows}


def unread(path: Path) -> int:
    """Bytes of ``path`` a read through the cache would read, as a folder's read balances its workers by."""
    cache = cache_mod.RunCache(cache_mod.default_path())
    try:
        return cache.unread(str(path), cache.key(str(path), None, Settings()))
    finally:
        cache.close()


def test_a_finished_log_keeps_its_result_and_is_read_whole_when_written_to_again(
        shared_logs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder, grown, full, cut = half_grown_project(shared_logs, tmp_path)
    finish(folder)  # (finished logs: their results kept, not their readers' states)
    starts = reads_from(monkeypatch)
    want = report_bytes(folder, "--no-cache")
    assert report_bytes(folder) == want
    names = sorted(p.name for p in folder.iterdir())
    assert saved_states() == {n: (False, True) for n in names}  # (every log finished: results only)
    starts.clear()
    assert report_bytes(folder) == want and starts == []  # (nothing read again)
    assert all(unread(p) == 0 for p in folder.iterdir())  # (no worker started for nothing)

    middle = full.rfind(b"\n", 0, cut + (len(full) - cut) // 2) + 1
    grown.write_bytes(full[:middle])  # (written to now: live)
    assert unread(grown) == middle  # (read whole: the workers are balanced by it)
    starts.clear()
    assert report_bytes(folder) == report_bytes(folder, "--no-cache")
    assert starts == [0]  # (no state to read on from: the whole file again)
    assert saved_states()[grown.name] == (True, True)  # (live now: its state kept)
    assert all(saved_states()[n] == (False, True) for n in names if n != grown.name)

    grown.write_bytes(full)
    starts.clear()
    assert report_bytes(folder) == report_bytes(folder, "--no-cache")
    assert starts == [middle]  # (read on from where the last read stopped)
