"""Provider wire shapes shared by the format readers (a reader never imports another reader).

One module per shape family: :mod:`.openai` (chat completions and the Responses API), :mod:`.anthropic`
(Messages API), :mod:`.gemini` (``generateContent``), :mod:`.litellm` (LiteLLM's usage); :mod:`.exchange` (a
request/response pair in any of the first three shapes), :mod:`.messages` (what a request decodes to, and the
reuse of re-sent messages), :mod:`.images`, :mod:`.damage` (what a damaged request leaves unknown),
:mod:`.dedupe` (response-id keys and the copies of a call), :mod:`.models` (the provider of a model id),
:mod:`.timestamps` (the one timestamp rule) and :mod:`.values` (token counts and JSON text).  Nothing here
imports :mod:`ctxwatch.formats` itself: the readers import both.
"""
