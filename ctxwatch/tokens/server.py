"""Token counts made in a forked child while the parent reads: building the encoding (a fifth of a second, holding
the interpreter lock) then runs beside the parse on another core.

The parent sends the texts it will count as soon as it has parsed them (:meth:`CountServer.send`) and takes each
count when the accountant asks for it (:meth:`CountServer.count`), waiting only for what the child has not
answered yet.  The child is a fork of the parent, so it counts exactly as the parent would
(:meth:`~ctxwatch.tokens.Tokenizer.count_cut` of its own tokenizer).  Requests and answers are length-prefixed
pickles on two pipes; the parent never blocks on a write without reading answers too, so neither side waits
for the other forever.  When the child cannot be started or dies, :meth:`count` returns ``None`` and the parent
counts itself.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
import struct
from collections.abc import Iterable

from ctxwatch.source.children import fork_child

#: Length prefix of a message on the pipes: 4 bytes, big-endian.
_LEN = struct.Struct(">I")


class CountServer:
    """A child process counting texts with ``encoding`` (its ranks loaded, in the child, at once).

    Use :func:`start`; :meth:`close` ends the child (also when the parent is done with it early)."""

    def __init__(self, encoding: str, pid: int, requests: int, answers: int) -> None:
        self.encoding = encoding
        self._pid = pid
        self._requests = requests
        self._answers = answers
        os.set_blocking(requests, False)
        self._out = bytearray()  # request bytes not written yet
        self._in = bytearray()  # answer bytes not decoded yet
        self._waiting: list[list[str]] = []  # batches sent, in order, whose answers have not come
        self._sent: set[tuple[int, int]] = set()  # (hash, length) of each text sent and not answered
        self.answered: dict[tuple[int, int], tuple[int, bool]] = {}
        self.dead = False
        self._ready = False  # (an answer came: the encoding is loaded there)

    def ready(self) -> bool:
        """True once the child answers (its encoding loaded), or is gone; reads what came, without waiting."""
        if not self._ready and not self.dead:
            self._pump(wait=False)
        return self._ready or self.dead

    def send(self, texts: Iterable[str]) -> None:
        """Ask for the counts of ``texts`` (those not asked for yet); returns without waiting."""
        if self.dead:
            return
        batch = []
        for t in texts:
            k = (hash(t), len(t))
            if t and k not in self._sent and k not in self.answered:
                self._sent.add(k)
                batch.append(t)
        if batch:
            data = pickle.dumps(batch, protocol=pickle.HIGHEST_PROTOCOL)
            self._out += _LEN.pack(len(data)) + data
            self._waiting.append(batch)
        self._pump(wait=False)

    def count(self, text: str) -> tuple[int, bool] | None:
        """``(tokens, estimated)`` of ``text`` as :meth:`~ctxwatch.tokens.Tokenizer.count_cut` gives it, from the
        child (asked for now when it was not sent before); ``None`` when the child is gone."""
        k = (hash(text), len(text))
        got = self.answered.pop(k, None)
        if got is not None:
            return got
        if k not in self._sent:
            self.send([text])
        while not self.dead:
            got = self.answered.pop(k, None)
            if got is not None:
                return got
            self._pump(wait=True)
        return None

    def _pump(self, *, wait: bool) -> None:
        """Write what requests fit in the pipe and read the answers that came; with ``wait``, block until one of
        the two moves."""
        try:
            want_write = [self._requests] if self._out else []
            readable, writable, _ = select.select([self._answers], want_write, [], None if wait else 0)
            if writable:
                n = os.write(self._requests, self._out)
                del self._out[:n]
            if readable:
                chunk = os.read(self._answers, 1 << 20)
                if not chunk:
                    raise EOFError("the counting child ended")
                self._in += chunk
                self._take()
        except (OSError, EOFError, ValueError, pickle.UnpicklingError):
            self._fail()

    def _take(self) -> None:
        while len(self._in) >= _LEN.size:
            (n,) = _LEN.unpack_from(self._in)
            if len(self._in) < _LEN.size + n:
                return
            counts = pickle.loads(bytes(self._in[_LEN.size:_LEN.size + n]))
            del self._in[:_LEN.size + n]
            batch = self._waiting.pop(0)
            self._ready = True
            for t, c in zip(batch, counts, strict=True):
                k = (hash(t), len(t))
                self._sent.discard(k)
                self.answered[k] = c

    def _fail(self) -> None:
        self.dead = True
        self.close()

    def close(self) -> None:
        """End the child and forget what it did not answer (idempotent)."""
        for fd in (self._requests, self._answers):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._requests = self._answers = -1
        if self._pid:
            # (killed rather than waited for: a child still loading its encoding would hold the read up)
            with contextlib.suppress(ProcessLookupError, OSError):
                os.kill(self._pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(self._pid, 0)
            self._pid = 0
        self.dead = True


def start(encoding: str) -> CountServer | None:
    """A :class:`CountServer` for ``encoding``, its child forked now, or ``None`` where one cannot help or be
    started safely: not Linux, fewer than 2 cores, another thread alive (a fork then copies a lock another
    thread may hold), or the fork failing (:func:`~ctxwatch.source.children.fork_child`)."""
    forked = fork_child(lambda requests, answers: _serve(encoding, requests, answers))
    if forked is None:
        return None
    pid, requests, answers = forked
    return CountServer(encoding, pid, requests, answers)


def _serve(encoding: str, requests: int, answers: int) -> None:
    """The child's loop: load the encoding, then answer each batch of texts with their counts, until the
    parent closes its end."""
    from ctxwatch.tokens.tokenizer import get_tokenizer

    tok = get_tokenizer(encoding).load()
    src = os.fdopen(requests, "rb")
    out = os.fdopen(answers, "wb")
    while True:
        head = src.read(_LEN.size)
        if len(head) < _LEN.size:
            return
        (n,) = _LEN.unpack(head)
        batch = pickle.loads(src.read(n))
        data = pickle.dumps([tok.count_cut(t) for t in batch], protocol=pickle.HIGHEST_PROTOCOL)
        out.write(_LEN.pack(len(data)) + data)
        out.flush()
