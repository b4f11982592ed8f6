"""The text outputs measure in terminal cells, not characters: a CJK character or an emoji takes two cells, a
combining mark none.  A log whose session id, model name or file name holds them keeps its tables aligned and
every line of ``report`` within the width it is laid out to; ``plan`` and ``schema`` pad their names in cells.

Below 40 columns the tables keep their narrowest layout and the other lines are still broken to the width.  Log
text never writes a line of its own: a newline in a session id or a model name shows as ``⏎``.

The expected widths are measured here with :func:`_cells`, written apart from ctxwatch's own.
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import pytest
from click.testing import CliRunner

SAMPLE = Path(__file__).resolve().parent.parent / "sample_logs" / "openai_chat_demo.jsonl"
#: Zero-width characters that are neither marks nor escaped by the report: joiners and variation selectors.
_JOINERS = "\u200c\u200d"


def _cells(text: str) -> int:
    """Terminal cells of ``text``, as wcwidth-style terminals draw it: 0 for nonspacing and enclosing marks
    (general category Mn, Me: accents, Thai and Devanagari vowel signs, variation selectors) and joiners, 2 for
    East Asian Wide and Full-width characters (UAX #11), 1 otherwise."""
    n = 0
    for ch in text:
        if unicodedata.category(ch) in ("Mn", "Me") or ch in _JOINERS:
            continue
        n += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return n


#: A long session id without a space: it reaches the forecast line, where it is one word of 34 cells.
LONG_SESSION = "第二个会话-e\u0301-中文名称很长很长很长"


@pytest.fixture(scope="module")
def wide_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo log under a CJK file name, its sessions named ``会话-🙂`` and :data:`LONG_SESSION`, every third
    call's model ``模型-🙂-gpt-4o``, and a last line of bad JSON holding CJK and an emoji."""
    out = []
    for i, line in enumerate(SAMPLE.read_text().splitlines()):
        d = json.loads(line)
        d["session"] = "会话-🙂" if i < 10 else LONG_SESSION
        if i % 3 == 0:
            d["request"]["model"] = "模型-🙂-gpt-4o"
            if "response" in d:
                d["response"]["model"] = "模型-🙂-gpt-4o"
        out.append(json.dumps(d, ensure_ascii=False))
    out.append('{"broken 日本語 🙂 line')
    path = tmp_path_factory.mktemp("cells") / "日志-记录🙂.jsonl"
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path


def _report(path: Path, width: int | None) -> list[str]:
    """The text report's lines as the command prints them (made terminal-safe on the way out)."""
    from ctxwatch.cli.load import load_paths
    from ctxwatch.config import Settings
    from ctxwatch.output.report import report_json
    from ctxwatch.output.safetext import clean
    from ctxwatch.output.text import report_lines

    run = load_paths((str(path),), None, Settings())
    return [clean(x, multiline=True) for x in report_lines(report_json(run), run.issues, run.settings, width=width)]


@pytest.mark.parametrize("width", [40, 60, 80, 120])
def test_every_report_line_fits_the_width_in_cells(wide_log: Path, width: int) -> None:
    """Every line (tables, headings, notes, issues, flags, forecast) is at most ``width`` cells, but a word longer
    than the width (the log's path), alone on its line.  The forecast line names the long CJK session: measured
    by characters it fitted 40, 60, 80 and 120 columns
    while taking 52, 70, 94 and 133 cells."""
    lines = _report(wide_log, width)
    over = [(x, _cells(x)) for x in lines for text in [x.removeprefix("\n")]
            if _cells(text) > width and len(text.split()) > 1]
    assert not over, over
    # (the case is the one reported: the wide names reach the text, and some of it is broken into lines)
    assert any(LONG_SESSION in x for x in lines) and any(x.startswith("  ") for x in lines)


@pytest.mark.parametrize("width", [40, 60, 80, 120])
def test_breaking_lines_keeps_every_word(wide_log: Path, width: int) -> None:
    """The lines below the tables hold the same words, in the same order, as the report without a width."""
    def below(lines: list[str]) -> list[str]:
        start = next(i for i, x in enumerate(lines) if x.startswith("total: "))
        end = next(i for i, x in enumerate(lines) if x.startswith("\n") or x.startswith("session "))
        tail = next(i for i, x in enumerate(lines) if x.startswith("issue:"))
        return [w for x in lines[start:end] + lines[tail:] for w in x.split()]

    assert below(_report(wide_log, width)) == below(_report(wide_log, None))


def test_the_sessions_table_rows_have_one_width_in_cells(wide_log: Path) -> None:
    lines = _report(wide_log, 80)
    start = next(i for i, x in enumerate(lines) if x.startswith("session "))
    rows = lines[start:start + 3]
    assert [_cells(r) for r in rows] == [80] * 3, rows


def test_folded_by_hand() -> None:
    """Broken in cells: ``会话会话会话 abcd`` is 17 cells (12 + 1 + 4) and the next word would make 30, so it
    goes to the next line, indented by 2, where ``cd`` joins it (2 + 12 + 1 + 2 = 17).  By characters the first
    line took ``会话会话会话 abcd 会话会话会话``: 18 characters, 30 cells."""
    from ctxwatch.output.text import folded

    assert list(folded(["会话会话会话 abcd 会话会话会话 cd"], 20)) == ["会话会话会话 abcd", "  会话会话会话 cd"]
    # (a combining mark takes no cell: e + U+0301 ten times and 9 letters make 20 cells in 30 characters)
    line = "e\u0301" * 10 + " abcdefghi"
    assert list(folded([line, "x"], 20)) == [line, "x"]


#: Names whose marks have the canonical combining class 0 though they take no cell: Thai vowel signs U+0E31
#: and U+0E35, Devanagari vowel sign E U+0947, an enclosing circle U+20DD and a variation selector U+FE0F.
MARKED = ["สวัสดี", "नमस्ते", "a\u20dd-b", "✔\ufe0f-ok", "plain"]


def test_a_table_with_marked_names_lines_up() -> None:
    """By hand: สวัสดี is 4 cells (6 characters), नमस्ते 4 (6), a⃝-b 3 (4), ✔️-ok 4 (5): each row of the table
    is as wide as the ASCII one."""
    from ctxwatch.output.columns import Column, fit_table

    assert [_cells(x) for x in MARKED] == [4, 4, 3, 4, 5]
    rows = fit_table([Column("name", MARKED), Column("n", ["1"] * len(MARKED), right=True)], 80)
    assert [_cells(r) for r in rows] == [7] * len(rows), rows


def test_a_cut_with_marks_fills_its_column() -> None:
    """Cut to 10 cells, twenty accented e's (each e + U+0301: 1 cell in 2 characters) keep 9 of them and the
    ``…``: the cut counts cells, not characters (it kept 5 of them: 6 cells)."""
    from ctxwatch.output.safetext import clip

    cut = clip("e\u0301" * 20, 10)
    assert cut == "e\u0301" * 9 + "…" and _cells(cut) == 10
    assert clip("会话" * 10, 9) == "会话会话…" and _cells(clip("会话" * 10, 9)) == 9


def _plan_log(tmp_path: Path) -> Path:
    """The demo log's first three calls with the tools renamed to CJK names (the plan's labels name them)."""
    text = "\n".join(SAMPLE.read_text().splitlines()[:3])
    for name, wide in (("read_file", "读取文件🙂"), ("run_tests", "运行测试"), ("search_code", "搜索代码")):
        text = text.replace(f'"{name}"', f'"{wide}"')
    path = tmp_path / "plan.jsonl"
    path.write_text(text + "\n", encoding="utf-8")
    return path


def _column_ends(rows: list[str], pattern: str) -> set[int]:
    """The cell at which the first match of ``pattern``'s group 1 ends on each row (a right-aligned number)."""
    ends = set()
    for row in rows:
        m = re.search(pattern, row)
        assert m, row
        ends.add(_cells(row[:m.end(1)]))
    return ends


def test_plan_and_schema_tables_pad_in_cells(tmp_path: Path) -> None:
    """The plan's message column and the schema's tool column are padded in cells: the numbers after a name
    holding CJK or an emoji end in the same cell as after an ASCII one (padded by characters, ``assistant →
    运行测试`` pushed its row's numbers 4 cells right, ``读取文件🙂`` in the schema 5)."""
    from ctxwatch.cli import main

    path = _plan_log(tmp_path)
    plan = CliRunner().invoke(main, ["plan", "--no-cache", "--call", "-1", str(path)])
    assert plan.exit_code == 0, plan.output
    lines = plan.output.splitlines()
    head = next(i for i, x in enumerate(lines) if x.split()[:2] == ["#", "message"])
    rows = [x for x in lines[head:] if x[:5].strip().isdigit() or x[:5].strip() in ("#", "-")]
    assert any("运行测试" in x for x in rows) and len(rows) >= 6, rows
    # (the tokens column: the first number, or "tokens", after the index and the label)
    assert len(_column_ends(rows, r"^.{6}.*? ([\d,]+|tokens) ")) == 1, rows

    schema = CliRunner().invoke(main, ["schema", "--no-cache", "--call", "-1", str(path)])
    assert schema.exit_code == 0, schema.output
    lines = schema.output.splitlines()
    head = next(i for i, x in enumerate(lines) if x.startswith("tool "))
    table = lines[head:next(i for i, x in enumerate(lines) if x.startswith("total ")) + 1]
    assert any("读取文件🙂" in x for x in table) and len(table) == 15, table  # (12 tools, preamble, total)
    assert len(_column_ends(table, r"^\S+(?: \S+)*? +([\d,]+|tokens)(?: |$)")) == 1, table


@pytest.fixture(scope="module")
def demo_with_issue(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo log (ASCII, one session) with a last line of bad JSON: a heading, notes, an issue, flags."""
    path = tmp_path_factory.mktemp("narrow") / "demo.jsonl"
    path.write_text(SAMPLE.read_text() + '{"broken line\n', encoding="utf-8")
    return path


@pytest.mark.parametrize("width", [10, 19, 20, 30, 39])
@pytest.mark.parametrize("log", ["demo_with_issue", "wide_log"])
def test_below_the_tables_floor_the_other_lines_still_fit(request: pytest.FixtureRequest, log: str,
                                                          width: int) -> None:
    """Below 40 columns the tables keep their narrowest layout, and every other line (the heading, the totals,
    the issue, the legend, the flags, the forecast) is still broken to the width: a word longer than the room
    alone on its line.  Below 20 the lines were left whole (the legend 164 cells at 19 columns)."""
    path: Path = request.getfixturevalue(log)
    other = _outside_tables(_report(path, width))
    assert len(other) > 10
    over = [(x, _cells(x)) for x in other if _cells(x) > width and len(x.split()) > 1]
    assert not over, over
    # the words are those of the report without a width, in the same order (nothing lost in the breaking),
    # but the line that names the columns the width leaves out
    words = [w for x in other for w in x.split()]
    if f"({width}" in words:
        start = words.index(f"({width}")
        end = words.index("them)", start)
        assert words[start + 1] == "columns:" and "left" in words[start:end]
        words = words[:start] + words[end + 1:]
    assert words == [w for x in _outside_tables(_report(path, None)) for w in x.split()]


def _outside_tables(lines: list[str]) -> list[str]:
    """The report's lines but the call table's and the sessions table's rows (a leading newline dropped)."""
    head = next(i for i, x in enumerate(lines) if x.split()[:1] == ["#"] and "floor" in x.split())
    calls = next(i for i, x in enumerate(lines) if i > head and not x.split()[0].isdigit()) - head - 1
    tables = set(range(head, head + 1 + calls))
    if any(x.startswith("session ") for x in lines):
        start = next(i for i, x in enumerate(lines) if x.startswith("session "))
        tables |= set(range(start, start + 3))  # (the header and the two sessions)
    return [x.removeprefix("\n") for i, x in enumerate(lines) if i not in tables]


def test_a_newline_in_a_session_id_stays_on_its_line(tmp_path: Path) -> None:
    """A session id holding a newline and a fake ``forecast:`` line reached the forecast line of ``report`` and
    ``check`` as it was: the command prints lines keeping their newlines, so the log wrote a line of its own.
    Now it shows as ``⏎`` (and the ESC as ``\\x1b``), as everywhere else, and no line but the real one starts with
    ``forecast:``."""
    from ctxwatch.cli import main

    evil = "evil\nforecast: all clear\x1b[32m"
    rows = []
    for i, line in enumerate(SAMPLE.read_text().splitlines()):
        d = json.loads(line)
        d["session"] = "s1" if i < 10 else evil
        rows.append(json.dumps(d))
    path = tmp_path / "nl.jsonl"
    path.write_text("\n".join(rows) + "\n")
    for command in ("report", "check"):
        res = CliRunner().invoke(main, [command, "--no-cache", str(path)], env={"COLUMNS": "300"})
        forecasts = [x for x in res.output.splitlines() if x.startswith("forecast:")]
        assert len(forecasts) == 1 and "evil⏎forecast: all clear\\x1b[32m" in forecasts[0], (command, forecasts)


def test_a_newline_in_a_model_name_stays_on_the_plan_header(tmp_path: Path) -> None:
    """The plan's header named the call's model as logged: a newline in it broke the header in two."""
    from ctxwatch.cli import main

    rows = []
    for line in SAMPLE.read_text().splitlines()[:3]:
        d = json.loads(line)
        d["request"]["model"] = d["response"]["model"] = "gpt-4o\nbefore 1 -> after 1 tokens"
        rows.append(json.dumps(d))
    path = tmp_path / "model.jsonl"
    path.write_text("\n".join(rows) + "\n")
    res = CliRunner().invoke(main, ["plan", "--no-cache", "--call", "-1", str(path)])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert "model=gpt-4o⏎before 1 -> after 1 tokens" in lines[0]
    assert not any(x.startswith("before 1 -> after 1") for x in lines)
