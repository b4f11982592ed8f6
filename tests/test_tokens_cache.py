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
    t = tokens.get_tokenizer(name)
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
