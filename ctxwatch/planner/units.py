"""The history as the planner sees it: entries, units (turns and exchanges), and where a cut may not fall (between
a tool call and its result, or a reasoning item and its output).

An exchange is an assistant message with every tool result answering its calls (OpenAI ``tool_calls`` +
``tool`` messages, Anthropic ``tool_use`` + ``tool_result`` parts), or any other single message; a turn is a
user message that is not a tool result and everything up to the next.  Agent logs hold dozens of tool calls per
user prompt, so exchanges are the default unit.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxwatch.model import Message, MessageStat

#: Roles that are part of the prompt-cache prefix and are always pinned.
PINNED_ROLES = frozenset({"system", "developer"})
#: Message labels that are pinned wherever they appear: project instructions such as AGENTS.md, and
#: the harness's environment context (Codex re-sends both at the head of a compacted history).
PINNED_LABELS = frozenset({"instructions", "environment"})
#: Label of a Responses API reasoning item: an input item of its own that must stay with the output item after
#: it (a tool call sent without the reasoning that produced it can be refused), so no cut goes between them.
REASONING_LABEL = "reasoning"


@dataclass(slots=True)
class Entry:
    """One message of a call as the planner sees it.

    Attributes:
        role / label: the message's.  tokens: its size (framing included).
        pinned: never evicted (:data:`PINNED_ROLES`, :data:`PINNED_LABELS`, the system blocks).
        source: its position in the planned ``messages`` (``None`` for the system blocks).
        calls / results: the tool-call ids it makes / answers.  is_result: it holds a tool result.
    """

    role: str
    tokens: int
    pinned: bool
    source: int | None
    label: str | None
    calls: tuple[str, ...]
    results: tuple[str, ...]
    is_result: bool = False


def entry(m: Message | MessageStat, tokens: int, source: int) -> Entry:
    """A planner entry; ``is_result``: a ``tool`` message or one holding a tool result (even without id)."""
    if isinstance(m, MessageStat):
        calls, results = tuple(m.tool_call_ids), tuple(m.tool_result_ids)
        is_result = bool(results)
    else:
        calls, results = tuple(m.tool_call_ids()), tuple(m.tool_result_ids())
        is_result = bool(results) or any(p.kind == "tool_result" for p in m.parts)
    pinned = m.role in PINNED_ROLES or m.label in PINNED_LABELS
    return Entry(m.role, tokens, pinned, source, m.label, calls, results, is_result or m.role == "tool")


def _tool_spans(hist: list[Entry]) -> list[tuple[str, int, int]]:
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


def _crossing(hist: list[Entry], c: int) -> list[str]:
    """Tool-call ids whose call and result lie on both sides of a cut before ``hist[c]``, in call order."""
    out: list[str] = []
    for i, first, last in _tool_spans(hist):
        if first < c <= last and i not in out:
            out.append(i)
    return out


def numbering(starts: list[int], n: int) -> list[int]:
    """For each of ``n`` positions, the index of the last unit start at or before it (-1 before the first)."""
    out = [-1] * n
    t = -1
    for j in range(n):
        if t + 1 < len(starts) and starts[t + 1] == j:
            t += 1
        out[j] = t
    return out


def _glued(hist: list[Entry], c: int) -> bool:
    """A cut before ``hist[c]`` would separate a reasoning item from the assistant output it precedes."""
    return 0 < c < len(hist) and hist[c - 1].label == REASONING_LABEL and hist[c].role == "assistant"


def blocked_cuts(hist: list[Entry]) -> list[bool]:
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


def why_invalid(hist: list[Entry], p: int, user_starts: set[int], unit: str, lead: bool) -> str:
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
