"""No false alarm on independent requests: a file of unrelated questions (one request a line, no batch ids)
raises no response_collapse or format_drift, while one conversation with the same responses still does."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import report_of


def _line(i: int, messages: list[dict], answer: str) -> dict:
    return {"request": {"model": "gpt-4o", "messages": [{"role": "system", "content": "Answer the question."},
                                                       *messages]},
            "response": {"id": f"r{i}", "choices": [{"index": 0, "message": {"role": "assistant", "content": answer},
                                                     "finish_reason": "stop"}],
                         "usage": {"prompt_tokens": 20 + 40 * i, "completion_tokens": len(answer.split()) * 2}}}


def _answers(n: int) -> list[str]:
    # long answers first, then one-word ones: a collapse, were the calls one conversation
    return [" ".join(["word"] * 300) if i < 20 else "ok" for i in range(n)]


def test_a_file_of_unrelated_questions_raises_no_collapse(tmp_path: Path) -> None:
    answers = _answers(200)
    lines = [_line(i, [{"role": "user", "content": f"question {i}: " + "detail " * (20 * i)}], a)
             for i, a in enumerate(answers)]
    path = tmp_path / "questions.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    doc = report_of(str(path))
    assert len(doc["calls"]) == 200
    assert not [f for f in doc["flags"] if f["kind"] in ("response_collapse", "format_drift")]


def test_one_conversation_with_the_same_responses_still_collapses(tmp_path: Path) -> None:
    answers = _answers(60)
    history: list[dict] = []
    lines = []
    for i, a in enumerate(answers):
        history = [*history, {"role": "user", "content": f"question {i}: " + "detail " * 200}]
        lines.append(_line(i, list(history), a))
        history.append({"role": "assistant", "content": a})
    path = tmp_path / "conversation.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    doc = report_of(str(path))
    assert [f for f in doc["flags"] if f["kind"] == "response_collapse"]
