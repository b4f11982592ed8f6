"""claude-trace HTTP captures (badlogic/claude-trace, ``~/.claude-trace/log-*.jsonl``).

Each line wraps one HTTP exchange of Claude Code with the Anthropic API: ``request.body`` is the Messages API
request; ``response.body`` the JSON response, or ``response.body_raw`` the server-sent-events text of a streamed
one, whose usage is in ``message_start`` and the final ``message_delta`` (:func:`parse_sse`).  Unlike Claude
Code's own transcript, a capture holds the whole request: system prompt, tool schemas and history as sent.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any, NamedTuple

import orjson

from ctxwatch.formats import FormatSpec, Output, Reader, Sniff, register, usage_count
from ctxwatch.formats.wire.anthropic import anthropic_usage
from ctxwatch.formats.wire.damage import request_problems
from ctxwatch.formats.wire.dedupe import ResponseIds, record_hash
from ctxwatch.formats.wire.exchange import build_call, exchange_flavour
from ctxwatch.formats.wire.messages import MessageMemo
from ctxwatch.formats.wire.streams import is_openai_stream, sse_values, stream_body, stream_usage_note
from ctxwatch.formats.wire.timestamps import parse_timestamp
from ctxwatch.formats.wire.values import int_or_none, limit_counts, model_id, string_counts
from ctxwatch.model import Issue, ResponseInfo, Usage
from ctxwatch.source import Record, show_value


class SseStream(NamedTuple):
    """What :func:`parse_sse` reads from an Anthropic SSE stream.

    Attributes:
        usage: the call's usage (tokens), ``None`` when the stream reports none.
        info: the completion's text, tool-use count and stop reason.
        model: ``message_start.message.model``.  message_id: ``message_start.message.id`` (``msg_...``).
        problems: ``(issue kind, message)`` for each part of the usage the stream does not give.
    """

    usage: Usage | None
    info: ResponseInfo
    model: str | None
    message_id: str | None
    problems: list[tuple[str, str]]


#: The prompt-side counts of an Anthropic usage block (message_start's; message_delta's in newer API versions).
PROMPT_USAGE_KEYS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def parse_sse(raw: str) -> SseStream:
    """Usage, completion, model and message id from an Anthropic SSE stream (``message_start`` +
    ``message_delta``).

    ``message_start.message.usage`` gives the input and cache counts (its ``output_tokens`` is a
    placeholder); the last ``message_delta.usage.output_tokens`` is the real output count (Anthropic Messages API
    reference, "Streaming messages").
    A stream cut before its ``message_delta`` (an interrupted call), or whose ``message_delta`` has no output
    count (``output_tokens`` null or missing), has an unknown output, never the placeholder: the usage is
    marked ``damaged`` (this copy cannot price the call) and a ``no_usage`` problem says which of the two it
    is, and that the call is priced only if a complete copy of the exchange is read (the same exchange may be
    captured twice, in another file too, and the run then counts the complete copy).  A ``message_start``
    that cannot be read (its JSON cut or damaged, no usage block with ``input_tokens``, or none at all before
    a ``message_delta``) leaves the prompt and cache counts unknown
    (``None``, never 0) with an ``invalid_field`` problem, unless the last ``message_delta`` carries all of
    them (newer API versions); ``message_delta``'s output count is kept.  The server tool counts
    (``server_tool_use.web_search_requests``, billed per search) are the last ``message_delta``'s when it
    carries them (Anthropic streams them there, cumulative like its other counts; Messages API reference,
    "Streaming messages"), else ``message_start``'s.  A count of ``message_start``'s usage (but its placeholder
    ``output_tokens``) or of the last ``message_delta``'s written as a string of digits is read as the count and
    said (an ``invalid_field`` problem, :func:`~ctxwatch.formats.wire.values.string_counts`).  Never raises on
    odd events.
    """
    start_usage: dict[str, Any] | None = None
    start_bad: str | None = None  # why message_start's usage could not be read
    start_block: dict[str, Any] | None = None  # message_start's usage block as the stream wrote it
    delta_block: dict[str, Any] | None = None  # the last message_delta's usage block
    delta_prompt: dict[str, Any] | None = None  # the prompt side of the last message_delta carrying all of it
    out_tokens: Any = None
    server: dict[str, Any] | None = None  # the last message_delta's server_tool_use block
    saw_delta = delta_bad = False
    delta_gap = ""  # what the last message_delta without an output count lacks
    model: str | None = None
    message_id: str | None = None
    texts: list[str] = []
    uses = 0
    stop: str | None = None
    event: str | None = None
    for line in raw.splitlines():
        if not line.strip():
            event = None  # (a blank line ends an SSE event)
            continue
        if line.startswith("event:"):
            event = line[6:].strip()
            continue
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        try:
            ev = orjson.loads(data)
        except orjson.JSONDecodeError:
            # Which event was damaged: the SSE event name, else its type as far as the data goes.
            name = event or next((n for n in ("message_start", "message_delta") if f'"{n}"' in data), None)
            if name == "message_start":
                start_bad = "its message_start event is not valid JSON (cut or damaged)"
            elif name == "message_delta":
                saw_delta = delta_bad = True
            continue
        if not isinstance(ev, dict):
            continue
        t = ev.get("type")
        if t == "message_start" and isinstance(msg := ev.get("message"), dict):
            if isinstance(u := msg.get("usage"), dict) and u.get("input_tokens") is not None:
                start_usage, start_bad, start_block = dict(u), None, u
            else:
                start_bad = "its message_start event has no usage block with input_tokens"
            model = model_id(msg.get("model"), "message_start's message.model")
            message_id = mid if isinstance(mid := msg.get("id"), str) else None
        elif t == "message_delta":
            saw_delta = True
            u = du if isinstance(du := ev.get("usage"), dict) else {}
            delta_block = du if isinstance(du, dict) else delta_block
            if u.get("output_tokens") is not None:
                out_tokens = u["output_tokens"]  # (not a count: passed on for the sanitizer to report)
            else:
                delta_gap = "has no usage block" if not isinstance(du, dict) else \
                    "usage has output_tokens null" if "output_tokens" in u else "usage has no output_tokens"
            if isinstance(u.get("server_tool_use"), dict):
                server = u["server_tool_use"]
            for k in PROMPT_USAGE_KEYS:
                if start_usage is not None and int_or_none(u.get(k)):
                    start_usage[k] = u[k]
            if all(u.get(k) is not None for k in PROMPT_USAGE_KEYS):
                delta_prompt = {k: u[k] for k in PROMPT_USAGE_KEYS}
            delta = d if isinstance(d := ev.get("delta"), dict) else {}
            stop = r if isinstance(r := delta.get("stop_reason"), str) else stop
        elif t == "content_block_start" and (ev.get("content_block") or {}).get("type") == "tool_use":
            uses += 1
        elif t == "content_block_delta" and (ev.get("delta") or {}).get("type") == "text_delta":
            texts.append(str(ev["delta"].get("text") or ""))
    if start_usage is None and start_bad is None and saw_delta:
        start_bad = "it has no message_start event"
    problems: list[tuple[str, str]] = [
        ("invalid_field", p) for block, where in (
            ({k: x for k, x in (start_block or {}).items() if k != "output_tokens"},
             "response.body_raw.message_start.message.usage"),
            (delta_block, "response.body_raw.message_delta.usage"))
        for p in string_counts(block, where)]
    usage = None
    if start_usage is None and start_bad is not None:
        # anthropic_usage counts a missing cache key as 0, right for a usage block that omits it but a guess for
        # one that could not be read: here the prompt side is unknown unless message_delta gives all of it.
        if delta_prompt is not None:
            start_usage = delta_prompt
            problems.append(("invalid_field", f"response.body_raw: {start_bad}; the usage is message_delta's, "
                                              "which carries every count"))
        else:
            usage = Usage(output=usage_count(out_tokens),
                          web_searches=usage_count(server.get("web_search_requests")) if server else None) \
                if out_tokens is not None else None
            known = "" if out_tokens is None else " (the output count is message_delta's)"
            problems.append(("invalid_field", f"response.body_raw: the stream's usage could not be read: {start_bad}; "
                                              f"its prompt and cache token counts are unknown{known}"))
    if start_usage is not None:
        # message_start's output_tokens is a placeholder: only message_delta's count is the output.
        # (the searches are billed per search: message_start's block does not have them, the last delta does)
        usage = anthropic_usage({**start_usage, "output_tokens": out_tokens,
                                 **({"server_tool_use": server} if server is not None else {})})
        if usage is not None and out_tokens is None:
            # (the output is unknown, and pricing it as 0 would pass a part of the cost for all of it)
            usage = replace(usage, damaged=True)
            # (the note is about this copy of the exchange: a complete copy in another file may price the call)
            unpriced = "so the call is priced only if a complete copy of the exchange is read"
            if delta_bad:
                problems.append(("invalid_field", "response.body_raw: its message_delta event is not valid JSON "
                                                  "(cut or damaged): this copy's output token count is unknown, "
                                                  f"{unpriced}"))
            elif saw_delta:
                problems.append(("no_usage", f"the SSE stream's message_delta {delta_gap}: this copy's output token "
                                             f"count is unknown (message_start's is a placeholder), {unpriced}"))
            else:
                problems.append(("no_usage", "the SSE stream ends before its message_delta usage (cut or "
                                             "interrupted): this copy's output token count is unknown "
                                             f"(message_start's is a placeholder), {unpriced}"))
    return SseStream(usage, ResponseInfo(text="".join(texts), tool_calls=uses, finish_reason=stop), model,
                     message_id, problems)


class ClaudeTraceReader(Reader):
    """Reader for claude-trace HTTP captures (request.body / response.body or SSE ``body_raw``).

    ``memo`` reuses the messages each call re-sends from the previous one; ``ids`` keys the calls by message id.
    """

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.memo = MessageMemo()
        self.ids = ResponseIds(path)

    def feed(self, rec: Record) -> Iterable[Output]:
        """One line = one HTTP exchange; non-/messages requests and failed exchanges become issues."""
        self.ids.start(rec.line)
        v = rec.value
        if not isinstance(v, dict) or not isinstance(v.get("request"), dict):
            return [Issue(self.path, rec.line, "unknown_record", "not a claude-trace exchange; skipped")]
        rq, rs = v["request"], r if isinstance(r := v.get("response"), dict) else {}
        body = rq.get("body")
        url = str(rq.get("url") or "")
        if not isinstance(body, dict) or ("messages" not in body and "/messages" not in url):
            # (a url that is no string said as JSON, not as Python's repr of it)
            said = url[:80] if isinstance(rq.get("url"), str) or not rq.get("url") else show_value(rq.get("url"))
            return [Issue(self.path, rec.line, "unknown_record", f"not a Messages API request ({said}); skipped")]
        status = rs.get("status_code")
        if isinstance(status, int) and status != 200:
            return [Issue(self.path, rec.line, "failed_request", f"HTTP {status}; not counted as a call")]
        usage = info = model = rid = None
        notes: list[Issue] = []
        # (a count the API writes as a number, given as a string of digits: read as the count, and said)
        said_counts = limit_counts(body, "request.body")
        if isinstance(rs.get("body"), dict):
            resp = rs["body"]
            rid = resp.get("id")
            said_counts += string_counts(resp.get("usage"), "response.body.usage")
        else:
            resp = None
            raw = rs.get("body_raw")
            if isinstance(raw, str) and is_openai_stream(values := sse_values(raw)):
                # (an OpenAI stream captured the same way: read as the response body its chunks stand for)
                resp = stream_body(values)
                rid = resp.get("id") if resp is not None else None
                if resp is not None and (gap := stream_usage_note(resp)):
                    notes = [Issue(self.path, rec.line, "no_usage", gap)]
                if resp is not None:
                    said_counts += string_counts(resp.get("usage"), "response.body_raw.usage")
            elif isinstance(raw, str):
                usage, info, model, rid, problems = parse_sse(raw)
                notes = [Issue(self.path, rec.line, kind, msg) for kind, msg in problems]
        ts = parse_timestamp(rq.get("timestamp")) or parse_timestamp(v.get("logged_at"))
        call = build_call(self.path, rec, body, resp, usage=usage, info=info, timestamp=ts, memo=self.memo)
        if resp is None or exchange_flavour(body, resp) == "anthropic":
            call.provider = "anthropic"
        notes += [Issue(self.path, rec.line, "invalid_field", p)
                  for p in [*request_problems(call, body, exchange_flavour(body, resp), "request.body"), *said_counts]]
        if model and not call.model:
            call.model = model
        # (after the model is settled: it is part of the key that keeps different requests apart)
        notes += self.ids.assign(call, rid, rec.line)
        if self.ids.better_copy(call, rec.line) is not None:  # (the exchange logged again: the copy counted stays)
            return self.ids.not_counted(call, rec.line, notes)
        replaced = self.ids.counted_copy(call, rec.line, notes)  # (a cut copy counted until this whole one)
        if call.key is None:  # (no message id: a stream cut before message_start)
            self.ids.content(call, record_hash(v, ("request", "body"), self.memo), rec.line)
        # Claude Code sends side calls beside the agent's own: max_tokens:1 quota probes and tool-less
        # helper calls (topic detection on a small model). They have their own prompts, so they are kept
        # out of the main context's history, floor and flags.
        if body.get("max_tokens") == 1 and not body.get("tools"):
            call.provenance.probe = True
            call.context = "probe"
        elif not body.get("tools"):
            call.context = "side"
        else:
            # (claude-trace records Claude Code's traffic: the agent's calls follow Claude Code's own limits, as
            # its transcript's do; a side call keeps its request's own reserve, and is never compacted)
            call.provenance.harness = "claude-code"
        return [call, *replaced, *notes]


def _sniff_trace(s: Sniff) -> float:
    vals = [v for v in s.values if isinstance(v, dict)]
    if not vals:
        return 0.0
    hits = sum(1 for v in vals if isinstance(v.get("request"), dict) and isinstance(v["request"].get("body"), dict)
               and "url" in v["request"])
    return 0.95 * hits / len(vals)


register(FormatSpec(
    name="claude-trace",
    description="claude-trace raw HTTP captures (request.body / response.body or SSE body_raw)",
    sniff=_sniff_trace, reader=ClaudeTraceReader,
    example="~/.claude-trace/log-*.jsonl",
))
