"""Reading a whole log through the cache: from where the last read of the same file stopped, or from its start.

The run is saved after the file's last complete line, before the reader is told the file ended (a half-written
last line and the notes a finished read gives are not part of it), so reading on from there, or again to the same
end, gives exactly what a read from the start gives.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable, Iterator
from typing import NamedTuple

from ctxwatch.config import Settings
from ctxwatch.engine.cache import RunCache
from ctxwatch.engine.cachedb import prefix_hash
from ctxwatch.engine.opening import LogError, check_log_file, resolve_spec
from ctxwatch.engine.run import Run
from ctxwatch.formats import SNIFF_BYTES, FormatSpec
from ctxwatch.source import Line, read_lines
from ctxwatch.tokens import DEFAULT_ENCODING, get_tokenizer
from ctxwatch.tokens.server import CountServer
from ctxwatch.tokens.server import start as start_server


class Found(NamedTuple):
    """A log's entry in the cache: its ``key``, and the ``saved`` ``(run, offset, line)`` when it is valid."""

    key: str
    saved: tuple[Run, int, int] | None


def open_warm(cache: RunCache, path: str, fmt: str | None, settings: Settings | None) -> tuple[FormatSpec, Found]:
    """The format of ``path`` (``fmt``, or detected) and what the cache holds of it.  A saved run past the bytes
    detection looks at (:data:`~ctxwatch.formats.SNIFF_BYTES`, which are unchanged when the saved part is) gives
    its format without detecting it again; a saved run of another format than the file's now is not used.

    Raises:
        LogError: as :func:`~ctxwatch.engine.opening.resolve_spec`.
    """
    check_log_file(path, missing_ok=bool(fmt))  # (before the cache opens it: a FIFO would block)
    key = cache.key(path, fmt, settings or Settings())
    saved = cache.load(path, key) if os.path.exists(path) else None
    if saved is not None and not fmt and saved[1] >= SNIFF_BYTES:
        return saved[0].spec, Found(key, saved)
    spec = resolve_spec(path, fmt)
    if saved is not None and saved[0].spec.name != spec.name:
        saved = None  # (the file reads as another format now: read it from its start)
    return spec, Found(key, saved)


def _complete_lines(path: str, offset: int, line: int, progress: Callable[[int], None] | None,
                    end: list[int], on_chunk: Callable[[bytes], None] | None = None) -> Iterator[Line]:
    """The complete lines of ``path`` from ``offset``; ``end`` gets the offset and number after the last one."""
    for ln in read_lines(path, offset=offset, line=line, final=False, progress=progress, on_chunk=on_chunk):
        end[0], end[1] = ln.end, ln.number + 1
        yield ln


def read_warm(cache: RunCache, path: str, spec: FormatSpec, found: Found, settings: Settings | None,
              progress: Callable[[int, int], None] | None = None, *, commit: bool = True, keep_state: bool = True
              ) -> Run:
    """The finished run of the log ``path`` in ``spec``'s format (a stream of records, not a document), with
    ``found`` from :func:`open_warm`: the cached run of the same file read on from where it stopped, else a run
    read from the start; the state after its last complete line is saved for the next read (``keep_state=False``:
    only the entry a result is then kept on, for a finished log).

    Raises:
        LogError: the file cannot be read.
    """
    key, hit = found
    run, offset, line = hit if hit is not None else (Run(path, spec, settings), 0, 1)
    try:
        total = os.path.getsize(path)
    except OSError as exc:
        raise LogError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    cb = (lambda off: progress(off, total)) if progress else None
    run.accountant.saved = cache.counts  # (what an earlier read counted is not counted again)
    reader = run.reader
    reader.coalesce = True  # the whole file is read now: one emission per call is enough
    end = [offset, line]
    # A read from the start hashes the bytes as it reads them: the saved state's digest of the part read
    # (when the file ends with a complete line, the bytes read are that part).
    # (a first read of a big log: the encoding is loaded in a child, beside the parse, see tokens.server)
    server = counting_child(total) if offset == 0 else None
    digest = Hasher(threaded=total >= HASH_THREAD_BYTES) if offset == 0 and keep_state else None
    try:
        run.feed_lines(_complete_lines(path, offset, line, cb, end, digest.update if digest is not None else None))
        if hit is None or end[0] != offset:
            run.account_pending()  # (the saved state holds summaries, no parsed text)
            prefix = digest.digest() if digest is not None and digest.size == end[0] else None
            cache.store(path, key, run if keep_state else None, end[0], end[1], prefix=prefix, commit=commit)
        run.feed_lines(read_lines(path, offset=end[0], line=end[1], final=True))  # (the unterminated last line)
        run.finish()
    except OSError as exc:
        raise LogError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    finally:
        reader.coalesce = False
        if digest is not None:
            digest.close()
        if server is not None:
            server.close()
            get_tokenizer(server.encoding).server = None
    return run


#: Fewest bytes of a log read from its start for which the encoding is loaded in a child (forking costs some
#: milliseconds; a smaller log is read before the child would have loaded it).
COUNTING_CHILD_BYTES = 4 * 1024 * 1024


def counting_child(size: int, encoding: str = DEFAULT_ENCODING) -> CountServer | None:
    """A counting child (:func:`ctxwatch.tokens.server.start`) attached to ``encoding``'s tokenizer, for a read of
    ``size`` bytes from its start, or ``None``: a small log, the encoding already loaded here (or a child
    already counting), or no child possible."""
    tok = get_tokenizer(encoding)
    if size < COUNTING_CHILD_BYTES or tok.loaded or tok.server is not None:
        return None
    server = start_server(encoding)
    tok.server = server
    return server


#: Fewest bytes of a first read whose hash is computed on a thread beside the parse (:class:`Hasher`): XXH3 hashes a
#: smaller log in well under a millisecond, less than a thread takes to start and end (a folder's 993 logs of
#: 0.5 MB on average: 0.05 s hashed in place, 0.2-0.4 s with a thread each).
HASH_THREAD_BYTES = 64 * 1024 * 1024


class Hasher:
    """The digest (:func:`~ctxwatch.engine.cachedb.prefix_hash`) of the chunks given to :meth:`update`, in order.
    With ``threaded``, computed on a thread of its own: xxhash lets go of the interpreter lock while it hashes a
    big buffer, so a big first read's hash runs beside its parse.  :meth:`close` ends the thread (:meth:`digest`
    does too)."""

    def __init__(self, threaded: bool = True) -> None:
        self._hash = prefix_hash()
        self._chunks: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._threaded = threaded
        #: Bytes given so far.
        self.size = 0

    def _work(self) -> None:
        while (chunk := self._chunks.get()) is not None:
            self._hash.update(chunk)

    def update(self, chunk: bytes) -> None:
        """Hash ``chunk`` after the chunks given before it."""
        if not self._threaded:
            self._hash.update(chunk)
            self.size += len(chunk)
            return
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, name="ctxwatch-hash", daemon=True)
            self._thread.start()
        self._chunks.put(chunk)
        self.size += len(chunk)

    def digest(self) -> bytes:
        """The digest of every chunk given (16 bytes)."""
        self.close()
        return self._hash.digest()

    def close(self) -> None:
        """Wait for the chunks given to be hashed and end the thread."""
        if self._thread is not None:
            self._chunks.put(None)
            self._thread.join()
            self._thread = None
