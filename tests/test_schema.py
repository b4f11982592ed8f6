"""Tool-schema floor analysis: B01 (per-tool cost by difference, preamble once) and the compaction preview.

Expected values are computed in the test: the raw tokenizer over ``orjson.dumps`` of each tool, the
providers' documented overheads, and a separate small compactor written here.
"""

from __future__ import annotations

import re

import orjson
import pytest

from ctxwatch.planner.schema import analyse_tools, compact_schema, first_sentence, marginal_costs
from ctxwatch.tokens import ANTHROPIC_TOOL_PREAMBLE, counter_for, get_tokenizer

TOK = get_tokenizer("o200k_base")
LOREM = "lorem ipsum dolor sit amet consectetur adipiscing elit "


def n(obj: object) -> int:
    return TOK.count(orjson.dumps(obj).decode())


def b01_tools() -> list[dict]:
    return [
        {"name": "tiny", "description": "x", "input_schema": {"type": "object", "properties": {}}},
        {"name": "medium", "description": (LOREM * 6)[:300],
         "input_schema": {"type": "object", "properties": {"a": {"type": "string"}}}},
        {"name": "large", "description": (LOREM * 60)[:3000],
         "input_schema": {"type": "object", "properties": {"a": {"type": "string"},
                                                           "b": {"type": "array", "items": {"type": "string"}}}}},
    ]


def test_b01_lines_are_differences_and_add_up():
    tools = b01_tools()
    counter = counter_for("claude-sonnet-4-5", "anthropic")
    rep = analyse_tools(tools, counter)
    tiny, medium, large = (t.tokens for t in rep.tools)
    assert large > medium > tiny
    # the provider preamble is counted once for the whole payload
    assert rep.total_tokens == sum(n(t) for t in tools) + ANTHROPIC_TOOL_PREAMBLE
    assert rep.preamble_tokens == ANTHROPIC_TOOL_PREAMBLE
    assert tiny + medium + large == rep.total_tokens - rep.preamble_tokens
    # each line is exactly the tool's own JSON: no second preamble
    assert [t.tokens for t in rep.tools] == [n(t) for t in tools]
    # floor(3 tools) - floor(2 tools) == large alone, without a preamble
    floor3 = counter.tools_tokens(tools)
    floor2 = counter.tools_tokens(tools[:2])
    assert floor3 - floor2 == n(tools[2]) == large
    # measuring each tool alone (the bug) would over-count by two extra preambles
    alone = sum(counter.tools_tokens([t]) for t in tools)
    assert alone - rep.total_tokens == 2 * ANTHROPIC_TOOL_PREAMBLE


def test_b01_openai_shape_and_single_tool():
    tools = [{"type": "function", "function": {"name": t["name"], "description": t["description"],
                                               "parameters": t["input_schema"]}} for t in b01_tools()]
    rep = analyse_tools(tools, counter_for("gpt-4o", "openai"))
    # OpenAI cookbook: 12 per request + 7 per function
    assert rep.total_tokens == sum(n(t) for t in tools) + 12 + 7 * 3
    assert [t.tokens for t in rep.tools] == [n(t) + 7 for t in tools]
    assert rep.preamble_tokens == 12
    assert [t.name for t in rep.tools] == ["tiny", "medium", "large"]
    costs, total, preamble = marginal_costs(tools[2:], counter_for("gpt-4o", "openai"))
    assert (costs, total, preamble) == ([n(tools[2]) + 7], n(tools[2]) + 19, 12)


# --- compaction preview, checked against a compactor written here ---------------------------------------

ANNOTATIONS = {"examples", "title", "default", "$comment"}


def ref_first_sentence(s: str) -> str:
    """First sentence: stop at a blank line, at a line starting a list item, or after . ! ? + space."""
    s = s.strip()
    s = re.split(r"\n[ \t]*\n", s, maxsplit=1)[0]
    lines = s.split("\n")
    keep = [lines[0]]
    for line in lines[1:]:
        if re.match(r"\s*([-*•]|\d+[.)])\s", line):
            break
        keep.append(line)
    s = "\n".join(keep)
    i = 0
    while i < len(s):
        if s[i] in ".!?" and (i + 1 == len(s) or s[i + 1].isspace()):
            word = s[: i + 1].split()[-1].lower() if s[: i + 1].split() else ""
            if not (word.endswith(("e.g.", "i.e.", "eg.", "ie.", "vs.")) or word.endswith("etc.)")):
                return s[: i + 1]
        i += 1
    return s.rstrip()


def ref_compact(node: object, names: bool = False) -> object:
    if isinstance(node, list):
        return [ref_compact(x) for x in node]
    if not isinstance(node, dict):
        return node
    if names:  # a map of property names: keep every name
        return {k: ref_compact(v) for k, v in node.items()}
    out = {}
    for k, v in node.items():
        if k in ANNOTATIONS:
            continue
        if k == "description" and isinstance(v, str):
            out[k] = ref_first_sentence(v)
        elif k in ("enum", "required", "const"):
            out[k] = v
        else:
            out[k] = ref_compact(v, names=k in ("properties", "patternProperties", "$defs", "definitions"))
    return out


def ref_compact_tool(tool: dict) -> dict:
    out = dict(tool)
    if "description" in out:
        out["description"] = ref_first_sentence(out["description"])
    out["input_schema"] = ref_compact(out["input_schema"])
    return out


def test_compact_schema_keeps_property_names_and_data():
    schema = {"type": "object", "title": "T", "$comment": "c", "description": "Does X. Then Y.",
              "properties": {"title": {"type": "string", "default": "a", "examples": ["b"]},
                             "mode": {"enum": ["title", "default"], "description": "Mode, e.g. fast. More."}},
              "required": ["title"]}
    assert compact_schema(schema) == {
        "type": "object", "description": "Does X.",
        "properties": {"title": {"type": "string"},
                       "mode": {"enum": ["title", "default"], "description": "Mode, e.g. fast."}},
        "required": ["title"]}


@pytest.mark.parametrize("text,first", [
    ("One. Two.", "One."),
    ("- Fast tool\n- Supports globs", "- Fast tool"),
    ("Reads a file.\nMore lines.", "Reads a file."),
    ("Wrapped line\ncontinues here. Next.", "Wrapped line\ncontinues here."),
    ("No terminator at all", "No terminator at all"),
    ("Para one\n\nPara two.", "Para one"),
    ("Version 1.5 is fine. Yes.", "Version 1.5 is fine."),
])
def test_first_sentence(text, first):
    assert first_sentence(text) == first == ref_first_sentence(text)


def trace_tools(shared_logs) -> tuple[list[dict], list[dict]]:
    path = shared_logs / "request-response" / "claude-trace_test-traffic_head14.jsonl"
    bodies = [orjson.loads(line)["request"]["body"] for line in path.read_bytes().splitlines() if line.strip()]
    with_tools = [b for b in bodies if b.get("tools")]
    return with_tools[-1]["tools"], with_tools


def test_claude_trace_sample_compaction_matches_direct_count(shared_logs):
    tools, with_tools = trace_tools(shared_logs)
    assert len(tools) == 17
    rep = analyse_tools(tools, counter_for("claude-sonnet-4-20250514", "anthropic"), calls=len(with_tools))
    compacted = [ref_compact_tool(t) for t in tools]
    assert [t.tokens for t in rep.tools] == [n(t) for t in tools]
    assert [t.compacted_tokens for t in rep.tools] == [n(t) for t in compacted]
    assert rep.total_tokens == sum(n(t) for t in tools) + ANTHROPIC_TOOL_PREAMBLE
    assert rep.compacted_total == sum(n(t) for t in compacted) + ANTHROPIC_TOOL_PREAMBLE
    assert rep.saved_per_call == sum(n(t) for t in tools) - sum(n(t) for t in compacted)
    assert rep.saved_run == rep.saved_per_call * 4 and rep.calls == 4
    # the sample's Edit/MultiEdit schemas carry "default": the compactor removed them
    edit = next(t for t in compacted if t["name"] == "Edit")
    assert b'"default"' in orjson.dumps(next(t for t in tools if t["name"] == "Edit"))
    assert b'"default"' not in orjson.dumps(edit)
    assert all(t.saved >= 0 for t in rep.tools)
    assert rep.to_json()["tools"][0] == {"name": "Task", "tokens": rep.tools[0].tokens,
                                         "compacted_tokens": rep.tools[0].compacted_tokens,
                                         "saved": rep.tools[0].saved}


def test_schema_of_a_format_that_never_logs_tools_names_no_call(shared_logs) -> None:  # type: ignore[no-untyped-def]
    """Claude Code transcripts never hold the tool schemas: the message says so of the format, not of a call."""
    from click.testing import CliRunner

    from ctxwatch.cli import main

    res = CliRunner().invoke(main, ["schema", str(shared_logs / "claude-code")])
    assert res.exit_code == 2
    assert "claude-code logs do not record the tool schemas" in res.output and "call #" not in res.output


def test_schema_labels_its_floor_an_uncalibrated_estimate_and_names_reports(shared_logs) -> None:  # type: ignore[no-untyped-def]
    """`schema` printed its floor as o200k_base counted it (12,036) without saying so, where report and the
    dashboard show the calibrated floor (13,681): it says its floor is an uncalibrated estimate of which
    tokenizer, and gives report's calibrated floor beside it (read from report --json here)."""
    import json

    from click.testing import CliRunner

    from ctxwatch.cli import main

    log = str(shared_logs / "request-response" / "claude-trace_test-traffic_head14.jsonl")
    calls = json.loads(CliRunner().invoke(main, ["report", "--json", log]).output)["calls"]
    last = [c for c in calls if c["calibrated"]["tools_tokens"]][-1]  # (schema's default: the last with tools)
    res = CliRunner().invoke(main, ["schema", log])
    assert res.exit_code == 0, res.output
    floor = last["system_tokens"] + last["tools_tokens"]  # (report's own, uncalibrated counts)
    want = (f"floor {floor:,} (o200k_base estimate, uncalibrated; report shows "
            f"{last['calibrated']['floor_tokens']:,}≈, calibrated x{last['calibration']:.4f})")
    assert want in res.output
