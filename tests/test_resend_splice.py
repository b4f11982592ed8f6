"""A re-sending log's line split with its re-sent history cut (:meth:`ResendDecoder._spliced`): msgspec scans the
new bytes only, and the value is still the one ``orjson.loads`` gives of the line, whatever the line holds (the
cut bytes elsewhere, the mark itself, damage after the cut, quotes and escapes before it)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxwatch.formats.canonical import _READ
from ctxwatch.formats.wire import resend
from ctxwatch.formats.wire.resend import ResendDecoder

sys.path.insert(0, str(Path(__file__).resolve().parent / "benchmarks"))


def decoded(lines: list[bytes]) -> tuple[list[object], int]:
    """Each line's value through one decoder, and how many lines were split spliced."""
    d = ResendDecoder(_READ)
    n = [0]
    real = d._spliced

    def spy(data: bytes):  # type: ignore[no-untyped-def]
        got = real(data)
        n[0] += got is not None
        return got

    d._spliced = spy  # type: ignore[method-assign]
    return [d(line) for line in lines], n[0]


def test_a_generated_agent_log_decodes_as_orjson_does(tmp_path: Path) -> None:
    from bench_ingest import generate

    log = tmp_path / "run.jsonl"
    generate(log, 4, calls=80)
    lines = log.read_bytes().splitlines()
    values, spliced = decoded(lines)
    assert values == [orjson.loads(line) for line in lines]
    assert spliced > 60  # (every line whose previous history reached SPLICE_FROM bytes)


def rec(messages: list[object], **extra: object) -> bytes:
    return json.dumps({"timestamp": 1, "request": {"model": "gpt-4o", "messages": messages, **extra},
                       "response": {"usage": {"prompt_tokens": 5}}}).encode()


@pytest.fixture
def small_splice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(resend, "SPLICE_FROM", 16)


def history(n: int) -> list[dict[str, str]]:
    return [{"role": "user" if i % 2 else "assistant", "content": f'turn {i} "quoted" \\ back'} for i in range(n)]


@pytest.mark.usefixtures("small_splice")
def test_lines_that_must_not_be_spliced_as_they_look() -> None:
    h = history(6)
    lines = [
        rec(h),
        rec([*h, {"role": "user", "content": "next"}]),  # (spliced)
        rec([*h, {"role": "user", "content": "next"}]),  # (the same history again: spliced, nothing new)
        # the old history under another key first, the real history another list
        rec([{"role": "user", "content": "other"}], backup=[*h, {"role": "user", "content": "next"}]),
        rec(h, metadata={"messages": h}),  # (the old bytes at another "messages" key first: not this history)
        rec([*h, {"role": "user", "content": '"\\u0000ctxwatch:re-sent"'}]),  # (a message holding the mark)
        rec([*h, {"role": "user", "content": "\\u0000ctxwatch:re-sent"}]),
    ]
    values, spliced = decoded(lines)
    assert values == [orjson.loads(line) for line in lines]
    assert spliced >= 2


@pytest.mark.usefixtures("small_splice")
def test_damage_after_the_cut_is_the_damage_orjson_finds() -> None:
    h = history(5)
    first = rec(h)
    good = rec([*h, {"role": "user", "content": "next"}])
    broken = good.replace(b'"next"}', b'"next"')  # (an entry left open after the re-sent ones)
    bad_utf8 = good.replace(b'"next"', b'"n\xffxt"')
    d = ResendDecoder(_READ)
    for line in (broken, bad_utf8):
        with pytest.raises(orjson.JSONDecodeError):
            orjson.loads(line)
        assert d(first) == orjson.loads(first)
        with pytest.raises(orjson.JSONDecodeError):
            d(line)


texts = st.text(alphabet=st.sampled_from(['"', "\\", "a", " ", "é", "\u0000", "[", "]", ",", ":", "{", "}"]),
                max_size=12)


@settings(max_examples=150, deadline=None)
@given(st.lists(texts, min_size=1, max_size=6), st.lists(texts, max_size=3), texts,
       st.sampled_from(["", " ", "\n"]))
def test_any_history_and_any_new_messages_decode_as_orjson_does(old: list[str], new: list[str], model: str,
                                                                 space: str) -> None:
    resend_from = resend.SPLICE_FROM
    resend.SPLICE_FROM = 4
    try:
        h = [{"role": "user", "content": t} for t in old]
        lines = [rec(h, model=model),
                 rec([*h, *({"role": "tool", "content": t} for t in new)], model=model).replace(
                     b'"messages": [', b'"messages":' + space.encode() + b"[")]
        values, spliced = decoded(lines)
        assert values == [orjson.loads(line) for line in lines]
        assert spliced == 1
    finally:
        resend.SPLICE_FROM = resend_from
