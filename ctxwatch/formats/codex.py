"""OpenAI Codex CLI rollout files (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``).

Record layout and pitfalls: ``../shared/sample-logs/FORMATS.md`` section 2.  Every line is
``{timestamp, type, payload}``:

* ``event_msg`` with ``payload.type:"token_count"`` carries running totals (``info.total_token_usage``) and the
  latest call's usage (``info.last_token_usage``) and the window (``info.model_context_window``).  Codex writes
  each value twice and re-emits totals for rate-limit refreshes, so a token_count is a new call only when
  ``total_token_usage`` changed (failure case B12).  Totals that go backwards with no new ``session_meta`` are a
  restart (Codex resumed, or a new conversation in the same file), reported as a ``totals_restart`` note: the
  history starts again from the input items after the model's last output (or after a repeated
  ``session_meta`` of this session), the floor is inferred again and the totals take a new baseline.  A
  token_count whose total is that of a call already read from the file (the rollout written again after itself)
  is that call again: it is not emitted, so the original keeps its own history and floor.  A copy
  whose total has a counter that is not a count is reported, and is still recognised as a copy by the counters
  left and ``last_token_usage`` (:func:`_is_repeat`).
* Usage follows the OpenAI convention (FORMATS.md section 0, failure case B08): ``input_tokens`` includes
  ``cached_input_tokens``, ``output_tokens`` includes ``reasoning_output_tokens``.
* ``response_item`` records are the conversation (Responses API items).  The usage event is written *before*
  the items it pays for, so a call's prompt is the history up to its token_count and its completion is the
  model-output items that follow it.
* ``compacted`` (with ``replacement_history`` in newer versions) and ``event_msg`` ``context_compacted`` replace
  the history (failure case B23).  The next call carries ``compaction = {"kind": "compacted" |
  "context_compacted", "trigger": None, "pre_tokens": <the previous plausible call's reported prompt>,
  "pre_tokens_from": "previous call", "post_tokens": None, "line": <line of the compaction record>}`` (Codex logs
  no pre/post sizes itself).

Sessions: a ``session_meta`` whose ``id`` differs from the current session's starts a new session (two rollouts
concatenated into one file): its own id, system prompt, model, window hint, history, floor and cumulative totals.
The exception is the id of a session this one was forked or spawned from (``forked_from_id``,
``parent_thread_id``): Codex copies the parent's records, its ``session_meta`` included, into a fork's rollout, and
that copy is this session's history.

Floor (instructions + tool schemas, which the rollout does not log in full): inferred once per episode, from the
first call with a plausible usage after the session start or a compaction (its reported prompt minus its
estimated history); every later call names that call in ``extra["floor_call"]``, and its history is its reported
prompt minus that floor (both labelled inferred; see :mod:`ctxwatch.accounting`).  Inferring it per call put
the tokenizer's error on the history into the floor, which then drifted (9,991 to 8,135 tokens over the 39
calls of the sample rollout) although the instructions and tools never changed.

Tailing policy: a call is emitted as soon as its token_count arrives (with its prompt history and usage) and
re-emitted with the same ``key`` as each of its output items (reasoning, assistant message, tool calls)
arrives, until the next input item, ``turn_context`` or token_count closes it.  Nothing is held back, so
``finish`` has nothing to flush and a live view never lags a call behind.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from ctxwatch.formats import FormatSpec, Output, Reader, Sniff, register, usage_count
from ctxwatch.formats.wire.images import image_size_from_base64
from ctxwatch.formats.wire.openai import harness_label
from ctxwatch.formats.wire.timestamps import parse_timestamp
from ctxwatch.model import Issue, Message, ParsedCall, Part, ResponseInfo, SourceRef, Usage
from ctxwatch.source import Record, json_text, show_value

NAME = "codex"

#: Record types of a rollout line (FORMATS.md section 2, "Record types"; ``world_state`` and
#: ``inter_agent_communication_metadata`` from the derived fixture).
_RECORD_TYPES = ("session_meta", "turn_context", "response_item", "event_msg", "compacted", "world_state",
                 "inter_agent_communication_metadata")

#: ``event_msg`` payload types the reader uses; every other event (UI duplicates of response items, command
#: output, ...) is skipped before parsing (case B17: ``exec_command_end`` lines can be large).
_EVENTS_KEPT = (b"token_count", b"context_compacted", b"task_started")
_EVENT_PREFIX = b'"type":"event_msg","payload":{"type":"'

#: The five counters of a Codex usage block, in the order of the tuples below.
_FIELDS = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens", "total_tokens")

#: A counter at or above this is not a count: the limit of :data:`ctxwatch.engine.run.MAX_TOKENS`, applied here so that
#: the reader, not ``run._sanitize`` as well, reports it (one value, one issue).  Not imported: run imports formats.
_MAX_COUNT = 2**53

#: Response items the model produced (its completion); everything else in the history is input.
_OUTPUT_ITEMS = ("reasoning", "function_call", "custom_tool_call", "local_shell_call", "web_search_call",
                 "tool_search_call", "image_generation_call")


class _NotACount(ValueError):
    """A usage block holds a value that is not a token count (``field``, ``value``)."""

    def __init__(self, field: str, value: Any) -> None:
        super().__init__(field)
        self.field = field
        self.value = value


def _counts(block: Any) -> tuple[int, int, int, int, int] | None:
    """The five counters of a usage block as a tuple (missing keys are 0), or ``None`` if not a dict.

    Raises:
        _NotACount: a counter is not a non-negative integer below 2**53 (``"1e3"``, ``1.5``, ``true``, ``-5``,
            ``1e20`` written as an integer) or is ``null``: the block is unusable (the rule of
            :func:`ctxwatch.formats.usage_count` and ``run._sanitize``), never read as a guess.  (Codex writes
            every counter as an integer; a key it does not write is 0, but a ``null`` says the count is unknown,
            and reading it as 0 made a call's output 0 and its cost that of its prompt alone.)
    """
    counts = _surviving_counts(block)
    if counts is None:
        return None
    for k, v in zip(_FIELDS, counts, strict=True):
        if v is None:
            raise _NotACount(k, usage_count(block[k]))  # (the value as read, for the message)
    return counts  # type: ignore[return-value]


def _surviving_counts(block: Any) -> tuple[int | None, ...] | None:
    """The five counters of a usage block with each one that is not a count as ``None`` (``None`` if the block is
    not a dict): what is left of a damaged ``total_token_usage`` to recognise a repeated event by (case B12)."""
    if not isinstance(block, dict):
        return None
    out: list[int | None] = []
    for k in _FIELDS:
        v = usage_count(block[k]) if k in block else 0  # (a key not written is 0; a null is unknown)
        out.append(v if _is_count(v) else None)
    return tuple(out)


def _is_count(v: Any) -> bool:
    """Whether a usage value is a token count: an int (not a bool) from 0 to below 2**53.  A larger integer
    (1e20 written out) passed as a count made the call's prompt "more than the window" here and "not a token
    count" in ``run._sanitize``: two contradictory issues for one value."""
    return v.__class__ is int and 0 <= v < _MAX_COUNT


def _is_repeat(seen: tuple[int | None, ...] | None, prev_seen: tuple[int | None, ...] | None,
               last: tuple[int, ...] | None, prev_last: tuple[int, ...] | None) -> bool:
    """Whether a token_count repeats the previous counted one (Codex writes each twice, case B12).

    Whole totals decide alone, as before.  When either total has a damaged counter, the counters left in both
    must agree and so must ``last_token_usage`` when both are whole: a new call always moves ``input_tokens``
    and ``total_tokens``, so one damaged counter cannot hide it, while comparing the raw blocks (1.5 against 37)
    made the undamaged copy a second call.  With no counter to compare, an identical ``last_token_usage`` right
    after itself is the repeat.
    """
    pairs = [] if seen is None or prev_seen is None else [
        (a, b) for a, b in zip(seen, prev_seen, strict=True) if a is not None and b is not None]
    if not pairs:
        return last is not None and last == prev_last
    if any(a != b for a, b in pairs):
        return False
    return len(pairs) == len(_FIELDS) or last is None or prev_last is None or last == prev_last


def _checked_counts(block: Any, name: str, path: str, line: int, issues: list[Output]
                    ) -> tuple[int, int, int, int, int] | None:
    """:func:`_counts`, with a damaged block reported as an ``implausible_value`` issue and read as absent."""
    try:
        return _counts(block)
    except _NotACount as exc:
        issues.append(Issue(path, line, "implausible_value",
                            f"{name}.{exc.field} {show_value(exc.value)}: not a token count; this usage block is "
                            "ignored"))
        return None


def _parent_ids(meta: dict[str, Any]) -> list[str]:
    """The ids of the sessions a ``session_meta`` payload says it was forked or spawned from: ``forked_from_id``,
    ``parent_thread_id`` and ``source.subagent.thread_spawn.parent_thread_id`` (FORMATS.md section 2, derived
    fixture)."""
    source = meta.get("source")
    sub = source.get("subagent") if isinstance(source, dict) else None
    spawn = sub.get("thread_spawn") if isinstance(sub, dict) else None
    ids = [meta.get("forked_from_id"), meta.get("parent_thread_id"),
           spawn.get("parent_thread_id") if isinstance(spawn, dict) else None]
    return [i for i in ids if isinstance(i, str) and i]


def openai_usage(inp: int, cached: int, out: int, reasoning: int, cache_write: Any = None) -> Usage:
    """Normalize Codex usage (OpenAI convention, FORMATS.md section 0 and section 2 "Usage", case B08).

    ``prompt_total`` = ``input_tokens`` (cached tokens are a subset); ``cache_read`` = ``cached_input_tokens``;
    ``output`` = ``output_tokens`` (reasoning is a subset); ``reasoning`` = ``reasoning_output_tokens``;
    ``cache_write`` = ``cache_write_input_tokens`` when the block has it (newest versions), else ``None``;
    ``input_uncached`` = input minus cache reads minus cache writes (never below 0), matching
    :attr:`ctxwatch.model.Usage.input_uncached` ("neither read from nor written to the cache").  All counts are
    tokens.  A ``cache_write`` that is not a count (``2.7``, ``"inf"``, ``true``, ``-1``) is kept as given, for
    :func:`ctxwatch.engine.run._sanitize` to report and make unknown, and ``input_uncached`` is then ``None``.
    """
    if cache_write is None or (cache_write.__class__ is int and cache_write >= 0):
        uncached: int | None = max(0, inp - cached - (cache_write or 0))
    else:
        uncached = None  # (no arithmetic on a damaged value: it read "inf" as a crash and 2.7 as 2)
    return Usage(prompt_total=inp, input_uncached=uncached, cache_read=cached, cache_write=cache_write,
                 output=out, reasoning=reasoning)


def _image_part(item: dict[str, Any], call_id: str | None = None) -> Part:
    """An ``input_image`` content item as an image part (``detail``; ``bytes``/``width``/``height`` from a
    base64 data URL when present)."""
    meta: dict[str, Any] = {}
    if isinstance(item.get("detail"), str):
        meta["detail"] = item["detail"]
    url = item.get("image_url")
    if isinstance(url, str) and url.startswith("data:") and "," in url:
        data = url.split(",", 1)[1]
        meta["bytes"] = len(data) * 3 // 4 - data[-2:].count("=")
        size = image_size_from_base64(data)
        if size:
            meta["width"], meta["height"] = size
    return Part("image", "", call_id=call_id, meta=meta)


def _content_parts(content: Any, call_id: str | None = None) -> list[Part]:
    """Convert Responses API ``content`` (a string or a list of content items) to parts.

    ``input_text`` / ``output_text`` / ``text`` / ``summary_text`` / ``reasoning_text`` -> text; ``refusal`` ->
    text; ``input_image`` -> image; ``input_file`` -> document; ``encrypted_content`` -> other (opaque, cannot
    be tokenized locally, FORMATS.md section 2); anything else -> other with its JSON as text.
    """
    if isinstance(content, str):
        return [Part("text", content)]
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return []
    parts: list[Part] = []
    for c in content:
        if isinstance(c, str):
            parts.append(Part("text", c))
            continue
        if not isinstance(c, dict):
            continue
        kind = c.get("type")
        if kind in ("input_text", "output_text", "text", "summary_text", "reasoning_text"):
            text = c.get("text")
            parts.append(Part("text", text if isinstance(text, str) else ""))
        elif kind == "refusal":
            text = c.get("refusal")
            parts.append(Part("text", text if isinstance(text, str) else ""))
        elif kind == "input_image":
            parts.append(_image_part(c, call_id))
        elif kind == "input_file":
            data = c.get("file_data")
            parts.append(Part("document", "", call_id=call_id,
                              meta={"bytes": len(data) * 3 // 4} if isinstance(data, str) else {}))
        elif kind == "encrypted_content":
            enc = c.get("encrypted_content")
            parts.append(Part("other", "", meta={"encrypted_bytes": len(enc) if isinstance(enc, str) else 0}))
        else:
            rest = {k: v for k, v in c.items() if k != "type"}
            parts.append(Part("other", json_text(rest) if rest else "", meta={"type": str(kind)}))
    return parts


def _tool_output_parts(output: Any, call_id: str | None) -> list[Part]:
    """A tool output (string, content item, or list of content items) as one tool_result part plus any images.

    A 0.58 ``function_call_output.output`` is a JSON string ``{"output": ..., "metadata": ...}``; it is kept as
    written, since that string is what the model receives.
    """
    if isinstance(output, str):
        return [Part("tool_result", output, call_id=call_id)]
    inner = _content_parts(output, call_id) if isinstance(output, (list, dict)) else []
    if isinstance(output, dict) and not inner:
        return [Part("tool_result", json_text(output), call_id=call_id)]
    text = "\n".join(p.text for p in inner if p.kind == "text" and p.text)
    return [Part("tool_result", text, call_id=call_id)] + [p for p in inner if p.kind != "text"]


def item_message(item: Any) -> tuple[Message | None, bool]:
    """Convert one ``response_item`` payload to a :class:`Message`; return ``(message, is_model_output)``.

    ``message`` items keep their role (``user`` / ``assistant`` / ``developer`` / ``system``; AGENTS.md and
    ``<user_instructions>`` user messages get ``label="instructions"``, ``<environment_context>`` ones
    ``label="environment"``).  ``function_call``,
    ``custom_tool_call``, ``local_shell_call``, ``web_search_call`` and ``tool_search_call`` become an assistant
    ``tool_call`` part (``text`` = the arguments as sent); their ``*_output`` items a ``tool`` message with a
    ``tool_result`` part.  ``reasoning`` becomes an assistant message of one ``thinking`` part with the summary
    (and any plain ``content``) text, labelled ``reasoning`` (it travels with the output item after it); its
    ``encrypted_content`` is opaque and only its size is kept in ``meta``.
    ``ghost_snapshot`` (a git snapshot, never sent to the model) and unknown items give ``(None, False)``.
    """
    if not isinstance(item, dict):
        return None, False
    kind = item.get("type")
    call_id = item.get("call_id") if isinstance(item.get("call_id"), str) else None
    if kind == "message":
        role = r if (r := item.get("role")) in ("user", "assistant", "developer", "system") else "user"
        parts = _content_parts(item.get("content"))
        return Message(role, parts, label=harness_label(role, parts)), role == "assistant"
    if kind == "reasoning":
        texts = [p.text for p in _content_parts(item.get("summary")) if p.text]
        texts += [p.text for p in _content_parts(item.get("content")) if p.kind == "text" and p.text]
        enc = item.get("encrypted_content")
        meta = {"encrypted_bytes": len(enc)} if isinstance(enc, str) and enc else None
        return Message("assistant", [Part("thinking", "\n".join(texts), meta=meta)], label="reasoning"), True
    if kind in ("function_call", "custom_tool_call", "tool_search_call"):
        args = item.get("arguments") if kind != "custom_tool_call" else item.get("input")
        name = item.get("name") if isinstance(item.get("name"), str) else ("tool_search" if kind ==
                                                                           "tool_search_call" else None)
        return Message("assistant", [Part("tool_call", json_text(args), name=name, call_id=call_id)]), True
    if kind in ("local_shell_call", "web_search_call"):
        cid = call_id or (item.get("id") if isinstance(item.get("id"), str) else None)
        name = "local_shell" if kind == "local_shell_call" else "web_search"
        return Message("assistant", [Part("tool_call", json_text(item.get("action")), name=name,
                                          call_id=cid)]), True
    if kind == "image_generation_call":
        return Message("assistant", [Part("other", "", meta={"type": kind})]), True
    if kind in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
        return Message("tool", _tool_output_parts(item.get("output"), call_id)), False
    if kind == "tool_search_output":
        return Message("tool", [Part("tool_result", json_text(item.get("tools")), call_id=call_id)]), False
    if kind == "agent_message":  # a message from another agent (multi-agent sessions): input to this one
        author = item.get("author") if isinstance(item.get("author"), str) else None
        return Message("user", _content_parts(item.get("content")), name=author), False
    return None, False


@dataclass(slots=True)
class _OpenCall:
    """The latest call, still collecting its completion items."""

    call: ParsedCall
    texts: list[str] = field(default_factory=list)
    tool_calls: int = 0
    reasoning_tagged: bool = False


class CodexReader(Reader):
    """Incremental reader of one Codex rollout file (see the module docstring for the rules and tailing policy).

    ``feed`` returns a :class:`ParsedCall` for a token_count whose totals changed (and are not those of a call
    already read: a copy of the rollout), the same call again (same
    ``key``) when one of its output items arrives, and an ``implausible_usage`` :class:`Issue` when a call's
    prompt exceeds its window (failure case B13).  The call is still emitted, with ``extra["implausible"]``.

    Args:
        path: the rollout file.
    """

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self._count = 0
        # Key -> line of every call emitted from a cumulative total: a later token_count with the same total is a
        # copy of that call (:meth:`_repeat`).  Kept across sessions: a key names its session.
        self._emitted: dict[str, int] = {}
        self.skip = self._skip
        self._start_session()

    def _start_session(self) -> None:
        """Forget everything of the session read so far: a new rollout starts from nothing (its own id, system
        prompt, model, window hint, history, floor and cumulative totals)."""
        self.session: str | None = None
        # Sessions this one was forked or spawned from: their session_meta lines come back inside this rollout
        # with the history Codex copies into a fork (every session_meta is persisted), and do not start a session.
        self._ancestors: set[str] = set()
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
        self._open: _OpenCall | None = None
        self._pending: dict[str, Any] | None = None
        self._compacted_since_call = False
        self._last_prompt: int | None = None
        self._floor_call: str | None = None  # key of the call that gives this episode's floor

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
            return []
        kind = v.get("type")
        payload = v.get("payload")
        if not isinstance(payload, dict):
            return []
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
                    return [Issue(self.path, rec.line, "implausible_value",
                                  f"task_started.model_context_window {show_value(w)}: not a token count; "
                                  "this window hint is ignored")]
            return []
        if kind == "turn_context":
            self._open = None
            model = payload.get("model")
            if isinstance(model, str) and model:
                self.model = model
        elif kind == "session_meta":
            sid = payload.get("id")
            if isinstance(sid, str) and sid:
                if self.session is not None and sid != self.session and sid not in self._ancestors:
                    # Another rollout follows in the same file (concatenated logs): its calls must not take this
                    # one's floor, history or totals (they made its first call all floor and no history).
                    self._start_session()
                if self.session is None:
                    self.session = sid
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
            # but cannot be tokenized locally (FORMATS.md section 2), so the count travels with the part.
            op.reasoning_tagged = True
            part = msg.parts[0]
            part.meta = {**(part.meta or {}), "reasoning_tokens": usage.reasoning}
        op.texts.extend(p.text for p in msg.parts if msg.role == "assistant" and p.kind == "text" and p.text)
        op.tool_calls += sum(1 for p in msg.parts if p.kind == "tool_call")
        src = op.call.source
        op.call = replace(op.call, source=SourceRef(src.path, src.line, rec.line_end, src.byte_start, rec.byte_end),
                          response=ResponseInfo(text="\n".join(op.texts), tool_calls=op.tool_calls))
        return [op.call]

    def _token_count(self, v: dict[str, Any], payload: dict[str, Any], rec: Record) -> list[Output]:
        info = payload.get("info")
        if not isinstance(info, dict):
            return []  # info:null carries rate limits only (FORMATS.md section 2)
        damage: list[Output] = []
        total_block = info.get("total_token_usage")
        total = _checked_counts(total_block, "total_token_usage", self.path, rec.line, damage)
        last_block = info.get("last_token_usage")
        last = _checked_counts(last_block, "last_token_usage", self.path, rec.line, damage)
        return damage + self._token_count_from(v, payload, rec, info, total, last, last_block,
                                               _surviving_counts(total_block))

    def _token_count_from(self, v: dict[str, Any], payload: dict[str, Any], rec: Record, info: dict[str, Any],
                          total: tuple[int, int, int, int, int] | None,
                          last: tuple[int, int, int, int, int] | None, last_block: Any,
                          seen: tuple[int | None, ...] | None) -> list[Output]:
        """The call of a ``token_count`` event from its checked counters (see :meth:`_token_count`); ``seen`` is
        its total as written, damaged counters ``None`` (:func:`_surviving_counts`)."""
        partial: tuple[int | None, ...] | None = None
        if total is None and last is None:
            # Both blocks damaged (reported): the call still happened.  It is kept with the counters that survive
            # in its last_token_usage, the others unknown (so it is not priced); Codex's running total is not
            # moved, as this call's share of it is unknown.  Nothing left: not counted.
            partial = _surviving_counts(last_block)
            if partial is None or all(x is None for x in partial):
                return []  # (not counted, so not what the next copy is a repeat of either)
            return self._partial_call(v, rec, info, partial, seen)
        if _is_repeat(seen, self._prev_seen, last, self._prev_last):
            if seen is not None and self._prev_seen is not None:
                # The copies together may say more than either: keep every counter one of them has whole.
                self._prev_seen = tuple(a if a is not None else b
                                        for a, b in zip(seen, self._prev_seen, strict=True))
            if total is not None:
                self._prev_total = total  # Codex's own total replaces one carried past a damaged copy
            return []  # a re-emitted event (case B12)
        if seen is not None:
            self._prev_seen = seen
        source = "last_token_usage"
        prev = self._prev_total
        notes: list[Output] = []
        if total is not None:
            backwards = prev is not None and any(t < p for t, p in zip(total, prev, strict=True))
            self._prev_total = total
            if backwards:
                assert prev is not None  # (for mypy: backwards needs a previous total)
                notes.append(self._restart(rec, prev, total))
            if last is None:
                source = "total_delta"
                last = total if prev is None or backwards else tuple(  # type: ignore[assignment]
                    t - p for t, p in zip(total, prev, strict=True))
        elif last is not None:
            # No whole total: Codex's total moved by this call, so a later delta must not count it again.  With
            # no baseline yet the total is this call, as for the first total above.
            self._prev_total = last if prev is None else tuple(p + n for p, n in zip(prev, last, strict=True))
        self._prev_last = last
        if last is None:
            return notes
        inp, cached, out, reasoning, _tot = last
        if inp == 0 and out == 0:
            return notes  # nothing was sent (a zeroed baseline, e.g. a fresh subagent header)
        cw = None
        if source == "last_token_usage" and isinstance(last_block, dict):
            # A value that is not a count stays raw, so the cache write is reported and unknown (never 2 for 2.7,
            # 0 for "x" or a crash for "inf"); a total delta carries no cache write at all.
            cw = usage_count(last_block.get("cache_write_input_tokens"))
        self._count += 1
        key_total = total if total is not None else (self._count, *last)
        key = f"codex:{self.session or ''}:{'/'.join(map(str, key_total))}"
        extra: dict[str, Any] = {"usage_from": source}
        if total is not None:
            extra["cumulative"] = dict(zip(_FIELDS, total, strict=True))
        return self._call_of(v, rec, info, key, openai_usage(inp, cached, out, reasoning, cw), extra, notes,
                             total is not None)

    def _partial_call(self, v: dict[str, Any], rec: Record, info: dict[str, Any],
                      part: tuple[int | None, ...], seen: tuple[int | None, ...] | None) -> list[Output]:
        """The call of a ``token_count`` whose two usage blocks are both damaged (see :meth:`_token_count_from`):
        its usage is the counters of ``last_token_usage`` that survive (``part``; damaged ones ``None``, so the
        call is not priced), or nothing when it repeats the previous event."""
        if _is_repeat(seen, self._prev_seen, None, self._prev_last):
            return []
        if seen is not None:
            self._prev_seen = seen
        self._prev_last = None
        inp, cached, out, reasoning, _tot = part
        self._count += 1
        key = f"codex:{self.session or ''}:{self._count}/partial/{'/'.join(map(str, part))}"
        usage = Usage(prompt_total=inp, input_uncached=inp - cached if inp is not None and cached is not None
                      else None, cache_read=cached, cache_write=None, output=out, reasoning=reasoning,
                      damaged=True)
        return self._call_of(v, rec, info, key, usage, {"usage_from": "last_token_usage (partly damaged)"}, [],
                             False)

    def _call_of(self, v: dict[str, Any], rec: Record, info: dict[str, Any], key: str, usage: Usage,
                 extra: dict[str, Any], notes: list[Output], by_total: bool) -> list[Output]:
        """Emit the call of a counted ``token_count`` (``key``: its dedupe key; ``by_total``: the key is its
        cumulative total, so the same total read again in this file is a repeat, :meth:`_repeat`), after
        ``notes``; with an ``implausible_usage`` issue for a prompt above the window."""
        inp = usage.prompt_total
        window = usage_count(info.get("model_context_window"))
        # 0 or absent means Codex did not say (its zeroed baseline events write 0): the task's hint applies.  Any
        # other non-count (-5, "inf", 1e400, true) is passed on raw: the window is reported and unknown.
        window_v = self._window_hint if window is None or (window.__class__ is int and window == 0) else window
        outs: list[Output] = []
        if window_v.__class__ is int and inp is not None and inp > window_v > 0:
            extra["implausible"] = True
            outs.append(Issue(self.path, rec.line, "implausible_usage",
                              f"token_count reports {inp:,} prompt tokens, more than the {window_v:,}-token window: "
                              "implausible, so no occupancy (kept in token totals and cost as reported)"))
        if not extra.get("implausible"):
            if self._floor_call is not None:
                extra["floor_call"] = self._floor_call
            elif inp:
                self._floor_call = key
        first_line = self._emitted.get(key) if by_total else None
        if first_line is not None:
            return self._repeat(notes, first_line, inp, implausible=bool(extra.get("implausible")))
        self._emitted[key] = rec.line
        call = ParsedCall(
            source=SourceRef(self.path, rec.line, rec.line_end, rec.byte_start, rec.byte_end),
            timestamp=parse_timestamp(v.get("timestamp")), model=self.model, provider="openai",
            session=self.session, context="main", system=list(self.system) if self.system else None,
            tools=None, messages=list(self._history), usage=usage,
            window=window_v, response=None, compaction=self._pending, history_reported_only=True, key=key,
            extra=extra)
        self._pending = None
        self._compacted_since_call = False
        if not extra.get("implausible"):
            self._last_prompt = inp
        self._open = _OpenCall(call)
        outs.insert(0, call)
        return notes + outs

    def _repeat(self, notes: list[Output], first_line: int, inp: int | None, *, implausible: bool
                ) -> list[Output]:
        """A token_count whose cumulative total is that of a call read earlier from this file (the rollout, or
        part of it, written again after a restart: a copy appended to it).  The call is not emitted again: it
        replaced the original under the same key, with the history of both copies (concat_same.jsonl: floor
        7,799~, history 2,020 where the rollout alone gives 9,643~ and 176), and the original's numbers already
        count it.  The reader moves on as if it had been read (its compaction marker and prompt are used up, it
        may name the episode's floor call, which is the original's key), and its output items update nothing.
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
        after the old conversation (see ``_restart_from``) and the floor is inferred again from this call (the
        old one made the restarted calls all floor: 4,909 of 4,909 reported, history 0); the caller has taken
        this total as the new baseline.  ``prev`` and ``total`` are the previous and this running totals
        (tokens, in :data:`_FIELDS` order).  Returns the note that says so, naming the counters that went back
        (B13's line 7: only ``cached_input_tokens``, 800,000 -> 0, while the other counters went up)."""
        self._history = self._history[self._restart_from:]
        self._restart_from = 0
        self._floor_call = None
        self._open = None  # (the old conversation's last call takes no more output items)
        back = [(k, p, t) for k, p, t in zip(_FIELDS, prev, total, strict=True) if t < p]
        up = [k for k, p, t in zip(_FIELDS, prev, total, strict=True) if t > p]
        if len(back) == 1:
            k, p, t = back[0]
            what, values = f"cumulative {k}", f"{p:,} -> {t:,}"
        else:
            what = ("every cumulative total" if len(back) == len(_FIELDS)
                    else f"cumulative {_and([k for k, _p, _t in back])}")
            values = ", ".join(f"{k} {p:,} -> {t:,}" for k, p, t in back)
        rose = f"; {_and(up)} went up" if up else ""
        return Issue(self.path, rec.line, "totals_restart",
                     f"{what} went backwards at line {rec.line} ({values}{rose}): read as a restart (the history, "
                     "the inferred floor and the totals start again)")


def _and(names: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def sniff(sn: Sniff) -> float:
    """Confidence that a file is a Codex rollout: 0.95 for a ``session_meta`` line with ``id``/``cli_version``/
    ``originator`` or a ``token_count`` event; 0.9 for two or more ``{timestamp, type, payload}`` records of
    Codex's record types; 0.6 for one; 0.9 from the raw head bytes when a huge first ``session_meta`` line does not
    fit in the sniffed head.  Other formats (no ``payload`` object, other ``type`` values) score 0."""
    n = 0
    for v in sn.values:
        if not isinstance(v, dict) or not isinstance(v.get("payload"), dict) or v.get("type") not in _RECORD_TYPES:
            continue
        p = v["payload"]
        if v["type"] == "session_meta" and ("cli_version" in p or "originator" in p or "id" in p):
            return 0.95
        if v["type"] == "event_msg" and p.get("type") == "token_count":
            return 0.95
        n += 1
    if n == 0 and not sn.values:
        # The first line is longer than the sniffed head (a big session_meta): judge the raw bytes.
        head = sn.head.lstrip(b"\xef\xbb\xbf")[:512]
        if head.startswith(b'{"timestamp":') and b'"type":"session_meta","payload":{' in head:
            return 0.9
    return 0.9 if n >= 2 else 0.6 if n == 1 else 0.0


SPEC = register(FormatSpec(
    name=NAME,
    description="OpenAI Codex CLI rollouts (~/.codex/sessions/**/rollout-*.jsonl)",
    sniff=sniff,
    reader=CodexReader,
    needs_prefix=True,
    example="../shared/sample-logs/codex-rollout/rollout-2025-11-17T15-30-28-019a93b9_codex0.58.0.jsonl",
    aliases=("codex-cli", "codex-rollout"),
))
