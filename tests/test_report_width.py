"""``report`` on a terminal: the tables fit its width (columns left out, then names cut), and ``--sessions``
gives one row per session; without a terminal every column keeps its natural width."""

from __future__ import annotations

import glob
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ctxwatch.cli import main
from ctxwatch.output.columns import Column, fit_table, fit_widths


def test_fit_widths_by_hand() -> None:
    cols = [Column("#", ["1", "12"], right=True, natural=4),
            Column("name", ["abcdefghijklmnop", "x"], natural=28, least=6),
            Column("free", ["1,000", "2"], right=True, natural=9, drop=1),
            Column("file", ["a-long-file-name.jsonl", "b"], least=8, gap=2)]
    assert fit_widths(cols, None) == [4, 28, 9, 22]
    # as wide as the cells: 2 + 1 + 16 + 1 + 5 + 2 + 22 = 49
    assert fit_widths(cols, 49) == [2, 16, 5, 22]
    # 48: free goes (49 - 6 = 43 fits)
    assert fit_widths(cols, 48) == [2, 16, None, 22]
    # 30: 13 cells to cut from 43, one at a time from the widest name (the first on a tie): file 22 -> 16,
    # then name 15, file 15, name 14, file 14, name 13, file 13, name 12
    assert fit_widths(cols, 30) == [2, 12, None, 13]
    rows = fit_table(cols, 30)
    assert rows == [" # name          file", " 1 abcdefghijk…  a-long-file-…", "12 x             b"]


def claude_sessions(folder: Path) -> int:
    """Sessions of the folder's transcripts, read with plain json: the sessionIds of assistant lines with usage."""
    ids = set()
    for f in glob.glob(str(folder / "*.jsonl")):
        for raw in Path(f).read_text().splitlines():
            d = json.loads(raw)
            if d.get("type") == "assistant" and d.get("message", {}).get("usage"):
                ids.add(d.get("sessionId"))
    return len(ids)


@pytest.mark.parametrize("width", [80, 100, 140])
def test_the_folder_report_fits_the_terminal(shared_logs: Path, width: int) -> None:
    from ctxwatch.config import Settings
    from ctxwatch.engine import load_many
    from ctxwatch.output.report import report_json
    from ctxwatch.output.text import report_lines

    folder = shared_logs / "claude-code"
    run = load_many([str(folder)], None, Settings())
    doc = report_json(run)
    lines = list(report_lines(doc, run.issues, run.settings, width=width))
    head = next(i for i, x in enumerate(lines) if x.lstrip().startswith("#"))
    table = lines[head:head + 1 + len(doc["calls"])]
    assert all(len(x) <= width for x in table), max(table, key=len)
    assert table[0].split()[:2] == ["#", "model"] and "file" in table[0] and "context" in table[0]
    start = next(i for i, x in enumerate(lines) if x.startswith("session "))
    sessions = lines[start:start + 1 + len(doc["sessions"])]
    assert len(sessions) - 1 == claude_sessions(folder) == 7
    assert all(len(x) <= width for x in sessions)
    assert sessions[0].split() == ["session", "last", "call", "(UTC)", "calls", "peak", "prompt", "input", "output",
                                   "cost~"]
    natural = list(report_lines(doc, run.issues, run.settings))
    assert natural[1].split()[:4] == ["#", "line", "model", "window"] and " free " in natural[1]  # (a pipe: all)
    # The lines below the tables are broken between words, within the width (a word longer stays whole), and
    # say word for word what the lines a pipe gets say.
    def text_below(out: list[str]) -> list[str]:
        """The lines after the call table, the sessions table left out."""
        top = next(i for i, x in enumerate(out) if x.lstrip().startswith("#")) + 1 + len(doc["calls"])
        rows = next(i for i, x in enumerate(out) if x.startswith("session "))
        return out[top:rows] + out[rows + 1 + len(doc["sessions"]):]

    below = text_below(lines)
    # (first the line naming the columns left out: those of the natural table the narrow one has not)
    total = next(i for i, x in enumerate(below) if x.startswith("total:"))
    missing = [c for c in natural[1].split() if c not in table[0].split()]
    assert missing and " ".join(below[:total]).startswith(f"({width} columns: {missing[0]}")
    assert all(c in " ".join(below[:total]) for c in missing)
    below = below[total:]
    assert all(len(x.removeprefix("\n")) <= width or " " not in x.strip() for x in below), max(below, key=len)
    assert any(x.startswith("  ") for x in below)  # (the folder's notes are longer than any width here)
    assert [w for x in below for w in x.split()] == [w for x in text_below(natural) for w in x.split()]


def test_sessions_only(shared_logs: Path) -> None:
    folder = shared_logs / "claude-code"
    res = CliRunner().invoke(main, ["report", "--sessions", "--no-cache", str(folder)])
    assert res.exit_code == 0, res.output
    out = res.stdout.splitlines()
    assert not any(x.lstrip().startswith("# ") or x.lstrip().startswith("#   ") for x in out)
    start = next(i for i, x in enumerate(out) if x.startswith("session "))
    assert out[start - 1].startswith("7 sessions, newest first")
    assert sum(1 for x in out[start + 1:start + 8] if x[:8].strip()) == 7
    assert any(x.startswith("total: prompt ") for x in out)
    assert CliRunner().invoke(main, ["report", "--sessions", "--json", str(folder)]).exit_code == 2


@pytest.mark.parametrize(("others", "listed"), [(21, 21), (40, 20)])
def test_a_folder_of_many_files_in_no_log_format_lists_20_issues_then_counts_the_rest(
        tmp_path: Path, others: int, listed: int) -> None:
    """A folder of one log and 40 JSON files that are no log: the text report lists 20 skipped files and counts
    the other 20 by kind in one line (it listed all 40); 21 are listed whole (one line more rather than "1
    more"). ``--json`` keeps every one."""
    from click.testing import CliRunner

    from ctxwatch.cli import main

    for i in range(others):
        (tmp_path / f"settings{i}.json").write_text(f'{{"theme": {i}}}\n')
    demo = Path(__file__).resolve().parents[1] / "sample_logs" / "openai_chat_demo.jsonl"
    (tmp_path / "calls.jsonl").write_bytes(b"".join(demo.read_bytes().splitlines(keepends=True)[:3]))
    out = CliRunner().invoke(main, ["report", "--no-cache", str(tmp_path)]).output.splitlines()
    issues = [ln for ln in out if ln.startswith("issue: ")]
    assert len([ln for ln in issues if ": skipped_file: " in ln]) == listed
    rest = [ln for ln in issues if " more (" in ln]
    assert rest == ([] if listed == others else [f"issue: {others - listed} more ({others - listed} skipped_file); "
                                                   "report --json lists them all"])
    doc = json.loads(CliRunner().invoke(main, ["report", "--json", "--no-cache", str(tmp_path)]).output)
    assert len(doc["issues"]) == others


def piped_report(path: Path, columns: str | None) -> list[str]:
    """``ctxwatch report PATH | cat``'s lines, ``COLUMNS`` set to ``columns`` (``None``: unset)."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    if columns is not None:
        env["COLUMNS"] = columns
    env["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent)
    res = subprocess.run([sys.executable, "-c", "from ctxwatch.cli import run; run()", "report", str(path)],
                         capture_output=True, text=True, env=env, timeout=120)  # (stdout a pipe)
    assert res.returncode == 0, res.stderr
    return res.stdout.splitlines()


def test_a_piped_report_is_laid_out_to_columns(shared_logs: Path) -> None:
    """Piped, the report ignored COLUMNS (every column whole, no line broken); it honours it now, as rich and
    click do, and a COLUMNS that is no width (unset, junk, 0, negative) leaves the natural layout."""
    path = shared_logs / "claude-code" / "spotter_4d5611e5_head200.jsonl"
    natural = piped_report(path, None)
    table = next(x for x in natural if x.lstrip().startswith("#"))
    assert table.split()[:5] == ["#", "line", "model", "window", "floor"] and " free " in table
    assert max(len(x) for x in natural) > 200  # (the notes below the table: on one line each)
    assert piped_report(path, "junk") == piped_report(path, "0") == piped_report(path, "-3") == natural

    def whole_or_one_word(lines: list[str], width: int) -> bool:
        """Every line within ``width``, but a word longer (the log's path), alone on its line."""
        return all(len(x) <= width or len(x.split()) == 1 for x in lines)

    at_60 = piped_report(path, "60")
    assert whole_or_one_word(at_60, 60) and max(len(x) for x in at_60) > 57  # (laid out to the width)
    head = next(x for x in at_60 if x.lstrip().startswith("#"))
    assert head.split() == ["#", "model", "floor", "history", "reserve", "used%", "reported"]  # (columns left out)
    # (and the line under the table says which: the natural table's columns the narrow one has not)
    missing = [c for c in table.split() if c not in head.split()]
    assert missing == ["line", "window", "free"]
    note = f"(60 columns: {missing[0]}, {missing[1]} and {missing[2]} left out; --json has them)".split()
    top = at_60.index(head)
    assert " ".join(at_60[top + 13:top + 15]).split() == note
    at_60 = at_60[:top + 13] + at_60[top + 15:]
    # (the first line too: the path alone, the counts under it)
    assert at_60[:3] == [str(path), "  format=claude-code  calls=12  issues=1 (0 bad lines, 1", "  note)"]
    at_200 = piped_report(path, "200")
    assert whole_or_one_word(at_200, 200) and len(at_200) > len(natural)  # (the long notes broken at 200)
    head = next(x for x in at_200 if x.lstrip().startswith("#"))
    assert head.split()[:5] == ["#", "line", "model", "window", "floor"] and " free " in head
    assert len(head) < len(table)  # (the columns as wide as their cells, not their natural widths)

    def below(lines: list[str]) -> list[str]:
        """The words after the table of 12 calls."""
        top = next(i for i, x in enumerate(lines) if x.lstrip().startswith("#"))
        return [w for x in lines[top + 13:] for w in x.split()]

    assert below(at_60) == below(at_200) == below(natural)  # (broken between words, no word lost)


def piped(command: str, path: Path, columns: str | None) -> list[str]:
    """``ctxwatch COMMAND PATH | cat``'s lines, ``COLUMNS`` set to ``columns`` (``None``: unset)."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    if columns is not None:
        env["COLUMNS"] = columns
    env["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent)
    res = subprocess.run([sys.executable, "-c", "from ctxwatch.cli import run; run()", command, "--no-cache",
                          str(path)], capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 0, res.stderr
    return res.stdout.splitlines()


@pytest.mark.parametrize("command", ["check", "plan"])
def test_check_and_plan_break_their_long_lines_at_columns(shared_logs: Path, command: str) -> None:
    """``check`` and ``plan`` printed their flag, note and header lines whole past ``COLUMNS=80`` (the terminal
    broke them anywhere); like ``report``, they break them between words now, the words all kept in order, and
    without a width every line stays whole."""
    path = shared_logs / "claude-code" / "spotter_4d5611e5_full.jsonl"
    natural, at_80 = piped(command, path, None), piped(command, path, "80")
    assert max(len(x) for x in natural) > 120  # (a line the width must break)
    assert all(len(x) <= 80 or len(x.split()) == 1 for x in at_80)
    assert " ".join(" ".join(natural).split()) == " ".join(" ".join(at_80).split())
    assert len(at_80) > len(natural)


def _piped_args(args: list[str], columns: str | None) -> list[str]:
    """``ctxwatch ARGS | cat``'s lines, ``COLUMNS`` set to ``columns`` (``None``: unset)."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    if columns is not None:
        env["COLUMNS"] = columns
    env["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent)
    res = subprocess.run([sys.executable, "-c", "from ctxwatch.cli import run; run()", *args], capture_output=True,
                         text=True, env=env, timeout=120)
    assert res.returncode == 0, res.stderr
    return res.stdout.splitlines()


@pytest.mark.parametrize("command", ["schema", "formats"])
def test_schema_and_formats_break_their_long_lines_at_columns(shared_logs: Path, command: str) -> None:
    """``schema``'s header line and ``formats``' descriptions ran to 170 and 149 columns under ``COLUMNS=80``;
    they are broken between words, as ``report``'s lines are, every word kept in order."""
    args = [command] if command == "formats" else \
        [command, str(shared_logs / "request-response" / "claude-trace_test-traffic_head14.jsonl")]
    natural, at_80 = _piped_args(args, None), _piped_args(args, "80")
    assert max(len(x) for x in natural) > 100
    assert all(len(x) <= 80 or len(x.split()) == 1 for x in at_80)
    assert " ".join(" ".join(natural).split()) == " ".join(" ".join(at_80).split())


def test_a_folder_of_many_formats_breaks_its_format_list_at_80_columns(shared_logs: Path) -> None:
    """The sample folder holds a dozen formats: at 80 columns their list (one word, joined by "+") is broken
    after a "+", each line within 80 cells, and read back whole it is the formats ``--json`` names."""
    formats = json.loads(CliRunner().invoke(main, ["report", "--json", "--no-cache", str(shared_logs)]).stdout)[
        "formats"]
    assert len("  format=" + "+".join(formats)) > 80  # (the case: one word wider than the terminal)
    out = CliRunner().invoke(main, ["report", "--no-cache", str(shared_logs)], env={"COLUMNS": "80"}).stdout
    lines = out.splitlines()
    assert all(len(ln) <= 80 for ln in lines[:6]), lines[:6]
    start = next(i for i, ln in enumerate(lines) if ln.startswith("  format="))
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("  calls="))
    assert "".join(ln.strip() for ln in lines[start:end]) == "format=" + "+".join(formats)
    assert lines[end].startswith("  calls=") and "issues=" in lines[end]
