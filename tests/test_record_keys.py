"""A format whose reader gives no dedupe key (a new format, as DEVELOPERS.md's recipe writes one): its calls are
keyed by their record's content, so a followed log replaced by a copy of itself is not counted twice, while two
identical records of one file stay two calls."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from ctxwatch.engine import Run
from ctxwatch.engine.reload import reload_parsed
from ctxwatch.formats import FormatSpec, Output, Reader
from ctxwatch.model import Message, ParsedCall, Part, SourceRef, Usage
from ctxwatch.source import Record, read_lines


class _PlainReader(Reader):
    """``{"model", "prompt", "user"}`` per line: one call each, no key (as a new format's first reader)."""

    def feed(self, rec: Record) -> Iterable[Output]:
        v = rec.value
        src = SourceRef(self.path, rec.line, rec.line_end, rec.byte_start, rec.byte_end)
        return [ParsedCall(source=src, model=v["model"], provider="openai",
                           messages=[Message("user", [Part("text", v["user"])])],
                           usage=Usage(prompt_total=v["prompt"], output=1))]


SPEC = FormatSpec("plain-test", "test format", lambda s: 0.0, _PlainReader)


def _write(path: Path, prompts: list[int], users: list[str]) -> None:
    path.write_text("".join(json.dumps({"model": "gpt-4o", "prompt": p, "user": u}) + "\n"
                            for p, u in zip(prompts, users, strict=True)))


def test_a_log_replaced_by_its_copy_keeps_each_call_once(tmp_path: Path) -> None:
    log = tmp_path / "a.jsonl"
    prompts = [10, 20, 30, 40, 50, 60]
    _write(log, prompts, [f"q{i}" for i in range(6)])
    run = Run(str(log), SPEC)
    run.feed_lines(read_lines(str(log)))
    assert [c.usage.prompt_total for c in run.calls] == prompts
    run.reset("replaced", str(log))  # (as the follower does when the path names another file of the same bytes)
    run.feed_lines(read_lines(str(log)))
    assert [c.usage.prompt_total for c in run.calls] == prompts
    # (a seventh record after the copy is new)
    with log.open("a") as fh:
        fh.write(json.dumps({"model": "gpt-4o", "prompt": 70, "user": "q6"}) + "\n")
    run.feed_lines(read_lines(str(log), offset=log.stat().st_size - len(json.dumps(
        {"model": "gpt-4o", "prompt": 70, "user": "q6"})) - 1, line=7))
    assert [c.usage.prompt_total for c in run.calls] == [*prompts, 70]


def test_identical_records_of_one_file_stay_two_calls_and_reload_by_place(tmp_path: Path) -> None:
    log = tmp_path / "b.jsonl"
    _write(log, [5, 5, 9], ["same", "same", "other"])
    run = Run(str(log), SPEC)
    run.feed_lines(read_lines(str(log)))
    calls = run.calls
    assert [c.usage.prompt_total for c in calls] == [5, 5, 9]
    assert len({c.key for c in calls}) == 3
    again = reload_parsed(SPEC, calls[1])
    assert again is not None and again.source.line == 2 and again.messages[0].text() == "same"
