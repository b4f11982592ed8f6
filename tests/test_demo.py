"""The synthetic demo run: deterministic, honest usage, the story it promises, and ``ctxwatch demo --write``.

Expected values are computed here, independently of :mod:`ctxwatch.demo` and :mod:`ctxwatch.accounting`: token
counts with tiktoken's ``o200k_base`` (through :func:`ctxwatch.tokens.get_tokenizer`, which is tiktoken itself)
and the framing rules written out below; story properties from the records' own text.
"""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ctxwatch.cli import main
from ctxwatch.demo import DEMO_WINDOW, generate_run, write_run
from ctxwatch.tokens import get_tokenizer

KEYS = {"action", "file", "reason"}


@pytest.fixture(scope="module")
def run60() -> list[dict[str, Any]]:
    """The default run (60 calls, seed 7, 32,000-token window)."""
    return list(generate_run())


# --- an independent count --------------------------------------------------------------------------

def independent_prompt_tokens(request: dict[str, Any]) -> int:
    """Prompt tokens of an OpenAI chat request, counted here with o200k_base.

    Rules (OpenAI cookbook "How to count tokens with tiktoken", and the o200k framing checked on real batch
    logs, see DEVELOPERS.md): 4 tokens per message + its content; a tool call adds its name, its JSON
    arguments and 3 wrapper tokens; a tool result adds 1 + half the tokens of its call id; the tools payload
    is each schema as compact JSON + 12 + 7 per tool (cookbook ``num_tokens_for_tools``); 3 for the reply primer.
    """
    enc = get_tokenizer("o200k_base")
    assert enc.name == "o200k_base"
    n = 0
    for m in request["messages"]:
        n += 4 + enc.count(m.get("content") or "")
        for tc in m.get("tool_calls") or []:
            n += enc.count(tc["function"]["name"]) + enc.count(tc["function"]["arguments"]) + 3
        if m["role"] == "tool":
            n += 1 + enc.count(m["tool_call_id"]) // 2
    tools = request.get("tools") or []
    if tools:
        n += sum(enc.count(json.dumps(t, separators=(",", ":"), ensure_ascii=False)) for t in tools)
        n += 12 + 7 * len(tools)
    return n + 3


def reply_text(rec: dict[str, Any]) -> str | None:
    resp = rec["response"]
    if "choices" not in resp:
        return None
    return resp["choices"][0]["message"]["content"]


def parsed(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None


def has_system(rec: dict[str, Any]) -> bool:
    return any(m["role"] == "system" for m in rec["request"]["messages"])


# --- tests ---------------------------------------------------------------------------------------------

def test_generate_run_is_deterministic_for_a_seed() -> None:
    a = list(generate_run(20, seed=3, window=8000))
    b = list(generate_run(20, seed=3, window=8000))
    c = list(generate_run(20, seed=4, window=8000))
    assert a == b
    assert json.dumps(a) == json.dumps(b)
    assert a != c
    assert len(a) == 20


def test_default_run_shape(run60: list[dict[str, Any]]) -> None:
    assert len(run60) == 60
    for rec in run60:
        assert set(rec) >= {"timestamp", "session", "window", "request", "response"}
        assert rec["window"] == DEMO_WINDOW
        req = rec["request"]
        assert req["model"] == "gpt-4o"
        assert len(req["tools"]) == 12
        assert req["max_tokens"] == DEMO_WINDOW // 16
    first = run60[0]["request"]["messages"]
    assert first[0]["role"] == "system" and '"action"' in first[0]["content"]
    # Later requests carry assistant tool calls with JSON arguments and tool results.
    msgs = run60[10]["request"]["messages"]
    calls = [tc for m in msgs for tc in m.get("tool_calls") or []]
    assert calls and all(isinstance(json.loads(tc["function"]["arguments"]), dict) for tc in calls)
    assert any(m["role"] == "tool" and len(m["content"]) > 200 for m in msgs)
    # Timestamps increase.
    ts = [r["timestamp"] for r in run60]
    assert ts == sorted(ts)


@pytest.mark.parametrize("index", [0, 7, 45])
def test_reported_usage_equals_an_independent_count(run60: list[dict[str, Any]], index: int) -> None:
    rec = run60[index]
    usage = rec["response"]["usage"]
    assert usage["prompt_tokens"] == independent_prompt_tokens(rec["request"])
    enc = get_tokenizer("o200k_base")
    msg = rec["response"]["choices"][0]["message"]
    completion = enc.count(msg["content"] or "") + sum(
        enc.count(tc["function"]["name"]) + enc.count(tc["function"]["arguments"]) + 3 for tc in msg["tool_calls"])
    assert usage["completion_tokens"] == completion
    assert usage["total_tokens"] == usage["prompt_tokens"] + completion
    cached = usage["prompt_tokens_details"]["cached_tokens"]
    assert cached % 128 == 0 and cached <= usage["prompt_tokens"]


def test_the_story(run60: list[dict[str, Any]]) -> None:
    window = DEMO_WINDOW
    trigger = 0.8 * 0.6 * window  # Settings defaults: trigger 0.8 of a 0.6 budget
    budget = 0.6 * window
    prompts = [r["response"]["usage"]["prompt_tokens"] if "usage" in r["response"] else None for r in run60]

    # The system prompt is there, then gone from some call on, for good.
    assert has_system(run60[0])
    evicted = next(i for i, r in enumerate(run60) if not has_system(r))
    assert all(not has_system(r) for r in run60[evicted:])
    assert 10 < evicted < 55

    # Growth first: no compaction (the prompt only grows) until the client has to truncate.
    assert all(b > a for a, b in itertools.pairwise(prompts[:evicted]))
    # The trigger and the budget are crossed before the system prompt disappears.
    crossed = next(i for i, p in enumerate(prompts) if p is not None and p > trigger)
    over = next(i for i, p in enumerate(prompts) if p is not None and p > budget)
    assert crossed < over < evicted
    assert evicted - crossed >= 10  # plenty of warning

    # Every request the API answered fits: prompt + max_tokens <= window.
    for rec, p in zip(run60, prompts, strict=True):
        if p is not None:
            assert p + rec["request"]["max_tokens"] <= window

    # JSON replies: all valid with every key while the system prompt is there ...
    texts = [reply_text(r) for r in run60]
    for t in texts[:evicted]:
        obj = parsed(t)
        assert isinstance(obj, dict) and set(obj) == KEYS, t
    # ... then missing keys, then invalid JSON, then prose.
    after = [t for t in texts[evicted:] if t is not None]
    missing = [i for i, t in enumerate(after) if isinstance(parsed(t), dict) and set(parsed(t)) < KEYS]
    invalid = [i for i, t in enumerate(after) if parsed(t) is None and "{" in t]
    prose = [i for i, t in enumerate(after) if "{" not in t]
    assert missing and invalid and prose
    assert min(missing) < min(invalid) < min(prose)

    # The last call overflows: the API refuses it.
    last = run60[-1]["response"]
    assert last["error"]["code"] == "context_length_exceeded"
    assert "usage" not in last
    assert independent_prompt_tokens(run60[-1]["request"]) + run60[-1]["request"]["max_tokens"] > window
    assert all("error" not in r["response"] for r in run60[:-1])


def test_short_runs_still_work() -> None:
    for n in (1, 2, 5, 11, 12):
        recs = list(generate_run(n, window=4096))
        assert len(recs) == n
    with pytest.raises(ValueError):
        list(generate_run(0))


def test_demo_write_cli_writes_n_lines(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    res = CliRunner().invoke(main, ["demo", "--write", str(out), "--calls", "9"])
    assert res.exit_code == 0, res.output
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 9
    assert all({"request", "response"} <= set(json.loads(line)) for line in lines)
    # Same as the library with the same defaults.
    assert [json.loads(line) for line in lines] == list(generate_run(9))
    assert f"wrote 9 calls to {out}" in res.output
    one = CliRunner().invoke(main, ["demo", "--write", str(tmp_path / "one.jsonl"), "--calls", "1"])
    assert f"wrote 1 call to {tmp_path / 'one.jsonl'}" in one.output  # (one call, not "1 calls")


def test_write_run_paced_uses_wall_clock_and_can_stop(tmp_path: Path) -> None:
    import threading

    out = tmp_path / "paced.jsonl"
    t0 = int(time.time())  # (timestamps keep milliseconds: compare to the second)
    n = write_run(out, 4, speed=200.0, window=4096)
    t1 = time.time()
    assert n == 4
    recs = [json.loads(x) for x in out.read_text().splitlines()]
    from datetime import datetime

    # Paced, each record is stamped with the wall-clock time it is written, not the synthetic timeline.
    stamps = [datetime.fromisoformat(r["timestamp"].replace("Z", "+00:00")).timestamp() for r in recs]
    assert t0 <= stamps[0] <= stamps[-1] <= t1 and stamps == sorted(stamps)
    stop = threading.Event()
    stop.set()
    assert write_run(out, 4, speed=1.0, stop=stop, exclusive=False) == 0
    assert out.read_text() == ""


def test_demo_flags_fire_before_the_overflow(tmp_path: Path) -> None:
    """The flags the README promises for the demo, each before the first overflowing call."""
    from ctxwatch.analysis import analysis_json
    from ctxwatch.engine import load_run

    path = tmp_path / "demo.jsonl"
    write_run(path)
    recs = [json.loads(x) for x in path.read_text().splitlines()]
    overflow = next(i for i, r in enumerate(recs) if "error" in r["response"])
    evicted = next(i for i, r in enumerate(recs) if not has_system(r))

    doc = analysis_json(load_run(str(path)))
    first: dict[str, int] = {}
    for f in doc["flags"]:
        first.setdefault(f["kind"], f["call"])
    for kind in ("trigger_no_compaction", "over_budget", "window_forecast", "system_prompt_evicted", "format_drift"):
        assert kind in first, (kind, doc["flags"])
        assert first[kind] < overflow, (kind, first[kind], overflow)
    assert first["system_prompt_evicted"] == evicted
    assert first["trigger_no_compaction"] < first["system_prompt_evicted"] < first["format_drift"]
    # The overflow itself is flagged too.
    assert first.get("reserve_breached") == overflow


@pytest.mark.parametrize(("calls", "window"), [(12, 2048), (30, 16_000), (100, 4096)])
def test_story_holds_for_other_sizes(calls: int, window: int) -> None:
    """Short runs, big windows, and more calls than the window has room for: same order of events."""
    recs = list(generate_run(calls, seed=1, window=window))
    assert len(recs) == calls
    for r in recs[:-1]:
        assert r["response"]["usage"]["prompt_tokens"] + r["request"]["max_tokens"] <= window
    assert recs[-1]["response"]["error"]["code"] == "context_length_exceeded"
    evicted = next(i for i, r in enumerate(recs) if not has_system(r))
    crossed = next(i for i, r in enumerate(recs) if r["response"]["usage"]["prompt_tokens"] > 0.48 * window)
    assert crossed < evicted < calls - 1
    texts = [reply_text(r) for r in recs[:-1]]
    assert all(isinstance(parsed(t), dict) and set(parsed(t)) == KEYS for t in texts[:evicted])
    assert any("{" not in t for t in texts[evicted:])  # prose by the end


def test_demo_write_makes_only_a_new_file_and_never_follows_a_symlink(tmp_path: Path) -> None:
    """``demo --write`` on an existing file (a real log, say) refuses with exit 2 and leaves it as it was; on a
    dangling symbolic link it refuses and creates nothing where the link points."""
    log = tmp_path / "real.jsonl"
    log.write_text('{"keep": 1}\n')
    res = CliRunner().invoke(main, ["demo", "--write", str(log), "--calls", "3"])
    assert res.exit_code == 2 and "already exists" in res.output
    assert log.read_text() == '{"keep": 1}\n'
    link = tmp_path / "link.jsonl"
    link.symlink_to(tmp_path / "target.jsonl")
    res = CliRunner().invoke(main, ["demo", "--write", str(link), "--calls", "3"])
    assert res.exit_code == 2 and not (tmp_path / "target.jsonl").exists()
    fresh = tmp_path / "new.jsonl"
    assert CliRunner().invoke(main, ["demo", "--write", str(fresh), "--calls", "3"]).exit_code == 0
    assert len(fresh.read_text().splitlines()) == 3


def test_demo_write_dash_writes_the_run_to_standard_output(tmp_path: Path) -> None:
    """``demo --write -`` is standard output, as ``-`` is everywhere (it made a file named ``-``): the same
    bytes as the run written to a file, and no file."""
    file = tmp_path / "run.jsonl"
    assert CliRunner().invoke(main, ["demo", "--write", str(file), "--calls", "5"]).exit_code == 0
    res = CliRunner().invoke(main, ["demo", "--write", "-", "--calls", "5"])
    assert res.exit_code == 0 and res.stdout_bytes == file.read_bytes()
    assert not Path("-").exists()
