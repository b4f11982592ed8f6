"""What every request shape decodes to, and the reuse of messages an agent sends again on every call.

A request body of any provider is split into :data:`RequestParts`; :class:`MessageMemo` lets a reader build
each message of a re-sent history once per call instead of once per call it appears in.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from hashlib import blake2b
from typing import Any, cast

import orjson

from ctxwatch.model import Message, digest

#: What :meth:`MessageMemo._build` finds for an item it has not met yet.
_UNSEEN: Any = object()

#: ``(system blocks, tool schemas, history messages, max output tokens)`` of one request body.
RequestParts = tuple[list[str], list[dict[str, Any]], list[Message], int | None]


class MessageMemo:
    """Reuse the normalized form of messages re-sent from the previous call.

    Agent loops re-send their whole history on every call, so most messages of call N+1 are byte-for-byte
    messages of call N.  The memo maps the digest of each raw message (its compact JSON) to the
    :class:`Message` built for it, and keeps only the previous call's messages: memory stays one call wide
    while the re-sent prefix costs a dump and a digest instead of a full normalization.
    """

    def __init__(self) -> None:
        self._prev: dict[int, Message] = {}
        self._cur: dict[int, Message] = {}
        self._prev_raw: list[Any] = []
        self._prev_msgs: list[Message | None] = []
        self._prev_keys: list[int | None] = []  # the content key of each of _prev_msgs (None: none)
        self._shared = 0  # how many leading items _prev_raw shares with the list given before it
        self._counts: dict[Callable[[Any], bool], int] = {}  # is_message -> its misses in _prev_raw
        self._counts_before: dict[Callable[[Any], bool], int] = {}  # the same, in the list given before it
        self._hash: Any = _keys_hash(self._prev_keys)  # BLAKE2b state of _prev_keys (see keys_digest)
        self._gaps = 0  # how many items of _prev_raw are no message (None in _prev_msgs)

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "_hash"}  # (a hash object does not pickle)

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._hash = _keys_hash(self._prev_keys)

    def messages(self, raw_list: list[Any], build: Callable[[dict[str, Any]], Message]) -> list[Message | None]:
        """Messages for a request's raw message list, aligned with it (``None`` for non-dict items).

        When the list starts with the previous call's whole list (the usual append-only history), that
        prefix is recognised with one C-level list comparison and its messages are reused as they are.
        """
        n = len(self._prev_raw)
        self._counts_before, self._counts = self._counts, {}
        self._shared = 0
        if n and len(raw_list) >= n and raw_list[:n] == self._prev_raw:
            self._shared = n
            new = self._build(raw_list[n:], build)
            out = self._prev_msgs + new
            added = [msg.key if msg is not None else None for msg in new]
            keys = self._prev_keys + added
            self._hash = _keys_hash(added, self._hash.copy()) if self._hash is not None else None
            self._gaps += sum(msg is None for msg in new)
        else:
            out = self._build(raw_list, build)
            keys = [msg.key if msg is not None else None for msg in out]
            self._hash = _keys_hash(keys)
            self._gaps = sum(msg is None for msg in out)
        self._prev_raw = raw_list
        self._prev_msgs = out
        self._prev_keys = keys  # (kept along, a call's new messages only: see keys_digest)
        return out

    def _build(self, items: list[Any], build: Callable[[dict[str, Any]], Message]) -> list[Message | None]:
        """:meth:`get` of each item (``None`` for a non-dict), once for an item that recurs as the same object (a
        decoder gives one object for identical small entries: a line of 500,000 ``hi`` messages is one digest)."""
        seen: dict[int, Message | None] = {}
        out: list[Message | None] = []
        for m in items:
            msg = seen.get(id(m), _UNSEEN)
            if msg is _UNSEEN:
                msg = seen[id(m)] = self.get(m, build) if isinstance(m, dict) else None
            out.append(msg)
        return out

    def get(self, raw: dict[str, Any], build: Callable[[dict[str, Any]], Message]) -> Message:
        """The message for ``raw``, built with ``build`` unless it was seen in the previous call."""
        try:
            key = digest(orjson.dumps(raw))
        except TypeError:  # (orjson.JSONEncodeError: nested too deeply to write; not worth a key)
            return build(raw)
        msg = self._cur.get(key) or self._prev.get(key)
        if msg is None:
            msg = build(raw)
            msg.key = key
        self._cur[key] = msg
        return msg

    def next_call(self) -> None:
        """Start a new call: the current call's messages become the ones to reuse."""
        self._prev, self._cur = self._cur, {}

    def misses(self, raw_list: list[Any], is_message: Callable[[Any], bool]) -> int:
        """How many items of ``raw_list`` fail ``is_message``; when it is the list last given to :meth:`messages`,
        only its items after those it shares with the list given before are asked (the others were, then)."""
        if raw_list is not self._prev_raw:
            return sum(not is_message(m) for m in raw_list)
        known = self._counts.get(is_message)
        if known is None:
            start = self._shared if is_message in self._counts_before else 0
            base = self._counts_before.get(is_message, 0) if start else 0
            known = self._counts[is_message] = base + sum(not is_message(m) for m in raw_list[start:])
        return known

    @property
    def whole(self) -> bool:
        """Every item of the list last given to :meth:`messages` was a message (no ``None`` in what it gave)."""
        return self._gaps == 0

    def keys_digest(self, raw_list: Any) -> int | None:
        """One content key (a signed 64-bit int) for the content keys of the messages of ``raw_list``, in order,
        when it is the list last given to :meth:`messages` (the same object) and the memo hashed each of its
        items; else ``None``.  Carried over from the previous list's for the messages it re-sends: a call costs
        its new messages."""
        if raw_list is not self._prev_raw or self._hash is None:
            return None
        return int.from_bytes(self._hash.digest(), "little", signed=True)


def _keys_hash(keys: list[int | None], h: Any = None) -> Any:
    """``h`` (a fresh BLAKE2b state by default) fed ``keys`` as 8 bytes each, or ``None`` when one is ``None``."""
    if None in keys:
        return None
    try:
        packed = array("q", cast("list[int]", keys)).tobytes()
    except OverflowError:  # (the memo's keys are digests, 64-bit ints: not expected)
        return None
    h = h if h is not None else blake2b(digest_size=8)
    h.update(packed)
    return h
