"""LiteLLM's usage: OpenAI's shape, with Anthropic's cache counts beside it for Claude models.

LiteLLM (the proxy and SDK that OpenHands, SWE-agent and many loggers call models through) reports every model's
usage as ``prompt_tokens`` / ``completion_tokens``; for Anthropic models it adds ``cache_read_input_tokens`` and
``cache_creation_input_tokens``, whose relation to ``prompt_tokens`` changed between releases.
"""

from __future__ import annotations

from typing import Any

from ctxwatch.formats.wire.openai import openai_usage
from ctxwatch.formats.wire.values import int_or_none, odd_usage
from ctxwatch.model import Usage

#: LiteLLM's own cache counts, kept beside its OpenAI-shaped usage for Anthropic models.
LITELLM_CACHE_KEYS = ("cache_read_input_tokens", "cache_creation_input_tokens")


def litellm_usage_note(u: Any) -> tuple[Usage | None, str | None]:
    """Normalize LiteLLM's OpenAI-shaped usage (``prompt_tokens``, ``completion_tokens``, ``prompt_tokens_details.
    cached_tokens``, and for Anthropic models ``cache_read_input_tokens`` / ``cache_creation_input_tokens`` beside
    them), with a sentence when the fields are ambiguous (else ``None``).  All values in tokens.

    ``prompt_tokens`` is the whole prompt, cache reads (``prompt_tokens_details.cached_tokens`` or
    ``cache_read_input_tokens``) and writes (``cache_creation_input_tokens``) included.  Sources: LiteLLM's
    "Prompt Caching" docs (litellm.vercel.app/docs/completion/prompt_caching: "prompt_tokens: These are all
    prompt tokens including cache-miss and cache-hit input tokens", ``cache_creation_input_tokens`` added for
    Anthropic), and an OpenHands trajectory logged through LiteLLM (call 2's prompt 4,646 = call 1's 3,486 +
    its 1,135 output + the observation, which holds only if the 3,482 cache-write tokens are inside 3,486).
    Older LiteLLM releases left cache writes out of ``prompt_tokens``: when reads + writes exceed
    ``prompt_tokens`` (and the reads alone do not) the writes are added; but a ``prompt_tokens`` that holds only
    the uncached input (Anthropic's own convention) fits those numbers too, with a larger prompt, so the
    sentence says so and gives both.  Reads alone above ``prompt_tokens`` are left for
    :func:`ctxwatch.engine.sanitize.sanitize` to report as damage.
    """
    if not isinstance(u, dict):
        odd_usage(u)
        return None, None
    base = openai_usage(u)
    if base is None:
        return None, None
    cr = base.cache_read if base.cache_read is not None else int_or_none(u.get("cache_read_input_tokens"))
    if cr is None:
        cr = int_or_none(u.get("cache_read_tokens"))
    cw = int_or_none(u.get("cache_creation_input_tokens"))
    if cw is None:
        cw = int_or_none(u.get("cache_write_tokens"))
    prompt = base.prompt_total
    note = None
    uncached = None
    # (a value that is not a count is passed on for the sanitizer to report; no arithmetic on it)
    if prompt.__class__ is int and all(x is None or x.__class__ is int for x in (cr, cw)):
        p, r, w = int(prompt or 0), int(cr or 0), int(cw or 0)
        if r + w > p:
            if r <= p:
                note = (f"usage.prompt_tokens {p:,} is below its cache reads {r:,} + writes {w:,}, which LiteLLM "
                        f"counts inside it: read as a release that left the writes out (prompt {p + w:,}); if "
                        f"prompt_tokens is only the uncached input (Anthropic's convention) the prompt is "
                        f"{p + r + w:,}")
            p += w
        prompt, uncached = p, p - r - w
    return Usage(prompt_total=prompt, input_uncached=uncached, cache_read=cr, cache_write=cw,
                 output=base.output, reasoning=base.reasoning), note


def litellm_usage(u: Any) -> Usage | None:
    """:func:`litellm_usage_note` without the sentence (tokens)."""
    return litellm_usage_note(u)[0]
