"""Long-text benchmark: counting one 10 MB text with no whitespace, whole (what ``Tokenizer.count`` did before
it sliced long texts) and sliced (:func:`ctxwatch.tokens.slices`).  Not collected by pytest.

Run: ``.venv/bin/python tests/benchmarks/bench_long_text.py [SIZE_MB]`` (default 10).  For each text it prints
the time of tiktoken's ``encode_ordinary`` on the whole text divided by the time of ``Tokenizer.count`` (the
ratio), the token counts (equal for the first text, within ``FORCED_CUT_MAX_ERROR`` per 64 Ki characters for the
second), and the growth of the peak RSS during each count.  Texts:

* ``one repeated character``: ``"x" * SIZE`` (the tester's case; its slices are all alike, so after the first
  the tokenizer's content cache answers);
* ``random lowercase letters``: one run of random letters (no slice alike: every one is encoded, at tiktoken's
  cost per character for a 64 Ki-character piece; 2026-12 on the 2-core development machine: 25.4 s whole,
  2.8 s sliced).

Each count runs in a fresh subprocess (the peak RSS is per process).  The whole counts are slow (seconds per
MB), so each is timed once; the sliced counts are the best of 3 fresh processes.  Read the ratios, not the
seconds: the machines are shared.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_CODE = """
import json, random, resource, string, sys, time
from ctxwatch.tokens import Tokenizer, get_tokenizer
kind, size, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if kind == "repeated":
    text = "x" * size
else:
    text = "".join(random.Random(0).choices(string.ascii_lowercase, k=size))
tok = Tokenizer("o200k_base")
tok.count("warm up")
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
t = time.perf_counter()
n = len(get_tokenizer("o200k_base")._enc.encode_ordinary(text)) if mode == "whole" else tok.count(text)
dt = time.perf_counter() - t
grew = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - before
print(json.dumps({"seconds": dt, "tokens": n, "rss_growth_mb": grew}))
"""


def measure(kind: str, size: int, mode: str) -> dict[str, float]:
    """Seconds, token count and peak-RSS growth (MB) of one count in a fresh process."""
    out = subprocess.run([sys.executable, "-c", _CODE, kind, str(size), mode], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout
    result: dict[str, float] = json.loads(out)
    return result


def main() -> None:
    size = int(float(sys.argv[1] if len(sys.argv) > 1 else 10) * 1_000_000)
    for kind, label in (("repeated", "one repeated character"), ("random", "random lowercase letters")):
        whole = measure(kind, size, "whole")
        sliced = min((measure(kind, size, "sliced") for _ in range(3)), key=lambda r: r["seconds"])
        ratio = whole["seconds"] / sliced["seconds"]
        print(f"{label}, {size / 1e6:g} MB: whole {whole['seconds']:.2f} s / sliced {sliced['seconds']:.3f} s"
              f" = {ratio:.0f}x; tokens {int(whole['tokens']):,} whole, {int(sliced['tokens']):,}"
              f" sliced; peak RSS +{whole['rss_growth_mb']:.0f} MB whole, +{sliced['rss_growth_mb']:.0f} MB sliced")


if __name__ == "__main__":
    main()
