"""B49: the text report's tables measure width in terminal cells (CJK and emoji are two cells)."""

from __future__ import annotations

import unicodedata

from click.testing import CliRunner
from helpers import shared_case

from ctxwatch.cli import main


def _cells(line: str) -> int:
    # (independent of ctxwatch: East Asian Wide / Full-width characters take two cells)
    return sum(2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in line)


def test_b49_session_rows_have_one_width(shared_logs):
    res = CliRunner().invoke(main, ["report", shared_case(shared_logs, "b49_wide_chars")])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    start = next(i for i, x in enumerate(lines) if x.startswith("session "))
    rows = lines[start:start + 5]
    assert len({_cells(r) for r in rows}) == 1, [(r, _cells(r)) for r in rows]
    # the 48-cell Chinese+emoji name is cut at the 38-cell column with "…", as the long ASCII name is
    wide = next(r for r in rows if r.startswith("修复"))
    name = wide.split("  ")[0]
    assert name.endswith("…") and _cells(name) <= 38
    ascii_row = next(r for r in rows if r.startswith("ascii-"))
    assert ascii_row.index("2025") == 39
