"""Codex rollouts from before Codex logged token counts (codex-rs releases of mid-2025).

Such a rollout has no ``{timestamp, type, payload}`` envelope: its first line is the session's own header
(``{"id", "timestamp", "instructions", "git"}``), then ``{"record_type": "state"}`` lines and the Responses API
items themselves (``{"type": "message" | "reasoning" | "function_call" | "function_call_output", ...}``), with
no ``token_count`` event.  The conversation is all there, but no call's usage is: each model turn (the first
output item after input items) is a call whose prompt is the history before it, with usage unknown, never 0.
"""

from __future__ import annotations

from typing import Any

#: Item types of a legacy rollout line (a Responses API item with no envelope).
LEGACY_ITEM_TYPES = frozenset({"message", "reasoning", "function_call", "function_call_output", "custom_tool_call",
                               "custom_tool_call_output", "local_shell_call", "local_shell_call_output",
                               "web_search_call"})
#: What the calls of a legacy rollout say of their usage (:attr:`ctxwatch.model.Provenance.usage_from`).
LEGACY_USAGE = "none: a rollout from before Codex logged token counts"


def legacy_header(v: Any) -> bool:
    """True for a legacy rollout's first line: the session's ``id`` and ``timestamp`` with ``instructions`` or
    ``git``, and no ``type``."""
    return isinstance(v, dict) and "type" not in v and isinstance(v.get("id"), str) \
        and isinstance(v.get("timestamp"), str) and ("instructions" in v or "git" in v)


def legacy_item(v: Any) -> bool:
    """True for a legacy rollout's item line: a Responses API item with no ``payload`` envelope."""
    return isinstance(v, dict) and v.get("type") in LEGACY_ITEM_TYPES and "payload" not in v


def legacy_score(values: list[Any]) -> float:
    """Sniffing confidence for a legacy rollout: 0.9 when the first value is its header and the others are its
    ``record_type`` lines or items; 0 otherwise."""
    if not values or not legacy_header(values[0]):
        return 0.0
    rest = values[1:]
    ok = all(legacy_item(x) or (isinstance(x, dict) and "record_type" in x) for x in rest)
    return 0.9 if ok else 0.0
