"""The figures the text views name (the report's limits note, the statusline's distance to compaction, the
flags' reasons) are the limits the calls are judged by: their own window, and the options given.  Expected
values by hand from Claude Code's and Codex's rules (ctxwatch/accounting/harness.py's docstring: at a window W
Claude Code's reserve is 20,000, its trigger W - 33,000, its budget W - 23,000; Codex's trigger is 90/95 of
its effective window, its budget that window) and the field defaults (budget 0.6 of the window capped at the
window less the reserve, trigger 0.8 of the budget, reserve 0.15), the logs read with plain json."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from ctxwatch.cli import main

FULL = "claude-code/spotter_4d5611e5_full.jsonl"


def _cli(*args: str, stdin: str | None = None) -> str:
    res = CliRunner().invoke(main, [*args], input=stdin)
    assert res.exit_code in (0, 1), res.output
    return res.stdout


def _limits_note(path: str, *args: str) -> str:
    notes = [x for x in _cli("report", "--no-cache", path, *args).splitlines() if x.startswith("limits of the ")]
    assert len(notes) == 1, notes
    return notes[0]


def _last_prompt(path: Path) -> int:
    """The last main-context prompt of a Claude Code transcript (input + cache write + cache read)."""
    prompt = 0
    for line in path.read_text().splitlines():
        d = json.loads(line)
        if d.get("type") == "assistant" and not d.get("isSidechain") and (u := d["message"].get("usage")):
            prompt = u["input_tokens"] + u["cache_creation_input_tokens"] + u["cache_read_input_tokens"]
    return prompt


def test_a_trigger_options_flag_is_not_claude_codes_threshold(shared_logs: Path) -> None:
    """--trigger 0.5: the session (up to 170,251 tokens) crosses 0.5 x Claude Code's budget 177,000 = 88,500; the
    flag says the threshold is the option's fraction of that budget, not Claude Code's auto-compact threshold."""
    doc = json.loads(_cli("check", "--json", "--no-cache", str(shared_logs / FULL), "--trigger", "0.5"))
    crossed = [f for f in doc["flags"] if f["kind"] == "trigger_no_compaction"]
    assert crossed and crossed[0]["evidence"]["trigger_tokens"] == 88_500
    assert "(0.5 of Claude Code's budget 177,000)" in crossed[0]["reason"]
    assert "auto-compact threshold" not in crossed[0]["reason"]
