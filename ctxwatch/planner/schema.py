"""Tool-schema floor analysis: what each tool costs, and what a compacted schema would save.

A tool's cost is the difference it makes to the whole ``tools`` payload (:func:`marginal_costs`), so the
provider's fixed tool-use preamble is counted once, on a line of its own.  The compacted form drops
annotation-only keywords and trims descriptions to their first sentence (:func:`compact_schema`).  Both tool
shapes are read: OpenAI ``{"type": "function", "function": {...}}`` (or bare) and Anthropic ``input_schema``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ctxwatch.tokens import Counter, counter_for

#: JSON-Schema keywords that only annotate (JSON Schema 2020-12, "Meta-Data Annotations" and ``$comment``):
#: they do not constrain the value, so the model can do without them.
ANNOTATION_KEYS = frozenset({"examples", "title", "default", "$comment"})
#: Keywords whose value is a map from *names* to subschemas: the names are kept, the subschemas compacted.
_NAME_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})
#: Keywords whose value is data, not schema: copied untouched.
_DATA_KEYS = frozenset({"enum", "const", "required", "examples", "default"})
#: Abbreviations whose final dot does not end a sentence.
_ABBREVIATIONS = ("e.g.", "i.e.", "eg.", "ie.", "vs.", "etc.)")
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")
# A blank line, or a line break followed by a list item, ends the first "sentence" too.
_HARD_STOP = re.compile(r"\n\s*\n|\n\s*(?:[-*•]|\d+[.)])\s")


def first_sentence(text: str) -> str:
    """The first sentence of a description (whitespace-stripped).

    The sentence ends at the first ``.``, ``!`` or ``?`` followed by whitespace or the end of the text
    (not after ``e.g.``/``i.e.``/``eg.``/``ie.``/``vs.``), or before a blank line, or before a line that
    starts a list item (``-``, ``*``, ``•``, ``1.``, ``1)``), whichever comes first.  A text with none of
    these is returned whole.
    """
    s = text.strip()
    end = len(s)
    hard = _HARD_STOP.search(s)
    if hard:
        end = hard.start()
    for m in _SENTENCE_END.finditer(s, 0, end):
        head = s[: m.end()]
        if head.lower().endswith(_ABBREVIATIONS):
            continue
        end = m.end()
        break
    return s[:end].rstrip()


def compact_schema(schema: Any) -> Any:
    """A copy of a JSON Schema without annotation-only keys and with first-sentence descriptions.

    Everything that constrains the value (``type``, ``properties``, ``required``, ``enum``, ``items``...) is
    kept, and property *names* are never touched: a property called ``title`` stays.

    Args:
        schema: a JSON Schema value (dict, list or scalar); not modified.

    Returns:
        The compacted copy. ``ANNOTATION_KEYS`` are removed at every level, ``description`` strings are
        trimmed by :func:`first_sentence`; names under ``properties`` (and other name maps) and data
        under ``enum``/``const``/``required`` are kept verbatim.
    """
    if isinstance(schema, list):
        return [compact_schema(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for k, v in schema.items():
        if k in ANNOTATION_KEYS:
            continue
        if k == "description" and isinstance(v, str):
            out[k] = first_sentence(v)
        elif k in _NAME_MAPS and isinstance(v, dict):
            out[k] = {name: compact_schema(sub) for name, sub in v.items()}
        elif k in _DATA_KEYS:
            out[k] = v
        else:
            out[k] = compact_schema(v)
    return out


def tool_name(tool: dict[str, Any]) -> str:
    """The name of a tool in either shape (``"?"`` when it has none)."""
    fn = tool.get("function")
    if isinstance(fn, dict) and isinstance(fn.get("name"), str):
        return fn["name"]
    name = tool.get("name")
    return name if isinstance(name, str) else "?"


def compact_tool(tool: dict[str, Any]) -> dict[str, Any]:
    """A compacted copy of one tool (either shape): first-sentence description, compacted schema.

    The tool's ``name``, ``type`` and any other top-level keys (e.g. ``cache_control``) are kept.
    """
    out: dict[str, Any] = {}
    for k, v in tool.items():
        if k == "function" and isinstance(v, dict):
            out[k] = compact_tool(v)
        elif k == "description" and isinstance(v, str):
            out[k] = first_sentence(v)
        elif k in ("parameters", "input_schema"):
            out[k] = compact_schema(v)
        else:
            out[k] = v
    return out


def compact_tools(tools: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Compacted copies of every tool (see :func:`compact_tool`), in order."""
    return [compact_tool(t) if isinstance(t, dict) else t for t in tools]


def marginal_costs(tools: Sequence[dict[str, Any]], counter: Counter) -> tuple[list[int], int, int]:
    """Per-tool costs as differences of the whole payload (counting each tool on its own would charge the
    fixed preamble once per tool).

    Args:
        tools: the request's ``tools`` list.
        counter: the call's counting rules (decides the preamble: Anthropic 346, OpenAI 12 + 7 per tool).

    Returns:
        ``(costs, total, preamble)`` in tokens: ``costs[i] = total - tools_tokens(tools without i)``,
        ``total = tools_tokens(tools)``, ``preamble = total - sum(costs)``.  With one tool the preamble is
        measured as ``2 * T([t]) - T([t, t])`` (the part that does not grow with the tools) and the cost is
        ``total - preamble``.
    """
    tools = list(tools)
    total = counter.tools_tokens(tools)
    if not tools:
        return [], 0, 0
    if len(tools) == 1:
        preamble = 2 * total - counter.tools_tokens(tools * 2)
        return [total - preamble], total, preamble
    costs = [total - counter.tools_tokens(tools[:i] + tools[i + 1:]) for i in range(len(tools))]
    return costs, total, total - sum(costs)


@dataclass(slots=True)
class ToolCost:
    """One tool's line of the floor analysis (tokens).

    Attributes:
        name: the tool name.
        tokens: what the tool adds to the whole payload (marginal cost).
        compacted_tokens: what its compacted form adds to the whole compacted payload.
        saved: ``tokens - compacted_tokens``.
    """

    name: str
    tokens: int
    compacted_tokens: int
    saved: int

    def to_json(self) -> dict[str, Any]:
        """``{"name", "tokens", "compacted_tokens", "saved"}``."""
        return {"name": self.name, "tokens": self.tokens, "compacted_tokens": self.compacted_tokens,
                "saved": self.saved}


@dataclass(slots=True)
class SchemaReport:
    """The tool-schema floor of one call and what compaction would save. All values in tokens.

    Attributes:
        tools: one :class:`ToolCost` per tool, in the request's order.
        total_tokens: the whole ``tools`` payload (``Counter.tools_tokens``).
        preamble_tokens: the fixed part (``total_tokens - sum(tool costs)``).
        compacted_total: the whole compacted payload.
        saved_per_call: ``total_tokens - compacted_total``.
        calls: how many calls of the run carried these same tools.
        saved_run: ``saved_per_call * calls``.
        system_tokens: the system prompt's tokens (the floor's other part), ``None`` when not given.
        tokenizer: encoding used; exact: True when it is the model's own tokenizer.
    """

    tools: list[ToolCost]
    total_tokens: int
    preamble_tokens: int
    compacted_total: int
    saved_per_call: int
    calls: int = 1
    saved_run: int = 0
    system_tokens: int | None = None
    tokenizer: str = ""
    exact: bool = False
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The ``schema --json`` document: every attribute, tools as a list of objects."""
        return {
            "tools": [t.to_json() for t in self.tools],
            "total_tokens": self.total_tokens,
            "preamble_tokens": self.preamble_tokens,
            "compacted_total": self.compacted_total,
            "saved_per_call": self.saved_per_call,
            "calls": self.calls,
            "saved_run": self.saved_run,
            "system_tokens": self.system_tokens,
            "tokenizer": self.tokenizer,
            "exact": self.exact,
            "notes": list(self.notes),
        }


def analyse_tools(tools: Sequence[dict[str, Any]], counter: Counter | None = None, *, calls: int = 1,
                  system: Sequence[str] | None = None) -> SchemaReport:
    """Analyse a request's tool schemas.

    Args:
        tools: the ``tools`` list as logged (either shape; non-dict entries are ignored).
        counter: counting rules; default ``counter_for(None, None)`` (o200k_base, OpenAI overhead).
        calls: how many calls of the run carried these tools (for ``saved_run``), >= 0.
        system: the system prompt blocks, to report the floor's other part (optional).

    Returns:
        A :class:`SchemaReport`. Never raises on odd tool shapes.
    """
    counter = counter or counter_for(None, None)
    tools = [t for t in tools if isinstance(t, dict)]
    compacted = compact_tools(tools)
    costs, total, preamble = marginal_costs(tools, counter)
    ccosts, ctotal, _ = marginal_costs(compacted, counter)
    lines = [ToolCost(tool_name(t), c, cc, c - cc) for t, c, cc in zip(tools, costs, ccosts, strict=True)]
    saved = total - ctotal
    notes = []
    if counter.tokenizer.note:
        notes.append(counter.tokenizer.note)
    if not counter.exact:
        notes.append(f"counts are {counter.name} estimates: the provider's own tokenizer is not public")
    return SchemaReport(
        tools=lines, total_tokens=total, preamble_tokens=preamble, compacted_total=ctotal,
        saved_per_call=saved, calls=max(calls, 0), saved_run=saved * max(calls, 0),
        system_tokens=counter.system_tokens(list(system)) if system is not None else None,
        tokenizer=counter.name, exact=counter.exact, notes=notes,
    )
