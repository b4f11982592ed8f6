"""Whether a Claude Code call's reported prompt is plausible, and the ``implausible_usage`` note when it is not.

Claude Code logs neither the system prompt nor the tools, so no estimate can confirm a reported prompt: one of
0 tokens, or above the largest window the model can have, is no occupancy (and a floor inferred from it would
hide every later call's).  The judgement needs the model catalogue's windows (:mod:`ctxwatch.catalog.windows`).
"""

from __future__ import annotations

from typing import Any

from ctxwatch.catalog.windows import largest_window, proves_long_context, resolve_window
from ctxwatch.formats.wire.anthropic import anthropic_usage
from ctxwatch.model import MAX_COUNT, MAX_PLAUSIBLE_PROMPT, Usage, implausible_prompt


def has_prompt(usage: Any, model: str | None) -> bool:
    """True when an Anthropic usage block reports a plausible prompt of ``model``: at least one token, and no
    more than the largest window the model can have (:func:`ctxwatch.catalog.windows.largest_window`: a report
    above it is no occupancy, and a floor inferred from it would hide every later call's)."""
    u = anthropic_usage(usage)
    if u is None or not u.prompt_total:
        return False
    return not implausible_prompt(u.prompt_total, largest_window(model, "anthropic"))




def whole_prompt(usage: Any) -> tuple[Usage, int] | None:
    """The normalized usage block and its prompt (tokens) when its three parts are all whole counts below 2**53,
    as the run keeps them (:func:`ctxwatch.engine.sanitize.sanitize` makes the prompt of a damaged part unknown), else
    ``None``.  ``usage``: the raw ``message.usage`` block, or its :func:`anthropic_usage` already made (each
    call's is made once per emission: this runs for every call of a folder)."""
    u = usage if isinstance(usage, Usage) else anthropic_usage(usage)
    if u is None:
        return None
    parts = (u.input_uncached, u.cache_write, u.cache_read)
    if not all(p.__class__ is int and 0 <= p < MAX_COUNT for p in parts):
        return None
    prompt = u.prompt_total
    if prompt is None or prompt >= MAX_COUNT:
        return None
    return u, prompt


def implausible_note(usage: Any, model: str | None, *, long_context: bool = False) -> str | None:
    """The ``implausible_usage`` note of a Claude Code call whose kept ``message.usage`` block (``usage``, raw or
    normalized as :func:`whole_prompt` takes it) reports a prompt no request of ``model`` can have, or ``None``.

    The rule is :func:`has_prompt`'s, which is the accountant's for a call whose system prompt and tools are
    not logged (no estimate can confirm the report, :func:`ctxwatch.model.estimate_confirms`): a prompt
    (``input_tokens + cache_creation_input_tokens + cache_read_input_tokens``, tokens) of 0, or above the
    largest window the model can have (:func:`ctxwatch.catalog.windows.largest_window`; 10,000,000 tokens,
    :data:`~ctxwatch.model.MAX_PLAUSIBLE_PROMPT`, for a model the catalogue does not know).  The window the note
    names is the call's own, as the table and the flag give it: :func:`ctxwatch.catalog.windows.resolve_window`, with
    ``long_context`` when a call of its context (this one or an earlier one) proved the 1M-token beta
    (:func:`ctxwatch.catalog.windows.proves_long_context`); without that proof a Sonnet 4 call is at 200,000, and a
    report above even the beta's 1M does not prove it.  A block whose counts are not all whole counts below
    2**53 gets no note: the run reports that damage and the prompt is unknown, not implausible.  The note says
    what the flag ``implausible_usage`` says of it, in the Codex reader's words (``ctxwatch.formats.codex``):
    the call has no occupancy, and the report stays in the token totals and the cost (a 0 is in neither)."""
    return _note_of(whole_prompt(usage), model, long_context)


def _note_of(whole: tuple[Usage, int] | None, model: str | None, long_context: bool) -> str | None:
    """:func:`implausible_note` of a usage block whose :func:`whole_prompt` is ``whole``."""
    if whole is None:
        return None
    u, prompt = whole
    if not implausible_prompt(prompt, largest_window(model, "anthropic")):
        return None
    what = (f"usage reports {prompt:,} prompt tokens (input {u.input_uncached:,} + cache write {u.cache_write:,} + "
            f"cache read {u.cache_read:,})")
    if prompt <= 0:
        return f"{what}, and every request has a prompt: implausible, so no occupancy"
    window = resolve_window(model, "anthropic", None, None, long_context=long_context)[0]
    limit = (f"the {window:,}-token window of {model}" if window
             else f"the {MAX_PLAUSIBLE_PROMPT:,} tokens of the largest windows")
    return f"{what}, more than {limit}: implausible, so no occupancy (kept in token totals and cost as reported)"


class ImplausibleNotes:
    """The ``implausible_usage`` note of each call of one transcript file, with the window evidence it needs.

    A call whose reported prompt proves the 1M-token beta window (:func:`ctxwatch.catalog.windows.
    proves_long_context`) proves it for itself and the later calls of its (session, context, model), as the
    accountant keeps that evidence by call index (``Accountant.note_window_evidence``): kept here by the same
    rule and key, so that the note names the window the call's row and flag give.
    """

    def __init__(self) -> None:
        # (session, context, model) -> ordinal of its first call that proved the 1M-token beta window
        self._long_context: dict[tuple[str | None, str, str | None], int] = {}

    def note(self, usage: Usage | None, session: str | None, context: str, model: str | None, ordinal: int
             ) -> str | None:
        """The note of a call (:func:`implausible_note`) whose kept usage is ``usage`` (normalized), ``ordinal``
        being the number of calls of the file before it; ``None`` when its prompt is plausible."""
        ctx_key = (session, context, model)
        whole = whole_prompt(usage)
        if whole is not None and proves_long_context(whole[1], model, "anthropic"):
            self._long_context[ctx_key] = min(ordinal, self._long_context.get(ctx_key, ordinal))
        since = self._long_context.get(ctx_key)
        return _note_of(whole, model, since is not None and ordinal >= since)
