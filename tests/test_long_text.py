"""Long texts are counted in slices (:func:`ctxwatch.tokens.slices`): exactly as tiktoken counts them where the cuts
fall where tiktoken's pre-tokenizer cuts anyway, as a labelled estimate within ``FORCED_CUT_MAX_ERROR`` tokens per
cut inside a run with no such place, never with more than one slice handed to tiktoken at a time, and stopping
between slices when the reading thread is told to stop (the dashboard's quit).

Expected values come from tiktoken itself (``Tokenizer._enc``, the raw encoding) on the whole text or on slices
cut by the rule written out here: a run of one letter has no place where the pre-tokenizer cuts, so it is cut
every ``WHOLE_CHARS`` characters.
"""

from __future__ import annotations

import itertools
import json
import random
import string
import threading
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ctxwatch.cli import main
from ctxwatch.engine import load_run
from ctxwatch.tokens import (
    FORCED_CUT_MAX_ERROR,
    WHOLE_CHARS,
    CountingStopped,
    Tokenizer,
    get_tokenizer,
    slicing,
    stop_counting_on,
)

ENCODINGS = ("o200k_base", "cl100k_base")
ROOT = Path(__file__).resolve().parent.parent


def raw(name: str) -> Any:
    """tiktoken's own encoding, for expected values."""
    return get_tokenizer(name).load()._enc


def tiktoken_count(name: str, text: str) -> int:
    return len(raw(name).encode_ordinary(text))


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
def sample_strings(shared_logs: Path) -> list[str]:
    """Every string value of every JSON line of the real sample logs (messages, tool output, code, ids)."""
    out: list[str] = []
    for path in sorted(shared_logs.rglob("*")):
        if not path.is_file():
            continue
        for line in path.read_bytes().splitlines():
            try:
                _strings(json.loads(line), out)
            except ValueError:
                continue
    return out


@pytest.fixture(scope="module")
def corpora(sample_strings: list[str], shared_logs: Path) -> dict[str, str]:
    """Long real texts: the sample logs' strings joined (prose, code, tool output), their raw JSON lines, and
    this project's own source code."""
    raw_json = "\n".join(p.read_text(errors="replace") for p in sorted(shared_logs.rglob("*.json*")) if p.is_file())
    code = "\n".join(p.read_text() for p in sorted((ROOT / "ctxwatch").rglob("*.py")))
    return {"sample strings": "\n".join(s for s in sample_strings if len(s) > 20), "raw JSON": raw_json,
            "code": code}


def unicode_mix(seed: int, n: int) -> str:
    """Text of letters (several scripts, cases), combining marks, digits (ASCII and others), apostrophes,
    punctuation, all kinds of whitespace, emoji with joiners and modifiers, symbols and control characters."""
    pool = [*(string.ascii_letters + string.digits + string.punctuation + " \t\n\r"),
            "\r\n", "'s", "'ll", "’", "\u00a0", "\u2028", "\u3000", "\u0301", "\u0308", "\u093f", "\u0915", "é",
            "ß", "Ж", "ж", "ǅ", "ʰ", "中", "文", "，", "。", "ー", "١", "٢", "²", "½", "Ⅻ", "〇", "😀", "👍🏽",
            "\u200d", "\ufeff", "\x00", "\x1c", "\u0600", "\U0001f1fa", "\U000e0001"]
    rng = random.Random(seed)
    return "".join(rng.choice(pool) * rng.choice((1, 1, 1, 2, 3)) for _ in range(n))


# --- exact where it must be --------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ENCODINGS)
def test_texts_up_to_the_threshold_count_as_tiktoken_counts_them(name: str, sample_strings: list[str]) -> None:
    tok = Tokenizer(name)
    texts = [s for s in sample_strings if 0 < len(s) <= WHOLE_CHARS]
    assert len(texts) > 1000
    for s in texts:
        assert tok.count_cut(s) == (tiktoken_count(name, s), False)


@pytest.mark.parametrize("name", ENCODINGS)
def test_long_real_texts_count_exactly(name: str, corpora: dict[str, str]) -> None:
    """Megabytes of real text: tens of slices, every cut where the pre-tokenizer cuts, so the very same tokens."""
    tok = Tokenizer(name)
    for label, text in corpora.items():
        assert len(text) > 10 * WHOLE_CHARS, label
        assert tok.count_cut(text) == (tiktoken_count(name, text), False), label
        assert tok.encode(text) == raw(name).encode_ordinary(text), label


@pytest.mark.parametrize("name", ENCODINGS)
def test_every_cut_keeps_the_tokens_with_small_slices(name: str, corpora: dict[str, str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Slices of 512 characters (a cut every 256 to 512 characters: tens of thousands of cuts, in real text and
    in a mix of every kind of character) still give tiktoken's own tokens."""
    monkeypatch.setattr(slicing, "WHOLE_CHARS", 512)  # (the module that reads them)
    monkeypatch.setattr(slicing, "SEARCH_CHARS", 256)
    texts = {**corpora, **{f"unicode mix {seed}": unicode_mix(seed, 150_000) for seed in (1, 2)}}
    for label, text in texts.items():
        tok = Tokenizer(name)
        assert tok.count_cut(text) == (tiktoken_count(name, text), False), label
        assert tok.encode(text) == raw(name).encode_ordinary(text), label


# --- runs with no pre-tokenizer cut ------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ENCODINGS)
@pytest.mark.parametrize("char", ["x", ".", "中", "😀"])
def test_a_run_of_one_character_is_cut_every_whole_chars(name: str, char: str) -> None:
    """The tester's case, smaller: a run with no place where the pre-tokenizer cuts is cut every WHOLE_CHARS
    characters, each slice counted by tiktoken, and the count says it is an estimate."""
    rest = 12_345
    text = char * (3 * WHOLE_CHARS + rest)
    expected = 3 * tiktoken_count(name, char * WHOLE_CHARS) + tiktoken_count(name, char * rest)
    assert Tokenizer(name).count_cut(text) == (expected, True)
    assert len(Tokenizer(name).encode(text)) == expected


def test_a_run_inside_text_is_cut_by_the_same_rule() -> None:
    """Text before and after a run: the run's slices end every WHOLE_CHARS characters from the text's start (no
    boundary in the last SEARCH_CHARS characters of either of them), the last slice is what is left."""
    text = "Here is the file: " + "A" * (2 * WHOLE_CHARS) + " (end)"
    cuts = [0, WHOLE_CHARS, 2 * WHOLE_CHARS, len(text)]
    expected = sum(tiktoken_count("o200k_base", text[a:b]) for a, b in itertools.pairwise(cuts))
    assert Tokenizer("o200k_base").count_cut(text) == (expected, True)


def _run(kind: str, n: int) -> str:
    rng = random.Random(kind)
    alphabet = {
        "random lowercase": string.ascii_lowercase,
        "random letters": string.ascii_letters,
        "random CJK": [chr(c) for c in range(0x4E00, 0x4E00 + 3000)],
        "random digits": string.digits,
        "punctuation and spaces": " -=.,;:!?\n\t*#/\\\"'()[]{}<>",
        "repeated dots": ".",
        "repeated spaces": " ",
    }[kind]
    return "".join(rng.choice(alphabet) for _ in range(n))


@pytest.mark.parametrize("name", ENCODINGS)
@pytest.mark.parametrize("kind", ["random lowercase", "random letters", "random CJK", "random digits",
                                  "punctuation and spaces", "repeated dots", "repeated spaces"])
def test_forced_cuts_stay_within_the_stated_bound(name: str, kind: str) -> None:
    text = _run(kind, 4 * WHOLE_CHARS + 777)  # no pre-tokenizer cut: 4 forced cuts
    n, cut = Tokenizer(name).count_cut(text)
    assert cut
    assert abs(n - tiktoken_count(name, text)) <= 4 * FORCED_CUT_MAX_ERROR


def test_tiktoken_never_gets_more_than_one_slice(monkeypatch: pytest.MonkeyPatch, corpora: dict[str, str]) -> None:
    """Time and memory stay linear: tiktoken is never handed more than WHOLE_CHARS characters at once (its cost per
    character grows with a piece's length, and its token list is Python ints)."""
    enc = raw("o200k_base")
    real = enc.encode_ordinary
    sizes: list[int] = []

    def spy(text: str) -> list[int]:
        sizes.append(len(text))
        return real(text)

    monkeypatch.setattr(enc, "encode_ordinary", spy)
    tok = Tokenizer("o200k_base")
    tok.count("x" * 1_000_003)
    tok.count(corpora["sample strings"])
    tok.encode(_run("random lowercase", 300_000))
    assert sizes and max(sizes) <= WHOLE_CHARS


# --- stopping ----------------------------------------------------------------------------------------------------

def test_a_long_count_stops_between_slices_when_its_thread_is_told_to() -> None:
    tok = Tokenizer("o200k_base")
    text = _run("random lowercase", 3 * WHOLE_CHARS)
    stop = threading.Event()
    stop.set()
    with stop_counting_on(stop), pytest.raises(CountingStopped):
        tok.count(text)
    with stop_counting_on(stop), pytest.raises(CountingStopped):
        tok.encode(text)
    # Nothing was cached for the stopped count; outside the block, or with the event clear, it counts.
    expected = sum(tiktoken_count("o200k_base", text[i:i + WHOLE_CHARS]) for i in range(0, len(text), WHOLE_CHARS))
    assert tok.count_cut(text) == (expected, True)
    with stop_counting_on(threading.Event()):
        assert Tokenizer("o200k_base").count(text) == expected
    # Short texts are one tiktoken call: nothing to stop between.
    with stop_counting_on(stop):
        assert tok.count("hello world") == 2


# --- calls -------------------------------------------------------------------------------------------------------

def _write(path: Path, text: str) -> Path:
    rec = {"request": {"model": "gpt-4o", "messages": [{"role": "user", "content": text}]},
           "response": {"usage": {"prompt_tokens": 10, "completion_tokens": 1}}}
    path.write_text(json.dumps(rec) + "\n")
    return path


def test_a_call_with_a_cut_run_is_an_estimate(tmp_path: Path) -> None:
    text = "x" * (2 * WHOLE_CHARS + 5)
    log = _write(tmp_path / "run.jsonl", text)
    call = load_run(str(log)).calls[0]
    per_slice = 2 * tiktoken_count("o200k_base", "x" * WHOLE_CHARS) + tiktoken_count("o200k_base", "xxxxx")
    # the OpenAI cookbook count: 3 per message + the role + the content
    assert call.history_tokens == 3 + tiktoken_count("o200k_base", "user") + per_slice
    assert call.exact is False  # gpt-4o's own tokenizer, but the count is an estimate
    doc = json.loads(CliRunner().invoke(main, ["report", "--json", str(log)]).output)
    assert doc["calls"][0]["exact"] is False
    # (the reported 10 tokens are far off: the flag says whose count it is, not "another tokenizer")
    [flag] = [f for f in doc["flags"] if f["kind"] == "estimate_disagrees"]
    assert "(o200k_base, the model's tokenizer, with images or a cut text estimated," in flag["reason"]


def test_the_detail_gap_row_of_a_cut_call_names_the_models_own_tokenizer(tmp_path: Path) -> None:
    from ctxwatch.ui.screens import _add_framing

    call = load_run(str(_write(tmp_path / "run.jsonl", "x" * (WHOLE_CHARS + 1)))).calls[0]
    gap = _add_framing(call, [], 0)[-1]
    assert gap.kind == "gap" and gap.label.startswith("estimate gap")
    assert gap.tokens == 10 - call.prompt_estimated
    assert "this model's own tokenizer, with estimates where it cannot count exactly" in gap.text
    assert "not this model's own tokenizer" not in gap.text


def test_a_call_with_long_ordinary_text_stays_exact(tmp_path: Path, corpora: dict[str, str]) -> None:
    text = corpora["code"]
    call = load_run(str(_write(tmp_path / "run.jsonl", text))).calls[0]
    assert call.history_tokens == 3 + tiktoken_count("o200k_base", "user") + tiktoken_count("o200k_base", text)
    assert call.exact is True


# --- the dashboard -----------------------------------------------------------------------------------------------

async def test_quitting_while_a_huge_message_is_counted_ends_the_reading_thread(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tester's 50 MB message kept the dashboard ~60 s after q: the app's exit waits for its reading thread,
    which was inside one tiktoken call.  Here tiktoken's time is modelled by tickets: each 64 Ki characters it is
    given need one ticket, which the test hands out.  After q, two tickets are enough for the thread to end: the
    slice being counted finishes and the count stops before the next one (counted whole, the message would need
    40)."""
    from ctxwatch.ui.app import CtxwatchApp

    text = _run("random lowercase", 40 * 65_536)  # all slices differ: none is answered from the cache
    log = _write(tmp_path / "huge.jsonl", text)
    enc = raw("o200k_base")
    real = enc.encode_ordinary
    entered = threading.Event()
    tickets = threading.Semaphore(0)

    def metered(s: str) -> list[int]:
        if len(s) > 10_000:  # (the huge message, whole or sliced; short texts go through)
            entered.set()
            for _ in range(-(-len(s) // 65_536)):
                if not tickets.acquire(timeout=60):
                    raise RuntimeError("no ticket")
        return real(s)

    monkeypatch.setattr(enc, "encode_ordinary", metered)
    app = CtxwatchApp(str(log))
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            for _ in range(400):
                if entered.is_set():
                    break
                await pilot.pause(0.05)
            assert entered.is_set(), "the message was never counted"
            await pilot.press("q")
            await pilot.pause()
            assert not app.is_running
        assert app._stop.is_set()
        tickets.release(2)
        assert app.feed is not None and app.feed.done.wait(20.0), "the reading thread did not end"
        assert not app.calls  # (stopped before the call was accounted)
    finally:
        tickets.release(1_000)  # (whatever happened, the thread must not stay blocked)
