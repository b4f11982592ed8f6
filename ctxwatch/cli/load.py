"""Reading the logs a headless command was given into one run: a file, a batch pair, a folder, or a pipe.

Shared by ``report``, ``check``, ``plan`` and ``schema``, so that a call number one of them prints names the same
call in the others.  A log that cannot be read ends the command with status 2 and a message naming it.
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

from ctxwatch.cli.arrays import spool_arrays
from ctxwatch.cli.ending import hold
from ctxwatch.cli.exits import fail
from ctxwatch.cli.options import NO_CACHE
from ctxwatch.cli.progress import ReadProgress
from ctxwatch.cli.spool import STDIN_NAME, spool_stdin
from ctxwatch.config import Settings
from ctxwatch.output.safetext import clean

if TYPE_CHECKING:
    import click

    from ctxwatch.engine import Run
    from ctxwatch.engine.cache import RunCache
    from ctxwatch.engine.files import Render


def load_paths(paths: tuple[str, ...], fmt: str | None, settings: Settings, render: Render | None = None) -> Run:
    """One run from one log, from a batch input/output pair, or from a folder of logs (``-``: standard input,
    copied to a temporary file first by :func:`~ctxwatch.cli.spool.spool_stdin`; output shows that copy as
    ``-``).  ``fmt``: a format name, or ``None`` to detect each file's; ``render``: a folder's calls are also
    written as the command writes them, where each file is read (:func:`~ctxwatch.engine.load_many`).

    Exits with status 2 and a message naming the file when nothing can be read.
    """
    from ctxwatch.engine import LogError, load_many, load_run

    given = paths
    paths, _ = spool_stdin(paths)
    paths = spool_arrays(paths, fmt)  # (a file that is one JSON array of records: read from a copy, a line each)
    cache = None if paths != given else user_cache()  # (a copy of standard input is read once: nothing to keep)
    shown = ReadProgress()
    with steady_heap():
        try:
            if len(paths) == 1 and not os.path.isdir(paths[0]):
                # (told only of a read through the cache, a serial one: without it, a big file is read in
                # parallel ranges, which no progress is told of)
                told = shown.file if shown.on and cache is not None else None
                run = load_run(paths[0], fmt, settings, told, parallel=True, cache=cache)
            else:
                run = load_many(list(paths), fmt, settings, parallel=True, cache=cache, render=render,
                                progress=shown.folder if shown.on else None)
        except LogError as exc:
            shown.close()
            fail(clean(exc))
        finally:
            shown.close()
        # (freed with the process, not call by call as the command returns; held, and so moved out of the
        # collector's walks, before the collector is back on: its first collection would walk every object the
        # load made, 0.06 to 0.09 s after the benchmark folder's 26,686 calls)
        hold(run)
    return run


class KeptOutput:
    """A command's output kept in the user's cache for its inputs (:mod:`ctxwatch.engine.outputs`): written again
    when none of the logs changed, kept as it is written otherwise."""

    def __init__(self, cache: RunCache, key: str, again: Callable[[], str | None], growing: bool = False) -> None:
        self.cache, self.key, self._again, self.growing = cache, key, again, growing

    @classmethod
    def find(cls, kind: str, paths: tuple[str, ...], fmt: str | None, settings: Settings) -> KeptOutput | None:
        """The entry for ``kind`` (the command and its output shape) on ``paths``, or ``None``: the cache is
        off, or an input has no key (standard input, a pipe, a missing file: read, and reported, as always)."""
        if STDIN_NAME in paths:
            return None
        cache = user_cache()
        if cache is None:
            return None
        from ctxwatch.engine.outputs import inputs_key, inputs_state

        def again() -> str | None:
            return inputs_key(kind, list(paths), fmt, settings)

        found = inputs_state(kind, list(paths), fmt, settings)
        if found is None:
            return None
        key, recent = found
        # (asked before the read, which saves each log's entry anew)
        return cls(cache, key, again, cache.seen_otherwise(recent, fmt, settings))

    def replay(self) -> bool:
        """Write the kept output; False when there is none."""
        from ctxwatch.cli.console import write_chunks

        pieces = self.cache.load_output(self.key)
        if pieces is None:
            return False
        write_chunks(pieces)
        return True

    def keep(self, pieces: Iterable[bytes]) -> Iterator[bytes]:
        """``pieces`` as they are written, kept once the last one is (see :meth:`RunCache.keep_output`) unless a
        log is growing (:mod:`ctxwatch.engine.outputs`)."""
        if self.growing:
            return iter(pieces)
        return self.cache.keep_output(self.key, pieces, self._again)

    def replay_lines(self) -> bool:
        """Write the kept text lines, each through :func:`~ctxwatch.cli.console.echo` as they were first written;
        False when there are none."""
        import orjson

        from ctxwatch.cli.console import echo

        pieces = self.cache.load_output(self.key)
        if pieces is None:
            return False
        try:
            lines = orjson.loads(b"".join(pieces))
        except orjson.JSONDecodeError:
            return False
        if not isinstance(lines, list) or not all(isinstance(line, str) for line in lines):
            return False
        for line in lines:
            echo(line)
        return True

    def keep_lines(self, lines: list[str]) -> None:
        """Keep the text lines a command wrote (not kept when one cannot be written back as it was: a lone
        surrogate from a log's text)."""
        import orjson

        if self.growing:
            return
        try:
            data = orjson.dumps(lines)
        except TypeError:
            return
        for _ in self.cache.keep_output(self.key, [data], self._again):
            pass


def given_or_found(paths: tuple[str, ...]) -> tuple[str, ...]:
    """``paths`` as given, or when none is given the folders where the installed harnesses keep their logs
    (:func:`ctxwatch.engine.found_places`), said on standard error; exits with status 2 and where it looked
    when none holds a log.  Standard input is read only as ``-``: when it is not a terminal (``ctxwatch report
    < run.jsonl``), both messages say so."""
    if paths:
        return paths
    import click

    from ctxwatch.cli.console import echo
    from ctxwatch.engine import found_places, nothing_found

    found, looked = found_places()
    ctx = click.get_current_context(silent=True)
    # (named as typed: ``ctxwatch`` for the dashboard given no command, ``ctxwatch report``...)
    typed = ctx.command_path if ctx is not None else "ctxwatch"
    hint = stdin_hint(ctx) if not sys.stdin.isatty() else ""
    if not found:
        # (the engine's sentence names the dashboard's form, ``ctxwatch PATH``: the command typed is named)
        message = nothing_found(looked)
        if message.endswith(" ctxwatch PATH"):
            message = message.removesuffix("ctxwatch PATH") + f"{typed} PATH"
        fail(message + (f"; {hint}" if hint else ""))
    echo("ctxwatch: no path given; reading " + ", ".join(f"{clean(p.path)} ({p.harness})" for p in found)
         + (f" ({hint})" if hint else ""), err=True)
    return tuple(p.path for p in found)


def stdin_hint(ctx: click.Context | None) -> str:
    """What to type to read a log piped on standard input: ``-`` as the path, the command named as typed; the
    dashboard follows files, so for it ``ctxwatch report -``."""
    typed = ctx.command_path if ctx is not None else "ctxwatch report"
    if ctx is None or ctx.command.name == "watch":
        typed = typed.removesuffix(" watch") + " report"
    return f"to read the log on standard input, pass - as its path: `{typed} -`"


def user_cache() -> RunCache | None:
    """The user's cache of earlier reads, unless ``--no-cache`` or ``CTXWATCH_NO_CACHE`` turned it off."""
    import click

    from ctxwatch.engine.cache import default_cache

    ctx = click.get_current_context(silent=True)
    if ctx is not None and ctx.find_root().meta.get(NO_CACHE):
        return None
    return default_cache()


@contextlib.contextmanager
def steady_heap() -> Iterator[None]:
    """While a headless command loads a run and builds its report: the cyclic collector is off.

    Nearly everything made then lives until the command ends (call summaries, per-session totals), so each
    collection would walk the growing heap again for nothing: with tens of thousands of call summaries that is a
    quarter of the report's time, and receiving a folder's calls from the worker processes runs 3 to 4 times
    slower with it on (measured on the 500 MB Claude Code benchmark folder).  What a load leaves in reference
    cycles is small (under a thousand objects after that folder or the 200 MB benchmark log), so memory
    stays as it was.  The collector is switched back on afterwards (nested uses leave it as they found it).
    The dashboard, which runs for hours, never uses this."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
