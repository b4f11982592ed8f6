"""Response-format drift: infer the output-format rule a run asks for, score each response against it, and find
responses that repeat the system prompt.

Only JSON rules are inferred: they are the only ones a response can be checked against without guessing.  Pure
functions; the checks that raise flags from them are in :mod:`ctxwatch.analysis.responses`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import orjson

#: Scores per kind, ordered by how much a strict consumer of the output loses: trailing prose (a lenient extractor
#: still recovers the JSON), then missing keys (the schema is broken), then broken quoting, then no format at all.
SCORE_CLEAN = 0.0
SCORE_EXTRA_TEXT = 0.3
SCORE_MISSING_KEYS = 0.5
SCORE_BROKEN_JSON = 0.7
SCORE_PROSE = 1.0

#: Responses the observed rule needs: five clean JSON objects in a row before anything else is a pattern,
#: not a coincidence (a chat model answering in prose almost never emits five bare JSON objects first).
OBSERVED_BASELINE = 5
#: Characters after the word JSON searched for a ``{`` template (one or two lines of an instruction).
TEMPLATE_LOOKAHEAD = 400
#: Longest template scanned for keys, in characters (schemas written into prompts are short).
TEMPLATE_MAX = 4000
#: Attempts at locating an embedded JSON value in a response with prose around it (first N ``{``/``[``).
MAX_EMBED_TRIES = 4
#: Characters of the rule sentence kept as evidence.
RULE_TEXT_MAX = 160

#: Words per shingle of the echo index.  Aligned chunks of this many words are looked up, so any verbatim run of
#: at least ``2 * ECHO_CHUNK_WORDS - 1`` words is always found (shorter runs may be).
ECHO_CHUNK_WORDS = 20
#: A response "repeats a long run of the system prompt" when it copies at least this many consecutive words of
#: it (after case folding and whitespace normalisation).  Forty words is a paragraph: restating one rule in
#: passing ("I must reply only in JSON") is a handful of words, copying the prompt is far more.
ECHO_MIN_WORDS = 2 * ECHO_CHUNK_WORDS
#: Most shingle hashes kept per system text (about 50k words, ~65k tokens of system prompt; ~3 MB of set).
MAX_ECHO_SHINGLES = 50_000
#: Distinct system texts whose echo index is cached (one run rarely has more than a few system prompts).
ECHO_CACHE_SIZE = 8

_JSON_WORD = re.compile(r"\bjson\b", re.IGNORECASE)
_IMPERATIVE = re.compile(
    r"\b(only|must|always|respond|respond(?:s|ing)?|reply|replies|answer|output|return|format(?:ted)?|strictly|"
    r"exclusively|valid)\b", re.IGNORECASE)
_REPLY = re.compile(r"\b(reply|replies|respond|responses?|answers?)\b", re.IGNORECASE)
_NEGATION = re.compile(r"\b(not|never|no|don't|dont|without|avoid)\b", re.IGNORECASE)
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?;])\s+|\n\s*\n|\n(?=\s*[-*#\d])")
_FENCE = re.compile(r"^```[\w+-]*[ \t]*\n?(.*?)\n?[ \t]*```$", re.DOTALL)
_LOOKS_JSON = re.compile(r"\{\s*\"|\[\s*\{")


@dataclass(frozen=True, slots=True)
class FormatRule:
    """The output format a run asks for.

    Attributes:
        kind: ``json_object`` (a JSON object is required) or ``json`` (any JSON value).
        keys: top-level keys every response must have (may be empty: then only the format is checked).
        source: ``system prompt`` | ``first user message`` | ``observed``.
        text: the sentence the rule was inferred from (at most :data:`RULE_TEXT_MAX` characters), or a
            description of the observation.
    """

    kind: str
    keys: tuple[str, ...]
    source: str
    text: str

    def describe(self) -> str:
        """One line: ``JSON object with keys action, speak (from the system prompt)``."""
        what = "JSON object" if self.kind == "json_object" else "JSON"
        keys = f" with keys {', '.join(self.keys)}" if self.keys else ""
        src = "observed in the first responses" if self.source == "observed" else f"from the {self.source}"
        return f"{what}{keys} ({src})"

    def to_json(self) -> dict[str, Any]:
        """``{"kind", "keys", "source", "text", "description"}``."""
        return {"kind": self.kind, "keys": list(self.keys), "source": self.source, "text": self.text,
                "description": self.describe()}


@dataclass(frozen=True, slots=True)
class FormatCheck:
    """The verdict on one response.

    Attributes:
        score: 0.0 (clean) to 1.0 (prose); see :func:`check_format`.
        kind: ``clean`` | ``extra_text`` | ``missing_keys`` | ``broken_json`` | ``prose``.
        keys: top-level keys of the parsed object (empty when it did not parse or is not an object).
        missing: expected keys that were absent.
    """

    score: float
    kind: str
    keys: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()

    def describe(self) -> str:
        """Short human text for the kind, e.g. ``valid JSON + trailing text``."""
        if self.kind == "missing_keys":
            return f"JSON without key(s) {', '.join(self.missing)}" if self.missing else "JSON of the wrong type"
        return _KIND_TEXT[self.kind]


_KIND_TEXT = {"clean": "clean JSON", "extra_text": "valid JSON + extra text", "broken_json": "invalid JSON",
              "prose": "prose instead of JSON"}


# --- rule inference ---------------------------------------------------------------------------------------------

def _template_keys(s: str) -> tuple[str, ...] | None:
    """Top-level keys of a ``{...}`` template starting at ``s[0]``; ``None`` if the braces never balance.

    Tolerates placeholders that are not JSON (``{"action":…,"speak":…}``, ``{"answer":string}``,
    ``{answer: string}``): a key is a quoted string or a bare identifier at depth 1 followed by ``:``.
    """
    depth = 0
    keys: list[str] = []
    prev = ""  # last non-space character seen at depth 1 outside strings
    i, n = 0, min(len(s), TEMPLATE_MAX)
    while i < n:
        ch = s[i]
        if ch == '"':
            j = i + 1
            while j < n and s[j] != '"':
                j += 2 if s[j] == "\\" else 1
            k = j + 1
            while k < n and s[k] in " \t\r\n":
                k += 1
            if depth == 1 and k < n and s[k] == ":" and prev in "{,":
                keys.append(s[i + 1:j])
            prev = '"'
            i = j + 1
            continue
        if ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return tuple(dict.fromkeys(keys))
        elif depth == 1 and (ch.isalpha() or ch == "_") and prev in "{,":
            j = i
            while j < n and (s[j].isalnum() or s[j] in "_-"):
                j += 1
            k = j
            while k < n and s[k] in " \t":
                k += 1
            if k < n and s[k] == ":":
                keys.append(s[i:j])
            prev = "w"
            i = j
            continue
        if depth == 1 and not ch.isspace():
            prev = ch
        i += 1
    return None


def infer_rule(text: str | None, source: str = "system prompt", *, strict: bool = False) -> FormatRule | None:
    """The JSON output rule stated in an instruction text, or ``None`` when none can be inferred.

    The rule is the first sentence that mentions JSON with an imperative word (*only, must, always, reply,
    respond, output, return, format...*) and no negation before the word JSON (``"Do not answer in JSON"`` is no
    rule).  A ``{...}`` template in that sentence or within :data:`TEMPLATE_LOOKAHEAD` characters after the word
    JSON gives the expected top-level keys (``{"action":…,"speak":…}`` -> ``action, speak``).

    Args:
        text: a system prompt or preamble (any length; ``None`` -> ``None``).
        source: where the text came from, kept in the rule (``system prompt`` / ``first user message``).
        strict: require the sentence to speak of the assistant's reply (*reply, respond, answer, response*),
            not just *return/output/format* -- for user messages, where a task often mentions JSON
            ("fix the parser so it returns only valid JSON") without being a rule for the replies.

    Never raises.
    """
    if not text or not _JSON_WORD.search(text):
        return None
    pos = 0
    for sentence in _SENTENCE_SPLIT.split(text):
        start = text.find(sentence, pos)
        pos = start + len(sentence) if start >= 0 else pos
        m = _JSON_WORD.search(sentence)
        if not m or not _IMPERATIVE.search(sentence) or _NEGATION.search(sentence[:m.start()]):
            continue
        if strict and not _REPLY.search(sentence):
            continue
        base = start if start >= 0 else 0
        # the template may precede the word JSON in the same sentence ("Return {answer: string} as JSON")
        brace = text.find("{", base, base + m.end() + TEMPLATE_LOOKAHEAD)
        keys: tuple[str, ...] | None = _template_keys(text[brace:]) if brace >= 0 else None
        if keys is not None:
            kind = "json_object"
        else:
            kind = "json_object" if re.search(r"\bobject\b", sentence, re.IGNORECASE) else "json"
            keys = ()
        return FormatRule(kind, keys, source, " ".join(sentence.split())[:RULE_TEXT_MAX])
    return None


def observed_rule(texts: Sequence[str]) -> FormatRule | None:
    """A rule from the first responses: all of the first :data:`OBSERVED_BASELINE` are clean JSON objects.

    Args:
        texts: non-empty response texts in call order (only the first :data:`OBSERVED_BASELINE` are read).

    Returns the rule with the keys every one of them had, or ``None`` (fewer responses, or any was not a clean
    JSON object).
    """
    if len(texts) < OBSERVED_BASELINE:
        return None
    common: dict[str, None] | None = None
    for t in texts[:OBSERVED_BASELINE]:
        v = _parse_clean(t)
        if not isinstance(v, dict):
            return None
        common = dict.fromkeys(v) if common is None else {k: None for k in common if k in v}
    return FormatRule("json_object", tuple(common or ()), "observed",
                      f"the first {OBSERVED_BASELINE} responses were JSON objects")


# --- scoring ----------------------------------------------------------------------------------------------------

_MISSING = object()


def _unfence(s: str) -> str:
    m = _FENCE.match(s)
    return m.group(1).strip() if m else s


def _parse_clean(text: str) -> Any:
    """The JSON value of a whole response (a Markdown code fence around it allowed), else ``_MISSING``."""
    s = _unfence(text.strip())
    if not s or s[0] not in '{["-0123456789tfn':
        return _MISSING
    try:
        return orjson.loads(s)
    except orjson.JSONDecodeError:
        return _MISSING


def _judge(value: Any, rule: FormatRule) -> FormatCheck:
    if rule.kind == "json_object" and not isinstance(value, dict):
        return FormatCheck(SCORE_MISSING_KEYS, "missing_keys")
    keys = tuple(value) if isinstance(value, dict) else ()
    missing = tuple(k for k in rule.keys if k not in value) if isinstance(value, dict) else rule.keys
    if missing:
        return FormatCheck(SCORE_MISSING_KEYS, "missing_keys", keys, missing)
    return FormatCheck(SCORE_CLEAN, "clean", keys)


def check_format(text: str | None, rule: FormatRule) -> FormatCheck | None:
    """Score one response text against ``rule``.

    * ``clean`` (0.0): the JSON the rule asks for (a surrounding Markdown code fence is fine);
    * ``extra_text`` (0.3): valid JSON with prose before or after it;
    * ``missing_keys`` (0.5): parses, but lacks keys the rule expects (or is not an object);
    * ``broken_json`` (0.7): looks like JSON (starts with ``{``/``[`` or holds ``{"``) but does not parse;
    * ``prose`` (1.0): no JSON structure at all.

    Extra text and missing keys together take the higher score.  Returns ``None`` for a missing or blank text
    (nothing to judge).  Never raises.
    """
    if not text or not text.strip():
        return None
    s = text.strip()
    value = _parse_clean(s)
    if value is not _MISSING:
        return _judge(value, rule)
    dec = json.JSONDecoder()
    tries = 0
    for m in re.finditer(r"[{\[]", s):
        if tries >= MAX_EMBED_TRIES:
            break
        tries += 1
        try:
            value, _end = dec.raw_decode(s, m.start())
        except (ValueError, RecursionError):
            continue
        if not isinstance(value, dict | list) or not value:
            continue
        inner = _judge(value, rule)
        if inner.score > SCORE_EXTRA_TEXT:
            return inner
        return FormatCheck(SCORE_EXTRA_TEXT, "extra_text", inner.keys)
    bare = _unfence(s)
    if bare[:1] in ("{", "[") or _LOOKS_JSON.search(bare):
        return FormatCheck(SCORE_BROKEN_JSON, "broken_json")
    return FormatCheck(SCORE_PROSE, "prose")


# --- echo of the system prompt ----------------------------------------------------------------------------------

def _words(text: str) -> list[str]:
    return text.casefold().split()


class EchoIndex:
    """Hashes of every :data:`ECHO_CHUNK_WORDS`-word window of one system text (the text is not kept), to find
    long verbatim runs of it in a response.

    Args:
        text: the system prompt.

    Memory: at most :data:`MAX_ECHO_SHINGLES` integers.
    """

    __slots__ = ("hashes", "words")

    def __init__(self, text: str) -> None:
        w = _words(text)
        m = ECHO_CHUNK_WORDS
        self.words = len(w)
        limit = min(len(w) - m + 1, MAX_ECHO_SHINGLES)
        self.hashes = frozenset(hash(" ".join(w[i:i + m])) for i in range(max(0, limit)))

    def longest_run(self, response: str | None) -> int:
        """Words in the longest run of ``response`` copied verbatim from the system text (0 if none found).

        Aligned chunks are looked up first (cheap: one hash per :data:`ECHO_CHUNK_WORDS` words); a hit is
        extended one word at a time in both directions while the shifted windows are still in the index.
        Runs shorter than :data:`ECHO_CHUNK_WORDS` are never reported.
        """
        if not response or not self.hashes:
            return 0
        w = _words(response)
        m = ECHO_CHUNK_WORDS
        hs = self.hashes
        best = 0
        covered = -1  # last word index already inside a measured run
        for start in range(0, len(w) - m + 1, m):
            if start <= covered or hash(" ".join(w[start:start + m])) not in hs:
                continue
            lo = start
            while lo > 0 and hash(" ".join(w[lo - 1:lo - 1 + m])) in hs:
                lo -= 1
            hi = start  # start of the last window in the run
            while hi + m < len(w) and hash(" ".join(w[hi + 1:hi + 1 + m])) in hs:
                hi += 1
            best = max(best, hi + m - lo)
            covered = hi + m - 1
        return best


@lru_cache(maxsize=ECHO_CACHE_SIZE)
def echo_index(text: str) -> EchoIndex:
    """The (cached) :class:`EchoIndex` of a system text; at most :data:`ECHO_CACHE_SIZE` are kept."""
    return EchoIndex(text)
