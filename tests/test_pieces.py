"""A file's written calls (:class:`ctxwatch.engine.files.Pieces`): the bytes and the costs given back as made."""

from __future__ import annotations

import pickle

from ctxwatch.engine.files import Pieces
from ctxwatch.model import Call


def test_pieces_give_back_each_calls_bytes_and_cost() -> None:
    """Each piece's bytes and cost come back as the renderer gave them, an unpriced call's as ``None`` (not 0, not
    NaN), and what the renderer added up, also after a trip through pickle (the cache keeps them so)."""
    bodies = [b'"model": "a"\n}', b"", b'"model": "c"\n}']
    costs: list[float | None] = [0.0123, None, 0.0]

    def render(calls: list[Call]) -> tuple[list[bytes], list[float | None], object]:
        return bodies, costs, "totals"

    pieces = pickle.loads(pickle.dumps(Pieces.of([], render)))
    whole = pieces.inflated()
    starts = [0, *pieces.ends[:-1]]
    assert [whole[a:b] for a, b in zip(starts, pieces.ends, strict=True)] == bodies
    assert [pieces.cost(i) for i in range(3)] == [0.0123, None, 0.0]
    assert pieces.totals == "totals"
