"""The source stage: bytes of log files to lines and JSON values, and files followed as they grow.

Nothing here knows a log format.  :mod:`~ctxwatch.source.lines` splits bytes into lines (byte offsets kept) and
decodes a line into JSON values without ever raising; :mod:`~ctxwatch.source.tail` follows one file like
``tail -F`` (truncation, rotation, half-written lines).
"""

from ctxwatch.source.lines import (
    CHUNK_BYTES,
    DEFAULT_MAX_LINE_BYTES,
    MAX_INT_DIGITS,
    Line,
    LineSplitter,
    Record,
    decode_line,
    iter_records,
    json_text,
    read_document,
    show_value,
)
from ctxwatch.source.tail import (
    DEFAULT_IDLE_GRACE,
    DEFAULT_POLL_INTERVAL,
    DEFAULT_SWEEP_INTERVAL,
    FileTailer,
    Notice,
    Reset,
    filesystem_type,
    no_events,
)

__all__ = [
    "CHUNK_BYTES", "DEFAULT_IDLE_GRACE", "DEFAULT_MAX_LINE_BYTES", "DEFAULT_POLL_INTERVAL", "DEFAULT_SWEEP_INTERVAL",
    "MAX_INT_DIGITS", "FileTailer", "Line", "LineSplitter", "Notice", "Record", "Reset", "decode_line",
    "filesystem_type", "iter_records", "json_text", "no_events", "read_document", "show_value",
]
