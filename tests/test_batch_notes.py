"""The batch readers' notes say a log's values in words or JSON, never as Python's repr: a batch object's request
counts (a JSON object) read ``19 processing, 0 succeeded``, not ``{'processing': 19, ...}``; a ``custom_id``, an
error code or a status that is no string (``null``, ``true``, an object) is written as JSON, not ``None``,
``True`` or ``{'id': 'x'}``.  The same of the other readers' notes that named a log value with ``str()`` (Cline's
failed requests, claude-trace's other requests).  Expected messages are written by hand or read from the file with
plain ``json``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

#: What Python's repr of a parsed JSON value shows and JSON text never does: a single-quoted key, None, True,
#: False (JSON text writes null, true, false and double-quoted keys).
REPR = re.compile(r"\{'|\[\'|\bNone\b|\bTrue\b|\bFalse\b|': ")


def _messages(*paths: Path) -> list[str]:
    from ctxwatch.cli.load import load_paths
    from ctxwatch.config import Settings

    run = load_paths(tuple(str(p) for p in paths), None, Settings())
    return [i.message for i in run.issues]


def _write(path: Path, values: list[object]) -> Path:
    path.write_text("".join(json.dumps(v) + "\n" for v in values), encoding="utf-8")
    return path


def test_the_receipt_sample_says_its_counts_in_words(shared_logs: Path) -> None:
    path = shared_logs / "anthropic-batch" / "anthropic_batch_receipt.json"
    receipt = json.loads(path.read_text())
    counts = ", ".join(f"{n} {name}" for name, n in receipt["request_counts"].items())
    assert counts.startswith("19 processing, 0 succeeded")
    assert _messages(path) == [f"message batch object {receipt['id']} ({receipt['processing_status']}; "
                               f"requests: {counts}); it holds no calls: read the results file"]


def test_a_batch_object_of_odd_types(tmp_path: Path) -> None:
    """An id of null is left out, a status that is an object and counts that are a list are written as JSON; the
    counts' values as JSON too (true, null)."""
    odd = _write(tmp_path / "odd.json", [{"id": None, "type": "message_batch", "processing_status": {"s": 1},
                                          "request_counts": ["processing", 19]}])
    assert _messages(odd) == ['message batch object ({"s":1}; request_counts ["processing",19]); it holds no '
                              "calls: read the results file"]
    values = _write(tmp_path / "values.json", [{"id": "msgbatch_x", "type": "message_batch",
                                                "request_counts": {"processing": 2, "succeeded": True,
                                                                   "errored": None}}])
    assert _messages(values) == ["message batch object msgbatch_x (requests: 2 processing, true succeeded, null "
                                 "errored); it holds no calls: read the results file"]


def _ok(cid: str) -> dict[str, object]:
    """A successful OpenAI batch result line (so that the file has a call and the run is read)."""
    return {"id": f"batch_req_{cid}", "custom_id": cid, "error": None,
            "response": {"status_code": 200, "request_id": "r", "body": {
                "id": f"chatcmpl-{cid}", "object": "chat.completion", "created": 1748854813, "model": "gpt-4o-mini",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 8, "completion_tokens": 1, "total_tokens": 9}}}}


def test_openai_failures_of_odd_types(tmp_path: Path) -> None:
    out = _write(tmp_path / "batch_output.jsonl", [
        {"id": "batch_req_1", "custom_id": {"id": "x"}, "error": None,
         "response": {"status_code": 500, "body": {"error": {"type": {"k": 1}, "message": None}}}},
        {"id": "batch_req_2", "custom_id": True, "response": None, "error": {"code": ["a"], "message": {"m": True}}},
        {"id": "batch_req_3", "custom_id": None, "response": {"status_code": {"x": 1}, "body": None}, "error": None},
        {"id": "batch_req_4", "custom_id": "s-1", "response": None, "error": "rate limited"},
        {"id": "batch_req_5", "custom_id": "s-2", "error": None,
         "response": {"status_code": 400, "body": {"error": {"code": "bad", "message": ""}}}},
        _ok("ok-1"),
    ])
    assert _messages(out) == [
        'batch request with custom_id {"id":"x"} failed (HTTP 500; {"k":1}); not counted',
        'batch request with custom_id true failed (["a"]: {"m":true}); not counted',
        # (a status that is no integer is also an issue of its own: the failure still says it as written)
        "response.status_code is object, not an integer: status unknown",
        'batch request with custom_id null failed (HTTP {"x":1}; no response body); not counted',
        # (an error given as a string was said as "no response")
        "batch request 's-1' failed (rate limited); not counted",
        # (an empty message left a dangling colon: "(HTTP 400; bad:)")
        "batch request 's-2' failed (HTTP 400; bad); not counted",
    ]


def test_anthropic_failures_of_odd_types(tmp_path: Path) -> None:
    results = _write(tmp_path / "results.jsonl", [
        {"custom_id": {"a": [1, 2]}, "result": {"type": {"t": 1}, "error": {
            "type": "error", "error": {"type": ["x"], "message": {"deep": None}}}}},
        {"custom_id": None, "result": {"type": "errored", "error": {"type": "error", "error": {
            "type": True, "message": False}}}},
        {"custom_id": 7, "result": {"type": "succeeded", "message": None}},
        {"custom_id": "c-1", "result": {"type": "errored", "error": {"type": "error", "error": {"message": "m"}}}},
    ])
    assert _messages(results) == [
        'batch request with custom_id {"a":[1,2]} {"t":1}: ["x"] {"deep":null}; not counted',
        "batch request with custom_id null errored: true false; not counted",
        "batch request with custom_id 7 succeeded without a message; skipped",
        # (no type: one space, not "errored:  m")
        "batch request 'c-1' errored: m; not counted",
    ]


def test_joined_ids_that_are_no_strings(tmp_path: Path) -> None:
    """An input and an output whose ids are no strings: each line's ``no_custom_id`` note names its id as JSON
    text (``null``, ``false``, never Python's ``None``); such ids join nothing, so there is no duplicate, unmatched
    or missing note about them (``null`` was taken for the string ``'null'``), and a call keeps its id's text in
    its details (its custom_id is none)."""
    inp = _write(tmp_path / "batch_input.jsonl", [
        {"custom_id": None, "method": "POST", "url": "/v1/chat/completions",
         "body": {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}},
        {"custom_id": None, "method": "POST", "url": "/v1/chat/completions",
         "body": {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}},
        {"custom_id": {"k": 1}, "method": "POST", "url": "/v1/chat/completions",
         "body": {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}},
    ])
    result = _ok("x")
    result["custom_id"] = False
    out = _write(tmp_path / "batch_output.jsonl", [result])
    messages = _messages(inp, out)
    joined_to_none = "no result can be joined to it (a custom_id is a string)"
    assert sorted(messages) == sorted([
        "batch result with custom_id false: it cannot be joined to its request (a custom_id is a string); counted "
        "with its usage only",
        f"batch request with custom_id null: {joined_to_none}",
        f"batch request with custom_id null: {joined_to_none}",
        f'batch request with custom_id {{"k":1}}: {joined_to_none}',
    ])
    assert not [m for m in messages if REPR.search(m)], messages

    from ctxwatch.cli.load import load_paths
    from ctxwatch.config import Settings

    run = load_paths((str(inp), str(out)), None, Settings())
    assert [(c.provenance.custom_id, c.provenance.details.get("custom_id")) for c in run.calls] == [(None, "false")]


@pytest.mark.parametrize(("sample", "results"), [("anthropic-batch", "results.jsonl"),
                                                 ("openai-batch", "batch_output.jsonl")])
def test_the_project_samples_say_no_repr(sample: str, results: str) -> None:
    """One note per result that did not succeed, naming its id as JSON text; none for the others.  (The
    expected ids by a plain reader of the results file: Anthropic's ``result.type`` not ``succeeded``,
    OpenAI's ``error`` set or a status other than 200; the OpenAI sample has none, so no note at all.)"""
    root = Path(__file__).resolve().parent.parent / "sample_logs" / sample
    failed = []
    for raw in (root / results).read_text().splitlines():
        d = json.loads(raw)
        if "result" in d:
            ok = d["result"]["type"] == "succeeded"
        else:
            ok = d.get("error") is None and (d.get("response") or {}).get("status_code") == 200
        if not ok:
            failed.append(d["custom_id"])
    messages = _messages(root)
    assert sorted(re.match(r"batch request '([^']*)' ", m).group(1) for m in messages) == sorted(failed), messages
    assert not [m for m in messages if REPR.search(m)], messages


def _read(path: Path, fmt: str) -> list[str]:
    from ctxwatch.cli.load import load_paths
    from ctxwatch.config import Settings

    return [i.message for i in load_paths((str(path),), fmt, Settings()).issues]


def test_cline_says_a_failure_without_repr(tmp_path: Path) -> None:
    """An ``api_req_started`` without token counts: its ``ts`` null and a cancel reason that is an object are
    written as JSON (``ts None``, ``{'r': 1}`` before); a string reason and a number ``ts`` as they are."""
    def started(ts: object, reason: object) -> dict[str, object]:
        return {"ts": ts, "type": "say", "say": "api_req_started",
                "text": json.dumps({"request": "hi", "cancelReason": reason})}

    path = tmp_path / "ui_messages.json"
    path.write_text(json.dumps([started(None, {"r": 1}), started(1700000000000, "user_cancelled")]))
    assert _read(path, "cline") == ['entry 0 (ts null): {"r":1}', "entry 1 (ts 1700000000000): user_cancelled"]


def test_claude_trace_says_a_url_without_repr(tmp_path: Path) -> None:
    """A captured request that is no Messages API call, its url an object: written as JSON (``{'u': 1}``
    before); a string url as it is."""
    path = _write(tmp_path / "trace.jsonl", [
        {"request": {"url": {"u": 1}, "body": {"model": "x"}}, "response": {}},
        {"request": {"url": "https://api.anthropic.com/v1/models", "body": {"model": "x"}}, "response": {}},
    ])
    assert _read(path, "claude-trace") == ['not a Messages API request ({"u":1}); skipped',
                                           "not a Messages API request (https://api.anthropic.com/v1/models); "
                                           "skipped"]
