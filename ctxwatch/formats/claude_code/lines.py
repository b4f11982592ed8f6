"""The checks of a Claude Code transcript line's own shape: an object with a string ``type``, the ids that tie a
streamed response's lines into one call, and the envelope flags read as booleans.

Claude Code writes one line per content block of an API response, each with the response's ``message.id`` and
the request's ``requestId``; every real sample has both.  A line that breaks one of these is read as far as it
can be and said (an issue of its line), never dropped or split into extra calls in silence.
"""

from __future__ import annotations

from typing import Any

from ctxwatch.model import Issue, json_type, note_bad_field
from ctxwatch.source import show_value


def not_an_object(path: str, line: int, value: Any) -> Issue:
    """The ``unknown_record`` issue of a line that is valid JSON but no object (``[1, 2]``, ``null``, ``42``)."""
    return Issue(path, line, "unknown_record",
                 f"a JSON {json_type(value)}, not an object: not a Claude Code record; skipped")


def record_without_type(path: str, line: int, kind: Any) -> Issue:
    """The ``unknown_record`` issue of a line whose ``type`` is of another JSON type than a string."""
    return Issue(path, line, "unknown_record",
                 f"type is a JSON {json_type(kind)}, not a string: the kind of record is unknown; skipped")


#: The ``type`` values Claude Code writes (those of the real transcripts of v1.0.98 to v2.1.39, and the client's
#: bookkeeping lines of later releases: titles, permission mode): every other value, on a line without Claude
#: Code's envelope (:data:`ENVELOPE_KEYS`), is a record of another log, not a new line type of Claude Code's.
CLAUDE_CODE_TYPES = frozenset({"user", "assistant", "system", "summary", "progress", "file-history-snapshot",
                               "queue-operation", "attachment", "custom-title", "ai-title", "permission-mode",
                               "mode"})

#: Envelope keys Claude Code writes on its records (every user, assistant, system and progress line of the real
#: transcripts has them; a v1.x summary line has ``leafUuid``): a line with one of them and a
#: ``type`` of no known kind is a line type newer than this reader, skipped in silence as Claude Code's
#: own bookkeeping (new ones appear every few releases).
ENVELOPE_KEYS = ("uuid", "parentUuid", "sessionId", "isSidechain", "leafUuid")

#: Top-level keys an issue names of a record that is not Claude Code's (the first ones, in the record's order).
SHOWN_KEYS = 6


def foreign_record(path: str, line: int, v: dict[str, Any]) -> Issue | None:
    """The ``unknown_record`` issue of an object that is no Claude Code record (``None`` for one that is): no
    ``type`` key, or a ``type`` Claude Code does not write (:data:`CLAUDE_CODE_TYPES`) without any of its
    envelope keys (:data:`ENVELOPE_KEYS`).  A known type is read as Claude Code's, its damaged fields said where
    they are read.  The issue names the record's keys, so that a record of another log format appended to a
    transcript (a canonical ``{request, response}`` record, a Codex rollout line) is recognisable."""
    kind = v.get("type")
    if "type" in v and (kind in CLAUDE_CODE_TYPES or any(k in v for k in ENVELOPE_KEYS)):
        return None
    keys = list(v)
    shown = ", ".join(str(k) for k in keys[:SHOWN_KEYS]) + (", ..." if len(keys) > SHOWN_KEYS else "")
    what = (f"no type key (keys: {shown or 'none'})" if "type" not in v else
            f"type {show_value(kind)} without Claude Code's envelope (uuid, parentUuid, sessionId; keys: {shown})")
    return Issue(path, line, "unknown_record", f"{what}: not a Claude Code record; skipped")


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
