"""The bundled sample logs: each opens with ``ctxwatch report --json`` in its own format, with the numbers the
file itself reports, and no issues except those a sample shows on purpose.

Expected values are read from the sample files here with plain ``json`` and the usage rules of FORMATS.md
section 0 (Anthropic prompt = input + cache creation + cache read; OpenAI and Gemini prompt totals include
cached tokens), not with ctxwatch's readers.  The samples themselves must be exactly what
``scripts/make_samples.py`` generates.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ctxwatch.cli import main

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_logs"


def lines(rel: str) -> list[dict[str, Any]]:
    """The JSON values of a sample, one per non-empty line."""
    return [json.loads(x) for x in (SAMPLES / rel).read_text(encoding="utf-8").splitlines() if x.strip()]


def report(*rels: str) -> dict[str, Any]:
    res = CliRunner().invoke(main, ["report", *(str(SAMPLES / r) for r in rels), "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


# --- expected values, computed from the files ------------------------------------------------------

def exp_canonical(rel: str) -> list[int | None]:
    out: list[int | None] = []
    for v in lines(rel):
        u = v["response"].get("usage")
        if u is None:
            out.append(None)
        elif "prompt_tokens" in u:
            out.append(u["prompt_tokens"])
        elif "cache_read_input_tokens" in u:
            out.append(u["input_tokens"] + u["cache_creation_input_tokens"] + u["cache_read_input_tokens"])
        else:
            out.append(u["input_tokens"])
    return out


def exp_claude_code(rel: str) -> list[int]:
    """One call per (message.id, requestId) of assistant lines; its usage from the call's last line."""
    calls: dict[tuple[str, str], int] = {}
    for v in lines(rel):
        if v.get("type") == "assistant":
            u = v["message"]["usage"]
            calls[(v["message"]["id"], v["requestId"])] = (
                u["input_tokens"] + u["cache_creation_input_tokens"] + u["cache_read_input_tokens"])
    return list(calls.values())


def exp_codex(rel: str) -> list[int]:
    """One call per change of total_token_usage; its prompt is last_token_usage.input_tokens."""
    out, seen = [], None
    for v in lines(rel):
        p = v["payload"]
        if v["type"] == "event_msg" and p["type"] == "token_count" and p["info"]:
            total = json.dumps(p["info"]["total_token_usage"], sort_keys=True)
            if total != seen:
                seen = total
                out.append(p["info"]["last_token_usage"]["input_tokens"])
    return out


def exp_trace(rel: str) -> list[int]:
    out = []
    for v in lines(rel):
        rs = v["response"]
        if rs.get("body"):
            u = rs["body"]["usage"]
        else:
            start = next(x for x in rs["body_raw"].split("\n") if x.startswith("data:") and "message_start" in x)
            u = json.loads(start[5:])["message"]["usage"]
        out.append(u["input_tokens"] + u["cache_creation_input_tokens"] + u["cache_read_input_tokens"])
    return out


def exp_gemini(rel: str) -> list[int]:
    return [v["usageMetadata"]["promptTokenCount"] for v in lines(rel)]


def exp_gemini_cli(rel: str) -> list[int]:
    return [v["tokens"]["input"] for v in lines(rel) if v.get("type") == "gemini"]


def exp_openai_batch(rel: str) -> list[int]:
    return sorted(v["response"]["body"]["usage"]["prompt_tokens"] for v in lines(rel))


def exp_anthropic_batch(rel: str) -> list[int]:
    out = []
    for v in lines(rel):
        if v["result"]["type"] == "succeeded":
            u = v["result"]["message"]["usage"]
            out.append(u["input_tokens"] + u["cache_creation_input_tokens"] + u["cache_read_input_tokens"])
    return sorted(out)


def exp_inspect(rel: str) -> list[int]:
    doc = json.loads((SAMPLES / rel).read_text(encoding="utf-8"))
    return [e["output"]["usage"]["input_tokens"] for s in doc["samples"] for e in s["events"] if e["event"] == "model"]


def exp_openhands(rel: str) -> list[int]:
    """One call per distinct model_response.id (repeated on its action and its observation)."""
    seen: dict[str, int] = {}
    for e in json.loads((SAMPLES / rel).read_text(encoding="utf-8")):
        mr = (e.get("tool_call_metadata") or {}).get("model_response")
        if mr:
            seen.setdefault(mr["id"], mr["usage"]["prompt_tokens"])
    return list(seen.values())


def exp_openhands_eval(rel: str) -> list[int]:
    return [tu["prompt_tokens"] for v in lines(rel) for tu in v["metrics"]["token_usages"]]


def exp_swe(rel: str) -> list[None]:
    """Per-call usage is unknown in a .traj (only cumulative model_stats): one call per assistant turn."""
    doc = json.loads((SAMPLES / rel).read_text(encoding="utf-8"))
    return [None for m in doc["history"] if m["role"] == "assistant"]


def exp_cline(rel: str) -> list[int]:
    out = []
    for e in json.loads((SAMPLES / rel).read_text(encoding="utf-8")):
        if e.get("say") == "api_req_started":
            d = json.loads(e["text"])
            out.append(d["tokensIn"] + d["cacheWrites"] + d["cacheReads"])  # tokensIn is uncached input
    return out


def exp_gemini_cli_json(rel: str) -> list[int]:
    doc = json.loads((SAMPLES / rel).read_text(encoding="utf-8"))
    return [m["tokens"]["input"] for m in doc["messages"] if m["type"] == "gemini"]


def exp_otel(rel: str) -> list[int | None]:
    """Calls in file order, each export request's in the order of their times: chat spans (or spans with usage and
    no operation name) report gen_ai.usage.input_tokens (or the older prompt_tokens), the whole prompt; Claude
    Code's api_request events report input + cache read + cache creation (Anthropic's rule)."""
    out: list[int | None] = []
    for v in lines(rel):
        found: list[tuple[int, int | None]] = []
        for rs in v.get("resourceSpans", v.get("resource_spans", [])):
            for ss in rs.get("scopeSpans", rs.get("scope_spans", [])):
                for s in ss["spans"]:
                    a = {x["key"]: next(iter(x["value"].values())) for x in s["attributes"]}
                    op = a.get("gen_ai.operation.name")
                    if op == "chat" or (op is None and "gen_ai.usage.prompt_tokens" in a):
                        n = a.get("gen_ai.usage.input_tokens", a.get("gen_ai.usage.prompt_tokens"))
                        found.append((int(s.get("endTimeUnixNano", s.get("end_time_unix_nano"))),
                                      int(n) if n is not None else None))
        for rl in v.get("resourceLogs", []):
            for sl in rl["scopeLogs"]:
                for r in sl["logRecords"]:
                    a = {x["key"]: next(iter(x["value"].values())) for x in r["attributes"]}
                    if a.get("event.name") == "api_request":
                        found.append((int(r["timeUnixNano"]), int(a["input_tokens"]) + int(a["cache_read_tokens"])
                                      + int(a["cache_creation_tokens"])))
        out += [n for _, n in sorted(found, key=lambda f: f[0])]
    return out


# (paths given to `report`, detected format, expected reported prompts, sorted?, issue kinds on purpose)
CASES: list[tuple[tuple[str, ...], str, Callable[[], list[Any]], bool, list[str]]] = [
    (("openai_chat_demo.jsonl",), "canonical", lambda: exp_canonical("openai_chat_demo.jsonl"), False, []),
    (("anthropic_messages.jsonl",), "canonical", lambda: exp_canonical("anthropic_messages.jsonl"), False, []),
    (("openai_responses.jsonl",), "canonical", lambda: exp_canonical("openai_responses.jsonl"), False, []),
    (("claude_code_session.jsonl",), "claude-code", lambda: exp_claude_code("claude_code_session.jsonl"), False, []),
    (("codex_rollout.jsonl",), "codex", lambda: exp_codex("codex_rollout.jsonl"), False, []),
    (("claude_trace.jsonl",), "claude-trace", lambda: exp_trace("claude_trace.jsonl"), False, []),
    (("gemini_usage.jsonl",), "gemini", lambda: exp_gemini("gemini_usage.jsonl"), False, []),
    (("gemini_cli_session.jsonl",), "gemini-cli", lambda: exp_gemini_cli("gemini_cli_session.jsonl"), False, []),
    (("openai-batch",), "openai-batch", lambda: exp_openai_batch("openai-batch/batch_output.jsonl"), True, []),
    (("anthropic-batch",), "anthropic-batch", lambda: exp_anthropic_batch("anthropic-batch/results.jsonl"), True,
     ["failed_request", "failed_request"]),  # one errored and one expired result, on purpose
    (("documents/inspect_eval.json",), "inspect-ai", lambda: exp_inspect("documents/inspect_eval.json"), False, []),
    (("documents/openhands_trajectory.json",), "openhands",
     lambda: exp_openhands("documents/openhands_trajectory.json"), False, []),
    (("documents/openhands_eval_output.jsonl",), "openhands-eval",
     lambda: exp_openhands_eval("documents/openhands_eval_output.jsonl"), False, []),
    (("documents/swe_agent.traj",), "swe-agent", lambda: exp_swe("documents/swe_agent.traj"), False, []),
    (("documents/cline_ui_messages.json",), "cline", lambda: exp_cline("documents/cline_ui_messages.json"), False,
     []),
    (("otel_collector.jsonl",), "otel", lambda: exp_otel("otel_collector.jsonl"), False, []),
    (("documents/gemini_cli_session.json",), "gemini-cli-json",
     lambda: exp_gemini_cli_json("documents/gemini_cli_session.json"), False, []),
]


@pytest.mark.parametrize(("paths", "fmt", "expected", "sort", "issue_kinds"), CASES, ids=[c[0][0] for c in CASES])
def test_sample_reports(paths: tuple[str, ...], fmt: str, expected: Callable[[], list[Any]], sort: bool,
                        issue_kinds: list[str]) -> None:
    doc = report(*paths)
    assert doc["format"] == fmt
    assert len(doc["calls"]) > 0
    got = [c["prompt_tokens_reported"] for c in doc["calls"]]
    assert (sorted(got) if sort else got) == expected()
    assert sorted(i["kind"] for i in doc["issues"]) == sorted(issue_kinds), doc["issues"]


def test_every_format_has_a_sample() -> None:
    from ctxwatch.formats import formats

    assert {c[1] for c in CASES} == set(formats())


def test_every_sample_file_is_small_and_described() -> None:
    readme = (SAMPLES / "README.md").read_text(encoding="utf-8")
    files = [p for p in SAMPLES.rglob("*") if p.is_file() and p.name != "README.md"]
    assert len(files) >= 18
    for p in files:
        assert p.stat().st_size < 200_000, p
        assert p.relative_to(SAMPLES).as_posix() in readme, f"{p.name} not described in sample_logs/README.md"


def test_samples_are_what_the_script_generates() -> None:
    spec = importlib.util.spec_from_file_location("make_samples", ROOT / "scripts" / "make_samples.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    built = mod.build()
    assert built == mod.build()  # deterministic
    for rel, data in built.items():
        assert (SAMPLES / rel).read_bytes() == data, f"{rel} is stale: run python scripts/make_samples.py"


def test_demo_sample_tells_the_story() -> None:
    """The canonical sample is the demo story: estimates equal reports, the system prompt goes, the end overflows."""
    doc = report("openai_chat_demo.jsonl")
    calls = doc["calls"]
    for c in calls:
        assert c["window"] == 2560 and c["window_source"] == "log"
        if c["prompt_tokens_reported"] is not None:
            assert c["prompt_tokens_estimated"] == c["prompt_tokens_reported"]
    assert calls[-1]["free_tokens"] < 0
    assert all(c["free_tokens"] >= 0 for c in calls[:-1])
    systems = [c["system_tokens"] for c in calls]
    assert systems[0] > 0 and systems[-1] == 0


def test_anthropic_and_agent_samples_show_their_features() -> None:
    doc = report("anthropic_messages.jsonl")
    for c, v in zip(doc["calls"], lines("anthropic_messages.jsonl"), strict=True):
        u = v["response"]["usage"]
        assert c["cache_read_tokens"] == u["cache_read_input_tokens"]
        assert c["cache_write_tokens"] == u["cache_creation_input_tokens"]
        assert c["tools_tokens"] > 0 and c["system_tokens"] > 0
    doc = report("openai_responses.jsonl")
    for c, v in zip(doc["calls"], lines("openai_responses.jsonl"), strict=True):
        assert c["reasoning_tokens_reported"] == v["response"]["usage"]["output_tokens_details"]["reasoning_tokens"]
        assert c["system_tokens"] > 0  # instructions
    doc = report("claude_code_session.jsonl")
    assert len({c["context"] for c in doc["calls"]}) == 2  # main and the Task sidechain
    assert any(c["compaction"] for c in doc["calls"])
    assert all(c["floor_source"] == "inferred" for c in doc["calls"])
    doc = report("codex_rollout.jsonl")
    assert {c["window"] for c in doc["calls"]} == {258_400}
    assert any(c["compaction"] for c in doc["calls"])
    doc = report("openai-batch")
    assert all(c["history_tokens"] is not None for c in doc["calls"])  # joined to the input file


def test_commands_shown_in_the_readme_exist() -> None:
    """Every ``ctxwatch ...`` command line in sample_logs/README.md names a real command and real options."""
    import re
    import shlex

    readme = (SAMPLES / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```sh\n(.*?)```", readme, flags=re.S)
    shown = [seg.strip() for b in blocks for line in b.splitlines()
             for seg in line.split("#")[0].split("&") if seg.strip().startswith("ctxwatch")]
    assert len(shown) >= 8
    runner = CliRunner()
    for cmd in shown:
        argv = shlex.split(cmd)[1:]
        sub = argv[0] if argv and argv[0] in main.list_commands(None) else "watch"
        res = runner.invoke(main, [sub, "--help"])
        assert res.exit_code == 0, (cmd, res.output)
        for opt in (a for a in argv if a.startswith("--")):
            assert opt in res.output, (cmd, opt)
