"""A context budget for your own agent loop, and a logger that lets ctxwatch watch it.

Pure core, no SDK dependency: messages are plain dicts in the OpenAI chat shape (``{"role", "content",
"tool_calls", "tool_call_id"}``) or the Anthropic Messages shape (``content`` blocks ``text``/``tool_use``/
``tool_result``/``image``).  Example::

    from ctxwatch import ContextBudget, CallLogger

    budget = ContextBudget("gpt-4o", system="You are terse.", tools=TOOLS)
    log = CallLogger("calls.jsonl")               # then: ctxwatch calls.jsonl
    messages = [{"role": "user", "content": "fix the failing test"}]
    while True:
        messages, report = budget.fit(messages, summariser=my_summariser)
        response = client.chat.completions.create(model="gpt-4o", messages=messages, tools=TOOLS)
        log.log({"model": "gpt-4o", "messages": messages, "tools": TOOLS}, response)
        ...

:meth:`ContextBudget.fit` applies the eviction planner of ``ctxwatch plan`` (:mod:`~ctxwatch.budget.fit`);
:class:`CallLogger` writes the log (:mod:`~ctxwatch.budget.logger`).
"""

from __future__ import annotations

from ctxwatch.budget.fit import ContextBudget, Summariser
from ctxwatch.budget.logger import CallLogger, utc_timestamp
from ctxwatch.budget.messages import infer_provider, to_message
from ctxwatch.budget.report import BudgetReport, FitResult

# (the types ContextBudget's parameters and BudgetReport.plan are declared with, reachable here as before)
from ctxwatch.config import Settings
from ctxwatch.planner import SUMMARY_HEADER, CompactAt, Mode, Plan, Policy, Unit

__all__ = [
    "SUMMARY_HEADER", "BudgetReport", "CallLogger", "CompactAt", "ContextBudget", "FitResult", "Mode", "Plan",
    "Policy", "Settings", "Summariser", "Unit", "infer_provider", "to_message", "utc_timestamp",
]
