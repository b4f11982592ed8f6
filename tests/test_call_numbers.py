"""Every JSON surface names a call by its ``number`` (#N, from 1: what the text prints and ``plan --call``
takes) beside the 0-based ``index``/``call``: a flag's number, given to ``plan --call``, plans the flagged call."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from ctxwatch.cli import main

SAMPLES = Path(__file__).resolve().parent.parent / "sample_logs"


def _report(path: Path) -> dict:
    res = CliRunner().invoke(main, ["report", str(path), "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


def test_a_flags_number_given_to_plan_call_plans_the_flagged_call() -> None:
    log = SAMPLES / "openai_chat_demo.jsonl"
    doc = _report(log)
    flag = doc["flags"][0]
    flagged = next(c for c in doc["calls"] if c["index"] == flag["call"])
    res = CliRunner().invoke(main, ["plan", str(log), "--json", "--call", str(flag["number"])])
    assert res.exit_code == 0, res.output
    plan = json.loads(res.output)
    assert (plan["line"], plan["index"], plan["number"]) == (flagged["line"], flagged["index"], flagged["number"])
    assert flag["number"] == flag["call"] + 1 == 4  # (#4 crossed the trigger: "at #4" in its reason)


@pytest.mark.parametrize("log", sorted(p.name for p in SAMPLES.glob("*.jsonl")))
def test_each_flags_reason_names_its_json_number(log: str) -> None:
    doc = _report(SAMPLES / log)
    for call in doc["calls"]:
        assert call["number"] == call["index"] + 1
    for flag in doc["flags"]:
        # (every reason names its own call first: "at #4", "from #14", "next call after #12")
        first = re.search(r"#(\d+)", flag["reason"])
        assert first is not None and int(first.group(1)) == flag["number"] == flag["call"] + 1, flag["reason"]
        named = {int(n) for n in re.findall(r"#(\d+)", flag["reason"])}
        for key, value in flag["evidence"].items():
            if f"{key}_number" in flag["evidence"]:
                assert flag["evidence"][f"{key}_number"] == (None if value is None else value + 1)
                if value is not None and key in ("first_call", "worst_call", "present_from", "present_to"):
                    assert value + 1 in named, (key, flag["reason"])


def test_plan_numbers_the_history_from_1_without_a_system_prompt() -> None:
    """The demo's #20 sends no system prompt: its history is still numbered from 1, as the detail numbers it."""
    log = SAMPLES / "openai_chat_demo.jsonl"
    res = CliRunner().invoke(main, ["plan", str(log), "--json", "--call", "20"])
    assert res.exit_code == 0, res.output
    msgs = json.loads(res.output)["messages"]
    assert [(m["index"], m["number"]) for m in msgs] == [(0, 1), (1, 2)]
    text = CliRunner().invoke(main, ["plan", str(log), "--call", "20"]).output
    assert re.search(r"^\s+1 assistant → read_file", text, re.M), text
