"""Claude Code writes a response's usage on each of its lines and the call keeps one of them: a count that is no
count on a line whose usage another line of the response supersedes is still damage of that line, reported
(as a string of digits there is), while the call's numbers stay those of the line it keeps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxwatch.engine import Run
from ctxwatch.formats import get_format
from ctxwatch.source import Record, iter_records
from tests.helpers import report_of

SAMPLE = ("claude-code", "spotter_4d5611e5_head200.jsonl")


def responses(path: Path) -> dict[str, list[int]]:
    """A separate reader: message id -> the numbers of its assistant lines."""
    out: dict[str, list[int]] = {}
    for n, raw in enumerate(path.read_text().splitlines(), 1):
        rec = json.loads(raw)
        if rec.get("type") == "assistant":
            out.setdefault(rec["message"]["id"], []).append(n)
    return out


def damaged_copy(shared_logs: Path, tmp_path: Path, value: object) -> tuple[Path, Path, int]:
    """The sample, and a copy whose first line of a response of several lines has ``output_tokens`` = ``value``;
    with that line's number."""
    real = shared_logs.joinpath(*SAMPLE)
    line = next(lines[0] for lines in responses(real).values() if len(lines) > 1)
    rows = real.read_text().splitlines(keepends=True)
    rec = json.loads(rows[line - 1])
    rec["message"]["usage"]["output_tokens"] = value
    rows[line - 1] = json.dumps(rec) + "\n"
    plain, damaged = tmp_path / "plain.jsonl", tmp_path / "damaged.jsonl"
    plain.write_text(real.read_text())
    damaged.write_text("".join(rows))
    return plain, damaged, line


def numbers(doc: dict) -> list[tuple]:
    return [(c["line"], c["prompt_tokens_reported"], c["completion_tokens_reported"], c["floor_tokens"],
             c["history_tokens"]) for c in doc["calls"]]


@pytest.mark.parametrize(("value", "kind", "shown"), [([9], "invalid_field", "[9] (not a number)"),
                                                     ({"n": 9}, "invalid_field", '{"n":9} (not a number)'),
                                                     (-9, "implausible_value", "-9 (negative)")])
def test_a_superseded_line_with_a_damaged_count_is_reported_and_the_call_unchanged(
        shared_logs: Path, tmp_path: Path, value: object, kind: str, shown: str) -> None:
    plain, damaged, line = damaged_copy(shared_logs, tmp_path, value)
    want, got = report_of(str(plain)), report_of(str(damaged))
    assert numbers(got) == numbers(want)
    before = [(i["line"], i["kind"], i["message"]) for i in want["issues"]]
    new = [i for i in got["issues"] if (i["line"], i["kind"], i["message"]) not in before]
    assert [(i["line"], i["kind"]) for i in new] == [(line, kind)]
    assert f"message.usage.output_tokens {shown}" in new[0]["message"]


def test_a_live_read_reports_it_once_as_the_whole_read_does(shared_logs: Path, tmp_path: Path) -> None:
    """Read a record at a time (each line emits the call again, as when following), the same one issue."""
    _, damaged, line = damaged_copy(shared_logs, tmp_path, [9])
    run = Run(str(damaged), get_format("claude-code"))
    for rec in iter_records(str(damaged), skip=run.reader.skip):
        if isinstance(rec, Record):
            run.feed_record(rec)
    run.finish()
    whole = report_of(str(damaged))
    assert [(i.line, i.kind, i.message) for i in run.issues] == \
        [(i["line"], i["kind"], i["message"]) for i in whole["issues"]]
    assert [i.line for i in run.issues if i.kind == "invalid_field"] == [line]


def test_a_batch_of_lines_read_at_once_gives_the_issue_report_gives_and_withdraws_none(
        shared_logs: Path, tmp_path: Path) -> None:
    """A followed file read in one slice (the dashboard's and report --follow's first read of a file already
    written): the placeholder's damage, the call's usage until the next line, was given and withdrawn in the
    same change, so a follower printed its withdrawal first and then the issue itself, which a consumer kept
    (the dashboard listed it beside the issue report gives).  Given and withdrawn at once, it is not given."""
    from ctxwatch.source import read_lines

    _, damaged, line = damaged_copy(shared_logs, tmp_path, [9])
    run = Run(str(damaged), get_format("claude-code"))
    change = run.feed_lines(read_lines(str(damaged), final=False))
    whole = report_of(str(damaged))
    said = [(i["line"], i["kind"], i["message"]) for i in whole["issues"] if i["kind"] == "invalid_field"]
    assert [(i.line, i.kind, i.message) for i in change.issues] == said and said[0][0] == line
    assert change.resolved == []
    assert [(i.line, i.kind, i.message) for i in run.issues] == said
