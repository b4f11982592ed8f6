"""Token counts of text with one encoding, each distinct text encoded once (a cache by content hash).

Agent loops re-send their whole history on every call, so without the cache counting would be quadratic in the
run's length.  Long texts are encoded in slices (:mod:`ctxwatch.tokens.slicing`).  Without tiktoken the count
falls back to ``chars/4``, labelled as such.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any, Protocol

from ctxwatch.tokens import slicing
from ctxwatch.tokens.encodings import load_encoding, load_failure


class CountingChild(Protocol):
    """Where counts are made while the encoding is not loaded here (:class:`ctxwatch.tokens.server.CountServer`)."""

    def send(self, texts: Iterable[str]) -> None: ...

    def count(self, text: str) -> tuple[int, bool] | None: ...

    def ready(self) -> bool: ...

    def close(self) -> None: ...

#: Name of the fallback "tokenizer": 4 characters per token, the usual rule of thumb (OpenAI help center,
#: "What are tokens and how to count them?"). It undercounts JSON and code, so it is always labelled.
CHARS4 = "chars/4"


class Tokenizer:
    """Counts tokens of text with one encoding, caching by content hash.

    Every distinct piece of text is encoded once.  Texts longer than :data:`~ctxwatch.tokens.WHOLE_CHARS`
    characters are encoded in slices (:func:`~ctxwatch.tokens.slices`), in time and memory linear in their length.

    The encoding is loaded when a text is first counted (a run read from the cache may need no count at all:
    loading the ranks takes a quarter of a second); :meth:`load` loads it now.

    Args:
        encoding: ``o200k_base`` or ``cl100k_base``; falls back to ``chars/4`` if it cannot be loaded.

    Attributes:
        encoding: the encoding asked for.
    """

    def __init__(self, encoding: str = "o200k_base") -> None:
        self.encoding = encoding
        self._enc: Any = None
        self._loaded = False
        #: Counts made in a child process while the encoding is not loaded here (:mod:`ctxwatch.tokens.server`).
        self.server: CountingChild | None = None
        self._cache: dict[tuple[int, int], int] = {}
        self._forced: set[tuple[int, int]] = set()  # cache keys of counts with a forced cut (estimates)

    def load(self) -> Tokenizer:
        """Load the encoding now (before forking worker processes that share it, or to judge the fallback); return
        the tokenizer."""
        if not self._loaded:
            self._enc = load_encoding(self.encoding)
            self._loaded = True
        return self

    @property
    def loaded(self) -> bool:
        """True once the encoding was loaded here (or found missing)."""
        return self._loaded

    @property
    def name(self) -> str:
        """The encoding counts are made with: the one asked for, or ``chars/4`` once it turned out that it cannot
        be loaded."""
        return CHARS4 if self._loaded and self._enc is None else self.encoding

    @property
    def note(self) -> str | None:
        """Why counts fall back to ``chars/4`` (the encoding is loaded to tell), or ``None``."""
        if self.load()._enc is not None:
            return None
        return f"tokenizer {self.encoding} unavailable ({load_failure(self.encoding) or 'unknown error'}); " \
               "counts are chars/4 estimates"

    def __reduce__(self) -> tuple[object, tuple[str]]:
        """Pickled by its encoding's name: a saved run holds no ranks, and the process that resumes it counts
        with its own tokenizer of that encoding (:func:`get_tokenizer`)."""
        return get_tokenizer, (self.encoding,)

    def count(self, text: str) -> int:
        """Tokens in ``text``. Special-token lookalikes (``<|endoftext|>``) count as plain text.

        Exact (tiktoken's own count) unless the text has a run of more than
        :data:`~ctxwatch.tokens.SEARCH_CHARS` characters with no pre-tokenizer boundary across a slice end
        (:meth:`count_cut` says so).

        Raises:
            CountingStopped: under :func:`~ctxwatch.tokens.stop_counting_on`, when its event is set during a long
                count.
        """
        if not text:
            return 0
        key = (hash(text), len(text))
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        if not self._loaded:
            if self.server is not None:
                got = self.server.count(text)
                if got is not None:
                    self._cache[key] = got[0]
                    if got[1]:
                        self._forced.add(key)
                    return got[0]
                self.server = None  # (the child is gone: counted here from now on)
            self.load()
        if self._enc is None:
            n = (len(text) + 3) // 4
        elif len(text) <= slicing.WHOLE_CHARS:
            # encode_ordinary never treats text as special tokens, so it cannot raise on "<|endoftext|>".
            n = len(self._enc.encode_ordinary(text))
        else:
            n, forced = 0, False
            for start, end, cut in slicing.slices(text):
                slicing.check_stop()
                n += self.count(text[start:end])  # (a slice is at most WHOLE_CHARS: counted whole, cached)
                forced |= cut
            if forced:
                self._forced.add(key)
        self._cache[key] = n
        return n

    def prefetch(self, texts: list[str]) -> None:
        """Have the counting child (:attr:`server`) count ``texts`` now, ahead of :meth:`count` (nothing when the
        encoding is loaded here or there is no child)."""
        if self.server is not None and not self._loaded:
            cache = self._cache
            self.server.send(t for t in texts if (hash(t), len(t)) not in cache)

    def count_cut(self, text: str) -> tuple[int, bool]:
        """``(tokens, estimated)``: :meth:`count`, and whether it is an estimate because a slice of the text had to
        be cut inside a run with no pre-tokenizer boundary (off by at most
        :data:`~ctxwatch.tokens.FORCED_CUT_MAX_ERROR` tokens per such cut, at most one per 61,440 characters).
        ``estimated`` is False under the chars/4 fallback, which :func:`~ctxwatch.tokens.counter_for` labels
        already."""
        n = self.count(text)
        return n, len(text) > slicing.WHOLE_CHARS and (hash(text), len(text)) in self._forced

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` (empty list under the chars/4 fallback), sliced as :meth:`count` does: tiktoken's
        own ids unless a slice had to be forced (:meth:`count_cut`)."""
        if self.load()._enc is None:
            return []
        if len(text) <= slicing.WHOLE_CHARS:
            return self._enc.encode_ordinary(text)
        ids: list[int] = []
        for start, end, _cut in slicing.slices(text):
            slicing.check_stop()
            ids += self._enc.encode_ordinary(text[start:end])
        return ids


_lock = threading.Lock()
_tokenizers: dict[str, Tokenizer] = {}


def get_tokenizer(encoding: str) -> Tokenizer:
    """The process-wide :class:`Tokenizer` for an encoding (one cache per encoding)."""
    with _lock:
        tok = _tokenizers.get(encoding)
    if tok is None:
        tok = Tokenizer(encoding)
        with _lock:
            tok = _tokenizers.setdefault(encoding, tok)
    return tok


def fallback_used() -> bool:
    """True when a tokenizer of this process could not load its encoding and counts ``chars/4`` instead: what it
    counted is not saved for later runs (they may have the encoding)."""
    with _lock:
        return any(t.name == CHARS4 for t in _tokenizers.values())
