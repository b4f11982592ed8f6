"""Which raw lines of a Claude Code transcript need no JSON parse: the reader's pre-filter.

Most lines of a large session are bookkeeping (file-history snapshots, queue operations) or ``progress`` lines
(hook output, subagent copies) that carry nothing a number needs but their place in the ``parentUuid`` tree,
and, once a context's floor is known, its user lines carry nothing a number needs either.  They are recognised,
and their tree link read, from a typed decode of their top-level keys alone (msgspec builds nothing else: a
progress line is judged in about half the time byte tests and a JSON check take), else from byte tests of the
raw line; anything unusual (glued records, a cut line) is left to the JSON parse, so that its damage is reported.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ctxwatch.formats.claude_code.tree import ParentTree
from ctxwatch.source import SKIP_CHECKED

#: Line types that start a record Claude Code writes for its own bookkeeping and that carry no ``uuid`` (so they
#: are not part of the ``parentUuid`` tree): skipped without a JSON parse.
BOOKKEEPING_PREFIXES = (b'{"type":"file-history-snapshot"', b'{"type":"queue-operation"')

#: Bytes of a line's head searched for its top-level ``type`` (the envelope keys before ``type`` are short
#: scalars: ``parentUuid``, ``isSidechain``, ``userType``, ``cwd``, ``sessionId``, ``version``, ``gitBranch``,
#: ``agentId``, ``slug``; measured under 600 bytes in every sample).
HEAD_BYTES = 2048

#: Top-level ``type`` values (after ``"type":"``) of lines that are only links of the ``parentUuid`` tree once
#: a context's floor is known (:meth:`LinePrefilter._skip`).
LINK_KINDS = ("user", "progress", "attachment")
LINK_TYPES = tuple(f'{kind}"'.encode() for kind in LINK_KINDS)  # (as the raw line has them, closing quote included)

#: Longest id taken from a byte-level scan (uuids are 36 characters).
MAX_ID = 128


class _Data(msgspec.Struct):
    """A ``progress`` line's ``data``: its ``type`` alone is read (``agent_progress``, ``hook_progress``...)."""

    type: Any = None


class Envelope(msgspec.Struct):
    """The top-level keys of a transcript line that the pre-filter reads, each ``None`` when absent (the rest of
    the line is checked to be JSON and skipped unbuilt).  A line in which one of them has another JSON type is
    not decoded into it (the byte tests read it)."""

    parentUuid: str | None = None
    isSidechain: bool | None = None
    sessionId: str | None = None
    agentId: str | None = None
    type: str | None = None
    uuid: str | None = None
    data: _Data | None = None


#: Decodes a line into its :class:`Envelope`; raises ``msgspec.DecodeError`` on any line that is not one JSON
#: object with those keys of those types (more than one record on the line included).
ENVELOPE = msgspec.json.Decoder(Envelope)


def ends_like_a_record(data: bytes) -> bool:
    """True when a raw line's last non-blank byte is ``}`` (a line cut mid-record almost never is; those must
    be parsed so that the cut is reported, not skipped unseen)."""
    if data.endswith(b"}"):
        return True  # (the common case, without a loop)
    end = len(data)
    while end and data[end - 1] in b" \t\r\n":
        end -= 1
    return end > 0 and data[end - 1] == 0x7D


def progress_link(data: bytes, i: int) -> tuple[str, str | None, bool, str | None] | None:
    """The tree link of a well-formed ``progress`` line ``data`` whose top-level ``"type":"`` is at byte ``i``:
    ``(uuid, parentUuid, isSidechain, agentId)``, or ``None`` when the line is unusual (more than one
    ``parentUuid``, no closing brace, an id longer than :data:`MAX_ID`): then it is parsed."""
    head = data[:i]
    body = data.rstrip(b"\r\n\t ")
    if not body.endswith(b"}") or body.count(b'"parentUuid":') != 1:
        return None
    if body.startswith(b'{"parentUuid":null'):
        parent = None
    elif body.startswith(b'{"parentUuid":"'):
        end = body.find(b'"', 15)
        if end < 0 or end - 15 > MAX_ID:
            return None
        parent = body[15:end].decode("utf-8", "replace")
    else:
        return None
    j = body.rfind(b'"uuid":"')
    if j < 0:
        return None
    k = body.find(b'"', j + 8)
    if k < 0 or k - (j + 8) > MAX_ID:
        return None
    uid = body[j + 8:k].decode("utf-8", "replace")
    agent = None
    a = head.find(b'"agentId":"')
    if a >= 0:
        e = head.find(b'"', a + 11)
        if e > a + 11:
            agent = head[a + 11:e].decode("utf-8", "replace")
    side = b'"isSidechain":true' in head
    return uid, parent, side, agent


class LinePrefilter:
    """The pre-filter of :class:`~ctxwatch.formats.claude_code.reader.ClaudeCodeReader` (a base class of it): the
    reader's ``skip``, which reads the state below and records the tree links of the ``progress`` lines it skips.

    A line whose envelope decodes (:data:`ENVELOPE`, typed) is judged on its top-level keys and is known to be
    JSON (its bytes checked to be UTF-8 too), so the filter returns :data:`~ctxwatch.source.SKIP_CHECKED` for it
    and the line is not checked again; any other line is judged by byte tests (:meth:`_skip_bytes`), and a line it
    skips is checked to be JSON by :func:`~ctxwatch.source.records`.
    """

    _file_context: str | None
    _floor_calls: dict[tuple[str | None, str], str]
    _tree: ParentTree
    full_history: bool
    agent_progress_lines: int
    _own_records: bool

    def _skip(self, data: bytes) -> int:
        """Truthy for lines that need no parse: bookkeeping lines (``file-history-snapshot``, ``queue-operation``:
        no ``uuid``), well-formed ``progress`` lines, whose tree link is recorded here (a large session's lines are
        mostly these), and the user / progress / attachment lines of a context whose floor is known.  Anything
        unusual (glued records, truncated lines) returns False and is parsed, so that its damage is reported (a
        cut line ends before its closing brace)."""
        if not ends_like_a_record(data):
            return False
        if data.startswith(BOOKKEEPING_PREFIXES):
            self._own_records = True
            return b'"parentUuid":' not in data
        if data.startswith(b'{"parentUuid":'):
            self._own_records = True  # (the reader's: a line of Claude Code's own envelope)
            try:
                env = ENVELOPE.decode(data)
            except (msgspec.DecodeError, RecursionError):
                pass
            else:
                return self._skip_envelope(data, env)
        return self._skip_bytes(data)

    def _skip_envelope(self, data: bytes, env: Envelope) -> int:
        """:meth:`_skip` of a line whose :class:`Envelope` decoded (so one JSON object): :data:`SKIP_CHECKED`
        once its bytes are found to be UTF-8 too (the decoder skips the strings it does not keep unchecked)."""
        kind = env.type
        if kind not in LINK_KINDS:
            return False
        if not data.isascii():
            try:
                data.decode("utf-8")
            except UnicodeDecodeError:
                return False
        progress = kind == "progress"
        if progress and self._file_context is None and env.data is not None and env.data.type == "agent_progress":
            self.agent_progress_lines += 1  # (said in a note at the end: see the reader's finish)
        if self._floor_calls and not self.full_history and env.parentUuid is not None:
            # As in _skip_bytes: no number needs the line (a v1.0.x sidechain line and a new root are parsed);
            # an id longer than the byte tests read is parsed too, and so is a line holding a requestId anywhere.
            ctx = self._file_context or ("main" if env.isSidechain is False else None)
            sid = env.sessionId
            if ctx is not None and (sid is None or len(sid) < MAX_ID) and (sid, ctx) in self._floor_calls \
                    and b'"requestId":' not in data:
                return SKIP_CHECKED
        if not progress or not env.uuid:
            return False  # (a progress line without a uuid is parsed: its node is named by its line)
        self._tree.add(env.uuid, env.parentUuid, True, env.isSidechain is True, env.agentId or None, "other")
        return SKIP_CHECKED

    def _skip_bytes(self, data: bytes) -> bool:
        """:meth:`_skip` of a line whose envelope did not decode, by byte tests of its head (the keys Claude Code
        writes first, in its order and without spaces); anything unusual is parsed."""
        if not data.startswith(b'{"parentUuid":') or data.find(b'{"parentUuid":', 1) >= 0:
            return False  # (a second record glued on: parse, and report it)
        i = data.find(b'"type":"', 0, HEAD_BYTES)  # (searched in place: slicing would copy every line's head)
        if i < 0:
            return False
        if data.startswith(b'progress"', i + 8) and self._file_context is None \
                and data.find(b'"type":"agent_progress"', i) >= 0:
            self.agent_progress_lines += 1  # (said in a note at the end: see finish)
        if self._floor_calls and not self.full_history and data.startswith(LINK_TYPES, i + 8) \
                and not data.startswith(b'{"parentUuid":null'):
            # A user / progress / attachment line of a context whose floor is known: no number needs it
            # (its text is read when a call is opened; a v1.0.x sidechain line is parsed, for its root; a new
            # root is parsed, as it makes the floor be inferred again).  (The line's head is read first: the
            # search of the whole line for a requestId comes last.)
            ctx = self._file_context or ("main" if data.find(b'"isSidechain":false', 0, i) >= 0 else None)
            if ctx is not None:
                j = data.find(b'"sessionId":"', 0, i)
                sid, cut = None, False  # (cut: an id longer than MAX_ID, parsed)
                if j >= 0:
                    e = data.find(b'"', j + 13, j + 13 + MAX_ID)
                    cut = e < 0
                    if not cut:
                        sid = data[j + 13:e].decode("utf-8", "replace")
                if (cut or (sid, ctx) in self._floor_calls) and b'"requestId":' not in data:
                    return not cut
        if not data.startswith(b'progress"', i + 8):
            return False
        link = progress_link(data, i)
        if link is None:
            return False
        uid, parent, side, agent = link
        self._tree.add(uid, parent, True, side, agent, "other")
        return True

