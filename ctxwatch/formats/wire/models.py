"""Which provider's rules apply to a model id, when a log names the model but not the provider.

Agent frameworks (Inspect, OpenHands, SWE-agent, Cline) log calls to many providers, often through a router
(LiteLLM, OpenRouter) whose prefix says nothing of the model's maker.  The provider decides the tokenizer,
the tool framing and the image rule, so it is told from the model id, or left unknown.
"""

from __future__ import annotations

#: Model-id routing prefixes that say nothing about the model's maker (LiteLLM / OpenRouter / proxies).
_ROUTING_PREFIXES = ("openai/", "openrouter/", "litellm_proxy/", "litellm/", "azure/", "together/", "groq/",
                     "bedrock/", "vertex_ai/", "vertex/", "hf/", "ollama/", "fireworks/")


def provider_of_model(model: str | None) -> str | None:
    """Guess the provider whose tokenizer and framing rules apply, from a model id.

    ``claude`` → ``anthropic``; ``gemini`` → ``google``; ``gpt-``/``o1``/``o3``/``o4``/``chatgpt``/
    ``codex`` → ``openai``; anything else ``None`` (unknown, not guessed).  Routing prefixes such as
    ``openai/`` or ``openrouter/`` are looked through, so ``openai/openrouter-llama-4-maverick`` is ``None``.
    """
    if not model or not isinstance(model, str):  # (any JSON type may stand there: a number is no model id)
        return None
    name = model.lower()
    if "claude" in name:
        return "anthropic"
    if "gemini" in name:
        return "google"
    base = name
    while base.startswith(_ROUTING_PREFIXES):
        base = base.split("/", 1)[1]
    base = base.rsplit("/", 1)[-1]
    if base.startswith(("gpt-", "gpt4", "o1", "o3", "o4", "chatgpt", "codex", "text-davinci", "ft:gpt")):
        return "openai"
    return None
