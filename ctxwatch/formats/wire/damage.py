"""What a damaged request body leaves unknown: a history, system prompt or tool list that is missing or of the
wrong JSON type.

Read as empty, such a field passes for a real value (a request with no messages, no system prompt, no tools),
and a damaged line raised flags such as "system prompt evicted".  These rules mark the part unknown on the
call instead and say why, one sentence per part, for the reader's ``invalid_field`` issue.  Every request shape
(chat completions, Anthropic Messages, Responses, Gemini, Inspect events, SWE-agent steps) uses them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ctxwatch.formats.wire.anthropic import anthropic_system
from ctxwatch.formats.wire.messages import MessageMemo
from ctxwatch.model import ParsedCall


def _has_role(m: Any) -> bool:
    """A chat message object: a JSON object with a string ``role`` (the chat completions, Anthropic Messages
    and Inspect message types all require one)."""
    return isinstance(m, dict) and isinstance(m.get("role"), str)


def _responses_item(m: Any) -> bool:
    """A Responses API input item: an object, with a string ``role`` when it is a message (``type`` absent or
    ``message``; tool calls and their outputs carry none)."""
    return isinstance(m, dict) and (m.get("type", "message") != "message" or isinstance(m.get("role"), str))


def history_problem(body: dict[str, Any], key: str, is_message: Callable[[Any], bool] = _has_role, *,
                    text_ok: bool = False, object_ok: bool = False, empty_ok: bool = True,
                    memo: MessageMemo | None = None) -> str | None:
    """Why ``body[key]``, a request body's history (chat ``messages``, Responses ``input``, Gemini ``contents``,
    an Inspect event's ``input``), does not say what was sent, or ``None`` when it does.

    ``"is missing"``, ``"is not a list"``, or ``"holds N entries that are not a message object"`` (entries for
    which ``is_message`` is false: no API takes them, so what was really sent is not known).  ``text_ok``: a
    string is a whole history (the Responses API's ``input``); ``object_ok``: one object is (Gemini's
    ``contents``).  Every one of these APIs requires the field, so a body without it is a damaged record, not a
    request with no messages.  ``empty_ok=False``: an empty list ``"is empty"``, for the APIs that reject one
    (chat completions and Anthropic Messages, :func:`request_problems`; Gemini ``contents``) and the logs of
    requests made through them (an Inspect event's ``input``, a SWE-agent step's ``query``).  ``memo``: the
    :class:`~.messages.MessageMemo` that built the history's messages, which asks only the entries the previous
    call did not send.
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
    n = memo.misses(v, is_message) if memo is not None else sum(not is_message(m) for m in v)
    if n:
        return f"holds {n} entr{'ies' if n != 1 else 'y'} that {'are' if n != 1 else 'is'} not a message object"
    return None


def forget_history(call: ParsedCall, problem: str, where: str, *, system: list[str] | None = None,
                   tools_field: bool = False) -> str:
    """Mark ``call``'s history unknown (``messages = None``; :attr:`~ctxwatch.model.Provenance.history_unknown`)
    because its request
    field ``where`` ``problem`` (:func:`history_problem`), and return the ``invalid_field`` sentence for it.

    Read as empty, such a history would be a request with no messages, and with no system prompt when the
    system prompt travels as the first messages (chat completions, Responses, Inspect): a damaged line would
    raise a critical "system prompt evicted" (and a history drop, an estimate of a prompt without its history).  So the
    system prompt is unknown too (``system = None``), unless the request carries it in a field of its own that
    was read and is not empty (``system``: the text of Anthropic's ``system``, Gemini's ``systemInstruction``;
    a system message inside the damaged list is not counted in it); and the tool schemas are unknown (``tools =
    None``) unless the request has a ``tools`` list (``tools_field``): in a record that lost its history, a
    missing ``tools`` says nothing, and read as none it would make the next call's schemas "grow" by all of them.
    """
    call.messages = None
    call.provenance.history_unknown = True
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


def request_problems(call: ParsedCall, body: dict[str, Any], flavour: str, where: str = "request",
                     memo: MessageMemo | None = None) -> list[str]:
    """Mark on ``call`` what the request body ``body`` leaves unknown, and say why (one sentence each, for the
    caller's ``invalid_field`` issues; ``where`` names the body in them: ``request``, ``request.body``...).

    ``flavour``: ``openai`` (chat completions: ``messages``), ``anthropic`` (``messages`` and ``system``),
    ``responses`` (``input`` and ``instructions``) or ``completions`` (a legacy ``prompt`` string: no
    message list to check).  A ``tools`` field that is not a list leaves the tool schemas unknown (read as none,
    the floor would lose its schemas and the next call's would "grow" by all of them); a system prompt field
    that is not text (Anthropic ``system`` neither a string nor a list of blocks, Responses ``instructions`` not
    a string) leaves the system prompt unknown, not absent; a damaged history is unknown, with what it takes
    along (:func:`forget_history`).

    An empty ``messages`` list is damage too: both APIs reject it, so no call was made with one (OpenAI answers
    ``Invalid 'messages': empty array. Expected an array with minimum length 1``, code ``empty_array``, and
    earlier ``[] is too short - 'messages'``; Anthropic answers ``messages: at least one message is
    required``).  Read as a request with no messages, it would raise a critical "system prompt evicted" against
    a reported prompt of hundreds of tokens.  A Responses request that continues a
    stored conversation (``previous_response_id`` or ``conversation``: OpenAI's "Conversation state" guide)
    sends only the new items, its history being on the server: that history is unknown, not empty, whether
    ``input`` is empty or not, and so is the system prompt unless ``instructions`` gives it (a developer
    message of an earlier turn is part of that history); that is the API at work, not damage, so no sentence.
    ``memo``: the :class:`~.messages.MessageMemo` that built the call's messages (see :func:`history_problem`).
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
            call.provenance.history_unknown = True
            if not (isinstance(body.get("instructions"), str) and body["instructions"]):
                call.system = None
    elif flavour != "completions":
        bad = history_problem(body, "messages", empty_ok=False, memo=memo)
        if bad:
            own = anthropic_system(body.get("system")) if flavour == "anthropic" else None
            problems.append(forget_history(call, bad, f"{where}.messages", system=own, tools_field=tools_field))
    return problems
