"""A start-up cache of the verified tokenizer ranks.

Decoding the 200k base64 ranks costs about 0.25 s of every start (the dashboard's first screen, every
``ctxwatch report``).  After one verified load the ranks are kept in marshal form (data only: marshal cannot run
code) in the user's cache folder (:func:`ctxwatch.config.cache_dir`), with a sha256 of the blob beside it to
catch a torn or corrupted file.  Only ranks that passed the hash check are written; any mismatch or error falls
back to the full verified load.  ``CTXWATCH_NO_CACHE=1`` turns the cache off.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os

from ctxwatch.config import cache_dir, caching_disabled, write_cache_file

#: Fewest ranks a cached table may hold (o200k_base has 199,998 and cl100k_base 100,256): a smaller one is not a
#: table of either encoding.
MIN_RANKS = 100_000


def cache_file(name: str, sha256: str) -> str:
    """The cache file of encoding ``name`` whose rank file has hex digest ``sha256``: named after both and
    tiktoken's version, in :func:`ctxwatch.config.cache_dir`.

    Raises:
        RuntimeError: no home directory (platformdirs); ImportError without tiktoken.
    """
    import tiktoken

    version = getattr(tiktoken, "__version__", "0")
    return os.path.join(cache_dir(), f"{name}-{sha256[:16]}-tiktoken{version}.marshal")


def save(name: str, sha256: str, ranks: dict[bytes, int]) -> None:
    """Keep the verified ``ranks`` (token bytes -> rank) for the next start, unless the cache is off or already
    holds them.  Best effort: errors are ignored."""
    if caching_disabled():
        return
    try:
        path = cache_file(name, sha256)
        if os.path.exists(path):
            return
        blob = marshal.dumps(ranks)
        # (atomic, never through a symbolic link: a concurrent reader sees the old state or the whole file)
        write_cache_file(path, hashlib.sha256(blob).hexdigest().encode() + b"\n" + blob)
    except Exception:
        return


def load(name: str, sha256: str) -> dict[bytes, int] | None:
    """The ranks kept by :func:`save`, or ``None`` (cache off, no file, or a file whose digest does not match:
    that one is removed, and the next verified load writes it again).  Never raises."""
    if caching_disabled():
        return None
    try:
        path = cache_file(name, sha256)
        with open(path, "rb") as fh:
            digest, _, blob = fh.read().partition(b"\n")
        if hashlib.sha256(blob).hexdigest().encode() != digest:
            with contextlib.suppress(OSError):
                os.remove(path)
            return None
        ranks = marshal.loads(blob)
    except Exception:
        return None
    if not isinstance(ranks, dict) or len(ranks) < MIN_RANKS:
        return None
    return ranks
