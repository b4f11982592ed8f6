"""OpenAI Codex CLI rollout files (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``).

Every line is ``{timestamp, type, payload}``:

* ``event_msg`` with ``payload.type:"token_count"`` carries running totals (``info.total_token_usage``) and the
  latest call's usage (``info.last_token_usage``) and the window (``info.model_context_window``).  Codex writes
  each value twice and re-emits totals for rate-limit refreshes, so a token_count is a new call only when
  ``total_token_usage`` changed (:mod:`.counters`).  Totals that go backwards with no new ``session_meta`` are a
  restart (Codex resumed, or a new conversation in the same file), reported as a ``totals_restart`` note: the
  history starts again from the input items after the model's last output (or after a repeated
  ``session_meta`` of this session), the floor is inferred again and the totals take a new baseline.  A
  token_count whose total is that of a call already read from the file (the rollout written again after itself)
  is that call again: it is not emitted, so the original keeps its own history and floor.  A copy
  whose total has a counter that is not a count is reported, and is still recognised as a copy by the counters
  left and ``last_token_usage`` (:func:`~.counters.is_repeat`).
* Usage follows OpenAI's convention: ``input_tokens`` includes ``cached_input_tokens``, ``output_tokens``
  includes ``reasoning_output_tokens``.
* ``response_item`` records are the conversation (Responses API items, :mod:`.items`).  The usage event is
  written *before* the items it pays for, so a call's prompt is the history up to its token_count and its
  completion is the model-output items that follow it.
* ``compacted`` (with ``replacement_history`` in newer versions) and ``event_msg`` ``context_compacted`` replace
  the history.  The next call carries ``compaction = {"kind": "compacted" | "context_compacted", "trigger":
  None, "pre_tokens": <the previous plausible call's reported prompt>, "pre_tokens_from": "previous call",
  "post_tokens": None, "line": <line of the compaction record>}`` (Codex logs no pre/post sizes itself).

Sessions: a ``session_meta`` whose ``id`` differs from the current session's starts a new session (two rollouts
concatenated into one file): its own id, system prompt, model, window hint, history, floor and cumulative totals.
The exception is the id of a session this one was forked or spawned from (``forked_from_id``,
``parent_thread_id``): Codex copies the parent's records, its ``session_meta`` included, into a fork's rollout, and
that copy is this session's history; its calls, stamped when the fork was made, are the parent's
(:mod:`ctxwatch.formats.codex.forks`).

Floor (instructions + tool schemas, which the rollout does not log in full): inferred once per episode, from the
first call with a plausible usage after the session start or a compaction (its reported prompt minus its
estimated history); every later call names that call (:attr:`~ctxwatch.model.Provenance.floor_call`), and its history
is its reported
prompt minus that floor (both labelled inferred; see :mod:`ctxwatch.accounting`).  Inferred per call, the floor
would take in the tokenizer's error on each history and drift (from 9,991 to 8,135 tokens over a rollout of 39
calls) although the instructions and tools never change.

Tailing policy: a call is emitted as soon as its token_count arrives (with its prompt history and usage) and
re-emitted with the same ``key`` as each of its output items (reasoning, assistant message, tool calls)
arrives, until the next input item, ``turn_context`` or token_count closes it.  Nothing is held back, so
``finish`` has nothing to flush and a live view never lags a call behind.
"""

from __future__ import annotations

from ctxwatch.formats import FormatSpec, Sniff, register
from ctxwatch.formats.codex.items import RECORD_TYPES, item_message
from ctxwatch.formats.codex.legacy import legacy_score
from ctxwatch.formats.codex.reader import CodexReader

__all__ = ["NAME", "SPEC", "CodexReader", "item_message", "sniff"]

NAME = "codex"

def sniff(sn: Sniff) -> float:
    """Confidence that a file is a Codex rollout: 0.95 for a ``session_meta`` line with ``id``/``cli_version``/
    ``originator`` or a ``token_count`` event; 0.9 for two or more ``{timestamp, type, payload}`` records of
    Codex's record types; 0.6 for one; 0.9 from the raw head bytes when a huge first ``session_meta`` line does not
    fit in the sniffed head; 0.9 for a rollout from before token counts (:func:`~.legacy.legacy_score`).  Other
    formats (no ``payload`` object, other ``type`` values) score 0."""
    if (legacy := legacy_score(list(sn.values))) > 0:
        return legacy
    n = 0
    for v in sn.values:
        if not isinstance(v, dict) or not isinstance(v.get("payload"), dict) or v.get("type") not in RECORD_TYPES:
            continue
        p = v["payload"]
        if v["type"] == "session_meta" and ("cli_version" in p or "originator" in p or "id" in p):
            return 0.95
        if v["type"] == "event_msg" and p.get("type") == "token_count":
            return 0.95
        n += 1
    if n == 0 and not sn.values:
        # The first line is longer than the sniffed head (a big session_meta): judge the raw bytes.
        head = sn.head.lstrip(b"\xef\xbb\xbf")[:512]
        if head.startswith(b'{"timestamp":') and b'"type":"session_meta","payload":{' in head:
            return 0.9
    return 0.9 if n >= 2 else 0.6 if n == 1 else 0.0


SPEC = register(FormatSpec(
    name=NAME,
    description="OpenAI Codex CLI rollouts (~/.codex/sessions/**/rollout-*.jsonl)",
    sniff=sniff,
    reader=CodexReader,
    needs_prefix=True,
    example="../shared/sample-logs/codex-rollout/rollout-2025-11-17T15-30-28-019a93b9_codex0.58.0.jsonl",
    aliases=("codex-cli", "codex-rollout"),
))
