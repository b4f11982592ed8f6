"""The reader of OpenTelemetry Collector file-exporter output: one OTLP export request per line.

A line is an ``ExportTraceServiceRequest`` (``resourceSpans``), an ``ExportLogsServiceRequest``
(``resourceLogs``) or an ``ExportMetricsServiceRequest`` (``resourceMetrics``: read, no calls).  Calls come from
GenAI spans (:mod:`.genai`) and from Claude Code's and Codex's log events (:mod:`.harness`); every other span
and record is some other telemetry and is passed over.  Each call keeps the agent instance that sent it, from its
resource's ``service.name``, ``service.instance.id`` and ``host.name``
(``Provenance.details["instance"]``), and its session is ``gen_ai.conversation.id`` or ``session.id``.

Where the request's content was not captured (the default of every GenAI instrumentation, and always for
Claude Code's events), the floor is inferred once per instance and conversation, as for a harness log that
does not hold its system prompt: the first call that reports a prompt gives the floor (its whole prompt,
the first message of the conversation included: nothing else is known of it), and every later call's history
is its reported prompt minus that floor (:attr:`~ctxwatch.model.Provenance.floor_call`), both labelled inferred.
A file that starts in the middle of a conversation (a rotated file) takes its first call there for the floor.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ctxwatch.formats import Output, Reader, usage_count
from ctxwatch.formats.otel import genai, harness
from ctxwatch.formats.otel.otlp import SPAN_ID_BYTES, TRACE_ID_BYTES, attributes, field, hex_id, items, unix_nano
from ctxwatch.formats.wire.dedupe import json_hash
from ctxwatch.formats.wire.messages import MessageMemo
from ctxwatch.formats.wire.timestamps import parse_timestamp
from ctxwatch.model import Issue, ParsedCall, Provenance, SourceRef
from ctxwatch.source import Record

#: The resource attributes that name an agent instance (OpenTelemetry resource semantic conventions).
INSTANCE_KEYS = ("service.name", "service.instance.id", "host.name")

#: The top-level fields of the three export requests, in both JSON mappings.
SIGNALS = ("resourceSpans", "resource_spans", "resourceLogs", "resource_logs", "resourceMetrics",
           "resource_metrics")

#: OTLP's error status code (``STATUS_CODE_ERROR``), as a number or by its enum name.
_ERROR_STATUS = (2, "2", "STATUS_CODE_ERROR")


def instance_of(resource: dict[str, Any]) -> dict[str, str] | None:
    """The agent instance of a resource: its :data:`INSTANCE_KEYS` that are strings, ``None`` when it has none."""
    found = {k: v for k in INSTANCE_KEYS if isinstance(v := resource.get(k), str) and v}
    return found or None


class OtelReader(Reader):
    """Reader of OTLP/JSON export requests, one per line (the Collector's ``file`` exporter).

    ``memo`` reuses the input messages each captured span re-sends; ``_firsts`` maps each (instance,
    conversation, context) of calls without content to the key of the call its floor is inferred from.
    """

    #: False while a run reads the file; opening one call (:func:`~ctxwatch.engine.reload.reload_parsed`) sets it:
    #: a call without content then has no history to show or plan (``messages`` ``None``), where the run's read
    #: gives the first call of its group an empty one, for its floor to be inferred from.
    full_history = False

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.memo = MessageMemo()
        self._firsts: dict[tuple[Any, ...], str] = {}

    def feed(self, rec: Record) -> Iterable[Output]:
        """One export request: its calls (in the order of their timestamps) and issues."""
        v = rec.value
        if not isinstance(v, dict) or not any(isinstance(v.get(k), list) for k in SIGNALS):
            return [Issue(self.path, rec.line, "unknown_record",
                          "not an OTLP export request (resourceSpans, resourceLogs or resourceMetrics); skipped")]
        out: list[Output] = []
        calls: list[ParsedCall] = []
        src = SourceRef(self.path, rec.line, rec.line_end, rec.byte_start, rec.byte_end)
        for rs in items(v, "resourceSpans", "resource_spans"):
            res = _resource(rs)
            inst = instance_of(res)  # (one dict for the resource's calls: nothing changes it)
            for ss in items(rs, "scopeSpans", "scope_spans"):
                for span in items(ss, "spans", "spans"):
                    self._span(span, res, inst, src, calls, out)
        for rl in items(v, "resourceLogs", "resource_logs"):
            res = _resource(rl)
            inst = instance_of(res)
            service = res.get("service.name")
            for sl in items(rl, "scopeLogs", "scope_logs"):
                sc = sl.get("scope")
                scope = sc.get("name") if isinstance(sc, dict) else None
                for lr in items(sl, "logRecords", "log_records"):
                    self._log(lr, res, inst, src, str(scope or ""), str(service or ""), calls)
        calls.sort(key=lambda c: c.timestamp if c.timestamp is not None else float("inf"))
        for c in calls:
            self._floor_group(c)
        return [*calls, *out]

    def _span(self, span: dict[str, Any], res: dict[str, Any], inst: dict[str, str] | None, src: SourceRef,
              calls: list[ParsedCall], out: list[Output]) -> None:
        attrs = attributes(field(span, "attributes", "attributes"))
        if not genai.is_call(attrs):
            return
        trace = hex_id(field(span, "traceId", "trace_id"), TRACE_ID_BYTES)
        sid = hex_id(field(span, "spanId", "span_id"), SPAN_ID_BYTES)
        model = _text(attrs.get("gen_ai.response.model")) or _text(attrs.get("gen_ai.request.model"))
        provider = genai.provider_of(attrs, model)
        prov = Provenance(details={"trace_id": trace, "span_id": sid})
        requested = _text(attrs.get("gen_ai.request.model"))
        if requested and requested != model:
            prov.details["request_model"] = requested
        prov.message_id = _text(attrs.get("gen_ai.response.id"))
        prov.error = _error(span, attrs)
        call = ParsedCall(
            source=src, timestamp=unix_nano(field(span, "endTimeUnixNano", "end_time_unix_nano"))
            or unix_nano(field(span, "startTimeUnixNano", "start_time_unix_nano")),
            model=model, provider=provider, session=_session(attrs, res), usage=genai.genai_usage(attrs),
            max_output_tokens=usage_count(attrs.get("gen_ai.request.max_tokens")),
            key=f"otel:span:{trace}:{sid}" if trace and sid else f"otel:span:{json_hash(span)}", provenance=prov)
        raw = genai.captured(span, attrs)
        c = genai.content(raw, provider, self.memo) if raw else genai.legacy_content(span, attrs, self.memo)
        if c is not None:
            self.memo.next_call()
            out.extend(Issue(self.path, src.line, "invalid_field", f"span {sid}: {p}") for p in c.problems)
            call.response = c.response
            if c.messages is not None:
                call.system, call.tools, call.messages = c.system, c.tools, c.messages
        if inst is not None:
            call.provenance.details["instance"] = inst
        calls.append(call)

    def _log(self, lr: dict[str, Any], res: dict[str, Any], inst: dict[str, str] | None, src: SourceRef,
             scope: str, service: str, calls: list[ParsedCall]) -> None:
        attrs = attributes(field(lr, "attributes", "attributes"))
        # (the harness's own context rules judge its calls, as they do its transcripts')
        if harness.is_api_request(lr, attrs, scope, service):
            provider, usage, who = "anthropic", harness.api_request_usage(attrs), "claude-code"
        elif harness.is_codex_completion(attrs):
            provider, usage, who = "openai", harness.codex_usage(attrs), "codex"
        else:
            return
        model = _text(attrs.get("model"))
        prov = Provenance(details={k: attrs[k] for k in harness.DETAIL_KEYS if attrs.get(k) is not None},
                          harness=who)
        if attrs.get("cost_usd") is not None:
            prov.details["cost_logged"] = attrs["cost_usd"]
        prov.message_id = _text(attrs.get("response.id"))
        ts = (parse_timestamp(attrs.get("event.timestamp")) or unix_nano(field(lr, "timeUnixNano", "time_unix_nano"))
              or unix_nano(field(lr, "observedTimeUnixNano", "observed_time_unix_nano")))
        call = ParsedCall(source=src, timestamp=ts, model=model, provider=provider, session=_session(attrs, res),
                          usage=usage, key=f"otel:log:{json_hash(lr)}", provenance=prov)
        if inst is not None:
            call.provenance.details["instance"] = inst
        calls.append(call)

    def _floor_group(self, call: ParsedCall) -> None:
        """A call without its request's content: its floor is inferred once per (instance, conversation, context),
        from the first call of that group that reports a prompt (module docstring)."""
        if call.messages is not None:
            return
        call.history_reported_only = True
        if self.full_history:
            return
        inst = call.provenance.details.get("instance")
        group = (tuple(sorted(inst.items())) if isinstance(inst, dict) else None, call.session, call.context)
        first = self._firsts.get(group)
        if first is None or first == call.key:
            u = call.usage
            if u is not None and u.prompt_total.__class__ is int and (u.prompt_total or 0) > 0 and call.key:
                self._firsts[group] = call.key
                call.messages = []  # (nothing of the history is known: the whole first prompt is the floor)
        else:
            call.provenance.floor_call = first


def _resource(r: dict[str, Any]) -> dict[str, Any]:
    res = r.get("resource")
    return attributes(field(res, "attributes", "attributes")) if isinstance(res, dict) else {}


def _text(v: Any) -> str | None:
    return v if isinstance(v, str) and v else None


def _session(attrs: dict[str, Any], res: dict[str, Any]) -> str | None:
    """``gen_ai.conversation.id``, else the harness's ``session.id`` (Claude Code) or ``conversation.id`` (Codex),
    on the record or its resource."""
    for v in (attrs.get("gen_ai.conversation.id"), attrs.get("session.id"), attrs.get("conversation.id"),
              res.get("session.id")):
        if isinstance(v, str) and v:
            return v
    return None


def _error(span: dict[str, Any], attrs: dict[str, Any]) -> Any:
    """The error a failed call answered with: ``{"type", "message"}`` from ``error.type`` and an error status,
    ``None`` for a call that did not fail."""
    status = span.get("status")
    st = status if isinstance(status, dict) else {}
    failed = st.get("code") in _ERROR_STATUS
    etype = attrs.get("error.type")
    if not failed and etype is None:
        return None
    return {"type": etype if isinstance(etype, str) else None,
            "message": st.get("message") if isinstance(st.get("message"), str) else None}
