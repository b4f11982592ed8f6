"""Claude Code session transcripts (``~/.claude/projects/<cwd>/<session>.jsonl``).

Field layout, call delimiting and pitfalls: ``../shared/sample-logs/FORMATS.md`` section 1.  In short:

* one API call = every ``type:"assistant"`` line with the same ``message.id`` + ``requestId``; each line holds
  one content block and a copy of ``message.usage`` whose ``output_tokens`` is a streaming placeholder on early
  lines, so the line with the largest ``output_tokens`` wins (failure case B11);
* prompt size (Anthropic convention, FORMATS.md section 0) = ``input_tokens + cache_creation_input_tokens +
  cache_read_input_tokens`` (failure case B08);
* the system prompt and tool schemas are not logged: ``system`` and ``tools`` are ``None`` and ``messages`` is
  only the visible history (``history_reported_only``);
* the visible history of a call is the ``parentUuid`` chain ending at the call's first line's parent, cut at
  the last ``compact_boundary`` (whose ``parentUuid`` is null), with the compaction summary labelled
  (failure case B23);
* ``isSidechain`` lines (v1.0.x inline subagents, v2.x ``subagents/agent-*.jsonl`` files) are separate
  contexts and never mix with ``main``.

The reader is incremental: a call is emitted on its first line and re-emitted (same ``key``) as its later
lines arrive, so a live tail shows it at once and the totals settle when the response is complete.

Counting only what a number needs: the floor (system prompt + tool schemas) is the same on every call of a
context, so it is inferred once, from a call whose history is whole (its chain reaches the session's root or a
``compact_boundary``): reported prompt minus that call's small estimated history.  By default
(``full_history = False``) calls carry their history until such a call is read in their context, and again
after each ``compact_boundary``; every other call carries ``messages=None`` and the accountant takes its
history as reported prompt minus the context's floor (:class:`~ctxwatch.accounting.Accountant`).  The user,
progress and attachment lines of a context in that state are skipped without a parse.  Message text is parsed
and tokenized only when a call is opened (:func:`~ctxwatch.engine.run.reload_parsed` sets ``full_history = True``).
This keeps a big projects folder near the speed of a reader that only sums usage, and it is also the more
faithful split: an o200k estimate of a long Claude history would push the tokenizer gap into the floor, making a
constant floor creep upward as the history grows.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ctxwatch.accounting.windows import largest_window, proves_long_context, resolve_window
from ctxwatch.formats import FormatSpec, Output, Reader, Sniff, count_or_none, not_a_count, register, usage_count
from ctxwatch.formats.wire.anthropic import anthropic_usage
from ctxwatch.formats.wire.images import image_size_from_base64
from ctxwatch.formats.wire.timestamps import parse_timestamp
from ctxwatch.model import (
    MAX_PLAUSIBLE_PROMPT,
    Issue,
    Message,
    ParsedCall,
    Part,
    Resolved,
    ResponseInfo,
    SourceRef,
    Usage,
    implausible_prompt,
)
from ctxwatch.source import Record, json_text, show_value

NAME = "claude-code"

#: Subagent transcript file names: ``agent-<agentId>.jsonl`` (v2.0.x beside the session file, v2.1.x under
#: ``<session>/subagents/``), FORMATS.md section 1 "Location and files".  Also matches flattened sample names
#: such as ``spotter_4d5611e5_subagents_agent-a2898e3.jsonl``, but not any name that merely holds ``agent-``
#: (``team_agent-log.jsonl`` is a main session; ``*_agent-sessions_*`` are other tools' logs).
_AGENT_FILE = re.compile(r"(?:^|[/\\]|_subagents_)agent-([A-Za-z0-9][A-Za-z0-9_.-]*?)\.jsonl$")

#: Line types that start a record Claude Code writes for its own bookkeeping and that carry no ``uuid`` (so they
#: are not part of the ``parentUuid`` tree): skipped without a JSON parse (FORMATS.md section 1, "Line types").
_BOOKKEEPING_PREFIXES = (b'{"type":"file-history-snapshot"', b'{"type":"queue-operation"')

#: Bytes of a line's head searched for its top-level ``type`` (the envelope keys before ``type`` are short
#: scalars: ``parentUuid``, ``isSidechain``, ``userType``, ``cwd``, ``sessionId``, ``version``, ``gitBranch``,
#: ``agentId``, ``slug``; measured under 600 bytes in every sample).
_HEAD_BYTES = 2048

#: Top-level ``type`` values (after ``"type":"``) of lines that are only links of the ``parentUuid`` tree once
#: a context's first call is read (see :meth:`ClaudeCodeReader._skip`).
_LINK_TYPES = (b'user"', b'progress"', b'attachment"')

#: Longest id we accept from a byte-level scan (uuids are 36 characters).
_MAX_ID = 128


#: Note kind: a main session file ran subagents (``agent_progress`` lines copy their messages, FORMATS.md
#: section 1), whose calls are in their own transcripts, not in this file.  A folder read that includes those
#: transcripts drops it (:func:`ctxwatch.engine.folder.load_many`).
SUBAGENT_COPIES = "subagent_calls_elsewhere"


# --- small helpers -------------------------------------------------------------------------------------------


def is_subagent_file(path: str) -> bool:
    """True for a Claude Code subagent transcript: ``agent-<id>.jsonl`` beside its session (v2.0.x) or under
    ``<session>/subagents/`` (v2.1.x), FORMATS.md section 1 (the name decides, as for the reader's contexts)."""
    return bool(_AGENT_FILE.search(os.path.basename(path)))


def subagent_files_of(session_path: str) -> list[str]:
    """The subagent transcripts of a Claude Code session file in the v2.1.x layout (``<session>/subagents/
    agent-*.jsonl`` beside ``<session>.jsonl``, FORMATS.md section 1), sorted; ``[]`` when there are none or the
    folder cannot be listed.  (v2.0.x wrote ``agent-*.jsonl`` beside the sessions, tied to theirs only by the
    ``sessionId`` inside: not looked for here.)"""
    folder = os.path.join(os.path.splitext(session_path)[0], "subagents")
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return sorted(os.path.join(folder, n) for n in names if _AGENT_FILE.search(n) and n.endswith(".jsonl"))


#: Rank of a damaged ``output_tokens`` when a response's lines compete for its usage: above every real count.
_DAMAGED_RANK = 2**63


def _b64_meta(source: Any) -> dict[str, Any]:
    """Image/document metadata from an Anthropic ``source`` block: decoded ``bytes``, ``media_type`` and, for
    base64 images, ``width``/``height`` read from the file header (cheap: only the first bytes are decoded)."""
    meta: dict[str, Any] = {}
    if not isinstance(source, dict):
        return meta
    if isinstance(source.get("media_type"), str):
        meta["media_type"] = source["media_type"]
    data = source.get("data")
    if source.get("type") == "base64" and isinstance(data, str):
        meta["bytes"] = len(data) * 3 // 4 - data[-2:].count("=")
        size = image_size_from_base64(data)
        if size:
            meta["width"], meta["height"] = size
    elif isinstance(source.get("url"), str):
        meta["url"] = source["url"]
    return meta


def response_summary(content: Any) -> tuple[list[Part], int]:
    """The parts of an assistant ``message.content`` that a call summary needs, without converting the rest.

    Returns ``(text parts, number of tool_use / server_tool_use blocks)``; tool inputs and thinking blocks
    are not serialised (they are read again from disk when the call is opened).
    """
    if isinstance(content, str):
        return [Part("text", content)], 0
    if not isinstance(content, list):
        return [], 0
    texts: list[Part] = []
    n = 0
    for block in content:
        if isinstance(block, dict):
            kind = block.get("type")
            if kind == "text":
                text = block.get("text")
                texts.append(Part("text", text if isinstance(text, str) else ""))
            elif kind == "tool_use" or kind == "server_tool_use":
                n += 1
        elif isinstance(block, str):
            texts.append(Part("text", block))
    return texts, n


def _session_id(v: dict[str, Any]) -> str | None:
    """A record's ``sessionId`` when it is a string, else ``None``."""
    sid = v.get("sessionId")
    return sid if isinstance(sid, str) else None


def _has_prompt(usage: Any, model: str | None) -> bool:
    """True when an Anthropic usage block reports a plausible prompt of ``model``: at least one token, and no
    more than the largest window the model can have (:func:`ctxwatch.accounting.windows.largest_window`; failure case
    B13: a report above it is no occupancy, and a floor inferred from it would hide every later call's)."""
    u = anthropic_usage(usage)
    if u is None or not u.prompt_total:
        return False
    return not implausible_prompt(u.prompt_total, largest_window(model, "anthropic"))


#: Largest token count the run takes from a log (``ctxwatch.engine.run.MAX_TOKENS``, 2**53, not imported: the run
#: imports the readers): a larger count is damage that :func:`ctxwatch.engine.run._sanitize` reports and makes unknown.
_MAX_COUNT = 2**53


def _whole_prompt(usage: Any) -> tuple[Usage, int] | None:
    """The normalized usage block and its prompt (tokens) when its three parts are all whole counts below 2**53,
    as the run keeps them (:func:`ctxwatch.engine.run._sanitize` makes the prompt of a damaged part unknown), else
    ``None``.  ``usage``: the raw ``message.usage`` block, or its :func:`anthropic_usage` already made (each
    call's is made once per emission: this runs for every call of a folder)."""
    u = usage if isinstance(usage, Usage) else anthropic_usage(usage)
    if u is None:
        return None
    parts = (u.input_uncached, u.cache_write, u.cache_read)
    if not all(p.__class__ is int and 0 <= p < _MAX_COUNT for p in parts):
        return None
    prompt = u.prompt_total
    if prompt is None or prompt >= _MAX_COUNT:
        return None
    return u, prompt


def implausible_note(usage: Any, model: str | None, *, long_context: bool = False) -> str | None:
    """The ``implausible_usage`` note of a Claude Code call whose kept ``message.usage`` block (``usage``, raw or
    normalized as :func:`_whole_prompt` takes it) reports a prompt no request of ``model`` can have (failure case
    B13), or ``None``.

    The rule is :func:`_has_prompt`'s, which is the accountant's for a call whose system prompt and tools are
    not logged (no estimate can confirm the report, :func:`ctxwatch.model.estimate_confirms`): a prompt
    (``input_tokens + cache_creation_input_tokens + cache_read_input_tokens``, tokens) of 0, or above the
    largest window the model can have (:func:`ctxwatch.accounting.windows.largest_window`; 10,000,000 tokens,
    :data:`~ctxwatch.model.MAX_PLAUSIBLE_PROMPT`, for a model the catalogue does not know).  The window the note
    names is the call's own, as the table and the flag give it: :func:`ctxwatch.accounting.windows.resolve_window`, with
    ``long_context`` when a call of its context (this one or an earlier one) proved the 1M-token beta
    (:func:`ctxwatch.accounting.windows.proves_long_context`); without that proof a Sonnet 4 call is at 200,000, and a
    report above even the beta's 1M does not prove it.  A block whose counts are not all whole counts below
    2**53 gets no note: the run reports that damage and the prompt is unknown, not implausible.  The note says
    what the flag ``implausible_usage`` says of it, in the Codex reader's words (``ctxwatch.formats.codex``):
    the call has no occupancy, and the report stays in the token totals and the cost (a 0 is in neither)."""
    whole = _whole_prompt(usage)
    if whole is None:
        return None
    u, prompt = whole
    if not implausible_prompt(prompt, largest_window(model, "anthropic")):
        return None
    what = (f"usage reports {prompt:,} prompt tokens (input {u.input_uncached:,} + cache write {u.cache_write:,} + "
            f"cache read {u.cache_read:,})")
    if prompt <= 0:
        return f"{what}, and every request has a prompt: implausible, so no occupancy"
    window = resolve_window(model, "anthropic", None, None, long_context=long_context)[0]
    limit = (f"the {window:,}-token window of {model}" if window
             else f"the {MAX_PLAUSIBLE_PROMPT:,} tokens of the largest windows")
    return f"{what}, more than {limit}: implausible, so no occupancy (kept in token totals and cost as reported)"


def _damaged_sizes(path: str, line: int, sizes: dict[str, Any]) -> list[Output]:
    """An ``implausible_value`` issue on ``line`` for each of a ``compact_boundary``'s ``compactMetadata`` sizes
    (``sizes``: key -> raw JSON value) that is there but no token count (:func:`count_or_none`: negative, 2**53
    or more, not a whole number, a bool), as the run reports a damaged usage count: the size is unknown, and
    said to be, never dropped in silence.  An absent or ``null`` size is no damage (older versions log none)."""
    return [Issue(path, line, "implausible_value",
                  f"compactMetadata.{key} {show_value(raw)} ({not_a_count(usage_count(raw))}): treated as unknown")
            for key, raw in sizes.items() if raw is not None and count_or_none(raw) is None]


def content_parts(content: Any, *, tool_result_id: str | None = None) -> list[Part]:
    """Convert Anthropic Messages ``content`` (a string or a list of blocks) to :class:`Part` objects.

    Block types: ``text`` -> text; ``image`` -> image (meta from :func:`_b64_meta`); ``document`` -> document
    (its text when the source is plain text); ``tool_result`` -> tool_result (``call_id`` = ``tool_use_id``; its
    string or text blocks joined, images inside it as extra image parts); ``thinking`` / ``redacted_thinking``
    -> thinking; ``tool_use`` / ``server_tool_use`` -> tool_call (``text`` = compact JSON of ``input``); any other
    block -> ``other`` with its JSON as text.  Non-dict blocks are ignored.

    Args:
        content: ``message.content``.
        tool_result_id: set when converting a ``tool_result``'s own content (images keep the call id).
    """
    if isinstance(content, str):
        return [Part("text", content)]
    if not isinstance(content, list):
        return []
    parts: list[Part] = []
    for block in content:
        if not isinstance(block, dict):
            if isinstance(block, str):
                parts.append(Part("text", block))
            continue
        kind = block.get("type")
        if kind == "text":
            text = block.get("text")
            parts.append(Part("text", text if isinstance(text, str) else ""))
        elif kind == "image":
            parts.append(Part("image", "", call_id=tool_result_id, meta=_b64_meta(block.get("source"))))
        elif kind == "document":
            src = block.get("source")
            text = src.get("data") if isinstance(src, dict) and src.get("type") == "text" else None
            if isinstance(text, str):
                parts.append(Part("text", text))
            else:
                parts.append(Part("document", "", call_id=tool_result_id, meta=_b64_meta(src)))
        elif kind == "tool_result":
            tid = block.get("tool_use_id") if isinstance(block.get("tool_use_id"), str) else None
            inner = content_parts(block.get("content"), tool_result_id=tid)
            text = "\n".join(p.text for p in inner if p.kind == "text" and p.text)
            parts.append(Part("tool_result", text, call_id=tid))
            parts.extend(p for p in inner if p.kind != "text")
        elif kind == "thinking":
            text = block.get("thinking")
            parts.append(Part("thinking", text if isinstance(text, str) else ""))
        elif kind == "redacted_thinking":
            data = block.get("data")
            parts.append(Part("thinking", "", meta={"redacted": True,
                                                    "bytes": len(data) if isinstance(data, str) else 0}))
        elif kind in ("tool_use", "server_tool_use"):
            name = block.get("name")
            cid = block.get("id")
            parts.append(Part("tool_call", json_text(block.get("input", {}), none="null"),
                              name=name if isinstance(name, str) else None,
                              call_id=cid if isinstance(cid, str) else None))
        else:
            rest = {k: v for k, v in block.items() if k != "type"}
            parts.append(Part("other", json_text(rest) if rest else "", meta={"type": str(kind)}))
    return parts


# --- reader state --------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Node:
    """One record of the ``parentUuid`` tree.

    ``kind``: ``user`` (a message sent to the model), ``assistant`` (a line of call ``call_key``),
    ``boundary`` (``compact_boundary``: history stops here) or ``other`` (progress, system, attachment...:
    passed through when following a chain).
    """

    uuid: str
    parent: str | None
    context: str
    root: str
    kind: str
    message: Message | None = None
    call_key: str | None = None


@dataclass(slots=True)
class _CallState:
    """Everything known about one API call (one ``message.id`` + ``requestId``), its lines folded in as they
    arrive: place on disk, content blocks in line order, the fullest usage, the last stop reason."""

    key: str
    context: str
    parent: str | None
    session: str | None
    model: str | None
    timestamp: float | None
    history: list[Message] | None  # dropped (None) once a later call starts in the context; rebuilt if needed
    compaction: dict[str, Any] | None
    extra: dict[str, Any]
    line: int = 0  # first line's number and byte offset; last line's end (the furthest seen)
    line_end: int = 0
    byte_start: int = 0
    byte_end: int = 0
    lines: int = 0
    parts: list[Part] = field(default_factory=list)  # summary pass: the text blocks only
    tool_calls: int = 0
    stop_reason: str | None = None
    uuids: set[str] = field(default_factory=set)
    best: dict[str, Any] | None = None
    best_out: int = -1
    best_line: int = 0  # the line whose usage is kept (named by an issue about that usage)
    implausible: str | None = None  # the implausible_usage note given for the kept usage (given once)
    lazy: bool = False  # summary pass: sent without history (the context's floor is known)
    floor_key: tuple[str | None, str] = (None, "")  # (session, context) whose floor it belongs to
    ordinal: int = 0  # calls of the file before it: its place in the run's order (Call.index) within the file
    _message: Message | None = None

    def add(self, uid: str, rec: Record, parts: list[Part], tool_calls: int, usage: dict[str, Any] | None,
            stop_reason: str | None) -> None:
        """Fold in one line; the line with the largest ``output_tokens`` (the later one on ties) gives the
        usage, the last line that has a stop reason gives it."""
        if not self.lines:
            self.line, self.byte_start = rec.line, rec.byte_start
        self.lines += 1
        self.line_end = max(self.line_end, rec.line_end)
        self.byte_end = max(self.byte_end, rec.byte_end)
        self.parts.extend(parts)
        self.tool_calls += tool_calls
        if stop_reason:
            self.stop_reason = stop_reason
        self.uuids.add(uid)
        self._message = None
        if usage is not None:
            raw = usage.get("output_tokens")
            n = count_or_none(raw)
            out = n if n is not None else -1 if "output_tokens" not in usage else _DAMAGED_RANK
            # The line with the largest output is the final one (lines may come out of order: copies in resumed
            # sessions); a damaged or null output on a later line outranks the streaming placeholder (output 1
            # to 10) before it, so that the output is unknown (a damaged one reported), not the placeholder's; a
            # valid count on a later line supersedes a damaged one before it (the damage was in a placeholder).
            if self.best is None or out >= self.best_out or (self.best_out == _DAMAGED_RANK and n is not None):
                # (the first usage is kept whatever its output says: a damaged one is then reported, not lost)
                self.best, self.best_out, self.best_line = usage, out, rec.line

    def message(self) -> Message:
        """The call's whole response as one assistant message (all lines' blocks in line order)."""
        if self._message is None:
            self._message = Message("assistant", list(self.parts))
        return self._message

    def tool_use_ids(self) -> list[str]:
        """Ids of the tool calls the response makes, in order."""
        return [p.call_id for p in self.parts if p.kind == "tool_call" and p.call_id]


@dataclass(slots=True)
class _Chain:
    """The last history built in one context, extended when the next call's chain passes through its leaf."""

    leaf: str | None = None
    messages: list[Message] = field(default_factory=list)
    calls_done: set[str] = field(default_factory=set)
    nodes_done: set[str] = field(default_factory=set)
    complete: bool = False  # the walk reached the root or a compact_boundary (not a record missing from the file)


class ClaudeCodeReader(Reader):
    """Incremental reader of one Claude Code transcript file (see the module docstring for the rules).

    ``feed`` returns the :class:`ParsedCall` of the call an assistant line belongs to (new, or updated with the
    same ``key``) and :class:`Issue` objects for assistant lines that cannot be used, and, once per call, an
    ``implausible_usage`` note when its reported prompt is implausible (failure case B13, :meth:`_emit`), as the
    Codex reader gives one.  Every other record only updates the reader's state.  ``skip`` is a bound method:
    besides rejecting bookkeeping lines without a parse, it records the ``uuid``/``parentUuid`` of the
    ``progress`` lines it skips, because those lines are links of the ``parentUuid`` chain (FORMATS.md section
    1; hook progress sits between a ``tool_use`` line and the next assistant line).

    Args:
        path: the transcript file (a ``agent-<id>.jsonl`` name makes every line context ``agent-<id>``).

    Attributes:
        full_history: ``False`` (default): a call carries its visible history only until a call with a whole
            history and a reported prompt has given the floor of its (session, context), and again after a
            ``compact_boundary`` or a new root (see the module docstring); ``True``: every call does (set
            before feeding, for opening a call).
    """

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.full_history = False
        # (session, context) -> key of the call whose whole history gave the floor (summary pass)
        self._floor_calls: dict[tuple[str | None, str], str] = {}
        m = _AGENT_FILE.search(os.path.basename(path))
        self._file_context = f"agent-{m.group(1)}" if m else None
        self._summarizer = bool(m and m.group(1).startswith("acompact"))
        self._nodes: dict[str, _Node] = {}
        self._calls: dict[str, _CallState] = {}
        self._results: dict[str, list[_Node]] = {}  # tool_use_id -> user nodes answering it, in file order
        self._chains: dict[str, _Chain] = {}
        self._pending: dict[str, dict[str, Any]] = {}  # context -> compaction marker for its next call
        self._latest: dict[str, _CallState] = {}  # context -> its latest call (the only one keeping a history)
        self._last_node: dict[bool, str] = {}  # is-sidechain -> uuid of the latest node (lines w/o parentUuid)
        self._dirty: dict[str, _CallState] = {}  # coalesce: calls updated since they were last emitted
        self._pending_session: dict[str, str | None] = {}  # context -> session of its pending compaction
        # (session, context, model) -> ordinal of its first call that proved the 1M-token beta window (it and
        # the later calls have it), as the accountant keeps it by call index
        self._long_context: dict[tuple[str | None, str, str | None], int] = {}
        self.agent_progress_lines = 0  # progress lines copying a subagent's messages (never counted)

    def pending_compactions(self) -> dict[str, dict[str, Any]]:
        """The compaction markers waiting for their context's next call (:meth:`Reader.pending_compactions`),
        each with the ``session`` it belongs to (a folder's forecast applies it to that session only)."""
        return {ctx: {**m, "session": self._pending_session.get(ctx)} for ctx, m in self._pending.items()}

    @property
    def skip(self) -> Callable[[bytes], bool]:  # type: ignore[override]  # never assigned; see docstring
        """The byte-level pre-filter, :meth:`_skip` (bound on access: a bound method stored on the reader
        would be a reference cycle, keeping every finished reader's state alive until the cyclic collector
        runs)."""
        return self._skip

    # -- byte-level pre-filter ------------------------------------------------------------------------------
    def _skip(self, data: bytes) -> bool:
        """True for bookkeeping lines that need no parse (case B17): ``file-history-snapshot`` and
        ``queue-operation`` (no ``uuid``), and well-formed ``progress`` lines, whose tree link is recorded
        from the raw bytes.  Anything unusual (glued records, truncated lines) returns False and is parsed, so
        that its damage is reported (a cut line ends before its closing brace)."""
        if not _ends_like_a_record(data):
            return False
        if data.startswith(_BOOKKEEPING_PREFIXES):
            return b'"parentUuid":' not in data
        if not data.startswith(b'{"parentUuid":') or data.find(b'{"parentUuid":', 1) >= 0:
            return False  # (a second record glued on: parse, and report it)
        i = data.find(b'"type":"', 0, _HEAD_BYTES)  # (searched in place: slicing would copy every line's head)
        if i < 0:
            return False
        if data.startswith(b'progress"', i + 8) and self._file_context is None \
                and data.find(b'"type":"agent_progress"', i) >= 0:
            self.agent_progress_lines += 1  # (said in a note at the end: see finish)
        if self._floor_calls and not self.full_history and data.startswith(_LINK_TYPES, i + 8) \
                and not data.startswith(b'{"parentUuid":null') and b'"requestId":' not in data:
            # A user / progress / attachment line of a context whose floor is known: no number needs it
            # (its text is read when a call is opened; a v1.0.x sidechain line is parsed, for its root; a new
            # root is parsed, as it makes the floor be inferred again).
            ctx = self._file_context or ("main" if data.find(b'"isSidechain":false', 0, i) >= 0 else None)
            if ctx is not None:
                j = data.find(b'"sessionId":"', 0, i)
                sid = None
                if j >= 0:
                    e = data.find(b'"', j + 13, j + 13 + _MAX_ID)
                    if e < 0:
                        return False
                    sid = data[j + 13:e].decode("utf-8", "replace")
                if (sid, ctx) in self._floor_calls:
                    return True
        if not data.startswith(b'progress"', i + 8):
            return False
        head = data[:i]
        body = data.rstrip(b"\r\n\t ")
        if not body.endswith(b"}") or body.count(b'"parentUuid":') != 1:
            return False
        if body.startswith(b'{"parentUuid":null'):
            parent = None
        elif body.startswith(b'{"parentUuid":"'):
            end = body.find(b'"', 15)
            if end < 0 or end - 15 > _MAX_ID:
                return False
            parent = body[15:end].decode("utf-8", "replace")
        else:
            return False
        j = body.rfind(b'"uuid":"')
        if j < 0:
            return False
        k = body.find(b'"', j + 8)
        if k < 0 or k - (j + 8) > _MAX_ID:
            return False
        uid = body[j + 8:k].decode("utf-8", "replace")
        agent = None
        a = head.find(b'"agentId":"')
        if a >= 0:
            e = head.find(b'"', a + 11)
            if e > a + 11:
                agent = head[a + 11:e].decode("utf-8", "replace")
        side = b'"isSidechain":true' in head
        self._add_node(uid, parent, True, side, agent, "other")
        return True

    # -- records ----------------------------------------------------------------------------------------------
    def feed(self, rec: Record) -> list[Output]:
        """Consume one record; return the (new or updated) call of an assistant line, or issues."""
        v = rec.value
        if not isinstance(v, dict):
            return []
        kind = v.get("type")
        if kind == "assistant":
            return self._assistant(v, rec)
        if kind == "user":
            self._user(v, rec)
        elif kind == "system":
            node = self._node_for(v, rec, "boundary" if v.get("subtype") == "compact_boundary" else "other")
            if node.kind == "boundary":
                meta = m if isinstance(m := v.get("compactMetadata"), dict) else {}
                post = meta.get("postTokens")
                pre = meta.get("preTokens")
                # The history restarts here: the next call's whole history is in the file again, so the floor
                # is inferred afresh from it (also in an excerpt whose earlier chain was cut).
                self._floor_calls.pop((_session_id(v), node.context), None)
                self._pending[node.context] = {
                    "kind": "compact_boundary",
                    "trigger": meta.get("trigger") if isinstance(meta.get("trigger"), str) else None,
                    "pre_tokens": count_or_none(pre),
                    "post_tokens": count_or_none(post),
                    "line": rec.line,
                }
                self._pending_session[node.context] = _session_id(v)
                return _damaged_sizes(self.path, rec.line, {"preTokens": pre, "postTokens": post})
        elif "uuid" in v:
            self._node_for(v, rec, "other")  # progress, attachment, ...: links of the chain only
        return []

    def _context_of(self, uid: str, parent: str | None, side: bool, agent: str | None) -> tuple[str, str]:
        """``(context, root)`` of a record: ``main``, ``agent-<id>`` (file name, else ``agentId``) or, for v1.0.x
        inline sidechains, ``sidechain-<first 8 characters of the chain's root uuid>``.  The root is the first
        record of the chain within the same context, so a sidechain whose first record points into the main
        chain still gets its own id."""
        pnode = self._nodes.get(parent) if parent else None
        if self._file_context:
            ctx = self._file_context
        elif not side:
            ctx = "main"
        elif agent:
            ctx = f"agent-{agent}"
        elif pnode is not None and pnode.context.startswith("sidechain-"):
            ctx = pnode.context
        else:
            ctx = f"sidechain-{uid[:8]}"
        root = pnode.root if pnode is not None and pnode.context == ctx else uid
        return ctx, root

    def _add_node(self, uid: str, parent: str | None, has_parent_key: bool, side: bool, agent: str | None,
                  kind: str) -> _Node:
        if not has_parent_key:
            parent = self._last_node.get(side)
        ctx, root = self._context_of(uid, parent, side, agent)
        node = _Node(uid, parent, ctx, root, kind)
        self._nodes[uid] = node
        self._last_node[side] = uid
        return node

    def _node_for(self, v: dict[str, Any], rec: Record, kind: str) -> _Node:
        uid = v.get("uuid")
        if not isinstance(uid, str) or not uid:
            uid = f"@{rec.line}.{rec.part}"
        parent = v.get("parentUuid")
        agent = v.get("agentId")
        return self._add_node(uid, parent if isinstance(parent, str) else None, "parentUuid" in v,
                              v.get("isSidechain") is True, agent if isinstance(agent, str) else None, kind)

    def _user(self, v: dict[str, Any], rec: Record) -> None:
        msg = v.get("message")
        if not isinstance(msg, dict):
            self._node_for(v, rec, "other")
            return
        node = self._node_for(v, rec, "user")
        fkey = (_session_id(v), node.context)
        if not self.full_history and fkey in self._floor_calls:
            if node.parent is None and "parentUuid" in v:
                # A new root (a /clear, a new conversation in the same file): its history starts here, so the
                # next call gives the floor afresh (the model, and with it the system prompt, may differ).
                del self._floor_calls[fkey]
            else:
                return  # no later call of this context needs the text (see the module docstring)
        label = "compaction_summary" if v.get("isCompactSummary") else "meta" if v.get("isMeta") else None
        node.message = Message("user", content_parts(msg.get("content")), label=label)
        for tid in node.message.tool_result_ids():
            self._results.setdefault(tid, []).append(node)

    def _assistant(self, v: dict[str, Any], rec: Record) -> list[Output]:
        msg = v.get("message")
        if not isinstance(msg, dict):
            self._node_for(v, rec, "other")
            return [Issue(self.path, rec.line, "unknown_record",
                          "assistant line without a message object; skipped")]
        model = msg.get("model") if isinstance(msg.get("model"), str) else None
        if v.get("isApiErrorMessage") or model == "<synthetic>":
            self._node_for(v, rec, "other")  # API-error / interrupt placeholder: not a call, not sent back
            return []
        uid = u if isinstance(u := v.get("uuid"), str) and u else f"@{rec.line}.{rec.part}"
        mid = msg.get("id") if isinstance(msg.get("id"), str) else None
        req = v.get("requestId") if isinstance(v.get("requestId"), str) else None
        key = f"{mid}:{req or ''}" if mid else f"uuid:{uid}"
        call = self._calls.get(key)
        if call is not None and uid in call.uuids:
            return []  # the same line copied again (resumed session): nothing new
        usage = msg.get("usage")
        sid = _session_id(v)
        ctx = self._file_context or ("main" if v.get("isSidechain") is not True else None)
        if ctx is not None and not self.full_history and (sid, ctx) in self._floor_calls:
            # The context's floor is known, so no later history walk passes through this line (a compaction
            # stops the walk at its boundary) and main / subagent-file contexts need no parent lookup: no node.
            parent = v.get("parentUuid")
            parent = parent if isinstance(parent, str) else None
        else:
            node = self._node_for(v, rec, "assistant")
            node.call_key = key
            ctx, parent = node.context, node.parent
        if call is None:
            extra: dict[str, Any] = {"message_id": mid, "request_id": req}
            if self._summarizer:
                extra["compaction_summarizer"] = True
            fkey = (sid, ctx)
            lazy = not self.full_history and fkey in self._floor_calls
            history, complete = (None, False) if lazy else self._history(ctx, parent)
            if lazy:
                extra["floor_call"] = self._floor_calls[fkey]  # the call whose floor this one's history needs
            elif not complete:
                # The chain runs out of the file (an excerpt, a log that starts mid-session): the history
                # below is only its visible tail, so the prompt cannot be split into floor and history.
                extra["history_cut"] = True
            call = _CallState(
                key=key, context=ctx, parent=parent, session=sid,
                model=model, timestamp=parse_timestamp(v.get("timestamp")), history=history,
                compaction=self._pending.pop(ctx, None), extra=extra, lazy=lazy, floor_key=fkey,
                ordinal=len(self._calls))
            self._calls[key] = call
            if not lazy:
                previous = self._latest.get(ctx)
                if previous is not None:
                    previous.history = None  # keeps memory linear: one history list per context, not per call
                self._latest[ctx] = call
                if complete and not self.full_history and _has_prompt(usage, model):
                    # Its history is whole and its usage says how big the prompt was, so the floor inferred from
                    # it holds for the context's later calls (a call without usage cannot give it, nor one whose
                    # report is implausible: the next call with a whole history and a plausible report does).
                    self._floor_calls[fkey] = key
        stop = msg.get("stop_reason")
        content = msg.get("content")
        if self.full_history or (not call.lazy and self._floor_calls.get(call.floor_key) != key):
            parts = content_parts(content)  # a later call's history may still need the blocks
            n_tools = sum(p.kind == "tool_call" for p in parts)
        else:
            parts, n_tools = response_summary(content)
        call.add(uid, rec, parts, n_tools, usage if isinstance(usage, dict) else None,
                 stop if isinstance(stop, str) else None)
        if call.model is None:
            call.model = model
        if not self.coalesce:
            return self._emit(call)
        # A whole-file read: a response's lines are consecutive, so a line of another call means the calls
        # updated before it are complete; emit them once (in the order they were first updated).
        dirty = self._dirty
        out: list[Output] = []
        if dirty and (len(dirty) > 1 or key not in dirty):
            out = [o for k, c in dirty.items() if k != key for o in self._emit(c)]
            self._dirty = dirty = {key: call} if key in dirty else {}
        dirty.setdefault(key, call)
        return out

    def finish(self) -> list[Output]:
        """Emit the calls a coalescing read still holds, and the :meth:`notes` (a :data:`SUBAGENT_COPIES` note when
        the session's ``agent_progress`` lines show that it ran subagents: their calls are not in this file)."""
        out: list[Output] = [o for c in self._dirty.values() for o in self._emit(c)]
        self._dirty = {}
        out.extend(self.notes())
        self.agent_progress_lines = 0
        return out

    def notes(self) -> list[Issue]:
        """A :data:`SUBAGENT_COPIES` note counting the ``agent_progress`` lines read so far (none without them)."""
        n = self.agent_progress_lines
        if not n:
            return []
        return [Issue(self.path, 0, SUBAGENT_COPIES,
                      f"{n} agent_progress line{'s copy' if n != 1 else ' copies'} a subagent's messages: "
                      "its calls are not counted from these copies (they would count twice) but from the "
                      "subagent's own transcript (<session>/subagents/agent-*.jsonl, or agent-*.jsonl "
                      "beside the session), which is not among the files read")]

    # -- history --------------------------------------------------------------------------------------------
    def _history(self, context: str, parent: str | None, *, remember: bool = True) -> tuple[list[Message], bool]:
        """The visible history of a call whose first line's parent is ``parent``.

        Follows ``parentUuid`` from ``parent`` towards the root, stopping at a ``compact_boundary``, at a record
        not in this file (excerpts, the summarizer's links into the main session) or at another context.  Each
        response on the chain is one assistant message holding *all* its lines (parallel tool calls fork the
        tree: Claude Code chains later lines through one branch only), followed by every tool result answering
        its tool calls, also those on sibling branches (the API requires a result for every ``tool_use``).
        The walk stops early where the previous call's chain ended and reuses its messages, so a linear session
        costs time proportional to its new records only (plus one list copy per call).  ``remember=False``
        rebuilds without touching that cache (a late line of an older call).

        Returns ``(messages, complete)``: ``complete`` is False when the walk stopped at a record missing from
        the file (an excerpt, a cycle), so the history is only its visible tail.
        """
        cache = self._chains.get(context) if remember else None
        path: list[_Node] = []
        u = parent
        hit = False
        complete = False
        limit = len(self._nodes) + 1
        while limit > 0:
            limit -= 1
            if u is None:
                complete = True
                break
            if cache is not None and u == cache.leaf:
                hit = True
                break
            node = self._nodes.get(u)
            if node is None or node.context != context:
                # A sidechain's first record points into the main chain: its own history starts there.
                complete = node is not None
                break
            path.append(node)
            if node.kind == "boundary":
                complete = True
                break
            u = node.parent
        if hit and cache is not None:
            chain = cache
            complete = cache.complete
            messages = list(cache.messages)
        else:
            chain = _Chain(complete=complete)
            messages = []
        for node in reversed(path):
            if node.kind == "user" and node.message is not None:
                if node.uuid not in chain.nodes_done:
                    chain.nodes_done.add(node.uuid)
                    messages.append(node.message)
            elif node.kind == "assistant" and node.call_key is not None:
                if node.call_key in chain.calls_done:
                    continue
                chain.calls_done.add(node.call_key)
                call = self._calls.get(node.call_key)
                if call is None:
                    continue
                messages.append(call.message())
                for tid in call.tool_use_ids():
                    for rnode in self._results.get(tid, ()):
                        if rnode.context == context and rnode.uuid not in chain.nodes_done \
                                and rnode.message is not None:
                            chain.nodes_done.add(rnode.uuid)
                            messages.append(rnode.message)
        if remember:
            chain.leaf = parent
            chain.messages = messages
            self._chains[context] = chain
        return messages, complete

    def _emit(self, call: _CallState) -> list[Output]:
        """The call's :class:`ParsedCall`, then its ``implausible_usage`` note when its kept usage reports an
        implausible prompt (:func:`implausible_note`; failure case B13), as the Codex reader gives one.  The
        note is given once per call, at the call's first line (the line the table shows it at), with the
        call's key (``Issue.call_key``: a copy of the call in another file, a resumed session, gives it once);
        a later line whose usage changes it withdraws it (:class:`Resolved`) and gives the new one, if any."""
        pc = self._parsed(call)
        # (the accountant's window evidence, Accountant.note_window_evidence, kept here by the same rule and key,
        # so that the note names the window the call's row and flag give)
        ctx_key = (call.session, call.context, call.model)
        whole = _whole_prompt(pc.usage)  # (pc.usage is anthropic_usage(call.best), made once)
        if whole is not None and proves_long_context(whole[1], call.model, "anthropic"):
            self._long_context[ctx_key] = min(call.ordinal, self._long_context.get(ctx_key, call.ordinal))
        since = self._long_context.get(ctx_key)
        note = implausible_note(pc.usage, call.model, long_context=since is not None and call.ordinal >= since)
        if note == call.implausible:
            return [pc]
        out: list[Output] = [pc]
        if call.implausible is not None:
            out.append(Resolved(self.path, call.line, "implausible_usage"))
        if note is not None:
            out.append(Issue(self.path, call.line, "implausible_usage", note, call.key))
        call.implausible = note
        return out

    def _parsed(self, call: _CallState) -> ParsedCall:
        text = "".join([p.text for p in call.parts if p.kind == "text"])
        extra = call.extra  # (the accountant copies it into the call summary)
        extra["lines"] = call.lines
        if call.best_line and call.best_line != call.line:
            extra["usage_line"] = call.best_line  # (an issue about the usage names the line it came from)
        if call.best_out == _DAMAGED_RANK and call.best is not None and call.best.get("output_tokens") is None:
            extra["output_null"] = True  # (a null final count: run._sanitize reports it, as it reports damage)
        else:
            extra.pop("output_null", None)
        history = call.history
        if history is None and not call.lazy:
            # A late line of an older call: rebuild its history once, without caching it.
            history, _ = self._history(call.context, call.parent, remember=False)
        return ParsedCall(
            source=SourceRef(self.path, call.line, call.line_end, call.byte_start, call.byte_end),
            timestamp=call.timestamp, model=call.model, provider="anthropic", session=call.session,
            context=call.context, system=None, tools=None, messages=history,
            usage=anthropic_usage(call.best),
            response=ResponseInfo(text=text, tool_calls=call.tool_calls, finish_reason=call.stop_reason),
            compaction=call.compaction, history_reported_only=True, key=call.key, extra=extra)


def _ends_like_a_record(data: bytes) -> bool:
    """True when a raw line's last non-blank byte is ``}`` (a line cut mid-record almost never is; those must
    be parsed so that the cut is reported, not skipped unseen)."""
    end = len(data)
    while end and data[end - 1] in b" \t\r\n":
        end -= 1
    return end > 0 and data[end - 1] == 0x7D


# --- detection -----------------------------------------------------------------------------------------------

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
        if head.startswith(b'{"parentUuid":') and b'"sessionId":"' in head[:_HEAD_BYTES]:
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
