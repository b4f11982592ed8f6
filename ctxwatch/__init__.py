"""ctxwatch: watch an LLM agent's context window fill up, from its JSONL call logs.

The pure core (formats, tailing, token accounting, analysis, eviction planning) never imports Textual;
the dashboard lives in :mod:`ctxwatch.ui`.  For use inside your own agent loop::

    from ctxwatch import ContextBudget, CallLogger
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"
__all__ = ["CallLogger", "ContextBudget", "__version__"]


def __getattr__(name: str) -> Any:
    # Lazy so that `import ctxwatch` stays cheap for the CLI.
    if name in ("ContextBudget", "CallLogger"):
        from ctxwatch import budget

        return getattr(budget, name)
    raise AttributeError(name)
