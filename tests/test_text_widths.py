"""B49: the text report's tables measure width in terminal cells (CJK and emoji are two cells)."""

from __future__ import annotations

import unicodedata

from click.testing import CliRunner
from helpers import shared_case

from ctxwatch.cli import main


def _cells(line: str) -> int:
    # (independent of ctxwatch: East Asian Wide / Full-width characters take two cells)
    return sum(2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in line)


def _session_rows(lines: list[str]) -> list[str]:
    start = next(i for i, x in enumerate(lines) if x.startswith("session "))
    return lines[start:start + 5]


def test_b49_session_rows_have_one_width(shared_logs):
    """Piped, every row of the sessions table has one display width and every name is whole (scripts read the
    columns whole); on a terminal too narrow for them, the 48-cell Chinese+emoji name is cut with "…" at the
    column's width in cells, as the long ASCII name is, and the rows still line up."""
    res = CliRunner().invoke(main, ["report", shared_case(shared_logs, "b49_wide_chars")])
    assert res.exit_code == 0, res.output
    rows = _session_rows(res.output.splitlines())
    assert len({_cells(r) for r in rows}) == 1, [(r, _cells(r)) for r in rows]
    assert any(r.startswith("修复增值税舍入错误的长会话名称第二轮测试用例🚀🚀 ") for r in rows)
    assert any(r.startswith("ascii-session-name-of-similar-length-0001 ") for r in rows)

    from ctxwatch.cli.load import load_paths
    from ctxwatch.config import Settings
    from ctxwatch.output.report import report_json
    from ctxwatch.output.text import report_lines

    run = load_paths((shared_case(shared_logs, "b49_wide_chars"),), None, Settings())
    narrow = _session_rows(list(report_lines(report_json(run), run.issues, run.settings, width=100)))
    assert len({_cells(r) for r in narrow}) == 1, [(r, _cells(r)) for r in narrow]
    wide = next(r for r in narrow if r.startswith("修复"))
    name = wide.split("  ")[0]
    assert name.endswith("…") and _cells(name) <= 38
    ascii_row = next(r for r in narrow if r.startswith("ascii-"))
    assert ascii_row.index("… 2025") == 37  # (cut to the 38-cell column, then the gap before the time)
