"""The eviction preview's message table: one row per message of a plan, in prompt order or biggest savings
first, with the rows of its own for the tool schemas and the reply primer (so that the tokens column adds up
to the plan's ``before``), and the cells each row is drawn with.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rich.text import Text

from ctxwatch.model import ParsedCall
from ctxwatch.ui import text as tx
from ctxwatch.ui.screens.items import message_labels

#: How each fate is shown: glyph and word, style (the glyph and word tell fates apart without colour).
FATES: dict[str, tuple[str, str]] = {
    "pinned": ("■ pinned", "magenta"),
    "kept": ("✓ kept", "green"),
    "summarised": ("≈ summarised", "yellow"),
    "evicted": ("✗ evicted", "red"),
}

#: The table's columns: key, header, justified right.
COLUMNS: tuple[tuple[str, str, bool], ...] = (
    ("index", "#", True), ("role", "message", False), ("mark", "", False), ("tokens", "tokens", True),
    ("saves", "saves", True), ("fate", "fate", False), ("turn", "turn", True), ("preview", "preview", False),
)

#: Cells of a message's text a row keeps for its preview (the start of the text, cut again to the column).
PREVIEW_CHARS = 200
#: Cells of the message column at most, and at least (then the table scrolls sideways on a narrow screen).
LABEL_CELLS = 34
LABEL_MIN = 12
#: Cells of the preview column at least (it takes what the other columns leave).
PREVIEW_MIN = 8
#: Cells around each cell of the table (Textual's DataTable: a cell of padding either side).
CELL_PADDING = 2


@dataclass(frozen=True, slots=True)
class PlanRow:
    """One row of the preview's table, before it is cut to the screen.

    Attributes:
        index: the message's number as the call detail numbers it, :attr:`~ctxwatch.planner.MessagePlan.number`
            (``None``: a row of no message, shown ``-``).
        label: what the message is, whole (:func:`~ctxwatch.ui.screens.items.message_labels`).
        style: the fate's style, for the label and the fate (``""`` for the rows of no message).
        offender: among the biggest offenders (``◆``).
        tokens: the message's tokens.
        saves: what evicting it (with its exchange) frees, tokens; ``None`` when pinned (``-``).
        fate: the fate's glyph and word.
        turn: the message's turn, ``None`` for none (``-``).
        preview: the start of its text (at most :data:`PREVIEW_CHARS` cells, ``…`` where cut), or a note for a
            row of no message.
        copy: what ctrl+c copies for it, ``(what, text)``: the message whole; ``None`` for no text.
    """

    index: int | None
    label: str
    style: str
    offender: bool
    tokens: int
    saves: int | None
    fate: str
    turn: int | None
    preview: str
    copy: tuple[str, str] | None = None


def plan_rows(plan: Any, pc: ParsedCall | None, order: str = "prompt") -> list[PlanRow]:
    """The rows of ``plan`` (a :class:`~ctxwatch.planner.Plan`) for the call re-read as ``pc``: its messages in
    prompt order (``order="prompt"``) or biggest savings first (``"size"``), named as the detail view names
    them; a row for the tool schemas where the plan counts them apart (after the system prompt, or first), and
    one for the reply primer last."""
    from ctxwatch.planner import exchange_savings, offenders  # (loaded with the preview, not at start)

    msgs: Sequence[Any] = (pc.messages or []) if pc is not None else []
    labels = message_labels(msgs)  # (named as the detail view names them, not by role alone)
    pinned, _ = FATES.get("pinned", ("pinned", ""))
    # The tool schemas and the reply primer are in no message but in every request: rows of their own (as in
    # plan's text), so that the tokens column adds up to 'before'.
    extra_rows = []
    if plan.tools_tokens and plan.floor_split:
        extra_rows.append(("tool schemas", plan.tools_tokens, "the tools the request sends, every call"))
    system_first = bool(plan.messages) and plan.messages[0].source_index is None
    rows: list[PlanRow] = []

    def extra(what: str, tokens: int, note: str) -> None:
        rows.append(PlanRow(None, what, "", False, tokens, None, pinned, None, note))

    saves = exchange_savings(plan.messages)
    worst = offenders(plan.messages, plan.before_tokens, plan.budget_tokens)
    order_ = list(range(len(plan.messages)))
    if order == "size":
        order_.sort(key=lambda i: (-(saves[i] or -1), i))
        system_first = False  # (the extra rows go first: pinned, never evicted)
    if extra_rows and not system_first:
        extra(*extra_rows[0])
    for pos in order_:
        m = plan.messages[pos]
        word, style = FATES.get(m.fate, (m.fate, ""))
        whole = ""
        if m.source_index is not None and m.source_index < len(msgs):
            whole = msgs[m.source_index].text()
        elif m.source_index is None and pc is not None and pc.system:
            whole = "\n\n".join(pc.system)
        what = labels[m.source_index] if m.source_index is not None and m.source_index < len(labels) else m.role
        number = m.number  # (as the call detail numbers it: the history from 1)
        rows.append(PlanRow(number, what, style, pos in worst, m.tokens, saves[pos], word,
                            m.turn if m.turn >= 0 else None, tx.cut_cells(whole, PREVIEW_CHARS),
                            (f"#{number} {what}", whole) if whole else None))
        if pos == 0 and system_first and extra_rows:
            extra(*extra_rows[0])
    if plan.overhead_tokens:
        extra("reply primer", plan.overhead_tokens, "the tokens that start the reply")
    return rows


def row_cells(row: PlanRow) -> list[Text]:
    """The cells of ``row`` in :data:`COLUMNS` order, its label and preview whole (log text shown literally)."""
    message = row.index is not None
    return [
        Text(str(row.index) if message else "-", justify="right"),
        tx.literal(row.label, style=row.style),
        Text("◆" if row.offender else "", "bold red"),
        Text(tx.tokens(row.tokens), justify="right"),
        Text(tx.tokens(row.saves) if row.saves is not None else "-", justify="right"),
        Text(row.fate, style=row.style),
        Text(str(row.turn) if row.turn is not None else "-", justify="right"),
        tx.literal(row.preview, style="dim"),
    ]


def fit_cells(rows: Sequence[PlanRow], width: int) -> list[list[Text]]:
    """The cells of ``rows`` (:func:`row_cells`) for a table ``width`` cells wide: the message and the preview
    columns share what the other columns leave, the message three fifths, up to :data:`LABEL_CELLS` cells (at
    least :data:`LABEL_MIN`), and the preview the rest (at least :data:`PREVIEW_MIN`), each cut with ``…``.  At
    80 columns the message gets about 20 cells; the table then needs no sideways scrolling."""
    cells = [row_cells(r) for r in rows]
    label_at, preview_at = 1, len(COLUMNS) - 1

    def column(i: int) -> int:
        return max([len(COLUMNS[i][1])] + [c[i].cell_len for c in cells])

    fixed = sum(column(i) for i in range(len(COLUMNS)) if i not in (label_at, preview_at))
    room = width - fixed - CELL_PADDING * len(COLUMNS)
    label = min(column(label_at), LABEL_CELLS, max(LABEL_MIN, room * 3 // 5))
    preview = max(PREVIEW_MIN, room - label)
    for c in cells:
        c[label_at].truncate(label, overflow="ellipsis")
        c[preview_at].truncate(preview, overflow="ellipsis")
    return cells
