"""The genai-prices catalogue, offline: a model id's catalogue entry, and the window and name read off it.

ctxwatch never calls ``genai_prices.update_prices``: the snapshot that ships with the package is used, so nothing
touches the network.  A model the catalogue does not know has an unknown window and an unknown cost (never a
made-up default, never $0).  Answers are memoised across starts (:mod:`ctxwatch.catalog.memo`).
"""

from __future__ import annotations

import functools
import re
from typing import Any

from ctxwatch.catalog import memo
from ctxwatch.model import MAX_COUNT


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
    found, value = memo.get(key)
    if found and (value is None or (type(value) is int and 0 < value < MAX_COUNT)):  # (a damaged entry is redone)
        return value
    info = model_info(model, provider)
    cw = getattr(info, "context_window", None)
    result = int(cw) if cw else None
    memo.put(key, result)
    return result


#: A cloud's spelling around a model id: Bedrock's cross-region inference prefix (``us.``, ``eu.``, ``apac.``,
#: ``global.``...) and vendor prefix (``anthropic.``, ``meta.``...; AWS Bedrock docs, "Supported foundation models"
#: and "Inference profiles"), and the version suffixes of Bedrock (``-v1:0``) and Vertex AI (``@20250929``,
#: ``@001``; Vertex AI docs, "Model versions").
_CLOUD_PREFIX = re.compile(r"^(?:(?:us|eu|apac|jp|au|ca|us-gov|global)\.)?"
                           r"(?:anthropic|meta|mistral|amazon|cohere|ai21|deepseek|openai|qwen|writer)\.")
_CLOUD_SUFFIX = re.compile(r"(?:@[\w.-]+|-v\d+(?::\d+)?)$")


def base_model(model: str) -> str:
    """The model id a proxy's or a cloud's spelling stands for: the last path segment (LiteLLM's
    ``provider/model``, OpenRouter's ``anthropic/claude-...``, a Bedrock inference-profile ARN), without Bedrock's
    region and vendor prefixes or the Bedrock / Vertex AI version suffix:
    ``us.anthropic.claude-sonnet-4-5-20250929-v1:0`` and ``vertex_ai/claude-sonnet-4-5@20250929`` are
    ``claude-sonnet-4-5-20250929``."""
    name = model.rsplit("/", 1)[-1]
    return _CLOUD_SUFFIX.sub("", _CLOUD_PREFIX.sub("", name)) or name


@functools.lru_cache(maxsize=512)
def catalog_entry(model: str, provider: str | None) -> tuple[str, str, Any] | None:
    """The catalogue entry of a model id: ``(model ref, catalogue provider id, genai-prices ModelInfo)``, or
    ``None`` when the catalogue does not know the model.

    Tried in order: the id with the provider hint, then without it, then the id's last path segment
    (``openai/gpt-4o``), then the base model a cloud's spelling stands for (:func:`base_model`: Bedrock's
    ``us.anthropic.claude-...-v1:0``, Vertex AI's ``claude-...@20250929``), so that a model served through a
    cloud or a proxy gets the window and the price of the model itself.  The window (:func:`catalog_window`) and
    the price (:func:`ctxwatch.catalog.prices.call_cost`) both come from this one entry, so a call never gets one
    model's window and another's price.
    """
    try:
        from genai_prices import data_snapshot

        snap = data_snapshot.get_snapshot()
    except Exception:
        return None
    for ref, pid in ((model, provider), (model, None), (model.rsplit("/", 1)[-1], None), (base_model(model), None)):
        try:
            prov, info = snap.find_provider_model(ref, None, pid, None)
            return ref, str(prov.id), info
        except Exception:
            continue
    return None


def model_info(model: str, provider: str | None) -> Any | None:
    """genai-prices' ``ModelInfo`` for a model id (:func:`catalog_entry`), or ``None``."""
    found = catalog_entry(model, provider)
    return found[2] if found is not None else None


@functools.lru_cache(maxsize=512)
def priced_as(model: str | None, provider: str | None) -> tuple[str, str] | None:
    """``(provider id, model id)`` of the catalogue entry a model's window and price come from, e.g.
    ``("google", "gemini-2.5-pro")`` for ``gemini-2.5-pro-exp-03-25`` (genai-prices matches that name to
    Gemini 2.5 Pro); ``None`` when the catalogue does not know the model.  Memoised like the other answers."""
    if not model:
        return None
    key = f"entry\x00{model}\x00{provider}"
    found, value = memo.get(key)
    if found and (value is None or (isinstance(value, list) and len(value) == 2
                                    and all(isinstance(x, str) and x for x in value))):
        return (value[0], value[1]) if value is not None else None
    entry = catalog_entry(model, provider)
    result = (entry[1], str(entry[2].id)) if entry is not None else None
    memo.put(key, list(result) if result is not None else None)
    return result
