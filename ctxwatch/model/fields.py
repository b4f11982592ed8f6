"""A message field of the wrong JSON type, mended where the message is built and noted for the run's issues.

Every field of every log format may hold any JSON type: a tool-result id that is a number, a text that is an
object, a role that is a list.  :class:`~ctxwatch.model.Part` and :class:`~ctxwatch.model.Message` are where a
reader's values become typed, so they check their own fields (:func:`mend_part`, :func:`mend_message`): a value
of the wrong type is replaced by the "not given" value of its field (an empty text, no id, no name), so the
counters, the pairing of tool calls and the planner only ever see the types they expect, and the problem is
noted.  The run collects the notes made while a reader reads one record (:func:`collect_bad_fields`) and reports them as
an ``invalid_field`` issue of that record's file and line.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

_notes: ContextVar[list[str] | None] = ContextVar("ctxwatch_field_notes", default=None)


def json_type(v: object) -> str:
    """The JSON name of ``v``'s type: ``number``, ``string``, ``boolean``, ``null``, ``array``, ``object``."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int | float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list | tuple):
        return "array"
    if isinstance(v, dict):
        return "object"
    return type(v).__name__


def note_bad_field(sentence: str) -> None:
    """Note a field of the wrong type (one sentence) for the record being read; nothing when no run collects."""
    notes = _notes.get()
    if notes is not None and sentence not in notes:
        notes.append(sentence)


class collect_bad_fields:
    """Collect the notes of :func:`note_bad_field` made inside (one list, each sentence once), e.g. while a
    reader reads one record.  A class rather than a generator-based context manager: it is entered once per
    record of every log read."""

    __slots__ = ("_token", "notes")

    def __enter__(self) -> list[str]:
        self.notes: list[str] = []
        self._token = _notes.set(self.notes)
        return self.notes

    def __exit__(self, *exc: object) -> None:
        _notes.reset(self._token)


def _opt_text(v: Any) -> bool:
    return v is None or isinstance(v, str)


def mend_part(p: Any) -> None:
    """Replace each field of ``p`` (a :class:`~ctxwatch.model.Part`) that has the wrong type by its "not given"
    value, noting each.

    ``kind`` not a string: ``other``; ``text`` not a string: empty (no text is counted for it); ``name`` and
    ``call_id`` neither a string nor null: ``None`` (a tool result with no id pairs with no call); ``meta`` not
    an object: ``None``.
    """
    if not isinstance(p.kind, str):
        note_bad_field(f"a message part's kind is a JSON {json_type(p.kind)}, not a string: read as other")
        p.kind = "other"
    what = p.kind.replace("_", " ")
    if not isinstance(p.text, str):
        note_bad_field(f"a {what} part's text is a JSON {json_type(p.text)}, not a string: read as empty")
        p.text = ""
    if not _opt_text(p.name):
        note_bad_field(f"a {what} part's name is a JSON {json_type(p.name)}, not a string: read as none")
        p.name = None
    if not _opt_text(p.call_id):
        note_bad_field(f"a {what} part's tool call id is a JSON {json_type(p.call_id)}, not a string: read as "
                       "none (paired with no call)")
        p.call_id = None
    if p.meta is not None and not isinstance(p.meta, dict):
        p.meta = None


def mend_message(m: Any) -> None:
    """Replace each field of ``m`` (a :class:`~ctxwatch.model.Message`) that has the wrong type, noting each:
    ``role`` not a string: ``user`` (what an API reads a message as when it is neither a reply nor a tool
    result); ``parts`` not a list: none;
    ``name`` and ``label`` neither a string nor null: ``None``."""
    if not isinstance(m.role, str):
        note_bad_field(f"a message's role is a JSON {json_type(m.role)}, not a string: read as user")
        m.role = "user"
    if not isinstance(m.parts, list):
        m.parts = list(m.parts) if isinstance(m.parts, tuple) else []
    if not _opt_text(m.name):
        note_bad_field(f"a message's name is a JSON {json_type(m.name)}, not a string: read as none")
        m.name = None
    if not _opt_text(m.label):
        m.label = None
