"""A parsed call's numbers made sane before accounting: a count that is not a count is unknown, with an issue.

Readers pass a damaged usage field through as they found it, so that it is reported here, with its value, and
made unknown (``None``): never guessed, never a crash.

The most output a call can have (:func:`implausible_outputs`): a call's completion shares the context window
with its prompt (every provider refuses a request whose prompt plus ``max_tokens`` exceeds the window, or stops
the completion at it), so a reported output or reasoning count larger than the largest window the call's model
can have (:func:`ctxwatch.catalog.windows.largest_window`) cannot be: it is a counter of something else, or a
corrupted record, and becomes unknown (its call kept, not priced, left out of the token sums).  The prompt is
not judged so: a reported prompt above the window is no occupancy, and is kept in the totals and the cost as
reported (:meth:`ctxwatch.model.Call.report_implausible`); its cache counts are judged with it (no more than
the prompt they are part of), and by the output's bound only when the prompt is not reported.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import Any

from ctxwatch.catalog.entries import catalog_window
from ctxwatch.catalog.windows import largest_window
from ctxwatch.formats import count_issue_kind, not_a_count
from ctxwatch.model import MAX_COUNT, MAX_PLAUSIBLE_PROMPT, Issue, ParsedCall, Usage
from ctxwatch.source import show_value


def _bad_count(v: object) -> bool:
    """True for a value in a token-count field that is not a count: negative, beyond 2**53, or not an int at all
    (a reader passes such raw values through so that they are reported, not guessed)."""
    if v is None:
        return False
    return not isinstance(v, int) or isinstance(v, bool) or not 0 <= v < MAX_COUNT


#: How an issue names each usage field (the normalized :class:`Usage` field names are not the log's keys,
#: which differ by provider: ``prompt_tokens``, ``input_tokens``, ``promptTokenCount``...).
_USAGE_NAMES = {"prompt_total": "prompt tokens", "input_uncached": "uncached input tokens",
                "cache_read": "cache read tokens", "cache_write": "cache write tokens", "output": "output tokens",
                "reasoning": "reasoning tokens", "cache_write_1h": "1-hour cache write tokens",
                "web_searches": "web searches"}


def sanitize(pc: ParsedCall) -> tuple[ParsedCall, list[Issue]]:
    """``pc`` with its numbers made sane (negative, huge or non-integer counts, cache counts above the prompt
    they are part of, and output counts above the largest window the model can have,
    :func:`implausible_outputs`, made unknown) and the issues that say so; ``pc`` itself
    when nothing is wrong.  A call that needs mending is mended in a copy: a reader may give the same object
    again, as it read it."""
    pc, problems = _counts(pc)
    pc, beyond = implausible_outputs(pc)
    return pc, problems if beyond is None else [*problems, beyond]


def _counts(pc: ParsedCall) -> tuple[ParsedCall, list[Issue]]:
    """:func:`sanitize` but the bound on the output."""
    u = pc.usage
    null_output = "output tokens null (not a number)" if pc.provenance.output_null else None
    try:
        if null_output is None and (u is None or (all(v is None or (v.__class__ is int and 0 <= v < MAX_COUNT)
                                                      for v in (u.prompt_total, u.input_uncached, u.cache_read,
                                                                u.cache_write, u.output, u.reasoning,
                                                                u.cache_write_1h, u.web_searches))
                and (u.prompt_total is None or (u.cache_read or 0) + (u.cache_write or 0) <= u.prompt_total)
                and (u.cache_write_1h is None or u.cache_write_1h <= (u.cache_write or 0)))) \
                and (pc.window is None or (pc.window.__class__ is int and 0 < pc.window < MAX_COUNT)) \
                and (pc.max_output_tokens is None or (pc.max_output_tokens.__class__ is int
                                                      and 0 <= pc.max_output_tokens < MAX_COUNT)):
            return pc, []  # the common case, checked without building anything
    except TypeError:
        pass  # not a number: the field-by-field check below says what it is
    pc = replace(pc)
    bad: list[str] = [null_output] if null_output else []
    # (a value of the wrong JSON type makes the issue a bad line, invalid_field; a number that cannot be a count,
    # a note: see count_issue_kind)
    kinds: set[str] = {"invalid_field"} if null_output else set()
    wrong: dict[str, Any] = {}
    if pc.usage is not None:
        fields_ = {f: getattr(pc.usage, f) for f in ("prompt_total", "input_uncached", "cache_read", "cache_write",
                                                       "output", "reasoning", "cache_write_1h", "web_searches")}
        wrong = {f: v for f, v in fields_.items() if _bad_count(v)}
        if wrong:
            bad += [f"{_USAGE_NAMES[f]} {show_value(v)} ({not_a_count(v)})" for f, v in wrong.items()]
            kinds.update(count_issue_kind(v) for v in wrong.values())
            unknown: dict[str, Any] = dict.fromkeys(wrong)
            if pc.provider == "anthropic" and wrong.keys() & {"input_uncached", "cache_read", "cache_write"}:
                # Anthropic's prompt is the sum of these parts: with one of them damaged it is unknown too
                # (and the call cannot be priced), not a total that a negative part made smaller.
                unknown["prompt_total"] = None
            if wrong.keys() & {"cache_read", "cache_write"}:
                unknown["input_uncached"] = None  # (derived from them by the readers of OpenAI-style usage)
            # Every price term needs these fields: a damaged one leaves the cost unknown, never priced as 0.
            pc.usage = replace(pc.usage, **unknown, damaged=True)
        u = pc.usage
        cached = (u.cache_read or 0) + (u.cache_write or 0)
        if u.prompt_total is not None and cached > u.prompt_total:
            # Every provider's prompt total includes its cache reads and writes (Anthropic's is their sum), so
            # more cached tokens than the whole prompt is damage in one of them: the split is unknown, and so is
            # the cost.
            bad.append(f"cache reads and writes {cached:,} above the prompt's {u.prompt_total:,}")
            pc.usage = replace(u, input_uncached=None, cache_read=None, cache_write=None, cache_write_1h=None,
                               damaged=True)
        u = pc.usage
        if u.cache_write_1h is not None and "cache_write" not in wrong and u.cache_write_1h > (u.cache_write or 0):
            # The 1-hour writes are a share of the writes: more of them than writes is damage in one of the two,
            # so the rate each write is priced at is unknown.  (Writes that are damage themselves are unknown,
            # said above: no share of them can be judged.)
            bad.append(f"1-hour cache writes {u.cache_write_1h:,} above the cache writes' {u.cache_write or 0:,}")
            pc.usage = replace(u, cache_write_1h=None, damaged=True)
    if _bad_count(pc.window) or pc.window == 0:
        zero = pc.window.__class__ is int and pc.window == 0
        bad.append(f"context window {show_value(pc.window)} ({'zero' if zero else not_a_count(pc.window)})")
        kinds.add(count_issue_kind(pc.window))
        pc.window = None
    why = "treated as unknown"
    elsewhere: list[Issue] = []
    if _bad_count(pc.max_output_tokens):
        what = f"max output tokens {show_value(pc.max_output_tokens)} ({not_a_count(pc.max_output_tokens)})"
        if pc.provenance.input_path:
            # A joined batch call's request, which holds this value, is in its input file (ctxwatch.formats.batch
            # names it and the line in its provenance): the issue names that line, not the result's.
            elsewhere.append(Issue(pc.provenance.input_path, pc.provenance.input_line or 0,
                                   count_issue_kind(pc.max_output_tokens), f"{what}: {why}", pc.key))
        else:
            bad.append(what)
            kinds.add(count_issue_kind(pc.max_output_tokens))
        pc.max_output_tokens = None
    if not bad:
        return pc, elsewhere
    # (a response written over several lines names the line its usage was taken from)
    line = pc.provenance.usage_line or pc.source.line
    kind = "invalid_field" if "invalid_field" in kinds else "implausible_value"
    return pc, [Issue(pc.source.path, line, kind, f"{'; '.join(bad)}: {why}", pc.key), *elsewhere]


#: Largest output count (tokens) a call of a model whose window is unknown can have: the largest context
#: windows on offer, 10,000,000 tokens (Llama 4 Scout; :data:`ctxwatch.model.MAX_PLAUSIBLE_PROMPT`), since an
#: output never exceeds the window it shares with its prompt.
MAX_PLAUSIBLE_OUTPUT = MAX_PLAUSIBLE_PROMPT

#: Below this many output tokens no call is judged (no window lookup for most calls): the smallest context window
#: in the genai-prices catalogue, 512 tokens (embedding and prompt-guard models).
SMALLEST_WINDOW = 512

#: The fields judged whatever the prompt, and those judged only when the prompt is not reported.
_ALWAYS = ("output", "reasoning")
_WITHOUT_PROMPT = ("cache_read", "cache_write")


def _count(v: Any) -> int | None:
    """``v`` when it is a count (:func:`_bad_count` reports any other value), else ``None``."""
    return None if v is None or _bad_count(v) else v


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
    what = "; ".join(f"{_USAGE_NAMES[f]} {n:,}" for f, n in wrong.items())
    line = pc.provenance.usage_line or pc.source.line
    issue = Issue(pc.source.path, line, "implausible_value",
                  f"{what} (more than {words}, which a call's prompt and output share): treated as unknown",
                  pc.key)
    return replace(pc, usage=usage), issue
