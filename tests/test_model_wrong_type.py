"""A model id of another JSON type (a number, a list, an object, ``true``) in a real sample line: the call is
kept with no model (its window and price unknown) and the line gets an ``invalid_field`` issue saying so, for
every reader that reads a model id from the log."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ctxwatch.engine import load_run

SAMPLES = Path(__file__).resolve().parent.parent / "sample_logs"
BAD = [7, ["gpt-4o"], {"id": "gpt-4o"}, True]


def _canonical(d: dict[str, Any], bad: Any) -> bool:
    if isinstance(d.get("request"), dict) and "model" in d["request"]:
        d["request"]["model"] = bad
        if isinstance(d.get("response"), dict):
            d["response"].pop("model", None)
        return True
    return False


def _codex(d: dict[str, Any], bad: Any) -> bool:
    if d.get("type") == "turn_context" and "model" in d.get("payload", {}):
        d["payload"]["model"] = bad
        return True
    return False


def _gemini_cli(d: dict[str, Any], bad: Any) -> bool:
    if d.get("type") == "gemini" and "model" in d:
        d["model"] = bad
        return True
    return False


CASES: dict[str, Callable[[dict[str, Any], Any], bool]] = {
    "openai_chat_demo.jsonl": _canonical, "codex_rollout.jsonl": _codex, "gemini_cli_session.jsonl": _gemini_cli,
}


@pytest.mark.parametrize("bad", BAD, ids=lambda v: type(v).__name__)
@pytest.mark.parametrize("name", sorted(CASES))
def test_a_model_of_another_type_is_noted_and_read_as_unknown(tmp_path: Path, name: str, bad: Any) -> None:
    lines = (SAMPLES / name).read_text(encoding="utf-8").splitlines()
    control = load_run(str(SAMPLES / name))
    assert control.calls and all(c.model for c in control.calls)
    docs = [json.loads(ln) for ln in lines]
    changed = [k + 1 for k, d in enumerate(docs) if CASES[name](d, bad)]
    assert changed
    path = tmp_path / name
    path.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    run = load_run(str(path))
    assert len(run.calls) == len(control.calls)  # (no call lost)
    noted = {i.line for i in run.issues if i.kind == "invalid_field" and "the model is unknown" in i.message}
    # (each changed line that gives a call says its model is unknown; a turn_context line gives none, the
    # token_count lines after it are the calls)
    assert noted and noted <= set(changed)
    assert all(c.model is None or isinstance(c.model, str) for c in run.calls)
    assert not any(isinstance(c.model, str) and c.model.startswith(("[", "{", "7", "True")) for c in run.calls)
