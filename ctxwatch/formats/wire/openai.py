"""OpenAI's two API shapes: chat completions and the Responses API (request bodies, usage, response bodies).

OpenAI's prompt count *includes* the cached tokens and its output count *includes* the reasoning tokens
(OpenAI API reference, "The usage object": ``prompt_tokens_details.cached_tokens``,
``completion_tokens_details.reasoning_tokens``), in both shapes; so one rule, :func:`openai_usage`, reads both.
OpenAI-compatible proxies (LiteLLM, OpenRouter) and many exporters write the chat shape for any model.
"""

from __future__ import annotations

from typing import Any, cast

from ctxwatch.formats.wire.images import image_part
from ctxwatch.formats.wire.messages import MessageMemo, RequestParts
from ctxwatch.formats.wire.values import (
    id_or_none,
    int_or_none,
    json_text,
    listed,
    odd_content,
    odd_usage,
    request_max_tokens,
    response_unknown,
    usage_count,
)
from ctxwatch.model import Message, Part, ResponseInfo, Usage

# --- chat completions ---------------------------------------------------------------------------------------


def openai_content(content: Any) -> list[Part]:
    """Parts of a chat message's (or a Responses message item's) ``content``: a string, or a list of content parts.

    ``text`` / ``input_text`` / ``output_text`` -> text; ``image_url`` / ``input_image`` -> image (with its
    ``detail``, :func:`~ctxwatch.formats.wire.images.image_part`); ``refusal`` -> text; any other part, or a
    content that is neither a string nor a list -> other, its JSON as text.  ``None`` gives no parts.
    """
    if content is None:
        return []
    if isinstance(content, str):
        return [Part("text", content)]
    parts: list[Part] = []
    if isinstance(content, list):
        for item in content:
            if isinstance(item, str):
                parts.append(Part("text", item))
            elif isinstance(item, dict):
                t = item.get("type")
                if t in ("text", "input_text", "output_text"):
                    parts.append(Part("text", str(item.get("text") or "")))
                elif t in ("image_url", "input_image"):
                    iu = item.get("image_url")
                    url = iu.get("url") if isinstance(iu, dict) else iu
                    detail = iu.get("detail") if isinstance(iu, dict) else item.get("detail")
                    parts.append(image_part(str(url or ""), {"detail": detail} if detail else None))
                elif t == "refusal":
                    parts.append(Part("text", str(item.get("refusal") or "")))
                else:
                    parts.append(Part("other", json_text(item)))
            else:
                odd_content(item, "a content part", "skipped")
    else:
        odd_content(content)
        parts.append(Part("other", json_text(content)))
    return parts


def openai_message(m: dict[str, Any]) -> Message:
    """Normalize one OpenAI chat message (tool_calls, legacy function_call, tool results) into a Message.

    A field of the wrong JSON type is noted (an ``invalid_field`` issue of the record) and read as the API
    would count its bytes at best: ``tool_calls`` not a list, an entry of it or a ``function`` / legacy
    ``function_call`` not an object: its JSON counted as text (an ``other`` part, or the call's arguments);
    ``function.arguments`` not a string (the API sends a JSON string): its JSON counted as the arguments;
    ``function.name`` or the message's ``name`` not a string: read as none.
    """
    role = str(m.get("role") or "user")
    parts = openai_content(m.get("content"))
    calls = m.get("tool_calls")
    if calls is not None and not isinstance(calls, list):
        odd_content(calls, "a message's tool_calls", "its JSON counted as text", wanted="a list")
        parts.append(Part("other", json_text(calls)))
    for tc in calls if isinstance(calls, list) else []:
        if not isinstance(tc, dict):
            odd_content(tc, "a tool call", "its JSON counted as text", wanted="an object")
            parts.append(Part("other", json_text(tc)))
            continue
        parts.append(_function_call(tc.get("function"), "a tool call's function", call_id=tc.get("id")))
    fc = m.get("function_call")
    if fc is not None:  # (the legacy single function_call, before tool_calls)
        parts.append(_function_call(fc, "a message's function_call"))
    if role in ("tool", "function"):
        call_id = id_or_none(m.get("tool_call_id"), "a tool message's tool_call_id")
        text = "\n".join(p.text for p in parts)
        parts = [Part("tool_result", text, call_id=call_id or None)]
        role = "tool"
    name = m.get("name")
    if name is not None and not isinstance(name, str):
        odd_content(name, "a message's name", "read as none", wanted="a string")
    name = name if isinstance(name, str) and role != "tool" else None
    return Message(role, parts, name=name)


def _function_call(fn: Any, what: str, call_id: Any = None) -> Part:
    """The ``tool_call`` part of a chat message's function (``{name, arguments}``; ``what`` names the field in
    the notes): a field of the wrong JSON type is noted, and its JSON counted as the arguments (a function that
    is no object) or read as none (a name that is no string)."""
    if not isinstance(fn, dict):
        if fn is not None:
            odd_content(fn, what, "its JSON counted as text", wanted="an object")
        return Part("tool_call", json_text(fn) if fn is not None else "", name="", call_id=call_id)
    args, name = fn.get("arguments"), fn.get("name")
    if args is not None and not isinstance(args, str):
        odd_content(args, f"{what}.arguments", "its JSON counted as text", wanted="a string")
    if name is not None and not isinstance(name, str):
        odd_content(name, f"{what}.name", "read as none", wanted="a string")
        name = None
    return Part("tool_call", json_text(args or ""), name=name or "", call_id=call_id)


def openai_request_to_parts(body: dict[str, Any], memo: MessageMemo | None = None) -> RequestParts:
    """Split an OpenAI chat-completions request body into ``(system, tools, messages, max_output_tokens)``.

    ``system`` holds the text of the leading ``system``/``developer`` messages (the system prompt: the floor
    and the prompt-cache prefix).  A ``system`` message later in the list (a reminder injected mid-run) stays
    in ``messages`` at its own place: it is history the planner pins where it is, and moving it into the
    floor would shift every later message's index and report a changed system prompt (a cache prefix
    invalidated) where only a message was added.  ``tools`` includes legacy ``functions`` wrapped as tools.
    Never raises on odd shapes.  ``memo`` (optional) reuses messages re-sent from the previous call.
    """
    raw = r if isinstance(r := body.get("messages"), list) else []
    built = memo.messages(raw, openai_message) if memo is not None else [
        openai_message(m) if isinstance(m, dict) else None for m in raw]
    present: list[Message] = cast("list[Message]", built) if memo is not None and memo.whole else [
        m for m in built if m is not None]  # (the memo counts the items that are no message: none, mostly)
    lead = 0
    while lead < len(present) and present[lead].role in ("system", "developer"):
        lead += 1
    system = [m.text() for m in present[:lead]]
    messages = present[lead:]
    # (a tools field that is no list is damage.request_problems' to report: the schemas are then unknown)
    tools = [t for t in ts if isinstance(t, dict)] if isinstance(ts := body.get("tools"), list) else []
    tools += [{"type": "function", "function": f} for f in listed(body.get("functions"), "the request's functions")
              if isinstance(f, dict)]
    return system, tools, messages, request_max_tokens(body, "max_completion_tokens", "max_tokens",
                                                       "max_output_tokens")


def openai_usage(u: Any) -> Usage | None:
    """Normalize OpenAI usage (chat ``prompt_tokens`` or Responses ``input_tokens`` naming), and the
    OpenAI-compatible providers' variants of it, told by the fields the block has.

    All counts in tokens.  The prompt count *includes* the cached tokens (``cache_read``) and the output count
    *includes* the reasoning tokens (OpenAI API reference, "The usage object").  Where the cache hits are:
    ``prompt_tokens_details.cached_tokens`` (OpenAI; also Groq, Fireworks, xAI, Qwen and OpenRouter), else
    DeepSeek's top-level ``prompt_cache_hit_tokens`` (DeepSeek API reference, "Create Chat Completion":
    ``prompt_tokens`` = ``prompt_cache_hit_tokens`` + ``prompt_cache_miss_tokens``, the prompt when
    ``prompt_tokens`` is absent), else a top-level ``cached_tokens`` (Moonshot's Kimi API, Together).
    OpenRouter adds ``prompt_tokens_details.cache_write_tokens``, also inside ``prompt_tokens`` (OpenRouter docs,
    "Usage Accounting": prompt_tokens 194 with cache_write_tokens 100): read as the cache write, so a Claude call
    through it is priced at the cache-write rate.  ``input_uncached`` is the prompt less both.  Where the
    reasoning is: inside the output as OpenAI counts it, except when ``total_tokens`` shows it outside
    (``total_tokens`` = prompt + completion + reasoning, as xAI reports reasoning models): then the output is
    completion + reasoning.  ``None`` when the block has neither a prompt nor an output count.
    """
    if not isinstance(u, dict):
        odd_usage(u)
        return None
    prompt = usage_count(u.get("prompt_tokens"))
    if prompt is None:
        prompt = usage_count(u.get("input_tokens"))
    details = u.get("prompt_tokens_details") or u.get("input_tokens_details") or {}
    cached = usage_count(details.get("cached_tokens")) if isinstance(details, dict) else None
    if cached is None and u.get("prompt_cache_hit_tokens") is not None:
        cached = usage_count(u.get("prompt_cache_hit_tokens"))
        miss = usage_count(u.get("prompt_cache_miss_tokens"))
        if prompt is None and cached.__class__ is int and miss.__class__ is int:
            prompt = cached + miss
    if cached is None and u.get("cached_tokens") is not None:
        cached = usage_count(u.get("cached_tokens"))
    written = usage_count(details.get("cache_write_tokens")) if isinstance(details, dict) else None
    out = usage_count(u.get("completion_tokens"))
    if out is None:
        out = usage_count(u.get("output_tokens"))
    odet = u.get("completion_tokens_details") or u.get("output_tokens_details") or {}
    reasoning = usage_count(odet.get("reasoning_tokens")) if isinstance(odet, dict) else None
    if prompt is None and out is None:
        return None
    total = int_or_none(u.get("total_tokens"))
    if prompt.__class__ is int and out.__class__ is int and reasoning.__class__ is int and reasoning and \
            total is not None and total != prompt + out and total == prompt + out + reasoning:
        out = out + reasoning  # (the reasoning is reported beside the completion, not inside it)
    # (a value that is not a count is passed on for the sanitizer to report; no arithmetic on it)
    uncached = prompt - cached if prompt.__class__ is int and cached.__class__ is int else None
    if uncached is not None and written is not None:
        uncached = uncached - written if written.__class__ is int else None
    return Usage(prompt_total=prompt, input_uncached=uncached, cache_read=cached, cache_write=written,
                 output=out, reasoning=reasoning)


def openai_response_info(body: Any) -> ResponseInfo | None:
    """Completion text, tool-call count and finish reason from a chat-completions response body.

    ``None`` when the body holds no answer, and when its answer has a field of the wrong JSON type
    (``choices`` not a list, its first entry or that entry's ``message`` not an object, the message's
    ``content`` neither text nor a list, its ``tool_calls`` not a list, ``finish_reason`` not a string): that
    is noted (an ``invalid_field`` issue of the record, :func:`response_unknown`), and the response is unknown
    rather than read as an answer of no text or no tool calls.
    """
    if not isinstance(body, dict):
        return None
    choices = body.get("choices")
    if choices is None or choices == []:
        return responses_response_info(body) if isinstance(body.get("output"), list) else None
    if not isinstance(choices, list):
        return response_unknown("response.choices", choices, "a list")
    first = choices[0]
    if not isinstance(first, dict):
        return response_unknown("response.choices[0]", first, "an object")
    msg = first.get("message")
    if msg is None:
        msg = {}
    if not isinstance(msg, dict):
        return response_unknown("response.choices[0].message", msg, "an object")
    content = msg.get("content")
    if content is not None and not isinstance(content, str | list):
        return response_unknown("response.choices[0].message.content", content, "text or a list of parts")
    calls = msg.get("tool_calls")
    if calls is not None and not isinstance(calls, list):
        return response_unknown("response.choices[0].message.tool_calls", calls, "a list")
    finish = first.get("finish_reason")
    if finish is not None and not isinstance(finish, str):
        return response_unknown("response.choices[0].finish_reason", finish, "a string")
    text = content if isinstance(content, str) else (
        "".join(t for p in content if isinstance(p, dict) and isinstance(t := p.get("text", ""), str))
        if isinstance(content, list) else None)
    return ResponseInfo(text=text, tool_calls=len(calls or []), finish_reason=finish)


# --- Responses API ------------------------------------------------------------------------------------------

#: Prefixes of the user messages that carry instructions rather than user text (Codex injects AGENTS.md as a
#: user message).
_INSTRUCTION_PREFIXES = ("# AGENTS.md instructions", "<user_instructions>")
#: Prefix of the user message Codex injects with the working directory, sandbox and shell: harness context, not
#: the user's task.
_ENVIRONMENT_PREFIX = "<environment_context>"


def harness_label(role: str, parts: list[Part]) -> str | None:
    """The label of a user message a coding-agent harness injects, not typed by the user: ``instructions``
    for AGENTS.md / ``<user_instructions>`` (pinned), ``environment`` for ``<environment_context>`` (pinned,
    never the task), else ``None``.  Codex rollouts and Responses API captures of Codex carry them."""
    if role != "user" or not parts or parts[0].kind != "text":
        return None
    head = parts[0].text.lstrip()
    if head.startswith(_INSTRUCTION_PREFIXES):
        return "instructions"
    if head.startswith(_ENVIRONMENT_PREFIX):
        return "environment"
    return None


def responses_request_to_parts(body: dict[str, Any]) -> RequestParts:
    """Split a Responses API request (``instructions``, ``input``, ``tools``) like :func:`openai_request_to_parts`."""
    system: list[str] = []
    if isinstance(body.get("instructions"), str) and body["instructions"]:
        system.append(body["instructions"])
    messages: list[Message] = []
    inp = body.get("input")
    if isinstance(inp, str):
        messages.append(Message("user", [Part("text", inp)]))
    for item in inp if isinstance(inp, list) else []:
        if not isinstance(item, dict):
            continue
        t = item.get("type", "message")
        if t == "message":
            role = str(item.get("role") or "user")
            parts = openai_content(item.get("content"))
            msg = Message(role, parts, label=harness_label(role, parts))  # (Codex's AGENTS.md, environment)
            if msg.role in ("system", "developer") and not messages:
                system.append(msg.text())  # (leading ones only, as in openai_request_to_parts)
            else:
                messages.append(msg)
        elif t == "function_call":
            messages.append(Message("assistant", [_function_call(item, "a function_call item",
                                                                 call_id=item.get("call_id"))]))
        elif t == "function_call_output":
            messages.append(Message("tool", [Part("tool_result", json_text(item.get("output") or ""),
                                                  call_id=item.get("call_id"))]))
        elif t == "reasoning":
            summary = item.get("summary") or []
            text = "\n".join(s.get("text", "") for s in summary if isinstance(s, dict))
            messages.append(Message("assistant", [Part("thinking", text)], label="reasoning"))
        else:
            messages.append(Message("user", [Part("other", json_text(item))]))
    # (a tools field that is no list is damage.request_problems' to report: the schemas are then unknown)
    tools = [t for t in ts if isinstance(t, dict)] if isinstance(ts := body.get("tools"), list) else []
    # (a value that is not a count is passed on for the sanitizer to report, not replaced by the default reserve)
    return system, tools, messages, request_max_tokens(body, "max_output_tokens")


def responses_usage(u: Any) -> Usage | None:
    """Normalize Responses API usage (``input_tokens`` includes ``input_tokens_details.cached_tokens``)."""
    return openai_usage(u)


def responses_response_info(body: Any) -> ResponseInfo | None:
    """Completion text and tool calls from a Responses API response body (``output[]`` items)."""
    if not isinstance(body, dict):
        return None
    out = body.get("output")
    if out is not None and not isinstance(out, list):
        return response_unknown("response.output", out, "a list")
    status = body.get("status")
    if status is not None and not isinstance(status, str):
        return response_unknown("response.status", status, "a string")
    texts: list[str] = []
    calls = 0
    for n, item in enumerate(out or []):
        if not isinstance(item, dict):
            return response_unknown(f"response.output[{n}]", item, "an object")
        if item.get("type") == "message":
            content = item.get("content")
            if content is not None and not isinstance(content, list):
                return response_unknown(f"response.output[{n}].content", content, "a list")
            for c in content or []:
                if isinstance(c, dict) and isinstance(c.get("text"), str):
                    texts.append(c["text"])
        elif item.get("type") in ("function_call", "custom_tool_call", "local_shell_call"):
            calls += 1
    if isinstance(body.get("output_text"), str) and not texts:
        texts.append(body["output_text"])
    return ResponseInfo(text="".join(texts) if texts else None, tool_calls=calls, finish_reason=status)
