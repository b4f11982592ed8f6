"""The demo's story, call by call: a coding agent whose context window fills up until the API refuses a request.

1. **A heavy floor**: every request re-sends the system prompt and twelve verbose tool schemas
   (:mod:`~ctxwatch.demo.prompt`).
2. **History grows** with tool calls and their results; the compaction trigger, then the budget, is crossed,
   and the client never compacts.
3. **A naive client truncates** from the front of ``messages[]`` (:mod:`~ctxwatch.demo.client`): the system
   prompt goes first, then the task, while the API keeps answering 200 OK.
4. **Format drift**: without its rules the model's JSON replies lose ``reason``, then ``file``, then stop being
   JSON, then turn to prose.
5. **Overflow**: the agent reads a large fixture whole and the next request is refused with OpenAI's
   ``context_length_exceeded`` error (no usage block), the last call of the run.

ctxwatch's flags fire calls before that overflow: that is what the demo shows.
"""

from __future__ import annotations

import json
import random
import string
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ctxwatch.demo.client import NaiveClient, cached_tokens
from ctxwatch.demo.content import (
    SOURCE_FILES,
    TEST_FILES,
    code_lines,
    diff_lines,
    doc_lines,
    fill,
    fixture_lines,
    grep_lines,
    numbered,
    pytest_lines,
    tree_lines,
)
from ctxwatch.demo.prompt import FOLLOW_UP, TASK, system_prompt, tool_schemas
from ctxwatch.formats.canonical import openai_message
from ctxwatch.tokens import counter_for

#: The model the synthetic agent calls (an OpenAI model, so ctxwatch's tokenizer is the model's own).
DEMO_MODEL = "gpt-4o"
#: The snapshot the synthetic provider answers with (OpenAI resolves aliases to dated snapshots in responses).
RESOLVED_MODEL = "gpt-4o-2024-08-06"
#: Context window of the synthetic deployment, in tokens: made up (gpt-4o's real window is 128,000) so that
#: the story fits about 60 calls. Written into every record as ``"window"``.
DEMO_WINDOW = 32_000
#: Calls in the default run; the live demo plays it at :data:`ctxwatch.demo.writer.DEFAULT_SPEED` calls per
#: second (30 s).
DEFAULT_CALLS = 60
#: Seed of the default run (the project's demo sample and screenshot use it too).
DEFAULT_SEED = 7
#: The request's ``max_tokens`` is ``window // MAX_TOKENS_DIVISOR`` (2,000 at the default window): a typical
#: agent completion limit, and the **reserve** ctxwatch shows.
MAX_TOKENS_DIVISOR = 16
#: Fraction of the run after which the naive client first has to truncate (the system prompt goes first).
EVICT_FRACTION = 0.62
#: Below this many calls the run has no room for the whole story: it only grows (no truncation, no overflow).
MIN_STORY_CALLS = 12
#: The keys the system prompt demands in every reply (and that the early replies always have).
JSON_KEYS = ("action", "file", "reason")
#: Start of the synthetic timeline (2025-06-02 09:00:00 UTC), so that generated runs are byte-identical.
START_EPOCH = datetime(2025, 6, 2, 9, 0, tzinfo=UTC).timestamp()
#: Relative path of the large fixture the drifted agent reads whole (the call that overflows).
BIG_FIXTURE = "tests/fixtures/invoices_2024.json"

_ALNUM = string.ascii_letters + string.digits


@dataclass
class _Action:
    """One step of the agent: a tool call, what the JSON reply says about it, and the tool's output kind."""

    tool: str
    args: dict[str, Any]
    file: str
    reason: str
    kind: str


def _next_action(rng: random.Random, i: int, drifted: bool, last_before_overflow: bool) -> _Action:
    """Pick the agent's next action (weighted; early calls explore, later ones patch and test)."""
    if last_before_overflow:
        return _Action("read_file", {"path": BIG_FIXTURE}, BIG_FIXTURE,
                       "Load the whole 2024 fixture to see every invoice the total is checked against.", "fixture")
    if i == 0:
        return _Action("list_directory", {"path": ".", "depth": 2}, ".",
                       "Get an overview of the repository before touching code.", "tree")
    if i == 1:
        return _Action("run_tests", {"path": "tests/test_tax.py", "verbose": True}, "tests/test_tax.py",
                       "Reproduce the failing VAT test first.", "pytest")
    src, test = rng.choice(SOURCE_FILES), rng.choice(TEST_FILES)
    choices = [
        (5, _Action("read_file", {"path": src}, src, f"See how {src.rsplit('/', 1)[-1]} rounds amounts.", "code")),
        (2, _Action("read_file", {"path": test}, test, "Check what the test expects exactly.", "code")),
        (3, _Action("search_code", {"pattern": r"quantize\(", "path": "src/invoicer"}, "src/invoicer",
                    "Find every place where amounts are rounded.", "grep")),
        (3, _Action("run_tests", {"path": test, "verbose": True}, test, "Check the effect of the last change.",
                    "pytest")),
        (2, _Action("apply_patch", {"path": src, "patch": "@@ -1 +1 @@"}, src,
                    "Round each line before summing, as docs/rounding.md requires.", "patch")),
        (1, _Action("git_diff", {"path": "src/invoicer"}, "src/invoicer", "Review the changes so far.", "diff")),
        (1, _Action("fetch_docs", {"page": "rounding"}, "docs/rounding.md", "Confirm the finance rounding rule.",
                    "docs")),
    ]
    if drifted:  # without its rules the agent stops preferring ranges and searches
        choices.append((3, _Action("run_shell", {"command": f"cat {src}"}, src, "Print the module.", "code")))
    weights = [w for w, _ in choices]
    return rng.choices([a for _, a in choices], weights=weights)[0]


def _result_text(rng: random.Random, action: _Action, target: int,
                 count: Callable[[str], int]) -> tuple[str, dict[str, Any]]:
    """The tool's output of about ``target`` tokens, and the tool-call arguments updated to match it."""
    args = dict(action.args)
    k = action.kind
    if k == "code":
        text = fill(numbered(code_lines(rng, action.file)), target, count)
        if action.tool == "read_file" and rng.random() < 0.5:
            args["start_line"], args["end_line"] = 1, text.count("\n") + 1
    elif k == "pytest":
        body = fill(pytest_lines(rng, action.file), max(target - 30, 10), count)
        failed = body.count(" FAILED")
        text = (body + f"\n=========================== short test summary info ============================\n"
                f"{failed + 1} failed, {body.count(' PASSED')} passed in {rng.uniform(0.4, 9):.2f}s")
    elif k == "grep":
        text = fill(grep_lines(rng, args.get("pattern", "")), target, count)
    elif k == "tree":
        text = fill(tree_lines(rng), target, count)
    elif k == "patch":
        diff = fill(diff_lines(rng, action.file), max(target - 20, 10), count)
        args["patch"] = "\n".join(diff.split("\n")[2:6])
        text = f"Patch applied to {action.file}: 1 hunk, 0 fuzz.\n{diff}"
    elif k == "diff":
        text = fill(diff_lines(rng, action.file + "/tax.py"), target, count)
    elif k == "docs":
        text = fill(doc_lines(rng), target, count)
    else:  # fixture
        text = fill(fixture_lines(rng), target, count)
    return text, args


def _reply_text(rng: random.Random, action: _Action, stage: str) -> str:
    """The assistant's text for a drift stage: ``full`` | ``no_reason`` | ``action_only`` | ``invalid`` | ``prose``."""
    if stage == "full":
        return json.dumps({"action": action.tool, "file": action.file, "reason": action.reason})
    if stage == "no_reason":
        return json.dumps({"action": action.tool, "file": action.file})
    if stage == "action_only":
        return json.dumps({"action": action.tool})
    if stage == "invalid":
        return rng.choice((
            f'{{"action": "{action.tool}", "file": "{action.file}", "reason": "{action.reason}"',
            f"{{'action': '{action.tool}', 'file': '{action.file}'}}",
            f'{{"action": "{action.tool}", file: "{action.file}"}}',
            f'Next: {{"action": "{action.tool}", "file": "{action.file}"}}',
        ))
    doing = _PROSE_VERBS.get(action.tool, "look at")
    return rng.choice((
        f"Let me {doing} {action.file} again; the rounding is probably applied after summing.",
        f"I'll {doing} {action.file} to see where the extra cent comes from.",
        f"Okay. Next I'll {doing} {action.file}.",
        f"The totals still look off, so I'm going to {doing} {action.file}.",
    ))


#: How the drifted agent says in prose what it is about to do, per tool.
_PROSE_VERBS = {"read_file": "read", "run_shell": "print", "run_tests": "run the tests in",
                "search_code": "search", "apply_patch": "patch", "git_diff": "diff", "fetch_docs": "check",
                "list_directory": "list"}


def _drift_stage(i: int, evict: int | None, end: int) -> str:
    """Drift stage of call ``i`` given the first truncated call ``evict`` and the overflow call ``end``.

    The stages split the calls between the eviction and the overflow in made-up proportions (12 % still
    clean, then 18 % without ``reason``, 15 % with ``action`` only, 25 % invalid JSON, the rest prose): the
    demo's pacing, chosen so that each stage lasts a few calls in the default run, not a measured rate.
    """
    if evict is None or i < evict:
        return "full"
    span = max(end - evict, 1)
    f = (i - evict) / span
    if f < 0.12:
        return "full"  # the model still imitates its own earlier JSON replies
    if f < 0.30:
        return "no_reason"
    if f < 0.45:
        return "action_only"
    if f < 0.70:
        return "invalid"
    return "prose"


def _rand_id(rng: random.Random, prefix: str, n: int) -> str:
    """A provider-style id: ``prefix`` + ``n`` random letters and digits."""
    return prefix + "".join(rng.choice(_ALNUM) for _ in range(n))


def iso_utc(ts: float) -> str:
    """ISO-8601 UTC with milliseconds and a ``Z`` (``2025-06-02T09:00:07.412Z``) for epoch seconds."""
    dt = datetime.fromtimestamp(ts, tz=UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def generate_run(calls: int = DEFAULT_CALLS, seed: int = DEFAULT_SEED,
                 window: int | None = DEMO_WINDOW) -> Iterator[dict[str, Any]]:
    """Generate the synthetic run, one canonical record (a JSON-ready dict) per API call, lazily.

    Args:
        calls: number of API calls (records). The whole story needs at least :data:`MIN_STORY_CALLS`; shorter
            runs only grow.
        seed: seed of the :class:`random.Random` that picks actions, file contents, ids and timings. The same
            ``(calls, seed, window)`` always gives the same records.
        window: the synthetic deployment's context window in tokens, written into each record as ``window``;
            ``None`` uses gpt-4o's catalogue window (128,000, genai-prices) and writes no ``window`` key.
            Content sizes scale with it; tool schemas and system prompt are verbose from 16,000 tokens up.

    Yields:
        ``{"timestamp", "session", ["window"], "request": {model, messages, tools, max_tokens},
        "response": {id, object, created, model, choices: [{index, message: {role, content, tool_calls?},
        finish_reason}], usage: {prompt_tokens, completion_tokens, total_tokens,
        prompt_tokens_details: {cached_tokens}}}}``.  The last record of a full story is the refused request:
        ``"response": {"error": {"message", "type", "param", "code": "context_length_exceeded"}}``, no usage.

    Raises:
        ValueError: ``calls < 1`` or ``window`` below 2,048 tokens.
    """
    if calls < 1:
        raise ValueError(f"calls must be >= 1, got {calls}")
    win = window
    if win is None:
        from ctxwatch.catalog.windows import catalog_window

        win = catalog_window(DEMO_MODEL, "openai") or 128_000
    if win < 2048:
        raise ValueError(f"window must be >= 2048 tokens, got {win}")
    rng = random.Random(seed)
    counter = counter_for(DEMO_MODEL, "openai")
    verbose = win >= 16_000
    max_tokens = win // MAX_TOKENS_DIVISOR
    fit = win - max_tokens  # the request fits when prompt + max_tokens <= window
    client = NaiveClient(counter, {"role": "system", "content": system_prompt(verbose)}, tool_schemas(verbose))
    client.append({"role": "user", "content": TASK})

    story = calls >= MIN_STORY_CALLS
    overflow = calls - 1 if story else None
    evict = min(max(round(EVICT_FRACTION * calls), 4), calls - 4) if story else None
    p0 = client.prompt_tokens()
    # Growth per call: reach the fit limit between call evict-1 and call evict (or 85 % of it, without a story).
    goal_calls = (evict - 0.5) if evict is not None else max(calls, 1)
    goal = fit if evict is not None else int(0.85 * fit)
    growth = max((goal - p0) / goal_calls, 60.0)
    follow_up_at = round(0.3 * calls) if story else None

    session = f"demo-{seed}"
    ts = START_EPOCH
    prev_items: list[tuple[Any, int]] | None = None
    evicted_at: int | None = None  # the first call the client had to truncate (planned: `evict`)
    for i in range(calls):
        ts += rng.uniform(3.0, 11.0)
        if client.prompt_tokens() > fit:  # the naive client truncates whenever a request would not fit
            client.truncate(fit)
        if evicted_at is None and not client.has_system:
            evicted_at = i
        prompt = client.prompt_tokens()
        items = client.prefix_items()
        request = {"model": DEMO_MODEL, "messages": client.request_messages(), "tools": client.tools,
                   "max_tokens": max_tokens, "temperature": 0}
        rec: dict[str, Any] = {"timestamp": iso_utc(ts), "session": session}
        if window is not None:
            rec["window"] = window
        rec["request"] = request
        if overflow is not None and i == overflow:
            msgs = prompt - client.tools_tokens
            rec["response"] = {"error": {
                "message": (f"This model's maximum context length is {win} tokens. However, you requested "
                            f"{prompt + max_tokens} tokens ({msgs} in the messages, {client.tools_tokens} in the "
                            f"functions, and {max_tokens} in the completion). Please reduce the length of the "
                            "messages, functions, or completion."),
                "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}
            yield rec
            return
        stage = _drift_stage(i, evicted_at, overflow if overflow is not None else calls)
        action = _next_action(rng, i, stage != "full", overflow is not None and i == overflow - 1)
        # Size of the tool result so that the prompt follows the planned growth (with noise).
        asst_guess = 60
        want_next = p0 + (i + 1) * growth
        target = want_next - prompt - asst_guess + rng.uniform(-0.35, 0.35) * growth
        if evicted_at is not None:
            target = growth * rng.uniform(0.65, 1.35)  # truncation keeps the prompt at the limit now
        elif evict is not None and i == evict - 1:
            target = max(target, fit - prompt + 0.5 * growth)  # make call `evict` the first that must truncate
        elif evict is not None:
            target = min(target, fit - prompt - asst_guess - 0.25 * growth)
        if action.kind == "fixture":  # big enough not to fit even with everything else dropped
            target = int(1.04 * win)
        text, args = _result_text(rng, action, max(int(target), 12), counter.tokenizer.count)
        call_id = _rand_id(rng, "call_", 24)
        reply = _reply_text(rng, action, stage)
        tool_call = {"id": call_id, "type": "function",
                     "function": {"name": action.tool, "arguments": json.dumps(args, separators=(",", ":"))}}
        asst = {"role": "assistant", "content": reply, "tool_calls": [tool_call]}
        completion = sum(counter.part_tokens(p) for p in openai_message(asst).parts)
        cached = cached_tokens(prev_items, items, prompt)
        prev_items = items
        rec["response"] = {
            "id": _rand_id(rng, "chatcmpl-", 29), "object": "chat.completion", "created": int(ts),
            "model": RESOLVED_MODEL,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": reply, "tool_calls": [tool_call],
                                                 "refusal": None},
                         "logprobs": None, "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                      "total_tokens": prompt + completion,
                      "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
                      "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                                    "accepted_prediction_tokens": 0,
                                                    "rejected_prediction_tokens": 0}},
            "service_tier": "default", "system_fingerprint": "fp_demo0000",
        }
        yield rec
        client.append(asst)
        client.append({"role": "tool", "tool_call_id": call_id, "content": text})
        if follow_up_at is not None and i + 1 == follow_up_at:
            client.append({"role": "user", "content": FOLLOW_UP})
