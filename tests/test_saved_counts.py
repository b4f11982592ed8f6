"""Token counts of messages kept in the cache (:mod:`ctxwatch.engine.counts`): a log read again from its start
(a finished log written to again) counts none of the messages an earlier read counted, and its report is the
one a read with the cache off gives of the same bytes.  Counts of other code, or made with the ``chars/4``
fallback, are never used."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from helpers import finish, half_grown_project, reads_from, report_bytes

from ctxwatch.engine import cache as cache_mod
from ctxwatch.engine import cachedb
from ctxwatch.engine.counts import SavedCounts
from ctxwatch.tokens import counter as counter_mod


@pytest.fixture(autouse=True)
def _own(own_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cache folder of its own; each log's own entry answers (no command's whole output kept)."""
    monkeypatch.setattr(cache_mod.RunCache, "load_output", lambda self, key: None)
    monkeypatch.setattr(cache_mod.RunCache, "keep_output", lambda self, key, pieces, still: pieces)


def counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The roles of the messages tokenized from now on, one per message, as they are counted."""
    roles: list[str] = []
    real = counter_mod.Counter.message_count

    def spy(self, msg):  # type: ignore[no-untyped-def]
        roles.append(msg.role)
        return real(self, msg)

    monkeypatch.setattr(counter_mod.Counter, "message_count", spy)
    return roles


def saved_rows() -> int:
    db = sqlite3.connect(cache_mod.default_path())
    try:
        return int(db.execute("SELECT COUNT(*) FROM counts").fetchone()[0])
    finally:
        db.close()


def test_a_log_read_again_from_its_start_counts_nothing_counted_before(
        shared_logs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder, grown, full, _cut = half_grown_project(shared_logs, tmp_path)
    past = finish(folder)  # (finished logs: their results kept, not their readers' states)
    roles = counted(monkeypatch)
    first = report_bytes(folder)
    assert roles, "the first read counts the messages its floors are inferred from"
    assert saved_rows() > 0
    grown.write_bytes(full)  # (written to again: read once more from its start)
    os.utime(grown, (past + 60, past + 60))
    starts = reads_from(monkeypatch)
    roles.clear()
    again = report_bytes(folder)
    assert starts == [0], "the grown log is read again from its start"
    assert roles == [], "every message of its first half was counted by the first read"
    assert again == report_bytes(folder, "--no-cache")
    assert again != first  # (the second half's calls are in it)


def test_counts_of_other_code_are_not_used(own_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = cache_mod.RunCache(cache_mod.default_path())
    counts = cache.counts
    assert counts.get("o200k_base", "anthropic", 42) is None
    counts.put("o200k_base", "anthropic", 42, 17, False)
    db = cache._connect()
    assert db is not None
    counts.flush(db)
    db.commit()
    cache.close()
    fresh = SavedCounts(cache_mod.RunCache(cache_mod.default_path())._connect)
    assert fresh.get("o200k_base", "anthropic", 42) == (17, False)
    assert fresh.get("o200k_base", "openai", 42) is None  # (another provider's framing)
    assert fresh.get("cl100k_base", "anthropic", 42) is None
    monkeypatch.setattr(cachedb, "code_fingerprint", lambda: "another ctxwatch")
    monkeypatch.setattr("ctxwatch.engine.counts.code_fingerprint", lambda: "another ctxwatch")
    assert fresh.get("o200k_base", "anthropic", 42) is None


def test_counts_made_with_the_fallback_are_not_kept(shared_logs: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    folder, _grown, _full, _cut = half_grown_project(shared_logs, tmp_path)
    monkeypatch.setattr(cache_mod, "fallback_used", lambda: True)
    report_bytes(folder)
    assert not os.path.exists(cache_mod.default_path()) or saved_rows() == 0


def test_the_oldest_counts_go_past_the_bound(own_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = cache_mod.RunCache(cache_mod.default_path())
    db = cache._connect()
    assert db is not None
    code = cachedb.code_fingerprint()
    db.executemany("INSERT INTO counts VALUES (?, ?, ?, ?, ?, ?)",
                   [(code, "o200k_base\0openai", k, k, 0, 1000.0 + k) for k in range(10)])
    db.commit()
    monkeypatch.setattr(cachedb, "MAX_COUNTS", 4)
    cachedb.prune(db)
    db.commit()
    assert [r[0] for r in db.execute("SELECT key FROM counts ORDER BY key")] == [6, 7, 8, 9]
    cache.close()
