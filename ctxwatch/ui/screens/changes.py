"""What changed from one call to the next of the same context (``d``): the messages added (with their tokens), the
messages that left the context (compacted, or dropped by the client), floor changes (the system prompt edited or
gone, tools added or removed) and how the reported prompt moved.

Computed from the two calls' summaries and their items as the detail view builds them
(:func:`~ctxwatch.ui.screens.items.build_items`, from the calls re-read from disk); no widget here.
"""

from __future__ import annotations

import difflib
import textwrap
from dataclasses import dataclass, field

from rich.text import Text

from ctxwatch.model import Call, Src
from ctxwatch.ui import text as tx
from ctxwatch.ui.screens.items import Item

#: Messages listed under "added" and under "left" at most (the rest are counted).
DIFF_ROWS = 200
#: Widest message label in a row (``tool result (Read, Grep, Glob)`` is cut there with ``…``).
LABEL_CHARS = 34


@dataclass(slots=True)
class TurnDiff:
    """The change from ``prev`` to ``cur`` (calls of one context, ``prev`` the one before ``cur``).

    Attributes:
        added: ``(position in cur's history, from 1; item)`` of the messages ``cur`` sends that ``prev`` did not.
        left: ``(position in prev's history, from 1; item)`` of the messages ``prev`` sent that ``cur`` does not.
        kept: messages sent by both.
        floor: sentences on the floor (system prompt, tools), empty when it did not change.
        texts: whether the messages could be compared (both calls' texts read from the log).
    """

    prev: Call
    cur: Call
    added: list[tuple[int, Item]] = field(default_factory=list)
    left: list[tuple[int, Item]] = field(default_factory=list)
    kept: int = 0
    floor: list[str] = field(default_factory=list)
    texts: bool = True


def _key(it: Item) -> tuple[str, str, int, str]:
    """What makes two messages the same message re-sent: role, label, length and (capped) text."""
    return (it.role, it.label, it.chars, it.text)


def turn_diff(prev: Call, cur: Call, prev_items: list[Item] | None, cur_items: list[Item] | None) -> TurnDiff:
    """The :class:`TurnDiff` of two calls; ``*_items`` their items (``None``: not read, messages not compared).
    Messages are matched in order (:class:`difflib.SequenceMatcher` over their keys, no junk heuristic): a
    message sent again unchanged is kept, one edited is both left and added."""
    d = TurnDiff(prev, cur)
    d.floor = floor_changes(prev, cur)
    if prev_items is None or cur_items is None:
        d.texts = False
        return d
    a = [it for it in prev_items if it.kind == "message"]
    b = [it for it in cur_items if it.kind == "message"]
    if not any(it.chars for it in a + b):
        d.texts = False  # (no text in the log: sizes alone cannot tell a message from another)
        return d
    sm = difflib.SequenceMatcher(None, [_key(x) for x in a], [_key(x) for x in b], autojunk=False)
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op == "equal":
            d.kept += i2 - i1
            continue
        d.left.extend((i + 1, a[i]) for i in range(i1, i2))
        d.added.extend((j + 1, b[j]) for j in range(j1, j2))
    return d


def floor_changes(prev: Call, cur: Call) -> list[str]:
    """Sentences on what changed in the floor: the system prompt gone, back or edited, tools added or removed,
    schemas edited; an inferred floor's size change (the log holds neither the system prompt nor the tools)."""
    out: list[str] = []
    if prev.system_present and cur.system_present is False:
        out.append(f"the system prompt left the context ({tx.tokens(prev.system_tokens)} tokens)")
    elif prev.system_present is False and cur.system_present:
        out.append(f"the system prompt is back ({tx.tokens(cur.system_tokens)} tokens)")
    elif prev.system_key is not None and cur.system_key is not None and prev.system_key != cur.system_key:
        out.append(f"the system prompt was edited ({tx.tokens(prev.system_tokens)} → "
                   f"{tx.tokens(cur.system_tokens)} tokens)")
    gone = [n for n in prev.tool_names if n not in cur.tool_names]
    new = [n for n in cur.tool_names if n not in prev.tool_names]
    if new:
        out.append(f"tool{'s' if len(new) != 1 else ''} added: {', '.join(new)}")
    if gone:
        out.append(f"tool{'s' if len(gone) != 1 else ''} removed: {', '.join(gone)}")
    if not new and not gone and prev.tools_key is not None and cur.tools_key is not None \
            and prev.tools_key != cur.tools_key:
        out.append(f"tool schemas edited ({tx.tokens(prev.tools_tokens)} → {tx.tokens(cur.tools_tokens)} tokens)")
    if not out and prev.floor_tokens != cur.floor_tokens:
        was, now = tx.marked(prev.floor_tokens, prev.floor_src), tx.marked(cur.floor_tokens, cur.floor_src)
        # (an inferred floor is what the reported prompt holds beyond the counted history: what a harness adds
        # after a compaction counts there, though no system prompt or tool changed)
        why = "; inferred again from this call" if cur.floor_src == Src.INFERRED else ""
        out.append(f"floor {was} → {now} tokens ({_delta(prev.floor_tokens, cur.floor_tokens)}{why})")
    return out


def _delta(a: int | None, b: int | None) -> str:
    """``+1,701``, ``-30``, ``=``, or ``?`` when either is unknown."""
    if a is None or b is None:
        return "?"
    return "=" if a == b else f"{b - a:+,}"


def diff_text(d: TurnDiff, width: int = 80) -> Text:
    """The diff screen's text for ``width`` cells: the two calls, how the prompt moved, the floor, the messages
    added and those that left the context, a row each (log text shown literally, cut to the row)."""
    p, c = d.prev, d.cur
    # (the head's lines break between their parts, never inside one)
    what = Text(f"call #{c.index + 1} against #{p.index + 1}", "bold")
    what.append_text(tx.literal(f", the call before it in context {c.context}", limit=80))
    head = [what]
    if p.timestamp is not None and c.timestamp is not None:
        head.append(Text(f"{tx.clock(p.timestamp)} → {tx.clock(c.timestamp)} ({c.timestamp - p.timestamp:+.0f} s)"))
    out = tx.flow(head, width)
    out.append("\n")
    out.append_text(tx.flow([
        Text(f"reported prompt {tx.tokens(p.prompt_reported)} → {tx.tokens(c.prompt_reported)} "
             f"({_delta(p.prompt_reported, c.prompt_reported)})", "bold"),
        Text(f"floor {_delta(p.floor_tokens, c.floor_tokens)}"),
        Text(f"history {_delta(p.history_tokens, c.history_tokens)}")], width))
    out.append("\n")
    if c.compaction:
        out.append("a compaction happened before this call: the history was summarised\n", "bold yellow")
    out.append("\nFloor\n", "bold")
    if d.floor:
        for line in d.floor:
            row = tx.literal(f"  {line}", "yellow", limit=400)
            row.truncate(width, overflow="ellipsis")  # (one row each, as the messages' rows)
            out.append_text(row)
            out.append("\n")
    else:
        out.append("  unchanged\n", "dim")
    if not d.texts:
        out.append("\nMessages\n", "bold")
        out.append("  not compared: the log does not hold both calls' messages (sizes only)\n", "dim")
        return out
    out.append("\nMessages\n", "bold")
    out.append_text(counts_note(c, p, width))
    tokens = sum(it.tokens or 0 for _n, it in d.added)
    out.append(f"Added: {len(d.added):,} message{'s' if len(d.added) != 1 else ''}, {tokens:,} tokens",
               "bold")
    out.append(f" ({d.kept:,} sent again unchanged)\n", "dim")
    _rows(out, d.added, "green", width)
    gone = sum(it.tokens or 0 for _n, it in d.left)
    why = ("compacted" if c.compaction else "dropped by the client") if d.left else ""
    out.append(f"\nLeft the context: {len(d.left):,} message{'s' if len(d.left) != 1 else ''}"
               + (f", {gone:,} tokens ({why})" if d.left else ""), "bold")
    out.append("\n")
    _rows(out, d.left, "red", width)
    return out


def counts_note(c: Call, p: Call, width: int = 80) -> Text:
    """What the numbers of the messages added and left are: ``c``'s tokenizer's own counts, which the detail and
    ``plan`` scale (``≈``) to each call's reported prompt when its history is inferred or calibrated, as the
    floor and history moves above are when either call's is (``p``: the call before; each call by its own
    factor, so the scaled rows of the messages added need not add up to the history's change either)."""
    what = f"{c.tokenizer}'s own counts, added and left alike"
    if c.history_src in (Src.INFERRED, Src.CALIBRATED) or p.history_src in (Src.INFERRED, Src.CALIBRATED):
        what += "; the floor and history above are scaled≈ to the prompt, as the detail and plan scale these"
    # (wrapped between words at the screen's width, each line indented, as the rows below are one line each)
    lines = textwrap.wrap(what, max(20, width - 2), break_long_words=False, break_on_hyphens=False)
    return Text("".join(f"  {ln}\n" for ln in lines), "dim")


def _rows(out: Text, rows: list[tuple[int, Item]], style: str, width: int) -> None:
    """One line per message of at most ``width`` cells: its position in its call's history, label, tokens and
    as much of its text as the line has room for."""
    if not rows:
        out.append("  none\n", "dim")
        return
    lw = min(LABEL_CHARS, max(len(it.label) for _n, it in rows[:DIFF_ROWS]))
    room = width - (2 + 4 + 1) - lw - (2 + 8 + 2)
    for n, it in rows[:DIFF_ROWS]:
        out.append(f"  {n:>4} ", "dim")
        label = tx.literal(it.label, style, limit=lw)
        label.pad_right(lw - label.cell_len)
        out.append_text(label)
        out.append(f"  {tx.tokens(it.tokens):>8}  ")
        if room > 8:
            out.append_text(tx.one_line(it.text, room, "dim"))
        out.append("\n")
    if len(rows) > DIFF_ROWS:
        out.append(f"  … {len(rows) - DIFF_ROWS:,} more\n", "dim")
