"""Test helpers that build inputs independently of the code under test."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest


def batch_to_canonical(input_path: Path, output_path: Path, dest: Path) -> list[dict]:
    """Join an OpenAI batch input and output file by ``custom_id`` into canonical ``{request, response}`` lines.

    Written with plain ``json`` so that it shares no code with ctxwatch's readers. Returns the joined records.
    """
    requests = {}
    for line in input_path.read_text().splitlines():
        if line.strip():
            d = json.loads(line)
            requests[d["custom_id"]] = d["body"]
    records = []
    for line in output_path.read_text().splitlines():
        if not line.strip():
            continue
        d = json.loads(line)
        if d["custom_id"] in requests and d.get("response"):
            records.append({"request": requests[d["custom_id"]], "response": d["response"]["body"]})
    dest.write_text("".join(json.dumps(r) + "\n" for r in records))
    return records


def claude_code_turn(i: int, cache_read: int, parent: str | None, timestamp: str,
                     model: str = "claude-opus-4-1-20250805") -> list[dict]:
    """One Claude Code turn as two transcript lines: user ``u{i}`` (child of ``parent``) and the assistant's
    response ``a{i}`` (message ``msg_{i}``, request ``r{i}``) reporting ``input_tokens`` 5, a cache write of 100,
    a cache read of ``cache_read`` and 10 output tokens; session ``s1``."""
    user = {"type": "user", "message": {"role": "user", "content": f"q{i}"}, "uuid": f"u{i}",
            "parentUuid": parent, "sessionId": "s1", "timestamp": timestamp}
    assistant = {"type": "assistant", "message": {
        "id": f"msg_{i}", "role": "assistant", "model": model, "content": [{"type": "text", "text": "ok"}],
        "usage": {"input_tokens": 5, "cache_creation_input_tokens": 100, "cache_read_input_tokens": cache_read,
                  "output_tokens": 10}},
        "requestId": f"r{i}", "uuid": f"a{i}", "parentUuid": f"u{i}", "sessionId": "s1", "timestamp": timestamp}
    return [user, assistant]


def follow_lines(log: Path, done: Callable[[list[dict[str, Any]]], bool], seconds: float = 20.0
                 ) -> tuple[list[dict[str, Any]], str]:
    """Run ``report --follow --jsonl``'s loop (:func:`ctxwatch.output.follow.follow_jsonl`, polling every 0.05 s) on
    ``log`` in a thread until ``done(objects printed so far)`` or ``seconds`` pass, then stop it; return every
    JSON object it printed and the text as written.  Raises AssertionError with the follow loop's own exception
    if it raised one."""
    from ctxwatch.config import Settings
    from ctxwatch.output.follow import follow_jsonl

    lines: list[dict[str, Any]] = []
    chunks: list[str] = []

    class Out:
        def write(self, s: str) -> int:
            chunks.append(s)
            lines.extend(json.loads(x) for x in s.splitlines())
            return len(s)

        def flush(self) -> None:
            pass

    stop = threading.Event()
    errors: list[BaseException] = []

    def run() -> None:
        try:
            follow_jsonl(str(log), None, Settings(), Out(), stop, poll=True, poll_interval=0.05)
        except BaseException as exc:
            errors.append(exc)

    th = threading.Thread(target=run, daemon=True)
    th.start()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not done(lines) and not errors:
        time.sleep(0.05)
    stop.set()
    th.join(15)
    assert not errors, errors
    return lines, "".join(chunks)


def shared_case(shared_logs: Path, name: str) -> str:
    """Path of a failure case's input in ``../shared/cases/inputs`` (beside the sample logs); skips when the
    cases are absent."""
    path = shared_logs.parent / "cases" / "inputs" / name
    if not path.exists():
        pytest.skip(f"failure case input not found at {path}")
    return str(path)


def report_of(path: str, *args: str) -> dict:
    """``ctxwatch report --json PATH ARGS...`` as a dict (in process)."""
    from click.testing import CliRunner

    from ctxwatch.cli import main

    res = CliRunner().invoke(main, ["report", "--json", path, *args])
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


def report_bytes(path: Path | str, *args: str) -> bytes:
    """``ctxwatch report --json ARGS... PATH``'s bytes (in process), the command having succeeded."""
    from click.testing import CliRunner

    from ctxwatch.cli import main

    res = CliRunner().invoke(main, ["report", "--json", *args, str(path)])
    assert res.exit_code == 0, res.output
    return res.stdout_bytes


def serial_and_parallel(folder: Path, fmt: str | None = None) -> tuple[dict, dict]:
    """The ``report --json`` documents of ``folder`` read serially and by worker processes (the size threshold
    lowered so that a small folder is split), without a cache."""
    from ctxwatch.config import Settings
    from ctxwatch.engine import folder as multi
    from ctxwatch.engine import parallel
    from ctxwatch.output.report import report_json

    serial = report_json(multi.load_many([str(folder)], fmt, Settings()))
    old = parallel.PARALLEL_MIN_BYTES
    parallel.PARALLEL_MIN_BYTES = 0
    try:
        par = report_json(multi.load_many([str(folder)], fmt, Settings(), parallel=True))
    finally:
        parallel.PARALLEL_MIN_BYTES = old
    return serial, par


def half_grown_project(shared_logs: Path, tmp_path: Path) -> tuple[Path, Path, bytes, int]:
    """A Claude Code project folder of the ``spotter_*`` samples in which one session holds only the first half
    of its lines: ``(folder, that session's file, its whole bytes, where its half ends)``."""
    import shutil

    folder = tmp_path / "project"
    folder.mkdir()
    for p in sorted((shared_logs / "claude-code").glob("spotter_*.jsonl")):
        shutil.copy(p, folder / p.name)
    grown = folder / "spotter_4d5611e5_head200.jsonl"
    full = grown.read_bytes()
    cut = full.rfind(b"\n", 0, len(full) // 2) + 1
    grown.write_bytes(full[:cut])
    return folder, grown, full, cut


def reads_from(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The offsets the reads through the cache start at, one per file read, as they happen."""
    from ctxwatch.engine import warm

    starts: list[int] = []
    real = warm._complete_lines

    def spy(path, offset, *rest):  # type: ignore[no-untyped-def]
        starts.append(offset)
        return real(path, offset, *rest)

    monkeypatch.setattr(warm, "_complete_lines", spy)
    return starts


def finish(folder: Path) -> float:
    """Make every log of ``folder`` one not written to for longer than
    :data:`~ctxwatch.engine.cachedb.FINISHED_AFTER` (its read's result is then kept, not its reader's state);
    returns the modification time given them."""
    import os
    import time

    from ctxwatch.engine import cachedb

    past = time.time() - cachedb.FINISHED_AFTER - 600
    for p in folder.iterdir():
        os.utime(p, (past, past))
    return past


def count_kind(value: object) -> str:
    """The issue kind a count field holding ``value`` (a decoded JSON value) should give, by the rule
    docs/reliability.md states: a value of the wrong JSON type (a string, a bool, null, an array, an object) is
    a damaged line (``invalid_field``), a number that cannot be a count (negative, fractional, infinite, beyond
    2**53) a note (``implausible_value``).  For JSON text, pass ``json.loads(text)``."""
    number = isinstance(value, int | float) and not isinstance(value, bool)
    return "implausible_value" if number else "invalid_field"
