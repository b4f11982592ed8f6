"""Cline / Roo Code task logs (``…/tasks/<taskId>/ui_messages.json``, one JSON array of UI messages).

One call per ``say: "api_req_started"`` entry, whose ``text`` is a JSON string ``{request, tokensIn, tokensOut,
cacheWrites, cacheReads, cost}`` (:func:`cline_usage`).  The history is rebuilt from the task's UI messages:
the visible part of what was sent, so calls set ``history_reported_only`` and their floor is inferred once
(:func:`~ctxwatch.formats.floor_once`).  Every call points at the whole file, with its ``index`` in its provenance's
details.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from typing import Any

from ctxwatch.formats import FormatSpec, Reader, Sniff, document_source, floor_once, register, sniff_document
from ctxwatch.formats.wire.models import provider_of_model
from ctxwatch.formats.wire.timestamps import parse_timestamp
from ctxwatch.formats.wire.values import int_or_none
from ctxwatch.model import Issue, Message, ParsedCall, Part, Provenance, Usage, json_type, note_bad_field
from ctxwatch.source import show_value

Output = ParsedCall | Issue


def cline_usage(d: dict[str, Any]) -> Usage | None:
    """Usage of a Cline ``api_req_started`` payload, in tokens: ``tokensIn`` is the uncached input, Anthropic's
    convention (a Cline log of Claude calls has ``tokensIn`` 10 beside ``cacheWrites`` 12,954 and ``cacheReads``
    8,096).

    prompt_total = tokensIn + cacheWrites + cacheReads; output = tokensOut.  Missing cache fields count as 0
    when ``tokensIn`` is present; ``None`` when no token field is present at all.
    """
    tin, tout = int_or_none(d.get("tokensIn")), int_or_none(d.get("tokensOut"))
    cw, cr = int_or_none(d.get("cacheWrites")), int_or_none(d.get("cacheReads"))
    if tin is None and tout is None and cw is None and cr is None:
        return None
    prompt = (tin or 0) + (cw or 0) + (cr or 0)
    return Usage(prompt_total=prompt, input_uncached=tin, cache_read=cr or 0, cache_write=cw or 0, output=tout)


_CLINE_PROVIDERS = {"anthropic": "anthropic", "claude-code": "anthropic", "openai-native": "openai",
                    "openai": "openai", "gemini": "google", "vertex": None, "bedrock": None}


class ClineReader(Reader):
    """Reader of Cline / Roo Code ``ui_messages.json``: one call per ``api_req_started`` entry."""

    def feed_document(self, value: Any) -> Iterable[Output]:
        """Read the JSON array of UI messages."""
        if not isinstance(value, list):
            return [Issue(self.path, 0, "unknown_record", "not a Cline ui_messages.json (no array)")]
        src = document_source(self.path)
        task = os.path.basename(os.path.dirname(os.path.abspath(self.path))) or None
        out: list[Output] = []
        history: list[Message] = []
        assistant: list[Part] = []
        for i, e in enumerate(value):
            if not isinstance(e, dict):
                continue
            say = e.get("say")
            if "say" in e and not isinstance(say, str):
                # (an API request entry is known by its text too: a JSON object with the request or its tokens)
                text = e.get("text")
                looks = isinstance(text, str) and text.startswith("{") and ('"request"' in text or '"tokensIn"' in text)
                note_bad_field(f"entry {i}: say is {json_type(say)}, not a string: "
                               + ("read as api_req_started (its text is an API request)" if looks else "skipped"))
                say = "api_req_started" if looks else None
            if say == "api_req_started":
                if assistant:
                    history.append(Message("assistant", assistant))
                    assistant = []
                try:
                    d = json.loads(e.get("text") or "")
                except (ValueError, TypeError, RecursionError):
                    out.append(Issue(self.path, 0, "invalid_json", f"entry {i}: api_req_started text is not JSON"))
                    continue
                if not isinstance(d, dict):
                    continue
                if isinstance(d.get("request"), str):
                    history.append(Message("user", [Part("text", d["request"])]))
                usage = cline_usage(d)
                if usage is None:
                    why = d.get("cancelReason") or d.get("streamingFailedMessage") or "no token counts"
                    # (a log value said as JSON where it is no string: `ts null`, never Python's `None`)
                    said = why[:120] if isinstance(why, str) else show_value(why)
                    ts = t if isinstance(t := e.get("ts"), str) else show_value(t)
                    out.append(Issue(self.path, 0, "no_usage", f"entry {i} (ts {ts}): {said}"))
                    continue
                mi = m if isinstance(m := e.get("modelInfo"), dict) else {}
                model = mi.get("modelId") if isinstance(mi.get("modelId"), str) else None
                provider = _CLINE_PROVIDERS.get(str(mi.get("providerId"))) or provider_of_model(model)
                extra = Provenance(details={"index": i, "ts": e.get("ts")})
                if d.get("cost") is not None:
                    extra.details["cost_logged"] = d.get("cost")
                out.append(ParsedCall(
                    source=src, timestamp=parse_timestamp(int_or_none(e.get("ts"))), model=model, provider=provider,
                    session=task, system=None, tools=None, messages=list(history), usage=usage,
                    history_reported_only=True, key=f"cline:{task}:{e.get('ts')}:{i}", provenance=extra))
            elif say in ("text", "completion_result") and isinstance(e.get("text"), str) and not e.get("partial"):
                assistant.append(Part("text", e["text"]))
            elif say == "tool" and isinstance(e.get("text"), str):
                assistant.append(Part("tool_call", e["text"], name="cline_tool"))
        return floor_once(out)


def _sniff_cline(s: Sniff) -> float:
    d = sniff_document(s)
    if not isinstance(d, list) or not d:
        return 0.0
    items = d[:200]
    hits = sum(1 for e in items if isinstance(e, dict) and "ts" in e and e.get("type") in ("say", "ask"))
    return 0.9 * hits / len(items)


register(FormatSpec(
    name="cline", aliases=("roo-code",), document=True,
    description="Cline / Roo Code ui_messages.json (api_req_started token counts)",
    sniff=_sniff_cline, reader=ClineReader, example="…/tasks/<taskId>/ui_messages.json",
))
