"""A UTF-8 byte-order mark: removed silently from a file's first line; at the start of a later line (two files
with one each, joined by ``cat``) a ``byte_order_mark`` note, the record after it read (the line loses
nothing, so it is no bad line)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from ctxwatch.cli import main
from tests.helpers import report_of

BOM = b"\xef\xbb\xbf"


def test_files_joined_with_their_marks_give_every_call_and_name_the_joint(shared_logs: Path, tmp_path: Path) -> None:
    real = (shared_logs / "request-response" / "claude-trace_test-traffic_head14.jsonl").read_bytes()
    lines = real.splitlines(keepends=True)
    half = len(lines) // 2
    plain = tmp_path / "plain.jsonl"
    plain.write_bytes(real)
    joined = tmp_path / "joined.jsonl"
    joined.write_bytes(BOM + b"".join(lines[:half]) + BOM + b"".join(lines[half:]))

    want, got = report_of(str(plain)), report_of(str(joined))
    fields = ("line", "prompt_tokens_reported", "completion_tokens_reported", "model")
    assert [[c[f] for f in fields] for c in got["calls"]] == [[c[f] for f in fields] for c in want["calls"]]
    assert len(got["calls"]) >= 2  # (calls on both sides of the joint)
    assert [(i["line"], i["kind"]) for i in got["issues"]] == \
        [(i["line"], i["kind"]) for i in want["issues"]] + [(half + 1, "byte_order_mark")]
    out = CliRunner().invoke(main, ["check", str(joined)]).output
    assert "byte_order_mark" in out and out.strip().splitlines()[-1].startswith(f"{len(want['calls'])} calls")
    assert "0 bad lines, 1 note" in out.strip().splitlines()[-1], out

