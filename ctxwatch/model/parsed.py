"""What a format reader gives: a :class:`ParsedCall`, with the text of the request (system prompt, tool schemas,
messages) so that it can be tokenized, and where each number came from (:class:`Src`)."""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from hashlib import blake2b
from typing import Any, Generic, TypeVar

from ctxwatch.model.fields import mend_message, mend_part
from ctxwatch.model.pickling import fast_pickle as _fast_pickle
from ctxwatch.model.provenance import Provenance


class Src(StrEnum):
    """Where a number came from. Every number ctxwatch shows carries one of these labels."""

    REPORTED = "reported"  # the provider's usage block in the log
    ESTIMATED = "estimated"  # our tokenizer run on the logged text
    INFERRED = "inferred"  # derived by difference, e.g. reported prompt minus estimated history
    CALIBRATED = "calibrated"  # an estimate scaled by the run's reported/estimated median ratio
    LOG = "log"  # a value written in the log itself (e.g. Codex model_context_window)
    CATALOG = "catalog"  # the genai-prices model catalogue
    DOCUMENTED = "documented"  # the provider's documented input limit (ctxwatch.catalog.documented's table)
    OPTION = "option"  # a command-line option or the config file
    HARNESS = "harness"  # the rule of the harness that wrote the log (ctxwatch.accounting.harness)
    REQUEST = "request"  # the request's own parameter (e.g. max_tokens)
    DEFAULT = "default"  # a field default (documented where it is defined)
    UNKNOWN = "unknown"  # nothing to go on: shown as unknown, never guessed


@_fast_pickle
@dataclass(slots=True, frozen=True)
class SourceRef:
    """Where a call's record lives on disk.

    Attributes:
        path: the log file the record was read from.
        line: 1-based line number of the record's first line (the line a person would open).
        line_end: 1-based line number of the record's last line (same as ``line`` for one-line records).
        byte_start: byte offset of the record's first byte in the file.
        byte_end: byte offset one past the record's last byte.
    """

    path: str
    line: int
    line_end: int
    byte_start: int
    byte_end: int

    @property
    def where(self) -> str:
        """``line 42``, or ``whole document`` for a call of a whole-file JSON log (Inspect AI, OpenHands,
        SWE-agent), whose records have no line of their own (line 0)."""
        return f"line {self.line}" if self.line > 0 else "whole document"


#: A token count, window or limit is below this: 2**53, exact in a JSON double and in range for every JSON writer
#: (orjson writes no int beyond 64 bits).  A count from a log at or above it is damage, not usage; an option or a
#: config value at or above it is refused.  The one limit every stage uses.
MAX_COUNT = 2**53


@_fast_pickle
@dataclass(slots=True, frozen=True)
class Usage:
    """Provider-reported token usage, normalized across providers (all values in tokens).

    ``None`` always means *not reported*, never zero.

    Attributes:
        prompt_total: the whole prompt as the model saw it, cached parts included
            (OpenAI ``prompt_tokens``; Anthropic ``input_tokens + cache_creation + cache_read``).
        input_uncached: prompt tokens that were neither read from nor written to the cache.
        cache_read: prompt tokens served from the prompt cache.
        cache_write: prompt tokens written to the prompt cache (Anthropic ``cache_creation_input_tokens``).
        output: completion tokens, reasoning included (OpenAI and Anthropic both count reasoning inside).
        reasoning: the reasoning share of ``output`` (a subset, never added again).
        cache_write_1h: the share of ``cache_write`` written with the 1-hour TTL (Anthropic
            ``cache_creation.ephemeral_1h_input_tokens``), priced higher than 5-minute writes (Anthropic
            pricing: 2x the input price against 1.25x); a subset, never added again.
        web_searches: server-side web searches the call ran (Anthropic ``server_tool_use.web_search_requests``),
            billed per search on top of the tokens (Anthropic pricing: $10 per 1,000 searches).
        damaged: a usage field held a value that is not a count, or the parts contradicted the total (cache
            reads above the whole prompt): the damaged fields are unknown (``None``, reported as an issue), and
            the call cannot be priced, since every price term needs them.
        service_tier: the processing tier that served the call as the response states it (OpenAI
            ``service_tier``: ``default``, ``flex``, ``priority``...; Anthropic's ``usage.service_tier``:
            ``standard``, ``priority``, ``batch``), priced at that tier's rates where the catalogue has them;
            ``None`` when not stated (the standard rates).
    """

    prompt_total: int | None = None
    input_uncached: int | None = None
    cache_read: int | None = None
    cache_write: int | None = None
    output: int | None = None
    reasoning: int | None = None
    cache_write_1h: int | None = None
    web_searches: int | None = None
    damaged: bool = False
    service_tier: str | None = None


@_fast_pickle
@dataclass(slots=True)
class Part:
    """One piece of a message's content, as sent to the model.

    Attributes:
        kind: ``text`` | ``tool_call`` | ``tool_result`` | ``image`` | ``document`` | ``thinking`` | ``other``.
        text: the text to tokenize (for ``tool_call``: the arguments as a JSON string; for ``image``: empty).
        name: the tool (function) name of a ``tool_call``.
        call_id: the tool call id of a ``tool_call`` or the id a ``tool_result`` answers.
        meta: format-specific extras, e.g. ``{"width": 1024, "height": 768, "detail": "high"}`` for an
            image, or ``{"bytes": 204800}`` for a base64 payload whose size is all we know.
    """

    kind: str
    text: str = ""
    name: str | None = None
    call_id: str | None = None
    meta: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        # Where a reader's values become typed: a field of the wrong JSON type is mended here and noted as the
        # record's issue (ctxwatch.model.fields), so no consumer sees it.
        if not (self.text.__class__ is str and self.kind.__class__ is str
                and (self.call_id is None or self.call_id.__class__ is str)
                and (self.name is None or self.name.__class__ is str)
                and (self.meta is None or self.meta.__class__ is dict)):
            mend_part(self)


@_fast_pickle
@dataclass(slots=True)
class Message:
    """One message of a request's history (or the system prompt), normalized.

    Attributes:
        role: ``system`` | ``developer`` | ``user`` | ``assistant`` | ``tool``.
        parts: the message content in order.
        name: OpenAI's optional ``name`` field (costs one extra framing token).
        label: a more specific kind for display and planning: ``compaction_summary``, ``meta``,
            ``instructions`` (e.g. AGENTS.md), ``environment`` (Codex's ``<environment_context>``),
            ``reasoning`` (a Responses API reasoning item: sent as an input item of its own, and only together
            with the output item that follows it), or ``None``.
        key: a content key (:func:`digest`) set by readers that already hashed the raw message (saves re-hashing the
            re-sent history); ``None`` means "compute from the parts" (:func:`message_key`).
    """

    role: str
    parts: list[Part]
    name: str | None = None
    label: str | None = None
    key: int | None = None

    def __post_init__(self) -> None:
        # (as Part's: a field of the wrong JSON type is mended and noted, ctxwatch.model.fields)
        if not (self.role.__class__ is str and self.parts.__class__ is list
                and (self.name is None or self.name.__class__ is str)
                and (self.label is None or self.label.__class__ is str)):
            mend_message(self)

    def tool_call_ids(self) -> list[str]:
        """Ids of the tool calls this (assistant) message makes, in order."""
        return [p.call_id for p in self.parts if p.kind == "tool_call" and p.call_id]

    def tool_result_ids(self) -> list[str]:
        """Ids of the tool calls this message answers (tool results), in order."""
        return [p.call_id for p in self.parts if p.kind == "tool_result" and p.call_id]

    def text(self) -> str:
        """All text of the message joined with newlines (tool-call arguments included)."""
        return "\n".join(p.text for p in self.parts if p.text)


def digest(*parts: str | bytes | None) -> int:
    """A content key of ``parts``: a signed 64-bit int, the same in every process and on every machine (Python's
    ``hash`` of a string is salted per process, so a key saved by one run would match nothing in the next).
    BLAKE2b over each part's bytes (text as UTF-8, lone surrogates kept), each prefixed by its length, so that no
    two different sequences give the same bytes; ``None`` is distinct from ``""``."""
    h = blake2b(digest_size=8)
    for p in parts:
        if p is None:
            h.update(_NONE)
            continue
        data = p if isinstance(p, bytes) else p.encode("utf-8", "surrogatepass")
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return int.from_bytes(h.digest(), "little", signed=True)


_K = TypeVar("_K")

#: What :func:`digest` writes for ``None``: a length no part can have.
_NONE = b"\xff" * 8


def message_key(msg: Message) -> int:
    """A message's content key (:func:`digest`): equal for the same role, name, label and parts, so that each
    distinct message is counted once however often the history re-sends it.  A reader may set it beforehand
    (:attr:`Message.key`) from the raw record."""
    if msg.key is not None:
        return msg.key
    return digest(msg.role, msg.name, msg.label,
                  *[x for p in msg.parts for x in (p.kind, p.text, p.name, p.call_id)])


def text_key(blocks: Iterable[str]) -> int:
    """The content key (:func:`digest`) of a sequence of text blocks: the system prompt's identity across calls."""
    return digest(*blocks)


class LastKey(Generic[_K]):
    """``key_of(items)`` for a list, remembered for the last list while the next one holds the same objects in
    order: a re-sending log's line decoder gives each line's unchanged tool schemas as the previous line's
    objects, so they are written out and hashed once, not once a call.  Pickled without what it remembers."""

    def __init__(self, key_of: Callable[[list[Any]], _K]) -> None:
        self.key_of = key_of
        self._last: tuple[list[Any], _K] | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {"key_of": self.key_of}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.key_of, self._last = state["key_of"], None

    def __call__(self, items: list[Any]) -> _K:
        last = self._last
        if last is None or len(last[0]) != len(items) or not all(map(operator.is_, last[0], items)):
            last = self._last = (list(items), self.key_of(items))
        return last[1]


@_fast_pickle
@dataclass(slots=True)
class ResponseInfo:
    """What the model answered, kept only as far as drift detection needs it.

    Attributes:
        text: the completion's visible text (``None`` if the log does not hold it).
        tool_calls: number of tool calls in the completion.
        finish_reason: the provider's stop/finish reason, if logged.
    """

    text: str | None = None
    tool_calls: int = 0
    finish_reason: str | None = None


@_fast_pickle
@dataclass(slots=True)
class ParsedCall:
    """One LLM API request/response as a format reader produced it, text included.

    ``system``, ``tools`` and ``messages`` are ``None`` when the format does not log them (Claude Code
    and Codex do not log the system prompt or tool schemas) or the log holds them damaged (a ``messages`` field
    missing or not a list: :attr:`Provenance.history_unknown`), and empty when the request had none.

    Attributes:
        source: where the record is on disk.
        timestamp: seconds since the epoch (UTC), or ``None``.
        model: the model id as logged.
        provider: ``openai`` | ``anthropic`` | ``google`` | ``None`` (decides the usage convention and
            the framing rules).
        session: session / conversation id, if any.
        context: ``main``, or the id of a sidechain / subagent context that must not mix with main.
        system: system prompt text blocks.
        tools: tool schemas as logged (OpenAI ``{"type":"function","function":{...}}`` or Anthropic
            ``{"name","description","input_schema"}``).
        messages: the history (every non-system message).
        max_output_tokens: the request's ``max_tokens`` / ``max_completion_tokens`` / ``max_output_tokens``.
        usage: normalized provider-reported usage.
        window: the context window in tokens if the log states it (Codex ``model_context_window``).
        response: the completion, for drift detection.
        compaction: ``None``, or a dict describing a compaction that happened just before this call
            (``{"kind": "compact_boundary", "pre_tokens": 170251, "post_tokens": None}``).
        history_reported_only: True when ``messages`` is only the visible part and the prompt total must be
            taken from usage (Claude Code, Codex).
        key: a dedupe key unique to this API call within its format (e.g. Claude ``message.id+requestId``).
        provenance: what the reader says of the call beyond its request and usage (:class:`Provenance`).
    """

    source: SourceRef
    timestamp: float | None = None
    model: str | None = None
    provider: str | None = None
    session: str | None = None
    context: str = "main"
    system: list[str] | None = None
    tools: list[dict[str, Any]] | None = None
    messages: list[Message] | None = None
    max_output_tokens: int | None = None
    usage: Usage | None = None
    window: int | None = None
    response: ResponseInfo | None = None
    compaction: dict[str, Any] | None = None
    history_reported_only: bool = False
    key: str | None = None
    provenance: Provenance = field(default_factory=Provenance)
