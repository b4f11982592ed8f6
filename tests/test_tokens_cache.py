"""The start-up cache of verified tokenizer ranks: same encodings as the bundled file, and safe to lose."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PROBE = r"""
import sys
from ctxwatch import tokens
text = open(sys.argv[1], encoding="utf-8").read()
for name in ("o200k_base", "cl100k_base"):
    t = tokens.get_tokenizer(name).load()  # (loaded when first needed: here, now)
    print(name, tokens.LOADED_FROM.get(name), t.name, sum(t.encode(text)), len(t.encode(text)))
"""


def _run(cache: Path) -> list[str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    env.pop("CTXWATCH_NO_CACHE", None)
    out = subprocess.run([sys.executable, "-c", PROBE, str(ROOT / "README.md")], env=env, capture_output=True,
                         text=True, check=True, timeout=120)
    return out.stdout.split("\n")[:2]


def test_cached_ranks_give_the_same_tokens_and_a_damaged_cache_is_ignored(tmp_path: Path) -> None:
    first = _run(tmp_path)
    assert [ln.split()[1] for ln in first] == ["bundled", "bundled"]
    files = sorted((tmp_path / "ctxwatch").glob("*.marshal"))
    assert len(files) == 2
    second = _run(tmp_path)
    assert [ln.split()[1] for ln in second] == ["cache", "cache"]
    # The same token ids (sum and count over the README) whichever way the encoding was loaded.
    assert [ln.split()[2:] for ln in second] == [ln.split()[2:] for ln in first]
    # A torn cache file (half written, or damaged) is detected and the bundled file is used again.
    for f in files:
        f.write_bytes(f.read_bytes()[: f.stat().st_size // 2])
    third = _run(tmp_path)
    assert [ln.split()[1] for ln in third] == ["bundled", "bundled"]
    assert [ln.split()[2:] for ln in third] == [ln.split()[2:] for ln in first]
    assert [ln.split()[1] for ln in _run(tmp_path)] == ["cache", "cache"]  # and the cache was rewritten


CATALOG_PROBE = r"""
import sys
from ctxwatch.model import Usage
from ctxwatch.catalog.windows import call_cost, catalog_window
u = Usage(prompt_total=250_000, input_uncached=1_000, cache_read=240_000, cache_write=9_000, output=700)
print(catalog_window("claude-sonnet-4-5", "anthropic"), catalog_window("gpt-4o", "openai"),
      catalog_window("no-such-model", None),
      call_cost("claude-sonnet-4-5", "anthropic", u, 1_760_000_000.0), call_cost("gpt-4o", "openai", u, None),
      call_cost("no-such-model", None, u, None), "genai_prices" in sys.modules)
"""


def test_catalogue_answers_are_memoised_per_installed_catalogue(tmp_path: Path) -> None:
    """The second start answers windows and prices from the memo without importing genai-prices, with the
    same values; a damaged memo is ignored; CTXWATCH_NO_CACHE=1 always asks the library."""
    def probe(**extra: str) -> list[str]:
        env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path), **extra}
        if "CTXWATCH_NO_CACHE" not in extra:
            env.pop("CTXWATCH_NO_CACHE", None)
        out = subprocess.run([sys.executable, "-c", CATALOG_PROBE], env=env, capture_output=True, text=True,
                             check=True, timeout=120)
        return out.stdout.split()

    first = probe()
    assert first[-1] == "True"  # nothing memoised yet: the library answered
    assert first[:3] == ["200000", "128000", "None"] and first[5] == "None"
    (memo,) = (tmp_path / "ctxwatch").glob("catalog-*.json")
    second = probe()
    assert second[:-1] == first[:-1] and second[-1] == "False"
    memo.write_bytes(memo.read_bytes()[: memo.stat().st_size // 2])  # torn
    assert probe()[:-1] == first[:-1]
    assert probe(CTXWATCH_NO_CACHE="1") == first


def test_damaged_memo_entries_are_asked_again(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Entries of the wrong shape (empty tiers, no tier at 0, NaN or negative rates, a window of -5 or true)
    are ignored and answered by the library again: the costs and windows equal a run without the memo."""
    import json
    from decimal import Decimal

    from ctxwatch.catalog import memo, prices, windows
    from ctxwatch.model import Usage

    u = Usage(prompt_total=250_000, input_uncached=1_000, cache_read=240_000, cache_write=9_000, output=700)
    models = (("claude-sonnet-4-5", "anthropic"), ("gpt-4o", "openai"))

    def fresh() -> None:
        memo._memo = None
        windows.catalog_window.cache_clear()
        prices._tier_starts.cache_clear()
        prices._rates.cache_clear()

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("CTXWATCH_NO_CACHE", raising=False)
    monkeypatch.setattr(memo, "_memo", None)  # (restored afterwards, with the flag below)
    monkeypatch.setattr(memo, "_dirty", True)  # (no exit hook from this test)
    fresh()
    want = [(windows.catalog_window(m, p), windows.call_cost(m, p, u, 1_760_000_000.0)) for m, p in models]
    # (by hand, so that two unknowns cannot pass as equal: Sonnet 4.5 above 200,000 prompt tokens, $6 input,
    # $0.60 read, $7.50 write, $22.50 output: 6,000 + 144,000 + 67,500 + 15,750 = 233,250 per million; gpt-4o,
    # $2.50 input and writes, $1.25 cached, $10 output: 2,500 + 300,000 + 22,500 + 7,000 = 332,000 per million)
    assert want == [(200_000, Decimal("0.23325")), (128_000, Decimal("0.332"))]
    memo.save()
    (memo_file,) = (tmp_path / "ctxwatch").glob("catalog-*.json")
    data = json.loads(memo_file.read_text())
    bad = {"window": [-5, True, "x"], "tiers": [[], [5], ["0"]], "rates": [["sNaN", "0", "0", "0"], ["-1"] * 4,
                                                                        "1234", [1, 2, 3, 4]]}
    for variant in range(4):
        for key in data:
            kind = key.split("\x00")[0]
            if kind == "install":  # (which catalogue the memo is of, not an answer)
                continue
            choices = bad[kind]
            data[key] = choices[variant % len(choices)]
        memo_file.write_text(json.dumps(data))
        fresh()
        got = [(windows.catalog_window(m, p), windows.call_cost(m, p, u, 1_760_000_000.0)) for m, p in models]
        assert got == want, variant


def test_writing_a_memo_removes_the_memos_of_catalogues_no_longer_installed(tmp_path: Path,
                                                                          monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Every genai-prices upgrade and every deleted virtual environment left its catalog-*.json behind for good.
    Writing a memo now removes the memos whose catalogue is gone or changed, and those without an install
    record (written before memos had one, or damaged); it keeps the memo of another install that still exists,
    and touches no other file (the tokenizer cache, a temporary file, a look-alike name, a link)."""
    import json

    from ctxwatch.catalog import memo as catalog_memo

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("CTXWATCH_NO_CACHE", raising=False)
    folder = tmp_path / "ctxwatch"
    folder.mkdir()
    live_data = tmp_path / "other-venv-data.py"  # another install's catalogue file, still there
    live_data.write_text("x = 1\n")
    st = live_data.stat()

    def memo(name: str, body: object) -> Path:
        f = folder / f"catalog-{name}.json"
        f.write_text(json.dumps(body))
        return f

    gone = memo("a" * 20, {"install": {"data": str(tmp_path / "deleted-venv" / "data.py"), "size": 1,
                                       "mtime_ns": 1}, "window\x00gpt-4o\x00openai": 128000})
    changed = memo("b" * 20, {"install": {"data": str(live_data), "size": st.st_size + 1,
                                          "mtime_ns": st.st_mtime_ns}})
    old_layout = memo("c" * 20, {"window\x00gpt-4o\x00openai": 128000})
    damaged = folder / f"catalog-{'d' * 20}.json"
    damaged.write_bytes(b'{"install": {"da')
    live = memo("e" * 20, {"install": {"data": str(live_data), "size": st.st_size, "mtime_ns": st.st_mtime_ns}})
    others = {name: folder / name for name in (
        "o200k_base-446a9538cb6c348e-tiktoken0.14.0.marshal",  # the tokenizer's cache
        f"catalog-{'f' * 20}.json.4242.tmp",  # a concurrent writer's file in flight
        "catalog-notes.json", f"catalog-{'A' * 20}.json", f"catalog-{'0' * 19}.json", "settings.json")}
    for f in others.values():
        f.write_text("{}")
    link = folder / f"catalog-{'1' * 20}.json"
    link.symlink_to(gone)
    sub = folder / f"catalog-{'2' * 20}.json"
    sub.mkdir()

    monkeypatch.setattr(catalog_memo, "_memo", {"window\x00gpt-4o\x00openai": 128000})
    monkeypatch.setattr(catalog_memo, "_dirty", True)  # (no exit hook from this test)
    current = catalog_memo.memo_path()
    assert current is not None and os.path.dirname(current) == str(folder)
    catalog_memo.save()

    assert os.path.exists(current)
    for stale in (gone, changed, old_layout, damaged):
        assert not stale.exists(), stale.name
    assert json.loads(Path(current).read_text())["install"]["data"].endswith("data.py")
    assert live.exists()
    assert all(f.exists() for f in others.values())
    assert link.is_symlink() and sub.is_dir()

    # Writing again with the live install's memo present keeps it, and a failed removal never raises.
    memo("9" * 20, {})
    monkeypatch.setattr(os, "remove", lambda *_a, **_k: (_ for _ in ()).throw(PermissionError("read-only")))
    catalog_memo.save()
    assert live.exists() and (folder / f"catalog-{'9' * 20}.json").exists()
