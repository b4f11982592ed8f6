"""Anthropic content blocks as Claude Code writes them in its transcript lines.

Claude Code writes one content block per line, copies tool results with their images, and redacts thinking; a
call's summary needs only its text blocks and tool-use count, and the whole conversion is done only when a
call is opened.
"""

from __future__ import annotations

from typing import Any

from ctxwatch.formats.wire.images import image_size_from_base64
from ctxwatch.formats.wire.values import odd_content
from ctxwatch.model import Part
from ctxwatch.source import json_text


def _b64_meta(source: Any) -> dict[str, Any]:
    """Image/document metadata from an Anthropic ``source`` block: decoded ``bytes``, ``media_type`` and, for
    base64 images, ``width``/``height`` read from the file header (cheap: only the first bytes are decoded)."""
    meta: dict[str, Any] = {}
    if not isinstance(source, dict):
        return meta
    if isinstance(source.get("media_type"), str):
        meta["media_type"] = source["media_type"]
    data = source.get("data")
    if source.get("type") == "base64" and isinstance(data, str):
        meta["bytes"] = len(data) * 3 // 4 - data[-2:].count("=")
        size = image_size_from_base64(data)
        if size:
            meta["width"], meta["height"] = size
    elif isinstance(source.get("url"), str):
        meta["url"] = source["url"]
    return meta


def content_parts(content: Any, *, tool_result_id: str | None = None) -> list[Part]:
    """Convert Anthropic Messages ``content`` (a string or a list of blocks) to :class:`Part` objects.

    Block types: ``text`` -> text; ``image`` -> image (meta from :func:`_b64_meta`); ``document`` -> document
    (its text when the source is plain text); ``tool_result`` -> tool_result (``call_id`` = ``tool_use_id``; its
    string or text blocks joined, images inside it as extra image parts); ``thinking`` / ``redacted_thinking``
    -> thinking; ``tool_use`` / ``server_tool_use`` -> tool_call (``text`` = compact JSON of ``input``); any other
    block -> ``other`` with its JSON as text.  Non-dict blocks are ignored.

    Args:
        content: ``message.content``.
        tool_result_id: set when converting a ``tool_result``'s own content (images keep the call id).
    """
    if isinstance(content, str):
        return [Part("text", content)]
    if not isinstance(content, list):
        if content is not None:
            odd_content(content, taken="read as empty")
        return []
    parts: list[Part] = []
    for block in content:
        if not isinstance(block, dict):
            if isinstance(block, str):
                parts.append(Part("text", block))
            else:
                odd_content(block, "a content block", "skipped")
            continue
        kind = block.get("type")
        if kind == "text":
            text = block.get("text")
            parts.append(Part("text", text if isinstance(text, str) else ""))
        elif kind == "image":
            parts.append(Part("image", "", call_id=tool_result_id, meta=_b64_meta(block.get("source"))))
        elif kind == "document":
            src = block.get("source")
            text = src.get("data") if isinstance(src, dict) and src.get("type") == "text" else None
            if isinstance(text, str):
                parts.append(Part("text", text))
            else:
                parts.append(Part("document", "", call_id=tool_result_id, meta=_b64_meta(src)))
        elif kind == "tool_result":
            tid = block.get("tool_use_id") if isinstance(block.get("tool_use_id"), str) else None
            inner = content_parts(block.get("content"), tool_result_id=tid)
            text = "\n".join(p.text for p in inner if p.kind == "text" and p.text)
            parts.append(Part("tool_result", text, call_id=tid))
            parts.extend(p for p in inner if p.kind != "text")
        elif kind == "thinking":
            text = block.get("thinking")
            parts.append(Part("thinking", text if isinstance(text, str) else ""))
        elif kind == "redacted_thinking":
            data = block.get("data")
            parts.append(Part("thinking", "", meta={"redacted": True,
                                                    "bytes": len(data) if isinstance(data, str) else 0}))
        elif kind in ("tool_use", "server_tool_use"):
            name = block.get("name")
            cid = block.get("id")
            parts.append(Part("tool_call", json_text(block.get("input", {}), none="null"),
                              name=name if isinstance(name, str) else None,
                              call_id=cid if isinstance(cid, str) else None))
        else:
            rest = {k: v for k, v in block.items() if k != "type"}
            parts.append(Part("other", json_text(rest) if rest else "", meta={"type": str(kind)}))
    return parts


def response_summary(content: Any) -> tuple[list[Part], int]:
    """The parts of an assistant ``message.content`` that a call summary needs, without converting the rest.

    Returns ``(text parts, number of tool_use / server_tool_use blocks)``; tool inputs and thinking blocks
    are not serialised (they are read again from disk when the call is opened).
    """
    if isinstance(content, str):
        return [Part("text", content)], 0
    if not isinstance(content, list):
        if content is not None:
            odd_content(content, taken="read as empty")
        return [], 0
    texts: list[Part] = []
    n = 0
    for block in content:
        if isinstance(block, dict):
            kind = block.get("type")
            if kind == "text":
                text = block.get("text")
                texts.append(Part("text", text if isinstance(text, str) else ""))
            elif kind == "tool_use" or kind == "server_tool_use":
                n += 1
        elif isinstance(block, str):
            texts.append(Part("text", block))
    return texts, n
