"""Session totals taken whole from the files' workers (:class:`ctxwatch.output.sessions.SessionTotals`) are the
totals added up call by call."""

from __future__ import annotations

import itertools
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from ctxwatch.config import Settings
from ctxwatch.engine import folder as multi
from ctxwatch.engine import load_run
from ctxwatch.engine.cache import RunCache
from ctxwatch.model import Call
from ctxwatch.output import sessions as sessions_mod
from ctxwatch.output.chunks import call_pieces, report_json_chunks
from ctxwatch.output.report import cost_of
from ctxwatch.output.sessions import SessionTotals, session_totals

ROOT = Path(__file__).resolve().parents[1]


def _calls(shared_logs: Path, tmp_path: Path) -> list[Call]:
    """Calls of many sessions: every Claude Code and Codex sample as one folder run, an OpenTelemetry log whose
    calls name their agent instances, then a log of a model no catalogue prices, in a session of its own."""
    run = multi.load_many([str(shared_logs / "claude-code"), str(shared_logs / "codex-rollout")], None, Settings())
    otel = load_run(str(ROOT / "sample_logs" / "otel_collector.jsonl"), None, Settings())
    unpriced = tmp_path / "unpriced.jsonl"
    unpriced.write_text((ROOT / "sample_logs" / "openai_chat_demo.jsonl").read_text()
                        .replace('"model":"gpt-4o', '"model":"no-such-model'))
    return [*run.calls, *otel.calls, *load_run(str(unpriced), None, Settings()).calls]


def test_totals_merged_at_any_split_are_the_totals_call_by_call(shared_logs: Path, tmp_path: Path) -> None:
    """Cut the calls anywhere, in two or three, add each part up on its own and merge the parts in order: the
    sessions are the call-by-call ones, key for key (sums, first-seen lists, the first of equal peaks, each
    cost rounded as it is added, the newest-first order)."""
    calls = _calls(shared_logs, tmp_path)
    costs = [cost_of(c) for c in calls]
    assert any(c is None for c in costs) and any(c for c in costs)
    assert any(c.provenance.details.get("instance") for c in calls)
    want = session_totals(calls, costs)
    assert len(want) > 5

    def merged(cuts: list[int]) -> list[dict[str, object]]:
        whole = SessionTotals()
        for a, b in zip([0, *cuts], [*cuts, len(calls)], strict=True):
            part = SessionTotals()
            for c, cost in zip(calls[a:b], costs[a:b], strict=True):
                part.add(c, cost)
            whole.merge(part)
        return whole.result(calls)

    n = len(calls)
    for k in sorted({0, 1, n // 7, n // 3, n // 2, n - 1, n}):
        assert merged([k]) == want, k
    assert merged([n // 5, 3 * n // 4]) == want
    # (parts of 2 to 4 calls: every session's costs are cut into many runs, each summed as it goes on)
    sizes = itertools.cycle([2, 3, 4, 3])
    cuts = list(itertools.takewhile(lambda k: k < n, itertools.accumulate(sizes)))
    assert merged(cuts) == want


def test_of_equal_peaks_the_first_is_kept(shared_logs: Path) -> None:
    """Two calls whose prompts are as large, the first reported by its provider and the second only estimated:
    the session's peak is the first's, ``reported``, whether the two are added one by one or as two parts."""
    run = load_run(str(shared_logs / "claude-code" / "spotter_short.jsonl"), None, Settings())
    first = next(c for c in run.calls if c.context == "main" and c.prompt_reported and c.usage)
    second = replace(first, usage=None, prompt_estimated=first.prompt_reported)
    assert second.prompt_tokens == first.prompt_tokens
    one_by_one = session_totals([first, second], [None, None])
    parts = SessionTotals()
    for c in (first, second):
        part = SessionTotals()
        part.add(c, None)
        parts.merge(part)
    assert parts.result([first, second]) == one_by_one
    assert one_by_one[0]["peak_prompt_source"] == "reported"


def test_a_folders_report_takes_unchanged_files_whole(tmp_path: Path, shared_logs: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """In a folder's ``report --json``, the files whose calls the run holds as their worker read them are taken
    whole, and a file whose calls are partly copies kept with another file is added call by call: the document
    is byte for byte the one made from the run alone."""
    root = tmp_path / "projects" / "proj"
    root.mkdir(parents=True)
    for f in sorted((shared_logs / "claude-code").glob("*.jsonl")):
        shutil.copy(f, root / f.name)
    # (the head of a session, copied into another file with one call more: those calls are kept with one file)
    session = (shared_logs / "claude-code" / "spotter_4d5611e5_head200.jsonl").read_text().splitlines(keepends=True)
    (root / "zz_resumed.jsonl").write_text("".join(session[:120]))
    want = b"".join(report_json_chunks(multi.load_many([str(root)], None, Settings())))
    # (read file by file, through a cache: each file's calls are written, and added up, where it is read)
    run = multi.load_many([str(root)], None, Settings(), render=call_pieces,
                          cache=RunCache(str(tmp_path / "cache.sqlite3")))
    whole: list[int] = []
    one_by_one: list[Call] = []
    real_merge, real_add = SessionTotals.merge, SessionTotals.add

    def merge(self: SessionTotals, later: SessionTotals) -> None:
        whole.append(later.count)
        real_merge(self, later)

    def add(self: SessionTotals, c: Call, cost: object) -> None:
        one_by_one.append(c)
        real_add(self, c, cost)  # type: ignore[arg-type]

    monkeypatch.setattr(sessions_mod.SessionTotals, "merge", merge)
    monkeypatch.setattr(sessions_mod.SessionTotals, "add", add)
    assert b"".join(report_json_chunks(run)) == want
    assert whole and one_by_one and sum(whole) + len(one_by_one) == len(run.calls)
    assert {c.source.path for c in one_by_one} & {str(root / "zz_resumed.jsonl"),
                                                  str(root / "spotter_4d5611e5_head200.jsonl")}
