"""The engine: one log (or a folder of them) read through its format reader into a :class:`Run` of accounted
calls, whole or as it grows.

Every view (``report``, ``check``, ``plan``, ``schema``, ``report --follow`` and the dashboard) reads through
here, so the same bytes give the same calls and numbers everywhere.
"""

from ctxwatch.engine.folder import (
    COMPRESSED_SUFFIXES,
    LOG_SUFFIXES,
    last_call_time,
    list_logs,
    load_many,
    skipped_note,
    unique_files,
)
from ctxwatch.engine.run import (
    MAX_TOKENS,
    Change,
    JsonArray,
    LogError,
    Run,
    UnknownFormat,
    check_log_file,
    empty_file_note,
    load_run,
    reload_call,
    reload_parsed,
    resolve_spec,
)

__all__ = [
    "COMPRESSED_SUFFIXES", "LOG_SUFFIXES", "MAX_TOKENS", "Change", "JsonArray", "LogError", "Run", "UnknownFormat",
    "check_log_file", "empty_file_note", "last_call_time", "list_logs", "load_many", "load_run", "reload_call",
    "reload_parsed", "resolve_spec", "skipped_note", "unique_files",
]
