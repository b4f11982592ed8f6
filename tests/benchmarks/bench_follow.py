"""Follow benchmark (not collected by pytest): live latency of ``report --follow --jsonl`` and big-file reads.

Run::

    .venv/bin/python tests/benchmarks/bench_follow.py [SIZE_MB] [SECONDS]

(or set ``CTXWATCH_BENCH_SIZE_MB`` / ``CTXWATCH_BENCH_SECONDS``; defaults 1024 MB and 10 s).  Prints
``name: value (target)`` lines:

* ``follow_jsonl latency p50/p95``: a writer thread appends 20 canonical calls per second (a growing agent
  history, one ``write`` per record) to a temp log while :func:`ctxwatch.follow.follow_jsonl` runs in
  another thread; latency = time the call's JSON object was written out - time its record was appended
  (target p95 <= 150 ms, issue 4);
* ``cli latency p50/p95``: the same with the real command ``ctxwatch report PATH --follow --jsonl`` as a
  subprocess (stdout read line by line);
* the same two with ``--poll`` (target p95 <= poll interval + 150 ms);
* ``tail first batch`` / ``tail full read``: a :class:`~ctxwatch.tail.FileTailer` reading a generated log of
  SIZE_MB from start to end in 8 MiB slices (the first slice is what a dashboard can show at once; target
  < 1 s), with throughput, record count, the ratio to a plain unparsed read of the same file, and peak RSS.
  The file is generated in a temp dir and deleted.  A file bigger than the page cache is read from disk.

Timings are wall-clock on a shared machine.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from ctxwatch.config import Settings  # noqa: E402
from ctxwatch.follow import follow_jsonl  # noqa: E402
from ctxwatch.jsonstream import Record  # noqa: E402
from ctxwatch.tail import DEFAULT_BATCH_BYTES, DEFAULT_POLL_INTERVAL, FileTailer  # noqa: E402

RATE = 20  # calls per second (issue 4)
WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu",
         "nu", "xi", "omicron", "pi", "rho"]


def record(i: int) -> bytes:
    """Canonical call ``i`` of an agent run: system prompt, a tool, history growing up to 40 turns."""
    msgs: list[dict[str, Any]] = [{"role": "system", "content": "You are a careful coding agent. " * 20}]
    for k in range(max(0, i - 40), i + 1):
        msgs.append({"role": "user", "content": f"step {k}: " + " ".join(WORDS[(k + j) % len(WORDS)]
                                                                        for j in range(40))})
        if k < i:
            msgs.append({"role": "assistant", "content": f"done {k}: " + " ".join(WORDS[j % len(WORDS)]
                                                                                for j in range(30))})
    body = {"timestamp": time.time(), "session": "bench",
            "request": {"model": "gpt-4o", "messages": msgs, "max_tokens": 1024,
                        "tools": [{"type": "function", "function": {
                            "name": "read_file", "description": "Read a file.",
                            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}]},
            "response": {"choices": [{"message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
                         "usage": {"prompt_tokens": 500 + 90 * i, "completion_tokens": 20}}}
    return json.dumps(body).encode() + b"\n"


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p * (len(xs) - 1)))]


def writer(path: Path, n: int, written: dict[int, float], emitted: dict[int, float]) -> None:
    """Append call 0 (warm-up: the first call loads the tokenizer), wait for it, then calls 1..n at RATE/s."""
    with open(path, "ab", buffering=0) as fh:
        fh.write(record(0))
        written[0] = time.perf_counter()
        deadline = time.time() + 30
        while 0 not in emitted and time.time() < deadline:
            time.sleep(0.01)
        time.sleep(0.2)
        t0 = time.perf_counter()
        for i in range(1, n + 1):
            target = t0 + (i - 1) / RATE
            delay = target - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            data = record(i)
            fh.write(data)
            written[i] = time.perf_counter()


def report(name: str, written: dict[int, float], emitted: dict[int, float], n: int, target: str) -> None:
    if 0 in emitted:
        print(f"{name} first call (cold: tokenizer load): {1000 * (emitted[0] - written[0]):.0f} ms "
              f"(no target; one-time start-up)")
    lat = [1000 * (emitted[i] - written[i]) for i in range(1, n + 1) if i in emitted and i in written]
    missing = n - len(lat)
    if not lat:
        print(f"{name} latency: no calls emitted (target {target})")
        return
    print(f"{name} latency p50: {statistics.median(lat):.1f} ms (target p95 <= {target})")
    print(f"{name} latency p95: {pct(lat, 0.95):.1f} ms (target <= {target})"
          + (f"  [{missing} of {n} calls missing]" if missing else ""))


def bench_inprocess(tmp: Path, seconds: float, poll: bool) -> None:
    n = int(seconds * RATE)
    path = tmp / f"inproc{'-poll' if poll else ''}.jsonl"
    path.write_bytes(b"")
    written: dict[int, float] = {}
    emitted: dict[int, float] = {}
    stop = threading.Event()

    class Out:
        def __init__(self) -> None:
            self.buf = ""

        def write(self, s: str) -> int:
            now = time.perf_counter()
            self.buf += s
            while "\n" in self.buf:
                one, self.buf = self.buf.split("\n", 1)
                obj = json.loads(one)
                if "event" not in obj:
                    emitted.setdefault(obj["index"], now)
            return len(s)

        def flush(self) -> None:
            pass

    t = threading.Thread(target=follow_jsonl, args=(str(path), "canonical", Settings(), Out(), stop, poll),
                         daemon=True)
    t.start()
    time.sleep(0.5)  # let the watcher start
    w = threading.Thread(target=writer, args=(path, n, written, emitted))
    w.start()
    w.join()
    deadline = time.time() + 5
    while len(emitted) < n + 1 and time.time() < deadline:
        time.sleep(0.05)
    stop.set()
    t.join(timeout=10)
    name = "follow_jsonl --poll" if poll else "follow_jsonl"
    report(name, written, emitted, n, f"{DEFAULT_POLL_INTERVAL * 1000 + 150:.0f} ms" if poll else "150 ms")


def bench_cli(tmp: Path, seconds: float, poll: bool) -> None:
    n = int(seconds * RATE)
    path = tmp / f"cli{'-poll' if poll else ''}.jsonl"
    path.write_bytes(b"")
    written: dict[int, float] = {}
    emitted: dict[int, float] = {}
    cmd = [sys.executable, "-c", "from ctxwatch.cli import main; main()", "report", str(path), "--follow",
           "--jsonl", "--format", "canonical"] + (["--poll"] if poll else [])
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)

    def read() -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            now = time.perf_counter()
            obj = json.loads(raw)
            if "event" not in obj:
                emitted.setdefault(obj["index"], now)

    r = threading.Thread(target=read, daemon=True)
    r.start()
    time.sleep(2.0)  # interpreter start-up and imports
    w = threading.Thread(target=writer, args=(path, n, written, emitted))
    w.start()
    w.join()
    deadline = time.time() + 5
    while len(emitted) < n + 1 and time.time() < deadline:
        time.sleep(0.05)
    proc.send_signal(2)
    try:
        rc = proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        rc = -9
    name = "cli report --follow --jsonl" + (" --poll" if poll else "")
    report(name, written, emitted, n, f"{DEFAULT_POLL_INTERVAL * 1000 + 150:.0f} ms" if poll else "150 ms")
    print(f"{name} exit status on SIGINT: {rc} (target 0)")


def bench_big(tmp: Path, size_mb: int) -> None:
    path = tmp / "big.jsonl"
    block = b"".join(record(i % 60) for i in range(60))
    target = size_mb * 1024 * 1024
    t0 = time.perf_counter()
    with open(path, "wb") as fh:
        done = 0
        while done < target:
            fh.write(block)
            done += len(block)
    gen = time.perf_counter() - t0
    size = path.stat().st_size
    print(f"generated {size / 2**20:.0f} MiB in {gen:.1f} s ({len(block) // 60} bytes per record)")
    try:
        t0 = time.perf_counter()
        with open(path, "rb", buffering=0) as fh:
            while fh.read(DEFAULT_BATCH_BYTES):
                pass
        raw = time.perf_counter() - t0
        print(f"raw read of {size / 2**20:.0f} MiB (no parsing): {raw:.2f} s, {size / 2**20 / raw:.0f} MiB/s "
              "(the disk / page-cache bound)")
        t0 = time.perf_counter()
        tailer = FileTailer(path)
        first = tailer.poll(max_bytes=DEFAULT_BATCH_BYTES)
        t_first = time.perf_counter() - t0
        n = sum(isinstance(e, Record) for e in first)
        while tailer.lag > 0:
            n += sum(isinstance(e, Record) for e in tailer.poll(max_bytes=DEFAULT_BATCH_BYTES))
        total = time.perf_counter() - t0
        tailer.close()
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"tail first batch ({DEFAULT_BATCH_BYTES // 2**20} MiB): {1000 * t_first:.0f} ms (target < 1000 ms)")
        print(f"tail full read of {size / 2**20:.0f} MiB: {total:.2f} s, {size / 2**20 / total:.0f} MiB/s, "
              f"{n} records")
        print(f"tail_vs_raw_read: {total / raw:.1f}x (lower is better; JSON parsing of every line dominates)")
        print(f"peak RSS: {rss:.0f} MiB (target <= 300 MiB, independent of file size)")
    finally:
        path.unlink(missing_ok=True)


def main() -> None:
    size_mb = int(sys.argv[1]) if len(sys.argv) > 1 else int(os.environ.get("CTXWATCH_BENCH_SIZE_MB", "1024"))
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else float(os.environ.get("CTXWATCH_BENCH_SECONDS", "10"))
    with tempfile.TemporaryDirectory(prefix="ctxwatch-bench-") as d:
        tmp = Path(d)
        bench_inprocess(tmp, seconds, poll=False)
        bench_inprocess(tmp, seconds, poll=True)
        bench_cli(tmp, seconds, poll=False)
        bench_cli(tmp, seconds, poll=True)
        if size_mb > 0:
            bench_big(tmp, size_mb)


if __name__ == "__main__":
    main()
