"""What the session picker says of each session: its calls, peak occupancy, model and first user prompt, read
in the picker's worker thread through the engine (and its cache of earlier reads, so a session read before
costs only what it grew by), and the line that shows them.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from rich.text import Text

from ctxwatch.config import Settings
from ctxwatch.engine.activity import activity_note, activity_of
from ctxwatch.model import call_span
from ctxwatch.ui import text as tx

#: Characters of a session's first user prompt kept (the picker cuts it further to its line).
PROMPT_CHARS = 200


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """One session log as the picker describes it.

    Attributes:
        calls: calls read from the file (every context).
        peak: the largest occupancy of the main context's window (prompt / window), ``None`` when unknown.
        window: the window of that call, in tokens.
        model: the model of most main-context calls (``None`` when no call names one).
        prompt: the first user message the user typed (harness-injected ones, labelled, and tool results left
            out), its spaces collapsed, cut to :data:`PROMPT_CHARS`; ``None`` when the log holds none.
        stamp: the file's ``(modification time, size)`` when read: a changed file is read again.
        last: the time of its last call (epoch seconds), the latest of its calls' timestamps as ``report
            --sessions`` gives it (:func:`ctxwatch.model.call_span`); ``None`` when no call has one.
    """

    calls: int
    peak: float | None
    window: int | None
    model: str | None
    prompt: str | None
    stamp: tuple[float, int]
    last: float | None = None


def file_stamp(path: str) -> tuple[float, int] | None:
    """``(modification time, size in bytes)`` of ``path``, or ``None`` when it cannot be stat'ed."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime, st.st_size)


def summarize(path: str, fmt: str | None = None, settings: Settings | None = None) -> SessionInfo | None:
    """Read ``path`` whole (through the user's cache of earlier reads, unless ``CTXWATCH_NO_CACHE``) and
    describe it; ``None`` when it cannot be read.  Re-reads the first main-context call's text from disk for
    its first user prompt."""
    from ctxwatch.engine import LogError, load_run, reload_parsed
    from ctxwatch.engine.cache import default_cache

    stamp = file_stamp(path)
    if stamp is None:
        return None
    try:
        run = load_run(path, fmt, settings, cache=default_cache())
    except (LogError, OSError):
        return None
    calls = run.calls
    main = [c for c in calls if c.context == "main"] or calls
    peak_call = max((c for c in main if c.used_fraction is not None), key=lambda c: c.used_fraction or 0.0,
                    default=None)
    models = Counter(c.model for c in main if c.model)
    prompt = None
    for c in main[:3]:  # (the first calls hold the first prompt; a damaged first line is passed over)
        try:
            pc = reload_parsed(run.spec, c)
        except Exception:  # a changed file or a reader bug: the picker shows the rest
            pc = None
        if pc is not None and pc.messages:
            first = next((m for m in pc.messages if m.role == "user" and not m.label and m.text().strip()
                          and not any(p.kind == "tool_result" for p in m.parts)), None)
            if first is not None:
                prompt = tx.flat_start(first.text(), PROMPT_CHARS) or None
                break
    return SessionInfo(len(calls), peak_call.used_fraction if peak_call else None,
                       peak_call.window if peak_call else None, models.most_common(1)[0][0] if models else None,
                       prompt, stamp, span[1] if (span := call_span(calls)) is not None else None)


def row_time(path: str, info: SessionInfo | None) -> tuple[str, str]:
    """The picker's row time of the session log ``path`` and its note (``""``: a call's): once the file is read
    (``info``, not stale), its latest call time, as ``report --sessions`` gives it; before, the time the list
    is sorted by, read from the file's end (:func:`~ctxwatch.engine.activity.activity_of`, which sees only the
    calls near it) or the file's modification time, said so (:func:`~ctxwatch.engine.activity.activity_note`).
    Raises ``OSError`` when the file cannot be stat'ed."""
    if info is not None and info.last is not None:
        return tx.stamp(info.last), ""
    return tx.stamp(activity_of(path)[0]), activity_note(path).strip()


def info_line(path: str | None, infos: Mapping[str, SessionInfo | None], width: int) -> Text:
    """The two lines under the picker's list for the highlighted session ``path`` (``None``: the "follow the
    newest" row): ``139 calls · peak 82.4% of 200,000 · claude-opus-4-6``, then its first prompt in quotes
    (literal), ``reading…`` before the worker read it; each cut to ``width`` cells."""
    second = Text()
    if path is None:
        first = Text("follows whichever session is newest, switching when another becomes it", "dim")
    elif path not in infos:
        first = Text("reading the session…", "dim")
    elif (info := infos[path]) is None:
        first = Text("the session could not be read", "yellow")
    else:
        first = Text(f"{info.calls:,} call{'s' if info.calls != 1 else ''} · peak ")
        first.append(f"{100 * info.peak:.1f}%" if info.peak is not None else "?")
        first.append(f" of {tx.tokens(info.window)}" if info.window else "")
        first.append(" · ")
        first.append_text(tx.literal(info.model or "model ?", limit=40))
        if info.prompt:
            second = Text("“")
            second.append_text(tx.literal(info.prompt, "italic", limit=PROMPT_CHARS))
            second.append("”")
        else:
            second = Text("no user prompt in the log", "dim")
    for line in (first, second):
        line.truncate(width, overflow="ellipsis")
    return Text("\n").join([first, second])
