"""Long texts are counted in slices, cut where tiktoken's pre-tokenizer cuts anyway, so that counting takes time
and memory linear in a text's length and can stop between two slices.

tiktoken splits a text with its pre-tokenizer regex into pieces (words, groups of up to 3 digits, runs of
punctuation, runs of whitespace) and byte-pair merges each piece on its own.  Merging is super-linear in a piece's
length, and a run with no whitespace or punctuation is one piece: counting 50 MB of one repeated character whole
takes 53 s and 2.5 GB RSS (the merge state of a 50 MB piece, and 6.25 M token ids as Python ints).  So a long text
is counted in slices of at most :data:`WHOLE_CHARS` characters (:func:`slices`).
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Iterator
from typing import Any

#: Texts of at most this many characters (code points) are encoded whole, exactly as tiktoken does.  Longer texts
#: are encoded in slices of at most this many characters (:func:`slices`).  64 Ki, from measurements with tiktoken
#: 0.14 and o200k_base: merging one repeated character costs 150 ns/char in a 4 Ki-character piece, 155 ns at
#: 64 Ki, 370 ns at 256 Ki, 670 ns at 4 Mi; the worst case for one slice (a run with no pre-tokenizer cut: one
#: repeated character, random letters, emoji) costs 10 to 18 ms (155 to 270 ns/char), short enough that a reader
#: stopping between two slices stops at once, and its token list stays small (< 2.5 MB of Python ints); any text
#: under 64 KB is counted unchanged.
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
#: bound is measured, not proven; counts with a forced cut are labelled estimates
#: (:meth:`ctxwatch.tokens.Tokenizer.count_cut`).
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


def check_stop() -> None:
    """Raise :class:`CountingStopped` when this thread counts under :func:`stop_counting_on` and its event is set."""
    event = getattr(_stop_events, "event", None)
    if event is not None and event.is_set():
        raise CountingStopped
