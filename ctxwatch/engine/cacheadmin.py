"""The ``ctxwatch cache`` command's side of the cache: how big it is, and emptying it.  A base class of
:class:`ctxwatch.engine.cache.RunCache`, whose database it reads."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from dataclasses import dataclass

from ctxwatch.engine.cachedb import stored_bytes


@dataclass(frozen=True)
class CacheInfo:
    """Where the cache is and how big: ``entries`` saved reads of ``logs`` distinct files (a log read with other
    settings, or by another ctxwatch, has an entry of its own), ``outputs`` commands' whole outputs kept,
    ``counts`` messages' token counts kept, ``state_bytes`` of saved state, ``file_bytes`` on disk;
    ``problem``: why it cannot be used, or ``None``."""

    path: str
    entries: int
    state_bytes: int
    file_bytes: int
    logs: int = 0
    problem: str | None = None
    outputs: int = 0
    counts: int = 0

    def kept(self) -> str:
        """``22 saved reads, 16 reports kept whole and 2,301 token counts`` (what is kept, each kind named)."""
        parts = [f"{self.entries:,} saved read{'s' if self.entries != 1 else ''}",
                 f"{self.outputs:,} report{'s' if self.outputs != 1 else ''} kept whole",
                 f"{self.counts:,} token count{'s' if self.counts != 1 else ''}"]
        return f"{', '.join(parts[:-1])} and {parts[-1]}"


class CacheError(Exception):
    """The cache could not do what was asked of it by name (``ctxwatch cache clear``); the message says why."""


class CacheUpkeep:
    """Size and emptying (the methods :class:`~ctxwatch.engine.cache.RunCache` gives)."""

    path: str
    rebuilt: bool
    problem: str | None

    def _connect(self) -> sqlite3.Connection | None:
        raise NotImplementedError  # (the cache's own)

    def _failed(self, exc: BaseException) -> None:
        raise NotImplementedError  # (the cache's own)

    def info(self) -> CacheInfo:
        """How big the cache is (0 entries when it cannot be opened)."""
        db = self._connect()
        entries = state_bytes = logs = outputs = counts = 0
        if db is not None:
            try:
                entries, logs = db.execute("SELECT COUNT(*), COUNT(DISTINCT path) FROM files").fetchone()
                (outputs,) = db.execute("SELECT COUNT(*) FROM outputs").fetchone()
                (counts,) = db.execute("SELECT COUNT(*) FROM counts").fetchone()
                state_bytes = stored_bytes(db)
            except sqlite3.Error as exc:
                self._failed(exc)
                entries = logs = outputs = counts = state_bytes = 0
        file_bytes = 0
        for p in (self.path, self.path + "-wal"):
            with contextlib.suppress(OSError):
                file_bytes += os.path.getsize(p)
        problem = "it was damaged: made again, empty" if self.rebuilt else self.problem
        return CacheInfo(self.path, entries, state_bytes, file_bytes, logs, problem, outputs, counts)

    def clear(self) -> CacheInfo:
        """Remove everything kept (saved reads, whole reports, token counts); return what there was.

        Raises:
            CacheError: the cache cannot be opened or emptied (another process holds it past
                :data:`BUSY_TIMEOUT_MS`, a folder that is a symbolic link, no permission).
        """
        db = self._connect()
        if db is None:
            raise CacheError(f"{self.path}: cannot be opened" + (f" ({self.problem})" if self.problem else ""))
        try:
            # (counted here, not by info(): a damaged database must fail in this try, to be made again below)
            entries, logs = db.execute("SELECT COUNT(*), COUNT(DISTINCT path) FROM files").fetchone()
            outputs, counts = (db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("outputs", "counts"))
            before = CacheInfo(self.path, entries, 0, 0, logs, None, outputs, counts)
            db.execute("DELETE FROM files")
            db.execute("DELETE FROM outputs")
            db.execute("DELETE FROM counts")
            db.commit()
        except sqlite3.Error as exc:
            with contextlib.suppress(sqlite3.Error):
                db.rollback()
            if type(exc) is sqlite3.DatabaseError:  # (damaged: removed, made again empty)
                self._failed(exc)
                return CacheInfo(self.path, 0, 0, 0)
            if getattr(exc, "sqlite_errorname", "").startswith("SQLITE_READONLY"):
                raise CacheError(f"{self.path}: not emptied ({exc}: the cache's folder or file cannot be written"
                                 " here)") from exc
            raise CacheError(f"{self.path}: not emptied ({exc}; another ctxwatch may be using it: try again)"
                             ) from exc
        with contextlib.suppress(sqlite3.Error):
            db.execute("VACUUM")  # (gives the space back; a reader holding the file only delays that)
            # (the vacuum went through the write-ahead log, which would hold the old size until a checkpoint)
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return before
