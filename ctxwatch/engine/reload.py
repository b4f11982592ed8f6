"""Re-reading one call's text from disk, by its byte range, for the detail view and the planner.

A run keeps no message bodies: a call's summary remembers where its record is, and its format's reader reads
that record again (from the file's start, for formats whose calls depend on earlier records).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ctxwatch.engine.keys import RECORD_KEY_PREFIX
from ctxwatch.engine.run import Run
from ctxwatch.formats import FormatSpec, Output, Reader
from ctxwatch.model import Call, ParsedCall
from ctxwatch.source import Record, decode_line, iter_records, read_document


def reload_call(run: Run, index: int) -> ParsedCall | None:
    """Re-read call ``index`` of ``run`` from disk, text included (for the detail view and the planner).

    See :func:`reload_parsed`; returns ``None`` if the call can no longer be found.
    """
    return reload_parsed(run.spec, run.calls[index])


def reload_parsed(spec: FormatSpec, call: Call) -> ParsedCall | None:
    """Re-read one call's text from disk, given only its format and its summary (thread-safe: it touches
    no :class:`Run`, so a UI can call it while a reader thread owns the run).

    Formats whose calls depend on earlier records (``needs_prefix``) are re-read from the file's start up to
    the call's last byte; others from the record's own byte range.  Returns ``None`` if the file changed so
    that the call can no longer be found.
    """
    src = call.source
    reader = _reader_for(spec, call)
    # (a key the run gave from the record's content is not the reader's: the record is found by its place)
    want = call.key if call.key and not call.key.startswith(RECORD_KEY_PREFIX) else None
    found: ParsedCall | None = None

    def pick(outputs: Iterable[Output]) -> None:
        nonlocal found
        for out in outputs:
            if isinstance(out, ParsedCall) and (
                (want and out.key == want) or (not want and out.source.byte_start == src.byte_start
                                               and out.source.line == src.line)):
                found = out

    try:
        if spec.document:
            value, issue = read_document(src.path)
            pick(reader.feed_document(src.path if issue and src.path.endswith(".eval") else value))
            pick(reader.finish())
            return found
        if spec.needs_prefix:
            _scan(reader, src.path, pick, lambda rec: rec.byte_start >= src.byte_end and found is not None)
            return found
        with open(src.path, "rb") as fh:
            size = src.byte_end - src.byte_start
            if size > 0:
                fh.seek(src.byte_end - 1)
                size -= fh.read(1) == b"\n"  # (its newline is not read: stripping it would copy the line)
            fh.seek(src.byte_start)
            data = fh.read(max(0, size))
    except OSError:
        return None
    # (``data`` is dropped as soon as it is parsed: a line of tens of megabytes is not held twice while it is
    # parsed, nor at all while its messages are built)
    values, _ = decode_line(data, src.path, src.line, first=src.byte_start == 0, decode=reader.decode)
    del data
    outs = [o for i, v in enumerate(values)
            for o in reader.feed(Record(v, src.line, src.line_end, src.byte_start, src.byte_end, i))]
    pick(outs)
    if found is None and want and want.startswith("content:"):
        # A record keyed by its content (ctxwatch.formats.wire.dedupe.ResponseIds.content) is numbered among the
        # identical records read before it in its file; read alone it is the first: the same content is the call.
        found = next((o for o in outs if isinstance(o, ParsedCall) and o.key
                      and o.key.split(":", 2)[:2] == want.split(":", 2)[:2]), None)
    if found is None and want:
        # Not at its place: the file was truncated or rewritten since it was read (a followed log written
        # again), and the same call, found by its key, may stand elsewhere in it now.
        try:
            _scan(_reader_for(spec, call), src.path, pick)
        except OSError:
            return None
    return found


def _reader_for(spec: FormatSpec, call: Call) -> Reader:
    """A fresh reader of ``spec`` for ``call``'s file that keeps every call's text (the opened call needs it,
    whatever the summary pass left out); a joined batch call's reader is given its request file."""
    input_path = call.provenance.input_path
    reader = spec.reader(call.source.path, input_path=input_path) if input_path else spec.reader(call.source.path)
    reader.full_history = True
    return reader


def _scan(reader: Reader, path: str, pick: Callable[[Iterable[Output]], None],
          stop: Callable[[Record], bool] | None = None) -> None:
    """Feed ``reader`` the records of ``path`` from its start, each one's outputs and then the reader's last
    ones to ``pick``, until ``stop`` says a record is past what is looked for.

    Raises:
        OSError: the file cannot be read.
    """
    for rec in iter_records(path, skip=reader.skip, decode=reader.decode):
        if isinstance(rec, Record):
            if stop is not None and stop(rec):
                break
            pick(reader.feed(rec))
    pick(reader.finish())
