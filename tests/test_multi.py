"""Folders of logs: a parallel read gives exactly the serial read's report."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ctxwatch import multi
from ctxwatch.config import Settings
from ctxwatch.report import report_json


def _folder(tmp_path: Path, shared_logs: Path) -> Path:
    """A projects-like folder: every Claude Code sample, a Codex rollout, a file with damaged lines and one in
    no known format."""
    root = tmp_path / "projects"
    for i, f in enumerate(sorted((shared_logs / "claude-code").glob("*.jsonl"))):
        dest = root / f"proj{i % 3}" / f.name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(f, dest)
    codex = next((shared_logs / "codex-rollout").glob("rollout-*.jsonl"))
    shutil.copy(codex, root / "proj0" / codex.name)
    good = (shared_logs / "claude-code" / "spotter_short.jsonl").read_text().splitlines()
    (root / "proj1" / "damaged.jsonl").write_text("\n".join([good[0], "{not json", *good[1:], '{"cut": ']))
    (root / "proj2" / "notes.jsonl").write_text('{"hello": "world"}\n')
    return root


def test_a_parallel_folder_read_equals_the_serial_one(tmp_path: Path, shared_logs: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    root = _folder(tmp_path, shared_logs)
    serial = report_json(multi.load_many([str(root)], None, Settings()))
    # Small thresholds so that this small folder is split over workers, a few files per task.
    monkeypatch.setattr(multi, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(multi, "TASK_BYTES", 200_000)
    used: list[bool] = []
    real = multi._parallel_outputs

    def spy(files: list, fmt: str | None) -> object:
        res = real(files, fmt)
        used.append(res is not None)
        return res

    monkeypatch.setattr(multi, "_parallel_outputs", spy)
    parallel = report_json(multi.load_many([str(root)], None, Settings(), parallel=True))
    assert used == [True]
    assert parallel == serial
    # The damaged lines are reported with file and line in both, and nothing was lost around them.
    lines = len((shared_logs / "claude-code" / "spotter_short.jsonl").read_text().splitlines()) + 2
    bad = [i for i in serial["issues"] if i["file"].endswith("damaged.jsonl")]
    assert [(i["line"], i["kind"]) for i in bad] == [(2, "invalid_json"), (lines, "truncated_tail")]
    assert sum(c["file"].endswith("damaged.jsonl") for c in serial["calls"]) == 1
    assert [i["kind"] for i in serial["issues"] if i["file"].endswith("notes.jsonl")] == ["skipped_file"]


def test_a_parallel_read_of_batch_files_still_joins_them(tmp_path: Path, shared_logs: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Batch files are joined by custom_id across files, so a parallel read hands them to the serial join."""
    folder = shared_logs / "openai-batch"
    serial = report_json(multi.load_many([str(folder)], None, Settings()))
    monkeypatch.setattr(multi, "PARALLEL_MIN_BYTES", 0)
    parallel = report_json(multi.load_many([str(folder)], None, Settings(), parallel=True))
    assert parallel == serial and serial["format"] == "openai-batch" and serial["calls"]


def test_a_parallel_read_is_declined_when_it_cannot_help(tmp_path: Path, shared_logs: Path) -> None:
    root = _folder(tmp_path, shared_logs)
    files = [str(p) for p in root.rglob("*.jsonl")]
    assert multi._parallel_outputs(files, None) is None  # under PARALLEL_MIN_BYTES: workers would cost more
