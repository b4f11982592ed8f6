"""Every registered log format has a sample that detects as it and reads into calls with the provider's usage.

The registry discovers reader modules (a new format is one reader file), so this test is what asks a new format
for its sample: a format with no entry in :data:`SAMPLES` fails here.  The expected usage of each sample's first
call is read from the file with plain ``json`` by the provider's documented rule, never by calling ctxwatch's
readers; the calls are read with the format's own reader.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ctxwatch.formats import detect, formats, get_format
from ctxwatch.formats._registry import reader_modules
from ctxwatch.model import Issue, ParsedCall
from ctxwatch.source import iter_records, read_document

ROOT = Path(__file__).resolve().parent.parent
SAMPLES_DIR = ROOT / "sample_logs"

#: ``(prompt tokens, output tokens)`` of a call as the provider reports them; ``None`` when the log has none.
Expected = tuple[int, int] | None


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _doc(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _anthropic(u: dict[str, Any]) -> int:
    """Anthropic's prompt: input_tokens is the uncached input; the cache reads and writes are added."""
    return u["input_tokens"] + u.get("cache_creation_input_tokens", 0) + u.get("cache_read_input_tokens", 0)


def _canonical(path: Path) -> Expected:
    u = _lines(path)[0]["response"]["usage"]
    return u["prompt_tokens"], u["completion_tokens"]  # (OpenAI: prompt_tokens is the whole prompt)


def _claude_code(path: Path) -> Expected:
    """The first (message.id, requestId): its lines repeat the usage; the largest output_tokens is the final one."""
    lines = [v for v in _lines(path) if v.get("type") == "assistant"]
    first = (lines[0]["message"]["id"], lines[0]["requestId"])
    usages = [v["message"]["usage"] for v in lines if (v["message"]["id"], v["requestId"]) == first]
    u = max(reversed(usages), key=lambda u: u["output_tokens"])
    return _anthropic(u), u["output_tokens"]


def _codex(path: Path) -> Expected:
    """The first token_count that reports a call: its last_token_usage (input_tokens holds the cached ones)."""
    for v in _lines(path):
        p = v["payload"]
        if v["type"] == "event_msg" and p["type"] == "token_count" and p["info"]:
            u = p["info"]["last_token_usage"]
            if u["input_tokens"] or u["output_tokens"]:
                return u["input_tokens"], u["output_tokens"]
    raise AssertionError("no token_count")


def _claude_trace(path: Path) -> Expected:
    """A JSON body's usage, or a stream's: message_start for the prompt, the last message_delta's output."""
    rs = _lines(path)[0]["response"]
    if rs.get("body"):
        u = rs["body"]["usage"]
        return _anthropic(u), u["output_tokens"]
    events = [json.loads(x[5:]) for x in rs["body_raw"].split("\n") if x.startswith("data:")]
    start = next(e for e in events if e["type"] == "message_start")["message"]["usage"]
    out = [e["usage"]["output_tokens"] for e in events if e["type"] == "message_delta"][-1]
    return _anthropic(start), out


def _gemini(path: Path) -> Expected:
    """promptTokenCount holds the cached tokens; thoughts are counted apart from the candidates."""
    m = _lines(path)[0]["usageMetadata"]
    return m["promptTokenCount"], m["candidatesTokenCount"] + m.get("thoughtsTokenCount", 0)


def _gemini_tokens(t: dict[str, Any]) -> Expected:
    return t["input"], t["output"] + t["thoughts"]


def _gemini_cli(path: Path) -> Expected:
    """The first gemini message with tokens, as its last copy (a message is written again when it changes)."""
    msgs = [v for v in _lines(path) if v.get("type") == "gemini" and v.get("tokens")]
    first = msgs[0]["id"]
    return _gemini_tokens([m for m in msgs if m["id"] == first][-1]["tokens"])


def _gemini_cli_json(path: Path) -> Expected:
    return _gemini_tokens(next(m for m in _doc(path)["messages"] if m["type"] == "gemini")["tokens"])


def _openai_batch(path: Path) -> Expected:
    u = _lines(path)[0]["response"]["body"]["usage"]
    return u["prompt_tokens"], u["completion_tokens"]


def _anthropic_batch(path: Path) -> Expected:
    u = next(v for v in _lines(path) if v["result"]["type"] == "succeeded")["result"]["message"]["usage"]
    return _anthropic(u), u["output_tokens"]


def _inspect(path: Path) -> Expected:
    """An OpenAI model's ModelUsage without cache fields: input_tokens is the prompt."""
    e = next(e for s in _doc(path)["samples"] for e in s["events"] if e["event"] == "model")
    u = e["output"]["usage"]
    return u["input_tokens"], u["output_tokens"]


def _openhands(path: Path) -> Expected:
    """LiteLLM's usage: prompt_tokens is the whole prompt, the cache writes included."""
    mr = next(e["tool_call_metadata"]["model_response"] for e in _doc(path)
              if (e.get("tool_call_metadata") or {}).get("model_response"))
    return mr["usage"]["prompt_tokens"], mr["usage"]["completion_tokens"]


def _openhands_eval(path: Path) -> Expected:
    tu = _lines(path)[0]["metrics"]["token_usages"][0]
    return tu["prompt_tokens"], tu["completion_tokens"]


def _swe_agent(path: Path) -> Expected:
    """A .traj logs no usage per call (only the run's cumulative model_stats)."""
    assert "model_stats" in _doc(path)["info"]
    return None


def _cline(path: Path) -> Expected:
    """tokensIn is the uncached input (Anthropic's convention): the cache writes and reads are added."""
    d = json.loads(next(e for e in _doc(path) if e.get("say") == "api_req_started")["text"])
    return d["tokensIn"] + d["cacheWrites"] + d["cacheReads"], d["tokensOut"]


def _otel(path: Path) -> Expected:
    """The first chat span of the first export request (OTLP/JSON: intValue is a string); input_tokens is the
    whole prompt (the GenAI conventions include the cache in it)."""
    span = _lines(path)[0]["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    attrs = {a["key"]: a["value"] for a in span["attributes"]}
    return (int(attrs["gen_ai.usage.input_tokens"]["intValue"]), int(attrs["gen_ai.usage.output_tokens"]["intValue"]))


#: Each registered format's sample (relative to ``sample_logs/``) and the usage of its first call, read by hand.
SAMPLES: dict[str, tuple[str, Callable[[Path], Expected]]] = {
    "anthropic-batch": ("anthropic-batch/results.jsonl", _anthropic_batch),
    "canonical": ("openai_chat_demo.jsonl", _canonical),
    "claude-code": ("claude_code_session.jsonl", _claude_code),
    "claude-trace": ("claude_trace.jsonl", _claude_trace),
    "cline": ("documents/cline_ui_messages.json", _cline),
    "codex": ("codex_rollout.jsonl", _codex),
    "gemini": ("gemini_usage.jsonl", _gemini),
    "gemini-cli": ("gemini_cli_session.jsonl", _gemini_cli),
    "gemini-cli-json": ("documents/gemini_cli_session.json", _gemini_cli_json),
    "inspect-ai": ("documents/inspect_eval.json", _inspect),
    "openai-batch": ("openai-batch/batch_output.jsonl", _openai_batch),
    "openhands": ("documents/openhands_trajectory.json", _openhands),
    "openhands-eval": ("documents/openhands_eval_output.jsonl", _openhands_eval),
    "otel": ("otel_collector.jsonl", _otel),
    "swe-agent": ("documents/swe_agent.traj", _swe_agent),
}


def read_calls(name: str, path: Path) -> list[ParsedCall]:
    """The calls of ``path`` read with format ``name``'s reader, a call given again under its key replacing the
    earlier one (as a run takes it), in the order first given."""
    spec = get_format(name)
    reader = spec.reader(str(path))
    outs: list[Any] = []
    if spec.document:
        value, issue = read_document(str(path))
        assert issue is None, issue
        outs += reader.feed_document(value)
    else:
        for rec in iter_records(str(path), skip=reader.skip):
            if not isinstance(rec, Issue):
                outs += reader.feed(rec)
    outs += reader.finish()
    calls: dict[Any, ParsedCall] = {}
    for n, o in enumerate(outs):
        if isinstance(o, ParsedCall):
            calls[o.key if o.key is not None else ("unkeyed", n)] = o
    return list(calls.values())


@pytest.mark.parametrize("name", sorted(formats()))
def test_every_registered_format_has_a_sample_read_with_its_usage(name: str) -> None:
    assert name in SAMPLES, f"format {name!r} has no sample: add one to sample_logs/ and to SAMPLES here"
    rel, expected = SAMPLES[name]
    path = SAMPLES_DIR / rel
    spec = detect(str(path))
    assert spec is not None and spec.name == name, (rel, spec and spec.name)
    calls = read_calls(name, path)
    assert calls, rel
    u = calls[0].usage
    want = expected(path)
    if want is None:
        assert u is None
    else:
        assert u is not None, rel
        assert (u.prompt_total, u.output) == want, rel


def test_samples_name_only_registered_formats() -> None:
    assert set(SAMPLES) <= set(formats())


def test_the_independence_contract_lists_every_reader_module() -> None:
    """The import contract that keeps readers from importing each other names them one by one (import-linter has
    no "every module but"): a new reader module must be added to it, in pyproject.toml."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    independence = next(c for c in contracts if c["type"] == "independence" and "Format readers" in c["name"])
    assert sorted(independence["modules"]) == reader_modules()


@pytest.mark.parametrize("first_bytes", [60_000, 70_000, 200_000])
def test_a_long_first_line_that_is_no_record_does_not_hide_the_records_after_it(tmp_path: Path,
                                                                                first_bytes: int) -> None:
    """A banner or damaged write as the first line, shorter or longer than the bytes detection reads at once
    (64 KiB): the format is told from the lines after it, whose calls are all read, and the line is one issue."""
    from click.testing import CliRunner

    from ctxwatch.cli import main

    demo = Path(__file__).resolve().parents[1] / "sample_logs" / "openai_chat_demo.jsonl"
    records = demo.read_bytes().splitlines(keepends=True)[:3]
    log = tmp_path / "banner.jsonl"
    log.write_bytes(b"x" * first_bytes + b"\n" + b"".join(records))
    spec = detect(str(log))
    assert spec is not None and spec.name == "canonical"
    res = CliRunner().invoke(main, ["report", "--json", "--no-cache", str(log)])
    out = json.loads(res.output)
    expected = [json.loads(r)["response"]["usage"]["prompt_tokens"] for r in records]
    assert [c["prompt_tokens_reported"] for c in out["calls"]] == expected
    assert [(i["kind"], i["line"]) for i in out["issues"]] == [("invalid_json", 1)]


def test_one_whole_object_without_newline_is_no_log_being_written(tmp_path: Path) -> None:
    """A single complete JSON value with no final newline that no format reads (a settings file) is a file of
    unknown format, in a folder a skipped file; a single line cut short is a log whose first record is being
    written (a truncated tail)."""
    from click.testing import CliRunner

    from ctxwatch.cli import main

    settings = tmp_path / "folder" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(b'{"theme":"dark"}')
    res = CliRunner().invoke(main, ["report", "--json", "--no-cache", str(settings)])
    assert res.exit_code == 2 and f"{settings}: format not recognised" in res.output
    demo = Path(__file__).resolve().parents[1] / "sample_logs" / "openai_chat_demo.jsonl"
    (settings.parent / "calls.jsonl").write_bytes(b"".join(demo.read_bytes().splitlines(keepends=True)[:3]))
    res = CliRunner().invoke(main, ["check", "--json", "--no-cache", str(settings.parent)])
    out = json.loads(res.output)
    assert [(i["kind"], Path(i["file"]).name) for i in out["notes"]] == [("skipped_file", "settings.json")]
    assert not [f for f in out["flags"] if f.get("kind") in ("invalid_json", "truncated_tail")]
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(b'{"request": {"model": "gpt-4o", "mess')
    res = CliRunner().invoke(main, ["report", "--json", "--no-cache", str(cut)])
    assert [i["kind"] for i in json.loads(res.output)["issues"]] == ["truncated_tail"]


def test_detection_decodes_only_lines_that_can_start_a_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pretty-printed JSON file (a package manifest, say) in a folder given to ``report``: its head's lines that
    cannot start a record (``"name": "x",``) are not decoded one by one (each a failed parse: a folder of such
    files took seconds per thousand), and the file is still read as the document it is."""
    from ctxwatch.formats import _sniffing

    doc = {"name": "pkg", "items": [{"k": i, "v": "x" * 20} for i in range(2000)]}
    path = tmp_path / "package.json"
    path.write_text(json.dumps(doc, indent=2))
    lines = path.read_bytes()[:_sniffing.SNIFF_BYTES].split(b"\n")
    can_start = sum(1 for ln in lines if ln.lstrip()[:1] in (b"{", b"["))
    decoded: list[int] = []
    real = _sniffing.decode_line

    def spy(data: bytes, p: str, line: int, **kw):  # type: ignore[no-untyped-def]
        decoded.append(line)
        return real(data, p, line, **kw)

    monkeypatch.setattr(_sniffing, "decode_line", spy)
    sn = _sniffing.sniff_file(str(path))
    assert len(decoded) <= can_start < len(lines) // 2
    assert sn.document == doc


def test_one_pretty_printed_record_is_told_how_to_write_it_on_one_line(tmp_path: Path) -> None:
    """A canonical record written with ``json.dump(record, indent=2)``: exit 2 naming its format and the jq
    command that puts it on one line (it said only "format not recognised"); an indented object no format
    reads is still "format not recognised"; the record on one line reads as its call."""
    from click.testing import CliRunner

    from ctxwatch.cli import main

    demo = Path(__file__).resolve().parents[1] / "sample_logs" / "openai_chat_demo.jsonl"
    record = json.loads(demo.read_bytes().splitlines()[0])
    pretty = tmp_path / "record.json"
    pretty.write_text(json.dumps(record, indent=2))
    res = CliRunner().invoke(main, ["report", "--no-cache", str(pretty)])
    assert res.exit_code == 2
    assert f"{pretty}: one canonical record written over several lines (pretty-printed)" in res.output
    assert "jq -c . FILE > FILE.jsonl" in res.output
    other = tmp_path / "settings.json"
    other.write_text(json.dumps({"theme": "dark", "sizes": [1, 2]}, indent=2))
    res = CliRunner().invoke(main, ["report", "--no-cache", str(other)])
    assert res.exit_code == 2 and "format not recognised" in res.output
    line = tmp_path / "record.jsonl"
    line.write_text(json.dumps(record) + "\n")
    doc = json.loads(CliRunner().invoke(main, ["report", "--json", "--no-cache", str(line)]).output)
    assert [c["prompt_tokens_reported"] for c in doc["calls"]] == [record["response"]["usage"]["prompt_tokens"]]


def test_a_format_is_named_in_any_case() -> None:
    """``--format CLAUDE-CODE`` and ``--format Claude`` (an alias) name the claude-code reader, as the lower-case
    names do; an unknown name is still refused with the known names."""
    assert get_format("CLAUDE-CODE") is get_format("claude-code")
    assert get_format(" Claude ") is get_format("claude-code")  # (an alias, spaces around it)
    assert get_format("OpenAI-Batch").name == "openai-batch"
    with pytest.raises(KeyError, match=r"unknown format 'Nope'; known: .*claude-code"):
        get_format("Nope")
