"""Each coding-agent harness's own context rules, the defaults for the calls of its logs.

ctxwatch's field defaults (budget 0.6 of the window, compaction trigger 0.8 of the budget, reserve 0.15) are for
the user's own agent loop.  A harness compacts by its own rule, and judging its log by ctxwatch's would flag
every healthy long session (a Claude Code session runs to about 167K of its 200K before it compacts).  So for
the calls of a harness's log (:attr:`ctxwatch.model.Provenance.harness`) the reserve, the budget and the trigger
follow the harness, labelled ``harness``; a ``--reserve``, ``--budget`` or ``--trigger`` option (or the config
file) still overrides each one.

**Claude Code** keeps 20,000 tokens of the window for the compaction summary's output (its effective window is
the window less the model's output limit, capped at 20,000), compacts automatically 13,000 tokens below that
effective window, and refuses a request without compacting 3,000 tokens below it: at a 200K window the reserve
is 20,000, the auto-compact trigger 167,000 and the budget (the blocking limit) 177,000.  (Claude Code's
``autoCompact`` constants ``AUTOCOMPACT_BUFFER_TOKENS`` 13,000 and ``MANUAL_COMPACT_BUFFER_TOKENS`` 3,000, and its
20,000-token summary output limit, as its ``/context`` view shows them.)

**Codex** reports the window it works in as ``model_context_window``: the model's window times its effective
share, 95 % (codex-rs ``effective_context_window_percent``; 258,400 of GPT-5's 272,000).  Where a rollout leaves
it out, the window is 95 % of the model's, labelled ``harness``.  Codex compacts automatically at 90 % of the
model's window (codex-rs ``auto_compact_token_limit``, by default 9/10 of the context window: 244,800 for
272,000); the budget is the effective window itself, and no reserve is kept inside it (the 5 % held back is
Codex's margin, and GPT-5's output has its own room beside the input limit).
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxwatch.config import DEFAULT_BUDGET_FRACTION, DEFAULT_RESERVE, DEFAULT_TRIGGER, Settings
from ctxwatch.model import Call, Src

#: Claude Code: tokens of the window kept for the compaction summary's output.
CLAUDE_CODE_SUMMARY_OUTPUT = 20_000
#: Claude Code: its auto-compact threshold is this many tokens below its effective window.
CLAUDE_CODE_AUTOCOMPACT_BUFFER = 13_000
#: Claude Code: it blocks a request (compaction required) this many tokens below its effective window.
CLAUDE_CODE_BLOCKING_BUFFER = 3_000
#: Codex: the share of the model's window Codex works in (its effective window).
CODEX_EFFECTIVE_PERCENT = 95
#: Codex: the share of the model's window at which it compacts automatically.
CODEX_AUTO_COMPACT_PERCENT = 90

#: The harnesses whose rules are known, and the name they are shown by.
HARNESS_NAMES = {"claude-code": "Claude Code", "codex": "Codex"}


@dataclass(frozen=True, slots=True)
class HarnessLimits:
    """A call's reserve, budget and trigger in tokens under its harness's rule (each ``None`` where the user's
    option decides instead), and the rule's name for the reasons (``"Claude Code"``)."""

    name: str
    reserve: int | None
    budget: int | None
    trigger: int | None


def harness_window(harness: str | None, window: int | None) -> int | None:
    """The window a harness works in, from the model's window (tokens): Codex's effective 95 %; ``None`` for
    the other harnesses (they work in the model's window)."""
    if harness == "codex" and window:
        return window * CODEX_EFFECTIVE_PERCENT // 100
    return None


def harness_reserve(harness: str | None, window: int | None, settings: Settings,
                    window_src: Src | None = None) -> tuple[int, Src] | None:
    """The reserve a harness keeps (tokens, labelled ``harness``), or ``None`` when the harness has no rule, the
    user set a reserve (``settings.reserve`` other than the field default) or a window (``window_src``
    option: a what-if of the user's own, judged by the field defaults, as :func:`harness_limits` does)."""
    if harness not in HARNESS_NAMES or settings.reserve != DEFAULT_RESERVE or not window \
            or window_src == Src.OPTION:
        return None
    if harness == "claude-code":
        return min(CLAUDE_CODE_SUMMARY_OUTPUT, window), Src.HARNESS
    return 0, Src.HARNESS


def harness_limits(c: Call, settings: Settings) -> HarnessLimits | None:
    """The budget and trigger of call ``c`` under its harness's rule: :func:`rule_limits` of its harness,
    window and reserve."""
    return rule_limits(c.provenance.harness, c.window, c.window_src, c.reserve_tokens, c.reserve_src, settings)


def rule_limits(harness: str | None, window: int | None, window_src: Src | None, reserve: int | None,
                reserve_src: Src | None, settings: Settings) -> HarnessLimits | None:
    """The budget and trigger (tokens) of a call of ``harness``'s log with that window and reserve (tokens,
    with their sources) under the harness's rule (module docstring), each left ``None`` where the user set that
    option (``settings`` other than the field default); ``None`` when the log is no harness's, the window is
    unknown or the user's own (``window_src`` option).  The fields of a ``report --json`` call object are
    enough, so that the text report names the limits its calls get."""
    if harness not in HARNESS_NAMES or not window or window_src == Src.OPTION:
        return None
    if harness == "claude-code":
        effective = window - min(CLAUDE_CODE_SUMMARY_OUTPUT, window)
        budget = max(0, effective - CLAUDE_CODE_BLOCKING_BUFFER)
        trigger = max(0, effective - CLAUDE_CODE_AUTOCOMPACT_BUFFER)
    else:
        # (the window is Codex's effective one, 95 % of the model's; the trigger is 90 % of the model's)
        budget = window
        trigger = window * CODEX_AUTO_COMPACT_PERCENT // CODEX_EFFECTIVE_PERCENT
    return HarnessLimits(HARNESS_NAMES[harness],
                         reserve if reserve_src == Src.HARNESS else None,
                         budget if settings.budget_fraction == DEFAULT_BUDGET_FRACTION else None,
                         trigger if settings.trigger == DEFAULT_TRIGGER else None)


def rule_text(harness: str) -> str | None:
    """What ``harness``'s rule sets, in words with its constants (tokens), for the text report, e.g. ``reserve
    20,000 for the compaction summary, auto-compact trigger 33,000 below the window, budget (its blocking
    limit) 23,000 below it``; ``None`` for a harness without a rule."""
    if harness == "claude-code":
        return (f"reserve {CLAUDE_CODE_SUMMARY_OUTPUT:,} for the compaction summary, auto-compact trigger "
                f"{CLAUDE_CODE_SUMMARY_OUTPUT + CLAUDE_CODE_AUTOCOMPACT_BUFFER:,} below the window, budget (its "
                f"blocking limit) {CLAUDE_CODE_SUMMARY_OUTPUT + CLAUDE_CODE_BLOCKING_BUFFER:,} below it")
    if harness == "codex":
        return (f"the window is Codex's effective {CODEX_EFFECTIVE_PERCENT} % of the model's (as its log states "
                f"it), auto-compact trigger at {CODEX_AUTO_COMPACT_PERCENT} % of the model's window, budget the "
                "effective window, no reserve")
    return None
