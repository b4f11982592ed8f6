"""Standard input and named pipes are copied to a temporary file with a bound: past it, an error naming it."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from ctxwatch.cli import main, spool

ROOT = Path(__file__).resolve().parents[1]

LOG = Path(__file__).resolve().parents[1] / "sample_logs" / "openai_chat_demo.jsonl"


def test_standard_input_past_the_limit_is_an_error_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """``cat /dev/zero | ctxwatch report -`` copied to disk with no end; now the copy stops at the limit (here
    1,000 bytes, 16 GiB by default) with status 2 and a message naming it."""
    monkeypatch.setattr(spool, "MAX_SPOOL_BYTES", 1000)
    res = CliRunner().invoke(main, ["report", "-"], input=b"\0" * 5000)
    assert res.exit_code == 2
    assert "-: more than 1,000 bytes on standard input" in res.output
    res = CliRunner().invoke(main, ["report", "-"], input=LOG.read_bytes()[:1000])
    assert "more than" not in res.output  # (exactly the limit is read)


def test_a_named_pipe_past_the_limit_is_an_error_naming_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(spool, "MAX_SPOOL_BYTES", (4 << 20) + 1)
    fifo = tmp_path / "zeros"
    os.mkfifo(fifo)

    def write() -> None:
        with open(fifo, "wb") as w:
            try:
                w.write(b'{"model": "gpt-4o"}\n')  # (a log's head, then text: copied up to the limit)
                for _ in range(16):
                    w.write(b" " * (1 << 20))
            except BrokenPipeError:
                pass  # (the reader stopped at its limit)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    res = CliRunner().invoke(main, ["report", str(fifo)])
    writer.join(30)
    assert res.exit_code == 2
    assert f"{fifo}: more than 4,194,305 bytes on the pipe" in res.output.replace("\n", "")


def test_a_pipe_of_no_json_is_refused_after_its_first_mebibyte(tmp_path: Path) -> None:
    """``cat /dev/zero | ctxwatch report -``: the first MiB holds no JSON object, so nothing more is copied (the
    command ends at once, here after 1 MiB and a bit of 8 MiB of zeros, instead of at the 16 GiB limit)."""
    data = b"\0" * (8 << 20)
    res = CliRunner().invoke(main, ["report", "-"], input=data)
    assert res.exit_code == 2
    assert "-: not a JSONL log: the first 1 MiB on standard input hold no JSON object" in res.output
    res = CliRunner().invoke(main, ["report", "-"], input=b"banner\n" * 1000 + (ROOT / "sample_logs" /
                                                                                 "openai_chat_demo.jsonl").read_bytes())
    assert res.exit_code == 0  # (a log after a few lines of something else is still read)


def test_a_pipe_of_binary_data_is_refused_after_its_first_mebibyte(tmp_path: Path) -> None:
    """``ctxwatch report - < /dev/urandom``: random bytes hold a ``{`` in every MiB, so that test alone copied them
    until the 16 GiB limit; a head that is not text (one byte in eight a raw control byte) is refused at once.
    A log with a damaged line or two in its head (a NUL byte, bad UTF-8) is still read, its damage reported."""
    import random

    data = random.Random(1).randbytes(4 << 20)
    assert b"{" in data[:1 << 20]
    res = CliRunner().invoke(main, ["report", "-"], input=data)
    assert res.exit_code == 2
    assert "-: not a JSONL log: the first 1 MiB on standard input are not text (binary data)" in res.output
    log = (ROOT / "sample_logs" / "openai_chat_demo.jsonl").read_bytes()
    damaged = b"{\"x\": \"\0\xff\xfe\"}\n" + log * (2 + (1 << 20) // len(log))
    res = CliRunner().invoke(main, ["report", "--json", "-"], input=damaged)
    assert res.exit_code == 0 and len(json.loads(res.output)["calls"]) > 20


def test_the_default_limit_is_16_gib() -> None:
    assert spool.MAX_SPOOL_BYTES == 16 * 1024**3


def test_an_inspect_eval_archive_on_standard_input_is_read_as_from_its_path(shared_logs: Path) -> None:
    """An Inspect ``.eval`` log is a zip, told and opened by its name: its copy of standard input is named so
    too, and gives the calls its path gives, shown as ``-``."""
    path = shared_logs / "request-response" / "inspect-ai" / "2024-11-05T13-32-37-05-00_input-task.eval"
    by_path = CliRunner().invoke(main, ["report", "--json", "--no-cache", str(path)])
    piped = CliRunner().invoke(main, ["report", "--json", "--no-cache", "-"], input=path.read_bytes())
    assert by_path.exit_code == 0 and piped.exit_code == 0, piped.output
    want, got = json.loads(by_path.stdout), json.loads(piped.stdout)
    assert got["format"] == want["format"] == "inspect-ai" and got["file"] == "-"
    assert len(got["calls"]) == len(want["calls"]) > 0
    for g, w in zip(got["calls"], want["calls"], strict=True):
        assert g["file"] == "-"
        g.pop("file"), w.pop("file")
        assert g == w
