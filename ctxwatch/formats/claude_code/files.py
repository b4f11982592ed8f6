"""Where a Claude Code session's subagents write their calls: their own transcript files.

A subagent's calls are in ``agent-<agentId>.jsonl`` (v2.0.x beside the session file, v2.1.x under
``<session>/subagents/``); the session file only copies their messages in ``agent_progress`` lines, which are
never counted (they would count twice).
"""

from __future__ import annotations

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
    """The subagent transcripts of a Claude Code session file in the v2.1.x layout (``<session>/subagents/
    agent-*.jsonl`` beside ``<session>.jsonl``), sorted; ``[]`` when there are none or the
    folder cannot be listed.  (v2.0.x wrote ``agent-*.jsonl`` beside the sessions, tied to theirs only by the
    ``sessionId`` inside: not looked for here.)"""
    folder = os.path.join(os.path.splitext(session_path)[0], "subagents")
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return sorted(os.path.join(folder, n) for n in names if AGENT_FILE.search(n) and n.endswith(".jsonl"))
