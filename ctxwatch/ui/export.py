"""The eviction plan the dashboard writes on request (``w``), as JSON.

Its text comes from logs and file names, which are untrusted: it may hold what orjson refuses (a lone
surrogate) and terminal controls that ``cat plan.json`` would replay.  So the JSON is :func:`json_document`
(the text as logged, with the characters :func:`ctxwatch.output.safetext.clean` would escape written as JSON
``\\u`` escapes), built whole in memory and only then written to a new file (:func:`write_new`).  The CSV of
the calls (``x``) is written by :mod:`ctxwatch.output.csv`, whose cell and file helpers are re-exported here.
"""

from __future__ import annotations

import os
from typing import Any

import orjson

from ctxwatch.output.csv import FORMULA_START, csv_cell, write_new
from ctxwatch.output.safetext import json_bytes

__all__ = ["FORMULA_START", "csv_cell", "export_dir", "export_folder", "file_stem", "json_document", "write_new"]


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


def export_dir() -> str:
    """``$XDG_DATA_HOME/ctxwatch/exports`` (default ``~/.local/share/ctxwatch/exports``, the XDG base-directory
    rule for user data), created if missing: where exports go when the current folder is a followed one."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    path = os.path.join(base, "ctxwatch", "exports")
    os.makedirs(path, exist_ok=True)
    return path


def export_folder(paths: list[str]) -> str:
    """Where ``s``, ``x`` and the eviction preview's ``w`` write: the current folder, unless it is (inside) one
    of the folders in ``paths`` being followed, where a new file would be listed among the logs; then
    :func:`export_dir`.

    Raises:
        OSError: the export folder cannot be created.
    """
    cwd = os.getcwd()
    here = os.path.realpath(cwd)
    for p in paths:
        if os.path.isdir(p):
            top = os.path.realpath(p)
            if here == top or here.startswith(top.rstrip(os.sep) + os.sep):
                return export_dir()
    return cwd


def file_stem(path: str) -> str:
    """The name saved files are given after ``path``: its base name without extension, other characters than
    letters, digits, ``-``, ``_`` and ``.`` made ``_``, at most 60 characters (``log`` when nothing is left)."""
    base = os.path.basename(path.rstrip(os.sep)) or "log"
    stem = base.rsplit(".", 1)[0] if "." in base else base
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in stem)[:60] or "log"
