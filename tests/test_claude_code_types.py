"""Claude Code transcript lines of another shape than Claude Code writes, made from real lines: each is read as
far as it can be and said (an issue of its line); no call is split, lost or made up.

The expected calls are those of the untouched file (the control): a response's streamed lines are one call
whether their ``message.id`` is there or not, since every line keeps its ``requestId``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ctxwatch.cli import main
from ctxwatch.engine import Run, load_run


def _sample(shared_logs: Path) -> Path:
    return shared_logs / "claude-code" / "spotter_4d5611e5_head200.jsonl"


def _mutated(src: Path, tmp_path: Path, change: Callable[[dict[str, Any]], bool],
             extra: list[str] | None = None) -> tuple[Path, list[int]]:
    """``src`` with ``change`` applied to each line (it says whether it changed it), and the changed lines."""
    out, changed = [], []
    for n, ln in enumerate(src.read_text(encoding="utf-8").splitlines(), 1):
        d = json.loads(ln)
        if change(d):
            changed.append(n)
        out.append(json.dumps(d))
    path = tmp_path / src.name
    path.write_text("\n".join(out + (extra or [])) + "\n", encoding="utf-8")
    return path, changed


def _summary(run: Run) -> list[tuple[Any, Any, str | None]]:
    return [(c.prompt_reported, c.usage.output if c.usage is not None else None, c.model) for c in run.calls]


def _issues(run: Run, kind: str) -> set[int]:
    return {i.line for i in run.issues if i.kind == kind}


def _assistant(d: dict[str, Any]) -> bool:
    return d.get("type") == "assistant" and isinstance(d.get("message"), dict)


@pytest.mark.parametrize("bad", [None, 7, ["msg"]], ids=["missing", "number", "array"])
def test_a_response_without_a_string_message_id_is_one_call_by_its_request_id(
        shared_logs: Path, tmp_path: Path, bad: Any) -> None:
    src = _sample(shared_logs)
    control = load_run(str(src))
    # (the control's calls by plain json: distinct message ids of the assistant lines, synthetic ones aside)
    lines = [json.loads(ln) for ln in src.read_text(encoding="utf-8").splitlines()]
    ids = {d["message"]["id"] for d in lines if _assistant(d) and d["message"].get("model") != "<synthetic>"}
    assert len(control.calls) == len(ids) > 1

    def change(d: dict[str, Any]) -> bool:
        if not _assistant(d):
            return False
        if bad is None:
            d["message"].pop("id")
        else:
            d["message"]["id"] = bad
        return True

    path, changed = _mutated(src, tmp_path, change)
    run = load_run(str(path))
    assert _summary(run) == _summary(control)
    noted = _issues(run, "invalid_field")
    assert set(changed) <= noted


def test_half_of_a_responses_lines_without_the_id_still_make_one_call(shared_logs: Path, tmp_path: Path) -> None:
    src = _sample(shared_logs)
    control = load_run(str(src))
    seen: set[str] = set()

    def change(d: dict[str, Any]) -> bool:
        # (the first line of each response loses its id; the later lines keep it)
        if _assistant(d) and d["message"]["id"] not in seen:
            seen.add(d["message"]["id"])
            d["message"].pop("id")
            return True
        return False

    path, changed = _mutated(src, tmp_path, change)
    run = load_run(str(path))
    assert len(changed) == len(seen) > 1
    assert _summary(run) == _summary(control)


def test_assistant_content_and_is_sidechain_of_another_type_are_noted(shared_logs: Path, tmp_path: Path) -> None:
    src = _sample(shared_logs)
    control = load_run(str(src))
    first = True

    def change(d: dict[str, Any]) -> bool:
        nonlocal first
        if _assistant(d) and first:
            first = False
            d["message"]["content"] = 42
            d["isSidechain"] = "yes"
            return True
        return False

    path, changed = _mutated(src, tmp_path, change)
    run = load_run(str(path))
    assert len(run.calls) == len(control.calls)
    (line,) = changed
    notes = [i.message for i in run.issues if i.kind == "invalid_field" and i.line == line]
    assert any(m.startswith("message content is a JSON number") for m in notes), notes
    assert any(m.startswith("isSidechain is a JSON string") for m in notes), notes


def test_lines_of_no_object_or_a_type_of_another_type_are_unknown_records(shared_logs: Path, tmp_path: Path) -> None:
    src = _sample(shared_logs)
    control = load_run(str(src))
    n = len(src.read_text(encoding="utf-8").splitlines())

    def change(d: dict[str, Any]) -> bool:
        if d.get("type") == "file-history-snapshot":
            d["type"] = 7
            return True
        return False

    path, changed = _mutated(src, tmp_path, change, ["[1, 2]", "null", "42", '"x"'])
    run = load_run(str(path))
    assert changed
    assert len(run.calls) == len(control.calls)
    assert _issues(run, "unknown_record") - _issues(control, "unknown_record") == \
        set(changed) | {n + 1, n + 2, n + 3, n + 4}


def test_plan_of_a_call_whose_usage_is_damaged_says_so(shared_logs: Path, tmp_path: Path) -> None:
    def change(d: dict[str, Any]) -> bool:
        if _assistant(d):
            d["message"]["usage"] = {"input_tokens": "x", "output_tokens": [1]}
            return True
        return False

    path, _ = _mutated(shared_logs / "claude-code" / "spotter_short.jsonl", tmp_path, change)
    r = CliRunner().invoke(main, ["plan", str(path)])
    assert r.exit_code != 0
    assert "reports no usable prompt size for this call" in r.output and "mid-session" not in r.output
