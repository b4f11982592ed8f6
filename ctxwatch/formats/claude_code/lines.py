"""The checks of a Claude Code transcript line's own shape: an object with a string ``type``, the ids that tie a
streamed response's lines into one call, and the envelope flags read as booleans.

Claude Code writes one line per content block of an API response, each with the response's ``message.id`` and
the request's ``requestId``; every real sample has both.  A line that breaks one of these is read as far as it
can be and said (an issue of its line), never dropped or split into extra calls in silence.
"""

from __future__ import annotations

from typing import Any

from ctxwatch.model import Issue, json_type, note_bad_field


def not_an_object(path: str, line: int, value: Any) -> Issue:
    """The ``unknown_record`` issue of a line that is valid JSON but no object (``[1, 2]``, ``null``, ``42``)."""
    return Issue(path, line, "unknown_record",
                 f"a JSON {json_type(value)}, not an object: not a Claude Code record; skipped")


def record_without_type(path: str, line: int, kind: Any) -> Issue:
    """The ``unknown_record`` issue of a line whose ``type`` is of another JSON type than a string."""
    return Issue(path, line, "unknown_record",
                 f"type is a JSON {json_type(kind)}, not a string: the kind of record is unknown; skipped")


def response_ids(v: dict[str, Any], msg: dict[str, Any]) -> tuple[str | None, str | None]:
    """``(message.id, requestId)`` of an assistant line, each ``None`` when it is not a string.  A message id of
    another type, or none beside a request id, is noted (an ``invalid_field`` issue of the line): the lines of
    the response are then one call by their request id."""
    mid, req = msg.get("id"), v.get("requestId")
    req = req if isinstance(req, str) and req else None
    if isinstance(mid, str) and mid:
        return mid, req
    if mid is not None and not isinstance(mid, str):
        note_bad_field(f"message.id is a JSON {json_type(mid)}, not a string: the response's lines are grouped "
                       + ("by requestId" if req else "by nothing: each line is a call"))
    elif req:
        note_bad_field("message.id is missing: the response's lines are grouped by requestId")
    return None, req


def session_id(v: dict[str, Any]) -> str | None:
    """A record's ``sessionId`` when it is a string, else ``None`` (another JSON type is noted as an
    ``invalid_field`` issue of the record)."""
    sid = v.get("sessionId")
    if isinstance(sid, str):
        return sid
    if sid is not None:
        note_bad_field(f"sessionId is a JSON {json_type(sid)}, not a string: the line has no session id")
    return None


def check_sidechain(v: dict[str, Any]) -> None:
    """Note an ``isSidechain`` that is neither ``true`` nor ``false`` (read as ``false``: the main context)."""
    side = v.get("isSidechain")
    if side is not None and side.__class__ is not bool:
        note_bad_field(f"isSidechain is a JSON {json_type(side)}, not true or false: read as false (the main "
                       "context)")


def call_key(mid: str | None, req: str | None, uid: str, by_request: dict[str, str]) -> str:
    """The key of the call an assistant line belongs to: its message id with its request id; without a message
    id, the call its request id names (``by_request``: request id -> key, filled here), else the line alone
    (``uid``).  A line with a message id joins the call of its request's earlier lines that had none."""
    if not req:
        return f"{mid}:" if mid else f"uuid:{uid}"
    known = by_request.get(req)
    if mid:
        if known is not None and known == f"request:{req}":
            return known
        key = f"{mid}:{req}"
        if known is None:
            by_request[req] = key
        return key
    if known is None:
        known = by_request[req] = f"request:{req}"
    return known
