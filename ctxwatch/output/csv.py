"""The calls as CSV, one row per call (the dashboard's ``x``): the numbers ``report --json`` gives for each
call, and the calibrated floor and history the table shows.

Text from logs and file names is untrusted: a cell is cleaned as the screen shows it and kept from being a
spreadsheet formula (:func:`csv_cell`), and the file is built whole in memory, then written to a new file
(:func:`write_new`): it is either written whole or not at all.
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
from collections.abc import Iterable

from ctxwatch.accounting import Calibrations
from ctxwatch.model import Call, shown_fraction, shown_free
from ctxwatch.output.safetext import clean

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


#: CSV columns of ``x`` (export): ``call`` is the call number people see (index + 1, the table's ``#``),
#: ``index`` the 0-based index of ``report --json``; then the report's per-call numbers, each source column
#: after its number (``history_source`` ``inferred`` is the table's ``1,636~``: reported prompt minus the floor),
#: ``prompt_implausible`` ``yes`` beside a reported prompt that is no occupancy (``free_tokens`` and
#: ``used_fraction`` are then empty), the estimated cost, as ``report --json`` gives it (``cost_usd``
#: empty = unknown, never 0), and last the calibrated breakdown the table shows (``≈``: ``report --json``'s
#: ``calibration`` and ``calibrated``; empty where nothing is scaled, and the raw numbers above are the shown ones).
#: The yes/no columns (``prompt_implausible``, ``exact``, ``compaction``) are ``yes`` or empty.
CSV_FIELDS = ("call", "index", "file", "line", "timestamp", "context", "session", "model", "window", "window_source",
              "system_tokens", "tools_tokens", "floor_tokens", "floor_source", "history_tokens", "history_source",
              "reserve_tokens", "reserve_source", "free_tokens", "used_fraction", "prompt_tokens_estimated",
              "prompt_tokens_reported", "prompt_implausible", "input_uncached_tokens", "cache_read_tokens",
              "cache_write_tokens", "completion_tokens_reported", "reasoning_tokens_reported", "web_searches",
              "tokenizer", "exact", "compaction", "cost_usd", "cost_source", "calibration",
              "system_tokens_calibrated", "tools_tokens_calibrated", "floor_tokens_calibrated",
              "history_tokens_calibrated")


def write_csv(path: str, calls: Iterable[Call], calibrations: Calibrations | None = None) -> None:
    """Write one CSV row per call (columns :data:`CSV_FIELDS`; empty = unknown) to a new file at ``path``, whole
    or not at all (:func:`write_new`).  Text from the log or a file name is written as :func:`csv_cell` makes
    it: escaped as the screen shows it (no lone surrogate for the encoder to refuse, no ESC sequence) and never
    a spreadsheet formula.

    Raises:
        OSError: the file cannot be written (it exists, the folder is read-only, the disk is full).
    """
    data = csv_text(calls, calibrations).encode("utf-8")
    write_new(path, data)


def csv_text(calls: Iterable[Call], calibrations: Calibrations | None = None) -> str:
    """The CSV :func:`write_csv` writes, as text; ``calibrations``: the run's (the dashboard's), which fill the
    calibrated columns (``None``: left empty)."""
    from ctxwatch.output.report import cost_of, cost_source, iso  # (loaded on the first export)

    fh = io.StringIO(newline="")
    w = csv.writer(fh)
    w.writerow(CSV_FIELDS)
    t = csv_cell  # (text from the log or a file name; numbers are written as numbers)
    for c in calls:
        u = c.usage
        b = calibrations.breakdown(c) if calibrations is not None else None  # (free and used % as report has them)
        w.writerow([
            c.index + 1, c.index, t(c.source.path), c.source.line, iso(c.timestamp) or "", t(c.context),
            t(c.session), t(c.model),
            _v(c.window), c.window_src, _v(c.system_tokens), _v(c.tools_tokens), _v(c.floor_tokens),
            c.floor_src, _v(c.history_tokens), c.history_src, _v(c.reserve_tokens), c.reserve_src,
            _v(shown_free(c, b)),
            "" if (used := shown_fraction(c, b)) is None else f"{used:.4f}", _v(c.prompt_estimated),
            _v(u.prompt_total if u else None), "yes" if c.prompt_implausible else "",
            _v(u.input_uncached if u else None),
            _v(u.cache_read if u else None), _v(u.cache_write if u else None), _v(u.output if u else None),
            _v(u.reasoning if u else None), _v(u.web_searches if u else None), t(c.tokenizer), "yes" if c.exact else "",
            "yes" if c.compaction else "", "" if (cost := cost_of(c)) is None else format(cost, "f"),
            cost_source(c, cost), *_calibrated_cells(c, calibrations),
        ])
    return fh.getvalue()


def _calibrated_cells(call: Call, calibrations: Calibrations | None) -> list[str | int]:
    """The calibration factor (4 decimals) and the calibrated system, tools, floor and history of ``call`` as
    the table shows them (:meth:`~ctxwatch.accounting.Calibrations.breakdown`), or five empty cells where
    nothing is scaled."""
    b = calibrations.breakdown(call) if calibrations is not None else None
    if b is None or b.factor is None:
        return [""] * 5
    return [f"{b.factor:.4f}", _v(b.system_tokens), _v(b.tools_tokens), _v(b.floor_tokens), _v(b.history_tokens)]


def _v(n: int | None) -> str | int:
    return "" if n is None else n
