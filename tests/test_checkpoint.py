"""A run's state is a plain value: a log read half-way, saved, and resumed in a fresh interpreter (another hash
seed) gives the same report as a whole read.  The expected document is the whole read's, in this process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctxwatch.engine import Run, load_run, resolve_spec
from ctxwatch.engine.checkpoint import Checkpoint, checkpoint, dumps, loads, only_grew, resume
from ctxwatch.output.report import report_json
from ctxwatch.output.safetext import json_bytes
from ctxwatch.source import FileTailer

ROOT = Path(__file__).resolve().parent.parent

#: Resumes a checkpoint read from a file, reads the rest of its log and prints the report (a fresh interpreter).
RESUME = """
import sys
from ctxwatch.engine.checkpoint import loads, resume
from ctxwatch.output.report import report_json
from ctxwatch.output.safetext import json_bytes
run, tailer = resume(loads(open(sys.argv[1], "rb").read()))
while True:
    run.feed_lines(tailer.poll())
    if tailer.lag == 0:
        break
run.feed_lines(tailer.finalize())
run.finish()
sys.stdout.buffer.write(json_bytes(report_json(run)))
"""


def samples(shared: Path) -> list[Path]:
    return [ROOT / "sample_logs" / "openai_chat_demo.jsonl", ROOT / "sample_logs" / "claude_trace.jsonl",
            ROOT / "sample_logs" / "gemini_cli_session.jsonl", ROOT / "sample_logs" / "openai_responses.jsonl",
            shared / "claude-code" / "spotter_4d5611e5_full.jsonl",
            next((shared / "codex-rollout").glob("rollout-*.jsonl"))]


def half_read(path: Path) -> Checkpoint:
    """A checkpoint of ``path`` read to about its middle."""
    run = Run(str(path), resolve_spec(str(path), None))
    tailer = FileTailer(str(path))
    run.feed_lines(tailer.poll(os.path.getsize(path) // 2))
    cp = checkpoint(run, tailer)
    tailer.close()
    return cp


@pytest.mark.parametrize("which", range(6))
def test_a_run_saved_half_way_resumes_in_another_process_to_the_same_report(shared_logs: Path, tmp_path: Path,
                                                                            which: int) -> None:
    src = samples(shared_logs)[which]
    log = tmp_path / src.name
    log.write_bytes(src.read_bytes())
    whole = json_bytes(report_json(load_run(str(log))))
    cp = half_read(log)
    assert 0 < cp.offset < log.stat().st_size and cp.run.calls
    state = tmp_path / "state.bin"
    state.write_bytes(dumps(cp))
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    got = subprocess.run([sys.executable, "-c", RESUME, str(state)], capture_output=True, check=True, env=env)
    assert got.stdout == whole


def test_a_checkpoint_holds_no_tokenizer_ranks_and_tells_a_grown_file_from_a_new_one(tmp_path: Path) -> None:
    src = ROOT / "sample_logs" / "claude_trace.jsonl"
    log = tmp_path / src.name
    data = src.read_bytes()
    log.write_bytes(data)
    cp = half_read(log)
    assert len(dumps(cp)) < 200_000  # (the o200k ranks alone pickle to megabytes)
    assert loads(dumps(cp)).offset == cp.offset
    with open(log, "ab") as fh:
        fh.write(data[:10])
    assert only_grew(cp)
    log.write_bytes(data[::-1])  # rewritten in place, the same file (and inode) and as long
    assert not only_grew(cp)
    log.unlink()
    log.write_bytes(data)  # the same bytes again, in a new file (which may get the same inode)
    assert only_grew(cp) == (os.stat(log).st_ino == cp.inode)
    run, tailer = resume(cp)
    assert isinstance(run, Run) and tailer.offset == cp.offset
    with pytest.raises(TypeError):
        loads(dumps(run))  # type: ignore[arg-type]
