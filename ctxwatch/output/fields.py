"""Values every JSON surface writes the same way: a timestamp as ISO-8601 text, the agent instance of a call."""

from __future__ import annotations

import os
from collections.abc import Iterable
from datetime import UTC, datetime

from ctxwatch.model import Call


def iso(ts: float | None) -> str | None:
    """ISO-8601 UTC text for epoch seconds (``None`` stays ``None``)."""
    if ts is None:
        return None
    try:
        return datetime.fromtimestamp(ts, tz=UTC).isoformat().replace("+00:00", "Z")
    except (OverflowError, OSError, ValueError):
        return None


def instance_of(call: Call) -> dict[str, str] | None:
    """The agent instance that made the call, as its log names it (an OpenTelemetry resource's ``service.name``,
    ``service.instance.id`` and ``host.name``), or ``None`` for a log that names none: ``report --json`` then
    leaves the key out, so that the document of every other log stays as it was."""
    inst = call.provenance.details.get("instance")
    return inst if isinstance(inst, dict) and inst else None


def file_names(paths: Iterable[str]) -> dict[str, str]:
    """A short name for each file of a text output: its base name, or where two files share one (a folder's
    ``a/log.jsonl`` and ``b/log.jsonl``) its path below the folder the files have in common, so that no two files
    are named alike."""
    unique = sorted(set(paths))
    base = [os.path.basename(p) for p in unique]
    if len(set(base)) == len(base):
        return dict(zip(unique, base, strict=True))
    try:
        top = os.path.commonpath([os.path.dirname(os.path.abspath(p)) for p in unique])
    except ValueError:  # (paths on different drives)
        return {p: p for p in unique}
    return {p: os.path.relpath(os.path.abspath(p), top) for p in unique}

