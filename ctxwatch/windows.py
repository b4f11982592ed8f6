"""Context windows and prices from the ``genai-prices`` catalogue (its bundled snapshot; offline).

ctxwatch never calls ``genai_prices.update_prices``: the snapshot that ships with the package is used, so
nothing touches the network.  A model the catalogue does not know has an unknown window and an unknown
cost (never a made-up default, never $0).
"""

from __future__ import annotations

import functools
from decimal import Decimal

from ctxwatch.model import Src, Usage


@functools.lru_cache(maxsize=512)
def catalog_window(model: str | None, provider: str | None = None) -> int | None:
    """The model's context window in tokens per genai-prices, or ``None`` when unknown.

    Args:
        model: model id as logged (snapshots and aliases are matched by the catalogue's own rules).
        provider: ``openai`` | ``anthropic`` | ``google`` hint, or ``None``.
    """
    if not model:
        return None
    try:
        from genai_prices import data_snapshot

        snap = data_snapshot.get_snapshot()
        pid = {"google": "google"}.get(provider or "", provider)
        try:
            _, info = snap.find_provider_model(model, None, pid, None)
        except LookupError:
            _, info = snap.find_provider_model(model.rsplit("/", 1)[-1], None, None, None)
        cw = getattr(info, "context_window", None)
        return int(cw) if cw else None
    except Exception:
        return None


def resolve_window(model: str | None, provider: str | None, log_window: int | None,
                   option_window: int | None) -> tuple[int | None, Src]:
    """Pick a call's context window and say where it came from.

    Order: the log's own statement, then the ``--window`` option / config, then the catalogue.  (The log
    wins because it reflects the deployment actually used, e.g. Codex's ``model_context_window``.)

    Returns:
        ``(tokens or None, Src.LOG | Src.OPTION | Src.CATALOG | Src.UNKNOWN)``.
    """
    if log_window:
        return log_window, Src.LOG
    if option_window:
        return option_window, Src.OPTION
    cw = catalog_window(model, provider)
    if cw:
        return cw, Src.CATALOG
    return None, Src.UNKNOWN


def call_cost(model: str | None, provider: str | None, usage: Usage | None) -> Decimal | None:
    """Estimated cost in USD of one call from its reported usage, or ``None`` when it cannot be priced.

    Cache reads and writes are priced as the provider prices them (genai-prices' ``cache_read_tokens`` /
    ``cache_write_tokens``; its ``input_tokens`` includes both).  Unknown model or usage -> ``None``.
    """
    if not model or usage is None or usage.prompt_total is None:
        return None
    try:
        import genai_prices

        u = genai_prices.Usage(
            input_tokens=usage.prompt_total,
            cache_read_tokens=usage.cache_read or None,
            cache_write_tokens=usage.cache_write or None,
            output_tokens=usage.output or 0,
        )
        try:
            return genai_prices.calc_price(u, model, provider_id=provider).total_price
        except LookupError:
            return genai_prices.calc_price(u, model).total_price
    except Exception:
        return None
