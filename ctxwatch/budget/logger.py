"""A logger that writes each call of a loop as ctxwatch's canonical JSONL record, so ``ctxwatch PATH`` watches it.

This is the user's own log: ctxwatch itself never writes to the logs it reads.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import orjson


def _plain(obj: Any) -> Any:
    """orjson ``default``: SDK objects via ``model_dump()`` / ``to_dict()``, else their ``__dict__``."""
    for attr in ("model_dump", "to_dict", "dict"):
        fn = getattr(obj, attr, None)
        if callable(fn):
            try:
                return fn()
            except Exception:
                continue
    if hasattr(obj, "__dict__"):
        return {k: v for k, v in vars(obj).items() if not k.startswith("_")}
    raise TypeError(f"cannot serialise {type(obj).__name__}")


def utc_timestamp(when: datetime | float | None = None) -> str:
    """ISO-8601 UTC with milliseconds and a ``Z`` (``2025-01-01T00:00:00.000Z``); ``when`` = datetime or
    epoch seconds, default now. Naive datetimes are taken as UTC.

    Raises:
        ValueError: epoch seconds out of the range of dates (``1e20``, ``inf``, ``nan``)."""
    if when is None:
        dt = datetime.now(UTC)
    elif isinstance(when, datetime):
        dt = when if when.tzinfo else when.replace(tzinfo=UTC)
    else:
        try:
            dt = datetime.fromtimestamp(float(when), UTC)
        except (OverflowError, OSError, ValueError) as exc:  # (1e20 seconds, inf, nan: no date)
            raise ValueError(f"timestamp {when!r} is not a date (epoch seconds out of range)") from exc
    return dt.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class CallLogger:
    """Append one ctxwatch canonical JSONL record per API call, so ``ctxwatch PATH`` can watch any loop.

    Record (one line, see :mod:`ctxwatch.formats.canonical`)::

        {"timestamp": "2025-01-01T00:00:00.000Z",
         "request":  {"model": ..., "messages": [...], "tools": [...], "max_tokens": ...},
         "response": {..., "usage": {"prompt_tokens": ..., "completion_tokens": ...}}}

    ``request`` and ``response`` are the chat-completions bodies as sent and received (OpenAI shape); an
    Anthropic Messages body is written as given, which the canonical reader also accepts.  SDK objects are
    turned into dicts with their ``model_dump()``/``to_dict()``; no SDK is imported.

    The file is opened in append mode (created if missing) and each record is written with a single
    ``write`` of the whole line, so lines from concurrent writers do not interleave and every record is on
    disk as soon as :meth:`log` returns.  This is the user's own log: ctxwatch itself never writes to the
    logs it reads.

    Args:
        path: the JSONL file.
        session: optional session id written in every record (``"session"``).

    Raises:
        OSError: the file cannot be opened or written.
    """

    def __init__(self, path: str | os.PathLike[str], *, session: str | None = None) -> None:
        self.path = os.fspath(path)
        self.session = session
        self._fd: int | None = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._lock = threading.Lock()
        self.count = 0

    def log(self, request: dict[str, Any] | Any, response: dict[str, Any] | Any, *,
            timestamp: datetime | float | None = None, window: int | None = None) -> dict[str, Any]:
        """Append the record of one call and return it.

        Args:
            request: the request body; must have ``model`` and ``messages`` (``tools``, ``max_tokens``, ``system``
                and other parameters are kept as given).
            response: the response body (dict or SDK object); should hold ``usage``.
            timestamp: when the call was made (datetime or epoch seconds); default now (UTC).
            window: the context window in tokens, written as ``"window"`` when given.

        Raises:
            ValueError: ``request`` has no ``model`` or no ``messages``; the logger is closed; ``timestamp`` is
                out of the range of dates.
            TypeError: a value cannot be serialised (a lone surrogate in a string can: it is written as its
                ``\\ud800`` escape).
        """
        req = _plain(request) if not isinstance(request, dict) else request
        if not isinstance(req, dict) or "model" not in req or "messages" not in req:
            raise ValueError("request must be a dict with 'model' and 'messages'")
        resp = response if isinstance(response, dict) or response is None else _plain(response)
        record: dict[str, Any] = {"timestamp": utc_timestamp(timestamp)}
        if self.session:
            record["session"] = self.session
        if window:
            record["window"] = int(window)
        record["request"] = req
        record["response"] = resp
        try:
            line = orjson.dumps(record, default=_plain) + b"\n"
        except TypeError:
            # orjson refuses a lone surrogate (text decoded with errors="surrogateescape", a tool output cut in
            # the middle of a pair): the stdlib writes it as its \ud800 escape, which ctxwatch reads back, so the
            # call is logged as it was rather than stopping the user's loop (still TypeError for what JSON cannot
            # hold at all)
            line = json.dumps(record, default=_plain, ensure_ascii=True, separators=(",", ":")).encode() + b"\n"
        with self._lock:
            if self._fd is None:
                raise ValueError(f"CallLogger({self.path!r}) is closed")
            view = memoryview(line)
            while view:
                n = os.write(self._fd, view)
                view = view[n:]
            self.count += 1
        return record

    def log_call(self, model: str, messages: Sequence[dict[str, Any]], response: dict[str, Any] | Any, *,
                 tools: Sequence[dict[str, Any]] | None = None, max_tokens: int | None = None,
                 timestamp: datetime | float | None = None, **params: Any) -> dict[str, Any]:
        """Build the request from its parts and :meth:`log` it (``params`` are extra request parameters)."""
        req: dict[str, Any] = {"model": model, "messages": list(messages)}
        if tools:
            req["tools"] = list(tools)
        if max_tokens is not None:
            req["max_tokens"] = max_tokens
        req.update(params)
        return self.log(req, response, timestamp=timestamp)

    def close(self) -> None:
        """Close the file (idempotent)."""
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def __enter__(self) -> CallLogger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:  # pragma: no cover - best effort
        with contextlib.suppress(Exception):
            self.close()
