"""Occupancy: the plausible prompt size of each call, in tokens.
"""

from __future__ import annotations

from ctxwatch.analysis.flags import int_or_none
from ctxwatch.model import (
    Call,
)


def occupancy(c: Call, cal: float | None) -> int | None:
    """The plausible prompt size of a call in tokens (see the module docstring), ``None`` if unknown/implausible."""
    reported = c.prompt_reported
    if reported is not None and reported > 0:
        return None if c.report_implausible else reported
    if reported is not None:
        # A reported 0 is no size: what stands in for it is the table's (Call.prompt_tokens: the raw estimate,
        # else floor + history), so that the implausible_usage flag, free and used % name one number (the flag
        # said the calibrated estimate, 541, beside a free of window - reserve - 451).
        return c.prompt_tokens
    # (no report at all: the estimate, calibrated to what the provider would count)
    if c.prompt_estimated is not None:
        return round(c.prompt_estimated * cal) if cal else c.prompt_estimated
    if c.prompt_tokens is not None:
        return c.prompt_tokens
    if isinstance(c.compaction, dict):
        return int_or_none(c.compaction.get("post_tokens"))
    return None
