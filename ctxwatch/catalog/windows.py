"""Context windows: the catalogue's, the log's or the user's, and Anthropic's long-context rules.

One rule (:func:`resolve_window`) for the accountant and the readers that judge a reported prompt against the
window (the Claude Code reader's implausible-usage note).  The catalogue's lookups and the call cost are
re-exported here for callers that import them from this module.
"""

from __future__ import annotations

import functools

from ctxwatch.catalog.documented import documented_window
from ctxwatch.catalog.entries import base_model, catalog_window, priced_as
from ctxwatch.catalog.prices import BATCH_DISCOUNT, call_cost
from ctxwatch.model import Src

__all__ = [
    "ANTHROPIC_LONG_CONTEXT_MODELS",
    "ANTHROPIC_LONG_CONTEXT_WINDOW",
    "ANTHROPIC_STANDARD_WINDOW",
    "BATCH_DISCOUNT",
    "call_cost",
    "catalog_window",
    "has_long_context",
    "largest_window",
    "priced_as",
    "proves_long_context",
    "resolve_window",
]

#: Anthropic's standard context window for Claude models (Anthropic docs, "Context windows": 200K tokens;
#: 1M only as a beta behind the ``context-1m`` header).
ANTHROPIC_STANDARD_WINDOW = 200_000
#: The long-context beta window (Anthropic docs, "Context windows": 1M tokens for Claude Sonnet 4 / 4.5 with the
#: ``context-1m-2025-08-07`` header).  genai-prices lists those models at 200k.
ANTHROPIC_LONG_CONTEXT_WINDOW = 1_000_000
#: Model ids (prefixes) that offer that beta, per the same page: Claude Sonnet 4 and Sonnet 4.5 (their dated
#: snapshots and aliases), which genai-prices lists at 200k.  Models the catalogue lists above 200k (Claude Opus
#: 4.6, Sonnet 4.6: "1M tokens" on Anthropic's model pages, with the same beta) offer it too
#: (:func:`has_long_context`).  Other Claude models have no window above 200k: a larger prompt stays implausible.
ANTHROPIC_LONG_CONTEXT_MODELS = ("claude-sonnet-4",)


@functools.lru_cache(maxsize=512)  # (asked for every call of a Claude Code folder)
def has_long_context(model: str | None, provider: str | None = "anthropic") -> bool:
    """True for a Claude model that offers the 1M-token beta window: one of
    :data:`ANTHROPIC_LONG_CONTEXT_MODELS` (a cloud's or a proxy's spelling of the id is read as the base model,
    :func:`~ctxwatch.catalog.entries.base_model`), or a Claude model the catalogue lists with a window above 200k
    (its 1M beta window)."""
    name = base_model(model or "")
    if name.startswith(ANTHROPIC_LONG_CONTEXT_MODELS):
        return True
    return name.startswith("claude") and (catalog_window(model, provider) or 0) > ANTHROPIC_STANDARD_WINDOW


def proves_long_context(reported: object, model: str | None, provider: str | None) -> bool:
    """True when a call's reported prompt (``reported``, tokens) means the 1M-token beta window: a whole count
    past the standard 200k (:data:`ANTHROPIC_STANDARD_WINDOW`) and within the beta's 1M
    (:data:`ANTHROPIC_LONG_CONTEXT_WINDOW`; more is implausible, no evidence), of a model that offers the beta
    (:func:`has_long_context`).  From such a call on, its context's calls resolve with ``long_context``
    (:func:`resolve_window`): the one rule of the accountant's windows and of the Claude Code reader's
    ``implausible_usage`` note, so that the two name the same window."""
    return reported.__class__ is int and ANTHROPIC_STANDARD_WINDOW < reported <= ANTHROPIC_LONG_CONTEXT_WINDOW \
        and has_long_context(model, provider)


def resolve_window(model: str | None, provider: str | None, log_window: int | None,
                   option_window: int | None, *, long_context: bool = False) -> tuple[int | None, Src]:
    """Pick a call's context window and say where it came from.

    Order: the log's own statement, then the ``--window`` option / config (unless it is the window the model
    has without it: then that window's own source), then the provider's documented input
    limit where genai-prices lacks it or states it wrong (:mod:`ctxwatch.catalog.documented`, labelled
    ``documented``), then the catalogue.  (The log wins because it reflects the deployment actually used, e.g.
    Codex's ``model_context_window``.)  A Claude
    model gets the standard 200k where the catalogue lists the 1M-token beta window (labelled ``default``: the
    200k is Anthropic's window without the beta header, not the catalogue's figure), unless ``long_context`` for
    a model that offers the beta (:func:`has_long_context`): a reported prompt of its context went past 200k,
    which only the beta allows, so the window is the beta's 1M (:data:`ANTHROPIC_LONG_CONTEXT_WINDOW`, labelled
    inferred).

    Returns:
        ``(tokens or None, Src.LOG | Src.OPTION | Src.DOCUMENTED | Src.CATALOG | Src.DEFAULT | Src.INFERRED |
        Src.UNKNOWN)``.
    """
    if log_window:
        return log_window, Src.LOG
    if option_window:
        # (the window the model has anyway is no what-if: the call keeps its source, and so its harness's rules,
        # as plan's --window of the call's own window does)
        own = resolve_window(model, provider, None, None, long_context=long_context)
        return own if own[0] == option_window else (option_window, Src.OPTION)
    documented = documented_window(model, provider)
    if documented is not None:
        return documented.window, Src.DOCUMENTED
    cw = catalog_window(model, provider)
    claude = provider == "anthropic" or (model or "").startswith("claude")
    if long_context and has_long_context(model, provider) and (cw or 0) <= ANTHROPIC_LONG_CONTEXT_WINDOW:
        return ANTHROPIC_LONG_CONTEXT_WINDOW, Src.INFERRED
    if cw:
        if claude and cw > ANTHROPIC_STANDARD_WINDOW:
            # The catalogue lists the 1M-token beta window; requests get it only with the context-1m beta
            # header, and Claude Code runs at 200k (its compaction fires near 170k in the real samples).
            return ANTHROPIC_STANDARD_WINDOW, Src.DEFAULT
        return cw, Src.CATALOG
    return None, Src.UNKNOWN


@functools.lru_cache(maxsize=512)  # (asked for every call of a Claude Code folder)
def largest_window(model: str | None, provider: str | None, log_window: int | None = None) -> int | None:
    """The largest window a call of ``model`` can have, in tokens (``None`` when unknown): the log's own
    statement, else the model's window as :func:`resolve_window` gives it with the 1M-token beta where the model
    offers it (a prompt past 200k of such a model means the beta).  A reader that must pick a call to infer a
    context's floor from, before any window is resolved, judges the call's reported prompt against it: a
    prompt above it is implausible (:func:`ctxwatch.model.implausible_prompt`), as the
    accountant judges it then.  No ``--window`` option: a window the user sets makes no report implausible."""
    return resolve_window(model, provider, log_window, None, long_context=True)[0]
