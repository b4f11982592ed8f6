"""The usage counters of Codex ``token_count`` events, checked and compared.

Codex writes five counters per usage block (``input_tokens``, ``cached_input_tokens``, ``output_tokens``,
``reasoning_output_tokens``, ``total_tokens``), a running total and the latest call's; it writes each event
twice and re-emits totals for rate-limit refreshes, so a new call is told from a repeat by its totals, and a
restart by totals that go backwards.  Usage follows OpenAI's convention: ``input_tokens`` includes
``cached_input_tokens``, ``output_tokens`` includes ``reasoning_output_tokens``.
"""

from __future__ import annotations

from typing import Any

from ctxwatch.formats import MAX_COUNT, Output, count_issue_kind, usage_count
from ctxwatch.model import Issue, Usage
from ctxwatch.source import show_value

#: The five counters of a Codex usage block, in the order of the tuples below.
FIELDS = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens", "total_tokens")

#: The five counters as read (:func:`counts`).
Counts = tuple[int, int, int, int, int]


class NotACount(ValueError):
    """A usage block holds a value that is not a token count (``field``, ``value``)."""

    def __init__(self, field: str, value: Any) -> None:
        super().__init__(field)
        self.field = field
        self.value = value


def counts(block: Any) -> Counts | None:
    """The five counters of a usage block as a tuple (missing keys are 0), or ``None`` if not a dict.

    Raises:
        NotACount: a counter is not a non-negative integer below 2**53 (:data:`~ctxwatch.formats.MAX_COUNT`:
            ``"1e3"``, ``1.5``, ``true``, ``-5``, ``1e20`` written as an integer) or is ``null``: the block is
            unusable (the rule of :func:`ctxwatch.formats.usage_count` and the run's ``sanitize``), never read as a
            guess.  Codex writes every counter as an integer; a key it does not write is 0, but a ``null`` says
            the count is unknown (read as 0, a call's output would be 0 and its cost that of its prompt alone).
            The reader, not the run's ``sanitize`` as well, reports such a value: one value, one issue.
    """
    read = surviving_counts(block)
    if read is None:
        return None
    for k, v in zip(FIELDS, read, strict=True):
        if v is None:
            raise NotACount(k, usage_count(block[k]))  # (the value as read, for the message)
    return read  # type: ignore[return-value]


def surviving_counts(block: Any) -> tuple[int | None, ...] | None:
    """The five counters of a usage block with each one that is not a count as ``None`` (``None`` if the block is
    not a dict): what is left of a damaged ``total_token_usage`` to recognise a repeated event by."""
    if not isinstance(block, dict):
        return None
    out: list[int | None] = []
    for k in FIELDS:
        v = usage_count(block[k]) if k in block else 0  # (a key not written is 0; a null is unknown)
        out.append(v if is_count(v) else None)
    return tuple(out)


def is_count(v: Any) -> bool:
    """Whether a usage value is a token count: an int (not a bool) from 0 to below 2**53.  A larger integer
    (1e20 written out) passed as a count would make the call's prompt "more than the window" here and "not a
    token count" in the run's ``sanitize``: two contradictory issues for one value."""
    return v.__class__ is int and 0 <= v < MAX_COUNT


def is_repeat(seen: tuple[int | None, ...] | None, prev_seen: tuple[int | None, ...] | None,
               last: tuple[int, ...] | None, prev_last: tuple[int, ...] | None) -> bool:
    """Whether a token_count repeats the previous counted one (Codex writes each event twice).

    ``seen`` / ``prev_seen``: the two events' totals as written (:func:`surviving_counts`); ``last`` /
    ``prev_last``: their ``last_token_usage`` when whole.  Whole totals decide alone.  When either total has a
    damaged counter, the counters left in both must agree and so must ``last_token_usage`` when both are whole:
    a new call always moves ``input_tokens`` and ``total_tokens``, so one damaged counter cannot hide it, while
    the raw blocks (1.5 against 37) would differ for a copy.  With no counter to compare, an identical
    ``last_token_usage`` right after itself is the repeat.
    """
    pairs = [] if seen is None or prev_seen is None else [
        (a, b) for a, b in zip(seen, prev_seen, strict=True) if a is not None and b is not None]
    if not pairs:
        return last is not None and last == prev_last
    if any(a != b for a, b in pairs):
        return False
    return len(pairs) == len(FIELDS) or last is None or prev_last is None or last == prev_last


def checked_counts(block: Any, name: str, path: str, line: int, issues: list[Output]) -> Counts | None:
    """:func:`counts`, with a damaged block reported as an issue (appended to ``issues``; ``name``: the block's
    name, ``path`` and ``line``: where it is) and read as absent: for a counter that is no token count,
    ``implausible_value`` (a number) or ``invalid_field`` (another JSON type,
    :func:`~ctxwatch.formats.wire.values.count_issue_kind`); ``invalid_field`` for a block that is not an object
    (``null`` is absent, not damaged)."""
    if block is not None and not isinstance(block, dict):
        issues.append(Issue(path, line, "invalid_field",
                            f"{name} {show_value(block)}: not an object of token counts; this usage block is ignored"))
        return None
    try:
        return counts(block)
    except NotACount as exc:
        issues.append(Issue(path, line, count_issue_kind(exc.value),
                            f"{name}.{exc.field} {show_value(exc.value)}: not a token count; this usage block is "
                            "ignored"))
        return None


def codex_usage(inp: int, cached: int, out: int, reasoning: int, cache_write: Any = None) -> Usage:
    """Normalize Codex usage (OpenAI's convention: cached and reasoning tokens are subsets).

    ``prompt_total`` = ``input_tokens`` (cached tokens are a subset); ``cache_read`` = ``cached_input_tokens``;
    ``output`` = ``output_tokens`` (reasoning is a subset); ``reasoning`` = ``reasoning_output_tokens``;
    ``cache_write`` = ``cache_write_input_tokens`` when the block has it (newest versions), else ``None``;
    ``input_uncached`` = input minus cache reads minus cache writes (never below 0), matching
    :attr:`ctxwatch.model.Usage.input_uncached` ("neither read from nor written to the cache").  All counts are
    tokens.  A ``cache_write`` that is not a count (``2.7``, ``"inf"``, ``true``, ``-1``) is kept as given, for
    :func:`ctxwatch.engine.sanitize.sanitize` to report and make unknown, and ``input_uncached`` is then ``None``.
    """
    if cache_write is None or (cache_write.__class__ is int and cache_write >= 0):
        uncached: int | None = max(0, inp - cached - (cache_write or 0))
    else:
        uncached = None  # (no arithmetic on a damaged value: "inf" would raise, 2.7 would pass for 2)
    return Usage(prompt_total=inp, input_uncached=uncached, cache_read=cached, cache_write=cache_write,
                 output=out, reasoning=reasoning)


def and_names(names: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def restart_note(path: str, line: int, prev: tuple[int, ...], total: tuple[int, ...]) -> Issue:
    """The ``totals_restart`` note of a token_count at ``line`` whose running totals ``total`` went back from
    ``prev`` (tokens, in :data:`FIELDS` order), naming the counters that went back (a restart may move only
    ``cached_input_tokens`` back, 800,000 -> 0, while the other counters go up) and those that went up."""
    back = [(k, p, t) for k, p, t in zip(FIELDS, prev, total, strict=True) if t < p]
    up = [k for k, p, t in zip(FIELDS, prev, total, strict=True) if t > p]
    if len(back) == 1:
        k, p, t = back[0]
        what, values = f"cumulative {k}", f"{p:,} -> {t:,}"
    else:
        what = ("every cumulative total" if len(back) == len(FIELDS)
                else f"cumulative {and_names([k for k, _p, _t in back])}")
        values = ", ".join(f"{k} {p:,} -> {t:,}" for k, p, t in back)
    rose = f"; {and_names(up)} went up" if up else ""
    return Issue(path, line, "totals_restart",
                 f"{what} went backwards at line {line} ({values}{rose}): read as a restart (the history, "
                 "the inferred floor and the totals start again)")
