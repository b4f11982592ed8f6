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
from helpers import shared_case

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


def test_a_long_context_call_names_its_own_1m_limits(shared_logs: Path) -> None:
    """b41: one call of 10 + 10,000 + 290,000 = 300,010 prompt tokens, above the standard 200,000, so the
    window is the 1M beta's: trigger 1,000,000 - 33,000 = 967,000, budget 1,000,000 - 23,000 = 977,000 (what
    plan says too), never the 200,000 window's 167,000."""
    path = shared_case(shared_logs, "b41_long_context_premium.jsonl")
    usage = json.loads(Path(path).read_text().splitlines()[1])["message"]["usage"]
    assert usage["input_tokens"] + usage["cache_creation_input_tokens"] + usage["cache_read_input_tokens"] > 200_000
    note = _limits_note(path)
    assert "window 1,000,000 (claude-sonnet-4-5-20250929): reserve 20,000, trigger 967,000, budget 977,000" in note
    assert "167,000" not in note and "200,000" not in note
    plan = _cli("plan", path)
    assert "reserve 20,000; budget 977,000; trigger 967,000" in plan


def test_a_window_option_names_the_defaults_it_is_judged_by(shared_logs: Path) -> None:
    """--window 100000 on a Claude Code log: a what-if judged by the field defaults (the table's reserve):
    reserve 15,000, budget min(60,000, 85,000) = 60,000, trigger 48,000; not Claude Code's 20,000 nor its
    200,000 window's figures."""
    note = _limits_note(str(shared_logs / FULL), "--window", "100000")
    assert "window 100,000 (claude-opus-4-6): reserve 15,000, trigger 48,000, budget 60,000" in note
    assert "not Claude Code's own rule (--window/config window given)" in note
    assert "20,000" not in note and "200,000" not in note


def test_a_trigger_option_is_the_figure_named(shared_logs: Path) -> None:
    """--trigger 0.5: Claude Code's budget stays 177,000, the trigger is 0.5 of it, 88,500."""
    note = _limits_note(str(shared_logs / FULL), "--trigger", "0.5")
    assert "window 200,000 (claude-opus-4-6): reserve 20,000, trigger 88,500, budget 177,000" in note
    assert "(--trigger given: the option wins)" in note


def test_a_trigger_options_flag_is_not_claude_codes_threshold(shared_logs: Path) -> None:
    """--trigger 0.5: the session (up to 170,251 tokens) crosses 0.5 x Claude Code's budget 177,000 = 88,500; the
    flag says the threshold is the option's fraction of that budget, not Claude Code's auto-compact threshold."""
    doc = json.loads(_cli("check", "--json", "--no-cache", str(shared_logs / FULL), "--trigger", "0.5"))
    crossed = [f for f in doc["flags"] if f["kind"] == "trigger_no_compaction"]
    assert crossed and crossed[0]["evidence"]["trigger_tokens"] == 88_500
    assert "(0.5 of Claude Code's budget 177,000)" in crossed[0]["reason"]
    assert "auto-compact threshold" not in crossed[0]["reason"]


def test_a_codex_rollout_names_its_effective_window(shared_logs: Path) -> None:
    """The rollout states model_context_window 258,400 (95 % of 272,000): trigger 272,000 x 0.9 = 244,800,
    budget 258,400, no reserve."""
    path = shared_logs / "codex-rollout" / "rollout-2025-11-17T15-30-28-019a93b9_codex0.58.0.jsonl"
    assert '"model_context_window":258400' in path.read_text().replace(" ", "")
    note = _limits_note(str(path))
    assert "window 258,400 (gpt-5.1-codex): reserve 0, trigger 244,800, budget 258,400" in note
