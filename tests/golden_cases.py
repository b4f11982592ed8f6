"""The golden cases: every sample log (``sample_logs/`` and ``../shared/sample-logs/``), each file alone and each
folder of them as one run, under ``report --json``, ``check --json`` and ``plan --json --call -1``.

Their outputs were saved before the engine and the tree were redesigned (``tests/golden/``); ``test_golden.py``
checks that they still come out byte for byte.  ``python tests/golden_cases.py`` saves them again: do that only
for a change of numbers that is meant, and say why in the commit.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from click.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden"
SHARED = Path(os.environ.get("CTXWATCH_SHARED", ROOT.parent / "shared")) / "sample-logs"
#: (set name, its folder): paths are given relative to the folder, so the outputs do not depend on where it is.
SETS = (("project", ROOT / "sample_logs"), ("shared", SHARED))
COMMANDS = {"report": ["report", "--json"], "check": ["check", "--json"], "plan": ["plan", "--json", "--call", "-1"]}
LOG_ENDINGS = (".jsonl", ".json", ".traj", ".eval")


def inputs(folder: Path) -> Iterator[str]:
    """Every log file under ``folder``, then every folder that holds one, as paths relative to ``folder``."""
    files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")
                   if p.is_file() and p.name.endswith(LOG_ENDINGS))
    yield from files
    yield from sorted({str(Path(f).parent.as_posix()) for f in files if "/" in f})


def golden_name(set_name: str, rel: str, command: str) -> str:
    """The file of one case's saved output: ``<set>/<path with / as __>.<command>.out``."""
    return f"{set_name}/{rel.replace('/', '__')}.{command}.out"


def cases() -> Iterator[tuple[str, Path, str, str]]:
    """``(set name, set folder, input path, command)`` of every case whose set folder exists."""
    for set_name, folder in SETS:
        if folder.is_dir():
            for rel in inputs(folder):
                for command in COMMANDS:
                    yield set_name, folder, rel, command


#: The modification time of every file of a pinned copy (2026-01-01 00:00 UTC): a folder is read oldest file
#: first, so the times a checkout or a regenerated sample left must not decide the order (the names do).
PINNED_MTIME_NS = 1_767_225_600 * 10**9


@functools.cache
def pinned_copy(folder: Path) -> Path:
    """A copy of ``folder`` (made once per process) whose files all have :data:`PINNED_MTIME_NS`."""
    top = tempfile.mkdtemp(prefix="ctxwatch-golden-")
    atexit.register(shutil.rmtree, top, ignore_errors=True)
    dest = Path(top) / folder.name
    shutil.copytree(folder, dest, symlinks=True)
    for p in dest.rglob("*"):
        if p.is_file() and not p.is_symlink():
            os.utime(p, ns=(PINNED_MTIME_NS, PINNED_MTIME_NS))
    return dest


def run_case(folder: Path, rel: str, command: str) -> bytes:
    """The exit status, standard output and standard error of one case, run in-process with a pinned copy of
    ``folder`` (:func:`pinned_copy`) as the working folder."""
    from ctxwatch.cli import main

    old = os.getcwd()
    os.chdir(pinned_copy(folder))
    try:
        result = CliRunner().invoke(main, [*COMMANDS[command], rel], catch_exceptions=True)
    finally:
        os.chdir(old)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return (f"exit {result.exit_code}\n".encode() + result.stdout_bytes + b"\n--- stderr\n"
            + (result.stderr_bytes or b""))


def main() -> None:
    """Save every case's output under ``tests/golden/``."""
    os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="ctxwatch-no-config-")  # (no user config file)
    n = 0
    for set_name, folder, rel, command in cases():
        out = GOLDEN / golden_name(set_name, rel, command)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(run_case(folder, rel, command))
        n += 1
    print(f"saved {n} outputs under {GOLDEN}", file=sys.stderr)


if __name__ == "__main__":
    main()
