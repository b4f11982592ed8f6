"""Codex rollouts from before Codex logged token counts (codex-rs releases of mid-2025).

Such a rollout has no ``{timestamp, type, payload}`` envelope: its first line is the session's own header
(``{"id", "timestamp", "instructions", "git"}``), then ``{"record_type": "state"}`` lines and the Responses API
items themselves (``{"type": "message" | "reasoning" | "function_call" | "function_call_output", ...}``), with
no ``token_count`` event.  The conversation is all there, but no call's usage is: each model turn (the first
output item after input items) is a call whose prompt is the history before it, with usage unknown, never 0.
"""

from __future__ import annotations

from typing import Any

from ctxwatch.formats.codex.items import OpenCall, item_message
from ctxwatch.model import Message, ParsedCall, Provenance, SourceRef
from ctxwatch.source import Record

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


def legacy_call(path: str, rec: Record, session: str | None, model: str | None, system: list[str] | None,
                history: list[Message], n: int) -> ParsedCall:
    """The call a legacy rollout's model turn stands for (the ``n``-th of the file, opened at ``rec``): its
    prompt is ``history`` so far, its usage unknown (:data:`LEGACY_USAGE`), keyed by session and number."""
    return ParsedCall(
        source=SourceRef(path, rec.line, rec.line_end, rec.byte_start, rec.byte_end),
        timestamp=None, model=model, provider="openai", session=session, context="main",
        system=list(system) if system else None, tools=None, messages=list(history), usage=None,
        key=f"codex:{session or ''}:legacy/{n}", provenance=Provenance(usage_from=LEGACY_USAGE, harness="codex"))


class LegacyRollout:
    """The Codex reader's reading of a legacy rollout's lines (mixed into :class:`~.reader.CodexReader`, whose
    state it uses: the session, system prompt, model, history, call count and open call)."""

    path: str
    session: str | None
    system: list[str] | None
    model: str | None
    _history: list[Message]
    _count: int
    _open: Any

    def _legacy(self, v: dict[str, Any], rec: Record) -> list[Any]:
        """A line of a rollout from before token counts: its header names the session, and the first output
        item after input items opens a call with unknown usage (:func:`legacy_call`)."""
        if legacy_header(v) and self.session is None:
            self.session = v["id"]
            self.system = [v["instructions"]] if isinstance(v.get("instructions"), str) and v["instructions"] else None
            return []
        msg, is_output = item_message(v) if legacy_item(v) else (None, False)
        if msg is None:
            return []
        opened: list[Any] = []
        if is_output and self._open is None:
            self._count += 1
            call = legacy_call(self.path, rec, self.session, self.model, self.system, self._history, self._count)
            self._open = OpenCall(call=call)
            opened.append(call)
        return self._item(v, rec) or opened  # type: ignore[attr-defined]
