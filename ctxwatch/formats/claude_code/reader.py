"""The incremental reader of one Claude Code transcript: records in, calls (new or updated) out.

An assistant line opens or updates its call (:class:`~ctxwatch.formats.claude_code.calls.CallState`); user,
system, progress and attachment lines are nodes of the ``parentUuid`` tree
(:class:`~ctxwatch.formats.claude_code.tree.ParentTree`) that later calls' histories are walked from; a
``compact_boundary`` marks a compaction for its context's next call.  The rules are in the package docstring
(:mod:`ctxwatch.formats.claude_code`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ctxwatch.formats import Output, Reader, count_issue_kind, count_or_none, not_a_count, usage_count
from ctxwatch.formats.claude_code.calls import DAMAGED_RANK, CallState, unread_damage
from ctxwatch.formats.claude_code.content import content_parts, response_summary
from ctxwatch.formats.claude_code.files import AGENT_FILE, SUBAGENT_COPIES, subagent_files_of
from ctxwatch.formats.claude_code.implausible import ImplausibleNotes, has_prompt
from ctxwatch.formats.claude_code.lines import (
    call_key,
    check_sidechain,
    foreign_record,
    not_an_object,
    record_without_type,
    response_ids,
    session_id,
)
from ctxwatch.formats.claude_code.prefilter import LinePrefilter
from ctxwatch.formats.claude_code.tree import Node, ParentTree
from ctxwatch.formats.wire.anthropic import anthropic_usage, strip_prior_thinking
from ctxwatch.formats.wire.timestamps import parse_timestamp
from ctxwatch.formats.wire.values import note_usage_types
from ctxwatch.model import (
    Issue,
    Message,
    ParsedCall,
    Provenance,
    Resolved,
    ResponseInfo,
    SourceRef,
    json_type,
    note_bad_field,
)
from ctxwatch.source import Record, show_value


def _damaged_sizes(path: str, line: int, sizes: dict[str, Any], where: str = "compactMetadata") -> list[Output]:
    """An issue on ``line`` (:func:`~ctxwatch.formats.count_issue_kind`) for each of a ``compact_boundary``'s
    ``compactMetadata`` sizes (``sizes``: key -> raw JSON value) that is there but no token count
    (:func:`count_or_none`: negative, 2**53 or more, not a whole number, a bool), as the run reports a damaged
    usage count: the size is unknown, and said to be, never dropped in silence.  An absent or ``null`` size is
    no damage (older versions log none)."""
    return [Issue(path, line, count_issue_kind(raw),
                  f"{where}.{key} {show_value(raw)} ({not_a_count(usage_count(raw))}): treated as unknown")
            for key, raw in sizes.items() if raw is not None and count_or_none(raw) is None]


class ClaudeCodeReader(LinePrefilter, Reader):
    """Incremental reader of one Claude Code transcript file (the rules: :mod:`ctxwatch.formats.claude_code`).

    ``feed`` returns the :class:`ParsedCall` of the call an assistant line belongs to (new, or updated with the
    same ``key``) and :class:`Issue` objects for assistant lines that cannot be used, and, once per call, an
    ``implausible_usage`` note when its reported prompt is implausible (:meth:`_emit`), as the Codex reader
    gives one.  Every other record only updates the reader's state.  ``skip`` is a bound method:
    besides rejecting bookkeeping lines without a parse, it records the ``uuid``/``parentUuid`` of the
    ``progress`` lines it skips, because those lines are links of the ``parentUuid`` chain (hook progress sits
    between a ``tool_use`` line and the next assistant line).

    Args:
        path: the transcript file (a ``agent-<id>.jsonl`` name makes every line context ``agent-<id>``).

    Attributes:
        full_history: ``False`` (default): a call carries its visible history only until a call with a whole
            history and a reported prompt has given the floor of its (session, context), and again after a
            ``compact_boundary`` or a new root (see the package docstring); ``True``: every call does (set
            before feeding, for opening a call).
    """

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.full_history = False
        # (session, context) -> key of the call whose whole history gave the floor (summary pass)
        self._floor_calls: dict[tuple[str | None, str], str] = {}
        m = AGENT_FILE.search(os.path.basename(path))
        self._file_context = f"agent-{m.group(1)}" if m else None
        self._summarizer = bool(m and m.group(1).startswith("acompact"))
        self._tree = ParentTree(self._file_context)
        self._calls: dict[str, CallState] = {}
        self._pending: dict[str, dict[str, Any]] = {}  # context -> compaction marker for its next call
        self._latest: dict[str, CallState] = {}  # context -> its latest call (the only one keeping a history)
        self._dirty: dict[str, CallState] = {}  # coalesce: calls updated since they were last emitted
        self._request_keys: dict[str, str] = {}  # requestId -> its call's key (lines without a message id)
        self._pending_session: dict[str, str | None] = {}  # context -> session of its pending compaction
        self._implausible = ImplausibleNotes()
        self.agent_progress_lines = 0  # progress lines copying a subagent's messages (never counted)
        self._own_records = False  # a Claude Code record was read (or skipped by the pre-filter as one)
        self._held_foreign: list[Output] = []  # issues of records of no Claude Code shape before the first one

    def pending_compactions(self) -> dict[str, dict[str, Any]]:
        """The compaction markers waiting for their context's next call (:meth:`Reader.pending_compactions`),
        each with the ``session`` it belongs to (a folder's forecast applies it to that session only)."""
        return {ctx: {**m, "session": self._pending_session.get(ctx)} for ctx, m in self._pending.items()}

    @property
    def skip(self) -> Callable[[bytes], int]:  # type: ignore[override]  # never assigned; see docstring
        """The pre-filter, :meth:`~ctxwatch.formats.claude_code.prefilter.LinePrefilter._skip` (bound on access: a
        bound method stored on the reader would be a reference cycle, keeping every finished reader's state alive
        until the cyclic collector runs)."""
        return self._skip

    # -- records ----------------------------------------------------------------------------------------------
    def feed(self, rec: Record) -> list[Output]:
        """Consume one record; return the (new or updated) call of an assistant line, or issues."""
        v = rec.value
        if not isinstance(v, dict):
            return [not_an_object(self.path, rec.line, v)]
        kind = v.get("type")
        if kind.__class__ is not str and "type" in v:  # (null included)
            return [record_without_type(self.path, rec.line, kind)]
        if (foreign := foreign_record(self.path, rec.line, v)) is not None:
            if "uuid" in v:
                self._node_for(v, rec, "other")  # (still a link of the chain that names it)
            if self._own_records:
                return [foreign]
            # Held until a Claude Code record shows the file is a transcript: a file of none (another log read
            # with a forced --format) is said to be in the wrong format as a whole, with the format it looks
            # like, rather than as one bad line per record.
            self._held_foreign.append(foreign)
            return []
        if not self._own_records:
            self._own_records = True
            if self._held_foreign:
                held, self._held_foreign = self._held_foreign, []
                return [*held, *self._own(v, kind, rec)]
        return self._own(v, kind, rec)

    def _own(self, v: dict[str, Any], kind: Any, rec: Record) -> list[Output]:
        """:meth:`feed` of a Claude Code record ``v`` of type ``kind`` (a string)."""
        check_sidechain(v)
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
                self._floor_calls.pop((session_id(v), node.context), None)
                self._pending[node.context] = {
                    "kind": "compact_boundary",
                    "trigger": meta.get("trigger") if isinstance(meta.get("trigger"), str) else None,
                    "pre_tokens": count_or_none(pre),
                    "post_tokens": count_or_none(post),
                    "line": rec.line,
                }
                self._pending_session[node.context] = session_id(v)
                return _damaged_sizes(self.path, rec.line, {"preTokens": pre, "postTokens": post})
            if v.get("subtype") == "microcompact_boundary":
                # Claude Code cleared old tool results in place: the chain goes on (no new root, the floor
                # stays), and the next call of the context is a compaction's first, with the log's sizes.
                meta = m if isinstance(m := v.get("microcompactMetadata"), dict) else {}
                pre, saved = meta.get("preTokens"), meta.get("tokensSaved")
                self._pending[node.context] = {
                    "kind": "microcompact_boundary",
                    "trigger": meta.get("trigger") if isinstance(meta.get("trigger"), str) else None,
                    "pre_tokens": count_or_none(pre),
                    "post_tokens": None,
                    "tokens_saved": count_or_none(saved),
                    "line": rec.line,
                }
                self._pending_session[node.context] = session_id(v)
                return _damaged_sizes(self.path, rec.line, {"preTokens": pre, "tokensSaved": saved},
                                      "microcompactMetadata")
        elif "uuid" in v:
            self._node_for(v, rec, "other")  # progress, attachment, ...: links of the chain only
        return []

    def _node_for(self, v: dict[str, Any], rec: Record, kind: str) -> Node:
        uid = v.get("uuid")
        if not isinstance(uid, str) or not uid:
            uid = f"@{rec.line}.{rec.part}"
        parent = v.get("parentUuid")
        agent = v.get("agentId")
        return self._tree.add(uid, parent if isinstance(parent, str) else None, "parentUuid" in v,
                              v.get("isSidechain") is True, agent if isinstance(agent, str) else None, kind)

    def _user(self, v: dict[str, Any], rec: Record) -> None:
        msg = v.get("message")
        if not isinstance(msg, dict):
            self._node_for(v, rec, "other")
            return
        node = self._node_for(v, rec, "user")
        fkey = (session_id(v), node.context)
        if not self.full_history and fkey in self._floor_calls:
            if node.parent is None and "parentUuid" in v:
                # A new root (a /clear, a new conversation in the same file): its history starts here, so the
                # next call gives the floor afresh (the model, and with it the system prompt, may differ).
                del self._floor_calls[fkey]
            else:
                return  # no later call of this context needs the text (see the package docstring)
        label = "compaction_summary" if v.get("isCompactSummary") else "meta" if v.get("isMeta") else None
        node.message = Message("user", content_parts(msg.get("content")), label=label)
        for tid in node.message.tool_result_ids():
            self._tree.results.setdefault(tid, []).append(node)

    def _assistant(self, v: dict[str, Any], rec: Record) -> list[Output]:
        msg = v.get("message")
        if not isinstance(msg, dict):
            self._node_for(v, rec, "other")
            return [Issue(self.path, rec.line, "unknown_record",
                          "assistant line without a message object; skipped")]
        model = msg.get("model") if isinstance(msg.get("model"), str) else None
        if model is None and msg.get("model") is not None:
            note_bad_field(f"message.model is a JSON {json_type(msg['model'])}, not a string: the model is unknown")
        if v.get("isApiErrorMessage") or model == "<synthetic>":
            self._node_for(v, rec, "other")  # API-error / interrupt placeholder: not a call, not sent back
            return []
        uid = u if isinstance(u := v.get("uuid"), str) and u else f"@{rec.line}.{rec.part}"
        mid, req = response_ids(v, msg)
        key = call_key(mid, req, uid, self._request_keys)
        call = self._calls.get(key)
        if call is not None and uid in call.uuids:
            return []  # the same line copied again (resumed session): nothing new
        usage = msg.get("usage")
        # (said for every line, not only a floor's; Claude Code writes the object on every assistant line, so a
        # null one is damage, not a call that reports nothing)
        note_usage_types(usage, "message.usage", null_unknown="usage" in msg)
        if usage.__class__ is dict and usage.get("input_tokens") is None and len(usage):
            # (every real assistant line's usage has input_tokens: without it the prompt's size is unknown)
            note_bad_field(f"message.usage.input_tokens is {'null' if 'input_tokens' in usage else 'missing'}: "
                           "the prompt's size is unknown")
        sid = session_id(v)
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
            extra = Provenance(message_id=mid, request_id=req, compaction_summarizer=self._summarizer,
                               harness="claude-code")
            fkey = (sid, ctx)
            lazy = not self.full_history and fkey in self._floor_calls
            history, complete = (None, False) if lazy else self._tree.history(ctx, parent, self._calls)
            if history is not None:
                history = strip_prior_thinking(history, model)  # (earlier turns' thinking the API leaves out)
            if lazy:
                extra.floor_call = self._floor_calls[fkey]  # the call whose floor this one's history needs
            elif not complete:
                # The chain runs out of the file (an excerpt, a log that starts mid-session): the history
                # below is only its visible tail, so the prompt cannot be split into floor and history.
                extra.history_cut = True
            call = CallState(
                key=key, context=ctx, parent=parent, session=sid,
                model=model, timestamp=parse_timestamp(v.get("timestamp")), history=history,
                compaction=self._pending.pop(ctx, None), provenance=extra, lazy=lazy, floor_key=fkey,
                ordinal=len(self._calls))
            self._calls[key] = call
            if not lazy:
                previous = self._latest.get(ctx)
                if previous is not None:
                    previous.history = None  # keeps memory linear: one history list per context, not per call
                self._latest[ctx] = call
                if complete and not self.full_history and has_prompt(usage, model):
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
        unread = unread_damage(self.path, call.add(uid, rec, parts, n_tools, usage if isinstance(usage, dict)
                                                   else None, stop if isinstance(stop, str) else None))
        if call.model is None:
            call.model = model
        if not self.coalesce:
            return [*unread, *self._emit(call)]
        # A whole-file read: a response's lines are consecutive, so a line of another call means the calls
        # updated before it are complete; emit them once (in the order they were first updated).
        dirty = self._dirty
        out: list[Output] = []
        if dirty and (len(dirty) > 1 or key not in dirty):
            out = [o for k, c in dirty.items() if k != key for o in self._emit(c)]
            self._dirty = dirty = {key: call} if key in dirty else {}
        dirty.setdefault(key, call)
        return [*unread, *out] if unread else out

    def flush(self) -> list[Output]:
        """Emit the calls a coalescing read still holds (reading may go on: a later line of one of them emits it
        again)."""
        out: list[Output] = [o for c in self._dirty.values() for o in self._emit(c)]
        self._dirty = {}
        return out

    def finish(self) -> list[Output]:
        """Emit the calls a coalescing read still holds, the issues of records of no Claude Code shape still held
        (none when no record was Claude Code's), and the :meth:`notes` (a :data:`SUBAGENT_COPIES` note when
        the session's ``agent_progress`` lines show that it ran subagents: their calls are not in this file)."""
        out = self.flush()
        held, self._held_foreign = self._held_foreign, []
        if self._own_records:
            out[:0] = held  # (the transcript's own lines were all skipped unparsed)
        # (else none was a Claude Code record: the run says the file is in another format, forced --format)
        out.extend(self.notes())
        self.agent_progress_lines = 0
        return out

    def notes(self) -> list[Issue]:
        """A :data:`SUBAGENT_COPIES` note counting the ``agent_progress`` lines read so far (none without them)."""
        n = self.agent_progress_lines
        if not n:
            return []
        files = subagent_files_of(self.path)
        found, folder = len(files), f"{os.path.splitext(self.path)[0]}{os.sep}subagents"
        under = sum(os.path.dirname(f) == folder for f in files)
        at = (f"in {folder}" if under == found else "beside it" if not under else
              f"({under} in {folder}, {found - under} beside it)")
        where = (f"{found} subagent transcript{'s' if found != 1 else ''} {at}, not among the files read here (read "
                 "with the session's folder, their calls are counted)" if found else
                 "the subagent's own transcript (<session>/subagents/agent-*.jsonl, or agent-*.jsonl beside the "
                 "session), which is not among the files read")
        return [Issue(self.path, 0, SUBAGENT_COPIES,
                      f"{n} agent_progress line{'s copy' if n != 1 else ' copies'} a subagent's messages: "
                      f"its calls are not counted from these copies (they would count twice) but from {where}")]

    # -- history --------------------------------------------------------------------------------------------
    def _emit(self, call: CallState) -> list[Output]:
        """The call's :class:`ParsedCall`, then its ``implausible_usage`` note when its kept usage reports an
        implausible prompt (:class:`~ctxwatch.formats.claude_code.implausible.ImplausibleNotes`), as the Codex
        reader gives one.  The
        note is given once per call, at the call's first line (the line the table shows it at), with the
        call's key (``Issue.call_key``: a copy of the call in another file, a resumed session, gives it once);
        a later line whose usage changes it withdraws it (:class:`Resolved`) and gives the new one, if any."""
        pc = self._parsed(call)
        # (pc.usage is anthropic_usage(call.best), made once)
        note = self._implausible.note(pc.usage, call.session, call.context, call.model, call.ordinal)
        if note == call.implausible:
            return [pc]
        out: list[Output] = [pc]
        if call.implausible is not None:
            out.append(Resolved(self.path, call.line, "implausible_usage"))
        if note is not None:
            out.append(Issue(self.path, call.line, "implausible_usage", note, call.key))
        call.implausible = note
        return out

    def _parsed(self, call: CallState) -> ParsedCall:
        text = "".join([p.text for p in call.parts if p.kind == "text"])
        extra = call.provenance.copy()  # (each emission its own: the call goes on being read)
        extra.details["lines"] = call.lines
        if call.best_line and call.best_line != call.line:
            extra.usage_line = call.best_line  # (an issue about the usage names the line it came from)
        # (a null final count: the run reports it, as it reports damage)
        extra.output_null = bool(call.best_out == DAMAGED_RANK and call.best is not None
                                 and call.best.get("output_tokens") is None)
        history = call.history
        if history is None and not call.lazy:
            # A late line of an older call: rebuild its history once, without caching it.
            history, _ = self._tree.history(call.context, call.parent, self._calls, remember=False)
        return ParsedCall(
            source=SourceRef(self.path, call.line, call.line_end, call.byte_start, call.byte_end),
            timestamp=call.timestamp, model=call.model, provider="anthropic", session=call.session,
            context=call.context, system=None, tools=None, messages=history,
            usage=anthropic_usage(call.best),
            response=ResponseInfo(text=text, tool_calls=call.tool_calls, finish_reason=call.stop_reason),
            compaction=call.compaction, history_reported_only=True, key=call.key, provenance=extra)
