"""The runnable examples in ``examples/``: they run as shown in docs/formats.md and their logs read back clean."""

from __future__ import annotations

import importlib.util
import inspect
import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from ctxwatch.cli import main
from ctxwatch.engine import load_run

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "budget_loop.py"


def example_steps() -> int:
    """The default number of steps of ``budget_loop.main``, read from its signature (not copied here)."""
    spec = importlib.util.spec_from_file_location("budget_loop", EXAMPLE)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return inspect.signature(mod.main).parameters["steps"].default


def test_budget_loop_runs_and_its_log_has_no_trigger_warning(tmp_path):
    # run as docs/formats.md shows it, from a fresh directory: it writes budget_loop.jsonl there
    res = subprocess.run([sys.executable, str(EXAMPLE)], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                         check=False)
    assert res.returncode == 0, res.stderr
    steps = example_steps()
    lines = res.stdout.splitlines()
    assert len(lines) == steps and all(line.startswith("step ") for line in lines)
    log = tmp_path / "budget_loop.jsonl"

    run = load_run(str(log))
    assert len(run.calls) == steps and not run.issues
    assert all(c.window == 24_000 and c.model == "gpt-4o" for c in run.calls)

    res = CliRunner().invoke(main, ["check", str(log), "--json"])
    assert res.exit_code == 0, res.output
    kinds = [f["kind"] for f in json.loads(res.output)["flags"]]
    # the loop compacts (several times) at the trigger, and each compaction leaves room below it
    assert kinds.count("compaction") >= 2
    assert "trigger_no_compaction" not in kinds and "over_budget" not in kinds
    assert set(kinds) == {"compaction"}


def test_budget_loop_counts_each_prompt_as_report_estimates_it(tmp_path):
    # The library compacts at the trigger check flags only when it counts a prompt as report does: each step's
    # "after" (the prompt it sent) must equal the logged call's estimate, reply primer included (it was 3 off).
    res = subprocess.run([sys.executable, str(EXAMPLE)], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                         check=False)
    assert res.returncode == 0, res.stderr
    sent = [int(line.split("-> ")[1].split(" tokens")[0].replace(",", "")) for line in res.stdout.splitlines()]
    run = load_run(str(tmp_path / "budget_loop.jsonl"))
    assert [c.prompt_estimated for c in run.calls] == sent
