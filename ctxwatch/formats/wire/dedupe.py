"""Dedupe keys of one file's calls: the provider's response id with the request's shape, or the record's content.

The same API call may be logged more than once (a log replaced by a copy, a resumed run re-logging, an exchange
captured twice, in another file too): its copies must update one call, never add up.  Copies of one call may
report different amounts of its usage (a stream cut before its last event), so the copy counted is the one that
reports the most, and every copy left out says which copy is counted.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from hashlib import blake2b
from typing import Any, NamedTuple

import orjson

from ctxwatch.formats.wire.messages import MessageMemo
from ctxwatch.formats.wire.resend import raw_default
from ctxwatch.model import MAX_COUNT, Issue, LastKey, Message, ParsedCall, Resolved, Usage, digest, message_key


def json_hash(v: Any) -> int | None:
    """The content key (:func:`~ctxwatch.model.digest`, the same in every process) of a value's compact JSON: equal
    for equal values written with the same key order (a raw span left by :class:`~.resend.ResendDecoder` enters
    as its bytes); ``None`` when orjson cannot write it (nested too deeply, an int beyond 64 bits)."""
    try:
        return digest(orjson.dumps(v, default=raw_default))
    except TypeError:  # (orjson.JSONEncodeError)
        return None


def record_hash(record: dict[str, Any], body_at: tuple[str, ...], memo: MessageMemo,
                tools_hash: Callable[[list[Any]], int | None] = json_hash) -> int | None:
    """The content key of a whole record (equal for identical records, whatever the order of its own keys), or
    ``None`` when it cannot be written.

    ``body_at``: the keys leading from ``record`` to its request body.  The body's messages, which ``memo``
    has just hashed one by one to build the call, enter as those hashes instead of being written out again (an
    agent's request re-sends its whole history: writing it twice more per record slowed a read by a fifth),
    and its tool schemas as their key, ``tools_hash(tools)`` (a :class:`~ctxwatch.model.LastKey` of
    :func:`json_hash` keeps it for the next record's unchanged ones); a record the memo did not read (a
    Responses API body) is written whole.
    """
    # (the record's own keys in a fixed order: a line decoder may give them in another than the line's)
    record = dict(sorted(record.items()))
    body: Any = record
    for k in body_at:
        body = body.get(k) if isinstance(body, dict) else None
    packed = memo.keys_digest(body.get("messages")) if isinstance(body, dict) else None
    if packed is None:
        return json_hash(record)
    # (the tool schemas enter as their key too, worked out once while the records after re-send them)
    tools = body.get("tools")
    tools_key = tools_hash(tools) if isinstance(tools, list) and tools else None
    swap: dict[str, Any] = {"messages": packed} if tools_key is None else {"messages": packed, "tools": tools_key}

    def swapped(d: dict[str, Any], i: int) -> dict[str, Any]:
        if i == len(body_at):
            return {**d, **swap}
        return {**d, body_at[i]: swapped(d[body_at[i]], i + 1)}

    return json_hash(swapped(record, 0))


def _count(v: object) -> bool:
    """True for a token count as the run's sanitiser accepts one: an int in [0, 2**53) (:data:`MAX_COUNT`)."""
    return v.__class__ is int and 0 <= v < MAX_COUNT  # type: ignore[operator]


def usage_rank(u: Usage | None) -> int:
    """How much of a call's usage one copy of its record reports, to choose between two copies of one call:
    0 for none, else 1, plus 8 when sound (not damaged, every field a count), 4 with a prompt count above 0 (a
    prompt of 0 tokens is no prompt size: implausible) and 2 with an output count.  A stream cut before its
    ``message_delta`` (damaged, no output count: 5) ranks below its whole copy (15), and so does a copy whose
    output is ``1e300`` or a string (the run would make it unknown) or whose prompt is 0."""
    if u is None:
        return 0
    sound = not u.damaged and all(v is None or _count(v) for v in (
        u.prompt_total, u.input_uncached, u.cache_read, u.cache_write, u.output, u.reasoning, u.cache_write_1h,
        u.web_searches))
    return 1 + 8 * sound + 4 * (_count(u.prompt_total) and u.prompt_total > 0) + 2 * _count(u.output)  # type: ignore[operator]


def copy_rank(u: Usage | None) -> tuple[int, int]:
    """:func:`usage_rank`, then the output count (-1 when unknown or not a count): between two copies that
    report as much of the usage, the larger output count is the later state of the response (the final count
    of a streamed response is its largest), as :func:`ctxwatch.engine.merge.usage_rank` ranks copies from
    different files."""
    out = u.output if u is not None and _count(u.output) else -1
    return usage_rank(u), out  # type: ignore[return-value]


def _compared(counted: tuple[int, int], copy: tuple[int, int]) -> str:
    """What the counted copy (rank ``counted``, :func:`copy_rank`) reports against a copy left out (``copy``,
    never ranked above it): ``more`` of the usage, a ``larger`` output count, or ``same`` (as much)."""
    if counted[0] > copy[0]:
        return "more"
    return "larger" if counted[1] > copy[1] else "same"


class _Copy(NamedTuple):
    """One copy of a call read by :class:`ResponseIds`: its line, rank (:func:`copy_rank`) and own issues."""

    line: int
    rank: tuple[int, int]
    notes: list[Issue]


class _HistoryKeys:
    """The digest of a history's message keys (8 bytes each), carried over from the previous history's for the
    messages it re-sends (the same objects): a call costs its new messages, not its whole history."""

    def __init__(self) -> None:
        self._msgs: list[Message] = []
        self._hash = blake2b(digest_size=8)

    def __getstate__(self) -> dict[str, Any]:
        return {}  # (a hash object does not pickle; the next history is digested whole)

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__()  # type: ignore[misc]

    def of(self, msgs: list[Message]) -> int:
        """The digest (a signed 64-bit int) of ``msgs``' content keys, in order."""
        n = len(self._msgs)
        if n and len(msgs) >= n and msgs[:n] == self._msgs:  # (identity first: one C-level pass)
            h, new = self._hash.copy(), msgs[n:]
        else:
            h, new = blake2b(digest_size=8), msgs
        keys = [message_key(m) for m in new]
        try:
            h.update(array("q", keys).tobytes())
        except (OverflowError, TypeError):  # (a key set by a reader beyond 64 bits: each written on its own)
            h.update(b"".join(k.to_bytes(8, "little", signed=True) if -(2**63) <= k < 2**63
                              else b"\x00" + str(k).encode() + b"\x00" for k in keys))
        self._msgs, self._hash = list(msgs), h
        return int.from_bytes(h.digest(), "little", signed=True)


class ResponseIds:
    """Dedupe keys of one file's calls from the provider's response ids (``chatcmpl-...``, ``msg_...``).

    The provider's response id names one API call: a record seen again (a log replaced by a copy, a resumed
    run re-logging, an exchange captured twice) updates instead of adding.  The key
    holds the request too (model, system prompt, tool schemas, max output tokens, every message): a mock server
    or a test stub answering every call with one constant id must not merge different requests into one call,
    while a copy of a record stays the same call.  The reported usage is not part of the key: two copies of one
    exchange may report different amounts of it (one copy's stream cut before its ``message_delta``).

    Of the copies of one call in a file, the one counted is the one that reports the most of its usage
    (:func:`copy_rank`) and, among those that report as much, the first one read, as a run keeps the copy read
    first from files read one after another (:func:`ctxwatch.engine.merge.keeps_earlier`): a later copy is emitted
    only when it ranks above every earlier one (:meth:`better_copy`), and replaces the call.  Every copy left
    out has notes naming the copy counted (:meth:`not_counted`), given again when a later copy replaces it
    (:meth:`counted_copy`), so that no note names a copy that is no longer counted.  A record with no response
    id (a refused request) is keyed by its content instead (:meth:`content`).  Used by the canonical and
    claude-trace readers.

    Args:
        path: the log file (for the issues).
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._ids: dict[str, tuple[str, int]] = {}  # response id -> (first call key, line) using it
        self._told: set[str] = set()  # response ids already reported as reused for another request
        self._counted: dict[str, _Copy] = {}  # call key -> the copy counted
        self._left: dict[str, list[_Copy]] = {}  # call key -> the copies left out that were given notes
        self._seen: dict[int, int] = {}  # content hash of an id-less record -> how many were read so far
        self._origin: int | None = None  # line of the first record read (see start)
        self._keys = _HistoryKeys()
        #: :func:`json_hash` of a call's tool schemas, kept while the next call's are the same objects.
        self.tools_hash: LastKey[int | None] = LastKey(json_hash)

    def start(self, line: int) -> None:
        """Note a record's line before it is read (the first one noted is where the reading started)."""
        if self._origin is None:
            self._origin = line

    def content(self, call: ParsedCall, h: int | None, line: int) -> None:
        """Key a call that has no key yet (its response has no id) by its record's content hash ``h``
        (:func:`record_hash`) and its occurrence number among identical records of this file (``line``: the
        record's 1-based line).

        The same log in two files (a copy, a resumed run re-logging) gives each record the same key, so the k-th
        identical record of one file is the same call as the k-th of the other, while two identical records of
        one file (an agent retrying the same refused request) stay two calls.  A file read from a later line
        than its first (a range of a big file read by a worker process, :mod:`ctxwatch.engine.parallel`; a backfill
        of its end) cannot number its records from the file's start: their keys hold the line it started at,
        so that identical records of two ranges stay apart.  A record with no hash (``None``) gets no key."""
        if call.key is not None or h is None:
            return
        n = self._seen[h] = self._seen.get(h, 0) + 1
        # (the hash part comes first and alone: ctxwatch.engine.reload.reload_parsed recognises a record read
        # alone by it)
        where = f"{n}" if self._origin in (None, 1) else f"{self._origin}+{n}"
        call.key = f"content:{h & 0xFFFFFFFFFFFFFFFF:016x}:{where}"

    def assign(self, call: ParsedCall, rid: Any, line: int) -> list[Issue]:
        """Set ``call.key`` from response id ``rid`` (a non-empty string, else the call gets no key and is never
        merged) and the call's request; return a ``duplicate_response_id`` note the first time an id comes back
        on a different request (``line``: the record's 1-based line number)."""
        if not isinstance(rid, str) or not rid:
            return []
        msgs = call.messages or []
        # (message keys are the memo's digests of each raw message: the whole history, for the cost of a few bytes)
        system = call.system or ()
        shape = digest(call.model, str(len(system)), *system, repr(self.tools_hash(call.tools) if call.tools
                                                                   else json_hash(call.tools)),
                       repr(json_hash(call.max_output_tokens)), str(self._keys.of(msgs))) & 0xFFFFFFFF
        call.key = f"response:{rid}:{len(msgs)}:{shape:08x}"
        first = self._ids.setdefault(rid, (call.key, line))
        if first[0] == call.key or rid in self._told:
            return []
        self._told.add(rid)
        return [Issue(self.path, line, "duplicate_response_id", f"response id {rid!r} was already used at line "
                      f"{first[1]} for a different request; counted as separate calls")]

    def better_copy(self, call: ParsedCall, line: int) -> int | None:
        """The line of the copy of ``call`` (same key, this file) counted so far when that copy reports at least
        as much of the usage (:func:`copy_rank`): ``call`` is then left out (:meth:`not_counted`).  ``None``
        when ``call`` is to be counted (:meth:`counted_copy`): it has no key, is the first copy, or ranks above
        the copy counted so far, which it replaces as a run replaces a call whose key comes back.  A copy that
        ranks below must not be emitted (the run would replace the complete numbers with it), nor one that
        ranks the same (a note naming the copy counted would name a copy that no longer is).  ``line``: the
        record's 1-based line."""
        if call.key is None:
            return None
        counted = self._counted.get(call.key)
        if counted is not None and counted.line != line and counted.rank >= copy_rank(call.usage):
            return counted.line
        return None

    def counted_copy(self, call: ParsedCall, line: int, notes: list[Issue]) -> list[Issue | Resolved]:
        """Record ``call`` (``line``; ``notes``: its own issues), which :meth:`better_copy` chose, as its key's
        copy counted.  When it replaces an earlier copy, the issues of that copy (a stream cut before its
        ``message_delta``) and those of the copies left out so far, which named that copy, are withdrawn
        (:class:`Resolved`) and given again naming ``line`` (:meth:`not_counted`); an earlier copy without
        issues of its own gets none."""
        if call.key is None:
            return []
        old = self._counted.get(call.key)
        new = self._counted[call.key] = _Copy(line, copy_rank(call.usage), list(notes))
        if old is None or old.line == line:
            return []
        left = self._left.setdefault(call.key, [])
        out: list[Issue | Resolved] = [Resolved(i.path, i.line, i.kind) for i in old.notes]
        for copy in left:
            out += [Resolved(i.path, i.line, i.kind) for i in self._words(copy, old)]
        if old.notes:
            left.append(_Copy(old.line, old.rank, old.notes))
            left.sort(key=lambda c: c.line)
        for copy in left:
            out += self._words(copy, new)
        return out

    def not_counted(self, call: ParsedCall, line: int, notes: list[Issue]) -> list[Issue]:
        """The issues of ``call`` (``line``; ``notes``: its own issues), a copy that :meth:`better_copy` keeps
        out: its own notes, saying that it is not counted and which copy is, or one ``incomplete_copy`` note
        when it has none and reports less than the copy counted (an exact later copy without issues of its own
        is left out silently)."""
        assert call.key is not None  # (better_copy leaves out only keyed copies)
        copy = _Copy(line, copy_rank(call.usage), list(notes))
        counted = self._counted[call.key]
        issued = self._words(copy, counted)
        if issued:
            self._left.setdefault(call.key, []).append(copy)
        return issued

    def _words(self, copy: _Copy, counted: _Copy) -> list[Issue]:
        """The issues given for ``copy``, left out while ``counted`` is the copy counted."""
        how = _compared(counted.rank, copy.rank)
        if not copy.notes:
            if how == "same":
                return []
            less = "less of its usage" if how == "more" else "a smaller output count"
            return [Issue(self.path, copy.line, "incomplete_copy", f"a copy of the call at line {counted.line} "
                          f"that reports {less}; not counted (line {counted.line} is)")]
        what = {"more": "which reports more of the usage", "larger": "which reports a larger output count",
                "same": "which reports as much of the usage and was read first"}[how]
        why = f"this copy is not counted: the copy at line {counted.line}, {what}, is"
        return [Issue(i.path, i.line, i.kind, f"{i.message}; {why}", i.call_key) for i in copy.notes]
