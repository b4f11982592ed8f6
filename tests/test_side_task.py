"""A report's analysis worked out in a forked child beside the writing of its calls
(:func:`ctxwatch.engine.parallel.side_task`): the document is byte for byte the one worked out in one process,
and a child that cannot help (it died, it raised, another thread is alive) leaves the work to the parent."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from helpers import report_bytes

from ctxwatch.engine.parallel import side_task
from ctxwatch.output import report as report_mod


def where(x: int) -> tuple[int, int]:
    return os.getpid(), x * 2


def test_the_result_comes_from_a_child_and_is_the_same() -> None:
    pid, value = side_task(where, 21)()
    assert value == 42
    assert pid != os.getpid()  # (worked out in the child: 2 cores here)


def test_with_another_thread_alive_it_runs_here() -> None:
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        pid, value = side_task(where, 5)()
    finally:
        stop.set()
        t.join()
    assert (pid, value) == (os.getpid(), 10)


def dies_in_the_child(parent: int) -> str:
    if os.getpid() != parent:
        os._exit(3)
    return "worked out by the parent"


def fails(x: int) -> int:
    raise ValueError(f"bad {x}")


def test_a_child_that_dies_or_raises_leaves_the_work_to_the_parent() -> None:
    assert side_task(dies_in_the_child, os.getpid())() == "worked out by the parent"
    with pytest.raises(ValueError, match="bad 7"):
        side_task(fails, 7)()
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)  # (no child left unwaited for)


def test_the_report_is_the_same_with_its_analysis_in_a_child(shared_logs: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    import ctxwatch.analysis as analysis_mod

    folder = shared_logs / "claude-code"
    monkeypatch.setattr(report_mod, "SIDE_ANALYSIS_CALLS", 10**9)
    alone = report_bytes(folder, "--no-cache")
    pids = tmp_path / "pids"
    real = analysis_mod.analysis_json

    def spy(run, **kw):  # type: ignore[no-untyped-def]
        with open(pids, "a") as fh:
            fh.write(f"{os.getpid()}\n")
        return real(run, **kw)

    monkeypatch.setattr(report_mod, "SIDE_ANALYSIS_CALLS", 0)
    monkeypatch.setattr(analysis_mod, "analysis_json", spy)
    assert report_bytes(folder, "--no-cache") == alone
    worked_in = [int(x) for x in pids.read_text().split()]
    assert len(worked_in) == 1 and worked_in[0] != os.getpid()  # (once, in the child)
