"""The catalogue memo (``~/.cache/ctxwatch/catalog-*.json``, :mod:`ctxwatch.catalog.memo`) is bounded: a log's
model names are untrusted, and a log with 50,000 unique names grew the memo to 24.5 MB, hostile strings included.

Expected contents are worked out by hand from the names the tests write and the documented bounds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctxwatch.catalog import memo, windows

#: Names no memo may keep: too long (5,000 characters), a terminal control, a bidi override, a line separator.
HOSTILE = ["gpt-4o" + "x" * 5000, "gpt-4o\x1b]0;T\x07", "gpt-4o\u202e", "gpt-4o\u2028"]


def test_a_log_of_thousands_of_unique_model_names_leaves_a_bounded_memo(tmp_path: Path) -> None:
    """3,000 unknown names (each a window, entry and tiers miss) and 600 names the catalogue knows through
    their last path segment (``team7/gpt-4o``: each a window, entry, tiers and rates answer, 2,400 in all): the
    memo keeps at most 2,048 answers, at most 256 of them misses, and no hostile name."""
    def rec(model: str) -> str:
        return json.dumps({"timestamp": 1_735_689_600, "request": {"model": model, "messages": [
            {"role": "user", "content": "hi"}]}, "response": {"usage": {"prompt_tokens": 9, "completion_tokens": 1}}})

    names = [f"unknown-model-{i}" for i in range(3000)] + [f"team{i}/gpt-4o" for i in range(600)] + HOSTILE
    log = tmp_path / "many.jsonl"
    log.write_text("".join(rec(m) + "\n" for m in names))
    cache = tmp_path / "cache"
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    env.pop("CTXWATCH_NO_CACHE", None)
    out = subprocess.run([sys.executable, "-c", "from ctxwatch.cli import run; run()", "report", "--json", str(log)],
                         env=env, capture_output=True, check=False, timeout=300)
    assert out.returncode == 0, out.stderr
    assert len(json.loads(out.stdout)["calls"]) == len(names)
    (memo,) = (cache / "ctxwatch").glob("catalog-*.json")
    data = json.loads(memo.read_text())
    answers = {k: v for k, v in data.items() if k != "install"}
    assert 0 < len(answers) <= 2048 and sum(v is None for v in answers.values()) <= 256
    assert sum(v is not None for v in answers.values()) > 256  # (the answers of known names are kept)
    models = {k.split("\x00")[1] for k in answers}
    assert not models & set(HOSTILE)
    assert all(len(m) <= 128 and m.isprintable() for m in models)
    assert memo.stat().st_size < 2_000_000


def test_the_newest_answers_are_kept_and_implausible_names_never() -> None:
    """Of 1,000 misses the last 256 are kept; of 3,000 answers the last 2,048; a key with a name of 129
    characters, a control, a bidi control or a lone surrogate is dropped, one of 128 printable characters kept."""
    misses = {f"window\x00m{i}\x00None": None for i in range(1000)}
    kept = memo.bounded(misses)
    assert list(kept) == [f"window\x00m{i}\x00None" for i in range(744, 1000)]
    hits = {f"window\x00h{i}\x00openai": 128_000 for i in range(3000)}
    assert list(memo.bounded(hits)) == [f"window\x00h{i}\x00openai" for i in range(952, 3000)]
    odd = {f"window\x00{'a' * 128}\x00None": 1, f"window\x00{'a' * 129}\x00None": 2, "window\x00a\x1bb\x00None": 3,
           "window\x00a\u202eb\x00None": 4, "window\x00a\ud800\x00None": 5, "window\x00ok\x00pro\x85vider": 6,
           "install": {"data": "x"}}
    assert memo.bounded(odd) == {f"window\x00{'a' * 128}\x00None": 1}


def test_an_oversized_memo_is_not_read_and_is_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A memo file above MEMO_MAX_BYTES (one written before the bounds) is ignored at start and replaced by a
    bounded one at exit; below it, its answers are used."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("CTXWATCH_NO_CACHE", raising=False)
    monkeypatch.setattr(memo, "_memo", None)
    monkeypatch.setattr(memo, "_dirty", True)  # (no exit hook from this test)
    path = memo.memo_path()
    assert path is not None
    os.makedirs(os.path.dirname(path))
    planted = {"window\x00planted-model\x00None": 4242}
    padding = {f"window\x00pad{i}\x00None": None for i in range(100)}
    Path(path).write_text(json.dumps({**padding, **planted}))
    monkeypatch.setattr(memo, "MEMO_MAX_BYTES", os.path.getsize(path) - 1)
    windows.catalog_window.cache_clear()
    assert windows.catalog_window("planted-model", None) is None  # (the library's answer, not the file's)
    memo.save()
    data = json.loads(Path(path).read_text())
    assert data["window\x00planted-model\x00None"] is None and "window\x00pad0\x00None" not in data
    monkeypatch.setattr(memo, "MEMO_MAX_BYTES", 8 * 1024 * 1024)
    Path(path).write_text(json.dumps(planted))
    monkeypatch.setattr(memo, "_memo", None)
    windows.catalog_window.cache_clear()
    assert windows.catalog_window("planted-model", None) == 4242
    windows.catalog_window.cache_clear()


def _look_up_in_a_worker(model: str) -> int | None:
    """A worker's task: one catalogue answer looked up (and put in the worker's copy of the memo)."""
    windows.catalog_window.cache_clear()
    return windows.catalog_window(model, None)


def test_the_answers_a_worker_looked_up_reach_the_memo_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker process of a parallel read ends without exit handlers: the answers it looked up are written to
    the memo file when its task ends, so the next read's workers find them (they imported the catalogue again on
    every read).  The parent never looked the model up, so only the worker can have written the answer."""
    from ctxwatch.engine.parallel import fork_map

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("CTXWATCH_NO_CACHE", raising=False)
    monkeypatch.setattr(memo, "_memo", None)
    monkeypatch.setattr(memo, "_dirty", False)
    monkeypatch.setattr(memo, "_exit_save", True)  # (no exit hook from this test)
    memo.get("window\x00nothing\x00None")  # (the parent's memo read, empty, before the fork)
    results = fork_map(_look_up_in_a_worker, [("gpt-4o",)], 1)
    assert results is not None
    expected = list(results)
    assert expected[0] is not None and expected[0] > 0
    path = memo.memo_path()
    assert path is not None
    data = json.loads(Path(path).read_text())
    assert data["window\x00gpt-4o\x00None"] == expected[0]
    assert "window\x00gpt-4o\x00None" not in (memo._memo or {})  # (the parent's copy never held it)
    windows.catalog_window.cache_clear()
