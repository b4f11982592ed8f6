"""The input (request) file of a batch, indexed by ``custom_id``; each request is re-read from disk when asked.

Request bodies are never kept in memory for the join: the input is indexed as ``custom_id`` -> byte range and
each request is re-read when its result arrives (bounded memory on large batches).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ctxwatch.formats.batch.calls import unjoinable
from ctxwatch.formats.batch.kinds import (
    ANTHROPIC_REQUEST,
    ANTHROPIC_REQUESTS_BODY,
    OPENAI_INPUT,
    PROVIDER,
    classify_batch_value,
    join_id,
)
from ctxwatch.model import Issue
from ctxwatch.source import Record, decode_line, iter_records, show_value


@dataclass(slots=True, frozen=True)
class RequestLocation:
    """Where one request is in an input file: its line, byte range and value's index on the line (``part``),
    and its index in a ``{"requests": [...]}`` body (``item``, else -1)."""

    line: int
    byte_start: int
    byte_end: int
    part: int
    item: int  # index inside a {"requests": [...]} body, else -1


class BatchInputIndex:
    """``custom_id`` → location of each request in an input (request) file; bodies are re-read on demand.

    Args:
        path: the input file (OpenAI ``{custom_id, body}`` lines or Anthropic ``{custom_id, params}``
            objects, possibly concatenated on one line).

    Attributes:
        kind: the provider of the requests (``openai`` | ``anthropic``), or ``None`` if none was found.
        issues: problems met while indexing (unreadable file, invalid lines, duplicate ``custom_id``s, requests
            without a ``custom_id`` string, which are not indexed: ``null`` names no result, and never the
            request named ``"null"``).
            The ``concatenated`` notice of an Anthropic request file (objects glued with no separator) is
            expected and dropped.
        used: the ``custom_id``s fetched so far (to report requests that got no result).
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.kind: str | None = None
        self.issues: list[Issue] = []
        self.used: set[str] = set()
        self._locs: dict[str, RequestLocation] = {}
        self._order: list[str] = []
        self._cache: tuple[int, list[Any]] | None = None  # (byte_start, values) of the last line re-read
        try:
            for rec in iter_records(path):
                if isinstance(rec, Issue):
                    if rec.kind != "concatenated":
                        self.issues.append(rec)
                    continue
                self._add(rec)
        except OSError as exc:
            self.issues.append(Issue(path, 0, "unreadable", f"cannot read batch input: {exc.strerror or exc}"))

    def _add(self, rec: Record) -> None:
        kind = classify_batch_value(rec.value)
        if kind == ANTHROPIC_REQUESTS_BODY:
            for i, item in enumerate(rec.value["requests"]):
                if isinstance(item, dict) and (cid := join_id(item)) is not None:
                    loc = RequestLocation(rec.line, rec.byte_start, rec.byte_end, rec.part, i)
                    self._put(cid, loc, rec)
                elif isinstance(item, dict) and ("custom_id" in item or "params" in item):
                    self.issues.append(unjoinable(self.path, rec.line, item, "input"))
            self.kind = self.kind or "anthropic"
            return
        if kind not in (OPENAI_INPUT, ANTHROPIC_REQUEST):
            self.issues.append(Issue(self.path, rec.line, "unknown_record",
                                     "not a batch request ({custom_id, body} or {custom_id, params}); skipped"))
            return
        self.kind = self.kind or PROVIDER[kind]
        cid = join_id(rec.value)
        if cid is None:
            self.issues.append(unjoinable(self.path, rec.line, rec.value, "input"))
            return
        self._put(cid, RequestLocation(rec.line, rec.byte_start, rec.byte_end, rec.part, -1), rec)

    def _put(self, cid: str, loc: RequestLocation, rec: Record) -> None:
        if cid in self._locs:
            self.issues.append(Issue(self.path, rec.line, "duplicate_custom_id",
                                     f"custom_id {show_value(cid)} already used on line {self._locs[cid].line}; "
                                     "the first request is joined"))
            return
        self._locs[cid] = loc
        self._order.append(cid)

    def __contains__(self, cid: object) -> bool:
        return cid in self._locs

    def __len__(self) -> int:
        return len(self._locs)

    def ids(self) -> list[str]:
        """All indexed ``custom_id``s in file order."""
        return list(self._order)

    def location(self, cid: str) -> RequestLocation | None:
        """Where request ``cid`` is (line, byte range, part, item), or ``None``."""
        return self._locs.get(cid)

    def fetch(self, cid: str) -> dict[str, Any] | None:
        """The request object ``{custom_id, body|params, …}`` for ``cid``, re-read from disk; ``None`` if gone.

        Marks ``cid`` as used.  Never raises: an unreadable or changed file gives ``None``.
        """
        loc = self._locs.get(cid)
        if loc is None:
            return None
        self.used.add(cid)
        if self._cache is not None and self._cache[0] == loc.byte_start:
            values = self._cache[1]
        else:
            try:
                with open(self.path, "rb") as fh:
                    fh.seek(loc.byte_start)
                    data = fh.read(loc.byte_end - loc.byte_start)
            except OSError:
                return None
            values, _ = decode_line(data.rstrip(b"\n"), self.path, loc.line, first=loc.byte_start == 0)
            self._cache = (loc.byte_start, values)
        if loc.part >= len(values):
            return None
        v = values[loc.part]
        if loc.item >= 0:
            reqs = v.get("requests") if isinstance(v, dict) else None
            if not isinstance(reqs, list) or loc.item >= len(reqs):
                return None
            v = reqs[loc.item]
        return v if isinstance(v, dict) else None
