"""Claude Code session transcripts (``~/.claude/projects/<cwd>/<session>.jsonl``).

* one API call = every ``type:"assistant"`` line with the same ``message.id`` + ``requestId``; each line holds
  one content block and a copy of ``message.usage`` whose ``output_tokens`` is a streaming placeholder on early
  lines, so the line with the largest ``output_tokens`` wins (:mod:`.calls`);
* prompt size (Anthropic's convention) = ``input_tokens + cache_creation_input_tokens +
  cache_read_input_tokens`` (:func:`~ctxwatch.formats.wire.anthropic.anthropic_usage`);
* the system prompt and tool schemas are not logged: ``system`` and ``tools`` are ``None`` and ``messages`` is
  only the visible history (``history_reported_only``);
* the visible history of a call is the ``parentUuid`` chain ending at the call's first line's parent, cut at
  the last ``compact_boundary`` (whose ``parentUuid`` is null), with the compaction summary labelled
  (:mod:`.tree`);
* ``isSidechain`` lines (v1.0.x inline subagents, v2.x ``subagents/agent-*.jsonl`` files, :mod:`.files`) are
  separate contexts and never mix with ``main``;
* Claude Code's other line types (``progress``, ``summary``, ``file-history-snapshot``, ``system``..., and any
  newer type on a line of its envelope) are skipped in silence; a line of no Claude Code shape (no ``type``, or
  an unknown one without the envelope: another log's record) is an ``unknown_record`` issue
  (:func:`~.lines.foreign_record`).

The reader (:mod:`.reader`) is incremental: a call is emitted on its first line and re-emitted (same ``key``) as
its later lines arrive, so a live tail shows it at once and the totals settle when the response is complete.

Counting only what a number needs: the floor (system prompt + tool schemas) is the same on every call of a
context, so it is inferred once, from a call whose history is whole (its chain reaches the session's root or a
``compact_boundary``): reported prompt minus that call's small estimated history.  By default
(``full_history = False``) calls carry their history until such a call is read in their context, and again
after each ``compact_boundary``; every other call carries ``messages=None`` and the accountant takes its
history as reported prompt minus the context's floor (:class:`~ctxwatch.accounting.Accountant`).  The user,
progress and attachment lines of a context in that state are skipped without a parse (:mod:`.prefilter`).
Message text is parsed and tokenized only when a call is opened (:func:`~ctxwatch.engine.reload.reload_parsed` sets
``full_history = True``).  This keeps a big projects folder near the speed of a reader that only sums usage,
and it is also the more faithful split: an o200k estimate of a long Claude history would push the tokenizer gap
into the floor, making a constant floor creep upward as the history grows.
"""

from __future__ import annotations

from ctxwatch.formats import FormatSpec, Sniff, register
from ctxwatch.formats.claude_code.content import content_parts, response_summary
from ctxwatch.formats.claude_code.files import SUBAGENT_COPIES, is_subagent_file, subagent_files_of
from ctxwatch.formats.claude_code.implausible import implausible_note
from ctxwatch.formats.claude_code.prefilter import HEAD_BYTES
from ctxwatch.formats.claude_code.reader import ClaudeCodeReader

__all__ = [
    "NAME", "SPEC", "SUBAGENT_COPIES", "ClaudeCodeReader", "content_parts", "implausible_note", "is_subagent_file",
    "response_summary", "sniff", "subagent_files_of",
]

NAME = "claude-code"

_ENVELOPE_TYPES = ("user", "assistant", "system", "progress", "attachment")


def sniff(sn: Sniff) -> float:
    """Confidence that a file is a Claude Code transcript.

    0.95 when a head record is an ``assistant`` line with ``message.usage`` and ``requestId``/``uuid``; 0.9 for
    a ``user``/``system``/``progress`` envelope with ``uuid`` and ``sessionId`` and a ``message`` or ``subtype``
    or ``data``; 0.6 when only bookkeeping lines (``summary`` with ``leafUuid``, ``file-history-snapshot``) are
    in the head; 0.8 / 0.6 from the raw head bytes when not even the first line fits in the sniffed head.  Other
    formats (Codex ``{timestamp,type,payload}``, Gemini CLI ``type:"user"`` without ``uuid``/``sessionId``,
    request/response wrappers) score 0.
    """
    score = 0.0
    for v in sn.values:
        if not isinstance(v, dict):
            continue
        kind = v.get("type")
        if kind == "assistant" and isinstance(v.get("message"), dict) and "usage" in v["message"] \
                and ("requestId" in v or "uuid" in v):
            return 0.95
        if kind in _ENVELOPE_TYPES and isinstance(v.get("uuid"), str) and "sessionId" in v \
                and ("message" in v or "subtype" in v or "data" in v):
            score = max(score, 0.9)
        elif (kind == "summary" and "leafUuid" in v) or (kind == "file-history-snapshot" and "snapshot" in v):
            score = max(score, 0.6)
    if score == 0.0 and not sn.values:
        # The first line is longer than the sniffed head (a big pasted prompt or snapshot): judge the raw bytes.
        head = sn.head.lstrip(b"\xef\xbb\xbf")
        if head.startswith(b'{"parentUuid":') and b'"sessionId":"' in head[:HEAD_BYTES]:
            return 0.8
        if head.startswith((b'{"type":"file-history-snapshot"', b'{"type":"summary","summary":')):
            return 0.6
    return score


SPEC = register(FormatSpec(
    name=NAME,
    description="Claude Code session transcripts (~/.claude/projects/*/*.jsonl, subagents/agent-*.jsonl)",
    sniff=sniff,
    reader=ClaudeCodeReader,
    needs_prefix=True,
    example="../shared/sample-logs/claude-code/spotter_short.jsonl",
    aliases=("claude", "cc"),
))
