"""Type-confusion mutations of real sample records, shared by ``tests/test_any_json_type.py`` and
``scripts/fuzz_types.py``: one value at one path of one record of a real log replaced by another JSON value.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("CTXWATCH_SHARED", ROOT.parent / "shared")) / "sample-logs"

#: The replacement values the issue names, and their neighbours: every JSON type, a huge float, a negative
#: count, a NaN (which Python's json writes and ctxwatch's fallback decoder reads).
WEIRD: list[Any] = [7, [], {}, True, None, "x", 1e308, -1, math.nan, [7], {"x": 7}, "", 0, 2**70, [{}], [None]]

#: Lines kept on each side of the mutated one, and lines kept from the file's head (where formats are sniffed and
#: sessions start), so that one trial reads a few dozen records, not a whole 3 MB session.
WINDOW = 12
HEAD = 4

_SUFFIXES = (".jsonl", ".json", ".traj")


def sample_files() -> list[Path]:
    """Every JSON or JSON-lines sample log (project samples and, when present, the shared real ones)."""
    roots = [ROOT / "sample_logs", SHARED]
    return sorted(p for r in roots if r.is_dir() for p in r.rglob("*") if p.is_file() and p.suffix in _SUFFIXES)


def json_paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path (keys and list indices) into ``value``, the value itself (``()``) first."""
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out.extend(json_paths(v, (*prefix, k)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.extend(json_paths(v, (*prefix, i)))
    return out


def replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    """``value`` with the value at ``path`` replaced by ``new`` (a copy along the path; the rest shared)."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        out = dict(value)
    else:
        out = list(value)
    out[head] = replaced(value[head], rest, new)
    return out


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def mutated_sample(src: Path, pick: Callable[[], float], new: Any, randrange: Callable[[int], int],
                   tmp: Path) -> tuple[Path, str] | None:
    """Write a copy of (a window of) ``src`` with one value of one record replaced by ``new``.

    ``pick()`` gives a float in [0, 1) that chooses the record, ``randrange(n)`` the path among its ``n``.
    Returns ``(path of the copy, "line L path P = V")``, or ``None`` when ``src`` has no JSON record.
    """
    text = src.read_bytes().decode("utf-8", "replace")
    if src.suffix != ".jsonl":
        try:
            doc = json.loads(text)
        except ValueError:
            return None
        paths = json_paths(doc)
        path = paths[randrange(len(paths))]
        return write_window(src, [], -1, replaced(doc, path, new), tmp), f"document path {list(path)} = {_dump(new)}"
    lines = text.splitlines()
    good = [i for i, ln in enumerate(lines) if ln.strip().startswith("{")]
    if not good:
        return None
    i = good[int(pick() * len(good))]
    try:
        rec = json.loads(lines[i])
    except ValueError:
        return None
    paths = json_paths(rec)
    if os.environ.get("FUZZ_KEYED") and randrange(2):
        keyed = [p for p in paths if p and isinstance(p[-1], str)
                 and any(w in p[-1].lower() for w in ("id", "name", "type", "role", "text", "content", "usage",
                                                       "model", "token", "time", "input", "output", "tool"))]
        paths = keyed or paths
    path = paths[randrange(len(paths))]
    return write_window(src, lines, i, replaced(rec, path, new), tmp), f"line {i + 1} path {list(path)} = {_dump(new)}"


def write_window(src: Path, lines: list[str], i: int, value: Any, tmp: Path) -> Path:
    """Write ``value`` as line ``i`` (0-based) of ``lines``, with the file's head and the lines around it (a
    window of ``src``, a JSON-lines log), or, for ``i < 0``, as the whole document; return the copy's path
    (same suffix as ``src``)."""
    out = tmp / f"m{src.suffix}"
    if i < 0:
        out.write_text(_dump(value), encoding="utf-8")
        return out
    lines = list(lines)
    lines[i] = _dump(value)
    keep = set(range(min(HEAD, len(lines)))) | set(range(max(0, i - WINDOW), min(len(lines), i + WINDOW + 1)))
    out.write_text("".join(lines[k] + "\n" for k in sorted(keep)), encoding="utf-8")
    return out
