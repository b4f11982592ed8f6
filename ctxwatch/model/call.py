"""What the accounting gives: a :class:`Call`, the summary of one API call in tokens with the source of each
number, and no message text (bodies stay on disk and are re-read by byte range)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ctxwatch.model.parsed import ResponseInfo, SourceRef, Src, Usage
from ctxwatch.model.pickling import fast_pickle as _fast_pickle
from ctxwatch.model.provenance import Provenance


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


#: Largest plausible prompt in tokens when the window is unknown: the largest context windows on offer are 10M
#: tokens (Llama 4 Scout); a reported prompt above that is a lifetime counter, not an occupancy.
MAX_PLAUSIBLE_PROMPT = 10_000_000


def implausible_prompt(reported: int, window: int | None) -> bool:
    """True for a reported prompt size (tokens) that no request can have: 0 or less (every
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
#: differ by, which a calibration would absorb).  A lifetime counter reported as a prompt is many times the request.
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
        system_key: content key of the system prompt (:func:`~ctxwatch.model.parsed.digest`; ``None`` when absent
            or not logged).
        system_present: False when the request carried no system prompt at all; ``None`` when not logged.
        tools_key: content key of the tool schemas; ``tool_names`` their names.
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
    provenance: Provenance = field(default_factory=Provenance)
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
        the user's window is an overflow of that window, not a false report; so is a harness's share of the
        model's window (``window_src`` harness: Codex's effective window), judged against the model's own."""
        return self.model_window if self.window_src in (Src.OPTION, Src.HARNESS) else self.window

    @property
    def report_implausible(self) -> bool:
        """True when the provider-reported prompt is itself implausible, whether or not
        something stands in for it: 0 or less, or above :attr:`plausible_window` (:func:`implausible_prompt`)
        while the call's own estimate of its whole logged request does not confirm it
        (:func:`estimate_confirms`: then the request was that big, and the report is an overflow)."""
        reported = self.prompt_reported
        if reported is None or not implausible_prompt(reported, self.plausible_window):
            return False
        return reported <= 0 or not estimate_confirms(reported, self.prompt_estimated, self.exact)

    @property
    def prompt_implausible(self) -> bool:
        """True when the provider-reported prompt is implausible (:attr:`report_implausible`: above the window)
        and nothing stands in for it: the call's occupancy is then unknown
        (:attr:`prompt_tokens`, :attr:`used_tokens`, :attr:`free_tokens` and :attr:`used_fraction` are ``None``)
        and the raw report stays in :attr:`prompt_reported`.  A reported 0 or less is implausible only when the
        call has no estimate and no floor + history to take its place."""
        return self._implausible(self.report_implausible)

    @property
    def prompt_tokens(self) -> int | None:
        """Best plausible prompt size in tokens: reported when known and plausible (a reported 0 is no prompt
        size: the estimate or floor + history stand in for it), else the estimate, else floor + history if both
        are known; ``None`` when the report is implausible (:attr:`prompt_implausible`: a count above the
        window is no occupancy, and the estimate is not put in its place, as the analysis does not)."""
        return self._tokens(self.report_implausible)

    def prompt_judged(self) -> tuple[bool, bool, int | None]:
        """:attr:`report_implausible`, :attr:`prompt_implausible` and :attr:`prompt_tokens` at once (the report
        judged once, for loops over every call of a run)."""
        judged = self.report_implausible
        return judged, self._implausible(judged), self._tokens(judged)

    def _implausible(self, report_implausible: bool) -> bool:
        if not report_implausible:
            return False
        return (self.prompt_reported or 0) > 0 or (
            self.prompt_estimated is None and (self.floor_tokens is None or self.history_tokens is None))

    def _tokens(self, report_implausible: bool) -> int | None:
        reported = self.prompt_reported
        if reported is not None and reported > 0:
            return None if report_implausible else reported
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


def own_request(c: Call) -> str | None:
    """What makes ``c`` a request of its own, not a later turn of a conversation: ``"batch request"`` (a batch
    file's line, :attr:`Provenance.batch_side`: each batch request is a conversation of its own), ``"request with
    its own custom_id"`` (a ``custom_id`` outside a batch file), or ``None``.  The eviction check, the compaction
    detection and the forecast read it."""
    if c.provenance.batch_side:
        return "batch request"
    if c.provenance.custom_id is not None:
        return "request with its own custom_id"
    return None


def separate_requests(a: Call, b: Call) -> bool:
    """True when ``b`` is not the next turn of ``a``'s conversation by what the log says of it: ``b`` is a batch
    line (two lines of a batch are never one conversation, even under one ``custom_id`` reused by two batches), or
    ``b`` has a ``custom_id`` other than ``a``'s (the same one again is a retry)."""
    if b.provenance.batch_side:
        return True
    cid = b.provenance.custom_id
    return cid is not None and cid != a.provenance.custom_id


def unrelated_requests(a: Call, b: Call) -> bool:
    """True when ``b`` is not a later turn of ``a``'s conversation: :func:`separate_requests`, or ``b`` is a fresh
    one-turn request (its history is one message, with no compaction before it) whose first message is not
    ``a``'s (a file of independent questions, logged one request a line without batch ids).  The response
    checks (format drift, echo, collapse) never compare two such calls."""
    if separate_requests(a, b):
        return True
    if b.compaction is not None or len(b.messages) != 1 or not a.messages:
        return False
    return b.messages[0].content_key != a.messages[0].content_key


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


#: The earliest and the latest call time (epoch seconds) of some calls: a session's first and last call.
Span = tuple[float, float]


def span_with(span: Span | None, ts: float | None) -> Span | None:
    """``span`` widened to call time ``ts`` (``None``: no time, the span as it was).  A session's last call is
    its latest timestamp, not the time of the call written last: a Claude Code session's subagent calls are
    written out of time order, one after another's later calls (``report --sessions`` and the session
    picker both say it so)."""
    if ts is None:
        return span
    return (ts, ts) if span is None else (min(span[0], ts), max(span[1], ts))


def call_span(calls: Iterable[Call]) -> Span | None:
    """The first and last call times of ``calls`` (:func:`span_with`), or ``None`` when none has a time."""
    span: Span | None = None
    for c in calls:
        span = span_with(span, c.timestamp)
    return span
