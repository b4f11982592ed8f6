"""A request whose messages are missing or damaged: nothing is known about its history or its system prompt.

Such a line was read as a request with no messages: ``system_prompt_evicted`` (critical, exit 1) for a damaged
line, an estimate of the floor alone against the reported prompt (``estimate_disagrees``), a history "drop" (a
compaction), and tool schemas "added" by the next call when the line had lost its ``tools`` as well.  The README
says damaged lines never change ``check``'s exit status by themselves.  Each reader that takes a logged request
body is covered: the canonical wrapper (chat completions, Anthropic, Responses, a nested ``request.body``),
claude-trace, OpenAI and Anthropic batch files, Gemini batch lines, Inspect AI model events and SWE-agent query
steps.

Every log is written here with plain ``json``; the expected flags, call counts, lines and unknown (null) values
are worked out by hand from what each test writes.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ctxwatch.cli import main

SYS = "You are a careful agent. Reply as JSON."
TOOL = {"type": "function", "function": {"name": "search", "description": "Search the web.",
                                         "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}
#: Flags that compare a call's request with the calls before it: none may rest on a request that is not known.
REQUEST_FLAGS = {"system_prompt_evicted", "system_prompt_changed", "floor_grew", "compaction", "estimate_disagrees"}


def _write(path: Path, records: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _report(*args: str) -> dict:
    res = CliRunner().invoke(main, ["report", *args, "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


def _check(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(main, ["check", *args])
    return res.exit_code, res.output


def _words(n: int) -> str:
    return " ".join(["word"] * n)


def chat(i: int, *, usage: bool = True) -> dict[str, Any]:
    """Call ``i`` of a growing gpt-4o chat-completions run: system prompt, one tool, a user message of
    ``2000 + 200 * i`` words ("word" is one o200k token), reporting a prompt of those words + 70.

    The 70 are a hand count of the rest: the system message (4 tokens of framing, 10 of text), the user
    message's framing (4), the reply primer (3) and the tool schema (about 50): within the 5 % (100 tokens and
    more) that ``estimate_disagrees`` allows, so no flag is due on an intact call."""
    n = 2000 + 200 * i
    req = {"model": "gpt-4o", "tools": [TOOL],
           "messages": [{"role": "system", "content": SYS}, {"role": "user", "content": _words(n)}]}
    u: dict[str, Any] = {"completion_tokens": 5}
    if usage:
        u["prompt_tokens"] = n + 70
    return {"timestamp": 1_700_000_000 + 10 * i, "request": req,
            "response": {"choices": [{"message": {"role": "assistant", "content": '{"ok": 1}'}}], "usage": u}}


def anthropic(i: int) -> dict[str, Any]:
    """Call ``i`` of an Anthropic Messages run, its system prompt in ``system`` (no usage: the estimate of
    another provider's tokenizer would be calibrated, and that is not what these tests are about)."""
    return {"timestamp": 1_700_000_000 + 10 * i,
            "request": {"model": "claude-sonnet-4-5", "max_tokens": 1024, "system": SYS,
                        "tools": [{"name": "search", "description": "Search.", "input_schema": {"type": "object"}}],
                        "messages": [{"role": "user", "content": _words(200 * (i + 1))}]},
            "response": {"id": f"msg_{i}", "type": "message", "content": [{"type": "text", "text": "ok"}]}}


def responses(i: int) -> dict[str, Any]:
    """Call ``i`` of an OpenAI Responses run, its system prompt in ``instructions``, reporting its words + 30
    (instructions 10, message framing 4, primer 3: 17 by hand, 13 short of the report, under the 16 tokens
    that ``estimate_disagrees`` needs)."""
    return {"timestamp": 1_700_000_000 + 10 * i,
            "request": {"model": "gpt-4o", "instructions": SYS,
                        "input": [{"role": "user", "content": _words(200 * (i + 1))}]},
            "response": {"output": [{"type": "message", "content": [{"type": "output_text", "text": "ok"}]}],
                         "usage": {"input_tokens": 230 + 200 * i, "output_tokens": 5}}}


def _damaged(records: list[dict], at: int, field: str, value: Any, body: tuple[str, ...] = ("request",)) -> list:
    """``records`` with ``field`` of record ``at``'s request body set to ``value`` (deleted for ``...``)."""
    out = copy.deepcopy(records)
    b = out[at]
    for k in body:
        b = b[k]
    if value is ...:
        del b[field]
    else:
        b[field] = value
    return out


# (field, value) damage of a history, and the wording of it
HISTORY_DAMAGE = [("messages", ..., "is missing"), ("messages", {"oops": 1}, "is not a list"),
                  ("messages", None, "is not a list"), ("messages", "hi", "is not a list"),
                  ("messages", [{"role": "system", "content": SYS}, 1], "holds 1 entry that is not a message object"),
                  ("messages", [{"content": SYS}, {"role": "user", "content": "hi"}],
                   "holds 1 entry that is not a message object"),
                  # (both APIs reject an empty list: OpenAI "Invalid 'messages': empty array", Anthropic "messages:
                  # at least one message is required"; so no call was made with one, and the line is damaged)
                  ("messages", [], "is empty")]


def _no_request_flags(doc: dict) -> None:
    got = [(f["kind"], f["call"]) for f in doc["flags"] if f["kind"] in REQUEST_FLAGS]
    assert got == [], got


@pytest.mark.parametrize(("field", "value", "what"), HISTORY_DAMAGE)
def test_a_chat_request_with_damaged_messages_knows_no_system_prompt(tmp_path: Path, field: str, value: Any,
                                                                     what: str) -> None:
    """Five calls, each sending the system prompt, the tool and a longer user message; the 4th line's messages
    are missing or damaged.  Its system prompt lives in those messages, so nothing says it was evicted: no flag
    at all (the run is far below any threshold of the 128k window), exit 0 at ``--fail-on info``, the call
    counted with its history, system prompt and estimate unknown (null), its tool schemas still known, and one
    bad line."""
    records = _damaged([chat(i) for i in range(5)], 3, field, value)
    path = _write(tmp_path / "run.jsonl", records)
    doc = _report(str(path))
    assert len(doc["calls"]) == 5
    c = doc["calls"][3]
    assert (c["line"], c["prompt_tokens_reported"]) == (4, 2600 + 70)
    assert (c["history_tokens"], c["system_tokens"], c["floor_tokens"], c["messages"],
            c["prompt_tokens_estimated"]) == (None, None, None, None, None)
    assert c["tools"] == ["search"]
    assert [(i["line"], i["kind"], i["message"]) for i in doc["issues"]] == [
        (4, "invalid_field", f"request.messages {what}: the history and the system prompt are unknown")]
    assert doc["flags"] == []
    code, out = _check(str(path), "--fail-on", "warn")
    assert code == 0, out
    assert "1 bad line" in out


def test_the_testers_case_a_demo_run_with_one_line_missing_its_messages(tmp_path: Path) -> None:
    """The report: the demo's first 8 calls with line 6's ``request.messages`` deleted (or set to ``{"oops":1}``)
    gave "CRITICAL #6 system_prompt_evicted" (and, deleted, an estimate of the floor alone 50 % below the
    reported prompt) and exit 1.  The demo's first 8 prompts are 4,000-9,000 tokens of a 32,000-token window,
    below its 15,360-token trigger (0.8 x 0.6 x 32,000): no flag is due at all."""
    from ctxwatch.demo import write_run

    full = tmp_path / "demo.jsonl"
    write_run(full)
    lines = full.read_text().splitlines()[:8]
    for name, value in (("deleted", ...), ("oops", {"oops": 1})):
        rec = json.loads(lines[5])
        if value is ...:
            del rec["request"]["messages"]
        else:
            rec["request"]["messages"] = value
        path = tmp_path / f"{name}.jsonl"
        path.write_text("\n".join([*lines[:5], json.dumps(rec), *lines[6:]]) + "\n")
        code, out = _check(str(path), "--fail-on", "warn")
        assert code == 0, out
        assert "system_prompt_evicted" not in out and "8 calls, 0 flags" in out and "1 bad line" in out
        doc = _report(str(path))
        assert len(doc["calls"]) == 8 and doc["flags"] == []
        assert [(i["line"], i["kind"]) for i in doc["issues"]] == [(6, "invalid_field")]


def test_a_record_that_lost_its_messages_and_tools_adds_no_tools_to_the_next_call(tmp_path: Path) -> None:
    """``request: {"model": "gpt-4o"}`` (the body cut down to its model): its missing ``tools`` says nothing, so
    the next call, sending the same one tool as every other call, did not "grow the floor" by it."""
    records = [chat(i) for i in range(5)]
    records[2]["request"] = {"model": "gpt-4o"}
    doc = _report(str(_write(tmp_path / "cut.jsonl", records)))
    c = doc["calls"][2]
    assert (c["tools"], c["tools_tokens"], c["history_tokens"], c["system_tokens"]) == (None, None, None, None)
    assert [(i["line"], i["message"]) for i in doc["issues"]] == [
        (3, "request.messages is missing: the history, the system prompt and the tool schemas are unknown")]
    assert doc["flags"] == []


def test_an_unknown_history_is_no_history_drop(tmp_path: Path) -> None:
    """Without reported usage the occupancy is the estimate: a last call whose messages are lost was estimated
    at its floor alone (system prompt, tool, primer: under 100 tokens) after 1,000 words, a drop of more than a
    quarter and 1,000 tokens, reported as a compaction.  Its size is unknown, not small."""
    records = [chat(i, usage=False) for i in range(5)]
    records[4]["request"]["messages"] = {"oops": 1}
    doc = _report(str(_write(tmp_path / "nousage.jsonl", records)))
    assert doc["calls"][4]["prompt_tokens_estimated"] is None
    assert doc["flags"] == []


@pytest.mark.parametrize(("field", "value", "what"), HISTORY_DAMAGE)
def test_an_anthropic_request_with_damaged_messages_keeps_its_own_system_field(tmp_path: Path, field: str,
                                                                               value: Any, what: str) -> None:
    """An Anthropic request carries its system prompt in ``system``, which the damage did not touch: it stays
    known (and present: no flag), the history is unknown, and the issue says only that."""
    records = _damaged([anthropic(i) for i in range(5)], 3, field, value)
    doc = _report(str(_write(tmp_path / "a.jsonl", records)))
    c = doc["calls"][3]
    assert c["history_tokens"] is None and c["messages"] is None
    # (the same SYS as the undamaged calls: the same count, not merely a count)
    assert [d["system_tokens"] for d in doc["calls"]] == [doc["calls"][0]["system_tokens"]] * 5
    assert c["system_tokens"] > 0
    assert [(i["line"], i["message"]) for i in doc["issues"]] == [(4, f"request.messages {what}: the history is "
                                                                      "unknown")]
    _no_request_flags(doc)


@pytest.mark.parametrize("system", [..., 42, ""])
def test_an_anthropic_request_without_a_usable_system_field_and_messages_is_not_an_eviction(
        tmp_path: Path, system: Any) -> None:
    """With its messages lost, a request whose ``system`` is absent, empty or not text does not show that the
    system prompt was dropped: it is unknown.  (``system: 42`` with intact messages is damage of its own.)"""
    records = _damaged(_damaged([anthropic(i) for i in range(5)], 3, "system", system), 3, "messages", ...)
    doc = _report(str(_write(tmp_path / "a.jsonl", records)))
    assert doc["calls"][3]["system_tokens"] is None
    assert [i["line"] for i in doc["issues"]] == [4] * (2 if system == 42 else 1)
    _no_request_flags(doc)
    records = _damaged([anthropic(i) for i in range(5)], 3, "system", 42)
    doc = _report(str(_write(tmp_path / "s.jsonl", records)))
    assert doc["calls"][3]["system_tokens"] is None and doc["calls"][3]["history_tokens"] is not None
    assert [(i["line"], i["message"]) for i in doc["issues"]] == [
        (4, "request.system is a JSON int, not text: the system prompt is unknown")]
    _no_request_flags(doc)


@pytest.mark.parametrize(("field", "value", "what"), [
    ("input", ..., "request.input is missing: the history, the system prompt and the tool schemas are unknown"),
    ("input", {"oops": 1}, "request.input is not a list: the history, the system prompt and the tool schemas are "
                           "unknown"),
    ("input", [{"content": "hi"}], "request.input holds 1 entry that is not a message object: the history, the "
                                   "system prompt and the tool schemas are unknown"),
    ("instructions", 42, "request.instructions is a JSON int, not text: the system prompt is unknown")])
def test_a_responses_request_with_damaged_input_or_instructions(tmp_path: Path, field: str, value: Any,
                                                                what: str) -> None:
    """The Responses API sends the system prompt as ``instructions`` and leading developer items of ``input``; these
    requests send no tools, and in a request that lost its input, no ``tools`` does not say there were none."""
    records = _damaged([responses(i) for i in range(5)], 3, field, value)
    doc = _report(str(_write(tmp_path / "r.jsonl", records)))
    assert len(doc["calls"]) == 5 and doc["calls"][3]["system_tokens"] is None
    assert [(i["line"], i["message"]) for i in doc["issues"]] == [(4, what)]
    _no_request_flags(doc)


def test_the_testers_case_an_empty_messages_list_is_no_eviction(tmp_path: Path) -> None:
    """/tmp/brk/t/dm_empty.jsonl: a gpt-4o run whose 3rd line sends ``messages: []`` and reports a prompt of 540
    gave "CRITICAL system_prompt_evicted" and exit 1.  A prompt of 540 tokens was not made of no messages: the
    line is an ``invalid_field`` bad line, and its history and system prompt are unknown (null)."""
    records = [chat(i) for i in range(5)]
    records[2]["request"]["messages"] = []
    records[2]["response"]["usage"]["prompt_tokens"] = 540
    path = _write(tmp_path / "dm_empty.jsonl", records)
    doc = _report(str(path))
    c = doc["calls"][2]
    assert (c["prompt_tokens_reported"], c["system_tokens"], c["history_tokens"], c["messages"]) == (540, None,
                                                                                                     None, None)
    assert [(i["line"], i["kind"]) for i in doc["issues"]] == [(3, "invalid_field")]
    assert "system_prompt_evicted" not in [f["kind"] for f in doc["flags"]]
    code, out = _check(str(path))
    assert code == 0, out


def _continued(i: int, *, instructions: bool, inp: list[dict[str, Any]]) -> dict[str, Any]:
    """Call ``i`` of a Responses run that continues the stored conversation of call ``i - 1``
    (``previous_response_id``): it sends only ``inp``, the new items."""
    req: dict[str, Any] = {"model": "gpt-4o", "previous_response_id": f"resp_{i - 1}", "input": inp}
    if instructions:
        req["instructions"] = SYS
    return {"timestamp": 1_700_000_000 + 10 * i, "request": req,
            "response": {"id": f"resp_{i}", "output": [{"type": "message", "content": [
                {"type": "output_text", "text": "ok"}]}], "usage": {"input_tokens": 230 + 200 * i,
                                                                      "output_tokens": 5}}}


@pytest.mark.parametrize("instructions", [True, False])
def test_a_responses_request_that_continues_a_stored_conversation(tmp_path: Path, instructions: bool) -> None:
    """A Responses request with ``previous_response_id`` sends only the new items (an empty ``input`` too): the
    history lives on the server, so it is unknown, not empty, and not damage (no issue).  ``instructions`` are
    not carried over from the previous response (OpenAI's API reference), so when the request has them its
    system prompt is known; else it is unknown (the first call's developer message is part of the stored
    history), and not evicted."""
    first = responses(0)
    first["response"]["id"] = "resp_0"
    if not instructions:
        del first["request"]["instructions"]
        first["request"]["input"].insert(0, {"role": "developer", "content": SYS})
    records = [first, _continued(1, instructions=instructions, inp=[{"role": "user", "content": _words(200)}]),
               _continued(2, instructions=instructions, inp=[]),
               _continued(3, instructions=instructions, inp=[{"role": "user", "content": _words(200)}])]
    doc = _report(str(_write(tmp_path / "r.jsonl", records)))
    assert doc["issues"] == []
    calls = doc["calls"]
    assert calls[0]["history_tokens"] is not None and calls[0]["system_tokens"] is not None
    assert [c["history_tokens"] for c in calls[1:]] == [None, None, None]
    assert [c["prompt_tokens_reported"] for c in calls] == [230, 430, 630, 830]
    assert all((c["system_tokens"] is not None) == instructions for c in calls[1:])
    _no_request_flags(doc)


def test_a_nested_request_body_names_its_field(tmp_path: Path) -> None:
    """``{"request": {"body": {...}}}``: the issue names ``request.body.messages``."""
    records = [{**r, "request": {"body": r["request"]}} for r in (chat(i) for i in range(5))]
    records = _damaged(records, 3, "messages", ..., body=("request", "body"))
    doc = _report(str(_write(tmp_path / "n.jsonl", records)), "--format", "canonical")
    assert [(i["line"], i["message"]) for i in doc["issues"]] == [
        (4, "request.body.messages is missing: the history and the system prompt are unknown")]
    assert doc["flags"] == []


def _trace(i: int, messages: Any) -> dict[str, Any]:
    """A claude-trace line: one non-streamed Messages exchange whose body sends ``messages`` (no usage, so that
    no calibrated estimate is compared with it)."""
    return {"request": {"timestamp": 1_748_554_706 + i, "method": "POST",
                        "url": "https://api.anthropic.com/v1/messages", "headers": {},
                        "body": {"model": "claude-sonnet-4-5", "max_tokens": 1024, "system": SYS,
                                 "tools": [{"name": "search", "input_schema": {"type": "object"}}],
                                 "messages": messages}},
            "response": {"timestamp": 1_748_554_710 + i, "status_code": 200, "headers": {},
                         "body": {"id": f"msg_{i}", "type": "message", "content": [{"type": "text", "text": "ok"}]}},
            "logged_at": "2025-05-29T21:38:30.000Z"}


def test_claude_trace_exchange_with_damaged_messages(tmp_path: Path) -> None:
    """A claude-trace exchange whose body's messages are not a list was read as a request with none, silently."""
    msgs = [{"role": "user", "content": "hi"}]
    records = [_trace(0, msgs), _trace(1, msgs), _trace(2, {"oops": 1}), _trace(3, msgs)]
    doc = _report(str(_write(tmp_path / "trace.jsonl", records)), "--format", "claude-trace")
    assert len(doc["calls"]) == 4 and doc["calls"][2]["history_tokens"] is None
    assert [(i["line"], i["kind"], i["message"]) for i in doc["issues"]] == [
        (3, "invalid_field", "request.body.messages is not a list: the history is unknown")]
    _no_request_flags(doc)


def test_batch_requests_with_damaged_messages(tmp_path: Path) -> None:
    """An OpenAI batch input whose 2nd request has no ``messages`` and an Anthropic one whose 2nd request's
    ``params.messages`` is not a list: the joined calls are counted, their history and system prompt unknown,
    and the issue names the request file and line (found here by hand: line 2 of each), not the result's."""
    ids = ["a", "b", "c"]
    oa = tmp_path / "openai"
    oa.mkdir()
    bodies = [{"model": "gpt-4o-mini", "messages": [{"role": "system", "content": SYS},
                                                    {"role": "user", "content": f"question {c}"}]} for c in ids]
    del bodies[1]["messages"]
    _write(oa / "in.jsonl", [{"custom_id": c, "method": "POST", "url": "/v1/chat/completions", "body": b}
                             for c, b in zip(ids, bodies, strict=True)])
    _write(oa / "out.jsonl", [{"id": f"batch_req_{c}", "custom_id": c, "error": None, "response": {
        "status_code": 200, "body": {"model": "gpt-4o-mini", "usage": {"prompt_tokens": 20, "completion_tokens": 2},
                                     "choices": []}}} for c in ids])
    an = tmp_path / "anthropic"
    an.mkdir()
    params = [{"model": "claude-3-5-haiku-20241022", "max_tokens": 100,
               "messages": [{"role": "user", "content": f"question {c}"}]} for c in ids]
    params[1]["messages"] = {"oops": 1}
    _write(an / "requests.jsonl", [{"custom_id": c, "params": p} for c, p in zip(ids, params, strict=True)])
    _write(an / "results.jsonl", [{"custom_id": c, "result": {"type": "succeeded", "message": {
        "id": f"msg_{c}", "type": "message", "role": "assistant", "model": "claude-3-5-haiku-20241022",
        "content": [], "usage": {"input_tokens": 10, "output_tokens": 2}}}} for c in ids])
    for folder, req_file, what in ((oa, "in.jsonl", "body.messages is missing"),
                                   (an, "requests.jsonl", "params.messages is not a list")):
        doc = _report(str(folder / req_file), str(next(p for p in folder.iterdir() if p.name != req_file)))
        assert len(doc["calls"]) == 3 and doc["calls"][1]["history_tokens"] is None, folder.name
        assert [(Path(i["file"]).name, i["line"], i["message"]) for i in doc["issues"]] == [
            (req_file, 2, f"{what}: the history, the system prompt and the tool schemas are unknown")], folder.name
        _no_request_flags(doc)
        # the request file read alone says the same
        doc = _report(str(folder / req_file))
        assert [(i["line"], i["kind"]) for i in doc["issues"]] == [(2, "invalid_field")], folder.name
        _no_request_flags(doc)


def test_gemini_request_without_contents(tmp_path: Path) -> None:
    """Vertex batch prediction lines ``{request, response, status}``; the 2nd request lost ``contents`` (and
    its ``systemInstruction``, which the others send): its history and system prompt are unknown."""
    def line(i: int) -> dict[str, Any]:
        return {"request": {"systemInstruction": {"parts": [{"text": SYS}]},
                            "contents": [{"role": "user", "parts": [{"text": _words(50)}]}]},
                "response": {"candidates": [{"content": {"parts": [{"text": "ok"}], "role": "model"}}],
                             "usageMetadata": {"promptTokenCount": 70, "candidatesTokenCount": 1},
                             "modelVersion": "gemini-2.5-flash"},
                "status": ""}

    rows = [line(i) for i in range(3)]
    rows[1]["request"] = {}
    doc = _report(str(_write(tmp_path / "g.jsonl", rows)), "--format", "gemini")
    assert len(doc["calls"]) == 3 and doc["calls"][1]["history_tokens"] is None
    assert [(i["line"], i["message"]) for i in doc["issues"]] == [
        (2, "request.contents is missing: the history, the system prompt and the tool schemas are unknown")]
    _no_request_flags(doc)


def _inspect_events(tmp_path: Path, damage: Callable[[dict[str, Any]], None]) -> dict:
    """``report --json`` of an Inspect log of three gpt-4o model events (system message, then a user message of
    50 + i words), the 2nd one's event passed through ``damage``."""
    def event(i: int) -> dict[str, Any]:
        return {"event": "model", "model": "openai/gpt-4o", "timestamp": f"2025-01-01T00:00:0{i}+00:00",
                "input": [{"role": "system", "content": SYS}, {"role": "user", "content": _words(50 + i)}],
                "tools": [], "config": {},
                "output": {"model": "gpt-4o", "choices": [],
                           "usage": {"input_tokens": 70 + i, "output_tokens": 1, "total_tokens": 71 + i}}}

    events = [event(i) for i in range(3)]
    damage(events[1])
    doc = {"eval": {"run_id": "r", "task": "t"}, "samples": [{"id": 1, "epoch": 1, "events": events,
                                                                  "attachments": {}}]}
    path = tmp_path / "log.json"
    path.write_text(json.dumps(doc))
    return _report(str(path), "--format", "inspect-ai")


def test_inspect_model_event_without_input(tmp_path: Path) -> None:
    """An Inspect model event whose ``input`` (system message first) is missing, between two whole ones."""
    doc = _inspect_events(tmp_path, lambda e: e.pop("input"))
    assert len(doc["calls"]) == 3 and doc["calls"][1]["system_tokens"] is None
    assert [(i["line"], i["message"]) for i in doc["issues"]] == [
        (0, "sample 1 epoch 1 model event 1: input is missing: the history and the system prompt are unknown")]
    _no_request_flags(doc)


def test_inspect_model_event_with_an_empty_input(tmp_path: Path) -> None:
    """An Inspect model event whose ``input`` is ``[]`` while it reports 71 input tokens: read as a request
    with no messages, it raised "system prompt evicted" and a history of 0.  No provider takes a request
    without messages (as for an empty chat ``messages`` or Gemini ``contents``), so it is damage: its history
    and system prompt are unknown (null), and it is an ``invalid_field`` bad line."""
    doc = _inspect_events(tmp_path, lambda e: e.update(input=[]))
    c = doc["calls"][1]
    assert (c["prompt_tokens_reported"], c["system_tokens"], c["history_tokens"]) == (71, None, None)
    assert [(i["line"], i["kind"], i["message"]) for i in doc["issues"]] == [
        (0, "invalid_field", "sample 1 epoch 1 model event 1: input is empty: the history and the system prompt "
                             "are unknown")]
    _no_request_flags(doc)


def _swe_steps(tmp_path: Path, damage: Callable[[list[Any]], None]) -> dict:
    """``report --json`` of a SWE-agent trajectory of three query steps (system message, user message ``U<i>``),
    the 2nd step's ``query`` passed through ``damage``."""
    steps = [{"query": [{"role": "system", "content": SYS}, {"role": "user", "content": f"U{i}"}],
              "response": f"R{i}"} for i in range(3)]
    damage(steps[1]["query"])
    doc = {"trajectory": steps, "history": [],
           "info": {"model_stats": {"tokens_sent": 50, "tokens_received": 5, "api_calls": 3}},
           "replay_config": json.dumps({"agent": {"model": {"name": "gpt-4o"}}})}
    path = tmp_path / "t.traj"
    path.write_text(json.dumps(doc))
    return _report(str(path), "--format", "swe-agent")


def test_swe_agent_query_with_an_entry_that_is_not_a_message(tmp_path: Path) -> None:
    """A SWE-agent step's ``query`` is the request as sent; the 2nd holds a number where its system message was."""
    doc = _swe_steps(tmp_path, lambda q: q.__setitem__(0, 7))
    assert len(doc["calls"]) == 3 and doc["calls"][1]["system_tokens"] is None
    assert [(i["line"], i["message"]) for i in doc["issues"]] == [
        (0, "trajectory step 1: query holds 1 entry that is not a message object: the history and the system "
            "prompt are unknown")]
    _no_request_flags(doc)


def test_swe_agent_query_that_is_empty(tmp_path: Path) -> None:
    """The 2nd step's ``query`` is ``[]``: read as a request with no messages, its system prompt was "evicted"
    and its history 0.  The APIs SWE-agent calls reject a request without messages, so it is damage: history
    and system prompt unknown (null), an ``invalid_field`` bad line."""
    doc = _swe_steps(tmp_path, lambda q: q.clear())
    c = doc["calls"][1]
    assert (c["system_tokens"], c["history_tokens"], c["messages"]) == (None, None, None)
    assert [(i["line"], i["kind"], i["message"]) for i in doc["issues"]] == [
        (0, "invalid_field", "trajectory step 1: query is empty: the history and the system prompt are unknown")]
    _no_request_flags(doc)


def test_plan_says_why_a_call_with_damaged_messages_cannot_be_planned(tmp_path: Path) -> None:
    """``plan --call 4`` on the damaged line planned its (empty) history, or said the log held only its usage."""
    for value in (..., {"oops": 1}):
        path = _write(tmp_path / "p.jsonl", _damaged([chat(i) for i in range(5)], 3, "messages", value))
        res = CliRunner().invoke(main, ["plan", str(path), "--call", "4"])
        assert res.exit_code == 2
        assert "this call's messages are missing from its log line or damaged" in res.stderr


def test_gemini_request_with_empty_contents(tmp_path: Path) -> None:
    """A logged generateContent request (not a batch line) whose ``contents`` is ``[]`` and which lost its
    ``systemInstruction``: read as a request with no messages, it was a request without the system prompt the
    others send.  The API rejects an empty ``contents`` ("contents is not specified"), so it is damage: its
    history and system prompt are unknown, and nothing is flagged from them."""
    def line(i: int) -> dict[str, Any]:
        return {"request": {"systemInstruction": {"parts": [{"text": SYS}]},
                            "contents": [{"role": "user", "parts": [{"text": _words(50)}]}]},
                "response": {"candidates": [{"content": {"parts": [{"text": "ok"}], "role": "model"}}],
                             "usageMetadata": {"promptTokenCount": 70 + i, "candidatesTokenCount": 1},
                             "modelVersion": "gemini-2.5-flash"}}

    rows = [line(i) for i in range(4)]
    rows[2]["request"] = {"contents": []}
    doc = _report(str(_write(tmp_path / "g.jsonl", rows)), "--format", "gemini")
    assert len(doc["calls"]) == 4 and doc["calls"][2]["history_tokens"] is None
    assert [(i["line"], i["kind"], i["message"]) for i in doc["issues"]] == [
        (3, "invalid_field", "request.contents is empty: the history, the system prompt and the tool schemas are "
                             "unknown")]
    _no_request_flags(doc)
