"""A line that is valid JSON but no object (``[1, 2]``, ``null``, ``42``, ``"x"``) in any JSONL log: an issue of
its line, and every call of the log still read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxwatch.engine import load_run

ROOT = Path(__file__).resolve().parent.parent
ODD = ["[1, 2]", "null", "42", '"x"']


def _logs() -> list[Path]:
    """Every JSONL sample log of one record a line (batch files are read as pairs, elsewhere)."""
    return sorted(p for p in (ROOT / "sample_logs").glob("*.jsonl"))


@pytest.mark.parametrize("src", _logs(), ids=lambda p: p.name)
def test_a_line_of_no_object_is_an_issue_of_its_line(src: Path, tmp_path: Path) -> None:
    lines = src.read_text(encoding="utf-8").splitlines()
    assert all(isinstance(json.loads(ln), dict) for ln in lines if ln.strip())
    control = load_run(str(src))
    path = tmp_path / src.name
    path.write_text("\n".join(lines[:1] + ODD + lines[1:]) + "\n", encoding="utf-8")
    fmt = control.spec.name  # (the format as detected on the clean log: odd lines may hide its first lines)
    run = load_run(str(path), fmt)
    assert len(run.calls) == len(control.calls)
    noted = {i.line for i in run.issues if i.kind == "unknown_record"}
    assert {2, 3, 4, 5} <= noted, (fmt, sorted((i.kind, i.line) for i in run.issues))


@pytest.mark.parametrize(("request_value", "said"), [("null", "null"), ("[1]", "array"), ("7", "number")])
def test_a_record_whose_request_is_no_object_says_so(request_value: str, said: str, tmp_path: Path) -> None:
    """A canonical record with a request of another JSON type was "not a {request, response} record", as if it
    were a record of another kind: it is a damaged record, and its issue names the type."""
    demo = (ROOT / "sample_logs" / "openai_chat_demo.jsonl").read_text(encoding="utf-8").splitlines()
    path = tmp_path / "run.jsonl"
    path.write_text("\n".join([demo[0], f'{{"request": {request_value}, "response": {{}}}}', *demo[1:]]) + "\n")
    run = load_run(str(path), "canonical")
    assert len(run.calls) == len(demo)
    assert [(i.line, i.message) for i in run.issues if i.kind == "unknown_record"] == \
        [(2, f"request is a JSON {said}, not an object; skipped")]
