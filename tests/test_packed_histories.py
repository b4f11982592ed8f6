"""A run's calls are kept in the cache with each re-sent history packed: the part the previous call's history
starts it with, then its own tail.  Unpacked, every call is equal to the one read, and a warm read of a log
that grew after the packed state was kept gives the calls of a cold read."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from helpers import reads_from
from hypothesis import given
from hypothesis import strategies as st

from ctxwatch.engine import load_run
from ctxwatch.engine.cache import RunCache
from ctxwatch.model import Call
from ctxwatch.model.histories import pack_calls, shared_prefix, unpack_calls

DEMO = Path(__file__).resolve().parent.parent / "sample_logs" / "openai_chat_demo.jsonl"


@given(st.lists(st.integers(0, 3), max_size=30), st.lists(st.integers(0, 3), max_size=30))
def test_shared_prefix_is_the_simple_count(a: list[int], b: list[int]) -> None:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    assert shared_prefix(tuple(a), tuple(b)) == n  # type: ignore[arg-type]


def test_the_calls_of_a_re_sending_log_come_back_equal_and_pack_small() -> None:
    calls = load_run(str(DEMO)).calls
    assert len(calls) == 20 and sum(len(c.messages) for c in calls) > 100
    packed = pack_calls(calls)
    back = unpack_calls(pickle.loads(pickle.dumps(packed)))
    assert back == calls and all(isinstance(c, Call) for c in back)
    assert [c.messages for c in back] == [c.messages for c in calls]
    # (each packed history holds only what the previous call's does not start it with)
    tails = [p[1] for p in packed if isinstance(p, tuple)]
    at = list(Call.__dataclass_fields__).index("messages")
    expected, prev = [], ()
    for c in calls:  # (the tails worked out a message at a time)
        if c.messages:
            n = 0
            while n < min(len(prev), len(c.messages)) and prev[n] == c.messages[n]:
                n += 1
            expected.append(len(c.messages) - n)
            prev = c.messages
    assert [len(t[at]) for t in tails] == expected and sum(expected) < sum(len(c.messages) for c in calls)


def test_calls_without_a_history_or_missing_pass_as_they_are() -> None:
    calls = load_run(str(DEMO)).calls
    mixed = [calls[0], None, calls[1]]
    assert unpack_calls(pack_calls(mixed)) == mixed


def test_a_warm_read_of_a_grown_log_gives_the_calls_of_a_cold_read(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    lines = DEMO.read_bytes().splitlines(keepends=True)
    log = tmp_path / "run.jsonl"
    log.write_bytes(b"".join(lines[:12]))
    cache = RunCache(str(tmp_path / "cache.sqlite3"))
    assert len(load_run(str(log), cache=cache).calls) == 12
    with log.open("ab") as fh:
        fh.write(b"".join(lines[12:]))
    starts = reads_from(monkeypatch)
    warm = load_run(str(log), cache=RunCache(str(tmp_path / "cache.sqlite3"))).calls
    assert starts and starts[0] == len(b"".join(lines[:12]))  # (read on from the kept state, not again)
    cold = load_run(str(log)).calls
    assert len(cold) == 20 and warm == cold
