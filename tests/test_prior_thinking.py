"""B39: the thinking of earlier assistant turns is not in the context window (Anthropic, models before Opus 4.5);
the current turn's thinking in a tool-use loop is."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import report_of, shared_case

from ctxwatch.formats.wire.anthropic import strip_prior_thinking, strips_prior_thinking
from ctxwatch.model import Message, Part


def test_b39_estimate_without_the_stripped_thinking(shared_logs):
    path = shared_case(shared_logs, "b39_prior_thinking_stripped.jsonl")
    rec = json.loads(Path(path).read_text().splitlines()[0])
    assert any(b.get("type") == "thinking" for b in rec["request"]["messages"][1]["content"])
    doc = report_of(path)
    c = doc["calls"][0]
    reported = rec["response"]["usage"]["input_tokens"]
    assert c["prompt_tokens_reported"] == reported == 3_661
    # the case's figure: ctxwatch's own estimate of the request without the thinking block is the reported 3,661
    assert c["prompt_tokens_estimated"] == 3_661
    assert abs(c["history_tokens"] - 3_650) < 20
    assert not [f for f in doc["flags"] if f["kind"] == "estimate_disagrees"]


def test_the_current_turns_thinking_counts_and_opus_45_keeps_thinking():
    think = Message("assistant", [Part("thinking", "step by step " * 50), Part("tool_call", "{}", name="ls")])
    loop = [Message("user", [Part("text", "list files")]), think,
            Message("user", [Part("tool_result", "a b c", call_id="t1")])]
    assert strip_prior_thinking(loop, "claude-sonnet-4-5-20250929") == loop  # (a tool loop: the current turn)
    later = [*loop, Message("assistant", [Part("text", "done")]), Message("user", [Part("text", "thanks")])]
    stripped = strip_prior_thinking(later, "claude-sonnet-4-5-20250929")
    assert stripped[1].parts[0].text == "" and stripped[1].parts[0].meta == {"stripped": True}
    assert stripped[1].parts[1] == think.parts[1]
    assert strip_prior_thinking(later, "claude-opus-4-5-20251101") == later
    assert strips_prior_thinking("us.anthropic.claude-sonnet-4-5-20250929-v1:0")
    assert not strips_prior_thinking("claude-opus-4-6")
