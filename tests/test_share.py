"""A fraction of a window in tokens (budget, trigger, reserve) is the whole number a person reckons: 0.285 of
200,000 is 57,000, not the 56,999 that truncating the float product 56,999.99999999999 gave."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from ctxwatch.cli import main
from ctxwatch.config import share

FULL = ("claude-code", "spotter_4d5611e5_full.jsonl")


def test_share_rounds_down_to_the_token_a_person_reckons() -> None:
    assert share(200_000, 0.285) == 57_000 and share(200_000, 0.29) == 58_000
    assert share(200_000, 0.57) == 114_000 and share(114_000, 0.58) == 66_120
    assert share(1001, 0.5) == 500 and share(200_000, 0.15) == 30_000  # (a true fraction still rounds down)


def test_plan_and_report_give_those_budgets(shared_logs: Path) -> None:
    path = str(shared_logs.joinpath(*FULL))
    text = CliRunner().invoke(main, ["plan", path, "--call", "139", "--budget-fraction", "0.285"]).output
    assert re.search(r"budget 57,000; trigger 57,000", text), text
    doc = json.loads(CliRunner().invoke(main, ["report", path, "--json", "--budget-fraction", "0.57",
                                               "--trigger", "0.58"]).output)
    evidence = [f.get("evidence", {}) for f in doc["flags"]]
    assert {e["budget_tokens"] for e in evidence if "budget_tokens" in e} == {114_000}
    assert {e["trigger_tokens"] for e in evidence if "trigger_tokens" in e} == {66_120}
