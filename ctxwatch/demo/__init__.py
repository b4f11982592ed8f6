"""The synthetic agent run behind ``ctxwatch demo``: a deterministic story of a context window filling up.

A coding agent (``gpt-4o``) fixes a rounding bug in a made-up invoicing package; its client logs every call in
ctxwatch's canonical format, written here from a seeded :class:`random.Random` (nothing is copied from real
logs).  The story is told in :mod:`~ctxwatch.demo.story`; the ``demo`` command that plays it live is
:mod:`ctxwatch.cli.demo`.

**Window.**  Each record carries ``"window": 32000`` (:data:`DEMO_WINDOW`), a made-up deployment limit smaller
than gpt-4o's real 128,000 tokens, so that the story plays out in about 60 calls and the file stays a few MB.

**Usage.**  The ``usage`` block is what this synthetic provider reports: counted with ctxwatch's own tokenizer
and framing (tiktoken ``o200k_base``), so the estimate and the report agree exactly.
"""

from __future__ import annotations

from ctxwatch.demo.client import CACHE_BLOCK_TOKENS, CACHE_MIN_TOKENS
from ctxwatch.demo.prompt import FOLLOW_UP, TASK, system_prompt, tool_schemas
from ctxwatch.demo.story import (
    BIG_FIXTURE,
    DEFAULT_CALLS,
    DEFAULT_SEED,
    DEMO_MODEL,
    DEMO_WINDOW,
    EVICT_FRACTION,
    JSON_KEYS,
    MAX_TOKENS_DIVISOR,
    MIN_STORY_CALLS,
    RESOLVED_MODEL,
    START_EPOCH,
    generate_run,
    iso_utc,
)
from ctxwatch.demo.writer import DEFAULT_SPEED, paced_records, write_run

__all__ = [
    "BIG_FIXTURE",
    "CACHE_BLOCK_TOKENS",
    "CACHE_MIN_TOKENS",
    "DEFAULT_CALLS",
    "DEFAULT_SEED",
    "DEFAULT_SPEED",
    "DEMO_MODEL",
    "DEMO_WINDOW",
    "EVICT_FRACTION",
    "FOLLOW_UP",
    "JSON_KEYS",
    "MAX_TOKENS_DIVISOR",
    "MIN_STORY_CALLS",
    "RESOLVED_MODEL",
    "START_EPOCH",
    "TASK",
    "generate_run",
    "iso_utc",
    "paced_records",
    "system_prompt",
    "tool_schemas",
    "write_run",
]
