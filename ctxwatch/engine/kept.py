"""The cache's whole outputs: a command's output kept for its inputs (:mod:`ctxwatch.engine.outputs` gives the key),
compressed, checksum-checked before a byte of it is written again.  A base class of
:class:`ctxwatch.engine.cache.RunCache`, whose database holds them (table ``outputs``).
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
import zlib
from collections.abc import Callable, Iterable, Iterator

from ctxwatch.engine.cachedb import PRUNE_EVERY_BYTES, USED_RESOLUTION, code_fingerprint, prune
from ctxwatch.tokens.tokenizer import fallback_used


class KeptOutputs:
    """Whole outputs in the cache's database (the methods :class:`~ctxwatch.engine.cache.RunCache` gives)."""

    _unpruned: int  # (the cache's own: bytes saved since its last size check)

    def _connect(self) -> sqlite3.Connection | None:
        raise NotImplementedError  # (the cache's own)

    def _failed(self, exc: BaseException) -> None:
        raise NotImplementedError  # (the cache's own)

    def load_output(self, key: str) -> Iterator[bytes] | None:
        """The output kept for ``key`` (:func:`ctxwatch.engine.outputs.inputs_key`), in pieces, or ``None``."""
        db = self._connect()
        if db is None:
            return None
        try:
            row = db.execute("SELECT data, used FROM outputs WHERE key = ?", (key,)).fetchone()
            if row is None:
                return None
            data, used = row
            # (its checksum, checked before a byte is written: a damaged entry is read again, not half written)
            if zlib.crc32(data[4:]) != int.from_bytes(data[:4], "big"):
                return None
            if time.time() - (used or 0) > USED_RESOLUTION:
                db.execute("UPDATE outputs SET used = ? WHERE key = ?", (time.time(), key))
                db.commit()
        except Exception as exc:
            self._failed(exc)
            return None
        return _inflate(data[4:])

    def keep_output(self, key: str, pieces: Iterable[bytes], still: Callable[[], str | None]) -> Iterator[bytes]:
        """``pieces`` as they come, kept (compressed) for ``key`` once the last one is given, when ``still()``,
        the key worked out again after the read, is still ``key`` (an input that changed while it was read gives
        another one) and the numbers did not fall back to an estimate for want of the tokenizer."""
        from concurrent.futures import Future, ThreadPoolExecutor

        packer = zlib.compressobj(1)
        kept: list[Future[bytes]] = []
        held: list[bytes] = []
        size = 0
        # (compressed in a thread, a megabyte at a time, in order: zlib lets go of the interpreter while it
        # works, so the output is made and kept at once on two cores)
        with ThreadPoolExecutor(max_workers=1) as packing:
            for piece in pieces:
                held.append(piece)
                size += len(piece)
                if size >= OUTPUT_PIECE_BYTES:
                    kept.append(packing.submit(packer.compress, b"".join(held)))
                    held, size = [], 0
                yield piece
            kept.append(packing.submit(packer.compress, b"".join(held)))
            kept.append(packing.submit(packer.flush))
            body = b"".join(f.result() for f in kept)
        if fallback_used() or still() != key:
            return
        db = self._connect()
        if db is None:
            return
        data = zlib.crc32(body).to_bytes(4, "big") + body
        try:
            db.execute("INSERT OR REPLACE INTO outputs VALUES (?, ?, ?, ?)", (key, code_fingerprint(), time.time(),
                                                                             data))
            self._unpruned += len(data)
            if self._unpruned >= PRUNE_EVERY_BYTES:  # (as the cache's saves do: see PRUNE_EVERY_BYTES)
                prune(db)
                self._unpruned = 0
            db.commit()
        except Exception as exc:
            self._failed(exc)
            with contextlib.suppress(sqlite3.Error):
                db.rollback()


#: Bytes of a kept output given at a time (:meth:`KeptOutputs.load_output`).
OUTPUT_PIECE_BYTES = 1 << 20


def _inflate(data: bytes) -> Iterator[bytes]:
    """The output compressed in ``data``, in pieces of at most :data:`OUTPUT_PIECE_BYTES`."""
    inflater = zlib.decompressobj()
    yield inflater.decompress(data, OUTPUT_PIECE_BYTES)
    while inflater.unconsumed_tail:
        yield inflater.decompress(inflater.unconsumed_tail, OUTPUT_PIECE_BYTES)
    yield inflater.flush()
