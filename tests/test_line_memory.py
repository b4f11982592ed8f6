"""Peak memory of ``report --json`` on lines of millions of tiny JSON values: a small multiple of the longest line.

Decoded whole, a line of 500,000 ``{"role": "user", "content": "hi"}`` messages is 500,000 dicts, some 15 times
the line's bytes, and a line of millions of ``{}`` in a key no number uses costs 30 times its bytes.  The logs
are written here (not committed), read by ``ctxwatch report --json`` in a subprocess, and its peak RSS above
that of the same command on a one-call log is held to a few times the longest line (:data:`BOUND`,
:data:`BOUND_MESSAGES`; both with the start-up caches warm); the numbers it reports are checked against the
file read with plain ``json``.  Before the line decoder (:mod:`ctxwatch.formats.wire.resend`) the two cost 29
and 23 times their longest line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

#: Peak RSS above the start-up's, as a multiple of the longest line's bytes.
BOUND = 4.0
#: The same for a line of 500,000 one-word messages, which peaks at about 4.7 times its bytes: each entry is a
#: 48-byte span while it is decoded, and the run's per-message summaries are held while the command re-reads
#: the last call's line for its analysis.
BOUND_MESSAGES = 6.0

_MEASURE = (
    "import resource, subprocess, sys\n"
    "out = subprocess.run(sys.argv[1:], capture_output=True)\n"
    "sys.stderr.buffer.write(out.stderr)\n"
    "sys.stdout.buffer.write(out.stdout)\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n"
    "sys.exit(out.returncode)\n"
)


def _record(k: int, messages: list[dict], **top: object) -> str:
    """One canonical record (written as Python's json writes it: ``", "`` and ``": "`` separators)."""
    return json.dumps({
        "timestamp": 1_700_000_000 + k, **top,
        "request": {"model": "gpt-4o", "messages": messages},
        "response": {"id": f"chatcmpl-{k}", "model": "gpt-4o",
                     "choices": [{"message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
                     "usage": {"prompt_tokens": 1000 + k, "completion_tokens": 2 + k}},
    })


def _report(path: Path, tmp: Path) -> tuple[dict, int]:
    """``report --json`` of ``path`` and the command's peak RSS in bytes (``ru_maxrss`` is in KiB on Linux)."""
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp / "cache"), "XDG_CONFIG_HOME": str(tmp / "config")}
    cmd = [sys.executable, "-c", "from ctxwatch.cli import main; main()", "report", "--json", str(path)]
    out = subprocess.run([sys.executable, "-c", _MEASURE, *cmd], capture_output=True, env=env, check=True)
    rss = int(out.stderr.decode().strip().splitlines()[-1]) * 1024
    return json.loads(out.stdout), rss


def _said(rss: int, start: int, line: int) -> str:
    return f"peak {rss / 1e6:.0f} MB, start {start / 1e6:.0f} MB, longest line {line / 1e6:.0f} MB"


def _longest_line(path: Path) -> int:
    with open(path, "rb") as fh:
        return max(len(ln) for ln in fh)


@pytest.fixture(scope="module")
def start(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, Path]:
    """Peak RSS of ``report --json`` on a one-call log (the interpreter, the tokenizer, the catalogue), and the
    folder of the start-up caches it warmed: the big logs are read with them warm too (a first start parses the
    tokenizer's ranks, which is no part of a line's cost)."""
    tmp = tmp_path_factory.mktemp("small")
    rss = []
    for k in range(2):  # (the first start writes the start-up caches; the second is measured, its log new to the
        small = tmp / f"small{k}.jsonl"  # cache of earlier reads, so that its text is counted)
        small.write_text(_record(0, [{"role": "user", "content": f"hi {k}"}]) + "\n")
        rss.append(_report(small, tmp)[1])
    return rss[-1], tmp


def _calls_from_file(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(ln) for ln in fh]


def test_a_line_of_half_a_million_tiny_messages(tmp_path: Path, start: tuple[int, Path]) -> None:
    # Two requests of 500,000 one-word messages, the second not a re-send of the first (another first message).
    path = tmp_path / "tiny.jsonl"
    with open(path, "w") as fh:
        for k in range(2):
            msgs = [{"role": "user", "content": f"task {k}"}] + [{"role": "user", "content": "hi"}] * 500_000
            fh.write(_record(k, msgs) + "\n")
    start_rss, warm = start
    doc, rss = _report(path, warm)
    line = _longest_line(path)
    assert rss - start_rss <= BOUND_MESSAGES * line, _said(rss, start_rss, line)
    records = _calls_from_file(path)
    assert [c["prompt_tokens_reported"] for c in doc["calls"]] == [r["response"]["usage"]["prompt_tokens"]
                                                                  for r in records]
    assert [c["completion_tokens_reported"] for c in doc["calls"]] == [r["response"]["usage"]["completion_tokens"]
                                                                      for r in records]
    assert [c["messages"] for c in doc["calls"]] == [len(r["request"]["messages"]) for r in records]


def test_a_line_of_millions_of_empty_objects_in_an_unread_key(tmp_path: Path, start: tuple[int, Path]) -> None:
    path = tmp_path / "empty.jsonl"
    with open(path, "w") as fh:
        fh.write(_record(0, [{"role": "user", "content": "hi"}]) + "\n")
        fh.write(_record(1, [{"role": "user", "content": "hi"}], metadata={"trace": [{}] * 8_000_000}) + "\n")
    start_rss, warm = start
    doc, rss = _report(path, warm)
    line = _longest_line(path)
    assert rss - start_rss <= BOUND * line, _said(rss, start_rss, line)
    usage = [r["response"]["usage"] for r in _calls_from_file(path)]
    assert [c["prompt_tokens_reported"] for c in doc["calls"]] == [u["prompt_tokens"] for u in usage]
    assert [c["messages"] for c in doc["calls"]] == [1, 1]
