"""Every table of the text report fits the width it is laid out to (from ``MIN_WIDTH`` up), for a folder as
for a single file: columns are left out or shortened rather than lines running over, every row stays, a value
shown is whole or cut with ``…`` from its start, and a timestamp is whole (its date, or date and time) or absent.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from test_report_width import piped_report

from ctxwatch.output.columns import MIN_WIDTH, Column, fit_table

WIDTHS = [40, 60, 80, 120]
TARGETS = ["claude-code", "claude-code/spotter_4d5611e5_full.jsonl",
           "claude-code/ccviewer_5c0375b4_v1.0.108_inline_sidechain.jsonl"]
#: A token that starts like a timestamp; it must be a whole date, or a whole date and time.
STAMP_START = re.compile(r"\d{4}-\d")
STAMP = re.compile(r"\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}:\d{2})?")


def _cells(line: str) -> int:
    # (independent of ctxwatch: East Asian Wide / Full-width characters take two cells)
    return sum(2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in line)


@pytest.fixture(scope="module")
def reports(shared_logs: Path) -> dict[str, tuple[dict[str, Any], Any]]:
    from ctxwatch.cli.load import load_paths
    from ctxwatch.config import Settings
    from ctxwatch.output.report import report_json

    out = {}
    for target in TARGETS:
        run = load_paths((str(shared_logs / target),), None, Settings())
        out[target] = (report_json(run), run)
    return out


def _tables(lines: list[str], doc: dict[str, Any], sessions_only: bool) -> list[list[str]]:
    """The call table (unless ``sessions_only``) and the sessions table (where printed), header row first."""
    tables = []
    if not sessions_only:
        head = next(i for i, x in enumerate(lines) if x.lstrip().startswith("# "))
        tables.append(lines[head:head + 1 + len(doc["calls"])])
    starts = [i for i, x in enumerate(lines) if x.startswith("session ")]
    if starts:
        tables.append(lines[starts[0]:starts[0] + 1 + len(doc["sessions"])])
    return tables


def _shown_from(narrow: str, natural: str) -> bool:
    """Each word of a narrowed row is a word of the natural row, the start of one cut with ``…``, or the date of
    one of its timestamps."""
    words = natural.split()
    return all(w in words or (w.endswith("…") and any(n.startswith(w[:-1]) for n in words))
               or (STAMP.fullmatch(w) and any(n.startswith(w + "T") for n in words)) for w in narrow.split())


@pytest.mark.parametrize("sessions_only", [False, True])
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("width", WIDTHS)
def test_every_table_fits_the_width(reports: dict[str, tuple[dict[str, Any], Any]], target: str, width: int,
                                    sessions_only: bool) -> None:
    from ctxwatch.output.text import report_lines

    doc, run = reports[target]
    lines = list(report_lines(doc, run.issues, run.settings, width=width, sessions_only=sessions_only))
    natural = list(report_lines(doc, run.issues, run.settings, sessions_only=sessions_only))
    tables, whole = _tables(lines, doc, sessions_only), _tables(natural, doc, sessions_only)
    assert len(tables) == len(whole) == (1 if sessions_only or len(doc["sessions"]) == 1 else 2)
    if not sessions_only and "/" not in target:
        assert any("file" in t[0].split() for t in whole)  # (the folder: the file column, naturally)
    for table, full in zip(tables, whole, strict=True):
        assert len(table) == len(full)
        assert all(_cells(x) <= width for x in table), max(table, key=_cells)
        for row, natural_row in zip(table, full, strict=True):
            # (the same row: the call number, or the session name whole or cut, comes first)
            first = row.split()[0]
            assert first == natural_row.split()[0] or (first.endswith("…")
                                                       and natural_row.startswith(first[:-1]))
            assert _shown_from(row, natural_row), (row, natural_row)
    # A timestamp anywhere in the report is whole: never cut mid-date.
    for x in lines:
        for word in x.split():
            if STAMP_START.match(word):
                assert STAMP.fullmatch(word.rstrip(",;:)")), (word, x)


@pytest.mark.parametrize("width", [41, 47, 53, 59, 61, 67, 73, 79, 99])
def test_the_folder_tables_fit_every_width_between(reports: dict[str, tuple[dict[str, Any], Any]],
                                                   width: int) -> None:
    from ctxwatch.output.text import report_lines

    doc, run = reports["claude-code"]
    for tables in (_tables(list(report_lines(doc, run.issues, run.settings, width=width)), doc, False),
                   _tables(list(report_lines(doc, run.issues, run.settings, width=width, sessions_only=True)),
                           doc, True)):
        assert all(_cells(x) <= width for t in tables for x in t)


def test_the_last_call_keeps_its_date_then_goes(reports: dict[str, tuple[dict[str, Any], Any]]) -> None:
    """Narrowed, the sessions table shows the last call's date without its time, then leaves the column out;
    never ``2026-02-1…``."""
    from ctxwatch.output.text import session_columns

    sessions = reports["claude-code"][0]["sessions"]
    cols = session_columns(sessions)
    assert fit_table(cols, 120)[1].split()[1] == "2026-02-12T21:03:34"
    assert fit_table(cols, 60)[0].split()[:3] == ["session", "last", "call"]
    assert fit_table(cols, 60)[1].split()[1] == "2026-02-12"
    assert fit_table(cols, MIN_WIDTH)[0].split() == ["session", "calls", "peak", "prompt", "cost~"]


def test_short_forms_and_sheds_by_hand() -> None:
    cols = [Column("name", ["abcdefghijklmnop"], least=6),
            Column("when", ["2026-02-12T21:03:34"], short=["2026-02-12"], shorten=1, shed=3),
            Column("n", ["1,234"], right=True),
            Column("extra", ["xxxxxxxx"], shed=2)]
    # everything: 16 + 1 + 19 + 1 + 5 + 1 + 8 = 51
    assert fit_table(cols, 51) == ["name             when                    n extra",
                                   "abcdefghijklmnop 2026-02-12T21:03:34 1,234 xxxxxxxx"]
    # 45: the name is cut first (to 10), no column goes
    assert fit_table(cols, 45)[1] == "abcdefghi… 2026-02-12T21:03:34 1,234 xxxxxxxx"
    # 35: the name at its least is not enough (6 + 35 = 41): the date alone, the name cut from 16 again, to 9
    assert fit_table(cols, 35)[1] == "abcdefgh… 2026-02-12 1,234 xxxxxxxx"
    # 26: then extra goes; 16: then when; below that the narrowest layout, wider than asked
    assert fit_table(cols, 26)[1] == "abcdefgh… 2026-02-12 1,234"
    assert fit_table(cols, 16)[1] == "abcdefghi… 1,234"
    assert fit_table(cols, 5)[1] == "abcde… 1,234"


def test_piped_folder_reports_fit_columns(shared_logs: Path) -> None:
    """The reported case, end to end: ``COLUMNS=60 ctxwatch report FOLDER | cat``; the only line over 60 is the
    folder's one long path, a single word."""
    lines = piped_report(shared_logs / "claude-code", "60")
    over = [x for x in lines if _cells(x) > 60]
    assert over and all(len(x.split()) == 1 for x in over), over
