"""Logs written whole, followed: a JSON document, or a set of batch request and result files.

Such files are rewritten or grow as a whole (a download, a job writing results), and a batch result joins a
request of another file, so they are not tailed line by line: they are read again, and every call replaced,
when the size or modification time of one of them changes.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from typing import Protocol

from ctxwatch.config import Settings
from ctxwatch.engine.events import BackfillDone, FollowEvent, Opened, ResetSeen
from ctxwatch.engine.opening import LogError
from ctxwatch.engine.run import Run
from ctxwatch.formats import FormatSpec
from ctxwatch.source import read_document


class Follower(Protocol):
    """What these loops need of :class:`ctxwatch.engine.follow.Follower`."""

    path: str
    fmt: str | None
    settings: Settings
    last: int | None
    stop: threading.Event
    poll_interval: float

    def emit(self, ev: FollowEvent) -> object: ...
    def publish(self, run: Run, last: int | None = None) -> None: ...
    def turn(self, force: bool = False) -> None: ...
    def fail(self, message: str) -> None: ...

#: Per file, ``(size in bytes, mtime in ns)``, or ``None`` for a file that is gone.
Signature = tuple[tuple[int, int] | None, ...]


def signature(paths: Sequence[str]) -> Signature:
    """What tells that one of ``paths`` changed: each file's size and modification time."""
    out: list[tuple[int, int] | None] = []
    for p in paths:
        try:
            st = os.stat(p)
        except OSError:
            out.append(None)
            continue
        out.append((st.st_size, st.st_mtime_ns))
    return tuple(out)


def read_document_run(f: Follower, spec: FormatSpec) -> Run:
    """The run of the document at ``f.path``, read whole."""
    run = Run(f.path, spec, f.settings)
    value, issue = read_document(f.path)
    if issue is not None:
        if f.path.endswith(".eval"):
            run.feed_document(f.path)
        else:
            run.issues.append(issue)
    else:
        run.feed_document(value)
    run.finish()
    return run


def follow_document(f: Follower, spec: FormatSpec) -> None:
    """Read the document, then read it again whenever it changes, until ``f.stop`` is set."""
    _follow(f, [f.path], lambda: read_document_run(f, spec), opened=True,
            reason=lambda before, now: "rewritten")


def follow_batch(f: Follower, paths: Sequence[str]) -> None:
    """Read and join batch request and result files (:func:`ctxwatch.engine.folder.load_many`), then read them
    again whenever one changes, until ``f.stop`` is set.  Files that only grew are results still being written
    (``grew``, read again quietly); anything else is a rewrite."""
    from ctxwatch.engine.folder import load_many

    def load() -> Run | None:
        try:
            return load_many(list(paths), f.fmt, f.settings)
        except (LogError, OSError) as exc:
            f.fail(str(exc))
            return None

    def reason(before: Signature, now: Signature) -> str:
        grew = all(a is not None and b is not None and b[0] >= a[0] for a, b in zip(before, now, strict=True))
        return "grew" if grew else "rewritten"

    _follow(f, paths, load, opened=False, reason=reason)


def _follow(f: Follower, paths: Sequence[str], load: Callable[[], Run | None], *, opened: bool,
            reason: Callable[[Signature, Signature], str]) -> None:
    seen = signature(paths)
    run = load()
    if run is None:
        return
    if not opened:
        f.emit(Opened(f.path, run.spec, sum(s[0] for s in seen if s is not None)))
    f.publish(run, f.last)
    f.emit(BackfillDone())
    f.turn(force=True)
    while not f.stop.wait(f.poll_interval):
        now = signature(paths)
        if now == seen or all(s is None for s in now):
            continue
        why = reason(seen, now)
        seen = now
        run = load()
        if run is None:
            continue
        f.emit(ResetSeen(why, len(run.calls), clear=True))
        f.publish(run)
        f.turn(force=True)
