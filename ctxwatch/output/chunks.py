"""``report --json`` and ``report --jsonl`` written a piece at a time: each call's object is made, written and
dropped in turn (a folder's calls mostly as their files' workers made them, :func:`call_pieces`), so memory holds
neither every call's object at once nor the whole document's bytes."""

from __future__ import annotations

import operator
from collections.abc import Iterator
from decimal import Decimal

import orjson

from ctxwatch.engine import Run, utc_day
from ctxwatch.engine.files import Pieces
from ctxwatch.model import Call
from ctxwatch.output.report import (
    call_json,
    cost_of,
    issue_json,
    report_head,
    report_json,
    start_analysis,
)
from ctxwatch.output.safetext import json_bytes, json_lines
from ctxwatch.output.sessions import RunSessions, SessionTotals

#: Where the calls go in the indented document (``"calls"`` is a top-level key, followed by others).
_CALLS_SLOT = b'\n  "calls": [],\n'


def report_json_chunks(run: Run) -> Iterator[bytes]:
    """``report --json`` (the bytes of :func:`~ctxwatch.output.safetext.json_bytes` of :func:`report_json`,
    indented by 2, ending in a newline) in pieces of about :data:`PIECE_CALLS` calls: each call's object is made,
    written and dropped in turn, so memory does not hold every call's object at once, nor the whole document's
    bytes."""
    analysis = start_analysis(run)  # (worked out beside the writing of the calls, in a big run)
    factors = run.factors()
    # (the document's bytes up to its calls: those of the keys before them, "calls" followed by another key)
    prefix = json_bytes({**report_head(run, factors), "calls": [], "sessions": []}, orjson.OPT_INDENT_2)
    head, slot, _ = prefix.partition(_CALLS_SLOT)
    assert slot, "the calls key is followed by another"
    yield head + b'\n  "calls": ['
    rendered = run.rendered
    # (the pieces of the file being written, inflated: sliced as a view, the join below makes the one copy)
    inflated: tuple[object, memoryview] = (None, memoryview(b""))
    today = utc_day() if rendered else ""
    sessions = RunSessions()
    held: list[bytes | memoryview] = []
    calls = run.calls
    # (no call of the run has a calibration: a file's calls held whole are written as its worker wrote them)
    uncalibrated = factors.run is None and all(v is None for v in factors.per_model.values())
    n = 0
    while n < len(calls):
        call = calls[n]
        made = rendered.get(id(call))
        if uncalibrated and made is not None and made[2] == 0 and made[0] is call:
            k = _file_whole(calls, n, made[1], made[3], today)
            if k:
                pieces = made[1]
                if inflated[0] is not pieces:
                    inflated = (pieces, memoryview(pieces.inflated()))
                body, ends = inflated[1], pieces.ends
                for j, c in enumerate(made[3]):
                    held.append(_call_head(n + j, c))
                    held.append(body[ends[j - 1] if j else 0:ends[j]])
                sessions.add_file(pieces.totals)
                n += k
                if len(held) >= 2 * PIECE_CALLS:
                    yield b"".join(held)
                    held = []
                continue
        pos, n = n, n + 1
        factor = factors.factor(call)
        if made is not None and made[0] is call:
            pieces, i = made[1], made[2]
            if pieces.sessions[i] == call.session and (call.timestamp is not None or pieces.day == today):
                # (read where its file was read, with the same session and prices: its cost and its session's
                # sums are the worker's)
                part = pieces.totals if isinstance(pieces.totals, SessionTotals) else None
                sessions.add(call, pieces.cost(i), part, i, len(pieces.ends))
                start = pieces.ends[i - 1] if i else 0
                if factor is None and pieces.ends[i] > start:
                    # (written there with the same numbers: only its number and index are the run's)
                    if inflated[0] is not pieces:
                        inflated = (pieces, memoryview(pieces.inflated()))
                    held.append(_call_head(pos, call))
                    held.append(inflated[1][start:pieces.ends[i]])
                else:
                    held.append((b",\n    " if pos else b"\n    ") + call_piece(call, factor, cost_of(call)))
                if len(held) >= 2 * PIECE_CALLS:
                    yield b"".join(held)
                    held = []
                continue
        cost = cost_of(call)
        sessions.add(call, cost)
        held.append((b",\n    " if pos else b"\n    ") + call_piece(call, factor, cost))
        if len(held) >= 2 * PIECE_CALLS:
            yield b"".join(held)
            held = []
    if held:
        yield b"".join(held)
    text = json_bytes(report_json(run, with_calls=False, sessions=sessions.result(run.calls), analysis=analysis,
                                  factors=factors),
                      orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)
    whole_head, slot, tail = text.partition(_CALLS_SLOT)
    assert slot and whole_head == head, "the head written is the document's"
    yield (b"\n  ],\n" if run.calls else b"],\n") + tail


def _call_head(pos: int, call: Call) -> bytes:
    """The bytes before a call's piece (:func:`call_pieces`) in the document: the separator from the call before
    (``pos``: its place among the written calls, from 0), then the lines of its number and index."""
    return b'%s{\n      "number": %d,\n      "index": %d,\n' % (b",\n    " if pos else b"\n    ", call.index + 1,
                                                               call.index)


def _file_whole(calls: list[Call], n: int, pieces: Pieces, file_calls: list[Call], today: str) -> int:
    """How many calls from ``calls[n]`` on are the file's calls ``file_calls`` held whole, as its worker wrote
    them (``pieces``): the same call objects in the same order, each written there with its session, priced at
    its own day's rates (or today's, written today) and its session's sums taken with them; 0 when one is not
    (each call is then judged on its own)."""
    k = len(file_calls)
    if len(calls) < n + k or not isinstance(pieces.totals, SessionTotals) \
            or not all(map(operator.is_, calls[n:n + k], file_calls)):
        return 0
    if [c.session for c in file_calls] != list(pieces.sessions):
        return 0
    if pieces.day != today and any(c.timestamp is None for c in file_calls):
        return 0
    ends = pieces.ends
    if not ends or ends[0] <= 0 or not all(map(operator.lt, ends, ends[1:])):
        return 0  # (a call left to the end: b"")
    return k


#: Calls written in one piece by :func:`report_json_chunks`: few pieces pass through the layers that write and
#: keep them, and little is held at once.
PIECE_CALLS = 256


def call_piece(call: Call, factor: float | None, cost: Decimal | None) -> bytes:
    """The call's object in the indented ``report --json`` document (:func:`call_json`, at its depth there: orjson
    indents a nested object by its depth, and the same object at depth 2 is this one, 4 spaces in)."""
    return json_bytes(call_json(call, factor, cost), orjson.OPT_INDENT_2).replace(b"\n", b"\n    ")


#: How a call's object begins (:func:`call_piece`): its number and index are the first keys, each on a line of
#: its own.
_INDEX_LINE = b'{\n      "number": '
_INDEX_KEY = b'\n      "index": '


def call_pieces(calls: list[Call]) -> tuple[list[bytes], list[float | None], SessionTotals]:
    """Each call's object as :func:`report_json_chunks` writes it, without the opening lines that hold its number
    and index (the run's, known only once the folder is assembled), for a call whose model has no calibration in the run
    (its calibration changes the object: such a call is written again at the end).  Given to the engine
    (:data:`ctxwatch.engine.files.Render`) to be made where each file is read; with each call's cost in USD
    (:func:`cost_of`, as a float) and the calls' session totals (:class:`~ctxwatch.output.sessions.SessionTotals`),
    taken whole where the run holds the file's calls as they are here."""
    out: list[bytes] = []
    costs: list[float | None] = []
    totals = SessionTotals()
    for call in calls:
        cost = cost_of(call)
        piece = call_piece(call, None, cost)
        # (number and index are call_json's first keys, so a piece always starts so; b"" leaves the call to the
        # end)
        index_at = piece.find(_INDEX_KEY)
        out.append(piece[piece.index(b"\n", index_at + len(_INDEX_KEY)) + 1:]
                   if piece.startswith(_INDEX_LINE) and index_at > 0 else b"")
        costs.append(None if cost is None else float(cost))
        totals.add(call, cost)
    return out, costs, totals


def report_jsonl_chunks(run: Run) -> Iterator[bytes]:
    """``report --jsonl``: one call object per line, then one ``{"event": "issue", ...}`` per issue, as
    ``report --follow --jsonl`` prints them; a call's line at a time."""
    factors = run.factors()
    for call in run.calls:
        yield json_lines([call_json(call, factors.factor(call))])
    yield json_lines({"event": "issue", **issue_json(i)} for i in run.issues if i.kind != "reset")
