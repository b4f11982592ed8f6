"""A context budget for your own agent loop, and a logger that lets ctxwatch watch it (issue 7).

Pure core, no SDK dependency: messages are plain dicts in the OpenAI chat shape (``{"role", "content",
"tool_calls", "tool_call_id"}``) or the Anthropic Messages shape (``content`` blocks ``text``/``tool_use``/
``tool_result``/``image``).  Example::

    from ctxwatch import ContextBudget, CallLogger

    budget = ContextBudget("gpt-4o", system="You are terse.", tools=TOOLS)
    log = CallLogger("calls.jsonl")               # then: ctxwatch calls.jsonl
    messages = [{"role": "user", "content": "fix the failing test"}]
    while True:
        messages, report = budget.fit(messages, summariser=my_summariser)
        response = client.chat.completions.create(model="gpt-4o", messages=messages, tools=TOOLS)
        log.log({"model": "gpt-4o", "messages": messages, "tools": TOOLS}, response)
        ...

:meth:`ContextBudget.fit` applies the same eviction planner as ``ctxwatch plan`` (:mod:`ctxwatch.planner`):
the system prompt is pinned and never rewritten, the tool schemas are counted as the floor, tool calls
stay with their results, the newest ``keep_recent`` **exchanges** stay (an assistant message with all its
tool results, or one other message; ``unit="turn"`` counts user turns instead), and the completion reserve
is kept free.  In an agent loop one user prompt is followed by many tool calls, so the cut usually falls
inside that prompt's turn: the returned history then continues with a user message before the kept
exchanges (the summary, or in drop mode the re-injected task), so it still starts on a user message.

Unlike ``ctxwatch plan`` (a preview of the minimal eviction at the budget), a loop compacts at the
**trigger** by default (``compact_at="trigger"``, field practice): once the prompt is above 0.8 of the
budget, everything older than the newest ``keep_recent`` exchanges is summarised at once, so the loop
then runs several calls below the trigger before it compacts again.  Compacting the minimum at the budget
(``compact_at="budget"``) lands just under the budget, above the trigger, and compacts again one or two
calls later, forever (``ctxwatch check`` flags it as ``trigger_no_compaction``).
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, NamedTuple

import orjson

from ctxwatch.accounting import reserve_for
from ctxwatch.config import Settings
from ctxwatch.model import Message
from ctxwatch.planner import (
    COMPACT_AT,
    SUMMARY_HEADER,
    UNITS,
    CompactAt,
    Mode,
    Plan,
    Policy,
    Unit,
    plan_messages,
    text_message_tokens,
)
from ctxwatch.tokens import REPLY_PRIMER, Counter, counter_for

Summariser = Callable[[list[dict[str, Any]]], str]

_ANTHROPIC_BLOCKS = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use",
                               "document"})


def infer_provider(model: str | None, tools: Sequence[dict[str, Any]] | None = None) -> str:
    """``anthropic`` for ``claude*`` models or Anthropic-shaped tools, ``google`` for ``gemini*``, else
    ``openai``. Provider-qualified ids (``anthropic/claude-...``) use their last segment."""
    base = (model or "").rsplit("/", 1)[-1].lower()
    if base.startswith("claude"):
        return "anthropic"
    if base.startswith("gemini"):
        return "google"
    if any(isinstance(t, dict) and "input_schema" in t for t in tools or ()):
        return "anthropic"
    return "openai"


def _is_anthropic(m: dict[str, Any]) -> bool:
    if m.get("role") == "tool" or "tool_calls" in m or "function_call" in m:
        return False
    c = m.get("content")
    if not isinstance(c, list):
        return False
    for b in c:
        if isinstance(b, dict):
            t = b.get("type")
            if t in _ANTHROPIC_BLOCKS or (t == "image" and isinstance(b.get("source"), dict)):
                return True
    return False


def to_message(m: dict[str, Any]) -> Message:
    """Normalize one chat message dict (OpenAI or Anthropic shape, detected per message) into a
    :class:`~ctxwatch.model.Message`, with the same parsing as ctxwatch's log readers
    (:mod:`ctxwatch.formats.canonical`): tool-call names and arguments, tool results and images included.

    Raises:
        TypeError: ``m`` is not a dict.
    """
    from ctxwatch.formats.canonical import anthropic_request_to_parts, openai_message

    if not isinstance(m, dict):
        raise TypeError(f"a message must be a dict, got {type(m).__name__}")
    if _is_anthropic(m):
        msgs = anthropic_request_to_parts({"messages": [m]})[2]
        if msgs:
            return msgs[0]
    return openai_message(m)


def _blocks(system: str | Sequence[str] | None) -> list[str]:
    if system is None:
        return []
    if isinstance(system, str):
        return [system] if system else []
    out: list[str] = []
    for b in system:
        if isinstance(b, dict):  # Anthropic system text blocks
            out.append(str(b.get("text") or ""))
        else:
            out.append(str(b))
    return out


@dataclass(slots=True)
class BudgetReport:
    """What one :meth:`ContextBudget.fit` did. All values in tokens unless stated.

    Attributes:
        before_tokens: floor + history as given.
        after_tokens: floor + the returned messages, counted on what is returned (real summary included).
        planned_after_tokens: the planner's figure (with the assumed ``summary_tokens``).
        budget_tokens / window / reserve_tokens: the limits (see :class:`~ctxwatch.planner.Policy`).
        trigger_tokens: the compaction trigger (0.8 of the budget by default).
        compact_at: ``trigger`` or ``budget`` (see :class:`ContextBudget`).
        floor_tokens / system_tokens / tools_tokens: the pinned floor and its parts.
        summary_tokens: tokens of the summary message actually inserted (0 if none).
        evicted: number of messages removed (summarised or dropped); kept: history messages kept verbatim.
        kept_units: how many whole units (``unit``) the kept messages make.
        reinjected: ``[(kind, tokens)]`` of the items re-injected.
        fits: ``after_tokens <= budget_tokens``.
        reason: the planner's sentence(s), plus a note when the real summary changed the outcome.
        mode: ``summarise`` or ``drop`` (``drop`` when no summariser was given).
        tokenizer / exact / note: the encoding, whether it is the model's own, and why it fell back.
        unit: ``exchange`` or ``turn`` (what ``keep_recent`` counted).
        lead: what the returned history puts before the kept messages, in order (``"summary"`` and the
            re-injected kinds), all user messages; empty when nothing was evicted.
        plan: the full :class:`~ctxwatch.planner.Plan`.
    """

    before_tokens: int
    after_tokens: int
    planned_after_tokens: int
    budget_tokens: int
    window: int
    reserve_tokens: int
    floor_tokens: int
    system_tokens: int
    tools_tokens: int
    summary_tokens: int
    evicted: int
    kept: int
    reinjected: list[tuple[str, int]]
    fits: bool
    reason: str
    mode: str
    tokenizer: str
    exact: bool
    note: str | None = None
    kept_units: int = 0
    unit: str = "exchange"
    lead: list[str] = field(default_factory=list)
    trigger_tokens: int = 0
    compact_at: str = "trigger"
    plan: Plan | None = field(default=None, repr=False)

    def to_json(self) -> dict[str, Any]:
        """Every attribute except ``plan``, as a JSON-ready dict (``reinjected`` as objects)."""
        return {
            "before_tokens": self.before_tokens, "after_tokens": self.after_tokens,
            "planned_after_tokens": self.planned_after_tokens, "budget_tokens": self.budget_tokens,
            "window": self.window, "reserve_tokens": self.reserve_tokens, "floor_tokens": self.floor_tokens,
            "system_tokens": self.system_tokens, "tools_tokens": self.tools_tokens,
            "summary_tokens": self.summary_tokens, "evicted": self.evicted, "kept": self.kept,
            "reinjected": [{"kind": k, "tokens": t} for k, t in self.reinjected], "fits": self.fits,
            "reason": self.reason, "mode": self.mode, "tokenizer": self.tokenizer, "exact": self.exact,
            "note": self.note, "kept_units": self.kept_units, "unit": self.unit, "lead": list(self.lead),
            "trigger_tokens": self.trigger_tokens, "compact_at": self.compact_at,
        }

    def __str__(self) -> str:
        return (f"{self.before_tokens:,} -> {self.after_tokens:,} tokens (budget {self.budget_tokens:,}, "
                f"{'fits' if self.fits else 'does NOT fit'}; evicted {self.evicted}, kept {self.kept} "
                f"({self.kept_units} {self.unit}{'s' if self.kept_units != 1 else ''}); "
                f"{self.tokenizer}{'' if self.exact else ' estimate'})")


class FitResult(NamedTuple):
    """``(messages, report)`` from :meth:`ContextBudget.fit`; unpacks like a tuple."""

    messages: list[dict[str, Any]]
    report: BudgetReport


class ContextBudget:
    """Keep an agent loop's prompt within a budget, with the ctxwatch eviction planner.

    Args:
        model: the model id (picks the tokenizer and, when ``window`` is not given, the catalogue window).
        window: the context window in tokens; default ``settings.window``, else the genai-prices catalogue.
        system: the system prompt (a string, text blocks, or Anthropic ``{"type":"text","text":...}`` blocks).
            Pinned: counted as floor, never evicted or rewritten.
        tools: the tool schemas (OpenAI or Anthropic shape), counted once as floor.
        settings: thresholds (budget fraction 0.6, reserve 0.15, keep_recent 6, summary_tokens 2000 by
            default; see :mod:`ctxwatch.config`).
        provider: ``openai`` | ``anthropic`` | ``google``; default inferred by :func:`infer_provider`.
        max_tokens: the ``max_tokens`` you request; used as the completion reserve instead of the fraction (capped
            at the window, as report does: a limit at or above the window leaves no budget).
        keep_recent: overrides ``settings.keep_recent`` (units always kept, see ``unit``).
        unit: what ``keep_recent`` counts: ``exchange`` (default; an assistant message with all its tool
            results, or one other message; the cut may fall inside a user turn) or ``turn`` (a user message
            and everything up to the next one: the earlier behaviour, which in a tool loop protects the whole
            run after the last prompt).
        reinject: re-inject the task, plan, task list and edited file after a compaction (default True).
            With ``reinject=False`` and no summariser, a cut inside a user turn has nothing to start the
            history with, so the cut goes to a user message (see :meth:`fit`).
        compact_at: ``trigger`` (default, field practice for a live loop): when the prompt is above the
            compaction trigger (``settings.trigger`` x the budget, 0.8 x 0.6 of the window by default),
            compact fully: everything older than the newest ``keep_recent`` units is summarised (or dropped);
            at or below the trigger nothing changes.  ``budget``: compact only above the budget, and only
            the minimum that fits (what ``ctxwatch plan`` previews); in a loop that lands just under the
            budget, above the trigger, and compacts again a call or two later.

    Attributes:
        system: the system text blocks, unchanged. For Anthropic pass them as the ``system`` parameter
            (:meth:`fit` does not insert a system message for that provider).
        window, provider, counter, policy: as resolved.
        tokenizer / exact / note: the encoding used, whether it is the model's own, and why it fell back to
            ``chars/4`` (``None`` when it did not).
        last_report: the report of the latest :meth:`fit`.

    Raises:
        ValueError: the window is unknown (pass ``window=``), a setting is out of range, or ``unit`` or
            ``compact_at`` is unknown.
    """

    def __init__(self, model: str | None = None, *, window: int | None = None,
                 system: str | Sequence[Any] | None = None, tools: Sequence[dict[str, Any]] | None = None,
                 settings: Settings | None = None, provider: str | None = None, max_tokens: int | None = None,
                 keep_recent: int | None = None, reinject: bool = True, unit: Unit = "exchange",
                 compact_at: CompactAt = "trigger") -> None:
        self.settings = settings or Settings()
        self.model = model
        self.tools: list[dict[str, Any]] = [t for t in (tools or []) if isinstance(t, dict)]
        self.provider = provider or infer_provider(model, self.tools)
        if window is None:
            window = self.settings.window
        if window is None:
            from ctxwatch.accounting.windows import catalog_window

            window = catalog_window(model, self.provider)
        if not window:
            raise ValueError(f"context window of model {model!r} is unknown; pass window=<tokens>")
        self.window = int(window)
        self.system: list[str] = _blocks(system)
        self.counter: Counter = counter_for(model, self.provider)
        self.tokenizer = self.counter.name
        self.exact = self.counter.exact
        self.note = self.counter.tokenizer.note
        if unit not in UNITS:
            raise ValueError(f"unit must be 'exchange' or 'turn', got {unit!r}")
        if compact_at not in COMPACT_AT:
            raise ValueError(f"compact_at must be 'budget' or 'trigger', got {compact_at!r}")
        extra: dict[str, Any] = {"unit": unit, "compact_at": compact_at}
        if keep_recent is not None:
            extra["keep_recent"] = keep_recent
        if not reinject:
            extra.update(reinject_task=False, reinject_plan=False, reinject_tasks=False, reinject_file=False)
        # (the reserve rule of report and plan, accounting.reserve_for: max_tokens capped at the window)
        reserve = reserve_for(max_tokens, self.window, self.settings)[0] if max_tokens else None
        self.policy = Policy.from_settings(self.settings, self.window, reserve_tokens=reserve, **extra)
        self.system_tokens = self.counter.system_tokens(self.system)
        self.tools_tokens = self.counter.tools_tokens(self.tools)
        self.last_report: BudgetReport | None = None

    @property
    def floor_tokens(self) -> int:
        """System prompt + tool schemas, in tokens."""
        return self.system_tokens + self.tools_tokens

    @property
    def budget_tokens(self) -> int:
        """The prompt budget in tokens (:attr:`ctxwatch.planner.Policy.budget_tokens`)."""
        return self.policy.budget_tokens

    def _split(self, messages: Sequence[dict[str, Any]]) -> tuple[list[Message], bool]:
        """Normalized messages, and whether the constructor's system prompt must be counted on its own
        (False when the messages already carry it as a system message with the same text)."""
        msgs = [to_message(m) for m in messages]
        if not self.system:
            return msgs, False
        joined = "\n".join(self.system)
        carried = any(m.role in ("system", "developer") and m.text() == joined for m in msgs)
        return msgs, not carried

    def count(self, messages: Sequence[dict[str, Any]]) -> int:
        """Prompt tokens of ``messages`` with this budget's floor (system prompt + tools), framing and the reply
        primer included (:data:`ctxwatch.tokens.REPLY_PRIMER`): the prompt ``report`` estimates for the same
        request, so the budget compacts at the trigger ``check`` flags."""
        msgs, own = self._split(messages)
        return (self.system_tokens if own else 0) + self.tools_tokens + sum(self.counter.message_tokens(m)
                                                                            for m in msgs) + REPLY_PRIMER

    def plan(self, messages: Sequence[dict[str, Any]], *, mode: Mode = "summarise", unit: Unit | None = None,
             compact_at: CompactAt | None = None) -> Plan:
        """The eviction plan for ``messages`` (nothing is changed). ``mode``: ``summarise`` | ``drop``;
        ``unit``: ``exchange`` | ``turn``; ``compact_at``: ``trigger`` | ``budget`` (defaults: the
        constructor's)."""
        msgs, own = self._split(messages)
        policy = replace(self.policy, mode=mode) if mode != self.policy.mode else self.policy
        if unit is not None and unit != policy.unit:
            policy = replace(policy, unit=unit)
        if compact_at is not None and compact_at != policy.compact_at:
            policy = replace(policy, compact_at=compact_at)
        return plan_messages(msgs, policy, system=self.system if own else None, tools=self.tools,
                             counter=self.counter, overhead=REPLY_PRIMER)

    def fit(self, messages: Sequence[dict[str, Any]], summariser: Summariser | None = None) -> FitResult:
        """Return ``messages`` fitted to the budget, and a :class:`BudgetReport`.

        Args:
            messages: the history as dicts (OpenAI or Anthropic shape); ``system``/``developer`` messages in
                it are pinned and passed through unchanged.  Not modified.
            summariser: called once with the evicted messages (the original dicts, in order) when something
                must go; returns the summary text.  ``None`` drops the evicted span instead (mode ``drop``).

        Returns:
            ``FitResult(messages, report)``.  When the prompt is at or below the compaction trigger (with
            ``compact_at="budget"``: within the budget) the messages are returned as given (plus the system
            message, see below).  Otherwise everything older than the newest ``keep_recent`` units goes
            (``compact_at="budget"``: the least that fits) and the result is: the system message first (for
            OpenAI/Google, when the constructor got a system prompt the messages do not carry), pinned
            messages before the cut, a user message with the summary (``SUMMARY_HEADER`` + summary), one user
            message per re-injected item (task, plan, task list, edited file), then the kept exchanges
            verbatim (``report.lead`` lists what stands before them).

            The kept span may start on an assistant message (the cut fell inside a user turn, between
            exchanges); the summary or the re-injected items, all user messages, then stand before it, so
            the non-system history always starts on a user message.  Without a summariser (drop mode) and
            with nothing to re-inject, the cut goes to a user message instead (``report.reason`` says so),
            and the history is never emptied.

        Raises:
            TypeError: a message is not a dict, or the summariser does not return a string.
            Whatever ``summariser`` raises.
        """
        originals = list(messages)
        msgs, own = self._split(originals)
        policy = self.policy
        if summariser is None and policy.mode == "summarise":
            policy = replace(policy, mode="drop")
        plan = plan_messages(msgs, policy, system=self.system if own else None, tools=self.tools,
                             counter=self.counter, overhead=REPLY_PRIMER)
        out: list[dict[str, Any]] = []
        if own and self.provider != "anthropic":
            out.append({"role": "system", "content": "\n".join(self.system)})
        evicted = [originals[m.source_index] for m in plan.evicted if m.source_index is not None]
        summary_msg: dict[str, Any] | None = None
        if evicted and policy.mode == "summarise" and summariser is not None:
            text = summariser(evicted)
            if not isinstance(text, str):
                raise TypeError(f"the summariser must return a str, got {type(text).__name__}")
            summary_msg = {"role": "user", "content": SUMMARY_HEADER + text}
        cut = plan.cut if plan.cut is not None else len(plan.messages)
        for m in plan.messages:
            if m.source_index is None or m.index >= cut:
                continue
            if m.fate == "pinned":
                out.append(originals[m.source_index])
        if summary_msg is not None:
            out.append(summary_msg)
        for item in plan.reinject:
            out.append({"role": "user", "content": item.text})
        for m in plan.messages:
            if m.source_index is not None and m.index >= cut:
                out.append(originals[m.source_index])
        summary_tokens = text_message_tokens(self.counter, summary_msg["content"]) if summary_msg else 0
        after = self.count(out)  # counts the constructor's system prompt once, carried in `out` or not
        reason = plan.reason
        if summary_msg is not None and summary_tokens > policy.summary_tokens:
            reason += (f"; the summary took {summary_tokens:,} tokens, more than the {policy.summary_tokens:,} "
                       "planned")
        if summary_msg is not None and (after <= plan.budget_tokens) != plan.fits:
            reason += (f"; with the real summary ({summary_tokens:,} tokens) the result is {after:,} tokens and "
                       + ("fits" if after <= plan.budget_tokens else "does not fit"))
        trig = plan.trigger_tokens
        if (summary_msg is not None and policy.compact_at == "trigger"
                and (after > trig) != (plan.after_tokens > trig)):
            reason += (f"; with the real summary the result is {after:,} tokens, "
                       + ("above" if after > trig else "not above") + f" the compaction trigger of {trig:,}")
        if summariser is None and plan.evicted and self.policy.mode == "summarise":
            reason += "; no summariser given, so the evicted span was dropped"
        report = BudgetReport(
            before_tokens=plan.before_tokens, after_tokens=after, planned_after_tokens=plan.after_tokens,
            budget_tokens=plan.budget_tokens, window=self.window, reserve_tokens=plan.reserve_tokens,
            floor_tokens=plan.floor_tokens, system_tokens=plan.system_tokens, tools_tokens=plan.tools_tokens,
            summary_tokens=summary_tokens, evicted=len(evicted), kept=len(plan.kept), kept_units=plan.kept_units,
            unit=plan.unit, lead=(["summary"] if summary_msg is not None else []) + [r.kind for r in plan.reinject],
            reinjected=[(r.kind, r.tokens) for r in plan.reinject], fits=after <= plan.budget_tokens,
            trigger_tokens=plan.trigger_tokens, compact_at=policy.compact_at,
            reason=reason, mode=policy.mode, tokenizer=self.tokenizer, exact=self.exact, note=self.note, plan=plan,
        )
        self.last_report = report
        return FitResult(out, report)


# --- logging ------------------------------------------------------------------------------------------

def _plain(obj: Any) -> Any:
    """orjson ``default``: SDK objects via ``model_dump()`` / ``to_dict()``, else their ``__dict__``."""
    for attr in ("model_dump", "to_dict", "dict"):
        fn = getattr(obj, attr, None)
        if callable(fn):
            try:
                return fn()
            except Exception:
                continue
    if hasattr(obj, "__dict__"):
        return {k: v for k, v in vars(obj).items() if not k.startswith("_")}
    raise TypeError(f"cannot serialise {type(obj).__name__}")


def utc_timestamp(when: datetime | float | None = None) -> str:
    """ISO-8601 UTC with milliseconds and a ``Z`` (``2025-01-01T00:00:00.000Z``); ``when`` = datetime or
    epoch seconds, default now. Naive datetimes are taken as UTC.

    Raises:
        ValueError: epoch seconds out of the range of dates (``1e20``, ``inf``, ``nan``)."""
    if when is None:
        dt = datetime.now(UTC)
    elif isinstance(when, datetime):
        dt = when if when.tzinfo else when.replace(tzinfo=UTC)
    else:
        try:
            dt = datetime.fromtimestamp(float(when), UTC)
        except (OverflowError, OSError, ValueError) as exc:  # (1e20 seconds, inf, nan: no date)
            raise ValueError(f"timestamp {when!r} is not a date (epoch seconds out of range)") from exc
    return dt.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class CallLogger:
    """Append one ctxwatch canonical JSONL record per API call, so ``ctxwatch PATH`` can watch any loop.

    Record (one line, see :mod:`ctxwatch.formats.canonical`)::

        {"timestamp": "2025-01-01T00:00:00.000Z",
         "request":  {"model": ..., "messages": [...], "tools": [...], "max_tokens": ...},
         "response": {..., "usage": {"prompt_tokens": ..., "completion_tokens": ...}}}

    ``request`` and ``response`` are the chat-completions bodies as sent and received (OpenAI shape); an
    Anthropic Messages body is written as given, which the canonical reader also accepts.  SDK objects are
    turned into dicts with their ``model_dump()``/``to_dict()``; no SDK is imported.

    The file is opened in append mode (created if missing) and each record is written with a single
    ``write`` of the whole line, so lines from concurrent writers do not interleave and every record is on
    disk as soon as :meth:`log` returns.  This is the user's own log: ctxwatch itself never writes to the
    logs it reads.

    Args:
        path: the JSONL file.
        session: optional session id written in every record (``"session"``).

    Raises:
        OSError: the file cannot be opened or written.
    """

    def __init__(self, path: str | os.PathLike[str], *, session: str | None = None) -> None:
        self.path = os.fspath(path)
        self.session = session
        self._fd: int | None = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._lock = threading.Lock()
        self.count = 0

    def log(self, request: dict[str, Any] | Any, response: dict[str, Any] | Any, *,
            timestamp: datetime | float | None = None, window: int | None = None) -> dict[str, Any]:
        """Append the record of one call and return it.

        Args:
            request: the request body; must have ``model`` and ``messages`` (``tools``, ``max_tokens``, ``system``
                and other parameters are kept as given).
            response: the response body (dict or SDK object); should hold ``usage``.
            timestamp: when the call was made (datetime or epoch seconds); default now (UTC).
            window: the context window in tokens, written as ``"window"`` when given.

        Raises:
            ValueError: ``request`` has no ``model`` or no ``messages``; the logger is closed; ``timestamp`` is
                out of the range of dates.
            TypeError: a value cannot be serialised (a lone surrogate in a string can: it is written as its
                ``\\ud800`` escape).
        """
        req = _plain(request) if not isinstance(request, dict) else request
        if not isinstance(req, dict) or "model" not in req or "messages" not in req:
            raise ValueError("request must be a dict with 'model' and 'messages'")
        resp = response if isinstance(response, dict) or response is None else _plain(response)
        record: dict[str, Any] = {"timestamp": utc_timestamp(timestamp)}
        if self.session:
            record["session"] = self.session
        if window:
            record["window"] = int(window)
        record["request"] = req
        record["response"] = resp
        try:
            line = orjson.dumps(record, default=_plain) + b"\n"
        except TypeError:
            # orjson refuses a lone surrogate (text decoded with errors="surrogateescape", a tool output cut in
            # the middle of a pair): the stdlib writes it as its \ud800 escape, which ctxwatch reads back, so the
            # call is logged as it was rather than stopping the user's loop (still TypeError for what JSON cannot
            # hold at all)
            line = json.dumps(record, default=_plain, ensure_ascii=True, separators=(",", ":")).encode() + b"\n"
        with self._lock:
            if self._fd is None:
                raise ValueError(f"CallLogger({self.path!r}) is closed")
            view = memoryview(line)
            while view:
                n = os.write(self._fd, view)
                view = view[n:]
            self.count += 1
        return record

    def log_call(self, model: str, messages: Sequence[dict[str, Any]], response: dict[str, Any] | Any, *,
                 tools: Sequence[dict[str, Any]] | None = None, max_tokens: int | None = None,
                 timestamp: datetime | float | None = None, **params: Any) -> dict[str, Any]:
        """Build the request from its parts and :meth:`log` it (``params`` are extra request parameters)."""
        req: dict[str, Any] = {"model": model, "messages": list(messages)}
        if tools:
            req["tools"] = list(tools)
        if max_tokens is not None:
            req["max_tokens"] = max_tokens
        req.update(params)
        return self.log(req, response, timestamp=timestamp)

    def close(self) -> None:
        """Close the file (idempotent)."""
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def __enter__(self) -> CallLogger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:  # pragma: no cover - best effort
        with contextlib.suppress(Exception):
            self.close()
