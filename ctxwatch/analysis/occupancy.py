"""Occupancy: the prompt size of each call that every other check measures, in tokens, and the
``implausible_usage`` check of reports that cannot be one.

A reported prompt above the model's window that the call's own estimate does not confirm, or of 0 or less, is
implausible (:attr:`Call.report_implausible`): no occupancy, while the token totals and the cost keep it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ctxwatch.accounting import Calibrations, calibration_factor, median_ratio
from ctxwatch.analysis.flags import FlagSink, int_or_none, num
from ctxwatch.model import MAX_PLAUSIBLE_PROMPT, Call, shown_used


@dataclass(slots=True)
class Calibration:
    """The calibration of one stream: how its estimates compare with the prompts the provider reported.

    Attributes:
        factor: the median reported/estimated ratio of its plausible calls
            (:func:`~ctxwatch.accounting.calibration_factor`), ``None`` with too few calls or a ratio no
            tokenizer gap explains.
        calls: how many calls gave a ratio.
        rejected: the median ratio when it was rejected as no tokenizer gap, else ``None``.
    """

    factor: float | None
    calls: int
    rejected: float | None


def calibrate(cs: Sequence[Call]) -> Calibration:
    """The :class:`Calibration` of calls ``cs`` (calls with a reported and an estimated prompt, implausible
    reports left out)."""
    ratios: list[float] = []
    for c in cs:
        r, e = c.prompt_reported, c.prompt_estimated
        if r and e and not c.report_implausible:
            ratios.append(r / e)
    cal = calibration_factor(ratios)
    rejected = median_ratio(ratios) if cal is None else None  # (a median no tokenizer gap explains)
    return Calibration(cal, len(ratios), rejected)


def occupancy(c: Call, calibrations: Calibrations) -> int | None:
    """The plausible prompt size of a call in tokens, ``None`` when unknown or implausible.

    The provider's reported prompt when it is plausible; for a reported 0, :attr:`Call.prompt_tokens`; without a
    report, the estimate as every surface shows it in used and free (:func:`~ctxwatch.model.shown_used` with the
    run's ``calibrations``: calibrated where the tokenizer is not the model's own), else floor + history, else a
    compaction marker's ``post_tokens``.
    """
    reported = c.prompt_reported
    if reported is not None and reported > 0:
        return None if c.report_implausible else reported
    if reported is not None:
        # A reported 0 is no size: what stands in for it is the table's (Call.prompt_tokens: the raw estimate,
        # else floor + history), so that the implausible_usage flag, free and used % name one number.
        return c.prompt_tokens
    # (no report at all: the estimate, as the table, the bar and the status line show it, so that a flag names
    # the number beside it)
    if c.prompt_estimated is not None:
        return shown_used(c, calibrations.breakdown(c))
    if c.prompt_tokens is not None:
        return c.prompt_tokens
    if isinstance(c.compaction, dict):
        return int_or_none(c.compaction.get("post_tokens"))
    return None


class Plausibility:
    """The ``implausible_usage`` check: a reported prompt that cannot be the call's occupancy."""

    def __init__(self, out: FlagSink) -> None:
        self.out = out

    def step(self, c: Call, occ: int | None, last_plausible: tuple[int, Call, int] | None) -> None:
        """Flag call ``c`` (occupancy ``occ``) when its report is implausible; ``last_plausible`` is ``(pos,
        call, occupancy)`` of the last plausible call before it, which the reason names."""
        reported = c.prompt_reported
        if reported is not None and (occ is None or reported <= 0) and c.report_implausible:
            window = c.window
            lp = last_plausible
            pw = c.plausible_window  # (the model's window, not a smaller one the user set: that is overflow)
            what = (f"is {num(reported)}, and every request has a prompt" if reported <= 0 else
                    f"exceeds the {num(pw or MAX_PLAUSIBLE_PROMPT)}-token "
                    f"{('model window' if pw != window else 'window') if pw else 'plausible maximum'}")
            # Say what "ignored" covers: the occupancy (used %, free, peak, thresholds, forecast).  A count above
            # the window is still what the provider counted, so the token totals and the cost keep it; a
            # reported 0 is in neither (not summed, not priced), and an estimate may stand in for it.
            if occ is not None:
                how = f"ignored: the estimate ({num(occ)} tokens) stands in"
            else:
                how = (f"ignored as occupancy (last plausible: "
                       f"{num(lp[2]) + ' at #' + str(lp[1].index + 1) if lp else 'none'})"
                       + ("; kept in token totals and cost" if reported > 0 else ""))
            self.out.add("implausible_usage", "warn", c,
                         f"reported prompt {num(reported)} tokens at #{c.index + 1} {what}: implausible, {how}",
                         prompt_reported=reported, window=window,
                         last_plausible_tokens=lp[2] if lp else None,
                         last_plausible_call=lp[1].index if lp else None)


#: A Claude Code line's ``output_tokens`` is a streaming placeholder (1 to about 10) until the call's last line;
#: a count at most this large, under a text that long, on a call whose lines never gave a ``stop_reason``, is
#: taken for one (the last line was not written).
PLACEHOLDER_MAX_OUTPUT = 16
#: Characters of completion text per reported output token above which the count cannot be the text's: 4 is
#: about the characters of one token of English or code, so 16 is four times the text the count could hold.
PLACEHOLDER_CHARS_PER_TOKEN = 16


class Placeholder:
    """The ``output_placeholder`` check: a Claude Code call whose output count is the streaming placeholder its
    early lines carry (no line gave a ``stop_reason``, and the count is a few tokens under a long text), so its
    output and cost are too low."""

    def __init__(self, out: FlagSink) -> None:
        self.out = out

    def step(self, c: Call) -> None:
        """Flag call ``c`` when its output count is a placeholder."""
        u, r = c.usage, c.response
        if c.provenance.harness != "claude-code" or u is None or r is None or r.finish_reason is not None:
            return
        out, text = u.output, r.text or ""
        if out.__class__ is not int or not 0 < out <= PLACEHOLDER_MAX_OUTPUT:
            return
        if len(text) < PLACEHOLDER_CHARS_PER_TOKEN * out + 256:
            return
        self.out.add("output_placeholder", "info", c,
                     f"output {num(out)} token{'s' if out != 1 else ''} at #{c.index + 1} is a streaming "
                     f"placeholder: the call's lines give no stop_reason and its text is {num(len(text))} characters "
                     f"(about {num(len(text) // 4)} tokens): its output and cost are too low",
                     output_reported=out, text_chars=len(text))
