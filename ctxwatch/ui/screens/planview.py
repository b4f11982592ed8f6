"""What the eviction preview shows above its rows, and writes: the policy knobs a person turns, the header
(what the plan did and why, whole or condensed to a few lines), why a knob changed nothing, the before / after
bars and the document ``w`` writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.text import Text

from ctxwatch.config import share
from ctxwatch.ui import text as tx
from ctxwatch.ui.widgets.bar import BarParts, bar_line


@dataclass(slots=True)
class Knobs:
    """The policy knobs the eviction preview lets a person turn.

    Attributes:
        keep_recent: newest turns always kept.
        budget_fraction: fraction of the window the prompt may use.
        reserve_tokens: completion reserve in tokens.
        summary_tokens: assumed summary size in tokens.
        mode: ``summarise`` or ``drop``.
    """

    keep_recent: int
    budget_fraction: float
    reserve_tokens: int
    summary_tokens: int
    mode: str = "summarise"
    extra: dict[str, Any] = field(default_factory=dict)


#: What the condensed header ends its reason line with when the reason is cut, and when only the sizes note is
#: left out (``y`` shows the whole header).
REASON_HINT = "  (y: whole reason)"
MORE_HINT = "  (y: more)"


def sizes_note(plan: Any, counts: Any, tools_missing: bool, tokenizer: str) -> str | None:
    """Why the plan's sizes differ from this tokenizer's counts, or ``None`` when they do not: ``counts`` (the
    :class:`~ctxwatch.planner.PlanCounts` the plan starts from) scaled to the provider's count, the tool schemas
    sized to it (``tools_missing``: the log holds none), or left as counted."""
    scale = getattr(counts, "scale", 1.0)
    tools_estimate = getattr(counts, "tools_estimate", None)
    if tools_estimate is not None:
        # (as plan says it: the model's own tokenizer counted the rest exactly)
        what = "not in the log" if tools_missing else f"estimated {tx.tokens(tools_estimate)}"
        return f"tool schemas {tx.tokens(plan.tools_tokens)}: sized to the provider's count ({what})"
    if getattr(counts, "floor_scale", None) is not None and plan.floor_tokens:
        # (as plan says it: the floor is the calibrated one the main screen shows; a floor of 0 is not
        # calibrated, scaling leaves it 0, so it gets no ≈ and the branch below says how the messages scale)
        return (f"floor {tx.tokens(plan.floor_tokens)}≈ calibrated ×{counts.floor_scale:.4f}, messages "
                f"×{scale:.4f}: scaled to the provider's count (the detail's raw column: {tokenizer} counts)")
    if getattr(counts, "unscaled_ratio", None) is not None:
        return (f"sizes as counted: the reported prompt is ×{counts.unscaled_ratio:.4f} them, more than "
                "tokenizers differ by")
    if abs(scale - 1.0) >= 0.005:
        # (why these sizes differ from this tokenizer's: they are scaled to what the provider counted)
        return f"sizes ×{scale:.4f}: scaled to the provider's count (the detail's raw column: {tokenizer} counts)"
    return None


def _title(number: int, plan: Any, name: bool) -> Text:
    """``call #N · eviction preview · fits · before … → after … · budget …`` (``name``: with the screen's name)."""
    out = Text()
    out.append(f"call #{number} · " + ("eviction preview · " if name else ""), "bold")
    out.append("fits" if plan.fits else "does not fit", "bold green" if plan.fits else "bold red")
    out.append(f" · before {tx.tokens(plan.before_tokens)} → after {tx.tokens(plan.after_tokens)} · budget "
               f"{tx.tokens(plan.budget_tokens)}")
    return out


def _fraction(f: float) -> str:
    """A budget fraction as the knobs show it: two places (``0.60``), three where a third is set (``0.885``)."""
    return f"{f:.2f}" if round(f, 2) == round(f, 4) else f"{f:.3f}"


def _knobs(k: Knobs, keys: bool, plan: Any = None) -> Text:
    """The knobs' values, each with the keys that turn it (``keys``) or without (the footer names them).  A
    budget fraction above what the window leaves beside the reserve is shown as the fraction in effect, then
    the one set (``plan``'s budget is ``min(window x fraction, window - reserve)``)."""
    def key(s: str) -> str:
        return f" ({s})" if keys else ""
    budget = _fraction(k.budget_fraction)
    window = plan.policy.window if plan is not None else None
    if window and plan.budget_tokens < share(window, k.budget_fraction):
        budget = f"{_fraction(plan.budget_tokens / window)} ({budget} set)"
    return Text(f"keep_recent {k.keep_recent}{key('+/-')} · budget {budget}{key('B/b')} · reserve "
                f"{tx.tokens(k.reserve_tokens)}{key('R/r')} · summary {tx.tokens(k.summary_tokens)}{key('U/u')} · "
                f"mode {k.mode}{key('m')}", "cyan")


def _cut(text: Text, width: int) -> Text:
    """``text`` on one line of ``width`` cells, ending in ``…`` when cut."""
    out = text.copy()
    out.truncate(max(1, width), overflow="ellipsis")
    return out


def plan_head(number: int, plan: Any, knobs: Knobs, sizes: str | None, note: str | None, *, whole: bool,
              width: int) -> Text:
    """The preview's header for ``plan`` (a :class:`~ctxwatch.planner.Plan`) of call ``#number`` on lines of
    ``width`` cells: the title (fits or not, before → after, budget) with the ``sizes`` note, the ``knobs``, the
    plan's reason and the knob ``note``.

    ``whole``: everything, wrapped (a reason that does not fit ends with what to change, e.g. "lower
    keep_recent").  Else condensed to one line each for the title, the knobs and the reason (cut, with
    :data:`REASON_HINT` or :data:`MORE_HINT` when anything is left out), and the note (wrapped: it answers the
    key just pressed).
    """
    if whole:
        head = _title(number, plan, name=True)
        if sizes:
            head.append(f" · {sizes}", "dim")
        head.append("\n")
        head.append_text(_knobs(knobs, keys=True, plan=plan))
        head.append("\n")
        head.append_text(tx.literal(plan.reason, multiline=False))
    else:
        title = _title(number, plan, name=True)
        title = title if title.cell_len <= width else _title(number, plan, name=False)
        head = _cut(title, width)
        head.append("\n")
        long = _knobs(knobs, keys=True, plan=plan)
        head.append_text(_cut(long if long.cell_len <= width else _knobs(knobs, keys=False, plan=plan), width))
        head.append("\n")
        reason = tx.literal(plan.reason, multiline=False)
        if reason.cell_len <= width - (len(MORE_HINT) if sizes else 0):
            hint = MORE_HINT if sizes else ""  # (the sizes note is what is left out)
        else:
            reason, hint = _cut(reason, width - len(REASON_HINT)), REASON_HINT
        head.append_text(reason)
        head.append(hint, "dim")
    if note:
        head.append("\n")
        head.append(note, "bold yellow")
    return head


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
    """The JSON the preview's ``w`` writes: the ``plan --json`` document of ``plan`` (a
    :class:`~ctxwatch.planner.Plan`) for ``call`` (:func:`ctxwatch.output.plan.plan_json`: the call's keys, then
    the plan's), then what it was made from, so the file can be read on its own:

    * ``call``: ``number`` (#N, from 1), ``index`` (``report --json``'s, from 0), ``file``, ``line`` (of the
      call's record), ``context``, ``model``, ``window`` (tokens);
    * ``settings``: the plan's policy as the knobs left it: ``keep_recent``, ``unit``, ``budget_fraction``,
      ``trigger``, ``reserve_tokens``, ``summary_tokens``, ``mode``, ``compact_at``.
    """
    from ctxwatch.output.plan import plan_json

    c, policy = call, plan.policy
    return {
        **plan_json(c, plan),
        "call": {"number": c.index + 1, "index": c.index, "file": c.source.path, "line": c.source.line,
                 "context": c.context, "model": c.model, "window": policy.window},
        "settings": {"keep_recent": policy.keep_recent, "unit": policy.unit,
                     "budget_fraction": policy.budget_fraction, "trigger": policy.trigger,
                     "reserve_tokens": policy.reserve_tokens, "summary_tokens": policy.summary_tokens,
                     "mode": policy.mode, "compact_at": policy.compact_at},
    }
