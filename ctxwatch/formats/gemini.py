"""Google Gemini: ``usageMetadata`` response records (batch outputs) and Gemini CLI chat recordings.

**Usage** (FORMATS.md §0 and §6; Gemini API reference, ``GenerateContentResponse.UsageMetadata``):
``promptTokenCount`` is the whole prompt and *includes* ``cachedContentTokenCount``;
``thoughtsTokenCount`` is counted *separately* from ``candidatesTokenCount`` (``totalTokenCount`` =
prompt + candidates + thoughts + toolUsePrompt).  So, in ctxwatch's terms (:class:`~ctxwatch.model.Usage`):
prompt_total = promptTokenCount, cache_read = cachedContentTokenCount, input_uncached = prompt − cached,
output = candidatesTokenCount + thoughtsTokenCount, reasoning = thoughtsTokenCount.
``toolUsePromptTokenCount`` (built-in tool results fed back to the model) is kept in
``extra["tool_use_prompt_tokens"]`` and not added to the prompt.

**Response records** (``gemini`` format).  One JSON line per response, any of:

* a bare ``GenerateContentResponse`` ``{custom_id?, candidates, usageMetadata, modelVersion, responseId?}``
  (the saved sample ``other/gemini-batch/``, real);
* a Gemini API batch output line ``{key, response}`` or ``{key, error}`` (Gemini API docs, "Batch Mode");
* a Vertex AI batch prediction line ``{request, response, status}`` (Vertex docs, "Batch prediction"); a
  non-empty ``status`` is a failure.

When the line holds the request (``contents``, ``systemInstruction``, ``tools``,
``generationConfig.maxOutputTokens``) it is used; otherwise system/tools/messages are ``None`` (not logged).

**Gemini CLI chat recording** (``gemini-cli`` format, FORMATS.md §6; checked against gemini-cli's
``packages/core/src/services/chatRecordingService.ts``).  JSONL: a header ``{sessionId, projectHash,
startTime, lastUpdated, kind}``, message records ``{id, timestamp, type, content, model, thoughts, tokens,
toolCalls}``, ``{"$set": {...}}`` metadata patches and ``{"$rewindTo": id}`` records, applied in order.  A
message is appended again, whole, each time it changes (same ``id``: it replaces the earlier one), and
``tokens`` may arrive on a later copy.  ``tokens`` maps usageMetadata one to one (input = promptTokenCount,
output = candidatesTokenCount, cached = cachedContentTokenCount, thoughts = thoughtsTokenCount, tool =
toolUsePromptTokenCount).  One call per ``type: "gemini"`` message with ``tokens``; its history is the
recorded messages before it (user turns, earlier model turns with their tool calls, tool results).  The
system prompt and tool schemas are not recorded: the floor is inferred once, from the first call with a
reported prompt (its prompt minus its counted history), and every later call names that call in
``extra["floor_call"]``, so its history is its reported prompt minus that floor, as Codex and Claude Code
calls are (:mod:`ctxwatch.accounting`).  Inferred per call, the floor took in the tokenizer's error on each
call's history and moved with it (11,845 to 12,004 tokens between the two calls of the sample) although
nothing in it changed.  A ``$set`` that replaces the message list (a compressed chat) infers it afresh.
The older whole-file ``.json`` ``ConversationRecord``
(``gemini-cli-json``) is read the same way.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from ctxwatch.formats import FormatSpec, Reader, Sniff, register, usage_count
from ctxwatch.formats.wire.damage import forget_history, history_problem
from ctxwatch.formats.wire.images import image_part
from ctxwatch.formats.wire.timestamps import parse_timestamp
from ctxwatch.formats.wire.values import int_or_none, json_text
from ctxwatch.model import BATCH_SIDE, Issue, Message, ParsedCall, Part, ResponseInfo, SourceRef, Usage
from ctxwatch.source import Record

Output = ParsedCall | Issue
RequestParts = tuple[list[str], list[dict[str, Any]], list[Message], int | None]


def _get(d: dict[str, Any], camel: str, snake: str) -> Any:
    """A field under its REST (camelCase) or SDK (snake_case) name."""
    v = d.get(camel)
    return d.get(snake) if v is None else v


def gemini_usage(meta: Any) -> tuple[Usage | None, int | None]:
    """Normalize a Gemini ``usageMetadata`` block (camelCase or snake_case keys).

    Args:
        meta: the ``usageMetadata`` dict.

    Returns:
        ``(usage, tool_use_prompt_tokens)``.  ``usage`` is ``None`` when neither a prompt nor an output
        count is present.  Inside a present block a missing count is 0, not unknown: the REST API writes
        protobuf JSON, which omits fields equal to their default (proto3 JSON mapping, "default values are
        omitted"), so a response with no cache hit has no ``cachedContentTokenCount`` and one without
        thinking no ``thoughtsTokenCount``.  See the module docstring for the rule and its sources.
    """
    if not isinstance(meta, dict):
        return None, None
    # (a value that is not a count is passed on for the sanitizer to report, with no arithmetic on it)
    prompt = usage_count(_get(meta, "promptTokenCount", "prompt_token_count"))
    cached = usage_count(_get(meta, "cachedContentTokenCount", "cached_content_token_count"), 0)
    cand = usage_count(_get(meta, "candidatesTokenCount", "candidates_token_count"))
    thoughts = usage_count(_get(meta, "thoughtsTokenCount", "thoughts_token_count"))
    tool = int_or_none(_get(meta, "toolUsePromptTokenCount", "tool_use_prompt_token_count"))
    if prompt is None and cand is None and thoughts is None:
        return None, tool
    cand = 0 if cand is None else cand
    thoughts = 0 if thoughts is None else thoughts
    uncached = prompt - cached if prompt.__class__ is int and cached.__class__ is int else None
    output = cand + thoughts if cand.__class__ is int and thoughts.__class__ is int else \
        (cand if cand.__class__ is not int else thoughts)  # (the bad one, reported as the output)
    return Usage(prompt_total=prompt, input_uncached=uncached, cache_read=cached, cache_write=None,
                 output=output, reasoning=thoughts), tool


def gemini_parts(parts: Any) -> list[Part]:
    """Normalize Gemini content parts (``text``, ``functionCall``, ``functionResponse``, ``inlineData``, ...).

    Accepts a string, one part dict, or a list of them (Gemini CLI's ``PartListUnion``).  ``inlineData``
    images become ``image`` parts with their pixel size read from the base64 header (failure case B03: the
    base64 is never counted as text); other inline or file data become ``document`` parts.
    Thought parts (``thought: true``) are kept as ``thinking``.  Never raises.
    """
    if parts is None:
        return []
    if isinstance(parts, str):
        return [Part("text", parts)] if parts else []
    items = parts if isinstance(parts, list) else [parts]
    out: list[Part] = []
    for p in items:
        if isinstance(p, str):
            out.append(Part("text", p))
            continue
        if not isinstance(p, dict):
            continue
        fc = _get(p, "functionCall", "function_call")
        fr = _get(p, "functionResponse", "function_response")
        inline = _get(p, "inlineData", "inline_data")
        filed = _get(p, "fileData", "file_data")
        if isinstance(p.get("text"), str):
            out.append(Part("thinking" if p.get("thought") else "text", p["text"]))
        elif isinstance(fc, dict):
            out.append(Part("tool_call", json_text(fc.get("args") or {}), name=str(fc.get("name") or ""),
                            call_id=fc.get("id")))
        elif isinstance(fr, dict):
            out.append(Part("tool_result", json_text(fr.get("response") if "response" in fr else fr),
                            name=str(fr.get("name") or "") or None, call_id=fr.get("id")))
        elif isinstance(inline, dict):
            mime = str(_get(inline, "mimeType", "mime_type") or "")
            data = str(inline.get("data") or "")
            if mime.startswith("image/"):
                # as a data URI: canonical's image_part reads the pixel size only from data URIs
                out.append(image_part(f"data:{mime};base64,{data}", {"media_type": mime}))
            else:
                out.append(Part("document", "", meta={"media_type": mime, "bytes": len(data) * 3 // 4}))
        elif isinstance(filed, dict):
            mime = str(_get(filed, "mimeType", "mime_type") or "")
            uri = str(_get(filed, "fileUri", "file_uri") or "")[:200]
            out.append(Part("image" if mime.startswith("image/") else "document", "",
                            meta={"media_type": mime, "url": uri}))
        else:
            out.append(Part("other", json_text(p)))
    return out


def gemini_request_to_parts(req: dict[str, Any]) -> RequestParts:
    """Split a ``generateContent`` request into ``(system, tools, messages, max_output_tokens)``.

    ``systemInstruction.parts[].text`` → system; ``contents[]`` (role ``user``/``model``) → messages
    (``model`` becomes ``assistant``; a user turn made only of ``functionResponse`` parts becomes ``tool``);
    each ``tools[].functionDeclarations[]`` entry → ``{"type": "function", "function": decl}`` (a Gemini
    FunctionDeclaration has the OpenAI function's ``name``/``description``/``parameters`` shape);
    ``generationConfig.maxOutputTokens`` → max output tokens.  Never raises.
    """
    system: list[str] = []
    si = _get(req, "systemInstruction", "system_instruction")
    if isinstance(si, str):
        system = [si]
    elif isinstance(si, dict):
        system = ["\n".join(p.text for p in gemini_parts(si.get("parts")))]
    messages: list[Message] = []
    contents = req.get("contents")
    if isinstance(contents, dict):
        contents = [contents]
    for c in contents if isinstance(contents, list) else []:
        if not isinstance(c, dict):
            continue
        parts = gemini_parts(c.get("parts"))
        role = "assistant" if c.get("role") == "model" else "user"
        if role == "user" and parts and all(p.kind == "tool_result" for p in parts):
            role = "tool"
        messages.append(Message(role, parts))
    tools: list[dict[str, Any]] = []
    for t in req.get("tools") or []:
        if not isinstance(t, dict):
            continue
        decls = _get(t, "functionDeclarations", "function_declarations")
        if isinstance(decls, list):
            tools.extend({"type": "function", "function": d} for d in decls if isinstance(d, dict))
        else:
            tools.append(t)  # built-in tools (googleSearch, codeExecution) as logged
    gc = _get(req, "generationConfig", "generation_config")
    mx = int_or_none(_get(gc, "maxOutputTokens", "max_output_tokens")) if isinstance(gc, dict) else None
    return system, tools, messages, mx


def gemini_request_problems(call: ParsedCall, req: dict[str, Any]) -> list[str]:
    """Mark on ``call`` what a logged ``generateContent`` request leaves unknown, and say why (one sentence each,
    for ``invalid_field`` issues), as :func:`~ctxwatch.formats.wire.damage.request_problems` does for the other
    request bodies: ``contents`` missing, empty, not a list (or one object) or holding entries that are not
    objects makes the history unknown, and the system prompt with it unless ``systemInstruction`` gave one
    (:func:`~ctxwatch.formats.wire.damage.forget_history`); a ``systemInstruction`` that is neither text nor a
    Content object leaves the system prompt unknown (it was read as none).  An empty ``contents`` is damage: the
    API rejects it (HTTP 400 INVALID_ARGUMENT "contents is not specified", quoted in
    NousResearch/hermes-agent#57942 and ikechan8370/chatgpt-plugin#733), so no call was made with one."""
    problems = []
    si = _get(req, "systemInstruction", "system_instruction")
    if si is not None and not isinstance(si, str | dict):
        call.system = None
        problems.append(f"request.systemInstruction is a JSON {type(si).__name__}, not text: the system prompt is "
                        "unknown")
    bad = history_problem(req, "contents", lambda m: isinstance(m, dict), object_ok=True, empty_ok=False)
    if bad:
        # (the system prompt comes from systemInstruction alone: contents do not add to it)
        problems.append(forget_history(call, bad, "request.contents", system=call.system,
                                       tools_field=isinstance(req.get("tools"), list)))
    return problems


def gemini_response_info(resp: Any) -> ResponseInfo | None:
    """Completion text (thought parts excluded), function-call count and finish reason of a response."""
    if not isinstance(resp, dict):
        return None
    cands = resp.get("candidates")
    if not isinstance(cands, list) or not cands or not isinstance(cands[0], dict):
        return None
    content = c if isinstance(c := cands[0].get("content"), dict) else {}
    parts = gemini_parts(content.get("parts"))
    text = "".join(p.text for p in parts if p.kind == "text")
    calls = sum(1 for p in parts if p.kind == "tool_call")
    return ResponseInfo(text=text, tool_calls=calls, finish_reason=_get(cands[0], "finishReason", "finish_reason"))


def _has_usage(d: Any) -> bool:
    return isinstance(d, dict) and ("usageMetadata" in d or "usage_metadata" in d)


def _src(path: str, rec: Record) -> SourceRef:
    return SourceRef(path, rec.line, rec.line_end, rec.byte_start, rec.byte_end)


class GeminiReader(Reader):
    """Reader of Gemini response records (``usageMetadata``), one call per line; see the module docstring."""

    def feed(self, rec: Record) -> Iterable[Output]:
        """One line → one call, or a ``failed_request`` / ``unknown_record`` issue."""
        v = rec.value
        if not isinstance(v, dict):
            return [Issue(self.path, rec.line, "unknown_record", "not a Gemini response record; skipped")]
        key = v.get("key") if v.get("key") is not None else v.get("custom_id")
        if _has_usage(v) or "candidates" in v:
            resp, req = v, None
        elif isinstance(v.get("response"), dict):
            resp = v["response"]
            req = v.get("request") if isinstance(v.get("request"), dict) else None
        else:
            resp, req = None, None
        status = v.get("status")
        if v.get("error") or (isinstance(status, str) and status) or (isinstance(status, dict) and status):
            err = v.get("error") or status
            why = err.get("message") if isinstance(err, dict) else str(err)
            return [Issue(self.path, rec.line, "failed_request",
                          f"request {key!s} failed ({str(why)[:200]}); not counted")]
        if resp is None:
            return [Issue(self.path, rec.line, "unknown_record", "no Gemini response (usageMetadata) here; skipped")]
        usage, tool = gemini_usage(_get(resp, "usageMetadata", "usage_metadata"))
        model = _get(resp, "modelVersion", "model_version")
        extra: dict[str, Any] = {}
        if key is not None:
            extra["custom_id"] = str(key)
        # A {request, response} line without "status" is not taken for a Vertex line: Vertex writes status on every
        # row of its output (Vertex docs, "Batch inference from Cloud Storage": a row's response in "response", its
        # error details in "status"; every published row has "status": "" beside processed_time, e.g. LiteLLM's
        # Vertex batch docs), while {request, response} alone is also what a request logger writes for a
        # synchronous generateContent call (tests/test_damaged_requests.py reads one so).  Nothing in such a line
        # says which it is; taken for a batch line it would be priced at half the rate and a logged conversation
        # cut into separate requests (no eviction, compaction or forecast), so without status it stays a
        # synchronous call.  (Not checked: a Vertex BigQuery output table exported to JSONL, should the export
        # leave a null status out.)
        if resp is not v and ("key" in v or ("request" in v and "status" in v)):
            # A Gemini Batch Mode ({key, response}) or Vertex AI batch prediction ({request, response, status})
            # output line: billed at the batch rate (windows.BATCH_DISCOUNT), and a request of its own, not a turn
            # of the line before (model.BATCH_SIDE: no eviction, no compaction, no forecast across lines; a Vertex
            # line has no key, so the mark cannot be the custom_id).  A bare response with its own
            # custom_id is not known to come from a batch API, and the saved sample does not: the script that
            # wrote it (nf-osi/jobs, submit_batch_gemini.sh) calls generateContent once per line and appends
            # the custom_id with jq, so those are synchronous calls at the standard rate.
            extra[BATCH_SIDE] = "output"
        if tool:
            extra["tool_use_prompt_tokens"] = tool
        rid = _get(resp, "responseId", "response_id")
        ts = parse_timestamp(_get(resp, "createTime", "create_time"))
        call = ParsedCall(source=_src(self.path, rec), timestamp=ts,
                          model=model if isinstance(model, str) else None, provider="google", usage=usage,
                          response=gemini_response_info(resp), extra=extra,
                          key=str(rid) if rid else (f"gemini:{key}" if key is not None else None))
        out: list[Output] = [call]
        if req is not None:
            call.system, call.tools, call.messages, call.max_output_tokens = gemini_request_to_parts(req)
            if call.model is None and isinstance(req.get("model"), str):
                call.model = req["model"]
            out += [Issue(self.path, rec.line, "invalid_field", p) for p in gemini_request_problems(call, req)]
        return out


# --- Gemini CLI chat recordings --------------------------------------------------------------------

def cli_tokens_usage(tokens: Any) -> Usage | None:
    """Usage of a Gemini CLI message's ``tokens`` block (same rule as :func:`gemini_usage`)."""
    if not isinstance(tokens, dict):
        return None
    usage, _ = gemini_usage({"promptTokenCount": tokens.get("input"),
                             "cachedContentTokenCount": tokens.get("cached"),
                             "candidatesTokenCount": tokens.get("output"),
                             "thoughtsTokenCount": tokens.get("thoughts")})
    return usage


def cli_message_to_messages(m: dict[str, Any]) -> list[Message]:
    """One recorded Gemini CLI message → the API messages it stands for in later requests.

    ``user`` → a user message.  ``gemini`` → an assistant message (text and ``toolCalls`` as tool calls),
    followed by a ``tool`` message holding the calls' ``result`` function responses when recorded.
    ``info``/``error``/``warning`` records are UI notices that are not sent to the model: no messages.
    """
    t = m.get("type")
    if t == "user":
        return [Message("user", gemini_parts(m.get("content")))]
    if t != "gemini":
        return []
    parts = [p for p in gemini_parts(m.get("content")) if p.kind != "thinking"]
    results: list[Part] = []
    for tc in m.get("toolCalls") or []:
        if not isinstance(tc, dict):
            continue
        parts.append(Part("tool_call", json_text(tc.get("args") or {}), name=str(tc.get("name") or ""),
                          call_id=tc.get("id")))
        res = gemini_parts(tc.get("result"))
        for p in res:
            if p.kind == "tool_result" and p.call_id is None:
                p.call_id = tc.get("id")
        results.extend(res)
    out = [Message("assistant", parts)]
    if results:
        out.append(Message("tool", results))
    return out


class GeminiCliReader(Reader):
    """Reader of a Gemini CLI JSONL chat recording (``$set`` / ``$rewindTo`` applied in order).

    State kept: the metadata (session id, kind) and the current message list.  Each ``gemini`` message
    with ``tokens`` gives a call keyed ``<sessionId>:<message id>``; a later copy of the same message
    (tool calls or tokens added) gives the same key again, which replaces the earlier call.
    """

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.meta: dict[str, Any] = {}
        self.messages: list[dict[str, Any]] = []
        self._converted: dict[int, tuple[dict[str, Any], list[Message]]] = {}
        self._floor_call: str | None = None  # key of the call whose inferred floor the later calls take

    def _session(self) -> str:
        sid = self.meta.get("sessionId")
        return str(sid) if sid else os.path.basename(self.path)

    def _history(self, upto: int) -> list[Message]:
        out: list[Message] = []
        for m in self.messages[:upto]:
            cached = self._converted.get(id(m))
            if cached is None or cached[0] is not m:
                cached = (m, cli_message_to_messages(m))
                self._converted[id(m)] = cached
            out.extend(cached[1])
        return out

    def _call(self, pos: int, src: SourceRef) -> ParsedCall:
        m = self.messages[pos]
        tokens = t if isinstance(t := m.get("tokens"), dict) else {}
        content = [p for p in gemini_parts(m.get("content")) if p.kind == "text"]
        info = ResponseInfo(text="".join(p.text for p in content), tool_calls=len(m.get("toolCalls") or []))
        extra: dict[str, Any] = {"message_id": m.get("id")}
        if int_or_none(tokens.get("tool")):
            extra["tool_use_prompt_tokens"] = int_or_none(tokens.get("tool"))
        kind = self.meta.get("kind")
        usage = cli_tokens_usage(tokens)
        key = f"{self._session()}:{m.get('id')}"
        if self._floor_call is None:
            if usage is not None and usage.prompt_total:
                self._floor_call = key
        elif self._floor_call != key:  # (a later copy of the floor's own call infers it again)
            extra["floor_call"] = self._floor_call
        return ParsedCall(source=src, timestamp=parse_timestamp(m.get("timestamp")),
                          model=m.get("model") if isinstance(m.get("model"), str) else None, provider="google",
                          session=self._session(),
                          context=f"subagent:{self._session()}" if kind == "subagent" else "main",
                          system=None, tools=None, messages=self._history(pos), usage=usage,
                          response=info, history_reported_only=True, key=key, extra=extra)

    def apply(self, v: Any, src: SourceRef, line: int) -> list[Output]:
        """Apply one record (header, message, ``$set``, ``$rewindTo``) and return the calls it completes."""
        if not isinstance(v, dict):
            return [Issue(self.path, line, "unknown_record", "not a Gemini CLI record; skipped")]
        if isinstance(v.get("$rewindTo"), str):
            ids = [m.get("id") for m in self.messages]
            cut = ids.index(v["$rewindTo"]) if v["$rewindTo"] in ids else 0
            del self.messages[cut:]
            return []
        if isinstance(v.get("$set"), dict):
            patch = v["$set"]
            self.meta.update({k: val for k, val in patch.items() if k != "messages"})
            if isinstance(patch.get("messages"), list):
                self.messages = [m for m in patch["messages"] if isinstance(m, dict)]
                self._floor_call = None  # (a new message list: its next call gives the floor again)
            return []
        if isinstance(v.get("id"), str):
            ids = [m.get("id") for m in self.messages]
            if v["id"] in ids:
                pos = ids.index(v["id"])
                self.messages[pos] = v
            else:
                self.messages.append(v)
                pos = len(self.messages) - 1
            if v.get("type") == "gemini" and isinstance(v.get("tokens"), dict):
                return [self._call(pos, src)]
            return []
        if "sessionId" in v and "messages" not in v:
            self.meta.update(v)
            return []
        if "sessionId" in v and isinstance(v.get("messages"), list):  # a whole legacy record on one line
            return self.feed_document(v)  # type: ignore[return-value]
        return [Issue(self.path, line, "unknown_record", "not a Gemini CLI record; skipped")]

    def feed(self, rec: Record) -> Iterable[Output]:
        """One JSONL record of the recording."""
        return self.apply(rec.value, _src(self.path, rec), rec.line)

    def feed_document(self, value: Any) -> Iterable[Output]:
        """A legacy whole-file ``ConversationRecord`` (``{sessionId, projectHash, messages[]}``)."""
        if not isinstance(value, dict) or not isinstance(value.get("messages"), list):
            return [Issue(self.path, 0, "unknown_record", "not a Gemini CLI conversation record")]
        self.meta.update({k: v for k, v in value.items() if k != "messages"})
        try:
            size = os.path.getsize(self.path)
        except OSError:
            size = 0
        src = SourceRef(self.path, 0, 0, 0, size)
        out: list[Output] = []
        self.messages = []
        for m in value["messages"]:
            if isinstance(m, dict) and isinstance(m.get("id"), str):
                out.extend(self.apply(m, src, 0))
        return out


# --- detection -------------------------------------------------------------------------------------

def _sniff_gemini(s: Sniff) -> float:
    vals = [v for v in s.values if isinstance(v, dict)]
    if not vals:
        return 0.0
    hits = sum(1 for v in vals if _has_usage(v) or _has_usage(v.get("response"))
               or ("candidates" in v and "modelVersion" in v))
    return 0.95 * hits / len(vals)


def _is_cli_record(v: dict[str, Any]) -> bool:
    if "$set" in v or "$rewindTo" in v:
        return True
    if "sessionId" in v and "projectHash" in v:
        return True
    return isinstance(v.get("id"), str) and v.get("type") in ("user", "gemini", "info", "error", "warning")


def _sniff_cli(s: Sniff) -> float:
    vals = [v for v in s.values if isinstance(v, dict)]
    if not vals:
        return 0.0
    first = vals[0]
    if not ("sessionId" in first and "projectHash" in first) and not any(
            v.get("type") == "gemini" and isinstance(v.get("tokens"), dict) for v in vals):
        return 0.0
    return 0.95 * sum(1 for v in vals if _is_cli_record(v)) / len(vals)


def _sniff_cli_json(s: Sniff) -> float:
    from ctxwatch.formats.documents import sniff_document

    d = sniff_document(s)
    if isinstance(d, dict) and "sessionId" in d and "projectHash" in d and isinstance(d.get("messages"), list):
        return 0.95
    return 0.0


register(FormatSpec(
    name="gemini",
    description="Gemini generateContent responses with usageMetadata (batch outputs, Vertex batch prediction)",
    sniff=_sniff_gemini, reader=GeminiReader, aliases=("gemini-batch",),
    example='{"custom_id":"r1","candidates":[…],"usageMetadata":{"promptTokenCount":5302,…},"modelVersion":"…"}',
))
register(FormatSpec(
    name="gemini-cli",
    description="Gemini CLI JSONL chat recording (~/.gemini/tmp/<hash>/chats/session-*.jsonl, $set patches)",
    sniff=_sniff_cli, reader=GeminiCliReader, needs_prefix=True,
    example='{"id":"…","type":"gemini","tokens":{"input":11855,"output":81,"cached":0,…},"model":"…"}',
))
register(FormatSpec(
    name="gemini-cli-json",
    description="Gemini CLI legacy chat recording (one JSON ConversationRecord, rewritten in place)",
    sniff=_sniff_cli_json, reader=GeminiCliReader, document=True,
    example="~/.gemini/tmp/<hash>/chats/session-<date>-<id>.json",
))

