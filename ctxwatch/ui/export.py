"""Files the dashboard writes on request: the calls table as CSV (``x``) and an eviction plan as JSON (``w``).

Their text comes from logs and file names, which are untrusted:

* it may hold what an encoder refuses: a lone surrogate (a log's ``"\\ud800"`` decodes to one; a file name
  that is not UTF-8 holds ``\\udcff``-style escapes from Python's ``surrogateescape``), which made the UTF-8
  encoder (CSV) and orjson (JSON) raise in the middle of a write and left a partial file behind;
* it may hold terminal controls (ESC sequences, C0/C1 controls, bidi overrides), which ``cat export.csv``
  would replay, exactly as printing them would (see :mod:`ctxwatch.output.safetext`);
* in a CSV, a cell that starts with ``=`` (``=HYPERLINK(...)``, ``=cmd|' /C calc'!A0``) is a formula to the
  spreadsheet that opens the file (CSV injection).

So a CSV text cell is :func:`csv_cell` (cleaned as the screen shows it, and kept from being a formula), the
JSON is :func:`json_document` (the text as logged, with the characters :func:`ctxwatch.output.safetext.clean` would
escape written as JSON ``\\u`` escapes), each file is built whole in memory, and only then written, to a new
file (:func:`write_new`): a file is either written whole or not at all.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

import orjson

from ctxwatch.output.safetext import clean, json_bytes

#: First characters that make a spreadsheet read a CSV cell as a formula (OWASP, "CSV Injection": "=", "+",
#: "-", "@", TAB 0x09 and CR 0x0D); a cell starting with one of them, after blanks, gets a leading apostrophe.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: object) -> str:
    """A CSV text cell for a value from a log or a file name (``None`` gives ``""``): cleaned as the screen
    shows it (:func:`ctxwatch.output.safetext.clean`, one line: no ESC, no C0/C1 control, no bidi control, no lone
    surrogate; a newline is ``⏎``), then, when it starts with a formula character (:data:`FORMULA_START`,
    looked at after leading blanks, which spreadsheets may trim), prefixed with ``'``, as OWASP's "CSV
    Injection" page advises: the spreadsheet shows the text, never evaluates it.  Numbers are not text cells:
    the CSV writes them as they are."""
    s = clean(value)
    if s.lstrip(" ").startswith(FORMULA_START):
        return "'" + s
    return s


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


def write_new(path: str, data: bytes) -> None:
    """Write ``data`` to a new file at ``path`` (created exclusively: an existing file is never overwritten),
    whole or not at all: if the write fails (a full disk), the file is removed.

    Raises:
        OSError: ``path`` exists, or the folder cannot be written.
    """
    with open(path, "xb") as fh:
        try:
            fh.write(data)
            fh.flush()
        except BaseException:
            fh.close()
            with contextlib.suppress(OSError):
                os.remove(path)
            raise
