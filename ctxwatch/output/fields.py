"""Values every JSON surface writes the same way: a timestamp as ISO-8601 text, the agent instance of a call."""

from __future__ import annotations

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
