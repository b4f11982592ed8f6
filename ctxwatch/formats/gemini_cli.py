"""Gemini CLI chat recordings: the JSONL session log (``gemini-cli``) and the older whole-file JSON
``ConversationRecord`` (``gemini-cli-json``), read by one reader.

The JSONL (gemini-cli's ``packages/core/src/services/chatRecordingService.ts``) holds a header ``{sessionId,
projectHash, startTime, lastUpdated, kind}``, message records ``{id, timestamp, type, content, model, thoughts,
tokens, toolCalls}``, ``{"$set": {...}}`` metadata patches and ``{"$rewindTo": id}`` records, applied in order.
A message is appended again, whole, each time it changes (same ``id``: it replaces the earlier one), and
``tokens`` may arrive on a later copy.  ``tokens`` maps ``usageMetadata`` one to one (input =
promptTokenCount, output = candidatesTokenCount, cached = cachedContentTokenCount, thoughts =
thoughtsTokenCount, tool = toolUsePromptTokenCount).

One call per ``type: "gemini"`` message with ``tokens``; its history is the recorded messages before it (user
turns, earlier model turns with their tool calls, tool results).  The system prompt and tool schemas are not
recorded: the floor is inferred once, from the first call with a reported prompt (its prompt minus its counted
history), and every later call names that call (:attr:`~ctxwatch.model.Provenance.floor_call`), so its history is its
reported
prompt minus that floor, as Codex and Claude Code calls are (:mod:`ctxwatch.accounting`).  Inferred per call,
the floor would take in the tokenizer's error on each call's history and move with it although nothing in it
changed.  A ``$set`` that replaces the message list (a compressed chat) infers it afresh.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from ctxwatch.formats import FormatSpec, Reader, Sniff, register, sniff_document
from ctxwatch.formats.wire.gemini import gemini_parts, gemini_usage
from ctxwatch.formats.wire.timestamps import parse_timestamp
from ctxwatch.formats.wire.values import int_or_none, json_text, listed, model_id, note_usage_types
from ctxwatch.model import (
    Issue,
    Message,
    ParsedCall,
    Part,
    Provenance,
    ResponseInfo,
    SourceRef,
    Usage,
    json_type,
    note_bad_field,
)
from ctxwatch.source import Record

Output = ParsedCall | Issue


def cli_tokens_usage(tokens: Any) -> Usage | None:
    """Usage of a Gemini CLI message's ``tokens`` block (same rule as :func:`gemini_usage`)."""
    if not isinstance(tokens, dict):
        return None
    usage, _ = gemini_usage({"promptTokenCount": tokens.get("input"),
                             "cachedContentTokenCount": tokens.get("cached"),
                             "candidatesTokenCount": tokens.get("output"),
                             "thoughtsTokenCount": tokens.get("thoughts"),
                             "toolUsePromptTokenCount": tokens.get("tool")})
    return usage


def cli_message_to_messages(m: dict[str, Any]) -> list[Message]:
    """One recorded Gemini CLI message → the API messages it stands for in later requests.

    ``user`` → a user message.  ``gemini`` → an assistant message (text and ``toolCalls`` as tool calls),
    followed by a ``tool`` message holding the calls' ``result`` function responses when recorded.
    ``info``/``error``/``warning`` records are UI notices that are not sent to the model: no messages.
    """
    t = m.get("type")
    if t == "user":
        return [Message("user", gemini_parts(m.get("content")))]
    if t != "gemini":
        return []
    parts = [p for p in gemini_parts(m.get("content")) if p.kind != "thinking"]
    results: list[Part] = []
    for tc in listed(m.get("toolCalls"), "a gemini message's toolCalls"):
        if not isinstance(tc, dict):
            continue
        parts.append(Part("tool_call", json_text(tc.get("args") or {}), name=str(tc.get("name") or ""),
                          call_id=tc.get("id")))
        res = gemini_parts(tc.get("result"))
        for p in res:
            if p.kind == "tool_result" and p.call_id is None:
                p.call_id = tc.get("id")
        results.extend(res)
    out = [Message("assistant", parts)]
    if results:
        out.append(Message("tool", results))
    return out


class GeminiCliReader(Reader):
    """Reader of a Gemini CLI JSONL chat recording (``$set`` / ``$rewindTo`` applied in order).

    State kept: the metadata (session id, kind) and the current message list.  Each ``gemini`` message
    with ``tokens`` gives a call keyed ``<sessionId>:<message id>``; a later copy of the same message
    (tool calls or tokens added) gives the same key again, which replaces the earlier call.
    """

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.meta: dict[str, Any] = {}
        self.messages: list[dict[str, Any]] = []
        self._converted: dict[int, tuple[dict[str, Any], list[Message]]] = {}
        self._floor_call: str | None = None  # key of the call whose inferred floor the later calls take

    def _session(self) -> str:
        sid = self.meta.get("sessionId")
        return str(sid) if sid else os.path.basename(self.path)

    def _history(self, upto: int) -> list[Message]:
        out: list[Message] = []
        for m in self.messages[:upto]:
            cached = self._converted.get(id(m))
            if cached is None or cached[0] is not m:
                cached = (m, cli_message_to_messages(m))
                self._converted[id(m)] = cached
            out.extend(cached[1])
        return out

    def _call(self, pos: int, src: SourceRef) -> ParsedCall:
        m = self.messages[pos]
        tokens = t if isinstance(t := m.get("tokens"), dict) else {}
        content = [p for p in gemini_parts(m.get("content")) if p.kind == "text"]
        calls = listed(m.get("toolCalls"), "a gemini message's toolCalls")
        info = ResponseInfo(text="".join(p.text for p in content), tool_calls=len(calls))
        extra = Provenance(message_id=str(m["id"]) if m.get("id") is not None else None,
                           tool_use_prompt_tokens=int_or_none(tokens.get("tool")) or None)
        kind = self.meta.get("kind")
        usage = cli_tokens_usage(tokens)
        key = f"{self._session()}:{m.get('id')}"
        if self._floor_call is None:
            if usage is not None and usage.prompt_total.__class__ is int and usage.prompt_total > 0:
                self._floor_call = key
        elif self._floor_call != key:  # (a later copy of the floor's own call infers it again)
            extra.floor_call = self._floor_call
        return ParsedCall(source=src, timestamp=parse_timestamp(m.get("timestamp")),
                          model=model_id(m.get("model"), "a gemini message's model"), provider="google",
                          session=self._session(),
                          context=f"subagent:{self._session()}" if kind == "subagent" else "main",
                          system=None, tools=None, messages=self._history(pos), usage=usage,
                          response=info, history_reported_only=True, key=key, provenance=extra)

    def apply(self, v: Any, src: SourceRef, line: int) -> list[Output]:
        """Apply one record (header, message, ``$set``, ``$rewindTo``) and return the calls it completes."""
        if not isinstance(v, dict):
            return [Issue(self.path, line, "unknown_record", "not a Gemini CLI record; skipped")]
        if isinstance(v.get("$rewindTo"), str):
            ids = [m.get("id") for m in self.messages]
            cut = ids.index(v["$rewindTo"]) if v["$rewindTo"] in ids else 0
            del self.messages[cut:]
            return []
        if isinstance(v.get("$set"), dict):
            patch = v["$set"]
            self.meta.update({k: val for k, val in patch.items() if k != "messages"})
            if isinstance(patch.get("messages"), list):
                self.messages = [m for m in patch["messages"] if isinstance(m, dict)]
                self._floor_call = None  # (a new message list: its next call gives the floor again)
            return []
        v = _message_fields_read(v)
        if isinstance(v.get("id"), str):
            ids = [m.get("id") for m in self.messages]
            if v["id"] in ids:
                pos = ids.index(v["id"])
                self.messages[pos] = v
            else:
                self.messages.append(v)
                pos = len(self.messages) - 1
            if v.get("type") == "gemini" and "tokens" in v:
                if not isinstance(v["tokens"], dict):
                    note_bad_field(f"a gemini message's tokens is {json_type(v['tokens'])}, not an object: "
                                   "its usage is unknown")
                else:
                    note_usage_types(v["tokens"], "a gemini message's tokens")
                return [self._call(pos, src)]
            return []
        if "sessionId" in v and "messages" not in v:
            self.meta.update(v)
            return []
        if "sessionId" in v and isinstance(v.get("messages"), list):  # a whole legacy record on one line
            return self.feed_document(v)  # type: ignore[return-value]
        return [Issue(self.path, line, "unknown_record", "not a Gemini CLI record; skipped")]

    def feed(self, rec: Record) -> Iterable[Output]:
        """One JSONL record of the recording."""
        return self.apply(rec.value, SourceRef(self.path, rec.line, rec.line_end, rec.byte_start, rec.byte_end),
                          rec.line)

    def feed_document(self, value: Any) -> Iterable[Output]:
        """A legacy whole-file ``ConversationRecord`` (``{sessionId, projectHash, messages[]}``)."""
        if not isinstance(value, dict) or not isinstance(value.get("messages"), list):
            return [Issue(self.path, 0, "unknown_record", "not a Gemini CLI conversation record")]
        self.meta.update({k: v for k, v in value.items() if k != "messages"})
        try:
            size = os.path.getsize(self.path)
        except OSError:
            size = 0
        src = SourceRef(self.path, 0, 0, 0, size)
        out: list[Output] = []
        self.messages = []
        for m in value["messages"]:
            if isinstance(m, dict):
                out.extend(self.apply(m, src, 0))
            else:
                note_bad_field(f"a message of the recording is {json_type(m)}, not an object: skipped")
        return out


def _message_fields_read(v: dict[str, Any]) -> dict[str, Any]:
    """``v`` with an ``id`` or ``type`` of another JSON type read, each noted: a message record (one with
    ``tokens`` or ``content``) keeps its place and, when it has ``tokens``, its call.  An id that is no string is
    written as JSON text (so two such ids stay apart); a type that is no string is taken for ``gemini`` when the
    message has ``tokens`` (only model replies carry them) and for no model message otherwise."""
    if "tokens" not in v and "content" not in v:
        return v
    out = v
    mid = v.get("id")
    if mid is not None and not isinstance(mid, str):
        note_bad_field(f"a Gemini CLI message id is {json_type(mid)}, not a string: read as its JSON text")
        out = {**out, "id": json_text(mid)}
    t = v.get("type")
    if "type" in v and not isinstance(t, str):
        note_bad_field(f"a Gemini CLI message type is {json_type(t)}, not a string"
                       + (": read as gemini (it has tokens)" if "tokens" in v else ": not a model message"))
        out = {**out, "type": "gemini" if "tokens" in v else None}
    return out


def _is_cli_record(v: dict[str, Any]) -> bool:
    if "$set" in v or "$rewindTo" in v:
        return True
    if "sessionId" in v and "projectHash" in v:
        return True
    return isinstance(v.get("id"), str) and v.get("type") in ("user", "gemini", "info", "error", "warning")


def _sniff_cli(s: Sniff) -> float:
    vals = [v for v in s.values if isinstance(v, dict)]
    if not vals:
        return 0.0
    first = vals[0]
    if not ("sessionId" in first and "projectHash" in first) and not any(
            v.get("type") == "gemini" and isinstance(v.get("tokens"), dict) for v in vals):
        return 0.0
    return 0.95 * sum(1 for v in vals if _is_cli_record(v)) / len(vals)


def _sniff_cli_json(s: Sniff) -> float:
    d = sniff_document(s)
    if isinstance(d, dict) and "sessionId" in d and "projectHash" in d and isinstance(d.get("messages"), list):
        return 0.95
    return 0.0


register(FormatSpec(
    name="gemini-cli",
    description="Gemini CLI JSONL chat recording (~/.gemini/tmp/<hash>/chats/session-*.jsonl, $set patches)",
    sniff=_sniff_cli, reader=GeminiCliReader, needs_prefix=True,
    example='{"id":"…","type":"gemini","tokens":{"input":11855,"output":81,"cached":0,…},"model":"…"}',
))
register(FormatSpec(
    name="gemini-cli-json",
    description="Gemini CLI legacy chat recording (one JSON ConversationRecord, rewritten in place)",
    sniff=_sniff_cli_json, reader=GeminiCliReader, document=True,
    example="~/.gemini/tmp/<hash>/chats/session-<date>-<id>.json",
))
