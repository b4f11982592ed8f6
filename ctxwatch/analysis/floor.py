"""Floor checks: the system prompt evicted or changed, and the tool schemas grown.

The floor (system prompt + tool schemas) is re-sent with every call and is the prompt-cache prefix, so losing
or changing it is judged within one conversation only: a separate request has no earlier turn behind it.
"""

from __future__ import annotations

from ctxwatch.accounting import Calibrations
from ctxwatch.analysis.flags import FlagSink, num
from ctxwatch.model import Call, separate_requests


def same_conversation(a: Call, b: Call) -> bool:
    """False when both calls log their history and it starts with different messages (separate requests that
    happen to share a context, like a helper call beside the agent); True otherwise."""
    if a.messages and b.messages:
        return a.messages[0].content_key == b.messages[0].content_key
    return True


class SystemPrompt:
    """The ``system_prompt_changed`` and ``system_prompt_evicted`` checks.

    ``calibrations``: the run's; the reasons give the system prompt's size as every surface shows it
    (:meth:`~ctxwatch.accounting.Calibrations.breakdown`), the evidence the accounted numbers.
    """

    def __init__(self, out: FlagSink, calibrations: Calibrations) -> None:
        self.out, self.calibrations = out, calibrations
        self.prev_present: bool | None = None  # the last known Call.system_present
        self.present_start: Call | None = None  # first call of the current run of calls with a system prompt
        self.last_present: Call | None = None
        self.evicted_since: Call | None = None  # the call that lost it, while it stays lost
        self.prev_key: int | None = None
        self.prev_tokens: int | None = None
        self.prev_call: Call | None = None

    def step(self, c: Call, compacted: bool) -> Call | None:
        """Check call ``c`` (``compacted``: it follows a compaction, for the evidence).  Returns the call since
        which the system prompt is absent, or ``None``."""
        sp = c.system_present
        prev_sp = self.prev_present
        if sp is True:
            if prev_sp is not True:
                self.present_start = c
            prev_call = self.prev_call
            if (prev_sp is True and c.system_key is not None and self.prev_key is not None
                    and c.system_key != self.prev_key and prev_call is not None
                    and same_conversation(prev_call, c)):
                before_b, after_b = self.calibrations.breakdown(prev_call), self.calibrations.breakdown(c)
                cal_note = ", calibrated" if before_b.calibrated or after_b.calibrated else ""
                self.out.add("system_prompt_changed", "warn", c,
                             f"system prompt of #{c.index + 1} differs from #{prev_call.index + 1}'s "
                             f"({num(before_b.system_tokens)} -> {num(after_b.system_tokens)} tokens{cal_note}): "
                             "prompt-cache prefix invalidated, every cached turn behind it is billed again",
                             previous_call=prev_call.index, system_tokens_before=self.prev_tokens,
                             system_tokens_after=c.system_tokens)
            self.last_present, self.evicted_since = c, None
            self.prev_key, self.prev_tokens, self.prev_call = c.system_key, c.system_tokens, c
        elif sp is False and prev_sp is True and self.present_start is not None and self.last_present is not None \
                and not separate_requests(self.last_present, c):
            # (only within one conversation: a separate request, a batch line above all, without a system prompt
            # lost nothing that another had)
            start, last = self.present_start, self.last_present
            rng = f"#{start.index + 1}" if start is last else f"#{start.index + 1}–#{last.index + 1}"
            self.out.add("system_prompt_evicted", "critical", c,
                         f"system prompt absent from request #{c.index + 1} (present in {rng})",
                         present_from=start.index, present_to=last.index,
                         system_tokens_before=last.system_tokens, floor_before=last.floor_tokens,
                         floor_after=c.floor_tokens, with_compaction=compacted)
            self.evicted_since = c
        if sp is not None:
            self.prev_present = sp
        return self.evicted_since


class ToolSchemas:
    """The ``floor_grew`` check: tool schemas added or enlarged, so every later call carries more.

    ``calls``: how many calls the stream has (the growth is counted over the calls logged from there on).
    """

    def __init__(self, out: FlagSink, calibrations: Calibrations, calls: int) -> None:
        self.out, self.calibrations, self.calls = out, calibrations, calls
        self.prev: tuple[int | None, int, Call] | None = None  # (tools_key, tools_tokens, call)

    def step(self, pos: int, c: Call) -> None:
        """Check call ``c`` at position ``pos`` against the last call that carried tool schemas."""
        if c.tools_tokens is None:
            return
        prev = self.prev
        if prev is not None and c.tools_key != prev[0] and c.tools_tokens > prev[1]:
            added = c.tools_tokens - prev[1]
            new_names = [t for t in c.tool_names if t not in set(prev[2].tool_names)]
            later = self.calls - pos
            names = f" (+{', +'.join(new_names)})" if new_names else ""
            # (as shown: calibrated where the tokenizer is not the model's own; the raw growth where the two
            # calls' factors differ so much that the calibrated one would not be a growth)
            shown_added, cal_note = added, ""
            before_b, after_b = self.calibrations.breakdown(prev[2]), self.calibrations.breakdown(c)
            if after_b.calibrated and before_b.calibrated and after_b.tools_tokens is not None \
                    and before_b.tools_tokens is not None and after_b.tools_tokens > before_b.tools_tokens:
                shown_added, cal_note = after_b.tools_tokens - before_b.tools_tokens, " (calibrated)"
            self.out.add("floor_grew", "warn", c,
                         f"tool schemas grew by {num(shown_added)} tokens{cal_note} at #{c.index + 1}{names}: added "
                         f"to every later call ({num(shown_added * later)} tokens over the {later} "
                         f"call{'s' if later != 1 else ''} logged so far) and the cache prefix is invalidated",
                         previous_call=prev[2].index, tools_tokens_before=prev[1],
                         tools_tokens_after=c.tools_tokens, tokens_added=added, tools_added=new_names,
                         calls_affected=later, tokens_added_total=added * later)
        self.prev = (c.tools_key, c.tools_tokens, c)
