"""``ctxwatch demo``: the synthetic run of :mod:`ctxwatch.demo`, written to a file or played live in the dashboard.

Live, a background thread writes the run to a temporary file at ``--speed`` calls per second while the dashboard
follows it like any log; the file is removed when the dashboard exits.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import tempfile
import threading
from typing import Any

import click

from ctxwatch.cli.console import echo
from ctxwatch.demo import DEFAULT_CALLS, DEFAULT_SEED, DEFAULT_SPEED, DEMO_WINDOW, write_run
from ctxwatch.output.safetext import output_closed


@click.command("demo")
@click.option("--speed", type=click.FloatRange(min=0, min_open=True), default=DEFAULT_SPEED, show_default=True,
              help="Calls written per second (with --write: only when given).")
@click.option("--calls", type=click.IntRange(min=1), default=DEFAULT_CALLS, show_default=True,
              help="Number of API calls in the run.")
@click.option("--seed", type=int, default=DEFAULT_SEED, show_default=True, help="Seed of the synthetic run.")
@click.option("--window", type=click.IntRange(min=2048), default=DEMO_WINDOW, show_default=True,
              help="Context window of the synthetic deployment, in tokens (gpt-4o's real one is 128000).")
@click.option("--write", "write_path", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Write the run to FILE (a new file; - for standard output) and exit, without the dashboard.")
@click.pass_context
def demo_cmd(ctx: click.Context, speed: float, calls: int, seed: int, window: int, write_path: str | None) -> None:
    """A live synthetic agent run: the floor, a growing history, a naive truncation, format drift, overflow.

    \b
    ctxwatch demo                    the dashboard on the run as it is written
    ctxwatch demo --write run.jsonl  write the run to a file and exit
    ctxwatch demo --write run.jsonl --speed 2 & ctxwatch run.jsonl
    """
    from click.core import ParameterSource

    if write_path == "-":  # (standard output, as everywhere a path is asked for)
        from ctxwatch.demo import paced_records

        paced = ctx.get_parameter_source("speed") == ParameterSource.COMMANDLINE
        out = sys.stdout.buffer
        try:
            for data in paced_records(calls, speed if paced else None, seed=seed, window=window):
                out.write(data)
                out.flush()
        except BrokenPipeError:
            output_closed()
        return
    if write_path is not None:
        paced = ctx.get_parameter_source("speed") == ParameterSource.COMMANDLINE
        try:
            n = write_run(write_path, calls, speed if paced else None, seed=seed, window=window)
        except FileExistsError as exc:
            raise click.UsageError(f"{write_path}: already exists; ctxwatch writes only new files (remove it "
                                   "first, or name another file)") from exc
        except OSError as exc:
            raise click.UsageError(f"{write_path}: cannot write ({exc.strerror or exc})") from exc
        # (terminal-safe: the path is the user's)
        echo(f"wrote {n} call{'s' if n != 1 else ''} to {write_path}", err=True)
        return
    try:
        import ctxwatch.ui.app  # noqa: F401  (the dashboard is optional in a partial install)
    except ImportError as exc:
        raise click.UsageError(f"the dashboard is not available ({exc}); use --write FILE") from exc
    run_live(calls, speed, seed=seed, window=window)


def run_live(calls: int = DEFAULT_CALLS, speed: float = DEFAULT_SPEED, *, seed: int = DEFAULT_SEED,
             window: int | None = DEMO_WINDOW) -> None:
    """Open the dashboard on the synthetic run while a background thread writes it to a temporary file.

    The writer appends one record every ``1/speed`` seconds (:func:`write_run`); the dashboard follows the file
    like any log (format ``canonical``, default :class:`~ctxwatch.config.Settings`).  On exit (``q``, or
    SIGTERM / SIGHUP, which ask the app to exit) the writer is stopped and the file is deleted.

    Raises:
        ImportError: the dashboard (Textual UI) cannot be imported.
    """
    from ctxwatch.config import Settings
    from ctxwatch.ui.app import CtxwatchApp

    fd, path = tempfile.mkstemp(prefix="ctxwatch-demo-", suffix=".jsonl")
    os.close(fd)
    stop = threading.Event()
    writer = threading.Thread(target=write_run, args=(path, calls, speed),
                              kwargs={"seed": seed, "window": window, "stop": stop, "exclusive": False},
                              name="ctxwatch-demo-writer", daemon=True)
    app = CtxwatchApp(path, fmt="canonical", settings=Settings())
    previous: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for name in ("SIGTERM", "SIGHUP"):
            sig = getattr(signal, name, None)
            if sig is not None:
                previous[sig] = signal.signal(sig, lambda *_: app.exit())
    try:
        writer.start()
        app.run()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        stop.set()
        writer.join(timeout=5)
        with contextlib.suppress(OSError):
            os.unlink(path)
    if app.return_code:  # (the app ended on an error it did not handle: the command fails too)
        sys.exit(app.return_code)
