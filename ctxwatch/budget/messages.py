"""Chat messages as a loop holds them (OpenAI or Anthropic shaped dicts) read into ctxwatch's :class:`Message`.

The same parsing as the log readers (:mod:`ctxwatch.formats.canonical`), so a budget counts a message exactly as
``ctxwatch report`` counts it once logged.  No SDK is imported: messages are plain dicts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ctxwatch.model import Message

_ANTHROPIC_BLOCKS = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use",
                               "document"})


def infer_provider(model: str | None, tools: Sequence[dict[str, Any]] | None = None) -> str:
    """``anthropic`` for ``claude*`` models or Anthropic-shaped tools, ``google`` for ``gemini*``, else
    ``openai``. Provider-qualified ids (``anthropic/claude-...``) use their last segment."""
    base = (model or "").rsplit("/", 1)[-1].lower()
    if base.startswith("claude"):
        return "anthropic"
    if base.startswith("gemini"):
        return "google"
    if any(isinstance(t, dict) and "input_schema" in t for t in tools or ()):
        return "anthropic"
    return "openai"


def _is_anthropic(m: dict[str, Any]) -> bool:
    if m.get("role") == "tool" or "tool_calls" in m or "function_call" in m:
        return False
    c = m.get("content")
    if not isinstance(c, list):
        return False
    for b in c:
        if isinstance(b, dict):
            t = b.get("type")
            if t in _ANTHROPIC_BLOCKS or (t == "image" and isinstance(b.get("source"), dict)):
                return True
    return False


def to_message(m: dict[str, Any]) -> Message:
    """Normalize one chat message dict (OpenAI or Anthropic shape, detected per message) into a
    :class:`~ctxwatch.model.Message`, with the same parsing as ctxwatch's log readers
    (:mod:`ctxwatch.formats.canonical`): tool-call names and arguments, tool results and images included.

    Raises:
        TypeError: ``m`` is not a dict.
    """
    from ctxwatch.formats.canonical import anthropic_request_to_parts, openai_message

    if not isinstance(m, dict):
        raise TypeError(f"a message must be a dict, got {type(m).__name__}")
    if _is_anthropic(m):
        msgs = anthropic_request_to_parts({"messages": [m]})[2]
        if msgs:
            return msgs[0]
    return openai_message(m)


def system_blocks(system: str | Sequence[str] | None) -> list[str]:
    """The system prompt as a list of text blocks: a string is one block (none when empty), a sequence one per
    item (the ``text`` of Anthropic's ``{"type": "text", "text": ...}`` blocks), ``None`` none."""
    if system is None:
        return []
    if isinstance(system, str):
        return [system] if system else []
    out: list[str] = []
    for b in system:
        if isinstance(b, dict):  # Anthropic system text blocks
            out.append(str(b.get("text") or ""))
        else:
            out.append(str(b))
    return out
