"""``python -m ctxwatch`` is the ``ctxwatch`` command: the same output and exit status for the same arguments."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOG = ROOT / "sample_logs" / "openai_chat_demo.jsonl"


def _run(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "ctxwatch", *args], capture_output=True, cwd=ROOT, timeout=120,
                          env={"CTXWATCH_NO_CACHE": "1", "PATH": "/usr/bin:/bin"})


def test_python_m_ctxwatch_reports_the_log() -> None:
    done = _run("report", "--json", str(LOG))
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    # (the log's own count, read by plain json: one call per line that holds a response)
    lines = [json.loads(ln) for ln in LOG.read_text(encoding="utf-8").splitlines() if ln.strip()]
    assert len(doc["calls"]) == sum(1 for d in lines if d.get("response")) > 0


def test_python_m_ctxwatch_names_itself_and_exits_2_on_a_usage_error() -> None:
    done = _run("report", "--no-such-option")
    assert done.returncode == 2
    assert b"Usage: python -m ctxwatch report" in done.stderr
