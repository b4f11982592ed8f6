"""Google Gemini API shapes: ``usageMetadata``, content parts, ``generateContent`` requests and responses.

**Usage** (Gemini API reference, ``GenerateContentResponse.UsageMetadata``): ``promptTokenCount`` is the whole
prompt and *includes* ``cachedContentTokenCount``; ``thoughtsTokenCount`` is counted *separately* from
``candidatesTokenCount`` (``totalTokenCount`` = prompt + candidates + thoughts + toolUsePrompt).  So, in
ctxwatch's terms (:class:`~ctxwatch.model.Usage`): prompt_total = promptTokenCount, cache_read =
cachedContentTokenCount, input_uncached = prompt − cached, output = candidatesTokenCount + thoughtsTokenCount,
reasoning = thoughtsTokenCount.  ``toolUsePromptTokenCount`` (what built-in tools such as Google Search
grounding, URL context and code execution feed back to the model) is given apart from ``promptTokenCount`` but is
input the model read and is billed at the input rate: prompt_total = promptTokenCount + toolUsePromptTokenCount.

Fields are read under their REST (camelCase) or SDK (snake_case) names.  The Gemini API records and the Gemini
CLI's chat recordings both use these shapes.
"""

from __future__ import annotations

from typing import Any

from ctxwatch.formats.wire.damage import forget_history, history_problem
from ctxwatch.formats.wire.images import image_part
from ctxwatch.formats.wire.messages import RequestParts
from ctxwatch.formats.wire.values import (
    int_or_none,
    json_text,
    listed,
    odd_content,
    odd_usage,
    total_mismatch,
    usage_count,
)
from ctxwatch.model import Message, ParsedCall, Part, ResponseInfo, Usage


def get_field(d: dict[str, Any], camel: str, snake: str) -> Any:
    """A field under its REST (camelCase) or SDK (snake_case) name (the camelCase one when both are there)."""
    v = d.get(camel)
    return d.get(snake) if v is None else v


def gemini_usage(meta: Any) -> tuple[Usage | None, int | None]:
    """Normalize a Gemini ``usageMetadata`` block (camelCase or snake_case keys).

    Args:
        meta: the ``usageMetadata`` dict.

    Returns:
        ``(usage, tool_use_prompt_tokens)``.  ``usage`` is ``None`` when neither a prompt nor an output
        count is present.  Inside a present block a missing count is 0, not unknown: the REST API writes
        protobuf JSON, which omits fields equal to their default (proto3 JSON mapping, "default values are
        omitted"), so a response with no cache hit has no ``cachedContentTokenCount`` and one without
        thinking no ``thoughtsTokenCount``.  The rule and its source are in the module docstring.
    """
    if not isinstance(meta, dict):
        odd_usage(meta)
        return None, None
    # (a value that is not a count is passed on for the sanitizer to report, with no arithmetic on it)
    prompt = usage_count(get_field(meta, "promptTokenCount", "prompt_token_count"))
    cached = usage_count(get_field(meta, "cachedContentTokenCount", "cached_content_token_count"), 0)
    cand = usage_count(get_field(meta, "candidatesTokenCount", "candidates_token_count"))
    thoughts = usage_count(get_field(meta, "thoughtsTokenCount", "thoughts_token_count"))
    tool = int_or_none(get_field(meta, "toolUsePromptTokenCount", "tool_use_prompt_token_count"))
    if prompt is None and cand is None and thoughts is None:
        return None, tool
    cand = 0 if cand is None else cand
    thoughts = 0 if thoughts is None else thoughts
    if tool and prompt.__class__ is int:
        prompt = prompt + tool  # (the tool-use prompt is input beside promptTokenCount, billed as input)
    uncached = prompt - cached if prompt.__class__ is int and cached.__class__ is int else None
    output = cand + thoughts if cand.__class__ is int and thoughts.__class__ is int else \
        (cand if cand.__class__ is not int else thoughts)  # (the bad one, reported as the output)
    return Usage(prompt_total=prompt, input_uncached=uncached, cache_read=cached, cache_write=None,
                 output=output, reasoning=thoughts), tool


def gemini_total_note(meta: Any, usage: Usage | None) -> str | None:
    """A sentence when ``usageMetadata.totalTokenCount`` is not the prompt (tool-use prompt included) plus the
    output (thoughts included) as read: a count ctxwatch does not read sits in the total (``None`` when they
    agree or either is unknown)."""
    if not isinstance(meta, dict):
        return None
    return total_mismatch(get_field(meta, "totalTokenCount", "total_token_count"), usage,
                          "usageMetadata.totalTokenCount")


def gemini_parts(parts: Any) -> list[Part]:
    """Normalize Gemini content parts (``text``, ``functionCall``, ``functionResponse``, ``inlineData``, ...).

    Accepts a string, one part dict, or a list of them (Gemini CLI's ``PartListUnion``).  ``inlineData``
    images become ``image`` parts with their pixel size read from the base64 header (the base64 is never
    counted as text); other inline or file data become ``document`` parts.
    Thought parts (``thought: true``) are kept as ``thinking``.  Never raises.
    """
    if parts is None:
        return []
    if isinstance(parts, str):
        return [Part("text", parts)] if parts else []
    items = parts if isinstance(parts, list) else [parts]
    out: list[Part] = []
    for p in items:
        if isinstance(p, str):
            out.append(Part("text", p))
            continue
        if not isinstance(p, dict):
            odd_content(p, "a content part", "skipped")
            continue
        fc = get_field(p, "functionCall", "function_call")
        fr = get_field(p, "functionResponse", "function_response")
        inline = get_field(p, "inlineData", "inline_data")
        filed = get_field(p, "fileData", "file_data")
        if isinstance(p.get("text"), str):
            out.append(Part("thinking" if p.get("thought") else "text", p["text"]))
        elif isinstance(fc, dict):
            out.append(Part("tool_call", json_text(fc.get("args") or {}), name=str(fc.get("name") or ""),
                            call_id=fc.get("id")))
        elif isinstance(fr, dict):
            out.append(Part("tool_result", json_text(fr.get("response") if "response" in fr else fr),
                            name=str(fr.get("name") or "") or None, call_id=fr.get("id")))
        elif isinstance(inline, dict):
            mime = str(get_field(inline, "mimeType", "mime_type") or "")
            data = str(inline.get("data") or "")
            if mime.startswith("image/"):
                # (as a data URI: image_part reads the pixel size of inline data only from a data URI)
                out.append(image_part(f"data:{mime};base64,{data}", {"media_type": mime}))
            else:
                out.append(Part("document", "", meta={"media_type": mime, "bytes": len(data) * 3 // 4}))
        elif isinstance(filed, dict):
            mime = str(get_field(filed, "mimeType", "mime_type") or "")
            uri = str(get_field(filed, "fileUri", "file_uri") or "")[:200]
            out.append(Part("image" if mime.startswith("image/") else "document", "",
                            meta={"media_type": mime, "url": uri}))
        else:
            out.append(Part("other", json_text(p)))
    return out


def gemini_request_to_parts(req: dict[str, Any]) -> RequestParts:
    """Split a ``generateContent`` request into ``(system, tools, messages, max_output_tokens)``.

    ``systemInstruction.parts[].text`` → system; ``contents[]`` (role ``user``/``model``) → messages
    (``model`` becomes ``assistant``; a user turn made only of ``functionResponse`` parts becomes ``tool``);
    each ``tools[].functionDeclarations[]`` entry → ``{"type": "function", "function": decl}`` (a Gemini
    FunctionDeclaration has the OpenAI function's ``name``/``description``/``parameters`` shape);
    ``generationConfig.maxOutputTokens`` → max output tokens.  Never raises.
    """
    system: list[str] = []
    si = get_field(req, "systemInstruction", "system_instruction")
    if isinstance(si, str):
        system = [si]
    elif isinstance(si, dict):
        system = ["\n".join(p.text for p in gemini_parts(si.get("parts")))]
    messages: list[Message] = []
    contents = req.get("contents")
    if isinstance(contents, dict):
        contents = [contents]
    for c in contents if isinstance(contents, list) else []:
        if not isinstance(c, dict):
            continue
        parts = gemini_parts(c.get("parts"))
        role = "assistant" if c.get("role") == "model" else "user"
        if role == "user" and parts and all(p.kind == "tool_result" for p in parts):
            role = "tool"
        messages.append(Message(role, parts))
    tools: list[dict[str, Any]] = []
    for t in listed(req.get("tools"), "the request's tools"):
        if not isinstance(t, dict):
            continue
        decls = get_field(t, "functionDeclarations", "function_declarations")
        if isinstance(decls, list):
            tools.extend({"type": "function", "function": d} for d in decls if isinstance(d, dict))
        else:
            tools.append(t)  # built-in tools (googleSearch, codeExecution) as logged
    gc = get_field(req, "generationConfig", "generation_config")
    mx = int_or_none(get_field(gc, "maxOutputTokens", "max_output_tokens")) if isinstance(gc, dict) else None
    return system, tools, messages, mx


def gemini_request_problems(call: ParsedCall, req: dict[str, Any]) -> list[str]:
    """Mark on ``call`` what a logged ``generateContent`` request leaves unknown, and say why (one sentence each,
    for ``invalid_field`` issues), as :func:`~ctxwatch.formats.wire.damage.request_problems` does for the other
    request bodies: ``contents`` missing, empty, not a list (or one object) or holding entries that are not
    objects makes the history unknown, and the system prompt with it unless ``systemInstruction`` gave one
    (:func:`~ctxwatch.formats.wire.damage.forget_history`); a ``systemInstruction`` that is neither text nor a
    Content object leaves the system prompt unknown, not absent.  An empty ``contents`` is damage: the API
    rejects it (HTTP 400 INVALID_ARGUMENT "contents is not specified"), so no call was made with one."""
    problems = []
    si = get_field(req, "systemInstruction", "system_instruction")
    if si is not None and not isinstance(si, str | dict):
        call.system = None
        problems.append(f"request.systemInstruction is a JSON {type(si).__name__}, not text: the system prompt is "
                        "unknown")
    bad = history_problem(req, "contents", lambda m: isinstance(m, dict), object_ok=True, empty_ok=False)
    if bad:
        # (the system prompt comes from systemInstruction alone: contents do not add to it)
        problems.append(forget_history(call, bad, "request.contents", system=call.system,
                                       tools_field=isinstance(req.get("tools"), list)))
    return problems


def gemini_response_info(resp: Any) -> ResponseInfo | None:
    """Completion text (thought parts excluded), function-call count and finish reason of a response."""
    if not isinstance(resp, dict):
        return None
    cands = resp.get("candidates")
    if not isinstance(cands, list) or not cands or not isinstance(cands[0], dict):
        return None
    content = c if isinstance(c := cands[0].get("content"), dict) else {}
    parts = gemini_parts(content.get("parts"))
    text = "".join(p.text for p in parts if p.kind == "text")
    calls = sum(1 for p in parts if p.kind == "tool_call")
    return ResponseInfo(text=text, tool_calls=calls, finish_reason=get_field(cands[0], "finishReason", "finish_reason"))
