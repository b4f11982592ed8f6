"""Dedupe keys for calls a reader leaves unkeyed: the digest of the record they came from.

A reader that knows its provider's response id keys its calls by it (:class:`~ctxwatch.formats.wire.dedupe.
ResponseIds`); a call with no key would be counted again whenever its record is read again (a followed log
replaced by a copy of itself, a resumed run re-logging). The run keys such calls by their record's content, so
the k-th identical record of a file is the same call as the k-th of its copy.
"""

from __future__ import annotations

from collections.abc import Iterable

import orjson

from ctxwatch.model import ParsedCall, digest
from ctxwatch.source import Record

#: How the keys given here begin: a call read alone again (:mod:`ctxwatch.engine.reload`) has no such key and is
#: found by where its record lies instead.
RECORD_KEY_PREFIX = "record:"


class RecordKeys:
    """Content keys of one file's unkeyed calls (a fresh one for each file or reading from its start)."""

    def __init__(self) -> None:
        self._seen: dict[int, int] = {}
        self._origin: int | None = None

    def key(self, rec: Record, outputs: Iterable[object]) -> None:
        """Give each :class:`ParsedCall` of ``outputs`` that has no key one from ``rec``'s value: its digest, its
        occurrence among identical records of the file and the call's index among the record's calls (none when
        the value cannot be written back as JSON).  A file
        read from a later line than its first (a worker's range) holds that line in its keys, so identical
        records of two ranges stay apart."""
        calls = [o for o in outputs if isinstance(o, ParsedCall) and o.key is None]
        if self._origin is None:
            self._origin = rec.line
        if not calls:
            return
        try:
            text = orjson.dumps(rec.value, option=orjson.OPT_SORT_KEYS)
        except (TypeError, orjson.JSONEncodeError):  # (an integer past 64 bits, nesting past orjson's limit)
            return  # (unkeyed, as a reader leaves a record it cannot hash: counted once per reading)
        h = digest(text, str(rec.part))
        n = self._seen[h] = self._seen.get(h, 0) + 1
        where = f"{n}" if self._origin == 1 else f"{self._origin}+{n}"
        for i, call in enumerate(calls):
            call.key = f"{RECORD_KEY_PREFIX}{h & 0xFFFFFFFFFFFFFFFF:016x}:{where}:{i}"
