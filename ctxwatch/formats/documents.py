"""Whole-file JSON logs of agent frameworks: Inspect AI, OpenHands, SWE-agent, Cline.

These are JSON *documents* (one value per file, often pretty-printed), read whole and handed to
:meth:`~ctxwatch.formats.Reader.feed_document`; the OpenHands evaluation output is the exception, a JSONL of
200 KB+ lines read line by line.  Sources of the layouts: FORMATS.md §5e (Inspect), §5f (SWE-agent),
§5g (OpenHands), §5j (Cline), checked against the real samples under ``request-response/`` and ``other/``.

Every call of a document points at the whole file (``SourceRef(path, 0, 0, 0, size)``: line 0 = not tied
to a line) and carries a locator in ``extra`` (Inspect ``sample``/``epoch``/``event``, OpenHands
``response_id``, SWE-agent ``step``, Cline ``index``) plus a unique ``key`` to find it again.

Formats registered here:

* ``inspect-ai``: Inspect eval logs, ``.json`` (an ``EvalLog``) or ``.eval`` (a zip of ``header.json`` and
  ``samples/<id>_epoch_<n>.json``).  One call per ``events[]`` entry with ``event: "model"``; the exact
  system prompt and tools come from the event's ``input`` / ``tools``, usage from ``output.usage``
  (see :func:`inspect_usage`), ``attachment://<hash>`` references resolved from the sample's
  ``attachments``.  Model calls made inside a scorer get ``context = "scorer:<name>"``.
* ``openhands``: trajectory export (JSON array of events).  One call per distinct
  ``tool_call_metadata.model_response.id`` (the same response is repeated on its action and its
  observation); usage from ``model_response.usage`` (LiteLLM's OpenAI-shaped usage, :func:`litellm_usage`).
* ``openhands-eval``: evaluation output JSONL, one instance per line; one call per
  ``metrics.token_usages[]`` entry, keyed by ``response_id``.
* ``swe-agent``: ``.traj`` documents.  Only cumulative ``info.model_stats`` exists, so every call has
  ``usage = None`` and the run totals in ``extra["cumulative"]``; messages from ``trajectory[].query``
  when present, else rebuilt from ``history``.  Tool schemas are ``[]`` when no message makes a tool call
  (0.x agents describe their commands in the system prompt) and ``None`` (not logged) otherwise.
* ``cline``: Cline / Roo Code ``ui_messages.json``.  One call per ``say: "api_req_started"`` entry whose
  ``text`` is a JSON string ``{request, tokensIn, tokensOut, cacheWrites, cacheReads, cost}``; ``tokensIn``
  is Anthropic-style uncached input, so prompt_total = tokensIn + cacheWrites + cacheReads.

Histories rebuilt from agent events (OpenHands, SWE-agent without ``query``, Cline) are the visible part of
what was sent, not the exact request: such calls set ``history_reported_only`` when usage is reported.
"""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Iterable
from typing import Any

import orjson

from ctxwatch.formats import FormatSpec, Reader, Sniff, count_or_none, register, sniff_document, usage_count
from ctxwatch.formats.wire.damage import forget_history, history_problem
from ctxwatch.formats.wire.images import image_part
from ctxwatch.formats.wire.litellm import litellm_usage
from ctxwatch.formats.wire.openai import openai_message, openai_response_info
from ctxwatch.formats.wire.timestamps import parse_timestamp
from ctxwatch.formats.wire.values import int_or_none, json_text
from ctxwatch.model import Issue, Message, ParsedCall, Part, ResponseInfo, SourceRef, Usage
from ctxwatch.source import Record

Output = ParsedCall | Issue

#: Model-id routing prefixes that say nothing about the model's maker (LiteLLM / OpenRouter / proxies).
_ROUTING_PREFIXES = ("openai/", "openrouter/", "litellm_proxy/", "litellm/", "azure/", "together/", "groq/",
                     "bedrock/", "vertex_ai/", "vertex/", "hf/", "ollama/", "fireworks/")


def provider_of_model(model: str | None) -> str | None:
    """Guess the provider whose tokenizer and framing rules apply, from a model id.

    ``claude`` → ``anthropic``; ``gemini`` → ``google``; ``gpt-``/``o1``/``o3``/``o4``/``chatgpt``/
    ``codex`` → ``openai``; anything else ``None`` (unknown, not guessed).  Routing prefixes such as
    ``openai/`` or ``openrouter/`` are looked through, so ``openai/openrouter-llama-4-maverick`` is ``None``.
    """
    if not model:
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


def _whole_file(path: str) -> SourceRef:
    try:
        size = os.path.getsize(path)
    except OSError:
        size = 0
    return SourceRef(path, 0, 0, 0, size)


# --- Inspect AI ------------------------------------------------------------------------------------

def inspect_usage(u: Any, provider: str | None) -> Usage | None:
    """Normalize an Inspect ``ModelUsage`` (``output.usage``) to :class:`Usage`.

    Inspect's fields: ``input_tokens``, ``output_tokens``, ``total_tokens``, ``input_tokens_cache_read``,
    ``input_tokens_cache_write``, ``reasoning_tokens``.  Their meaning depends on the provider *and* the
    Inspect release: the Anthropic provider logs ``input_tokens`` uncached (``total_tokens`` = input + cache
    write + cache read + output); the OpenAI provider logs ``prompt_tokens`` (cache reads inside); recent
    releases of the Google provider subtract cached tokens from ``input_tokens`` and log ``output_tokens``
    without thoughts (source: inspect_ai ``model/_providers/anthropic.py``, ``openai.py``, ``google.py``).

    So the convention is read from the numbers first: ``total_tokens`` equal to input + cache + output
    (+ reasoning) means ``input_tokens`` excludes the cache; equal to input + output (+ reasoning) means it
    includes it.  When no cache field is set there is nothing to tell apart.  Only if ``total_tokens``
    fits neither is the provider's convention used (``anthropic`` → uncached, others → whole prompt).
    Reasoning tokens are added to the output only when ``total_tokens`` shows they were counted apart
    (Gemini thoughts); otherwise they are the reasoning share of the output.
    """
    if not isinstance(u, dict):
        return None
    names = ("input_tokens", "output_tokens", "total_tokens", "input_tokens_cache_read", "input_tokens_cache_write",
             "reasoning_tokens")
    if any(u.get(k) is not None and count_or_none(u.get(k)) is None for k in names):
        # A field that is not a count (1e400, "many", -1): passed through for the run to report and make unknown
        # (run._sanitize), never read as absent; the convention cannot be told from damaged numbers.
        raw = usage_count(u.get("input_tokens"))
        return Usage(prompt_total=raw, input_uncached=raw, cache_read=usage_count(u.get("input_tokens_cache_read")),
                     cache_write=usage_count(u.get("input_tokens_cache_write")),
                     output=usage_count(u.get("output_tokens")), reasoning=usage_count(u.get("reasoning_tokens")))
    inp = int_or_none(u.get("input_tokens"))
    out = int_or_none(u.get("output_tokens"))
    if inp is None and out is None:
        return None
    total = int_or_none(u.get("total_tokens"))
    cr = int_or_none(u.get("input_tokens_cache_read"))
    cw = int_or_none(u.get("input_tokens_cache_write"))
    rs = int_or_none(u.get("reasoning_tokens"))
    i, o, cache, r = inp or 0, out or 0, (cr or 0) + (cw or 0), rs or 0
    if cache == 0:
        uncached_input = False
    elif total is not None and total in (i + cache + o, i + cache + o + r):
        uncached_input = True
    elif total is not None and total in (i + o, i + o + r):
        uncached_input = False
    else:
        uncached_input = provider == "anthropic"
    prompt = i + cache if uncached_input else i
    thoughts_apart = bool(r) and total is not None and total == prompt + o + r and total != prompt + o
    output = o + r if thoughts_apart else out
    return Usage(prompt_total=prompt if inp is not None else None,
                 input_uncached=i if uncached_input else (i - cache if cache else i),
                 cache_read=cr, cache_write=cw, output=output, reasoning=rs)


def _inspect_provider(model: str | None) -> str | None:
    """Provider from an Inspect model id (``openai/gpt-4o-mini``, ``anthropic/claude-…``, ``google/gemini-…``)."""
    if not model:
        return None
    head = model.split("/", 1)[0].lower()
    if head in ("openai", "azureai") and "/" in model:
        return provider_of_model(model.split("/", 1)[1]) or "openai"
    if head == "anthropic":
        return "anthropic"
    if head in ("google", "vertex"):
        return provider_of_model(model) or "google"
    return provider_of_model(model)


def _resolve(v: Any, attachments: dict[str, Any]) -> Any:
    """Replace ``attachment://<hash>`` strings by the sample's attachment text, recursively."""
    if isinstance(v, str):
        if v.startswith("attachment://"):
            got = attachments.get(v[len("attachment://"):])
            return got if isinstance(got, str) else v
        return v
    if isinstance(v, list):
        return [_resolve(x, attachments) for x in v]
    if isinstance(v, dict):
        return {k: _resolve(x, attachments) for k, x in v.items()}
    return v


def _inspect_content(content: Any) -> list[Part]:
    """Parts of an Inspect message's ``content`` (a string or a list of Content objects)."""
    if content is None:
        return []
    if isinstance(content, str):
        return [Part("text", content)]
    parts: list[Part] = []
    for c in content if isinstance(content, list) else [content]:
        if isinstance(c, str):
            parts.append(Part("text", c))
            continue
        if not isinstance(c, dict):
            continue
        t = c.get("type")
        if t == "text":
            parts.append(Part("text", str(c.get("text") or "")))
        elif t == "reasoning":
            parts.append(Part("thinking", "" if c.get("redacted") else str(c.get("reasoning") or "")))
        elif t == "image":
            detail = c.get("detail")
            parts.append(image_part(str(c.get("image") or ""), {"detail": detail} if detail else None))
        elif t in ("audio", "video", "document", "data"):
            raw = r if isinstance(r := c.get(t), str) else ""
            parts.append(Part("document", "", meta={"type": t, "bytes": len(raw) * 3 // 4,
                                                    "format": c.get("format") or c.get("mime_type")}))
        else:
            parts.append(Part("other", json_text(c)))
    return parts


def inspect_message(m: dict[str, Any]) -> Message:
    """One Inspect ``ChatMessage`` (system / user / assistant with ``tool_calls`` / tool) as a Message."""
    role = str(m.get("role") or "user")
    parts = _inspect_content(m.get("content"))
    if role == "assistant":
        for tc in m.get("tool_calls") or []:
            if isinstance(tc, dict):
                parts.append(Part("tool_call", json_text(tc.get("arguments") or {}),
                                  name=str(tc.get("function") or ""), call_id=tc.get("id")))
    if role == "tool":
        text = "\n".join(p.text for p in parts if p.kind != "image")
        err = m.get("error")
        if isinstance(err, dict) and err.get("message"):
            text = (text + "\n" if text else "") + str(err["message"])
        others = [p for p in parts if p.kind in ("image", "document")]
        parts = [Part("tool_result", text, name=m.get("function"), call_id=m.get("tool_call_id")), *others]
    return Message(role, parts)


def _inspect_tools(tools: Any) -> list[dict[str, Any]]:
    """Inspect ``ToolInfo`` entries (``name``, ``description``, ``parameters``) in OpenAI function form."""
    out: list[dict[str, Any]] = []
    for t in tools if isinstance(tools, list) else []:
        if isinstance(t, dict):
            out.append({"type": "function", "function": {k: t[k] for k in ("name", "description", "parameters")
                                                         if k in t}})
    return out


def _walk_events(events: Any, scope: list[str]) -> Iterable[tuple[dict[str, Any], str]]:
    """Model events in order with their context, following ``step``/``span`` scopes and nested ``events``."""
    spans: dict[str, str] = {}
    for e in events if isinstance(events, list) else []:
        if not isinstance(e, dict):
            continue
        kind = e.get("event")
        if kind == "step" and e.get("type") == "scorer":
            name = f"scorer:{e.get('name')}"
            if e.get("action") == "begin":
                scope.append(name)
            elif name in scope:
                scope.remove(name)
        elif kind == "span_begin" and e.get("type") == "scorer":
            name = f"scorer:{e.get('name')}"
            spans[str(e.get("id"))] = name
            scope.append(name)
        elif kind == "span_end" and str(e.get("id")) in spans:
            name = spans.pop(str(e.get("id")))
            if name in scope:
                scope.remove(name)
        elif kind == "model" and not e.get("pending"):
            yield e, scope[-1] if scope else "main"
        if isinstance(e.get("events"), list):  # subtask / tool events of older releases nest their events
            inner = list(scope)
            if kind == "subtask":
                inner.append(f"subtask:{e.get('name')}")
            yield from _walk_events(e["events"], inner)


class InspectReader(Reader):
    """Reader of Inspect AI eval logs (``.json`` documents and ``.eval`` zips); see the module docstring."""

    def feed_document(self, value: Any) -> Iterable[Output]:
        """Read an ``EvalLog`` dict, or (``value`` a path string or ``None``) the ``.eval`` zip at ``self.path``."""
        if isinstance(value, dict):
            return self._log(ev if isinstance(ev := value.get("eval"), dict) else {},
                             value.get("samples") or [], None)
        return self._zip(value if isinstance(value, str) else self.path)

    def _zip(self, path: str) -> list[Output]:
        """Read a ``.eval`` zip one ``samples/*.json`` member at a time (a sample's text is dropped after use)."""
        out: list[Output] = []
        try:
            with zipfile.ZipFile(path) as zf:
                names = zf.namelist()
                header: Any = {}
                for hname in ("header.json", "_journal/start.json"):
                    if hname in names:
                        try:
                            header = orjson.loads(zf.read(hname))
                        except orjson.JSONDecodeError as exc:
                            out.append(Issue(self.path, 0, "invalid_json", f"{hname}: {exc}"))
                        break
                ev = h if isinstance(header, dict) and isinstance(h := header.get("eval"), dict) else {}
                run_id = ev.get("run_id") if isinstance(ev.get("run_id"), str) else None
                members = [n for n in names if n.startswith("samples/") and n.endswith(".json")]
                if not members:
                    out.append(Issue(self.path, 0, "no_samples", "Inspect log holds no samples (header-only log?)"))
                for n in members:
                    try:
                        sample = orjson.loads(zf.read(n))
                    except (orjson.JSONDecodeError, zipfile.BadZipFile, OSError, ValueError) as exc:
                        out.append(Issue(self.path, 0, "invalid_json", f"{n}: unreadable sample ({exc})"))
                        continue
                    out.extend(self._sample(sample, run_id, n))
        except (OSError, zipfile.BadZipFile) as exc:
            out.append(Issue(self.path, 0, "unreadable", f"not a readable Inspect .eval archive: {exc}"))
        return out

    def _log(self, ev: dict[str, Any], samples: Any, members: list[str] | None) -> list[Output]:
        if not isinstance(samples, list):
            return [Issue(self.path, 0, "unknown_record", "Inspect log without a samples list")]
        out: list[Output] = []
        if not samples:
            out.append(Issue(self.path, 0, "no_samples", "Inspect log holds no samples (header-only log?)"))
        run_id = ev.get("run_id") if isinstance(ev.get("run_id"), str) else None
        for si, s in enumerate(samples):
            out.extend(self._sample(s, run_id, members[si] if members else None))
        return out

    def _sample(self, s: Any, run_id: str | None, member: str | None) -> list[Output]:
        """The calls of one ``EvalSample``: its model events, in order, with attachments resolved."""
        if not isinstance(s, dict):
            return []
        src = _whole_file(self.path)
        att = a if isinstance(a := s.get("attachments"), dict) else {}
        sid, epoch = s.get("id"), s.get("epoch")
        return [out for n, (e, context) in enumerate(_walk_events(s.get("events"), []))
                for out in self._call(e, context, att, src, sid, epoch, n, run_id, member)]

    def _call(self, e: dict[str, Any], context: str, att: dict[str, Any], src: SourceRef, sid: Any, epoch: Any,
              n: int, run_id: str | None, member: str | None) -> list[Output]:
        """The call of one model event, and an ``invalid_field`` issue when its ``input`` (the messages sent,
        system prompt first) is missing, damaged or empty: the history and system prompt are then unknown
        (:func:`~ctxwatch.formats.wire.damage.forget_history`), not empty.  An empty ``input`` is damage as an
        empty chat ``messages`` or Gemini ``contents`` is: every provider Inspect calls rejects a request
        without messages (OpenAI ``empty_array``, Anthropic "at least one message is required", Gemini
        "contents is not specified": :func:`~ctxwatch.formats.wire.damage.request_problems`), so no call was
        made with one; read as empty, it was a request without the system prompt (``system_prompt_evicted``)
        and a history of 0."""
        model = e.get("model") if isinstance(e.get("model"), str) else None
        provider = _inspect_provider(model)
        output = o if isinstance(o := e.get("output"), dict) else {}
        system: list[str] = []
        messages: list[Message] = []
        for m in e.get("input") or []:
            if not isinstance(m, dict):
                continue
            msg = inspect_message(_resolve(m, att))
            if msg.role == "system":
                system.append(msg.text())
            else:
                messages.append(msg)
        choices = output.get("choices") if isinstance(output.get("choices"), list) else []
        info = None
        if choices and isinstance(choices[0], dict):
            rmsg = inspect_message(_resolve(choices[0].get("message") or {}, att))
            info = ResponseInfo(text="".join(p.text for p in rmsg.parts if p.kind == "text"),
                                tool_calls=len(rmsg.tool_call_ids()), finish_reason=choices[0].get("stop_reason"))
        cfg = cf if isinstance(cf := e.get("config"), dict) else {}
        extra: dict[str, Any] = {"sample": sid, "epoch": epoch, "event": n, "inspect_model": model}
        if member:
            extra["member"] = member
        if e.get("cache"):
            extra["cache"] = e["cache"]  # "read" = served from Inspect's local cache, not the provider
        if output.get("error") or e.get("error"):
            extra["error"] = str(output.get("error") or e.get("error"))[:500]
        key = e.get("uuid") or e.get("id") or f"{run_id or ''}:{sid}:{epoch}:{n}"
        resolved = output.get("model") if isinstance(output.get("model"), str) else None
        call = ParsedCall(source=src, timestamp=parse_timestamp(e.get("timestamp")), model=resolved or model,
                          provider=provider, session=_inspect_session(run_id, sid, epoch), context=context,
                          system=system, tools=_inspect_tools(e.get("tools")), messages=messages,
                          max_output_tokens=int_or_none(cfg.get("max_tokens")),
                          usage=inspect_usage(output.get("usage"), provider), response=info, key=str(key),
                          extra=extra)
        bad = history_problem(e, "input", empty_ok=False)
        if not bad:
            return [call]
        why = forget_history(call, bad, f"sample {sid!s} epoch {epoch!s} model event {n}: input",
                             tools_field=isinstance(e.get("tools"), list))
        return [call, Issue(self.path, 0, "invalid_field", why)]


def _inspect_session(run_id: str | None, sample: Any, epoch: Any) -> str | None:
    """An Inspect sample's session: ``<run_id>:<sample id>:<epoch>`` (sample ids restart at 1 in every eval
    run, so two runs' logs in one folder would otherwise merge); ``None`` without a sample id."""
    if sample is None:
        return None
    return f"{run_id}:{sample}:{epoch}" if run_id else f"{sample}:{epoch}"


# --- OpenHands -------------------------------------------------------------------------------------

def _args(e: dict[str, Any]) -> dict[str, Any]:
    a = e.get("args")
    return a if isinstance(a, dict) else {}


def _model_response(e: dict[str, Any]) -> dict[str, Any] | None:
    tcm = e.get("tool_call_metadata")
    if isinstance(tcm, dict) and isinstance(tcm.get("model_response"), dict):
        return tcm["model_response"]
    return None


class _OpenHandsHistory:
    """Builds the visible history from OpenHands events, one event at a time.

    ``system`` actions give the system prompt (and tools, when the event carries them); user ``message``
    actions give user turns; each distinct ``model_response`` gives one assistant turn (its text and tool
    calls, once); observations with ``tool_call_metadata`` give tool results; agent ``message`` actions
    without a model response give assistant text.  Other events (recall, condensation, state changes) are
    not sent as such and are skipped.
    """

    def __init__(self) -> None:
        self.system: list[str] | None = None
        self.tools: list[dict[str, Any]] | None = None
        self.messages: list[Message] = []
        self.seen: set[str] = set()

    def add(self, e: dict[str, Any]) -> dict[str, Any] | None:
        """Add one event; return its model response if it is the first event of a new response, else ``None``."""
        mr = _model_response(e)
        if mr is not None and isinstance(mr.get("id"), str):
            rid = mr["id"]
            new = rid not in self.seen
            if new:
                self.seen.add(rid)
                return mr  # the caller snapshots the history first, then calls add_response
            if "observation" in e:
                self._observation(e)
            return None
        action = e.get("action")
        if action == "system":
            text = _args(e).get("content") or e.get("message")
            self.system = [str(text or "")]
            if isinstance(_args(e).get("tools"), list):
                self.tools = [t for t in _args(e)["tools"] if isinstance(t, dict)]
        elif action == "message":
            text = str(_args(e).get("content") or e.get("message") or "")
            role = "user" if e.get("source") == "user" else "assistant"
            self.messages.append(Message(role, [Part("text", text)]))
        elif "observation" in e and isinstance(e.get("tool_call_metadata"), dict):
            self._observation(e)
        return None

    def _observation(self, e: dict[str, Any]) -> None:
        tcm = e["tool_call_metadata"]
        text = c if isinstance(c := e.get("content"), str) else str(e.get("message") or "")
        x: dict[str, Any] = ex if isinstance(ex := e.get("extras"), dict) else {}
        if e.get("observation") == "edit":
            # What the model is sent is the observation's str() (OpenHands FileEditObservation.__str__): the
            # editor's own output for an openhands-aci edit, a one-line note for a new file; ``content`` holds
            # the diff shown in the UI (a 3,558-character diff for a 13-token "File created successfully").
            if x.get("impl_source") == "oh_aci" and isinstance(x.get("formatted_output_and_error"), str):
                text = x["formatted_output_and_error"]
            elif x.get("prev_exist") is False and isinstance(x.get("path"), str):
                text = f"[New file {x['path']} is created with the provided content.]"
        self.messages.append(Message("tool", [Part("tool_result", text, name=tcm.get("function_name"),
                                                   call_id=tcm.get("tool_call_id"))]))

    def add_response(self, mr: dict[str, Any]) -> None:
        """Append the assistant turn of a model response (after its call was built)."""
        choices = mr.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            msg = choices[0].get("message")
            if isinstance(msg, dict):
                self.messages.append(openai_message({**msg, "role": "assistant"}))


def _openhands_events(value: Any) -> list[dict[str, Any]] | None:
    if isinstance(value, list):
        return [e for e in value if isinstance(e, dict)]
    if isinstance(value, dict):
        for k in ("history", "trajectory", "events"):
            if isinstance(value.get(k), list):
                return [e for e in value[k] if isinstance(e, dict)]
    return None


class OpenHandsReader(Reader):
    """Reader of an OpenHands trajectory export; one call per distinct ``model_response.id``."""

    def feed_document(self, value: Any) -> Iterable[Output]:
        """Read the JSON array of events (or a dict holding it under ``history``/``trajectory``)."""
        events = _openhands_events(value)
        if events is None:
            return [Issue(self.path, 0, "unknown_record", "not an OpenHands trajectory (no event list)")]
        src = _whole_file(self.path)
        hist = _OpenHandsHistory()
        out: list[Output] = []
        for i, e in enumerate(events):
            mr = hist.add(e)
            if mr is None:
                continue
            model = mr.get("model") if isinstance(mr.get("model"), str) else None
            usage = litellm_usage(mr.get("usage"))
            ts = parse_timestamp(mr.get("created")) or parse_timestamp(e.get("timestamp"))
            out.append(ParsedCall(
                source=src, timestamp=ts, model=model, provider=provider_of_model(model),
                system=list(hist.system) if hist.system is not None else None,
                tools=list(hist.tools) if hist.tools is not None else None, messages=list(hist.messages),
                usage=usage, response=openai_response_info(mr), history_reported_only=usage is not None,
                key=mr["id"], extra={"response_id": mr["id"], "event_id": e.get("id"), "event_index": i}))
            hist.add_response(mr)
        return _floor_once(out)


def _floor_once(calls: list[Output]) -> list[Output]:
    """Mark the calls of one conversation whose system prompt and tools are not logged (``history_reported_only``)
    so that the floor is inferred once, from the first call with a reported prompt, and each later call's
    history is its reported prompt minus that floor (``extra["floor_call"]``, :mod:`ctxwatch.accounting`).

    Inferring the floor of every call (reported prompt minus the history as counted here) put the tokenizer gap
    into the floor: on a real Cline run of Claude calls counted with o200k_base it climbed 11,148 -> 40,106 in
    12 calls.  This is what the Claude Code reader does per context.
    """
    first: str | None = None
    for c in calls:
        if not isinstance(c, ParsedCall) or not c.history_reported_only or c.key is None:
            continue
        if first is not None:
            c.extra["floor_call"] = first
        elif c.usage is not None and (c.usage.prompt_total or 0) > 0 and c.messages is not None:
            first = c.key
    return calls


class OpenHandsEvalReader(Reader):
    """Reader of OpenHands evaluation output JSONL: one instance per line, calls from ``token_usages[]``."""

    def feed(self, rec: Record) -> Iterable[Output]:
        """One instance line → one call per ``metrics.token_usages[]`` entry (deduped by ``response_id``)."""
        v = rec.value
        if not isinstance(v, dict) or not isinstance(v.get("metrics"), dict):
            return [Issue(self.path, rec.line, "unknown_record", "not an OpenHands evaluation instance; skipped")]
        src = SourceRef(self.path, rec.line, rec.line_end, rec.byte_start, rec.byte_end)
        usages = v["metrics"].get("token_usages")
        if not isinstance(usages, list):
            return [Issue(self.path, rec.line, "no_usage", "instance has no metrics.token_usages; no calls")]
        # History snapshots keyed by the response that was produced from them.
        hist = _OpenHandsHistory()
        snaps: dict[str, tuple[list[str] | None, list[dict[str, Any]] | None, list[Message], dict[str, Any]]] = {}
        for e in v.get("history") or []:
            if not isinstance(e, dict):
                continue
            mr = hist.add(e)
            if mr is not None:
                snaps[mr["id"]] = (hist.system and list(hist.system), hist.tools and list(hist.tools),
                                   list(hist.messages), mr)
                hist.add_response(mr)
        inst = v.get("instance_id")
        out: list[Output] = []
        seen: set[str] = set()
        for n, tu in enumerate(usages):
            if not isinstance(tu, dict):
                continue
            rid = str(tu.get("response_id") or f"{inst}:{n}")
            if rid in seen:
                continue
            seen.add(rid)
            usage = litellm_usage({"prompt_tokens": tu.get("prompt_tokens"),
                                   "completion_tokens": tu.get("completion_tokens"),
                                   "cache_read_tokens": tu.get("cache_read_tokens"),
                                   "cache_write_tokens": tu.get("cache_write_tokens")})
            snap = snaps.get(rid)
            model = tu.get("model") if isinstance(tu.get("model"), str) else None
            mr = snap[3] if snap else None
            call = ParsedCall(source=src, model=(mr.get("model") if mr and isinstance(mr.get("model"), str) else model),
                              provider=provider_of_model(model) or provider_of_model(mr.get("model") if mr else None),
                              session=str(inst) if inst is not None else None, usage=usage,
                              window=int_or_none(tu.get("context_window")) or None, key=rid,
                              extra={"response_id": rid, "instance_id": inst, "usage_index": n, "config_model": model})
            if snap is not None:
                call.system, call.tools, call.messages = snap[0], snap[1], snap[2]
                call.history_reported_only = usage is not None
                call.timestamp = parse_timestamp(mr.get("created")) if mr else None
                call.response = openai_response_info(mr)
            out.append(call)
        return _floor_once(out)


# --- SWE-agent -------------------------------------------------------------------------------------

def _swe_model(doc: dict[str, Any]) -> str | None:
    """Model id from a ``.traj``'s ``replay_config`` (a JSON string in SWE-agent 1.x), if present."""
    rc = doc.get("replay_config")
    if isinstance(rc, str):
        try:
            rc = json.loads(rc)
        except (ValueError, RecursionError):
            return None
    if not isinstance(rc, dict):
        return None
    agent = a if isinstance(a := rc.get("agent"), dict) else {}
    model = agent.get("model") if isinstance(agent.get("model"), dict) else rc.get("model")
    if isinstance(model, dict):
        name = model.get("name") or model.get("model_name")
        return name if isinstance(name, str) else None
    return None


def _swe_message(m: dict[str, Any]) -> Message:
    """A SWE-agent history entry (OpenAI-shaped, ``tool_call_ids`` list) as a Message."""
    m2 = dict(m)
    ids = m.get("tool_call_ids")
    if m.get("role") == "tool" and isinstance(ids, list) and ids and "tool_call_id" not in m2:
        m2["tool_call_id"] = ids[0]
    if not isinstance(m2.get("tool_calls"), list):
        m2.pop("tool_calls", None)
    return openai_message(m2)


class SweAgentReader(Reader):
    """Reader of SWE-agent ``.traj`` documents: calls with unknown per-call usage, cumulative totals kept."""

    def feed_document(self, value: Any) -> Iterable[Output]:
        """Read one ``.traj``: one call per ``trajectory`` step (``query``) or per assistant ``history`` turn."""
        if not isinstance(value, dict) or not isinstance(value.get("history") or value.get("trajectory"), list):
            return [Issue(self.path, 0, "unknown_record", "not a SWE-agent trajectory (no history/trajectory)")]
        src = _whole_file(self.path)
        info = i if isinstance(i := value.get("info"), dict) else {}
        stats = info.get("model_stats") if isinstance(info.get("model_stats"), dict) else None
        model = _swe_model(value)
        provider = provider_of_model(model)
        steps = [s for s in value.get("trajectory") or [] if isinstance(s, dict)]
        out: list[Output] = []
        calls: list[ParsedCall] = []
        # Function-calling agents (1.x) send tool schemas that the .traj does not keep: unknown (None).
        # Without tool calls the commands are described in the system prompt and no schema is sent: [].
        logged = [m for m in value.get("history") or [] if isinstance(m, dict)]
        logged += [m for st in steps for m in (st.get("query") or []) if isinstance(m, dict)]
        tools: list[dict[str, Any]] | None = None if any(m.get("tool_calls") for m in logged) else []

        def make(system: list[str], msgs: list[Message], context: str, n: int, how: str,
                 resp: str | None) -> ParsedCall:
            extra: dict[str, Any] = {"step": n, "messages_from": how, "cumulative": stats}
            calls.append(call := ParsedCall(
                source=src, model=model, provider=provider, context=context, system=system,
                tools=None if tools is None else list(tools),
                messages=msgs, usage=None, key=f"{os.path.basename(self.path)}:{context}:{n}",
                response=ResponseInfo(text=resp) if resp is not None else None, extra=extra))
            return call

        if steps and all(isinstance(s.get("query"), list) for s in steps):
            for n, s in enumerate(steps):
                if s["query"] and all(m == {} for m in s["query"]):
                    # SWE-agent's own default for a step's query (``StepOutput.query = [{}]``, sweagent/types.py):
                    # a step that called no model (an automatic submission after an error, an exit on a cost
                    # limit).  No request was sent, so it is no call, and not a damaged one.
                    continue
                system: list[str] = []
                msgs: list[Message] = []
                for m in s["query"]:
                    if isinstance(m, dict):
                        msg = _swe_message(m)
                        (system.append(msg.text()) if msg.role == "system" else msgs.append(msg))
                resp = s.get("response") if isinstance(s.get("response"), str) else None
                call = make(system, msgs, "main", n, "query", resp)
                # (a query is the request as sent, system prompt first: with entries that are not messages,
                # what was sent is not known, and a system prompt read as absent would be "evicted"; an empty
                # one is damage too, as an empty chat ``messages`` is: the APIs SWE-agent calls through LiteLLM
                # reject a request without messages, canonical.request_problems)
                if bad := history_problem(s, "query", empty_ok=False):
                    out.append(Issue(self.path, 0, "invalid_field",
                                     forget_history(call, bad, f"trajectory step {n}: query", tools_field=True)))
        else:
            per_agent: dict[str, tuple[list[str], list[Message]]] = {}
            first_agent: str | None = None
            counts: dict[str, int] = {}
            for m in value.get("history") or []:
                if not isinstance(m, dict):
                    continue
                agent = str(m.get("agent") or "main")
                first_agent = first_agent or agent
                system, msgs = per_agent.setdefault(agent, ([], []))
                msg = _swe_message(m)
                if msg.role == "system":
                    system.append(msg.text())
                    continue
                if msg.role == "assistant":
                    n = counts.get(agent, 0)
                    counts[agent] = n + 1
                    context = "main" if agent == first_agent else f"agent:{agent}"
                    make(list(system), list(msgs), context, n, "history", msg.text())
                msgs.append(msg)
        out.extend(calls)
        if stats is None:
            out.append(Issue(self.path, 0, "no_usage", "no info.model_stats (a demonstration?): token usage unknown"))
        else:
            api_calls = int_or_none(stats.get("api_calls"))
            if api_calls is not None and api_calls != len(calls):
                out.append(Issue(self.path, 0, "call_count_mismatch",
                                 f"model_stats.api_calls is {api_calls} but {len(calls)} calls were found"))
        return out


# --- Cline -----------------------------------------------------------------------------------------

def cline_usage(d: dict[str, Any]) -> Usage | None:
    """Usage of a Cline ``api_req_started`` payload: ``tokensIn`` is uncached input (Anthropic-style).

    prompt_total = tokensIn + cacheWrites + cacheReads; output = tokensOut (FORMATS.md §5j).  Missing
    cache fields count as 0 when ``tokensIn`` is present; ``None`` when no token field is present at all.
    """
    tin, tout = int_or_none(d.get("tokensIn")), int_or_none(d.get("tokensOut"))
    cw, cr = int_or_none(d.get("cacheWrites")), int_or_none(d.get("cacheReads"))
    if tin is None and tout is None and cw is None and cr is None:
        return None
    prompt = (tin or 0) + (cw or 0) + (cr or 0)
    return Usage(prompt_total=prompt, input_uncached=tin, cache_read=cr or 0, cache_write=cw or 0, output=tout)


_CLINE_PROVIDERS = {"anthropic": "anthropic", "claude-code": "anthropic", "openai-native": "openai",
                    "openai": "openai", "gemini": "google", "vertex": None, "bedrock": None}


class ClineReader(Reader):
    """Reader of Cline / Roo Code ``ui_messages.json``: one call per ``api_req_started`` entry."""

    def feed_document(self, value: Any) -> Iterable[Output]:
        """Read the JSON array of UI messages."""
        if not isinstance(value, list):
            return [Issue(self.path, 0, "unknown_record", "not a Cline ui_messages.json (no array)")]
        src = _whole_file(self.path)
        task = os.path.basename(os.path.dirname(os.path.abspath(self.path))) or None
        out: list[Output] = []
        history: list[Message] = []
        assistant: list[Part] = []
        for i, e in enumerate(value):
            if not isinstance(e, dict):
                continue
            say = e.get("say")
            if say == "api_req_started":
                if assistant:
                    history.append(Message("assistant", assistant))
                    assistant = []
                try:
                    d = json.loads(e.get("text") or "")
                except (ValueError, TypeError, RecursionError):
                    out.append(Issue(self.path, 0, "invalid_json", f"entry {i}: api_req_started text is not JSON"))
                    continue
                if not isinstance(d, dict):
                    continue
                if isinstance(d.get("request"), str):
                    history.append(Message("user", [Part("text", d["request"])]))
                usage = cline_usage(d)
                if usage is None:
                    why = d.get("cancelReason") or d.get("streamingFailedMessage") or "no token counts"
                    out.append(Issue(self.path, 0, "no_usage", f"entry {i} (ts {e.get('ts')}): {str(why)[:120]}"))
                    continue
                mi = m if isinstance(m := e.get("modelInfo"), dict) else {}
                model = mi.get("modelId") if isinstance(mi.get("modelId"), str) else None
                provider = _CLINE_PROVIDERS.get(str(mi.get("providerId"))) or provider_of_model(model)
                extra: dict[str, Any] = {"index": i, "ts": e.get("ts")}
                if d.get("cost") is not None:
                    extra["cost_logged"] = d.get("cost")
                out.append(ParsedCall(
                    source=src, timestamp=parse_timestamp(int_or_none(e.get("ts"))), model=model, provider=provider,
                    session=task, system=None, tools=None, messages=list(history), usage=usage,
                    history_reported_only=True, key=f"cline:{task}:{e.get('ts')}:{i}", extra=extra))
            elif say in ("text", "completion_result") and isinstance(e.get("text"), str) and not e.get("partial"):
                assistant.append(Part("text", e["text"]))
            elif say == "tool" and isinstance(e.get("text"), str):
                assistant.append(Part("tool_call", e["text"], name="cline_tool"))
        return _floor_once(out)


# --- detection -------------------------------------------------------------------------------------


_doc = sniff_document


def _sniff_inspect(s: Sniff) -> float:
    d = _doc(s)
    if isinstance(d, dict) and isinstance(d.get("eval"), dict) and ("samples" in d or "results" in d or "stats" in d):
        return 0.95
    head = s.head[:4096]
    if head.lstrip().startswith(b"{") and b'"eval"' in head and b'"version"' in head and b'"status"' in head:
        return 0.5
    return 0.0


def _sniff_openhands(s: Sniff) -> float:
    d = _doc(s)
    events = _openhands_events(d) if isinstance(d, list) else None
    if not events:
        return 0.0
    hits = sum(1 for e in events[:200] if "source" in e and ("action" in e or "observation" in e))
    return 0.9 * hits / min(len(events), 200)


def _sniff_openhands_eval(s: Sniff) -> float:
    vals = [v for v in s.values if isinstance(v, dict)]
    if vals:
        return 0.95 * sum(1 for v in vals if "instance_id" in v and "history" in v) / len(vals)
    head = s.head.lstrip()
    if head.startswith(b'{"instance_id"') and b'"history"' in head:
        return 0.7
    return 0.0


def _sniff_swe(s: Sniff) -> float:
    d = _doc(s)
    if not isinstance(d, dict):
        return 0.0
    hist = d.get("history")
    traj = d.get("trajectory")
    has_hist = isinstance(hist, list) and any(isinstance(m, dict) and "role" in m for m in hist[:5])
    has_traj = isinstance(traj, list) and any(isinstance(t, dict) and ("action" in t or "query" in t)
                                              for t in traj[:5])
    if not (has_hist or has_traj):
        return 0.0
    score = 0.6
    if has_traj or "info" in d or "environment" in d or s.path.endswith(".traj"):
        score = 0.9
    return score


def _sniff_cline(s: Sniff) -> float:
    d = _doc(s)
    if not isinstance(d, list) or not d:
        return 0.0
    items = d[:200]
    hits = sum(1 for e in items if isinstance(e, dict) and "ts" in e and e.get("type") in ("say", "ask"))
    return 0.9 * hits / len(items)


register(FormatSpec(
    name="inspect-ai", aliases=("inspect",), document=True,
    description="Inspect AI eval logs (.json EvalLog or .eval zip); one call per model event",
    sniff=_sniff_inspect, reader=InspectReader, example="logs/2024-11-05T13-31-45_task.eval",
))
register(FormatSpec(
    name="openhands", document=True,
    description="OpenHands trajectory export (JSON array of events); calls deduped on model_response.id",
    sniff=_sniff_openhands, reader=OpenHandsReader, example="basic_trajectory.json",
))
register(FormatSpec(
    name="openhands-eval",
    description="OpenHands evaluation output JSONL (one instance per line; metrics.token_usages per call)",
    sniff=_sniff_openhands_eval, reader=OpenHandsEvalReader, example="evaluation_outputs/.../output.jsonl",
))
register(FormatSpec(
    name="swe-agent", aliases=("swe-agent-traj",), document=True,
    description="SWE-agent .traj (per-call usage unknown: only cumulative model_stats)",
    sniff=_sniff_swe, reader=SweAgentReader, example="trajectories/<user>/<run>/<instance>.traj",
))
register(FormatSpec(
    name="cline", aliases=("roo-code",), document=True,
    description="Cline / Roo Code ui_messages.json (api_req_started token counts)",
    sniff=_sniff_cline, reader=ClineReader, example="…/tasks/<taskId>/ui_messages.json",
))
