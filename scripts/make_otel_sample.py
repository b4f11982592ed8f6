#!/usr/bin/env python3
"""Generate ``sample_logs/otel_collector.jsonl``: what an OpenTelemetry Collector's file exporter writes for a
small fleet, made with the real OpenTelemetry SDK.

Spans and log records are built with ``opentelemetry-sdk`` (fixed ids and times, so the file is the same on
every run), encoded into OTLP export requests by the OTLP exporter's own encoder
(``opentelemetry-exporter-otlp-proto-common``, ``opentelemetry-proto`` messages) and written one request per line
with protobuf's JSON mapping (``google.protobuf.json_format``), as the Collector's ``file`` exporter writes
them.  Some lines are rewritten to the OTLP/JSON mapping the Collector itself writes (trace and span ids as
hex); the others keep protobuf's (base64 ids; one with the proto field names in snake_case), since both
reach such files.  The test extra installs the packages (``pip install -e '.[test]'``).

The fleet (every number below is what the synthetic provider "reports"):

* ``agent-a`` on ``build-01``: a GenAI-instrumented agent with content capture on (``gen_ai.system_instructions``,
  ``gen_ai.tool.definitions``, ``gen_ai.input.messages``, ``gen_ai.output.messages`` as JSON strings), three
  ``chat`` calls of ``gpt-4o`` in conversation ``conv-a``; its reported input tokens are ctxwatch's own count
  of each request (o200k_base is gpt-4o's tokenizer), as in the other OpenAI samples.  Its ``invoke_agent`` span
  carries the conversation's summed usage and its ``execute_tool`` spans none: neither is a call.
* ``agent-b`` on ``build-02``: the same agent without content capture, ``claude-sonnet-4-5`` through the
  Anthropic instrumentation, cache reads and writes reported (:data:`AGENT_B`), and a last call that failed
  (HTTP 429, no usage).
* ``legacy`` on ``build-03``: an older instrumentation (``gen_ai.system``, ``gen_ai.usage.prompt_tokens`` /
  ``completion_tokens``, ``gen_ai.usage.cache_read_input_tokens``, no operation name, no conversation id).
* ``claude-code`` on ``laptop-7``: Claude Code's ``claude_code.api_request`` log events (numbers as strings,
  as Claude Code writes them) and a ``claude_code.user_prompt`` event, which is no call (:data:`CLAUDE_CODE`).
* one metrics export (Claude Code's ``claude_code.token.usage`` counter): read, no calls.

Usage::

    python scripts/make_otel_sample.py            # (re)write sample_logs/otel_collector.jsonl
    python scripts/make_otel_sample.py --out FILE
    python scripts/make_otel_sample.py --fleet 200 100 --out fleet.jsonl   # 200 conversations x 100 calls
"""

from __future__ import annotations

import argparse
import base64
import json
from pathlib import Path
from typing import Any

from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.exporter.otlp.proto.common.metrics_encoder import encode_metrics
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.trace import SpanKind, Status, StatusCode

from ctxwatch.formats.canonical import openai_request_to_parts
from ctxwatch.tokens import REPLY_PRIMER, counter_for

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "sample_logs" / "otel_collector.jsonl"
#: 2026-01-15 09:00:00 UTC, in nanoseconds: the first span starts here.
T0 = 1_768_467_600 * 10**9
SECOND = 10**9

SYSTEM = "You are a careful software engineering agent. Use the tools; run the tests after each change."
TOOLS = [
    {"type": "function", "name": "bash", "description": "Run a bash command in the repository and return its output.",
     "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}},
    {"type": "function", "name": "edit", "description": "Replace one exact occurrence of old with new in a file.",
     "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "old": {"type": "string"},
                                                     "new": {"type": "string"}}, "required": ["path", "old", "new"]}},
]
TASK = "The VAT total of invoice 1042 is one cent off. Find the rounding bug in invoicer and fix it."
#: agent-a's steps: (tool call id, command, its output, the completion tokens reported).
STEPS = [
    ("call_1", "python -m pytest -q tests/test_tax.py", "F\nAssertionError: Decimal('19.01') != Decimal('19.00')", 41),
    ("call_2", "sed -n 1,40p src/invoicer/tax.py", "vat = sum(l.net * l.rate for l in lines).quantize(CENT)", 37),
    ("call_3", "python -m pytest -q", "24 passed in 0.41s", 22),
]
#: agent-b's calls: (input tokens with the cache included, cache read, cache creation, output tokens).
AGENT_B = [(9_812, 0, 9_400, 412), (10_604, 9_400, 780, 388), (11_377, 10_180, 760, 501)]
#: legacy's calls: (prompt tokens, completion tokens, cache read under its old name, or None).
LEGACY = [(2_300, 150, None), (2_650, 90, 1_024)]
#: Claude Code's api_request events: (input, output, cache read, cache creation tokens, cost in USD), as strings.
CLAUDE_CODE = [("12", "310", "0", "15840", "0.0642"), ("8", "244", "15840", "602", "0.0121"),
               ("5", "1033", "16442", "1210", "0.0257")]
CLAUDE_SESSION = "5f0c2a4e-8d1b-4c3e-9a7f-2b6d0e1c9a55"


class Ids(IdGenerator):
    """Trace and span ids from counters (a fixed file needs fixed ids); ``seed`` keeps each agent's apart."""

    def __init__(self, seed: int) -> None:
        self.seed, self.n = seed, 0

    def generate_span_id(self) -> int:
        self.n += 1
        return (self.seed << 48) | self.n

    def generate_trace_id(self) -> int:
        self.n += 1
        return (0x5EED << 112) | (self.seed << 64) | self.n


def _resource(name: str, instance: str, host: str, **extra: str) -> Resource:
    # (Resource(...), not Resource.create: the SDK's defaults name its version, and the file must not change
    # with it)
    return Resource({"service.name": name, "service.instance.id": instance, "host.name": host, **extra})


def _tracer(resource: Resource, seed: int) -> tuple[Any, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=resource, id_generator=Ids(seed))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider.get_tracer("invoicer.agent", "1.4.0"), exporter


def _text(content: str) -> dict[str, str]:
    return {"type": "text", "content": content}


def agent_a() -> list[Any]:
    """The content-capturing agent: three chat spans under an invoke_agent span, with tool spans between."""
    tracer, exporter = _tracer(_resource("invoicer-agent", "agent-a", "build-01"), 0xA)
    counter = counter_for("gpt-4o", "openai")
    openai_tools = [{"type": "function", "function": {k: t[k] for k in ("name", "description", "parameters")}}
                    for t in TOOLS]
    history: list[dict[str, Any]] = [{"role": "user", "parts": [_text(TASK)]}]
    chat: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": TASK}]
    t = T0
    total_in = total_out = 0
    root = tracer.start_span("invoke_agent invoicer", kind=SpanKind.INTERNAL, start_time=t)
    from opentelemetry import trace

    ctx = trace.set_span_in_context(root)
    for call_id, command, output, completion in STEPS:
        system, tools, msgs, _ = openai_request_to_parts({"messages": chat, "tools": openai_tools})
        prompt = (counter.system_tokens(system) + counter.tools_tokens(tools)
                  + sum(counter.message_tokens(m) for m in msgs) + REPLY_PRIMER)
        reply = {"role": "assistant", "parts": [{"type": "tool_call", "id": call_id, "name": "bash",
                                                 "arguments": {"command": command}}], "finish_reason": "tool_call"}
        span = tracer.start_span("chat gpt-4o", context=ctx, kind=SpanKind.CLIENT, start_time=t + SECOND)
        span.set_attributes({
            "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o",
            "gen_ai.response.model": "gpt-4o-2024-08-06", "gen_ai.request.max_tokens": 1024,
            "gen_ai.conversation.id": "conv-a", "gen_ai.response.id": f"chatcmpl-a{len(history)}",
            "gen_ai.usage.input_tokens": prompt, "gen_ai.usage.output_tokens": completion,
            "gen_ai.system_instructions": json.dumps([_text(SYSTEM)]),
            "gen_ai.tool.definitions": json.dumps(TOOLS), "gen_ai.input.messages": json.dumps(history),
            "gen_ai.output.messages": json.dumps([reply]),
        })
        span.end(end_time=t + 3 * SECOND)
        total_in, total_out = total_in + prompt, total_out + completion
        tool = tracer.start_span("execute_tool bash", context=ctx, start_time=t + 3 * SECOND)
        tool.set_attributes({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "bash",
                             "gen_ai.tool.call.id": call_id})
        tool.end(end_time=t + 4 * SECOND)
        history += [{k: v for k, v in reply.items() if k != "finish_reason"},
                    {"role": "tool", "parts": [{"type": "tool_call_response", "id": call_id, "result": output}]}]
        chat += [{"role": "assistant", "content": None, "tool_calls": [
                     {"id": call_id, "type": "function",
                      "function": {"name": "bash", "arguments": json.dumps({"command": command},
                                                                           separators=(",", ":"))}}]},
                 {"role": "tool", "tool_call_id": call_id, "content": output}]
        t += 5 * SECOND
    root.set_attributes({"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "invoicer",
                         "gen_ai.conversation.id": "conv-a", "gen_ai.usage.input_tokens": total_in,
                         "gen_ai.usage.output_tokens": total_out})
    root.end(end_time=t)
    return list(exporter.get_finished_spans())


def agent_b() -> list[Any]:
    """The same agent without content capture, on Claude through the Anthropic instrumentation."""
    tracer, exporter = _tracer(_resource("invoicer-agent", "agent-b", "build-02"), 0xB)
    t = T0 + 2 * SECOND
    for i, (inp, read, created, out) in enumerate(AGENT_B):
        span = tracer.start_span("chat claude-sonnet-4-5", kind=SpanKind.CLIENT, start_time=t)
        span.set_attributes({
            "gen_ai.operation.name": "chat", "gen_ai.provider.name": "anthropic",
            "gen_ai.request.model": "claude-sonnet-4-5", "gen_ai.response.model": "claude-sonnet-4-5-20250929",
            "gen_ai.request.max_tokens": 8192, "gen_ai.conversation.id": "conv-b",
            "gen_ai.response.id": f"msg_b{i + 1}", "gen_ai.usage.input_tokens": inp,
            "gen_ai.usage.cache_read.input_tokens": read, "gen_ai.usage.cache_creation.input_tokens": created,
            "gen_ai.usage.output_tokens": out})
        span.end(end_time=t + 4 * SECOND)
        t += 6 * SECOND
    span = tracer.start_span("chat claude-sonnet-4-5", kind=SpanKind.CLIENT, start_time=t)
    span.set_attributes({"gen_ai.operation.name": "chat", "gen_ai.provider.name": "anthropic",
                         "gen_ai.request.model": "claude-sonnet-4-5", "gen_ai.request.max_tokens": 8192,
                         "gen_ai.conversation.id": "conv-b", "error.type": "429"})
    span.set_status(Status(StatusCode.ERROR, "rate_limit_error: Number of requests has exceeded your rate limit"))
    span.end(end_time=t + SECOND)
    return list(exporter.get_finished_spans())


def legacy() -> list[Any]:
    """An instrumentation of the older conventions: gen_ai.system and prompt/completion token names."""
    tracer, exporter = _tracer(_resource("ticket-triage", "legacy-1", "build-03"), 0xC)
    t = T0 + 5 * SECOND
    for prompt, completion, cached in LEGACY:
        span = tracer.start_span("openai.chat", kind=SpanKind.CLIENT, start_time=t)
        attrs: dict[str, Any] = {"gen_ai.system": "openai", "gen_ai.request.model": "gpt-4o-mini",
                                 "gen_ai.usage.prompt_tokens": prompt, "gen_ai.usage.completion_tokens": completion}
        if cached is not None:
            attrs["gen_ai.usage.cache_read_input_tokens"] = cached
        span.set_attributes(attrs)
        span.end(end_time=t + 2 * SECOND)
        t += 10 * SECOND
    return list(exporter.get_finished_spans())


def claude_code() -> tuple[Any, Any]:
    """Claude Code's events (logs) and its token counter (metrics), from one resource."""
    resource = _resource("claude-code", "laptop-7-cc", "laptop-7", **{"service.version": "2.1.3"})
    exporter = InMemoryLogRecordExporter()
    provider = LoggerProvider(resource=resource)
    provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    logger = provider.get_logger("com.anthropic.claude_code.events", "2.1.3")
    t = T0 + 3 * SECOND
    logger.emit(timestamp=t, observed_timestamp=t, body="claude_code.user_prompt",
                attributes={"event.name": "user_prompt", "session.id": CLAUDE_SESSION, "prompt_length": "88",
                            "event.sequence": 0})
    for i, (inp, out, read, created, cost) in enumerate(CLAUDE_CODE):
        t += 7 * SECOND
        logger.emit(timestamp=t, observed_timestamp=t, body="claude_code.api_request", attributes={
            "event.name": "api_request", "event.timestamp": _iso(t), "event.sequence": i + 1,
            "session.id": CLAUDE_SESSION, "prompt.id": "0d9e7c1a-3b52-4f60-8e21-7a4c5b6d8e90",
            "model": "claude-sonnet-4-5-20250929", "input_tokens": inp, "output_tokens": out,
            "cache_read_tokens": read, "cache_creation_tokens": created, "cost_usd": cost,
            "duration_ms": str(4000 + 500 * i)})
    logs = encode_logs(list(exporter.get_finished_logs()))
    reader = InMemoryMetricReader()
    meters = MeterProvider(resource=resource, metric_readers=[reader])
    tokens = meters.get_meter("com.anthropic.claude_code", "2.1.3").create_counter("claude_code.token.usage")
    for inp, out, read, created, _ in CLAUDE_CODE:
        for kind, n in (("input", inp), ("output", out), ("cacheRead", read), ("cacheCreation", created)):
            tokens.add(int(n), {"type": kind, "model": "claude-sonnet-4-5-20250929", "session.id": CLAUDE_SESSION})
    data = reader.get_metrics_data()
    assert data is not None
    return logs, encode_metrics(data)


def _iso(ns: int) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ns / 1e9, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _pin_times(message: Any) -> None:
    """Metric points carry the times the SDK collected them: pinned, so that the file is the same on every run."""
    for rm in message.resource_metrics:
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                for p in m.sum.data_points:
                    p.start_time_unix_nano, p.time_unix_nano = T0, T0 + 60 * SECOND


def _hex_ids(v: Any) -> Any:
    """Rewrite protobuf's base64 ids to the OTLP/JSON mapping's hex, as the Collector writes them."""
    if isinstance(v, dict):
        return {k: (base64.b64decode(x).hex() if k in ("traceId", "spanId", "parentSpanId") and isinstance(x, str)
                    else _hex_ids(x)) for k, x in v.items()}
    if isinstance(v, list):
        return [_hex_ids(x) for x in v]
    return v


def collector_line(message: Any) -> bytes:
    """One request as the Collector's file exporter writes it: OTLP/JSON, compact, hex ids."""
    value = _hex_ids(json.loads(json_format.MessageToJson(message, indent=None, use_integers_for_enums=True)))
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def protobuf_line(message: Any, *, snake: bool = False) -> bytes:
    """One request in protobuf's own JSON mapping (base64 ids; proto field names when ``snake``)."""
    text = json_format.MessageToJson(message, indent=None, preserving_proto_field_name=snake)
    return text.encode() + b"\n"


def build() -> bytes:
    """The whole file (deterministic)."""
    a, b, c = agent_a(), agent_b(), legacy()
    logs, metrics = claude_code()
    _pin_times(metrics)
    return b"".join([
        collector_line(encode_spans(a[:4])),            # agent-a's first two calls and tool runs
        protobuf_line(encode_spans(b)),                  # agent-b, base64 ids
        collector_line(logs),                            # Claude Code's events
        collector_line(encode_spans([*a[4:], *c[:1]])),  # agent-a's last call, its agent span, legacy's first
        protobuf_line(encode_spans(c[1:]), snake=True),  # legacy's second call, snake_case names
        collector_line(metrics),
    ])


#: Spans per export request of a generated fleet (the Collector's batch processor sends 8,192 by default; its
#: exporters' queues hand the file exporter smaller batches on a busy fleet).
FLEET_BATCH = 512
#: Instances a generated fleet's conversations are spread over (conversation i runs on instance i mod this).
FLEET_INSTANCES = 10


def fleet_usage(conversation: int, call: int) -> tuple[int, int, int]:
    """(input tokens, cache read, output tokens) a fleet conversation's call reports: a 6,000-token floor and
    history growing by 250 tokens a call, the previous prompt read from the cache."""
    prompt = 6_000 + 100 * (conversation % 7) + 250 * call
    return prompt, (prompt - 250 if call else 0), 120 + call % 50


def fleet(conversations: int, calls: int) -> bytes:
    """A generated fleet's export: ``conversations`` conversations of ``calls`` chat calls each, without content,
    over :data:`FLEET_INSTANCES` instances, every conversation's call k at about the same time, written in
    export requests of :data:`FLEET_BATCH` spans in the order they ended (OTLP/JSON, as the Collector writes)."""
    tracers = [_tracer(_resource("fleet-agent", f"agent-{k:02d}", f"host-{k:02d}"), 0x100 + k)
               for k in range(FLEET_INSTANCES)]
    for j in range(calls):
        for i in range(conversations):
            tracer = tracers[i % FLEET_INSTANCES][0]
            start = T0 + j * 10 * SECOND + i * 1_000_000
            prompt, read, out = fleet_usage(i, j)
            span = tracer.start_span("chat claude-sonnet-4-5", kind=SpanKind.CLIENT, start_time=start)
            span.set_attributes({
                "gen_ai.operation.name": "chat", "gen_ai.provider.name": "anthropic",
                "gen_ai.request.model": "claude-sonnet-4-5", "gen_ai.conversation.id": f"conv-{i:04d}",
                "gen_ai.request.max_tokens": 8192, "gen_ai.usage.input_tokens": prompt,
                "gen_ai.usage.cache_read.input_tokens": read, "gen_ai.usage.output_tokens": out})
            span.end(end_time=start + 2 * SECOND)
    spans = sorted((s for _, exporter in tracers for s in exporter.get_finished_spans()),
                   key=lambda s: s.end_time or 0)
    return b"".join(collector_line(encode_spans(spans[k:k + FLEET_BATCH])) for k in range(0, len(spans), FLEET_BATCH))


def main(argv: list[str] | None = None) -> int:
    """Command line entry point: write the sample (or, with ``--fleet N M``, a generated fleet)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--fleet", type=int, nargs=2, metavar=("CONVERSATIONS", "CALLS"),
                    help="write a generated fleet (no content) instead of the sample; give --out")
    args = ap.parse_args(argv)
    if args.fleet and args.out == OUT:
        ap.error("--fleet writes a generated file: name it with --out")
    data = fleet(*args.fleet) if args.fleet else build()
    args.out.write_bytes(data)
    print(f"{args.out}: {len(data):,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
