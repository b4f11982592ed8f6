"""Context windows and prices from the ``genai-prices`` catalogue (its bundled snapshot; offline).

ctxwatch never calls ``genai_prices.update_prices``: the snapshot that ships with the package is used, so
nothing touches the network.  A model the catalogue does not know has an unknown window and an unknown
cost (never a made-up default, never $0).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import hashlib
import importlib.util
import os
import re
import stat
import threading
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

import orjson

from ctxwatch.model import Src, Usage

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


# --- a start-up memo of catalogue answers ----------------------------------------------------------------
# Importing genai-prices and building its snapshot costs about 0.25 s of every start, more than reading a
# 100 MB log's usage.  The answers ctxwatch needs from it (a window, tier thresholds, per-token rates) are
# small and depend only on the installed catalogue, so they are kept in a JSON file under the user's cache
# folder, named after the catalogue file's size and modification time (a new genai-prices version is a new
# memo).  Only answers computed by genai-prices in this process are written; CTXWATCH_NO_CACHE=1 disables it.
# Each memo records the catalogue file it was made from (``_MEMO_INSTALL``), so that writing one can remove
# the memos of catalogues that no longer exist (an upgraded genai-prices, a deleted virtual environment):
# without that, every install and upgrade left a file behind for good.

#: Version of the memo's layout (bump when a cached answer's meaning changes).  2: prices are looked up at the
#: window's catalogue entry (:func:`_resolve`), so a version-1 "no price" for ``openai/gpt-4o`` is out of date.
_MEMO_VERSION = 2
#: Key of the memo entry naming the catalogue file the memo was made from: ``{"data": path of genai-prices'
#: ``data.py``, "size": bytes, "mtime_ns": its modification time}`` (no answer key starts with it).
_MEMO_INSTALL = "install"
#: File names of catalogue memos (:func:`_memo_path`): the only files :func:`_prune_memos` may remove.
_MEMO_NAME = re.compile(r"catalog-[0-9a-f]{20}\.json")

# Bounds of what the memo keeps.  Its keys hold model names as logs write them, and a log is untrusted: one
# with 50,000 unique model names grew the memo to 24.5 MB, kept for good in the user's cache with every hostile
# string in it, and read back at every start.  The memo only saves start-up time, so losing an answer costs at
# most a genai-prices import (about 0.25 s); it keeps the answers a user's own runs need and drops the rest.
#: Longest model name (and provider) whose answers are written to the memo, in characters.  The longest model
#: id in genai-prices' catalogue has 61 characters, and a Bedrock model ARN under 100; a longer
#: name is still looked up, in this process only.
MEMO_MAX_NAME = 128
#: Most answers a memo file keeps (the install record aside); the newest are kept.  A user's runs need a few
#: per model (window, entry, tiers) and one rates answer per model and day: 2,048 covers months of daily use
#: of several models.  An answer of real names takes about 100 bytes (a memo of a few KB); with a model name and
#: a provider of :data:`MEMO_MAX_NAME` characters each, about 500 (1 KB in a 3-byte script), so a memo stays
#: under about 2 MB whatever the logs hold.
MEMO_MAX_ENTRIES = 2_048
#: Most "not in the catalogue" answers (``None``) among them, the newest kept: a log can invent any number of
#: unknown names, and a real run has a handful of models the catalogue does not know.
MEMO_MAX_MISSES = 256
#: A memo file larger than this (bytes) is not read (and is replaced at the next save): more than the bounded
#: answers can take, so only a memo written before the bounds, or damaged, is that big.
MEMO_MAX_BYTES = 8 * 1024 * 1024

_memo: dict[str, Any] | None = None
_memo_dirty = False
_memo_lock = threading.Lock()


def _memo_path() -> str | None:
    """The memo file for the installed genai-prices catalogue, or ``None`` (no package, or caching off)."""
    found = _memo_file()
    return found[0] if found is not None else None


def _memo_file() -> tuple[str, dict[str, Any]] | None:
    """``(memo path, install record)`` for the installed genai-prices catalogue, or ``None`` (no package, or
    caching off).  The install record (stored under :data:`_MEMO_INSTALL`) names the catalogue file and its
    size in bytes and modification time in nanoseconds, the same facts the file name is a hash of."""
    if os.environ.get("CTXWATCH_NO_CACHE"):
        return None
    try:
        spec = importlib.util.find_spec("genai_prices")
        if spec is None or not spec.origin:
            return None
        data = os.path.join(os.path.dirname(spec.origin), "data.py")
        st = os.stat(data)
    except (OSError, ImportError, ValueError):
        return None
    stamp = hashlib.sha256(f"{_MEMO_VERSION}:{spec.origin}:{st.st_size}:{st.st_mtime_ns}".encode()).hexdigest()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return (os.path.join(base, "ctxwatch", f"catalog-{stamp[:20]}.json"),
            {"data": data, "size": st.st_size, "mtime_ns": st.st_mtime_ns})


def _memo_get(key: str) -> tuple[bool, Any]:
    """``(found, value)`` from the memo (loaded from disk on first use; a damaged file is ignored)."""
    global _memo
    with _memo_lock:
        if _memo is None:
            _memo = {}
            path = _memo_path()
            if path is not None:
                data = _read_memo(path)
                if data is not None:
                    _memo = data
        if key in _memo:
            return True, _memo[key]
        return False, None


def _read_memo(path: str) -> dict[str, Any] | None:
    """The memo at ``path`` as a dict, or ``None`` (missing, unreadable, damaged, or larger than
    :data:`MEMO_MAX_BYTES`)."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MEMO_MAX_BYTES + 1)
        if len(raw) > MEMO_MAX_BYTES:
            return None
        data = orjson.loads(raw)
    except (OSError, orjson.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def _memo_key_kept(key: str) -> bool:
    """True when an answer's key may be written to the memo file: every part after the kind (model name,
    provider, day, tier start) is at most :data:`MEMO_MAX_NAME` characters and printable (``str.isprintable``:
    no control, format (bidi), separator other than the space, or surrogate character)."""
    parts = key.split("\x00")[1:]
    return bool(parts) and all(len(p) <= MEMO_MAX_NAME and p.isprintable() for p in parts)


def _bounded_memo(entries: dict[str, Any]) -> dict[str, Any]:
    """The answers of ``entries`` a memo file keeps, in their order: only keys :func:`_memo_key_kept` accepts,
    at most :data:`MEMO_MAX_MISSES` ``None`` answers and :data:`MEMO_MAX_ENTRIES` answers in all, the last ones
    (the newest: the memo read at start comes first, then the answers of this process)."""
    kept: list[tuple[str, Any]] = []
    misses = 0
    for key, value in reversed(entries.items()):
        if len(kept) >= MEMO_MAX_ENTRIES:
            break
        if key == _MEMO_INSTALL or not _memo_key_kept(key):
            continue
        if value is None:
            if misses >= MEMO_MAX_MISSES:
                continue
            misses += 1
        kept.append((key, value))
    return dict(reversed(kept))


def _memo_put(key: str, value: Any) -> None:
    global _memo_dirty
    with _memo_lock:
        if _memo is None or not _memo_key_kept(key):  # (an implausible name is answered, not remembered)
            return
        _memo[key] = value
        if not _memo_dirty:
            _memo_dirty = True
            atexit.register(_memo_save)


def _memo_save() -> None:
    """Write the memo at exit (best effort, atomic: a concurrent reader sees the old or the whole file), bounded
    (:func:`_bounded_memo`), then remove the memos of catalogues that are no longer installed
    (:func:`_prune_memos`)."""
    found = _memo_file()
    if found is None or _memo is None:
        return
    path, install = found
    merged: dict[str, Any] = {}
    old = _read_memo(path)  # keep what concurrent runs wrote meanwhile (ours wins on the same key)
    if old is not None:
        merged.update(old)
    merged.update(_memo)
    merged = _bounded_memo(merged)
    merged[_MEMO_INSTALL] = install
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(tmp, "wb") as fh:
            fh.write(orjson.dumps(merged))
        os.replace(tmp, path)
    except (OSError, TypeError):
        with contextlib.suppress(OSError):
            os.remove(tmp)
        return
    _prune_memos(path)


def _prune_memos(current: str) -> None:
    """Remove the catalogue memos in ``current``'s folder whose catalogue is gone (best effort, never raises).

    A memo is stale when the catalogue file its install record names no longer exists or has another size or
    modification time (genai-prices was upgraded, or its virtual environment deleted), or when it has no
    readable install record (a damaged file, or one written before memos carried one).  The memo of another
    install that still exists is kept: two virtual environments in use side by side would otherwise delete
    each other's memo on every start.  Only regular files named like a memo (:data:`_MEMO_NAME`) are
    considered, never ``current`` itself; a concurrent writer's temporary file does not match the name.
    """
    folder = os.path.dirname(current)
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        path = os.path.join(folder, name)
        if path == current or not _MEMO_NAME.fullmatch(name):
            continue
        try:
            if not stat.S_ISREG(os.lstat(path).st_mode):  # (a link or folder of that name is not one of ours)
                continue
            if not _memo_is_stale(path):
                continue
            os.remove(path)
        except OSError:
            continue


def _memo_is_stale(path: str) -> bool:
    """True when the memo at ``path`` belongs to no installed catalogue (see :func:`_prune_memos`)."""
    try:
        with open(path, "rb") as fh:
            install = orjson.loads(fh.read()).get(_MEMO_INSTALL)
        data, size, mtime_ns = install["data"], install["size"], install["mtime_ns"]
        if not isinstance(data, str) or type(size) is not int or type(mtime_ns) is not int:
            return True
        st = os.stat(data)
    except FileNotFoundError:  # (the memo itself vanished, or its catalogue did)
        return True
    except OSError:  # (unreadable here: not ours to judge)
        return False
    except Exception:  # not JSON, not an object, no install record: nothing ties it to a live catalogue
        return True
    return (st.st_size, st.st_mtime_ns) != (size, mtime_ns)


@functools.lru_cache(maxsize=512)
def catalog_window(model: str | None, provider: str | None = None) -> int | None:
    """The model's context window in tokens per genai-prices, or ``None`` when unknown.

    Args:
        model: model id as logged (snapshots and aliases are matched by the catalogue's own rules).
        provider: ``openai`` | ``anthropic`` | ``google`` hint, or ``None``.
    """
    if not model:
        return None
    key = f"window\x00{model}\x00{provider}"
    found, value = _memo_get(key)
    if found and (value is None or (type(value) is int and 0 < value < 2**53)):  # (a damaged entry is redone)
        return value
    info = _model_info(model, provider)
    cw = getattr(info, "context_window", None)
    result = int(cw) if cw else None
    _memo_put(key, result)
    return result


@functools.lru_cache(maxsize=512)
def _resolve(model: str, provider: str | None) -> tuple[str, str, Any] | None:
    """The catalogue entry of a model id: ``(model ref, catalogue provider id, genai-prices ModelInfo)``, or
    ``None`` when the catalogue does not know the model.

    Tried in order: the id with the provider hint, then without it, then the id's last path segment
    (``openai/gpt-4o``).  The window (:func:`catalog_window`) and the price (:func:`_lib_price`) both come from
    this one entry, so a call never gets one model's window and another's price (before, ``openai/gpt-4o`` had
    gpt-4o's window but no price, because the price lookup skipped the last step).
    """
    try:
        from genai_prices import data_snapshot

        snap = data_snapshot.get_snapshot()
    except Exception:
        return None
    for ref, pid in ((model, provider), (model, None), (model.rsplit("/", 1)[-1], None)):
        try:
            prov, info = snap.find_provider_model(ref, None, pid, None)
            return ref, str(prov.id), info
        except Exception:
            continue
    return None


def _model_info(model: str, provider: str | None) -> Any | None:
    """genai-prices' ``ModelInfo`` for a model id (:func:`_resolve`), or ``None``."""
    found = _resolve(model, provider)
    return found[2] if found is not None else None


@functools.lru_cache(maxsize=512)
def priced_as(model: str | None, provider: str | None) -> tuple[str, str] | None:
    """``(provider id, model id)`` of the catalogue entry a model's window and price come from, e.g.
    ``("google", "gemini-2.5-pro")`` for ``gemini-2.5-pro-exp-03-25`` (genai-prices matches that name to
    Gemini 2.5 Pro); ``None`` when the catalogue does not know the model.  Memoised like the other answers."""
    if not model:
        return None
    key = f"entry\x00{model}\x00{provider}"
    found, value = _memo_get(key)
    if found and (value is None or (isinstance(value, list) and len(value) == 2
                                    and all(isinstance(x, str) and x for x in value))):
        return (value[0], value[1]) if value is not None else None
    entry = _resolve(model, provider)
    result = (entry[1], str(entry[2].id)) if entry is not None else None
    _memo_put(key, list(result) if result is not None else None)
    return result


def has_long_context(model: str | None, provider: str | None = "anthropic") -> bool:
    """True for a Claude model that offers the 1M-token beta window: one of
    :data:`ANTHROPIC_LONG_CONTEXT_MODELS` (``anthropic/`` or Bedrock-style ``anthropic.`` prefixes are
    ignored), or a Claude model the catalogue lists with a window above 200k (its 1M beta window)."""
    name = (model or "").rsplit("/", 1)[-1].removeprefix("anthropic.")
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

    Order: the log's own statement, then the ``--window`` option / config, then the catalogue.  (The log
    wins because it reflects the deployment actually used, e.g. Codex's ``model_context_window``.)  A Claude
    model gets the standard 200k where the catalogue lists the 1M-token beta window (labelled ``default``: the
    200k is Anthropic's window without the beta header, not the catalogue's figure), unless ``long_context`` for
    a model that offers the beta (:func:`has_long_context`): a reported prompt of its context went past 200k,
    which only the beta allows, so the window is the beta's 1M (:data:`ANTHROPIC_LONG_CONTEXT_WINDOW`, labelled
    inferred).

    Returns:
        ``(tokens or None, Src.LOG | Src.OPTION | Src.CATALOG | Src.DEFAULT | Src.INFERRED | Src.UNKNOWN)``.
    """
    if log_window:
        return log_window, Src.LOG
    if option_window:
        return option_window, Src.OPTION
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


def largest_window(model: str | None, provider: str | None, log_window: int | None = None) -> int | None:
    """The largest window a call of ``model`` can have, in tokens (``None`` when unknown): the log's own
    statement, else the model's window as :func:`resolve_window` gives it with the 1M-token beta where the model
    offers it (a prompt past 200k of such a model means the beta).  A reader that must pick a call to infer a
    context's floor from, before any window is resolved, judges the call's reported prompt against it: a
    prompt above it is implausible (:func:`ctxwatch.model.implausible_prompt`, failure case B13), as the
    accountant judges it then.  No ``--window`` option: a window the user sets makes no report implausible."""
    return resolve_window(model, provider, log_window, None, long_context=True)[0]


def _lib_price(model: str, provider: str | None, prompt: int, cache_read: int, cache_write: int,
               output: int, when: datetime | None = None, cache_write_1h: int = 0, web_searches: int = 0
               ) -> Decimal:
    """Price one usage with genai-prices (``input_tokens`` includes cache reads and writes there,
    ``cache_write_1h_tokens`` is the 1-hour share of the writes, ``web_searches`` a count of searches), at the
    catalogue entry :func:`_resolve` finds; ``LookupError`` when there is none.

    ``when`` is the request time: prices change over time (genai-prices' date-conditional prices).
    """
    import genai_prices

    entry = _resolve(model, provider)
    if entry is None:
        raise LookupError(f"genai-prices does not know {model!r}")
    ref, pid, _ = entry
    u = genai_prices.Usage(input_tokens=prompt, cache_read_tokens=cache_read or None,
                           cache_write_tokens=cache_write or None, output_tokens=output,
                           cache_write_1h_tokens=cache_write_1h or None, web_searches=web_searches or None)
    # (the entry :func:`_resolve` found, the one the window comes from)
    return genai_prices.calc_price(u, ref, provider_id=pid, genai_request_timestamp=when).total_price


@functools.lru_cache(maxsize=256)
def _tier_starts(model: str, provider: str | None) -> tuple[int, ...] | None:
    """Input-token thresholds where a model's prices change (``(0,)`` for flat prices), or ``None``.

    genai-prices' tiers are "cliff" tiers: crossing a threshold applies the tier's rate to all tokens of
    the request, so within two thresholds the price is linear in each token class.  Thresholds of every
    date-conditional price variant are collected (a superset is harmless: it only adds probes).
    """
    key = f"tiers\x00{model}\x00{provider}"
    found, value = _memo_get(key)
    if found and (value is None or (isinstance(value, list) and value and value[0] == 0 and all(
            type(x) is int and 0 <= x < 2**53 for x in value) and value == sorted(set(value)))):
        return tuple(value) if value is not None else None
    result = _tier_starts_lib(model, provider)
    _memo_put(key, list(result) if result is not None else None)
    return result


def _tier_starts_lib(model: str, provider: str | None) -> tuple[int, ...] | None:
    info = _model_info(model, provider)
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
def _rates(model: str, provider: str | None, day: date | None, start: int
           ) -> tuple[Decimal, Decimal, Decimal, Decimal, Decimal] | None:
    """Per-token USD rates (uncached input, cache read, cache write, output, 1-hour cache write) of one price
    region.

    genai-prices' ``calc_price`` costs about a millisecond per call, so a run of 100,000 calls would spend
    minutes pricing.  Within one tier region and one day the price is linear in each token class, so the
    rates are read off five library probes of ``n`` tokens (``n`` = the region's first token count: a tier
    applies above its start) and reused.  Returns ``None`` when the library cannot price the model.
    """
    # No date means today's prices, so the memo keys it on today's date, never on "no date".
    key = f"rates\x00{model}\x00{provider}\x00{(day or datetime.now(UTC).date()).isoformat()}\x00{start}"
    found, value = _memo_get(key)
    if found:
        if value is None:
            return None
        try:
            # (an entry of four rates, from before 1-hour cache writes were priced, is asked again)
            if not (isinstance(value, list) and len(value) == 5 and all(isinstance(x, str) for x in value)):
                raise ValueError(value)
            a, b, c, d, e = (Decimal(x) for x in value)
            if all(r.is_finite() and r >= 0 for r in (a, b, c, d, e)):
                return a, b, c, d, e
        except Exception:
            pass  # damaged entry (not four numbers, NaN, signalling NaN): ask the library again
    result = _rates_lib(model, provider, day, start)
    _memo_put(key, [str(x) for x in result] if result is not None else None)
    return result


def _rates_lib(model: str, provider: str | None, day: date | None, start: int
               ) -> tuple[Decimal, Decimal, Decimal, Decimal, Decimal] | None:
    n = start + 1
    when = datetime(day.year, day.month, day.day, 12, tzinfo=UTC) if day else None
    try:
        base = _lib_price(model, provider, n, 0, 0, 0, when)
        cr = _lib_price(model, provider, n, n, 0, 0, when)
        cw = _lib_price(model, provider, n, 0, n, 0, when)
        out = _lib_price(model, provider, n, 0, 0, n, when) - base
        cw1h = _lib_price(model, provider, n, 0, n, 0, when, cache_write_1h=n)
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
    force on the call's day (``timestamp``, epoch seconds; today when unknown), in the call's tier.  ``batch``:
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
    rates = _rates(model, provider, day, start)
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


def _search_rate(model: str, provider: str | None, day: date | None) -> Decimal | None:
    """USD per server-side web search for a model on a day (genai-prices' ``web_searches`` price, per 1,000
    searches), read off one library probe and memoised like the token rates; ``None`` when the catalogue has no
    such price or cannot price the model."""
    key = f"search\x00{model}\x00{provider}\x00{(day or datetime.now(UTC).date()).isoformat()}"
    found, value = _memo_get(key)
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
    _memo_put(key, str(result) if result is not None else None)
    return result
