"""SWE-agent trajectories (``.traj`` documents).

Only the cumulative ``info.model_stats`` is logged, so every call has ``usage = None`` and the run's totals in
:attr:`~ctxwatch.model.Provenance.cumulative`.  Messages come from ``trajectory[].query`` (the request as sent) when
every step has
one, else they are rebuilt from ``history``.  Tool schemas are ``[]`` when no message makes a tool call (0.x
agents describe their commands in the system prompt) and ``None`` (not logged) otherwise.  Every call points at
the whole file, with its ``step`` in its provenance's details.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from typing import Any

from ctxwatch.formats import FormatSpec, Reader, Sniff, document_source, register, sniff_document
from ctxwatch.formats.wire.damage import forget_history, history_problem
from ctxwatch.formats.wire.models import provider_of_model
from ctxwatch.formats.wire.openai import openai_message
from ctxwatch.formats.wire.values import int_or_none, listed
from ctxwatch.model import Issue, Message, ParsedCall, Provenance, ResponseInfo

Output = ParsedCall | Issue


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
        # (either list gives calls: a history of another type leaves the trajectory's, noted by ``listed``)
        if not isinstance(value, dict) or not (isinstance(value.get("history"), list)
                                               or isinstance(value.get("trajectory"), list)):
            return [Issue(self.path, 0, "unknown_record", "not a SWE-agent trajectory (no history/trajectory)")]
        src = document_source(self.path)
        info = i if isinstance(i := value.get("info"), dict) else {}
        stats = info.get("model_stats") if isinstance(info.get("model_stats"), dict) else None
        model = _swe_model(value)
        provider = provider_of_model(model)
        steps = [s for s in listed(value.get("trajectory"), "trajectory") if isinstance(s, dict)]
        out: list[Output] = []
        calls: list[ParsedCall] = []
        # Function-calling agents (1.x) send tool schemas that the .traj does not keep: unknown (None).
        # Without tool calls the commands are described in the system prompt and no schema is sent: [].
        logged = [m for m in listed(value.get("history"), "history") if isinstance(m, dict)]
        logged += [m for st in steps for m in (st.get("query") or []) if isinstance(m, dict)]
        tools: list[dict[str, Any]] | None = None if any(m.get("tool_calls") for m in logged) else []

        def make(system: list[str], msgs: list[Message], context: str, n: int, how: str,
                 resp: str | None) -> ParsedCall:
            extra = Provenance(cumulative=stats, details={"step": n, "messages_from": how})
            calls.append(call := ParsedCall(
                source=src, model=model, provider=provider, context=context, system=system,
                tools=None if tools is None else list(tools),
                messages=msgs, usage=None, key=f"{os.path.basename(self.path)}:{context}:{n}",
                response=ResponseInfo(text=resp) if resp is not None else None, provenance=extra))
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
                # reject a request without messages, wire.damage.request_problems)
                if bad := history_problem(s, "query", empty_ok=False):
                    out.append(Issue(self.path, 0, "invalid_field",
                                     forget_history(call, bad, f"trajectory step {n}: query", tools_field=True)))
        else:
            per_agent: dict[str, tuple[list[str], list[Message]]] = {}
            first_agent: str | None = None
            counts: dict[str, int] = {}
            for m in listed(value.get("history"), "history"):
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


def _sniff_swe(s: Sniff) -> float:
    d = sniff_document(s)
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


register(FormatSpec(
    name="swe-agent", aliases=("swe-agent-traj",), document=True,
    description="SWE-agent .traj (per-call usage unknown: only cumulative model_stats)",
    sniff=_sniff_swe, reader=SweAgentReader, example="trajectories/<user>/<run>/<instance>.traj",
))
