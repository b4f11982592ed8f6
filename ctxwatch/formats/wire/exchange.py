"""One request/response exchange in any of the three request shapes (OpenAI chat completions, Anthropic
Messages, OpenAI Responses): which shape it is, its usage read by the usage block's own fields, and the
:class:`~ctxwatch.model.ParsedCall` it makes.

The canonical ``{request, response}`` wrapper and claude-trace's HTTP captures both log such exchanges, and a
proxy may log any model in any shape: the shape is told from the bodies' fields, the model name last.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ctxwatch.catalog.entries import priced_as
from ctxwatch.formats.wire.anthropic import anthropic_request_to_parts, anthropic_response_info, anthropic_usage
from ctxwatch.formats.wire.litellm import LITELLM_CACHE_KEYS, litellm_usage_note
from ctxwatch.formats.wire.messages import MessageMemo
from ctxwatch.formats.wire.openai import (
    openai_request_to_parts,
    openai_response_info,
    openai_usage,
    responses_request_to_parts,
    responses_response_info,
    responses_usage,
)
from ctxwatch.formats.wire.values import int_or_none, model_id, odd_usage, total_mismatch
from ctxwatch.model import ParsedCall, Provenance, ResponseInfo, SourceRef, Usage
from ctxwatch.source import Record


def exchange_flavour(req: dict[str, Any], resp: Any) -> str:
    """``anthropic`` | ``responses`` | ``openai``: the shape of a request body, from its own fields, then its
    response's, and only then the model name.

    A Claude model behind an OpenAI-compatible proxy (LiteLLM, OpenRouter) is logged in OpenAI's chat shape:
    system prompt as a ``system`` message, a ``choices`` response, ``prompt_tokens`` usage (with LiteLLM's
    ``cache_creation_input_tokens`` beside them).  Those fields say ``openai`` before the model name is asked:
    the Anthropic Messages API takes only ``user`` and ``assistant`` messages (its system prompt is the
    top-level ``system``) and answers with a ``type: message`` body, never ``choices``.
    """
    if "input" in req or "instructions" in req:
        return "responses"
    tools = ts if isinstance(ts := req.get("tools"), list) else []
    if "system" in req or any(isinstance(t, dict) and "input_schema" in t for t in tools):
        return "anthropic"
    if isinstance(resp, dict):
        u = us if isinstance(us := resp.get("usage"), dict) else {}
        if "choices" in resp or "prompt_tokens" in u or "completion_tokens" in u:
            return "openai"
        if "cache_creation_input_tokens" in u or resp.get("type") == "message":
            return "anthropic"
        if isinstance(resp.get("output"), list):
            return "responses"
    msgs = req.get("messages")
    if isinstance(msgs, list) and any(isinstance(m, dict) and (m.get("role") in ("system", "developer", "tool")
                                                               or "tool_calls" in m) for m in msgs):
        return "openai"
    model = str(req.get("model") or "").rsplit("/", 1)[-1]
    if model.startswith("claude"):
        return "anthropic"
    if model.startswith(("gpt-", "o1", "o3", "o4", "chatgpt", "ft:gpt")):
        return "openai"
    msgs = req.get("messages") or []
    for m in msgs if isinstance(msgs, list) else []:
        c = m.get("content") if isinstance(m, dict) else None
        if isinstance(c, list) and any(isinstance(b, dict) and b.get("type") in ("tool_use", "tool_result") for b in c):
            return "anthropic"
    return "openai"


def usage_by_shape(u: Any, flavour: str) -> tuple[Usage | None, list[str]]:
    """:func:`_usage_by_shape`, with a sentence when the block's ``total_tokens`` is not its prompt plus its
    output as read (:func:`~.values.total_mismatch`)."""
    usage, notes = _usage_by_shape(u, flavour)
    if isinstance(u, dict) and (note := total_mismatch(u.get("total_tokens"), usage)):
        notes.append(note)
    return usage, notes


#: The tiers a response's ``service_tier`` may name that are priced apart (OpenAI pricing: Flex at the Batch
#: rates, Priority above the standard ones); a request's own ``service_tier`` is the tier asked for, used only
#: when the response does not say which one served it.
_ASKED_TIERS = ("flex", "priority")


def served_tier(req: dict[str, Any], resp: Any, usage: Usage | None) -> str | None:
    """The processing tier that served a call: the response's ``service_tier`` (OpenAI chat and Responses), else
    the usage block's (Anthropic's ``usage.service_tier``), else the request's when it asked for Flex or
    Priority; ``None`` when none says."""
    if isinstance(resp, dict):
        if isinstance(t := resp.get("service_tier"), str) and t:
            return t
        if isinstance(u := resp.get("usage"), dict) and isinstance(t := u.get("service_tier"), str) and t:
            return t
    t = req.get("service_tier")
    return t if t in _ASKED_TIERS else None


def web_search_calls(resp: Any) -> int | None:
    """The web searches a Responses API call ran (its ``web_search_call`` output items), billed per call on top
    of the tokens (OpenAI pricing: web search tool calls, $10 per 1,000 for the GPT-4o, GPT-4.1 and GPT-5
    models); ``None`` when the response has none."""
    out = resp.get("output") if isinstance(resp, dict) else None
    n = sum(1 for item in out if isinstance(item, dict) and item.get("type") == "web_search_call") \
        if isinstance(out, list) else 0
    return n or None


def _usage_by_shape(u: Any, flavour: str) -> tuple[Usage | None, list[str]]:
    """Normalize a response's ``usage`` block by the rule its own fields name, and say where they are ambiguous.

    The rule follows the block's shape, never the model name: an OpenAI-compatible proxy (LiteLLM, OpenRouter)
    reports a Claude model in OpenAI's shape, ``prompt_tokens`` being the whole prompt (OpenRouter's "Prompt
    Caching" docs show ``prompt_tokens`` 10,339 with ``prompt_tokens_details.cached_tokens`` 10,318 inside it;
    LiteLLM: :func:`~.litellm.litellm_usage_note`); read by Anthropic's rule it has no ``input_tokens`` and no
    prompt.  So: ``prompt_tokens``/``completion_tokens`` -> OpenAI's rule (:func:`~.openai.openai_usage`), or
    LiteLLM's when ``cache_read_input_tokens``/``cache_creation_input_tokens`` stand beside them;
    ``input_tokens`` with those Anthropic cache keys -> Anthropic's (``input_tokens`` uncached,
    :func:`~.anthropic.anthropic_usage`); ``input_tokens`` with ``input_tokens_details`` -> the Responses API's
    (cached inside, :func:`~.openai.responses_usage`).  A block with no cache field either way reads the same by
    both rules (no cache: ``input_tokens`` is the whole prompt), and goes by the request's ``flavour``
    (``anthropic`` | ``responses`` | ``openai``).

    Returns:
        ``(usage or None, sentences)``: one sentence for each ambiguity (a block that names both families with
        numbers that do not reconcile, LiteLLM cache counts above ``prompt_tokens``), for the caller's
        ``ambiguous_usage`` issue; the usage is the reading the sentence names.
    """
    if not isinstance(u, dict):
        odd_usage(u)
        return None, []
    chat = u.get("prompt_tokens") is not None or u.get("completion_tokens") is not None
    named_in = u.get("input_tokens") is not None or u.get("output_tokens") is not None
    ant_cache = any(u.get(k) is not None for k in LITELLM_CACHE_KEYS)
    notes: list[str] = []
    if chat:
        usage, note = litellm_usage_note(u) if ant_cache else (openai_usage(u), None)
        notes += [note] if note else []
        p, i = int_or_none(u.get("prompt_tokens")), int_or_none(u.get("input_tokens"))
        cached = sum(n for k in LITELLM_CACHE_KEYS if (n := int_or_none(u.get(k))) is not None)
        if p is not None and i is not None and i not in (p, p - cached):
            # (input_tokens equal to prompt_tokens, or to it less the cache counts, is one count in two namings)
            notes.append(f"usage has both prompt_tokens {p:,} and input_tokens {i:,}, which do not reconcile: "
                         "read by prompt_tokens (the whole prompt, OpenAI's naming)")
        return usage, notes
    if named_in and ant_cache:
        if isinstance(u.get("input_tokens_details"), dict):
            rule = "anthropic" if flavour == "anthropic" else "responses"
            notes.append("usage has both input_tokens_details (input_tokens includes the cache, the Responses "
                         "API's rule) and cache_read_input_tokens/cache_creation_input_tokens (it excludes them, "
                         f"Anthropic's rule): read by the {'Anthropic' if rule == 'anthropic' else 'Responses'} "
                         "rule, as the request's shape")
            return (anthropic_usage(u) if rule == "anthropic" else responses_usage(u)), notes
        return anthropic_usage(u), notes
    if named_in and isinstance(u.get("input_tokens_details"), dict):
        return responses_usage(u), notes
    return (anthropic_usage(u) if flavour == "anthropic" else openai_usage(u)), notes


def build_call(path: str, rec: Record, req: dict[str, Any], resp: Any, *, usage: Usage | None = None,
               info: ResponseInfo | None = None, model: str | None = None,
               timestamp: float | None = None, provenance: Provenance | None = None,
               memo: MessageMemo | None = None, problems: list[str] | None = None) -> ParsedCall:
    """A :class:`ParsedCall` from a request body and a response body of any of the three flavours.

    Args:
        path: the log file. rec: the record (for the source reference).
        req: the request body. resp: the response body (may be ``None``).
        usage / info / model: override what the response body would give (e.g. from an SSE stream).
        timestamp: epoch seconds. provenance: what the reader says of the call besides.
        memo: reuse of messages re-sent from the previous call of the same reader (see :class:`MessageMemo`).
        problems: when given, receives a sentence for each way the usage block's fields are ambiguous
            (:func:`usage_by_shape`), for the caller's ``ambiguous_usage`` issues.
    """
    flavour = exchange_flavour(req, resp)
    if usage is None:
        usage, ambiguous = usage_by_shape(resp.get("usage") if isinstance(resp, dict) else None, flavour)
        if ambiguous and problems is not None:
            problems += ambiguous
    if usage is not None and usage.service_tier is None and (tier := served_tier(req, resp, usage)):
        usage = replace(usage, service_tier=tier)
    if usage is not None and usage.web_searches is None and (searches := web_search_calls(resp)):
        usage = replace(usage, web_searches=searches)
    if model is None:
        model = model_id(req.get("model"), "the request's model")
        served = model_id(resp.get("model"), "the response's model") if isinstance(resp, dict) else None
        if served and (model is None or (priced_as(model, None) is None and priced_as(served, None) is not None)):
            # (an Azure deployment or a proxy alias the catalogue does not know: the response names the model
            # that served it, whose window and price are the call's)
            model = served
    if flavour == "anthropic":
        system, tools, messages, mx = anthropic_request_to_parts(req, memo)
        info = info or anthropic_response_info(resp)
        provider = "anthropic"
    elif flavour == "responses":
        system, tools, messages, mx = responses_request_to_parts(req)
        info = info or responses_response_info(resp)
        provider = "openai"
    else:
        system, tools, messages, mx = openai_request_to_parts(req, memo)
        info = info or openai_response_info(resp)
        # A Claude model in OpenAI's shape (behind a proxy) is still Claude: its tokenizer, tool preamble, image
        # rule and price are Anthropic's; only the wire shape is OpenAI's.
        provider = "anthropic" if "claude" in (model or "").lower() else "openai"
    if memo is not None:
        memo.next_call()
    if usage is None and isinstance(resp, dict) and isinstance(err := resp.get("error"), dict):
        # A refused request (context_length_exceeded, a 4xx): no usage, and not billed (report prices it at 0).
        provenance = provenance or Provenance()
        provenance.error = {k: str(err[k])[:200] for k in ("type", "code") if err.get(k)}
    return ParsedCall(
        source=SourceRef(path, rec.line, rec.line_end, rec.byte_start, rec.byte_end),
        timestamp=timestamp, model=model, provider=provider, system=system, tools=tools, messages=messages,
        max_output_tokens=mx, usage=usage, response=info, provenance=provenance or Provenance(),
    )
