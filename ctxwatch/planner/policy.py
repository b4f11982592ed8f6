"""The policy of a plan: the window, budget, trigger and reserve, what to keep, and when and how much to compact.

``compact_at="budget"`` (the default, what ``ctxwatch plan`` previews) evicts nothing within the budget and
otherwise the least that fits; ``"trigger"`` (what :class:`ctxwatch.budget.ContextBudget` does in a live loop)
compacts everything older than the newest units once the prompt is above the trigger, so the next calls have
room to grow.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ctxwatch.accounting import harness_limits
from ctxwatch.config import (
    DEFAULT_BUDGET_FRACTION,
    DEFAULT_KEEP_RECENT,
    DEFAULT_RESERVE,
    DEFAULT_SUMMARY_TOKENS,
    DEFAULT_TRIGGER,
    ConfigError,
    Settings,
    prompt_budget,
    share,
)
from ctxwatch.model import Call

Fate = Literal["pinned", "kept", "summarised", "evicted"]
Mode = Literal["summarise", "drop"]
Unit = Literal["exchange", "turn"]
CompactAt = Literal["budget", "trigger"]

#: The units ``keep_recent`` can count (:attr:`Policy.unit`); the first is the default.
UNITS: tuple[str, ...] = ("exchange", "turn")
#: When a plan compacts (:attr:`Policy.compact_at`); the first is :class:`Policy`'s default.
COMPACT_AT: tuple[str, ...] = ("budget", "trigger")


class PolicyError(ConfigError):
    """A :class:`Policy` value is invalid or asks for something the planner refuses (e.g. unpinning the
    system prompt). A ``ValueError``."""


@dataclass(frozen=True, slots=True)
class Policy:
    """How to plan an eviction. Defaults come from :mod:`ctxwatch.config` (documented there).

    Attributes:
        window: the context window in tokens (> 0).
        budget_fraction: fraction of the window the prompt may use (0 < f <= 1).
        trigger: fraction of the budget at which compaction should fire (0 < f <= 1).  With
            ``compact_at="trigger"`` a prompt above it is compacted; with ``"budget"`` it is informational
            (the plan reports whether the prompt crossed it).
        reserve: fraction of the window kept for the completion, used when ``reserve_tokens`` is ``None``.
        reserve_tokens: explicit completion reserve in tokens (e.g. the request's ``max_tokens``).
        keep_recent: the newest units (``unit``) that are always kept (>= 0).
        unit: what ``keep_recent`` counts and where the cut may fall: ``exchange`` (default: an assistant
            message with all its tool results, or a single other message; the cut may fall inside a user
            turn) or ``turn`` (a user message and everything up to the next one).
        keep_recent_messages: additionally keep at least this many newest history messages (0 = off). The
            cut is moved outward to the nearest valid position.
        pin_system: must be True: the system prompt is the prompt-cache prefix. False raises.
        mode: ``summarise`` (the older span becomes a summary of ``summary_tokens``) or ``drop``.
        summary_tokens: the assumed size of the summary in tokens (>= 0).
        reinject_task / reinject_plan / reinject_tasks / reinject_file: re-inject the first user message,
            the plan, the task list, the file being edited, when their source message is evicted.
        compact_at: when and how much to compact.  ``budget`` (default): only
            when the prompt is over the budget, and then the minimum that fits (a preview of the smallest
            change, what ``ctxwatch plan`` shows).  ``trigger``: as soon as the prompt is above
            :attr:`trigger_tokens`, a full compaction down to the newest ``keep_recent`` units (field
            practice for a live loop: compacting at the budget lands just under it, above the trigger, and
            compacts again a call or two later).

    Raises:
        PolicyError: a value is out of range, ``mode``, ``unit`` or ``compact_at`` is unknown, or
            ``pin_system`` is False.
    """

    window: int
    budget_fraction: float = DEFAULT_BUDGET_FRACTION
    trigger: float = DEFAULT_TRIGGER
    reserve: float = DEFAULT_RESERVE
    reserve_tokens: int | None = None
    keep_recent: int = DEFAULT_KEEP_RECENT
    keep_recent_messages: int = 0
    unit: Unit = "exchange"
    pin_system: bool = True
    mode: Mode = "summarise"
    summary_tokens: int = DEFAULT_SUMMARY_TOKENS
    reinject_task: bool = True
    reinject_plan: bool = True
    reinject_tasks: bool = True
    reinject_file: bool = True
    compact_at: CompactAt = "budget"

    def __post_init__(self) -> None:
        if not self.pin_system:
            raise PolicyError("pin_system cannot be turned off: the system prompt and tool schemas are the "
                              "prompt-cache prefix and are never evicted or rewritten")
        if isinstance(self.window, bool) or not isinstance(self.window, int) or self.window <= 0:
            raise PolicyError(f"window must be a positive number of tokens, got {self.window!r}")
        for name in ("budget_fraction", "trigger"):
            v = getattr(self, name)
            if not 0 < v <= 1:
                raise PolicyError(f"{name} must be in (0, 1], got {v}")
        if not 0 <= self.reserve < 1:
            raise PolicyError(f"reserve must be in [0, 1), got {self.reserve}")
        if self.reserve_tokens is not None and not 0 <= self.reserve_tokens <= self.window:
            # (the whole window is allowed: a request whose max_tokens reaches the window reserves all of it,
            # as its report says; the plan then has no budget and says the prompt does not fit)
            raise PolicyError(f"reserve_tokens must be in [0, window], got {self.reserve_tokens}")
        for name in ("keep_recent", "keep_recent_messages", "summary_tokens"):
            if getattr(self, name) < 0:
                raise PolicyError(f"{name} must be >= 0, got {getattr(self, name)}")
        if self.mode == "summarize":  # type: ignore[comparison-overlap]
            object.__setattr__(self, "mode", "summarise")
        if self.mode not in ("summarise", "drop"):
            raise PolicyError(f"mode must be 'summarise' or 'drop', got {self.mode!r}")
        if self.unit not in UNITS:
            raise PolicyError(f"unit must be 'exchange' or 'turn', got {self.unit!r}")
        if self.compact_at not in COMPACT_AT:
            raise PolicyError(f"compact_at must be 'budget' or 'trigger', got {self.compact_at!r}")

    @classmethod
    def from_settings(cls, settings: Settings, window: int, reserve_tokens: int | None = None,
                      **kwargs: Any) -> Policy:
        """A policy from :class:`~ctxwatch.config.Settings` for a window (tokens); ``kwargs`` override fields."""
        vals: dict[str, Any] = {
            "budget_fraction": settings.budget_fraction, "trigger": settings.trigger,
            "keep_recent": settings.keep_recent, "summary_tokens": settings.summary_tokens,
        }
        if settings.reserve < 1:
            vals["reserve"] = settings.reserve
        elif reserve_tokens is None:  # (a reserve in tokens: as the accounting gives it, no more than the window)
            reserve_tokens = settings.reserve_tokens(window)
        vals.update(kwargs)
        return cls(window=window, reserve_tokens=reserve_tokens, **vals)

    @property
    def reserve_total(self) -> int:
        """The completion reserve in tokens: ``reserve_tokens`` if set, else ``int(reserve * window)``."""
        return self.reserve_tokens if self.reserve_tokens is not None else share(self.window, self.reserve)

    @property
    def budget_tokens(self) -> int:
        """The prompt budget in tokens: ``min(share(window, budget_fraction), window - reserve)``.

        The prompt must leave the completion reserve free in the window as well as stay in the budget.
        """
        return prompt_budget(self.window, self.budget_fraction, self.reserve_total)

    @property
    def trigger_tokens(self) -> int:
        """Where compaction should fire, in tokens: ``int(trigger * budget)``."""
        return share(self.budget_tokens, self.trigger)


def policy_for_call(call: Call, settings: Settings, *, window: int | None = None, reserve: float | None = None,
                    **kwargs: Any) -> Policy:
    """The :class:`Policy` for one accounted call, as ``ctxwatch plan`` and the preview build it.

    Args:
        call: the call summary (its resolved ``window`` and the request's ``max_output_tokens``).
        settings: thresholds (budget fraction, trigger, keep_recent, summary_tokens, reserve fraction).
        window: overrides the call's window (tokens), e.g. the ``--window`` option.
        reserve: the ``--reserve`` option: below 1 a fraction of the window, else tokens.  ``None``: the
            rule of the call's summary (:func:`ctxwatch.accounting.reserve_for`): the request's
            ``max_output_tokens`` capped at the window, else ``settings.reserve``.
        kwargs: other :class:`Policy` fields (``mode``, ``unit``, ``keep_recent_messages``, ``compact_at``,
            reinjection switches).

    Raises:
        PolicyError: the window is unknown (neither the log, the option nor the catalogue gives it), or a
            value is out of range.
    """
    win = window or call.window
    if not win:
        raise PolicyError(f"the context window of {call.model or 'this model'} is unknown; pass --window")
    reserve_tokens: int | None = None
    if reserve is not None:
        if reserve < 0:
            raise PolicyError(f"reserve must be >= 0, got {reserve}")
        reserve_tokens = share(win, reserve) if reserve < 1 else int(reserve)
    elif win == call.window and call.reserve_tokens is not None:
        # (the call's own reserve: the request's, a harness's or a documented window's rule, as accounted)
        reserve_tokens = call.reserve_tokens
    else:
        from ctxwatch.accounting import reserve_for

        reserve_tokens = reserve_for(call.max_output_tokens, win, settings)[0]
    if win == call.window and (hl := harness_limits(call, settings)) is not None:
        # A harness's log: its own budget and trigger (tokens) as the policy's fractions, unless given.
        budget = hl.budget if hl.budget is not None else share(win, settings.budget_fraction)
        if hl.budget is not None and budget:
            kwargs.setdefault("budget_fraction", budget / win)
        if hl.trigger is not None and budget:
            kwargs.setdefault("trigger", min(1.0, hl.trigger / budget))
    return Policy.from_settings(settings, win, reserve_tokens=reserve_tokens, **kwargs)
