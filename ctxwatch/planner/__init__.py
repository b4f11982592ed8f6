"""The eviction planner: what to pin, keep, summarise or evict so that one call fits its budget (issue 7).

Pure core (never imports Textual).  The planner works on one call's messages as the model saw them and
a :class:`Policy`; it returns a :class:`Plan` that says, for every message, whether it is **pinned** (the
system prompt and instructions: the prompt-cache prefix, never evicted or rewritten), **kept** verbatim,
**summarised** (folded into a summary of ``summary_tokens``) or **evicted** (dropped), and what the prompt
would cost afterwards.

Rules (failure cases B24 and B25 in ``shared/cases/failure_cases.md``):

* The system prompt and ``system``/``developer`` messages are pinned; tool schemas are part of the floor.
  A policy that would unpin them is refused (:class:`PolicyError`).
* ``keep_recent`` counts **units** (:attr:`Policy.unit`):

  - ``exchange`` (default): an assistant message together with every tool result answering its tool
    calls (OpenAI ``tool_calls`` + ``tool`` messages, Anthropic ``tool_use`` + ``tool_result`` parts) is
    one exchange; any other message (a user text message, a plain assistant text) is an exchange of its
    own.  Messages that lie between a tool call and its result belong to that exchange, so an exchange
    never splits a call from its result.  A Responses API reasoning item (label ``reasoning``, its own input
    item in Codex and Responses logs) belongs to the exchange of the output item after it.  This is the
    unit of field practice for agent loops ("keep the last 6 exchanges verbatim, summarise the older
    span"): in Claude Code or Codex logs one user prompt is followed by dozens or hundreds of tool calls, so
    counting user turns would protect the whole run.
  - ``turn`` (the planner's earlier behaviour): a user message that is not a tool result and everything up
    to the next such message.  The kept history always starts on a turn start.

* The cut (the first kept history message) goes between units, never across a tool-call pair: any cut
  that would split a call id from its result is refused, the cut moves to the next valid position, and
  the plan's ``reason`` says so.
* The history **sent** after the plan starts with a user message.  With ``exchange`` the cut may fall
  inside a user turn (before an assistant message); what then stands before the kept span:

  - ``summarise``: the summary, a user message (``SUMMARY_HEADER``), followed by the re-injected items
    (the task = first user message, the plan, the task list, the file being edited), each a user message;
  - ``drop``: the re-injected items, user messages, the task first.  When nothing is re-injected (the
    reinjection switches are off or nothing was found) a cut inside a user turn is not allowed: the cut
    goes to a user message instead: the earliest one at which the plan fits (evicting more), else the
    latest one the protected units allow (keeping the turn whole; often the first message, so nothing is
    evicted) and the plan says it does not fit.  ``reason`` says which of these happened.  Re-injecting
    the task was preferred to always moving the cut back because in an agent run the only user message is
    usually the prompt that started it: moving back would make every plan a no-op.

  For the same reason a plan never sends an empty history: evicting every history message needs a
  summary or a re-injected item to send.
* The newest ``keep_recent`` units are always kept.
* *When* it compacts and *how much* depends on :attr:`Policy.compact_at`:

  - ``budget`` (the default of :class:`Policy` and of ``ctxwatch plan``: a preview of the minimal plan):
    when the prompt is within the budget nothing is evicted.  Otherwise the planner keeps as much history
    as fits: the *earliest* valid cut whose prompt fits.  When no cut fits, it picks the smallest prompt
    it can reach and says why it still does not fit.
  - ``trigger`` (the default of :class:`ctxwatch.budget.ContextBudget`: field practice for a live loop):
    when the prompt is at or below the compaction trigger (:attr:`Policy.trigger_tokens`, 0.8 of the
    budget) nothing is evicted.  Above it the plan is a **full compaction**: everything older than the
    newest ``keep_recent`` units is summarised (or dropped), so the next calls have room to grow before
    the trigger is crossed again.  A loop that compacts at the budget and evicts the minimum lands just
    under the budget, above the trigger, and compacts again one or two calls later.  Among the valid cuts
    the smallest plan wins, ties going to the later cut: that is the full compaction, except where
    evicting the last messages before the kept units would not make the prompt smaller (their summary or
    re-injected items take at least as many tokens as they do, e.g. the task right before the kept units);
    then the cut stops before them and ``reason`` says so.  When even that does not fit the budget,
    ``reason`` says why, as with ``budget``.

Token counts are in tokens of the call's :class:`~ctxwatch.tokens.Counter` (framing included); the
reinjected items are counted as plain user messages (:func:`text_message_tokens`); the summary as
``summary_tokens`` (its assumed size, framing included).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import orjson

from ctxwatch.accounting import plausible_calibration
from ctxwatch.config import (
    DEFAULT_BUDGET_FRACTION,
    DEFAULT_KEEP_RECENT,
    DEFAULT_RESERVE,
    DEFAULT_SUMMARY_TOKENS,
    DEFAULT_TRIGGER,
    ConfigError,
    Settings,
    prompt_budget,
)
from ctxwatch.model import Breakdown, Call, Message, MessageStat, ParsedCall, implausible_what
from ctxwatch.tokens import REPLY_PRIMER, Counter, counter_for

Fate = Literal["pinned", "kept", "summarised", "evicted"]
Mode = Literal["summarise", "drop"]
Unit = Literal["exchange", "turn"]
CompactAt = Literal["budget", "trigger"]

#: The units ``keep_recent`` can count (see the module docstring); the first is the default.
UNITS: tuple[str, ...] = ("exchange", "turn")
#: When a plan compacts (:attr:`Policy.compact_at`); the first is :class:`Policy`'s default.
COMPACT_AT: tuple[str, ...] = ("budget", "trigger")

#: Roles that are part of the prompt-cache prefix and are always pinned.
PINNED_ROLES = frozenset({"system", "developer"})
#: Message labels that are pinned wherever they appear: project instructions such as AGENTS.md (case B24), and
#: the harness's environment context (Codex re-sends both at the head of a compacted history).
PINNED_LABELS = frozenset({"instructions", "environment"})
#: Label of a Responses API reasoning item: an input item of its own that must stay with the output item after
#: it (a tool call sent without the reasoning that produced it can be refused), so no cut goes between them.
REASONING_LABEL = "reasoning"
#: User-message labels that are not the user's task (a previous compaction summary, a harness meta note).
NOT_TASK_LABELS = frozenset({"compaction_summary", "meta"})

#: Headers the reinjected items are sent under (by :class:`ctxwatch.budget.ContextBudget`, and counted
#: with these exact texts by the planner so that plan and result agree).
REINJECT_HEADERS: dict[str, str] = {
    "task": "Original task (the first user message):\n",
    "plan": "Current plan:\n",
    "tasks": "Current task list:\n",
    "file": "File being edited: ",
}
#: Header of the summary message :class:`ctxwatch.budget.ContextBudget` inserts for the summarised span.
SUMMARY_HEADER = "Summary of the earlier conversation (older turns were compacted):\n"

# Tool names (lower-cased, "_"/"-"/" " removed) recognised by the reinjection heuristics.
#: Task-list tools: Claude Code ``TodoWrite``, Codex ``update_plan``, Gemini CLI ``write_todos`` and kin.
TASK_LIST_TOOLS = frozenset({"todowrite", "writetodos", "updatetodos", "todoupdate", "updateplan", "tasklist",
                             "updatetasklist", "settodos", "todo"})
#: Plan tools: Claude Code ``ExitPlanMode`` (argument ``plan``) and similarly named tools.
PLAN_TOOLS = frozenset({"exitplanmode", "createplan", "writeplan", "setplan", "submitplan", "plan"})
#: File-editing tools whose path argument names "the file being edited".
EDIT_TOOLS = frozenset({"edit", "multiedit", "write", "notebookedit", "strreplacebasededittool", "strreplaceeditor",
                        "strreplace", "writefile", "editfile", "createfile", "replace", "applypatch",
                        "writetofile", "replaceinfile", "insertcontent", "searchreplace"})
_PATH_KEYS = ("file_path", "path", "filename", "notebook_path", "target_file", "file", "absolute_path")
_PATCH_FILE = re.compile(r"\*\*\* (?:Update|Add) File: ([^\n\"\\]+)")
#: A plan file: a Markdown file whose name holds "plan", or any Markdown file in a ``plans`` folder (Claude
#: Code's plan mode writes the plan to ``~/.claude/plans/<random-name>.md``, then calls ``ExitPlanMode`` with no
#: input).
_PLAN_FILE = re.compile(r"(?:(?:^|[/\\])plans[/\\][^/\\]+|plan[^/\\]*)\.md$", re.I)
_PLAN_LINE = re.compile(r"^\s*(?:#+\s*)?(?:\*\*)?plan(?:\*\*)?\s*:?\s*(?:\*\*)?\s*$", re.I | re.M)


class PolicyError(ConfigError):
    """A :class:`Policy` value is invalid or asks for something the planner refuses (e.g. unpinning the
    system prompt, case B24). A ``ValueError``."""


@dataclass(frozen=True, slots=True)
class Policy:
    """How to plan an eviction. Defaults come from :mod:`ctxwatch.config` (documented there).

    Attributes:
        window: the context window in tokens (> 0).
        budget_fraction: fraction of the window the prompt may use (0 < f <= 1).
        trigger: fraction of the budget at which compaction should fire (0 < f <= 1).  With
            ``compact_at="trigger"`` a prompt above it is compacted; with ``"budget"`` it is informational
            (the plan reports whether the prompt crossed it).
        reserve: fraction of the window kept for the completion, used when ``reserve_tokens`` is ``None``.
        reserve_tokens: explicit completion reserve in tokens (e.g. the request's ``max_tokens``).
        keep_recent: the newest units (``unit``) that are always kept (>= 0).
        unit: what ``keep_recent`` counts and where the cut may fall: ``exchange`` (default: an assistant
            message with all its tool results, or a single other message; the cut may fall inside a user
            turn) or ``turn`` (a user message and everything up to the next one; the earlier behaviour).
        keep_recent_messages: additionally keep at least this many newest history messages (0 = off). The
            cut is moved outward to the nearest valid position (case B25's "keep last 4 messages").
        pin_system: must be True: the system prompt is the prompt-cache prefix (case B24). False raises.
        mode: ``summarise`` (the older span becomes a summary of ``summary_tokens``) or ``drop``.
        summary_tokens: the assumed size of the summary in tokens (>= 0).
        reinject_task / reinject_plan / reinject_tasks / reinject_file: re-inject the first user message,
            the plan, the task list, the file being edited, when their source message is evicted.
        compact_at: when and how much to compact (see the module docstring).  ``budget`` (default): only
            when the prompt is over the budget, and then the minimum that fits (a preview of the smallest
            change, what ``ctxwatch plan`` shows).  ``trigger``: as soon as the prompt is above
            :attr:`trigger_tokens`, a full compaction down to the newest ``keep_recent`` units (field
            practice for a live loop: compacting at the budget lands just under it, above the trigger, and
            compacts again a call or two later).

    Raises:
        PolicyError: a value is out of range, ``mode``, ``unit`` or ``compact_at`` is unknown, or
            ``pin_system`` is False.
    """

    window: int
    budget_fraction: float = DEFAULT_BUDGET_FRACTION
    trigger: float = DEFAULT_TRIGGER
    reserve: float = DEFAULT_RESERVE
    reserve_tokens: int | None = None
    keep_recent: int = DEFAULT_KEEP_RECENT
    keep_recent_messages: int = 0
    unit: Unit = "exchange"
    pin_system: bool = True
    mode: Mode = "summarise"
    summary_tokens: int = DEFAULT_SUMMARY_TOKENS
    reinject_task: bool = True
    reinject_plan: bool = True
    reinject_tasks: bool = True
    reinject_file: bool = True
    compact_at: CompactAt = "budget"

    def __post_init__(self) -> None:
        if not self.pin_system:
            raise PolicyError("pin_system cannot be turned off: the system prompt and tool schemas are the "
                              "prompt-cache prefix and are never evicted or rewritten (case B24)")
        if isinstance(self.window, bool) or not isinstance(self.window, int) or self.window <= 0:
            raise PolicyError(f"window must be a positive number of tokens, got {self.window!r}")
        for name in ("budget_fraction", "trigger"):
            v = getattr(self, name)
            if not 0 < v <= 1:
                raise PolicyError(f"{name} must be in (0, 1], got {v}")
        if not 0 <= self.reserve < 1:
            raise PolicyError(f"reserve must be in [0, 1), got {self.reserve}")
        if self.reserve_tokens is not None and not 0 <= self.reserve_tokens <= self.window:
            # (the whole window is allowed: a request whose max_tokens reaches the window reserves all of it,
            # as its report says; the plan then has no budget and says the prompt does not fit)
            raise PolicyError(f"reserve_tokens must be in [0, window], got {self.reserve_tokens}")
        for name in ("keep_recent", "keep_recent_messages", "summary_tokens"):
            if getattr(self, name) < 0:
                raise PolicyError(f"{name} must be >= 0, got {getattr(self, name)}")
        if self.mode == "summarize":  # type: ignore[comparison-overlap]
            object.__setattr__(self, "mode", "summarise")
        if self.mode not in ("summarise", "drop"):
            raise PolicyError(f"mode must be 'summarise' or 'drop', got {self.mode!r}")
        if self.unit not in UNITS:
            raise PolicyError(f"unit must be 'exchange' or 'turn', got {self.unit!r}")
        if self.compact_at not in COMPACT_AT:
            raise PolicyError(f"compact_at must be 'budget' or 'trigger', got {self.compact_at!r}")

    @classmethod
    def from_settings(cls, settings: Settings, window: int, reserve_tokens: int | None = None,
                      **kwargs: Any) -> Policy:
        """A policy from :class:`~ctxwatch.config.Settings` for a window (tokens); ``kwargs`` override fields."""
        vals: dict[str, Any] = {
            "budget_fraction": settings.budget_fraction, "trigger": settings.trigger, "reserve": settings.reserve,
            "keep_recent": settings.keep_recent, "summary_tokens": settings.summary_tokens,
        }
        vals.update(kwargs)
        return cls(window=window, reserve_tokens=reserve_tokens, **vals)

    @property
    def reserve_total(self) -> int:
        """The completion reserve in tokens: ``reserve_tokens`` if set, else ``int(reserve * window)``."""
        return self.reserve_tokens if self.reserve_tokens is not None else int(self.window * self.reserve)

    @property
    def budget_tokens(self) -> int:
        """The prompt budget in tokens: ``min(int(window * budget_fraction), window - reserve)``.

        The prompt must leave the completion reserve free in the window as well as stay in the budget.
        """
        return prompt_budget(self.window, self.budget_fraction, self.reserve_total)

    @property
    def trigger_tokens(self) -> int:
        """Where compaction should fire, in tokens: ``int(trigger * budget)``."""
        return int(self.budget_tokens * self.trigger)


@dataclass(slots=True)
class MessagePlan:
    """The fate of one message of the call.

    Attributes:
        index: 0-based position in the call as the model sees it: the system prompt (when given as blocks)
            is index 0, then the history in order.
        role: the message role.
        tokens: tokens before the plan (framing included).
        fate: ``pinned`` | ``kept`` | ``summarised`` | ``evicted``.
        tokens_after: tokens after the plan (``tokens`` if pinned/kept, else 0).
        source_index: position in the ``messages`` argument, ``None`` for the system-blocks entry.
        turn: 0-based turn number (-1 for pinned messages and history before the first user turn).
        label: the message's :attr:`~ctxwatch.model.Message.label`.
        tool_call_ids / tool_result_ids: ids of the tool calls it makes / answers.
        exchange: 0-based exchange number (-1 for pinned messages and tool results before the first
            exchange).  Both ``turn`` and ``exchange`` are filled whatever :attr:`Policy.unit` is.
    """

    index: int
    role: str
    tokens: int
    fate: Fate
    tokens_after: int
    source_index: int | None
    turn: int = -1
    label: str | None = None
    tool_call_ids: tuple[str, ...] = ()
    tool_result_ids: tuple[str, ...] = ()
    exchange: int = -1


@dataclass(slots=True)
class ReinjectItem:
    """Something worth re-injecting after compaction, found heuristically in the messages.

    Attributes:
        kind: ``task`` (the first user message) | ``plan`` | ``tasks`` (the task list) | ``file`` (the path
            of the file being edited).
        text: the text that would be re-injected, header (:data:`REINJECT_HEADERS`) included.
        tokens: its tokens as one user message (framing included).
        index: the plan index of the message it was found in.
        detail: one human sentence saying what was found where.
        reinjected: True when the plan re-injects it (its source is evicted and the policy asks for it).
    """

    kind: str
    text: str
    tokens: int
    index: int
    detail: str
    reinjected: bool = False

    def to_json(self) -> dict[str, Any]:
        """``{"kind", "tokens", "index", "detail"}`` (the text itself is left out: it can be long)."""
        return {"kind": self.kind, "tokens": self.tokens, "index": self.index, "detail": self.detail}


@dataclass(slots=True)
class Plan:
    """The planner's answer for one call. All token values are in tokens.

    Attributes:
        messages: one :class:`MessagePlan` per message of the call, in order (system prompt first).
        before_tokens: the prompt as it is: floor + history.
        after_tokens: floor + kept history + summary + reinjected items.
        budget_tokens: the budget the plan aims for (:attr:`Policy.budget_tokens`).
        fits: ``after_tokens <= budget_tokens``.
        reason: one or more human sentences: what was done and why, or why it does not fit.
        reinject: the items the plan re-injects (a subset of ``found``).
        found: every reinjection candidate detected, re-injected or not.
        floor_tokens / system_tokens / tools_tokens: the floor (system prompt + tool schemas, as ``report``
            counts it) and its parts.
        pinned_tokens: pinned messages inside the history (a mid-run ``system`` message, AGENTS.md
            instructions, Codex's environment context): never evicted, like the floor, but counted as history
            by ``report`` (0 when there are none).
        summary_tokens: tokens of the summary in the plan (0 when nothing is summarised or mode is drop).
        overhead_tokens: tokens the request carries outside its messages and floor, before and after the plan
            alike (the reply primer of a counted prompt, :data:`ctxwatch.tokens.REPLY_PRIMER`; else 0).
        floor_split: False for a format that logs neither the system prompt nor the tools (Claude Code, Codex):
            the floor is inferred whole, held by the first entry, and cannot be split into its two parts.
        trigger_tokens / reserve_tokens / window: from the policy.
        triggered: the prompt before the plan is above the compaction trigger.
        compact_at: the policy's :attr:`Policy.compact_at` (``budget`` | ``trigger``): with ``trigger`` a
            plan compacts whenever ``triggered``.
        cut: plan index of the first kept history message (``None`` when all history is evicted or there
            is none).
        moved: a sentence when the cut was moved to avoid splitting a tool call or a unit, or to make the
            sent history start on a user message, else ``None``.
        lead: what stands before the kept history after the plan, in order: ``"summary"`` and the
            re-injected kinds (``"task"``, ...), all user messages; empty when nothing is evicted.
        unit: the policy's unit (``exchange`` | ``turn``); kept_units: how many units are kept whole.
        tokenizer: the encoding used for counting (``chars/4`` after a fallback).
        policy: the policy the plan was made with.
    """

    messages: list[MessagePlan]
    before_tokens: int
    after_tokens: int
    budget_tokens: int
    fits: bool
    reason: str
    reinject: list[ReinjectItem]
    found: list[ReinjectItem] = field(default_factory=list)
    floor_tokens: int = 0
    system_tokens: int = 0
    tools_tokens: int = 0
    pinned_tokens: int = 0
    summary_tokens: int = 0
    trigger_tokens: int = 0
    reserve_tokens: int = 0
    window: int = 0
    triggered: bool = False
    cut: int | None = None
    moved: str | None = None
    tokenizer: str = ""
    policy: Policy | None = None
    lead: list[str] = field(default_factory=list)
    unit: str = "exchange"
    kept_units: int = 0
    compact_at: str = "budget"
    overhead_tokens: int = 0
    floor_split: bool = True

    @property
    def evicted(self) -> list[MessagePlan]:
        """The messages that leave the prompt (summarised or evicted), in order."""
        return [m for m in self.messages if m.fate in ("summarised", "evicted")]

    @property
    def kept(self) -> list[MessagePlan]:
        """The history messages kept verbatim, in order."""
        return [m for m in self.messages if m.fate == "kept"]

    def to_json(self) -> dict[str, Any]:
        """The ``plan --json`` document: ``messages`` (``index``, ``role``, ``tokens``, ``tokens_after``, ``fate``
        per message), ``before_tokens``, ``after_tokens``, ``budget_tokens``, ``fits``, ``reason``, ``reinject``
        (``kind``, ``tokens``, ``index``, ``detail`` per item), and what is in no message row, so that the sizes
        add up from the document alone: ``system_tokens`` / ``tools_tokens`` / ``floor_tokens`` (the system
        prompt's row holds ``system_tokens``; the tool schemas have no row; where the floor is inferred whole,
        :attr:`floor_split` False, the first row holds it and its parts are ``null``: unknown, never 0),
        ``summary_tokens`` and ``overhead_tokens`` (the reply primer).  ``before_tokens`` = the rows' ``tokens``
        + ``tools_tokens`` (``null``: 0) + ``overhead_tokens``; ``after_tokens`` = the rows' ``tokens_after`` +
        ``tools_tokens`` + ``summary_tokens`` + the ``reinject`` items' tokens + ``overhead_tokens``."""
        return {
            "messages": [{"index": m.index, "role": m.role, "tokens": m.tokens, "tokens_after": m.tokens_after,
                          "fate": m.fate} for m in self.messages],
            "before_tokens": self.before_tokens,
            "after_tokens": self.after_tokens,
            "budget_tokens": self.budget_tokens,
            "fits": self.fits,
            "reason": self.reason,
            "reinject": [r.to_json() for r in self.reinject],
            "system_tokens": self.system_tokens if self.floor_split else None,
            "tools_tokens": self.tools_tokens if self.floor_split else None,
            "floor_tokens": self.floor_tokens,
            "summary_tokens": self.summary_tokens,
            "overhead_tokens": self.overhead_tokens,
        }


# --- reinjection heuristics ---------------------------------------------------------------------------

def text_message_tokens(counter: Counter, text: str) -> int:
    """Tokens of a plain-text user message holding ``text``, the counter's per-message framing included."""
    return counter.per_message + counter.tokenizer.count(text)


def _norm_tool(name: str | None) -> str:
    return re.sub(r"[\s_\-]", "", (name or "").lower()).removeprefix("functions.")


def _args(text: str) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return None


def _render_todos(args: Any, raw: str) -> tuple[str, int]:
    """A task list as text lines ``- [status] item``, and its item count; the raw arguments if unknown."""
    if isinstance(args, dict):
        for key, text_key in (("todos", "content"), ("plan", "step"), ("tasks", "content"), ("items", "content")):
            items = args.get(key)
            if isinstance(items, list) and items:
                lines = []
                for it in items:
                    if isinstance(it, dict):
                        txt = it.get(text_key) or it.get("content") or it.get("step") or it.get("description") or ""
                        lines.append(f"- [{it.get('status', '')}] {txt}")
                    else:
                        lines.append(f"- {it}")
                head = f"{args['explanation']}\n" if isinstance(args.get("explanation"), str) else ""
                return head + "\n".join(lines), len(items)
    return raw, 0


def _edited_path(name: str, args: Any, raw: str) -> str | None:
    """The path a tool call edits, or ``None``. ``apply_patch`` bodies are read for ``*** Update File:``."""
    m = _PATCH_FILE.search(raw)
    if m:
        return m.group(1).strip()
    if _norm_tool(name) not in EDIT_TOOLS or not isinstance(args, dict):
        return None
    if args.get("command") == "view":  # str_replace_based_edit_tool's read-only command
        return None
    for key in _PATH_KEYS:
        if isinstance(args.get(key), str) and args[key]:
            return str(args[key])
    return None


def find_reinject(messages: Sequence[Message | MessageStat], counter: Counter,
                  indexes: Sequence[int] | None = None) -> list[ReinjectItem]:
    """Detect what is worth re-injecting after a compaction, heuristically.

    Args:
        messages: the history (MessageStat entries carry no text and are skipped).
        counter: counts the rendered items (one plain user message each, :func:`text_message_tokens`).
        indexes: the plan index of each message (default: its position).

    Returns:
        At most one item of each kind, in the order task, plan, tasks, file:

        * ``task``: the first user message that is not a tool result, a compaction summary or a meta note;
        * ``tasks``: the latest task-list tool call (:data:`TASK_LIST_TOOLS`, e.g. ``TodoWrite``,
          ``update_plan``), rendered as ``- [status] item`` lines;
        * ``plan``: the latest plan tool call (:data:`PLAN_TOOLS`, e.g. ``ExitPlanMode``'s ``plan``; one with
          empty input is passed over) or whole write of a plan file (:data:`_PLAN_FILE`: Claude Code's plan
          mode; an edit of a plan file is neither the plan nor the file being edited), else
          the latest assistant text with a line that is just "Plan:" / "## Plan" (from that line on);
        * ``file``: the path in the latest edit/write tool call (:data:`EDIT_TOOLS`) or ``apply_patch``.

        Messages an earlier compaction inserted (:class:`ctxwatch.budget.ContextBudget` in a loop compacts
        again and again) are recognised by their headers: the summary (:data:`SUMMARY_HEADER`) is never
        the task, and a re-injected item (:data:`REINJECT_HEADERS`) is a candidate of its kind with its
        body, so the original task, plan, task list and file survive the next compaction unchanged instead
        of being nested under another header.  Later tool calls or plan texts supersede them.
    """
    idx = list(indexes) if indexes is not None else list(range(len(messages)))

    def item(kind: str, body: str, j: int, detail: str) -> ReinjectItem:
        text = REINJECT_HEADERS[kind] + body
        return ReinjectItem(kind, text, text_message_tokens(counter, text), idx[j], detail)

    task = plan = tasks = efile = None
    plan_tool = False  # the plan came from a plan tool call: assistant plan texts no longer replace it
    for j, m in enumerate(messages):
        if not isinstance(m, Message):
            continue
        if m.role == "user" and not m.tool_result_ids() and m.label not in NOT_TASK_LABELS:
            body = "\n".join(p.text for p in m.parts if p.kind == "text" and p.text)
            kind = next((k for k, h in REINJECT_HEADERS.items() if body.startswith(h)), None)
            if kind is not None:  # re-injected by an earlier compaction
                rest = body[len(REINJECT_HEADERS[kind]):]
                where = f"re-injected {kind} in message {idx[j]}"
                if kind == "task":
                    task = task or item("task", rest, j, where)
                elif kind == "plan":
                    plan, plan_tool = item("plan", rest, j, where), False
                elif kind == "tasks":
                    tasks = item("tasks", rest, j, where)
                else:
                    efile = item("file", rest, j, where + f": {rest}")
                continue
            if task is None and body.strip() and not body.startswith(SUMMARY_HEADER):
                preview = " ".join(body.split())[:60]
                task = item("task", body, j, f"first user message (message {idx[j]}): \"{preview}\"")
        for p in m.parts:
            if p.kind != "tool_call":
                continue
            n = _norm_tool(p.name)
            a = _args(p.text)
            if n in TASK_LIST_TOOLS:
                body, count = _render_todos(a, p.text)
                tasks = item("tasks", body, j, f"{p.name} call in message {idx[j]}"
                             + (f" ({count} items)" if count else ""))
            elif n in PLAN_TOOLS:
                given = a.get("plan") if isinstance(a, dict) else None
                body = given if isinstance(given, str) else p.text if a != {} else ""
                if body.strip():  # (an ExitPlanMode with no input, its plan in a file, leaves the plan found)
                    plan, plan_tool = item("plan", body, j, f"{p.name} call in message {idx[j]}"), True
            path = _edited_path(p.name or "", a, p.text)
            if path and n in EDIT_TOOLS and _PLAN_FILE.search(path):
                # The plan, not the work: a whole write is re-injected as the plan; an edit of it (a diff, not
                # the plan) leaves the plan found; neither is "the file being edited".
                written = a.get("content") if isinstance(a, dict) else None
                if isinstance(written, str) and written.strip():
                    plan, plan_tool = item("plan", written, j, f"{p.name} call in message {idx[j]} writes {path}"), True
            elif path:
                efile = item("file", path, j, f"{p.name} call in message {idx[j]} edits {path}")
        if m.role == "assistant" and not plan_tool:
            txt = "\n".join(p.text for p in m.parts if p.kind == "text")
            mm = _PLAN_LINE.search(txt)
            if mm:
                plan = item("plan", txt[mm.start():].strip(), j, f"assistant plan text in message {idx[j]}")
    return [x for x in (task, plan, tasks, efile) if x is not None]


# --- the planner ----------------------------------------------------------------------------------------

@dataclass(slots=True)
class _Entry:
    role: str
    tokens: int
    pinned: bool
    source: int | None
    label: str | None
    calls: tuple[str, ...]
    results: tuple[str, ...]
    is_result: bool = False


def _entry(m: Message | MessageStat, tokens: int, source: int) -> _Entry:
    """A planner entry; ``is_result``: a ``tool`` message or one holding a tool result (even without id)."""
    if isinstance(m, MessageStat):
        calls, results = tuple(m.tool_call_ids), tuple(m.tool_result_ids)
        is_result = bool(results)
    else:
        calls, results = tuple(m.tool_call_ids()), tuple(m.tool_result_ids())
        is_result = bool(results) or any(p.kind == "tool_result" for p in m.parts)
    pinned = m.role in PINNED_ROLES or m.label in PINNED_LABELS
    return _Entry(m.role, tokens, pinned, source, m.label, calls, results, is_result or m.role == "tool")


def _tool_spans(hist: list[_Entry]) -> list[tuple[str, int, int]]:
    """``(id, first, last)`` per tool call: the position of the call and of its last result, in call order.

    A result answers the latest call before it with its id: some servers reuse ids (``call_0`` on every
    call), and spanning from the first use of an id to its last would block every cut in between.  A result
    with no call before it spans only itself.
    """
    ids: list[str] = []
    first: list[int] = []
    last: list[int] = []
    latest: dict[str, int] = {}  # id -> its latest call's span number
    for j, e in enumerate(hist):
        for i in e.calls:
            latest[i] = len(ids)
            ids.append(i)
            first.append(j)
            last.append(j)
        for i in e.results:
            k = latest.get(i)
            if k is not None:
                last[k] = j
    return list(zip(ids, first, last, strict=True))


def _crossing(hist: list[_Entry], c: int) -> list[str]:
    """Tool-call ids whose call and result lie on both sides of a cut before ``hist[c]``, in call order."""
    out: list[str] = []
    for i, first, last in _tool_spans(hist):
        if first < c <= last and i not in out:
            out.append(i)
    return out


def plan_messages(messages: Sequence[Message | MessageStat], policy: Policy, *,
                  system: Sequence[str] | None = None, tools: Sequence[dict[str, Any]] | None = None,
                  counter: Counter | None = None, tokens: Sequence[int] | None = None,
                  system_tokens: int | None = None, tools_tokens: int | None = None, overhead: int = 0) -> Plan:
    """Plan the eviction for one call.

    Args:
        messages: the call's messages in order (``Message`` with text, or ``MessageStat`` with counts only).
            ``system``/``developer`` messages (and ``instructions``-labelled ones) among them are pinned.
        policy: the :class:`Policy`.
        system: the system prompt as text blocks (Anthropic ``system``, or the reader's split-off system
            messages); becomes the pinned entry at index 0.
        tools: the request's tool schemas (floor, never evicted).
        counter: token rules; default ``counter_for(None, None)`` (o200k_base, OpenAI framing).
        tokens: precomputed tokens per message (overrides counting; same length as ``messages``).
        system_tokens / tools_tokens: precomputed floor parts in tokens (override counting).
        overhead: tokens every request carries outside its messages and floor (the reply primer,
            :data:`ctxwatch.tokens.REPLY_PRIMER`, for a counted prompt), added to every size so that "before"
            is the prompt the report shows.

    Returns:
        A :class:`Plan` made with ``policy.unit`` (see the module docstring): its ``lead`` says what stands
        before the kept history (the summary, the re-injected items), ``kept_units`` how many units are
        kept, and each :class:`MessagePlan` carries both its turn and its exchange number.  Never raises on
        odd message sequences (orphan tool results stay where they are).

    Raises:
        ValueError: ``tokens`` has a different length than ``messages``.
    """
    counter = counter or counter_for(None, None)
    if tokens is not None and len(tokens) != len(messages):
        raise ValueError(f"tokens has {len(tokens)} entries for {len(messages)} messages")

    entries: list[_Entry] = []
    if system_tokens is None:
        system_tokens = counter.system_tokens(list(system)) if system else 0
    if system or system_tokens:
        entries.append(_Entry("system", system_tokens, True, None, None, (), ()))
    for i, m in enumerate(messages):
        if tokens is not None:
            n = int(tokens[i])
        elif isinstance(m, MessageStat):
            n = m.tokens
        else:
            n = counter.message_tokens(m)
        entries.append(_entry(m, n, i))
    if tools_tokens is None:
        tools_tokens = counter.tools_tokens(list(tools)) if tools else 0

    pinned_tokens = sum(e.tokens for e in entries if e.pinned)
    pinned_in_history = pinned_tokens - (system_tokens if entries and entries[0].source is None else 0)
    floor = pinned_tokens + tools_tokens  # (everything no plan can evict: the floor and the pinned messages)
    hist_pos = [k for k, e in enumerate(entries) if not e.pinned]  # plan index of each history entry
    hist = [entries[k] for k in hist_pos]
    H = len(hist)
    blocked = _blocked_cuts(hist)

    # Turns start at a user message that is not a tool result (these are also the "user starts": a kept
    # history may begin there without anything before it).  Exchanges start at every message that is not
    # a tool result and does not sit inside a tool call's span.
    user_starts = [j for j, e in enumerate(hist) if e.role == "user" and not e.is_result]
    ex_starts = [j for j, e in enumerate(hist) if not e.is_result and not blocked[j]]
    unit = policy.unit
    starts = ex_starts if unit == "exchange" else user_starts
    turn_of = _numbering(user_starts, H)
    exchange_of = _numbering(ex_starts, H)
    user_set = set(user_starts)

    # Reinjection candidates, by history position.
    hist_msgs = [messages[e.source] for e in hist if e.source is not None]
    found = find_reinject(hist_msgs, counter, hist_pos)
    wanted = {"task": policy.reinject_task, "plan": policy.reinject_plan, "tasks": policy.reinject_tasks,
              "file": policy.reinject_file}
    hist_j = {k: j for j, k in enumerate(hist_pos)}
    found_pos = {id(f): hist_j[f.index] for f in found}

    suffix = [0] * (H + 1)
    for j in range(H - 1, -1, -1):
        suffix[j] = suffix[j + 1] + hist[j].tokens
    summarise = policy.mode == "summarise"
    summary = policy.summary_tokens if summarise else 0

    def reinjected(c: int) -> list[ReinjectItem]:
        return [f for f in found if wanted[f.kind] and found_pos[id(f)] < c] if c > 0 else []

    def size(c: int) -> int:
        if c == 0:
            return overhead + floor + suffix[0]
        return overhead + floor + suffix[c] + summary + sum(f.tokens for f in reinjected(c))

    def has_lead(c: int) -> bool:
        """A user message (the summary or a re-injected item) stands before the kept span of cut ``c``."""
        return c > 0 and (summarise or bool(reinjected(c)))

    def starts_on_user(c: int) -> bool:
        """The history sent with cut ``c`` starts with a user message (or is the original, for ``c == 0``)."""
        return c == 0 or has_lead(c) or (c < H and c in user_set)

    budget = policy.budget_tokens
    trigger = policy.trigger_tokens
    at_trigger = policy.compact_at == "trigger"
    # The plan compacts when the prompt is above this (the budget, or the trigger with compact_at="trigger").
    threshold = trigger if at_trigger else budget
    before = size(0)

    # Where the cut may go: 0 (nothing evicted), a unit start, or the end; never across a tool-call pair.
    K = policy.keep_recent
    if K == 0:
        max_cut = H
    elif not starts:
        max_cut = 0
    else:
        max_cut = starts[max(len(starts) - K, 0)]
    # ``free``: the positions the unit and the tool pairs allow; ``valid``: those whose sent history
    # starts on a user message (differs only in drop mode with nothing re-injected).
    free = [c for c in sorted({0, *starts, H}) if c == 0 or not blocked[c]]
    free_set = set(free)
    valid = [c for c in free if starts_on_user(c)]
    valid_set = set(valid)
    want = max(H - policy.keep_recent_messages, 0) if policy.keep_recent_messages else H
    if want < max_cut:
        max_cut = want
    allowed = [c for c in valid if c <= max_cut]

    def choose(cands: list[int]) -> int:
        if before <= threshold or H == 0:
            return 0
        if at_trigger:
            # Full compaction: the smallest plan, ties to the later cut (so the newest keep_recent units).
            return min(cands, key=lambda c: (size(c), -c))
        fitting = [c for c in cands if c > 0 and size(c) <= budget]
        return min(fitting) if fitting else min(cands, key=lambda c: (size(c), c))

    cut = choose(allowed)
    # The cut the unit alone would give (no user-start rule): when it differs, say why the cut moved.
    free_cut = cut if len(valid) == len(free) else choose([c for c in free if c <= max_cut])
    after = size(cut)
    fits = after <= budget
    chosen = reinjected(cut)
    for f in found:
        f.reinjected = f in chosen
    lead = (["summary"] if cut > 0 and summarise else []) + [f.kind for f in chosen]

    # Fates.
    plans: list[MessagePlan] = []
    for k, e in enumerate(entries):
        if e.pinned:
            fate: Fate = "pinned"
            turn = exchange = -1
        else:
            j = hist_j[k]
            turn, exchange = turn_of[j], exchange_of[j]
            fate = "kept" if j >= cut else ("summarised" if summarise else "evicted")
        plans.append(MessagePlan(k, e.role, e.tokens, fate, e.tokens if fate in ("pinned", "kept") else 0,
                                 e.source, turn, e.label, e.calls, e.results, exchange))

    def at(c: int) -> str:
        return f"message {hist_pos[c]} ({hist[c].role})" if c < H else "the end"

    # Did the token cut want to go somewhere invalid?  ``free_cut`` is where the unit and the tool pairs put
    # it; when the user-start rule moved it further, a second note says so.
    notes: list[str] = []
    if not at_trigger and free_cut > 0 and size(free_cut) <= budget:
        # The earliest position where a cut ignoring units and tool pairs would fit.
        extras = sorted((found_pos[id(f)], f.tokens) for f in found if wanted[f.kind])
        naive, extra, k = None, 0, 0
        for p in range(1, H + 1):
            while k < len(extras) and extras[k][0] < p:
                extra += extras[k][1]
                k += 1
            if overhead + floor + suffix[p] + summary + extra <= budget:
                naive = p
                break
        if naive is not None and naive != free_cut and naive < H and naive not in free_set:
            why = _why_invalid(hist, naive, user_set, unit, True)
            s = f"the token cut would fall at {at(naive)}, {why}; "
            if free_cut == cut:
                s += (f"moved the cut to {'message ' + str(hist_pos[cut]) if cut < H else 'the end'} and kept "
                      f"{H - cut} message{'s' if H - cut != 1 else ''}")
            else:
                s += f"the next {unit} starts at {at(free_cut)}"
            notes.append(s)
    if free_cut != cut:
        where = at(cut) if 0 < cut < H else "the start: nothing is evicted" if cut == 0 else "the end"
        notes.append(f"drop mode: the sent history must start on a user message, and a cut at {at(free_cut)} would "
                     "leave no summary or re-injected item before it, so the cut moved "
                     f"{'back' if cut < free_cut else 'forward'} to {where}")
    if policy.keep_recent_messages and want == max_cut and want not in valid_set and before > threshold:
        notes.insert(0, f"asked to keep the last {policy.keep_recent_messages} messages; kept {H - cut} to avoid "
                        + _why_invalid(hist, want, user_set, unit, has_lead(want)))
    moved = "; ".join(notes) or None

    # compact_at="trigger": say why the cut stopped short of the full compaction (the latest valid cut).
    short: str | None = None
    if at_trigger and before > trigger and H:
        full = max(allowed)
        if cut < full:  # ties go to the later cut, so the full compaction is strictly larger
            short = (("" if cut == 0 else f"the cut stops at {at(cut)}: ")
                     + f"compacting up to {at(full)} would not make the prompt smaller ({_fmt(size(full))} "
                     "tokens), the summary and re-injected items taking at least as many tokens as the "
                     "messages they replace")

    kept_units = sum(1 for c in starts if c >= cut)
    # The smallest plan a lower keep_recent would allow (the cuts the newest units now protect), for the hint.
    beyond = min((size(c) for c in valid if c > max_cut), default=None)
    reason = _reason(policy, plans, before, after, budget, fits, cut, H, floor, pinned_tokens, tools_tokens,
                     summary, chosen, moved, starts, suffix, max_cut, kept_units,
                     _inside_turn(cut, H, user_starts, hist_pos, lead), short, overhead, beyond,
                     suffix[0] - suffix[max_cut])
    return Plan(
        messages=plans, before_tokens=before, after_tokens=after, budget_tokens=budget, fits=fits, reason=reason,
        reinject=chosen, found=found, floor_tokens=floor - pinned_in_history,
        system_tokens=pinned_tokens - pinned_in_history, tools_tokens=tools_tokens, pinned_tokens=pinned_in_history,
        summary_tokens=summary if cut > 0 else 0, trigger_tokens=policy.trigger_tokens,
        reserve_tokens=policy.reserve_total, window=policy.window, triggered=before > policy.trigger_tokens,
        cut=hist_pos[cut] if cut < H else None, moved=moved, tokenizer=counter.name, policy=policy, lead=lead,
        unit=unit, kept_units=kept_units, compact_at=policy.compact_at, overhead_tokens=overhead,
    )


def _numbering(starts: list[int], n: int) -> list[int]:
    """For each of ``n`` positions, the index of the last unit start at or before it (-1 before the first)."""
    out = [-1] * n
    t = -1
    for j in range(n):
        if t + 1 < len(starts) and starts[t + 1] == j:
            t += 1
        out[j] = t
    return out


def _inside_turn(cut: int, H: int, user_starts: list[int], hist_pos: list[int], lead: list[str]) -> str | None:
    """A sentence when the kept history starts inside a user turn (not on a user message), else ``None``."""
    if cut <= 0 or cut >= H or cut in user_starts:
        return None
    prev = [j for j in user_starts if j < cut]
    where = f"the user turn of message {hist_pos[prev[-1]]}" if prev else "the history before the first user message"
    names = [("the summary" if x == "summary" else f"the re-injected {x}") for x in lead]
    led = ", ".join(names[:-1]) + (" and " if len(names) > 1 else "") + names[-1] if names else "nothing"
    return (f"the cut falls inside {where}, between exchanges; {led} (user message{'s' if len(names) > 1 else ''})"
            f" stand{'s' if len(names) == 1 else ''} before the kept history")


def _glued(hist: list[_Entry], c: int) -> bool:
    """A cut before ``hist[c]`` would separate a reasoning item from the assistant output it precedes."""
    return 0 < c < len(hist) and hist[c - 1].label == REASONING_LABEL and hist[c].role == "assistant"


def _blocked_cuts(hist: list[_Entry]) -> list[bool]:
    """``blocked[c]`` is True when a cut before ``hist[c]`` would separate a tool call from its result, or a
    reasoning item from the output after it (:func:`_glued`).

    Each tool call spans the positions of the message that makes it and of the results answering it
    (:func:`_tool_spans`); a cut ``c`` splits it when ``first < c <= last``.  Computed with a difference
    array: O(messages + ids).
    """
    H = len(hist)
    diff = [0] * (H + 2)
    for _i, first, last in _tool_spans(hist):
        if last > first:
            diff[first + 1] += 1
            diff[last + 1] -= 1
    out, run = [], 0
    for c in range(H + 1):
        run += diff[c]
        out.append(run > 0 or _glued(hist, c))
    return out


def _why_invalid(hist: list[_Entry], p: int, user_starts: set[int], unit: str, lead: bool) -> str:
    """Why a cut before ``hist[p]`` is not allowed, as a phrase ("splitting call_a/call_b (...)").

    ``lead``: a summary or re-injected user message would stand before the kept history at ``p``.
    """
    ids = _crossing(hist, p)
    if ids:
        return f"splitting {'/'.join(ids)} (a tool call from its result)"
    if _glued(hist, p):
        return "separating a reasoning item from the output it precedes"
    if p >= len(hist):
        return "splitting a turn" if unit == "turn" else "splitting an exchange"
    e = hist[p]
    if e.is_result:
        return "starting the kept history on a tool result"
    role = e.role
    article = "an" if role[:1] in "aeiou" else "a"
    if unit == "turn" and p not in user_starts:
        return f"starting the kept history on {article} {role} message instead of a user turn"
    if p not in user_starts and not lead:
        return (f"starting the sent history on {article} {role} message with no summary or re-injected user "
                "message before it")
    return "splitting a turn" if unit == "turn" else "splitting an exchange"


def _fmt(n: int) -> str:
    return f"{n:,}"


#: The budget advice (:func:`_budget_hint`), in the order tried: each change to the policy, and what it says.
_BUDGET_CHANGES: tuple[tuple[dict[str, Any], str], ...] = (
    # a larger budget fraction (at most 1, the dashboard's B): the budget becomes the window minus the reserve
    ({"budget_fraction": 1.0}, "raise the budget"),
    # no reserve: the budget becomes the fraction of the window (only a change when the reserve caps it)
    ({"reserve_tokens": 0}, "lower the reserve (the budget is the window minus the reserve)"),
    # both: the budget becomes the whole window
    ({"budget_fraction": 1.0, "reserve_tokens": 0},
     "lower the reserve and raise the budget (the budget is at most the window minus the reserve)"),
)


def _budget_hint(policy: Policy, need: int, under_trigger: bool = False) -> str | None:
    """The budget advice that can make a plan of ``need`` tokens fit, or ``None`` when no budget can.

    The budget is ``min(int(window * budget_fraction), window - reserve)`` (:func:`~ctxwatch.config.prompt_budget`),
    so raising the budget fraction (at most 1) reaches at most ``window - reserve``, lowering the reserve (to 0)
    at most ``int(window * budget_fraction)``, and both together the window.  The first change of
    :data:`_BUDGET_CHANGES` whose budget holds ``need`` is advised: "raise the budget" when ``need <= window -
    reserve``, "lower the reserve" when the reserve caps the budget and ``need <= int(window *
    budget_fraction)``, both when ``need <= window``.

    Args:
        policy: the plan's policy.
        need: the size in tokens that must fit (the smallest plan the other settings allow).
        under_trigger: ``need`` must be at or below the compaction trigger (:attr:`Policy.trigger_tokens`, a
            fraction of the budget) rather than the budget.
    """
    for change, advice in _BUDGET_CHANGES:
        changed = replace(policy, **change)
        if need <= (changed.trigger_tokens if under_trigger else changed.budget_tokens):
            return advice
    return None


def _reason(policy: Policy, plans: list[MessagePlan], before: int, after: int, budget: int, fits: bool,
            cut: int, H: int, floor: int, pinned: int, tools: int, summary: int, chosen: list[ReinjectItem],
            moved: str | None, starts: list[int], suffix: list[int], max_cut: int, kept_units: int,
            inside: str | None, short: str | None = None, overhead: int = 0, beyond: int | None = None,
            older: int = 0) -> str:
    """The plan's human sentence(s), joined with ``"; "``.

    ``starts`` are the unit starts (:attr:`Policy.unit`), ``kept_units`` how many of them are kept,
    ``inside`` the sentence saying the cut falls inside a user turn (or ``None``), ``short`` the sentence
    saying why a ``compact_at="trigger"`` cut stopped before the full compaction (or ``None``), ``beyond``
    the smallest prompt (tokens) a lower ``keep_recent`` would reach (``None``: no cut lies beyond the
    newest units), ``older`` the tokens of the history older than the newest units (what may be compacted).
    """
    unit = policy.unit
    trigger = policy.trigger_tokens
    at_trigger = policy.compact_at == "trigger"
    parts: list[str] = []
    pinned_hist = sum(m.tokens for m in plans if m.fate == "pinned" and m.source_index is not None)
    fixed = "the floor alone" if not pinned_hist else "the floor and the pinned messages alone"
    if cut == 0:
        if before <= budget:
            s = f"fits: {_fmt(before)} tokens within the budget of {_fmt(budget)}; nothing evicted"
            if before > trigger:
                s += f" (above the compaction trigger of {_fmt(trigger)})"
            elif at_trigger:
                s += f" (not above the compaction trigger of {_fmt(trigger)})"
            parts.append(s)
    if cut > 0:
        if at_trigger:
            s = f"compaction: {_fmt(before)} tokens are above the compaction trigger of {_fmt(trigger)}"
            if not short and cut == max_cut:
                recent = min(policy.keep_recent, len(starts))
                s += (f", so everything older than the newest {recent} {unit}{'s' if recent != 1 else ''} goes"
                      if recent else ", so the whole history goes (keep_recent 0)")
            parts.append(s)
        gone = [m for m in plans if m.fate in ("summarised", "evicted")]
        gone_tokens = sum(m.tokens for m in gone)
        verb = "summarised" if policy.mode == "summarise" else "evicted"
        s = (f"{verb} {len(gone)} message{'s' if len(gone) != 1 else ''} ({_fmt(gone_tokens)} tokens)")
        if policy.mode == "summarise":
            s += f" into a summary of ~{_fmt(summary)} tokens"
        kept = H - cut
        s += f"; kept {kept} message{'s' if kept != 1 else ''}"
        if kept:
            s += f" ({kept_units} {unit}{'s' if kept_units != 1 else ''})"
        if chosen:
            s += "; re-injected " + ", ".join(f"{r.kind} ({_fmt(r.tokens)})" for r in chosen)
        s += f"; {_fmt(before)} -> {_fmt(after)} tokens, budget {_fmt(budget)}"
        parts.append(s)
        if inside:
            parts.append(inside)
    if moved:
        parts.append(moved)
    if short:
        parts.append(short)
    if at_trigger and fits and after > trigger:
        # (the full compaction does not depend on the budget: a larger one helps when its trigger holds it)
        below = _budget_hint(policy, after, under_trigger=True)
        if floor > trigger:
            parts.append(f"{fixed} ({_fmt(floor)} tokens) {'is' if not pinned_hist else 'are'} above the compaction "
                         f"trigger of {_fmt(trigger)}, "
                         "so no compaction brings the prompt below it; shorten the system prompt or tool schemas"
                         + (", or " + below if below else ""))
        else:
            s = (f"still above the compaction trigger of {_fmt(trigger)} after the compaction, so the next call "
                 "compacts again" if cut > 0 else f"stays above the compaction trigger of {_fmt(trigger)}")
            parts.append(s + "; lower keep_recent or summary_tokens" + (", or " + below if below else ""))
    if not fits:
        # ``after`` is the smallest plan these settings allow, whatever the budget: a budget that holds it fits.
        raise_budget = _budget_hint(policy, after)
        # (None: it is larger than the window, so no budget or reserve can; the sentence then says so)
        over = f"over the budget of {_fmt(budget)}" + (
            "" if after <= policy.window else " (the whole window)" if budget >= policy.window
            else f" and the {_fmt(policy.window)}-token window")
        if floor > budget:
            terms = [(f"system prompt {_fmt(pinned - pinned_hist)}", pinned - pinned_hist),
                     (f"pinned messages {_fmt(pinned_hist)}", pinned_hist), (f"tool schemas {_fmt(tools)}", tools)]
            shown = [t for t, n in terms if n]
            parts.append(
                f"does not fit: {fixed} ("
                + (" + ".join(shown) + " = " if len(shown) > 1 else "")
                + f"{_fmt(floor)} tokens) exceed{'s' if not pinned_hist else ''} the budget of {_fmt(budget)}; the "
                "system prompt, tool schemas and pinned messages are never evicted, so shorten them"
                + (" or " + raise_budget if raise_budget else ""))
        else:
            extra = after - overhead - floor - suffix[cut]  # summary + re-injected items
            breakdown = (f"floor {_fmt(floor)} + kept history {_fmt(suffix[cut])}"
                         + (f" + summary and re-injected items {_fmt(extra)}" if extra else "")
                         + (f" + reply primer {_fmt(overhead)}" if overhead else "")
                         + f" = {_fmt(after)} tokens")
            # What protects the newest units: keep_recent, or keep_recent_messages when it reaches further back
            # (then lowering both reaches every cut beyond them).
            k_cut = H if not policy.keep_recent else starts[max(len(starts) - policy.keep_recent, 0)] if starts else 0
            by_messages = max_cut < k_cut
            held = (f"keep_recent_messages {policy.keep_recent_messages}" if by_messages
                    else f"keep_recent {policy.keep_recent}")
            lower = ("lower keep_recent_messages" + (" and keep_recent" if policy.keep_recent else "")
                     if by_messages else "lower keep_recent")
            if max_cut < H and cut == max_cut and max_cut in starts:
                if beyond is not None and beyond <= budget:
                    opts = [lower, *(["count exchanges (unit exchange)"] if unit == "turn" else []),
                            *([raise_budget] if raise_budget else [])]
                    hint = ", ".join(opts[:-1]) + " or " + opts[-1] if len(opts) > 1 else opts[0]
                else:
                    # (no lower keep_recent fits either: what stands before the kept units, or the budget, must
                    # change; after "even compacting the newest units gives N", a budget that holds N helps too)
                    if beyond is not None and beyond < after:
                        raise_budget = _budget_hint(policy, beyond)
                    opts = (["lower summary_tokens or re-inject less"] if summary or chosen or beyond is not None
                            else []) + ([raise_budget] if raise_budget else [])
                    hint = (f"even compacting the newest {unit}s gives {_fmt(beyond)} tokens; "
                            if beyond is not None else "") + ", or ".join(opts)
                parts.append(
                    f"does not fit: the newest {kept_units} {unit}{'s' if kept_units != 1 else ''} (kept by {held}) "
                    f"take{'' if kept_units != 1 else 's'} {_fmt(suffix[max_cut])} tokens; the smallest plan is "
                    f"{breakdown}, {over}" + (f"; {hint}" if hint else ""))
            else:
                opts = ["lower summary_tokens or re-inject less"] if extra else [raise_budget] if raise_budget else []
                if policy.mode == "drop" and not extra and unit == "exchange":
                    opts.insert(0, "summarise or re-inject the task (so the cut may fall inside a user turn)")
                if policy.mode == "summarise" and cut == 0 and 0 < older <= summary:
                    opts.insert(0, f"lower summary_tokens (a summary of ~{_fmt(summary)} tokens is larger than the "
                                   f"{_fmt(older)} tokens it would replace)")
                if beyond is not None and beyond <= budget:
                    # (the newest units keep the cut before them; compacting them too would fit)
                    opts.insert(0, f"{lower} (compacting the newest {unit}s too gives {_fmt(beyond)} tokens)")
                parts.append(f"does not fit: the smallest plan that keeps {unit}s and tool calls whole and starts the "
                             f"sent history on a user message is {breakdown}, {over}"
                             + ("; " + ", or ".join(opts) if opts else ""))
    return "; ".join(parts)


def policy_for_call(call: Call, settings: Settings, *, window: int | None = None, reserve: float | None = None,
                    **kwargs: Any) -> Policy:
    """The :class:`Policy` for one accounted call, as ``ctxwatch plan`` and the preview build it.

    Args:
        call: the call summary (its resolved ``window`` and the request's ``max_output_tokens``).
        settings: thresholds (budget fraction, trigger, keep_recent, summary_tokens, reserve fraction).
        window: overrides the call's window (tokens), e.g. the ``--window`` option.
        reserve: the ``--reserve`` option: below 1 a fraction of the window, else tokens.  ``None``: the
            rule of the call's summary (:func:`ctxwatch.accounting.reserve_for`): the request's
            ``max_output_tokens`` capped at the window, else ``settings.reserve``.
        kwargs: other :class:`Policy` fields (``mode``, ``unit``, ``keep_recent_messages``, ``compact_at``,
            reinjection switches).

    Raises:
        PolicyError: the window is unknown (neither the log, the option nor the catalogue gives it), or a
            value is out of range.
    """
    win = window or call.window
    if not win:
        raise PolicyError(f"the context window of {call.model or 'this model'} is unknown; pass --window")
    reserve_tokens: int | None = None
    if reserve is not None:
        if reserve < 0:
            raise PolicyError(f"reserve must be >= 0, got {reserve}")
        reserve_tokens = int(reserve * win) if reserve < 1 else int(reserve)
    else:
        from ctxwatch.accounting import reserve_for

        reserve_tokens = reserve_for(call.max_output_tokens, win, settings)[0]
    return Policy.from_settings(settings, win, reserve_tokens=reserve_tokens, **kwargs)


def unplannable(call: Call, pc: ParsedCall) -> str | None:
    """Why no eviction plan can be made for a call, or ``None`` when one can.

    A plan needs the call's history and its floor: a usage-only record (Gemini ``usageMetadata``, a batch
    output without its input) has no history, and a Claude Code excerpt that starts mid-session holds only
    part of it, so its floor cannot be told apart from the missing history.  A call whose re-read history
    breaks at a damaged or missing line (``extra["history_cut"]``) has only part of its messages, and one whose
    logged messages are missing or damaged (``extra["history_unknown"]``) has none that can be trusted.  Where
    the floor is inferred from the reported prompt (``history_reported_only``) and that report is implausible
    (:attr:`Call.prompt_implausible`, B13), there is no floor and no history size to plan from.
    """
    if pc.messages is None and pc.extra.get("history_unknown"):
        return ("this call's messages are missing from its log line or damaged (see `ctxwatch check`): "
                "nothing to plan")
    if pc.messages is None:
        return "the log holds only this call's usage, not its prompt: nothing to plan"
    if (pc.system is None or pc.history_reported_only) and call.prompt_implausible:
        return (f"its reported prompt is implausible ({implausible_what(call)}), and this format's floor and "
                "history are sized from it: nothing to plan")
    if (pc.system is None or pc.history_reported_only) and call.floor_tokens is None:
        return ("the log holds only part of this call's history (it starts mid-session), so its floor cannot "
                "be told apart: nothing to plan")
    if pc.extra.get("history_cut"):
        # Re-read with its text, the call's chain of messages breaks at a line the file does not hold in usable
        # form (a damaged line, or one never written): a plan of the visible tail, scaled up to the reported
        # prompt, would show a few messages standing for the whole history.
        return ("this call's history breaks at a line missing from the log or damaged (see `ctxwatch check`), "
                "so its messages are incomplete: nothing to plan")
    return None


def scaled_to(counts: Sequence[int], total: int) -> list[int]:
    """``counts`` scaled so that they add up to ``total`` exactly (largest remainders get the rounding).

    Used where a history's size is the provider's count (reported prompt minus the floor) and its messages
    were counted with another tokenizer: each message keeps its share, and the plan starts from what the
    provider saw.  Counts that add up to 0 are returned as they are.
    """
    whole = sum(counts)
    if whole <= 0 or total < 0:
        return list(counts)
    raw = [c * total / whole for c in counts]
    out = [int(r) for r in raw]
    short = total - sum(out)
    for i in sorted(range(len(raw)), key=lambda k: raw[k] - out[k], reverse=True)[:short]:
        out[i] += 1
    return out


@dataclass(frozen=True)
class PlanCounts:
    """The token counts a plan of one logged call starts from (see :func:`plan_counts`).

    Attributes:
        system_tokens / tools_tokens: the pinned floor parts (for a format that does not log them, the whole
            inferred floor is ``system_tokens``).
        tokens: one count per message of the call.
        overhead: tokens outside the messages and the floor (the reply primer of a counted prompt).
        scale: the factor applied to this tokenizer's counts so that they add up to the provider's count
            (1.0 when they were not scaled).
        tools_estimate: when the tool schemas took the gap to the provider's count instead (the model's own
            tokenizer counted everything else exactly), their estimate before; else ``None``.
        floor_scale: when the floor is the calibrated one ``report`` and the dashboard show
            (:func:`ctxwatch.model.shown_breakdown`), the factor it was scaled by (``scale`` is then the
            messages'); else ``None``.
        floor_capped: with ``floor_scale``, True when the calibrated floor was capped at the reported prompt.
        unscaled_ratio: the provider's reported prompt / this tokenizer's count (dimensionless), for a tokenizer
            that is not the model's own, when it is no tokenizer gap (2 or more, 1/2 or less:
            :func:`ctxwatch.accounting.plausible_calibration`), so the counts were left as counted and 'before' is
            not the report (as ``report`` shows such a call: raw); else ``None``.
    """

    system_tokens: int
    tools_tokens: int
    tokens: list[int]
    overhead: int
    scale: float = 1.0
    tools_estimate: int | None = None
    floor_scale: float | None = None
    floor_capped: bool = False
    unscaled_ratio: float | None = None


def plan_counts(call: ParsedCall, counter: Counter, *, floor_tokens: int | None = None,
                history_tokens: int | None = None, prompt_tokens: int | None = None,
                tokens: Sequence[int] | None = None, system_tokens: int | None = None,
                tools_tokens: int | None = None, shown: Breakdown | None = None) -> PlanCounts:
    """The counts to plan ``call`` from, so that the plan's "before" is the prompt ``report`` shows.

    Args:
        call: the parsed call (its text). counter: its model's token rules.
        floor_tokens: for formats that do not log the system prompt and tools (``call.system is None`` or
            ``history_reported_only``: Claude Code, Codex), the accounted (inferred) floor; pinned whole.
        history_tokens: the accounted history when it is the provider's count (``Call.history_src``
            inferred): the messages' counts are scaled to add up to it.
        prompt_tokens: the provider's reported prompt, for a call whose system prompt and tools are logged:
            when this tokenizer's counts (plus the reply primer) add up to something else (a Claude or Gemini
            model counted with o200k_base), every count is scaled to it.  A reported 0 (or less) is no prompt
            size (:attr:`~ctxwatch.model.Call.report_implausible`): it is ignored, and the counts stand unscaled.
        tokens / system_tokens / tools_tokens: counts already made (the accounted summary's), else counted here.
        shown: the call's floor and history as ``report`` and the dashboard show them
            (:meth:`ctxwatch.accounting.Calibrations.breakdown`).  Where they are calibrated (a tokenizer that is
            not the model's own, and a calibration of the model: :attr:`~ctxwatch.model.Breakdown.calibrated`),
            its system and tools are pinned as they are, so that the plan's floor is the one shown everywhere,
            and the messages are scaled to fill ``prompt_tokens`` less that floor and the reply primer (so that
            'before' is still the reported prompt; without a report, to the calibrated history).  Otherwise
            the rules above.
    """
    if prompt_tokens is not None and prompt_tokens <= 0:
        prompt_tokens = None
    msgs = call.messages or []
    if tokens is not None and len(tokens) != len(msgs):
        tokens = None
    counts = list(tokens) if tokens is not None else [counter.message_tokens(m) for m in msgs]
    if call.system is None or call.history_reported_only:
        floor = floor_tokens or 0
        if history_tokens is None and prompt_tokens is not None and floor + sum(counts) != prompt_tokens:
            # (an inferred floor of 0: the reported prompt is below this tokenizer's count of the history)
            history_tokens = max(0, prompt_tokens - floor)
        scale = 1.0
        if history_tokens is not None:
            whole = sum(counts)
            scale = history_tokens / whole if whole else 1.0
            counts = scaled_to(counts, history_tokens)
        return PlanCounts(floor, 0, counts, 0, scale)
    if shown is not None and shown.factor is not None and shown.system_tokens is not None \
            and shown.tools_tokens is not None:
        return _calibrated_counts(counts, shown, prompt_tokens)
    # (the prompt is counted here, so it carries the reply primer the accounting adds; an inferred floor above
    # already holds it, being the reported prompt minus the history)
    sys_t = system_tokens if system_tokens is not None else (
        counter.system_tokens(list(call.system)) if call.system else 0)
    tools_t = tools_tokens if tools_tokens is not None else (
        counter.tools_tokens(list(call.tools)) if call.tools else 0)
    whole = sys_t + tools_t + sum(counts)
    if prompt_tokens is None or prompt_tokens - REPLY_PRIMER == whole or whole <= 0:
        return PlanCounts(sys_t, tools_t, counts, REPLY_PRIMER)
    overhead = min(REPLY_PRIMER, max(0, prompt_tokens))  # (a reported prompt of 0 to 2 tokens: no room for it)
    target = max(0, prompt_tokens) - overhead
    rest = whole - tools_t
    if counter.exact and (tools_t or call.tools is None) and target > rest and not any(
            p.kind in ("image", "document") for m in msgs for p in m.parts):
        # The model's own tokenizer counted the system prompt and every message exactly: the gap is in the tool
        # schemas, whose rendering the provider does not publish (or which the log does not give: tools that
        # are not a list), so they take it (scaling every count would spread it over the system prompt and the
        # history: x2.46 for a call whose 700 tokens of tools were unknown).
        return PlanCounts(sys_t, target - rest, counts, overhead, 1.0, tools_estimate=tools_t)
    if not counter.exact and not plausible_calibration(target / whole):
        # (x108 for a "Be brief." system prompt reported as 5,000 tokens: no tokenizer differs by that much, the
        # log does not show what was counted, and report shows such a call's counts raw: so does the plan.  The
        # model's own tokenizer is not calibrated at all: there the gap is scaled into the counts, as before)
        return PlanCounts(sys_t, tools_t, counts, REPLY_PRIMER, unscaled_ratio=(target + overhead) / (
            whole + REPLY_PRIMER))
    scaled = scaled_to([sys_t, tools_t, *counts], target)
    return PlanCounts(scaled[0], scaled[1], scaled[2:], overhead, target / whole)


def _calibrated_counts(counts: list[int], shown: Breakdown, prompt_tokens: int | None) -> PlanCounts:
    """:func:`plan_counts` of a call whose floor is shown calibrated: system and tools pinned as ``shown`` has
    them; the messages' ``counts`` (this tokenizer's) scaled to the reported prompt (tokens, > 0, or ``None``)
    less that floor and the reply primer, so the plan's 'before' is the report; without a report, to the
    calibrated history.  The floor keeps the calibration and the history takes what is left of the tokenizer
    gap in this call (the median of the run cannot fit every call exactly), as an inferred history does."""
    assert shown.system_tokens is not None and shown.tools_tokens is not None and shown.factor is not None
    floor = shown.system_tokens + shown.tools_tokens
    raw = sum(counts)
    if prompt_tokens is not None:
        overhead = min(REPLY_PRIMER, prompt_tokens)
        target = max(0, prompt_tokens - overhead - floor)
    else:
        overhead = REPLY_PRIMER
        target = shown.history_tokens if shown.history_tokens is not None else round(raw * shown.factor)
    return PlanCounts(shown.system_tokens, shown.tools_tokens, scaled_to(counts, target), overhead,
                      target / raw if raw else 1.0, floor_scale=shown.factor, floor_capped=shown.capped)


def plan_from_counts(call: ParsedCall, policy: Policy, counter: Counter, counts: PlanCounts) -> Plan:
    """:func:`plan_messages` over ``call``'s messages with ``counts`` (from :func:`plan_counts`)."""
    if call.system is None or call.history_reported_only:
        plan = plan_messages(call.messages or [], policy, counter=counter, tokens=counts.tokens,
                             system_tokens=counts.system_tokens, tools_tokens=0)
        plan.floor_split = False
        return plan
    return plan_messages(call.messages or [], policy, system=call.system or None, tools=call.tools or None,
                         counter=counter, tokens=counts.tokens, system_tokens=counts.system_tokens,
                         tools_tokens=counts.tools_tokens, overhead=counts.overhead)


def plan_call(call: ParsedCall, policy: Policy, counter: Counter | None = None, *,
              floor_tokens: int | None = None, history_tokens: int | None = None,
              prompt_tokens: int | None = None, counts: PlanCounts | None = None) -> Plan:
    """Plan the eviction of a :class:`~ctxwatch.model.ParsedCall` (a reader's output, with text).

    Args:
        call: the parsed call.
        policy: the policy. When it has no explicit ``reserve_tokens``, the call's own
            ``max_output_tokens`` becomes the reserve (if smaller than the window).
        counter: token rules; default: the call's model and provider.
        floor_tokens / history_tokens / prompt_tokens: the accounted numbers the plan starts from (see
            :func:`plan_counts`), so that its "before" is the prompt ``report`` shows.
        counts: those counts already made by :func:`plan_counts` (the three numbers are then not used).
    """
    counter = counter or counter_for(call.model, call.provider)
    if policy.reserve_tokens is None and call.max_output_tokens and call.max_output_tokens < policy.window:
        policy = replace(policy, reserve_tokens=call.max_output_tokens)
    if counts is None:
        counts = plan_counts(call, counter, floor_tokens=floor_tokens, history_tokens=history_tokens,
                             prompt_tokens=prompt_tokens)
    return plan_from_counts(call, policy, counter, counts)
