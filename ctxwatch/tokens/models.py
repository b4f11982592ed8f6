"""Which encoding counts a model's tokens: tiktoken's own model table, then a prefix table for ids it misses.

Only OpenAI models have a public tokenizer; every other model is counted with ``o200k_base`` and its counts are
labelled estimates.
"""

from __future__ import annotations

from ctxwatch.tokens.encodings import SPECS

# Longest-prefix fallback for ids tiktoken's own table misses (bare aliases, newer families).
# Checked longest first so that "gpt-4.1" never falls into "gpt-4".
_EXTRA_PREFIXES: dict[str, str] = {
    "ft:gpt-4o": "o200k_base",
    "gpt-4.5": "o200k_base",
    "gpt-4.1": "o200k_base",
    "gpt-4o": "o200k_base",
    "chatgpt-4o": "o200k_base",
    "gpt-5": "o200k_base",
    "codex-": "o200k_base",
    "o1": "o200k_base",
    "o3": "o200k_base",
    "o4": "o200k_base",
    "gpt-4": "cl100k_base",
    "gpt-3.5": "cl100k_base",
    "gpt-35": "cl100k_base",
}

#: The encoding of every model without a public tokenizer of its own (and of the newest OpenAI models).
DEFAULT_ENCODING = "o200k_base"


def encoding_name_for_model(model: str | None) -> tuple[str, bool]:
    """Pick the encoding for a model id.

    Args:
        model: the model id as logged (``None`` allowed).

    Returns:
        ``(encoding_name, exact)``: ``exact`` is True only when the encoding is the model's own (an OpenAI
        model known to tiktoken or to the prefix table above). Unknown and non-OpenAI models get
        ``("o200k_base", False)``: their own tokenizers are not public, so counts are estimates.
    """
    if not model:
        return "o200k_base", False
    name = model.strip()
    # Provider-qualified ids such as "openai/gpt-4o" or "azure/gpt-4o".
    base = name.rsplit("/", 1)[-1]
    try:
        import tiktoken.model

        enc = tiktoken.model.encoding_name_for_model(base)
    except Exception:
        enc = None
        for prefix in sorted(_EXTRA_PREFIXES, key=len, reverse=True):
            if base.startswith(prefix):
                enc = _EXTRA_PREFIXES[prefix]
                break
    if enc == "o200k_harmony":
        # Same ranks as o200k_base for ordinary text; only special tokens differ.
        return "o200k_base", False
    if enc in SPECS:
        return enc, True
    return "o200k_base", False
