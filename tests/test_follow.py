"""Tests of ``ctxwatch report PATH --follow --jsonl`` (ctxwatch.engine.follow): one object per call as soon as its
record is complete, one per reset, issues never silent, the run's reader restarted on a reset.

Expected numbers come from the records the test writes (the provider's usage in the file), never from
the code under test.  Threads are waited for with generous timeouts that only guard against hanging.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from ctxwatch.config import Settings
from ctxwatch.engine import LogError, Run
from ctxwatch.engine import follow as follow_mod
from ctxwatch.output.follow import follow_jsonl
from tests.helpers import report_of


def rec(i: int, prompt: int) -> dict[str, Any]:
    return {"request": {"model": "gpt-4o", "messages": [{"role": "user", "content": f"hi {i}"}]},
            "response": {"usage": {"prompt_tokens": prompt, "completion_tokens": 1}}}


def line(i: int, prompt: int | None = None) -> bytes:
    return json.dumps(rec(i, 8 + i if prompt is None else prompt)).encode() + b"\n"


def append(path: Path, data: bytes) -> None:
    with open(path, "ab") as fh:
        fh.write(data)


class QueueOut:
    """A text stream that hands each complete line to a queue (parsed as JSON)."""

    def __init__(self) -> None:
        self.q: queue.Queue[Any] = queue.Queue()
        self.buf = ""
        self.flushes = 0

    def write(self, s: str) -> int:
        self.buf += s
        while "\n" in self.buf:
            one, self.buf = self.buf.split("\n", 1)
            self.q.put(json.loads(one))
        return len(s)

    def flush(self) -> None:
        self.flushes += 1


class Follower:
    """Runs follow_jsonl in a thread."""

    def __init__(self, path: Path, **kw: Any) -> None:
        self.out = QueueOut()
        self.stop = threading.Event()
        self.error: BaseException | None = None
        kw.setdefault("sweep_interval", 0.2)
        kw.setdefault("idle_grace", 60.0)
        self.thread = threading.Thread(target=self._run, args=(str(path), kw), daemon=True)
        self.thread.start()

    def _run(self, path: str, kw: dict[str, Any]) -> None:
        try:
            follow_jsonl(path, kw.pop("fmt", None), Settings(), self.out, self.stop, kw.pop("poll", False), **kw)
        except BaseException as exc:
            self.error = exc

    def take(self, n: int, timeout: float = 15.0) -> list[dict[str, Any]]:
        return [self.out.q.get(timeout=timeout) for _ in range(n)]

    def take_calls(self, n: int, timeout: float = 15.0) -> list[dict[str, Any]]:
        """Objects until ``n`` call objects came (the notices and issues before them included)."""
        got: list[dict[str, Any]] = []
        while sum("event" not in o for o in got) < n:
            got.append(self.out.q.get(timeout=timeout))
        return got

    def close(self) -> list[dict[str, Any]]:
        self.stop.set()
        self.thread.join(timeout=15)
        assert not self.thread.is_alive()
        assert self.error is None, self.error
        rest = []
        while not self.out.q.empty():
            rest.append(self.out.q.get())
        return rest


def calls(objs: list[dict[str, Any]]) -> list[tuple[int, int, int]]:
    """(index, line, reported prompt tokens) of the call objects."""
    return [(o["index"], o["line"], o["prompt_tokens_reported"]) for o in objs if "event" not in o]


def test_follow_prints_calls_and_resets_as_they_happen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    resets: list[str] = []

    class SpyRun(Run):
        def reset(self, reason: str, path: str | None = None, spec: Any = None) -> None:
            resets.append(reason)
            super().reset(reason, path, spec)

    monkeypatch.setattr(follow_mod, "Run", SpyRun)
    log = tmp_path / "calls.jsonl"
    append(log, line(0) + line(1))
    f = Follower(log)
    try:
        got = f.take(2)
        assert calls(got) == [(0, 1, 8), (1, 2, 9)]
        first = got[0]
        assert first["model"] == "gpt-4o" and first["completion_tokens_reported"] == 1
        assert first["file"] == str(log)
        append(log, line(2))
        assert calls(f.take(1)) == [(2, 3, 10)]
        # Rotation: mv + new file.
        os.rename(log, tmp_path / "calls.jsonl.1")
        append(log, line(3, 100))
        got = f.take(2)
        assert got[0] == {"event": "reset", "reason": "rotated", "path": str(log)}
        assert calls(got[1:]) == [(3, 1, 100)]
        # Truncation.
        with open(log, "r+b") as fh:
            fh.truncate(0)
        append(log, line(4, 200))
        got = f.take(2)
        assert got[0]["event"] == "reset" and got[0]["reason"] == "truncated"
        assert calls(got[1:]) == [(4, 1, 200)]
        # Atomic replace.
        tmp = tmp_path / "calls.tmp"
        tmp.write_bytes(line(5, 300) + line(6, 301))
        os.replace(tmp, log)
        got = f.take(3)
        assert got[0]["event"] == "reset" and got[0]["reason"] == "replaced"
        assert calls(got[1:]) == [(5, 1, 300), (6, 2, 301)]
    finally:
        rest = f.close()
    assert calls(rest) == []
    assert resets == ["rotated", "truncated", "replaced"]
    assert f.out.flushes >= 10  # flushed per object


def test_follow_half_line_gives_one_call_and_no_issue(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    whole = line(1)
    append(log, line(0) + whole[:40])
    f = Follower(log)
    try:
        assert calls(f.take(1)) == [(0, 1, 8)]
        append(log, whole[40:])
        assert calls(f.take(1)) == [(1, 2, 9)]
        append(log, b"{broken\n" + line(2))
        got = f.take(2)
        assert got[0]["event"] == "issue" and got[0]["kind"] == "invalid_json" and got[0]["line"] == 3
        assert calls(got[1:]) == [(2, 4, 10)]
    finally:
        rest = f.close()
    assert rest == []


def test_follow_waits_for_a_missing_file_and_detects_its_format(tmp_path: Path) -> None:
    """It says once that it waits (a mistyped path was a silent wait), then reads the file when it appears."""
    log = tmp_path / "later.jsonl"
    f = Follower(log, poll=True, poll_interval=0.05)
    try:
        assert f.take(1) == [{"event": "notice", "kind": "waiting",
                              "message": f"{log} does not exist yet; waiting for it"}]
        append(log, line(0))
        assert calls(f.take(1)) == [(0, 1, 8)]
    finally:
        f.close()


def test_follow_with_explicit_format_and_poll(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    append(log, line(0))
    f = Follower(log, fmt="canonical", poll=True, poll_interval=0.05)
    try:
        assert calls(f.take(1)) == [(0, 1, 8)]
        append(log, line(1))
        assert calls(f.take(1)) == [(1, 2, 9)]
    finally:
        f.close()


def test_follow_errors(tmp_path: Path) -> None:
    stop = threading.Event()
    with pytest.raises(LogError, match="directory"):
        follow_jsonl(str(tmp_path), None, None, QueueOut(), stop)
    with pytest.raises(LogError, match="unknown format"):
        follow_jsonl(str(tmp_path / "x.jsonl"), "no-such-format", None, QueueOut(), stop)
    junk = tmp_path / "junk.jsonl"
    junk.write_text("".join(json.dumps({"foo": i}) + "\n" for i in range(60)))
    with pytest.raises(LogError, match="not recognised"):
        follow_jsonl(str(junk), None, None, QueueOut(), stop)


def test_follow_on_a_file_with_no_json_line_says_what_it_is(tmp_path: Path) -> None:
    """``report --follow /etc/passwd`` printed a notice and waited for ever: a finished line that is no JSON is
    no log being written, and the command ends with the reason ``report`` gives.  A lone unfinished line is
    still waited for (a writer may be half-way through its first record)."""
    text = tmp_path / "passwd"
    text.write_text("root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n")
    got: list[BaseException] = []
    stop = threading.Event()

    def follow() -> None:
        try:
            follow_jsonl(str(text), None, None, QueueOut(), stop, True, poll_interval=0.05)
        except BaseException as exc:  # (the test looks at it)
            got.append(exc)

    t = threading.Thread(target=follow, daemon=True)
    t.start()
    t.join(20)
    stop.set()
    t.join(5)
    assert len(got) == 1 and isinstance(got[0], LogError)
    assert "none of its first lines is JSON" in str(got[0])
    partial = tmp_path / "partial.jsonl"
    partial.write_text('{"request": {"model"')
    out = QueueOut()
    t = threading.Thread(target=follow_jsonl, args=(str(partial), None, None, out, stop), daemon=True)
    stop.clear()
    t.start()
    t.join(1)
    assert t.is_alive()  # (still waiting for the record's end)
    stop.set()
    t.join(5)


def test_follow_stops_on_closed_pipe(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    append(log, line(0) + line(1))

    class Closed:
        def write(self, s: str) -> int:
            raise BrokenPipeError

        def flush(self) -> None:
            raise BrokenPipeError

    stop = threading.Event()
    follow_jsonl(str(log), None, None, Closed(), stop)  # type: ignore[arg-type]
    assert stop.is_set()


def test_cli_report_follow_jsonl_exits_0_on_ctrl_c(tmp_path: Path) -> None:
    """The real command: first call printed, then SIGINT ends it with status 0."""
    if not hasattr(signal, "SIGINT"):
        pytest.skip("no SIGINT")
    log = tmp_path / "calls.jsonl"
    append(log, line(0))
    proc = subprocess.Popen(
        [sys.executable, "-c", "from ctxwatch.cli import main; main()", "report", str(log), "--follow", "--jsonl"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        first = json.loads(proc.stdout.readline())
        assert (first["index"], first["line"], first["prompt_tokens_reported"]) == (0, 1, 8)
        append(log, line(1))
        second = json.loads(proc.stdout.readline())
        assert (second["index"], second["prompt_tokens_reported"]) == (1, 9)
        # Let it go idle, waiting for file events inside watchfiles' Rust loop: a Ctrl-C there was swallowed
        # (the watch ended quietly and started again), so the command never exited (a flaky CI failure).
        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        rc = proc.wait(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert rc == 0, proc.stderr.read() if proc.stderr else ""


def test_follow_real_claude_code_log_written_in_random_chunks(tmp_path: Path, shared_logs: Path) -> None:
    """A real Claude Code session appended in random pieces (cut inside lines) while following: the last
    object per call index carries the prompt size the file reports (input + cache creation + cache read,
    one per message.id + requestId), and nothing is reported as damaged."""
    src = shared_logs / "claude-code" / "spotter_tool_heavy.jsonl"
    data = src.read_bytes()
    expected: dict[tuple[str, str], int] = {}
    for raw in data.splitlines():
        d = json.loads(raw)
        if d.get("type") == "assistant":
            u = d["message"].get("usage") or {}
            expected[(d["message"]["id"], d.get("requestId"))] = (
                u.get("input_tokens", 0) + u.get("cache_creation_input_tokens", 0)
                + u.get("cache_read_input_tokens", 0))
    log = tmp_path / "session.jsonl"
    rnd = random.Random(4)
    cuts = sorted({0, len(data), *(rnd.randrange(1, len(data)) for _ in range(40))})
    first_line = data.index(b"\n") + 1
    append(log, data[:first_line])  # detection needs a complete line to start with
    f = Follower(log)
    last: dict[int, dict[str, Any]] = {}
    others: list[dict[str, Any]] = []
    try:
        for a, b in itertools.pairwise(cuts):
            lo, hi = max(a, first_line), max(b, first_line)
            if hi > lo:
                append(log, data[lo:hi])
                time.sleep(0.005)  # give the watcher a chance to see half lines (not asserted on)
        while sorted(o["prompt_tokens_reported"] for o in last.values()) != sorted(expected.values()):
            o = f.out.q.get(timeout=15)
            if "event" in o:
                others.append(o)
            else:
                last[o["index"]] = o
    finally:
        rest = f.close()
    others += [o for o in rest if "event" in o]
    assert sorted(last) == list(range(len(expected)))
    assert [o for o in others if o.get("kind") in ("truncated_tail", "invalid_json", "glued_records")] == []


def test_file_field_is_the_path_as_given_before_and_after_a_reset(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The watcher works on absolute paths; the objects name the file as the user did, throughout."""
    monkeypatch.chdir(tmp_path)
    log = Path("f.jsonl")
    log.write_bytes(line(0))
    out = QueueOut()
    stop = threading.Event()

    def writer() -> None:
        time.sleep(0.6)
        log.write_bytes(line(1))  # truncated and rewritten
        time.sleep(0.8)
        stop.set()

    t = threading.Thread(target=writer)
    t.start()
    follow_jsonl("f.jsonl", None, Settings(), out, stop, poll=True, sweep_interval=0.1, poll_interval=0.05)
    t.join()
    objs = []
    while not out.q.empty():
        objs.append(out.q.get())
    assert [o.get("event", "call") for o in objs] == ["call", "reset", "call"]
    assert {o.get("file") or o.get("path") for o in objs} == {"f.jsonl"}


@pytest.mark.parametrize(("folder", "name"), [
    ("claude-code", "spotter_4d5611e5_head200.jsonl"),
    ("codex-rollout", "rollout-2025-11-17T15-30-28-019a93b9_codex0.58.0.jsonl")])
def test_follow_prints_each_call_of_an_existing_log_once(tmp_path: Path, shared_logs: Path, folder: str,
                                                         name: str) -> None:
    """Following a log that is already written prints one object per call, the same objects as
    ``report --jsonl`` (it printed 28 for the 12 calls of the Claude Code sample, one per assistant line, and
    116 for the Codex rollout's 39 calls).  The expected counts come from the files with plain json: distinct
    (message.id, requestId) of assistant lines with usage; distinct token_count totals."""
    from click.testing import CliRunner

    from ctxwatch.cli import main

    src = shared_logs / folder / name
    rows = [json.loads(x) for x in src.read_text(encoding="utf-8").splitlines() if x.strip()]
    if folder == "claude-code":
        expected = len({(d["message"]["id"], d.get("requestId")) for d in rows
                        if d.get("type") == "assistant" and "usage" in d["message"]})
    else:
        expected = len({json.dumps(d["payload"]["info"]["total_token_usage"], sort_keys=True) for d in rows
                        if d.get("type") == "event_msg" and d["payload"].get("type") == "token_count"
                        and d["payload"].get("info")})
    log = tmp_path / src.name
    log.write_bytes(src.read_bytes())
    f = Follower(log)
    try:
        objs = f.take(expected)
        time.sleep(1.0)  # anything printed twice would arrive meanwhile
    finally:
        objs += f.close()
    got = [o for o in objs if "event" not in o]
    assert [o["index"] for o in got] == list(range(expected))
    res = CliRunner().invoke(main, ["report", str(log), "--jsonl"])
    assert got == [json.loads(x) for x in res.output.splitlines() if '"event"' not in x]


def test_a_line_completed_after_the_idle_grace_withdraws_its_issue(tmp_path: Path) -> None:
    """A writer that pauses mid-line longer than the idle grace gets a truncated_tail issue; when it finishes
    the line, the call is read and an issue_resolved event withdraws the issue (it stayed reported)."""
    log = tmp_path / "slow.jsonl"
    append(log, line(0, 1000))
    f = Follower(log, idle_grace=0.3)
    try:
        (first,) = f.take(1)
        assert first["index"] == 0
        text = line(1, 2000)
        append(log, text[:40])
        (issue,) = f.take(1)
        assert (issue["event"], issue["kind"], issue["line"]) == ("issue", "truncated_tail", 2)
        append(log, text[40:])
        got = f.take(2)
    finally:
        rest = f.close()
    resolved = [o for o in got if o.get("event") == "issue_resolved"]
    assert [(o["kind"], o["line"]) for o in resolved] == [("truncated_tail", 2)]
    assert [o["index"] for o in got if "event" not in o] == [1]
    assert [o for o in rest if o.get("event") == "issue"] == []


def test_a_stalled_line_completed_as_garbage_is_one_issue_not_two(tmp_path: Path) -> None:
    """A line left half-written past the grace, then completed as invalid JSON: the truncated_tail is
    withdrawn and the invalid_json stands, so the stream ends with the one issue a one-shot report gives
    (it kept both)."""
    from click.testing import CliRunner

    from ctxwatch.cli import main

    log = tmp_path / "garb.jsonl"
    append(log, line(0, 1000))
    f = Follower(log, idle_grace=0.3)
    try:
        assert f.take(1)[0]["index"] == 0
        append(log, line(1, 2000)[:40])
        (issue,) = f.take(1)
        assert issue["kind"] == "truncated_tail"
        append(log, b"GARBAGE}}\n")
        got = f.take(2)
    finally:
        f.close()
    assert [(o["event"], o["kind"], o["line"]) for o in got] == [("issue_resolved", "truncated_tail", 2),
                                                                ("issue", "invalid_json", 2)]
    res = CliRunner().invoke(main, ["report", str(log), "--jsonl"])
    assert [(json.loads(x)["kind"], json.loads(x)["line"]) for x in res.output.splitlines()
            if '"event"' in x] == [("invalid_json", 2)]


def test_a_log_replaced_by_one_in_another_format_is_read_in_that_format(tmp_path: Path) -> None:
    """A followed canonical log replaced (mv) by a Codex rollout: the old reader went on, giving one
    unknown_record issue per line and none of the rollout's calls.  The format is now detected again after a
    reset, and the rollout's calls are printed as report --jsonl prints them (indices after the first call)."""
    import shutil

    from click.testing import CliRunner

    from ctxwatch.cli import main

    rollout = Path(__file__).resolve().parents[1] / "sample_logs" / "codex_rollout.jsonl"
    expected = [json.loads(ln) for ln in CliRunner().invoke(main, ["report", str(rollout), "--jsonl"]).output
                .splitlines()]
    expected = [o for o in expected if "event" not in o]
    log = tmp_path / "a.jsonl"
    log.write_bytes(line(0))
    f = Follower(log, poll=True, poll_interval=0.05)
    try:
        assert calls(f.take(1)) == [(0, 1, 8)]
        shutil.copy(rollout, tmp_path / "new")
        os.replace(tmp_path / "new", log)
        got = f.take(1 + len(expected), timeout=30)
    finally:
        rest = f.close()
    assert got[0]["event"] == "reset"
    objs = [o for o in got[1:] + rest if "event" not in o]
    assert [o["prompt_tokens_reported"] for o in objs] == [o["prompt_tokens_reported"] for o in expected]
    assert [o["index"] for o in objs] == [1 + o["index"] for o in expected]
    assert not [o for o in got + rest if o.get("kind") == "unknown_record"]


def test_follow_withdraws_a_damaged_placeholder_the_final_count_supersedes(tmp_path: Path) -> None:
    """--follow prints an implausible_value issue for a Claude Code streaming placeholder (output_tokens -1),
    the call's usage until the response's last line gives 299: an issue_resolved event then withdraws it and
    the issue report gives follows (the placeholder's line holds a count that is not read), and the call's
    last object has the final count."""
    def cc(uid: str, parent: str | None, kind: str, output: int | None = None) -> bytes:
        d: dict[str, Any] = {"parentUuid": parent, "isSidechain": False, "type": kind, "uuid": uid,
                             "sessionId": "s1", "timestamp": "2025-01-01T00:00:00Z"}
        if kind == "user":
            d["message"] = {"role": "user", "content": "hello"}
        else:
            d["requestId"] = "req_1"
            d["message"] = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                            "content": [{"type": "text", "text": "ok"}],
                            "usage": {"input_tokens": 6, "cache_creation_input_tokens": 11000,
                                      "cache_read_input_tokens": 22000, "output_tokens": output}}
        return (json.dumps(d) + "\n").encode()

    log = tmp_path / "s1.jsonl"
    append(log, cc("u1", None, "user") + cc("a0", "u1", "assistant", -1))
    f = Follower(log)
    try:
        got = f.take(2)  # the call (output unknown) and the issue
        assert sorted(o.get("event", "call") for o in got) == ["call", "issue"]
        append(log, cc("a1", "a0", "assistant", 299))
        got += f.take(2)
    finally:
        got += f.close()
    events = [(o["event"], o["kind"], o["line"]) for o in got if "event" in o]
    assert events == [("issue", "implausible_value", 2), ("issue_resolved", "implausible_value", 2),
                      ("issue", "implausible_value", 2)]
    last = [o["message"] for o in got if o.get("event") == "issue"][-1]
    assert last.endswith("not read, a later line of the response gives the call's usage")
    assert [o["completion_tokens_reported"] for o in got if "event" not in o][-1] == 299


def test_follow_calibrates_each_model_as_report_json_does(tmp_path: Path) -> None:
    """``report --follow --jsonl`` gave every call the run's one calibration factor (the median over both
    models' calls), while ``report --json`` gives each model its own: the same call had two factors.  Two
    Claude models (estimated with another tokenizer, so calibrated), three calls each, reporting prompts far
    apart: each followed call has its own model's factor, the one report --json gives it."""
    from click.testing import CliRunner

    from ctxwatch.cli import main

    rows = []
    for i in range(6):
        # (about 1.3 and 1.05 times the ~19-token estimate: two tokenizer gaps, calibrated apart)
        model, reported = ("claude-sonnet-4-5", 25 + i) if i % 2 == 0 else ("claude-haiku-4-5", 20)
        rows.append({"request": {"model": model, "messages": [
            {"role": "user", "content": f"Summarise the build log number {i} in one short sentence."}]},
            "response": {"id": f"m{i}", "model": model, "usage": {"input_tokens": reported, "output_tokens": 5}}})
    log = tmp_path / "two-models.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    doc = json.loads(CliRunner().invoke(main, ["report", "--json", str(log)]).output)
    want = {c["index"]: c["calibration"] for c in doc["calls"]}
    by_model = {c["model"]: c["calibration"] for c in doc["calls"]}
    assert len(set(by_model.values())) == 2 and None not in by_model.values()  # (one factor per model)
    f = Follower(log)
    try:
        objs = f.take(6)
    finally:
        objs += f.close()
    assert {o["index"]: o["calibration"] for o in objs if "event" not in o} == want


def test_follow_prints_a_models_first_calls_again_once_it_is_calibrated(tmp_path: Path) -> None:
    """Fed line by line, a model's first two calls were printed with ``calibration: null`` and never again:
    a model is calibrated from its 3rd call on.  When that call comes, the model's earlier calls are printed
    again with the factor, so the last object per index carries it (report --json's value)."""
    from click.testing import CliRunner

    from ctxwatch.cli import main

    rows = [{"request": {"model": "claude-sonnet-4-5", "messages": [
        {"role": "user", "content": f"Summarise the build log number {i} in one short sentence."}]},
        "response": {"id": f"m{i}", "model": "claude-sonnet-4-5",
                     "usage": {"input_tokens": 25 + i, "output_tokens": 5}}} for i in range(3)]
    log = tmp_path / "live.jsonl"
    log.write_text("")
    f = Follower(log)
    objs: list[dict[str, Any]] = []
    try:
        for k, r in enumerate(rows):
            append(log, (json.dumps(r) + "\n").encode())
            objs += f.take_calls(1 if k < 2 else 3)  # (the 3rd call, then calls 1 and 2 again)
    finally:
        objs += f.close()
    got = [o for o in objs if "event" not in o]
    assert [o["calibration"] for o in got[:2]] == [None, None]
    want = json.loads(CliRunner().invoke(main, ["report", "--json", str(log)]).output)["calls"][0]["calibration"]
    assert want is not None
    last = {o["index"]: o["calibration"] for o in got}
    assert last == {0: want, 1: want, 2: want}


def test_follow_gives_the_end_of_read_notes_while_following(shared_logs: Path, tmp_path: Path) -> None:
    """report --follow --jsonl printed the note check gives at the end of a read (Claude Code's
    subagent_calls_elsewhere: the session's agent_progress lines copy a subagent's messages) only at a reset or
    on exit, while the dashboard shows it as the file is read.  It is printed as soon as the lines are read
    (counted here with plain json: 19), and not again, nor withdrawn, when the follower stops."""
    from helpers import follow_lines

    src = shared_logs / "claude-code" / "spotter_subagent_parent.jsonl"
    progress = sum(1 for raw in src.read_text(encoding="utf-8").splitlines()
                   if raw.strip() and (json.loads(raw).get("data") or {}).get("type") == "agent_progress")
    assert progress == 19
    log = tmp_path / "session.jsonl"
    log.write_bytes(src.read_bytes())

    seen: list[bool] = []  # (set when the note came while following, before the stop)

    def noted(objs: list[dict[str, Any]]) -> bool:
        if any(o.get("kind") == "subagent_calls_elsewhere" for o in objs):
            seen.append(True)
        return bool(seen)

    objs, _ = follow_lines(log, noted, seconds=10.0)
    assert seen
    events = [(o["event"], o["message"].split(" ")[0]) for o in objs
              if o.get("kind") == "subagent_calls_elsewhere"]
    assert events == [("issue", str(progress))]  # (once, with the whole file's count; nothing at the stop)


def test_a_file_emptied_then_written_in_another_format_is_one_reset(tmp_path: Path, shared_logs: Path) -> None:
    """A followed Codex rollout cut to nothing, then written with a Claude Code session: one reset (truncated),
    the empty file's note withdrawn once the first line comes, and the new content's calls, as report reads the
    file now (the same prompts), numbered on from the calls read before the reset (they happened)."""
    codex = (shared_logs / "codex-rollout" / "rollout-2025-11-17T15-30-28-019a93b9_codex0.58.0.jsonl").read_bytes()
    claude = (shared_logs / "claude-code" / "spotter_4d5611e5_full.jsonl").read_bytes()
    log = tmp_path / "a.jsonl"
    log.write_bytes(b"".join(codex.splitlines(keepends=True)[:60]))
    before = len(report_of(str(log))["calls"])
    f = Follower(log)
    try:
        got = f.take_calls(before)
        log.write_bytes(b"")
        got += f.take(2)  # the reset, then the empty file's note
        append(log, b"".join(claude.splitlines(keepends=True)[:30]))
        now = report_of(str(log))["calls"]
        got += f.take_calls(len(now))
    finally:
        got += f.close()
    events = [(o["event"], o.get("reason") or o.get("kind")) for o in got if "event" in o and o["event"] != "notice"]
    assert events == [("reset", "truncated"), ("issue", "empty_file"), ("issue_resolved", "empty_file")]
    last = {o["index"]: o for o in got if "event" not in o}
    assert [last[before + i]["prompt_tokens_reported"] for i in range(len(now))] == \
        [c["prompt_tokens_reported"] for c in now]
