"""The normalized call model shared by every format reader and every consumer.

A format reader turns log records into :class:`ParsedCall` objects, which still hold the text of the
request (system prompt, tool schemas, messages) so that it can be tokenized.  The accounting step
(:mod:`ctxwatch.accounting`) turns each one into a :class:`Call`: a small summary with token counts,
content hashes and the byte range of the record on disk, and no message text.  Message bodies are
re-read from disk by byte offset when a person opens a call (:func:`ctxwatch.formats.reload_call`).

Nothing here imports Textual: this is the pure core.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any, TypeVar

_T = TypeVar("_T")


def _fast_pickle(cls: type[_T]) -> type[_T]:
    """Pickle a slots dataclass as ``cls(*field values)``.

    Parsed calls travel from the worker processes of a parallel folder read (:mod:`ctxwatch.engine.folder`); the
    pickling that ``dataclass(slots=True)`` generates looks the fields up again for every object, which made
    the transfer cost about as much as the parse.  Content hashes (``Message.key``) stay valid because the
    workers are forked, sharing the parent's hash seed.
    """
    state = operator.attrgetter(*(f.name for f in fields(cls)))  # type: ignore[arg-type]

    def __reduce__(self: Any) -> tuple[Any, tuple[Any, ...]]:
        return cls, state(self)

    cls.__reduce__ = __reduce__  # type: ignore[method-assign,assignment]
    return cls


class Src(StrEnum):
    """Where a number came from. Every number ctxwatch shows carries one of these labels."""

    REPORTED = "reported"  # the provider's usage block in the log
    ESTIMATED = "estimated"  # our tokenizer run on the logged text
    INFERRED = "inferred"  # derived by difference, e.g. reported prompt minus estimated history
    CALIBRATED = "calibrated"  # an estimate scaled by the run's reported/estimated median ratio
    LOG = "log"  # a value written in the log itself (e.g. Codex model_context_window)
    CATALOG = "catalog"  # the genai-prices model catalogue
    OPTION = "option"  # a command-line option or the config file
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
        key: a content hash set by readers that already hashed the raw message (saves re-hashing the
            re-sent history); ``None`` means "compute from the parts" (:func:`message_key`).
    """

    role: str
    parts: list[Part]
    name: str | None = None
    label: str | None = None
    key: int | None = None

    def tool_call_ids(self) -> list[str]:
        """Ids of the tool calls this (assistant) message makes, in order."""
        return [p.call_id for p in self.parts if p.kind == "tool_call" and p.call_id]

    def tool_result_ids(self) -> list[str]:
        """Ids of the tool calls this message answers (tool results), in order."""
        return [p.call_id for p in self.parts if p.kind == "tool_result" and p.call_id]

    def text(self) -> str:
        """All text of the message joined with newlines (tool-call arguments included)."""
        return "\n".join(p.text for p in self.parts if p.text)


def message_key(msg: Message) -> int:
    """A content hash of a message: equal for the same role, name and parts (used to count text once)."""
    if msg.key is not None:
        return msg.key
    return hash((msg.role, msg.name, msg.label, tuple((p.kind, p.text, p.name, p.call_id) for p in msg.parts)))


def text_key(blocks: Iterable[str]) -> int:
    """A content hash of a sequence of text blocks (system prompt identity across calls)."""
    return hash(tuple(blocks))


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
    missing or not a list: ``extra["history_unknown"]``, see :func:`ctxwatch.formats.canonical.forget_history`),
    and empty when the request had none.

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
        extra: format-specific data the UI may show (e.g. ``{"custom_id": "..."}``).  A line of a provider's
            batch file carries :data:`BATCH_SIDE` (see :func:`own_request`).
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
    extra: dict[str, Any] = field(default_factory=dict)


@_fast_pickle
@dataclass(slots=True, frozen=True)
class MessageStat:
    """Token summary of one message of one call (no text: bodies stay on disk).

    Attributes:
        role: the message role.
        tokens: tokens of the message, framing included.
        content_key: hash of the message's content; equal keys mean the same text was re-sent.
        tool_call_ids: ids of tool calls made by this message.
        tool_result_ids: ids of tool calls this message answers.
        label: see :attr:`Message.label`.
        has_image: the message holds an image or document whose tokens are a rule-of-thumb estimate.
        text_cut: a text of the message has a run too long to encode whole, cut where the tokenizer would not
            cut: its count is an estimate (:meth:`ctxwatch.tokens.Tokenizer.count_cut`).
    """

    role: str
    tokens: int
    content_key: int
    tool_call_ids: tuple[str, ...] = ()
    tool_result_ids: tuple[str, ...] = ()
    label: str | None = None
    has_image: bool = False
    text_cut: bool = False


@_fast_pickle
@dataclass(slots=True)
class Issue:
    """A problem with the input that was counted and reported instead of crashing.

    Attributes:
        path: the file.
        line: 1-based line number (0 when the problem is not tied to one line).
        kind: short machine-readable kind, e.g. ``invalid_json``, ``invalid_utf8``, ``truncated_tail``,
            ``unknown_record``, ``implausible_usage``, ``implausible_value``, ``estimate_disagrees``, ``reset``;
            notes (not bad lines): ``same_file``, ``skipped_file``, ``batch_pairing``, ``totals_restart``,
            ``subagent_calls_elsewhere``.
        message: one human-readable sentence.
        call_key: the dedupe key of the call the problem is about (implausible counts), so that a call logged
            again in another file reports its damage once; ``None`` for problems of a line or a file.
    """

    path: str
    line: int
    kind: str
    message: str
    call_key: str | None = None


#: Issue kinds meaning that a line of the log is damaged or is not a usable record: what "bad lines" counts
#: (the status line, ``check``).  Every other kind is a note about data that was read: a batch request that
@dataclass(frozen=True, slots=True)
class Resolved:
    """An issue reported earlier no longer holds: a last line reported as ``truncated_tail`` (the writer was
    idle for the grace period) was completed later and read as records.  Consumers drop the issue.

    Attributes:
        path: the file.  line: its 1-based line number.  kind: the issue kind (``truncated_tail``).
    """

    path: str
    line: int
    kind: str


#: failed or has no result, a file in no known format, an implausible count, a rotation.
BAD_LINE_KINDS = frozenset({"invalid_json", "invalid_utf8", "nul_bytes", "glued_records", "truncated_tail",
                            "oversized_line", "unknown_record", "invalid_field", "reader_error"})


def is_bad_line(issue: Issue) -> bool:
    """True when ``issue`` is a damaged or unusable line (see :data:`BAD_LINE_KINDS`), not a note."""
    return issue.kind in BAD_LINE_KINDS


def counted_issues(bad_lines: int, notes: int) -> str:
    """``3 bad lines`` or ``1 bad line, 2 notes``: damaged lines (each counted once, however many issues it
    has: :func:`tally_issues`), then the other notes (batch results without their request,
    skipped files), which are not damage and are not called bad lines."""
    text = f"{bad_lines} bad line{'s' if bad_lines != 1 else ''}"
    return f"{text}, {notes} note{'s' if notes != 1 else ''}" if notes else text


def tally_issues(issues: Iterable[Issue]) -> tuple[int, int]:
    """``(bad lines, notes)`` among ``issues`` (``reset`` markers left out): bad lines are the distinct lines
    with a bad-line issue (a line with NUL bytes that is also invalid JSON is one bad line, with two issues;
    a file-level one, line 0, counts as one each); notes are the other issues."""
    lines: set[tuple[str, int]] = set()
    whole = notes = 0
    for i in issues:
        if i.kind == "reset":
            continue
        if i.kind not in BAD_LINE_KINDS:
            notes += 1
        elif i.line:
            lines.add((i.path, i.line))
        else:
            whole += 1
    return len(lines) + whole, notes


#: Largest plausible prompt in tokens when the window is unknown: the largest context windows on offer are 10M
#: tokens (Llama 4 Scout); a reported prompt above that is a lifetime counter, not an occupancy (failure case B13).
MAX_PLAUSIBLE_PROMPT = 10_000_000


def implausible_prompt(reported: int, window: int | None) -> bool:
    """True for a reported prompt size (tokens) that no request can have (failure case B13): 0 or less (every
    request sends at least its messages' framing), or more than ``window`` tokens (the provider would have
    refused it), or than :data:`MAX_PLAUSIBLE_PROMPT` when the window is unknown (``None`` or 0).

    ``window`` is the window the log, the catalogue or the model's own rules give, never one the user set
    (``--window`` / config, :attr:`Call.model_window`): a prompt above the user's window is an overflow.  A
    call whose logged request shows the same size is not judged here but by :meth:`Call.report_implausible`
    (:func:`estimate_confirms`)."""
    return reported <= 0 or reported > (window if window else MAX_PLAUSIBLE_PROMPT)


#: How close (fraction of the report) the estimate of a wholly logged request must come to a reported prompt
#: above the window for the request itself to prove that size (:func:`estimate_confirms`): with the model's own
#: tokenizer, 5 % (the tolerance of ``analysis.ESTIMATE_TOLERANCE``: beyond it the log does not show what was
#: sent); with another tokenizer, 20 % (``analysis.ESTIMATE_WARN``: the most o200k and the Claude tokenizers
#: differ by, which a calibration would absorb).  A B13 report (4.28M of 570K) is 7x and more the request.
CONFIRM_TOLERANCE_EXACT = 0.05
CONFIRM_TOLERANCE_OTHER = 0.20


def estimate_confirms(reported: int, estimated: int | None, exact: bool) -> bool:
    """True when ``estimated`` (our count of the whole logged request in tokens, ``None`` when the request is
    not logged in full) is within :data:`CONFIRM_TOLERANCE_EXACT` (``exact``: the model's own tokenizer) or
    :data:`CONFIRM_TOLERANCE_OTHER` of ``reported`` (tokens, > 0): the request the log holds was that big, so a
    report above the window is a real overflow (the window is what is wrong), not an implausible report."""
    if estimated is None or reported <= 0:
        return False
    tol = CONFIRM_TOLERANCE_EXACT if exact else CONFIRM_TOLERANCE_OTHER
    return abs(reported - estimated) <= tol * reported


@_fast_pickle
@dataclass(slots=True)
class Call:
    """The accounted summary of one API call: what the dashboard, reports and analysis use.

    All token fields are in tokens; ``*_src`` fields say where each number came from (:class:`Src`).

    Attributes:
        index: 0-based position among the calls of this run (as in ``report --json``).
        source: where the record is on disk (bodies are re-read from here on demand).
        timestamp, model, provider, session, context: as in :class:`ParsedCall`.
        window / window_src: the context window and where it came from (``None`` = unknown).
        model_window: the window the log, the catalogue or the model's rules give, before any ``--window`` /
            config window (tokens, ``None`` = unknown): what a reported prompt is judged plausible against
            (:attr:`plausible_window`).  Set by the accountant; equal to ``window`` unless the user set that.
        system_tokens / tools_tokens: the floor's two parts (``None`` when not logged and not inferable
            separately); ``floor_tokens`` is their sum, or the inferred residual.
        history_tokens: every non-system message, framing and tool-call arguments included.
        reserve_tokens: room kept for the completion (the request's max output tokens, else the reserve
            fraction of the window).
        prompt_estimated: our estimate of the whole prompt (floor + history + primer), ``None`` if the
            request text was not logged in full.
        usage: the provider's reported usage.
        tokenizer: the encoding used (``o200k_base``, ``cl100k_base``, ``chars/4``).
        exact: True when the tokenizer is the model's own (OpenAI models with a known encoding).
        messages: per-message stats of the history, in order.
        system_key: content hash of the system prompt (``None`` when absent or not logged).
        system_present: False when the request carried no system prompt at all; ``None`` when not logged.
        tools_key: content hash of the tool schemas; ``tool_names`` their names.
        compaction: the compaction marker of the call, as in :class:`ParsedCall`.
        response: the completion features (see :class:`ResponseInfo`).
        key: the dedupe key.
    """

    index: int
    source: SourceRef
    timestamp: float | None
    model: str | None
    provider: str | None
    session: str | None
    context: str
    window: int | None
    window_src: Src
    system_tokens: int | None
    tools_tokens: int | None
    floor_tokens: int | None
    floor_src: Src
    history_tokens: int | None
    history_src: Src
    reserve_tokens: int | None
    reserve_src: Src
    prompt_estimated: int | None
    usage: Usage | None
    tokenizer: str
    exact: bool
    messages: tuple[MessageStat, ...] = ()
    system_key: int | None = None
    system_present: bool | None = None
    tools_key: int | None = None
    tool_names: tuple[str, ...] = ()
    compaction: dict[str, Any] | None = None
    response: ResponseInfo | None = None
    key: str | None = None
    max_output_tokens: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    model_window: int | None = None

    @property
    def prompt_reported(self) -> int | None:
        """The provider-reported prompt size in tokens, or ``None``."""
        return self.usage.prompt_total if self.usage else None

    @property
    def plausible_window(self) -> int | None:
        """The window (tokens) a reported prompt is judged plausible against: :attr:`window`, except when the
        user set it (``window_src`` option: ``--window`` or the config file, a what-if or a deployment limit),
        then :attr:`model_window`, the one the log or the catalogue gives (``None``: unknown).  A prompt above
        the user's window is an overflow of that window, not a false report."""
        return self.model_window if self.window_src == Src.OPTION else self.window

    @property
    def report_implausible(self) -> bool:
        """True when the provider-reported prompt is itself implausible (failure case B13), whether or not
        something stands in for it: 0 or less, or above :attr:`plausible_window` (:func:`implausible_prompt`)
        while the call's own estimate of its whole logged request does not confirm it
        (:func:`estimate_confirms`: then the request was that big, and the report is an overflow)."""
        reported = self.prompt_reported
        if reported is None or not implausible_prompt(reported, self.plausible_window):
            return False
        return reported <= 0 or not estimate_confirms(reported, self.prompt_estimated, self.exact)

    @property
    def prompt_implausible(self) -> bool:
        """True when the provider-reported prompt is implausible (:attr:`report_implausible`: above the window,
        failure case B13) and nothing stands in for it: the call's occupancy is then unknown
        (:attr:`prompt_tokens`, :attr:`used_tokens`, :attr:`free_tokens` and :attr:`used_fraction` are ``None``)
        and the raw report stays in :attr:`prompt_reported`.  A reported 0 or less is implausible only when the
        call has no estimate and no floor + history to take its place."""
        if not self.report_implausible:
            return False
        return (self.prompt_reported or 0) > 0 or (
            self.prompt_estimated is None and (self.floor_tokens is None or self.history_tokens is None))

    @property
    def prompt_tokens(self) -> int | None:
        """Best plausible prompt size in tokens: reported when known and plausible (a reported 0 is no prompt
        size: the estimate or floor + history stand in for it), else the estimate, else floor + history if both
        are known; ``None`` when the report is implausible (:attr:`prompt_implausible`: a count above the
        window is no occupancy, and the estimate is not put in its place, as the analysis does not)."""
        reported = self.prompt_reported
        if reported is not None and reported > 0:
            return None if self.report_implausible else reported
        if self.prompt_estimated is not None:
            return self.prompt_estimated
        if self.floor_tokens is not None and self.history_tokens is not None:
            return self.floor_tokens + self.history_tokens
        return None

    @property
    def split_unknown(self) -> bool:
        """True when the prompt size is known but not its floor / history split (a log that starts
        mid-session): shown as one "prompt" part, never as history."""
        return self.floor_tokens is None and self.history_tokens is None and self.prompt_tokens is not None

    @property
    def free_tokens(self) -> int | None:
        """Window minus the prompt (:attr:`used_tokens`) and the reserve, in tokens (negative = overflow);
        ``None`` if unknown or the reported prompt is implausible."""
        if self.window is None or self.reserve_tokens is None:
            return None
        used = self.used_tokens
        if used is None:
            return None
        return self.window - used - self.reserve_tokens

    @property
    def used_tokens(self) -> int | None:
        """The prompt in tokens, as the flags and the forecast see it (:attr:`prompt_tokens`): the reported
        size when known, else the estimate (floor + history + the reply primer).  Floor + history alone can
        differ from it by the primer and, for a tokenizer that is not the model's own, by the tokenizer gap;
        "free" and "used %" follow the provider's count.  ``None`` when unknown or implausible."""
        return self.prompt_tokens

    @property
    def used_fraction(self) -> float | None:
        """Prompt tokens as a fraction of the window, or ``None`` when the window or the prompt is unknown (an
        implausible report included)."""
        used = self.used_tokens
        if not self.window or used is None:
            return None
        return used / self.window


@dataclass(frozen=True, slots=True)
class Breakdown:
    """A call's floor and history as every surface shows them (:func:`shown_breakdown`), in tokens.

    Attributes:
        system_tokens / tools_tokens / floor_tokens / history_tokens: as in :class:`Call`, calibrated or not
            (``None`` = unknown).  Calibrated, system + tools add up to the floor.
        floor_src / history_src: their sources; :attr:`Src.CALIBRATED` where the estimate was scaled (not for a
            count of 0, which scaling leaves 0).
        factor: what the floor was scaled by (dimensionless): the calibration of the call's model, or less where
            that would put the floor above the prompt the call reports (:attr:`capped`); ``None`` when nothing
            was scaled (the numbers are the call's own).
        capped: True when the calibrated floor would not fit in the reported prompt, so the floor is the whole
            reported prompt (less the reply primer) and :attr:`factor` the ratio that gives it.
        filled: True when the history is the rest of the reported prompt (reported - reply primer - floor),
            not its count scaled by :attr:`factor`: the call reports a plausible prompt.
    """

    system_tokens: int | None
    tools_tokens: int | None
    floor_tokens: int | None
    floor_src: Src
    history_tokens: int | None
    history_src: Src
    factor: float | None = None
    capped: bool = False
    filled: bool = False

    @property
    def calibrated(self) -> bool:
        """True when the estimates were scaled (:attr:`factor` is set)."""
        return self.factor is not None


def raw_breakdown(call: Call) -> Breakdown:
    """``call``'s floor and history as accounted, nothing scaled."""
    return Breakdown(call.system_tokens, call.tools_tokens, call.floor_tokens, call.floor_src, call.history_tokens,
                     call.history_src)


def shown_breakdown(call: Call, calibration: float | None) -> Breakdown:
    """The floor (system prompt + tool schemas) and history of ``call`` as ctxwatch shows them everywhere: the
    dashboard's table, bar, chart and detail, ``report`` (text, and ``calibrated`` in ``report --json``), ``plan``
    and the eviction preview, and the flags' reasons.

    The one rule: where the floor is estimated (``floor_src`` estimated: the log holds the system prompt and the
    tools) with a tokenizer that is not the model's own (``exact`` False: Claude, Gemini, counted with
    ``o200k_base``) and ``calibration`` is given (the median reported / estimated prompt ratio of the call's
    model in the run, else the run's: :class:`ctxwatch.accounting.Calibrations`), the floor is scaled by it and
    marked :attr:`Src.CALIBRATED`, so the same system prompt and tools show the same floor on every call.  The
    history is then what the call's reported prompt leaves (reported - reply primer - floor), as an inferred
    history is: the run's median cannot fit every call, and the rest of the tokenizer gap is the history's, so
    floor + history + reply primer is the reported prompt and the bar adds up to the window.  Without a plausible
    report (none, 0, or implausible) the history is scaled by the calibration too.  The floor never exceeds the
    reported prompt less the primer (failure case B01: a floor of 1,053 estimated tokens "calibrated" to 2,007 in
    a reported prompt of 1,234): there it is capped and the history is 0.  The floor is rounded to whole tokens
    and its two parts share it by largest remainder, so that system + tools = floor.  A count of 0 keeps its own
    source: scaling leaves it 0, so it is shown as a plain 0.  Otherwise (an exact tokenizer, an inferred or
    unknown floor, no calibration) the call's own numbers (:func:`raw_breakdown`).

    Args:
        call: the accounted call.
        calibration: the factor of the call's model (dimensionless, > 0), or ``None`` when there is none (fewer
            than :data:`~ctxwatch.accounting.MIN_CALIBRATION_CALLS` calls with a reported and an estimated
            prompt, or a median no tokenizer gap explains).
    """
    floor = call.floor_tokens
    if call.exact or calibration is None or call.floor_src != Src.ESTIMATED or floor is None:
        return raw_breakdown(call)
    factor, capped = calibration, False
    history = call.history_tokens
    reported, estimated = call.prompt_reported, call.prompt_estimated
    room: int | None = None  # (the reported prompt less the reply primer: what floor + history add up to)
    if reported is not None and reported > 0 and not call.report_implausible and history is not None \
            and estimated is not None:
        room = max(0, reported - max(0, estimated - floor - history))
    scaled = round(floor * factor)
    if room is not None and scaled > room:
        scaled, capped = room, True
        factor = room / floor if floor else factor
    system, tools = call.system_tokens, call.tools_tokens
    if system is not None and tools is not None and system + tools == floor:
        exact_s, exact_t = system * factor, tools * factor
        system, tools = math.floor(exact_s), math.floor(exact_t)
        short = scaled - system - tools  # (0, 1 or 2 tokens left by rounding down: the largest remainders get them)
        if short >= 2 or (short == 1 and exact_s - system >= exact_t - tools):
            system += 1
            short -= 1
        tools += max(0, short)
    else:
        system = None if system is None else round(system * factor)
        tools = None if tools is None else round(tools * factor)
    if history is not None:
        history = room - scaled if room is not None else round(history * factor)
    return Breakdown(system, tools, scaled, Src.CALIBRATED if floor else call.floor_src, history,
                     Src.CALIBRATED if call.history_tokens else call.history_src, factor, capped, room is not None)


def shown_used(call: Call, shown: Breakdown | None) -> int | None:
    """The prompt in tokens as every surface shows it in used, used % and free: :attr:`Call.used_tokens`, except
    for a call that reports no prompt and whose floor and history are shown calibrated (``shown``, from
    :func:`shown_breakdown`): the calibrated floor + history + the reply primer, about what the provider would
    count (the analysis's occupancy, the estimate x the calibration, is within a token or two of it) and what
    ``plan`` calls 'before'.  Free and used % then agree with the floor and history beside them (the bar adds
    up to the window), where they came from the raw estimate."""
    if shown is not None and shown.calibrated and not shown.filled and call.prompt_reported is None \
            and call.prompt_estimated is not None and call.floor_tokens is not None \
            and call.history_tokens is not None and shown.floor_tokens is not None \
            and shown.history_tokens is not None:
        primer = max(0, call.prompt_estimated - call.floor_tokens - call.history_tokens)
        return shown.floor_tokens + shown.history_tokens + primer
    return call.used_tokens


def shown_free(call: Call, shown: Breakdown | None) -> int | None:
    """Window minus :func:`shown_used` and the reserve, in tokens (negative = overflow); ``None`` if unknown."""
    used = shown_used(call, shown)
    if call.window is None or call.reserve_tokens is None or used is None:
        return None
    return call.window - used - call.reserve_tokens


def shown_fraction(call: Call, shown: Breakdown | None) -> float | None:
    """:func:`shown_used` as a fraction of the window, or ``None`` when either is unknown."""
    used = shown_used(call, shown)
    if not call.window or used is None:
        return None
    return used / call.window


def implausible_what(call: Call) -> str:
    """Why ``call``'s reported prompt is implausible, in a few words for a message: ``4,280,000 tokens, more
    than its 570,000-token window``, ``0 tokens, and every request has a prompt``, or ``..., more than the
    10,000,000 tokens of the largest windows`` when the window is unknown (:data:`MAX_PLAUSIBLE_PROMPT`)."""
    reported = call.prompt_reported or 0
    if reported <= 0:
        return f"{reported:,} tokens, and every request has a prompt"
    window = call.plausible_window
    if window and window != call.window:
        # (the user's --window is smaller: the report is judged against the model's own window)
        return f"{reported:,} tokens, more than the model's {window:,}-token window"
    if window:
        return f"{reported:,} tokens, more than its {window:,}-token window"
    return f"{reported:,} tokens, more than the {MAX_PLAUSIBLE_PROMPT:,} tokens of the largest windows"


#: ``extra`` key that marks a call as a line of a provider's batch file: ``"input"`` (a request read without its
#: result) or ``"output"`` (a result, joined to its request or not).  Every reader of batch lines sets it (OpenAI
#: Batch and Anthropic Message Batches in ``formats/batch.py``; Gemini Batch Mode ``{key, response}`` and Vertex
#: AI batch prediction ``{request, response, status}`` in ``formats/gemini.py``), with or without a
#: ``custom_id``: a Vertex line has none.  Pricing reads it (the batch rate), and so do the eviction check, the
#: compaction detection and the forecast, through :func:`own_request` / :func:`separate_requests`.
BATCH_SIDE = "batch_side"


def own_request(c: Call) -> str | None:
    """What makes ``c`` a request of its own, not a later turn of a conversation: ``"batch request"`` (a batch
    file's line, :data:`BATCH_SIDE`: each batch request is a conversation of its own), ``"request with its own
    custom_id"`` (a ``custom_id`` outside a batch file, as on the saved Gemini sample's synchronous calls), or
    ``None``."""
    if c.extra.get(BATCH_SIDE):
        return "batch request"
    if c.extra.get("custom_id") is not None:
        return "request with its own custom_id"
    return None


def separate_requests(a: Call, b: Call) -> bool:
    """True when ``b`` is not the next turn of ``a``'s conversation by what the log says of it: ``b`` is a batch
    line (:data:`BATCH_SIDE`; two lines of a batch are never one conversation, even under one ``custom_id``
    reused by two batches), or ``b`` has a ``custom_id`` other than ``a``'s (the same one again is a retry)."""
    if b.extra.get(BATCH_SIDE):
        return True
    cid = b.extra.get("custom_id")
    return cid is not None and cid != a.extra.get("custom_id")


def session_ranks(calls: Sequence[Call], context: str | None = None) -> dict[str | None, tuple[float, int]]:
    """``session -> (last call's timestamp, last position)`` over ``calls`` (of ``context`` when given): the
    order in which report lists sessions, newest first, and the forecast and ``plan`` pick the newest.  A
    session without timestamps ranks below those with one (``-inf``); among equals the one read last (a
    folder's files are read oldest-modified first) is newest."""
    ranks: dict[str | None, tuple[float, int]] = {}
    for pos, c in enumerate(calls):
        if context is None or c.context == context:
            ts = c.timestamp if c.timestamp is not None else -math.inf
            ranks[c.session] = (max(ranks.get(c.session, (-math.inf, 0))[0], ts), pos)
    return ranks

