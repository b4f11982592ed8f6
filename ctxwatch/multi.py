"""Runs made of several files: a batch input/output pair, or a folder of logs.

A folder of session logs (a Claude Code project folder, a Codex sessions tree) is read file by file in
modification order into one run, with dedupe keys shared across files (a resumed session copies earlier
records into a new file: failure case B11).  Batch input and output files are joined by ``custom_id``.
"""

from __future__ import annotations

import os
from pathlib import Path

from ctxwatch.config import Settings
from ctxwatch.formats import get_format
from ctxwatch.model import Issue
from ctxwatch.run import LogError, Run, resolve_spec

#: File name endings read when a folder is given.
LOG_SUFFIXES = (".jsonl", ".json", ".traj", ".eval")


def list_logs(folder: str) -> list[str]:
    """Log files under ``folder`` (recursively), newest first by modification time."""
    found: list[tuple[float, str]] = []
    for root, _dirs, files in os.walk(folder):
        for name in files:
            if name.endswith(LOG_SUFFIXES):
                p = os.path.join(root, name)
                try:
                    found.append((os.path.getmtime(p), p))
                except OSError:
                    continue
    return [p for _, p in sorted(found, reverse=True)]


def load_many(paths: list[str], fmt: str | None, settings: Settings | None = None) -> Run:
    """One :class:`Run` over several log files (folders expanded).

    Raises:
        LogError: no readable log among the paths.
    """
    files: list[str] = []
    for p in paths:
        if os.path.isdir(p):
            files.extend(reversed(list_logs(p)))  # oldest first, so calls appear in time order
        elif os.path.exists(p):
            files.append(p)
        else:
            raise LogError(f"{p}: no such file or directory")
    if not files:
        raise LogError(f"{', '.join(paths)}: no log files found")
    specs = {}
    for f in files:
        try:
            specs[f] = resolve_spec(f, fmt)
        except LogError:
            specs[f] = None
    names = {s.name for s in specs.values() if s is not None}
    if names and names <= {"openai-batch", "anthropic-batch"}:
        from ctxwatch.formats.batch import read_batch_pair

        calls, issues = read_batch_pair([f for f in files if specs[f] is not None])
        run = Run(" + ".join(files), get_format(sorted(names)[0]), settings)
        run.add(calls)
        run.issues.extend(issues)
        return run
    first = next((s for s in specs.values() if s is not None), None)
    if first is None:
        raise LogError(f"{', '.join(paths)}: no log in a recognised format")
    run = Run(" + ".join(paths), first, settings)
    for f in files:
        spec = specs[f]
        if spec is None:
            run.issues.append(Issue(f, 0, "skipped_file", "format not recognised; skipped"))
            continue
        first_call = len(run.calls)
        run.read_file(f, spec)
        # A log with no session ids is one session of its own: unrelated files in one folder must not be
        # analysed as one conversation (false compactions between the last call of one and the next file).
        for call in run.calls[first_call:]:
            if call.session is None:
                call.session = os.path.basename(f)
    run.path = str(Path(paths[0])) if len(paths) == 1 else run.path
    return run

