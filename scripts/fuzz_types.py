"""Type-confusion fuzz: replace one value at a random path of a real record with another JSON type, run
``report``, ``check``, ``plan`` and ``schema`` on the result, and print every distinct crash site.

    .venv/bin/python scripts/fuzz_types.py [N] [SEED]

Each trial takes a sample log (``sample_logs/`` and ``../shared/sample-logs/``), keeps a window of lines
around one record (all of a one-document file), replaces the value at one path of that record with one of
``7, [], {}, true, null, "x", 1e308, -1, NaN`` and runs the four commands in-process (click's ``CliRunner``).
A command that raises anything but ``SystemExit`` is a crash; crashes are grouped by the innermost frame of
the traceback in ``ctxwatch/``.  The mutation logic is shared with ``tests/test_any_json_type.py``.
"""

from __future__ import annotations

import collections
import os
import random
import sys
import tempfile
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from mutation import WEIRD, mutated_sample, sample_files  # noqa: E402


def crash_site(exc: BaseException) -> str:
    """The innermost ``ctxwatch/`` frame of ``exc``'s traceback, as ``file:line function``."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "/ctxwatch/" in f.filename]
    if not frames:
        return f"{type(exc).__name__} (outside ctxwatch)"
    f = frames[-1]
    return f"{type(exc).__name__} {Path(f.filename).relative_to(ROOT)}:{f.lineno} {f.name}"


def main() -> None:
    from click.testing import CliRunner

    from ctxwatch.cli import main as cli

    os.environ["CTXWATCH_NO_CACHE"] = "1"
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
    files = sample_files()
    sites: dict[str, list[str]] = collections.defaultdict(list)
    runner = CliRunner()
    with tempfile.TemporaryDirectory() as tmp:
        for trial in range(n):
            src = rng.choice(files)
            got = mutated_sample(src, rng.random, rng.choice(WEIRD), rng.randrange, Path(tmp))
            if got is None:
                continue
            path, where = got
            for args in (["report", "--json"], ["check", "--json"], ["plan", "--json"], ["schema", "--json"]):
                res = runner.invoke(cli, [*args, str(path)])
                if res.exception is not None and not isinstance(res.exception, SystemExit):
                    site = crash_site(res.exception)
                    sites[site].append(f"{args[0]} {src.name} {where}")
            if trial % 50 == 49:
                print(f"{trial + 1} trials, {len(sites)} crash sites", file=sys.stderr)
    for site, cases in sorted(sites.items(), key=lambda kv: -len(kv[1])):
        print(f"{len(cases):5d}  {site}\n       e.g. {cases[0]}")
    print(f"{n} trials, {len(sites)} distinct crash sites")


if __name__ == "__main__":
    main()
