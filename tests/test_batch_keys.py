"""Batch results never collapse into one call: every result line that is a response of its own is a call of its
own, whatever its ``custom_id`` (null, missing, a string spelling another value's JSON, a number, reused) and
whether it has an ``id``; a result without a custom_id string says it cannot be joined to its request, and a
custom_id of another JSON type never joins to (or collides with) the string that spells the same.

The files are built from the project samples' own lines (``sample_logs/openai-batch``, ``anthropic-batch``) with
plain ``json``, each result given usage numbers of its own, so that the expected calls and usage are the lines
written here, never what ctxwatch's readers give.
"""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

from helpers import report_of

SAMPLES = Path(__file__).resolve().parent.parent / "sample_logs"
#: What stands for a custom_id left out of a line (``custom_id`` missing, not null).
MISSING = object()
#: The issue a result (or a request) without a custom_id string gets: it cannot be joined.
NO_ID = "no_custom_id"


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _write(path: Path, values: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(v) + "\n" for v in values), encoding="utf-8")
    return path


def _openai_result(cid: object, prompt: int, completion: int, *, with_id: bool = False) -> dict[str, Any]:
    """The sample's first successful OpenAI result with ``custom_id`` ``cid`` (``MISSING``: no key), no ``id``
    (unless ``with_id``) and no completion id, reporting ``prompt`` / ``completion`` tokens."""
    first = next(v for v in _lines(SAMPLES / "openai-batch" / "batch_output.jsonl")
                 if isinstance(v.get("response"), dict) and v["response"].get("status_code") == 200)
    v = copy.deepcopy(first)
    if not with_id:
        v.pop("id")
    v["response"]["body"].pop("id", None)
    v.pop("custom_id")
    if cid is not MISSING:
        v["custom_id"] = cid
    v["response"]["body"]["usage"].update(prompt_tokens=prompt, completion_tokens=completion,
                                          total_tokens=prompt + completion)
    return v


def _anthropic_result(cid: object, prompt: int, completion: int) -> dict[str, Any]:
    """The sample's first succeeded Anthropic result with ``custom_id`` ``cid`` (``MISSING``: no key) and no
    message id, reporting ``prompt`` input and ``completion`` output tokens (no cache)."""
    first = next(v for v in _lines(SAMPLES / "anthropic-batch" / "results.jsonl")
                 if v["result"]["type"] == "succeeded")
    v = copy.deepcopy(first)
    v["result"]["message"].pop("id")
    v.pop("custom_id")
    if cid is not MISSING:
        v["custom_id"] = cid
    v["result"]["message"]["usage"] = {"input_tokens": prompt, "cache_creation_input_tokens": 0,
                                       "cache_read_input_tokens": 0, "output_tokens": completion}
    return v


def _usage(doc: dict[str, Any]) -> list[tuple[int, int, int]]:
    """``(line, prompt, completion)`` of each call of a ``report --json`` document, by line."""
    return sorted((c["line"], c["prompt_tokens_reported"], c["completion_tokens_reported"]) for c in doc["calls"])


def _issues(doc: dict[str, Any], kind: str) -> list[tuple[str, int]]:
    """``(file name, line)`` of each issue of ``kind``, sorted."""
    return sorted((Path(i["file"]).name, i["line"]) for i in doc["issues"] if i["kind"] == kind)


ODD_IDS: list[object] = [MISSING, None, None, "null", None, 7, "7", True, "true", {"a": 1}, '{"a":1}', "", ""]


def test_openai_results_without_a_custom_id_string_or_an_id_are_each_a_call(tmp_path: Path) -> None:
    out = _write(tmp_path / "batch_output.jsonl",
                 [_openai_result(cid, 100 + n, 10 + n) for n, cid in enumerate(ODD_IDS)])
    doc = report_of(str(out))
    assert _usage(doc) == [(n + 1, 100 + n, 10 + n) for n in range(len(ODD_IDS))]
    # (each value that is no string, or no custom_id at all, cannot name a request; "" and "null" are strings)
    assert _issues(doc, NO_ID) == [(out.name, n + 1) for n, cid in enumerate(ODD_IDS) if not isinstance(cid, str)]
    missing = next(i for i in doc["issues"] if i["kind"] == NO_ID and i["line"] == 1)
    assert "without a custom_id" in missing["message"] and "cannot be joined" in missing["message"]
    null = next(i for i in doc["issues"] if i["kind"] == NO_ID and i["line"] == 2)
    assert "custom_id null" in null["message"] and "cannot be joined" in null["message"]


def test_anthropic_results_without_a_custom_id_string_or_a_message_id_are_each_a_call(tmp_path: Path) -> None:
    out = _write(tmp_path / "results.jsonl",
                 [_anthropic_result(cid, 200 + n, 20 + n) for n, cid in enumerate(ODD_IDS)])
    doc = report_of(str(out))
    assert _usage(doc) == [(n + 1, 200 + n, 20 + n) for n in range(len(ODD_IDS))]
    assert _issues(doc, NO_ID) == [(out.name, n + 1) for n, cid in enumerate(ODD_IDS) if not isinstance(cid, str)]


def test_a_custom_id_reused_without_an_id_and_identical_lines_stay_calls(tmp_path: Path) -> None:
    """Two results of one custom_id with different usage, and two identical lines: four responses, four calls
    (as two identical records of one file are two calls in every format)."""
    same = _openai_result("r1", 300, 30)
    out = _write(tmp_path / "batch_output.jsonl", [_openai_result("r1", 301, 31), same, same,
                                                   _openai_result("r1", 302, 32)])
    doc = report_of(str(out))
    assert _usage(doc) == [(1, 301, 31), (2, 300, 30), (3, 300, 30), (4, 302, 32)]
    assert _issues(doc, NO_ID) == []


def _openai_request(cid: object, text: str) -> dict[str, Any]:
    """The sample's first request with ``custom_id`` ``cid`` and user message ``text``."""
    v = copy.deepcopy(_lines(SAMPLES / "openai-batch" / "batch_input.jsonl")[0])
    v["custom_id"] = cid
    v["body"]["messages"][-1]["content"] = text
    return v


def test_the_join_keeps_every_result_and_joins_only_equal_strings(tmp_path: Path) -> None:
    """Input and output read together: every result is a call; a result joins only the request whose custom_id
    is the same string (null never joins "null", 7 never joins "7"); a request without a custom_id string is
    said to be joinable to none, and is neither a duplicate of the string that spells it nor missing a result."""
    inp = _write(tmp_path / "batch_input.jsonl", [
        _openai_request(None, "a request of custom_id null"),    # line 1: joinable to none
        _openai_request("null", "the request named 'null'"),     # line 2
        _openai_request("7", "the request named '7'"),           # line 3
        _openai_request(7, "a request of custom_id 7"),          # line 4: joinable to none
        _openai_request("t-1", "the request named 't-1'"),       # line 5: gets no result
    ])
    results = [(None, 100), (None, 101), ("null", 102), (7, 103), ("7", 104), (None, 105), ("null", 106)]
    out = _write(tmp_path / "batch_output.jsonl", [_openai_result(c, p, 1) for c, p in results])
    doc = report_of(str(inp), str(out))
    assert _usage(doc) == [(n + 1, p, 1) for n, (_, p) in enumerate(results)]
    joined = sorted(c["line"] for c in doc["calls"] if c["system_tokens"] is not None)
    assert joined == [n + 1 for n, (c, _) in enumerate(results) if isinstance(c, str)]
    assert _issues(doc, NO_ID) == [(inp.name, 1), (inp.name, 4),
                                   *((out.name, n + 1) for n, (c, _) in enumerate(results) if not isinstance(c, str))]
    assert _issues(doc, "duplicate_custom_id") == []
    assert _issues(doc, "unmatched_result") == []
    assert _issues(doc, "missing_result") == [(inp.name, 5)]
    missing = next(i for i in doc["issues"] if i["kind"] == "missing_result")
    assert missing["message"].startswith("1 of 3 requests have no result")


def test_outputs_of_two_batches_reusing_custom_ids_without_ids_are_not_one_call(tmp_path: Path) -> None:
    """Two batches' outputs in one folder, each with results ``request-0`` and ``request-1`` and no ids (a
    server or proxy that leaves them out): four calls, not two; a copy of one output file beside them is still
    counted once."""
    folder = tmp_path / "batches"
    folder.mkdir()
    _write(folder / "a_output.jsonl", [_openai_result("request-0", 400, 40), _openai_result("request-1", 401, 41)])
    _write(folder / "b_output.jsonl", [_openai_result("request-0", 500, 50), _openai_result("request-1", 501, 51)])
    doc = report_of(str(folder))
    got = sorted((Path(c["file"]).name, c["line"], c["prompt_tokens_reported"]) for c in doc["calls"])
    assert got == [("a_output.jsonl", 1, 400), ("a_output.jsonl", 2, 401),
                   ("b_output.jsonl", 1, 500), ("b_output.jsonl", 2, 501)]
    shutil.copy(folder / "a_output.jsonl", folder / "c_output.jsonl")
    doc = report_of(str(folder))
    assert sorted(c["prompt_tokens_reported"] for c in doc["calls"]) == [400, 401, 500, 501]


def test_a_request_file_read_alone_keeps_requests_without_a_custom_id_string(tmp_path: Path) -> None:
    """An input file read alone gives each request as a call (usage unknown): two requests of custom_id null and
    one named "null" are three calls, as two requests reusing one string are two."""
    inp = _write(tmp_path / "batch_input.jsonl", [
        _openai_request(None, "first"), _openai_request(None, "second"), _openai_request("null", "third"),
        _openai_request("r", "fourth"), _openai_request("r", "fifth")])
    doc = report_of(str(inp))
    assert sorted(c["line"] for c in doc["calls"]) == [1, 2, 3, 4, 5]
    assert _issues(doc, NO_ID) == [(inp.name, 1), (inp.name, 2)]


def test_a_requests_body_keeps_each_request_without_a_custom_id_string(tmp_path: Path) -> None:
    """A create-batch body ``{"requests": [...]}`` read alone: each request is a call, the one with no custom_id
    and the one with custom_id null too (one had been left out, two under null would have been one)."""
    first = _lines(SAMPLES / "anthropic-batch" / "requests.jsonl")[0]
    items = [copy.deepcopy(first) for _ in range(4)]
    items[1].pop("custom_id")
    items[2]["custom_id"] = None
    items[3]["custom_id"] = None
    for n, item in enumerate(items):
        item["params"]["messages"][0]["content"] = f"request {n}"
    body = _write(tmp_path / "create_batch.json", [{"requests": items}])
    doc = report_of(str(body))
    assert len(doc["calls"]) == 4
    assert [c["line"] for c in doc["calls"]] == [1, 1, 1, 1]
    assert _issues(doc, NO_ID) == [(body.name, 1)] * 3


def _named(v: dict[str, Any], rid: str) -> dict[str, Any]:
    """``v`` (an OpenAI or an Anthropic result) named ``rid`` by the provider: its ``batch_req`` / message id."""
    if "result" in v:
        v["result"]["message"]["id"] = rid
    else:
        v["id"] = rid
    return v


def test_different_results_under_one_provider_id_are_separate_calls(tmp_path: Path) -> None:
    """A provider id (``batch_req_...``, ``msg_...``) names one response: an exact copy of a line is that call
    once more (left out), while a different result reusing the id is a call of its own, said by a
    ``duplicate_response_id`` issue naming the line that used the id first; a copy of the file read beside it
    adds nothing."""
    for make, name in ((_openai_result, "batch_output.jsonl"), (_anthropic_result, "results.jsonl")):
        folder = tmp_path / name.split(".")[0]
        folder.mkdir()
        first = _named(make("r1", 301, 31), "id-1")
        out = _write(folder / name, [first, _named(make("r2", 302, 32), "id-1"), first,
                                     _named(make("r3", 303, 33), "id-1"), _named(make("r4", 304, 34), "id-2")])
        doc = report_of(str(out))
        assert _usage(doc) == [(1, 301, 31), (2, 302, 32), (4, 303, 33), (5, 304, 34)], name
        assert _issues(doc, "duplicate_response_id") == [(name, 2), (name, 4)], name
        reuse = next(i for i in doc["issues"] if i["kind"] == "duplicate_response_id")
        assert "already used at line 1" in reuse["message"] and "separate calls" in reuse["message"]
        shutil.copy(out, folder / f"copy_{name}")
        doc = report_of(str(folder))
        assert sorted(c["prompt_tokens_reported"] for c in doc["calls"]) == [301, 302, 303, 304], name
