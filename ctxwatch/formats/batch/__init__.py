"""OpenAI Batch API and Anthropic Message Batches files: input (request) files, output (result) files, joins.

**OpenAI Batch** (``openai-batch``).  Input lines are ``{custom_id, method, url, body}`` where ``body`` is a
chat-completions request (``/v1/chat/completions``) or a Responses API request (``/v1/responses``).  Output
lines are ``{id: "batch_req_…", custom_id, response: {status_code, request_id, body}, error}``; ``body`` is
the completion with its ``usage``.  Output order may differ from input order (OpenAI Batch guide), so the
two are joined by ``custom_id``.  Failed requests (``status_code`` ≠ 200, ``error`` not null, or no body)
become issues, never calls with zero usage.

**Anthropic Message Batches** (``anthropic-batch``).  Result lines are ``{custom_id, result: {type, message}}``
with ``type`` one of ``succeeded`` | ``errored`` | ``canceled`` | ``expired`` (Anthropic API reference,
"Retrieve Message Batch results"); only ``succeeded`` results are calls.  The last result line may lack
its newline.  Request files hold ``{custom_id, params}`` objects, possibly concatenated with no separator,
which :func:`ctxwatch.source.decode.decode_line` splits; a ``{"requests": [...]}`` create-batch body is accepted
too.

What each file gives on its own:

* an output/result file: reported usage per call, the resolved model, the completion; no request text
  (``system``/``tools``/``messages`` are ``None``: not logged);
* an input/request file: the request (system, tools, messages, max output tokens), no usage;
* both, joined by :func:`join_batch` / :func:`read_batch_pair` or by a reader built with ``input_path``:
  one call per result, request text from the input (:mod:`.index`).  The call's
  :class:`~ctxwatch.model.SourceRef` is the *output* line; its provenance holds ``input_path``, ``input_line``,
  ``input_bytes`` and ``input_part`` (the value's index when several objects share the line) so that the
  request can be re-read.

Every result line is a call of its own, keyed by the id the provider gives it or else by its content, never by
its ``custom_id``: a result with none, with ``null`` or another value that is no string (which joins nothing: never
the request named ``"null"``), or with one that another result reuses is never merged into another call.  A line
without a ``custom_id`` string has a ``no_custom_id`` issue: it can be joined to nothing.

The two formats share one reader (:mod:`.reader`); :mod:`.pairing` pairs the files of a folder.
"""

from __future__ import annotations

from typing import Any

from ctxwatch.formats import FormatSpec, Sniff, register
from ctxwatch.formats.batch.calls import request_call
from ctxwatch.formats.batch.index import BatchInputIndex
from ctxwatch.formats.batch.kinds import PROVIDER, classify_batch_value
from ctxwatch.formats.batch.pairing import read_batch_pair
from ctxwatch.formats.batch.reader import AnthropicBatchReader, BatchReader, OpenAIBatchReader, join_batch

__all__ = [
    "AnthropicBatchReader", "BatchInputIndex", "BatchReader", "OpenAIBatchReader", "classify_batch_value",
    "join_batch", "read_batch_pair", "request_call",
]


def _sniff_for(provider: str) -> Any:
    def sniff(s: Sniff) -> float:
        vals = [v for v in s.values if isinstance(v, dict)]
        if vals:
            kinds = [classify_batch_value(v) for v in vals]
            hits = sum(1 for k in kinds if k and PROVIDER[k] == provider)
            return 0.95 * hits / len(vals)
        # A first object larger than the sniff window (long requests glued on one line): look at the bytes.
        head = s.head.lstrip(b"\xef\xbb\xbf \t\r\n")
        if not head.startswith(b"{") or b'"custom_id"' not in head[:4096]:
            return 0.0
        if provider == "anthropic" and (b'"params"' in head[:4096] or b'"result"' in head[:4096]):
            return 0.6
        if provider == "openai" and (b'"body"' in head[:4096] or b'"response"' in head[:4096]):
            return 0.6
        return 0.0
    return sniff


register(FormatSpec(
    name="openai-batch",
    description=("OpenAI Batch API input ({custom_id, body}) and output ({custom_id, response}) JSONL, "
                 "joined by custom_id"),
    sniff=_sniff_for("openai"), reader=OpenAIBatchReader, joined=True,
    example='{"id":"batch_req_…","custom_id":"r1","response":{"status_code":200,"body":{"usage":{…}}},"error":null}',
))
register(FormatSpec(
    name="anthropic-batch",
    description="Anthropic Message Batches results ({custom_id, result}) and request ({custom_id, params}) files",
    sniff=_sniff_for("anthropic"), reader=AnthropicBatchReader, joined=True,
    example='{"custom_id":"r1","result":{"type":"succeeded","message":{"usage":{…}}}}',
))
