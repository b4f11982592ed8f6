"""A call's floor and history as every surface shows them: raw, or scaled by its model's calibration where the
tokenizer is not the model's own, so that the same system prompt and tools show the same floor on every call."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ctxwatch.model.call import Call
from ctxwatch.model.parsed import Src


@dataclass(frozen=True, slots=True)
class Breakdown:
    """A call's floor and history as every surface shows them (:func:`shown_breakdown`), in tokens.

    Attributes:
        system_tokens / tools_tokens / floor_tokens / history_tokens: as in :class:`Call`, calibrated or not
            (``None`` = unknown).  Calibrated, system + tools add up to the floor.
        floor_src / history_src: their sources; :attr:`Src.CALIBRATED` where the estimate was scaled (not for a
            count of 0, which scaling leaves 0).
        factor: what the floor was scaled by (dimensionless): the calibration of the call's model, or less where
            that would put the floor above the prompt the call reports (:attr:`capped`); ``None`` when nothing
            was scaled (the numbers are the call's own).
        capped: True when the calibrated floor would not fit in the reported prompt, so the floor is the whole
            reported prompt (less the reply primer) and :attr:`factor` the ratio that gives it.
        filled: True when the history is the rest of the reported prompt (reported - reply primer - floor),
            not its count scaled by :attr:`factor`: the call reports a plausible prompt.
    """

    system_tokens: int | None
    tools_tokens: int | None
    floor_tokens: int | None
    floor_src: Src
    history_tokens: int | None
    history_src: Src
    factor: float | None = None
    capped: bool = False
    filled: bool = False

    @property
    def calibrated(self) -> bool:
        """True when the estimates were scaled (:attr:`factor` is set)."""
        return self.factor is not None


def raw_breakdown(call: Call) -> Breakdown:
    """``call``'s floor and history as accounted, nothing scaled."""
    return Breakdown(call.system_tokens, call.tools_tokens, call.floor_tokens, call.floor_src, call.history_tokens,
                     call.history_src)


def shown_breakdown(call: Call, calibration: float | None) -> Breakdown:
    """The floor (system prompt + tool schemas) and history of ``call`` as ctxwatch shows them everywhere: the
    dashboard's table, bar, chart and detail, ``report`` (text, and ``calibrated`` in ``report --json``), ``plan``
    and the eviction preview, and the flags' reasons.

    The one rule: where the floor is estimated (``floor_src`` estimated: the log holds the system prompt and the
    tools) with a tokenizer that is not the model's own (``exact`` False: Claude, Gemini, counted with
    ``o200k_base``) and ``calibration`` is given (the median reported / estimated prompt ratio of the call's
    model in the run, else the run's: :class:`ctxwatch.accounting.Calibrations`), the floor is scaled by it and
    marked :attr:`Src.CALIBRATED`, so the same system prompt and tools show the same floor on every call.  The
    history is then what the call's reported prompt leaves (reported - reply primer - floor), as an inferred
    history is: the run's median cannot fit every call, and the rest of the tokenizer gap is the history's, so
    floor + history + reply primer is the reported prompt and the bar adds up to the window.  Without a plausible
    report (none, 0, or implausible) the history is scaled by the calibration too.  The floor never exceeds the
    reported prompt less the primer (a median that does not fit a call would put more floor in it than it
    reports): there it is capped and the history is 0.  The floor is rounded to whole tokens
    and its two parts share it by largest remainder, so that system + tools = floor.  A count of 0 keeps its own
    source: scaling leaves it 0, so it is shown as a plain 0.  Otherwise (an exact tokenizer, an inferred or
    unknown floor, no calibration) the call's own numbers (:func:`raw_breakdown`).

    Args:
        call: the accounted call.
        calibration: the factor of the call's model (dimensionless, > 0), or ``None`` when there is none (fewer
            than :data:`~ctxwatch.accounting.MIN_CALIBRATION_CALLS` calls with a reported and an estimated
            prompt, or a median no tokenizer gap explains).
    """
    floor = call.floor_tokens
    if call.exact or calibration is None or call.floor_src != Src.ESTIMATED or floor is None:
        return raw_breakdown(call)
    factor, capped = calibration, False
    history = call.history_tokens
    reported, estimated = call.prompt_reported, call.prompt_estimated
    room: int | None = None  # (the reported prompt less the reply primer: what floor + history add up to)
    if reported is not None and reported > 0 and not call.report_implausible and history is not None \
            and estimated is not None:
        room = max(0, reported - max(0, estimated - floor - history))
    scaled = round(floor * factor)
    if room is not None and scaled > room:
        scaled, capped = room, True
        factor = room / floor if floor else factor
    system, tools = call.system_tokens, call.tools_tokens
    if system is not None and tools is not None and system + tools == floor:
        exact_s, exact_t = system * factor, tools * factor
        system, tools = math.floor(exact_s), math.floor(exact_t)
        short = scaled - system - tools  # (0, 1 or 2 tokens left by rounding down: the largest remainders get them)
        if short >= 2 or (short == 1 and exact_s - system >= exact_t - tools):
            system += 1
            short -= 1
        tools += max(0, short)
    else:
        system = None if system is None else round(system * factor)
        tools = None if tools is None else round(tools * factor)
    if history is not None:
        history = room - scaled if room is not None else round(history * factor)
    return Breakdown(system, tools, scaled, Src.CALIBRATED if floor else call.floor_src, history,
                     Src.CALIBRATED if call.history_tokens else call.history_src, factor, capped, room is not None)


def shown_used(call: Call, shown: Breakdown | None, prompt: tuple[bool, bool, int | None] | None = None
               ) -> int | None:
    """The prompt in tokens as every surface shows it in used, used % and free: :attr:`Call.used_tokens`, except
    for a call that reports no prompt and whose floor and history are shown calibrated (``shown``, from
    :func:`shown_breakdown`): the calibrated floor + history + the reply primer, about what the provider would
    count (the analysis's occupancy, the estimate x the calibration, is within a token or two of it) and what
    ``plan`` calls 'before'.  Free and used % then agree with the floor and history beside them (the bar adds
    up to the window), where they came from the raw estimate.  ``prompt``: the call's
    :meth:`Call.prompt_judged`, when the caller has it already (its prompt is judged once)."""
    if shown is not None and shown.calibrated and not shown.filled and call.prompt_reported is None \
            and call.prompt_estimated is not None and call.floor_tokens is not None \
            and call.history_tokens is not None and shown.floor_tokens is not None \
            and shown.history_tokens is not None:
        primer = max(0, call.prompt_estimated - call.floor_tokens - call.history_tokens)
        return shown.floor_tokens + shown.history_tokens + primer
    return prompt[2] if prompt is not None else call.used_tokens


def free_of(call: Call, used: int | None) -> int | None:
    """Window minus ``used`` (tokens, :func:`shown_used`) and the reserve, in tokens (negative = overflow);
    ``None`` if unknown."""
    if call.window is None or call.reserve_tokens is None or used is None:
        return None
    return call.window - used - call.reserve_tokens


def fraction_of(call: Call, used: int | None) -> float | None:
    """``used`` (tokens, :func:`shown_used`) as a fraction of the window, or ``None`` when either is unknown."""
    if not call.window or used is None:
        return None
    return used / call.window


def shown_free(call: Call, shown: Breakdown | None) -> int | None:
    """Window minus :func:`shown_used` and the reserve, in tokens (negative = overflow); ``None`` if unknown."""
    return free_of(call, shown_used(call, shown))


def shown_fraction(call: Call, shown: Breakdown | None) -> float | None:
    """:func:`shown_used` as a fraction of the window, or ``None`` when either is unknown."""
    return fraction_of(call, shown_used(call, shown))
