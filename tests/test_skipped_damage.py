"""A damaged line that a format's byte-level pre-filter would skip unparsed is still a counted issue of its line."""

from __future__ import annotations

import json
from pathlib import Path

from ctxwatch.engine import load_run
from ctxwatch.model import is_bad_line


def _bad_lines(path: Path) -> list[int]:
    return sorted({i.line for i in load_run(str(path)).issues if is_bad_line(i)})


def test_a_codex_event_msg_line_cut_midway_is_an_issue(shared_logs: Path, tmp_path: Path) -> None:
    """A Codex ``event_msg`` line the reader has no use for (``agent_reasoning``, skipped by its filter), cut in
    the middle: an issue at its line; before, the filter skipped it unseen."""
    src = shared_logs / "codex-rollout" / "rollout-2025-11-17T15-30-28-019a93b9_codex0.58.0.jsonl"
    lines = src.read_text(encoding="utf-8").splitlines()
    assert not _bad_lines(src)
    n = next(i for i, ln in enumerate(lines)
             if json.loads(ln)["type"] == "event_msg" and json.loads(ln)["payload"]["type"] == "agent_reasoning")
    lines[n] = lines[n][:-10]  # (the event's type is still there: the filter would skip it)
    out = tmp_path / "cut.jsonl"
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert _bad_lines(out) == [n + 1]


def test_a_claude_code_progress_line_broken_inside_is_an_issue(shared_logs: Path, tmp_path: Path) -> None:
    """A Claude Code ``progress`` line (taken from its raw bytes by the filter) with a byte broken inside, still
    ending in ``}``: an issue at its line."""
    src = shared_logs / "claude-code" / "spotter_4d5611e5_head200.jsonl"
    lines = src.read_text(encoding="utf-8").splitlines()
    assert not _bad_lines(src)
    n = next(i for i, ln in enumerate(lines) if json.loads(ln).get("type") == "progress")
    cut = lines[n].index(',"', len(lines[n]) // 2)
    lines[n] = lines[n][:cut] + ",," + lines[n][cut + 1:]
    assert lines[n].endswith("}") and lines[n].startswith('{"parentUuid":')
    out = tmp_path / "broken.jsonl"
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert _bad_lines(out) == [n + 1]
