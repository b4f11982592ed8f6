"""OpenTelemetry fleet benchmark (not collected by pytest): ``ctxwatch report --json`` on a Collector file export.

Run: ``.venv/bin/python tests/benchmarks/bench_otel.py [CONVERSATIONS] [CALLS]`` (default 200 x 100, 20,000
chat spans without content over 10 instances, about 16 MB).  The file is made by the OpenTelemetry SDK
(``scripts/make_otel_sample.py --fleet``, the test extra's packages) in a temp dir, then it prints, measured in
the same run (best of 3, the cache of earlier reads emptied before each):

* ``report_vs_orjson``: time of ``ctxwatch report --json`` (the whole command, from process start) / time to
  merely ``orjson.loads`` every line, and the same after the one-time start-up (the ingest bars: <= 2.0);
* ``otel_vs_canonical``: the same time / that of a canonical log of as many usage-only calls in as many
  sessions (target <= 1.0).  A fleet's calls are small, so the work per call (accounting, analysis, the
  document), not the JSON, is most of the time here: the orjson bar is the ingest benchmark's, for logs whose
  requests are in them, and this ratio says whether reading OTLP costs more than reading any log of small calls;
* peak RSS of ``ctxwatch report`` (target <= 300 MB).

Timings are wall-clock on a shared machine: read the ratios, not the seconds.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_ingest as ingest  # (the same timing helpers as the ingest benchmark)

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    conversations = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    spec = importlib.util.spec_from_file_location("make_otel_sample", ROOT / "scripts" / "make_otel_sample.py")
    assert spec and spec.loader
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    subprocess.run([ingest.PY, "-m", "compileall", "-q", str(ROOT / "ctxwatch")], check=False, capture_output=True)
    tmp = Path(tempfile.mkdtemp(prefix="ctxwatch-bench-otel-"))
    ingest.ENV["XDG_CACHE_HOME"] = str(tmp / "cache")
    ingest.ENV.pop("CTXWATCH_NO_CACHE", None)
    try:
        path = tmp / "fleet.jsonl"
        path.write_bytes(gen.fleet(conversations, calls))
        print(f"generated {path.stat().st_size / 1e6:.0f} MB: {conversations} conversations x {calls} calls, "
              f"{gen.FLEET_INSTANCES} instances, {gen.FLEET_BATCH} spans per export request")
        t_orjson = min(ingest.time_orjson(path) for _ in range(3))
        ingest.run_report(path)  # (the first start writes the start-up caches)
        t_report, rss = ingest.best_of(3, lambda: (ingest.cold(), ingest.run_report(path))[1])
        t_steady, _ = ingest.best_of(3, lambda: (ingest.cold(), ingest.run_report(path, warm=True))[1])
        print(f"orjson.loads every line: {t_orjson:.2f} s; ctxwatch report --json: {t_report:.2f} s whole command, "
              f"{t_steady:.2f} s after start-up")
        ingest.line("report_vs_orjson (cold)", t_report / t_orjson, "<= 2.0")
        ingest.line("report_vs_orjson (cold, after start-up)", t_steady / t_orjson, "<= 2.0")
        canonical = tmp / "canonical.jsonl"
        with open(canonical, "w", encoding="utf-8") as fh:
            for j in range(calls):
                for i in range(conversations):
                    prompt, _, out = gen.fleet_usage(i, j)
                    fh.write(json.dumps({"timestamp": 1_768_467_600 + 10 * j, "session": f"conv-{i:04d}", "request": {
                        "model": "claude-sonnet-4-5", "messages": [{"role": "user", "content": "go"}]},
                        "response": {"id": f"msg_{i}_{j}", "usage": {"input_tokens": prompt, "output_tokens": out}}})
                             + "\n")
        ingest.run_report(canonical)
        t_canonical, _ = ingest.best_of(3, lambda: (ingest.cold(), ingest.run_report(canonical))[1])
        print(f"a canonical log of the same {conversations * calls:,} calls: {t_canonical:.2f} s")
        ingest.line("otel_vs_canonical (cold)", t_report / t_canonical, "<= 1.0")
        ingest.line("peak_rss_mb", rss, "<= 300")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
