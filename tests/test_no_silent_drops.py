"""One field of a real sample record replaced by a value of another JSON type never loses a call silently: each
call the mutated log gives fewer than the unmutated one must be matched by an issue naming the mutated line (for
a one-document log, by any issue of the file).

Per sample log a fixed-seed loop replaces the value at one path (an id, a type, a role, a model, a usage
block, ...) by one of each other JSON type.  ``CTXWATCH_DROP_TRIALS`` sets the trials per log (default 12).
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from mutation import HEAD, WINDOW, json_paths, replaced, sample_files, write_window

from ctxwatch.cli import main
from ctxwatch.model import json_type

TRIALS = int(os.environ.get("CTXWATCH_DROP_TRIALS", "12"))
KEYS = ("id", "name", "type", "role", "content", "text", "usage", "model", "tokens", "say", "status", "spans",
        "key", "value", "stringvalue", "attributes", "response", "event", "messages", "history", "trajectory")
OTHERS: list[Any] = [7, "x", True, None, [7], {"x": 7}, 1.5]


def _report(path: Path) -> dict[str, Any] | None:
    res = CliRunner().invoke(main, ["report", "--json", "--no-cache", str(path)])
    if res.exit_code != 0:
        # (no call at all: the exit message says why, naming the file and, for a line, its number)
        said = "no call could be read" in res.output or "format not recognised" in res.output
        return {"calls": [], "issues": [], "exit": res.output} if said else None
    doc: dict[str, Any] = json.loads(res.stdout)
    return doc


def _trials(src: Path) -> list[tuple[list[str], int, Any, tuple[Any, ...]]]:
    """``TRIALS`` (lines, line index or -1, record, path) picks of ``src``, from a seed of its name."""
    rnd = random.Random(src.name)
    text = src.read_text(encoding="utf-8", errors="replace")
    if src.suffix == ".jsonl":
        lines = text.splitlines()
        recs = []
        for i, ln in enumerate(lines):
            try:
                if isinstance(v := json.loads(ln), dict):
                    recs.append((i, v))
            except ValueError:
                pass
    else:
        lines, recs = [], [(-1, json.loads(text))]
    out = []
    for _ in range(TRIALS if recs else 0):
        i, v = rnd.choice(recs)
        paths = [p for p in json_paths(v) if p and isinstance(p[-1], str) and p[-1].lower().endswith(KEYS)]
        if paths:
            out.append((lines, i, v, rnd.choice(paths)))
    return out


def _window_line(lines: list[str], i: int) -> int:
    """The 1-based line of ``write_window``'s copy that holds line ``i`` (0-based) of ``lines``."""
    keep = set(range(min(HEAD, len(lines)))) | set(range(max(0, i - WINDOW), min(len(lines), i + WINDOW + 1)))
    return sum(1 for k in keep if k <= i)


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for k in path:
        value = value[k]
    return value


@pytest.mark.parametrize("src", sample_files(), ids=lambda p: p.name)
def test_a_field_of_another_type_loses_no_call_silently(src: Path, tmp_path: Path) -> None:
    silent = []
    for lines, i, value, where in _trials(src):
        base = _report(write_window(src, lines, i, value, tmp_path))
        if base is None:
            continue
        old = _at(value, where)
        for new in OTHERS:
            if json_type(new) == json_type(old):
                continue
            got = _report(write_window(src, lines, i, replaced(value, where, new), tmp_path))
            lost = len(base["calls"]) - (len(got["calls"]) if got else 0)
            if lost <= 0:
                continue
            issues = got["issues"] if got else []
            at = _window_line(lines, i)
            named = [x for x in issues if i < 0 or x.get("line") == at]
            if got and "exit" in got and (i < 0 or f":{at}:" in got["exit"]):
                named.append({"line": at})
            if not named:
                silent.append(f"line {i + 1} path {list(where)} = {new!r}: {lost} call(s) lost, no issue")
    assert not silent, "\n".join(silent)
