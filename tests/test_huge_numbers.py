"""An integer too big for a double (10**309 and more) in a log, a config file or an option: unknown with an issue
(or a usage error), never a crash.

JSON holds integers of any length.  Python reads them exactly, so one of 310 to 4,300 digits is an ``int`` that
``float()`` refuses (OverflowError: ``show_value`` crashed every command on it) and that orjson refuses to write
(TypeError: "Integer exceeds 64-bit range", also for 2**64 and for an integral 1e300 read as an int).  Expected
values are written by hand: a count of ``10**(d - 1)`` is shown as ``1e+<d - 1>``, the rest of each record is a
small count the test writes itself.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers import follow_lines

from ctxwatch.cli import main

COMMANDS = [["report"], ["report", "--json"], ["report", "--jsonl"], ["check"], ["check", "--json"],
            ["plan"], ["plan", "--json"], ["schema"], ["schema", "--json"]]

#: How the implausible_value issue names each field (ctxwatch.engine.sanitize._USAGE_NAMES and its wording).
NAMES = {"prompt_tokens": "prompt tokens", "completion_tokens": "output tokens", "max_tokens": "max output tokens",
         "window": "context window"}


def record(field: str, value_text: str) -> str:
    """One canonical record (gpt-4o, prompt 8, completion 1) whose ``field`` is the JSON literal ``value_text``."""
    usage = {"prompt_tokens": "8", "completion_tokens": "1"}
    request_extra = ""
    top_extra = ""
    if field in usage:
        usage[field] = value_text
    elif field == "max_tokens":
        request_extra = f',"max_tokens":{value_text}'
    else:
        top_extra = f',"{field}":{value_text}'
    return ('{"request":{"model":"gpt-4o"' + request_extra + ',"messages":[{"role":"user","content":"hi"}]}'
            + top_extra + ',"response":{"usage":{"prompt_tokens":' + usage["prompt_tokens"]
            + ',"completion_tokens":' + usage["completion_tokens"] + "}}}\n")


def no_crash(res: Any, cmd: list[str]) -> None:
    assert not isinstance(res.exception, Exception), (cmd, res.output, res.exception)
    assert res.exit_code == 0, (cmd, res.output)


@pytest.mark.parametrize("digits", [310, 400, 4300])
@pytest.mark.parametrize("field", ["prompt_tokens", "completion_tokens", "max_tokens", "window"])
def test_a_huge_integer_in_a_count_is_an_issue_in_every_command(tmp_path: Path, field: str, digits: int) -> None:
    """``"prompt_tokens": 1000...0`` (309 to 4,300 digits) crashed report, check, plan and schema with
    OverflowError; it is an implausible_value issue on its line, and the field is unknown."""
    log = tmp_path / "huge.jsonl"
    log.write_text(record(field, "1" + "0" * (digits - 1)))
    runner = CliRunner()
    for cmd in COMMANDS:
        no_crash(runner.invoke(main, [*cmd, str(log)]), cmd)
    res = runner.invoke(main, ["report", "--json", str(log)])
    doc = json.loads(res.output)
    (issue,) = doc["issues"]
    assert (issue["kind"], issue["line"]) == ("implausible_value", 1)
    assert issue["message"].startswith(f"{NAMES[field]} 1e+{digits - 1} (beyond 2**53")
    (call,) = doc["calls"]
    if field == "prompt_tokens":
        assert call["prompt_tokens_reported"] is None
    elif field == "completion_tokens":
        assert call["completion_tokens_reported"] is None
    elif field == "max_tokens":
        assert (call["reserve_tokens"], call["reserve_source"]) == (19_200, "default")  # (0.15 * 128,000)
    else:
        assert (call["window"], call["window_source"]) == (128_000, "catalog")
    lines = [json.loads(x) for x in runner.invoke(main, ["report", "--jsonl", str(log)]).output.splitlines()]
    assert [x.get("event") for x in lines] == [None, "issue"]


def test_a_negative_huge_integer_is_an_issue(tmp_path: Path) -> None:
    log = tmp_path / "neg.jsonl"
    log.write_text(record("prompt_tokens", "-1" + "0" * 399))
    doc = json.loads(CliRunner().invoke(main, ["report", "--json", str(log)]).output)
    (issue,) = doc["issues"]
    assert issue["message"].startswith("prompt tokens -1e+399 (negative)")


def test_follow_reports_a_huge_integer_and_goes_on(tmp_path: Path) -> None:
    """``report --follow --jsonl`` died on the first huge count; it prints the issue and the calls after it."""
    log = tmp_path / "live.jsonl"
    log.write_text(record("prompt_tokens", "1" + "0" * 400) + record("prompt_tokens", "12"))
    lines, _ = follow_lines(log, lambda got: sum(1 for x in got if "event" not in x) >= 2)
    issues = [x for x in lines if x.get("event") == "issue"]
    assert [(i["kind"], i["line"]) for i in issues] == [("implausible_value", 1)]
    assert [(x["line"], x["prompt_tokens_reported"]) for x in lines if "event" not in x] == [(1, None), (2, 12)]


@pytest.mark.parametrize("value", ["1" + "0" * 400, "-1" + "0" * 400, "18446744073709551616"])
def test_a_huge_integer_timestamp_is_unknown_not_a_lost_record(tmp_path: Path, value: str) -> None:
    """``"timestamp": 10**400`` (or a Cline ``ts`` string of 400 digits) raised OverflowError in the reader, so
    the record was lost as a reader_error; the call is kept without a time, and the line says why (it said
    nothing: a time that is no time is an invalid_field issue)."""
    log = tmp_path / "ts.jsonl"
    log.write_text(record("timestamp", value))
    doc = json.loads(CliRunner().invoke(main, ["report", "--json", str(log)]).output)
    (call,) = doc["calls"]
    assert (call["timestamp"], call["prompt_tokens_reported"]) == (None, 8)
    assert [(i["kind"], i["line"]) for i in doc["issues"]] == [("invalid_field", 1)]
    cline = [{"ts": "1" + "0" * 400, "type": "say", "say": "task", "text": "hi"},
             {"ts": "1" + "0" * 400, "type": "say", "say": "api_req_started",
              "text": json.dumps({"tokensIn": 10, "tokensOut": 2, "cacheWrites": 0, "cacheReads": 0}),
              "modelInfo": {"providerId": "anthropic", "modelId": "claude-sonnet-4-20250514"}}]
    path = tmp_path / "ui_messages.json"
    path.write_text(json.dumps(cline))
    doc = json.loads(CliRunner().invoke(main, ["report", "--json", "--format", "cline", str(path)]).output)
    assert [(i["kind"], "timestamp" in i["message"]) for i in doc["issues"]] == [("invalid_field", True)]
    assert [(c["timestamp"], c["prompt_tokens_reported"]) for c in doc["calls"]] == [(None, 10)]


@pytest.mark.parametrize("value", ["1" + "0" * 400, "18446744073709551616", "1e300", '"' + "9" * 400 + '"'])
def test_a_huge_claude_code_compaction_size_is_unknown(tmp_path: Path, shared_logs: Path, value: str) -> None:
    """``compactMetadata.preTokens`` of 2**64 (or 1e300, read as an int of 301 digits) reached the JSON outputs,
    which orjson cannot write: report --json, --jsonl and check --json crashed.  It is unknown, as a negative one
    already was."""
    text = (shared_logs / "claude-code" / "spotter_4d5611e5_lines700-800_compaction.jsonl").read_text()
    assert text.count('"preTokens":170251') == 1
    log = tmp_path / "cc.jsonl"
    log.write_text(text.replace('"preTokens":170251', f'"preTokens":{value}'))
    runner = CliRunner()
    for cmd in (["report", "--json"], ["report", "--jsonl"], ["check", "--json"]):
        no_crash(runner.invoke(main, [*cmd, str(log)]), cmd)
    doc = json.loads(runner.invoke(main, ["report", "--json", str(log)]).output)
    (marker,) = [c["compaction"] for c in doc["calls"] if c["compaction"]]
    assert (marker["kind"], marker["pre_tokens"], marker["line"]) == ("compact_boundary", None, 55)


@pytest.mark.parametrize("value", ["18446744073709551616", "1e300"])
def test_huge_swe_agent_run_totals_are_unknown(tmp_path: Path, value: str) -> None:
    """``model_stats.tokens_sent`` of 2**64 or 1e300 crashed ``report --json`` (an int orjson cannot write)."""
    src = Path(__file__).parent.parent / "sample_logs" / "documents" / "swe_agent.traj"
    text = src.read_text()
    doc = json.loads(text)
    assert doc["info"]["model_stats"]["tokens_sent"] == 3804 and doc["info"]["model_stats"]["api_calls"] == 5
    path = tmp_path / "run.traj"
    path.write_text(text.replace('"tokens_sent": 3804', f'"tokens_sent": {value}')
                    .replace('"api_calls": 5', f'"api_calls": {value}'))
    res = CliRunner().invoke(main, ["report", "--json", str(path)])
    no_crash(res, ["report", "--json"])
    (session,) = json.loads(res.output)["sessions"]
    totals = session["run_totals"]
    assert (totals["input_tokens"], totals["api_calls"], totals["output_tokens"]) == (None, None, 127)


def test_a_config_file_of_invalid_utf8_is_said_to_be_no_utf8(tmp_path: Path) -> None:
    """A config file of bytes that are no UTF-8 (0xff first) was said to hold "a number too long to read" (the
    decoding error is a ValueError, which that branch caught first)."""
    out = refused_config(tmp_path, "binary.toml", b"\xff\xfe bad bytes\n")
    assert "binary.toml: not UTF-8 text (TOML files are UTF-8): invalid start byte at byte 0" in out
    assert "a number too long" not in out


def refused_config(tmp_path: Path, name: str, data: bytes) -> str:
    """``check --config`` of a config file ``name`` holding ``data``: refused as a usage error naming it (status
    2, no exception); its output, each run of spaces and newlines one space."""
    log = tmp_path / "plain.jsonl"
    log.write_text(record("prompt_tokens", "8"))
    cfg = tmp_path / name
    cfg.write_bytes(data)
    res = CliRunner().invoke(main, ["check", "--config", str(cfg), str(log)])
    assert res.exit_code == 2 and not isinstance(res.exception, Exception), res.output
    return " ".join(res.output.split())


@pytest.mark.parametrize("digits", [400, 5000])
def test_a_huge_window_in_the_config_file_is_a_usage_error(tmp_path: Path, digits: int) -> None:
    """``window = 1000...0`` in the config file crashed every command (OverflowError; ValueError from the TOML
    reader beyond 4,300 digits); it is refused like a window of 0, naming the file."""
    log = tmp_path / "plain.jsonl"
    log.write_text(record("prompt_tokens", "8"))
    cfg = tmp_path / "cfg.toml"
    cfg.write_text(f"window = 1{'0' * (digits - 1)}\n")
    for cmd in (["report"], ["check"], ["plan"], ["schema"]):
        res = CliRunner().invoke(main, [*cmd, "--config", str(cfg), str(log)])
        assert not isinstance(res.exception, Exception), (cmd, res.exception)
        assert res.exit_code == 2 and "cfg.toml" in res.output, (cmd, res.output)


@pytest.mark.parametrize("option", [["--window", "1" + "0" * 400], ["--reserve", "1e400"]])
def test_plan_refuses_a_window_or_reserve_beyond_2_53(tmp_path: Path, option: list[str]) -> None:
    """``plan --window 10**400`` and ``--reserve 1e400`` crashed (OverflowError); they are usage errors, as
    ``--window`` beyond 2**53 - 1 already was for report and check."""
    log = tmp_path / "plain.jsonl"
    log.write_text(record("prompt_tokens", "8"))
    res = CliRunner().invoke(main, ["plan", *option, str(log)])
    assert not isinstance(res.exception, Exception), res.exception
    assert res.exit_code == 2 and option[0] in res.output, res.output


@pytest.mark.parametrize("value", ["-1", str(2**53), "1" + "0" * 30])
@pytest.mark.parametrize("option", ["--keep-recent", "--summary-tokens"])
def test_plan_refuses_a_keep_recent_or_summary_size_out_of_range(tmp_path: Path, option: str, value: str) -> None:
    """``plan --summary-tokens 10**30`` was taken (and printed as a 31-digit prompt size); both options are
    bounded as ``--window`` is: 0 to 2**53 - 1, the limit of a count (a negative one was already refused)."""
    log = tmp_path / "plain.jsonl"
    log.write_text(record("prompt_tokens", "8"))
    res = CliRunner().invoke(main, ["plan", option, value, str(log)])
    assert not isinstance(res.exception, Exception), res.exception
    assert res.exit_code == 2 and option in res.output, res.output


@pytest.mark.parametrize("option", ["--keep-recent", "--summary-tokens"])
def test_plan_takes_keep_recent_and_summary_size_at_their_bounds(tmp_path: Path, option: str) -> None:
    """0 (keep_recent 0: the whole history may go; a summary assumed free) and 2**53 - 1 are in range."""
    log = tmp_path / "plain.jsonl"
    log.write_text(record("prompt_tokens", "8"))
    for value in ("0", str(2**53 - 1)):
        res = CliRunner().invoke(main, ["plan", option, value, "--json", str(log)])
        no_crash(res, ["plan", option, value])
        assert json.loads(res.output)["before_tokens"] == 8


@pytest.mark.parametrize("value", ["-1", str(2**53), "1" + "0" * 30])
@pytest.mark.parametrize("key", ["keep_recent", "summary_tokens"])
def test_a_keep_recent_or_summary_size_out_of_range_in_the_config_file_is_a_usage_error(
        tmp_path: Path, key: str, value: str) -> None:
    """``keep_recent = 10**30`` in the config file crashed ``report --json`` (its ``settings`` echo the value,
    an integer orjson cannot write); both keys are bounded as ``window`` is, and refused naming the file."""
    log = tmp_path / "plain.jsonl"
    log.write_text(record("prompt_tokens", "8"))
    cfg = tmp_path / "cfg.toml"
    cfg.write_text(f"{key} = {value}\n")
    for cmd in (["report"], ["report", "--json"], ["check", "--json"], ["plan"], ["plan", "--json"]):
        res = CliRunner().invoke(main, [*cmd, "--config", str(cfg), str(log)])
        assert not isinstance(res.exception, Exception), (cmd, res.exception)
        assert res.exit_code == 2 and "cfg.toml" in res.output and key in res.output, (cmd, res.output)


@pytest.mark.parametrize(("toml", "said"), [("true", "true"), ('"lots"', '"lots"'), ("[1, 2]", "an array"),
                                             ("1979-05-27", "a date"), ("{ a = 1 }", "a table"), ("2.5", "2.5")])
def test_a_config_value_of_another_type_is_named_as_toml_writes_it(tmp_path: Path, toml: str, said: str) -> None:
    """``keep_recent = true`` was said to be ``got True`` (Python's spelling); the error names the value as the
    TOML file has it, or its kind."""
    out = refused_config(tmp_path, "cfg.toml", f"keep_recent = {toml}\n".encode())
    assert f"cfg.toml: keep_recent must be a number (whole), got {said}" in out
