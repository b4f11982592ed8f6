"""Canonical records whose fields hold the wrong JSON type: each is a counted issue at its line, never silence
and never a crash, and the call is kept.

Every case is a two-line file built from the first two lines of ``sample_logs/openai_chat_demo.jsonl``: line 1
as it is, line 2 damaged in one field and given a response id of its own (so that the run's dedupe does not
merge it with a good line).  The expected values are read from the lines written, by hand or with plain ``json``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ctxwatch.cli import main

SAMPLE = Path(__file__).resolve().parents[1] / "sample_logs" / "openai_chat_demo.jsonl"


def two_lines(tmp_path: Path, damage: Callable[[dict[str, Any]], None]) -> tuple[Path, dict[str, Any]]:
    """The file (line 1 of the sample, then line 2 changed by ``damage``) and line 2 as written."""
    first, second = (json.loads(t) for t in SAMPLE.read_text().splitlines()[:2])
    second["response"]["id"] = "chatcmpl-wrong-type-2"
    damage(second)
    path = tmp_path / "wrong.jsonl"
    path.write_text(json.dumps(first) + "\n" + json.dumps(second) + "\n")
    return path, second


def report(path: Path) -> dict[str, Any]:
    res = CliRunner().invoke(main, ["report", "--no-cache", "--json", str(path)])
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


def issues_at(doc: dict[str, Any], kind: str = "invalid_field") -> list[tuple[int, str]]:
    return [(i["line"], i["message"]) for i in doc["issues"] if i["kind"] == kind]


def loaded_calls(path: Path) -> list[Any]:
    from ctxwatch.engine import load_run

    return load_run(str(path)).calls


def parsed_calls(path: Path) -> list[Any]:
    """The reader's :class:`~ctxwatch.model.ParsedCall` of each line (which keep the messages' parts)."""
    from ctxwatch.formats.canonical import CanonicalReader
    from ctxwatch.model import ParsedCall
    from ctxwatch.source import Record

    reader = CanonicalReader(str(path))
    out = []
    for n, text in enumerate(path.read_text().splitlines(), 1):
        out += [o for o in reader.feed(Record(json.loads(text), n, n, 0, len(text))) if isinstance(o, ParsedCall)]
    return out


# --- 1. response.choices that is not a list --------------------------------------------------------------

@pytest.mark.parametrize("choices", ["abc", 5, {"message": {"content": "hi"}}])
def test_choices_that_are_not_a_list_are_an_issue_and_the_response_unknown(tmp_path: Path, choices: object) -> None:
    path, line2 = two_lines(tmp_path, lambda d: d["response"].__setitem__("choices", choices))
    doc = report(path)
    assert len(doc["calls"]) == 2
    (issue,) = issues_at(doc)
    assert issue[0] == 2 and "response.choices" in issue[1] and "not a list" in issue[1]
    assert doc["calls"][1]["prompt_tokens_reported"] == line2["response"]["usage"]["prompt_tokens"]  # (kept: 1015)
    assert loaded_calls(path)[1].response is None  # (the text and the finish reason are unknown)


@pytest.mark.parametrize(("field", "value"), [("finish_reason", {"a": 1}), ("message", "hi")])
def test_a_first_choice_field_of_the_wrong_type_is_an_issue(tmp_path: Path, field: str, value: object) -> None:
    path, _ = two_lines(tmp_path, lambda d: d["response"]["choices"][0].__setitem__(field, value))
    doc = report(path)
    assert len(doc["calls"]) == 2
    (issue,) = issues_at(doc)
    assert issue[0] == 2 and field in issue[1]
    assert loaded_calls(path)[1].response is None


def test_response_tool_calls_that_are_not_a_list_are_an_issue_not_a_count_of_characters(tmp_path: Path) -> None:
    """``len("abc")`` was read as three tool calls; ``5`` raised and lost the call."""
    for value in ("abc", 5):
        path, _ = two_lines(tmp_path, lambda d, v=value: d["response"]["choices"][0]["message"].__setitem__(
            "tool_calls", v))
        doc = report(path)
        assert len(doc["calls"]) == 2, value
        (issue,) = issues_at(doc)
        assert issue[0] == 2 and "tool_calls" in issue[1]
        assert loaded_calls(path)[1].response is None


def test_a_responses_output_that_is_not_a_list_is_an_issue_not_a_lost_call(tmp_path: Path) -> None:
    """A Responses API body's ``output: 5`` raised (a TypeError, the call lost as a reader_error)."""
    rec = {"request": {"model": "gpt-4o", "input": [{"type": "message", "role": "user", "content": "hi"}]},
           "response": {"id": "resp_1", "object": "response", "output": 5,
                        "usage": {"input_tokens": 10, "output_tokens": 1}}}
    path = tmp_path / "resp.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    doc = report(path)
    assert [c["prompt_tokens_reported"] for c in doc["calls"]] == [10]
    (issue,) = issues_at(doc)
    assert issue[0] == 1 and "response.output" in issue[1]
    assert [(i["kind"]) for i in doc["issues"]] == ["invalid_field"]


# --- 2. a history message's tool calls ---------------------------------------------------------------------

def _assistant(d: dict[str, Any]) -> dict[str, Any]:
    return next(m for m in d["request"]["messages"] if m.get("tool_calls"))


@pytest.mark.parametrize("value", ["abc", 5, {"id": "x"}])
def test_history_tool_calls_that_are_not_a_list_are_an_issue(tmp_path: Path, value: object) -> None:
    """``tool_calls: 5`` raised (the call lost as a reader_error); ``"abc"`` or an object was skipped unsaid."""
    path, _ = two_lines(tmp_path, lambda d: _assistant(d).__setitem__("tool_calls", value))
    doc = report(path)
    assert len(doc["calls"]) == 2
    assert [i["kind"] for i in doc["issues"]] == ["invalid_field"]
    (issue,) = issues_at(doc)
    assert issue[0] == 2 and "tool_calls" in issue[1] and "not a list" in issue[1]
    assert doc["calls"][1]["history_tokens"] is not None  # (its JSON counted as text, as for a content)
    (msg,) = [m for m in parsed_calls(path)[1].messages if m.role == "assistant"]
    shown = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))  # ("abc", 5, {"id":"x"})
    assert any(p.kind == "other" and p.text == shown for p in msg.parts)


def test_a_tool_call_entry_that_is_not_an_object_is_an_issue(tmp_path: Path) -> None:
    path, line2 = two_lines(tmp_path, lambda d: _assistant(d).__setitem__("tool_calls",
                                                                            [7, *_assistant(d)["tool_calls"]]))
    doc = report(path)
    assert len(doc["calls"]) == 2
    (issue,) = issues_at(doc)
    assert issue[0] == 2 and "tool call" in issue[1] and "number" in issue[1]
    (msg,) = [m for m in parsed_calls(path)[1].messages if m.role == "assistant"]
    name = _assistant(line2)["tool_calls"][1]["function"]["name"]  # (the real call after it is still read)
    assert [p.name for p in msg.parts if p.kind == "tool_call"] == [name]


@pytest.mark.parametrize(("key", "value", "word"), [("arguments", {"path": "."}, "arguments"),
                                                    ("name", 5, "name")])
def test_tool_call_function_fields_of_the_wrong_type_are_an_issue(tmp_path: Path, key: str, value: object,
                                                                  word: str) -> None:
    path, _ = two_lines(tmp_path, lambda d: _assistant(d)["tool_calls"][0]["function"].__setitem__(key, value))
    doc = report(path)
    assert len(doc["calls"]) == 2
    (issue,) = issues_at(doc)
    assert issue[0] == 2 and f"function.{word}" in issue[1]
    assert doc["calls"][1]["history_tokens"] is not None


def test_a_tool_calls_function_that_is_not_an_object_is_an_issue(tmp_path: Path) -> None:
    path, _ = two_lines(tmp_path, lambda d: _assistant(d)["tool_calls"][0].__setitem__("function", "read"))
    doc = report(path)
    assert len(doc["calls"]) == 2
    (issue,) = issues_at(doc)
    assert issue[0] == 2 and "function" in issue[1] and "not an object" in issue[1]


def test_anthropic_tool_use_fields_of_the_wrong_type_are_an_issue(tmp_path: Path) -> None:
    """A ``tool_use`` block's ``input`` that is no object, or ``name`` that is no string, was read unsaid."""
    rec = {"request": {"model": "claude-sonnet-4-5", "max_tokens": 100, "system": "Be brief.", "messages": [
        {"role": "user", "content": "list"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": 5, "input": "ls"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a b"}]}]},
        "response": {"id": "msg_1", "type": "message", "content": [{"type": "text", "text": "ok"}],
                     "usage": {"input_tokens": 40, "output_tokens": 2}}}
    path = tmp_path / "ant.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    doc = report(path)
    assert [c["prompt_tokens_reported"] for c in doc["calls"]] == [40]
    got = issues_at(doc)
    assert [ln for ln, _ in got] == [1, 1]
    assert "tool_use block's input is a JSON string" in got[0][1]
    assert "tool_use block's name is a JSON number" in got[1][1]


@pytest.mark.parametrize("key", ["session", "context"])
def test_a_session_or_context_that_is_no_string_is_an_issue(tmp_path: Path, key: str) -> None:
    path, _ = two_lines(tmp_path, lambda d: d.__setitem__(key, 7))
    doc = report(path)
    assert len(doc["calls"]) == 2
    (issue,) = issues_at(doc)
    assert issue[0] == 2 and issue[1].startswith(f"{key} is a JSON number")
    if key == "session":
        assert [c["session"] for c in doc["calls"]] == ["demo-7", None]  # (line 1's, as written)


# --- 3. timestamps -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("value", ["99999-01-01T00:00:00Z", "yesterday", True, {"t": 1}, [2025],
                                   "9999-12-31T23:59:59-05:00", "0001-01-01T00:00:00+05:00", -1e12, 1e17,
                                   "nan", "inf", "1e400"])
def test_a_timestamp_that_is_no_time_is_an_issue_and_the_time_unknown(tmp_path: Path, value: object) -> None:
    """Each was read as no time in silence (or, with the response's ``created`` beside it, as that); a year out of
    1..9999 must not raise anywhere."""
    path, _ = two_lines(tmp_path, lambda d: d.__setitem__("timestamp", value))
    doc = report(path)
    assert len(doc["calls"]) == 2
    assert doc["calls"][0]["timestamp"] == "2025-06-02T09:00:05.590000Z"  # (line 1's, as written)
    assert doc["calls"][1]["timestamp"] is None
    (issue,) = issues_at(doc)
    assert issue[0] == 2 and "time is unknown" in issue[1]
    for command in (["report"], ["report", "--jsonl"], ["report", "--sessions"], ["check", "--json"], ["plan"]):
        res = CliRunner().invoke(main, [*command, "--no-cache", str(path)])
        assert res.exception is None or isinstance(res.exception, SystemExit), (command, res.output)
        assert res.exit_code in (0, 1), (command, res.output)  # (check exits 1 on a flag)


@pytest.mark.parametrize(("value", "expected"), [
    ("2025-06-02T09:00:13.243Z", "2025-06-02T09:00:13.243000Z"),
    (1748854813, "2025-06-02T09:00:13Z"),
    (1748854813243, "2025-06-02T09:00:13.243000Z"),  # (milliseconds)
    ("1748854813.5", "2025-06-02T09:00:13.500000Z"),
    ("0001-01-01T00:00:00Z", "0001-01-01T00:00:00Z"),
    ("9999-12-31T23:59:59Z", "9999-12-31T23:59:59Z"),
])
def test_a_usable_timestamp_is_read_as_before_without_an_issue(tmp_path: Path, value: object, expected: str) -> None:
    path, _ = two_lines(tmp_path, lambda d: d.__setitem__("timestamp", value))
    doc = report(path)
    assert [c["timestamp"] for c in doc["calls"]][1] == expected
    assert doc["issues"] == []


def test_a_bad_response_created_is_an_issue_when_the_record_has_no_time(tmp_path: Path) -> None:
    def damage(d: dict[str, Any]) -> None:
        del d["timestamp"]
        d["response"]["created"] = "soon"

    path, _ = two_lines(tmp_path, damage)
    doc = report(path)
    assert len(doc["calls"]) == 2 and doc["calls"][1]["timestamp"] is None
    (issue,) = issues_at(doc)
    assert issue[0] == 2 and "'soon'" in issue[1]


def test_parse_timestamp_keeps_its_results_for_valid_values_and_never_raises() -> None:
    from datetime import UTC, datetime

    from ctxwatch.formats.wire.timestamps import parse_timestamp

    assert parse_timestamp("2024-11-05T13:31:45-05:00") == datetime(2024, 11, 5, 18, 31, 45, tzinfo=UTC).timestamp()
    assert parse_timestamp("2026-02-10T21:11:56") == datetime(2026, 2, 10, 21, 11, 56, tzinfo=UTC).timestamp()
    assert parse_timestamp(1_700_000_000) == 1_700_000_000.0 and parse_timestamp(1.7e12) == 1.7e9
    for bad in (None, "", True, False, {}, [], "x", 10**309, float("nan"), float("inf"), -float("inf"), 1e300,
                "99999-01-01T00:00:00Z", "-0001-01-01T00:00:00Z"):
        assert parse_timestamp(bad) is None, bad


# --- 4. usage counts written as strings ----------------------------------------------------------------------

def test_a_usage_count_written_as_a_string_is_reported_with_its_value(tmp_path: Path) -> None:
    """``"prompt_tokens": "1015"`` was taken as 1015 without a word.  The count is still read (a string of digits
    is a count in every format, as ``usage_count`` reads it), and the line says the field was a string."""
    def damage(d: dict[str, Any]) -> None:
        u = d["response"]["usage"]
        u["prompt_tokens"] = str(u["prompt_tokens"])
        u["completion_tokens_details"]["reasoning_tokens"] = " 0 "

    path, line2 = two_lines(tmp_path, damage)
    doc = report(path)
    assert len(doc["calls"]) == 2
    assert doc["calls"][1]["prompt_tokens_reported"] == int(line2["response"]["usage"]["prompt_tokens"])  # 1015
    assert doc["calls"][1]["reasoning_tokens_reported"] == 0
    got = issues_at(doc)
    assert [ln for ln, _ in got] == [2, 2]
    assert "response.usage.prompt_tokens" in got[0][1] and "'1015'" in got[0][1]
    assert "response.usage.completion_tokens_details.reasoning_tokens" in got[1][1] and "' 0 '" in got[1][1]


@pytest.mark.parametrize(("key", "field"), [("max_tokens", "reserve_tokens"), ("window", "window")])
def test_a_limit_written_as_a_string_is_reported_with_its_value(tmp_path: Path, key: str, field: str) -> None:
    def damage(d: dict[str, Any]) -> None:
        (d["request"] if key == "max_tokens" else d)[key] = str((d["request"] if key == "max_tokens" else d)[key])

    path, line2 = two_lines(tmp_path, damage)
    doc = report(path)
    assert len(doc["calls"]) == 2
    raw = (line2["request"] if key == "max_tokens" else line2)[key]
    assert doc["calls"][1][field] == int(raw)  # (160 and 2560, as written)
    (issue,) = issues_at(doc)
    assert issue[0] == 2 and key in issue[1] and repr(raw) in issue[1]


def test_a_usage_count_that_is_no_count_is_still_unknown(tmp_path: Path) -> None:
    """``"1e3"`` is no count (unknown, an invalid_field issue: a string where a number goes), not 1,000."""
    path, _ = two_lines(tmp_path, lambda d: d["response"]["usage"].__setitem__("prompt_tokens", "1e3"))
    doc = report(path)
    assert len(doc["calls"]) == 2 and doc["calls"][1]["prompt_tokens_reported"] is None
    assert [(i["kind"], i["line"]) for i in doc["issues"]] == [("invalid_field", 2)]
