"""Log formats: the reader interface, the registry of formats and automatic detection.

A format is a :class:`FormatSpec` registered under a short name (``ctxwatch formats`` lists them) by its reader
module, which the registry discovers (:mod:`._registry`: every public module of this package but ``wire``).
Its reader is *incremental*: it is fed one :class:`~ctxwatch.source.decode.Record` at a time (so the same code
serves a past run and a live tail) and returns the calls and issues each record completes.  A reader may
return a :class:`~ctxwatch.model.ParsedCall` whose ``key`` it returned before: that call was updated (a
later line of the same Claude Code response, for example) and replaces the earlier one.  Whole-file JSON
documents (SWE-agent ``.traj``, Inspect ``.json``/``.eval``, OpenHands, Cline) set ``document=True`` and
implement :meth:`Reader.feed_document` instead.

Readers import only this package and :mod:`ctxwatch.formats.wire` (the provider shapes they share), never
each other.  DEVELOPERS.md, "How to add a log format", says what a reader must produce.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ctxwatch.formats._reader import FormatSpec, Output, Reader, Sniff, document_source, floor_once
from ctxwatch.formats._registry import formats, get_format, joined_formats, register
from ctxwatch.formats._sniffing import (
    SNIFF_BYTES,
    array_of_records,
    detect,
    pretty_record,
    sniff_document,
    sniff_file,
)
from ctxwatch.formats.wire.dedupe import copy_rank
from ctxwatch.formats.wire.litellm import litellm_usage
from ctxwatch.formats.wire.values import MAX_COUNT, count_issue_kind, count_or_none, not_a_count, usage_count

__all__ = [
    "MAX_COUNT",
    "SNIFF_BYTES",
    "ClineReader",
    "FormatSpec",
    "GeminiCliReader",
    "InspectReader",
    "OpenHandsEvalReader",
    "OpenHandsReader",
    "Output",
    "Reader",
    "Sniff",
    "SweAgentReader",
    "array_of_records",
    "copy_rank",
    "count_issue_kind",
    "count_or_none",
    "detect",
    "document_source",
    "floor_once",
    "formats",
    "get_format",
    "inspect_usage",
    "joined_formats",
    "litellm_usage",
    "not_a_count",
    "pretty_record",
    "register",
    "sniff_document",
    "sniff_file",
    "usage_count",
]

#: Public names of reader modules that were split up, by the reader module that holds them now: importable
#: from here, and loaded only when asked for (importing a reader module registers its formats).  Resolved at
#: run time only, so that no static import ties this package to a reader: the readers import it.
_MOVED = {
    "ClineReader": "ctxwatch.formats.cline", "GeminiCliReader": "ctxwatch.formats.gemini_cli",
    "InspectReader": "ctxwatch.formats.inspect_ai", "OpenHandsEvalReader": "ctxwatch.formats.openhands",
    "OpenHandsReader": "ctxwatch.formats.openhands", "SweAgentReader": "ctxwatch.formats.swe_agent",
    "inspect_usage": "ctxwatch.formats.inspect_ai",
}

if not TYPE_CHECKING:
    def __getattr__(name: str) -> Any:
        """A name of :data:`_MOVED`, imported from its reader module on first use."""
        module = _MOVED.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)
