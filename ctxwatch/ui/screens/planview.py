"""What the eviction preview shows besides its rows' text: what evicting each message would save and the few
exchanges that matter most (the planner's :func:`~ctxwatch.planner.exchange_savings` and
:func:`~ctxwatch.planner.offenders`, as ``plan`` marks them), why a knob changed nothing, the before / after
bars and the document ``w`` writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.text import Text

from ctxwatch.ui import text as tx
from ctxwatch.ui.widgets.bar import BarParts, bar_line


def kept_exchanges(messages: Sequence[Any]) -> int:
    """How many exchanges the plan keeps whole (none of their messages evicted or summarised)."""
    seen: dict[int, bool] = {}
    for m in messages:
        if m.exchange >= 0:
            seen[m.exchange] = seen.get(m.exchange, True) and m.fate in ("kept", "pinned")
    return sum(seen.values())


def knob_note(old: Any, new: Any, keep_recent: int) -> str | None:
    """Why turning keep_recent to ``keep_recent`` did not change the plan (``old`` and ``new`` plans have the
    same fates), or ``None`` when it did: nothing is evicted, or the plan already keeps more exchanges."""
    if old is None or [m.fate for m in old.messages] != [m.fate for m in new.messages]:
        return None
    kept = kept_exchanges(new.messages)
    if not any(m.fate in ("evicted", "summarised") for m in new.messages):
        return (f"keep_recent {keep_recent}: no change, nothing needs evicting (the prompt is within the "
                "budget): every exchange is kept")
    if kept > keep_recent:
        return (f"keep_recent {keep_recent}: no change, the plan already keeps {kept} exchanges (what fits "
                "within the budget)")
    return f"keep_recent {keep_recent}: no change (the plan's cut cannot move: a tool call stays with its results)"


#: The preview's bar legend, and what its ``◆`` marks (long, and short for 80 columns).
_LEGEND = "█ floor ▓ history (+summary) ░ reserve · free ┃ trigger/budget"
_LEGEND_SHORT = "█ floor ▓ history ░ reserve · free ┃ trigger/budget"
_OFFENDERS_LONG = " biggest offenders (saves: what evicting one frees)"
_OFFENDERS = " biggest offenders"


def plan_bars(plan: Any, window: int, width: int) -> Text:
    """The prompt's bar before and after ``plan`` (a :class:`~ctxwatch.planner.Plan`) against ``window``
    tokens, each ``width`` cells, with its percentage, and their legend."""
    out = Text()
    for name, total in (("before", plan.before_tokens), ("after ", plan.after_tokens)):
        hist = max(0, total - plan.floor_tokens)
        free = window - total - plan.reserve_tokens
        parts = BarParts(plan.floor_tokens, hist, plan.reserve_tokens, free, max(window, total + plan.reserve_tokens),
                         window, plan.trigger_tokens, plan.budget_tokens)
        _top, bar = bar_line(parts, width)
        out.append(f"{name} ", "bold")
        out.append_text(bar)
        out.append(f" {tx.pct(total, window, 0)}\n")
    # (the long form where the line holds it, the short one on one line at 80 columns)
    room = width + len("before ") + len(" 100%")
    long = room >= len(_LEGEND) + len(_OFFENDERS_LONG) + 2
    out.append(_LEGEND + "  " if long else _LEGEND_SHORT + " ", "dim")
    out.append("◆", "bold red")
    out.append(_OFFENDERS_LONG if long else _OFFENDERS, "dim")
    return out


def plan_document(call: Any, plan: Any) -> dict[str, Any]:
    """The JSON the preview's ``w`` writes: ``plan``'s ``plan --json`` document (a
    :class:`~ctxwatch.planner.Plan`), then what it was made from, so the file can be read on its own:

    * ``call``: ``number`` (#N, from 1), ``index`` (``report --json``'s, from 0), ``file``, ``line`` (of the
      call's record), ``context``, ``model``, ``window`` (tokens);
    * ``settings``: the plan's policy as the knobs left it: ``keep_recent``, ``unit``, ``budget_fraction``,
      ``trigger``, ``reserve_tokens``, ``summary_tokens``, ``mode``, ``compact_at``.
    """
    c, policy = call, plan.policy
    return {
        **plan.to_json(),
        "call": {"number": c.index + 1, "index": c.index, "file": c.source.path, "line": c.source.line,
                 "context": c.context, "model": c.model, "window": policy.window},
        "settings": {"keep_recent": policy.keep_recent, "unit": policy.unit,
                     "budget_fraction": policy.budget_fraction, "trigger": policy.trigger,
                     "reserve_tokens": policy.reserve_tokens, "summary_tokens": policy.summary_tokens,
                     "mode": policy.mode, "compact_at": policy.compact_at},
    }
