"""Picking one call of a run for ``plan`` and ``schema``, and re-reading it with its text.

``--call N`` counts from 1 as ``check``, ``report`` and the dashboard number calls, ``--index I`` from 0 as
``report --json`` does; both commands take either, and default to the call a person would look at.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from ctxwatch.cli.exits import fail
from ctxwatch.cli.load import load_paths
from ctxwatch.config import Settings
from ctxwatch.model import Call, ParsedCall
from ctxwatch.planner import default_plan_call, default_schema_call

if TYPE_CHECKING:
    from ctxwatch.engine import Run


def pick_index(number: int | None, index: int | None) -> int | None:
    """The 0-based call index from ``--call N`` (the request number #N shown by ``check``, ``report`` and the
    dashboard, from 1) or ``--index I`` (``report --json``'s ``index``, from 0); negative values count from
    the end in both (-1: the last call); ``None`` when neither is given.

    Raises:
        click.UsageError: both are given, or ``--call 0`` (calls are numbered from 1).
    """
    if number is not None and index is not None:
        raise click.UsageError("give --call N (#N, from 1) or --index I (report --json's index, from 0), not both")
    if number == 0:
        raise click.UsageError("--call counts from 1 (#1 is the first call); --index 0 is report --json's first index")
    if number is not None:
        return number - 1 if number > 0 else number
    return index


def load_call(paths: tuple[str, ...], fmt: str | None, settings: Settings, call: int | None,
              default: str = "plan") -> tuple[Run, Call, ParsedCall]:
    """Load the logs (like ``report`` and ``check``: a file, a batch input/output pair or a folder, so a call
    number they print names the same call here) and re-read one call with its text.

    Args:
        paths: the log file(s) or folder(s). fmt: format name or ``None`` (detect). settings: thresholds.
        call: 0-based call index as in ``report --json`` (negative counts from the end; see
            :func:`pick_index`), or ``None`` for the default (:func:`default_plan_call` /
            :func:`default_schema_call`, by ``default``).

    Returns:
        ``(run, call summary, parsed call)``. Exits with status 2 (message on stderr) when the logs cannot be
        read, have no calls, the index is out of range, or the call cannot be re-read.
    """
    from ctxwatch.engine import LogError, reload_parsed, resolve_spec

    run = load_paths(paths, fmt, settings)
    if not run.calls:
        n_issues = len(run.issues)
        fail(f"{run.path}: no calls found"
             + (f" ({n_issues} issue{'s' if n_issues != 1 else ''}: {run.issues[0].message})" if n_issues else ""))
    n = len(run.calls)
    if call is None:
        idx = default_plan_call(run.calls) if default == "plan" else default_schema_call(run.calls)
    else:
        idx = call + n if call < 0 else call
        if not 0 <= idx < n:
            which = f"#{call + 1}" if call >= 0 else f"{call} from the end"
            fail(f"call {which}: the log has one call (#1; --index 0)" if n == 1
                 else f"call {which}: the log has {n} calls (#1..#{n}; --index 0..{n - 1})")
    summary = run.calls[idx]
    try:  # (a folder may mix formats, batch files among them: the call is re-read with its own file's)
        spec = resolve_spec(summary.source.path, fmt)
    except LogError:
        spec = run.spec
    pc = reload_parsed(spec, summary)
    if pc is None:
        fail(f"{summary.source.path}: call #{idx + 1} could not be re-read (the file changed?)")
    return run, summary, pc
