"""The items of one call's prompt for the detail view: system prompt, tool schemas, messages, framing and
the gap to the reported count, each with its tokens, built from the call re-read from disk.

Only capped copies of the texts are kept: a 20 MB tool result is shown as a folded preview and, expanded, as
its first :data:`EXPAND_CHARS` characters, never whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import orjson

from ctxwatch.model import (
    Call,
    ParsedCall,
    Src,
)
from ctxwatch.model import Message as LogMessage
from ctxwatch.source import json_text
from ctxwatch.ui import text as tx
from ctxwatch.ui.screens.common import NO_SYSTEM, NO_TEXT

#: Characters of an item shown folded (at most :data:`FOLD_LINES` lines of them).
FOLD_CHARS = 2000
FOLD_LINES = 16
#: Characters of an item shown expanded; longer content is cut with a note (a 20 MB tool result is never
#: rendered whole). 200,000 characters is about 50k tokens: more than a person reads in one sitting.
EXPAND_CHARS = 200_000
#: Tool schemas per call above which per-tool costs are measured one tool at a time instead of by the
#: O(n²) marginal difference of :func:`ctxwatch.planner.schema.marginal_costs`.
MARGINAL_MAX_TOOLS = 64


@dataclass(slots=True)
class Item:
    """One thing in a call's prompt: the system prompt, one tool schema, or one message.

    Attributes:
        position: order in the prompt (system first, then tools, then the history).
        kind: ``system`` | ``floor`` | ``tool`` | ``message`` | ``framing`` (the tool preamble and the reply
            primer, counted in no other row) | ``gap`` (the reported history minus the rows' count, where the
            history is inferred from reported usage; or the reported prompt minus the estimate) | ``reported``
            (an implausible reported prompt: shown as reported, no part of the prompt, no percentage).
        role: the message role, or ``system`` / ``tools``.
        label: what it is, e.g. ``tool result (Read)``, ``assistant → Bash``, ``schema: Read``.
        tokens: tokens (framing included for messages); ``None`` when unknown.
        text: the content, cut to :data:`EXPAND_CHARS` characters.
        chars: the content's full length in characters.
        missing: why there is no text, when ``chars`` is 0 (:data:`NO_TEXT` unless the call could not be
            re-read).
        reported: the part of ``tokens`` that is the provider's reported count rather than this tokenizer's
            (a Codex reasoning item: its encrypted content cannot be counted locally, so the size reported
            when it was produced is used, :meth:`~ctxwatch.tokens.Counter.part_count`); 0 for none.
        raw: this tokenizer's count when ``tokens`` is scaled as ``plan`` and the eviction preview scale it
            (calibrated, or scaled to the provider's count: :func:`ctxwatch.ui.screens.itemcounts.with_counts`);
            ``None`` when ``tokens`` is that count.
    """

    position: int
    kind: str
    role: str
    label: str
    tokens: int | None
    text: str
    chars: int
    missing: str = NO_TEXT
    reported: int = 0
    raw: int | None = None


def _cap(s: str) -> str:
    return s if len(s) <= EXPAND_CHARS else s[:EXPAND_CHARS]


def build_items(call: Call, pc: ParsedCall | None, unread: str | None = None) -> list[Item]:
    """The items of a call's prompt, in prompt order, with their tokens.

    System prompt and tool schemas come from the re-read call when the log holds them; otherwise the floor
    is one ``floor`` item (inferred from the reported usage).  Message tokens are the accounted ones
    (:attr:`Call.messages`); per-tool tokens are marginal costs over the whole tools payload.

    Args:
        call: the call's summary (its token counts).
        pc: the call re-read from disk, or ``None`` when it was not (only the summary's sizes are shown).
        unread: with ``pc`` ``None``, why the text could not be read (e.g. :data:`REREAD_FAILED`): the items
            say it instead of "no text in the log", and a floor the log holds is shown as its system prompt
            and tool schemas rather than as a floor that was "not logged".
    """
    from ctxwatch.planner.schema import marginal_costs, tool_name
    from ctxwatch.tokens import Counter, counter_for

    items: list[Item] = []
    missing = unread if pc is None and unread else NO_TEXT
    logged_floor = pc is None and unread is not None and call.floor_src == Src.ESTIMATED
    if pc is not None and pc.system is not None and not any(pc.system):
        # (the request is logged whole and carries no system prompt: say so, not that its text is missing)
        items.append(Item(len(items), "system", "system", "system prompt: absent from this request", 0, "", 0,
                          NO_SYSTEM))
    elif pc is not None and pc.system is not None:
        body = "\n\n".join(pc.system)
        items.append(Item(len(items), "system", "system", "system prompt", call.system_tokens, _cap(body),
                          len(body)))
    elif logged_floor:
        # The log holds the system prompt and tools (they were counted), only their text is not at hand now.
        if call.system_tokens:
            items.append(Item(len(items), "system", "system", "system prompt", call.system_tokens, "", 0,
                              missing))
        if call.tools_tokens:
            nt = len(call.tool_names)
            items.append(Item(len(items), "tool", "tools", f"tool schemas ({nt} tool{'s' if nt != 1 else ''})",
                              call.tools_tokens, "", 0, missing))
    elif call.prompt_implausible:
        # (a count no request can have; shown as reported, never split into a floor and a history, and no
        # part of the prompt the other rows are percentages of)
        items.append(Item(len(items), "reported", "system", "reported prompt: implausible", call.prompt_reported,
                          "", 0))
    elif call.floor_tokens is None and call.history_tokens is None and call.prompt_reported is not None:
        items.append(Item(len(items), "floor", "system", "prompt: reported total, not split (the log holds only "
                          "part of the history)", call.prompt_reported, "", 0))
    elif call.floor_tokens:
        if call.floor_src != Src.INFERRED:
            how = str(call.floor_src)
        elif call.history_src == Src.INFERRED:
            how = "inferred once for the context; history = reported prompt minus it"
        else:
            how = "inferred: reported prompt minus history"
        items.append(Item(len(items), "floor", "system", f"floor: system prompt + tools, not logged ({how})",
                          call.floor_tokens, "", 0))
    preamble = 0  # the tools payload's fixed part, in no tool's row (OpenAI 12, Anthropic 346: tokens.py)
    if pc is not None and pc.tools:
        counter = counter_for(call.model, call.provider)
        tools = [t for t in pc.tools if isinstance(t, dict)]
        if len(tools) <= MARGINAL_MAX_TOOLS:
            costs, _total, preamble = marginal_costs(tools, counter)
        else:
            # One tool at a time; each tool alone would carry the fixed part once, so it is taken off each.
            one = marginal_costs(tools[:1], counter)[2]
            costs = [counter.tools_tokens([t]) - one for t in tools]
            preamble = counter.tools_tokens(tools) - sum(costs)
        for t, cost in zip(tools, costs, strict=True):
            try:
                body = orjson.dumps(t, option=orjson.OPT_INDENT_2).decode()
            except orjson.JSONEncodeError:  # (nested deeper than orjson writes: shown compact)
                body = json_text(t)
            items.append(Item(len(items), "tool", "tools", f"schema: {tool_name(t)}", cost, _cap(body), len(body)))
    if pc is None or pc.messages is None:
        for i, st in enumerate(call.messages):
            items.append(Item(len(items), "message", st.role, _stat_label(st.role, st.label, i), st.tokens, "", 0,
                              missing))
        return _add_framing(call, items, preamble)
    aligned = len(call.messages) == len(pc.messages)
    msg_counter: Counter | None = None  # made on the first message that needs counting
    labels = message_labels(pc.messages)
    for i, m in enumerate(pc.messages):
        label = labels[i]
        if aligned:
            n: int | None = call.messages[i].tokens
        else:
            if msg_counter is None:
                msg_counter = counter_for(call.model, call.provider)
            n = msg_counter.message_tokens(m)
        body = m.text()
        reasoning = [p for p in m.parts if p.kind == "thinking" and p.meta
                     and isinstance(p.meta.get("reasoning_tokens"), int)]
        if reasoning and msg_counter is None:
            msg_counter = counter_for(call.model, call.provider)
        # (the counter takes the reported size where it is at least the local count of the summary text)
        reported = sum(p.meta["reasoning_tokens"] for p in reasoning if msg_counter is not None and p.meta
                       and msg_counter.part_count(p)[0] == p.meta["reasoning_tokens"])
        items.append(Item(len(items), "message", m.role, label, n, _cap(body), len(body), reported=reported))
    if call.history_src == Src.INFERRED and call.history_tokens is not None and pc.messages:
        # The history is the provider's count (reported minus the floor); the rows above are this tokenizer's.
        # Show the difference so the rows add up to the prompt.
        counted = sum(it.tokens or 0 for it in items if it.kind == "message")
        what = ("not in the log: the history breaks at a damaged or missing line (see `ctxwatch check`)"
                if pc.provenance.history_cut else "tokenizer gap")
        items.append(Item(len(items), "gap", "", f"{what}: history {call.history_tokens:,} − rows "
                          f"{counted:,}", call.history_tokens - counted, "", 0))
    return _add_framing(call, items, preamble)


def item_numbers(items: Sequence[Item]) -> dict[int, str]:
    """The ``#`` of each item (by position) as the eviction preview and ``plan`` number the same things: the
    floor (the system prompt, or the inferred floor) 0, the messages in order after it (from 0 when there is
    no floor row), and ``-`` for what is in no message (tool schemas, framing, gaps)."""
    first = 1 if any(it.kind in ("system", "floor") for it in items) else 0
    out: dict[int, str] = {}
    n = first
    for it in items:
        if it.kind in ("system", "floor"):
            out[it.position] = "0"
        elif it.kind == "message":
            out[it.position] = str(n)
            n += 1
        else:
            out[it.position] = "-"
    return out


def message_labels(messages: Sequence[LogMessage]) -> list[str]:
    """What each message is, as the call detail and the eviction preview name it: ``tool result (Read)`` for a
    message answering tool calls (named by the calls before it), ``assistant → Bash, Read`` for one making
    them, else its role; with the reader's label, e.g. ``user [compaction_summary]``."""
    names: dict[str, str] = {}
    out: list[str] = []
    for m in messages:
        calls = [p for p in m.parts if p.kind == "tool_call"]
        for p in calls:
            if p.call_id:
                names[p.call_id] = p.name or "?"
        results = [p for p in m.parts if p.kind == "tool_result"]
        if results:
            label = "tool result (" + ", ".join(names.get(p.call_id or "", "?") for p in results) + ")"
        elif calls:
            label = f"{m.role} → " + ", ".join(p.name or "?" for p in calls)
        else:
            label = m.role
        out.append(label + (f" [{m.label}]" if m.label else ""))
    return out


def _add_framing(call: Call, items: list[Item], preamble: int) -> list[Item]:
    """Append the request's framing to ``items`` where the estimate counts it outside every row, so that the
    rows add up to the estimated prompt (:mod:`ctxwatch.accounting`: system + tools + history + the reply
    primer); then, when the provider reported another size, the difference, so that they add up to the
    prompt the header shows (the reported one).

    Args:
        call: the call (only one whose floor and history are both counted has an estimate to add up to; an
            inferred floor or history already holds the framing).
        items: the rows so far (each message row holds its own framing: 3 tokens plus its role).
        preamble: the tools payload's fixed part left out of the per-tool rows (0 when the tools are one row).
    """
    from ctxwatch.tokens import REPLY_PRIMER, own_tokenizer

    if call.prompt_estimated is None:
        return items
    parts = [f"tools {preamble:,}", f"primer {REPLY_PRIMER}"] if preamble else [f"reply primer {REPLY_PRIMER}"]
    what = ([f"the fixed part of the tool definitions ({preamble:,} tokens: the preamble the provider wraps "
             "them in, whatever their number)"] if preamble else []) + \
        [f"the {REPLY_PRIMER} tokens that start the reply (<|start|>assistant<|message|>)"]
    why = ("Tokens the provider adds around the request, outside the system prompt, the tool schemas and the "
           f"messages: {' and '.join(what)}. Each message row already holds its own framing (3 tokens plus its "
           "role).")
    items.append(Item(len(items), "framing", "", "framing: " + " + ".join(parts), preamble + REPLY_PRIMER,
                      why, len(why)))
    reported = call.prompt_reported
    # (an implausible report is no size to measure the estimate against: no "gap" row built from it)
    if reported and reported != call.prompt_estimated and not call.report_implausible:
        own = call.exact or own_tokenizer(call.model, call.provider, call.tokenizer)
        gap = "tokenizer gap" if not own else "estimate gap"
        note = (f"The provider reported {reported:,} prompt tokens; the rows above add up to "
                f"{call.prompt_estimated:,}, counted with {call.tokenizer}" +
                (", which is not this model's own tokenizer." if not own else
                 ". The difference is what the estimate cannot see (the log's usage, images or content it "
                 "leaves out)." if call.exact else
                 ", this model's own tokenizer, with estimates where it cannot count exactly (images by the "
                 "provider's rule, or a text with a run too long to encode whole, cut)."))
        items.append(Item(len(items), "gap", "", f"{gap}: reported − estimate", reported - call.prompt_estimated,
                          note, len(note)))
    return items


def _stat_label(role: str, label: str | None, i: int) -> str:
    return role + (f" [{label}]" if label else "")


def fold(text: str, chars: int, expanded: bool, missing: str = NO_TEXT) -> tuple[str, str]:
    """The part of an item's content to show, cleaned, and a note saying how much that is.

    Args:
        text: the content (already cut to :data:`EXPAND_CHARS`).
        chars: the content's full length.
        expanded: show up to :data:`EXPAND_CHARS` characters instead of the folded preview.
        missing: the note when there is no content (:attr:`Item.missing`).
    """
    if not chars:
        return "", tx.clean(missing, multiline=False)
    if expanded:
        shown = text
    else:
        shown = text[:FOLD_CHARS]
        lines = shown.split("\n")
        if len(lines) > FOLD_LINES:
            shown = "\n".join(lines[:FOLD_LINES])
    body = tx.clean(shown)
    if len(shown) >= chars:
        return body, f"{chars:,} characters"
    if expanded:
        return body + "\n…", f"first {len(shown):,} of {chars:,} characters (too long to show whole)"
    return body + "\n…", f"first {len(shown):,} of {chars:,} characters · space expands"
