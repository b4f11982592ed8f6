"""The OpenTelemetry Collector's file export (format ``otel``): GenAI spans and Claude Code's api_request events.

The sample ``sample_logs/otel_collector.jsonl`` is written by the real OpenTelemetry SDK
(``scripts/make_otel_sample.py``).  Expected values are the numbers that script put in (its constants, written
here by hand), or are read from the file with plain ``json``; the hand-written lines below pin the rules the SDK
cannot show (structured content attributes, damaged values).
"""

from __future__ import annotations

import base64
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ctxwatch.cli import main

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_logs" / "otel_collector.jsonl"
AGENT_A = {"service.name": "invoicer-agent", "service.instance.id": "agent-a", "host.name": "build-01"}
AGENT_B = {"service.name": "invoicer-agent", "service.instance.id": "agent-b", "host.name": "build-02"}
LEGACY = {"service.name": "ticket-triage", "service.instance.id": "legacy-1", "host.name": "build-03"}
CLAUDE = {"service.name": "claude-code", "service.instance.id": "laptop-7-cc", "host.name": "laptop-7"}
CC_SESSION = "5f0c2a4e-8d1b-4c3e-9a7f-2b6d0e1c9a55"


def report(path: Path, *extra: str) -> dict[str, Any]:
    res = CliRunner().invoke(main, ["report", str(path), "--json", *extra])
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


def by_instance(doc: dict[str, Any], inst: dict[str, str]) -> list[dict[str, Any]]:
    return [c for c in doc["calls"] if c.get("instance") == inst]


def test_the_sample_gives_every_call_with_its_session_instance_and_usage() -> None:
    doc = report(SAMPLE)
    assert doc["format"] == "otel"
    assert doc["issues"] == []
    # 3 chat spans of agent-a (its invoke_agent and execute_tool spans are no calls), 4 of agent-b (the last
    # failed), 2 of the legacy instrumentation, 3 api_request events of Claude Code (its user_prompt is none)
    assert len(doc["calls"]) == 12
    assert all("instance" in c for c in doc["calls"])
    a, b, legacy, cc = (by_instance(doc, i) for i in (AGENT_A, AGENT_B, LEGACY, CLAUDE))
    assert (len(a), len(b), len(legacy), len(cc)) == (3, 4, 2, 3)
    assert {c["session"] for c in a} == {"conv-a"} and {c["session"] for c in b} == {"conv-b"}
    assert {c["session"] for c in legacy} == {None} and {c["session"] for c in cc} == {CC_SESSION}
    # agent-b: input tokens include the cache (the conventions' rule); max_tokens 8192 is the reserve
    assert [c["prompt_tokens_reported"] for c in b[:3]] == [9_812, 10_604, 11_377]
    assert [c["cache_read_tokens"] for c in b[:3]] == [0, 9_400, 10_180]
    assert [c["cache_write_tokens"] for c in b[:3]] == [9_400, 780, 760]
    assert [c["input_uncached_tokens"] for c in b[:3]] == [412, 424, 437]  # 9812-9400, 10604-9400-780, ...
    assert [c["completion_tokens_reported"] for c in b[:3]] == [412, 388, 501]
    assert all(c["reserve_tokens"] == 8192 and c["reserve_source"] == "request" for c in b)
    assert b[0]["model"] == "claude-sonnet-4-5-20250929"  # (the response's model, not the requested alias)
    # the failed call: no usage, nothing guessed, not billed
    assert b[3]["prompt_tokens_reported"] is None and b[3]["floor_tokens"] is None
    # legacy: prompt/completion token names, the old cache-read name, no conversation id
    assert [(c["prompt_tokens_reported"], c["completion_tokens_reported"]) for c in legacy] == [(2300, 150),
                                                                                              (2650, 90)]
    assert [c["cache_read_tokens"] for c in legacy] == [None, 1024]
    # Claude Code: numbers as strings; input_tokens is the uncached part (12 + 0 + 15840, 8 + 15840 + 602, ...)
    assert [c["prompt_tokens_reported"] for c in cc] == [15_852, 16_450, 17_657]
    assert [c["completion_tokens_reported"] for c in cc] == [310, 244, 1033]
    assert [c["input_uncached_tokens"] for c in cc] == [12, 8, 5]
    sessions = {s["session"]: s for s in doc["sessions"]}
    assert sessions["conv-a"]["instances"] == [AGENT_A] and sessions[CC_SESSION]["instances"] == [CLAUDE]


def test_without_content_the_floor_is_inferred_once_per_conversation() -> None:
    doc = report(SAMPLE)
    for calls, prompts in ((by_instance(doc, AGENT_B)[:3], [9_812, 10_604, 11_377]),
                           (by_instance(doc, CLAUDE), [15_852, 16_450, 17_657]),
                           (by_instance(doc, LEGACY), [2_300, 2_650])):
        floor = prompts[0]  # the first call's whole prompt: nothing else of it is known
        assert [c["floor_tokens"] for c in calls] == [floor] * len(prompts)
        assert {c["floor_source"] for c in calls} == {"inferred"}
        assert [c["history_tokens"] for c in calls] == [p - floor for p in prompts]
        assert [c["history_source"] for c in calls[1:]] == ["inferred"] * (len(prompts) - 1)
        assert all(c["tools"] is None for c in calls)  # (not in the log)


def test_captured_content_is_counted_as_for_any_request() -> None:
    """agent-a's reported input tokens are the generator's count of each request with gpt-4o's own tokenizer:
    floor (system + tools) + history + the 3-token reply primer is the report, and nothing is inferred."""
    calls = by_instance(report(SAMPLE), AGENT_A)
    spans = [s for line in SAMPLE.read_text().splitlines() for rs in json.loads(line).get("resourceSpans", [])
             for ss in rs["scopeSpans"] for s in ss["spans"] if s["name"] == "chat gpt-4o"]
    reported = [int(next(a["value"]["intValue"] for a in s["attributes"] if a["key"] == "gen_ai.usage.input_tokens"))
                for s in spans]
    assert [c["prompt_tokens_reported"] for c in calls] == reported
    for c in calls:
        assert (c["floor_source"], c["history_source"]) == ("estimated", "estimated")
        assert c["floor_tokens"] + c["history_tokens"] + 3 == c["prompt_tokens_reported"]
        assert c["tools"] == ["bash", "edit"]
        assert c["reserve_tokens"] == 1024
    assert [c["messages"] for c in calls] == [1, 3, 5]  # the task, then a tool call and its result per step
    assert len({c["floor_tokens"] for c in calls}) == 1


def test_both_json_mappings_give_the_same_ids(tmp_path: Path) -> None:
    """Line 2 of the sample is protobuf's mapping (base64 ids); the same span with hex ids (OTLP/JSON) and with
    snake_case field names is the same call: one call, not three."""
    line = json.loads(SAMPLE.read_text().splitlines()[1])
    span = line["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    trace_hex, span_hex = base64.b64decode(span["traceId"]).hex(), base64.b64decode(span["spanId"]).hex()
    hexed = json.loads(json.dumps(line))
    hexed["resourceSpans"][0]["scopeSpans"][0]["spans"] = [dict(span, traceId=trace_hex, spanId=span_hex)]
    one = json.loads(json.dumps(line))
    one["resourceSpans"][0]["scopeSpans"][0]["spans"] = [span]
    snake = {"resource_spans": [{"resource": one["resourceSpans"][0]["resource"], "scope_spans": [{"spans": [
        {"trace_id": span["traceId"], "span_id": span["spanId"], "end_time_unix_nano": span["endTimeUnixNano"],
         "attributes": [{"key": a["key"], "value": {"int_value" if "intValue" in a["value"] else "string_value":
                                                    next(iter(a["value"].values()))}} for a in span["attributes"]]}
    ]}]}]}
    path = tmp_path / "mixed.jsonl"
    path.write_text("".join(json.dumps(v) + "\n" for v in (one, hexed, snake)))
    doc = report(path, "--format", "otel")
    assert len(doc["calls"]) == 1, doc["calls"]
    assert doc["calls"][0]["prompt_tokens_reported"] == 9_812
    assert doc["calls"][0]["session"] == "conv-b"


def _kv(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        v: dict[str, Any] = {"boolValue": value}
    elif isinstance(value, int):
        v = {"intValue": str(value)}
    elif isinstance(value, str):
        v = {"stringValue": value}
    elif isinstance(value, list):
        v = {"arrayValue": {"values": [_kv("", x)["value"] for x in value]}}
    else:
        v = {"kvlistValue": {"values": [_kv(k, x) for k, x in value.items()]}}
    return {"key": key, "value": v}


def _line(attrs: dict[str, Any], span_id: str = "00000000000000a1") -> str:
    span = {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": span_id, "name": "chat gpt-4o",
            "endTimeUnixNano": "1768467600000000000", "attributes": [_kv(k, v) for k, v in attrs.items()]}
    return json.dumps({"resourceSpans": [{"resource": {"attributes": [_kv("service.name", "svc")]},
                                          "scopeSpans": [{"spans": [span]}]}]}) + "\n"


def test_structured_content_attributes_are_read_like_json_strings(tmp_path: Path) -> None:
    """Other SDKs record content as structured attributes (arrayValue / kvlistValue), not JSON strings."""
    messages = [{"role": "system", "parts": [{"type": "text", "content": "Be brief."}]},
                {"role": "user", "parts": [{"type": "text", "content": "Hello there"}]}]
    base = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o", "gen_ai.usage.input_tokens": 20,
            "gen_ai.usage.output_tokens": 5}
    path = tmp_path / "structured.jsonl"
    path.write_text(_line({**base, "gen_ai.input.messages": messages}, "00000000000000a1")
                    + _line({**base, "gen_ai.input.messages": json.dumps(messages)}, "00000000000000a2"))
    calls = report(path)["calls"]
    assert len(calls) == 2
    assert calls[0]["floor_tokens"] == calls[1]["floor_tokens"] and calls[0]["floor_source"] == "inferred"
    assert calls[0]["history_tokens"] == calls[1]["history_tokens"] and calls[0]["history_source"] == "estimated"
    assert calls[0]["system_tokens"] == calls[1]["system_tokens"]
    assert calls[0]["messages"] == calls[1]["messages"] == 1  # (the system message is the floor's)
    assert "instance" in calls[0] and calls[0]["instance"] == {"service.name": "svc"}


def test_damaged_lines_and_values_are_issues_and_no_call_is_lost(tmp_path: Path) -> None:
    base = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o", "gen_ai.usage.output_tokens": 5}
    path = tmp_path / "damaged.jsonl"
    path.write_text(_line({**base, "gen_ai.usage.input_tokens": 30}, "00000000000000b1")
                    + '{"something": "else"}\n'
                    + _line({**base, "gen_ai.usage.input_tokens": "many"}, "00000000000000b2")
                    + _line({**base, "gen_ai.usage.input_tokens": 40, "gen_ai.input.messages": "[not json"},
                            "00000000000000b3"))
    doc = report(path, "--format", "otel")
    assert [c["prompt_tokens_reported"] for c in doc["calls"]] == [30, None, 40]
    kinds = sorted((i["line"], i["kind"]) for i in doc["issues"])
    assert (2, "unknown_record") in kinds and (4, "invalid_field") in kinds
    assert any(line == 3 for line, _ in kinds), kinds  # the count that is no count is reported, with its line


def test_agent_spans_and_other_telemetry_are_no_calls(tmp_path: Path) -> None:
    usage = {"gen_ai.usage.input_tokens": 500, "gen_ai.usage.output_tokens": 50}
    path = tmp_path / "agents.jsonl"
    path.write_text(_line({"gen_ai.operation.name": "invoke_agent", **usage}, "00000000000000c1")
                    + _line({"gen_ai.operation.name": "embeddings", "gen_ai.usage.input_tokens": 8}, "00000000000000c2")
                    + _line({"http.request.method": "POST"}, "00000000000000c3")
                    + _line({"gen_ai.operation.name": "chat", **usage}, "00000000000000c4"))
    doc = report(path, "--format", "otel")
    assert [c["prompt_tokens_reported"] for c in doc["calls"]] == [500]
    assert doc["issues"] == []


def test_the_sample_is_what_the_sdk_generator_writes(tmp_path: Path) -> None:
    """The committed sample is the generator's output (compared as JSON values: a newer SDK that adds a field
    to its export needs the sample regenerated, ``python scripts/make_otel_sample.py``)."""
    pytest.importorskip("opentelemetry.sdk", reason="the test extra installs opentelemetry-sdk")
    pytest.importorskip("opentelemetry.exporter.otlp.proto.common", reason="the test extra installs the encoder")
    spec = importlib.util.spec_from_file_location("make_otel_sample", ROOT / "scripts" / "make_otel_sample.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    built = mod.build()
    assert built == mod.build()  # deterministic
    got = [json.loads(x) for x in built.decode().splitlines()]
    assert got == [json.loads(x) for x in SAMPLE.read_text().splitlines()], "stale: run scripts/make_otel_sample.py"


def test_a_fleet_export_made_by_the_sdk_gives_every_call_with_its_session_instance_and_usage(tmp_path: Path) -> None:
    """20 conversations x 6 calls over 10 instances, batched 512 spans a line in the order they ended: the
    usage each span got is the generator's rule, written out here (prompt 6,000 + 100 x (i mod 7) + 250 x call,
    the previous prompt read from the cache, output 120 + call)."""
    pytest.importorskip("opentelemetry.sdk", reason="the test extra installs opentelemetry-sdk")
    spec = importlib.util.spec_from_file_location("make_otel_sample", ROOT / "scripts" / "make_otel_sample.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    path = tmp_path / "fleet.jsonl"
    path.write_bytes(mod.fleet(20, 6))
    doc = report(path)
    assert doc["issues"] == [] and len(doc["calls"]) == 120
    got = {(c["session"], c["prompt_tokens_reported"]): c for c in doc["calls"]}
    for i in range(20):
        calls = [c for c in doc["calls"] if c["session"] == f"conv-{i:04d}"]
        assert len(calls) == 6
        assert {json.dumps(c["instance"], sort_keys=True) for c in calls} == {json.dumps(
            {"service.name": "fleet-agent", "service.instance.id": f"agent-{i % 10:02d}",
             "host.name": f"host-{i % 10:02d}"}, sort_keys=True)}
        prompts = [6_000 + 100 * (i % 7) + 250 * j for j in range(6)]
        assert [c["prompt_tokens_reported"] for c in calls] == prompts
        assert [c["cache_read_tokens"] for c in calls] == [0] + [p - 250 for p in prompts[1:]]
        assert [c["completion_tokens_reported"] for c in calls] == [120 + j for j in range(6)]
        assert [c["floor_tokens"] for c in calls] == [prompts[0]] * 6  # (inferred once per conversation)
        assert [c["history_tokens"] for c in calls] == [250 * j for j in range(6)]
    assert len(got) == 120
    assert len(doc["sessions"]) == 20


def _log_line(attrs: dict[str, Any], service: str = "codex_cli_rs") -> str:
    record = {"timeUnixNano": "1768467600000000000", "attributes": [_kv(k, v) for k, v in attrs.items()]}
    return json.dumps({"resourceLogs": [{"resource": {"attributes": [_kv("service.name", service)]},
                                         "scopeLogs": [{"logRecords": [record]}]}]}) + "\n"


def test_codex_response_completed_events_are_calls_by_openais_rule(tmp_path: Path) -> None:
    """Codex's usage is OpenAI's: the cached tokens are inside input_token_count, reasoning inside the output."""
    common = {"conversation.id": "c-1", "model": "gpt-5.1-codex"}
    path = tmp_path / "codex.jsonl"
    path.write_text(_log_line({"event.name": "codex.api_request", "duration_ms": 300, **common})
                    + _log_line({"event.name": "codex.sse_event", "event.kind": "response.output_item.done",
                                 **common})
                    + _log_line({"event.name": "codex.sse_event", "event.kind": "response.completed",
                                 "input_token_count": "12000", "cached_token_count": "9000",
                                 "output_token_count": "800", "reasoning_token_count": "300", **common}))
    calls = report(path, "--format", "otel")["calls"]
    assert len(calls) == 1
    c = calls[0]
    assert (c["prompt_tokens_reported"], c["cache_read_tokens"], c["input_uncached_tokens"]) == (12000, 9000, 3000)
    assert (c["completion_tokens_reported"], c["reasoning_tokens_reported"]) == (800, 300)
    assert c["session"] == "c-1" and c["instance"] == {"service.name": "codex_cli_rs"}


def _chat_body() -> dict[str, Any]:
    return {"model": "gpt-4o", "messages": [
        {"role": "system", "content": "You fix bugs."},
        {"role": "user", "content": "The VAT test fails."},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "bash", "arguments": '{"cmd":"pytest -q"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "1 failed"}],
        "tools": [{"type": "function", "function": {"name": "bash", "description": "Run a command.",
                                                    "parameters": {"type": "object"}}}]}


def test_openllmetry_indexed_prompt_attributes_are_the_request(tmp_path: Path) -> None:
    """The same request as a canonical record and as OpenLLMetry's gen_ai.prompt.<i>.* attributes: the same
    floor and history (the canonical reader is the other reading)."""
    body = _chat_body()
    attrs: dict[str, Any] = {"gen_ai.system": "openai", "gen_ai.request.model": "gpt-4o",
                             "gen_ai.usage.prompt_tokens": 90, "gen_ai.usage.completion_tokens": 9}
    for i, m in enumerate(body["messages"]):
        attrs[f"gen_ai.prompt.{i}.role"] = m["role"]
        if m["content"] is not None:
            attrs[f"gen_ai.prompt.{i}.content"] = m["content"]
        if "tool_call_id" in m:
            attrs[f"gen_ai.prompt.{i}.tool_call_id"] = m["tool_call_id"]
        for j, tc in enumerate(m.get("tool_calls", [])):
            attrs[f"gen_ai.prompt.{i}.tool_calls.{j}.id"] = tc["id"]
            attrs[f"gen_ai.prompt.{i}.tool_calls.{j}.name"] = tc["function"]["name"]
            attrs[f"gen_ai.prompt.{i}.tool_calls.{j}.arguments"] = tc["function"]["arguments"]
    fn = body["tools"][0]["function"]
    attrs.update({"llm.request.functions.0.name": fn["name"], "llm.request.functions.0.description":
                  fn["description"], "llm.request.functions.0.parameters": json.dumps(fn["parameters"])})
    otel, canonical = tmp_path / "openllmetry.jsonl", tmp_path / "canonical.jsonl"
    otel.write_text(_line(attrs))
    canonical.write_text(json.dumps({"request": body, "response": {"usage": {"prompt_tokens": 90,
                                                                              "completion_tokens": 9}}}) + "\n")
    got, want = report(otel)["calls"][0], report(canonical)["calls"][0]
    for k in ("system_tokens", "tools_tokens", "floor_tokens", "history_tokens", "floor_source", "history_source",
              "messages", "tools", "prompt_tokens_estimated"):
        assert got[k] == want[k], k
    assert got["floor_source"] == "estimated" and got["messages"] == 3


def test_the_older_prompt_event_is_the_request_and_tools_stay_unknown(tmp_path: Path) -> None:
    """Semantic conventions 1.26: a gen_ai.content.prompt span event whose gen_ai.prompt is the messages as JSON;
    the tools are not recorded, so the floor is the rest of the reported prompt (inferred)."""
    body = _chat_body()
    line = json.loads(_line({"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o",
                             "gen_ai.usage.input_tokens": 120, "gen_ai.usage.output_tokens": 9}))
    span = line["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    span["events"] = [{"name": "gen_ai.content.prompt", "timeUnixNano": "1768467600000000000",
                       "attributes": [_kv("gen_ai.prompt", json.dumps(body["messages"]))]}]
    path = tmp_path / "v126.jsonl"
    path.write_text(json.dumps(line) + "\n")
    c = report(path)["calls"][0]
    assert c["messages"] == 3 and c["tools"] is None
    assert c["floor_source"] == "inferred" and c["history_source"] == "estimated"
    assert c["floor_tokens"] == 120 - c["history_tokens"]


def test_a_span_without_operation_name_model_or_provider_is_no_call(tmp_path: Path) -> None:
    """A harness's turn span may carry the summed usage of its requests: without an operation name, only a span
    that names its provider and model is a request."""
    usage = {"gen_ai.usage.input_tokens": 5000, "gen_ai.usage.output_tokens": 50}
    path = tmp_path / "turns.jsonl"
    path.write_text(_line(usage, "00000000000000d1")
                    + _line({"gen_ai.system": "openai", "gen_ai.request.model": "gpt-4o", **usage},
                            "00000000000000d2"))
    assert [c["prompt_tokens_reported"] for c in report(path, "--format", "otel")["calls"]] == [5000]


def test_a_harness_exporting_its_own_events_is_judged_by_its_own_rule() -> None:
    """Claude Code's api_request events in the sample (laptop-7-cc) are Claude Code's calls, judged as its
    transcripts are: reserve 20,000 of the 200,000 window, trigger 167,000 and budget 177,000 (worked by hand in
    ctxwatch.accounting.harness's rule); the GenAI spans of the user's own agents keep the field defaults."""
    from click.testing import CliRunner

    from ctxwatch.cli import main

    sample = Path(__file__).resolve().parents[1] / "sample_logs" / "otel_collector.jsonl"
    doc = json.loads(CliRunner().invoke(main, ["report", "--json", "--no-cache", str(sample)]).output)
    cc = [c for c in doc["calls"] if (c.get("instance") or {}).get("service.name") == "claude-code"]
    assert len(cc) == 3
    assert {(c["harness"], c["reserve_tokens"], c["reserve_source"], c["window"]) for c in cc} == {
        ("claude-code", 20_000, "harness", 200_000)}
    assert {c["harness"] for c in doc["calls"] if c not in cc} == {None}
    assert (doc["forecast"]["trigger_tokens"], doc["forecast"]["budget_tokens"]) == (167_000, 177_000)
