"""Token counting rules for one call: an encoding plus the provider's framing of messages, tools and images.

A prompt's tokens are more than its texts' tokens: each message is framed by role tokens, a tools payload carries
the provider's fixed wrapper, an image costs what the provider's rule says.  :func:`counter_for` picks the
encoding and the rules for a call's model and provider.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ctxwatch.model import Message, Part
from ctxwatch.source import json_text
from ctxwatch.tokens.images import image_tokens
from ctxwatch.tokens.models import encoding_name_for_model
from ctxwatch.tokens.tokenizer import CHARS4, Tokenizer, get_tokenizer

# Per-message framing: OpenAI cookbook "How to count tokens with tiktoken" (``num_tokens_from_messages``, for
# gpt-3.5-turbo-0613, gpt-4-0613, gpt-4o and later): 3 tokens per message plus the tokens of each of its values,
# the role included (<|im_start|>{role}<|im_sep|>{content}<|im_end|>), 1 more per name, 3 for the reply
# primer.  Every role is one token in both o200k_base and cl100k_base, so a message costs 4 tokens besides its
# content: checked against the prompt tokens OpenAI reported for a real Batch API run (gpt-4o-mini-2024-07-18:
# 100 of 100 calls exact).
#: Framing tokens of every message besides its role's.
TOKENS_PER_MESSAGE = 3
#: Framing tokens of a message's ``name`` besides its own.
TOKENS_PER_NAME = 1
#: Tokens that prime the reply, once per prompt.
REPLY_PRIMER = 3

#: Anthropic's hidden tool-use system prompt, added once per request that has tools (tool_choice auto/none).
#: Source: Anthropic docs, "Tool use with Claude" > pricing table (346 tokens for Claude 4 / 3.7 / 3.5 Sonnet).
ANTHROPIC_TOOL_PREAMBLE = 346
#: OpenAI's function-definition wrapper (``namespace functions { ... }``) costs a fixed amount per request
#: plus a little per function. Source: OpenAI cookbook, ``num_tokens_for_tools`` (func_end = 12, func_init = 7).
OPENAI_TOOLS_END = 12
OPENAI_TOOL_INIT = 7


@dataclass(slots=True, frozen=True)
class Counter:
    """Token counting rules for one call: an encoding plus the provider's framing.

    Attributes:
        tokenizer: the text tokenizer.
        provider: ``openai`` | ``anthropic`` | ``google`` | ``None`` (decides tool and image rules).
        own: the encoding is the model's own.
    """

    tokenizer: Tokenizer
    provider: str | None
    own: bool
    # The last tools payload counted (its schema objects) and its count: a reader may give a re-sent payload as
    # the same objects (ctxwatch.formats.wire.resend), whose count is then not asked again.
    _tools_memo: list[Any] = field(default_factory=lambda: [None], compare=False, repr=False)

    @property
    def exact(self) -> bool:
        """True when the counts are the model's own tokenizer's: its encoding, and no fall back to ``chars/4``."""
        return self.own and self.tokenizer.name != CHARS4

    @property
    def name(self) -> str:
        """The encoding's name (``chars/4`` when tiktoken could not be loaded)."""
        return self.tokenizer.name

    def part_tokens(self, part: Part) -> int:
        """Tokens of one content part (a tool call's name and arguments both counted)."""
        return self.part_count(part)[0]

    def part_count(self, part: Part) -> tuple[int, bool]:
        """:meth:`part_tokens` and whether its text's count is an estimate (:meth:`Tokenizer.count_cut`)."""
        if part.kind in ("image", "document"):
            return image_tokens(part.meta or {}, self.provider), False  # (its own rule, labelled by the caller)
        n, cut = self.tokenizer.count_cut(part.text)
        if part.kind == "thinking" and part.meta and isinstance(part.meta.get("reasoning_tokens"), int):
            # Encrypted reasoning re-sent on later calls (Codex) cannot be tokenized locally; the provider
            # reported its size when it was produced, so that count is used.
            reported = part.meta["reasoning_tokens"]
            return (reported, False) if reported >= n else (n, cut)
        if part.kind == "tool_call":
            k, c = self.tokenizer.count_cut(part.name or "")
            n += k + 3  # the call wrapper; OpenAI cookbook counts tool-call framing this way (approximate)
            cut |= c
        elif part.kind == "tool_result" and part.call_id:
            k, c = self.tokenizer.count_cut(part.call_id)
            n += 1 + k // 2  # the id travels with the result
            cut |= c
        return n, cut

    def framing(self, role: str) -> int:
        """Framing tokens of one message with ``role``: :data:`TOKENS_PER_MESSAGE` plus the role's tokens (4 for
        every standard role in both encodings; see the constants above)."""
        return TOKENS_PER_MESSAGE + self.tokenizer.count(role)

    @property
    def per_message(self) -> int:
        """Framing tokens of a ``user`` message (:meth:`framing`)."""
        return self.framing("user")

    def message_tokens(self, msg: Message) -> int:
        """Tokens of one message: its framing (:meth:`framing`), its parts, and 1 + the name's tokens for a
        name."""
        return self.message_count(msg)[0]

    def message_count(self, msg: Message) -> tuple[int, bool]:
        """:meth:`message_tokens` and whether a part's count is an estimate (:meth:`Tokenizer.count_cut`: a
        text with a run too long to encode whole)."""
        n, cut = self.framing(msg.role), False
        if msg.name:
            k, cut = self.tokenizer.count_cut(msg.name)
            n += TOKENS_PER_NAME + k
        for part in msg.parts:
            k, c = self.part_count(part)
            n += k
            cut |= c
        return n, cut

    def message_texts(self, msg: Message) -> list[str]:
        """The texts :meth:`message_count` tokenizes for ``msg`` (to be counted ahead, :meth:`Tokenizer.prefetch`)."""
        out = [msg.role]
        if msg.name:
            out.append(msg.name)
        for part in msg.parts:
            if part.kind in ("image", "document"):
                continue
            out.append(part.text)
            if part.kind == "tool_call" and part.name:
                out.append(part.name)
            elif part.kind == "tool_result" and part.call_id:
                out.append(part.call_id)
        return out

    def system_tokens(self, blocks: list[str]) -> int:
        """Tokens of the system prompt given as text blocks, framed as one system message."""
        return self.system_count(blocks)[0]

    def system_count(self, blocks: list[str]) -> tuple[int, bool]:
        """:meth:`system_tokens` and whether a block's count is an estimate (:meth:`Tokenizer.count_cut`)."""
        if not blocks:
            return 0, False
        n, cut = self.framing("system"), False
        for b in blocks:
            k, c = self.tokenizer.count_cut(b)
            n += k
            cut |= c
        return n, cut

    def tools_tokens(self, tools: list[dict[str, Any]]) -> int:
        """Tokens of a request's whole ``tools`` payload, measured once (the provider's preamble once, not per tool).

        The schemas are tokenized as compact JSON (the providers render them into their own prompt format,
        which is not published exactly), plus the provider's fixed tool-use overhead.
        """
        return self.tools_count(tools)[0]

    def tools_count(self, tools: list[dict[str, Any]]) -> tuple[int, bool]:
        """:meth:`tools_tokens` and whether a schema's count is an estimate (:meth:`Tokenizer.count_cut`)."""
        if not tools:
            return 0, False
        last = self._tools_memo[0]
        if last is not None and len(last[0]) == len(tools) and all(a is b for a, b in zip(last[0], tools, strict=True)):
            return last[1]
        counted = self._tools_count(tools)
        self._tools_memo[0] = (tuple(tools), counted)  # (one slot replaced whole: a reader never sees half)
        return counted

    def _tools_count(self, tools: list[dict[str, Any]]) -> tuple[int, bool]:
        body, cut = 0, False
        for t in tools:
            k, c = self.tokenizer.count_cut(json_text(t))
            body += k
            cut |= c
        if self.provider == "anthropic":
            return body + ANTHROPIC_TOOL_PREAMBLE, cut
        return body + OPENAI_TOOLS_END + OPENAI_TOOL_INIT * len(tools), cut


def counter_for(model: str | None, provider: str | None) -> Counter:
    """The :class:`Counter` for a call's model and provider (encoding picked by :func:`encoding_name_for_model`)."""
    enc, exact = encoding_name_for_model(model)
    if provider not in (None, "openai"):
        exact = False
    tok = get_tokenizer(enc)
    return Counter(tok, provider, exact)


def own_tokenizer(model: str | None, provider: str | None, tokenizer: str) -> bool:
    """Whether ``tokenizer`` (an encoding name, as on a call) is ``model``'s own, as :func:`counter_for` decides
    ``exact`` before an image or a cut text (:meth:`Tokenizer.count_cut`) makes a call's count an estimate: the
    call is then counted by its model's tokenizer, yet not exactly."""
    enc, exact = encoding_name_for_model(model)
    return exact and provider in (None, "openai") and enc == tokenizer
