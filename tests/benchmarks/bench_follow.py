"""Follow benchmark (not collected by pytest): live latency of ``report --follow --jsonl`` and big-file reads.

Run::

    .venv/bin/python tests/benchmarks/bench_follow.py [SIZE_MB] [SECONDS] [PARTS]

(or set ``CTXWATCH_BENCH_SIZE_MB`` / ``CTXWATCH_BENCH_SECONDS`` / ``CTXWATCH_BENCH_PARTS``; defaults 1024 MB,
10 s and ``latency,tail,dashboard``; ``PARTS`` is a comma-separated subset, e.g. ``dashboard`` alone with a
300 MB log: ``bench_follow.py 300 0 dashboard``).  Prints ``name: value (target)`` lines:

* ``follow_jsonl latency p50/p95``: a writer thread appends 20 canonical calls per second (a growing agent
  history, one ``write`` per record) to a temp log while :func:`ctxwatch.output.follow.follow_jsonl` runs in
  another thread; latency = time the call's JSON object was written out - time its record was appended
  (target p95 <= 150 ms, issue 4);
* ``cli latency p50/p95``: the same with the real command ``ctxwatch report PATH --follow --jsonl`` as a
  subprocess (stdout read line by line);
* the same two with ``--poll`` (target p95 <= poll interval + 150 ms);
* ``tail first batch`` / ``tail full read``: a :class:`~ctxwatch.source.FileTailer` reading a generated log of
  SIZE_MB from start to end in 8 MiB slices (the first slice is what a dashboard can show at once; target
  < 1 s), with throughput, record count, the ratio to a plain unparsed read of the same file, and peak RSS.
  The file is generated in a temp dir and deleted.  A file bigger than the page cache is read from disk.
* ``dashboard first screen`` / ``dashboard backfill done`` (issue 4, "Big files"): the Textual dashboard
  (:class:`~ctxwatch.ui.app.CtxwatchApp`, headless under ``App.run_test`` at 120x40) opened on the same log, in a
  fresh Python process (cold: the tokenizer is loaded as a user's first start would).  Times run from the app's
  start (after the imports) to the first frame Textual renders with the context bar and the calls table filled
  (target < 1 s), to the end of the backfill (every call read and accounted) and to the first
  flags; plus the event loop's largest stall during the backfill (a 20 ms timer's gaps), the calls read and the
  process's peak RSS.
* ``analysis``: :func:`ctxwatch.analysis.analyze` (drift risk, forecast, flags) on 10,000 and 40,000 synthetic
  calls whose prompt grows by 10 tokens a call; prints each time and the ratio of the per-call times
  (40k / 10k; target <= 1.5, i.e. linear: the dashboard re-analyses the whole run after every batch).

Timings are wall-clock on a shared machine.
"""

from __future__ import annotations

import json
import os
import resource
import signal
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
from ctxwatch.output.follow import SLICE_BYTES as DEFAULT_BATCH_BYTES  # noqa: E402
from ctxwatch.output.follow import follow_jsonl  # noqa: E402
from ctxwatch.source import DEFAULT_POLL_INTERVAL, FileTailer, Line  # noqa: E402

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
    # A benchmark started in the background (`cmd &`) inherits an ignored SIGINT, and so would the command
    # (ignored signals survive exec, as the shell intends): give the child the default disposition back.
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))

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


def generate(tmp: Path, size_mb: int) -> Path:
    """Write a canonical log of about ``size_mb`` MiB (60 distinct calls, repeated) and return its path."""
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
    print(f"generated {size / 2**20:.0f} MiB in {gen:.1f} s ({len(block) // 60} bytes per record, "
          f"{size // len(block) * 60:,} records)")
    return path


def bench_big(path: Path) -> None:
    """Read ``path`` with a plain read and with a FileTailer in 8 MiB slices (see the module docstring)."""
    size = path.stat().st_size
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
    n = sum(isinstance(e, Line) for e in first)
    while tailer.lag > 0:
        n += sum(isinstance(e, Line) for e in tailer.poll(max_bytes=DEFAULT_BATCH_BYTES))
    total = time.perf_counter() - t0
    tailer.close()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"tail first batch ({DEFAULT_BATCH_BYTES // 2**20} MiB): {1000 * t_first:.0f} ms (target < 1000 ms)")
    print(f"tail full read of {size / 2**20:.0f} MiB: {total:.2f} s, {size / 2**20 / total:.0f} MiB/s, "
          f"{n} records")
    print(f"tail_vs_raw_read: {total / raw:.1f}x (lower is better; JSON parsing of every line dominates)")
    print(f"peak RSS: {rss:.0f} MiB (target <= 300 MiB, independent of file size)")


#: Fresh processes that each time the dashboard's first screen (the median is the figure; start-up times on a
#: shared machine vary by a few hundred milliseconds).
FIRST_SCREEN_RUNS = 5


def _child(path: Path, mode: str) -> tuple[str, float | None]:
    """Run :func:`dashboard_child` in a fresh interpreter; return its output and its first-screen seconds."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--dashboard-child", mode, str(path)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=3600)
    except subprocess.TimeoutExpired:
        return "dashboard: no result within an hour\n", None
    out = proc.stdout
    if proc.returncode:
        out += f"dashboard: child exited {proc.returncode}: {proc.stderr.strip()[-2000:]}\n"
    first = None
    for ln in out.splitlines():
        if ln.startswith("first_screen_seconds="):
            first = float(ln.split("=", 1)[1])
    return "".join(ln + "\n" for ln in out.splitlines() if "=" not in ln.split(" ", 1)[0]), first


def bench_dashboard(path: Path) -> None:
    """Time the dashboard's first screen in :data:`FIRST_SCREEN_RUNS` fresh processes, then one whole
    backfill (see the module docstring)."""
    firsts = []
    for _ in range(FIRST_SCREEN_RUNS):
        _out, first = _child(path, "first")
        if first is not None:
            firsts.append(1000 * first)
    if firsts:
        runs = ", ".join(f"{f:.0f}" for f in firsts)
        print(f"dashboard first screen (bar + table drawn) on {path.stat().st_size / 2**20:.0f} MiB: median "
              f"{statistics.median(firsts):.0f} ms of {len(firsts)} cold starts [{runs}] (target < 1000 ms)")
    out, _first = _child(path, "full")
    print(out, end="")


def dashboard_child(path: Path, full: bool = True) -> None:
    """Open the dashboard on ``path`` headless and print the first-screen time and, with ``full``, the backfill
    figures (see the module docstring).  Without ``full`` it prints only ``first_screen_seconds=S`` and quits at
    the first screen."""
    import asyncio

    from ctxwatch.ui.app import CtxwatchApp
    from ctxwatch.ui.widgets import CallsTable, ContextBar

    size = path.stat().st_size
    out: dict[str, Any] = {}
    gaps: list[float] = []

    async def run() -> None:
        app = CtxwatchApp(str(path), settings=Settings())
        t0 = time.perf_counter()
        async with app.run_test(size=(120, 40)) as pilot:
            last = [time.perf_counter()]

            def tick() -> None:
                now = time.perf_counter()
                if not app.loaded:
                    gaps.append(now - last[0])
                last[0] = now

            app.set_interval(0.02, tick)
            display = app._display

            def frame(screen: Any, renderable: Any) -> None:
                """Textual's frame output (discarded when headless): the first frame drawn with a call on the
                bar and rows in the table is the first screen."""
                display(screen, renderable)
                main = app.main
                if renderable is None or "first" in out or main is None or not main.ready:
                    return
                bar, table = main.query_one(ContextBar), main.query_one(CallsTable)
                if bar.call is not None and table.row_count > 0:
                    out["first"] = time.perf_counter() - t0
                    out["first_calls"] = table.row_count
                    out["first_progress"] = app.progress

            app._display = frame  # type: ignore[method-assign]
            while not app.loaded and not app.failed:
                if not full and "first" in out:
                    return
                await asyncio.sleep(0.01)
            out["loaded"] = time.perf_counter() - t0
            out["calls"] = len(app.calls)
            if app.failed:
                out["failed"] = app.failed
            while not (app.analyses or app.analysis_error or app.failed):
                await pilot.pause(0.01)
            out["analysed"] = time.perf_counter() - t0
            out["flags"] = sum(len(a.flags) for a in app.analyses.values())

    asyncio.run(run())
    if not full:
        if "first" in out:
            print(f"first_screen_seconds={out['first']:.4f}")
        return
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    mib = size / 2**20
    if "failed" in out:
        print(f"dashboard: reading failed: {out['failed']}")
    if "first" in out:
        done, total = out["first_progress"] or (size, size)
        print(f"dashboard first screen (bar + table drawn) on {mib:.0f} MiB: {1000 * out['first']:.0f} ms "
              f"(target < 1000 ms; {out['first_calls']} calls shown, backfill at {100 * done / max(1, total):.1f}%)")
    else:
        print(f"dashboard first screen on {mib:.0f} MiB: not seen before the end of the backfill")
    print(f"dashboard backfill done: {out['loaded']:.1f} s, {mib / out['loaded']:.0f} MiB/s, {out['calls']:,} calls "
          "(no target; the screen is usable meanwhile, esc skips to the end)")
    print(f"dashboard first flags: {out['analysed']:.1f} s ({out['flags']} flags; no target)")
    if gaps:
        gaps.sort()
        print(f"dashboard event loop during backfill: p50 {1000 * gaps[len(gaps) // 2]:.0f} ms, max "
              f"{1000 * gaps[-1]:.0f} ms between 20 ms ticks (no target; the UI stays responsive)")
    print(f"dashboard peak RSS: {rss:.0f} MiB (no target; summaries only, bodies re-read on demand)")


def bench_analysis() -> None:
    """Time :func:`ctxwatch.analysis.analyze` at two run lengths and print the per-call ratio (see the module
    docstring)."""
    from ctxwatch.analysis import analyze
    from ctxwatch.model import Call, SourceRef, Src, Usage

    def calls(n: int) -> list[Call]:
        return [Call(index=i, source=SourceRef("x", i + 1, i + 1, 0, 0), timestamp=float(i), model=None,
                     provider=None, session=None, context="main", window=200_000, window_src=Src.LOG,
                     system_tokens=None, tools_tokens=None, floor_tokens=None, floor_src=Src.UNKNOWN,
                     history_tokens=900 + 10 * i, history_src=Src.ESTIMATED, reserve_tokens=30_000,
                     reserve_src=Src.DEFAULT, prompt_estimated=None,
                     usage=Usage(prompt_total=1000 + 10 * i, output=50), tokenizer="o200k_base", exact=True,
                     system_present=True, system_key=1)
                for i in range(n)]

    times = {}
    for n in (10_000, 40_000):
        run = calls(n)
        analyze(run, Settings())  # warm-up
        best = min(_timed(lambda r=run: analyze(r, Settings())) for _ in range(3))
        times[n] = best
        print(f"analysis of {n:,} calls: {1000 * best:.0f} ms")
    ratio = (times[40_000] / 40_000) / (times[10_000] / 10_000)
    print(f"analysis per-call time 40k / 10k: {ratio:.2f} (target <= 1.5: linear in the run's length)")


def _timed(fn: Any) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


PARTS = ("latency", "tail", "dashboard", "analysis")


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--dashboard-child":
        dashboard_child(Path(sys.argv[3]), full=sys.argv[2] == "full")
        return
    size_mb = int(sys.argv[1]) if len(sys.argv) > 1 else int(os.environ.get("CTXWATCH_BENCH_SIZE_MB", "1024"))
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else float(os.environ.get("CTXWATCH_BENCH_SECONDS", "10"))
    parts = (sys.argv[3] if len(sys.argv) > 3 else os.environ.get("CTXWATCH_BENCH_PARTS", ",".join(PARTS))).split(",")
    unknown = set(parts) - set(PARTS)
    if unknown:
        sys.exit(f"unknown part(s) {', '.join(sorted(unknown))}; choose from {', '.join(PARTS)}")
    with tempfile.TemporaryDirectory(prefix="ctxwatch-bench-") as d:
        tmp = Path(d)
        if "latency" in parts and seconds > 0:
            bench_inprocess(tmp, seconds, poll=False)
            bench_inprocess(tmp, seconds, poll=True)
            bench_cli(tmp, seconds, poll=False)
            bench_cli(tmp, seconds, poll=True)
        if "analysis" in parts:
            bench_analysis()
        if size_mb > 0 and ("tail" in parts or "dashboard" in parts):
            path = generate(tmp, size_mb)
            try:
                if "tail" in parts:
                    bench_big(path)
                if "dashboard" in parts:
                    bench_dashboard(path)
            finally:
                path.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
