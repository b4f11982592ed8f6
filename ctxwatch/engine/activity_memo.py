"""Each log's last activity (:func:`ctxwatch.engine.activity.last_call_time`) remembered between runs, so that
ordering a big folder's sessions costs a stat per file instead of reading every file's end again.

``ctxwatch statusline FOLDER`` (tmux's status line, every few seconds) and the dashboard (its session picker,
and the newest session it opens) order a folder's logs by when each one's last call was made, which is read
from the end of each file: about half a second for a 1,000-file projects folder.  The answers are kept in one
JSON file in the user's cache folder (:func:`ctxwatch.config.cache_dir`), keyed by the file's absolute path and
checked against its size, modification time and change time (nanoseconds): a file written to since, rewritten
to the same size, or replaced, is read again.  A memo written by other code (another release, an edited
checkout: :func:`~ctxwatch.engine.cachedb.code_fingerprint`) is not used.  ``CTXWATCH_NO_CACHE=1`` turns the
memo off.  The file is written at exit, whole or not at all, never through a symbolic link, merged with what
concurrent runs wrote meanwhile, and bounded (:data:`MAX_ENTRIES`).
"""

from __future__ import annotations

import atexit
import os
import threading

import orjson

from ctxwatch.config import cache_dir, caching_disabled, write_cache_file
from ctxwatch.engine.cachedb import code_fingerprint

#: The memo's file name in the cache folder; the number is its layout's version.
FILE_NAME = "activity-1.json"
#: Most files remembered (the newest answers kept): a projects folder of several years holds a few thousand
#: sessions; each entry takes about 150 bytes, so the memo stays under about 3 MB.
MAX_ENTRIES = 20_000
#: A memo file larger than this (bytes) is not read (a damaged one: the bounded entries cannot take that much).
MAX_BYTES = 16 * 1024 * 1024

#: What a file is checked against: ``(size, mtime_ns, ctime_ns)``.
Stamp = tuple[int, int, int]
#: What is remembered of a file: its :data:`Stamp`, then :func:`~ctxwatch.engine.activity.last_call_time`'s
#: ``(time or None, from a call)``.
Entry = tuple[Stamp, float | None, bool]

_memo: dict[str, list[object]] | None = None
_new: dict[str, list[object]] = {}
_lock = threading.Lock()


def stamp_of(st: os.stat_result) -> Stamp:
    """The :data:`Stamp` of a file's ``os.stat`` result."""
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _path() -> str | None:
    if caching_disabled():
        return None
    try:
        return os.path.join(cache_dir(), FILE_NAME)
    except RuntimeError:  # (no home directory: no cache folder)
        return None


def _read(path: str) -> dict[str, list[object]]:
    """The files of the memo at ``path``, ``{"code": code_fingerprint(), "files": {absolute path: entry}}``
    (empty when missing, unreadable, damaged, too big, or written by other code)."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_BYTES + 1)
        data = orjson.loads(raw) if len(raw) <= MAX_BYTES else None
    except (OSError, orjson.JSONDecodeError):
        return {}
    if not isinstance(data, dict) or data.get("code") != code_fingerprint():
        return {}
    files = data.get("files")
    return files if isinstance(files, dict) else {}


def recall(path: str, stamp: Stamp) -> tuple[float | None, bool] | None:
    """The last activity remembered of ``path`` (epoch seconds or ``None``, and whether it is a call's), when it
    was read with the very ``stamp`` the file has now; else ``None``.  A damaged entry is no answer."""
    global _memo
    with _lock:
        if _memo is None:
            memo_file = _path()
            _memo = _read(memo_file) if memo_file is not None else {}
        key = os.path.abspath(path)
        entry = _new.get(key) or _memo.get(key)
    if not isinstance(entry, list) or len(entry) != 5 or entry[:3] != list(stamp):
        return None
    found, from_call = entry[3], entry[4]
    if found is not None and not (isinstance(found, (int, float)) and not isinstance(found, bool)):
        return None
    if not isinstance(from_call, bool):
        return None
    return (float(found) if found is not None else None), from_call


def keep(path: str, stamp: Stamp, found: float | None, from_call: bool) -> None:
    """Remember ``path``'s last activity (:func:`recall`), written at exit (:func:`save`)."""
    with _lock:
        if not _new:
            atexit.register(save)
        _new[os.path.abspath(path)] = [*stamp, found, from_call]


def save() -> None:
    """Write the memo: what was read at start and what concurrent runs wrote meanwhile, with this run's answers
    over them, the newest :data:`MAX_ENTRIES` kept.  Best effort: a path JSON cannot hold (a file name that is
    not UTF-8) is left out, and a failed write is ignored."""
    where = _path()
    with _lock:
        new = dict(_new)
    if where is None or not new:
        return
    merged = _read(where)
    for path in new:
        merged.pop(path, None)  # (re-inserted last: the newest are kept)
    merged.update(new)
    if len(merged) > MAX_ENTRIES:
        merged = dict(list(merged.items())[-MAX_ENTRIES:])
    try:
        data = orjson.dumps({"code": code_fingerprint(), "files": {p: e for p, e in merged.items() if _utf8(p)}})
    except TypeError:
        return
    write_cache_file(where, data)


def _utf8(path: str) -> bool:
    """False for a path JSON cannot hold: a file name that is not UTF-8 (read as lone surrogates)."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def forget() -> bool:
    """Remove the memo file (``ctxwatch cache clear``); True when there was one.  Never raises."""
    where = _path()
    if where is None:
        return False
    try:
        os.remove(where)  # (a link planted there is removed itself, its target left alone)
    except OSError:
        return False
    return True
