"""The first read's hash of the bytes it reads (:class:`ctxwatch.engine.warm.Hasher`, on a thread of its own or
not) is XXH3's 128-bit digest of those bytes in order (the xxhash library's one-shot digest), as
:func:`ctxwatch.engine.cachedb.prefix_digest` computes it from the file."""

from __future__ import annotations

import random
import threading
from pathlib import Path

import pytest
import xxhash

from ctxwatch.engine.cachedb import prefix_digest
from ctxwatch.engine.warm import Hasher


@pytest.mark.parametrize("threaded", [True, False])
def test_the_digest_is_the_xxh3_of_the_chunks_in_order(tmp_path: Path, threaded: bool) -> None:
    rng = random.Random(7)
    chunks = [rng.randbytes(rng.choice((0, 1, 100, 5000, 1 << 20))) for _ in range(40)]
    h = Hasher(threaded)
    for c in chunks:
        h.update(c)
    data = b"".join(chunks)
    assert h.size == len(data)
    assert h.digest() == xxhash.xxh3_128_digest(data)
    f = tmp_path / "log.jsonl"
    f.write_bytes(data + b"more")
    assert prefix_digest(str(f), len(data)) == xxhash.xxh3_128_digest(data)


def test_no_thread_is_left_behind() -> None:
    before = threading.active_count()
    h = Hasher()
    h.close()  # (nothing given: no thread was started)
    assert h.digest() == xxhash.xxh3_128_digest(b"")
    h = Hasher()
    h.update(b"x" * 10_000)
    h.close()
    assert threading.active_count() == before
    assert h.digest() == xxhash.xxh3_128_digest(b"x" * 10_000)
    h = Hasher(threaded=False)
    h.update(b"x" * 10_000)
    assert threading.active_count() == before  # (hashed in place: no thread at all)
    assert h.digest() == xxhash.xxh3_128_digest(b"x" * 10_000)
