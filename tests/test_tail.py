"""Tests of the source stage's following: the tailer (chunking independence, truncation, rotation, replacement,
half lines, bad lines) and the waker (file events, sweeps, polling and its fall backs); failure cases B14, B15,
B17, B19, B20.

Expected values come from plain ``json`` on the written lines (a separate simple reader), never from the code
under test.  No timed assertions: a fake clock drives the idle grace period, and threads are waited for with
generous timeouts only to avoid hanging.
"""

from __future__ import annotations

import json
import os
import queue
import tempfile
import threading
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxwatch.model import Issue
from ctxwatch.source import Record, Reset, Waker, records
from ctxwatch.source import tailer as tailer_mod


class FileTailer(tailer_mod.FileTailer):
    """The tailer as the engine reads it: its lines decoded into records and issues (other events passed on)."""

    def poll(self, max_bytes: int | None = None) -> list[Any]:  # type: ignore[override]
        return list(records(super().poll(max_bytes), self.path, max_line_bytes=self.max_line_bytes))

    def finalize(self) -> list[Any]:  # type: ignore[override]
        return list(records(super().finalize(), self.path, max_line_bytes=self.max_line_bytes))


class FakeClock:
    """A monotonic clock the test advances by hand (seconds)."""

    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def rec(i: Any, text: str = "hi") -> dict[str, Any]:
    """One generic canonical call record tagged with ``i``."""
    return {"request": {"model": "gpt-4o", "messages": [{"role": "user", "content": f"{text} {i}"}]},
            "response": {"usage": {"prompt_tokens": 8, "completion_tokens": 1}}, "id": i}


def line(i: Any, text: str = "hi") -> bytes:
    return json.dumps(rec(i, text), ensure_ascii=False).encode() + b"\n"


def append(path: Path, data: bytes) -> None:
    with open(path, "ab") as fh:
        fh.write(data)


def ids(events: list[Any]) -> list[Any]:
    return [e.value["id"] for e in events if isinstance(e, Record)]


def resets(events: list[Any]) -> list[str]:
    return [e.reason for e in events if isinstance(e, Reset)]


def issues(events: list[Any]) -> list[Issue]:
    return [e for e in events if isinstance(e, Issue)]


# ---------------------------------------------------------------------------------------------- property


def simple_reader(data: bytes) -> tuple[list[tuple[Any, int, int]], set[int]]:
    """Independent reader: ``(value, line, byte_start)`` of each line that parses, and bad line numbers.

    Lines split on ``\\n``; a ``\\r`` before it is dropped; blank lines are ignored; the last piece counts
    as a line when non-empty (the file is complete).
    """
    good: list[tuple[Any, int, int]] = []
    bad: set[int] = set()
    pos = 0
    pieces = data.split(b"\n")
    for n, piece in enumerate(pieces, start=1):
        start = pos
        pos += len(piece) + 1
        if n == len(pieces) and not piece:
            break
        text = piece.removesuffix(b"\r")
        if not text.strip():
            continue
        try:
            good.append((json.loads(text.decode("utf-8")), n, start))
        except (UnicodeDecodeError, json.JSONDecodeError):
            bad.add(n)
    return good, bad


_texts = st.text(alphabet=st.sampled_from(["a", "b", " ", "é", "日", "本", "🎉", "ß", "\u2028", '"', "\\"]),
                 max_size=12)
_line = st.one_of(
    st.builds(lambda i, t: ("rec", i, t), st.integers(0, 10**6), _texts),
    st.just(("garbage",)),
    st.just(("blank",)),
)


@settings(max_examples=120, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    lines=st.lists(_line, min_size=1, max_size=12),
    crlf=st.lists(st.booleans(), min_size=12, max_size=12),
    newline_at_end=st.booleans(),
    cuts=st.lists(st.floats(0, 1), max_size=25),
    chunk=st.integers(1, 64),
)
def test_records_do_not_depend_on_write_chunking(lines: list[tuple], crlf: list[bool], newline_at_end: bool,
                                                  cuts: list[float], chunk: int) -> None:
    """Whatever the write boundaries (inside UTF-8 characters, inside CRLF) and read size, the same records
    come out, with the same line numbers and offsets, and nothing is reported before the file is complete."""
    parts = []
    for k, item in enumerate(lines):
        if item[0] == "rec":
            body = json.dumps(rec(item[1], item[2]), ensure_ascii=False).encode()
        elif item[0] == "garbage":
            body = b'{"request": nope'
        else:
            body = b"   "
        parts.append(body + (b"\r\n" if crlf[k] else b"\n"))
    data = b"".join(parts)
    if not newline_at_end:
        data = data.rstrip(b"\r\n")
    expected, bad = simple_reader(data)
    positions = sorted({int(c * len(data)) for c in cuts} | {len(data)})
    clock = FakeClock()  # never advances: no idle grace expiry while writing
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "calls.jsonl"
        tailer = FileTailer(path, clock=clock, chunk_bytes=chunk)
        events: list[Any] = []
        events += tailer.poll()  # file missing: nothing, no error
        prev = 0
        for cut in positions:
            append(path, data[prev:cut])
            prev = cut
            got = tailer.poll()
            assert not any(isinstance(e, Issue) and e.kind == "truncated_tail" for e in got)
            events += got
        events += tailer.finalize()
        tailer.close()
    got_records = [(e.value, e.line, e.byte_start) for e in events if isinstance(e, Record)]
    assert got_records == expected
    assert {i.line for i in issues(events)} == bad
    assert resets(events) == []


# ---------------------------------------------------------------------------------------------- B19


def test_b19_append_rotate_truncate_delete_recreate_replace(tmp_path: Path) -> None:
    """B19's script: every record reported exactly once, every reset reported, nothing re-read."""
    log = tmp_path / "calls.jsonl"
    clock = FakeClock()
    t = FileTailer(log, clock=clock, rotated_quiet=2.0)
    seen: list[Any] = []

    def step() -> list[Any]:
        got = t.poll()
        seen.extend(got)
        return got

    # 1. 100 lines.
    append(log, b"".join(line(f"a{i}") for i in range(100)))
    assert ids(step()) == [f"a{i}" for i in range(100)]
    # 2. mv calls.jsonl calls.jsonl.1; a late write still lands in the old inode; new file with 3 lines.  The old
    # file is read on until it has been quiet for 2 s, then the new one from its start.
    os.rename(log, tmp_path / "calls.jsonl.1")
    append(tmp_path / "calls.jsonl.1", line("late-old"))
    append(log, b"".join(line(f"b{i}") for i in range(3)))
    got = step()
    assert ids(got) == ["late-old"] and resets(got) == []
    clock.t += 2.0
    got = step()
    assert ids(got) == ["b0", "b1", "b2"]
    assert resets(got) == ["rotated"]
    assert isinstance(got[0], Reset)
    # 3. Truncate in place and append 2.
    with open(log, "r+b") as fh:
        fh.truncate(0)
    append(log, line("c0") + line("c1"))
    got = step()
    assert ids(got) == ["c0", "c1"]
    assert resets(got) == ["truncated"]
    # 4. rm; a poll sees it gone; recreate with 1 line.
    os.remove(log)
    got = step()
    assert resets(got) == ["deleted"] and ids(got) == []
    assert step() == []  # still missing: not an error
    append(log, line("d0"))
    got = step()
    assert resets(got) == ["recreated"] and ids(got) == ["d0"]
    # 5. Atomic replace with 5 lines.
    tmp = tmp_path / "calls.tmp"
    tmp.write_bytes(b"".join(line(f"e{i}") for i in range(5)))
    os.replace(tmp, log)
    got = step()
    assert resets(got) == ["replaced"] and ids(got) == [f"e{i}" for i in range(5)]
    assert step() == []

    all_ids = ids(seen)
    assert len(all_ids) == len(set(all_ids))
    assert all_ids[100:] == ["late-old", "b0", "b1", "b2", "c0", "c1", "d0", "e0", "e1", "e2", "e3", "e4"]
    assert resets(seen) == ["rotated", "truncated", "deleted", "recreated", "replaced"]
    assert issues(seen) == []
    t.close()


def test_a_rotation_under_a_writer_that_still_holds_the_file_loses_nothing(tmp_path: Path) -> None:
    """logrotate's ``create`` mode: the log is renamed, a new empty one created, the writer adds three records to
    its old handle over several polls, then reopens the path.  The three lines were lost (two of them: the old
    file was let go at the first poll after the rename); now the old file is read until it has been quiet for
    2 s, then the new one from its start, with one ``rotated`` reset between."""
    log = tmp_path / "calls.jsonl"
    clock = FakeClock()
    writer = open(log, "ab")  # noqa: SIM115  (held across the rotation, as the agent's logger holds it)
    writer.write(line("a0") + line("a1"))
    writer.flush()
    t = FileTailer(log, clock=clock, rotated_quiet=2.0)
    seen = t.poll()
    os.rename(log, tmp_path / "calls.jsonl.1")
    log.write_bytes(b"")  # (create: a new empty file at once)
    for i in range(3):
        writer.write(line(f"late{i}"))
        writer.flush()
        clock.t += 1.5  # (each write within 2 s of the one before)
        seen += t.poll()
    writer.close()
    with open(log, "ab") as fh:  # the writer reopens the path
        fh.write(line("b0"))
    clock.t += 1.0
    seen += t.poll()
    assert resets(seen) == [] and ids(seen) == ["a0", "a1", "late0", "late1", "late2"]
    clock.t += 1.0  # (quiet for 2 s now)
    seen += t.poll()
    assert ids(seen) == ["a0", "a1", "late0", "late1", "late2", "b0"]
    assert resets(seen) == ["rotated"]
    assert issues(seen) == []
    t.close()


def test_b19_rm_and_recreate_between_two_polls_is_one_reset(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    append(log, line(1) + line(2))
    t = FileTailer(log)
    assert ids(t.poll()) == [1, 2]
    os.remove(log)
    append(log, line(3))
    got = t.poll()
    assert resets(got) == ["replaced"] and ids(got) == [3]


def test_truncate_and_rewrite_past_old_offset_is_detected(tmp_path: Path) -> None:
    """A file cut and rewritten to more than its old size between two polls: the bytes before the offset
    changed, so it restarts instead of reading from the middle of a line."""
    log = tmp_path / "calls.jsonl"
    append(log, line(1))
    t = FileTailer(log)
    assert ids(t.poll()) == [1]
    log.write_bytes(b"".join(line(f"n{i}", "a much longer text") for i in range(3)))
    got = t.poll()
    assert resets(got) == ["truncated"] and ids(got) == ["n0", "n1", "n2"]


def test_b50_same_size_rewrite_in_place_is_seen(tmp_path: Path, shared_logs: Path) -> None:
    """B50: the file truncated and rewritten on the same inode to the same size, ending with the same bytes
    (the case's two files): the start of the file changed, so it is read again from the start."""
    inputs = shared_logs.parent / "cases" / "inputs"
    first = (inputs / "b50_first.jsonl").read_bytes()
    second = (inputs / "b50_replacement_same_size.jsonl").read_bytes()
    assert len(first) == len(second) and first[-64:] == second[-64:] and first != second
    log = tmp_path / "calls.jsonl"
    log.write_bytes(first)
    ino = os.stat(log).st_ino
    t = FileTailer(log)
    assert [e.value["session"] for e in t.poll() if isinstance(e, Record)] == ["first"] * 3
    with open(log, "r+b") as f:
        f.truncate(0)
        f.write(second)
    st = os.stat(log)
    os.utime(log, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))  # (a coarse clock: mtime still moves)
    assert os.stat(log).st_ino == ino and os.path.getsize(log) == len(first)
    got = t.poll()
    assert resets(got) == ["truncated"]
    assert [e.value["session"] for e in got if isinstance(e, Record)] == ["third"] * 3


def test_resume_from_offset_and_offset_past_end(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    first = line(1)
    append(log, first + line(2))
    t = FileTailer(log, offset=len(first), line=2)
    got = t.poll()
    assert [(e.value["id"], e.line, e.byte_start) for e in got] == [(2, 2, len(first))]
    t2 = FileTailer(log, offset=10**6, line=500)
    got = t2.poll()
    assert resets(got) == ["truncated"] and ids(got) == [1, 2]


def test_released_handle_still_follows_and_detects_replacement(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    append(log, line(1))
    t = FileTailer(log, keep_open=False)
    assert ids(t.poll()) == [1] and not t.is_open
    append(log, line(2))
    assert ids(t.poll()) == [2]
    tmp = tmp_path / "x.tmp"
    tmp.write_bytes(line(3))
    os.replace(tmp, log)
    got = t.poll()
    assert resets(got) == ["replaced"] and ids(got) == [3]


# ---------------------------------------------------------------------------------------------- B15 / B14

HALF_1 = b'{"request":{"model":"gpt-4o","messages":[{"role":"user","content":"hel'
HALF_2 = b'lo"}]},"response":{"usage":{"prompt_tokens":8,"completion_tokens":1}}}\n'


def test_b15_half_written_line_gives_one_record_and_no_issue(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    clock = FakeClock()
    t = FileTailer(log, clock=clock, idle_grace=2.0)
    append(log, HALF_1)
    assert t.poll() == []
    clock.t += 1.0  # one poll interval later, still within the grace period
    assert t.poll() == []
    assert t.pending == len(HALF_1)
    append(log, HALF_2)
    got = t.poll()
    assert len(got) == 1 and isinstance(got[0], Record)
    assert got[0].value == json.loads(HALF_1 + HALF_2) and got[0].line == 1
    later = []
    for i in range(50):
        append(log, line(i))
        clock.t += 0.1
        later += t.poll()
    assert ids(later) == list(range(50))
    assert [e.line for e in later] == list(range(2, 52))
    clock.t += 10
    assert t.poll() == [] and t.finalize() == []


def test_b15_idle_partial_reported_once_then_completed_without_duplicate(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    clock = FakeClock()
    t = FileTailer(log, clock=clock, idle_grace=2.0)
    append(log, line(0) + HALF_1)
    assert ids(t.poll()) == [0]
    clock.t += 2.5
    got = t.poll()
    assert [(i.kind, i.line) for i in issues(got)] == [("truncated_tail", 2)]
    clock.t += 5
    assert t.poll() == []  # reported once
    append(log, HALF_2)
    got = t.poll()
    # The record once, and the issue withdrawn (a slow writer, not a cut line).
    assert [type(e).__name__ for e in got] == ["Resolved", "Record"] and got[1].line == 2
    assert (got[0].line, got[0].kind) == (2, "truncated_tail")
    assert t.finalize() == []


def test_complete_record_without_newline_is_emitted_after_grace_once(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    clock = FakeClock()
    t = FileTailer(log, clock=clock, idle_grace=2.0)
    append(log, line(0).rstrip(b"\n"))
    assert t.poll() == []
    clock.t += 3
    assert ids(t.poll()) == [0]
    append(log, b"\n" + line(1))
    assert ids(t.poll()) == [1]
    append(log, line(2).rstrip(b"\n"))
    assert t.poll() == []
    clock.t += 3
    assert ids(t.poll()) == [2]
    append(log, line(3))  # glued onto the early-emitted record: only the new one comes out
    got = t.poll()
    assert ids(got) == [3]  # (whether two values on one line are an issue is decode_line's business)
    assert [i for i in issues(got) if i.kind == "truncated_tail"] == []
    assert t.finalize() == []


B14 = (
    b'{"type":"user","message":{"role":"user","content":"first"},"uuid":"u1","sessionId":"s1",'
    b'"timestamp":"2025-01-01T00:00:00Z"}\n'
    b'{"type":"pr-link","sessionId":"s1","prNu{"type":"assistant","message":{"id":"msg_2","role":"assistant",'
    b'"model":"claude-sonnet-4-5","content":[{"type":"text","text":"second"}],"usage":{"input_tokens":5,'
    b'"cache_creation_input_tokens":0,"cache_read_input_tokens":100,"output_tokens":3}},"requestId":"req_2",'
    b'"uuid":"a2","sessionId":"s1","timestamp":"2025-01-01T00:00:02Z"}\n'
    b'{"type":"user","message":{"role":"user","content":"third"},"uuid":"u3","sessionId":"s1",'
    b'"timestamp":"2025-01-01T00:00:03Z"}\n'
    b'{"type":"assistant","message":{"id":"msg_4","role":"assistant","content":[{"type":"text","text":"cut mid-str'
)


def test_b14_glued_records_and_truncated_tail(tmp_path: Path) -> None:
    log = tmp_path / "s1.jsonl"
    log.write_bytes(B14)
    clock = FakeClock()
    t = FileTailer(log, clock=clock)
    got = t.poll()
    recs = [e for e in got if isinstance(e, Record)]
    assert [(r.line, r.value.get("uuid")) for r in recs] == [(1, "u1"), (2, "a2"), (3, "u3")]
    assert [(i.line, i.kind) for i in issues(got)] == [(2, "glued_records")]
    got = t.finalize()
    assert [(i.line, i.kind) for i in issues(got)] == [(4, "truncated_tail")]
    assert not [e for e in got if isinstance(e, Record)]


# ---------------------------------------------------------------------------------------------- bad lines


def test_bad_lines_never_stop_the_tail(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    t = FileTailer(log, max_line_bytes=4096)
    data = (b"\xef\xbb\xbf" + line(0)                     # 1 BOM
            + line(1).replace(b"\n", b"\r\n")             # 2 CRLF
            + b"\n"                                        # 3 blank
            + b'{"id": 3, "x": "a\x00b"}'.replace(b"\x00", b"") + b"\n"  # 4 plain
            + b'{"id": 4}\x00\n'                           # 5 NUL byte
            + b'{"id": 5, "t": "\xff"}\n'                  # 6 invalid UTF-8
            + b"{not json}\n"                              # 7 invalid JSON
            + b'{"id": 7, "big": "' + b"x" * 10_000 + b'"}\n'  # 8 over the cap
            + line(8))                                     # 9
    for k in range(0, len(data), 1000):
        append(log, data[k:k + 1000])
        t.poll()
    t2 = FileTailer(log, max_line_bytes=4096)
    got = t2.poll()
    assert [(r.value["id"], r.line) for r in got if isinstance(r, Record)] == [
        (0, 1), (1, 2), (3, 4), (4, 5), (5, 6), (8, 9)]
    assert [(i.line, i.kind) for i in issues(got)] == [
        (5, "nul_bytes"), (6, "invalid_utf8"), (7, "invalid_json"), (8, "oversized_line")]


def test_missing_file_then_appears_and_unreadable_is_an_issue(tmp_path: Path) -> None:
    log = tmp_path / "later.jsonl"
    t = FileTailer(log)
    assert t.poll() == [] and t.finalize() == []
    append(log, line(1))
    got = t.poll()
    assert ids(got) == [1] and resets(got) == []
    d = FileTailer(tmp_path)  # a directory is not a file: nothing, no error
    assert d.poll() == []


def test_large_read_in_slices_keeps_order(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    append(log, b"".join(line(i) for i in range(2000)))
    t = FileTailer(log, chunk_bytes=4096)
    out: list[Any] = []
    rounds = 0
    while True:
        out += t.poll(max_bytes=8192)
        rounds += 1
        if t.lag == 0:
            break
    assert rounds > 5 and ids(out) == list(range(2000))


# ---------------------------------------------------------------------------------------------- B20 polling


def test_b20_same_second_writes_and_mtime_set_back(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    append(log, line("A"))
    st = os.stat(log)
    t = FileTailer(log)
    assert ids(t.poll()) == ["A"]
    append(log, line("B"))
    os.utime(log, ns=(st.st_atime_ns, st.st_mtime_ns))  # same mtime as before the write
    assert ids(t.poll()) == ["B"]
    append(log, line("C"))
    os.utime(log, ns=(st.st_atime_ns, st.st_mtime_ns - 10**10))  # set back by hand
    assert ids(t.poll()) == ["C"]


class Collector:
    """Follows a file as the engine does (a :class:`~ctxwatch.source.Waker` waking a tailer) in a thread, and hands
    over the decoded events and, as ``("notice", message)``, the waker's notices."""

    def __init__(self, target: Any, **kw: Any) -> None:
        self.stop = threading.Event()
        self.q: queue.Queue[Any] = queue.Queue()
        self.thread = threading.Thread(target=self._run, args=(target, kw), daemon=True)
        self.thread.start()

    def _run(self, target: Any, kw: dict[str, Any]) -> None:
        try:
            tailer = FileTailer(target)
            for item in tailer.poll():
                self.q.put(item)
            waker = Waker(str(target), self.stop, **kw)
            for wake in waker:
                if wake.notice is not None:
                    self.q.put(("notice", wake.notice))
                before = tailer.bytes_read
                for item in tailer.poll():
                    self.q.put(item)
                if wake.sweep:
                    waker.swept(tailer.bytes_read > before)
        finally:
            self.q.put(None)

    def until(self, pred: Any, timeout: float = 15.0) -> list[Any]:
        """Items until one satisfies ``pred`` (the timeout only guards against hanging)."""
        got = []
        while True:
            item = self.q.get(timeout=timeout)
            assert item is not None, f"following ended early; got {got}"
            got.append(item)
            if pred(item):
                return got

    def close(self) -> list[Any]:
        self.stop.set()
        self.thread.join(timeout=15)
        assert not self.thread.is_alive()
        rest = []
        while True:
            item = self.q.get(timeout=5)
            if item is None:
                return rest
            rest.append(item)


def is_rec(name: Any) -> Any:
    return lambda it: isinstance(it, Record) and it.value["id"] == name


def is_notice(it: Any) -> bool:
    return isinstance(it, tuple) and it[0] == "notice"


def test_b20_poll_mode_sees_both_writes_and_set_back_mtime(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    append(log, line("A"))
    st = os.stat(log)
    c = Collector(log, poll=True, poll_interval=0.05)
    try:
        c.until(is_rec("A"))
        append(log, line("B"))
        os.utime(log, ns=(st.st_atime_ns, st.st_mtime_ns))
        got = c.until(is_rec("B"))
        append(log, line("C"))
        os.utime(log, ns=(st.st_atime_ns, st.st_mtime_ns - 10**10))
        got += c.until(is_rec("C"))
    finally:
        rest = c.close()
    assert [it.value["id"] for it in got + rest if isinstance(it, Record)] == ["B", "C"]


def test_file_events_follow_a_rotation(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    c = Collector(log, sweep_interval=0.2)  # file missing at start
    try:
        append(log, line(1))
        c.until(is_rec(1))
        os.rename(log, tmp_path / "calls.jsonl.1")
        append(log, line(2))
        got = c.until(is_rec(2))
    finally:
        got += c.close()
    assert [it.reason for it in got if isinstance(it, Reset)] == ["rotated"]


def test_falls_back_to_polling_when_watching_raises(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"

    def broken(*a: Any, **k: Any) -> Any:
        raise OSError("OS file watch limit reached")

    c = Collector(log, watcher=broken, poll_interval=0.02)
    try:
        notice = c.until(is_notice)
        assert "could not start" in notice[-1][1] and "watch limit" in notice[-1][1]
        append(log, line(1))
        c.until(is_rec(1))
    finally:
        c.close()


def test_falls_back_when_no_events_arrive_although_the_file_grows(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    ticks = threading.Semaphore(0)

    def silent(*a: Any, stop_event: threading.Event, **k: Any) -> Any:
        while not stop_event.is_set():  # a watcher on a filesystem that never sends events
            ticks.acquire(timeout=0.05)
            yield set()

    c = Collector(log, watcher=silent, sweep_interval=0.01, poll_interval=0.02)
    try:
        for i in range(2):
            append(log, line(i))
            c.until(is_rec(i))
        append(log, line(2))
        got = c.until(is_notice)
        assert "no file events" in got[-1][1] and "switched to polling" in got[-1][1]
        append(log, line(3))
        c.until(is_rec(3))
    finally:
        c.close()


def test_polls_from_the_start_on_filesystems_without_events(tmp_path: Path, monkeypatch: Any) -> None:
    import ctxwatch.source.wake as wake_mod

    monkeypatch.setattr(wake_mod, "filesystem_type", lambda p: "9p")
    calls: list[dict[str, Any]] = []

    def recording(*a: Any, **k: Any) -> Any:
        calls.append(k)
        raise AssertionError("no watcher on a filesystem that sends no events")

    log = tmp_path / "calls.jsonl"
    waker = Waker(str(log), threading.Event(), watcher=recording)
    assert waker.mode == "polling" and waker.why is not None and "9p" in waker.why
    c = Collector(log, watcher=recording, poll_interval=0.02)
    try:
        append(log, line(1))
        c.until(is_rec(1))
    finally:
        c.close()
    assert calls == []


def test_released_handle_replaced_with_partial_line_does_not_misread_new_file(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    append(log, line(1) + HALF_1)
    t = FileTailer(log, keep_open=False)
    assert ids(t.poll()) == [1]
    tmp = tmp_path / "x.tmp"
    tmp.write_bytes(line(2) + line(3) + line(4))  # longer than the old file: old offsets point inside it
    os.replace(tmp, log)
    got = t.poll()
    assert [(i.kind, i.line) for i in issues(got)] == [("truncated_tail", 2)]
    assert resets(got) == ["replaced"] and ids(got) == [2, 3, 4]
    assert isinstance(got[0], Issue) and isinstance(got[1], Reset)


def test_a_capped_read_that_stops_mid_line_is_not_a_truncated_tail(tmp_path: Path) -> None:
    """A backfill reads in slices; a slice may end inside a line. However long the slice took to process,
    the rest of that line is unread, not half-written: no truncated_tail issue, and the record arrives."""
    now = [0.0]
    path = tmp_path / "big.jsonl"
    rec = {"request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "x" * 5000}]},
           "response": {"usage": {"prompt_tokens": 8, "completion_tokens": 1}}}
    path.write_text(json.dumps(rec) + "\n")
    t = FileTailer(str(path), idle_grace=2.0, clock=lambda: now[0])
    first = t.poll(max_bytes=1000)  # stops inside the only line
    assert not [e for e in first if isinstance(e, Issue)]
    now[0] += 60.0  # the slice took a minute to process on a loaded machine
    # A poll whose byte budget went elsewhere (a folder's files share one budget) reads nothing here.
    events = t.poll(max_bytes=0)
    assert not [e for e in events if isinstance(e, Issue)]
    while t.position < t.size:
        events += t.poll(max_bytes=1000)
    assert [e.value for e in events if isinstance(e, Record)] == [rec]
    assert not [e for e in events if isinstance(e, Issue)]


def test_truncate_and_regrow_with_the_same_bytes_before_the_offset_is_detected_by_the_head(tmp_path: Path) -> None:
    """A file cut and rewritten past the old offset in one step, whose 64 bytes before the old offset happen to
    match (records that end alike): no reset was seen and the new file's first record was lost.  Its head
    differs, so it restarts now, and every new record is read once."""
    tail = '"text": "' + "x" * 80 + '"}\n'
    def raw(i: str) -> bytes:
        return ('{"id": "' + i + '", ' + tail).encode()

    log = tmp_path / "calls.jsonl"
    log.write_bytes(raw("a0"))
    t = FileTailer(log)
    assert ids(t.poll()) == ["a0"]
    new = raw("n0") + raw("n1") + raw("n2")
    old_end = len(raw("a0"))
    assert new[old_end - 64:old_end] == raw("a0")[-64:]  # (what the check of the bytes before the offset sees)
    log.write_bytes(new)
    got = t.poll()
    assert resets(got) == ["truncated"] and ids(got) == ["n0", "n1", "n2"]
    t.close()
