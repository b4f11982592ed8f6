"""An OTLP export whose ``spans``, span ``attributes`` or attribute entries hold another JSON type: the spans it
held cannot be read, and the line says so (an ``invalid_field`` issue), never a call lost without a word."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxwatch.engine import load_run

LOG = Path(__file__).resolve().parent.parent / "sample_logs" / "otel_collector.jsonl"


def _lines() -> list[dict[str, Any]]:
    return [json.loads(ln) for ln in LOG.read_text(encoding="utf-8").splitlines() if ln.strip()]


def _chat_spans(doc: dict[str, Any]) -> int:
    """Spans of one export line (OTLP/JSON keys) whose operation is a chat call, counted with plain json."""
    n = 0
    for rs in doc.get("resourceSpans", []):
        for ss in rs.get("scopeSpans", []):
            for sp in ss.get("spans", []):
                ops = [a["value"].get("stringValue") for a in sp.get("attributes", [])
                       if a["key"] == "gen_ai.operation.name"]
                n += ops == ["chat"]
    return n


def _first_spans(doc: dict[str, Any]) -> list[Any]:
    return doc["resourceSpans"][0]["scopeSpans"][0]["spans"]  # type: ignore[no-any-return]


def _read(tmp_path: Path, docs: list[dict[str, Any]]) -> tuple[int, list[tuple[str, int]]]:
    path = tmp_path / "otel.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    run = load_run(str(path))
    return len(run.calls), [(i.kind, i.line) for i in run.issues]


@pytest.mark.parametrize("bad", [7, "spans", {"a": 1}, True])
def test_spans_of_another_type_are_an_issue_of_their_line(tmp_path: Path, bad: Any) -> None:
    docs = _lines()
    total = _read(tmp_path, docs)[0]  # (the control: the same lines unchanged)
    lost = _chat_spans(docs[0])
    assert lost == 2  # (line 1: two chat spans beside two execute_tool spans)
    docs[0]["resourceSpans"][0]["scopeSpans"][0]["spans"] = bad
    calls, issues = _read(tmp_path, docs)
    assert calls == total - lost
    assert ("invalid_field", 1) in issues


@pytest.mark.parametrize("bad", [7, "x", {"key": "gen_ai.operation.name"}, None])
def test_attributes_of_another_type_are_an_issue_of_their_line(tmp_path: Path, bad: Any) -> None:
    docs = _lines()
    total = _read(tmp_path, docs)[0]  # (the control: the same lines unchanged)
    _first_spans(docs[0])[0]["attributes"] = bad
    calls, issues = _read(tmp_path, docs)
    assert calls == total - 1
    # (an absent attribute list is no damage: a span without attributes is no model call)
    assert (("invalid_field", 1) in issues) == (bad is not None)


def test_a_span_that_is_no_object_is_an_issue_of_its_line(tmp_path: Path) -> None:
    docs = _lines()
    total = _read(tmp_path, docs)[0]  # (the control: the same lines unchanged)
    _first_spans(docs[0])[0] = [1, 2]
    calls, issues = _read(tmp_path, docs)
    assert calls == total - 1 and ("invalid_field", 1) in issues


def test_an_attribute_entry_without_a_string_key_is_an_issue(tmp_path: Path) -> None:
    docs = _lines()
    total = _read(tmp_path, docs)[0]  # (the control: the same lines unchanged)
    attrs = _first_spans(docs[0])[0]["attributes"]
    op = next(a for a in attrs if a["key"] == "gen_ai.operation.name")
    op["key"] = 7
    calls, issues = _read(tmp_path, docs)
    assert ("invalid_field", 1) in issues
    # (without its operation name the span is still a call when it names its provider and model)
    assert calls in (total, total - 1)
