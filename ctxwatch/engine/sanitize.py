"""A parsed call's numbers made sane before accounting: a count that is not a count is unknown, with an issue.

Readers pass a damaged usage field through as they found it, so that it is reported here, with its value, and
made unknown (``None``): never guessed, never a crash.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ctxwatch.engine.bounds import implausible_outputs
from ctxwatch.formats import not_a_count
from ctxwatch.model import MAX_COUNT, Issue, ParsedCall
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
    :func:`~ctxwatch.engine.bounds.implausible_outputs`, made unknown) and the issues that say so; ``pc`` itself
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
    if pc.usage is not None:
        fields_ = {f: getattr(pc.usage, f) for f in ("prompt_total", "input_uncached", "cache_read", "cache_write",
                                                       "output", "reasoning", "cache_write_1h", "web_searches")}
        wrong = {f: v for f, v in fields_.items() if _bad_count(v)}
        if wrong:
            bad += [f"{_USAGE_NAMES[f]} {show_value(v)} ({not_a_count(v)})" for f, v in wrong.items()]
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
        if u.cache_write_1h is not None and u.cache_write_1h > (u.cache_write or 0):
            # The 1-hour writes are a share of the writes: more of them than writes is damage in one of the two,
            # so the rate each write is priced at is unknown.
            bad.append(f"1-hour cache writes {u.cache_write_1h:,} above the cache writes' {u.cache_write or 0:,}")
            pc.usage = replace(u, cache_write_1h=None, damaged=True)
    if _bad_count(pc.window) or pc.window == 0:
        zero = pc.window.__class__ is int and pc.window == 0
        bad.append(f"context window {show_value(pc.window)} ({'zero' if zero else not_a_count(pc.window)})")
        pc.window = None
    why = "treated as unknown"
    elsewhere: list[Issue] = []
    if _bad_count(pc.max_output_tokens):
        what = f"max output tokens {show_value(pc.max_output_tokens)} ({not_a_count(pc.max_output_tokens)})"
        if pc.provenance.input_path:
            # A joined batch call's request, which holds this value, is in its input file (ctxwatch.formats.batch
            # names it and the line in its provenance): the issue names that line, not the result's.
            elsewhere.append(Issue(pc.provenance.input_path, pc.provenance.input_line or 0, "implausible_value",
                                   f"{what}: {why}", pc.key))
        else:
            bad.append(what)
        pc.max_output_tokens = None
    if not bad:
        return pc, elsewhere
    # (a response written over several lines names the line its usage was taken from)
    line = pc.provenance.usage_line or pc.source.line
    return pc, [Issue(pc.source.path, line, "implausible_value", f"{'; '.join(bad)}: {why}", pc.key), *elsewhere]
