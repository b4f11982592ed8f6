"""The check that a line a format's filter skips is one JSON value (:func:`ctxwatch.source.decode.is_one_value`)
agrees with ``orjson.loads`` on real lines and on damaged copies of them (bytes changed, cut out, put in), so a
damaged line is reported whichever way it is checked.  The one known difference, a number past a double's range
(which the stdlib reads, as the line's decoding does), is left out of the comparison and tested on its own."""

from __future__ import annotations

import random
import re
from pathlib import Path

import orjson

from ctxwatch.source.decode import is_one_value

#: A number orjson refuses and the stdlib reads as infinity: a value with an exponent of three digits or more.
BIG_EXPONENT = re.compile(rb"[:,\[]\s*-?\d+(\.\d*)?[eE][-+]?\d{3}")


def orjson_reads(data: bytes) -> bool:
    try:
        orjson.loads(data)
    except orjson.JSONDecodeError:
        return False
    return True


def test_it_agrees_with_orjson_on_real_lines_and_damaged_copies(shared_logs: Path) -> None:
    lines = [ln for p in sorted((shared_logs / "claude-code").glob("*.jsonl"))
             for ln in p.read_bytes().split(b"\n")[:300] if ln]
    assert len(lines) > 500
    assert all(is_one_value(ln) == orjson_reads(ln) for ln in lines)
    rng = random.Random(7)
    compared = rejected = 0
    for _ in range(20_000):
        b = bytearray(rng.choice(lines))
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(b))
            op = rng.randrange(3)
            if op == 0:
                b[i] = rng.randrange(256)
            elif op == 1:
                del b[i]
            else:
                b.insert(i, rng.choice(b'{}[]",:\\0123456789eE.-+ tnuflsa\xff\xc3\x80'))
        data = bytes(b)
        if BIG_EXPONENT.search(data):
            continue
        want = orjson_reads(data)
        assert is_one_value(data) == want, data[:200]
        compared += 1
        rejected += not want
    assert compared > 15_000 and rejected > 5_000  # (most damage is caught; both answers were compared)


def test_each_kind_of_damage_orjson_refuses_is_refused() -> None:
    for bad in (b'{"a":"\xff"}', b'{"a":"\xed\xa0\x80"}', b'{"a":"\xc0\xaf"}', b'{"a":"\\udc00"}', b'{"a":1} x',
                b'{"a":[1,2}', b'{"a":NaN}', b'{"a":01}', b'{"a":1,}', b'{"a":"x\x01"}', b'{"a":1',
                b'{"a":' + b"[" * 5000 + b"]" * 5000 + b"}", b"\xef\xbb\xbf{}"):
        assert not orjson_reads(bad) and not is_one_value(bad), bad[:40]
    for good in (b'{"a":"\xc3\xa9"}', b'[1,2]', b'{"a":1,"a":2}', b'{"a":123456789012345678901234567890}',
                 b' {"a":1}\r', b'"text"', b'{"a":' + b"[" * 100 + b"]" * 100 + b"}"):
        assert orjson_reads(good) and is_one_value(good), good[:40]
    assert is_one_value(b'{"a":1e400}')  # (read by the stdlib's fallback as the line's decoding does)
