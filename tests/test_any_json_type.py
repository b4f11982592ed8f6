"""Any JSON type in any field of any format: no command and no dashboard raises, and a field of the wrong type
is a counted ``invalid_field`` issue with file and line.

The property replaces the value at an arbitrary path of a real sample record (``tests/mutation.py``) by an
arbitrary JSON value and runs ``report``, ``check``, ``plan`` and ``schema`` in-process.  ``make test`` runs it
with a few dozen examples; ``CTXWATCH_FUZZ_EXAMPLES=20000`` runs a long one.
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from mutation import json_paths, replaced, sample_files, write_window
from test_ui_common import loaded, open_preview

from ctxwatch.cli import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = int(os.environ.get("CTXWATCH_FUZZ_EXAMPLES", "100"))
COMMANDS = (["report", "--json"], ["check", "--json"], ["plan", "--json"], ["schema", "--json"], ["report"])

#: Any JSON value Python's json writes and ctxwatch's decoders read back: NaN and the infinities included
#: (orjson refuses them; the fallback decoder takes them), integers beyond 64 bits, nested arrays and objects.
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6)


def _records(src: Path, lines: list[str]) -> list[int]:
    """Indexes of the lines of ``src`` that are one JSON object (a sample may hold damaged lines on purpose)."""
    if src not in _RECORDS:
        ok = []
        for i, ln in enumerate(lines):
            try:
                if isinstance(json.loads(ln), dict):
                    ok.append(i)
            except ValueError:
                pass
        _RECORDS[src] = ok
    return _RECORDS[src]


_RECORDS: dict[Path, list[int]] = {}
_KEYED = ("id", "name", "type", "role", "content", "text", "usage", "model")


#: How a reader's exception reads once the run caught it: a ``reader_error`` issue, ``TypeError: ...``, which
#: ``report`` and ``check`` quote when the file gave no call ("no call could be read (...; path: TypeError: ...)").
_READER_ERROR = re.compile(r"\b[A-Z]\w*(?:Error|Exception): ")


def run_all(path: Path) -> list[str]:
    """The commands that raised on ``path`` (anything but click's exits), with the exception, and those whose
    reader raised (a ``reader_error`` issue, caught by the run: every call of the record or document is lost)."""
    runner = CliRunner()
    crashed = []
    for args in COMMANDS:
        res = runner.invoke(main, [*args, "--no-cache", str(path)])
        if res.exception is not None and not isinstance(res.exception, SystemExit):
            crashed.append(f"{' '.join(args)}: {type(res.exception).__name__}: {res.exception}")
        elif args == ["report", "--json"]:
            try:
                issues = json.loads(res.stdout)["issues"] if res.exit_code == 0 else []
            except ValueError:
                issues = []
            errors = [i["message"] for i in issues if i["kind"] == "reader_error"]
            if res.exit_code != 0 and _READER_ERROR.search(res.output):
                errors.append(res.output.strip()[-300:])
            crashed.extend(f"report --json: reader error: {e}" for e in errors)
    return crashed


@settings(max_examples=EXAMPLES, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data(), new=json_values)
def test_any_value_at_any_path_of_a_real_record_never_crashes(data: st.DataObject, new: Any) -> None:
    files = sample_files()
    src = data.draw(st.sampled_from(files), label="sample")
    with tempfile.TemporaryDirectory() as tmp:
        text = src.read_text(encoding="utf-8", errors="replace")
        if src.suffix == ".jsonl":
            lines = text.splitlines()
            records = _records(src, lines)
            assume(records)
            i = data.draw(st.sampled_from(records), label="line")
            value = json.loads(lines[i])
        else:
            lines, i, value = [], -1, json.loads(text)
        paths = json_paths(value)
        # (half the time a path to an id, name, type or role: the fields whose type the consumers rely on most)
        keyed = [p for p in paths if p and isinstance(p[-1], str) and p[-1].lower().endswith(_KEYED)]
        if keyed and data.draw(st.booleans(), label="keyed"):
            paths = keyed
        where = data.draw(st.sampled_from(paths), label="path")
        path = write_window(src, lines, i, replaced(value, where, new), Path(tmp))
        assert run_all(path) == [], f"{src.name} line {i + 1} path {list(where)} = {new!r}"


def _with_tool_result_id(src: Path, tmp: Path, new: Any) -> tuple[Path, int]:
    """``src`` (an Anthropic Messages log) with the first tool result's ``tool_use_id`` replaced by ``new``;
    the copy and the 1-based line changed."""
    lines = src.read_text(encoding="utf-8").splitlines()
    for n, ln in enumerate(lines):
        rec = json.loads(ln)
        for m in rec.get("request", {}).get("messages", []):
            for b in m["content"] if isinstance(m.get("content"), list) else []:
                if b.get("type") == "tool_result":
                    b["tool_use_id"] = new
                    lines[n] = json.dumps(rec)
                    out = tmp / "bad_ids.jsonl"
                    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
                    return out, n + 1
    raise AssertionError("no tool result in the sample")


@pytest.mark.parametrize("new", [7, [], {"id": "x"}, True, 1e308, math.nan])
def test_a_tool_result_id_of_the_wrong_type_is_an_issue_of_its_line(tmp_path: Path, new: Any) -> None:
    """Anthropic ``tool_result.tool_use_id: 7`` crashed every command (the content key took it for text);
    now it is an ``invalid_field`` issue naming the line, and the run keeps every call."""
    src = ROOT / "sample_logs" / "anthropic_messages.jsonl"
    path, line = _with_tool_result_id(src, tmp_path, new)
    assert run_all(path) == []
    res = CliRunner().invoke(main, ["report", "--json", "--no-cache", str(path)])
    doc = json.loads(res.stdout)
    expected_calls = sum(1 for ln in src.read_text(encoding="utf-8").splitlines() if ln.strip())
    assert len(doc["calls"]) == expected_calls
    bad = [i for i in doc["issues"] if i["kind"] == "invalid_field"]
    assert [(i["line"], "tool call id" in i["message"]) for i in bad] == [(line, True)]


def test_message_content_that_is_a_number_or_nan_is_an_issue(tmp_path: Path) -> None:
    """An OpenAI chat message whose ``content`` is a number, or NaN, is an issue of its line, not a silence."""
    rec = {"request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]},
           "response": {"id": "r1", "model": "gpt-4o", "usage": {"prompt_tokens": 8, "completion_tokens": 1},
                        "choices": [{"message": {"role": "assistant", "content": "ok"}}]}}
    lines = [json.dumps(rec)]
    for k, content in enumerate((7, math.nan), start=2):
        r = json.loads(lines[0])
        r["request"]["messages"][0]["content"] = content
        r["response"]["id"] = f"r{k}"
        lines.append(json.dumps(r))
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    res = CliRunner().invoke(main, ["report", "--json", "--no-cache", str(path)])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert len(doc["calls"]) == 3
    assert sorted(i["line"] for i in doc["issues"] if i["kind"] == "invalid_field") == [2, 3]


async def test_the_dashboard_reads_and_previews_a_log_with_a_numeric_tool_result_id(tmp_path: Path) -> None:
    """The dashboard stopped reading such a log, and died when ``e`` was pressed: it now shows every call and
    the issue, and opens the eviction preview."""
    from ctxwatch.ui.app import CtxwatchApp

    src = ROOT / "sample_logs" / "anthropic_messages.jsonl"
    path, _ = _with_tool_result_id(src, tmp_path, 7)
    n = sum(1 for ln in src.read_text(encoding="utf-8").splitlines() if ln.strip())
    app = CtxwatchApp(str(path))
    async with app.run_test(size=(160, 40)) as pilot:
        await loaded(pilot, n)
        assert any(i.kind == "invalid_field" for i in app.issues)
        screen = await open_preview(pilot)
        assert screen.plan is not None


def _first_usage_path(src: Path) -> tuple[list[str], int, tuple[Any, ...]]:
    """The lines of ``src``, the index of the first record with a usage block, and the path to that block."""
    lines = src.read_text(encoding="utf-8").splitlines()
    for n, ln in enumerate(lines):
        rec = json.loads(ln)
        for p in json_paths(rec):
            if p and p[-1] in ("usage", "usageMetadata") and isinstance(_at(rec, p), dict):
                return lines, n, p
    raise AssertionError(f"no usage block in {src}")


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for k in path:
        value = value[k]
    return value


@pytest.mark.parametrize("name", ["openai_chat_demo.jsonl", "anthropic_messages.jsonl", "gemini_usage.jsonl",
                                  "claude_code_session.jsonl", "openai_responses.jsonl", "claude_trace.jsonl"])
@pytest.mark.parametrize("block", [[], "1024", 7])
def test_a_usage_block_that_is_no_object_is_an_issue(tmp_path: Path, name: str, block: Any) -> None:
    """A usage block that is a list, a string or a number was read as "no usage", silently: now an
    ``invalid_field`` issue of its line, and no call is lost."""
    src = ROOT / "sample_logs" / name
    lines, n, where = _first_usage_path(src)
    want_calls = len(json.loads(CliRunner().invoke(main, ["report", "--json", "--no-cache", str(src)]).stdout)["calls"])
    lines[n] = json.dumps(replaced(json.loads(lines[n]), where, block))
    out = tmp_path / name
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    doc = json.loads(CliRunner().invoke(main, ["report", "--json", "--no-cache", str(out)]).stdout)
    assert len(doc["calls"]) == want_calls
    assert [(i["line"], "usage block" in i["message"]) for i in doc["issues"] if i["kind"] == "invalid_field"] \
        == [(n + 1, True)]


def _first_path(value: Any, key: str, inside: str) -> tuple[Any, ...] | None:
    """The first path of ``value`` ending in ``key`` with each of the ``inside`` keys (separated by ``/``) among
    the keys before it (a string value)."""
    for p in json_paths(value):
        if p and p[-1] == key and all(k in p[:-1] for k in inside.split("/")) and isinstance(_at(value, p), str):
            return p
    return None


@pytest.mark.parametrize(("name", "key", "inside"), [
    ("openai_responses.jsonl", "call_id", "input"),  # Responses function_call_output.call_id
    ("codex_rollout.jsonl", "call_id", "payload"),
    ("gemini_cli_session.jsonl", "id", "functionResponse"),
    ("documents/gemini_cli_session.json", "id", "functionResponse"),
    ("openai_chat_demo.jsonl", "id", "request/tool_calls"),
    ("claude_trace.jsonl", "tool_use_id", "request"),
    ("openai_chat_demo.jsonl", "tool_call_id", "request/messages"),
])
@pytest.mark.parametrize("new", [7, {"id": 1}, True, ["a"]])
def test_a_tool_call_id_of_the_wrong_type_in_each_format_is_an_issue(tmp_path: Path, name: str, key: str,
                                                                     inside: str, new: Any) -> None:
    """The fields the issue names (a Responses ``call_id``, a Gemini CLI ``functionResponse.id``, an OpenAI
    ``tool_calls[].id``, an Anthropic ``tool_use_id``) in a request the run reads, as a number, an object, a
    boolean or a list: every command runs, and the run has an ``invalid_field`` issue for it.  (A field the
    run does not read, such as a Claude Code user line's, is read only when its call is opened, and mended
    then.)"""
    src = ROOT / "sample_logs" / name
    text = src.read_text(encoding="utf-8")
    out = tmp_path / src.name
    if src.suffix == ".jsonl":
        lines = text.splitlines()
        for n, ln in enumerate(lines):
            rec = json.loads(ln)
            if (p := _first_path(rec, key, inside)) is not None:
                lines[n] = json.dumps(replaced(rec, p, new))
                break
        else:
            raise AssertionError(f"no {inside}...{key} in {name}")
        out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    else:
        doc = json.loads(text)
        p = _first_path(doc, key, inside)
        assert p is not None
        out.write_text(json.dumps(replaced(doc, p, new)), encoding="utf-8")
    assert run_all(out) == []
    doc = json.loads(CliRunner().invoke(main, ["report", "--json", "--no-cache", str(out)]).stdout)
    assert any(i["kind"] == "invalid_field" for i in doc["issues"])
