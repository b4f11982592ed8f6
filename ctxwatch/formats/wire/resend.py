"""Lines of ``{request, response}`` records decoded without building again what the previous line already held.

An agent re-sends its whole history on every call: line N+1's ``request.messages`` starts with line N's, byte
for byte.  ``orjson.loads`` builds every message of every line again (a run of 600 calls builds its first
message 600 times, and a 200 MB log costs twice its parse in message dicts alone), and a line of 500,000
tiny messages becomes 500,000 dicts, 15 times the line's size.  :class:`ResendDecoder` gives the same value
for less:

* a line that holds the previous line's history array byte for byte, as the value of the same key, is split
  with that array cut down to a mark (:meth:`ResendDecoder._spliced`): the re-sent bytes are compared, not
  scanned again;
* msgspec splits the line into its fields as raw byte spans (``msgspec.Raw``: checked to be JSON, not built
  into objects), and those of the request body;
* a history array (``messages``, ``input``) whose leading bytes are the previous line's whole array is the
  previous line's decoded list plus the entries after it, which alone are decoded (one ``memcmp`` in
  place of a parse);
* a big history array is otherwise decoded entry by entry, identical small entries once
  (:func:`~ctxwatch.source.shared_loads`: one dict for 500,000 ``{"role": "user", "content": "hi"}``);
* a top-level field no reader reads (not one of ``read``) holding at least :data:`RAW_BYTES` is kept as its
  ``msgspec.Raw`` span, never built (a key holding millions of ``{}``); :func:`raw_default` digests it for a
  content hash;
* another request field (the tool schemas) whose bytes are the previous line's is that line's object;
* everything else is decoded by orjson, span by span: the value equals ``orjson.loads(line)``'s but for
  those raw spans.

A line the split does not take (not an object, a request that is not an object, anything msgspec refuses:
NaN, a lone surrogate, nesting near orjson's limit) is decoded by ``orjson.loads`` whole, as any other
reader's line, so that its damage is found and reported exactly as before.
"""

from __future__ import annotations

import re
from hashlib import blake2b
from typing import Any, NamedTuple

import msgspec
import orjson

from ctxwatch.source import shared_loads

#: A top-level field that no number needs is kept raw from this size (bytes) on: below it the field is decoded,
#: so that a record's content hash (written back by orjson) stays that of its decoded value; above it,
#: building it would cost many times its size for nothing.
RAW_BYTES = 1 << 20

#: A history array's bytes are kept for the next line's comparison below this size (they keep their line
#: alive: at most twice that size is held); a longer one is kept as its length and digest, and the next
#: line's same bytes are digested to compare (some 1 ms a megabyte, nothing beside decoding a line that long).
KEEP_BYTES = 4 << 20

#: The previous line's history array, up to its last entry: its bytes, or their length and digest.
_Head = msgspec.Raw | tuple[int, bytes]

#: Another request field holding an array or an object of this many bytes (from, up to) is taken from the
#: previous line when its bytes are the same: a request's tool schemas (some kilobytes), not a text.
_SAME_FROM, _SAME_UPTO = 256, 64 * 1024
_CONTAINERS = b"[{"

#: A previous history array of at least this many bytes is looked for in the next line before msgspec splits it:
#: where the line holds it, byte for byte, as the value of the same key, the line is split with that array
#: cut down to :data:`_MARK` (msgspec then scans a few kilobytes where it scanned the whole history).
SPLICE_FROM = 16 * 1024

#: What a history array's re-sent bytes are replaced by in a spliced line: a JSON string no line holds (a line
#: that holds it is not spliced), so that finding it at the head of the array proves the splice is there.
_MARK = b'"\\u0000ctxwatch:re-sent"'

_OBJECT = msgspec.json.Decoder(dict[str, msgspec.Raw])
_WS = b" \t\r\n"
_COMMA, _CLOSE = ord(","), ord("]")


def raw_default(value: Any) -> Any:
    """orjson's ``default`` for a value holding raw spans (:class:`ResendDecoder`), for a content hash: a
    ``msgspec.Raw`` is written as a short string holding the BLAKE2b digest of its bytes (the span is at least
    :data:`RAW_BYTES` long: written out, it would be copied twice more), marked by a leading NUL.

    Raises:
        TypeError: ``value`` is no ``msgspec.Raw`` (orjson then reports the value as not serializable).
    """
    if isinstance(value, msgspec.Raw):
        return "\x00raw:" + blake2b(memoryview(value), digest_size=16).hexdigest()
    raise TypeError(type(value).__name__)


class ResendDecoder:
    """A reader's line decoder (:attr:`ctxwatch.formats.Reader.decode`) for records whose request re-sends the
    previous one's history.  Call it with a line's bytes: it returns the value ``orjson.loads`` would (see the
    module's docstring for the raw spans it may hold), or raises ``orjson.JSONDecodeError`` where it does.

    Args:
        read: the top-level keys whose values the reader reads (always decoded, whatever their size).
        request: the top-level key of the request body (its ``body`` field, when an object, is read as the body).
        histories: the keys of a request body that hold its history array.

    State: the previous line's history arrays (their raw bytes, which keep that line's bytes alive, or for a
    long one their digest; and their decoded lists), replaced by each line decoded.
    """

    def __init__(self, read: frozenset[str], request: str = "request",
                 histories: tuple[str, ...] = ("messages", "input")) -> None:
        self.read = read
        self.request = request
        self.histories = histories
        # A record of none but the keys read is split in one pass, its request's fields with it (an unknown key,
        # or a request that is no object, is refused: the line is split again key by key); the decoded record
        # then holds its keys in this order, not the line's.
        self._names = sorted(read | {request})
        self._known = msgspec.json.Decoder(msgspec.defstruct(
            "Known", [(n, dict[str, msgspec.Raw] if n == request else msgspec.Raw, msgspec.UNSET)
                      for n in self._names], forbid_unknown_fields=True))
        self._prev: dict[tuple[str, ...], tuple[_Head, list[Any]]] = {}
        self._next: dict[tuple[str, ...], tuple[_Head, list[Any]]] = {}
        self._prev_same: dict[tuple[str, ...], tuple[bytes, Any]] = {}  # other fields: their bytes and value
        self._next_same: dict[tuple[str, ...], tuple[bytes, Any]] = {}
        self._splice: _Splice | None = None  # (the line being split with a history array cut, see _spliced)

    def __getstate__(self) -> dict[str, Any]:
        # (a run's saved state holds its reader: the previous line's arrays only save time, and msgspec's
        # decoder of the keys read is built again)
        return {"read": self.read, "request": self.request, "histories": self.histories}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["read"], state["request"], state["histories"])  # type: ignore[misc]

    def __call__(self, data: bytes) -> Any:
        self._next, self._next_same = {}, {}
        try:
            self._splice = self._spliced(data)
            value = self._record(data if self._splice is None else self._splice.line)
            if self._splice is not None:
                raise ValueError("the cut history array was not where it was cut")  # (not met: read whole)
        except Exception:  # (msgspec.DecodeError, orjson.JSONDecodeError, RecursionError, UnicodeDecodeError...)
            self._prev = self._next = {}
            self._prev_same = self._next_same = {}
            self._splice = None
            return orjson.loads(data)
        self._prev, self._next = self._next, {}
        self._prev_same, self._next_same = self._next_same, {}
        return value

    def _record(self, data: bytes) -> dict[str, Any]:
        out: dict[str, Any] = {}
        try:
            known = self._known.decode(data)
        except msgspec.ValidationError:
            pass
        else:
            for key in self._names:
                raw = getattr(known, key)
                if raw is msgspec.UNSET:
                    continue
                out[key] = self._fields(raw, (key,), nested=False) if key == self.request \
                    else orjson.loads(memoryview(raw))
            return out
        for key, raw in _OBJECT.decode(data).items():
            if key == self.request:
                out[key] = self._body(raw, (key,), nested=False)
            elif key in self.read or len(raw) < RAW_BYTES:
                out[key] = orjson.loads(memoryview(raw))
            else:
                if not data.isascii():
                    # (msgspec skips a string without checking its UTF-8; orjson refuses invalid UTF-8, and the
                    # line must then be decoded as today to report it)
                    str(memoryview(raw), "utf-8")
                out[key] = raw
        return out

    def _body(self, raw: msgspec.Raw, path: tuple[str, ...], *, nested: bool) -> Any:
        view = memoryview(raw)
        if view[0] != ord("{"):
            return orjson.loads(view)
        return self._fields(_OBJECT.decode(view), path, nested=nested)

    def _fields(self, fields: dict[str, msgspec.Raw], path: tuple[str, ...], *, nested: bool) -> dict[str, Any]:
        """A request body from its fields' raw spans: its history arrays through :meth:`_history`."""
        body: dict[str, Any] = {}
        for key, r in fields.items():
            if key in self.histories and memoryview(r)[0] == ord("["):
                body[key] = self._history(r, (*path, key))
            elif key == "body" and not nested:
                body[key] = self._body(r, (*path, key), nested=True)
            elif _SAME_FROM <= len(r) < _SAME_UPTO and memoryview(r)[0] in _CONTAINERS:
                # (the tool schemas, re-sent on every call: the previous line's object when the bytes are its)
                b = bytes(memoryview(r))
                prev = self._prev_same.get((*path, key))
                body[key] = prev[1] if prev is not None and prev[0] == b else orjson.loads(b)
                self._next_same[(*path, key)] = (b, body[key])
            else:
                body[key] = orjson.loads(memoryview(r))
        return body

    def _spliced(self, data: bytes) -> _Splice | None:
        """``data`` with a history array the previous line held (kept as its bytes, at least
        :data:`SPLICE_FROM` long) cut down to :data:`_MARK`, when ``data`` holds those bytes as the value of the
        same key, outside any string; else ``None``.

        The bytes before the array are the same in both lines, so a JSON parse is in the same state when it
        reaches the array in each; the re-sent bytes are whole entries after the array's ``[``, and the parse is
        in the same state after them as after the mark: the spliced line is valid JSON exactly when ``data``
        is, with the same structure, and the array's entries are the previous line's followed by the ones
        after the mark.  :meth:`_history` checks that the array at the key's path begins with the mark."""
        for path, (head, _before) in self._prev.items():
            if not isinstance(head, msgspec.Raw) or len(head) < SPLICE_FROM:
                continue
            cut = memoryview(head)
            at = data.find(cut[:64])
            n = len(cut)
            # (the mark may be in the cut bytes, a text quoting it: those are not in the spliced line)
            if at < 0 or msgspec.Raw(memoryview(data)[at:at + n]) != head \
                    or data.find(_MARK, 0, at) >= 0 or data.find(_MARK, at + n) >= 0:
                continue
            before = data[:at].rstrip(_WS)
            if not before.endswith(b":") or not before[:-1].rstrip(_WS).endswith(b'"%s"' % path[-1].encode()) \
                    or not _outside_strings(before):
                continue
            return _Splice(data[:at] + b"[" + _MARK + data[at + n:], path, data, at, n)
        return None

    def _history(self, raw: msgspec.Raw, path: tuple[str, ...]) -> list[Any]:
        """The entries of a history array, the previous line's decoded list reused for the bytes it shares."""
        view = memoryview(raw)
        entries: list[Any] | None = None
        prev = self._prev.pop(path, None)  # (dropped at once: it may keep the previous line's bytes alive)
        splice = self._splice if self._splice is not None and self._splice.path == path else None
        if splice is not None and prev is not None and bytes(view[1:1 + len(_MARK)]) == _MARK:
            # (the array the line was split with: its re-sent entries are the previous line's)
            self._splice = None
            entries = _followed(view[1 + len(_MARK):], prev[1])
            if entries is None:
                raise ValueError("no entry after the re-sent ones")
        elif prev is not None:
            splice = None
            head, before = prev
            n = len(head) if isinstance(head, msgspec.Raw) else head[0]
            if len(view) > n and (msgspec.Raw(view[:n]) == head if isinstance(head, msgspec.Raw)
                                  else _digest(view[:n]) == head[1]):
                entries = _followed(view[n:], before)
            del head, before
        else:
            splice = None
        del prev
        if entries is None:
            entries = shared_loads(view)
        end = len(view) - 1  # (the closing bracket, and the whitespace before it, are not the entries' bytes)
        while end > 1 and view[end - 1] in _WS:
            end -= 1
        # (the array's bytes in the line itself, for the next line to be compared with)
        span = view[:end] if splice is None else \
            memoryview(splice.data)[splice.at:splice.at + splice.cut + end - 1 - len(_MARK)]
        self._next[path] = (msgspec.Raw(span) if len(span) < KEEP_BYTES else (len(span), _digest(span)), entries)
        return entries


def _followed(rest: memoryview, before: list[Any]) -> list[Any] | None:
    """The entries of a history array whose first ones are ``before`` (the previous line's), ``rest`` being the
    array's bytes after those: ``]`` (none more) or ``,`` and the next entries; ``None`` for anything else."""
    i = 0
    while rest[i] in _WS:
        i += 1
    if rest[i] == _CLOSE:
        return list(before)
    if rest[i] == _COMMA and before:
        return before + shared_loads(b"[" + rest[i + 1:].tobytes())
    return None


def _digest(data: memoryview) -> bytes:
    return blake2b(data, digest_size=16).digest()


class _Splice(NamedTuple):
    """A line split with a history array cut (:meth:`ResendDecoder._spliced`): the spliced bytes, the array's
    key path, the line itself, where the array begins in it and how many of its bytes the previous line held."""

    line: bytes
    path: tuple[str, ...]
    data: bytes
    at: int
    cut: int


def _outside_strings(data: bytes) -> bool:
    """True when the end of ``data`` (the start of a JSON text) is outside any string: an even number of
    unescaped quotes before it (in JSON a quote inside a string is always escaped)."""
    quotes = 0
    for m in _QUOTE.finditer(data):
        if len(m.group(1)) % 2 == 0:
            quotes += 1
    return quotes % 2 == 0


#: A quote and the backslashes before it (an odd number escape it).
_QUOTE = re.compile(rb'(\\*)"')
