"""What was read of a log before, kept between runs: a file read again costs only what it grew by.

One SQLite database (stdlib) under the user cache folder holds, per log file and per set of settings that change
a number, the file's run as it stood after its last complete line (:mod:`ctxwatch.engine.checkpoint`: the calls,
the reader's state, content keys that are digests), where that line ended, and what tells the same file that only
grew from one rewritten, truncated or replaced: its device and inode, size, modification time, first bytes and
the bytes before the offset.  A file that grew is read from there; one that changed otherwise is read again.

The cache only ever saves time.  A damaged, locked or foreign cache is ignored (and a damaged one rebuilt), never
a crash and never a wrong number; two processes share it (WAL, a busy timeout); its size is bounded (the oldest
entries go first).  ``--no-cache`` or ``CTXWATCH_NO_CACHE=1`` turns it off.  Entries are pickles: only this
user's own cache folder is read, never a path a log names.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import sqlite3
import stat
import time
from typing import TYPE_CHECKING

from ctxwatch.config import Settings, caching_disabled
from ctxwatch.engine.cacheadmin import CacheUpkeep
from ctxwatch.engine.cachedb import (
    PRUNE_EVERY_BYTES,
    USED_RESOLUTION,
    code_fingerprint,
    default_path,
    open_db,
    prefix_digest,
    prune,
    remove_db,
    settings_text,
)
from ctxwatch.engine.checkpoint import fingerprint
from ctxwatch.engine.counts import SavedCounts
from ctxwatch.engine.kept import KeptOutputs
from ctxwatch.tokens.tokenizer import fallback_used

if TYPE_CHECKING:
    from ctxwatch.engine.run import Run


def disabled() -> bool:
    """True when ``CTXWATCH_NO_CACHE`` turns caching off (:func:`ctxwatch.config.caching_disabled`)."""
    return caching_disabled()


class RunCache(KeptOutputs, CacheUpkeep):
    """The database at ``path`` (:func:`default_path` by default), opened lazily; every method swallows the
    cache's own failures (it is then simply not used)."""

    def __init__(self, path: str | None = None) -> None:
        self.path = path or default_path()
        self._db: sqlite3.Connection | None = None
        self._broken = False
        self._checked: set[tuple[str, int, int]] = set()  # (key, size, mtime) whose read part was found unchanged
        self._keys: dict[tuple[str, str | None, Settings], str] = {}
        self._folders: dict[str, str] = {}  # (a folder as given -> its real path)
        self._valid_seen: dict[str, tuple[tuple[int, int, int, int, int], tuple[int, int, float, bool, int]]] = {}
        self._unpruned = PRUNE_EVERY_BYTES  # (bytes saved since the last size check: the first save checks)
        #: True once a damaged database was removed to be made again (:meth:`_failed`).
        self.rebuilt = False
        #: Why the cache could not be opened (``None``: it could, or was not tried yet).
        self.problem: str | None = None
        #: Token counts of messages, kept with the next save (:meth:`store`, :meth:`store_result`).
        self.counts = SavedCounts(self._connect)
        # An entry saved with commit=False, written just before the next commit: a write takes the database's
        # lock until the commit, and a worker holding it while it renders its file's calls kept the other one
        # waiting.
        self._deferred: tuple[tuple[object, ...], int] | None = None

    # ------------------------------------------------------------------ the database
    def _connect(self) -> sqlite3.Connection | None:
        if self._db is not None or self._broken:
            return self._db
        try:
            folder = os.path.dirname(self.path)
            os.makedirs(folder, mode=0o700, exist_ok=True)
            for p in (folder, self.path, self.path + "-wal", self.path + "-shm"):
                if os.path.islink(p):
                    raise OSError(f"{p} is a symbolic link, not written through")
            self._db = open_db(self.path)
        except (OSError, sqlite3.Error) as exc:
            self._broken = True
            self._db = None
            self.problem = str(exc)
        return self._db

    def close(self) -> None:
        """Close the database, keeping what was saved (the cache can be opened again)."""
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._write_deferred(self._db)
                self._db.commit()
                self._db.close()
            self._db = None

    def _failed(self, exc: BaseException) -> None:
        """After a query failed: a database found damaged (SQLite's own ``DatabaseError``, "database disk image is
        malformed", not a lock or a busy timeout, which are ``OperationalError``) is removed and made again at
        the next use, so that one damaged page does not leave every later read uncached."""
        if type(exc) is not sqlite3.DatabaseError:
            return
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
            self._db = None
        remove_db(self.path)
        self.rebuilt = True
        self._valid_seen.clear()

    def commit(self) -> None:
        """Write what was saved and not yet committed (:meth:`store` with ``commit=False``)."""
        if self._db is not None:
            try:
                self._write_deferred(self._db)
                self._db.commit()
            except Exception as exc:
                self._failed(exc)
                with contextlib.suppress(sqlite3.Error):
                    self._db.rollback()

    def _write_deferred(self, db: sqlite3.Connection) -> None:
        """Write the entry :meth:`store` left for the next commit, if any, with the token counts held."""
        deferred, self._deferred = self._deferred, None
        if deferred is None:
            return
        row, size = deferred
        db.execute("INSERT OR REPLACE INTO files (key, path, dev, ino, size, mtime_ns, ctime_ns, head, before, "
                   "offset, line, used, prefix, code, state) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", row)
        self.counts.flush(db)
        self._valid_seen.pop(str(row[0]), None)
        self._unpruned += size
        if self._unpruned >= PRUNE_EVERY_BYTES:
            prune(db)
            self._unpruned = 0

    # ------------------------------------------------------------------ entries
    def key(self, path: str, fmt: str | None, settings: Settings) -> str:
        """The entry of a log read with these: the path as given and its real path, the forced format (or none),
        every setting (each may change a number) and ctxwatch's own code (:func:`code_fingerprint`).  The format a
        run was read in is the saved run's own (:attr:`Run.spec`): the reader compares it.  (Worked out once per
        process for each path: a folder's read asks for it several times.)"""
        memo = (path, fmt, settings)
        key = self._keys.get(memo)
        if key is None:
            parts = [path, self._real_path(path), fmt or "", settings_text(settings), code_fingerprint()]
            key = hashlib.blake2b("\0".join(parts).encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
            self._keys[memo] = key
        return key

    def _real_path(self, path: str) -> str:
        """``os.path.realpath(path)``, its folder's resolved once per process (a folder's thousand logs share it:
        resolving each path whole looked at every folder above it again)."""
        folder, name = os.path.split(path)
        if name in ("", ".", ".."):
            return os.path.realpath(path)
        real = self._folders.get(folder)
        if real is None:
            real = self._folders[folder] = os.path.realpath(folder or os.curdir)
        try:
            link = stat.S_ISLNK(os.lstat(path).st_mode)
        except OSError:  # (not there: resolved as realpath resolves a missing name, under its folder)
            link = False
        return os.path.realpath(path) if link else os.path.join(real, name)

    def load(self, path: str, key: str) -> tuple[Run, int, int] | None:
        """``(run, offset, line)`` saved for ``key`` when the file at ``path`` is the same file as then, no shorter,
        its head and the bytes before the offset unchanged, and, as long as it was, not modified since; else
        ``None``.  The run stands after the last complete line then (not finished)."""
        db = self._connect()
        if db is None:
            return None
        try:
            row = self._valid(db, path, key)
            if row is None:
                return None
            offset, line, used = row[:3]
            # (with the offset it was saved at: another process may have saved the entry again, further on, since
            # it was checked, and a state read on from the checked offset would count those lines twice)
            state, at = db.execute("SELECT state, offset FROM files WHERE key = ?", (key,)).fetchone()
            if state is None or at != offset:
                return None  # (None: a finished log's entry, its result only, see store)
            from ctxwatch.engine.run import Run  # (here: a kept output written again needs no reader)

            run = pickle.loads(state)
            if not isinstance(run, Run):
                return None
            now = time.time()
            if now - (used or 0) > USED_RESOLUTION:
                db.execute("UPDATE files SET used = ? WHERE key = ?", (now, key))
                db.commit()
            return run, offset, line
        except Exception as exc:  # (the cache only saves time: whatever is wrong with an entry, the file is read)
            self._failed(exc)
            return None

    def seen_otherwise(self, paths: list[str], fmt: str | None, settings: Settings) -> bool:
        """Whether an earlier read through the cache saw one of ``paths`` (read with ``fmt`` and ``settings``) at
        another size or modification time: a log that has grown since (or was rewritten)."""
        db = self._connect()
        if db is None:
            return False
        try:
            for path in paths:
                row = db.execute("SELECT size, mtime_ns FROM files WHERE key = ?",
                                 (self.key(path, fmt, settings),)).fetchone()
                if row is not None:
                    st = os.stat(path)
                    if tuple(row) != (st.st_size, st.st_mtime_ns):
                        return True
        except Exception as exc:  # (the cache only saves time: a question it cannot answer is a no)
            self._failed(exc)
        return False

    def unread(self, path: str, key: str) -> int:
        """Bytes of ``path`` a read through the cache would read (what it grew by since its saved state, or all of
        it); the file's size when that cannot be told."""
        try:
            st = os.stat(path)
        except OSError:
            return 0
        size = st.st_size
        db = self._connect()
        if db is None:
            return size
        try:
            row = self._valid(db, path, key, st)
            if row is None:
                return size
            # (an entry without a prefix digest is a finished log's, without a state: read again whole once it
            # changed; unchanged, its result is used)
            offset, _, _, stateless, saved = row
            return size if stateless and saved != size else max(0, size - offset)
        except Exception as exc:
            self._failed(exc)
            return size

    def _valid(self, db: sqlite3.Connection, path: str, key: str, st: os.stat_result | None = None
               ) -> tuple[int, int, float, bool, int] | None:
        """``(offset, line, used, stateless, size)`` of ``key``'s entry (``stateless``: it holds no prefix digest, a
        finished log's; ``size``: the file's size in bytes when it was saved) when the file at ``path`` is the same
        file as then, no shorter, with its head and the bytes before the offset unchanged and: untouched since (the
        same size, modification and change times), or, when it was written to since, the whole part read before
        byte for byte what it was (its digest: an edit inside it, then an append, is read again from the start).
        ``st``: the file's stat, when the caller has just made it."""
        st = st if st is not None else os.stat(path)
        now = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        known = self._valid_seen.get(key)
        if known is not None and known[0] == now:
            return known[1]  # (found valid earlier in this process, and the file has not changed since)
        row = db.execute("SELECT dev, ino, size, mtime_ns, ctime_ns, head, before, offset, line, used, prefix "
                         "FROM files WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        dev, ino, size, mtime_ns, ctime_ns, head, before, offset, line, used, prefix = row
        if (st.st_dev, st.st_ino) != (dev, ino) or st.st_size < size \
                or (st.st_size == size and (st.st_mtime_ns, st.st_ctime_ns) != (mtime_ns, ctime_ns)) \
                or fingerprint(path, offset) != (head, before):
            return None
        if (st.st_size, st.st_mtime_ns) != (size, mtime_ns):
            seen = (key, st.st_size, st.st_mtime_ns)
            if seen not in self._checked:  # (a file is checked once per process: unread, then load)
                if prefix is None or prefix_digest(path, offset) != prefix:
                    return None
                self._checked.add(seen)
        entry = (offset, line, used, prefix is None, size)
        self._valid_seen[key] = (now, entry)
        return entry

    def store(self, path: str, key: str, run: Run | None, offset: int, line: int, *, prefix: bytes | None = None,
              commit: bool = True) -> None:
        """Save ``run`` as it stands after the line ending at byte ``offset`` (the next one is number ``line``).

        ``run=None``: the entry of a finished log (:data:`~ctxwatch.engine.cachedb.FINISHED_AFTER`), without a
        state to read on from: only a :meth:`store_result` that follows is kept on it.  ``prefix``: the
        :func:`~ctxwatch.engine.cachedb.prefix_digest` of its first ``offset`` bytes, hashed as they were read
        (else read again to hash them; not for a finished log); ``commit=False``: left for the next commit (a
        :meth:`store_result` that follows, or :meth:`close`), one write for both."""
        if fallback_used():
            return  # (counted chars/4 for want of the tokenizer: not to be reused by a run that has it)
        db = self._connect()
        if db is None:
            return
        try:
            st = os.stat(path)
            head, before = fingerprint(path, offset)
            # (not compressed: compressing took about as long as pickling, and a state is read back only when its
            # log grew, so the room it saves on disk is all it gives)
            state = None if run is None else pickle.dumps(run, protocol=pickle.HIGHEST_PROTOCOL)
            if prefix is None and run is not None:
                prefix = prefix_digest(path, offset)
            self._write_deferred(db)  # (one left by an earlier store, not committed: written before this one)
            self._deferred = ((key, os.fsencode(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns,
                               st.st_ctime_ns, head, before, offset, line, time.time(), prefix, code_fingerprint(),
                               state), len(state or b""))
            if commit:
                self._write_deferred(db)
                db.commit()
        except Exception as exc:  # (a state that cannot be saved is simply not saved)
            self._failed(exc)
            with contextlib.suppress(sqlite3.Error):
                db.rollback()

    def store_result(self, path: str, key: str, result: object, before: os.stat_result) -> bytes | None:
        """Keep ``result``, what reading the whole of ``path`` gave (a folder's per-file summary: its calls and
        issues), beside ``key``'s saved state, for as long as the file stays as ``before`` (its ``os.stat`` taken
        before it was read: a file that changed meanwhile has another size or time, and the result is not
        used).  Nothing is kept without an entry (:meth:`store`) to hang it on.  Returns the pickle of
        ``result`` that was kept (a worker sends it as it is rather than pickling the result again), ``None``
        when nothing was."""
        if fallback_used():
            return None
        db = self._connect()
        if db is None:
            return None
        try:
            # (not compressed: the calls' written pieces in it are already, and the rest loads faster as it is)
            blob = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
            self._unpruned += len(blob)
            self._write_deferred(db)  # (the entry the result is kept on)
            db.execute("UPDATE files SET result = ?, result_size = ?, result_mtime = ?, result_ctime = ? WHERE key = ?",
                       (blob, before.st_size, before.st_mtime_ns, before.st_ctime_ns, key))
            self.counts.flush(db)
            db.commit()
        except Exception as exc:
            self._failed(exc)
            with contextlib.suppress(sqlite3.Error):
                db.rollback()
            return None
        return blob

    def load_result(self, path: str, key: str) -> object | None:
        """The result :meth:`store_result` kept for ``path``, when its entry is valid (:meth:`load`'s rules) and
        the file has the very size and modification time it had when that result was read; else ``None``."""
        blob = self.result_pickle(path, key)
        if blob is None:
            return None
        try:
            return pickle.loads(blob)
        except Exception as exc:  # (as load: a bad entry only costs the time to read the file)
            self._failed(exc)
            return None

    def result_pickle(self, path: str, key: str) -> bytes | None:
        """The pickle of the result :meth:`load_result` gives, unopened (a worker sends it on as it is)."""
        db = self._connect()
        if db is None:
            return None
        try:
            st = os.stat(path)
            if not stat.S_ISREG(st.st_mode):
                return None
            row = db.execute("SELECT result, result_size, result_mtime, result_ctime FROM files WHERE key = ?",
                             (key,)).fetchone()
            if row is None or row[0] is None or row[1:] != (st.st_size, st.st_mtime_ns, st.st_ctime_ns) \
                    or self._valid(db, path, key, st) is None:
                return None
            return bytes(row[0])
        except Exception as exc:  # (as load: a bad entry only costs the time to read the file)
            self._failed(exc)
            return None


def default_cache() -> RunCache | None:
    """The user's cache, or ``None`` when it is turned off (:func:`disabled`) or no cache folder can be found."""
    if disabled():
        return None
    try:
        return RunCache(default_path())
    except RuntimeError:  # (no home directory)
        return None
