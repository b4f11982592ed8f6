"""A start-up memo of the catalogue's answers (windows, catalogue entries, tier thresholds, per-token rates).

Importing genai-prices and building its snapshot costs about 0.25 s of every start, more than reading a 100 MB
log's usage.  The answers ctxwatch needs are small and depend only on the installed catalogue, so they are kept in
one JSON file per installed catalogue in the user's cache folder (:func:`ctxwatch.config.cache_dir`), and the
memos of catalogues no longer installed are removed.  ``CTXWATCH_NO_CACHE=1`` turns the memo off.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib.util
import os
import re
import stat
import threading
from typing import Any

import orjson

from ctxwatch.config import cache_dir, caching_disabled, write_cache_file

#: Version of the memo's layout and meaning, part of its file name: bump it when a cached answer's meaning changes
#: (version 2: prices are looked up at the catalogue entry the window comes from).
_VERSION = 2
#: Key of the memo entry naming the catalogue file the memo was made from: ``{"data": path of genai-prices'
#: ``data.py``, "size": bytes, "mtime_ns": its modification time}`` (no answer key starts with it).
_INSTALL = "install"
#: File names of catalogue memos (:func:`memo_path`): the only files :func:`_prune` may remove.
_NAME = re.compile(r"catalog-[0-9a-f]{20}\.json")

# Bounds of what the memo keeps.  Its keys hold model names as logs write them, and a log is untrusted: it may
# hold any number of unique, hostile names, and the memo is kept in the user's cache and read back at every
# start.  The memo only saves start-up time, so losing an answer costs at most a genai-prices import (about
# 0.25 s); it keeps the answers a user's own runs need and drops the rest.

#: Longest model name (and provider) whose answers are written to the memo, in characters.  The longest model
#: id in genai-prices' catalogue has 61 characters, and a Bedrock model ARN under 100; a longer
#: name is still looked up, in this process only.
MEMO_MAX_NAME = 128
#: Most answers a memo file keeps (the install record aside); the newest are kept.  A user's runs need a few
#: per model (window, entry, tiers) and one rates answer per model and day: 2,048 covers months of daily use
#: of several models.  An answer of real names takes about 100 bytes (a memo of a few KB); with a model name and
#: a provider of :data:`MEMO_MAX_NAME` characters each, about 500 (1 KB in a 3-byte script), so a memo stays
#: under about 2 MB whatever the logs hold.
MEMO_MAX_ENTRIES = 2_048
#: Most "not in the catalogue" answers (``None``) among them, the newest kept: a log can invent any number of
#: unknown names, and a real run has a handful of models the catalogue does not know.
MEMO_MAX_MISSES = 256
#: A memo file larger than this (bytes) is not read (and is replaced at the next save): more than the bounded
#: answers can take, so only a damaged memo, or one of an older unbounded layout, is that big.
MEMO_MAX_BYTES = 8 * 1024 * 1024

_memo: dict[str, Any] | None = None
_dirty = False
#: Whether the exit handler that writes the memo is registered (once per process).
_exit_save = False
_lock = threading.Lock()


def memo_path() -> str | None:
    """The memo file for the installed genai-prices catalogue, or ``None`` (no package, caching off, or no cache
    folder)."""
    found = _memo_file()
    return found[0] if found is not None else None


def _memo_file() -> tuple[str, dict[str, Any]] | None:
    """``(memo path, install record)`` for the installed genai-prices catalogue, or ``None`` (no package, caching
    off, or no cache folder).  The install record (stored under :data:`_INSTALL`) names the catalogue file and its
    size in bytes and modification time in nanoseconds, the same facts the file name is a hash of."""
    if caching_disabled():
        return None
    try:
        spec = importlib.util.find_spec("genai_prices")
        if spec is None or not spec.origin:
            return None
        data = os.path.join(os.path.dirname(spec.origin), "data.py")
        st = os.stat(data)
    except (OSError, ImportError, ValueError):
        return None
    try:
        folder = cache_dir()
    except RuntimeError:  # (no home directory: no cache folder)
        return None
    stamp = hashlib.sha256(f"{_VERSION}:{spec.origin}:{st.st_size}:{st.st_mtime_ns}".encode()).hexdigest()
    return (os.path.join(folder, f"catalog-{stamp[:20]}.json"),
            {"data": data, "size": st.st_size, "mtime_ns": st.st_mtime_ns})


def get(key: str) -> tuple[bool, Any]:
    """``(found, value)``: the answer the memo holds for ``key``, as :func:`put` stored it (the memo is read from
    disk on first use; a damaged file is ignored).  Callers check a value's shape: the file may be damaged."""
    global _memo
    with _lock:
        if _memo is None:
            _memo = {}
            path = memo_path()
            if path is not None:
                data = _read(path)
                if data is not None:
                    _memo = data
        if key in _memo:
            return True, _memo[key]
        return False, None


def _read(path: str) -> dict[str, Any] | None:
    """The memo at ``path`` as a dict, or ``None`` (missing, unreadable, damaged, or larger than
    :data:`MEMO_MAX_BYTES`)."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MEMO_MAX_BYTES + 1)
        if len(raw) > MEMO_MAX_BYTES:
            return None
        data = orjson.loads(raw)
    except (OSError, orjson.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def key_kept(key: str) -> bool:
    """True when an answer's key may be written to the memo file: every part after the kind (model name,
    provider, day, tier start) is at most :data:`MEMO_MAX_NAME` characters and printable (``str.isprintable``:
    no control, format (bidi), separator other than the space, or surrogate character)."""
    parts = key.split("\x00")[1:]
    return bool(parts) and all(len(p) <= MEMO_MAX_NAME and p.isprintable() for p in parts)


def bounded(entries: dict[str, Any]) -> dict[str, Any]:
    """The answers of ``entries`` a memo file keeps, in their order: only keys :func:`key_kept` accepts,
    at most :data:`MEMO_MAX_MISSES` ``None`` answers and :data:`MEMO_MAX_ENTRIES` answers in all, the last ones
    (the newest: the memo read at start comes first, then the answers of this process)."""
    kept: list[tuple[str, Any]] = []
    misses = 0
    for key, value in reversed(entries.items()):
        if len(kept) >= MEMO_MAX_ENTRIES:
            break
        if key == _INSTALL or not key_kept(key):
            continue
        if value is None:
            if misses >= MEMO_MAX_MISSES:
                continue
            misses += 1
        kept.append((key, value))
    return dict(reversed(kept))


def put(key: str, value: Any) -> None:
    """Remember ``value`` (JSON data) as the answer to ``key`` (``kind\\x00model\\x00provider...``), written at exit
    (:func:`save`); a key :func:`key_kept` refuses, or one put before the memo was read (:func:`get`), is not."""
    global _dirty, _exit_save
    with _lock:
        if _memo is None or not key_kept(key):  # (an implausible name is answered, not remembered)
            return
        if _memo.get(key, put) == value:
            return  # (already known: nothing to write)
        _memo[key] = value
        if not _dirty:
            _dirty = True
            if not _exit_save:
                _exit_save = True
                atexit.register(save)


def flush() -> None:
    """Write the memo now when answers were put since it was last written (:func:`save`).  A forked worker
    process ends without running exit handlers, so each of its tasks flushes the answers it looked up: without
    it every worker of every read imported the catalogue again (about 0.3 s of a worker's time)."""
    global _dirty
    with _lock:
        if not _dirty:
            return
        _dirty = False
    save()


def save() -> None:
    """Write the memo at exit (best effort, atomic: a concurrent reader sees the old or the whole file), bounded
    (:func:`bounded`), then remove the memos of catalogues that are no longer installed
    (:func:`_prune`)."""
    found = _memo_file()
    if found is None or _memo is None:
        return
    path, install = found
    merged: dict[str, Any] = {}
    old = _read(path)  # keep what concurrent runs wrote meanwhile (ours wins on the same key)
    if old is not None:
        merged.update(old)
    merged.update(_memo)
    merged = bounded(merged)
    merged[_INSTALL] = install
    try:
        data = orjson.dumps(merged)
    except TypeError:
        return
    if write_cache_file(path, data):
        _prune(path)


def _prune(current: str) -> None:
    """Remove the catalogue memos in ``current``'s folder whose catalogue is gone (best effort, never raises).

    A memo is stale when the catalogue file its install record names no longer exists or has another size or
    modification time (genai-prices was upgraded, or its virtual environment deleted), or when it has no
    readable install record (a damaged file, or one of an older layout).  The memo of another
    install that still exists is kept: two virtual environments in use side by side would otherwise delete
    each other's memo on every start.  Only regular files named like a memo (:data:`_NAME`) are
    considered, never ``current`` itself; a concurrent writer's temporary file does not match the name.
    """
    folder = os.path.dirname(current)
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        path = os.path.join(folder, name)
        if path == current or not _NAME.fullmatch(name):
            continue
        try:
            if not stat.S_ISREG(os.lstat(path).st_mode):  # (a link or folder of that name is not one of ours)
                continue
            if not _is_stale(path):
                continue
            os.remove(path)
        except OSError:
            continue


def _is_stale(path: str) -> bool:
    """True when the memo at ``path`` belongs to no installed catalogue (see :func:`_prune`)."""
    try:
        with open(path, "rb") as fh:
            install = orjson.loads(fh.read()).get(_INSTALL)
        data, size, mtime_ns = install["data"], install["size"], install["mtime_ns"]
        if not isinstance(data, str) or type(size) is not int or type(mtime_ns) is not int:
            return True
        st = os.stat(data)
    except FileNotFoundError:  # (the memo itself vanished, or its catalogue did)
        return True
    except OSError:  # (unreadable here: not ours to judge)
        return False
    except Exception:  # not JSON, not an object, no install record: nothing ties it to a live catalogue
        return True
    return (st.st_size, st.st_mtime_ns) != (size, mtime_ns)
