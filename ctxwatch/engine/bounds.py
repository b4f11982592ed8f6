"""The most output a call can have: an output or reasoning count above its window is no count, but damage.

A call's completion shares the context window with its prompt (every provider refuses a request whose prompt
plus ``max_tokens`` exceeds the window, or stops the completion at it), so a reported output count larger than
the largest window the call's model can have (:func:`ctxwatch.catalog.windows.largest_window`) cannot be: it
is a counter of something else, or a corrupted record.  Every parsed call passes through
:func:`implausible_outputs` before accounting (:func:`ctxwatch.engine.sanitize.sanitize`), so that such a count
is an ``implausible_value`` issue of its call's line, and the count unknown (its call kept, not priced, left out
of the token sums), in every format alike.

The prompt is not judged here: a reported prompt above the window is no occupancy, and is kept in the totals
and the cost as reported (:meth:`ctxwatch.model.Call.report_implausible`).  The cache counts are parts of that
prompt, judged with it (the run's sanitizer refuses cache counts above the prompt they are part of); only when
the prompt is not reported are they judged here, by the same bound as the output (a prompt, cached or not,
fits its window too).
"""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import Any

from ctxwatch.catalog.entries import catalog_window
from ctxwatch.catalog.windows import largest_window
from ctxwatch.model import MAX_COUNT, MAX_PLAUSIBLE_PROMPT, Issue, ParsedCall, Usage

#: Largest output count (tokens) a call of a model whose window is unknown can have: the largest context
#: windows on offer, 10,000,000 tokens (Llama 4 Scout; :data:`ctxwatch.model.MAX_PLAUSIBLE_PROMPT`), since an
#: output never exceeds the window it shares with its prompt.
MAX_PLAUSIBLE_OUTPUT = MAX_PLAUSIBLE_PROMPT

#: Below this many output tokens no call is judged (no window lookup for most calls): the smallest context window
#: in the genai-prices catalogue, 512 tokens (embedding and prompt-guard models).
SMALLEST_WINDOW = 512

#: How an issue names each judged :class:`~ctxwatch.model.Usage` field (the run's sanitizer's words).
_NAMES = {"output": "output tokens", "reasoning": "reasoning tokens", "cache_read": "cache read tokens",
          "cache_write": "cache write tokens"}

#: The fields judged whatever the prompt, and those judged only when the prompt is not reported.
_ALWAYS = ("output", "reasoning")
_WITHOUT_PROMPT = ("cache_read", "cache_write")


def _count(v: Any) -> int | None:
    """``v`` when it is a whole count below 2**53 (the sanitizer reports any other value), else ``None``."""
    return v if v.__class__ is int and 0 <= v < MAX_COUNT else None


def output_bound(pc: ParsedCall) -> tuple[int, str]:
    """The most output tokens ``pc`` can have and the words naming that limit: the largest window its model can
    have (the log's own window first: :func:`~ctxwatch.catalog.windows.largest_window`; the catalogue's figure
    when larger, which for some models adds the output ceiling beside an input-only limit), else
    :data:`MAX_PLAUSIBLE_OUTPUT`."""
    log_window = _count(pc.window) or None
    model = pc.model if isinstance(pc.model, str) else None
    provider = pc.provider if isinstance(pc.provider, str) else None
    return _bound(model, provider, log_window)


@functools.lru_cache(maxsize=1024)
def _bound(model: str | None, provider: str | None, log_window: int | None) -> tuple[int, str]:
    """:func:`output_bound` of a call of ``model`` (worked out once per model and stated window: a folder's
    calls share a few; the cache is bounded, a log's model names being untrusted)."""
    window = max(largest_window(model, provider, log_window) or 0,
                 0 if log_window else catalog_window(model, provider) or 0)
    if window > 0:
        return window, (f"the {window:,}-token window the log states" if log_window
                        else f"the largest window of {model}, {window:,} tokens")
    return MAX_PLAUSIBLE_OUTPUT, f"the {MAX_PLAUSIBLE_OUTPUT:,} tokens of the largest windows"


def implausible_outputs(pc: ParsedCall) -> tuple[ParsedCall, Issue | None]:
    """``pc`` with each output or reasoning count (and cache count, when the prompt is not reported) above
    :func:`output_bound` made unknown (``None``, the usage marked damaged: the call is not priced), and the
    ``implausible_value`` issue that says so (at the line its usage came from, with the call's key); ``(pc,
    None)`` when every count is plausible.  A copy is mended: a reader may give the same object again."""
    u = pc.usage
    if u is None:
        return pc, None
    judged = _ALWAYS if u.prompt_total is not None else _ALWAYS + _WITHOUT_PROMPT
    if max(_count(getattr(u, f)) or 0 for f in judged) <= SMALLEST_WINDOW:
        return pc, None
    bound, words = output_bound(pc)
    wrong = {f: n for f in judged if (n := _count(getattr(u, f))) is not None and n > bound}
    if not wrong:
        return pc, None
    usage: Usage = replace(u, **dict.fromkeys(wrong), damaged=True)
    what = "; ".join(f"{_NAMES[f]} {n:,}" for f, n in wrong.items())
    line = pc.provenance.usage_line or pc.source.line
    issue = Issue(pc.source.path, line, "implausible_value",
                  f"{what} (more than {words}, which a call's prompt and output share): treated as unknown",
                  pc.key)
    return replace(pc, usage=usage), issue
