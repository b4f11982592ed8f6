"""Which raw lines of a Claude Code transcript need no JSON parse: the byte tests of the reader's pre-filter.

Most lines of a large session are bookkeeping (file-history snapshots, queue operations) or ``progress`` lines
(hook output, subagent copies) that carry nothing a number needs but their place in the ``parentUuid`` tree.
They are recognised, and their tree link read, from the raw bytes; anything unusual (glued records, a cut line)
is left to the JSON parse, so that its damage is reported.
"""

from __future__ import annotations

#: Line types that start a record Claude Code writes for its own bookkeeping and that carry no ``uuid`` (so they
#: are not part of the ``parentUuid`` tree): skipped without a JSON parse.
BOOKKEEPING_PREFIXES = (b'{"type":"file-history-snapshot"', b'{"type":"queue-operation"')

#: Bytes of a line's head searched for its top-level ``type`` (the envelope keys before ``type`` are short
#: scalars: ``parentUuid``, ``isSidechain``, ``userType``, ``cwd``, ``sessionId``, ``version``, ``gitBranch``,
#: ``agentId``, ``slug``; measured under 600 bytes in every sample).
HEAD_BYTES = 2048

#: Top-level ``type`` values (after ``"type":"``) of lines that are only links of the ``parentUuid`` tree once
#: a context's floor is known (:meth:`~ctxwatch.formats.claude_code.reader.ClaudeCodeReader._skip`).
LINK_TYPES = (b'user"', b'progress"', b'attachment"')

#: Longest id taken from a byte-level scan (uuids are 36 characters).
MAX_ID = 128


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
