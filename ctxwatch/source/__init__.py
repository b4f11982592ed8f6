"""The source stage: bytes of log files to lines and JSON values, and files followed as they grow.

Nothing here knows a log format.  :mod:`~ctxwatch.source.lines` splits bytes into lines (byte offsets kept),
:mod:`~ctxwatch.source.decode` turns lines into JSON values without ever raising, :mod:`~ctxwatch.source.tailer`
follows one file like ``tail -F`` and :mod:`~ctxwatch.source.wake` says when to look at it again.
"""

from ctxwatch.source.decode import (
    MAX_INT_DIGITS,
    SKIP_CHECKED,
    Record,
    decode_line,
    iter_records,
    read_document,
    records,
    shared_loads,
)
from ctxwatch.source.jsontext import json_text, show_value
from ctxwatch.source.lines import CHUNK_BYTES, DEFAULT_MAX_LINE_BYTES, Line, LineSplitter, read_lines, skip_to_end
from ctxwatch.source.resets import DEFAULT_IDLE_GRACE, RESET_REASONS, Reset
from ctxwatch.source.tailer import FileTailer
from ctxwatch.source.wake import (
    DEFAULT_POLL_INTERVAL,
    DEFAULT_SWEEP_INTERVAL,
    Wake,
    Waker,
    Watcher,
    filesystem_type,
    no_events,
)

__all__ = [
    "CHUNK_BYTES", "DEFAULT_IDLE_GRACE", "DEFAULT_MAX_LINE_BYTES", "DEFAULT_POLL_INTERVAL", "DEFAULT_SWEEP_INTERVAL",
    "MAX_INT_DIGITS", "RESET_REASONS", "SKIP_CHECKED", "FileTailer", "Line", "LineSplitter", "Record", "Reset",
    "Wake", "Waker", "Watcher", "decode_line", "filesystem_type", "iter_records", "json_text", "no_events",
    "read_document", "read_lines", "records", "shared_loads", "show_value", "skip_to_end",
]
