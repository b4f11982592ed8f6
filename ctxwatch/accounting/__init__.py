"""Token accounting: a :class:`~ctxwatch.model.ParsedCall` (text) becomes a :class:`~ctxwatch.model.Call` (floor,
history, reserve and free tokens, each with its source).

:mod:`.accountant` accounts calls and :mod:`.calibration` scales estimates of another model's tokenizer; the
windows and prices come from :mod:`ctxwatch.catalog`.  Every name other packages use is exported here.
"""

from __future__ import annotations

from ctxwatch.accounting.accountant import Accountant, CountStore, reserve_for
from ctxwatch.accounting.calibration import (
    MAX_CALIBRATION,
    MIN_CALIBRATION_CALLS,
    NO_CALIBRATION,
    Calibrations,
    calibration_factor,
    calibrations_of,
    median_ratio,
    plausible_calibration,
)
from ctxwatch.accounting.harness import HARNESS_NAMES, HarnessLimits, harness_limits, rule_limits, rule_text

__all__ = [
    "HARNESS_NAMES",
    "MAX_CALIBRATION",
    "MIN_CALIBRATION_CALLS",
    "NO_CALIBRATION",
    "Accountant",
    "Calibrations",
    "CountStore",
    "HarnessLimits",
    "calibration_factor",
    "calibrations_of",
    "harness_limits",
    "median_ratio",
    "plausible_calibration",
    "reserve_for",
    "rule_limits",
    "rule_text",
]
