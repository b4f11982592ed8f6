"""A run read part of the way through a log, as a plain value: saved, then resumed later or in another process.

The state of a log being read is its run (the calls, the format reader's state, the accountant's counts keyed by
content digest, never by Python's per-process ``hash``) and where reading stopped: a line start, its number, and
the file's identity and size then, which tell a file that only grew from one rewritten.  Everything in it pickles;
tokenizers are pickled by their encoding's name.
"""

from __future__ import annotations

import os
import pickle
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ctxwatch.engine.run import Run
    from ctxwatch.source import FileTailer


@dataclass
class Checkpoint:
    """Where reading one log stopped.

    Attributes:
        run: the run read so far (its reader holds the state of the file's format).
        path: the log file.
        offset / line: the first byte not read (a line start) and its 1-based line number.
        device / inode / size: the file's identity and size in bytes when the checkpoint was taken.
        head / before: the file's first bytes and the bytes just before ``offset`` then (up to
            :data:`FINGERPRINT_BYTES` each): a file deleted and written again can get the same inode.
    """

    run: Run
    path: str
    offset: int
    line: int
    device: int
    inode: int
    size: int
    head: bytes = b""
    before: bytes = b""


#: Bytes of the file's head, and of the bytes before the checkpoint's offset, that must be unchanged for reading to
#: go on from the offset.
FINGERPRINT_BYTES = 64


def fingerprint(path: str, offset: int) -> tuple[bytes, bytes]:
    """The first :data:`FINGERPRINT_BYTES` of ``path`` and the :data:`FINGERPRINT_BYTES` just before ``offset``: what
    must be unchanged for reading to go on from ``offset`` (a checkpoint here, the cache's saved state)."""
    with open(path, "rb") as fh:
        head = fh.read(min(FINGERPRINT_BYTES, offset))
        start = max(0, offset - FINGERPRINT_BYTES)
        fh.seek(start)
        return head, fh.read(offset - start)


def checkpoint(run: Run, tailer: FileTailer) -> Checkpoint:
    """The checkpoint of ``run`` read by ``tailer`` so far (a held-back half line is read again on resuming).

    Raises:
        OSError: the file cannot be stat'ed.
    """
    st = os.stat(tailer.path)
    head, before = fingerprint(tailer.path, tailer.offset)
    return Checkpoint(run, tailer.path, tailer.offset, tailer.line, st.st_dev, st.st_ino, st.st_size, head, before)


def only_grew(cp: Checkpoint) -> bool:
    """True when the file at ``cp.path`` is the file of the checkpoint, no shorter, its head and the bytes before
    the offset unchanged: reading may go on from ``cp.offset``."""
    try:
        st = os.stat(cp.path)
        if (st.st_dev, st.st_ino) != (cp.device, cp.inode) or st.st_size < cp.offset:
            return False
        return fingerprint(cp.path, cp.offset) == (cp.head, cp.before)
    except OSError:
        return False


def resume(cp: Checkpoint) -> tuple[Run, FileTailer]:
    """The run of ``cp`` and a tailer that reads its file on from where the checkpoint stopped."""
    from ctxwatch.source import FileTailer

    return cp.run, FileTailer(cp.path, cp.offset, cp.line)


def dumps(cp: Checkpoint) -> bytes:
    """``cp`` as bytes (pickle: only ever load bytes this user's own ctxwatch wrote)."""
    return pickle.dumps(cp, protocol=pickle.HIGHEST_PROTOCOL)


def loads(data: bytes) -> Checkpoint:
    """The checkpoint :func:`dumps` wrote."""
    cp = pickle.loads(data)
    if not isinstance(cp, Checkpoint):
        raise TypeError(f"not a checkpoint: {type(cp).__name__}")
    return cp
