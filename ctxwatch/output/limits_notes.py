"""The notes under ``report``'s call table on what its numbers were judged and priced by: each harness's limits
(:func:`harness_lines`), the windows taken from a provider's documentation (:func:`documented_lines`) and the
genai-prices entry a logged model name was priced as (:func:`priced_as_line`), from ``report --json`` call
objects."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ctxwatch.accounting import HARNESS_NAMES, rule_text
from ctxwatch.analysis import Limits
from ctxwatch.config import DEFAULT_BUDGET_FRACTION, DEFAULT_RESERVE, DEFAULT_TRIGGER, Settings
from ctxwatch.model import Src
from ctxwatch.output.safetext import clean


def fmt_int(v: int | None) -> str:
    """``12,345``, or ``?`` for unknown (the mark the dashboard and the legend use)."""
    return "?" if v is None else f"{v:,}"


#: Distinct sets of limits a harness's note names (a folder of many models has more; the flags and the forecast
#: name those they use).
MAX_LIMIT_SETS = 4
#: Model names a set of limits names (the rest are counted).
MAX_SET_MODELS = 3


def harness_lines(calls: list[dict[str, Any]], settings: Settings) -> Iterator[str]:
    """One line per harness whose log was read: its rule and the limits its calls get, in tokens: each distinct
    window, reserve, trigger and budget once (in call order, with its models), those the analysis judges the
    calls by (:meth:`Limits.given` of each call object's fields), so a 1M window, a ``--window`` what-if or a
    ``--reserve`` shows its own numbers; then which options override the rule."""
    given = [name for name, v, d in (("--budget-fraction", settings.budget_fraction, DEFAULT_BUDGET_FRACTION),
                                      ("--trigger", settings.trigger, DEFAULT_TRIGGER),
                                      ("--reserve", settings.reserve, DEFAULT_RESERVE)) if v != d]
    for harness in sorted({c["harness"] for c in calls if c.get("harness") in HARNESS_NAMES}):
        name, rule = HARNESS_NAMES[harness], rule_text(harness)
        sets: dict[tuple[bool, int, int | None, int | None, int | None], list[str | None]] = {}
        why_not: set[str] = set()
        for c in calls:
            if c.get("harness") != harness:
                continue
            window_src = Src(c["window_source"])
            lim = Limits.given(c["window"], c["reserve_tokens"], Src(c["reserve_source"]), window_src, harness,
                               settings)
            if lim.window is None:
                continue
            if lim.rule is None:
                why_not.add("--window/config window given" if window_src == Src.OPTION else
                            f"{' and '.join(n for n in given if n != '--reserve')} given")
            models = sets.setdefault((lim.rule is not None, lim.window, lim.reserve, lim.trigger, lim.budget), [])
            if c["model"] not in models:
                models.append(c["model"])
        ruled = any(k[0] for k in sets)
        head = (f"{name}'s own rule: {rule}" if ruled else
                f"ctxwatch's limits, not {name}'s own rule ({', '.join(sorted(why_not))})")
        parts = [_limit_set(k, models, name if ruled and not k[0] else None)
                 for k, models in list(sets.items())[:MAX_LIMIT_SETS]]
        if len(sets) > MAX_LIMIT_SETS:
            parts.append(f"{len(sets) - MAX_LIMIT_SETS:,} more")
        said = "; ".join(parts) if parts else "the window is unknown (pass --window)"
        tail = ((f" ({', '.join(given)} given: the option wins)" if given else
                 " (--budget-fraction, --trigger, --reserve override)") if ruled else "")
        yield f"limits of the {harness} log: {head}; its calls: {said}{tail}"


def _limit_set(key: tuple[bool, int, int | None, int | None, int | None], models: list[str | None],
               not_rule: str | None) -> str:
    """``window 200,000 (claude-opus-4-6): reserve 20,000, trigger 167,000, budget 177,000``, then ``, not
    Claude Code's rule`` for a set the harness's rule does not decide (``not_rule``: its name)."""
    _ruled, window, reserve, trigger, budget = key
    names = [clean(m or "?") for m in models[:MAX_SET_MODELS]]
    if len(models) > MAX_SET_MODELS:
        names.append(f"{len(models) - MAX_SET_MODELS} more")
    return (f"window {window:,} ({', '.join(names)}): reserve {fmt_int(reserve)}, trigger {fmt_int(trigger)}, "
            f"budget {fmt_int(budget)}" + (f", not {not_rule}'s rule" if not_rule else ""))


def documented_lines(calls: list[dict[str, Any]]) -> Iterator[str]:
    """``window of gpt-5 (documented): input limit 272,000 (the catalogue's 400,000 includes the output): <url>``,
    once per model whose window comes from the provider's documentation rather than genai-prices
    (``window_source`` ``documented``)."""
    seen: dict[str, str] = {}
    for c in calls:
        if c["window_source"] == "documented" and c.get("window_note") and c["model"] not in seen:
            seen[c["model"]] = c["window_note"]
    for model, note in seen.items():
        yield f"window of {clean(model or '?')} (documented): {clean(note)}"


def priced_as_line(calls: list[dict[str, Any]]) -> str | None:
    """``priced as: gemini-2.5-pro-exp-03-25 -> gemini-2.5-pro (google; its catalogue entry lists no context
    window: pass --window)``: the genai-prices entry of each logged model name that the catalogue matched to
    another name (a snapshot, an alias, an experimental name), so that a cost never hides which model's price
    it is; ``None`` when every priced model was found under its own name."""
    seen: dict[tuple[str, str, str], bool] = {}
    for c in calls:
        entry = c.get("priced_as")
        if entry is None or not c["model"] or entry["model"] == c["model"]:
            continue
        k = (c["model"], entry["provider"], entry["model"])
        # (the window comes from the same entry: one the catalogue lists without a window leaves it unknown)
        seen[k] = seen.get(k, False) or c["window_source"] == "unknown"
    if not seen:
        return None
    parts = [f"{clean(logged)} -> {clean(model)} ({clean(provider)}"
             + ("; its catalogue entry lists no context window: pass --window)" if no_window else ")")
             for (logged, provider, model), no_window in seen.items()]
    return "priced as (the genai-prices entry, also the window's source where the log states none): " + ", ".join(parts)

