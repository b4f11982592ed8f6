"""``plan --json`` names the call it plans: ``number`` (#N, what ``--call`` takes), ``index`` (``report --json``'s),
``line``, ``file``, ``session``, ``context`` and ``model``, first in the document.

Its keys were only the plan's (messages, sizes, verdict), so a document saved from ``plan FILE --call 61 --json``
did not say which call it described, while the text output names it (``#61 (line 742) model=...``).  The
expected values are read from the log with a simple reader here, and compared with ``report --json``'s call of
the same index.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ctxwatch.cli import main

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "sample_logs" / "openai_chat_demo.jsonl"
IDENTITY = ["number", "index", "line", "file", "session", "context", "model"]
#: The keys ``plan --json`` had before, in their order (docs/plan.md): they follow the call's, unchanged.
PLAN_KEYS = ["messages", "before_tokens", "after_tokens", "budget_tokens", "fits", "reason", "reinject",
             "system_tokens", "tools_tokens", "floor_tokens", "summary_tokens", "overhead_tokens"]


def run_json(*args: str) -> Any:
    r = CliRunner().invoke(main, list(args))
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise r.exception
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def claude_calls(path: Path) -> list[dict[str, Any]]:
    """A simple Claude Code reader: one call per API response, its ``message.id``, at the first line that
    carries it (a response is logged one content block a line), with that line's model and session; main
    context for a line that is no sidechain."""
    seen: set[str] = set()
    out = []
    for n, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not text.strip():
            continue
        r = json.loads(text)
        if r.get("type") != "assistant" or r["message"]["id"] in seen:
            continue
        seen.add(r["message"]["id"])
        out.append({"line": n, "model": r["message"]["model"], "session": r["sessionId"],
                    "context": "subagent" if r.get("isSidechain") else "main"})
    return out


def chat_calls(path: Path) -> list[dict[str, Any]]:
    """The canonical sample: one call a line, the model the request names, the line's session."""
    out = []
    for n, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        r = json.loads(text)
        out.append({"line": n, "model": r["request"]["model"], "session": r["session"], "context": "main"})
    return out


def check_identity(path: Path, doc: dict[str, Any], want: dict[str, Any], index: int,
                   report_call: dict[str, Any]) -> None:
    assert list(doc)[: len(IDENTITY)] == IDENTITY
    assert list(doc)[len(IDENTITY):] == PLAN_KEYS
    assert (doc["number"], doc["index"]) == (index + 1, index)
    assert (doc["line"], doc["model"], doc["session"], doc["context"]) == (
        want["line"], want["model"], want["session"], want["context"])
    assert doc["file"] == str(path)
    # the same names, the same values as report --json's call of that index
    assert {k: doc[k] for k in IDENTITY[1:]} == {k: report_call[k] for k in IDENTITY[1:]}


def test_plan_json_names_the_call_of_a_real_claude_code_log(shared_logs: Path) -> None:
    path = shared_logs / "claude-code" / "spotter_4d5611e5_full.jsonl"
    calls = claude_calls(path)
    assert len(calls) == 139  # (the text output's last call is #139 (line 1507))
    report = run_json("report", "--json", str(path))["calls"]
    assert [c["line"] for c in report] == [c["line"] for c in calls]
    doc = run_json("plan", "--json", "--call", "61", str(path))
    assert doc["line"] == 742
    check_identity(path, doc, calls[60], 60, report[60])
    assert run_json("plan", "--json", "--index", "60", str(path)) == doc
    # no --call: the newest session's last main-context call; this log has one session, all main, and its
    # last call is a reply of the session's own (#139)
    doc = run_json("plan", "--json", str(path))
    check_identity(path, doc, calls[-1], 138, report[138])
    assert doc["line"] == 1507


@pytest.mark.parametrize("call", [None, "1", "7", "-1"])
def test_plan_json_names_the_call_of_a_project_sample(call: str | None) -> None:
    calls = chat_calls(DEMO)
    report = run_json("report", "--json", str(DEMO))["calls"]
    doc = run_json("plan", "--json", *(["--call", call] if call else []), str(DEMO))
    # (no --call: the last call, the sample being one session's main context)
    index = len(calls) - 1 if call in (None, "-1") else int(call) - 1
    check_identity(DEMO, doc, calls[index], index, report[index])
