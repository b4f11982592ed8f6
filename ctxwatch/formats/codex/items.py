"""Codex rollout ``response_item`` payloads (Responses API items as Codex persists them) as messages.

Besides the Responses API's own items (``message``, ``reasoning``, ``function_call`` and its output), a rollout
holds Codex's tool calls (``custom_tool_call``, ``local_shell_call``, ``web_search_call``,
``tool_search_call``), messages from other agents (``agent_message``) and git snapshots (``ghost_snapshot``,
never sent to the model).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ctxwatch.formats.wire.images import image_size_from_base64
from ctxwatch.formats.wire.openai import harness_label
from ctxwatch.formats.wire.values import id_or_none, odd_content
from ctxwatch.model import Message, ParsedCall, Part
from ctxwatch.source import json_text

#: Record types of a rollout line of the current layout, each ``{timestamp, type, payload}`` with an object
#: payload (``world_state`` and ``inter_agent_communication_metadata`` in newer versions).
RECORD_TYPES = ("session_meta", "turn_context", "response_item", "event_msg", "compacted", "world_state",
                "inter_agent_communication_metadata")


def _image_part(item: dict[str, Any], call_id: str | None = None) -> Part:
    """An ``input_image`` content item as an image part (``detail``; ``bytes``/``width``/``height`` from a
    base64 data URL when present)."""
    meta: dict[str, Any] = {}
    if isinstance(item.get("detail"), str):
        meta["detail"] = item["detail"]
    url = item.get("image_url")
    if isinstance(url, str) and url.startswith("data:") and "," in url:
        data = url.split(",", 1)[1]
        meta["bytes"] = len(data) * 3 // 4 - data[-2:].count("=")
        size = image_size_from_base64(data)
        if size:
            meta["width"], meta["height"] = size
    return Part("image", "", call_id=call_id, meta=meta)


def _content_parts(content: Any, call_id: str | None = None) -> list[Part]:
    """Convert Responses API ``content`` (a string or a list of content items) to parts.

    ``input_text`` / ``output_text`` / ``text`` / ``summary_text`` / ``reasoning_text`` -> text; ``refusal`` ->
    text; ``input_image`` -> image; ``input_file`` -> document; ``encrypted_content`` -> other (opaque, cannot
    be tokenized locally, only its size is kept); anything else -> other with its JSON as text.
    """
    if isinstance(content, str):
        return [Part("text", content)]
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        if content is not None:
            odd_content(content, taken="read as empty")
        return []
    parts: list[Part] = []
    for c in content:
        if isinstance(c, str):
            parts.append(Part("text", c))
            continue
        if not isinstance(c, dict):
            odd_content(c, "a content item", "skipped")
            continue
        kind = c.get("type")
        if kind in ("input_text", "output_text", "text", "summary_text", "reasoning_text"):
            text = c.get("text")
            parts.append(Part("text", text if isinstance(text, str) else ""))
        elif kind == "refusal":
            text = c.get("refusal")
            parts.append(Part("text", text if isinstance(text, str) else ""))
        elif kind == "input_image":
            parts.append(_image_part(c, call_id))
        elif kind == "input_file":
            data = c.get("file_data")
            parts.append(Part("document", "", call_id=call_id,
                              meta={"bytes": len(data) * 3 // 4} if isinstance(data, str) else {}))
        elif kind == "encrypted_content":
            enc = c.get("encrypted_content")
            parts.append(Part("other", "", meta={"encrypted_bytes": len(enc) if isinstance(enc, str) else 0}))
        else:
            rest = {k: v for k, v in c.items() if k != "type"}
            parts.append(Part("other", json_text(rest) if rest else "", meta={"type": str(kind)}))
    return parts


def _tool_output_parts(output: Any, call_id: str | None) -> list[Part]:
    """A tool output (string, content item, or list of content items) as one tool_result part plus any images.

    A 0.58 ``function_call_output.output`` is a JSON string ``{"output": ..., "metadata": ...}``; it is kept as
    written, since that string is what the model receives.
    """
    if isinstance(output, str):
        return [Part("tool_result", output, call_id=call_id)]
    inner = _content_parts(output, call_id) if isinstance(output, (list, dict)) else []
    if isinstance(output, dict) and not inner:
        return [Part("tool_result", json_text(output), call_id=call_id)]
    text = "\n".join(p.text for p in inner if p.kind == "text" and p.text)
    return [Part("tool_result", text, call_id=call_id)] + [p for p in inner if p.kind != "text"]


def item_message(item: Any) -> tuple[Message | None, bool]:
    """Convert one ``response_item`` payload to a :class:`Message`; return ``(message, is_model_output)``.

    ``message`` items keep their role (``user`` / ``assistant`` / ``developer`` / ``system``; AGENTS.md and
    ``<user_instructions>`` user messages get ``label="instructions"``, ``<environment_context>`` ones
    ``label="environment"``).  ``function_call``,
    ``custom_tool_call``, ``local_shell_call``, ``web_search_call`` and ``tool_search_call`` become an assistant
    ``tool_call`` part (``text`` = the arguments as sent); their ``*_output`` items a ``tool`` message with a
    ``tool_result`` part.  ``reasoning`` becomes an assistant message of one ``thinking`` part with the summary
    (and any plain ``content``) text, labelled ``reasoning`` (it travels with the output item after it); its
    ``encrypted_content`` is opaque and only its size is kept in ``meta``.
    ``ghost_snapshot`` (a git snapshot, never sent to the model) and unknown items give ``(None, False)``.
    """
    if not isinstance(item, dict):
        return None, False
    kind = item.get("type")
    call_id = id_or_none(item.get("call_id"), "a response item's call_id")
    if kind == "message":
        role = r if (r := item.get("role")) in ("user", "assistant", "developer", "system") else "user"
        parts = _content_parts(item.get("content"))
        return Message(role, parts, label=harness_label(role, parts)), role == "assistant"
    if kind == "reasoning":
        texts = [p.text for p in _content_parts(item.get("summary")) if p.text]
        texts += [p.text for p in _content_parts(item.get("content")) if p.kind == "text" and p.text]
        enc = item.get("encrypted_content")
        meta = {"encrypted_bytes": len(enc)} if isinstance(enc, str) and enc else None
        return Message("assistant", [Part("thinking", "\n".join(texts), meta=meta)], label="reasoning"), True
    if kind in ("function_call", "custom_tool_call", "tool_search_call"):
        args = item.get("arguments") if kind != "custom_tool_call" else item.get("input")
        name = item.get("name") if isinstance(item.get("name"), str) else ("tool_search" if kind ==
                                                                           "tool_search_call" else None)
        return Message("assistant", [Part("tool_call", json_text(args), name=name, call_id=call_id)]), True
    if kind in ("local_shell_call", "web_search_call"):
        cid = call_id or (item.get("id") if isinstance(item.get("id"), str) else None)
        name = "local_shell" if kind == "local_shell_call" else "web_search"
        return Message("assistant", [Part("tool_call", json_text(item.get("action")), name=name,
                                          call_id=cid)]), True
    if kind == "image_generation_call":
        return Message("assistant", [Part("other", "", meta={"type": kind})]), True
    if kind in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
        return Message("tool", _tool_output_parts(item.get("output"), call_id)), False
    if kind == "tool_search_output":
        return Message("tool", [Part("tool_result", json_text(item.get("tools")), call_id=call_id)]), False
    if kind == "agent_message":  # a message from another agent (multi-agent sessions): input to this one
        author = item.get("author") if isinstance(item.get("author"), str) else None
        return Message("user", _content_parts(item.get("content")), name=author), False
    return None, False


@dataclass(slots=True)
class OpenCall:
    """The latest call of a rollout, still collecting its completion items."""

    call: ParsedCall
    texts: list[str] = field(default_factory=list)
    tool_calls: int = 0
    reasoning_tagged: bool = False
