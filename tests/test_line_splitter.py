"""The line splitter against a simple reader: whatever the chunks the bytes arrive in, the same lines, line
numbers, byte ranges and oversized flags as ``bytes.split`` of the whole stream gives."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxwatch.source.lines import Line, LineSplitter, read_lines


def expected(data: bytes, cap: int) -> list[tuple[int, int, int, bytes, bool]]:
    """(number, start, end, bytes, oversized) of each line of ``data``, the last one without its newline."""
    out, start = [], 0
    pieces = data.split(b"\n")
    for number, piece in enumerate(pieces, 1):
        last = number == len(pieces)
        if last and not piece:
            break
        end = start + len(piece) + (0 if last else 1)
        big = len(piece) > cap
        out.append((number, start, end, b"" if big else piece, big))
        start = end
    return out


def got(lines: list[Line]) -> list[tuple[int, int, int, bytes, bool]]:
    return [(ln.number, ln.start, ln.end, ln.data, ln.oversized) for ln in lines]


def split(data: bytes, cuts: list[int], cap: int) -> list[Line]:
    sp = LineSplitter(max_line_bytes=cap)
    out: list[Line] = []
    bounds = sorted({0, len(data), *(c % (len(data) + 1) for c in cuts)})
    for a, b in pairwise(bounds):
        out += sp.feed(data[a:b])
    tail = sp.flush()
    return out + ([tail] if tail is not None else [])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([b"a", b"bc", b"\n", b"\xe2\x82\xac", b"{}", b"x" * 40]), max_size=60),
       st.lists(st.integers(min_value=0, max_value=3000), max_size=12), st.sampled_from([3, 16, 1000]))
def test_any_chunking_gives_the_lines_of_a_simple_split(parts: list[bytes], cuts: list[int], cap: int) -> None:
    data = b"".join(parts)
    assert got(split(data, cuts, cap)) == expected(data, cap)


def test_a_long_line_across_many_chunks_and_lines_inside_one(tmp_path: Path) -> None:
    """A line longer than a chunk (read in 1 MiB pieces), then short lines: each whole, with its range."""
    long = b"y" * (3 * 1024 * 1024 + 5)
    data = b"first\n" + long + b"\nsecond\nthird"
    path = tmp_path / "log.jsonl"
    path.write_bytes(data)
    lines = list(read_lines(str(path)))
    assert got(lines) == expected(data, 64 * 1024 * 1024)
    assert [ln.data for ln in lines] == [b"first", long, b"second", b"third"]
    assert lines[1].start == 6 and lines[1].end == 6 + len(long) + 1 and lines[3].unterminated


@pytest.mark.parametrize("big_from", [1, 10**12])
def test_a_big_read_starts_with_big_chunks_and_gives_the_same_lines(tmp_path: Path, big_from: int,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A read of at least BIG_READ_BYTES starts at the largest chunk (here every read is one, or none is): the
    lines, numbers and ranges are those of a simple split either way, from the start, from an offset and up to
    an end."""
    from ctxwatch.source import lines as mod

    monkeypatch.setattr(mod, "BIG_READ_BYTES", big_from)
    monkeypatch.setattr(mod, "MAX_CHUNK_BYTES", 4096)
    data = b"".join(b"line %d %s\n" % (i, b"x" * (i % 700)) for i in range(3000)) + b"tail"
    path = tmp_path / "log.jsonl"
    path.write_bytes(data)
    cap = 64 * 1024 * 1024
    assert got(list(read_lines(str(path)))) == expected(data, cap)
    cut = data.index(b"\n", len(data) // 2) + 1
    ahead = data[:cut].count(b"\n")
    tail = [(n + ahead, s + cut, e + cut, b, o) for n, s, e, b, o in expected(data[cut:], cap)]
    assert got(list(read_lines(str(path), offset=cut, line=ahead + 1))) == tail
    assert got(list(read_lines(str(path), end=cut))) == expected(data[:cut], cap)
