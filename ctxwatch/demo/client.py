"""The synthetic agent's naive client: it re-sends the whole history and, when a request would not fit, drops
messages from the front of ``messages[]``, system prompt first.

Its token counts use ctxwatch's own framing (:mod:`ctxwatch.tokens`), so the usage the synthetic provider reports
is exactly what ctxwatch estimates; the cached part follows OpenAI's prompt-caching rule.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ctxwatch.formats.canonical import openai_message
from ctxwatch.tokens import REPLY_PRIMER, Counter

#: OpenAI's prompt-caching rule: prompts of 1,024 tokens or more are cached, and cache hits are counted in
#: increments of 128 tokens of identical prefix.
CACHE_MIN_TOKENS = 1024
CACHE_BLOCK_TOKENS = 128


@dataclass
class NaiveClient:
    """The naive client's state: the messages it will send and their token counts (framing included)."""

    counter: Counter
    system: dict[str, Any]
    tools: list[dict[str, Any]]
    messages: list[dict[str, Any]] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)
    keys: list[int] = field(default_factory=list)
    has_system: bool = True

    def __post_init__(self) -> None:
        self.system_tokens = self.counter.system_tokens([self.system["content"]])
        self.tools_tokens = self.counter.tools_tokens(self.tools)
        self._seq = 0

    def append(self, msg: dict[str, Any]) -> None:
        """Add a message to the history, counting it once (the same rule :mod:`ctxwatch.accounting` uses)."""
        self.messages.append(msg)
        self.sizes.append(self.counter.message_tokens(openai_message(msg)))
        self._seq += 1
        self.keys.append(self._seq)

    def prompt_tokens(self) -> int:
        """Prompt size of the next request in tokens: system + tools + history + the reply primer."""
        return ((self.system_tokens if self.has_system else 0) + self.tools_tokens + sum(self.sizes)
                + REPLY_PRIMER)

    def truncate(self, limit: int, keep_last: int = 2) -> int:
        """Drop from the front of ``messages[]`` (system prompt first) until the prompt fits ``limit`` tokens.

        Never drops the newest ``keep_last`` messages, and never leaves a ``tool`` message first (the API would
        reject a tool result without its call). Returns the number of messages dropped (system included).
        """
        dropped = 0
        while self.prompt_tokens() > limit:
            if self.has_system:
                self.has_system = False
            elif len(self.messages) > keep_last:
                self._pop()
            else:
                break
            dropped += 1
        while self.messages and self.messages[0]["role"] == "tool" and len(self.messages) > keep_last:
            self._pop()
            dropped += 1
        return dropped

    def _pop(self) -> None:
        self.messages.pop(0)
        self.sizes.pop(0)
        self.keys.pop(0)

    def request_messages(self) -> list[dict[str, Any]]:
        """The ``messages`` array of the next request."""
        return ([self.system] if self.has_system else []) + list(self.messages)

    def prefix_items(self) -> list[tuple[Any, int]]:
        """(identity, tokens) of the prompt's items in cache order: system, tools, then the messages."""
        items: list[tuple[Any, int]] = []
        if self.has_system:
            items.append(("system", self.system_tokens))
        items.append(("tools", self.tools_tokens))
        items.extend(zip(self.keys, self.sizes, strict=True))
        return items


def cached_tokens(prev: list[tuple[Any, int]] | None, cur: list[tuple[Any, int]], prompt: int) -> int:
    """Cached prompt tokens of a request of ``prompt`` tokens under OpenAI's rule: the prefix it shares with the
    previous request (``prev`` and ``cur``: :meth:`NaiveClient.prefix_items`), counted when it is at least
    :data:`CACHE_MIN_TOKENS`, in :data:`CACHE_BLOCK_TOKENS` increments; 0 for the first request."""
    if not prev:
        return 0
    common = 0
    for a, b in zip(prev, cur, strict=False):
        if a[0] != b[0]:
            break
        common += b[1]
    common = min(common, prompt)
    return (common // CACHE_BLOCK_TOKENS) * CACHE_BLOCK_TOKENS if common >= CACHE_MIN_TOKENS else 0
