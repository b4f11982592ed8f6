"""A runnable agent loop that keeps its context within budget with ctxwatch, offline.

Run: ``python examples/budget_loop.py [LOG]``, then watch the log with ``ctxwatch LOG``.

The "model" here is a stand-in so the example runs without an API key: it asks for a file, then another,
forever, like a coding agent reading a repository. Replace ``fake_model`` with your client call; the rest
is what you would keep.
"""

from __future__ import annotations

import json
import sys

from ctxwatch import CallLogger, ContextBudget

TOOLS = [{"type": "function", "function": {
    "name": "read_file", "description": "Read a file of the repository.",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}}]
SYSTEM = 'Reply with one JSON object {"action": ..., "file": ...}. Never read fixture files whole.'


def fake_model(messages: list[dict], step: int) -> dict:
    """A chat-completions-shaped response asking to read the next file (stands in for a real client)."""
    call = {"id": f"call_{step}", "type": "function",
            "function": {"name": "read_file", "arguments": json.dumps({"path": f"src/module_{step}.py"})}}
    return {"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [call]}}],
            "usage": None}  # a real response carries the provider's usage here


def summarise(evicted: list[dict]) -> str:
    """Summarise the evicted span (a real loop would ask the model); here: which files were read."""
    files = [json.loads(tc["function"]["arguments"])["path"]
             for m in evicted for tc in m.get("tool_calls") or []]
    return f"Earlier steps read {len(files)} files: {', '.join(files)}."


def main(log_path: str = "budget_loop.jsonl", steps: int = 40) -> None:
    # A small window so that compaction shows within a few steps; keep the 4 newest exchanges verbatim.
    # Above the trigger (0.8 of the budget) the older span is compacted at once, so the loop then runs
    # several calls below the trigger before it compacts again.
    budget = ContextBudget("gpt-4o", window=24_000, system=SYSTEM, tools=TOOLS, max_tokens=1024, keep_recent=4)
    messages: list[dict] = [{"role": "user", "content": "Find where VAT is rounded and fix the off-by-one-cent bug."}]
    with CallLogger(log_path, session="example") as log:
        for step in range(steps):
            # The system prompt comes back first, pinned and unchanged; the older span is summarised.
            messages, report = budget.fit(messages, summariser=summarise)
            request = {"model": "gpt-4o", "messages": messages, "tools": TOOLS, "max_tokens": 1024}
            response = fake_model(request["messages"], step)
            log.log(request, response, window=report.window)  # so ctxwatch uses the same window
            assistant = response["choices"][0]["message"]
            messages.append(assistant)
            for tc in assistant["tool_calls"]:
                messages.append({"role": "tool", "tool_call_id": tc["id"], "content": "x = 1\n" * 300})
            print(f"step {step:2d}: {report.before_tokens:6,} -> {report.after_tokens:6,} tokens (trigger "
                  f"{report.trigger_tokens:,}, budget {report.budget_tokens:,}, evicted {report.evicted})")


if __name__ == "__main__":
    main(*sys.argv[1:2])
