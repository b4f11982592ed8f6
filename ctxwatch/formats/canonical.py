"""ctxwatch's canonical log format, Anthropic/Responses variants of it, and claude-trace HTTP captures.

**Canonical record** (one JSON object per line; what :class:`ctxwatch.CallLogger` writes)::

    {"timestamp": "2025-01-01T00:00:00Z",            # optional; ISO-8601 or epoch seconds
     "session": "run-42",                             # optional
     "window": 128000,                                # optional context window override for this call
     "request":  {"model": "gpt-4o", "messages": [...], "tools": [...], "max_tokens": 1024},
     "response": {"choices": [{"message": {...}}], "usage": {"prompt_tokens": ..., ...}}}

``request`` is an OpenAI chat-completions request body; ``response`` the response body.  The same wrapper
is accepted around an Anthropic Messages body (``system``, ``messages`` with content blocks, ``tools`` with
``input_schema``; usage ``input_tokens`` + cache fields) and an OpenAI Responses API body
(``instructions``, ``input``, ``tools``; usage ``input_tokens``/``output_tokens``).

**claude-trace** (badlogic/claude-trace) lines wrap one HTTP exchange: ``request.body`` is the Anthropic
request; ``response.body`` the JSON response, or ``response.body_raw`` the SSE text of a streamed one
(usage in ``message_start`` and the final ``message_delta``).  See FORMATS.md §5a.

The request/usage helpers here are shared by the batch formats.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any, NamedTuple

import orjson

from ctxwatch.formats import FormatSpec as Spec
from ctxwatch.formats import Output, Reader, Sniff, register, usage_count
from ctxwatch.formats.wire.anthropic import (
    anthropic_request_to_parts,
    anthropic_response_info,
    anthropic_system,
    anthropic_usage,
)
from ctxwatch.formats.wire.litellm import LITELLM_CACHE_KEYS, litellm_usage_note
from ctxwatch.formats.wire.messages import MessageMemo
from ctxwatch.formats.wire.openai import openai_message as openai_message  # (for ctxwatch.demo and ctxwatch.budget)
from ctxwatch.formats.wire.openai import (
    openai_request_to_parts,
    openai_response_info,
    openai_usage,
    responses_request_to_parts,
    responses_response_info,
    responses_usage,
)
from ctxwatch.formats.wire.timestamps import parse_timestamp
from ctxwatch.formats.wire.values import int_or_none
from ctxwatch.model import Issue, ParsedCall, Resolved, ResponseInfo, SourceRef, Usage, message_key
from ctxwatch.source import Record

# --- small helpers --------------------------------------------------------------------------------


# --- OpenAI chat completions ------------------------------------------------------------------------


def usage_by_shape(u: Any, flavour: str) -> tuple[Usage | None, list[str]]:
    """Normalize a response's ``usage`` block by the rule its own fields name, and say where they are ambiguous.

    The rule follows the block's shape, never the model name: an OpenAI-compatible proxy (LiteLLM, OpenRouter)
    reports a Claude model in OpenAI's shape, ``prompt_tokens`` being the whole prompt (OpenRouter's "Prompt
    Caching" docs show ``prompt_tokens`` 10,339 with ``prompt_tokens_details.cached_tokens`` 10,318 inside it;
    LiteLLM: :func:`litellm_usage_note`), and reading it by Anthropic's rule found no ``input_tokens`` and
    dropped the prompt.  So: ``prompt_tokens``/``completion_tokens`` -> OpenAI's rule (:func:`openai_usage`), or
    LiteLLM's when ``cache_read_input_tokens``/``cache_creation_input_tokens`` stand beside them;
    ``input_tokens`` with those Anthropic cache keys -> Anthropic's (``input_tokens`` uncached,
    :func:`~ctxwatch.formats.claude_code.anthropic_usage`); ``input_tokens`` with ``input_tokens_details`` ->
    the Responses API's (cached inside, :func:`responses_usage`).  A block with no cache field either way reads
    the same by both rules (no cache: ``input_tokens`` is the whole prompt), and goes by the request's
    ``flavour`` (``anthropic`` | ``responses`` | ``openai``), as before.

    Returns:
        ``(usage or None, sentences)``: one sentence for each ambiguity (a block that names both families with
        numbers that do not reconcile, LiteLLM cache counts above ``prompt_tokens``), for the caller's
        ``ambiguous_usage`` issue; the usage is the reading the sentence names.
    """
    if not isinstance(u, dict):
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


# --- OpenAI Responses API ---------------------------------------------------------------------------


# --- Anthropic Messages -----------------------------------------------------------------------------


class SseStream(NamedTuple):
    """What :func:`parse_sse` reads from an Anthropic SSE stream.

    Attributes:
        usage: the call's usage (tokens), ``None`` when the stream reports none.
        info: the completion's text, tool-use count and stop reason.
        model: ``message_start.message.model``.  message_id: ``message_start.message.id`` (``msg_...``).
        problems: ``(issue kind, message)`` for each part of the usage the stream does not give.
    """

    usage: Usage | None
    info: ResponseInfo
    model: str | None
    message_id: str | None
    problems: list[tuple[str, str]]


#: The prompt-side counts of an Anthropic usage block (message_start's; message_delta's in newer API versions).
PROMPT_USAGE_KEYS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def parse_sse(raw: str) -> SseStream:
    """Usage, completion, model and message id from an Anthropic SSE stream (``message_start`` +
    ``message_delta``).

    ``message_start.message.usage`` gives the input and cache counts (its ``output_tokens`` is a
    placeholder); the last ``message_delta.usage.output_tokens`` is the real output count (FORMATS.md §5a).
    A stream cut before its ``message_delta`` (an interrupted call), or whose ``message_delta`` has no output
    count (``output_tokens`` null or missing), has an unknown output, never the placeholder: the usage is
    marked ``damaged`` (this copy cannot price the call) and a ``no_usage`` problem says which of the two it
    is, and that the call is priced only if a complete copy of the exchange is read (the same exchange may be
    captured twice, in another file too, and the run then counts the complete copy).  A ``message_start``
    that cannot be read (its JSON cut or damaged, no usage block with ``input_tokens``, or none at all before
    a ``message_delta``) leaves the prompt and cache counts unknown
    (``None``, never 0) with an ``invalid_field`` problem, unless the last ``message_delta`` carries all of
    them (newer API versions); ``message_delta``'s output count is kept.  The server tool counts
    (``server_tool_use.web_search_requests``, billed per search) are the last ``message_delta``'s when it
    carries them (Anthropic streams them there, cumulative like its other counts; Messages API reference,
    "Streaming messages"), else ``message_start``'s.  Never raises on odd events.
    """
    start_usage: dict[str, Any] | None = None
    start_bad: str | None = None  # why message_start's usage could not be read
    delta_prompt: dict[str, Any] | None = None  # the prompt side of the last message_delta carrying all of it
    out_tokens: Any = None
    server: dict[str, Any] | None = None  # the last message_delta's server_tool_use block
    saw_delta = delta_bad = False
    delta_gap = ""  # what the last message_delta without an output count lacks
    model: str | None = None
    message_id: str | None = None
    texts: list[str] = []
    uses = 0
    stop: str | None = None
    event: str | None = None
    for line in raw.splitlines():
        if not line.strip():
            event = None  # (a blank line ends an SSE event)
            continue
        if line.startswith("event:"):
            event = line[6:].strip()
            continue
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        try:
            ev = orjson.loads(data)
        except orjson.JSONDecodeError:
            # Which event was damaged: the SSE event name, else its type as far as the data goes.
            name = event or next((n for n in ("message_start", "message_delta") if f'"{n}"' in data), None)
            if name == "message_start":
                start_bad = "its message_start event is not valid JSON (cut or damaged)"
            elif name == "message_delta":
                saw_delta = delta_bad = True
            continue
        if not isinstance(ev, dict):
            continue
        t = ev.get("type")
        if t == "message_start" and isinstance(msg := ev.get("message"), dict):
            if isinstance(u := msg.get("usage"), dict) and u.get("input_tokens") is not None:
                start_usage, start_bad = dict(u), None
            else:
                start_bad = "its message_start event has no usage block with input_tokens"
            model = m if isinstance(m := msg.get("model"), str) else None
            message_id = mid if isinstance(mid := msg.get("id"), str) else None
        elif t == "message_delta":
            saw_delta = True
            u = du if isinstance(du := ev.get("usage"), dict) else {}
            if u.get("output_tokens") is not None:
                out_tokens = u["output_tokens"]  # (not a count: passed on for the sanitizer to report)
            else:
                delta_gap = "has no usage block" if not isinstance(du, dict) else \
                    "usage has output_tokens null" if "output_tokens" in u else "usage has no output_tokens"
            if isinstance(u.get("server_tool_use"), dict):
                server = u["server_tool_use"]
            for k in PROMPT_USAGE_KEYS:
                if start_usage is not None and int_or_none(u.get(k)):
                    start_usage[k] = u[k]
            if all(u.get(k) is not None for k in PROMPT_USAGE_KEYS):
                delta_prompt = {k: u[k] for k in PROMPT_USAGE_KEYS}
            delta = d if isinstance(d := ev.get("delta"), dict) else {}
            stop = r if isinstance(r := delta.get("stop_reason"), str) else stop
        elif t == "content_block_start" and (ev.get("content_block") or {}).get("type") == "tool_use":
            uses += 1
        elif t == "content_block_delta" and (ev.get("delta") or {}).get("type") == "text_delta":
            texts.append(str(ev["delta"].get("text") or ""))
    if start_usage is None and start_bad is None and saw_delta:
        start_bad = "it has no message_start event"
    problems: list[tuple[str, str]] = []
    usage = None
    if start_usage is None and start_bad is not None:
        # anthropic_usage counts a missing cache key as 0, right for a usage block that omits it but a guess for
        # one that could not be read: here the prompt side is unknown unless message_delta gives all of it.
        if delta_prompt is not None:
            start_usage = delta_prompt
            problems.append(("invalid_field", f"response.body_raw: {start_bad}; the usage is message_delta's, "
                                              "which carries every count"))
        else:
            usage = Usage(output=usage_count(out_tokens),
                          web_searches=usage_count(server.get("web_search_requests")) if server else None) \
                if out_tokens is not None else None
            known = "" if out_tokens is None else " (the output count is message_delta's)"
            problems.append(("invalid_field", f"response.body_raw: the stream's usage could not be read: {start_bad}; "
                                              f"its prompt and cache token counts are unknown{known}"))
    if start_usage is not None:
        # message_start's output_tokens is a placeholder (FORMATS.md 5a): only message_delta's count is the output.
        # (the searches are billed per search: message_start's block does not have them, the last delta does)
        usage = anthropic_usage({**start_usage, "output_tokens": out_tokens,
                                 **({"server_tool_use": server} if server is not None else {})})
        if usage is not None and out_tokens is None:
            # (the output is unknown, and pricing it as 0 would pass a part of the cost for all of it)
            usage = replace(usage, damaged=True)
            # (the note is about this copy of the exchange: a complete copy in another file may price the call)
            unpriced = "so the call is priced only if a complete copy of the exchange is read"
            if delta_bad:
                problems.append(("invalid_field", "response.body_raw: its message_delta event is not valid JSON "
                                                  "(cut or damaged): this copy's output token count is unknown, "
                                                  f"{unpriced}"))
            elif saw_delta:
                problems.append(("no_usage", f"the SSE stream's message_delta {delta_gap}: this copy's output token "
                                             f"count is unknown (message_start's is a placeholder), {unpriced}"))
            else:
                problems.append(("no_usage", "the SSE stream ends before its message_delta usage (cut or "
                                             "interrupted): this copy's output token count is unknown "
                                             f"(message_start's is a placeholder), {unpriced}"))
    return SseStream(usage, ResponseInfo(text="".join(texts), tool_calls=uses, finish_reason=stop), model,
                     message_id, problems)


# --- what a damaged request body leaves unknown ---------------------------------------------------

def _has_role(m: Any) -> bool:
    """A chat message object: a JSON object with a string ``role`` (the chat completions, Anthropic Messages
    and Inspect message types all require one)."""
    return isinstance(m, dict) and isinstance(m.get("role"), str)


def _responses_item(m: Any) -> bool:
    """A Responses API input item: an object, with a string ``role`` when it is a message (``type`` absent or
    ``message``; tool calls and their outputs carry none)."""
    return isinstance(m, dict) and (m.get("type", "message") != "message" or isinstance(m.get("role"), str))


def history_problem(body: dict[str, Any], key: str, is_message: Callable[[Any], bool] = _has_role, *,
                    text_ok: bool = False, object_ok: bool = False, empty_ok: bool = True) -> str | None:
    """Why ``body[key]``, a request body's history (chat ``messages``, Responses ``input``, Gemini ``contents``,
    an Inspect event's ``input``), does not say what was sent, or ``None`` when it does.

    ``"is missing"``, ``"is not a list"``, or ``"holds N entries that are not a message object"`` (entries for
    which ``is_message`` is false: no API takes them, so what was really sent is not known).  ``text_ok``: a
    string is a whole history (the Responses API's ``input``); ``object_ok``: one object is (Gemini's
    ``contents``).  Every one of these APIs requires the field, so a body without it is a damaged record, not a
    request with no messages.  ``empty_ok=False``: an empty list ``"is empty"``, for the APIs that reject one
    (chat completions and Anthropic Messages, :func:`request_problems`; Gemini ``contents``) and the logs of
    requests made through them (an Inspect event's ``input``, a SWE-agent step's ``query``).
    """
    if key not in body:
        return "is missing"
    v = body[key]
    if (text_ok and isinstance(v, str)) or (object_ok and isinstance(v, dict)):
        return None
    if not isinstance(v, list):
        return "is not a list"
    if not v and not empty_ok:
        return "is empty"
    n = sum(not is_message(m) for m in v)
    if n:
        return f"holds {n} entr{'ies' if n != 1 else 'y'} that {'are' if n != 1 else 'is'} not a message object"
    return None


def forget_history(call: ParsedCall, problem: str, where: str, *, system: list[str] | None = None,
                   tools_field: bool = False) -> str:
    """Mark ``call``'s history unknown (``messages = None``; ``extra["history_unknown"]``) because its request
    field ``where`` ``problem`` (:func:`history_problem`), and return the ``invalid_field`` sentence for it.

    Read as empty, such a history was a request with no messages, and with no system prompt when the system
    prompt travels as the first messages (chat completions, Responses, Inspect): a damaged line raised a
    critical "system prompt evicted" (and a history drop, an estimate of a prompt without its history).  So the
    system prompt is unknown too (``system = None``), unless the request carries it in a field of its own that
    was read and is not empty (``system``: the text of Anthropic's ``system``, Gemini's ``systemInstruction``;
    a system message inside the damaged list is not counted in it); and the tool schemas are unknown (``tools =
    None``) unless the request has a ``tools`` list (``tools_field``): in a record that lost its history, a
    missing ``tools`` says nothing, and read as none it made the next call's schemas "grow" by all of them.
    """
    call.messages = None
    call.extra["history_unknown"] = True
    lost = ["the history"]
    if system and any(system):
        call.system = list(system)
    else:
        call.system = None
        lost.append("the system prompt")
    if not tools_field and call.tools is not None:
        call.tools = None
        lost.append("the tool schemas")
    what = lost[0] if len(lost) == 1 else f"{', '.join(lost[:-1])} and {lost[-1]}"
    return f"{where} {problem}: {what} {'is' if len(lost) == 1 else 'are'} unknown"


def request_problems(call: ParsedCall, body: dict[str, Any], flavour: str, where: str = "request") -> list[str]:
    """Mark on ``call`` what the request body ``body`` leaves unknown, and say why (one sentence each, for the
    caller's ``invalid_field`` issues; ``where`` names the body in them: ``request``, ``request.body``...).

    ``flavour``: ``openai`` (chat completions: ``messages``), ``anthropic`` (``messages`` and ``system``),
    ``responses`` (``input`` and ``instructions``) or ``completions`` (a legacy ``prompt`` string: no
    message list to check).  A ``tools`` field that is not a list leaves the tool schemas unknown (read as none,
    the floor lost its schemas and the next call's "grew" by all of them); a system prompt field that is not
    text (Anthropic ``system`` neither a string nor a list of blocks, Responses ``instructions`` not a string)
    leaves the system prompt unknown, where it was read as none; a damaged history is unknown, with what it
    takes along (:func:`forget_history`).

    An empty ``messages`` list is damage too: both APIs reject it, so no call was made with one (OpenAI answers
    ``Invalid 'messages': empty array. Expected an array with minimum length 1``, code ``empty_array``, quoted
    in CopilotKit/CopilotKit#529, and earlier ``[] is too short - 'messages'``, sashabaranov/go-openai#605;
    Anthropic answers ``messages: at least one message is required``, quoted in
    devoxx/DevoxxGenieIDEAPlugin#567).  Read as a request with no messages, it raised a critical "system
    prompt evicted" against a reported prompt of hundreds of tokens.  A Responses request that continues a
    stored conversation (``previous_response_id`` or ``conversation``: OpenAI's "Conversation state" guide)
    sends only the new items, its history being on the server: that history is unknown, not empty, whether
    ``input`` is empty or not, and so is the system prompt unless ``instructions`` gives it (a developer
    message of an earlier turn is part of that history); that is the API at work, not damage, so no sentence.
    """
    problems = []
    tools = body.get("tools")
    if tools is not None and not isinstance(tools, list):
        call.tools = None
        problems.append(f"{where}.tools is a JSON {type(tools).__name__}, not a list: the tool schemas are unknown")
    tools_field = isinstance(tools, list) or isinstance(body.get("functions"), list)
    sys_key = {"anthropic": "system", "responses": "instructions"}.get(flavour)
    if sys_key is not None and body.get(sys_key) is not None \
            and not isinstance(body[sys_key], str) and not (flavour == "anthropic" and isinstance(body[sys_key], list)):
        call.system = None
        problems.append(f"{where}.{sys_key} is a JSON {type(body[sys_key]).__name__}, not text: the system prompt "
                        "is unknown")
    if flavour == "responses":
        bad = history_problem(body, "input", _responses_item, text_ok=True)
        if bad:
            problems.append(forget_history(call, bad, f"{where}.input", tools_field=tools_field))
        elif body.get("previous_response_id") or body.get("conversation"):
            call.messages = None
            call.extra["history_unknown"] = True
            if not (isinstance(body.get("instructions"), str) and body["instructions"]):
                call.system = None
    elif flavour != "completions":
        bad = history_problem(body, "messages", empty_ok=False)
        if bad:
            own = anthropic_system(body.get("system")) if flavour == "anthropic" else None
            problems.append(forget_history(call, bad, f"{where}.messages", system=own, tools_field=tools_field))
    return problems


# --- readers ---------------------------------------------------------------------------------------

def _flavour(req: dict[str, Any], resp: Any) -> str:
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
    if "system" in req or any(isinstance(t, dict) and "input_schema" in t for t in req.get("tools") or []):
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


def build_call(path: str, rec: Record, req: dict[str, Any], resp: Any, *, usage: Usage | None = None,
               info: ResponseInfo | None = None, model: str | None = None,
               timestamp: float | None = None, extra: dict[str, Any] | None = None,
               memo: MessageMemo | None = None, problems: list[str] | None = None) -> ParsedCall:
    """A :class:`ParsedCall` from a request body and a response body of any of the three flavours.

    Args:
        path: the log file. rec: the record (for the source reference).
        req: the request body. resp: the response body (may be ``None``).
        usage / info / model: override what the response body would give (e.g. from an SSE stream).
        timestamp: epoch seconds. extra: format-specific extras.
        memo: reuse of messages re-sent from the previous call of the same reader (see :class:`MessageMemo`).
        problems: when given, receives a sentence for each way the usage block's fields are ambiguous
            (:func:`usage_by_shape`), for the caller's ``ambiguous_usage`` issues.
    """
    flavour = _flavour(req, resp)
    if usage is None:
        usage, ambiguous = usage_by_shape(resp.get("usage") if isinstance(resp, dict) else None, flavour)
        if ambiguous and problems is not None:
            problems += ambiguous
    if model is None:
        model = req.get("model") if isinstance(req.get("model"), str) else None
        if model is None and isinstance(resp, dict) and isinstance(resp.get("model"), str):
            model = resp["model"]
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
        extra = {**(extra or {}), "error": {k: str(err[k])[:200] for k in ("type", "code") if err.get(k)}}
    return ParsedCall(
        source=SourceRef(path, rec.line, rec.line_end, rec.byte_start, rec.byte_end),
        timestamp=timestamp, model=model, provider=provider, system=system, tools=tools, messages=messages,
        max_output_tokens=mx, usage=usage, response=info, extra=extra or {},
    )


class _MemoReader(Reader):
    """A reader of one-record-per-call formats that reuses the previous call's re-sent messages."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.memo = MessageMemo()


def json_hash(v: Any) -> int | None:
    """A hash of a value's compact JSON (equal for equal values written with the same key order), or ``None``
    when orjson cannot write it (nested too deeply, an int beyond 64 bits)."""
    try:
        return hash(orjson.dumps(v))
    except TypeError:  # (orjson.JSONEncodeError)
        return None


def record_hash(record: dict[str, Any], body_at: tuple[str, ...], memo: MessageMemo) -> int | None:
    """A hash of a whole record's content (equal for identical records), or ``None`` when it cannot be written.

    ``body_at``: the keys leading from ``record`` to its request body.  The body's messages, which ``memo``
    has just hashed one by one to build the call, enter as those hashes instead of being written out again (an
    agent's request re-sends its whole history: writing it twice more per record slowed a read by a fifth);
    a record the memo did not read (a Responses API body) is written whole.
    """
    body: Any = record
    for k in body_at:
        body = body.get(k) if isinstance(body, dict) else None
    keys = memo.keys_of(body.get("messages")) if isinstance(body, dict) else None
    if keys is None:
        return json_hash(record)

    def swapped(d: dict[str, Any], i: int) -> dict[str, Any]:
        if i == len(body_at):
            return {**d, "messages": keys}
        return {**d, body_at[i]: swapped(d[body_at[i]], i + 1)}

    return json_hash(swapped(record, 0))


def usage_rank(u: Usage | None) -> int:
    """How much of a call's usage one copy of its record reports, to choose between two copies of one call:
    0 for none, else 1, plus 8 when undamaged, 4 with a prompt count and 2 with an output count.  A stream cut
    before its ``message_delta`` (damaged, no output count: 5) ranks below its whole copy (15)."""
    if u is None:
        return 0
    return 1 + 8 * (not u.damaged) + 4 * (u.prompt_total is not None) + 2 * (u.output is not None)


def copy_rank(u: Usage | None) -> tuple[int, int]:
    """:func:`usage_rank`, then the output count (-1 when unknown or not a count): between two copies that
    report as much of the usage, the larger output count is the later state of the response (the final count
    of a streamed response is its largest), as :func:`ctxwatch.engine.run._usage_rank` ranks copies from different
    files."""
    out = u.output if u is not None and isinstance(u.output, int) and not isinstance(u.output, bool) else -1
    return usage_rank(u), out


def _compared(counted: tuple[int, int], copy: tuple[int, int]) -> str:
    """What the counted copy (rank ``counted``, :func:`copy_rank`) reports against a copy left out (``copy``,
    never ranked above it): ``more`` of the usage, a ``larger`` output count, or ``same`` (as much)."""
    if counted[0] > copy[0]:
        return "more"
    return "larger" if counted[1] > copy[1] else "same"


class _Copy(NamedTuple):
    """One copy of a call read by :class:`ResponseIds`: its line, rank (:func:`copy_rank`) and own issues."""

    line: int
    rank: tuple[int, int]
    notes: list[Issue]


class ResponseIds:
    """Dedupe keys of one file's calls from the provider's response ids (``chatcmpl-...``, ``msg_...``).

    The provider's response id names one API call: a record seen again (a log replaced by a copy, a resumed
    run re-logging, an exchange captured twice) updates instead of adding (failure cases B11/B19).  The key
    holds the request too (model, system prompt, tool schemas, max output tokens, every message): a mock server
    or a test stub answering every call with one constant id must not merge different requests into one call,
    while a copy of a record stays the same call.  The reported usage is not part of the key: two copies of one
    exchange may report different amounts of it (one copy's stream cut before its ``message_delta``).

    Of the copies of one call in a file, the one counted is the one that reports the most of its usage
    (:func:`copy_rank`) and, among those that report as much, the first one read, as a run keeps the copy read
    first from files read one after another (:func:`ctxwatch.engine.run._keeps_earlier`): a later copy is emitted
    only when it ranks above every earlier one (:meth:`better_copy`), and replaces the call.  Every copy left
    out has notes naming the copy counted (:meth:`not_counted`), given again when a later copy replaces it
    (:meth:`counted_copy`), so that no note names a copy that is no longer counted.  A record with no response
    id (a refused request) is keyed by its content instead (:meth:`content`).  Used by the canonical and
    claude-trace readers.

    Args:
        path: the log file (for the issues).
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._ids: dict[str, tuple[str, int]] = {}  # response id -> (first call key, line) using it
        self._told: set[str] = set()  # response ids already reported as reused for another request
        self._counted: dict[str, _Copy] = {}  # call key -> the copy counted
        self._left: dict[str, list[_Copy]] = {}  # call key -> the copies left out that were given notes
        self._seen: dict[int, int] = {}  # content hash of an id-less record -> how many were read so far
        self._origin: int | None = None  # line of the first record read (see start)

    def start(self, line: int) -> None:
        """Note a record's line before it is read (the first one noted is where the reading started)."""
        if self._origin is None:
            self._origin = line

    def content(self, call: ParsedCall, h: int | None, line: int) -> None:
        """Key a call that has no key yet (its response has no id) by its record's content hash ``h``
        (:func:`record_hash`) and its occurrence number among identical records of this file (``line``: the
        record's 1-based line).

        The same log in two files (a copy, a resumed run re-logging) gives each record the same key, so the k-th
        identical record of one file is the same call as the k-th of the other, while two identical records of
        one file (an agent retrying the same refused request) stay two calls.  A file read from a later line
        than its first (a range of a big file read by a worker process, :mod:`ctxwatch.engine.parallel`; a backfill
        of its end) cannot number its records from the file's start: their keys hold the line it started at,
        so that identical records of two ranges stay apart.  A record with no hash (``None``) gets no key."""
        if call.key is not None or h is None:
            return
        n = self._seen[h] = self._seen.get(h, 0) + 1
        # (the hash part comes first and alone: ctxwatch.engine.run.reload_parsed recognises a record read alone by it)
        where = f"{n}" if self._origin in (None, 1) else f"{self._origin}+{n}"
        call.key = f"content:{h & 0xFFFFFFFFFFFFFFFF:016x}:{where}"

    def assign(self, call: ParsedCall, rid: Any, line: int) -> list[Issue]:
        """Set ``call.key`` from response id ``rid`` (a non-empty string, else the call gets no key and is never
        merged) and the call's request; return a ``duplicate_response_id`` note the first time an id comes back
        on a different request (``line``: the record's 1-based line number)."""
        if not isinstance(rid, str) or not rid:
            return []
        msgs = call.messages or []
        # (message keys are the memo's hashes of each raw message: the whole history, for the cost of a tuple)
        shape = hash((call.model, tuple(call.system or ()), json_hash(call.tools), json_hash(call.max_output_tokens),
                      tuple(message_key(m) for m in msgs))) & 0xFFFFFFFF
        call.key = f"response:{rid}:{len(msgs)}:{shape:08x}"
        first = self._ids.setdefault(rid, (call.key, line))
        if first[0] == call.key or rid in self._told:
            return []
        self._told.add(rid)
        return [Issue(self.path, line, "duplicate_response_id", f"response id {rid!r} was already used at line "
                      f"{first[1]} for a different request; counted as separate calls")]

    def better_copy(self, call: ParsedCall, line: int) -> int | None:
        """The line of the copy of ``call`` (same key, this file) counted so far when that copy reports at least
        as much of the usage (:func:`copy_rank`): ``call`` is then left out (:meth:`not_counted`).  ``None``
        when ``call`` is to be counted (:meth:`counted_copy`): it has no key, is the first copy, or ranks above
        the copy counted so far, which it replaces as a run replaces a call whose key comes back.  A copy that
        ranks below must not be emitted (the run would replace the complete numbers with it), nor one that
        ranks the same (a note naming the copy counted would name a copy that no longer is).  ``line``: the
        record's 1-based line."""
        if call.key is None:
            return None
        counted = self._counted.get(call.key)
        if counted is not None and counted.line != line and counted.rank >= copy_rank(call.usage):
            return counted.line
        return None

    def counted_copy(self, call: ParsedCall, line: int, notes: list[Issue]) -> list[Issue | Resolved]:
        """Record ``call`` (``line``; ``notes``: its own issues), which :meth:`better_copy` chose, as its key's
        copy counted.  When it replaces an earlier copy, the issues of that copy (a stream cut before its
        ``message_delta``) and those of the copies left out so far, which named that copy, are withdrawn
        (:class:`Resolved`) and given again naming ``line`` (:meth:`not_counted`); an earlier copy without
        issues of its own gets none."""
        if call.key is None:
            return []
        old = self._counted.get(call.key)
        new = self._counted[call.key] = _Copy(line, copy_rank(call.usage), list(notes))
        if old is None or old.line == line:
            return []
        left = self._left.setdefault(call.key, [])
        out: list[Issue | Resolved] = [Resolved(i.path, i.line, i.kind) for i in old.notes]
        for copy in left:
            out += [Resolved(i.path, i.line, i.kind) for i in self._words(copy, old)]
        if old.notes:
            left.append(_Copy(old.line, old.rank, old.notes))
            left.sort(key=lambda c: c.line)
        for copy in left:
            out += self._words(copy, new)
        return out

    def not_counted(self, call: ParsedCall, line: int, notes: list[Issue]) -> list[Issue]:
        """The issues of ``call`` (``line``; ``notes``: its own issues), a copy that :meth:`better_copy` keeps
        out: its own notes, saying that it is not counted and which copy is, or one ``incomplete_copy`` note
        when it has none and reports less than the copy counted (an exact later copy without issues of its own
        is left out silently)."""
        assert call.key is not None  # (better_copy leaves out only keyed copies)
        copy = _Copy(line, copy_rank(call.usage), list(notes))
        counted = self._counted[call.key]
        issued = self._words(copy, counted)
        if issued:
            self._left.setdefault(call.key, []).append(copy)
        return issued

    def _words(self, copy: _Copy, counted: _Copy) -> list[Issue]:
        """The issues given for ``copy``, left out while ``counted`` is the copy counted."""
        how = _compared(counted.rank, copy.rank)
        if not copy.notes:
            if how == "same":
                return []
            less = "less of its usage" if how == "more" else "a smaller output count"
            return [Issue(self.path, copy.line, "incomplete_copy", f"a copy of the call at line {counted.line} "
                          f"that reports {less}; not counted (line {counted.line} is)")]
        what = {"more": "which reports more of the usage", "larger": "which reports a larger output count",
                "same": "which reports as much of the usage and was read first"}[how]
        why = f"this copy is not counted: the copy at line {counted.line}, {what}, is"
        return [Issue(i.path, i.line, i.kind, f"{i.message}; {why}", i.call_key) for i in copy.notes]


class CanonicalReader(_MemoReader):
    """Reader for ``{"request": ..., "response": ...}`` records (OpenAI chat, Anthropic, Responses API)."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.ids = ResponseIds(path)

    def feed(self, rec: Record) -> Iterable[Output]:
        """One record = one call; anything that is not such a record is an ``unknown_record`` issue."""
        self.ids.start(rec.line)
        v = rec.value
        if not isinstance(v, dict) or not isinstance(v.get("request"), dict):
            return [Issue(self.path, rec.line, "unknown_record", "not a {request, response} record; skipped")]
        req = v["request"]
        if isinstance(req.get("body"), dict):  # a wrapper that nests the body, like claude-trace
            req = req["body"]
        resp = v.get("response")
        if isinstance(resp, dict) and isinstance(resp.get("body"), dict):
            resp = resp["body"]
        ts = parse_timestamp(v.get("timestamp") or v.get("time") or v.get("created_at"))
        if ts is None and isinstance(resp, dict):
            ts = parse_timestamp(resp.get("created"))
        ambiguous: list[str] = []
        call = build_call(self.path, rec, req, resp, timestamp=ts, memo=self.memo, problems=ambiguous)
        extra_issues = self.ids.assign(call, resp.get("id") if isinstance(resp, dict) else None, rec.line)
        where = "request" if req is v["request"] else "request.body"
        notes = [*_malformed(self.path, rec.line, req, resp, call, where), *extra_issues,
                 *(Issue(self.path, rec.line, "ambiguous_usage", a) for a in ambiguous)]
        if self.ids.better_copy(call, rec.line) is not None:
            return self.ids.not_counted(call, rec.line, notes)
        replaced = self.ids.counted_copy(call, rec.line, notes)
        if call.key is None:  # (no response id: a refused request)
            nested = v["request"] is not req
            self.ids.content(call, record_hash(v, ("request", "body") if nested else ("request",), self.memo),
                             rec.line)
        call.session = v.get("session") if isinstance(v.get("session"), str) else None
        if v.get("window") is not None:
            # (a value that is not a window, "big", 0 or -100, is passed on for run._sanitize to report and make
            # unknown: it fell back to the catalogue's window silently)
            call.window = usage_count(v["window"])
        if isinstance(v.get("context"), str):
            call.context = v["context"]
        return [call, *replaced, *notes]


def _malformed(path: str, line: int, req: dict[str, Any], resp: Any, call: ParsedCall, where: str) -> list[Issue]:
    """``invalid_field`` issues for a record whose request history, system prompt or tools, or whose response, is
    missing or has the wrong JSON type (:func:`request_problems`); the call is kept with that part unknown (a
    history of 0 tokens, an absent system prompt or no usage would pass for a real value)."""
    problems = request_problems(call, req, _flavour(req, resp), where)
    if resp is not None and not isinstance(resp, dict):
        problems.append(f"response is a JSON {type(resp).__name__}, not an object: usage unknown")
    return [Issue(path, line, "invalid_field", p) for p in problems]


class ClaudeTraceReader(_MemoReader):
    """Reader for claude-trace HTTP captures (request.body / response.body or SSE ``body_raw``)."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.ids = ResponseIds(path)

    def feed(self, rec: Record) -> Iterable[Output]:
        """One line = one HTTP exchange; non-/messages requests and failed exchanges become issues."""
        self.ids.start(rec.line)
        v = rec.value
        if not isinstance(v, dict) or not isinstance(v.get("request"), dict):
            return [Issue(self.path, rec.line, "unknown_record", "not a claude-trace exchange; skipped")]
        rq, rs = v["request"], r if isinstance(r := v.get("response"), dict) else {}
        body = rq.get("body")
        url = str(rq.get("url") or "")
        if not isinstance(body, dict) or ("messages" not in body and "/messages" not in url):
            return [Issue(self.path, rec.line, "unknown_record", f"not a Messages API request ({url[:80]}); skipped")]
        status = rs.get("status_code")
        if isinstance(status, int) and status != 200:
            return [Issue(self.path, rec.line, "failed_request", f"HTTP {status}; not counted as a call")]
        usage = info = model = rid = None
        notes: list[Issue] = []
        if isinstance(rs.get("body"), dict):
            resp = rs["body"]
            rid = resp.get("id")
        else:
            resp = None
            if isinstance(rs.get("body_raw"), str):
                usage, info, model, rid, problems = parse_sse(rs["body_raw"])
                notes = [Issue(self.path, rec.line, kind, msg) for kind, msg in problems]
        ts = parse_timestamp(rq.get("timestamp")) or parse_timestamp(v.get("logged_at"))
        call = build_call(self.path, rec, body, resp, usage=usage, info=info, timestamp=ts, memo=self.memo)
        call.provider = "anthropic"
        notes += [Issue(self.path, rec.line, "invalid_field", p)
                  for p in request_problems(call, body, _flavour(body, resp), "request.body")]
        if model and not call.model:
            call.model = model
        # (after the model is settled: it is part of the key that keeps different requests apart)
        notes += self.ids.assign(call, rid, rec.line)
        if self.ids.better_copy(call, rec.line) is not None:  # (the exchange logged again: the copy counted stays)
            return self.ids.not_counted(call, rec.line, notes)
        replaced = self.ids.counted_copy(call, rec.line, notes)  # (a cut copy counted until this whole one)
        if call.key is None:  # (no message id: a stream cut before message_start)
            self.ids.content(call, record_hash(v, ("request", "body"), self.memo), rec.line)
        # Claude Code sends side calls beside the agent's own: max_tokens:1 quota probes and tool-less
        # helper calls (topic detection on a small model). They have their own prompts, so they are kept
        # out of the main context's history, floor and flags.
        if body.get("max_tokens") == 1 and not body.get("tools"):
            call.extra["probe"] = True
            call.context = "probe"
        elif not body.get("tools"):
            call.context = "side"
        return [call, *replaced, *notes]


def _sniff_canonical(s: Sniff) -> float:
    vals = [v for v in s.values if isinstance(v, dict)]
    if not vals:
        return 0.0
    hits = 0
    for v in vals:
        rq = v.get("request")
        if isinstance(rq, dict) and ("messages" in rq or "input" in rq) and "body" not in rq:
            hits += 1
    return 0.9 * hits / len(vals)


def _sniff_trace(s: Sniff) -> float:
    vals = [v for v in s.values if isinstance(v, dict)]
    if not vals:
        return 0.0
    hits = sum(1 for v in vals if isinstance(v.get("request"), dict) and isinstance(v["request"].get("body"), dict)
               and "url" in v["request"])
    return 0.95 * hits / len(vals)


register(Spec(
    name="canonical", aliases=("openai", "anthropic", "responses"),
    description="ctxwatch canonical {request, response} records (OpenAI chat, Anthropic Messages, Responses API)",
    sniff=_sniff_canonical, reader=CanonicalReader, records_independent=True,
    example='{"request":{"model":"gpt-4o","messages":[...]},"response":{"usage":{"prompt_tokens":12}}}',
))
register(Spec(
    name="claude-trace",
    description="claude-trace raw HTTP captures (request.body / response.body or SSE body_raw)",
    sniff=_sniff_trace, reader=ClaudeTraceReader,
    example="~/.claude-trace/log-*.jsonl",
))
