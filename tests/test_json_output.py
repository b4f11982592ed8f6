"""The JSON outputs (``report --json`` / ``--jsonl`` / ``--follow --jsonl``, ``check --json``, ``plan --json``,
``schema --json``) on untrusted text: always valid UTF-8 JSON, never a crash.

A log's ``"\\ud800"`` decodes to a lone surrogate, and a file name that is not UTF-8 (byte 0xff) is one in Python
(U+DCFF); UTF-8 cannot hold either, and orjson raised TypeError on them.  The expected strings are written by hand:
the surrogate becomes U+FFFD, the replacement character, as the text outputs show it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers import follow_lines

from ctxwatch.cli import main

REPLACEMENT = "\ufffd"


def record(*, session: str = "s", model: str = "gpt-4o", tool: str = "t", role: str = "user") -> str:
    """One canonical record (prompt 8, completion 1, one tool).  The fields are JSON string bodies written into
    the line as they are, so that ``"s\\\\ud800"`` reaches the file as the six characters of the JSON escape."""
    return ('{"session":"' + session + '","request":{"model":"' + model + '","tools":[{"type":"function",'
            '"function":{"name":"' + tool + '","parameters":{"type":"object"}}}],"messages":[{"role":"' + role
            + '","content":"hi"}]},"response":{"usage":{"prompt_tokens":8,"completion_tokens":1}}}\n')


def run_json(args: list[str], *, lines: bool = False) -> Any:
    """Run a command; its standard output as bytes must be UTF-8 JSON (a document, or one per line)."""
    res = CliRunner().invoke(main, args)
    assert not isinstance(res.exception, Exception), (args, res.exception)
    raw = res.stdout_bytes
    text = raw.decode("utf-8")  # (strict: invalid UTF-8 fails here)
    return [json.loads(x) for x in text.splitlines()] if lines else json.loads(text)


def calls_of(objs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [o for o in objs if "event" not in o]


@pytest.mark.parametrize("where", ["session", "model", "tool"])
def test_a_lone_surrogate_in_a_name_is_replaced_in_report_json(tmp_path: Path, where: str) -> None:
    log = tmp_path / "s.jsonl"
    log.write_text(record(**{where: {"session": "s", "model": "gpt-4o", "tool": "t"}[where] + "\\ud800"}))
    doc = run_json(["report", "--json", str(log)])
    jsonl = calls_of(run_json(["report", "--jsonl", str(log)], lines=True))
    for (call,) in (doc["calls"], jsonl):
        if where == "session":
            assert call["session"] == "s" + REPLACEMENT
        elif where == "model":
            assert call["model"] == "gpt-4o" + REPLACEMENT
        else:
            assert call["tools"] == ["t" + REPLACEMENT]
    if where != "session":
        schema = run_json(["schema", "--json", str(log)])
        assert schema["model"] == ("gpt-4o" + REPLACEMENT if where == "model" else "gpt-4o")
        assert [t["name"] for t in schema["tools"]] == ["t" + REPLACEMENT if where == "tool" else "t"]
    check = run_json(["check", "--json", str(log)])
    assert check["file"] == str(log)


def test_a_lone_surrogate_in_a_role_is_replaced_in_plan_json(tmp_path: Path) -> None:
    log = tmp_path / "r.jsonl"
    log.write_text(record(role="user\\udc00"))
    plan = run_json(["plan", "--json", str(log)])
    assert [m["role"] for m in plan["messages"]] == ["user" + REPLACEMENT]


def test_follow_writes_a_lone_surrogate_as_the_replacement(tmp_path: Path) -> None:
    """A surrogate in a live log killed ``report --follow --jsonl`` at the call that held it."""
    log = tmp_path / "live.jsonl"
    log.write_text(record(session="a\\ud800", model="gpt-4o\\udfff", tool="t\\ud83d") + record(session="b"))
    got, _ = follow_lines(log, lambda got: len(calls_of(got)) >= 2)
    assert [(c["session"], c["model"], c["tools"]) for c in calls_of(got)] == [
        ("a" + REPLACEMENT, "gpt-4o" + REPLACEMENT, ["t" + REPLACEMENT]), ("b", "gpt-4o", ["t"])]


@pytest.mark.parametrize("in_folder", [False, True])
def test_a_file_name_that_is_not_utf8_is_written_with_the_replacement(tmp_path: Path, in_folder: bool) -> None:
    """``x\\xff.jsonl`` (given, or found in a folder) crashed report --json / --jsonl and check --json."""
    folder = tmp_path / "logs"
    folder.mkdir()
    raw_name = os.path.join(os.fsencode(folder), b"x\xff.jsonl")
    with open(raw_name, "w") as fh:
        fh.write(record())
    if in_folder:
        (folder / "ok.jsonl").write_text(record(session="o"))
    arg = str(folder) if in_folder else os.fsdecode(raw_name)
    shown = os.path.join(str(folder), "x" + REPLACEMENT + ".jsonl")
    doc = run_json(["report", "--json", arg])
    assert shown in [c["file"] for c in doc["calls"]]
    jsonl = run_json(["report", "--jsonl", arg], lines=True)
    assert shown in [c["file"] for c in calls_of(jsonl)]
    check = run_json(["check", "--json", arg])
    assert check["file"] == (str(folder) if in_folder else shown)


#: What a terminal acts on or hides and JSON lets a string hold as it is, written out here from the characters'
#: tables (not from ctxwatch.output.safetext): DEL, the C1 controls, the bidi marks, embeddings, overrides and isolates,
#: the line and paragraph separators, and the invisible format characters the screen escapes too (soft hyphen,
#: Mongolian vowel separator, zero width space, word joiner and invisible operators, deprecated format
#: characters, BOM, interlinear annotation controls, tag characters).
UNSAFE = ([0x7F, *range(0x80, 0xA0), 0x061C, 0x200E, 0x200F, 0x2028, 0x2029, *range(0x202A, 0x202F),
           *range(0x2066, 0x206A), 0xAD, 0x180E, 0x200B, *range(0x2060, 0x2065), *range(0x206A, 0x2070), 0xFEFF,
           *range(0xFFF9, 0xFFFC), 0xE0001, *range(0xE0020, 0xE0080)])


def json_escape(cp: int) -> bytes:
    """JSON's escape of code point ``cp``: ``\\uXXXX``, a surrogate pair beyond U+FFFF (RFC 8259, section 7)."""
    if cp > 0xFFFF:
        hi, lo = 0xD800 + ((cp - 0x10000) >> 10), 0xDC00 + ((cp - 0x10000) & 0x3FF)
        return f"\\u{hi:04x}\\u{lo:04x}".encode()
    return f"\\u{cp:04x}".encode()


def assert_no_unsafe_bytes(raw: bytes) -> None:
    for cp in UNSAFE:
        assert chr(cp).encode() not in raw, hex(cp)


def test_escape_json_escapes_exactly_the_unsafe_characters() -> None:
    """Each unsafe character is written as its \\uXXXX escape; every other character of the BMP (and some beyond)
    is written as orjson writes it; the value read back is the same string."""
    import orjson

    from ctxwatch.output.safetext import escape_json

    unsafe = set(UNSAFE)
    for cp in [*range(0xD800), *range(0xE000, 0x10000), 0x1F600, *range(0xE0000, 0xE0081), 0x10FFFF]:
        ch = chr(cp)
        data = orjson.dumps("a" + ch + "b")
        out = escape_json(data)
        if cp in unsafe:
            assert out == b'"a' + json_escape(cp) + b'b"', hex(cp)
        else:
            assert out == data, hex(cp)
        assert json.loads(out) == "a" + ch + "b"
    every = "".join(map(chr, UNSAFE)) * 3 + "plain é … 漢字 \U0001f600"
    out = escape_json(orjson.dumps({every: [every, {"k": every}]}, option=orjson.OPT_INDENT_2))
    assert_no_unsafe_bytes(out)
    assert json.loads(out) == {every: [every, {"k": every}]}


#: Text from a hostile log: an 8-bit CSI colour, an OSC 52 clipboard write ended by the 8-bit ST, a right-to-left
#: override, a first-strong isolate, an Arabic letter mark, a line separator and a DEL.
HOSTILE = "x\u009b31m\u009d52;c;aGk=\u009c\u202eevil\u2066\u061c\u2028\u2029\u200f\x7fz"


def escaped(text: str) -> str:
    """``text`` as a JSON string body, the way the log file holds it (ASCII, every non-ASCII as \\uXXXX)."""
    return json.dumps(text)[1:-1]


@pytest.mark.parametrize("where", ["session", "model", "tool", "role"])
def test_json_outputs_escape_terminal_controls_from_the_log(tmp_path: Path, where: str) -> None:
    """orjson writes C1 controls, bidi controls and U+2028/U+2029 as they are: they reached the terminal through
    report --json / --jsonl, check --json, plan --json and schema --json."""
    log = tmp_path / "h.jsonl"
    base = {"session": "s", "model": "gpt-4o", "tool": "t", "role": "user"}[where]
    log.write_text(record(**{where: base + escaped(HOSTILE)}))
    runner = CliRunner()
    outs = {}
    commands = (["report", "--json"], ["report", "--jsonl"], ["check", "--json"],
                ["plan", "--json", "--window", "100000"], ["schema", "--json"])  # (--window: a hostile model)
    for cmd in commands:
        res = runner.invoke(main, [*cmd, str(log)])
        assert not isinstance(res.exception, Exception), (cmd, res.exception)
        assert_no_unsafe_bytes(res.stdout_bytes)
        text = res.stdout_bytes.decode("utf-8")
        outs[cmd[0] + cmd[1]] = [json.loads(x) for x in text.splitlines()] if cmd[1] == "--jsonl" else json.loads(text)
    (call,) = outs["report--json"]["calls"]
    (line,) = calls_of(outs["report--jsonl"])
    want = base + HOSTILE
    if where == "session":
        assert call["session"] == line["session"] == want
    elif where == "model":
        assert call["model"] == line["model"] == outs["schema--json"]["model"] == want
    elif where == "tool":
        assert call["tools"] == line["tools"] == [want]
        assert [t["name"] for t in outs["schema--json"]["tools"]] == [want]
    else:
        assert [m["role"] for m in outs["plan--json"]["messages"]] == [want]


def test_check_json_escapes_terminal_controls_in_a_file_name(tmp_path: Path) -> None:
    log = tmp_path / f"run{HOSTILE}.jsonl"
    log.write_text(record())
    res = CliRunner().invoke(main, ["check", "--json", str(log)])
    assert_no_unsafe_bytes(res.stdout_bytes)
    assert json.loads(res.stdout_bytes)["file"] == str(log)
    res = CliRunner().invoke(main, ["report", "--json", str(log)])
    assert_no_unsafe_bytes(res.stdout_bytes)
    assert [c["file"] for c in json.loads(res.stdout_bytes)["calls"]] == [str(log)]


def test_follow_escapes_terminal_controls(tmp_path: Path) -> None:
    log = tmp_path / "live.jsonl"
    log.write_text(record(session=escaped(HOSTILE)))
    _, text = follow_lines(log, lambda got: any("index" in o for o in got))
    raw = text.encode()
    assert_no_unsafe_bytes(raw)
    assert [o["session"] for o in map(json.loads, raw.splitlines()) if "event" not in o] == [HOSTILE]
