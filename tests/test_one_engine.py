"""One engine: the same bytes give the same calls and numbers in every view, however they were read.

The dashboard read real Claude Code sessions with compactions in slices, and a format filter that learns from
the records it was fed judged a whole slice before any of it was fed: from the first compaction on it skipped
lines a later call's history needed, and the dashboard showed floor and history unknown where ``report`` split
them.  The engine now feeds lines and decodes each just before its values are fed.  Expected values here come
from ``report --json`` (a whole read) or from plain ``json`` on the sample files, never from the view tested.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_ui_common import loaded

from ctxwatch.cli import main
from ctxwatch.engine import Run, load_run, resolve_spec
from ctxwatch.formats import FormatSpec
from ctxwatch.output.report import report_json
from ctxwatch.source import FileTailer

ROOT = Path(__file__).resolve().parent.parent


def report_calls(path: Path) -> dict[int, dict]:
    """``report --json``'s calls of ``path`` by index."""
    res = CliRunner().invoke(main, ["report", "--json", str(path)])
    assert res.exit_code == 0, res.output
    return {c["index"]: c for c in json.loads(res.stdout)["calls"]}


def claude_code_names() -> list[str]:
    """The real Claude Code sessions, by file name (none when the shared logs are absent: the test then skips)."""
    from conftest import SHARED

    return sorted(p.name for p in (SHARED / "claude-code").glob("*.jsonl")) or ["spotter_4d5611e5_full.jsonl"]


@pytest.mark.parametrize("name", claude_code_names())
async def test_the_dashboards_csv_export_gives_reports_numbers(shared_logs: Path, name: str,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Each real Claude Code session (compactions, model switches, subagents, inline sidechains) opened after the
    fact: every call of the dashboard's CSV export has report --json's floor, history, free tokens, reported
    prompt and calibrated floor and history.  The backfill is read in 4 KiB slices, so that every session, small
    or large, is read in many."""
    from ctxwatch.engine import follow
    from ctxwatch.ui.app import CtxwatchApp, csv_text

    monkeypatch.setattr(follow, "FIRST_SLICE_BYTES", 4096)
    monkeypatch.setattr(follow, "SLICE_BYTES", 4096)
    path = shared_logs / "claude-code" / name
    want = report_calls(path)
    app = CtxwatchApp(str(path))
    async with app.run_test(size=(160, 50)) as pilot:
        await loaded(pilot, len(want))
        rows = list(csv.DictReader(io.StringIO(csv_text(sorted(app.calls.values(), key=lambda c: c.index),
                                                        app.calibrations))))
    assert [int(r["index"]) for r in rows] == sorted(want)

    def n(cell: str) -> int | None:
        return None if cell == "" else int(cell)

    for r in rows:
        c = want[int(r["index"])]
        cal = c["calibrated"] or {}
        assert int(r["call"]) == c["number"] == c["index"] + 1  # (the CSV's call is the JSON's number)
        assert (n(r["floor_tokens"]), n(r["history_tokens"]), n(r["free_tokens"]), n(r["prompt_tokens_reported"]),
                n(r["floor_tokens_calibrated"]), n(r["history_tokens_calibrated"])) == (
            c["floor_tokens"], c["history_tokens"], c["free_tokens"], c["prompt_tokens_reported"],
            cal.get("floor_tokens"), cal.get("history_tokens")), (name, r["index"])
        # (the yes/no columns as yes or empty, as report --json's booleans say)
        assert (r["exact"], r["prompt_implausible"], r["compaction"]) == (
            "yes" if c["exact"] else "", "yes" if c["prompt_implausible"] else "",
            "yes" if c["compaction"] is not None else ""), (name, r["index"])
    if name == "spotter_4d5611e5_full.jsonl":
        # (the compactions: after the first one the split was unknown in the dashboard)
        assert sum(c["compaction"] is not None for c in want.values()) >= 1
        assert all(c["floor_tokens"] is not None for c in want.values() if c["context"] == "main")


def jsonl_samples() -> list[Path]:
    """Every JSONL sample log (the project's and, when present, the shared real ones)."""
    from conftest import SHARED

    files = sorted((ROOT / "sample_logs").rglob("*.jsonl"))
    if SHARED.is_dir():
        files += sorted(SHARED.rglob("*.jsonl"))
    return files


def followed(path: Path, spec: FormatSpec, data: bytes, cuts: list[int], slices: list[int]) -> Run:
    """The run of ``data`` written to ``path`` in pieces ending at ``cuts``, read in ``spec``'s format after each
    piece by a tailer in slices of the given sizes (0: all that is there), then finished as a whole read is."""
    run = Run(str(path), spec)
    tailer = FileTailer(str(path), idle_grace=float("inf"))
    prev = 0
    with open(path, "wb") as fh:
        for k, cut in enumerate([*cuts, len(data)]):
            fh.write(data[prev:cut])
            fh.flush()
            prev = cut
            size = slices[k % len(slices)] or None
            while True:
                run.feed_lines(tailer.poll(size))
                if tailer.lag == 0:
                    break
    run.feed_lines(tailer.finalize())
    run.finish()
    tailer.close()
    return run


@pytest.mark.parametrize("sample", jsonl_samples(), ids=lambda p: p.name)
def test_a_log_gives_the_same_report_whole_followed_or_in_chunks(sample: Path, tmp_path_factory:
                                                                 pytest.TempPathFactory) -> None:
    """The property: a log read whole and the same bytes written in random pieces and read as they come, in
    random slices, give the same report --json document (calls, sessions, issues, flags, forecast)."""
    data = sample.read_bytes()
    spec = resolve_spec(str(sample), None)
    if spec.document:
        pytest.skip("a whole-file document is read whole")
    folder = tmp_path_factory.mktemp("follow")
    path = folder / sample.name
    path.write_bytes(data)
    whole = report_json(load_run(str(path)))

    @settings(max_examples=3, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(cuts=st.lists(st.integers(1, max(1, len(data) - 1)), max_size=6).map(sorted),
           slices=st.lists(st.sampled_from([0, 97, 4096, 65536]), min_size=1, max_size=3))
    def check(cuts: list[int], slices: list[int]) -> None:
        path.unlink()
        assert report_json(followed(path, spec, data, cuts, slices)) == whole

    check()
