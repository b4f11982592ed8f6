"""A command's whole output kept for its inputs: the same command on logs none of which changed since is answered
from the cache without reading them, byte for byte what reading them would print.

The key (:func:`inputs_key`) is everything the output depends on: the command's output shape, the forced format,
every setting, ctxwatch's code and the versions of what gives its numbers (:func:`~ctxwatch.engine.cachedb.
code_fingerprint`), the day (a call without a timestamp is priced at today's rates), and each log file read: its
path as given, device and inode, size, modification and change times (a time set back by ``touch -r`` or
``cp -p`` still changes the second) and first and last bytes, in the order they are read, with the notes on the
entries of a folder that are not read.  A log that is not a regular file
(a pipe, standard input) has no key: it is read.

An output is not kept while one of its logs is growing: written to in the last :data:`KEEP_IDLE_SECONDS` after
an earlier read saw it otherwise (a running agent's session), it is most likely written again before the
command runs next, whose output then has another key.
"""

from __future__ import annotations

import hashlib
import os
import stat
import time

from ctxwatch.config import Settings
from ctxwatch.engine.cachedb import code_fingerprint, settings_text, utc_day
from ctxwatch.engine.checkpoint import FINGERPRINT_BYTES
from ctxwatch.engine.discovery import files_for
from ctxwatch.engine.opening import LogError
from ctxwatch.model import Issue

#: Seconds after its last write during which a log an earlier read saw otherwise counts as growing, and the
#: output of its inputs is not kept.  Keeping it costs about an eighth of the command (compressing and saving
#: the 41 MB ``report --json`` of the benchmark's 470 MB folder: 0.1 of 0.9 s), paid in vain when a log is
#: still being written (a running agent's session grows every few seconds); a minute without writes is an
#: agent between tasks, or done.
KEEP_IDLE_SECONDS = 60.0


def inputs_key(kind: str, paths: list[str], fmt: str | None, settings: Settings) -> str | None:
    """The key of ``kind``'s output (a name for the command and its output shape, say ``report --json``) for
    ``paths`` as :func:`~ctxwatch.engine.load_many` and :func:`~ctxwatch.engine.load_run` read them, or
    ``None`` when an input cannot have one (not a regular file, unreadable, no log at all)."""
    found = inputs_state(kind, paths, fmt, settings)
    return None if found is None else found[0]


def inputs_state(kind: str, paths: list[str], fmt: str | None, settings: Settings
                 ) -> tuple[str, list[str]] | None:
    """:func:`inputs_key`'s key and the log files among the inputs written in the last
    :data:`KEEP_IDLE_SECONDS`, or ``None`` when an input cannot have a key."""
    recent: list[str] = []
    since = time.time() - KEEP_IDLE_SECONDS
    try:
        if len(paths) == 1 and not os.path.isdir(paths[0]):
            files, notes = [paths[0]], list[Issue]()
        else:
            files, notes = files_for(paths)
        h = hashlib.blake2b(digest_size=20)
        for part in (kind, fmt or "", settings_text(settings), code_fingerprint(),
                     utc_day(), *paths):
            h.update(part.encode("utf-8", "surrogatepass") + b"\0")
        for f in files:
            st = os.stat(f)
            if not stat.S_ISREG(st.st_mode):
                return None
            if st.st_mtime >= since:
                recent.append(f)
            head, tail = _ends(f, st)
            h.update(f"{f}\0{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}\0"
                     .encode("utf-8", "surrogatepass") + head + b"\0" + tail + b"\0")
        for n in notes:
            h.update(f"{n.path}\0{n.line}\0{n.kind}\0{n.message}\0".encode("utf-8", "surrogatepass"))
        return h.hexdigest(), recent
    except (OSError, LogError, ValueError):
        return None


#: Each log's first and last :data:`~ctxwatch.engine.checkpoint.FINGERPRINT_BYTES` as this process last read them,
#: with the file's device, inode, size and times then (:func:`_ends`).
_SEEN_ENDS: dict[str, tuple[tuple[int, int, int, int, int], bytes, bytes]] = {}


def _ends(path: str, st: os.stat_result) -> tuple[bytes, bytes]:
    """The first and last bytes of the file at ``path`` (``st``: its ``os.stat``).  A key worked out again by the
    same process (after the read, to tell an input that changed meanwhile) reads them again only for a file
    whose size or times changed: a write moves its change time, which no program can set back.

    Raises:
        OSError: the file cannot be read.
    """
    ident = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    seen = _SEEN_ENDS.get(path)
    if seen is not None and seen[0] == ident:
        return seen[1], seen[2]
    # (read with pread, no file object: a folder's key opens every one of its logs)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        head = os.pread(fd, FINGERPRINT_BYTES, 0)
        tail = os.pread(fd, FINGERPRINT_BYTES, max(0, st.st_size - FINGERPRINT_BYTES))
    finally:
        os.close(fd)
    _SEEN_ENDS[path] = (ident, head, tail)
    return head, tail
