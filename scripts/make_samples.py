#!/usr/bin/env python3
"""Generate ``sample_logs/``: small, deterministic logs in every format ctxwatch reads.

Every file is written by this script from seeded :class:`random.Random` generators: nothing is copied from
third-party logs.  The *shapes* are those of each format's real logs (field names checked against real files);
the *content* is a made-up coding agent working on a made-up invoicing package.

Token counts in the files are what the synthetic provider "reports".  They are computed with ctxwatch's own
tokenizer (tiktoken ``o200k_base`` via :func:`ctxwatch.tokens.counter_for`) and framing rules, so for OpenAI
models the estimate and the report agree exactly; for Claude and Gemini the numbers are the same o200k
estimates (their tokenizers are not public), and for Claude Code and Codex, whose logs leave out the system
prompt and tool schemas, a fixed "unlogged overhead" (:data:`CLAUDE_CODE_UNLOGGED`, :data:`CODEX_UNLOGGED`) is
added to the visible history, as it is in real logs.

Usage::

    python scripts/make_samples.py            # (re)write sample_logs/
    python scripts/make_samples.py --out DIR  # write elsewhere (tests compare the two)

Each file stays under :data:`MAX_BYTES`.  See ``sample_logs/README.md`` for what each file demonstrates.
"""

from __future__ import annotations

import argparse
import json
import random
import string
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ctxwatch import demo
from ctxwatch.demo import content
from ctxwatch.formats.canonical import anthropic_request_to_parts, responses_request_to_parts
from ctxwatch.model import Message, Part
from ctxwatch.tokens import REPLY_PRIMER, Counter, counter_for

ROOT = Path(__file__).resolve().parent.parent
#: Upper bound for every sample file, in bytes (small enough to read and to keep in git).
MAX_BYTES = 200_000
#: The canonical OpenAI sample is the demo story in miniature: 20 calls against a made-up 2,560-token window.
#: (Every canonical record re-sends the whole prompt, so a file's size grows with calls x window; the full-size
#: demo run, 60 calls x 32,000 tokens, is about 5 MB: ``ctxwatch demo --write FILE``.)
DEMO_SAMPLE_CALLS = 20
DEMO_SAMPLE_WINDOW = 2560
#: Tokens of system prompt + tool schemas that Claude Code sends but does not log (the real 2.1.x sample's
#: first call has 26,450 prompt tokens before any history; an older, smaller tool set is assumed here).
CLAUDE_CODE_UNLOGGED = 14_890
#: Same for a Task subagent (its own, shorter system prompt and tool set).
CLAUDE_CODE_SUBAGENT_UNLOGGED = 9_210
#: Codex 0.58 logs neither its base instructions nor its tool schemas; its first call in
#: the real sample reports 10,128 input tokens for a two-message history.
CODEX_UNLOGGED = 9_640
#: Codex's context window for gpt-5.1-codex as its rollouts state it (``model_context_window`` in the real 0.58
#: sample; the log's value wins over the catalogue's).
CODEX_WINDOW = 258_400
#: OpenAI's prompt-caching rule: a prefix of >= 1,024 tokens is cached, hits are counted in 128-token
#: increments.
CACHE_MIN, CACHE_BLOCK = 1024, 128
START = datetime(2025, 9, 8, 14, 0, tzinfo=UTC).timestamp()
_ALNUM = string.ascii_letters + string.digits


# --- helpers ---------------------------------------------------------------------------------------------

def iso(ts: float) -> str:
    """ISO-8601 UTC with milliseconds and ``Z``."""
    return demo.iso_utc(ts)


def rid(rng: random.Random, prefix: str, n: int, alphabet: str = _ALNUM) -> str:
    """A random-looking id: ``prefix`` + ``n`` characters of ``alphabet``."""
    return prefix + "".join(rng.choice(alphabet) for _ in range(n))


def ruuid(rng: random.Random) -> str:
    """A version-4 UUID string drawn from ``rng``."""
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def ruuid7(rng: random.Random, ts: float) -> str:
    """A UUIDv7-shaped string (48-bit millisecond time, then random bits), as Codex session ids are."""
    value = (int(ts * 1000) << 80) | (0x7 << 76) | (rng.getrandbits(12) << 64) | (0b10 << 62) | rng.getrandbits(62)
    return str(uuid.UUID(int=value))


def cached(prev_prefix: int, prompt: int) -> int:
    """OpenAI-style cached tokens for a prompt whose first ``prev_prefix`` tokens were sent before."""
    common = min(prev_prefix, prompt)
    return (common // CACHE_BLOCK) * CACHE_BLOCK if common >= CACHE_MIN else 0


def code(rng: random.Random, path: str, tokens: int, counter: Counter, start: int = 1) -> str:
    """About ``tokens`` tokens of line-numbered synthetic Python source for ``path``."""
    return content.fill(content.numbered(content.code_lines(rng, path), start), tokens, counter.tokenizer.count)


def pytest_out(rng: random.Random, tokens: int, counter: Counter) -> str:
    """About ``tokens`` tokens of synthetic pytest output."""
    return content.fill(content.pytest_lines(rng, "tests/test_tax.py"), tokens, counter.tokenizer.count)


def dump_lines(values: list[Any], final_newline: bool = True) -> bytes:
    """JSON lines (compact, UTF-8), optionally without the last newline."""
    text = "\n".join(json.dumps(v, ensure_ascii=False, separators=(",", ":")) for v in values)
    return (text + ("\n" if final_newline else "")).encode("utf-8")


# --- 1. canonical OpenAI chat: the demo story ------------------------------------------------------------

def openai_chat_demo() -> bytes:
    """The demo run in miniature (canonical OpenAI chat-completions records)."""
    recs = list(demo.generate_run(DEMO_SAMPLE_CALLS, demo.DEFAULT_SEED, DEMO_SAMPLE_WINDOW))
    return dump_lines(recs)


# --- 2. canonical Anthropic Messages ----------------------------------------------------------------------

ANTHROPIC_MODEL = "claude-sonnet-4-5-20250929"
ANTHROPIC_TOOLS = [
    {"name": "bash", "description": "Run a shell command in the repository and return its output. Long-running "
     "commands time out after 120 seconds.",
     "input_schema": {"type": "object", "properties": {
         "command": {"type": "string", "description": "The command to run."},
         "timeout": {"type": "integer", "description": "Seconds before the command is killed."}},
         "required": ["command"]}},
    {"name": "view", "description": "Show a file with line numbers, or a line range of it.",
     "input_schema": {"type": "object", "properties": {
         "path": {"type": "string", "description": "Path relative to the repository root."},
         "view_range": {"type": "array", "items": {"type": "integer"},
                        "description": "[start, end] line numbers, 1-based, inclusive."}},
         "required": ["path"]}},
    {"name": "str_replace", "description": "Replace one exact occurrence of old_str with new_str in a file. Fails "
     "if old_str occurs zero or several times.",
     "input_schema": {"type": "object", "properties": {
         "path": {"type": "string"}, "old_str": {"type": "string"}, "new_str": {"type": "string"}},
         "required": ["path", "old_str", "new_str"]}},
    {"name": "grep", "description": "Search the repository with a regular expression; returns path:line: text.",
     "input_schema": {"type": "object", "properties": {
         "pattern": {"type": "string"}, "path": {"type": "string"}}, "required": ["pattern"]}},
]
ANTHROPIC_SYSTEM = [
    {"type": "text", "text": "You are a senior Python engineer working in the invoicer repository."},
    {"type": "text", "text": "Work in small steps: look before you change, run the tests after each change, and "
     "explain what you found in one or two sentences before each tool call. Money is Decimal, never float. "
     "When the task is done, summarize the change for the reviewer.",
     "cache_control": {"type": "ephemeral"}},
]


def anthropic_messages() -> bytes:
    """A 9-call Anthropic Messages session in the canonical wrapper, with prompt-cache usage."""
    rng = random.Random(11)
    counter = counter_for(ANTHROPIC_MODEL, "anthropic")
    steps: list[tuple[str, str, dict[str, Any], str]] = [
        ("I'll start by reproducing the failure.", "bash", {"command": "python -m pytest -x -q tests/test_tax.py"},
         "pytest"),
        ("The multi-line total is one cent high. Let me look at how the total is computed.", "grep",
         {"pattern": "def total_with_vat", "path": "src"}, "grep"),
        ("Found it in tax.py; viewing the function.", "view",
         {"path": "src/invoicer/tax.py", "view_range": [1, 80]}, "code"),
        ("VAT is rounded once on the sum instead of per line. Checking the rounding rule in the docs.", "bash",
         {"command": "sed -n 1,40p docs/rounding.md"}, "docs"),
        ("The rule is per line. Applying the fix.", "str_replace",
         {"path": "src/invoicer/tax.py",
          "old_str": "vat = sum(l.net * l.rate for l in lines).quantize(CENT)",
          "new_str": "vat = sum(((l.net * l.rate).quantize(CENT, ROUND_HALF_UP) for l in lines), Decimal(0))"},
         "edit"),
        ("Re-running the tax tests.", "bash", {"command": "python -m pytest -q tests/test_tax.py"}, "pytest_ok"),
        ("Now the CSV exporter, which has its own rounding.", "view",
         {"path": "src/invoicer/export_csv.py", "view_range": [1, 60]}, "code"),
        ("It calls total_with_vat, so it inherits the fix. Running the whole suite.", "bash",
         {"command": "python -m pytest -q"}, "pytest_ok"),
    ]
    messages: list[dict[str, Any]] = [{"role": "user", "content": demo.TASK}]
    out: list[dict[str, Any]] = []
    ts = START
    prev_prefix = 0
    for i in range(len(steps) + 1):
        ts += rng.uniform(4, 12)
        req_messages = json.loads(json.dumps(messages))
        last = req_messages[-1]
        if isinstance(last["content"], list):  # cache breakpoint on the last block, as agent SDKs do
            last["content"][-1]["cache_control"] = {"type": "ephemeral"}
        request = {"model": ANTHROPIC_MODEL, "max_tokens": 8192, "system": ANTHROPIC_SYSTEM,
                   "tools": ANTHROPIC_TOOLS, "messages": req_messages}
        system, tools, msgs, _ = anthropic_request_to_parts(request)
        prompt = (counter.system_tokens(system) + counter.tools_tokens(tools)
                  + sum(counter.message_tokens(m) for m in msgs) + REPLY_PRIMER)
        if i < len(steps):
            text, tool, args, kind = steps[i]
            tool_id = rid(rng, "toolu_01", 22)
            content = [{"type": "text", "text": text},
                       {"type": "tool_use", "id": tool_id, "name": tool, "input": args}]
            stop = "tool_use"
        else:
            content = [{"type": "text", "text": "Fixed: VAT is now rounded per line before summing "
                        "(src/invoicer/tax.py), as docs/rounding.md requires. The CSV export uses the same "
                        "function. All 118 tests pass."}]
            stop = "end_turn"
        completion = sum(counter.part_tokens(p) for p in _anthropic_parts(content))
        read = prev_prefix
        usage = {"input_tokens": REPLY_PRIMER, "cache_creation_input_tokens": prompt - REPLY_PRIMER - read,
                 "cache_read_input_tokens": read, "output_tokens": completion}
        prev_prefix = prompt - REPLY_PRIMER
        out.append({"timestamp": iso(ts), "session": "anthropic-sample", "request": request,
                    "response": {"id": rid(rng, "msg_01", 22), "type": "message", "role": "assistant",
                                 "model": ANTHROPIC_MODEL, "content": content, "stop_reason": stop,
                                 "stop_sequence": None, "usage": usage}})
        if i == len(steps):
            break
        messages.append({"role": "assistant", "content": content})
        result = _tool_output(rng, kind, counter)
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_id, "content": result}
        if kind == "grep":
            block["content"] = [{"type": "text", "text": result}]
        messages.append({"role": "user", "content": [block]})
    return dump_lines(out)


def _anthropic_parts(content: list[dict[str, Any]]) -> list[Part]:
    _, _, msgs, _ = anthropic_request_to_parts({"messages": [{"role": "assistant", "content": content}]})
    return msgs[0].parts


def _tool_output(rng: random.Random, kind: str, counter: Counter) -> str:
    if kind == "pytest":
        return pytest_out(rng, 380, counter) + "\n1 failed, 41 passed in 1.84s"
    if kind == "pytest_ok":
        return f"{rng.randint(40, 120)} passed in {rng.uniform(1, 6):.2f}s"
    if kind == "grep":
        return "src/invoicer/tax.py:41:def total_with_vat(invoice: Invoice) -> Decimal:\n" \
               "src/invoicer/export_csv.py:18:from invoicer.tax import total_with_vat"
    if kind == "docs":
        return content.fill(content.doc_lines(rng), 220, counter.tokenizer.count)
    if kind == "edit":
        return "The file src/invoicer/tax.py has been edited. 1 replacement."
    return code(rng, "src/invoicer/tax.py", 700, counter)


# --- 3. canonical Responses API ---------------------------------------------------------------------------

RESPONSES_MODEL = "o4-mini"
RESPONSES_TOOLS = [
    {"type": "function", "name": "read_file", "description": "Read a file of the repository.", "strict": True,
     "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"],
                    "additionalProperties": False}},
    {"type": "function", "name": "run_tests", "description": "Run pytest on a path and return the output.",
     "strict": True,
     "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"],
                    "additionalProperties": False}},
    {"type": "function", "name": "apply_patch", "description": "Apply a unified diff to a file.", "strict": True,
     "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "patch": {"type": "string"}},
                    "required": ["path", "patch"], "additionalProperties": False}},
]
RESPONSES_INSTRUCTIONS = ("You are a coding agent in the invoicer repository. Use the tools to inspect and change "
                          "code; run the tests after each change; finish with a short summary.")


def responses_api() -> bytes:
    """A 7-call Responses API session (instructions, input items, function calls) in the canonical wrapper."""
    rng = random.Random(23)
    counter = counter_for(RESPONSES_MODEL, "openai")
    plan = [("run_tests", {"path": "tests/test_tax.py"}, "pytest"),
            ("read_file", {"path": "src/invoicer/tax.py"}, "code"),
            ("read_file", {"path": "tests/test_tax.py"}, "test"),
            ("apply_patch", {"path": "src/invoicer/tax.py", "patch": "@@ -44 +44 @@\n-    vat = (net * rate)"
                             ".quantize(CENT)\n+    vat = (net * rate).quantize(CENT, rounding=ROUND_HALF_UP)"},
             "patched"),
            ("run_tests", {"path": "tests/test_tax.py"}, "passed"),
            ("run_tests", {"path": "tests"}, "passed")]
    items: list[dict[str, Any]] = [{"type": "message", "role": "user",
                                    "content": [{"type": "input_text", "text": demo.TASK}]}]
    out: list[dict[str, Any]] = []
    ts = START + 3600
    prev_prefix = 0
    for i in range(len(plan) + 1):
        ts += rng.uniform(5, 15)
        request = {"model": RESPONSES_MODEL, "instructions": RESPONSES_INSTRUCTIONS, "input": json.loads(
            json.dumps(items)), "tools": RESPONSES_TOOLS, "max_output_tokens": 4096,
            "reasoning": {"effort": "medium"}, "store": False}
        system, tools, msgs, _ = responses_request_to_parts(request)
        prompt = (counter.system_tokens(system) + counter.tools_tokens(tools)
                  + sum(counter.message_tokens(m) for m in msgs) + REPLY_PRIMER)
        reasoning = rng.randint(64, 640)
        output: list[dict[str, Any]] = [{"type": "reasoning", "id": rid(rng, "rs_", 48, string.hexdigits[:16]),
                                         "summary": []}]
        if i < len(plan):
            name, args, kind = plan[i]
            call_id = rid(rng, "call_", 24)
            arguments = json.dumps(args, separators=(",", ":"))
            output.append({"type": "function_call", "id": rid(rng, "fc_", 48, string.hexdigits[:16]),
                           "call_id": call_id, "name": name, "arguments": arguments, "status": "completed"})
            visible = counter.part_tokens(Part("tool_call", arguments, name=name, call_id=call_id))
        else:
            text = ("Fixed the one-cent error: VAT is rounded half-up per line in src/invoicer/tax.py; "
                    "the tax and full test suites pass.")
            output.append({"type": "message", "id": rid(rng, "msg_", 48, string.hexdigits[:16]), "status": "completed",
                           "role": "assistant",
                           "content": [{"type": "output_text", "text": text, "annotations": []}]})
            visible = counter.tokenizer.count(text)
        hit = cached(prev_prefix, prompt)
        prev_prefix = prompt - REPLY_PRIMER
        out.append({"timestamp": iso(ts), "session": "responses-sample", "request": request, "response": {
            "id": rid(rng, "resp_", 48, string.hexdigits[:16]), "object": "response", "created_at": int(ts),
            "status": "completed", "model": "o4-mini-2025-04-16", "output": output,
            "usage": {"input_tokens": prompt, "input_tokens_details": {"cached_tokens": hit},
                      "output_tokens": visible + reasoning,
                      "output_tokens_details": {"reasoning_tokens": reasoning},
                      "total_tokens": prompt + visible + reasoning}}})
        if i == len(plan):
            break
        items.append({"type": "function_call", "call_id": call_id, "name": name, "arguments": arguments})
        result = {"pytest": pytest_out(rng, 300, counter) + "\n1 failed, 41 passed in 1.2s",
                  "code": code(rng, "src/invoicer/tax.py", 600, counter),
                  "test": code(rng, "tests/test_tax.py", 400, counter),
                  "patched": "Patch applied: 1 hunk.",
                  "passed": f"{rng.randint(40, 120)} passed in {rng.uniform(1, 6):.2f}s"}[kind]
        items.append({"type": "function_call_output", "call_id": call_id, "output": result})
    return dump_lines(out)


# --- 4. Claude Code transcript ----------------------------------------------------------------------------

CC_MODEL = "claude-sonnet-4-20250514"
CC_VERSION = "1.0.108"


class _ClaudeCode:
    """Builds a Claude Code v1.0.x transcript: envelope fields, parent chains, split assistant lines."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.counter = counter_for(CC_MODEL, "anthropic")
        self.session = ruuid(rng)
        self.lines: list[dict[str, Any]] = []
        self.ts = START + 7200
        # Per context: the last uuid of the chain, the visible history (for the synthetic usage), the unlogged
        # overhead and the previous prompt (cache prefix).
        self.ctx: dict[str, dict[str, Any]] = {}

    def context(self, name: str, unlogged: int) -> dict[str, Any]:
        return self.ctx.setdefault(name, {"last": None, "history": [], "unlogged": unlogged, "prev": 0})

    def _env(self, ctx: str, parent: str | None) -> dict[str, Any]:
        return {"parentUuid": parent, "isSidechain": ctx != "main", "userType": "external",
                "cwd": "/home/dev/projects/invoicer", "sessionId": self.session, "version": CC_VERSION,
                "gitBranch": "fix/vat-rounding"}

    def tick(self, lo: float = 0.4, hi: float = 6.0) -> str:
        self.ts += self.rng.uniform(lo, hi)
        return iso(self.ts)

    def user(self, ctx: str, content: Any, *, root: bool = False, extra: dict[str, Any] | None = None,
             tool_result: Any = None) -> str:
        c = self.ctx[ctx]
        uid = ruuid(self.rng)
        line = self._env(ctx, None if root else c["last"])
        line.update({"type": "user", "message": {"role": "user", "content": content}, "uuid": uid,
                     "timestamp": self.tick()})
        if tool_result is not None:
            line["toolUseResult"] = tool_result
        line.update(extra or {})
        self.lines.append(line)
        c["last"] = uid
        c["history"].append(Message("user", _cc_parts(content)))
        return uid

    def assistant(self, ctx: str, blocks: list[dict[str, Any]]) -> None:
        """One API call: one line per content block, same message.id and requestId, usage on each line."""
        c = self.ctx[ctx]
        hist = sum(self.counter.message_tokens(m) for m in c["history"])
        prompt = c["unlogged"] + hist + REPLY_PRIMER
        output = sum(self.counter.part_tokens(p) for p in _cc_parts(blocks))
        read = c["prev"] if c["prev"] else min(c["unlogged"], prompt)
        usage_base = {"input_tokens": REPLY_PRIMER, "cache_creation_input_tokens": prompt - REPLY_PRIMER - read,
                      "cache_read_input_tokens": read,
                      "cache_creation": {"ephemeral_5m_input_tokens": prompt - REPLY_PRIMER - read,
                                         "ephemeral_1h_input_tokens": 0}}
        c["prev"] = prompt - REPLY_PRIMER
        msg_id, req_id = rid(self.rng, "msg_01", 22), rid(self.rng, "req_011C", 18)
        for k, block in enumerate(blocks):
            final = k == len(blocks) - 1
            uid = ruuid(self.rng)
            line = self._env(ctx, c["last"])
            usage = dict(usage_base, output_tokens=output if final else self.rng.choice((3, 8, 10)),
                         service_tier="standard")
            line.update({"message": {"id": msg_id, "type": "message", "role": "assistant", "model": CC_MODEL,
                                     "content": [block], "stop_reason": None, "stop_sequence": None,
                                     "usage": usage},
                         "requestId": req_id, "type": "assistant", "uuid": uid,
                         "timestamp": self.tick(0.2, 2.5)})
            self.lines.append(line)
            c["last"] = uid
        c["history"].append(Message("assistant", _cc_parts(blocks)))

    def tool_use(self, name: str, inp: dict[str, Any]) -> dict[str, Any]:
        return {"type": "tool_use", "id": rid(self.rng, "toolu_01", 22), "name": name, "input": inp}


def _cc_parts(content: Any) -> list[Part]:
    _, _, msgs, _ = anthropic_request_to_parts({"messages": [{"role": "user", "content": content}]})
    return msgs[0].parts if msgs else []


def claude_code() -> bytes:
    """A Claude Code v1.0.x session: split assistant lines, a Task sidechain, a manual /compact."""
    rng = random.Random(31)
    cc = _ClaudeCode(rng)
    tok = cc.counter.tokenizer.count
    cc.context("main", CLAUDE_CODE_UNLOGGED)
    cc.user("main", demo.TASK, root=True)

    def result(tool: dict[str, Any], text: str, ui: dict[str, Any]) -> None:
        cc.user("main", [{"tool_use_id": tool["id"], "type": "tool_result", "content": text}], tool_result=ui)

    t = cc.tool_use("Bash", {"command": "python -m pytest -x -q tests/test_tax.py",
                             "description": "Run the failing tax tests"})
    cc.assistant("main", [{"type": "thinking", "thinking": "The user reports a one-cent error in multi-line VAT "
                           "totals. Reproduce it first, then find where rounding happens.",
                           "signature": rid(rng, "Eu", 120, _ALNUM + "+/")},
                          {"type": "text", "text": "I'll reproduce the failure first."}, t])
    out = pytest_out(rng, 420, cc.counter)
    result(t, out, {"stdout": out, "stderr": "", "interrupted": False, "isImage": False})

    t = cc.tool_use("Grep", {"pattern": "quantize\\(", "path": "src/invoicer", "output_mode": "content", "-n": True})
    cc.assistant("main", [t])
    hits = content.fill(content.grep_lines(rng, "quantize"), 260, tok)
    result(t, hits, {"mode": "content", "numFiles": 4, "filenames": [], "content": hits,
                     "numLines": hits.count("\n") + 1})

    for path, size in (("src/invoicer/tax.py", 1500), ("src/invoicer/models.py", 1300)):
        t = cc.tool_use("Read", {"file_path": f"/home/dev/projects/invoicer/{path}"})
        cc.assistant("main", [{"type": "text", "text": f"Reading {path}."}, t])
        body = code(rng, path, size, cc.counter)
        n = body.count("\n") + 1
        result(t, body, {"type": "text", "file": {"filePath": f"/home/dev/projects/invoicer/{path}",
                                                  "content": body, "numLines": n, "startLine": 1, "totalLines": n}})

    # A Task subagent: an inline sidechain (v1.0.x), its own root, its own calls.
    prompt = ("Find every place in /home/dev/projects/invoicer where money is rounded (quantize, round(), "
              "format with 2 decimals) and report file:line with the rounding mode. Do not change anything.")
    task = cc.tool_use("Task", {"description": "Survey rounding call sites", "prompt": prompt,
                                "subagent_type": "general-purpose"})
    cc.assistant("main", [{"type": "text", "text": "I'll have a subagent survey every rounding call site."}, task])
    cc.context("side", CLAUDE_CODE_SUBAGENT_UNLOGGED)
    cc.user("side", prompt, root=True)
    for pattern in ("quantize\\(", "round\\("):
        st = cc.tool_use("Grep", {"pattern": pattern, "path": "/home/dev/projects/invoicer",
                                  "output_mode": "content", "-n": True})
        cc.assistant("side", [{"type": "text", "text": f"Searching for {pattern}."}, st])
        hits = content.fill(content.grep_lines(rng, pattern), 300, tok)
        cc.user("side", [{"tool_use_id": st["id"], "type": "tool_result", "content": hits}],
                tool_result={"mode": "content", "numFiles": 5, "filenames": [], "content": hits,
                             "numLines": hits.count("\n") + 1})
    summary = ("Rounding call sites: tax.py:44 rounds the VAT of the *sum* (ROUND_HALF_EVEN); models.py:88 and "
               "export_csv.py:31 round per line (ROUND_HALF_UP); currency.py:12 uses round() on a float.")
    cc.assistant("side", [{"type": "text", "text": summary}])
    result(task, summary, {"content": [{"type": "text", "text": summary}], "totalDurationMs": 41230,
                           "totalTokens": 11874, "totalToolUseCount": 2})

    t = cc.tool_use("Edit", {"file_path": "/home/dev/projects/invoicer/src/invoicer/tax.py",
                             "old_string": "vat = sum(l.net * l.rate for l in lines).quantize(CENT)",
                             "new_string": "vat = sum(((l.net * l.rate).quantize(CENT, ROUND_HALF_UP) "
                                           "for l in lines), Decimal(0))"})
    cc.assistant("main", [{"type": "text", "text": "tax.py rounds the sum; the rule is per line. Fixing it."}, t])
    result(t, "The file /home/dev/projects/invoicer/src/invoicer/tax.py has been updated.",
           {"filePath": "/home/dev/projects/invoicer/src/invoicer/tax.py", "oldString": t["input"]["old_string"],
            "newString": t["input"]["new_string"], "replaceAll": False, "userModified": False})
    t = cc.tool_use("Bash", {"command": "python -m pytest -q", "description": "Run the whole suite"})
    cc.assistant("main", [t])
    out = pytest_out(rng, 900, cc.counter)
    result(t, out, {"stdout": out, "stderr": "", "interrupted": False, "isImage": False})
    cc.assistant("main", [{"type": "text", "text": "The tax tests pass now; two CSV tests still fail because "
                           "currency.py rounds a float. Shall I switch it to Decimal?"}])

    # The user compacts manually: command line, boundary (parentUuid null), summary.
    main = cc.ctx["main"]
    pre = main["unlogged"] + sum(cc.counter.message_tokens(m) for m in main["history"]) + REPLY_PRIMER
    cc.user("main", "<command-name>/compact</command-name>\n            <command-message>compact</command-message>"
                    "\n            <command-args></command-args>")
    boundary = ruuid(rng)
    line = cc._env("main", None)
    line.update({"logicalParentUuid": main["last"], "type": "system", "subtype": "compact_boundary",
                 "content": "Conversation compacted", "isMeta": False, "timestamp": cc.tick(20, 40),
                 "uuid": boundary, "level": "info", "compactMetadata": {"trigger": "manual", "preTokens": pre}})
    cc.lines.append(line)
    main["last"] = boundary
    main["history"] = []
    main["prev"] = 0
    cc.user("main", "This session is being continued from a previous conversation that ran out of context. The "
                    "summary below covers the earlier portion of the conversation.\n\nAnalysis:\nThe user asked to "
                    "fix a one-cent VAT error on multi-line invoices. tax.py rounded the VAT of the sum; it now "
                    "rounds per line (ROUND_HALF_UP), per docs/rounding.md. A subagent listed the rounding call "
                    "sites: currency.py:12 still uses round() on a float, which breaks two CSV export tests.\n\n"
                    "Pending: switch currency.py to Decimal and re-run the suite.",
            extra={"isVisibleInTranscriptOnly": True, "isCompactSummary": True})
    cc.user("main", "Yes, switch currency.py to Decimal.")
    t = cc.tool_use("Read", {"file_path": "/home/dev/projects/invoicer/src/invoicer/currency.py"})
    cc.assistant("main", [t])
    body = code(rng, "src/invoicer/currency.py", 500, cc.counter)
    n = body.count("\n") + 1
    result(t, body, {"type": "text", "file": {"filePath": "/home/dev/projects/invoicer/src/invoicer/currency.py",
                                              "content": body, "numLines": n, "startLine": 1, "totalLines": n}})
    t = cc.tool_use("Bash", {"command": "python -m pytest -q", "description": "Run the whole suite"})
    cc.assistant("main", [{"type": "text", "text": "Switched to Decimal; running the suite."}, t])
    result(t, "118 passed in 3.91s", {"stdout": "118 passed in 3.91s", "stderr": "", "interrupted": False,
                                      "isImage": False})
    cc.assistant("main", [{"type": "text", "text": "All 118 tests pass."}])
    head = {"type": "summary", "summary": "Fix VAT rounding on multi-line invoices", "leafUuid": main["last"]}
    return dump_lines([head, *cc.lines])


# --- 5. Codex rollout -------------------------------------------------------------------------------------

CODEX_MODEL = "gpt-5.1-codex"


def codex_rollout() -> bytes:
    """A Codex CLI rollout: session_meta, turn_context, response_item, duplicated token_count, compaction."""
    rng = random.Random(47)
    counter = counter_for(CODEX_MODEL, "openai")
    ts = START + 10_800
    sid = ruuid7(rng, ts)
    lines: list[dict[str, Any]] = []
    history: list[int] = []  # tokens of each item of the live history, framing included
    cwd = "/home/dev/projects/invoicer"
    rate = {"primary": {"used_percent": 12.0, "window_minutes": 300, "resets_at": int(START) + 14_000},
            "secondary": {"used_percent": 31.0, "window_minutes": 10080, "resets_at": int(START) + 400_000}}
    total = {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0, "reasoning_output_tokens": 0,
             "total_tokens": 0}
    last: dict[str, int] | None = None
    prev_prefix = 0

    def emit(typ: str, payload: dict[str, Any], dt: float = 0.05) -> None:
        nonlocal ts
        ts += dt
        lines.append({"timestamp": iso(ts), "type": typ, "payload": payload})

    def item(payload: dict[str, Any], msg: Message | None) -> None:
        emit("response_item", payload)
        if msg is not None:
            history.append(counter.message_tokens(msg))

    def token_count() -> None:
        info = None if last is None else {"total_token_usage": dict(total), "last_token_usage": dict(last),
                                          "model_context_window": CODEX_WINDOW}
        emit("event_msg", {"type": "token_count", "info": info, "rate_limits": rate})

    def sample(out_tokens: int, reasoning: int) -> None:
        """Account one model sampling over the current history: new last/total usage."""
        nonlocal last, prev_prefix
        inp = CODEX_UNLOGGED + sum(history) + REPLY_PRIMER
        hit = cached(prev_prefix, inp)
        prev_prefix = inp - REPLY_PRIMER
        last = {"input_tokens": inp, "cached_input_tokens": hit, "output_tokens": out_tokens + reasoning,
                "reasoning_output_tokens": reasoning, "total_tokens": inp + out_tokens + reasoning}
        for k in total:
            total[k] += last[k]

    emit("session_meta", {"id": sid, "timestamp": iso(ts), "cwd": cwd, "originator": "codex_cli_rs",
                          "cli_version": "0.58.0", "instructions": None, "source": "cli", "model_provider": "openai",
                          "git": {"commit_hash": rid(rng, "", 40, "0123456789abcdef"), "branch": "main",
                                  "repository_url": "git@example.com:dev/invoicer.git"}})
    env = (f"<environment_context>\n  <cwd>{cwd}</cwd>\n  <approval_policy>on-request</approval_policy>\n  "
           "<sandbox_mode>workspace-write</sandbox_mode>\n  <network_access>restricted</network_access>\n  "
           "<shell>bash</shell>\n</environment_context>")
    agents = (f"# AGENTS.md instructions for {cwd}\n\n<INSTRUCTIONS>\nMoney is Decimal, never float. Run "
              "`python -m pytest -q` after every change. Keep patches minimal.\n</INSTRUCTIONS>")
    for text in (agents, env):
        item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]},
             Message("user", [Part("text", text)]))
    emit("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": demo.TASK}]},
         dt=12.0)
    history.append(counter.message_tokens(Message("user", [Part("text", demo.TASK)])))
    emit("event_msg", {"type": "user_message", "message": demo.TASK, "images": []})

    turn = {"cwd": cwd, "approval_policy": "on-request",
            "sandbox_policy": {"mode": "workspace-write", "network_access": False, "exclude_tmpdir_env_var": False,
                               "exclude_slash_tmp": False},
            "model": CODEX_MODEL, "effort": "medium", "summary": "auto"}
    commands = [("Running the tax tests", ["bash", "-lc", "python -m pytest -q tests/test_tax.py"], "pytest", 500),
                ("Locating VAT rounding", ["bash", "-lc", "rg -n 'quantize\\(' src/invoicer"], "grep", 300),
                ("Reading tax module", ["bash", "-lc", "sed -n 1,160p src/invoicer/tax.py"], "code", 1600),
                ("Reading models", ["bash", "-lc", "sed -n 1,140p src/invoicer/models.py"], "code", 1400),
                ("Patching rounding", ["apply_patch", "*** Begin Patch\n*** Update File: src/invoicer/tax.py\n@@\n-"
                                       "    vat = sum(l.net * l.rate for l in lines).quantize(CENT)\n+    vat = sum("
                                       "((l.net * l.rate).quantize(CENT, ROUND_HALF_UP) for l in lines), Decimal(0))"
                                       "\n*** End Patch"], "patch", 20),
                ("Re-running tests", ["bash", "-lc", "python -m pytest -q"], "pytest", 600)]

    def sampling(title: str, cmd: list[str] | None, kind: str = "", size: int = 0, answer: str = "") -> None:
        emit("turn_context", turn, dt=rng.uniform(0.5, 3))
        token_count()  # the repeat of the previous total (Codex writes every value twice)
        emit("event_msg", {"type": "agent_reasoning", "text": f"**{title}**"}, dt=rng.uniform(1, 4))
        reasoning = rng.randint(0, 6) * 64
        if cmd is not None:
            args = json.dumps({"command": cmd, "workdir": cwd}, separators=(",", ":"))
            out_tok = counter.part_tokens(Part("tool_call", args, name="shell"))
        else:
            out_tok = counter.tokenizer.count(answer)
        sample(out_tok, reasoning)
        token_count()
        item({"type": "reasoning", "summary": [{"type": "summary_text", "text": f"**{title}**"}], "content": None,
              "encrypted_content": rid(rng, "gAAAAAB", 320, _ALNUM + "-_")}, None)
        # The encrypted reasoning is re-sent on later calls and billed as input: its size is the reasoning
        # tokens reported when it was produced (or its summary's, if larger).
        history.append(counter.per_message + max(reasoning, counter.tokenizer.count(f"**{title}**")))
        if cmd is None:
            item({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": answer}]},
                 Message("assistant", [Part("text", answer)]))
            emit("event_msg", {"type": "agent_message", "message": answer})
            return
        cid = rid(rng, "call_", 24)
        item({"type": "function_call", "name": "shell", "arguments": args, "call_id": cid},
             Message("assistant", [Part("tool_call", args, name="shell", call_id=cid)]))
        text = {"pytest": lambda: pytest_out(rng, size, counter),
                "grep": lambda: content.fill(content.grep_lines(rng, "quantize"), size, counter.tokenizer.count),
                "code": lambda: code(rng, "src/invoicer/tax.py", size, counter),
                "patch": lambda: "Success. Updated the following files:\nM src/invoicer/tax.py\n"}[kind]()
        output = json.dumps({"output": text, "metadata": {"exit_code": 0 if kind != "pytest" else 1,
                                                          "duration_seconds": round(rng.uniform(0.0, 4.0), 1)}})
        item({"type": "function_call_output", "call_id": cid, "output": output},
             Message("tool", [Part("tool_result", output, call_id=cid)]))

    token_count()  # the first token_count of a session has info null (rate limits only)
    for title, cmd, kind, size in commands:
        sampling(title, cmd, kind, size)
    sampling("Summarizing the fix", None, answer="Fixed: VAT is rounded per line before summing "
             "(src/invoicer/tax.py). Two CSV tests still fail: currency.py rounds a float.")

    # The user runs /compact: a summarization sampling, then the compacted record and its event.
    emit("event_msg", {"type": "user_message", "message": "/compact", "images": []}, dt=40)
    emit("turn_context", turn)
    token_count()
    summary = ("The user asked to fix a one-cent VAT error on multi-line invoices. VAT is now rounded per line in "
               "src/invoicer/tax.py (ROUND_HALF_UP). Remaining: currency.py rounds a float, breaking two CSV tests.")
    sample(counter.tokenizer.count(summary), 128)
    token_count()
    kept = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": t}]}
            for t in (agents, env, demo.TASK)]
    bridge = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": summary}]}
    emit("compacted", {"message": summary, "replacement_history": [*kept, bridge]}, dt=6)
    emit("event_msg", {"type": "context_compacted"})
    history[:] = [counter.message_tokens(Message("user", [Part("text", t)])) for t in (agents, env, demo.TASK,
                                                                                       summary)]
    prev_prefix = 0

    follow = "Please switch currency.py to Decimal too."
    emit("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": follow}]},
         dt=20)
    history.append(counter.message_tokens(Message("user", [Part("text", follow)])))
    emit("event_msg", {"type": "user_message", "message": follow, "images": []})
    sampling("Reading currency module", ["bash", "-lc", "sed -n 1,80p src/invoicer/currency.py"], "code", 700)
    sampling("Running the suite", ["bash", "-lc", "python -m pytest -q"], "pytest", 200)
    sampling("Done", None, answer="currency.py now uses Decimal; all 118 tests pass.")
    return dump_lines(lines)


# --- 6. OpenAI Batch input + output ----------------------------------------------------------------------

BATCH_SYSTEM = ("You triage support tickets for an invoicing product. Reply with JSON only: "
                '{"category": "billing" | "bug" | "how-to" | "other", "urgent": true | false, '
                '"summary": "<at most 12 words>"}')
TICKETS = [
    "My invoice INV-2024-00311 shows a VAT total one cent higher than the sum of the lines.",
    "How do I export all credit notes from last quarter as CSV?",
    "The API returns 500 when I create an invoice with 40 lines.",
    "Please change the billing e-mail on our account to accounts@example.com.",
    "Totals in the PDF and in the CSV export differ for invoices in CHF.",
    "Is there a way to set the default payment term to 45 days?",
    "We were charged twice for September.",
    "The customer search does not find names with accents (e.g. Müller).",
    "Can I add a second VAT rate on one line?",
    "After the update the CLI prints a traceback on `invoicer export --since 2024-01-01`.",
    "Where do I find the API rate limits?",
    "Urgent: invoices issued today all show the date 1970-01-01.",
]


def openai_batch() -> tuple[bytes, bytes]:
    """An OpenAI Batch input file and its output file (output in a different order, as the docs warn)."""
    rng = random.Random(59)
    counter = counter_for("gpt-4o-mini", "openai")
    inputs, outputs = [], []
    for k, ticket in enumerate(TICKETS):
        cid = f"ticket-{1040 + k}"
        body = {"model": "gpt-4o-mini", "messages": [{"role": "system", "content": BATCH_SYSTEM},
                                                     {"role": "user", "content": ticket}],
                "max_tokens": 100, "temperature": 0.0, "response_format": {"type": "json_object"}}
        inputs.append({"custom_id": cid, "method": "POST", "url": "/v1/chat/completions", "body": body})
        category = rng.choice(("billing", "bug", "how-to", "other"))
        answer = json.dumps({"category": category, "urgent": "rgent" in ticket or "twice" in ticket,
                             "summary": " ".join(ticket.split()[:8]).rstrip(".,")})
        prompt = sum(4 + counter.tokenizer.count(m["content"]) for m in body["messages"]) + REPLY_PRIMER
        completion = counter.tokenizer.count(answer)
        outputs.append({"id": rid(rng, "batch_req_", 32, "0123456789abcdef"), "custom_id": cid, "response": {
            "status_code": 200, "request_id": rid(rng, "", 32, "0123456789abcdef"), "body": {
                "id": rid(rng, "chatcmpl-", 29), "object": "chat.completion", "created": int(START) + 86_400 + k,
                "model": "gpt-4o-mini-2024-07-18",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": answer, "refusal": None,
                                                     "annotations": []},
                             "logprobs": None, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                          "total_tokens": prompt + completion,
                          "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
                          "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                                        "accepted_prediction_tokens": 0,
                                                        "rejected_prediction_tokens": 0}},
                "service_tier": "default", "system_fingerprint": "fp_" + rid(rng, "", 10, "0123456789abcdef")}},
            "error": None})
    rng.shuffle(outputs)
    return dump_lines(inputs), dump_lines(outputs)


# --- 7. Anthropic Message Batches ------------------------------------------------------------------------

def anthropic_batch() -> tuple[bytes, bytes]:
    """An Anthropic batch request file and its results file (one errored, one expired; no final newline)."""
    rng = random.Random(67)
    model = "claude-3-5-haiku-20241022"
    counter = counter_for(model, "anthropic")
    system = "You triage support tickets for an invoicing product. Reply with one line: category, then a summary."
    requests, results = [], []
    for k, ticket in enumerate(TICKETS[:10]):
        cid = f"triage-{k:03d}"
        params = {"model": model, "max_tokens": 256, "system": system,
                  "messages": [{"role": "user", "content": ticket}]}
        requests.append({"custom_id": cid, "params": params})
        if k == 4:
            results.append({"custom_id": cid, "result": {"type": "errored", "error": {"type": "error", "error": {
                "type": "invalid_request_error", "message": "max_tokens: 256 > 0 is required"}}}})
            continue
        if k == 7:
            results.append({"custom_id": cid, "result": {"type": "expired"}})
            continue
        text = f"{rng.choice(('billing', 'bug', 'how-to'))}: {' '.join(ticket.split()[:9]).rstrip('.,')}"
        sys_parts, _, msgs, _ = anthropic_request_to_parts(params)
        prompt = counter.system_tokens(sys_parts) + sum(counter.message_tokens(m) for m in msgs) + REPLY_PRIMER
        results.append({"custom_id": cid, "result": {"type": "succeeded", "message": {
            "id": rid(rng, "msg_01", 22), "type": "message", "role": "assistant", "model": model,
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": prompt, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
                      "output_tokens": counter.tokenizer.count(text)}}}})
    rng.shuffle(results)
    return dump_lines(requests), dump_lines(results, final_newline=False)


# --- 8. Gemini usageMetadata -----------------------------------------------------------------------------

def gemini_usage() -> bytes:
    """Gemini generateContent responses (batch-style lines): candidates + usageMetadata + modelVersion."""
    rng = random.Random(73)
    counter = counter_for("gemini-2.5-flash", "google")
    out = []
    preamble = BATCH_SYSTEM
    for k, ticket in enumerate(TICKETS[:10]):
        text = json.dumps({"category": rng.choice(("billing", "bug", "how-to", "other")),
                           "urgent": "rgent" in ticket, "summary": " ".join(ticket.split()[:7]).rstrip(".,")})
        prompt = counter.tokenizer.count(preamble) + counter.tokenizer.count(ticket) + 4
        cand = counter.tokenizer.count(text)
        thoughts = rng.randint(80, 900)
        usage: dict[str, Any] = {"promptTokenCount": prompt, "candidatesTokenCount": cand,
                                 "totalTokenCount": prompt + cand + thoughts,
                                 "promptTokensDetails": [{"modality": "TEXT", "tokenCount": prompt}],
                                 "thoughtsTokenCount": thoughts}
        if k >= 5:  # later requests hit an explicit context cache holding the preamble (a subset of the prompt)
            usage["cachedContentTokenCount"] = counter.tokenizer.count(preamble)
            usage["cacheTokensDetails"] = [{"modality": "TEXT", "tokenCount": usage["cachedContentTokenCount"]}]
        out.append({"custom_id": f"ticket-{2000 + k}", "candidates": [{
            "content": {"parts": [{"text": text}], "role": "model"}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": usage, "modelVersion": "gemini-2.5-flash"})
    return dump_lines(out)


# --- 9. claude-trace HTTP captures ------------------------------------------------------------------------

TRACE_HEADERS = {"host": "api.anthropic.com", "Accept": "application/json", "anthropic-version": "2023-06-01",
                 "authorization": "Bearer REDACTED", "x-app": "cli", "User-Agent": "claude-cli/1.0.6 (external, cli)",
                 "content-type": "application/json"}


def _sse(msg_id: str, model: str, usage: dict[str, int], content: list[dict[str, Any]], stop: str,
         output_tokens: int) -> str:
    """An Anthropic streaming response as claude-trace saves it in ``body_raw``."""
    events: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": {
        "id": msg_id, "type": "message", "role": "assistant", "model": model, "content": [], "stop_reason": None,
        "stop_sequence": None, "usage": {**usage, "output_tokens": 2, "service_tier": "standard"}}})]
    for i, block in enumerate(content):
        if block["type"] == "text":
            events.append(("content_block_start", {"type": "content_block_start", "index": i,
                                                   "content_block": {"type": "text", "text": ""}}))
            words = block["text"].split(" ")
            for k in range(0, len(words), 6):
                chunk = " ".join(words[k:k + 6]) + (" " if k + 6 < len(words) else "")
                events.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                                                       "delta": {"type": "text_delta", "text": chunk}}))
        else:
            events.append(("content_block_start", {"type": "content_block_start", "index": i, "content_block": {
                "type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}}))
            events.append(("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {
                "type": "input_json_delta", "partial_json": json.dumps(block["input"])}}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    events.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                     "usage": {"output_tokens": output_tokens}}))
    events.append(("message_stop", {"type": "message_stop"}))
    return "".join(f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n" for name, data in events)


def claude_trace() -> bytes:
    """claude-trace captures: a quota probe, a streamed topic call, streamed agent calls, one non-streamed call."""
    rng = random.Random(83)
    sonnet, haiku = "claude-sonnet-4-20250514", "claude-3-5-haiku-20241022"
    counter = counter_for(sonnet, "anthropic")
    ts = START + 14_400
    out: list[dict[str, Any]] = []

    def exchange(body: dict[str, Any], response: dict[str, Any]) -> None:
        nonlocal ts
        ts += rng.uniform(0.3, 2.0)
        t0 = ts
        ts += rng.uniform(0.6, 7.0)
        out.append({"request": {"timestamp": round(t0, 6), "method": "POST",
                                "url": "https://api.anthropic.com/v1/messages?beta=true", "headers": TRACE_HEADERS,
                                "body": body},
                    "response": {"timestamp": round(ts, 6), "status_code": 200,
                                 "headers": {"Content-Type": ("application/json" if response.get("body")
                                                              else "text/event-stream"),
                                             "request-id": rid(rng, "req_011C", 18)}, **response},
                    "logged_at": datetime.fromtimestamp(ts, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")})

    def prompt_of(body: dict[str, Any]) -> int:
        system, tools, msgs, _ = anthropic_request_to_parts(body)
        return (counter.system_tokens(system) + counter.tools_tokens(tools)
                + sum(counter.message_tokens(m) for m in msgs) + REPLY_PRIMER)

    meta = {"user_id": "REDACTED_USER_ID"}
    probe = {"model": haiku, "max_tokens": 1, "messages": [{"role": "user", "content": "quota"}], "metadata": meta}
    exchange(probe, {"body": {"id": rid(rng, "msg_01", 22), "type": "message", "role": "assistant", "model": haiku,
                              "content": [{"type": "text", "text": "#"}], "stop_reason": "max_tokens",
                              "stop_sequence": None,
                              "usage": {"input_tokens": prompt_of(probe), "cache_creation_input_tokens": 0,
                                        "cache_read_input_tokens": 0, "output_tokens": 1}}})
    topic = {"model": haiku, "max_tokens": 512, "stream": True, "metadata": meta, "temperature": 0,
             "system": [{"type": "text", "text": "Analyze if this message indicates a new conversation topic. "
                         "Format your response as a JSON object with two fields: 'isNewTopic' and 'title'."}],
             "messages": [{"role": "user", "content": demo.TASK}]}
    title = '{"isNewTopic": true, "title": "VAT rounding fix"}'
    exchange(topic, {"body": None, "body_raw": _sse(rid(rng, "msg_01", 22), haiku, {
        "input_tokens": prompt_of(topic), "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
        [{"type": "text", "text": title}], "end_turn", counter.tokenizer.count(title))})

    system = [{"type": "text", "text": "You are Claude Code, Anthropic's official CLI for Claude.",
               "cache_control": {"type": "ephemeral"}},
              {"type": "text", "text": demo.system_prompt(True).split("Rules:")[0].strip()
               + "\n\nUse the tools to inspect and change the repository. Be concise.",
               "cache_control": {"type": "ephemeral"}}]
    tools = [{"name": t["function"]["name"], "description": t["function"]["description"],
              "input_schema": t["function"]["parameters"]} for t in demo.tool_schemas(True)[:6]]
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"type": "text", "text": demo.TASK}]}]
    steps = [("I'll reproduce the failure first.", "run_tests", {"path": "tests/test_tax.py"}, "pytest"),
             ("Let me read the tax module.", "read_file", {"path": "src/invoicer/tax.py"}, "code"),
             ("The VAT is rounded on the sum. Fixing it to round per line.", "apply_patch",
              {"path": "src/invoicer/tax.py", "patch": "@@ -44 +44 @@"}, "patch"),
             ("Re-running the tests.", "run_tests", {"path": "tests"}, "ok")]
    prev = 0
    for i in range(len(steps) + 1):
        body = {"model": sonnet, "max_tokens": 32000, "temperature": 1, "system": system, "tools": tools,
                "messages": json.loads(json.dumps(messages)), "metadata": meta, "stream": i != 2}
        prompt = prompt_of(body)
        usage = {"input_tokens": 4, "cache_creation_input_tokens": prompt - 4 - prev,
                 "cache_read_input_tokens": prev}
        prev = prompt - 4
        if i < len(steps):
            text, tool, args, kind = steps[i]
            block = {"type": "tool_use", "id": rid(rng, "toolu_01", 22), "name": tool, "input": args}
            content, stop = [{"type": "text", "text": text}, block], "tool_use"
        else:
            content, stop = [{"type": "text", "text": "Fixed: VAT is rounded per line; all tests pass."}], "end_turn"
        output = sum(counter.part_tokens(p) for p in _anthropic_parts(content))
        msg_id = rid(rng, "msg_01", 22)
        if body["stream"]:
            exchange(body, {"body": None, "body_raw": _sse(msg_id, sonnet, usage, content, stop, output)})
        else:
            exchange(body, {"body": {"id": msg_id, "type": "message", "role": "assistant", "model": sonnet,
                                     "content": content, "stop_reason": stop, "stop_sequence": None,
                                     "usage": {**usage, "output_tokens": output, "service_tier": "standard"}}})
        if i == len(steps):
            break
        messages.append({"role": "assistant", "content": content})
        result = {"pytest": lambda: pytest_out(rng, 350, counter), "code": lambda: code(rng, "src/invoicer/tax.py",
                                                                                         900, counter),
                  "patch": lambda: "Patch applied: 1 hunk.", "ok": lambda: "118 passed in 3.91s"}[kind]()
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": block["id"],
                                                      "content": result}]})
    return dump_lines(out)


# --- 10. Gemini CLI chat recording (JSONL) ----------------------------------------------------------------

#: Tokens of Gemini CLI's system prompt + tool declarations, which the recording does not hold (the derived
#: fixture's first call reports 11,855 input tokens for a one-line prompt).
GEMINI_CLI_UNLOGGED = 11_790


def gemini_cli() -> bytes:
    """A Gemini CLI (>= 0.40) JSONL chat recording: header, messages with tokens and toolCalls, $set patches."""
    rng = random.Random(97)
    model = "gemini-2.5-flash"
    counter = counter_for(model, "google")
    ts = START + 18_000
    lines: list[dict[str, Any]] = []
    history = 0  # estimated tokens of the recorded conversation so far
    sid = ruuid(rng)
    lines.append({"sessionId": sid, "projectHash": rid(rng, "", 64, "0123456789abcdef"), "startTime": iso(ts),
                  "lastUpdated": iso(ts), "kind": "main"})
    ts += 8
    lines.append({"id": ruuid(rng), "timestamp": iso(ts), "type": "user", "content": [{"text": demo.TASK}]})
    lines.append({"$set": {"lastUpdated": iso(ts)}})
    history += 4 + counter.tokenizer.count(demo.TASK)
    steps = [("run_shell_command", {"command": "python -m pytest -q tests/test_tax.py",
                                    "description": "Run the tax tests."}, "pytest"),
             ("read_file", {"absolute_path": "/home/dev/projects/invoicer/src/invoicer/tax.py"}, "code"),
             ("replace", {"file_path": "/home/dev/projects/invoicer/src/invoicer/tax.py",
                          "old_string": "vat = sum(l.net * l.rate for l in lines).quantize(CENT)",
                          "new_string": "vat = sum(((l.net * l.rate).quantize(CENT, ROUND_HALF_UP) for l in lines), "
                                        "Decimal(0))"}, "edit"),
             ("run_shell_command", {"command": "python -m pytest -q", "description": "Run all tests."}, "ok")]
    prev = 0
    for i in range(len(steps) + 1):
        ts += rng.uniform(3, 12)
        inp = GEMINI_CLI_UNLOGGED + history + REPLY_PRIMER
        thoughts = rng.randint(0, 5) * 97
        cached_n = (prev // 1024) * 1024 if prev >= 4096 else 0  # implicit caching reuses the earlier prefix
        prev = inp
        msg: dict[str, Any] = {"id": ruuid(rng), "timestamp": iso(ts), "type": "gemini"}
        if i < len(steps):
            name, args, kind = steps[i]
            result = {"pytest": lambda: pytest_out(rng, 420, counter),
                      "code": lambda: code(rng, "src/invoicer/tax.py", 1100, counter),
                      "edit": lambda: "Successfully modified file: /home/dev/projects/invoicer/src/invoicer/tax.py "
                                      "(1 replacements).",
                      "ok": lambda: "118 passed in 3.91s"}[kind]()
            call_id = f"{name}-{int(ts * 1000)}-{rid(rng, '', 12, '0123456789abcdef')}"
            call_part = Part("tool_call", json.dumps(args, separators=(",", ":"), ensure_ascii=False), name=name,
                             call_id=call_id)
            out_tok = counter.part_tokens(call_part)
            msg.update({"content": "", "thoughts": [{"subject": "Planning the next step", "description":
                        f"I will use {name} next.", "timestamp": iso(ts - 1)}] if thoughts else [],
                        "tokens": {"input": inp, "output": out_tok, "cached": cached_n, "thoughts": thoughts,
                                   "tool": 0, "total": inp + out_tok + thoughts}, "model": model,
                        "toolCalls": [{"id": call_id, "name": name, "args": args, "result": [{"functionResponse": {
                            "id": call_id, "name": name, "response": {"output": result}}}], "status": "success",
                            "timestamp": iso(ts + 1), "resultDisplay": result[:200], "description": "",
                            "displayName": name.replace("_", " ").title(), "renderOutputAsMarkdown": False}]})
            # Later requests carry the call and its functionResponse (a JSON object) back to the model.
            response = json.dumps({"output": result}, separators=(",", ":"), ensure_ascii=False)
            history += counter.message_tokens(Message("assistant", [call_part]))
            history += counter.message_tokens(Message("tool", [Part("tool_result", response, call_id=call_id)]))
        else:
            text = "Fixed: VAT is now rounded per line before summing. All 118 tests pass."
            out_tok = counter.tokenizer.count(text)
            msg.update({"content": text, "thoughts": [], "tokens": {"input": inp, "output": out_tok,
                                                                     "cached": cached_n, "thoughts": thoughts,
                                                                     "tool": 0,
                                                                     "total": inp + out_tok + thoughts},
                        "model": model})
        lines.append(msg)
        lines.append({"$set": {"lastUpdated": iso(ts + 1)}})
    return dump_lines(lines)


# --- 11. Whole-document formats -------------------------------------------------------------------------

def _openai_prompt(counter: Counter, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> int:
    """Prompt tokens of an OpenAI-shaped request (system messages and tools included), ctxwatch's rules."""
    from ctxwatch.formats.canonical import openai_request_to_parts

    system, tls, msgs, _ = openai_request_to_parts({"messages": messages, "tools": tools})
    return (counter.system_tokens(system) + counter.tools_tokens(tls) + sum(counter.message_tokens(m) for m in msgs)
            + REPLY_PRIMER)


#: The agent loop the document samples replay: (assistant text, tool, arguments, output kind).
_DOC_STEPS: list[tuple[str, str, dict[str, Any], str]] = [
    ("Reproduce the failure first.", "bash", {"command": "python -m pytest -q tests/test_tax.py"}, "pytest"),
    ("Read the tax module.", "bash", {"command": "sed -n 1,120p src/invoicer/tax.py"}, "code"),
    ("VAT is rounded on the sum; round per line instead.", "edit",
     {"path": "src/invoicer/tax.py", "old": "vat = sum(l.net * l.rate for l in lines).quantize(CENT)",
      "new": "vat = sum(((l.net * l.rate).quantize(CENT, ROUND_HALF_UP) for l in lines), Decimal(0))"}, "edit"),
    ("Run the whole suite.", "bash", {"command": "python -m pytest -q"}, "ok"),
]
_DOC_TOOLS = [
    {"name": "bash", "description": "Run a bash command in the repository and return its output.",
     "parameters": {"type": "object", "properties": {"command": {"type": "string",
                                                                 "description": "The command to run."}},
                    "required": ["command"], "additionalProperties": False}},
    {"name": "edit", "description": "Replace one exact occurrence of old with new in a file.",
     "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "old": {"type": "string"},
                                                     "new": {"type": "string"}},
                    "required": ["path", "old", "new"], "additionalProperties": False}},
]
_DOC_SYSTEM = "You are a careful software engineering agent. Use the tools; run the tests after each change."


def _doc_output(rng: random.Random, kind: str, counter: Counter, scale: int = 1) -> str:
    return {"pytest": lambda: pytest_out(rng, 260 * scale, counter),
            "code": lambda: code(rng, "src/invoicer/tax.py", 500 * scale, counter),
            "edit": lambda: "Edited src/invoicer/tax.py: 1 replacement.",
            "ok": lambda: "118 passed in 3.91s"}[kind]()


def inspect_log() -> bytes:
    """An Inspect AI ``.json`` EvalLog: one sample, a tool-using solver loop and a model-graded scorer call."""
    rng = random.Random(101)
    model, resolved = "openai/gpt-4o-mini", "gpt-4o-mini-2024-07-18"
    counter = counter_for(resolved, "openai")
    t = datetime(2025, 9, 9, 10, 0, tzinfo=UTC).timestamp()

    def stamp() -> str:
        nonlocal t
        t += rng.uniform(0.5, 4)
        return datetime.fromtimestamp(t, tz=UTC).isoformat()

    task_hash = rid(rng, "", 32, "0123456789abcdef")
    attachments = {task_hash: demo.TASK}
    msgs: list[dict[str, Any]] = [{"role": "system", "content": _DOC_SYSTEM},
                                  {"role": "user", "content": f"attachment://{task_hash}", "source": "input"}]
    oai: list[dict[str, Any]] = [{"role": "system", "content": _DOC_SYSTEM}, {"role": "user", "content": demo.TASK}]
    oai_tools = [{"type": "function", "function": t_} for t_ in _DOC_TOOLS]
    events: list[dict[str, Any]] = [
        {"timestamp": stamp(), "event": "sample_init", "sample": {"input": f"attachment://{task_hash}",
                                                                  "target": "", "id": 1},
         "state": {"messages": msgs[1:], "tools": [], "tool_choice": None, "store": {}, "output": {
             "model": model, "choices": []}, "completed": False, "metadata": {}}},
        {"timestamp": stamp(), "event": "step", "action": "begin", "type": "solver", "name": "basic_agent"}]
    usage_sum = {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
    final = ""
    last_output: dict[str, Any] = {}
    for i in range(len(_DOC_STEPS) + 1):
        prompt = _openai_prompt(counter, oai, oai_tools)
        if i < len(_DOC_STEPS):
            text, tool, args, kind = _DOC_STEPS[i]
            call_id = rid(rng, "call_", 24)
            reply = {"role": "assistant", "content": text, "source": "generate",
                     "tool_calls": [{"id": call_id, "function": tool, "arguments": args, "type": "function"}]}
            arguments = json.dumps(args, separators=(",", ":"))
            out_tok = counter.tokenizer.count(text) + counter.part_tokens(Part("tool_call", arguments, name=tool))
            stop = "tool_calls"
        else:
            final = "Fixed: VAT is rounded per line; all tests pass."
            reply = {"role": "assistant", "content": final, "source": "generate"}
            out_tok = counter.tokenizer.count(final)
            stop = "stop"
        usage = {"input_tokens": prompt, "output_tokens": out_tok, "total_tokens": prompt + out_tok}
        for k in usage_sum:
            usage_sum[k] += usage[k]
        last_output = {"model": resolved, "choices": [{"message": reply, "stop_reason": stop}], "usage": usage}
        events.append({"timestamp": stamp(), "event": "model", "model": model, "input": json.loads(json.dumps(msgs)),
                       "tools": _DOC_TOOLS, "tool_choice": "auto", "config": {"max_tokens": 2048},
                       "output": last_output})
        msgs.append(reply)
        if i == len(_DOC_STEPS):
            break
        oai.append({"role": "assistant", "content": text, "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": tool, "arguments": arguments}}]})
        result = _doc_output(rng, kind, counter)
        events.append({"timestamp": stamp(), "event": "tool", "type": "function", "id": call_id, "function": tool,
                       "arguments": args, "result": result, "events": []})
        msgs.append({"role": "tool", "content": result, "tool_call_id": call_id, "function": tool})
        oai.append({"role": "tool", "content": result, "tool_call_id": call_id})
    events.append({"timestamp": stamp(), "event": "step", "action": "end", "type": "solver", "name": "basic_agent"})
    events.append({"timestamp": stamp(), "event": "step", "action": "begin", "type": "scorer",
                   "name": "model_graded_qa"})
    grade_prompt = (f"You are comparing a submitted answer to an expert answer.\n\n[Task]: {demo.TASK}\n\n"
                    f"[Submission]: {final}\n\nReply with GRADE: C or GRADE: I.")
    grade = "The submission fixes the rounding as asked.\n\nGRADE: C"
    g_in = _openai_prompt(counter, [{"role": "user", "content": grade_prompt}], [])
    g_out = counter.tokenizer.count(grade)
    for k, v in (("input_tokens", g_in), ("output_tokens", g_out), ("total_tokens", g_in + g_out)):
        usage_sum[k] += v
    events.append({"timestamp": stamp(), "event": "model", "model": model,
                   "input": [{"role": "user", "content": grade_prompt}], "tools": [], "tool_choice": "none",
                   "config": {}, "output": {"model": resolved, "choices": [{"message": {
                       "role": "assistant", "content": grade, "source": "generate"}, "stop_reason": "stop"}],
                       "usage": {"input_tokens": g_in, "output_tokens": g_out, "total_tokens": g_in + g_out}}})
    events.append({"timestamp": stamp(), "event": "score", "score": {"value": "C", "answer": final,
                                                                    "explanation": grade}})
    events.append({"timestamp": stamp(), "event": "step", "action": "end", "type": "scorer",
                   "name": "model_graded_qa"})
    started = events[0]["timestamp"]
    doc = {"version": 2, "status": "success", "eval": {
        "run_id": rid(rng, "", 22), "created": started, "task": "fix_rounding", "task_id": rid(rng, "", 22),
        "task_version": 0, "task_file": "fix_rounding.py", "task_attribs": {}, "task_args": {},
        "dataset": {"samples": 1, "sample_ids": [1], "shuffled": False}, "model": model, "model_args": {},
        "config": {}, "packages": {"inspect_ai": "0.3.60"}},
        "plan": {"name": "plan", "steps": [{"solver": "basic_agent", "params": {}}], "config": {}},
        "results": {"total_samples": 1, "completed_samples": 1, "scores": [{"name": "model_graded_qa",
                                                                             "scorer": "model_graded_qa",
                                                                             "params": {}, "metrics": {}}]},
        "stats": {"started_at": started, "completed_at": events[-1]["timestamp"], "model_usage": {model: usage_sum}},
        "samples": [{"id": 1, "epoch": 1, "input": f"attachment://{task_hash}", "target": "", "messages": msgs,
                     "output": last_output, "scores": {"model_graded_qa": {"value": "C", "answer": final}},
                     "metadata": {}, "store": {}, "events": events, "model_usage": {model: usage_sum},
                     "attachments": attachments}]}
    return (json.dumps(doc, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


#: OpenHands' CodeAct system prompt and tool schemas, which its trajectory export does not hold.
OPENHANDS_UNLOGGED = 6_480


def openhands_trajectory() -> bytes:
    """An OpenHands trajectory export: events whose actions and observations repeat the same model_response."""
    rng = random.Random(107)
    model = "claude-3-5-sonnet-20241022"
    counter = counter_for(model, "anthropic")
    t = datetime(2025, 9, 10, 9, 0, tzinfo=UTC).timestamp()
    events: list[dict[str, Any]] = []
    hist = 0

    def stamp() -> str:
        nonlocal t
        t += rng.uniform(0.2, 6)
        return datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")

    events.append({"id": 0, "timestamp": stamp(), "source": "user", "message": demo.TASK, "action": "message",
                   "args": {"content": demo.TASK, "image_urls": None, "wait_for_response": False}, "timeout": 120})
    hist += counter.message_tokens(Message("user", [Part("text", demo.TASK)]))
    prev = 0
    for text, tool, args, kind in [*_DOC_STEPS, ("Done: VAT is rounded per line; tests pass.", "finish", {}, "")]:
        call_id = rid(rng, "toolu_01", 22)
        name = {"bash": "execute_bash", "edit": "str_replace_editor", "finish": "finish"}[tool]
        arguments = json.dumps(args)
        prompt = OPENHANDS_UNLOGGED + hist + REPLY_PRIMER
        msg = {"content": text, "role": "assistant", "tool_calls": [{"index": 1, "function": {
            "arguments": arguments, "name": name}, "id": call_id, "type": "function"}], "function_call": None}
        out_tok = counter.tokenizer.count(text) + counter.part_tokens(Part("tool_call", arguments, name=name))
        read = prev
        prev = prompt - REPLY_PRIMER
        mr = {"id": f"chatcmpl-{ruuid(rng)}", "created": int(t), "model": model, "object": "chat.completion",
              "system_fingerprint": None, "choices": [{"finish_reason": "tool_calls", "index": 0, "message": msg}],
              "usage": {"completion_tokens": out_tok, "prompt_tokens": prompt, "total_tokens": prompt + out_tok,
                        "completion_tokens_details": None,
                        "prompt_tokens_details": {"audio_tokens": None, "cached_tokens": read},
                        "cache_creation_input_tokens": prompt - read - REPLY_PRIMER, "cache_read_input_tokens": read},
              "service_tier": None}
        tcm = {"function_name": name, "tool_call_id": call_id, "model_response": mr, "total_calls_in_response": 1}
        aid = len(events) + 1
        action = {"bash": "run", "edit": "edit", "finish": "finish"}[tool]
        events.append({"id": aid, "timestamp": stamp(), "source": "agent", "message": text, "action": action,
                       "tool_call_metadata": tcm, "args": {**args, "thought": text}, "timeout": 120})
        hist += counter.message_tokens(Message("assistant", [Part("text", text), Part(
            "tool_call", arguments, name=name, call_id=call_id)]))
        if tool == "finish":
            break
        result = _doc_output(rng, kind, counter)
        events.append({"id": aid + 1, "timestamp": stamp(), "source": "agent", "message": f"Ran {name}.",
                       "cause": aid, "observation": action, "content": result, "extras": {},
                       "tool_call_metadata": tcm, "success": True})
        hist += counter.message_tokens(Message("tool", [Part("tool_result", result, call_id=call_id)]))
    return (json.dumps(events, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def openhands_eval() -> bytes:
    """OpenHands evaluation output JSONL: two instances, per-call ``metrics.token_usages`` keyed by response_id."""
    rng = random.Random(109)
    cfg_model = "anthropic/claude-3-7-sonnet-20250219"
    counter = counter_for("claude-3-7-sonnet-20250219", "anthropic")
    lines = []
    for n, repo in enumerate(("invoicer/invoicer", "invoicer/exporter")):
        history: list[dict[str, Any]] = [{"id": 0, "timestamp": iso(START + n * 3600), "source": "user",
                                          "message": demo.TASK, "action": "message",
                                          "args": {"content": demo.TASK, "image_urls": None,
                                                   "wait_for_response": False}}]
        hist = counter.message_tokens(Message("user", [Part("text", demo.TASK)]))
        usages, latencies, costs = [], [], []
        acc = {"prompt_tokens": 0, "completion_tokens": 0, "cache_read_tokens": 0, "cache_write_tokens": 0}
        prev = 0
        for k, (text, tool, args, kind) in enumerate(_DOC_STEPS):
            resp_id = f"chatcmpl-{ruuid(rng)}"
            call_id = rid(rng, "toolu_01", 22)
            name = "execute_bash" if tool == "bash" else "str_replace_editor"
            arguments = json.dumps(args)
            prompt = OPENHANDS_UNLOGGED + hist + REPLY_PRIMER
            out_tok = counter.tokenizer.count(text) + counter.part_tokens(Part("tool_call", arguments, name=name))
            read, write = prev, prompt - prev - REPLY_PRIMER
            prev = prompt - REPLY_PRIMER
            mr = {"id": resp_id, "created": int(START) + n * 3600 + k * 20, "model": cfg_model.split("/")[1],
                  "object": "chat.completion", "choices": [{"finish_reason": "tool_calls", "index": 0, "message": {
                      "content": text, "role": "assistant", "tool_calls": [{"index": 1, "function": {
                          "arguments": arguments, "name": name}, "id": call_id, "type": "function"}]}}],
                  "usage": {"completion_tokens": out_tok, "prompt_tokens": prompt, "total_tokens": prompt + out_tok,
                            "cache_creation_input_tokens": write, "cache_read_input_tokens": read}}
            tcm = {"function_name": name, "tool_call_id": call_id, "model_response": mr, "total_calls_in_response": 1}
            history.append({"id": len(history), "source": "agent", "message": text, "action": "run",
                            "tool_call_metadata": tcm, "args": args})
            result = _doc_output(rng, kind, counter)
            history.append({"id": len(history), "source": "agent", "message": "", "observation": "run",
                            "content": result, "cause": len(history) - 1, "tool_call_metadata": tcm})
            hist += counter.message_tokens(Message("assistant", [Part("text", text), Part(
                "tool_call", arguments, name=name, call_id=call_id)]))
            hist += counter.message_tokens(Message("tool", [Part("tool_result", result, call_id=call_id)]))
            tu = {"model": cfg_model, "prompt_tokens": prompt, "completion_tokens": out_tok,
                  "cache_read_tokens": read, "cache_write_tokens": write, "response_id": resp_id}
            usages.append(tu)
            for key in acc:
                acc[key] += tu[key]
            latencies.append({"model": cfg_model, "latency": round(rng.uniform(1.5, 9), 3), "response_id": resp_id})
            costs.append({"model": cfg_model, "cost": round(prompt * 3e-6 + out_tok * 15e-6, 6),
                          "timestamp": START + n * 3600 + k * 20})
        lines.append({"instance_id": f"{repo.replace('/', '__')}-{1042 + n}",
                      "test_result": {"git_patch": "diff --git a/src/invoicer/tax.py b/src/invoicer/tax.py\n"},
                      "instruction": demo.TASK,
                      "metadata": {"agent_class": "CodeActAgent", "llm_config": {"model": cfg_model}},
                      "history": history,
                      "metrics": {"accumulated_cost": round(sum(c["cost"] for c in costs), 6),
                                  "accumulated_token_usage": {"model": "default", **acc, "response_id": ""},
                                  "costs": costs, "response_latencies": latencies, "token_usages": usages,
                                  "condenser": []},
                      "error": None, "instance": {"repo": repo, "instance_id": f"{repo}-{1042 + n}",
                                                  "problem_statement": demo.TASK}})
    return dump_lines(lines)


def swe_agent_traj() -> bytes:
    """A SWE-agent 0.x ``.traj``: history, trajectory steps and only cumulative ``info.model_stats``."""
    rng = random.Random(113)
    counter = counter_for("gpt-4o", "openai")
    system = ("SETTING: You are an autonomous programmer working in a command line with a special interface. "
              "COMMANDS: open <path>, edit <start>:<end>, python <file>, submit. Reply with a DISCUSSION and "
              "exactly one command in a code block.")
    history: list[dict[str, Any]] = [{"role": "system", "content": system, "agent": "primary"},
                                     {"role": "user", "content": f"We're currently solving the following issue "
                                      f"within our repository.\nISSUE:\n{demo.TASK}\n\n(Open file: n/a)\n"
                                      "(Current directory: /invoicer)\nbash-$", "agent": "primary"}]
    trajectory = []
    sent = received = 0
    cmds = [("Let me reproduce the failure.", "python -m pytest -q tests/test_tax.py", "pytest"),
            ("Open the tax module.", "open src/invoicer/tax.py", "code"),
            ("Round each line before summing.", "edit 44:44\n    vat = sum(((l.net * l.rate).quantize(CENT, "
             "ROUND_HALF_UP) for l in lines), Decimal(0))\nend_of_edit", "edit"),
            ("Run the suite again.", "python -m pytest -q", "ok"),
            ("The fix works; submitting.", "submit", "submit")]
    for thought, cmd, kind in cmds:
        prompt = _openai_prompt(counter, [{"role": m["role"], "content": m["content"]} for m in history], [])
        response = f"DISCUSSION\n{thought}\n\n```\n{cmd}\n```"
        sent += prompt
        received += counter.tokenizer.count(response)
        obs = "" if kind == "submit" else _doc_output(rng, kind, counter)
        state = json.dumps({"open_file": "/invoicer/src/invoicer/tax.py" if kind != "pytest" else "n/a",
                            "working_dir": "/invoicer"})
        trajectory.append({"action": cmd + "\n", "observation": obs, "response": response, "state": state,
                           "thought": thought})
        history.append({"role": "assistant", "content": response, "thought": thought, "action": cmd + "\n",
                        "agent": "primary"})
        if kind != "submit":
            history.append({"role": "user", "content": f"{obs}\n(Open file: /invoicer/src/invoicer/tax.py)\n"
                            "(Current directory: /invoicer)\nbash-$", "agent": "primary"})
    doc = {"environment": "swe_main", "trajectory": trajectory, "history": history,
           "info": {"exit_status": "submitted",
                    "submission": "\ndiff --git a/src/invoicer/tax.py b/src/invoicer/tax.py\n",
                    "model_stats": {"total_cost": round(sent * 2.5e-6 + received * 1e-5, 5),
                                    "instance_cost": round(sent * 2.5e-6 + received * 1e-5, 5),
                                    "tokens_sent": sent, "tokens_received": received, "api_calls": len(cmds)}}}
    return (json.dumps(doc, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


#: Cline's system prompt (tool descriptions included), which ui_messages.json does not hold.
CLINE_UNLOGGED = 11_240


def cline_ui_messages() -> bytes:
    """A Cline ``ui_messages.json``: api_req_started entries with a JSON ``text`` holding the token counts."""
    rng = random.Random(127)
    model = "claude-sonnet-4-20250514"
    counter = counter_for(model, "anthropic")
    ts = int(START * 1000) + 30_000_000
    info = {"providerId": "anthropic", "modelId": model, "mode": "act"}
    out: list[dict[str, Any]] = [{"ts": ts, "type": "say", "say": "task", "text": demo.TASK}]
    hist = 0
    prev = 0
    request = f"<task>\n{demo.TASK}\n</task>"
    for i, (text, tool, args, kind) in enumerate([*_DOC_STEPS, ("", "", {}, "")]):
        ts += rng.randint(800, 6000)
        hist += counter.message_tokens(Message("user", [Part("text", request)]))
        prompt = CLINE_UNLOGGED + hist + REPLY_PRIMER
        parts: list[Part] = []
        entries: list[dict[str, Any]] = []
        if tool:
            tool_text = json.dumps({"tool": "executeCommand" if tool == "bash" else "editedExistingFile",
                                    **({"command": args["command"]} if tool == "bash" else {"path": args["path"]})})
            entries = [{"type": "say", "say": "text", "text": text, "partial": False},
                       {"type": "say", "say": "tool", "text": tool_text, "partial": False}]
            parts = [Part("text", text), Part("tool_call", tool_text, name="cline_tool")]
        else:
            final = "Fixed: VAT is rounded per line before summing; all tests pass."
            entries = [{"type": "say", "say": "completion_result", "text": final, "partial": False}]
            parts = [Part("text", final)]
        out_tok = sum(counter.part_tokens(p) for p in parts)
        read, write = prev, prompt - prev - 3
        prev = prompt - 3
        cost = round(3 * 3e-6 + write * 3.75e-6 + read * 3e-7 + out_tok * 15e-6, 6)
        out.append({"ts": ts, "type": "say", "say": "api_req_started", "text": json.dumps({
            "request": request, "tokensIn": 3, "tokensOut": out_tok, "cacheWrites": write, "cacheReads": read,
            "cost": cost}), "modelInfo": info, "conversationHistoryIndex": 2 * i - 1})
        for e in entries:
            ts += rng.randint(200, 3000)
            out.append({"ts": ts, **e, "modelInfo": info, "conversationHistoryIndex": 2 * i})
        hist += counter.message_tokens(Message("assistant", parts))
        if not tool:
            out.append({"ts": ts + 500, "type": "ask", "ask": "completion_result", "text": "",
                        "conversationHistoryIndex": 2 * i})
            break
        result = _doc_output(rng, kind, counter)
        request = f"[{tool} for '{args.get('command') or args.get('path')}'] Result:\n{result}"
    return (json.dumps(out, ensure_ascii=False) + "\n").encode("utf-8")


def gemini_cli_json() -> bytes:
    """The legacy Gemini CLI recording: one pretty-printed ConversationRecord (the JSONL sample's messages)."""
    recs = [json.loads(x) for x in gemini_cli().decode("utf-8").splitlines()]
    head = recs[0]
    messages = [r for r in recs[1:] if "$set" not in r]
    doc = {"sessionId": head["sessionId"], "projectHash": head["projectHash"], "startTime": head["startTime"],
           "lastUpdated": messages[-1]["timestamp"], "messages": messages}
    return (json.dumps(doc, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


# --- main ------------------------------------------------------------------------------------------------

def build() -> dict[str, bytes]:
    """Every sample file: relative path -> bytes (deterministic)."""
    files = {
        "openai_chat_demo.jsonl": openai_chat_demo(),
        "anthropic_messages.jsonl": anthropic_messages(),
        "openai_responses.jsonl": responses_api(),
        "claude_code_session.jsonl": claude_code(),
        "codex_rollout.jsonl": codex_rollout(),
        "gemini_usage.jsonl": gemini_usage(),
        "claude_trace.jsonl": claude_trace(),
        "gemini_cli_session.jsonl": gemini_cli(),
        "documents/inspect_eval.json": inspect_log(),
        "documents/openhands_trajectory.json": openhands_trajectory(),
        "documents/openhands_eval_output.jsonl": openhands_eval(),
        "documents/swe_agent.traj": swe_agent_traj(),
        "documents/cline_ui_messages.json": cline_ui_messages(),
        "documents/gemini_cli_session.json": gemini_cli_json(),
    }
    files["openai-batch/batch_input.jsonl"], files["openai-batch/batch_output.jsonl"] = openai_batch()
    files["anthropic-batch/requests.jsonl"], files["anthropic-batch/results.jsonl"] = anthropic_batch()
    return files


def iter_written(out: Path) -> Iterator[tuple[Path, int]]:
    """Write every sample under ``out``; yield ``(path, size)``. Raises ``ValueError`` if one is too big."""
    for rel, data in build().items():
        if len(data) >= MAX_BYTES:
            raise ValueError(f"{rel}: {len(data)} bytes, over the {MAX_BYTES}-byte limit")
        p = out / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
        yield p, len(data)


def main(argv: list[str] | None = None) -> int:
    """Command line entry point: write the samples and list them."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "sample_logs", help="output folder [sample_logs/]")
    args = ap.parse_args(argv)
    for p, n in iter_written(args.out):
        print(f"{n:>8}  {p}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
