"""Token counts of messages kept between runs, in the cache's database (table ``counts``).

A log read again from its start (a finished log that grew, a file rewritten, a folder re-read with another
file order) re-counts the messages an earlier read counted.  Each count is kept under its message's content
key (:func:`~ctxwatch.model.message_key`, a stable 64-bit digest), the counter's encoding and provider, and the
code that counted it (:func:`~ctxwatch.engine.cachedb.code_fingerprint`): a run that finds every count it needs
never loads the tokenizer (a fifth of a second).  Counts made with the ``chars/4`` fallback are never kept.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable

from ctxwatch.engine.cachedb import code_fingerprint


class SavedCounts:
    """The counts of one cache database, read one message at a time and written with the cache's next save
    (:meth:`flush`).  ``connect`` opens the database (``None`` when it cannot be: nothing is then kept).
    Implements :class:`~ctxwatch.accounting.CountStore`."""

    def __init__(self, connect: Callable[[], sqlite3.Connection | None]) -> None:
        self._connect = connect
        self._new: dict[tuple[str, int], tuple[int, bool]] = {}
        self._failed = False

    def get(self, encoding: str, provider: str | None, key: int) -> tuple[int, bool] | None:
        """``(tokens, estimated)`` of the message with content key ``key`` counted with ``encoding`` and
        ``provider``'s framing, when a run kept it; else ``None``."""
        scope = f"{encoding}\0{provider or ''}"
        new = self._new.get((scope, key))
        if new is not None:
            return new
        db = None if self._failed else self._connect()
        if db is None:
            return None
        try:
            row = db.execute("SELECT tokens, cut FROM counts WHERE code = ? AND scope = ? AND key = ?",
                             (code_fingerprint(), scope, key)).fetchone()
        except sqlite3.Error:
            self._failed = True  # (a locked or damaged cache: counted again, as without a cache)
            return None
        return None if row is None else (int(row[0]), bool(row[1]))

    def put(self, encoding: str, provider: str | None, key: int, tokens: int, cut: bool) -> None:
        """Keep a count made now, to be written by the next :meth:`flush`."""
        self._new[(f"{encoding}\0{provider or ''}", key)] = (tokens, cut)

    def flush(self, db: sqlite3.Connection) -> None:
        """Write the counts kept since the last flush (in the caller's transaction; the caller commits, and
        drops the counts with the rest of its save when the save fails)."""
        if not self._new:
            return
        code, now = code_fingerprint(), time.time()
        db.executemany("INSERT OR IGNORE INTO counts (code, scope, key, tokens, cut, used) VALUES (?, ?, ?, ?, ?, ?)",
                       [(code, scope, key, tokens, int(cut), now) for (scope, key), (tokens, cut) in self._new.items()])
        self._new.clear()

