"""Prices and cost of a call from its reported usage, with genai-prices' bundled catalogue (offline).

genai-prices costs about a millisecond per price, so a run of 100,000 calls would spend minutes pricing: the
per-token rates of each price region (a tier, a day) are read off a few library probes once, memoised across
starts (:mod:`ctxwatch.catalog.memo`), and applied to every call.
"""

from __future__ import annotations

import functools
from datetime import UTC, date, datetime
from decimal import Decimal

from ctxwatch.catalog import memo
from ctxwatch.catalog.entries import catalog_entry, model_info
from ctxwatch.model import MAX_COUNT, Usage


def _lib_price(model: str, provider: str | None, prompt: int, cache_read: int, cache_write: int,
               output: int, when: datetime | None = None, cache_write_1h: int = 0, web_searches: int = 0,
               tier: str | None = None) -> Decimal:
    """Price one usage with genai-prices (``input_tokens`` includes cache reads and writes there,
    ``cache_write_1h_tokens`` is the 1-hour share of the writes, ``web_searches`` a count of searches), at the
    catalogue entry :func:`~ctxwatch.catalog.entries.catalog_entry` finds; ``LookupError`` when there is none.

    ``when`` is the request time: prices change over time (genai-prices' date-conditional prices).  ``tier`` is
    the service tier that served the call (genai-prices' ``service_tier`` price variants: OpenAI's flex,
    priority...); ``None`` prices at the standard rates.
    """
    import genai_prices

    entry = catalog_entry(model, provider)
    if entry is None:
        raise LookupError(f"genai-prices does not know {model!r}")
    ref, pid, _ = entry
    u = genai_prices.Usage(input_tokens=prompt, cache_read_tokens=cache_read or None,
                           cache_write_tokens=cache_write or None, output_tokens=output,
                           cache_write_1h_tokens=cache_write_1h or None, web_searches=web_searches or None)
    return genai_prices.calc_price(u, ref, provider_id=pid, genai_request_timestamp=when,
                                   price_context={"service_tier": tier} if tier else None).total_price


@functools.lru_cache(maxsize=256)
def _tier_starts(model: str, provider: str | None) -> tuple[int, ...] | None:
    """Input-token thresholds where a model's prices change (``(0,)`` for flat prices), or ``None``.

    genai-prices' tiers are "cliff" tiers: crossing a threshold applies the tier's rate to all tokens of
    the request, so within two thresholds the price is linear in each token class.  Thresholds of every
    date-conditional price variant are collected (a superset is harmless: it only adds probes).
    """
    key = f"tiers\x00{model}\x00{provider}"
    found, value = memo.get(key)
    if found and (value is None or (isinstance(value, list) and value and value[0] == 0 and all(
            type(x) is int and 0 <= x < MAX_COUNT for x in value) and value == sorted(set(value)))):
        return tuple(value) if value is not None else None
    result = _tier_starts_lib(model, provider)
    memo.put(key, list(result) if result is not None else None)
    return result


def _tier_starts_lib(model: str, provider: str | None) -> tuple[int, ...] | None:
    info = model_info(model, provider)
    if info is None:
        return None
    try:
        from genai_prices.types import TieredPrices

        variants = info.prices if isinstance(info.prices, list) else [info.prices]
        starts = {0}
        for v in variants:
            mp = getattr(v, "prices", v)
            for value in vars(mp).values():
                if isinstance(value, TieredPrices):
                    starts.update(int(t.start) for t in value.tiers)
        return tuple(sorted(starts))
    except Exception:
        return None


@functools.lru_cache(maxsize=4096)
def _rates(model: str, provider: str | None, day: date | None, start: int, tier: str | None = None
           ) -> tuple[Decimal, Decimal, Decimal, Decimal, Decimal] | None:
    """Per-token USD rates (uncached input, cache read, cache write, output, 1-hour cache write) of one price
    region.

    genai-prices' ``calc_price`` costs about a millisecond per call, so a run of 100,000 calls would spend
    minutes pricing.  Within one tier region and one day the price is linear in each token class, so the
    rates are read off five library probes of ``n`` tokens (``n`` = the region's first token count: a tier
    applies above its start) and reused; ``tier``: the service tier's rates (:func:`_lib_price`).  Returns
    ``None`` when the library cannot price the model.
    """
    # No date means today's prices, so the memo keys it on today's date, never on "no date".
    key = f"rates\x00{model}\x00{provider}\x00{(day or datetime.now(UTC).date()).isoformat()}\x00{start}"
    if tier:
        key += f"\x00{tier}"
    found, value = memo.get(key)
    if found:
        if value is None:
            return None
        try:
            # (an entry of four rates, an older layout without the 1-hour cache write, is asked again)
            if not (isinstance(value, list) and len(value) == 5 and all(isinstance(x, str) for x in value)):
                raise ValueError(value)
            a, b, c, d, e = (Decimal(x) for x in value)
            if all(r.is_finite() and r >= 0 for r in (a, b, c, d, e)):
                return a, b, c, d, e
        except Exception:
            pass  # damaged entry (not four numbers, NaN, signalling NaN): ask the library again
    result = _rates_lib(model, provider, day, start, tier)
    memo.put(key, [str(x) for x in result] if result is not None else None)
    return result


def _rates_lib(model: str, provider: str | None, day: date | None, start: int, tier: str | None = None
               ) -> tuple[Decimal, Decimal, Decimal, Decimal, Decimal] | None:
    n = start + 1
    when = datetime(day.year, day.month, day.day, 12, tzinfo=UTC) if day else None
    try:
        base = _lib_price(model, provider, n, 0, 0, 0, when, tier=tier)
        cr = _lib_price(model, provider, n, n, 0, 0, when, tier=tier)
        cw = _lib_price(model, provider, n, 0, n, 0, when, tier=tier)
        out = _lib_price(model, provider, n, 0, 0, n, when, tier=tier) - base
        cw1h = _lib_price(model, provider, n, 0, n, 0, when, cache_write_1h=n, tier=tier)
    except Exception:
        return None
    return base / n, cr / n, cw / n, out / n, cw1h / n


@functools.lru_cache(maxsize=4096)
def _utc_day(days: int) -> date | None:
    """The UTC date ``days`` days after 1970-01-01 (``None`` out of range); cached: a run spans few days."""
    try:
        return date.fromordinal(_EPOCH_ORDINAL + days)
    except (OverflowError, ValueError):
        return None


_EPOCH_ORDINAL = date(1970, 1, 1).toordinal()


#: Batch APIs bill every token class at half the standard rate: OpenAI Batch API ("50% cost discount"),
#: Anthropic Message Batches ("charged at 50% of the standard API prices"; cache multipliers stack with it),
#: Gemini Batch Mode and Vertex AI batch prediction (50 % of the standard cost).  genai-prices models this
#: only for Anthropic models from 2026-10-14 on, as exactly half of each standard rate.
BATCH_DISCOUNT = Decimal("0.5")


def call_cost(model: str | None, provider: str | None, usage: Usage | None,
              timestamp: float | None = None, *, batch: bool = False) -> Decimal | None:
    """Estimated cost in USD of one call from its reported usage, or ``None`` when it cannot be priced.

    Cache reads and writes are priced as the provider prices them (genai-prices' ``cache_read_tokens`` /
    ``cache_write_tokens`` / ``cache_write_1h_tokens``; its ``input_tokens`` includes them), at the prices in
    force on the call's day (``timestamp``, epoch seconds; today when unknown), in the call's tier of prompt
    size, at the rates of the service tier that served it (``usage.service_tier``: OpenAI's flex and priority
    rates, genai-prices' price variants).  ``batch``:
    the call ran through a provider's batch API (a batch results line), billed at :data:`BATCH_DISCOUNT` of
    the standard price.  Unknown model or usage, a damaged usage block (``Usage.damaged``: a part is unknown)
    or a prompt of 0 or less (no request has one: implausible) -> ``None``; so does an unknown output count (a
    log's ``output_tokens: null``): pricing it as 0 would pass the prompt's cost for the call's.
    """
    if not model or usage is None or usage.prompt_total is None or usage.damaged or usage.prompt_total <= 0 \
            or usage.output is None:
        return None
    starts = _tier_starts(model, provider)
    if starts is None:
        return None
    prompt, cr, cw, out = usage.prompt_total, usage.cache_read or 0, usage.cache_write or 0, usage.output or 0
    day = None
    if timestamp is not None:
        try:
            day = _utc_day(int(timestamp // 86400))
        except (OverflowError, ValueError, TypeError):  # inf, nan: priced as today
            day = None
    start = max(s for s in starts if s < prompt or s == 0)
    # (a tier name is log text: only a short printable one is a price variant's key, others price as standard)
    tier = usage.service_tier if usage.service_tier and len(usage.service_tier) <= 32 \
        and usage.service_tier.isprintable() else None
    rates = _tier_rates(model, provider, day, start, tier) if tier else _rates(model, provider, day, start)
    if rates is None:
        return None
    r_in, r_cr, r_cw, r_out, r_cw1h = rates
    uncached = max(0, prompt - cr - cw)
    cw1h = min(usage.cache_write_1h or 0, cw)  # (the 1-hour share of the writes, priced at its own rate)
    cost = uncached * r_in + cr * r_cr + (cw - cw1h) * r_cw + cw1h * r_cw1h + out * r_out
    if usage.web_searches:
        per_search = _search_rate(model, provider, day)
        if per_search is None:
            return None  # (a fee the catalogue cannot price: the cost is unknown, not the tokens alone)
        cost += usage.web_searches * per_search
    return cost * BATCH_DISCOUNT if batch else cost


def _tier_rates(model: str, provider: str | None, day: date | None, start: int, tier: str
                ) -> tuple[Decimal, Decimal, Decimal, Decimal, Decimal] | None:
    """The per-token rates of a service tier on a day (:func:`_rates`).  genai-prices dates its tier prices from
    the day it verified them, and models no tier before it: on an earlier day, where the tier prices as the
    standard, each token class gets the standard rate of the day times today's ratio of the tier's rate to the
    standard one (OpenAI has priced Flex at half the standard rates since it launched).  A tier the catalogue has
    no price for keeps the standard rates."""
    std, rates = _rates(model, provider, day, start), _rates(model, provider, day, start, tier)
    if std is None or rates is None or rates != std or day is None:
        return rates
    std_now, now = _rates(model, provider, None, start), _rates(model, provider, None, start, tier)
    if std_now is None or now is None or now == std_now:
        return rates
    a, b, c, d, e = (r * (t / n) if n else r for r, t, n in zip(std, now, std_now, strict=True))
    return a, b, c, d, e


def _search_rate(model: str, provider: str | None, day: date | None) -> Decimal | None:
    """USD per server-side web search for a model on a day (genai-prices' ``web_searches`` price, per 1,000
    searches), read off one library probe and memoised like the token rates; ``None`` when the catalogue has no
    such price or cannot price the model."""
    key = f"search\x00{model}\x00{provider}\x00{(day or datetime.now(UTC).date()).isoformat()}"
    found, value = memo.get(key)
    if found:
        try:
            rate = Decimal(value) if isinstance(value, str) else None
            if rate is None or (rate.is_finite() and rate > 0):
                return rate
        except Exception:
            pass  # a damaged entry: ask the library again
    when = datetime(day.year, day.month, day.day, 12, tzinfo=UTC) if day else None
    try:
        fee = _lib_price(model, provider, 1, 0, 0, 0, when, web_searches=1000) \
            - _lib_price(model, provider, 1, 0, 0, 0, when)
    except Exception:
        fee = Decimal(0)
    result = fee / 1000 if fee > 0 else None
    memo.put(key, str(result) if result is not None else None)
    return result
