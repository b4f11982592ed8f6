"""The encoding loaded in a forked child while a big log is read from its start (:mod:`ctxwatch.tokens.server`):
the counts are those the process makes itself, to the token, for short and long texts and for more texts than a
pipe holds; a report through the child is byte for byte the one made without it, also when the child dies."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctxwatch.tokens import get_tokenizer, slicing
from ctxwatch.tokens.server import start

ROOT = Path(__file__).resolve().parents[1]


def test_the_child_counts_as_this_process_does() -> None:
    server = start("o200k_base")
    assert server is not None  # (Linux, 2 cores, no other thread: as on the development machine)
    try:
        texts = [f"message {i}: " + "def f(x):\n    return x * 2\n" * (i % 50) for i in range(3000)]  # (> a pipe)
        long = "ab" * (slicing.WHOLE_CHARS + 5000)  # (counted in slices)
        texts.append(long)
        server.send(texts)
        local = get_tokenizer("o200k_base")
        for t in [*texts, "not sent before", "é" * 10]:
            assert server.count(t) == local.count_cut(t), t[:40]
        assert server.ready() and not server.dead
    finally:
        server.close()
    assert server.dead and server.count("after the end") is None


REPORT = """
import os, signal, sys
from ctxwatch.engine import warm
from ctxwatch.tokens import server as srv
warm.COUNTING_CHILD_BYTES = 0
real = srv.start
used = []
def start(encoding):
    s = real(encoding)
    used.append(s)
    if s is not None and os.environ.get("KILL_CHILD"):
        os.kill(s._pid, signal.SIGKILL)
    return s
warm.start_server = start
from ctxwatch.cli import main
try:
    main(["report", "--json", sys.argv[1]])
finally:
    s = used[0] if used else None
    sys.stderr.write(f"child {'yes' if s is not None else 'no'} answered {bool(s and s._ready)}\\n")
"""


def report(path: Path, cache: Path, *, kill: bool = False) -> tuple[bytes, str]:
    env = {k: v for k, v in os.environ.items() if k != "CTXWATCH_NO_CACHE"}
    env.update(XDG_CACHE_HOME=str(cache), PYTHONPATH=str(ROOT))
    if kill:
        env["KILL_CHILD"] = "1"
    res = subprocess.run([sys.executable, "-c", REPORT, str(path)], capture_output=True, env=env, check=False)
    assert res.returncode == 0, res.stderr.decode()
    return res.stdout, res.stderr.decode().strip().splitlines()[-1]


@pytest.mark.parametrize("kill", [False, True], ids=["child", "child killed"])
def test_a_report_through_the_child_is_the_report_without_it(tmp_path: Path, kill: bool) -> None:
    sys.path.insert(0, str(ROOT / "tests" / "benchmarks"))
    from bench_ingest import generate

    log = tmp_path / "run.jsonl"
    generate(log, 3, calls=60)
    got, how = report(log, tmp_path / "cache", kill=kill)
    alone = subprocess.run([sys.executable, "-c", "import sys; from ctxwatch.cli import main; main(sys.argv[1:])",
                            "report", "--json", "--no-cache", str(log)], capture_output=True, check=True,
                           env={**os.environ, "PYTHONPATH": str(ROOT)}).stdout
    assert got == alone
    # (killed at once, the child never answers: every count was made by the process itself)
    assert how == ("child yes answered False" if kill else "child yes answered True")
