"""OpenTelemetry: what the OpenTelemetry Collector's file exporter writes (OTLP/JSON, one export request per line).

A fleet of agents exports its telemetry to a Collector; its ``file`` exporter writes every export request it
receives as one JSON line, rotating the file as configured (``docs/otel-collector.yaml``).  ctxwatch reads that
file like any log, live or whole: calls from GenAI spans (:mod:`.genai`) and from Claude Code's
``claude_code.api_request`` events (:mod:`.harness`), each with its agent instance (:mod:`.reader`).  Both JSON
mappings of OTLP are read (:mod:`.otlp`).
"""

from __future__ import annotations

from ctxwatch.formats import FormatSpec, Sniff, register
from ctxwatch.formats.otel.reader import SIGNALS, OtelReader

__all__ = ["NAME", "SPEC", "OtelReader", "sniff"]

NAME = "otel"


def sniff(sn: Sniff) -> float:
    """Confidence that a file is Collector file-exporter output: 0.95 x the share of head values that are an OTLP
    export request (an object whose ``resourceSpans``, ``resourceLogs`` or ``resourceMetrics``, in either JSON
    mapping, is a list): no other format's records carry these keys."""
    if not sn.values:
        return 0.0
    hits = sum(1 for v in sn.values if isinstance(v, dict) and any(isinstance(v.get(k), list) for k in SIGNALS))
    return 0.95 * hits / len(sn.values)


SPEC = register(FormatSpec(
    name=NAME, aliases=("opentelemetry", "otlp"),
    description="OpenTelemetry Collector file exporter (OTLP/JSON: GenAI spans, Claude Code api_request events)",
    sniff=sniff, reader=OtelReader,
    example='{"resourceSpans":[{"resource":{...},"scopeSpans":[{"spans":[{"attributes":[{"key":"gen_ai..."}]}]}]}]}',
))
