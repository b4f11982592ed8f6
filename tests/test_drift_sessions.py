"""Format-drift flags of every session of a log are final, not only the last session's.

The two-session log is a real log (the demo run) written twice, as sessions ``s0`` and ``s1`` with distinct
response ids; the first session's flags must be those of the log read alone.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from test_analysis import b29_records, write

from ctxwatch.analysis import analysis_json
from ctxwatch.cli import main
from ctxwatch.engine import load_many, load_run

DEMO = Path(__file__).resolve().parent.parent / "sample_logs" / "openai_chat_demo.jsonl"


def as_session(records: list[dict[str, Any]], session: str) -> list[dict[str, Any]]:
    """``records`` copied into session ``session``, response ids suffixed so that no call is a duplicate."""
    out = []
    for r in records:
        r = json.loads(json.dumps(r))
        r["session"] = session
        resp = r.get("response")
        if isinstance(resp, dict) and "id" in resp:
            resp["id"] += f"-{session}"
        out.append(r)
    return out


def drift_flags(path: Path) -> list[tuple[str, str, int, str]]:
    """``(kind, severity, call, reason)`` of the format_drift flags of the log ``path``, in call order."""
    doc = analysis_json(load_many([str(path)], None) if path.is_dir() else load_run(str(path)))
    return [(f["kind"], f["severity"], f["call"], f["reason"]) for f in doc["flags"] if f["kind"] == "format_drift"]


def test_first_sessions_drift_flags_equal_the_log_read_alone(tmp_path: Path) -> None:
    records = [json.loads(line) for line in DEMO.read_text().splitlines() if line.strip()]
    alone = drift_flags(write(tmp_path, as_session(records, "s0"), "alone.jsonl"))
    assert alone and all(sev in ("info", "warn") and reason for _, sev, _, reason in alone)
    both = drift_flags(write(tmp_path, as_session(records, "s0") + as_session(records, "s1"), "two.jsonl"))
    first = [f for f in both if f[2] < len(records)]
    assert first == alone


def test_check_fails_on_warn_when_only_the_first_session_drifts(tmp_path: Path) -> None:
    """Session s0 drifts (B29); s1 starts afresh with a one-turn request of its own and never drifts."""
    s0 = as_session(b29_records(), "s0")
    s1 = as_session(b29_records()[:5], "s1")
    for k, r in enumerate(s1):
        r["timestamp"] = f"2025-06-02T11:00:{k:02d}Z"
    first = s1[0]["request"]["messages"]
    s1[0]["request"]["messages"] = [first[0], first[2]]  # (its own first message, of the reported size)
    path = write(tmp_path, s0 + s1, "drift_first.jsonl")
    r = CliRunner().invoke(main, ["check", str(path), "--window", "128000", "--fail-on", "warn"])
    assert r.exit_code == 1, r.stdout
    assert "format_drift" in r.stdout


def test_a_folder_of_two_session_files_gives_each_its_final_flags(tmp_path: Path) -> None:
    """A folder's files are read oldest first into one run: the older file's session keeps its own flags."""
    records = [json.loads(line) for line in DEMO.read_text().splitlines() if line.strip()]
    alone = drift_flags(write(tmp_path, as_session(records, "s0"), "alone.jsonl"))
    folder = tmp_path / "logs"
    folder.mkdir()
    old = write(folder, as_session(records, "s0"), "a.jsonl")
    write(folder, as_session(records, "s1"), "b.jsonl")
    os.utime(old, (1_700_000_000, 1_700_000_000))
    flags = drift_flags(folder)
    assert [f for f in flags if f[2] < len(records)] == alone
    assert [(k, s, c - len(records)) for k, s, c, _ in flags if c >= len(records)] == [f[:3] for f in alone]


def drift_evidence(path: Path) -> list[dict[str, Any]]:
    """The whole format_drift, echo and collapse flag objects of the log ``path``, in call order."""
    doc = analysis_json(load_run(str(path)))
    return [f for f in doc["flags"] if f["kind"] in ("format_drift", "echo", "response_collapse")]


def test_a_new_session_that_resends_the_old_first_message_starts_the_response_checks_over(tmp_path: Path) -> None:
    """Session s1 starts with the same first message as s0 (a rerun of the same task): a new conversation all
    the same, so s0's drift episode ends with s0 and s1's responses neither extend nor close it."""
    s0 = as_session(b29_records(), "s0")
    s1 = as_session(b29_records()[:5], "s1")
    for k, r in enumerate(s1):
        r["timestamp"] = f"2025-06-02T11:00:{k:02d}Z"
    alone = drift_evidence(write(tmp_path, s0, "alone.jsonl"))
    assert alone and any(f["kind"] == "format_drift" for f in alone)
    both = drift_evidence(write(tmp_path, s0 + s1, "rerun.jsonl"))
    assert [f for f in both if f["call"] < len(s0)] == alone
