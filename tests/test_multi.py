"""Parallel reads (folders of logs, and one big file of independent records) give exactly the serial report."""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from ctxwatch.config import Settings
from ctxwatch.engine import files as per_file
from ctxwatch.engine import folder as multi
from ctxwatch.engine import load_run, parallel, reading
from ctxwatch.engine.activity import last_activity
from ctxwatch.engine.discovery import list_logs
from ctxwatch.formats import get_format
from ctxwatch.output.report import report_json

ROOT = Path(__file__).resolve().parents[1]


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
    # The newest file ends right after a compact_boundary: the run's forecast must know the compaction is
    # pending, whichever process read that file.
    comp = (shared_logs / "claude-code" / "spotter_4d5611e5_lines700-800_compaction.jsonl").read_text().splitlines()
    cut = next(i for i, ln in enumerate(comp) if '"compact_boundary"' in ln)
    latest = root / "proj2" / "zz_latest.jsonl"
    latest.write_text("\n".join(comp[:cut + 1]) + "\n")
    os.utime(latest, (2_000_000_000, 2_000_000_000))
    return root


def test_a_parallel_folder_read_equals_the_serial_one(tmp_path: Path, shared_logs: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    root = _folder(tmp_path, shared_logs)
    serial = report_json(multi.load_many([str(root)], None, Settings()))
    # Small thresholds so that this small folder is split over workers, a few files per task.
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(per_file, "TASK_BYTES", 200_000)
    used: list[bool] = []
    todos: list[int] = []
    real = multi.parallel_outputs

    def spy(files: list, fmt: str | None, settings: Settings | None = None, cache_path: str | None = None,
            todo: list[int] | None = None, render: object = None) -> object:
        res = real(files, fmt, settings, cache_path, todo, render)  # type: ignore[arg-type]
        used.append(res is not None)
        todos.append(sum(todo) if todo is not None else sum(os.path.getsize(f) for f in files))
        return res

    monkeypatch.setattr(multi, "parallel_outputs", spy)
    par = report_json(multi.load_many([str(root)], None, Settings(), parallel=True))
    assert used == [True]
    assert par == serial
    # Through the cache, in workers, cold then warm: the same again.
    from ctxwatch.engine.cache import RunCache

    cache = RunCache(str(tmp_path / "cache.sqlite3"))
    for _ in range(2):
        assert report_json(multi.load_many([str(root)], None, Settings(), parallel=True, cache=cache)) == serial
    assert used == [True, True, True] and cache.info().entries > 5
    # (workers are sized by what the cache does not hold: warm, that is the file in no known format and the
    # unfinished last line, 27 bytes)
    assert todos[0] == todos[1] > todos[2] == 19 + 8
    # The damaged lines are reported with file and line in both, and nothing was lost around them.
    lines = len((shared_logs / "claude-code" / "spotter_short.jsonl").read_text().splitlines()) + 2
    bad = [i for i in serial["issues"] if i["file"].endswith("damaged.jsonl")]
    # (its one call is spotter_short's, read first from that file: a copy in a later file that says no more does
    # not take it over, and a note says the file's calls are all copies kept elsewhere)
    assert [(i["line"], i["kind"]) for i in bad] == [(2, "invalid_json"), (lines, "truncated_tail"),
                                                     (0, "copies_elsewhere")]
    assert [c["file"].rsplit("/", 1)[-1] for c in serial["calls"]
            if c["file"].endswith(("damaged.jsonl", "spotter_short.jsonl"))] == ["spotter_short.jsonl"]
    assert [i["kind"] for i in serial["issues"] if i["file"].endswith("notes.jsonl")] == ["skipped_file"]
    # (the newest session, by its calls' timestamps, is the one whose file ends at a compact_boundary)
    assert serial["forecast"]["session"] == "4d5611e5-241a-462a-8d15-5122611a9569"
    assert serial["forecast"]["text"].startswith("session 4d5611e5-241a-462a-8d15-5122611a9569: not enough data: "
                                                 "compacted after")


def test_a_mixed_folder_joins_its_batch_files_and_skips_what_it_cannot_read(
        tmp_path: Path, shared_logs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Batch files beside other logs are joined by custom_id (not read again as calls without usage); a FIFO
    named *.jsonl is not read (it would block) but named in an issue; serial and parallel reads agree."""
    root = _folder(tmp_path, shared_logs)
    pair = ("reviews_batchinput.jsonl", "reviews_batch_output.jsonl")
    for name in pair:
        shutil.copy(shared_logs / "openai-batch" / name, root / "proj0" / name)
    os.mkfifo(root / "proj1" / "pipe.jsonl")
    alone = report_json(multi.load_many([str(shared_logs / "openai-batch" / n) for n in pair], None, Settings()))
    serial = report_json(multi.load_many([str(root)], None, Settings()))
    batch_calls = [c for c in serial["calls"] if "reviews_batch" in c["file"]]
    assert len(batch_calls) == len(alone["calls"]) == 100  # each request once, joined to its result
    # (each call's prompt as its result line reports it, read with plain json)
    reported = [json.loads(ln)["response"]["body"]["usage"]["prompt_tokens"]
                for ln in (shared_logs / "openai-batch" / pair[1]).read_text().splitlines() if ln.strip()]
    assert sorted(c["prompt_tokens_reported"] for c in batch_calls) == sorted(reported)
    assert [i["kind"] for i in serial["issues"] if "pipe.jsonl" in i["file"]] == ["skipped_file"]  # (no log)
    assert serial["format"] == "claude-code" and serial["formats"] == ["claude-code", "codex", "openai-batch"]
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(per_file, "TASK_BYTES", 200_000)
    assert report_json(multi.load_many([str(root)], None, Settings(), parallel=True)) == serial


def test_a_file_gone_between_listing_and_reading_is_an_issue(tmp_path: Path, shared_logs: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    root = _folder(tmp_path, shared_logs)
    gone = next(root.rglob("spotter_short.jsonl"))
    real = multi.resolve_spec

    def resolve_then_remove(path: str, fmt: str | None) -> object:
        spec = real(path, fmt)
        if path == str(gone):
            gone.unlink()  # removed after detection, before the read
        return spec

    monkeypatch.setattr(multi, "resolve_spec", resolve_then_remove)
    doc = report_json(multi.load_many([str(root)], None, Settings()))
    assert [(i["kind"], "cannot read" in i["message"]) for i in doc["issues"] if i["file"] == str(gone)] == \
           [("unreadable", True)]


def test_a_response_emitted_twice_reports_its_damage_once(tmp_path: Path) -> None:
    """Two interleaved responses: the first is emitted again when its late line arrives; its impossible usage
    (negative input tokens) is one issue of the line its usage comes from, not one per emission."""
    import json

    def line(uid: str, parent: str | None, mid: str, inp: int, out: int) -> str:
        return json.dumps({"parentUuid": parent, "isSidechain": False, "type": "assistant", "uuid": uid,
                           "sessionId": "s1", "requestId": "r" + mid, "timestamp": "2025-01-01T00:00:00Z",
                           "message": {"id": mid, "model": "claude-sonnet-4-20250514", "role": "assistant",
                                       "content": [{"type": "text", "text": "x"}],
                                       "usage": {"input_tokens": inp, "output_tokens": out}}})

    user = json.dumps({"parentUuid": None, "isSidechain": False, "type": "user", "uuid": "u1", "sessionId": "s1",
                       "message": {"role": "user", "content": "hi"}})
    log = tmp_path / "s.jsonl"
    log.write_text("\n".join([user, line("a1", "u1", "A", -5, 1), line("b1", "a1", "B", 10, 1),
                               line("a2", "b1", "A", -5, 9)]) + "\n")
    run = load_run(str(log))
    # (line 4: the usage kept is the line with the larger output, 9; the issue names the line it came from; line
    # 2's own damage, in a usage not read, is its own issue)
    assert sorted((i.line, i.kind, "not read" in i.message) for i in run.issues) == \
        [(2, "implausible_value", True), (4, "implausible_value", False)]
    assert len(run.calls) == 2


def test_a_parallel_read_of_batch_files_still_joins_them(tmp_path: Path, shared_logs: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Batch files are joined by custom_id across files, so a parallel read hands them to the serial join."""
    folder = shared_logs / "openai-batch"
    serial = report_json(multi.load_many([str(folder)], None, Settings()))
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    par = report_json(multi.load_many([str(folder)], None, Settings(), parallel=True))
    assert par == serial and serial["format"] == "openai-batch" and serial["calls"]


def test_a_parallel_read_is_declined_when_it_cannot_help(tmp_path: Path, shared_logs: Path) -> None:
    root = _folder(tmp_path, shared_logs)
    files = [str(p) for p in root.rglob("*.jsonl")]
    assert per_file.parallel_outputs(files, None) is None  # under PARALLEL_MIN_BYTES: workers would cost more


def _canonical_log(path: Path) -> tuple[int, int]:
    """A canonical log of 120 calls re-sending a growing history, with damage spread through it: a bad line,
    a blank line, a record logged twice (same response id, the copy later in the file) and a cut last line.
    Returns (line of the bad record, line of the cut tail)."""
    import json

    history: list[dict] = [{"role": "user", "content": "Fix the failing test in src/app.py."}]
    tools = [{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}}]
    lines: list[str] = []
    for i in range(120):
        req = {"model": "gpt-4o", "messages": [{"role": "system", "content": "You are a coding agent."},
                                               *history], "tools": tools, "max_tokens": 1000}
        resp = {"id": f"chatcmpl-{i}", "usage": {"prompt_tokens": 100 + 40 * i, "completion_tokens": 9}}
        lines.append(json.dumps({"timestamp": 1_760_000_000 + i, "request": req, "response": resp}))
        history.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": "read_file", "arguments": f'{{"n": {i}}}'}}]})
        history.append({"role": "tool", "tool_call_id": f"c{i}", "content": f"line {i} " * 30})
    lines.insert(40, "{bad json")
    lines.insert(70, "")
    lines.insert(100, lines[20])  # a copy of call 21 (response id chatcmpl-20) logged again
    path.write_text("\n".join(lines) + '\n{"request": {"model": "gpt-4o", "mess')
    return 41, len(lines) + 1


def test_a_big_file_read_in_ranges_equals_the_serial_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "run.jsonl"
    bad_line, tail_line = _canonical_log(log)
    serial = report_json(load_run(str(log)))
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    ranges: list[int] = []
    real = parallel.line_ranges

    def spy(path: str, parts: int) -> list[tuple[int, int]]:
        out = real(path, parts)
        ranges.append(len(out))
        return out

    monkeypatch.setattr(reading, "line_ranges", spy)
    split = report_json(load_run(str(log), parallel=True))
    assert ranges and ranges[0] >= 2  # the file really was cut (on this machine's core count)
    assert split == serial
    assert len(serial["calls"]) == 120  # the copy of call 21 replaced it, not added a call
    assert [(i["line"], i["kind"]) for i in serial["issues"]] == [(bad_line, "invalid_json"),
                                                                  (tail_line, "truncated_tail")]


def test_line_ranges_cut_at_line_starts(tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    _canonical_log(log)
    data = log.read_bytes()
    for parts in (1, 2, 3, 7, 500):
        ranges = parallel.line_ranges(str(log), parts)
        assert ranges[0][0] == 0 and ranges[-1][1] == len(data)
        assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges))
        assert all(data[a - 1:a] == b"\n" for a, _ in ranges[1:])
        assert len(ranges) <= min(parts, data.count(b"\n") + 1)
    assert reading.read_ranges(str(log), get_format("codex"), Settings()) is None  # records depend on each other


def _die(*_args: object) -> None:
    """A worker task that ends its process at once (module level: tasks are pickled by name)."""
    os._exit(3)


def test_a_worker_that_dies_leaves_the_serial_read(tmp_path: Path, shared_logs: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker killed mid-read (the kernel's OOM killer, say) must not cost the report: the read is done
    again serially, with the same result."""
    root = _folder(tmp_path, shared_logs)
    log = tmp_path / "run.jsonl"
    _canonical_log(log)
    serial_folder = report_json(multi.load_many([str(root)], None, Settings()))
    serial_file = report_json(load_run(str(log)))
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(per_file, "TASK_BYTES", 200_000)

    monkeypatch.setattr(per_file, "read_group", _die)
    monkeypatch.setattr(reading, "_read_range", _die)
    failures: list[str] = []
    real = parallel.fork_map

    def watched(fn: object, tasks: list, workers: int) -> object:
        results = real(fn, tasks, workers)  # type: ignore[arg-type]
        assert results is not None

        def gen() -> object:
            try:
                yield from results
            except parallel.ParallelReadError as exc:
                failures.append(str(exc))
                raise
        return gen()

    monkeypatch.setattr(per_file, "fork_map", watched)
    monkeypatch.setattr(reading, "fork_map", watched)
    assert report_json(multi.load_many([str(root)], None, Settings(), parallel=True)) == serial_folder
    assert report_json(load_run(str(log), parallel=True)) == serial_file
    assert len(failures) == 2 and all("BrokenProcessPool" in f for f in failures)


def test_a_damaged_call_copied_into_another_file_is_reported_once_in_parallel(
        tmp_path: Path, shared_logs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two files holding the same session (a resumed copy) with an impossible count in one response: the call
    is counted once and so is its damage, whichever process read each file."""
    lines = (shared_logs / "claude-code" / "spotter_tool_heavy.jsonl").read_text().splitlines(keepends=True)
    k = next(i for i, ln in enumerate(lines) if '"cache_read_input_tokens":' in ln and '"type":"assistant"' in ln)
    lines[k] = re.sub(r'"cache_read_input_tokens":\d+', '"cache_read_input_tokens":-5', lines[k], count=1)
    root = tmp_path / "proj"
    root.mkdir()
    for name in ("a.jsonl", "b.jsonl"):
        (root / name).write_text("".join(lines))
    serial = report_json(multi.load_many([str(root)], None, Settings()))
    damaged = [i for i in serial["issues"] if i["kind"] == "implausible_value"]
    assert len(damaged) == 1 and damaged[0]["line"] == k + 1
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(per_file, "TASK_BYTES", 1)  # one file per task: each copy read by its own worker
    assert report_json(multi.load_many([str(root)], None, Settings(), parallel=True)) == serial


def test_the_dashboard_and_report_agree_on_the_newest_session(tmp_path: Path) -> None:
    """A copied folder gives every file one modification time (or the wrong one): the dashboard's session list
    (and the session it follows) went by modification time while report's "newest first" goes by the calls'
    timestamps, so each named a different session newest.  Both now go by the last call's timestamp."""
    import json
    import os

    from click.testing import CliRunner

    from ctxwatch.cli import main
    from ctxwatch.ui.feed import list_paths

    def session(name: str, sid: str, day: int) -> Path:
        recs = [{"timestamp": f"2025-03-{day:02d}T10:00:{i:02d}Z", "session": sid,
                 "request": {"model": "gpt-4o", "messages": [{"role": "user", "content": f"step {i}"}]},
                 "response": {"usage": {"prompt_tokens": 10 + i, "completion_tokens": 1}}} for i in range(3)]
        p = tmp_path / name
        p.write_text("".join(json.dumps(r) + "\n" for r in recs))
        return p

    newer = session("a.jsonl", "newer-run", 20)
    older = session("b.jsonl", "older-run", 5)
    os.utime(newer, (1_700_000_000, 1_700_000_000))  # copied first: the older file time
    os.utime(older, (1_700_000_500, 1_700_000_500))
    assert list_paths([str(tmp_path)]) == [str(newer), str(older)]
    doc = json.loads(CliRunner().invoke(main, ["report", str(tmp_path), "--json"]).output)
    assert [s["session"] for s in doc["sessions"]] == ["newer-run", "older-run"]
    # A log whose calls carry no timestamp comes last in both, however new its file (a fresh clone's time).
    bare = tmp_path / "c.jsonl"
    bare.write_text(json.dumps({"session": "no-time", "request": {"model": "gpt-4o", "messages": [
        {"role": "user", "content": "hi"}]}, "response": {"usage": {"prompt_tokens": 8, "completion_tokens": 1}}})
        + "\n")
    assert list_paths([str(tmp_path)]) == [str(newer), str(older), str(bare)]
    doc = json.loads(CliRunner().invoke(main, ["report", str(tmp_path), "--json"]).output)
    assert [s["session"] for s in doc["sessions"]] == ["newer-run", "older-run", "no-time"]


def test_a_folder_names_the_log_files_it_cannot_read(tmp_path: Path) -> None:
    """A FIFO, a link loop and a dangling link named *.jsonl in a folder were left out without a word; each is
    now an issue naming the file (the folder's logs are read as before): the links unreadable, the FIFO a
    skipped_file note (no log); and a folder holding only such files says why nothing was read."""
    import json

    from click.testing import CliRunner

    from ctxwatch.cli import main

    demo = Path(__file__).resolve().parents[1] / "sample_logs" / "openai_chat_demo.jsonl"
    shutil.copy(demo, tmp_path / "run.jsonl")
    os.mkfifo(tmp_path / "fifo.jsonl")
    (tmp_path / "loop.jsonl").symlink_to(tmp_path / "loop.jsonl")
    (tmp_path / "dangling.jsonl").symlink_to(tmp_path / "missing.jsonl")
    doc = json.loads(CliRunner().invoke(main, ["report", str(tmp_path), "--json"]).output)
    assert len(doc["calls"]) == len(demo.read_text().splitlines())
    got = sorted((os.path.basename(i["file"]), i["kind"]) for i in doc["issues"])
    assert got == [("dangling.jsonl", "unreadable"), ("fifo.jsonl", "skipped_file"), ("loop.jsonl", "unreadable")]
    (tmp_path / "run.jsonl").unlink()
    res = CliRunner().invoke(main, ["report", str(tmp_path)])
    assert res.exit_code == 2 and "no log could be read" in res.output


def test_last_activity_reads_iso_and_epoch_timestamps_behind_a_long_last_record(tmp_path: Path) -> None:
    """The dashboard's session order used only ISO "timestamp" strings in the last 64 KiB: a last record of
    77 KB, epoch-number timestamps and Cline's ``ts`` (ms) fell back to the file time, so the dashboard and
    report disagreed on the newest session again."""
    from datetime import UTC, datetime

    iso = tmp_path / "iso.jsonl"
    iso.write_text('{"timestamp":"2025-05-01T10:00:00Z","x":1}\n{"timestamp":"2025-05-02T11:30:00.500+02:00","y":"'
                   + "z" * 100_000 + '"}\n')
    secs = tmp_path / "secs.jsonl"
    secs.write_text('{"timestamp": 1746000000.25, "request": {}}\n')
    cline = tmp_path / "ui_messages.json"
    cline.write_text('[{"ts": 1757370000000, "say": "text"}, {"ts": 1757371234567, "say": "text"}]')
    none = tmp_path / "none.jsonl"
    none.write_text('{"a": 1}\n')
    assert last_activity(str(iso)) == datetime(2025, 5, 2, 9, 30, 0, 500000, tzinfo=UTC).timestamp()
    assert last_activity(str(secs)) == 1746000000.25
    assert last_activity(str(cline)) == 1757371234.567
    assert last_activity(str(none)) is None


def test_last_activity_is_the_last_calls_time_not_a_later_bookkeeping_lines(tmp_path: Path,
                                                                             shared_logs: Path) -> None:
    """A Claude Code session ends with user/system lines after its last call: the picker took their time
    (21:16:12) while report orders sessions by the last call (21:11:59).  A record past the 4 MiB the reader
    used to look back was also missed."""
    import json
    from datetime import datetime

    path = shared_logs / "claude-code" / "spotter_short.jsonl"
    calls = [json.loads(ln) for ln in path.read_text().splitlines() if '"usage"' in ln and '"assistant"' in ln]
    # (a response's time is its first line's: its later lines, a content block each, come seconds after)
    firsts: dict[tuple[str, str], str] = {}
    for c in calls:
        firsts.setdefault((c["message"]["id"], c["requestId"]), c["timestamp"])
    expected = max(datetime.fromisoformat(t.replace("Z", "+00:00")).timestamp() for t in firsts.values())
    assert expected == datetime.fromisoformat("2026-02-10T21:11:59.186+00:00").timestamp()
    every = [json.loads(ln).get("timestamp") for ln in path.read_text().splitlines()]
    latest_any = max(datetime.fromisoformat(t.replace("Z", "+00:00")).timestamp() for t in every if t)
    assert latest_any > expected  # (the sample does end with later bookkeeping lines)
    assert last_activity(str(path)) == expected
    big = tmp_path / "big.jsonl"
    big.write_text('{"timestamp":"2026-01-01T00:00:02Z","request":{"messages":[{"role":"user","content":"'
                   + "x" * 5_000_000 + '"}]},"response":{"usage":{"prompt_tokens":1}}}\n')
    assert last_activity(str(big)) == datetime.fromisoformat("2026-01-01T00:00:02+00:00").timestamp()


def _idless_log(path: Path, n: int) -> Path:
    """``n`` canonical calls with no response id (nothing for the run to dedupe by), prompts 100, 110, ..."""
    import json

    path.write_text("".join(json.dumps({
        "request": {"model": "gpt-4o", "messages": [{"role": "user", "content": f"question {i}"}]},
        "response": {"usage": {"prompt_tokens": 100 + 10 * i, "completion_tokens": 5}}}) + "\n" for i in range(n)))
    return path


def test_a_file_given_twice_or_linked_in_its_folder_is_read_once(tmp_path: Path) -> None:
    """``report X X``, and a folder holding ``latest.jsonl -> run-3.jsonl``, read the file twice: logs without
    ids (claude-trace, id-less canonical records, refused calls) counted each call twice (the demo folder: 61
    calls of 60).  Each file is now read once, under its own name, with a ``same_file`` note."""
    run3 = _idless_log(tmp_path / "run-3.jsonl", 4)
    prompts = [100, 110, 120, 130]  # (as written above)
    run = multi.load_many([str(run3), str(run3)], None, Settings())
    assert [c.usage.prompt_total for c in run.calls if c.usage] == prompts
    assert [(i.kind, i.message) for i in run.issues] == [("same_file", "given twice; read once")]
    os.symlink("run-3.jsonl", tmp_path / "latest.jsonl")
    for paths in ([str(tmp_path)], [str(tmp_path), str(run3)]):
        run = multi.load_many(paths, None, Settings())
        assert [c.usage.prompt_total for c in run.calls if c.usage] == prompts
        assert [(Path(i.path).name, i.kind) for i in run.issues] == [("latest.jsonl", "same_file")] + \
            [("run-3.jsonl", "same_file")] * (len(paths) - 1)
    assert list_logs(str(tmp_path)) == [str(run3)]  # (the session picker lists it once, by its name)


def test_a_compressed_log_in_a_folder_is_named_not_left_out_unseen(tmp_path: Path) -> None:
    """A rotated ``.jsonl.gz`` beside a log was skipped without a word (a ``config.json`` gets a note)."""
    import gzip

    log = _idless_log(tmp_path / "run.jsonl", 2)
    with gzip.open(tmp_path / "run.1.jsonl.gz", "wb") as fh:
        fh.write(log.read_bytes())
    run = multi.load_many([str(tmp_path)], None, Settings())
    assert len(run.calls) == 2
    assert [(Path(i.path).name, i.kind, i.message) for i in run.issues] == [
        ("run.1.jsonl.gz", "skipped_file", "compressed log: not read; decompress it to include it")]


def test_a_link_to_a_folder_in_a_folder_is_named_not_left_out_unseen(tmp_path: Path) -> None:
    """A link to a folder inside the folder read (``sub_link -> ../other``, or a loop back to the folder) is not
    followed, and was skipped without a word: it is a ``skipped_file`` note; its logs are read when its folder
    is named."""
    root, other = tmp_path / "root", tmp_path / "other"
    root.mkdir()
    other.mkdir()
    _idless_log(root / "run.jsonl", 2)
    _idless_log(other / "elsewhere.jsonl", 3)
    os.symlink(other, root / "sub_link")
    os.symlink(root, root / "loop")
    run = multi.load_many([str(root)], None, Settings())
    assert len(run.calls) == 2
    assert [(Path(i.path).name, i.kind, i.message) for i in run.issues] == [
        ("loop", "skipped_file", "a link to a folder, not followed; name its folder to read the logs in it"),
        ("sub_link", "skipped_file", "a link to a folder, not followed; name its folder to read the logs in it")]
    assert len(multi.load_many([str(root / "sub_link")], None, Settings()).calls) == 3


def test_a_compressed_log_alone_says_it_is_compressed(tmp_path: Path) -> None:
    """A folder holding only ``run.jsonl.gz`` said "no log in a recognised format"; the file named on its own
    (also without a .gz name) said "none of its first lines is JSON".  Both now say it is compressed."""
    import gzip

    from ctxwatch.engine import LogError, resolve_spec

    folder = tmp_path / "gz"
    folder.mkdir()
    with gzip.open(folder / "run.jsonl.gz", "wb") as fh:
        fh.write(b'{"request": {"model": "gpt-4o", "messages": []}}\n')
    with pytest.raises(LogError, match=r"no log could be read: .*run\.jsonl\.gz is compressed; decompress it first"):
        multi.load_many([str(folder)], None, Settings())
    renamed = tmp_path / "run.jsonl"
    renamed.write_bytes((folder / "run.jsonl.gz").read_bytes())
    with pytest.raises(LogError, match=r"run\.jsonl: a compressed file \(gzip, bzip2, xz or zstd\): decompress it"):
        resolve_spec(str(renamed), None)


@pytest.mark.parametrize("parallel_read", [False, True])
def test_a_copy_that_says_less_in_another_file_does_not_replace_the_call(tmp_path: Path, parallel_read: bool,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """One Claude Code response, msg_2, streamed over two lines (output 10, then 299) in a.jsonl; b.jsonl (read
    after it: newer) repeats only its placeholder line, as a resumed session's copy can.  The copy replaced the
    call: output 10.  A copy from another file now replaces a call only when it says at least as much."""
    import json

    def line(uid: str, out: int) -> str:
        return json.dumps({"parentUuid": None, "isSidechain": False, "type": "assistant", "uuid": uid,
                           "sessionId": "s1", "requestId": "r2", "timestamp": "2025-01-01T00:00:00Z",
                           "message": {"id": "msg_2", "model": "claude-sonnet-4-20250514", "role": "assistant",
                                       "content": [{"type": "text", "text": "x"}],
                                       "usage": {"input_tokens": 100, "output_tokens": out}}}) + "\n"

    (tmp_path / "a.jsonl").write_text(line("a1", 10) + line("a2", 299))
    (tmp_path / "b.jsonl").write_text(line("b1", 10))
    os.utime(tmp_path / "a.jsonl", (1_000_000, 1_000_000))
    os.utime(tmp_path / "b.jsonl", (2_000_000, 2_000_000))
    if parallel_read:
        monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    run = multi.load_many([str(tmp_path)], None, Settings(), parallel=parallel_read)
    assert [(Path(c.source.path).name, c.usage.output if c.usage else None) for c in run.calls] == [("a.jsonl", 299)]


def test_a_json_array_of_records_says_how_to_convert_it(tmp_path: Path) -> None:
    """A log saved as one JSON array (``json.dump(records)``, ``jq -s``) said "format not recognised".  The
    engine names what it holds and how to convert it, alone, in a folder beside a log, and in a folder of its
    own; the commands read it directly; an array of things that are not records of a format is still not
    recognised."""
    from ctxwatch.engine import JsonArray, LogError, resolve_spec

    sample = Path(__file__).resolve().parents[1] / "sample_logs" / "openai_chat_demo.jsonl"
    lines = [ln for ln in sample.read_bytes().splitlines() if ln.strip()]
    records = [orjson.loads(ln) for ln in lines]
    pretty = tmp_path / "calls.json"
    pretty.write_text(json.dumps(records, indent=2))
    one_line = tmp_path / "calls-compact.json"
    one_line.write_bytes(orjson.dumps(records))
    for f in (pretty, one_line):
        with pytest.raises(JsonArray, match=rf"^{re.escape(str(f))}: one JSON array of {len(lines)} canonical records, "
                                            r"not one record per line: convert it with  jq -c '\.\[\]' FILE"):
            resolve_spec(str(f), None)
    # The advice works: one record per line reads every call.
    converted = tmp_path / "converted.jsonl"
    converted.write_bytes(b"\n".join(orjson.dumps(r) for r in records) + b"\n")
    assert len(load_run(str(converted)).calls) == len(lines)
    folder = tmp_path / "mixed"
    folder.mkdir()
    shutil.copy(pretty, folder / "calls.json")
    shutil.copy(converted, folder / "run.jsonl")
    run = multi.load_many([str(folder)], None, Settings())
    assert len(run.calls) == len(lines)
    assert [(Path(i.path).name, i.kind, i.message.split(",")[0]) for i in run.issues] == [
        ("calls.json", "skipped_file", f"one JSON array of {len(lines)} canonical records")]
    (folder / "run.jsonl").unlink()
    with pytest.raises(LogError, match=r"no log could be read: .*calls\.json is one JSON array of "):
        multi.load_many([str(folder)], None, Settings())
    # The commands read such a file directly (a copy of one record per line), given by path or piped in.
    from click.testing import CliRunner

    from ctxwatch.cli import main

    for args, data in (([str(pretty), "--json"], None), ([str(one_line), "--json"], None),
                       (["-", "--json"], pretty.read_bytes())):
        res = CliRunner().invoke(main, ["report", *args], input=data)
        assert res.exit_code == 0, res.output
        doc = json.loads(res.output)
        assert len(doc["calls"]) == len(lines) and doc["format"] == "canonical"
        assert doc["file"] == args[0]  # (named as given, not as the copy)
    for junk in (b"[1, 2]\n", b'[{"a": 1}]\n', b"[]\n"):
        other = tmp_path / "other.json"
        other.write_bytes(junk)
        with pytest.raises(LogError, match="format not recognised") as exc:
            resolve_spec(str(other), None)
        assert not isinstance(exc.value, JsonArray)


def test_a_subfolder_that_cannot_be_listed_is_named_not_left_out_unseen(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """`chmod 000 locked/` in a folder of logs: its logs were left out without a word (unreadable files got a
    note).  The folder now gets an ``unreadable`` note; a folder that cannot be listed at all says why."""
    from ctxwatch.engine import LogError

    _idless_log(tmp_path / "run.jsonl", 2)
    locked = tmp_path / "locked"
    locked.mkdir()
    _idless_log(locked / "hidden.jsonl", 3)
    real_scandir = os.scandir

    def scandir(path: Any = ".") -> Any:  # (root reads any folder whatever its mode: refuse like chmod 000)
        if os.fspath(path) in (str(locked), str(tmp_path / "alone")):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    run = multi.load_many([str(tmp_path)], None, Settings())
    assert len(run.calls) == 2
    assert [(i.path, i.kind, i.message) for i in run.issues] == [
        (str(locked), "unreadable", f"{locked}: folder cannot be read (Permission denied); its logs are not read")]
    (tmp_path / "alone").mkdir()
    with pytest.raises(LogError, match=r"alone: no log could be read: .*alone: folder cannot be read"):
        multi.load_many([str(tmp_path / "alone")], None, Settings())


def test_a_claude_code_transcript_saved_as_one_json_array_is_read(shared_logs: Path, tmp_path: Path) -> None:
    """Claude Code hooks save the transcript as one JSON array (``logs/chat.json``): read directly, with the
    same calls as the JSONL transcript it holds."""
    from click.testing import CliRunner

    from ctxwatch.cli import main

    src = shared_logs / "claude-code" / "spotter_short.jsonl"
    records = [json.loads(x) for x in src.read_text().splitlines() if x.strip()]
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps(records, indent=2))
    a = json.loads(CliRunner().invoke(main, ["report", "--json", str(chat)]).output)
    b = json.loads(CliRunner().invoke(main, ["report", "--json", str(src)]).output)
    assert a["format"] == "claude-code" and a["file"] == str(chat)
    keys = ("prompt_tokens_reported", "completion_tokens_reported", "cost_usd", "floor_tokens", "history_tokens")
    assert [[c[k] for k in keys] for c in a["calls"]] == [[c[k] for k in keys] for c in b["calls"]]


def test_calls_written_where_their_file_was_read_are_the_calls_written_at_the_end(
        tmp_path: Path, shared_logs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``report --json`` of a folder writes each call's object where its file is read (in the workers, kept with
    the file's result in the cache) and only its index at the end: the document is byte for byte the one written
    from the run alone, for a folder with copies across files, calls of no session (given their file's name
    once assembled: written again) and a model with a calibration (written again), serially, in workers and
    from the cache."""
    from ctxwatch.engine.cache import RunCache
    from ctxwatch.output.chunks import call_pieces, report_json_chunks

    # (a serial read without the cache reads the folder as one run: its calls are written at the end)
    root = _folder(tmp_path, shared_logs)
    shutil.copy(ROOT / "sample_logs" / "claude_trace.jsonl", root / "proj1" / "no_session.jsonl")
    shutil.copy(ROOT / "sample_logs" / "anthropic_messages.jsonl", root / "proj1" / "anthropic.jsonl")
    shutil.copy(ROOT / "sample_logs" / "gemini_usage.jsonl", root / "proj2" / "untimed.jsonl")  # (no timestamps)
    want = b"".join(report_json_chunks(multi.load_many([str(root)], None, Settings())))
    runs = [multi.load_many([str(root)], None, Settings(), render=call_pieces)]
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(per_file, "TASK_BYTES", 200_000)
    runs.append(multi.load_many([str(root)], None, Settings(), parallel=True, render=call_pieces))
    cache = RunCache(str(tmp_path / "cache.sqlite3"))
    for _ in range(2):  # (the cache filled, then read)
        runs.append(multi.load_many([str(root)], None, Settings(), parallel=True, render=call_pieces, cache=cache))
    for n, run in enumerate(runs):
        assert b"".join(report_json_chunks(run)) == want
        assert len(run.rendered) >= len(run.calls) // 2 if n else not run.rendered
    # Pieces made on another day: a call without a timestamp is priced at today's rates, so it is written again.
    import ctxwatch.output.chunks as report_mod

    again: list[int] = []
    real_piece = report_mod.call_piece

    def spy(call, factor, cost):  # type: ignore[no-untyped-def]
        again.append(call.index)
        return real_piece(call, factor, cost)

    monkeypatch.setattr(report_mod, "call_piece", spy)
    b"".join(report_json_chunks(runs[-1]))
    today = {c.index for c in runs[-1].calls if id(c) not in runs[-1].rendered}
    monkeypatch.setattr(report_mod, "utc_day", lambda: "1999-12-31")
    written = set(again)
    again.clear()
    assert b"".join(report_json_chunks(runs[-1])) == want
    untimed = {c.index for c in runs[-1].calls if c.timestamp is None}
    assert untimed and set(again) == written | untimed and not today - written


@pytest.mark.parametrize("empty_first", [True, False])
def test_an_empty_log_in_a_folder_is_noted_and_in_no_format(tmp_path: Path, shared_logs: Path,
                                                            monkeypatch: pytest.MonkeyPatch, empty_first: bool) -> None:
    """An empty file beside a Claude Code session: the run is in the session's format only (an empty log is in
    no format yet, as ``report`` of it alone says), with an ``empty_file`` note for it; read serially, in
    workers and through the cache alike.  A folder of empty logs only is a log with no call yet."""
    from ctxwatch.engine.cache import RunCache

    root = tmp_path / "mix"
    root.mkdir()
    session = root / "a.jsonl"
    session.write_bytes((shared_logs / "claude-code" / "spotter_short.jsonl").read_bytes())
    empty = root / "empty.jsonl"
    empty.write_bytes(b"")
    older, newer = (empty, session) if empty_first else (session, empty)
    os.utime(older, (1_700_000_000, 1_700_000_000))
    os.utime(newer, (1_800_000_000, 1_800_000_000))
    docs = [report_json(multi.load_many([str(root)], None, Settings()))]
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(per_file, "TASK_BYTES", 1)
    docs.append(report_json(multi.load_many([str(root)], None, Settings(), parallel=True)))
    docs.append(report_json(multi.load_many([str(root)], None, Settings(), cache=RunCache(str(tmp_path / "c")))))
    for doc in docs:
        assert (doc["format"], doc["formats"]) == ("claude-code", ["claude-code"])
        assert [(i["file"], i["kind"]) for i in doc["issues"] if i["kind"] == "empty_file"] == [(str(empty),
                                                                                                 "empty_file")]
        assert doc == docs[0]
    session.unlink()
    (root / "empty2.jsonl").write_bytes(b"\n")
    for par in (False, True):
        doc = report_json(multi.load_many([str(root)], None, Settings(), parallel=par))
        assert doc["calls"] == [] and doc["format"] is None
        assert sorted(i["kind"] for i in doc["issues"]) == ["empty_file", "empty_file"]


@pytest.mark.parametrize("parallel_read", [False, True])
def test_a_call_copied_into_an_excerpt_keeps_the_whole_sessions_split(tmp_path: Path, shared_logs: Path,
                                                                      monkeypatch: pytest.MonkeyPatch,
                                                                      parallel_read: bool) -> None:
    """A folder holding a session and an excerpt of it (lines 700-800, whose chain runs out of the file): the
    calls in both report the same usage, but only the whole session's copy splits the prompt into floor and
    history; the folder keeps that copy, as the session read alone gives it, whichever file is read first."""
    src = shared_logs / "claude-code"
    whole = report_json(load_run(str(src / "spotter_4d5611e5_full.jsonl")))
    by_line = {c["line"]: c for c in whole["calls"]}
    for first in ("excerpt", "full"):
        root = tmp_path / first
        root.mkdir()
        for name in ("spotter_4d5611e5_full.jsonl", "spotter_4d5611e5_lines700-800_compaction.jsonl"):
            shutil.copy(src / name, root / name)
        # (a folder is read oldest modification time first)
        old = root / ("spotter_4d5611e5_lines700-800_compaction.jsonl" if first == "excerpt" else
                      "spotter_4d5611e5_full.jsonl")
        os.utime(old, (1_000_000_000, 1_000_000_000))
        if parallel_read:
            monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
        doc = report_json(multi.load_many([str(root)], None, Settings(), parallel=parallel_read))
        shared = [c for c in doc["calls"] if c["line"] in (700, 708, 721, 730, 742)]
        assert len(shared) == 5, first
        for c in shared:
            assert c["file"].endswith("spotter_4d5611e5_full.jsonl"), (first, c["file"])
            assert (c["floor_tokens"], c["history_tokens"]) == (by_line[c["line"]]["floor_tokens"],
                                                                by_line[c["line"]]["history_tokens"])
            assert c["floor_tokens"] is not None


def test_parallel_workers_count_big_logs_without_a_counting_child_each(tmp_path: Path, shared_logs: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker loads the tokenizer once for all its files: a big log it reads from its start through the cache
    starts no counting child (one per file, each loading the encoding again, if the worker waited for a first
    count to load it).  Every file here is "big" (the threshold set to 1 byte); the report is the serial read's."""
    from ctxwatch.engine import warm
    from ctxwatch.engine.cache import RunCache
    from ctxwatch.tokens.tokenizer import Tokenizer

    root = _folder(tmp_path, shared_logs)
    serial = report_json(multi.load_many([str(root)], None, Settings()))
    started = tmp_path / "started"
    real = warm.start_server

    def spy(encoding: str) -> Any:
        with open(started, "a") as fh:  # (from the forked workers: written to a file, not kept in memory)
            fh.write(f"{os.getpid()}\n")
        return real(encoding)

    # (a tokenizer this process has not loaded, as in a process that reads nothing before the fork)
    fresh = Tokenizer("o200k_base")
    monkeypatch.setattr(warm, "get_tokenizer", lambda encoding: fresh)
    monkeypatch.setattr(per_file, "get_tokenizer", lambda encoding: fresh)
    monkeypatch.setattr(warm, "start_server", spy)
    monkeypatch.setattr(warm, "COUNTING_CHILD_BYTES", 1)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(per_file, "TASK_BYTES", 200_000)
    cache = RunCache(str(tmp_path / "cache.sqlite3"))
    try:
        assert report_json(multi.load_many([str(root)], None, Settings(), parallel=True, cache=cache)) == serial
    finally:
        cache.close()
    assert not started.exists() or started.read_text() == ""
    assert not fresh.loaded  # (the workers loaded their own copies)


def test_a_parallel_read_leaves_the_tokenizer_to_the_workers(tmp_path: Path, shared_logs: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The process that forks the workers does not load the tokenizer (about 75 MB of its peak memory): each
    worker loads its own when it counts, and the report is the serial read's.  A tokenizer this process had
    loaded already is left loaded."""
    import ctxwatch.tokens as tokens
    from ctxwatch.tokens.tokenizer import Tokenizer

    root = _folder(tmp_path, shared_logs)
    serial = report_json(multi.load_many([str(root)], None, Settings()))
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(per_file, "TASK_BYTES", 200_000)
    fresh = Tokenizer("o200k_base")
    monkeypatch.setattr(tokens, "get_tokenizer", lambda encoding: fresh)
    assert report_json(multi.load_many([str(root)], None, Settings(), parallel=True)) == serial
    assert not fresh.loaded
    fresh.load()
    assert report_json(multi.load_many([str(root)], None, Settings(), parallel=True)) == serial
    assert fresh.loaded




def test_a_file_in_a_folder_is_skipped_saying_what_it_is(tmp_path: Path) -> None:
    """Random bytes named *.jsonl were "binary data, not a text log" when given alone but "format not
    recognised; skipped" inside a folder; a folder's note now says what the file is, as its error alone does."""
    from click.testing import CliRunner

    from ctxwatch.cli import main

    demo = Path(__file__).resolve().parents[1] / "sample_logs" / "openai_chat_demo.jsonl"
    shutil.copy(demo, tmp_path / "run.jsonl")
    blob = tmp_path / "blob.jsonl"
    blob.write_bytes(bytes(range(256)) * 8)  # (no UTF-8 text: 0x80-0xff stand alone)
    alone = CliRunner().invoke(main, ["report", str(blob)])
    assert alone.exit_code == 2 and f"{blob}: binary data, not a text log" in alone.output
    why = alone.output.split(f"{blob}: ", 1)[1].strip()
    res = CliRunner().invoke(main, ["check", "--json", str(tmp_path)])
    notes = [(n["file"], n["kind"], n["message"]) for n in json.loads(res.output)["notes"]]
    assert notes == [(str(blob), "skipped_file", f"{why}; skipped")]
