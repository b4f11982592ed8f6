"""A call that reports no usage has one size everywhere: the table's used and free, the flags, the forecast and
the status line name the same prompt (calibrated where the tokenizer is not the model's own, raw where it is)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from ctxwatch.cli import main

WINDOW = 4000
RESERVE = 200


def _records(model: str, reported: list[int | None]) -> list[dict]:
    """8 calls of one conversation, each re-sending a growing history; call ``i`` reports ``reported[i]``."""
    out = []
    for i, rep in enumerate(reported):
        words = " ".join(f"word{k}" for k in range(60 * (i + 1) * (i + 1)))
        rec: dict = {"timestamp": f"2025-05-01T10:00:0{i}Z", "session": "s", "window": WINDOW,
                     "request": {"model": model, "max_tokens": RESERVE,
                                 "messages": [{"role": "system", "content": "Reply as JSON."},
                                              {"role": "user", "content": words}]},
                     "response": {"choices": [{"message": {"role": "assistant", "content": '{"ok": 1}'}}]}}
        if rep is not None:
            rec["response"]["usage"] = {"prompt_tokens": rep, "completion_tokens": 5}
        out.append(rec)
    return out


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _report(path: Path) -> dict:
    res = CliRunner().invoke(main, ["report", "--json", "--no-cache", str(path)])
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


@pytest.mark.parametrize("model", ["gpt-4o", "claude-sonnet-4-5"])
def test_a_call_without_usage_is_flagged_at_the_size_the_table_shows(tmp_path: Path, model: str) -> None:
    """Calls 1-7 report 80 % of ctxwatch's estimate (a log showing more than was counted), call 8 reports
    nothing and overflows.  The flags took call 8's size as the estimate x the stream's median ratio (3,488 for
    a 4,363-token estimate) where the table showed the raw estimate for a model counted with its own tokenizer
    (used 109 %, free -563): no reserve_breached beside a negative free, and a forecast below the call's own
    size.  Now the flag's prompt is the table's: window - reserve - free."""
    bare = _report(_write(tmp_path / "bare.jsonl", _records(model, [None] * 8)))
    estimates = [c["prompt_tokens_estimated"] for c in bare["calls"]]
    reported: list[int | None] = [round(0.8 * e) for e in estimates[:7]]
    log = _write(tmp_path / "cal.jsonl", _records(model, [*reported, None]))
    doc = _report(log)
    last = doc["calls"][-1]
    assert last["prompt_tokens_reported"] is None and last["free_tokens"] is not None
    shown = WINDOW - RESERVE - last["free_tokens"]  # (the prompt the table's free and used % stand for)
    assert last["free_tokens"] < 0  # (this call cannot fit)
    assert round(shown / WINDOW, 4) == pytest.approx(last["used_fraction"], abs=1e-4)
    (breach,) = [f for f in doc["flags"] if f["kind"] == "reserve_breached" and f["call"] == 7]
    assert breach["evidence"]["prompt_tokens"] == shown
    assert breach["evidence"]["free_tokens"] == last["free_tokens"]
    assert not any(f["kind"] == "window_forecast" and f["call"] == 7 for f in doc["flags"])  # (crossed, not ahead)
    line = CliRunner().invoke(main, ["statusline", str(log)]).output
    used = re.match(r"ctx (\d+)% of", line)
    assert used is not None and int(used.group(1)) == round(100 * shown / WINDOW), line
