"""The engine: a log (or a folder of them) read through its format reader into a :class:`Run` of accounted
calls, whole (:func:`load_run`, :func:`load_many`) or followed as it grows (:class:`Follower`).

Every view (``report``, ``check``, ``plan``, ``schema``, ``report --follow`` and the dashboard) reads through
here, so the same bytes give the same calls and numbers everywhere.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ctxwatch.engine.activity import last_call_time
    from ctxwatch.engine.cachedb import utc_day
    from ctxwatch.engine.change import Change
    from ctxwatch.engine.discovery import (
        COMPRESSED_SUFFIXES,
        LOG_SUFFIXES,
        list_logs,
        list_paths,
        skipped_note,
        unique_files,
    )
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
    from ctxwatch.engine.run import Run

#: Where each name lives: imported when first used, so that a command needing only the cache (a kept report
#: written again) does not import every reader.
_WHERE = {
    "COMPRESSED_SUFFIXES": "ctxwatch.engine.discovery",
    "Change": "ctxwatch.engine.change",
    "DETECT_RECORDS": "ctxwatch.engine.opening",
    "Follower": "ctxwatch.engine.follow",
    "JsonArray": "ctxwatch.engine.opening",
    "LOG_SUFFIXES": "ctxwatch.engine.discovery",
    "LogError": "ctxwatch.engine.opening",
    "Place": "ctxwatch.engine.homes",
    "Run": "ctxwatch.engine.run",
    "UnknownFormat": "ctxwatch.engine.opening",
    "check_log_file": "ctxwatch.engine.opening",
    "empty_file_note": "ctxwatch.engine.opening",
    "format_mismatch": "ctxwatch.engine.opening",
    "found_places": "ctxwatch.engine.homes",
    "harness_places": "ctxwatch.engine.homes",
    "last_call_time": "ctxwatch.engine.activity",
    "list_logs": "ctxwatch.engine.discovery",
    "list_paths": "ctxwatch.engine.discovery",
    "load_many": "ctxwatch.engine.folder",
    "load_run": "ctxwatch.engine.reading",
    "nothing_found": "ctxwatch.engine.homes",
    "reload_call": "ctxwatch.engine.reload",
    "reload_parsed": "ctxwatch.engine.reload",
    "resolve_spec": "ctxwatch.engine.opening",
    "skipped_note": "ctxwatch.engine.discovery",
    "unique_files": "ctxwatch.engine.discovery",
    "utc_day": "ctxwatch.engine.cachedb",
}


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'ctxwatch.engine' has no attribute {name!r}")
    value = getattr(importlib.import_module(where), name)
    globals()[name] = value
    return value


__all__ = [
    "COMPRESSED_SUFFIXES", "DETECT_RECORDS", "LOG_SUFFIXES", "Change", "Follower", "JsonArray", "LogError", "Place",
    "Run", "UnknownFormat", "check_log_file", "empty_file_note", "format_mismatch", "found_places",
    "harness_places", "last_call_time", "list_logs", "list_paths", "load_many", "load_run", "nothing_found",
    "reload_call", "reload_parsed", "resolve_spec", "skipped_note", "unique_files", "utc_day",
]
