"""The call detail's numbers as ``plan`` and the eviction preview show them: each item's count from the counts
the plan starts from (:func:`ctxwatch.planner.logged_counts`, the one place they are made), marked where it is
scaled from this tokenizer's, and what the rows' numbers are (scaled, or this tokenizer's estimates, named).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxwatch.model import Call, Src
from ctxwatch.ui import text as tx
from ctxwatch.ui.screens.items import Item

if TYPE_CHECKING:
    from ctxwatch.planner import PlanCounts

#: The mark of a count scaled from this tokenizer's (the main screen's and the preview's mark of a calibrated one).
SCALED = tx.MARKS[Src.CALIBRATED]
#: Item kinds whose tokens are this tokenizer's counts (the floor, gap and reported rows come from the report).
COUNTED = ("system", "tool", "message", "framing")


def is_scaled(counts: PlanCounts) -> bool:
    """Whether ``plan`` shows ``counts`` scaled from this tokenizer's own (a calibrated floor, messages or every
    count scaled to the provider's count, or the tool schemas sized to it)."""
    return counts.floor_scale is not None or counts.tools_estimate is not None or counts.scale != 1.0


def with_counts(items: list[Item], counts: PlanCounts, floor_logged: bool) -> list[Item]:
    """``items`` (from :func:`build_items`) with the numbers ``plan`` and the eviction preview show: ``counts``
    (:func:`ctxwatch.planner.logged_counts`, made from the same accounted call), each changed row keeping this
    tokenizer's count in :attr:`Item.raw`.

    Where the counts are scaled (:func:`is_scaled`) the system prompt, the tool schemas (their share of the
    tools' count with the fixed part, which stays in the framing row), the messages and the reply primer take
    them, and the gap rows go: scaled, the rows add up to the prompt the header shows.  Unscaled counts (an
    exact count, no report, or a report no tokenizer gap explains) leave the rows as they are.

    Args:
        floor_logged: the log holds the system prompt and tools (their rows are counted, not one inferred floor).
    """
    if not is_scaled(counts):
        return items
    from ctxwatch.planner import scaled_to
    from ctxwatch.tokens import REPLY_PRIMER

    tools = [it for it in items if it.kind == "tool"] if floor_logged else []
    framing = next((it for it in items if it.kind == "framing"), None) if floor_logged else None
    preamble = max(0, (framing.tokens or 0) - REPLY_PRIMER) if framing is not None else 0
    # (the tools' count shared by their rows and the fixed part, as the rows share this tokenizer's count)
    tool_counts = scaled_to([it.tokens or 0 for it in tools] + [preamble], counts.tools_tokens)
    by_tool = {it.position: n for it, n in zip(tools, tool_counts, strict=False)}
    msg = iter(counts.tokens)
    out: list[Item] = []
    for it in items:
        n: int | None
        if it.kind == "gap":
            continue
        if it.kind == "system" and floor_logged and it.tokens:
            n = counts.system_tokens
        elif it.position in by_tool:
            n = by_tool[it.position]
        elif it.kind == "message":
            n = next(msg, it.tokens)
        elif it is framing:
            n = tool_counts[-1] + counts.overhead
        else:
            n = it.tokens
        if n == it.tokens and (not it.tokens or not _group_scaled(counts, it.kind)):
            out.append(it)
            continue
        out.append(Item(it.position, it.kind, it.role, it.label, n, it.text, it.chars, it.missing, it.reported,
                        raw=it.tokens))
    for k, it in enumerate(out):
        it.position = k
    return out


def _group_scaled(counts: PlanCounts, kind: str) -> bool:
    """Whether ``plan`` scales the counts of items of ``kind`` (a row scaled by 1 keeps its count, yet is
    scaled: it is marked too)."""
    if kind == "message":
        return counts.scale != 1.0
    if kind in ("system", "tool"):
        return counts.floor_scale is not None or counts.scale != 1.0 or (
            kind == "tool" and counts.tools_estimate is not None)
    return False


def rows_note(call: Call, counts: PlanCounts | None) -> str:
    """What the detail's rows' numbers are: scaled as ``plan`` and the eviction preview show them (this
    tokenizer's counts in the raw column), or this tokenizer's own counts, saying whether they are estimates."""
    if counts is not None and is_scaled(counts):
        return (f"rows{SCALED} as plan shows them: {scaled_how(counts, None)}; raw: "
                f"{call.tokenizer} counts")
    if call.exact:
        return f"rows: counted with {call.tokenizer}, the model's own tokenizer"
    if counts is not None and counts.unscaled_ratio is not None:
        return (f"rows: {call.tokenizer} estimates, uncalibrated (the reported prompt is "
                f"x{counts.unscaled_ratio:.4f} them, more than tokenizers differ by)")
    return f"rows: {call.tokenizer} estimates, uncalibrated"


def scaled_how(counts: PlanCounts | None, kind: str | None) -> str:
    """How the count of an item of ``kind`` (``None``: the rows') was scaled from this tokenizer's, in ``plan``'s
    terms (``counts``: the scaled counts, :func:`is_scaled`)."""
    if counts is None:
        return "as counted"
    if counts.tools_estimate is not None and kind in (None, "tool", "framing"):
        return "tool schemas sized to the provider's count"
    if counts.floor_scale is not None:
        if kind is None:
            return (f"floor calibrated x{counts.floor_scale:.4f}, messages x{counts.scale:.4f} to the reported "
                    "prompt")
        if kind in ("system", "tool", "framing"):
            # (the framing row's scaled part is the tools' fixed part, calibrated with them)
            return f"calibrated x{counts.floor_scale:.4f}"
    return f"scaled x{counts.scale:.4f} to the provider's count"
