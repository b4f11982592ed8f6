"""Context windows from the providers' own documentation, for the catalogue entries genai-prices gets wrong or
lists without a window.

genai-prices states a model's ``context_window`` as the provider's headline figure.  For some models that figure
is the input and the output together (OpenAI's GPT-5 models: 400K, of which at most 272K can be input), for
others the catalogue is behind the provider (DeepSeek's chat models), and for some it has no window at all
(Gemini 2.5 Pro).  This table holds the documented input limit of those entries only, each with the page it
comes from; :func:`documented_window` is used only where the table names the entry, and
``tests/test_documented_windows.py`` checks every row against the installed catalogue: a row whose catalogue
figure changed (genai-prices caught up) fails the test and is to be removed.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from ctxwatch.catalog.entries import priced_as


@dataclass(frozen=True, slots=True)
class DocumentedWindow:
    """One row: a genai-prices catalogue entry and the input limit its provider documents.

    Attributes:
        provider: the catalogue's provider id (``openai``, ``google``, ``deepseek``).
        model: the catalogue's model id of the entry (what "priced as" names).
        window: the most prompt tokens a request may hold, per the provider (tokens).
        catalog: what genai-prices states for the entry (tokens; ``None``: no window), the figure this row
            replaces.
        why: ``total includes output`` (the catalogue's figure adds the output ceiling to the input limit),
            ``missing`` (no window in the catalogue) or ``outdated`` (the provider documents another figure).
        url: the provider's page the window comes from.
    """

    provider: str
    model: str
    window: int
    catalog: int | None
    why: str
    url: str


# OpenAI, "Introducing GPT-5 for developers": "the API ... accepts up to 272,000 input tokens and emits up to
# 128,000 reasoning & output tokens, for a total context length of 400,000 tokens" (every GPT-5 API model).
_GPT5_DEV = "https://openai.com/index/introducing-gpt-5-for-developers/"
_GEMINI = "https://ai.google.dev/gemini-api/docs/models"
_DEEPSEEK = "https://api-docs.deepseek.com/quick_start/pricing"

#: The table.  Windows are input limits: what a request's prompt may hold.
DOCUMENTED_WINDOWS: tuple[DocumentedWindow, ...] = (
    DocumentedWindow("openai", "gpt-5", 272_000, 400_000, "total includes output", _GPT5_DEV),
    DocumentedWindow("openai", "gpt-5-mini", 272_000, 400_000, "total includes output", _GPT5_DEV),
    DocumentedWindow("openai", "gpt-5-nano", 272_000, 400_000, "total includes output", _GPT5_DEV),
    # (GPT-5.1's model page: 400,000 context window, 128,000 max output tokens, the GPT-5 split)
    DocumentedWindow("openai", "gpt-5.1", 272_000, 400_000, "total includes output",
                     "https://platform.openai.com/docs/models/gpt-5.1"),
    # Gemini API "Models": input token limit 1,048,576 (output 65,536) for Gemini 2.5 Pro, the 2.5 Flash
    # previews and Gemini 3 Pro Preview.
    DocumentedWindow("google", "gemini-2.5-pro", 1_048_576, None, "missing", f"{_GEMINI}#gemini-2.5-pro"),
    DocumentedWindow("google", "gemini-2.5-flash-preview", 1_048_576, None, "missing",
                     f"{_GEMINI}#gemini-2.5-flash"),
    DocumentedWindow("google", "gemini-3-pro-preview", 1_048_576, None, "missing", f"{_GEMINI}#gemini-3-pro"),
    # DeepSeek "Models & Pricing": deepseek-chat and deepseek-reasoner (DeepSeek-V3.x), context length 128K.
    DocumentedWindow("deepseek", "deepseek-chat", 128_000, 64_000, "outdated", _DEEPSEEK),
    DocumentedWindow("deepseek", "deepseek-reasoner", 128_000, 64_000, "outdated", _DEEPSEEK),
)

_BY_ENTRY = {(row.provider, row.model): row for row in DOCUMENTED_WINDOWS}


@functools.lru_cache(maxsize=512)
def documented_window(model: str | None, provider: str | None) -> DocumentedWindow | None:
    """The table's row for the catalogue entry a model id matches (:func:`~ctxwatch.catalog.entries.priced_as`:
    ``gpt-5-2025-08-07`` and ``openai/gpt-5`` are the ``gpt-5`` entry), or ``None`` when the table has none."""
    entry = priced_as(model, provider)
    return _BY_ENTRY.get(entry) if entry is not None else None


def output_apart(model: str | None, provider: str | None) -> bool:
    """True when the model's documented window is an input limit beside the output's own room (the
    catalogue's figure is input and output together): a completion takes nothing from the prompt's window."""
    row = documented_window(model, provider)
    return row is not None and row.why == "total includes output"


def window_note(model: str | None, provider: str | None) -> str | None:
    """What a documented window is and where it comes from, for the report: ``"input limit 272,000 (the
    catalogue's 400,000 includes the output): <url>"``; ``None`` when the model's window is not from the table."""
    row = documented_window(model, provider)
    if row is None:
        return None
    if row.why == "total includes output":
        what = f"input limit {row.window:,} (the catalogue's {row.catalog:,} includes the output)"
    elif row.why == "missing":
        what = f"input limit {row.window:,} (the catalogue lists no window)"
    else:
        what = f"input limit {row.window:,} (the catalogue lists {row.catalog:,})"
    return f"{what}: {row.url}"
