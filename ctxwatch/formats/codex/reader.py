"""The incremental reader of one Codex rollout: records in, calls (new or updated) out.

A ``token_count`` event opens a call with the history read so far (:meth:`CodexReader._token_count`); the
output items that follow update it; ``session_meta``, ``turn_context``, compactions and restarts move the
session, model, history and floor.  The rules are in the package docstring (:mod:`ctxwatch.formats.codex`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ctxwatch.formats import Output, Reader, count_issue_kind, usage_count
from ctxwatch.formats.codex.counters import restart_note
from ctxwatch.formats.codex.forks import ForkCopies
from ctxwatch.formats.codex.items import RECORD_TYPES, OpenCall, item_message
from ctxwatch.formats.codex.legacy import LegacyRollout
from ctxwatch.formats.codex.token_counts import TokenCounts
from ctxwatch.formats.wire.timestamps import parse_timestamp
from ctxwatch.formats.wire.values import model_id
from ctxwatch.model import Issue, Message, ParsedCall, Part, Provenance, ResponseInfo, SourceRef, Usage, json_type
from ctxwatch.source import Record, show_value

#: ``event_msg`` payload types the reader uses; every other event (UI duplicates of response items, command
#: output, ...) is skipped before parsing (``exec_command_end`` lines can be large).
_EVENTS_KEPT = (b"token_count", b"context_compacted", b"task_started")


_EVENT_PREFIX = b'"type":"event_msg","payload":{"type":"'


def _parent_ids(meta: dict[str, Any]) -> list[str]:
    """The ids of the sessions a ``session_meta`` payload says it was forked or spawned from: ``forked_from_id``,
    ``parent_thread_id`` and ``source.subagent.thread_spawn.parent_thread_id`` (newer Codex versions)."""
    source = meta.get("source")
    sub = source.get("subagent") if isinstance(source, dict) else None
    spawn = sub.get("thread_spawn") if isinstance(sub, dict) else None
    ids = [meta.get("forked_from_id"), meta.get("parent_thread_id"),
           spawn.get("parent_thread_id") if isinstance(spawn, dict) else None]
    return [i for i in ids if isinstance(i, str) and i]


class CodexReader(TokenCounts, LegacyRollout, Reader):
    """Incremental reader of one Codex rollout file (rules and tailing policy: :mod:`ctxwatch.formats.codex`).

    ``feed`` returns a :class:`ParsedCall` for a token_count whose totals changed (and are not those of a call
    already read: a copy of the rollout), the same call again (same ``key``) when one of its output items
    arrives, and an ``implausible_usage`` :class:`Issue` when a call's prompt exceeds its window.  The call is
    still emitted, with :attr:`~ctxwatch.model.Provenance.implausible`.

    Args:
        path: the rollout file.
    """

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self._count = 0
        # Key -> line of every call emitted from a cumulative total: a later token_count with the same total is a
        # copy of that call (:meth:`_repeat`).  Kept across sessions: a key names its session.
        self._emitted: dict[str, int] = {}
        self._forks = ForkCopies()  # (kept across sessions: its note counts every fork of the file)
        self.skip = self._skip
        self._start_session()

    def _start_session(self) -> None:
        """Forget everything of the session read so far: a new rollout starts from nothing (its own id, system
        prompt, model, window hint, history, floor and cumulative totals)."""
        self.session: str | None = None
        # Sessions this one was forked or spawned from: their session_meta lines come back inside this rollout
        # with the history Codex copies into a fork (every session_meta is persisted), and do not start a session.
        self._ancestors: set[str] = set()
        # The session a fork was made from (``forked_from_id``): a fork's rollout starts with re-stamped copies of
        # its records, so calls are keyed by the session the totals belong to (the run keeps one of each copy).
        self._fork_of: str | None = None
        self.model: str | None = None
        self.system: list[str] | None = None
        self._window_hint: int | None = None  # task_started.model_context_window
        self._history: list[Message] = []
        # Where a restart's history starts: after the model's last output item, a compaction or a repeated
        # session_meta of this session.  The restart is only seen at its first token_count, after that
        # conversation's first input items were appended; what came before them belongs to the old one.
        self._restart_from = 0
        # Codex's cumulative total after the last counted call: the baseline of a total delta.
        self._prev_total: tuple[int, ...] | None = None
        # The previous counted event's total as written (damaged counters None): what a repeat is compared to.
        self._prev_seen: tuple[int | None, ...] | None = None
        self._prev_last: tuple[int, ...] | None = None
        self._open: OpenCall | None = None
        self._pending: dict[str, Any] | None = None
        self._compacted_since_call = False
        self._last_prompt: int | None = None
        self._floor_call: str | None = None  # key of the call that gives this episode's floor

    def notes(self) -> list[Issue]:
        """A ``fork_copies`` note per fork whose copy of its parent's calls was read (:mod:`.forks`)."""
        return self._forks.notes(self.path)

    def finish(self) -> list[Output]:
        """Nothing is held back (see the package docstring): only the :meth:`notes`."""
        return list(self.notes())

    @staticmethod
    def _skip(data: bytes) -> bool:
        """True for ``event_msg`` lines the reader does not use (cheap byte test; anything unusual is parsed)."""
        i = data.find(_EVENT_PREFIX, 0, 256)
        if i < 0:
            return False
        j = i + len(_EVENT_PREFIX)
        e = data.find(b'"', j, j + 80)
        if e < 0 or data[j:e] in _EVENTS_KEPT:
            return False
        return data.count(b'"type":"event_msg"') == 1  # glued records are parsed, not skipped

    def pending_compactions(self) -> dict[str, dict[str, Any]]:
        """The compaction marker waiting for the next call (Codex runs have one context, ``main``)."""
        return {"main": dict(self._pending)} if self._pending else {}

    def feed(self, rec: Record) -> list[Output]:
        """Consume one rollout record; return new or updated calls and issues."""
        v = rec.value
        if not isinstance(v, dict):
            return [Issue(self.path, rec.line, "unknown_record",
                          f"a JSON {json_type(v)}, not an object: not a Codex rollout record; skipped")]
        kind = v.get("type")
        payload = v.get("payload")
        if not isinstance(payload, dict):
            if payload is not None and kind in RECORD_TYPES:
                # (a record of the current layout whose payload is not an object: said, not taken for a legacy line)
                return [Issue(self.path, rec.line, "invalid_field",
                              f"{kind}.payload {show_value(payload)}: not an object; this record is ignored")]
            return self._legacy(v, rec)
        if kind == "response_item":
            return self._item(payload, rec)
        if kind == "event_msg":
            ev = payload.get("type")
            if ev == "token_count":
                return self._token_count(v, payload, rec)
            if ev == "context_compacted":
                self._open = None
                if not self._compacted_since_call:
                    self._history = []
                    self._restart_from = 0
                    self._mark_compaction("context_compacted", rec)
            elif ev == "task_started":
                w = usage_count(payload.get("model_context_window"))
                if w.__class__ is int and w > 0:
                    self._window_hint = w
                elif w is not None and not (w.__class__ is int and w == 0):  # (0: not set, as in new versions)
                    return [Issue(self.path, rec.line, count_issue_kind(w),
                                  f"task_started.model_context_window {show_value(w)}: not a token count; "
                                  "this window hint is ignored")]
            return []
        if kind == "turn_context":
            self._open = None
            model = model_id(payload.get("model"), "turn_context.model")
            if model:
                self.model = model
        elif kind == "session_meta":
            sid = payload.get("id")
            if isinstance(sid, str) and sid:
                if self.session is not None and sid != self.session and sid not in self._ancestors:
                    # Another rollout follows in the same file (concatenated logs): its calls must not take this
                    # one's floor, history or totals (its first call would be all floor and no history).
                    self._start_session()
                if self.session is None:
                    self.session = sid
                    fork = payload.get("forked_from_id")
                    self._fork_of = fork if isinstance(fork, str) and fork else None
                    self._forks.start(self._fork_of, sid, parse_timestamp(v.get("timestamp")))
                elif sid == self.session:
                    # This session's header again (a copy of the rollout or a resume appended to it): a restart
                    # that follows starts its history here.
                    self._restart_from = len(self._history)
                self._ancestors.update(_parent_ids(payload))
            base = payload.get("base_instructions")
            if isinstance(base, dict) and isinstance(base.get("text"), str) and self.system is None:
                self.system = [base["text"]]
        elif kind == "compacted":
            self._open = None
            repl = payload.get("replacement_history")
            if isinstance(repl, list):
                self._history = [m for m, _ in map(item_message, repl) if m is not None]
            else:
                summary = payload.get("message")
                self._history = [Message("user", [Part("text", summary)], label="compaction_summary")] \
                    if isinstance(summary, str) and summary else []
            self._restart_from = len(self._history)
            self._mark_compaction("compacted", rec)
            self._compacted_since_call = True
        return []

    def _mark_compaction(self, kind: str, rec: Record) -> None:
        self._floor_call = None  # a new episode: its first call gives the floor again
        if self._pending is None:
            # (Codex logs no size with a compaction: pre_tokens is the last plausible call's reported prompt,
            # and says so, so that no message calls it the log's own figure)
            self._pending = {"kind": kind, "trigger": None, "pre_tokens": self._last_prompt,
                             "pre_tokens_from": "previous call", "post_tokens": None, "line": rec.line}

    def _item(self, payload: dict[str, Any], rec: Record) -> list[Output]:
        msg, is_output = item_message(payload)
        if msg is None:
            return []
        self._history.append(msg)
        if not is_output:
            self._open = None
            return []
        self._restart_from = len(self._history)  # (the model answered: the conversation so far is not new)
        op = self._open
        if op is None:
            return []
        usage = op.call.usage
        if payload.get("type") == "reasoning" and usage is not None and not op.reasoning_tagged:
            # The reasoning this call produced, as reported: its encrypted content is re-sent on later calls
            # but cannot be tokenized locally, so the count travels with the part.
            op.reasoning_tagged = True
            part = msg.parts[0]
            part.meta = {**(part.meta or {}), "reasoning_tokens": usage.reasoning}
        op.texts.extend(p.text for p in msg.parts if msg.role == "assistant" and p.kind == "text" and p.text)
        op.tool_calls += sum(1 for p in msg.parts if p.kind == "tool_call")
        src = op.call.source
        op.call = replace(op.call, source=SourceRef(src.path, src.line, rec.line_end, src.byte_start, rec.byte_end),
                          response=ResponseInfo(text="\n".join(op.texts), tool_calls=op.tool_calls))
        return [op.call]

    def _call_of(self, v: dict[str, Any], rec: Record, info: dict[str, Any], key: str, usage: Usage,
                 extra: Provenance, notes: list[Output], by_total: bool) -> list[Output]:
        """Emit the call of a counted ``token_count`` (``key``: its dedupe key; ``by_total``: the key is its
        cumulative total, so the same total read again in this file is a repeat, :meth:`_repeat`), after
        ``notes``; with an ``implausible_usage`` issue for a prompt above the window."""
        inp = usage.prompt_total
        window = usage_count(info.get("model_context_window"))
        # 0 or absent means Codex did not say (its zeroed baseline events write 0): the task's hint applies.  Any
        # other non-count (-5, "inf", 1e400, true) is passed on raw: the window is reported and unknown.
        window_v = self._window_hint if window is None or (window.__class__ is int and window == 0) else window
        outs: list[Output] = []
        if window_v.__class__ is int and inp.__class__ is int and inp > window_v > 0:  # type: ignore[operator]
            extra.implausible = True
            outs.append(Issue(self.path, rec.line, "implausible_usage",
                              f"token_count reports {inp:,} prompt tokens, more than the {window_v:,}-token window: "
                              "implausible, so no occupancy (kept in token totals and cost as reported)"))
        if not extra.implausible:
            if self._floor_call is not None:
                extra.floor_call = self._floor_call
            elif inp:
                self._floor_call = key
        first_line = self._emitted.get(key) if by_total else None
        if first_line is not None:
            return self._repeat(notes, first_line, inp, implausible=extra.implausible)
        self._emitted[key] = rec.line
        ts = parse_timestamp(v.get("timestamp"))
        call = ParsedCall(
            source=SourceRef(self.path, rec.line, rec.line_end, rec.byte_start, rec.byte_end),
            timestamp=ts, model=self.model, provider="openai", session=self._forks.session_of(ts) or self.session,
            context="main", system=list(self.system) if self.system else None,
            tools=None, messages=list(self._history), usage=usage,
            window=window_v, response=None, compaction=self._pending, history_reported_only=True, key=key,
            provenance=extra)
        extra.harness = "codex"
        self._pending = None
        self._compacted_since_call = False
        if not extra.implausible:
            self._last_prompt = inp
        self._open = OpenCall(call)
        outs.insert(0, call)
        return notes + outs

    def _repeat(self, notes: list[Output], first_line: int, inp: int | None, *, implausible: bool
                ) -> list[Output]:
        """A token_count whose cumulative total is that of a call read earlier from this file (the rollout, or
        part of it, written again after a restart: a copy appended to it).  The call is not emitted again: it
        would replace the original under the same key, with the history of both copies, and the original's
        numbers already count it.  The reader moves on as if it had been read (its compaction marker and prompt
        are used up, it may name the episode's floor call, which is the original's key), and its output items
        update nothing.
        A restart note of the same line says that its calls repeat earlier ones."""
        self._pending = None
        self._compacted_since_call = False
        if not implausible:
            self._last_prompt = inp
        self._open = None
        return [replace(n, message=f"{n.message}; its calls repeat calls read before (this one the call at line "
                                   f"{first_line}) and are not counted again")
                if isinstance(n, Issue) and n.kind == "totals_restart" else n for n in notes]

    def _restart(self, rec: Record, prev: tuple[int, ...], total: tuple[int, ...]) -> Issue:
        """Codex's cumulative totals went backwards with no new ``session_meta`` at ``rec``: Codex resumed, or a
        new conversation was written to the same file.  Start a new episode: the history keeps only what came
        after the old conversation (see ``_restart_from``) and the floor is inferred again from this call (with
        the old one, the restarted calls would be all floor and no history); the caller has taken
        this total as the new baseline.  ``prev`` and ``total`` are the previous and this running totals
        (tokens, in :data:`~ctxwatch.formats.codex.counters.FIELDS` order).  Returns the note that says so
        (:func:`~ctxwatch.formats.codex.counters.restart_note`)."""
        self._history = self._history[self._restart_from:]
        self._restart_from = 0
        self._floor_call = None
        self._open = None  # (the old conversation's last call takes no more output items)
        return restart_note(self.path, rec.line, prev, total)
