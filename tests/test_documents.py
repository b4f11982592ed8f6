"""Inspect AI, OpenHands, SWE-agent and Cline documents: call counts, per-call usage, cumulative totals.

Expected values are read with plain ``json`` / ``zipfile`` in each test, or worked by hand.
"""

from __future__ import annotations

import base64
import json
import shutil
import struct
import zipfile
from pathlib import Path

import pytest

from ctxwatch.formats import (
    ClineReader,
    InspectReader,
    OpenHandsEvalReader,
    OpenHandsReader,
    SweAgentReader,
    detect,
    inspect_usage,
    litellm_usage,
)
from ctxwatch.model import Issue, ParsedCall
from ctxwatch.source import iter_records

RR = "request-response"
INSPECT_JSON = f"{RR}/inspect-ai/2024-11-05T13-31-45-05-00_input-task.json"
INSPECT_EVAL = f"{RR}/inspect-ai/2024-11-05T13-32-37-05-00_input-task.eval"
OH_TRAJ = f"{RR}/openhands/basic_trajectory.json"
OH_EVAL = f"{RR}/openhands/multi_swe_bench_output_line1.jsonl"
SWE = f"{RR}/swe-agent/pydicom__pydicom-1458.traj"
SWE_DEMO = f"{RR}/swe-agent/function_calling_simple.traj"
CLINE = "other/cline/task_sample_ui_messages_first106.json"


def _split(outs) -> tuple[list[ParsedCall], list[Issue]]:
    outs = list(outs)
    return [o for o in outs if isinstance(o, ParsedCall)], [o for o in outs if isinstance(o, Issue)]


def _model_events(sample: dict) -> list[dict]:
    return [e for e in sample["events"] if e["event"] == "model"]


# --- Inspect AI --------------------------------------------------------------------------------------

def test_inspect_json(shared_logs: Path) -> None:
    path = shared_logs / INSPECT_JSON
    doc = json.loads(path.read_text())
    events = [(s, e) for s in doc["samples"] for e in _model_events(s)]
    calls, issues = _split(InspectReader(str(path)).feed_document(doc))
    assert issues == []
    assert len(calls) == len(events) == 2
    for c, (s, e) in zip(calls, events, strict=True):
        u = e["output"]["usage"]
        assert c.usage.prompt_total == u["input_tokens"]
        assert c.usage.output == u["output_tokens"]
        # the raw provider payload agrees (an OpenAI model: prompt_tokens is the whole prompt)
        assert c.usage.prompt_total == e["call"]["response"]["usage"]["prompt_tokens"]
        assert c.model == e["output"]["model"] and c.provider == "openai"
        texts = [m.text() for m in c.messages]
        assert not any("attachment://" in t for t in texts)
        first = e["input"][0]["content"]
        assert texts[0] == s["attachments"][first.removeprefix("attachment://")]
        assert c.system == [] and c.tools == []
    assert [c.context for c in calls] == ["main", "scorer:model_graded_fact"]  # by hand from the step events
    assert sum(c.usage.prompt_total for c in calls) == doc["stats"]["model_usage"]["openai/gpt-4o-mini"]["input_tokens"]
    assert detect(str(path)).name == "inspect-ai"


def test_inspect_eval_zip(shared_logs: Path) -> None:
    path = shared_logs / INSPECT_EVAL
    with zipfile.ZipFile(path) as zf:
        samples = [json.loads(zf.read(n)) for n in zf.namelist() if n.startswith("samples/")]
    events = [e for s in samples for e in _model_events(s)]
    # the run pipeline hands the path itself to feed_document for a .eval (ctxwatch/engine/run.py)
    calls, issues = _split(InspectReader(str(path)).feed_document(str(path)))
    assert issues == []
    assert len(calls) == len(events) == 2
    assert [c.usage.prompt_total for c in calls] == [e["output"]["usage"]["input_tokens"] for e in events]
    assert [c.usage.output for c in calls] == [e["output"]["usage"]["output_tokens"] for e in events]
    assert all(c.provenance.details["member"].startswith("samples/") for c in calls)
    assert detect(str(path)).name == "inspect-ai"
    assert len({c.key for c in calls}) == 2


def test_inspect_usage_conventions_by_hand() -> None:
    # Anthropic provider: input_tokens uncached; total = input + cache write + cache read + output
    u = inspect_usage({"input_tokens": 10, "input_tokens_cache_write": 500, "input_tokens_cache_read": 2000,
                       "output_tokens": 30, "total_tokens": 2540}, "anthropic")
    assert (u.prompt_total, u.input_uncached, u.cache_read, u.cache_write, u.output) == (2510, 10, 2000, 500, 30)
    # OpenAI provider: input_tokens is prompt_tokens (cached inside); total = input + output
    u = inspect_usage({"input_tokens": 2510, "input_tokens_cache_read": 2000, "output_tokens": 30,
                       "reasoning_tokens": 20, "total_tokens": 2540}, "openai")
    assert (u.prompt_total, u.input_uncached, u.output, u.reasoning) == (2510, 510, 30, 20)
    # recent Google provider: input = prompt - cached, thoughts apart from output
    u = inspect_usage({"input_tokens": 510, "input_tokens_cache_read": 2000, "output_tokens": 30,
                       "reasoning_tokens": 100, "total_tokens": 2640}, "google")
    assert (u.prompt_total, u.output, u.reasoning) == (2510, 130, 100)
    # no total to tell: the provider's convention decides
    u = inspect_usage({"input_tokens": 10, "input_tokens_cache_read": 90, "output_tokens": 1}, "anthropic")
    assert u.prompt_total == 100
    u = inspect_usage({"input_tokens": 100, "input_tokens_cache_read": 90, "output_tokens": 1}, "openai")
    assert u.prompt_total == 100
    assert inspect_usage(None, "openai") is None and inspect_usage({}, None) is None


def test_inspect_images_and_tools(tmp_path: Path) -> None:
    ihdr = struct.pack(">IIBBBBB", 800, 600, 8, 2, 0, 0, 0)
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + ihdr + b"\0" * 50000).decode()
    event = {"event": "model", "model": "anthropic/claude-sonnet-4-5", "timestamp": "2025-01-01T00:00:00+00:00",
             "input": [{"role": "system", "content": "sys"},
                       {"role": "user", "content": [{"type": "text", "text": "what is this"},
                                                    {"type": "image", "image": f"data:image/png;base64,{png}"}]},
                       {"role": "assistant", "content": "", "tool_calls": [
                           {"id": "t1", "function": "zoom", "arguments": {"level": 2}, "type": "function"}]},
                       {"role": "tool", "content": "zoomed", "tool_call_id": "t1", "function": "zoom"}],
             "tools": [{"name": "zoom", "description": "Zoom", "parameters": {"type": "object", "properties": {}}}],
             "config": {"max_tokens": 512},
             "output": {"model": "claude-sonnet-4-5-20250929", "choices": [], "usage": {
                 "input_tokens": 3, "input_tokens_cache_write": 1000, "input_tokens_cache_read": 0,
                 "output_tokens": 9, "total_tokens": 1012}}}
    doc = {"eval": {"run_id": "r"}, "samples": [{"id": 1, "epoch": 1, "events": [event], "attachments": {}}]}
    (c,), issues = _split(InspectReader(str(tmp_path / "x.json")).feed_document(doc))
    assert issues == []
    assert c.system == ["sys"] and c.max_output_tokens == 512 and c.provider == "anthropic"
    assert c.tools == [{"type": "function", "function": {"name": "zoom", "description": "Zoom",
                                                         "parameters": {"type": "object", "properties": {}}}}]
    img = c.messages[0].parts[1]
    assert img.kind == "image" and (img.meta["width"], img.meta["height"]) == (800, 600) and img.text == ""
    assert c.messages[1].tool_call_ids() == ["t1"] and c.messages[2].tool_result_ids() == ["t1"]
    assert c.usage.prompt_total == 1003  # 3 + 1000 + 0, by hand


# --- OpenHands ---------------------------------------------------------------------------------------

def test_openhands_trajectory_dedupes_on_response_id(shared_logs: Path) -> None:
    path = shared_logs / OH_TRAJ
    events = json.loads(path.read_text())
    responses: dict[str, dict] = {}
    repeated = 0
    for e in events:
        mr = (e.get("tool_call_metadata") or {}).get("model_response")
        if mr:
            repeated += mr["id"] in responses
            responses.setdefault(mr["id"], mr)
    assert repeated >= 1  # the same response sits on the action and on its observation
    calls, issues = _split(OpenHandsReader(str(path)).feed_document(events))
    assert issues == []
    assert [c.key for c in calls] == list(responses)
    for c in calls:
        u = responses[c.key]["usage"]
        assert c.usage.prompt_total == u["prompt_tokens"]
        assert c.usage.cache_read == u["prompt_tokens_details"]["cached_tokens"]
        assert c.usage.cache_write == u["cache_creation_input_tokens"]
        assert c.usage.output == u["completion_tokens"]
        assert c.provider == "anthropic" and c.history_reported_only
    # by hand: 3486 - 0 - 3482 = 4 and 4646 - 3482 - 1158 = 6 uncached input tokens
    assert [c.usage.input_uncached for c in calls] == [4, 6]
    assert [m.role for m in calls[1].messages] == ["user", "assistant", "tool"]
    assert detect(str(path)).name == "openhands"


def test_litellm_usage_without_cache_writes_in_prompt() -> None:
    # an older LiteLLM: prompt_tokens = input + cache reads only; reads + writes exceed it, so writes are added
    u = litellm_usage({"prompt_tokens": 120, "completion_tokens": 5, "cache_creation_input_tokens": 900,
                       "cache_read_input_tokens": 100})
    assert (u.prompt_total, u.input_uncached, u.cache_read, u.cache_write) == (1020, 20, 100, 900)


def test_openhands_eval_output(shared_logs: Path) -> None:
    path = shared_logs / OH_EVAL
    inst = json.loads(path.read_text().splitlines()[0])
    tus = inst["metrics"]["token_usages"]
    distinct = list(dict.fromkeys(t["response_id"] for t in tus))
    calls: list[ParsedCall] = []
    issues: list[Issue] = []
    reader = OpenHandsEvalReader(str(path))
    for rec in iter_records(str(path)):
        c, i = _split([rec] if isinstance(rec, Issue) else reader.feed(rec))
        calls += c
        issues += i
    assert issues == []
    assert [c.key for c in calls] == distinct and len(calls) == 23
    first = {t["response_id"]: t for t in reversed(tus)}
    for c in calls:
        t = first[c.key]
        assert c.usage.prompt_total == t["prompt_tokens"] and c.usage.output == t["completion_tokens"]
        assert c.usage.cache_read == t["cache_read_tokens"] and c.usage.cache_write == t["cache_write_tokens"]
        assert c.session == inst["instance_id"] and c.source.line == 1
    assert sum(c.usage.prompt_total for c in calls) == inst["metrics"]["accumulated_token_usage"]["prompt_tokens"]
    with_history = [c for c in calls if c.messages is not None]
    assert with_history and with_history[0].system and with_history[0].system[0].startswith("You are OpenHands")
    assert detect(str(path)).name == "openhands-eval"


# --- SWE-agent -----------------------------------------------------------------------------------------

def test_swe_agent_cumulative_only(shared_logs: Path) -> None:
    path = shared_logs / SWE
    doc = json.loads(path.read_text())
    stats = doc["info"]["model_stats"]
    assert stats["tokens_sent"] == 122612 and stats["api_calls"] == 12  # the FORMATS.md §5f figures, verified
    assistants = [i for i, m in enumerate(doc["history"]) if m["role"] == "assistant"]
    calls, issues = _split(SweAgentReader(str(path)).feed_document(doc))
    assert issues == []
    assert len(calls) == len(assistants) == len(doc["trajectory"]) == stats["api_calls"]
    for c, pos in zip(calls, assistants, strict=True):
        assert c.usage is None  # per-call usage is unknown, never guessed
        assert c.provenance.cumulative["tokens_sent"] == 122612
        before = [m for m in doc["history"][:pos] if m["role"] != "system"]
        assert [m.text() for m in c.messages] == [m["content"] for m in before]
        assert c.system == [doc["history"][0]["content"]]
        assert c.tools == []  # a 0.x agent: commands live in the system prompt, no tool schemas are sent
        assert c.response.text == doc["history"][pos]["content"]
    assert detect(str(path)).name == "swe-agent"


def test_unknown_usage_is_null_in_the_session_totals_never_0(shared_logs: Path) -> None:
    """A .traj reports no per-call usage: the session's token sums are unknown (null), not 0."""
    from ctxwatch.engine import load_run
    from ctxwatch.output.report import report_json

    (sess,) = report_json(load_run(str(shared_logs / SWE)))["sessions"]
    assert (sess["calls"], sess["calls_with_usage"]) == (12, 0)
    assert [sess[k] for k in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")] == \
        [None] * 4
    assert sess["cost_usd"] is None
    # ... but the run's own totals are given apart, as info.model_stats states them (read here with json)
    stats = json.loads((shared_logs / SWE).read_text())["info"]["model_stats"]
    assert sess["run_totals"] == {"input_tokens": stats["tokens_sent"], "output_tokens": stats["tokens_received"],
                                  "cost_usd": stats["instance_cost"], "api_calls": stats["api_calls"],
                                  "source": "model_stats"}
    assert (stats["tokens_sent"], stats["tokens_received"], stats["api_calls"]) == (122_612, 1_369, 12)
    # The peak is ctxwatch's own count (no call reports a prompt), and is labelled an estimate, not a report.
    assert sess["peak_prompt_tokens"] is not None and sess["peak_prompt_source"] == "estimated"


def test_swe_agent_demonstration(shared_logs: Path) -> None:
    path = shared_logs / SWE_DEMO
    doc = json.loads(path.read_text())
    n_assist = sum(1 for m in doc["history"] if m["role"] == "assistant")
    calls, issues = _split(SweAgentReader(str(path)).feed_document(doc))
    assert len(calls) == n_assist == 5
    assert [i.kind for i in issues] == ["no_usage"]
    last = calls[-1]
    assert last.tools is None  # a function-calling agent: the schemas were sent but are not in the .traj
    tool_ids = [m["tool_calls"][0]["id"] for m in doc["history"] if m["role"] == "assistant"][:-1]
    assert [i for m in last.messages for i in m.tool_call_ids()] == tool_ids
    assert [i for m in last.messages for i in m.tool_result_ids()] == tool_ids


def test_swe_agent_query_steps(tmp_path: Path) -> None:
    doc = {"trajectory": [
        {"query": [{"role": "system", "content": "S"}, {"role": "user", "content": "U1"}], "response": "R1"},
        {"query": [{"role": "system", "content": "S"}, {"role": "user", "content": "U1"},
                   {"role": "assistant", "content": "R1"}, {"role": "user", "content": "U2"}], "response": "R2"}],
        "history": [], "info": {"model_stats": {"tokens_sent": 50, "tokens_received": 5, "api_calls": 2}},
        "replay_config": json.dumps({"agent": {"model": {"name": "claude-sonnet-4-20250514"}}})}
    calls, issues = _split(SweAgentReader(str(tmp_path / "t.traj")).feed_document(doc))
    assert issues == []
    assert [[m.text() for m in c.messages] for c in calls] == [["U1"], ["U1", "R1", "U2"]]
    assert all(c.provenance.details["messages_from"] == "query" and c.model == "claude-sonnet-4-20250514" for c in
    calls)
    assert calls[0].provider == "anthropic"


def test_swe_agent_step_without_model_call(tmp_path: Path) -> None:
    """SWE-agent 1.x writes ``query: [{}]`` (StepOutput's default, sweagent/types.py) for a step that called no
    model, e.g. the automatic submission after an error: no call, no damage.  model_stats counts 1 API call,
    so 1 call and no call-count mismatch either."""
    doc = {"trajectory": [
        {"query": [{"role": "system", "content": "S"}, {"role": "user", "content": "U1"}], "response": "R1"},
        {"query": [{}], "response": "", "action": "submit", "observation": "autosubmitted"}],
        "history": [], "info": {"model_stats": {"tokens_sent": 20, "tokens_received": 5, "api_calls": 1}},
        "replay_config": json.dumps({"agent": {"model": {"name": "gpt-4o"}}})}
    calls, issues = _split(SweAgentReader(str(tmp_path / "t.traj")).feed_document(doc))
    assert issues == []
    assert [[m.text() for m in c.messages] for c in calls] == [["U1"]]
    assert calls[0].provenance.details["step"] == 0


def test_a_number_beyond_a_double_loses_no_call_of_a_document(tmp_path: Path, shared_logs: Path) -> None:
    """orjson refuses 1e400 (beyond a double's range), and read_document then gave up on the whole file: every
    call of an Inspect log was lost for one bad count.  The document is read (the stdlib reads inf), and the
    count is reported as an implausible value, as on a JSONL line.  The sample has 2 calls (its 2 model events)."""
    from ctxwatch.engine import load_run

    doc = json.loads((shared_logs / INSPECT_JSON).read_text())
    n_models = sum(1 for s in doc["samples"] for e in s["events"] if e.get("event") == "model")
    assert n_models == 2
    first = next(e for s in doc["samples"] for e in s["events"] if e.get("event") == "model")
    first["output"]["usage"]["input_tokens"] = 987654321  # (a placeholder, written as 1e400 below)
    bad = tmp_path / "inspect.json"
    bad.write_text(json.dumps(doc).replace("987654321", "1e400"))
    run = load_run(str(bad))
    assert len(run.calls) == n_models
    assert [i.kind for i in run.issues] == ["implausible_value"]


# --- Cline --------------------------------------------------------------------------------------------

def test_cline_tokens(shared_logs: Path) -> None:
    path = shared_logs / CLINE
    doc = json.loads(path.read_text())
    reqs = [json.loads(e["text"]) for e in doc if e.get("say") == "api_req_started"]
    calls, issues = _split(ClineReader(str(path)).feed_document(doc))
    assert issues == []
    assert len(calls) == len(reqs) == 12
    for c, r in zip(calls, reqs, strict=True):
        assert c.usage.prompt_total == r["tokensIn"] + r["cacheWrites"] + r["cacheReads"]
        assert c.usage.input_uncached == r["tokensIn"]
        assert (c.usage.cache_write, c.usage.cache_read, c.usage.output) == (r["cacheWrites"], r["cacheReads"],
                                                                            r["tokensOut"])
    assert calls[0].usage.prompt_total == 10 + 12954 + 8096  # FORMATS.md §5j, by hand
    assert calls[0].model == "claude-opus-4-6" and calls[0].provider == "anthropic"
    assert detect(str(path)).name == "cline"


# --- odd shapes -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("reader_cls", [InspectReader, OpenHandsReader, SweAgentReader, ClineReader])
@pytest.mark.parametrize("value", [None, [], {}, "text", [1, "x", None], {"samples": "no"}, {"history": [5]},
                                   [{"say": "api_req_started", "text": "{not json"}],
                                   [{"source": "agent", "action": "x", "tool_call_metadata": {"model_response": 3}}],
                                   {"eval": {}, "samples": [{"events": [{"event": "model", "output": 7}]}]}])
def test_odd_documents_never_raise(tmp_path: Path, reader_cls, value) -> None:
    path = tmp_path / "odd.json"
    path.write_text("not a zip")
    outs = list(reader_cls(str(path)).feed_document(value))
    assert all(isinstance(o, ParsedCall | Issue) for o in outs)


def test_odd_eval_lines_never_raise(tmp_path: Path) -> None:
    path = tmp_path / "odd.jsonl"
    rows = [5, {}, {"instance_id": "i", "metrics": {}}, {"instance_id": "i", "metrics": {"token_usages": [3, {}]},
                                                         "history": [7, {"tool_call_metadata": {}}]}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    reader = OpenHandsEvalReader(str(path))
    outs = [o for rec in iter_records(str(path)) for o in ([rec] if isinstance(rec, Issue) else reader.feed(rec))]
    assert [o.kind for o in outs if isinstance(o, Issue)] == ["unknown_record", "unknown_record", "no_usage"]


# --- detection matrix over every real sample -------------------------------------------------------------

#: The format each saved sample is in, for the batch formats, the Gemini readers and the document formats.
OWNED = {
    "anthropic-batch/B-C_requests_first3_concatenated.jsonl": "anthropic-batch",
    "anthropic-batch/anthropic_batch_receipt.json": "anthropic-batch",
    "anthropic-batch/msgbatch_01PGaff3EPbQJbpw6JeWoQR5_results.jsonl": "anthropic-batch",
    "gemini-cli/derived_schema_fixture_agent-sessions_gemini_jsonl_v040.jsonl": "gemini-cli",
    "openai-batch/nfosi_B-B_input_first3.jsonl": "openai-batch",
    "openai-batch/nfosi_batch_67df5faa_output.jsonl": "openai-batch",
    "openai-batch/reviews_batch_output.jsonl": "openai-batch",
    "openai-batch/reviews_batchinput.jsonl": "openai-batch",
    CLINE: "cline",
    "other/gemini-batch/batch_gemini-2.5-pro-exp-03-25.jsonl": "gemini",
    INSPECT_JSON: "inspect-ai",
    OH_TRAJ: "openhands",
    OH_EVAL: "openhands-eval",
    SWE: "swe-agent",
    SWE_DEMO: "swe-agent",
}
MINE = ("openai-batch", "anthropic-batch", "gemini", "gemini-cli", "gemini-cli-json", "inspect-ai", "openhands",
        "openhands-eval", "swe-agent", "cline", "otel")


def test_sniffers_claim_their_samples_and_no_others(shared_logs: Path) -> None:
    from ctxwatch.formats import formats, sniff_file

    specs = formats()
    files = [p for p in sorted(shared_logs.rglob("*")) if p.is_file() and p.suffix in (".jsonl", ".json", ".traj")]
    assert len(files) >= len(OWNED)
    for p in files:
        rel = p.relative_to(shared_logs).as_posix()
        sn = sniff_file(str(p))
        scores = {name: specs[name].sniff(sn) for name in MINE}
        want = OWNED.get(rel)
        for name, score in scores.items():
            if name == want:
                assert score >= 0.9, (rel, name, score)
            else:
                assert score < 0.3, (rel, name, score)


@pytest.mark.parametrize("rel", [CLINE, OH_TRAJ, OH_EVAL])
def test_unlogged_floors_are_inferred_once_per_conversation(shared_logs: Path, rel: str) -> None:
    """These logs hold no system prompt and tools, so the floor is the first call's reported prompt minus its
    counted history; every later call's history is its reported prompt minus that floor (README: the floor
    stays put, the tokenizer gap lands in the history).  The floor used to be inferred per call, and climbed
    11,148 -> 40,106 over the Cline run's 12 calls while its system prompt and tools never changed.
    Reported prompts are read here with plain json (Cline: tokensIn + cacheWrites + cacheReads)."""
    from click.testing import CliRunner

    from ctxwatch.cli import main

    path = shared_logs / rel
    if rel == CLINE:
        reported = [(r := json.loads(e["text"]))["tokensIn"] + r["cacheWrites"] + r["cacheReads"]
                    for e in json.loads(path.read_text()) if e.get("say") == "api_req_started"]
    elif rel == OH_TRAJ:
        seen: dict[str, int] = {}
        for e in json.loads(path.read_text()):
            mr = (e.get("tool_call_metadata") or {}).get("model_response")
            if mr:
                seen.setdefault(mr["id"], mr["usage"]["prompt_tokens"])
        reported = list(seen.values())
    else:
        tus = json.loads(path.read_text().splitlines()[0])["metrics"]["token_usages"]
        reported = list({t["response_id"]: t["prompt_tokens"] for t in reversed(tus)}.values())[::-1]
    calls = json.loads(CliRunner().invoke(main, ["report", str(path), "--json"]).output)["calls"]
    assert [c["prompt_tokens_reported"] for c in calls] == reported
    with_history = [c for c in calls if c["history_tokens"] is not None]
    first = with_history[0]
    assert first["floor_source"] == "inferred" and first["history_source"] == "estimated"
    floor = first["floor_tokens"]
    assert floor == reported[calls.index(first)] - first["history_tokens"]
    for c in with_history[1:]:
        assert (c["floor_tokens"], c["history_source"]) == (floor, "inferred")
        assert c["history_tokens"] == c["prompt_tokens_reported"] - floor


def test_openhands_edit_observation_is_counted_as_the_model_saw_it(shared_logs: Path) -> None:
    """An openhands-aci edit reaches the model as the editor's output (FileEditObservation.__str__ returns
    ``formatted_output_and_error``), not the UI diff in ``content`` (973 tokens for a 13-token note)."""
    path = shared_logs / OH_TRAJ
    events = json.loads(path.read_text())
    edit = next(e for e in events if e.get("observation") == "edit")
    assert edit["extras"]["impl_source"] == "oh_aci" and len(edit["content"]) > 3000
    calls, _ = _split(OpenHandsReader(str(path)).feed_document(events))
    tool = next(m for m in calls[1].messages if m.role == "tool")
    assert tool.parts[0].text == edit["extras"]["formatted_output_and_error"]


def test_text_output_never_says_line_0_for_a_whole_document(shared_logs: Path) -> None:
    """report's table and check's flags showed "line 0" for every call of a whole-file document (Cline,
    OpenHands, Inspect); they now say it is the whole document."""
    from click.testing import CliRunner

    from ctxwatch.cli import main

    path = str(shared_logs / CLINE)
    out = CliRunner().invoke(main, ["report", path]).output
    rows = [ln for ln in out.splitlines() if ln.strip()[:1].isdigit()]
    assert len(rows) == 12 and all(ln.split()[1] == "doc" for ln in rows)
    assert "line doc = a call of a whole-file JSON document" in out
    flags = [ln for ln in CliRunner().invoke(main, ["check", path]).output.splitlines() if ln.startswith("WARN")]
    assert flags and all("whole document" in ln and "line 0" not in ln for ln in flags)


def test_report_text_names_a_document_issue_without_line_0(tmp_path: Path) -> None:
    """An issue of a whole-file document (a Cline entry whose text is not JSON) printed as "file:0:"."""
    from click.testing import CliRunner

    from ctxwatch.cli import main

    doc = [{"ts": 1757370000000, "say": "api_req_started", "text": "{not json"},
           {"ts": 1757370000100, "say": "api_req_started",
            "text": json.dumps({"request": "hi", "tokensIn": 5, "tokensOut": 1, "cacheWrites": 0, "cacheReads": 0})}]
    path = tmp_path / "ui_messages.json"
    path.write_text(json.dumps(doc))
    out = CliRunner().invoke(main, ["report", "--format", "cline", str(path)]).output
    assert f"issue: {path}: invalid_json: entry 0: api_req_started text is not JSON" in out
    assert f"{path}:0" not in out


def test_a_first_call_below_its_counted_history_does_not_pin_the_floor_at_0(shared_logs: Path,
                                                                            tmp_path: Path) -> None:
    """The real Cline run with its first call's usage cut to 23 tokens (below the 67 counted): the floor
    inferred from it was max(0, 23 - 67) = 0, and every later call showed floor 0~.  The first call that
    leaves a floor now gives it."""
    from click.testing import CliRunner

    from ctxwatch.cli import main

    doc = json.loads((shared_logs / CLINE).read_text())
    first = next(e for e in doc if e.get("say") == "api_req_started")
    d = json.loads(first["text"])
    d.update(tokensIn=3, cacheWrites=20, cacheReads=0)
    first["text"] = json.dumps(d)
    task = tmp_path / "tasks" / "1757370999999"
    task.mkdir(parents=True)
    (task / "ui_messages.json").write_text(json.dumps(doc))
    calls = json.loads(CliRunner().invoke(main, ["report", str(task / "ui_messages.json"), "--json"]).output)["calls"]
    assert calls[0]["prompt_tokens_reported"] == 23 and calls[0]["floor_tokens"] == 0
    second = calls[1]
    assert second["history_source"] == "estimated"
    floor = second["prompt_tokens_reported"] - second["history_tokens"]
    assert floor > 10_000 and second["floor_tokens"] == floor
    assert all((c["floor_tokens"], c["history_source"]) == (floor, "inferred") for c in calls[2:])


def test_cline_tasks_with_the_same_timestamps_stay_apart(shared_logs: Path, tmp_path: Path) -> None:
    """Two Cline task folders whose entries share ``ts`` values (a copied task): the call key held only the
    ts and the entry index, so the second task's calls merged into the first's (12 calls, not 24)."""
    from click.testing import CliRunner

    from ctxwatch.cli import main

    for name in ("1757370000000", "1757370999999"):
        (tmp_path / "tasks" / name).mkdir(parents=True)
        shutil.copy(shared_logs / CLINE, tmp_path / "tasks" / name / "ui_messages.json")
    out = json.loads(CliRunner().invoke(main, ["report", str(tmp_path / "tasks"), "--json"]).output)
    assert len(out["calls"]) == 24 and sorted(s["session"] for s in out["sessions"]) == ["1757370000000",
                                                                                          "1757370999999"]


def test_inspect_runs_with_the_same_sample_ids_are_separate_sessions(shared_logs: Path) -> None:
    """Sample ids restart at 1 in every eval run: the two runs of the inspect-ai folder were one session "1:1"
    of 4 calls.  Each run is now its own session, named by its run_id; the input sums come from a plain json /
    zipfile reading of each log's model events."""
    from ctxwatch.engine import load_many
    from ctxwatch.output.report import report_json

    def model_inputs(doc: dict) -> list[int]:
        return [e["output"]["usage"]["input_tokens"] for s in doc["samples"] for e in s["events"]
                if e.get("event") == "model"]

    plain = json.loads((shared_logs / INSPECT_JSON).read_text())
    with zipfile.ZipFile(shared_logs / INSPECT_EVAL) as z:
        header = json.loads(z.read("header.json"))
        samples = [json.loads(z.read(n)) for n in z.namelist() if n.startswith("samples/")]
    expected = {f"{plain['eval']['run_id']}:1:1": sum(model_inputs(plain)),
                f"{header['eval']['run_id']}:1:1": sum(model_inputs({"samples": samples}))}
    assert len(expected) == 2
    doc = report_json(load_many([str(shared_logs / RR / "inspect-ai")], None))
    assert {s["session"]: s["input_tokens"] for s in doc["sessions"]} == expected
    assert [s["calls"] for s in doc["sessions"]] == [2, 2]


def test_report_text_says_the_run_totals_and_orders_untimed_sessions_newest_read_first(shared_logs: Path,
                                                                                      tmp_path: Path) -> None:
    """The text report showed "input ?" for a SWE-agent run whose model_stats give its totals (only the JSON
    had them), and listed sessions without timestamps oldest file first while the forecast took the newest."""
    import os
    import shutil

    from click.testing import CliRunner

    from ctxwatch.cli import main

    stats = json.loads((shared_logs / SWE).read_text())["info"]["model_stats"]
    for n, src in enumerate((SWE, SWE_DEMO)):  # (the demonstration is modified last: newest)
        dest = tmp_path / Path(src).name
        shutil.copy(shared_logs / src, dest)
        os.utime(dest, (1_000_000 + n, 1_000_000 + n))
    out = CliRunner().invoke(main, ["report", str(tmp_path)]).output
    assert (f"run totals of pydicom__pydicom-1458.traj (model_stats; per call unknown): input "
            f"{stats['tokens_sent']:,}, output {stats['tokens_received']:,}") in out
    table = out[out.index("sessions, newest first"):].splitlines()[2:4]
    assert [row.split()[0] for row in table] == [Path(SWE_DEMO).name, Path(SWE).name]
    # pydicom's peak is ctxwatch's count (its calls report no prompt): marked as an estimate, as the legend says
    assert table[1].split()[3].endswith("~") and "peak~ = estimated" in out
    assert f"forecast: session {Path(SWE_DEMO).name}:" in out
