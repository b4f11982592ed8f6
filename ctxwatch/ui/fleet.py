"""The fleet view's rows: one per conversation of the calls read (an agent instance's session), most at risk
first, for a log that holds many agents' calls (the OpenTelemetry Collector's export) or a folder of sessions.

A conversation is its agent instance (``Provenance.details["instance"]``, the resource attributes an
OpenTelemetry export gives: ``service.instance.id``, else ``host.name``, else ``service.name``) and its session;
each batch request is one of its own.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ctxwatch.accounting import Calibrations
from ctxwatch.analysis import SEVERITY_RANK, Flag, worst_flag
from ctxwatch.model import Call, own_request, shown_breakdown, shown_fraction

#: A conversation: ``(instance name, session id)``, either ``None`` when the log does not say.
Conversation = tuple[str | None, str | None]


def instance_name(call: Call) -> str | None:
    """The agent instance a call came from: ``service.instance.id``, else ``host.name``, else ``service.name``
    of the resource that exported it; ``None`` for a log that names none."""
    inst = call.provenance.details.get("instance")
    if not isinstance(inst, Mapping):
        return None
    for key in ("service.instance.id", "host.name", "service.name"):
        value = inst.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def conversation_of(call: Call) -> Conversation:
    """The conversation ``call`` belongs to (:data:`Conversation`).  A request of its own (a batch line, a call
    with its own ``custom_id``: :func:`~ctxwatch.model.own_request`) is a conversation of its own, named by its
    ``custom_id`` (else its file and line), as the forecast treats it."""
    if own_request(call) is not None:
        own = call.provenance.custom_id
        where = f"{os.path.basename(call.source.path)}:{call.source.line}"
        return instance_name(call), own if own is not None else where
    return instance_name(call), call.session


@dataclass(frozen=True)
class FleetRow:
    """One conversation as the fleet view shows it.

    Attributes:
        conversation: its key (:data:`Conversation`).
        calls: how many calls it has.
        last: its last call (by call order): the model and the age are that call's.
        used: the share of its window (0..1) of its latest call whose share is known, as the dashboard shows
            it; ``None`` when no call's is.
        floor: that call's floor in tokens as shown (calibrated where it is), ``None`` when unknown.
        age: seconds since the last call (``None`` without a timestamp).
        worst: the worst flag of the conversation's calls ``(severity, kind, call index)``
            (:func:`ctxwatch.analysis.worst_flag`: the most severe, then the most recent), or ``None``.
    """

    conversation: Conversation
    calls: int
    last: Call
    used: float | None
    floor: int | None
    age: float | None
    worst: tuple[str, str, int] | None

    @property
    def risk(self) -> tuple[int, float, float]:
        """The sort key, most at risk first: the worst flag's severity, then occupancy, then the newest."""
        sev = SEVERITY_RANK.get(self.worst[0], -1) if self.worst else -1  # (no flag ranks below info)
        return -sev, -(self.used if self.used is not None else -1.0), self.age if self.age is not None else 1e18


def fleet_rows(calls: Iterable[Call], flags: Iterable[Flag], calibrations: Calibrations | None,
               now: float) -> list[FleetRow]:
    """The rows of the fleet view for ``calls`` (in call order) and the analysis's ``flags``, most at risk first
    (:attr:`FleetRow.risk`).  ``now``: seconds since the epoch, for the ages."""
    groups: dict[Conversation, list[Call]] = {}
    for c in calls:
        groups.setdefault(conversation_of(c), []).append(c)
    by_call: dict[int, list[Flag]] = {}
    for f in flags:
        by_call.setdefault(f.call, []).append(f)
    rows = []
    for conv, members in groups.items():
        last = max(members, key=lambda c: c.index)
        # (the occupancy is the latest one known: a last call that reports no usage says nothing of it)
        used, floor = None, None
        for c in sorted(members, key=lambda c: c.index, reverse=True):
            shown = calibrations.breakdown(c) if calibrations is not None else shown_breakdown(c, None)
            used, floor = shown_fraction(c, shown), shown.floor_tokens
            if used is not None:
                break
        flag = worst_flag(f for c in members for f in by_call.get(c.index, []))
        rows.append(FleetRow(conv, len(members), last, used, floor,
                             now - last.timestamp if last.timestamp is not None else None,
                             (flag.severity, flag.kind, flag.call) if flag is not None else None))
    rows.sort(key=lambda r: r.risk)
    return rows
