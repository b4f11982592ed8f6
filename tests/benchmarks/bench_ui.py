"""Dashboard responsiveness benchmark (not collected by pytest): the event loop's gaps while 10,000 calls
stream into the dashboard.

Run::

    .venv/bin/python tests/benchmarks/bench_ui.py [CALLS]

It writes a canonical log of CALLS calls (default 10,000; the records of ``tests/test_ui.py``'s
responsiveness test), opens :class:`~ctxwatch.ui.app.CtxwatchApp` on it headless at 120x40 and, with a 20 ms
timer, measures the gaps between the timer's ticks until every call is read and drawn.  Prints
``name: value (target; ratio)`` lines, a ratio above 1 missing the target:

* ``tick gap median``: the typical gap (target < 0.1 s: the loop keeps turning while calls are read);
* ``tick gap max``: the longest freeze (target < 1.5 s);
* ``backfill``: seconds from the app's start to the last call in the table (no target; for comparison).

Timings are wall-clock on a shared machine: compare runs on the same machine, and run it again when a
ratio is near 1.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from test_ui_common import record  # noqa: E402

from ctxwatch.ui.app import CtxwatchApp  # noqa: E402
from ctxwatch.ui.widgets import CallsTable  # noqa: E402

#: (name, target in seconds) of the two gaps measured.
TARGETS = {"tick gap median": 0.1, "tick gap max": 1.5}


def write(path: Path, n: int) -> None:
    """``n`` calls, each the same three-word call with its own timestamp and response id."""
    base = record(0, turn_words=3)
    rows = []
    for i in range(n):
        base["timestamp"] = 1_735_689_600 + i
        base["response"]["id"] = f"r{i}"
        rows.append(json.dumps(base) + "\n")
    path.write_text("".join(rows))


async def measure(path: Path, n: int) -> dict[str, float]:
    """Open the dashboard on ``path`` and time the loop's ticks until its table holds ``n`` rows."""
    app = CtxwatchApp(str(path))
    gaps: list[float] = []
    last: list[float] = []

    def tick() -> None:
        now = time.monotonic()
        if last:
            gaps.append(now - last[-1])
        last.append(now)

    start = time.monotonic()
    async with app.run_test(size=(120, 40)) as pilot:
        app.set_interval(0.02, tick)
        deadline = start + 600
        while time.monotonic() < deadline:
            await pilot.pause(0.05)
            main = app.main
            if app.state.loaded and main is not None and main.query_one(CallsTable).row_count == n:
                break
        done = time.monotonic() - start
    gaps.sort()
    return {"tick gap median": gaps[len(gaps) // 2] if gaps else float("nan"),
            "tick gap max": gaps[-1] if gaps else float("nan"), "backfill": done,
            "ticks": float(len(gaps)), "mean": statistics.fmean(gaps) if gaps else float("nan")}


def main() -> None:
    """Write the log, measure, print one line per number."""
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "many.jsonl"
        write(log, n)
        got = asyncio.run(measure(log, n))
    for name, target in TARGETS.items():
        print(f"{name}: {got[name]:.3f} s (target < {target:g} s; ratio {got[name] / target:.2f})")
    print(f"backfill: {got['backfill']:.2f} s for {n:,} calls ({int(got['ticks'])} ticks, mean gap "
          f"{got['mean']:.3f} s)")


if __name__ == "__main__":
    main()
