"""A list field (messages, tool calls, tools, a trajectory) that holds a number, a string, a boolean or an object,
in every reader that iterated it unchecked: each raised inside the reader (``TypeError: 'int' object is not
iterable``), which the run turned into a ``reader_error`` and, for a one-document log, into "no call could be
read".  Now every call is kept and the field is an ``invalid_field`` issue.

The expected call counts come from plain ``json`` reads of the samples, not from ctxwatch.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ctxwatch.cli import main

SAMPLES = Path(__file__).resolve().parent.parent / "sample_logs"
ODD = [7, "x", True, 1.5, {"x": 7}]


def report(path: Path) -> dict[str, Any]:
    """``report --json`` of ``path``; fails the test on an exception, an exit other than 0 or a reader error."""
    res = CliRunner().invoke(main, ["report", "--json", "--no-cache", str(path)])
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert res.exit_code == 0, res.output[-800:]
    doc: dict[str, Any] = json.loads(res.stdout)
    assert [i["message"] for i in doc["issues"] if i["kind"] == "reader_error"] == []
    return doc


def invalid(doc: dict[str, Any]) -> list[str]:
    return [i["message"] for i in doc["issues"] if i["kind"] == "invalid_field"]


def with_field(value: Any, where: tuple[Any, ...], new: Any) -> Any:
    """A copy of ``value`` with ``new`` at ``where`` (the last key added when it is not there)."""
    out = json.loads(json.dumps(value))
    at = out
    for k in where[:-1]:
        at = at[k]
    at[where[-1]] = new
    return out


def _write_doc(tmp: Path, name: str, value: Any) -> Path:
    out = tmp / name
    out.write_text(json.dumps(value), encoding="utf-8")
    return out


def _inspect_model_events(doc: dict[str, Any]) -> list[int]:
    return [n for n, e in enumerate(doc["samples"][0]["events"]) if e.get("event") == "model"]


@pytest.mark.parametrize("new", ODD)
@pytest.mark.parametrize("where", [("input",), ("output", "choices", 0, "message", "tool_calls"),
                                   ("output", "choices", 0, "message")])
def test_inspect_model_event_fields_of_the_wrong_type(tmp_path: Path, new: Any, where: tuple[Any, ...]) -> None:
    doc = json.loads((SAMPLES / "documents" / "inspect_eval.json").read_text(encoding="utf-8"))
    events = _inspect_model_events(doc)
    got = report(_write_doc(tmp_path, "inspect.json",
                            with_field(doc, ("samples", 0, "events", events[0], *where), new)))
    assert len(got["calls"]) == len(events)
    assert invalid(got) or (isinstance(new, dict) and where[-1] == "message")  # (an object is a message)


@pytest.mark.parametrize("new", ODD)
def test_gemini_cli_tool_calls_of_the_wrong_type(tmp_path: Path, new: Any) -> None:
    lines = (SAMPLES / "gemini_cli_session.jsonl").read_text(encoding="utf-8").splitlines()
    recs = [json.loads(ln) for ln in lines]
    calls = {r["id"] for r in recs if r.get("type") == "gemini" and isinstance(r.get("tokens"), dict)}
    n = next(i for i, r in enumerate(recs) if "toolCalls" in r)
    lines[n] = json.dumps(with_field(recs[n], ("toolCalls",), new))
    out = tmp_path / "gemini.jsonl"
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    got = report(out)
    assert len(got["calls"]) == len(calls)
    assert [i["line"] for i in got["issues"] if i["kind"] == "invalid_field"][:1] == [n + 1]


@pytest.mark.parametrize("new", ODD)
def test_gemini_cli_document_tool_calls_of_the_wrong_type(tmp_path: Path, new: Any) -> None:
    doc = json.loads((SAMPLES / "documents" / "gemini_cli_session.json").read_text(encoding="utf-8"))
    calls = [m for m in doc["messages"] if m.get("type") == "gemini" and isinstance(m.get("tokens"), dict)]
    n = next(i for i, m in enumerate(doc["messages"]) if "toolCalls" in m)
    got = report(_write_doc(tmp_path, "gemini.json", with_field(doc, ("messages", n, "toolCalls"), new)))
    assert len(got["calls"]) == len(calls)
    assert invalid(got)


@pytest.mark.parametrize("new", [-1, True, 1e300, "x", {"x": 7}])
def test_swe_agent_trajectory_of_the_wrong_type(tmp_path: Path, new: Any) -> None:
    """With no usable trajectory the calls are the assistant turns of ``history``."""
    doc = json.loads((SAMPLES / "documents" / "swe_agent.traj").read_text(encoding="utf-8"))
    turns = [m for m in doc["history"] if m.get("role") == "assistant"]
    got = report(_write_doc(tmp_path, "t.traj", with_field(doc, ("trajectory",), new)))
    assert len(got["calls"]) == len(turns)
    assert any("trajectory" in m for m in invalid(got))


@pytest.mark.parametrize("new", ODD)
def test_openhands_history_of_the_wrong_type(tmp_path: Path, new: Any) -> None:
    """The calls are the ``metrics.token_usages`` entries (one per response id), with or without a history."""
    line = (SAMPLES / "documents" / "openhands_eval_output.jsonl").read_text(encoding="utf-8").splitlines()[0]
    rec = json.loads(line)
    ids = {u["response_id"] for u in rec["metrics"]["token_usages"]}
    out = tmp_path / "oh.jsonl"
    out.write_text(json.dumps(with_field(rec, ("history",), new)) + "\n", encoding="utf-8")
    got = report(out)
    assert len(got["calls"]) == len(ids)
    assert any("history" in m for m in invalid(got))


@pytest.mark.parametrize("new", ODD)
@pytest.mark.parametrize(("name", "where"), [
    ("anthropic_messages.jsonl", ("request", "tools")),
    ("openai_chat_demo.jsonl", ("request", "tools")),
    ("openai_chat_demo.jsonl", ("request", "functions")),
    ("openai_responses.jsonl", ("request", "tools")),
    ("anthropic-batch/requests.jsonl", ("params", "messages")),
])
def test_request_lists_of_the_wrong_type(tmp_path: Path, new: Any, name: str, where: tuple[str, ...]) -> None:
    """A request's ``tools`` (``functions``, a batch request's ``messages``) that is no list, on every line: each
    line is still one call, and each has an ``invalid_field`` issue."""
    lines = [ln for ln in (SAMPLES / name).read_text(encoding="utf-8").splitlines() if ln.strip()]
    out = tmp_path / Path(name).name
    out.write_text("".join(json.dumps(with_field(json.loads(ln), where, new)) + "\n" for ln in lines), encoding="utf-8")
    got = report(out)
    assert len(got["calls"]) == len(lines)
    assert sorted({i["line"] for i in got["issues"] if i["kind"] == "invalid_field"}) == list(range(1, len(lines) + 1))


@pytest.mark.parametrize("new", ODD)
def test_a_stream_chunk_tool_calls_of_the_wrong_type(tmp_path: Path, new: Any) -> None:
    """A canonical record whose response is a chat-completions stream with a delta's ``tool_calls`` no list."""
    chunk = {"object": "chat.completion.chunk", "id": "c1", "model": "gpt-4o"}
    rec = {"request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]},
           "response": [{**chunk, "choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": new}}]},
                        {**chunk, "choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}],
                         "usage": {"prompt_tokens": 8, "completion_tokens": 1}}]}
    out = tmp_path / "stream.jsonl"
    out.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    got = report(out)
    assert [(c["line"], c["prompt_tokens_reported"]) for c in got["calls"]] == [(1, 8)]
    assert any("tool_calls" in m for m in invalid(got))


@pytest.mark.parametrize("op", [[7], {"x": 7}, 7, True])
def test_an_otel_operation_name_of_the_wrong_type(tmp_path: Path, op: Any) -> None:
    """``gen_ai.operation.name`` that is a list raised (``unhashable type``, looked up in a set); any non-string
    is now read as absent (noted): a span that names its provider, model and usage is still a call."""
    def attr(key: str, value: dict[str, Any]) -> dict[str, Any]:
        return {"key": key, "value": value}

    span = {"traceId": "0" * 31 + "1", "spanId": "0" * 15 + "1", "name": "chat gpt-4o",
            "startTimeUnixNano": "1768467601000000000", "endTimeUnixNano": "1768467603000000000",
            "attributes": [attr("gen_ai.operation.name", {"stringValue": op}),
                           attr("gen_ai.provider.name", {"stringValue": "openai"}),
                           attr("gen_ai.request.model", {"stringValue": "gpt-4o"}),
                           attr("gen_ai.usage.input_tokens", {"intValue": "100"}),
                           attr("gen_ai.usage.output_tokens", {"intValue": "5"})]}
    line = {"resourceSpans": [{"resource": {"attributes": [attr("service.name", {"stringValue": "agent"})]},
                               "scopeSpans": [{"scope": {"name": "agent"}, "spans": [span]}]}]}
    out = tmp_path / "otel.jsonl"
    out.write_text(json.dumps(line) + "\n", encoding="utf-8")
    got = report(out)
    assert [(c["line"], c["prompt_tokens_reported"]) for c in got["calls"]] == [(1, 100)]
    assert any("gen_ai.operation.name" in m for m in invalid(got))


def _openhands_instance() -> tuple[dict[str, Any], set[str]]:
    line = (SAMPLES / "documents" / "openhands_eval_output.jsonl").read_text(encoding="utf-8").splitlines()[0]
    rec = json.loads(line)
    return rec, {u["response_id"] for u in rec["metrics"]["token_usages"]}


@pytest.mark.parametrize("new", [7, True, 1e308, [7], {"x": 7}])
def test_an_openhands_response_model_of_the_wrong_type(tmp_path: Path, new: Any) -> None:
    """``model_response.model: 7`` raised in the provider guess (``'int' object has no attribute 'lower'``) and
    lost every call of the instance, when the ``token_usages`` model names no provider (as in the real
    Multi-SWE-bench output, ``openai/openrouter-llama-4-maverick``)."""
    rec, ids = _openhands_instance()
    for u in rec["metrics"]["token_usages"]:
        u["model"] = "openai/openrouter-llama-4-maverick"
    n = next(i for i, e in enumerate(rec["history"]) if "model_response" in (e.get("tool_call_metadata") or {}))
    out = tmp_path / "oh.jsonl"
    out.write_text(json.dumps(with_field(rec, ("history", n, "tool_call_metadata", "model_response", "model"), new))
                   + "\n", encoding="utf-8")
    assert len(report(out)["calls"]) == len(ids)


@pytest.mark.parametrize("new", [[7], {"x": 7}])
def test_a_prompt_count_of_the_wrong_type_before_the_history_floor(tmp_path: Path, new: Any) -> None:
    """The first call's ``prompt_tokens: [7]`` (passed on for the run to report) was compared with 0 to pick the
    call that gives the history floor (``'>' not supported``), losing every call of the instance; it is now no
    prompt, the run reports it, and the next call gives the floor."""
    rec, ids = _openhands_instance()
    got = report(_write_line(tmp_path, with_field(rec, ("metrics", "token_usages", 0, "prompt_tokens"), new)))
    assert len(got["calls"]) == len(ids)
    assert [c["prompt_tokens_reported"] for c in got["calls"]][:1] == [None]
    assert any(i["line"] == 1 and "prompt" in i["message"] for i in got["issues"])


def _write_line(tmp: Path, rec: Any) -> Path:
    out = tmp / "one.jsonl"
    out.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    return out


@pytest.mark.parametrize(("key", "new"), [("id", 7), ("id", ["a"]), ("tokens", 7), ("tokens", "x"), ("type", 7),
                                          ("type", None), ("type", {"t": 1})])
def test_a_gemini_cli_message_field_of_another_type_keeps_its_call(tmp_path: Path, key: str, new: Any) -> None:
    """A ``gemini`` message whose ``id``, ``tokens`` or ``type`` is of another JSON type still gives its call,
    with an ``invalid_field`` issue of its line."""
    lines = (SAMPLES / "gemini_cli_session.jsonl").read_text(encoding="utf-8").splitlines()
    recs = [json.loads(ln) for ln in lines]
    calls = {r["id"] for r in recs if r.get("type") == "gemini" and isinstance(r.get("tokens"), dict)}
    n = next(i for i, r in enumerate(recs) if r.get("type") == "gemini" and isinstance(r.get("tokens"), dict)
             and [x.get("id") for x in recs].count(r["id"]) == 1)
    lines[n] = json.dumps(with_field(recs[n], (key,), new))
    out = tmp_path / "gemini.jsonl"
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    got = report(out)
    assert len(got["calls"]) == len(calls)
    assert [i["line"] for i in got["issues"] if i["kind"] == "invalid_field"] == [n + 1]


def _openhands_ids(events: list[Any]) -> list[str]:
    ids = []
    for e in events:
        mr = (e.get("tool_call_metadata") or {}).get("model_response")
        if isinstance(mr, dict) and isinstance(mr.get("id"), str) and mr["id"] not in ids:
            ids.append(mr["id"])
    return ids


@pytest.mark.parametrize(("where", "new", "kept"), [
    (("model_response", "id"), 7, 0), (("model_response", "id"), ["r"], 0),
    (("model_response",), 7, -1), (("model_response",), "x", -1), (("model_response",), None, -1)])
def test_an_openhands_model_response_of_another_type_is_an_issue(tmp_path: Path, where: tuple[Any, ...], new: Any,
                                                                 kept: int) -> None:
    """A ``model_response`` id of another type keeps its call (read as JSON text); a ``model_response`` that is
    no object gives no call (nothing tells it apart), and both are ``invalid_field`` issues."""
    events = json.loads((SAMPLES / "documents" / "openhands_trajectory.json").read_text(encoding="utf-8"))
    ids = _openhands_ids(events)
    only = [n for n, e in enumerate(events)
            if ((e.get("tool_call_metadata") or {}).get("model_response") or {}).get("id") == ids[0]]
    for n in only:
        events[n] = with_field(events[n], ("tool_call_metadata", *where), new)
    got = report(_write_doc(tmp_path, "openhands.json", events))
    assert len(got["calls"]) == len(ids) + kept
    assert len(invalid(got)) == 1 and "model_response" in invalid(got)[0]


@pytest.mark.parametrize("new", [7, None, True, ["model"], {"x": 7}])
def test_an_inspect_event_kind_of_another_type_keeps_its_call(tmp_path: Path, new: Any) -> None:
    """A model event whose ``event`` is no string is still read as a model event (it has input and output),
    with an ``invalid_field`` issue."""
    doc = json.loads((SAMPLES / "documents" / "inspect_eval.json").read_text(encoding="utf-8"))
    events = _inspect_model_events(doc)
    got = report(_write_doc(tmp_path, "inspect.json", with_field(doc, ("samples", 0, "events", events[0], "event"),
                                                                  new)))
    assert len(got["calls"]) == len(events)
    assert len(invalid(got)) == 1 and "Inspect event" in invalid(got)[0]


@pytest.mark.parametrize("new", [7, "x", {"x": 7}])
def test_a_swe_agent_history_of_another_type_is_said(tmp_path: Path, new: Any) -> None:
    """A ``.traj`` with a ``trajectory`` list but a ``history`` of another type is still read as SWE-agent's: with
    no step query to read calls from, no call can be read, and the run says it is the history."""
    doc = json.loads((SAMPLES / "documents" / "swe_agent.traj").read_text(encoding="utf-8"))
    assert isinstance(doc["trajectory"], list)
    out = _write_doc(tmp_path, "bad.traj", with_field(doc, ("history",), new))
    res = CliRunner().invoke(main, ["report", "--json", "--no-cache", str(out)])
    assert res.exit_code == 2
    assert "no call could be read" in res.output and "history is a JSON" in res.output


@pytest.mark.parametrize("new", [7, None, ["api_req_started"]])
def test_a_cline_say_of_another_type_keeps_its_call(tmp_path: Path, new: Any) -> None:
    """An ``api_req_started`` entry whose ``say`` is no string is still read by its text, with an issue."""
    entries = json.loads((SAMPLES / "documents" / "cline_ui_messages.json").read_text(encoding="utf-8"))
    starts = [n for n, e in enumerate(entries) if e.get("say") == "api_req_started"]
    entries[starts[0]]["say"] = new
    got = report(_write_doc(tmp_path, "ui_messages.json", entries))
    assert len(got["calls"]) == len(starts)
    assert len(invalid(got)) == 1 and "say is" in invalid(got)[0]
