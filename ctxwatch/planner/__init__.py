"""The eviction planner: what to pin, keep, summarise or evict so that one call fits its budget.

The system prompt, tool schemas and pinned messages are never evicted; tool calls stay with their results; the
newest units are kept; what stands before the kept history is a summary or re-injected items.
:func:`plan_messages` plans a call's messages under a :class:`Policy`; :func:`plan_call` a logged call, sized as
``report`` shows it.  :mod:`ctxwatch.planner.schema` analyses the tool-schema floor.
"""

from ctxwatch.planner.choice import default_plan_call, default_schema_call
from ctxwatch.planner.counts import (
    PlanCounts,
    logged_counts,
    plan_call,
    plan_counts,
    plan_from_counts,
    scaled_to,
    unplannable,
)
from ctxwatch.planner.cut import plan_messages
from ctxwatch.planner.offenders import OFFENDERS, exchange_savings, offenders
from ctxwatch.planner.plan import MessagePlan, Plan
from ctxwatch.planner.policy import (
    COMPACT_AT,
    UNITS,
    CompactAt,
    Fate,
    Mode,
    Policy,
    PolicyError,
    Unit,
    policy_for_call,
)
from ctxwatch.planner.reinject import (
    EDIT_TOOLS,
    NOT_TASK_LABELS,
    PLAN_TOOLS,
    REINJECT_HEADERS,
    SUMMARY_HEADER,
    TASK_LIST_TOOLS,
    ReinjectItem,
    find_reinject,
    text_message_tokens,
)
from ctxwatch.planner.units import PINNED_LABELS, PINNED_ROLES, REASONING_LABEL

__all__ = [
    "COMPACT_AT",
    "EDIT_TOOLS",
    "NOT_TASK_LABELS",
    "OFFENDERS",
    "PINNED_LABELS",
    "PINNED_ROLES",
    "PLAN_TOOLS",
    "REASONING_LABEL",
    "REINJECT_HEADERS",
    "SUMMARY_HEADER",
    "TASK_LIST_TOOLS",
    "UNITS",
    "CompactAt",
    "Fate",
    "MessagePlan",
    "Mode",
    "Plan",
    "PlanCounts",
    "Policy",
    "PolicyError",
    "ReinjectItem",
    "Unit",
    "default_plan_call",
    "default_schema_call",
    "exchange_savings",
    "find_reinject",
    "logged_counts",
    "offenders",
    "plan_call",
    "plan_counts",
    "plan_from_counts",
    "plan_messages",
    "policy_for_call",
    "scaled_to",
    "text_message_tokens",
    "unplannable",
]
