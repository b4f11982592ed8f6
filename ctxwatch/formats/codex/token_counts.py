"""A Codex ``token_count`` event as a call: its usage blocks checked, a repeat or a restart of the running totals
told apart, and the call's usage taken from its last block or from the totals' delta.  A mixin of
:class:`~ctxwatch.formats.codex.reader.CodexReader`, whose state it updates (the rules are in the package
docstring, :mod:`ctxwatch.formats.codex`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ctxwatch.formats import Output, usage_count
from ctxwatch.formats.codex.counters import (
    FIELDS,
    Counts,
    checked_counts,
    codex_usage,
    is_repeat,
    surviving_counts,
)
from ctxwatch.formats.wire.values import note_usage_types
from ctxwatch.model import Issue, Provenance, Usage
from ctxwatch.source import Record, show_value


class TokenCounts:
    """:meth:`_token_count`, for :class:`~ctxwatch.formats.codex.reader.CodexReader`."""

    if TYPE_CHECKING:
        path: str
        session: str | None
        _count: int
        _fork_of: str | None
        _prev_seen: tuple[int | None, ...] | None
        _prev_total: tuple[int, ...] | None
        _prev_last: tuple[int, ...] | None

        def _restart(self, rec: Record, prev: tuple[int, ...], total: tuple[int, ...]) -> Issue: ...

        def _call_of(self, v: dict[str, Any], rec: Record, info: dict[str, Any], key: str, usage: Usage,
                     extra: Provenance, notes: list[Output], by_total: bool) -> list[Output]: ...

    def _token_count(self, v: dict[str, Any], payload: dict[str, Any], rec: Record) -> list[Output]:
        info = payload.get("info")
        if info is None:
            return []  # (info:null carries rate limits only)
        if not isinstance(info, dict):
            return [Issue(self.path, rec.line, "invalid_field",
                          f"token_count.info {show_value(info)}: not an object; this token count is ignored")]
        damage: list[Output] = []
        for name in ("total_token_usage", "last_token_usage"):
            if isinstance(info.get(name), dict):  # (another type is checked_counts' to report)
                note_usage_types(info[name], f"payload.info.{name}")
        total_block = info.get("total_token_usage")
        total = checked_counts(total_block, "total_token_usage", self.path, rec.line, damage)
        last_block = info.get("last_token_usage")
        last = checked_counts(last_block, "last_token_usage", self.path, rec.line, damage)
        return damage + self._token_count_from(v, payload, rec, info, total, last, last_block,
                                               surviving_counts(total_block))

    def _token_count_from(self, v: dict[str, Any], payload: dict[str, Any], rec: Record, info: dict[str, Any],
                          total: Counts | None, last: Counts | None, last_block: Any,
                          seen: tuple[int | None, ...] | None) -> list[Output]:
        """The call of a ``token_count`` event from its checked counters (see :meth:`_token_count`); ``seen`` is
        its total as written, damaged counters ``None`` (:func:`_surviving_counts`)."""
        partial: tuple[int | None, ...] | None = None
        if total is None and last is None:
            # Both blocks damaged (reported): the call still happened.  It is kept with the counters that survive
            # in its last_token_usage, the others unknown (so it is not priced); Codex's running total is not
            # moved, as this call's share of it is unknown.  Nothing left: not counted.
            partial = surviving_counts(last_block)
            if partial is None or all(x is None for x in partial):
                return []  # (not counted, so not what the next copy is a repeat of either)
            return self._partial_call(v, rec, info, partial, seen)
        if is_repeat(seen, self._prev_seen, last, self._prev_last):
            if seen is not None and self._prev_seen is not None:
                # The copies together may say more than either: keep every counter one of them has whole.
                self._prev_seen = tuple(a if a is not None else b
                                        for a, b in zip(seen, self._prev_seen, strict=True))
            if total is not None:
                self._prev_total = total  # Codex's own total replaces one carried past a damaged copy
            return []  # a re-emitted event
        if seen is not None:
            self._prev_seen = seen
        source = "last_token_usage"
        prev = self._prev_total
        notes: list[Output] = []
        if total is not None:
            backwards = prev is not None and any(t < p for t, p in zip(total, prev, strict=True))
            self._prev_total = total
            if backwards:
                assert prev is not None  # (for mypy: backwards needs a previous total)
                notes.append(self._restart(rec, prev, total))
            if last is None:
                source = "total_delta"
                last = total if prev is None or backwards else tuple(  # type: ignore[assignment]
                    t - p for t, p in zip(total, prev, strict=True))
        elif last is not None:
            # No whole total: Codex's total moved by this call, so a later delta must not count it again.  With
            # no baseline yet the total is this call, as for the first total above.
            self._prev_total = last if prev is None else tuple(p + n for p, n in zip(prev, last, strict=True))
        self._prev_last = last
        if last is None:
            return notes
        inp, cached, out, reasoning, _tot = last
        if inp == 0 and out == 0:
            return notes  # nothing was sent (a zeroed baseline, e.g. a fresh subagent header)
        cw = None
        if source == "last_token_usage" and isinstance(last_block, dict):
            # A value that is not a count stays raw, so the cache write is reported and unknown (never 2 for 2.7,
            # 0 for "x" or a crash for "inf"); a total delta carries no cache write at all.
            cw = usage_count(last_block.get("cache_write_input_tokens"))
        self._count += 1
        key_total = total if total is not None else (self._count, *last)
        key = f"codex:{self._fork_of or self.session or ''}:{'/'.join(map(str, key_total))}"
        extra = Provenance(usage_from=source)
        if total is not None:
            extra.cumulative = dict(zip(FIELDS, total, strict=True))
        return self._call_of(v, rec, info, key, codex_usage(inp, cached, out, reasoning, cw), extra, notes,
                             total is not None)

    def _partial_call(self, v: dict[str, Any], rec: Record, info: dict[str, Any],
                      part: tuple[int | None, ...], seen: tuple[int | None, ...] | None) -> list[Output]:
        """The call of a ``token_count`` whose two usage blocks are both damaged (see :meth:`_token_count_from`):
        its usage is the counters of ``last_token_usage`` that survive (``part``; damaged ones ``None``, so the
        call is not priced), or nothing when it repeats the previous event."""
        if is_repeat(seen, self._prev_seen, None, self._prev_last):
            return []
        if seen is not None:
            self._prev_seen = seen
        self._prev_last = None
        inp, cached, out, reasoning, _tot = part
        self._count += 1
        key = f"codex:{self.session or ''}:{self._count}/partial/{'/'.join(map(str, part))}"
        usage = Usage(prompt_total=inp, input_uncached=inp - cached if inp is not None and cached is not None
                      else None, cache_read=cached, cache_write=None, output=out, reasoning=reasoning,
                      damaged=True)
        return self._call_of(v, rec, info, key, usage, Provenance(usage_from="last_token_usage (partly damaged)"), [],
                             False)
