"""OpenHands logs: a trajectory export (``openhands``, one JSON array of events) and the evaluation output
(``openhands-eval``, a JSONL of one benchmark instance per line, each with its event history).

Both rebuild the visible history from the agent's events (:class:`_OpenHandsHistory`).  A trajectory gives one
call per distinct ``tool_call_metadata.model_response.id`` (the same response is repeated on its action and its
observation), with usage from ``model_response.usage`` (LiteLLM's OpenAI-shaped usage,
:func:`~ctxwatch.formats.wire.litellm.litellm_usage`); an evaluation line gives one call per
``metrics.token_usages[]`` entry, keyed by ``response_id``.  The history is the visible part of what was sent,
not the exact request, so such calls set ``history_reported_only`` when usage is reported and their floor is
inferred once per conversation (:func:`~ctxwatch.formats.floor_once`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ctxwatch.formats import FormatSpec, Reader, Sniff, document_source, floor_once, register, sniff_document
from ctxwatch.formats.wire.litellm import litellm_usage
from ctxwatch.formats.wire.models import provider_of_model
from ctxwatch.formats.wire.openai import openai_message, openai_response_info
from ctxwatch.formats.wire.timestamps import parse_timestamp
from ctxwatch.formats.wire.values import int_or_none, json_text, listed, model_id, note_usage_types
from ctxwatch.model import Issue, Message, ParsedCall, Part, Provenance, SourceRef, json_type, note_bad_field
from ctxwatch.source import Record

Output = ParsedCall | Issue


def _args(e: dict[str, Any]) -> dict[str, Any]:
    a = e.get("args")
    return a if isinstance(a, dict) else {}


def _model_response(e: dict[str, Any]) -> dict[str, Any] | None:
    """The event's model response, its ``id`` a string; ``None`` (noted as a bad field) for one of another JSON
    type or with no id, whose call cannot be told apart, and ``None`` for an event without one.  An id of
    another type is read as its JSON text, so the call is kept."""
    tcm = e.get("tool_call_metadata")
    if not isinstance(tcm, dict) or "model_response" not in tcm:
        return None
    mr = tcm["model_response"]
    if not isinstance(mr, dict):
        note_bad_field(f"tool_call_metadata.model_response is {json_type(mr)}, not an object: its call cannot "
                       "be read")
        return None
    rid = mr.get("id")
    if isinstance(rid, str):
        return mr
    if rid is None:
        note_bad_field("a model_response has no id: its call cannot be told apart, so it is not read")
        return None
    note_bad_field(f"a model_response id is {json_type(rid)}, not a string: read as its JSON text")
    return {**mr, "id": json_text(rid)}


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
        src = document_source(self.path)
        hist = _OpenHandsHistory()
        out: list[Output] = []
        for i, e in enumerate(events):
            mr = hist.add(e)
            if mr is None:
                continue
            model = model_id(mr.get("model"), "model_response.model")
            note_usage_types(mr.get("usage"), "model_response.usage")
            usage = litellm_usage(mr.get("usage"))
            ts = parse_timestamp(mr.get("created")) or parse_timestamp(e.get("timestamp"))
            out.append(ParsedCall(
                source=src, timestamp=ts, model=model, provider=provider_of_model(model),
                system=list(hist.system) if hist.system is not None else None,
                tools=list(hist.tools) if hist.tools is not None else None, messages=list(hist.messages),
                usage=usage, response=openai_response_info(mr), history_reported_only=usage is not None,
                key=mr["id"], provenance=Provenance(details={"response_id": mr["id"], "event_id": e.get("id"),
                                                             "event_index": i})))
            hist.add_response(mr)
        return floor_once(out)


#: The counts of an OpenHands ``metrics.token_usages[]`` entry (tokens).
_TOKEN_USAGE_KEYS = ("prompt_tokens", "completion_tokens", "cache_read_tokens", "cache_write_tokens",
                     "context_window")


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
        for e in listed(v.get("history"), "history"):
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
            note_usage_types({k: tu[k] for k in _TOKEN_USAGE_KEYS if k in tu}, f"metrics.token_usages[{n}]")
            usage = litellm_usage({"prompt_tokens": tu.get("prompt_tokens"),
                                   "completion_tokens": tu.get("completion_tokens"),
                                   "cache_read_tokens": tu.get("cache_read_tokens"),
                                   "cache_write_tokens": tu.get("cache_write_tokens")})
            snap = snaps.get(rid)
            model = model_id(tu.get("model"), "token_usages model")
            mr = snap[3] if snap else None
            call = ParsedCall(source=src, model=(mr.get("model") if mr and isinstance(mr.get("model"), str) else model),
                              provider=provider_of_model(model) or provider_of_model(mr.get("model") if mr else None),
                              session=str(inst) if inst is not None else None, usage=usage,
                              window=int_or_none(tu.get("context_window")) or None, key=rid,
                              provenance=Provenance(details={"response_id": rid, "instance_id": inst, "usage_index": n,
                                                                 "config_model": model}))
            if snap is not None:
                call.system, call.tools, call.messages = snap[0], snap[1], snap[2]
                call.history_reported_only = usage is not None
                call.timestamp = parse_timestamp(mr.get("created")) if mr else None
                call.response = openai_response_info(mr)
            out.append(call)
        return floor_once(out)


def _sniff_openhands(s: Sniff) -> float:
    d = sniff_document(s)
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
