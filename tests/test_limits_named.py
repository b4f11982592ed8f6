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


def _last_prompt(path: Path) -> int:
    """The last main-context prompt of a Claude Code transcript (input + cache write + cache read)."""
    prompt = 0
    for line in path.read_text().splitlines():
        d = json.loads(line)
        if d.get("type") == "assistant" and not d.get("isSidechain") and (u := d["message"].get("usage")):
            prompt = u["input_tokens"] + u["cache_creation_input_tokens"] + u["cache_read_input_tokens"]
    return prompt


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


def test_a_budget_option_below_claude_codes_trigger_is_the_trigger_everywhere(shared_logs: Path) -> None:
    """--budget-fraction 0.5: the budget is min(0.5 x 200,000, 200,000 - 20,000) = 100,000, below Claude Code's
    own trigger 200,000 - 33,000 = 167,000, so the trigger is that budget, 100,000, in report, check and plan
    alike (a plan's trigger is a fraction of its budget, at most 1); never a trigger above the budget."""
    path = str(shared_logs / FULL)
    note = _limits_note(path, "--budget-fraction", "0.5")
    assert "window 200,000 (claude-opus-4-6): reserve 20,000, trigger 100,000, budget 100,000" in note
    assert "167,000" not in note
    assert "reserve 20,000; budget 100,000; trigger 100,000" in _cli("plan", path, "--budget-fraction", "0.5")
    doc = json.loads(_cli("check", "--json", "--no-cache", path, "--budget-fraction", "0.5"))
    crossed = [f for f in doc["flags"] if f["kind"] == "trigger_no_compaction"]
    assert crossed and crossed[0]["evidence"]["trigger_tokens"] == 100_000
    assert "(the budget: Claude Code's own auto-compact threshold is above it)" in crossed[0]["reason"]


def test_a_codex_rollout_names_its_effective_window(shared_logs: Path) -> None:
    """The rollout states model_context_window 258,400 (95 % of 272,000): trigger 272,000 x 0.9 = 244,800,
    budget 258,400, no reserve."""
    path = shared_logs / "codex-rollout" / "rollout-2025-11-17T15-30-28-019a93b9_codex0.58.0.jsonl"
    assert '"model_context_window":258400' in path.read_text().replace(" ", "")
    note = _limits_note(str(path))
    assert "window 258,400 (gpt-5.1-codex): reserve 0, trigger 244,800, budget 258,400" in note


def test_statusline_with_a_window_option_uses_the_calls_own_trigger(shared_logs: Path) -> None:
    """--window 100000: the prompt, 106,060, is past the what-if's trigger 48,000 by 58,060; the compaction
    Claude Code made at 170,251 in its 200,000 window is no distance in this one."""
    path = shared_logs / FULL
    assert _last_prompt(path) == 106_060
    out = _cli("statusline", "--no-cache", str(path), "--window", "100000")
    assert out.startswith("ctx 106% of 100k · ")
    assert " · trigger crossed by 58k · " in out and "seen at" not in out


def test_statusline_with_a_trigger_option_uses_it(shared_logs: Path) -> None:
    """--trigger 0.5: 106,060 is past 88,500 by 17,560."""
    out = _cli("statusline", "--no-cache", str(shared_logs / FULL), "--trigger", "0.5")
    assert " · trigger crossed by 18k · " in out and "seen at" not in out


def test_the_hooks_window_agreeing_with_the_log_keeps_claude_codes_limits(shared_logs: Path) -> None:
    """The hook stating the 200,000 the transcript's model has: Claude Code's limits, as the PATH form gives
    (170,251 - 106,060 = 64,191 to the size it compacted at), and no flag of ctxwatch's own 96,000 trigger."""
    hook = {"transcript_path": str(shared_logs / FULL), "context_window": {"context_window_size": 200_000}}
    out = _cli("statusline", "--no-cache", stdin=json.dumps(hook))
    assert out.startswith("ctx 53% of 200k · ")
    assert " · 64k to compaction (seen at 170k) · " in out and "trigger_no_compaction" not in out


def _turn(k: int, prompt: int) -> list[dict]:
    """One Claude Code turn on claude-sonnet-4-5 reporting a prompt of ``prompt`` tokens (5 + 100 + the rest
    read from the cache)."""
    ts = f"2025-01-01T00:{k:02d}:00Z"
    return [{"type": "user", "message": {"role": "user", "content": f"turn {k}"}, "uuid": f"u{k}",
             "sessionId": "s1", "timestamp": ts},
            {"type": "assistant", "requestId": f"r{k}", "uuid": f"a{k}", "sessionId": "s1", "timestamp": ts,
             "message": {"id": f"msg_{k}", "model": "claude-sonnet-4-5", "role": "assistant",
                         "content": [{"type": "text", "text": f"step {k} done"}],
                         "usage": {"input_tokens": 5, "cache_creation_input_tokens": 100,
                                   "cache_read_input_tokens": prompt - 105, "output_tokens": 300}}}]


def test_a_compaction_seen_in_another_window_is_no_distance(tmp_path: Path) -> None:
    """Claude Code compacted at 160,000 in the 200,000 window, then a prompt of 250,000 (past 200,000: the 1M
    beta's window from that call on).  The line is of that call, 250,000 of 1,000,000: its trigger is
    1,000,000 - 33,000 = 967,000, 717,000 away; the 160,000 compaction point was the 200,000 window's."""
    boundary = [{"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
                 "compactMetadata": {"trigger": "auto", "preTokens": 160_000}, "uuid": "b1", "sessionId": "s1",
                 "timestamp": "2025-01-01T00:01:30Z"}]
    log = tmp_path / "s1.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in [*_turn(1, 150_000), *boundary, *_turn(2, 40_000),
                                                          *_turn(3, 250_000)]))
    out = _cli("statusline", "--no-cache", str(log))
    assert out.startswith("ctx 25% of 1.0M · ")
    assert " · 717k to trigger · " in out and "seen at" not in out


def test_the_hooks_own_window_gets_claude_codes_limits_at_that_window(tmp_path: Path) -> None:
    """The hook stating 1,000,000 for a session whose prompts never passed 200,000 (so nothing in the log says
    1M): Claude Code's trigger at that window, 1,000,000 - 20,000 - 13,000 = 967,000, is 967,000 - 180,000 =
    787,000 away; ctxwatch's defaults would say 0.8 x 0.6 x 1,000,000 - 180,000 = 300,000."""
    log = tmp_path / "s1.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in [*_turn(1, 120_000), *_turn(2, 180_000)]))
    hook = {"transcript_path": str(log), "context_window": {"context_window_size": 1_000_000}}
    out = _cli("statusline", "--no-cache", stdin=json.dumps(hook))
    assert out.startswith("ctx 18% of 1.0M · ")
    assert " · 787k to trigger" in out
    # (a --window is the user's own what-if, judged by ctxwatch's defaults)
    out = _cli("statusline", "--no-cache", "--window", "1000000", stdin=json.dumps(hook))
    assert " · 300k to trigger" in out


def test_the_hooks_window_is_not_the_one_earlier_compactions_ran_in(shared_logs: Path) -> None:
    """The spotter session compacted at 170,251 (in its 200,000 window); the hook now states 1,000,000: the
    line measures to Claude Code's trigger at 1M, 967,000 - 106,060 = 860,940, not to the old compaction."""
    hook = {"transcript_path": str(shared_logs / FULL), "context_window": {"context_window_size": 1_000_000}}
    out = _cli("statusline", "--no-cache", stdin=json.dumps(hook))
    assert out.startswith("ctx 11% of 1.0M · ")
    assert " · 861k to trigger · " in out and "seen at" not in out


def test_the_dashboards_limits_line_says_whose_rule_each_limit_is(shared_logs: Path) -> None:
    """The bar's limits line of the spotter's last call with --trigger 0.5: Claude Code's budget 177,000, the
    option's trigger 0.5 x 177,000 = 88,500, so the rule named is Claude Code's budget's alone."""
    from types import SimpleNamespace

    from ctxwatch.config import Settings
    from ctxwatch.engine import load_run
    from ctxwatch.ui.widgets.limits import thresholds_line

    settings = Settings(trigger=0.5)
    call = [c for c in load_run(str(shared_logs / FULL), settings=settings).calls if c.context == "main"][-1]
    parts = SimpleNamespace(reserve=20_000, free=200_000 - 20_000 - 106_060, window=200_000, trigger=88_500,
                            budget=177_000)
    line = thresholds_line(call, parts, settings, 400).plain
    assert "T trigger 88k · B budget 177k (Claude Code's budget)" in line
