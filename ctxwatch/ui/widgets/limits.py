"""The lines of text around the context bar: the thresholds line under it (the call, the window used, the
limits, the reported prompt, a compaction before the call and the notes the main screen adds, such as the
drift risk), the note above it for an implausible reported prompt, and the drift risk note itself.

Pure functions of a call and a width, so that they are tested without a terminal.
"""

from __future__ import annotations

from typing import Any, Protocol

from rich.text import Text

from ctxwatch.analysis import Limits
from ctxwatch.config import Settings
from ctxwatch.model import Call, Src
from ctxwatch.ui import text as tx
from ctxwatch.ui.widgets.cells import short_model


class BarParts(Protocol):
    """What the thresholds line reads of a bar's parts (:class:`ctxwatch.ui.widgets.bar.BarParts`, tokens)."""

    @property
    def reserve(self) -> int: ...
    @property
    def free(self) -> int | None: ...
    @property
    def window(self) -> int | None: ...
    @property
    def trigger(self) -> int | None: ...
    @property
    def budget(self) -> int | None: ...

#: How the thresholds line names where a window came from.
SRC_NOTE: dict[Src, str] = {Src.INFERRED: "inferred", Src.ESTIMATED: "est.", Src.REPORTED: "reported",
                            Src.CALIBRATED: "calibrated", Src.REQUEST: "max_tokens", Src.DEFAULT: "default",
                            Src.OPTION: "option", Src.LOG: "log", Src.CATALOG: "catalog", Src.UNKNOWN: "unknown"}

#: The forms of the thresholds line, widest first: 0 every part in full; 1 the limits by name and value
#: without the bar marks' letters (``trigger 167k · budget 177k``) and the compaction notes short; 2 without
#: the reported prompt (the table's ``reported`` column has it); 3 without the model (the table's) and the
#: harness's name.
_LEVELS = 4


def floor_note(call: Call, floor_before: int | None, floor: int | None, short: bool = False) -> str:
    """Why the floor of a call just after a compaction moved, or ``""``: an inferred floor is what the reported
    prompt holds beyond the counted history, so what the harness attaches again after a compaction (files
    read, the to-do list) counts there though no system prompt or tool changed.  ``floor_before``: the shown
    floor of the call before in its context, ``floor``: this call's (tokens)."""
    if not call.compaction or call.floor_src != Src.INFERRED or floor_before is None or floor is None \
            or floor == floor_before:
        return ""
    if short:
        return f"floor re-inferred {tx.short_tokens(floor_before)}→{tx.short_tokens(floor)}~"
    return f"floor {floor_before:,}~ → {floor:,}~: re-inferred after compaction"


def _parts(call: Call, parts: BarParts, settings: Settings, extra: Text | None, floor_before: int | None,
           floor: int | None, level: int) -> list[Text]:
    out: list[Text] = [Text(f"call #{call.index + 1}", "bold")]
    if level < 3:
        out.append(tx.literal(short_model(call.model), limit=30))
    used = call.used_tokens
    if parts.window and parts.free is not None and used is not None:
        used = parts.window - parts.free - parts.reserve  # (the bar's: calibrated where the bar's parts are)
    if parts.window:
        out.append(Text(f"used {tx.pct(used, parts.window)} of {tx.tokens(parts.window)} "
                        f"({SRC_NOTE.get(call.window_src, call.window_src)})"))
        rule = _rule_note(Limits.of(call, settings)) if level < 3 else None
        t, b = tx.short_tokens(parts.trigger), tx.short_tokens(parts.budget)
        # (the letters key the bar's T and B marks; a shorter form keeps the words, which alone say what they are)
        out.append(Text((f"T trigger {t} · B budget {b}" if level == 0 else f"trigger {t} · budget {b}")
                        + (f" ({rule})" if rule else ""), "red"))
    else:
        out.append(Text("window unknown (pass --window N); bar scaled to the call"))
    if call.prompt_reported is not None and (level < 2 or call.prompt_implausible):
        reported = Text(f"reported {tx.tokens(call.prompt_reported)}")
        if call.prompt_implausible:
            reported.append(" (implausible)", "bold yellow")
        out.append(reported)
    if call.compaction:
        out.append(Text("compacted before this call" if level == 0 else "after compaction", "bold"))
        note = floor_note(call, floor_before, floor, short=level > 0)
        if note:
            out.append(Text(note, "dim"))
    if extra is not None and extra.plain:
        out.append(extra)
    return out


def _rule_note(lim: Limits) -> str | None:
    """Whose rule the limits shown follow, a harness's log's own: ``Claude Code``, or ``Claude Code's budget``
    where an option sets the trigger (and the other way round); ``None`` where the settings set both."""
    if lim.budget_rule and lim.trigger_rule:
        return lim.budget_rule
    if lim.budget_rule:
        return f"{lim.budget_rule}'s budget"
    return f"{lim.trigger_rule}'s trigger" if lim.trigger_rule else None


def _split(parts_: list[Text], width: int) -> tuple[Text, Text]:
    """The parts on a first line as far as they fit ``width``, the rest on a second."""
    first: list[Text] = []
    for k, part in enumerate(parts_):
        if k and Text(" · ").join([*first, part]).cell_len > width:
            break
        first.append(part)
    return Text(" · ").join(first), Text(" · ").join(parts_[len(first):])


def thresholds_line(call: Call, parts: BarParts, settings: Settings, width: int, extra: Text | None = None,
                    floor_before: int | None = None, floor: int | None = None) -> Text:
    """``call #13 · model · used 6.9% of 200,000 (catalog) · T trigger 96k · B budget 120k · <extra>``
    (``#13`` = index + 1) in ``width`` cells: one line when it fits, else two, broken between its parts.

    When two lines in full do not hold it (80 columns), shorter forms are taken (``trigger 96k · budget
    120k``), then the reported prompt and the model are left to the table, so that the notes at the end (the
    compaction, the drift risk) are read rather than cut; only the reason after ``extra``'s first ``: ``
    (``drift risk high: <why>``) may still be cut with ….  ``floor_before``, ``floor``: the shown floors of the
    call before and of this one, for a call after a compaction to say why an inferred floor moved
    (:func:`floor_note`)."""
    keep = 0
    if extra is not None and ": " in extra.plain:
        keep = extra.cell_len - len(extra.plain.split(": ", 1)[0])  # (the reason, which may be cut)
    line1 = line2 = Text()
    for level in range(_LEVELS):
        parts_ = _parts(call, parts, settings, extra, floor_before, floor, level)
        whole = Text(" · ").join(parts_)
        if whole.cell_len <= width:
            return whole
        line1, line2 = _split(parts_, width)
        if line1.cell_len <= width and line2.cell_len - keep <= width:
            break
    line1.truncate(width, overflow="ellipsis")  # (a first part wider than the line on its own)
    line2.truncate(width, overflow="ellipsis")
    return Text("\n").join([line1, line2]) if line2.plain else line1


def implausible_note(call: Call, stand_in: Call | None, width: int) -> Text:
    """The line above the bar when ``call``'s reported prompt is implausible, e.g. ``#4
    reported 4,280,000 prompt tokens, over its 570,000-token window · implausible, ignored as occupancy · the bar
    shows #3, the last plausible`` (``stand_in``: that call, ``None`` when there is none), broken between
    segments to fit ``width`` cells."""
    reported = call.prompt_reported or 0
    if reported <= 0:
        what = f"#{call.index + 1} reported {tx.tokens(reported)} prompt tokens (every request has a prompt)"
    elif call.window:
        what = (f"#{call.index + 1} reported {tx.tokens(reported)} prompt tokens, over its "
                f"{tx.tokens(call.window)}-token window")
    else:
        what = f"#{call.index + 1} reported {tx.tokens(reported)} prompt tokens, over any window on offer"
    shown = (f"the bar shows #{stand_in.index + 1}, the last plausible" if stand_in is not None
             else "no plausible call before it: occupancy unknown")
    style = "bold yellow"
    return tx.flow([Text(what, style), Text("implausible, ignored as occupancy", style), Text(shown, style)],
                   width)



def drift_note(call: Call | None, analyses: dict[str, Any]) -> Text | None:
    """``drift risk high: <why>`` for ``call`` from its context's analysis (``analyses``: context ->
    :class:`ctxwatch.analysis.Analysis`), or ``None``.  The analysis writes the level at the start of its
    reason (``high: ...``); it is said once here."""
    if call is None:
        return None
    analysis = analyses.get(call.context)
    if analysis is None:
        return None
    for risk in analysis.drift_risk:
        if risk.call == call.index:
            style = {"critical": "bold red", "high": "red", "medium": "yellow"}.get(risk.level, "dim")
            out = Text(f"drift risk {risk.level}", style)
            if risk.level != "low":
                why = risk.reason
                if why.startswith(f"{risk.level}: "):
                    why = why[len(risk.level) + 2:]
                out.append(": ")
                out.append_text(tx.literal(why, limit=200))
            return out
    return None
