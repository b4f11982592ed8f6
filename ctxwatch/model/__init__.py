"""The call model every stage shares: what a format reader gives (:class:`ParsedCall`, with text), what the
accounting gives (:class:`Call`, numbers with their sources, no text), the problems found on the way
(:class:`Issue`) and how a call's floor and history are shown (:class:`Breakdown`).
"""

from ctxwatch.model.call import (
    CONFIRM_TOLERANCE_EXACT,
    CONFIRM_TOLERANCE_OTHER,
    MAX_PLAUSIBLE_PROMPT,
    Call,
    MessageStat,
    Span,
    call_span,
    estimate_confirms,
    implausible_prompt,
    implausible_what,
    own_request,
    separate_requests,
    session_ranks,
    span_with,
    unrelated_requests,
)
from ctxwatch.model.fields import collect_bad_fields, json_type, note_bad_field
from ctxwatch.model.issues import BAD_LINE_KINDS, Issue, Resolved, counted_issues, is_bad_line, tally_issues
from ctxwatch.model.parsed import (
    MAX_COUNT,
    LastKey,
    Message,
    ParsedCall,
    Part,
    ResponseInfo,
    SourceRef,
    Src,
    Usage,
    digest,
    message_key,
    text_key,
)
from ctxwatch.model.pickling import shared
from ctxwatch.model.provenance import Provenance
from ctxwatch.model.shown import Breakdown, raw_breakdown, shown_breakdown, shown_fraction, shown_free, shown_used

__all__ = [
    "BAD_LINE_KINDS",
    "CONFIRM_TOLERANCE_EXACT",
    "CONFIRM_TOLERANCE_OTHER",
    "MAX_COUNT",
    "MAX_PLAUSIBLE_PROMPT",
    "Breakdown",
    "Call",
    "Issue",
    "LastKey",
    "Message",
    "MessageStat",
    "ParsedCall",
    "Part",
    "Provenance",
    "Resolved",
    "ResponseInfo",
    "SourceRef",
    "Span",
    "Src",
    "Usage",
    "call_span",
    "collect_bad_fields",
    "counted_issues",
    "digest",
    "estimate_confirms",
    "implausible_prompt",
    "implausible_what",
    "is_bad_line",
    "json_type",
    "message_key",
    "note_bad_field",
    "own_request",
    "raw_breakdown",
    "separate_requests",
    "session_ranks",
    "shared",
    "shown_breakdown",
    "shown_fraction",
    "shown_free",
    "shown_used",
    "span_with",
    "tally_issues",
    "text_key",
    "unrelated_requests",
]
