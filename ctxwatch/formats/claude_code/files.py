"""Where a Claude Code session's subagents write their calls: their own transcript files.

A subagent's calls are in ``agent-<agentId>.jsonl`` (v2.0.x beside the session file, v2.1.x under
``<session>/subagents/``); the session file only copies their messages in ``agent_progress`` lines, which are
never counted (they would count twice).
"""

from __future__ import annotations

import functools
import os
import re

#: Subagent transcript file names: ``agent-<agentId>.jsonl`` (v2.0.x beside the session file, v2.1.x under
#: ``<session>/subagents/``).  Also matches flattened sample names
#: such as ``spotter_4d5611e5_subagents_agent-a2898e3.jsonl``, but not any name that merely holds ``agent-``
#: (``team_agent-log.jsonl`` is a main session; ``*_agent-sessions_*`` are other tools' logs).
AGENT_FILE = re.compile(r"(?:^|[/\\]|_subagents_)agent-([A-Za-z0-9][A-Za-z0-9_.-]*?)\.jsonl$")

#: Note kind: a main session file ran subagents (``agent_progress`` lines copy their messages), whose calls are
#: in their own transcripts, not in this file.  A folder read that includes those
#: transcripts drops it (:func:`ctxwatch.engine.folder.load_many`).
SUBAGENT_COPIES = "subagent_calls_elsewhere"


def is_subagent_file(path: str) -> bool:
    """True for a Claude Code subagent transcript: ``agent-<id>.jsonl`` beside its session (v2.0.x) or under
    ``<session>/subagents/`` (v2.1.x) (the name decides, as for the reader's contexts)."""
    return bool(AGENT_FILE.search(os.path.basename(path)))


def subagent_files_of(session_path: str) -> list[str]:
    """The subagent transcripts of a Claude Code session file: those of the v2.1.x layout
    (``<session>/subagents/agent-*.jsonl`` beside ``<session>.jsonl``), sorted, then the v2.0.x ones
    (``agent-*.jsonl`` beside the session file, tied to it only by the ``sessionId`` inside,
    :func:`session_id_of`), sorted; ``[]`` for a subagent transcript itself, or when there are none or the
    folders cannot be listed."""
    if is_subagent_file(session_path):
        return []
    found = _agent_files(os.path.join(os.path.splitext(session_path)[0], "subagents"))
    beside = _agent_files(os.path.dirname(session_path) or ".")
    if beside and (sid := session_id_of(session_path)) is not None:
        found += [p for p in beside if session_id_of(p) == sid]
    return found


def named_session_of(transcript: str) -> str | None:
    """The file Claude Code names the session of the subagent transcript ``transcript``: ``<session>.jsonl``
    beside its ``subagents/`` folder (v2.1.x), or ``<sessionId>.jsonl`` beside the transcript (v2.0.x, its first
    ``sessionId``: :func:`session_id_of`); ``None`` when it names none.  The file may not exist."""
    folder = os.path.dirname(transcript)
    if os.path.basename(folder) == "subagents":
        return os.path.dirname(folder) + ".jsonl"
    sid = session_id_of(transcript)
    return os.path.join(folder, f"{sid}.jsonl") if sid and os.sep not in sid and sid not in (".", "..") else None


def _agent_files(folder: str) -> list[str]:
    """The subagent transcripts (by name) in ``folder``, sorted; ``[]`` when it cannot be listed."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return sorted(os.path.join(folder, n) for n in names if AGENT_FILE.search(n) and n.endswith(".jsonl"))


#: Bytes of a transcript's head searched for its ``sessionId`` (every line's envelope holds it, in its first
#: few hundred bytes; a first line of another kind, a file-history snapshot, can be longer).
SESSION_ID_HEAD = 64 * 1024

_SESSION_ID = re.compile(rb'"sessionId":"([^"\\]{1,128})"')


def session_id_of(path: str) -> str | None:
    """The first ``sessionId`` in the head of the Claude Code transcript ``path`` (its first 4 KiB, else
    :data:`SESSION_ID_HEAD` bytes), or ``None`` when it has none there or cannot be read.  Remembered per
    path, size and modification time: a folder's sessions each look through the same transcripts.  Only
    read, never written."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return _session_id(path, st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=4096)
def _session_id(path: str, size: int, mtime_ns: int) -> str | None:
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
            m = _SESSION_ID.search(head)
            if m is None and len(head) == 4096:
                head += fh.read(SESSION_ID_HEAD - len(head))
                m = _SESSION_ID.search(head)
    except OSError:
        return None
    return m.group(1).decode("utf-8", "replace") if m else None
