"""The engine: a log (or a folder of them) read through its format reader into a :class:`Run` of accounted
calls, whole (:func:`load_run`, :func:`load_many`) or followed as it grows (:class:`Follower`).

Every view (``report``, ``check``, ``plan``, ``schema``, ``report --follow`` and the dashboard) reads through
here, so the same bytes give the same calls and numbers everywhere.
"""

from ctxwatch.engine.activity import last_call_time
from ctxwatch.engine.discovery import (
    COMPRESSED_SUFFIXES,
    LOG_SUFFIXES,
    list_logs,
    list_paths,
    skipped_note,
    unique_files,
)
from ctxwatch.engine.files import utc_day
from ctxwatch.engine.folder import load_many
from ctxwatch.engine.follow import Follower
from ctxwatch.engine.homes import Place, found_places, harness_places, nothing_found
from ctxwatch.engine.opening import (
    DETECT_RECORDS,
    JsonArray,
    LogError,
    UnknownFormat,
    check_log_file,
    empty_file_note,
    format_mismatch,
    resolve_spec,
)
from ctxwatch.engine.reading import load_run
from ctxwatch.engine.reload import reload_call, reload_parsed
from ctxwatch.engine.run import Change, Run

__all__ = [
    "COMPRESSED_SUFFIXES", "DETECT_RECORDS", "LOG_SUFFIXES", "Change", "Follower", "JsonArray", "LogError", "Place",
    "Run", "UnknownFormat", "check_log_file", "empty_file_note", "format_mismatch", "found_places",
    "harness_places", "last_call_time", "list_logs", "list_paths", "load_many", "load_run", "nothing_found",
    "reload_call", "reload_parsed", "resolve_spec", "skipped_note", "unique_files", "utc_day",
]
