"""A number in the text report's tables is never cut, whatever the width (``COLUMNS`` set, even to 200): its
column is as wide as its widest cell, only names are cut with ``…``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_report_width import piped_report


def _canonical(path: Path, calls: list[tuple[str, int]]) -> Path:
    """A canonical log of gpt-4o calls: (the one user message, the reported prompt tokens), 5 output tokens."""
    with path.open("w") as f:
        for text, prompt in calls:
            f.write(json.dumps({"request": {"model": "gpt-4o", "messages": [{"role": "user", "content": text}]},
                                "response": {"usage": {"prompt_tokens": prompt, "completion_tokens": 5}}}) + "\n")
    return path


def _row(lines: list[str], number: int) -> list[str]:
    """The words of call ``number``'s row of the call table (the header starts with ``#``)."""
    head = next(i for i, x in enumerate(lines) if x.lstrip().startswith("# "))
    return lines[head + number].split()


@pytest.fixture(scope="module")
def hugeline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # (one message of 6,000,000 words, as reported: a prompt 47 times the window, a plausible report)
    return _canonical(tmp_path_factory.mktemp("huge") / "hugeline.jsonl", [("hi", 8), ("word " * 6_000_000,
                                                                                      6_000_005)])


def test_a_prompt_far_over_the_window_shows_its_free_whole(hugeline: Path) -> None:
    """``COLUMNS=200 ctxwatch report hugeline.jsonl | cat``: free is gpt-4o's window 128,000 less the prompt and
    the reserve (15 % of the window, the log sets no max_tokens), 10 cells where the column's natural width
    is 9."""
    free = 128_000 - 6_000_005 - 19_200
    assert f"{free:,}" == "-5,891,205"
    wide, natural = piped_report(hugeline, "200"), piped_report(hugeline, None)
    assert _row(natural, 2) == ["2", "2", "gpt-4o", "128,000", "0", "6,000,005", "19,200", "-5,891,205", "4687.5",
                                "6,000,005"]
    assert _row(wide, 2) == _row(natural, 2)


@pytest.mark.parametrize("width", [40, 60, 80, 120, 200])
def test_numbers_stay_whole_at_every_width(hugeline: Path, width: int) -> None:
    """Narrower, columns are left out, but each cell shown is one of the natural row's, whole."""
    from ctxwatch.cli.load import load_paths
    from ctxwatch.config import Settings
    from ctxwatch.output.report import report_json
    from ctxwatch.output.text import report_lines

    run = load_paths((str(hugeline),), None, Settings())
    doc = report_json(run)
    natural = list(report_lines(doc, run.issues, run.settings))
    lines = list(report_lines(doc, run.issues, run.settings, width=width))
    for number in (1, 2):
        assert set(_row(lines, number)) <= set(_row(natural, number)), (_row(lines, number), width)
    assert {"6,000,005", "4687.5"} <= set(_row(lines, 2))


def test_a_ten_digit_window_is_shown_whole(tmp_path: Path) -> None:
    """``--window 2000000000``: the window and free cells are 13 cells, the columns' natural widths 9."""
    from ctxwatch.cli.load import load_paths
    from ctxwatch.config import Settings
    from ctxwatch.output.report import report_json
    from ctxwatch.output.text import report_lines

    log = _canonical(tmp_path / "small.jsonl", [("hi", 8)])
    run = load_paths((str(log),), None, Settings(window=2_000_000_000))
    doc = report_json(run)
    reserve = 2_000_000_000 * 15 // 100
    row = _row(list(report_lines(doc, run.issues, run.settings, width=200)), 1)
    assert row == ["1", "1", "gpt-4o", "2,000,000,000", "0", "5", f"{reserve:,}",
                   f"{2_000_000_000 - 8 - reserve:,}", "0.0", "8"]
