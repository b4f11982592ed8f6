"""The first read's hash of the bytes it reads (:class:`ctxwatch.engine.warm.Hasher`, on a thread of its own) is
the SHA-1 of those bytes in order, as :func:`ctxwatch.engine.cachedb.prefix_digest` computes it from the file."""

from __future__ import annotations

import hashlib
import random
import threading
from pathlib import Path

from ctxwatch.engine.cachedb import prefix_digest
from ctxwatch.engine.warm import Hasher


def test_the_digest_is_the_sha1_of_the_chunks_in_order(tmp_path: Path) -> None:
    rng = random.Random(7)
    chunks = [rng.randbytes(rng.choice((0, 1, 100, 5000, 1 << 20))) for _ in range(40)]
    h = Hasher()
    for c in chunks:
        h.update(c)
    data = b"".join(chunks)
    assert h.size == len(data)
    assert h.digest() == hashlib.sha1(data).digest()
    f = tmp_path / "log.jsonl"
    f.write_bytes(data + b"more")
    assert prefix_digest(str(f), len(data)) == hashlib.sha1(data).digest()


def test_no_thread_is_left_behind() -> None:
    before = threading.active_count()
    h = Hasher()
    h.close()  # (nothing given: no thread was started)
    assert h.digest() == hashlib.sha1(b"").digest()
    h = Hasher()
    h.update(b"x" * 10_000)
    h.close()
    assert threading.active_count() == before
    assert h.digest() == hashlib.sha1(b"x" * 10_000).digest()
