"""A forced ``--format`` whose reader makes calls of another format's records, every field it looks for absent
(Gemini CLI's reader on an OpenAI batch output file: a call per line, no model, usage or message), read nothing:
said as a ``format_mismatch`` and, with no other call, exit 2, as a format that makes no call at all is."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner
from helpers import serial_and_parallel

from ctxwatch.cli import main


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, [*args])
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise r.exception
    return r.exit_code, r.stdout, r.stderr


def test_a_forced_format_that_reads_empty_calls_read_nothing(shared_logs: Path) -> None:
    log = shared_logs / "openai-batch" / "reviews_batch_output.jsonl"
    records = sum(1 for ln in log.read_text().splitlines() if ln.strip())
    assert all("custom_id" in json.loads(ln) for ln in log.read_text().splitlines() if ln.strip())
    want = (f"{records} records, {records} read as calls with no model, usage or message in format gemini "
            "(it looks like openai-batch)")
    for cmd in ("check", "report"):
        code, _, err = run(cmd, "--no-cache", "--format", "gemini", str(log))
        assert code == 2 and want in err, (cmd, err)
    code, _, _ = run("check", "--no-cache", "--format", "openai-batch", str(log))
    assert code == 0  # (its own format reads it)


def test_beside_a_log_it_reads_the_misread_file_is_a_note(tmp_path: Path, shared_logs: Path) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    shutil.copy(shared_logs / "openai-batch" / "reviews_batch_output.jsonl", folder / "a_batch.jsonl")
    shutil.copy(shared_logs / "other" / "gemini-batch" / "batch_gemini-2.5-pro-exp-03-25.jsonl",
                folder / "b_gemini.jsonl")
    code, _, err = run("check", "--no-cache", "--format", "gemini", str(folder))
    assert code == 0, err
    serial, par = serial_and_parallel(folder, "gemini")
    for doc in (serial, par):
        assert [(Path(i["file"]).name, i["kind"]) for i in doc["issues"] if i["kind"] == "format_mismatch"] \
            == [("a_batch.jsonl", "format_mismatch")]
        assert {Path(c["file"]).name for c in doc["calls"] if c["model"]} == {"b_gemini.jsonl"}
