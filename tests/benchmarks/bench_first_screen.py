"""The dashboard's first screen on a 1 GB log (not collected by pytest): seconds from starting the process to its
first screen, and to the first call drawn, in a real terminal (a pseudo-terminal of 80x24).

Run: ``.venv/bin/python tests/benchmarks/bench_first_screen.py [SIZE_MB]`` (default 1000).  It writes an OpenAI-format
log of one agent re-sending its growing history (``bench_ingest.generate``), starts ``ctxwatch LOG`` on a
pseudo-terminal and reads what the dashboard draws:

* ``first screen``: until its header (the log's name and its call count) is on the screen (target <= 0.5 s);
* ``first call``: until the context bar of a call is (no target; the log is read from its start meanwhile).

Each is the best of 3 runs after a warm-up (the page cache and ctxwatch's start-up caches, the tokenizer's ranks
and the catalogue's answers, warm in a cache folder of the benchmark's own, as a second start has them; the
dashboard reads a log from its start every time).  Wall-clock on a shared machine: read the ratio.
"""

from __future__ import annotations

import fcntl
import os
import pty
import select
import shutil
import signal
import struct
import sys
import tempfile
import termios
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_ingest import generate

ROOT = Path(__file__).resolve().parents[2]
CTXWATCH = Path(sys.executable).with_name("ctxwatch")

#: Seconds the first screen may take (the issue's target for a 1 GB log).
TARGET_FIRST_SCREEN = 0.5


def timed_start(log: Path, env: dict[str, str], limit: float = 60.0) -> tuple[float, float]:
    """Seconds to the first screen and to the first call of ``ctxwatch LOG`` on an 80x24 pseudo-terminal."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the dashboard
        os.execve(str(CTXWATCH), [str(CTXWATCH), str(log)], env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    os.kill(pid, signal.SIGWINCH)
    start = time.perf_counter()
    seen = b""
    first = call = float("nan")
    try:
        while time.perf_counter() - start < limit:
            ready, _, _ = select.select([fd], [], [], 0.01)
            if not ready:
                continue
            try:
                seen += os.read(fd, 1 << 16)
            except OSError:
                break
            now = time.perf_counter() - start
            if first != first and log.name.encode() in seen and b"calls" in seen:
                first = now
            if first == first and b"call #" in seen:
                call = now
                break
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(fd)
    return first, call


def main() -> None:
    """Write the log, time the dashboard's start, print the figures and the ratio to the target."""
    mb = float(sys.argv[1]) if len(sys.argv) > 1 else 1000.0
    tmp = Path(tempfile.mkdtemp(prefix="ctxwatch-bench-"))
    try:
        log = tmp / "big.jsonl"
        calls = generate(log, mb, calls=1500)
        env = {**os.environ, "TERM": "xterm-256color", "XDG_CACHE_HOME": str(tmp / "cache"), "COLUMNS": "80",
               "LINES": "24"}
        env.pop("CTXWATCH_NO_CACHE", None)
        timed_start(log, env)  # (warm-up)
        runs = [timed_start(log, env) for _ in range(3)]
        first = min(r[0] for r in runs)
        call = min(r[1] for r in runs)
        print(f"log: {log.stat().st_size / 1e6:.0f} MB, {calls} calls")
        print(f"first screen: {first:.2f} s (target <= {TARGET_FIRST_SCREEN:g} s; ratio "
              f"{first / TARGET_FIRST_SCREEN:.2f})")
        print(f"first call: {call:.2f} s (no target)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
