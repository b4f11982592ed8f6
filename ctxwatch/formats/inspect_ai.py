"""Inspect AI eval logs: ``.json`` (an ``EvalLog`` document) or ``.eval`` (a zip of ``header.json`` and
``samples/<id>_epoch_<n>.json``).

One call per ``events[]`` entry with ``event: "model"``.  The exact system prompt and tools come from the
event's ``input`` / ``tools``, usage from ``output.usage`` (:func:`inspect_usage`), ``attachment://<hash>``
references are resolved from the sample's ``attachments``.  Model calls made inside a scorer get
``context = "scorer:<name>"``.  Every call points at the whole file and carries its locator in its provenance's details
(``sample``, ``epoch``, ``event``) and a unique ``key``.
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterable
from typing import Any

import orjson

from ctxwatch.formats import (
    FormatSpec,
    Reader,
    Sniff,
    count_or_none,
    document_source,
    register,
    sniff_document,
    usage_count,
)
from ctxwatch.formats.wire.damage import forget_history, history_problem
from ctxwatch.formats.wire.images import image_part
from ctxwatch.formats.wire.models import provider_of_model
from ctxwatch.formats.wire.timestamps import parse_timestamp
from ctxwatch.formats.wire.values import (
    as_object,
    int_or_none,
    json_text,
    listed,
    model_id,
    note_usage_types,
    odd_content,
)
from ctxwatch.model import (
    Issue,
    Message,
    ParsedCall,
    Part,
    Provenance,
    ResponseInfo,
    SourceRef,
    Usage,
    json_type,
    note_bad_field,
)

Output = ParsedCall | Issue


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
        # (the run's sanitize), never read as absent; the convention cannot be told from damaged numbers.
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
            odd_content(c, "a content item", "skipped")
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


def inspect_message(m: Any) -> Message:
    """One Inspect ``ChatMessage`` (system / user / assistant with ``tool_calls`` / tool) as a Message; a message
    that is no JSON object is noted and read as an empty user message."""
    m = as_object(m, "a chat message")
    role = str(m.get("role") or "user")
    parts = _inspect_content(m.get("content"))
    if role == "assistant":
        for tc in listed(m.get("tool_calls"), "an assistant message's tool_calls"):
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
        if "event" in e and not isinstance(kind, str):
            # (a model event is known by its request and reply too: read as one, the call is kept)
            looks = "input" in e and isinstance(e.get("output"), dict)
            note_bad_field(f"an Inspect event's event is {json_type(kind)}, not a string: "
                           + ("read as a model event (it has input and output)" if looks else "skipped"))
            kind = "model" if looks else None
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
        src = document_source(self.path)
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
        made with one; read as empty, it would be a request without the system prompt (``system_prompt_evicted``)
        and a history of 0."""
        model = model_id(e.get("model"), "a model event's model")
        provider = _inspect_provider(model)
        output = o if isinstance(o := e.get("output"), dict) else {}
        system: list[str] = []
        messages: list[Message] = []
        for m in listed(e.get("input"), "a model event's input"):
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
            rmsg = inspect_message(_resolve(choices[0].get("message"), att))
            info = ResponseInfo(text="".join(p.text for p in rmsg.parts if p.kind == "text"),
                                tool_calls=len(rmsg.tool_call_ids()), finish_reason=choices[0].get("stop_reason"))
        cfg = cf if isinstance(cf := e.get("config"), dict) else {}
        extra = Provenance(details={"sample": sid, "epoch": epoch, "event": n, "inspect_model": model})
        if member:
            extra.details["member"] = member
        if e.get("cache"):
            extra.details["cache"] = e["cache"]  # "read" = served from Inspect's local cache, not the provider
        if output.get("error") or e.get("error"):
            extra.error = str(output.get("error") or e.get("error"))[:500]
        key = e.get("uuid") or e.get("id") or f"{run_id or ''}:{sid}:{epoch}:{n}"
        resolved = model_id(output.get("model"), "a model event's output.model")
        note_usage_types(output.get("usage"), "a model event's output.usage")
        call = ParsedCall(source=src, timestamp=parse_timestamp(e.get("timestamp")), model=resolved or model,
                          provider=provider, session=_inspect_session(run_id, sid, epoch), context=context,
                          system=system, tools=_inspect_tools(e.get("tools")), messages=messages,
                          max_output_tokens=int_or_none(cfg.get("max_tokens")),
                          usage=inspect_usage(output.get("usage"), provider), response=info, key=str(key),
                          provenance=extra)
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


def _sniff_inspect(s: Sniff) -> float:
    d = sniff_document(s)
    if isinstance(d, dict) and isinstance(d.get("eval"), dict) and ("samples" in d or "results" in d or "stats" in d):
        return 0.95
    head = s.head[:4096]
    if head.lstrip().startswith(b"{") and b'"eval"' in head and b'"version"' in head and b'"status"' in head:
        return 0.5
    return 0.0


register(FormatSpec(
    name="inspect-ai", aliases=("inspect",), document=True,
    description="Inspect AI eval logs (.json EvalLog or .eval zip); one call per model event",
    sniff=_sniff_inspect, reader=InspectReader, example="logs/2024-11-05T13-31-45_task.eval",
))
