"""Standard input and named pipes are copied to a temporary file with a bound: past it, an error naming it."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from ctxwatch.cli import main, spool

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
                for _ in range(16):
                    w.write(b"\0" * (1 << 20))
            except BrokenPipeError:
                pass  # (the reader stopped at its limit)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    res = CliRunner().invoke(main, ["report", str(fifo)])
    writer.join(30)
    assert res.exit_code == 2
    assert f"{fifo}: more than 4,194,305 bytes on the pipe" in res.output.replace("\n", "")


def test_the_default_limit_is_16_gib() -> None:
    assert spool.MAX_SPOOL_BYTES == 16 * 1024**3
