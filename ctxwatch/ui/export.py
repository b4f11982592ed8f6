"""The eviction plan the dashboard writes on request (``w``), as JSON.

Its text comes from logs and file names, which are untrusted: it may hold what orjson refuses (a lone
surrogate) and terminal controls that ``cat plan.json`` would replay.  So the JSON is :func:`json_document`
(the text as logged, with the characters :func:`ctxwatch.output.safetext.clean` would escape written as JSON
``\\u`` escapes), built whole in memory and only then written to a new file (:func:`write_new`).  The CSV of
the calls (``x``) is written by :mod:`ctxwatch.output.csv`, whose cell and file helpers are re-exported here.
"""

from __future__ import annotations

from typing import Any

import orjson

from ctxwatch.output.csv import FORMULA_START, csv_cell, write_new
from ctxwatch.output.safetext import json_bytes

__all__ = ["FORMULA_START", "csv_cell", "json_document", "write_new"]


def json_document(doc: Any) -> bytes:
    """``doc`` (JSON-shaped) as indented JSON bytes ending in a newline, with no character a terminal would
    act on or that would hide text: :func:`ctxwatch.output.safetext.json_bytes`, the writer of every JSON output (each
    character :func:`ctxwatch.output.safetext.clean` escapes is a JSON ``\\uXXXX`` escape, which a JSON reader turns
    back into the same character: the data is the log's, ``cat plan.json`` shows no control; a lone surrogate
    is U+FFFD).

    Raises:
        TypeError: a value JSON cannot hold (orjson's ``JSONEncodeError``).
    """
    return json_bytes(doc, orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)
