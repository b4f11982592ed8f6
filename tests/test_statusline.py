"""``ctxwatch statusline``: one line from Claude Code's statusLine hook JSON (or a PATH, for tmux), its numbers
checked against the transcript read with plain json."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ctxwatch.cli import main
from ctxwatch.output.statusline import short

FULL = "claude-code/spotter_4d5611e5_full.jsonl"


def last_prompt_and_compaction(path: Path) -> tuple[int, int]:
    """The last main-context assistant line's prompt (input + cache write + cache read, as Anthropic reports
    it) and the ``preTokens`` of the transcript's last ``compact_boundary``, read with plain json."""
    prompt = pre = 0
    for line in path.read_text().splitlines():
        d = json.loads(line)
        if d.get("type") == "assistant" and not d.get("isSidechain") and (u := d["message"].get("usage")):
            prompt = u["input_tokens"] + u["cache_creation_input_tokens"] + u["cache_read_input_tokens"]
        if d.get("type") == "system" and d.get("subtype") == "compact_boundary":
            pre = d["compactMetadata"]["preTokens"]
    return prompt, pre


def run_cli(args: list[str], stdin: str | None = None) -> tuple[int, str]:
    res = CliRunner().invoke(main, ["statusline", "--no-cache", *args], input=stdin)
    return res.exit_code, res.stdout


def test_short_counts() -> None:
    assert [short(n) for n in (None, 0, 950, 1234, 9949, 9950, 64191, 999_499, 1_000_000, 1_234_567)] == \
        ["?", "0", "950", "1.2k", "9.9k", "10k", "64k", "999k", "1.0M", "1.2M"]


def test_statusline_of_a_real_transcript(shared_logs: Path) -> None:
    """The spotter session: 106,060 tokens at its last call (1 + 7,330 + 98,729, summed from its last
    usage) of Claude Code's 200,000 window = 53 %; it compacted at 170,251 (its compact_boundary), 64,191
    tokens away; the worst flag of the episode since that compaction is an info (an output count that is a
    streaming placeholder): at 106,060 the session is below Claude Code's own auto-compact trigger (167,000), which
    is the default for its logs, so nothing warns."""
    path = shared_logs / FULL
    prompt, pre = last_prompt_and_compaction(path)
    assert (prompt, pre) == (106_060, 170_251)
    code, out = run_cli([str(path)])
    assert code == 0
    fields = out.strip().split(" · ")
    assert fields[0] == f"ctx {100 * prompt / 200_000:.0f}% of 200k" == "ctx 53% of 200k"
    assert fields[2] == f"{short(pre - prompt)} to compaction (seen at 170k)" == "64k to compaction (seen at 170k)"
    assert fields[3].startswith("i output_placeholder #")
    assert len(out.splitlines()) == 1


def test_statusline_from_the_hook_json(shared_logs: Path, tmp_path: Path) -> None:
    """Fed Claude Code's hook JSON: the transcript it names, in the window it states (1M here: 10.6 %)."""
    path = tmp_path / "session.jsonl"
    shutil.copyfile(shared_logs / FULL, path)
    prompt, _ = last_prompt_and_compaction(path)
    hook = {"session_id": "4d5611e5", "transcript_path": str(path), "cwd": str(tmp_path),
            "model": {"id": "claude-opus-4-6", "display_name": "Opus"},
            "context_window": {"context_window_size": 1_000_000}}
    code, out = run_cli([], json.dumps(hook))
    assert code == 0
    assert out.startswith(f"ctx {100 * prompt / 1_000_000:.0f}% of 1.0M · ")


def test_a_bad_config_file_is_the_hooks_line(shared_logs: Path, tmp_path: Path) -> None:
    """Fed by the hook, a config file with a typo (``windw``) is said as the status line, status 0 (Claude Code
    blanked the line of the usage error, status 2); given a PATH, the same file is still a usage error."""
    cfg = tmp_path / "config.toml"
    cfg.write_text("windw = 5\n")
    hook = {"transcript_path": str(shared_logs / FULL)}
    code, out = run_cli(["--config", str(cfg)], json.dumps(hook))
    assert code == 0 and len(out.splitlines()) == 1, out
    assert out.startswith(f"ctxwatch: {cfg}: unknown key(s) windw; known: ")
    code, _ = run_cli(["--config", str(cfg), str(shared_logs / FULL)])
    assert code == 2


@pytest.mark.parametrize("stdin", ["", "not json", "{}", '{"transcript_path": null}'])
def test_the_hook_without_a_transcript_still_prints_a_line(stdin: str) -> None:
    """Claude Code blanks the status line of a failing command: a problem is the line, status 0."""
    code, out = run_cli([], stdin)
    assert code == 0 and out.startswith("ctxwatch: ") and len(out.splitlines()) == 1


def test_a_folder_gives_its_newest_session(shared_logs: Path, tmp_path: Path) -> None:
    """``statusline FOLDER`` (tmux): the newest session by its last call, not a subagent transcript."""
    project = tmp_path / "proj"
    (project / "s" / "subagents").mkdir(parents=True)
    shutil.copyfile(shared_logs / FULL, project / "s.jsonl")
    shutil.copyfile(shared_logs / "claude-code/spotter_4d5611e5_subagents_agent-a2898e3.jsonl",
                    project / "s" / "subagents" / "agent-a2898e3.jsonl")
    shutil.copyfile(shared_logs / "claude-code/ccviewer_1af7fc5e_v1.0.98_init.jsonl", project / "old.jsonl")
    code, out = run_cli([str(project)])
    assert code == 0 and out.startswith("ctx 53% of 200k")


def test_a_missing_path_is_status_2(tmp_path: Path) -> None:
    code, _ = run_cli([str(tmp_path / "nope.jsonl")])
    assert code == 2


def test_statusline_never_loads_the_dashboard(shared_logs: Path) -> None:
    """Run on every prompt: neither textual nor rich is imported."""
    code = ("import sys\nfrom ctxwatch.cli import main\n"
            f"try:\n    main(['statusline', '--no-cache', {str(shared_logs / FULL)!r}])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines()[-1] == "[]"


def test_a_log_of_two_sessions_gives_the_last_calls_own_trigger(tmp_path: Path) -> None:
    """Session A on claude-sonnet-4-5 (200,000 window), then session B on gpt-4o-mini (128,000) last in the file:
    the line is B's call, and so is its distance to the trigger. By hand: B's reserve is max_tokens 2,000, its
    budget 0.6 x 128,000 = 76,800, its trigger 0.8 x 76,800 = 61,440; its prompt 1,000; 60,440 to go (it gave
    A's trigger, 96,000, less B's prompt)."""
    def rec(session: str, model: str, prompt: int, ts: str) -> dict:
        return {"timestamp": ts, "session": session,
                "request": {"model": model, "max_tokens": 2000, "messages": [{"role": "user", "content": "hi"}]},
                "response": {"usage": {"prompt_tokens": prompt, "completion_tokens": 5}}}

    log = tmp_path / "two.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in (
        rec("A", "claude-sonnet-4-5", 5000, "2026-01-15T10:00:00Z"),
        rec("A", "claude-sonnet-4-5", 6000, "2026-01-15T10:00:30Z"),
        rec("B", "gpt-4o-mini", 1000, "2026-01-15T09:00:00Z"))))
    code, out = run_cli([str(log)])
    assert code == 0
    assert "of 128k" in out and "60k to trigger" in out and "96k" not in out


def test_statusline_given_a_dash_says_what_it_reads() -> None:
    res = CliRunner().invoke(main, ["statusline", "-"], input="{}")
    assert res.exit_code == 2 and "standard input when given no PATH: drop the '-'" in res.output


def test_after_a_compaction_with_no_size_the_history_is_unknown_too(shared_logs: Path) -> None:
    """A Codex rollout whose last record of a call (``token_count``) comes before a ``compacted`` record: the
    occupancy now is unknown, and so is the history (the last call's is gone); the floor is still sent."""
    import json

    path = shared_logs / "codex-rollout" / "derived_schema_fixture_agent-sessions_codex_small.jsonl"
    kinds = [(r.get("type"), (r.get("payload") or {}).get("type")) for r in map(json.loads, path.open())]
    last_count = max(i for i, k in enumerate(kinds) if k == ("event_msg", "token_count"))
    assert any(k[0] == "compacted" for k in kinds[last_count:])
    code, out = run_cli([str(path)])
    assert code == 0 and out.startswith("ctx ? of ") and " / hist ? · " in out and "floor ? " not in out


@pytest.mark.parametrize(("value", "kind"), [("123", "number"), ("[]", "array"), ('{"a": 1}', "object"),
                                             ("true", "boolean")])
def test_a_transcript_path_of_another_type_says_so(value: str, kind: str) -> None:
    """``{"transcript_path": 123}`` said "no transcript yet", as before a session's first message; it names the
    field and its type now, still as the line with status 0."""
    code, out = run_cli([], '{"transcript_path": ' + value + '}')
    assert code == 0
    assert out == f"ctxwatch: the statusLine JSON's transcript_path is a JSON {kind}, not a path\n"


def test_a_last_call_with_no_size_leaves_the_line_as_it_was(shared_logs: Path, tmp_path: Path) -> None:
    """A junk assistant line appended (usage a string, no model, no session): a call of no known size, reported
    as an issue, passed over as an implausible one is: the line is the one of the call before."""
    path = tmp_path / "session.jsonl"
    shutil.copyfile(shared_logs / FULL, path)
    _, want = run_cli([str(path), "--no-cache"])
    with open(path, "a") as fh:
        fh.write('{"type":"assistant","message":{"id":1234,"usage":"lots"}}\n')
    code, out = run_cli([str(path), "--no-cache"])
    assert code == 0 and out == want and out.startswith("ctx 53% of 200k · ")


@pytest.mark.parametrize(("stdin", "says"), [
    ('{"transcript_path": "x.jsonl", "context_window": {"context_window_size": 1e400}}', "cannot be read (number"),
    ("[1, 2]", "is no object"), ("", "no statusLine JSON")])
def test_the_hooks_json_that_cannot_be_used_is_named(stdin: str, says: str) -> None:
    """JSON given but unreadable (a number past a double's range), or not an object, is said to be so rather than
    said to be missing."""
    code, out = run_cli([], stdin)
    assert code == 0 and out.startswith("ctxwatch: the statusLine JSON" if says != "no statusLine JSON"
                                        else "ctxwatch: no statusLine JSON") and says in out
    assert len(out.splitlines()) == 1
