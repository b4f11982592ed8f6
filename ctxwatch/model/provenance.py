"""What a format reader says of a call beyond its request and usage, as typed fields.

A :class:`Provenance` travels with the call from the reader's :class:`~ctxwatch.model.ParsedCall` to the accounted
:class:`~ctxwatch.model.Call`: the accounting, the analysis, the planner and the views read these fields, never a
format's own keys.  What the log says of a call that no number depends on (ids, step numbers) is kept in
:attr:`Provenance.details`, shown as logged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ctxwatch.model.pickling import fast_pickle, field_values


@fast_pickle
@dataclass(slots=True)
class Provenance:
    """Where a call came from and what its log says of it (every field unknown or absent by default).

    Attributes:
        custom_id: the request's own id (a batch line's ``custom_id``, a Gemini batch ``key``): a call with one is a
            request of its own, not a turn of a conversation.
        batch_side: ``"input"`` (a request read without its result) or ``"output"`` (a result) for a line of a
            provider's batch file: a request of its own, billed at the batch rate.
        joined: for a batch result, whether its request was found (``None`` for other calls).
        input_path / input_line / input_bytes / input_part: a joined batch result's request: its file, 1-based
            line, byte range and index among the values of that line (re-reading the call reads it there).
        requested_model: the model a batch request asked for, when the result names another.
        floor_call: the key of the call whose inferred floor this call's history is measured against (a reader that
            keeps the whole history of one call per context names it).
        history_cut: only the visible tail of the history is in the log (a chain that runs out of the file): the
            prompt cannot be split into floor and history.
        history_unknown: the request's message list is missing or damaged: its history is unknown.
        probe: a ``max_tokens: 1`` quota probe, left out of calibrations and of the analysis.
        compaction_summarizer: the call of a harness's compaction summarizer (a context of its own).
        error: the error the provider answered with (text, or ``{"type", "code"}``), for a call that failed.
        cumulative: the run's token totals a log states instead of (or beside) per-call usage (``{field: tokens}``).
        usage_from: which of its fields the reader took the call's usage from (Codex: ``last_token_usage`` or
            ``total_delta``).
        implausible: the reader found the reported prompt above the window the log itself states.
        tool_use_prompt_tokens: Gemini's ``toolUsePromptTokenCount`` (tokens), reported apart from the prompt.
        usage_line: the 1-based line the usage was taken from, for a call written over several lines.
        output_null: the final output count was ``null`` (reported as damage, never read as 0).
        message_id / request_id: the provider's ids of the response and the request.
        harness: the coding-agent harness that wrote the log (``claude-code``, ``codex``), whose own context rules
            (its compaction threshold, its effective window) are the defaults for its calls
            (:mod:`ctxwatch.accounting.harness`); ``None`` for a log of the user's own loop.
        details: what the log says of the call that no number depends on, by the log's own names, shown as logged
            (an evaluation's sample and epoch, a trajectory's step, a document member...).
    """

    custom_id: str | None = None
    batch_side: str | None = None
    joined: bool | None = None
    input_path: str | None = None
    input_line: int | None = None
    input_bytes: tuple[int, int] | None = None
    input_part: int | None = None
    requested_model: str | None = None
    floor_call: str | None = None
    history_cut: bool = False
    history_unknown: bool = False
    probe: bool = False
    compaction_summarizer: bool = False
    error: Any = None
    cumulative: dict[str, Any] | None = None
    usage_from: str | None = None
    implausible: bool = False
    tool_use_prompt_tokens: int | None = None
    usage_line: int | None = None
    output_null: bool = False
    message_id: str | None = None
    request_id: str | None = None
    harness: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def copy(self) -> Provenance:
        """A copy whose :attr:`details` is its own (a reader may go on changing the one it gave)."""
        new = Provenance(*_VALUES(self))  # (a third of copy.copy's time)
        new.details = dict(self.details)
        return new


#: A provenance's field values in ``__init__``'s order (as :func:`~ctxwatch.model.pickling.fast_pickle` pickles it).
_VALUES = field_values(Provenance)
