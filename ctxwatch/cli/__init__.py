"""The ``ctxwatch`` command line.

``ctxwatch PATH`` opens the dashboard on a log (``watch`` is the implicit command).  Headless commands:
``report``, ``check``, ``plan``, ``schema``, ``formats``; and ``demo``.  Each command only wires options:
the work is done by the core modules.

Exit status: 0 success; 1 ``check`` found flags at or above ``--fail-on``; 2 usage error or an unreadable
log (click's convention for usage errors).
"""

from __future__ import annotations

import contextlib
import gc
import os
import shutil
import stat
import sys
from collections.abc import Callable, Iterator
from typing import Any

import click
import orjson

from ctxwatch import __version__
from ctxwatch.config import WINDOW_LIMIT, ConfigError, Settings, load_settings
from ctxwatch.model import counted_issues
from ctxwatch.output.safetext import clean, json_bytes, json_lines, output_closed, show_as, shown_bytes
from ctxwatch.output.safetext import echo as _echo

EXIT_USAGE = 2


class DefaultGroup(click.Group):
    """A group whose first argument, when it is not a command name, is a path for ``watch``; every error
    message click prints for it or its commands is terminal-safe (:func:`clean_click_errors`)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Insert ``watch`` before a leading non-command argument (``ctxwatch run.jsonl``)."""
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h", "--version"):
            args = ["watch", *args]
        return super().parse_args(ctx, args)

    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None,
                     **extra: Any) -> click.Context:
        """click's, with the messages of its usage errors cleaned (:func:`clean_click_errors`)."""
        with clean_click_errors():
            return super().make_context(info_name, args, parent, **extra)

    def invoke(self, ctx: click.Context) -> Any:
        """click's (parsing the command's options, then running it), with the messages of its usage errors
        cleaned (:func:`clean_click_errors`)."""
        with clean_click_errors():
            return super().invoke(ctx)


@contextlib.contextmanager
def clean_click_errors() -> Iterator[None]:
    """Make the message of a ``click.ClickException`` raised inside terminal-safe (:func:`clean`) before click
    prints it: a usage error names what the user gave (``--config`` path, ``demo --write`` path) or what a
    config file holds (an unknown key), and a path such as ``$(printf '/tmp/\\x1b]0;T\\x07.toml')`` printed
    as it is retitled the terminal."""
    try:
        yield
    except click.ClickException as exc:
        # (newlines kept: click's help text, shown for a missing argument, is such a message; typed Final in
        # click, but a plain attribute that format_message reads)
        setattr(exc, "message", clean(exc.message, multiline=True))  # noqa: B010
        raise


def settings_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """The threshold options shared by the dashboard, ``report``, ``check`` and ``plan``."""
    opts = [
        click.option("--config", "config", type=click.Path(dir_okay=False), default=None,
                     help="Config file (TOML). Default: ~/.config/ctxwatch/config.toml if present."),
        click.option("--window", type=click.IntRange(min=1, max=WINDOW_LIMIT - 1), default=None,
                     help="Context window in tokens where the log states none (it wins over the model catalogue)."),
        click.option("--budget-fraction", type=click.FloatRange(0, 1, min_open=True), default=None,
                     help="Fraction of the window the prompt may use [default: 0.6]."),
        click.option("--trigger", type=click.FloatRange(0, 1, min_open=True), default=None,
                     help="Compaction trigger as a fraction of the budget [default: 0.8]."),
        click.option("--reserve", type=click.FloatRange(0, 1, max_open=True), default=None,
                     help="Completion reserve as a fraction of the window when max_tokens is not set [default: 0.15]."),
        click.option("--format", "fmt", default=None, help="Log format (see `ctxwatch formats`); default: detect."),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def make_settings(config: str | None, **overrides: Any) -> Settings:
    """Settings from the config file and options; a bad config is a usage error naming the file."""
    try:
        return load_settings(config, **overrides)
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from exc


def _load(path: str, fmt: str | None, settings: Settings) -> Any:
    from ctxwatch.engine import LogError, load_run

    try:
        return load_run(path, fmt, settings, parallel=True)
    except LogError as exc:
        _echo(f"ctxwatch: {clean(exc)}", err=True)
        sys.exit(EXIT_USAGE)


@click.group(cls=DefaultGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ctxwatch")
def main() -> None:
    """Watch an LLM agent's context window: floor, history and reserve per call, from its call logs.

    \b
    ctxwatch PATH              open the dashboard and follow the log live
                               (the same as: ctxwatch watch PATH)
    ctxwatch report PATH       per-call numbers (text, --json, or --follow --jsonl)
    ctxwatch check PATH        flags for CI/cron (exit 1 at or above --fail-on)
    ctxwatch plan PATH         preview the eviction plan of a call
    ctxwatch schema PATH       tool-schema floor analysis
    ctxwatch demo              a live synthetic agent run
    ctxwatch formats           the log formats ctxwatch reads
    """


@main.command("watch")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@settings_options
@click.option("--poll", is_flag=True,
              help="Poll instead of using filesystem events (network, WSL, container filesystems).")
@click.option("--last", type=click.IntRange(min=1), default=None, help="Start from the last N calls.")
def watch_cmd(paths: tuple[str, ...], config: str | None, window: int | None, budget_fraction: float | None,
              trigger: float | None, reserve: float | None, fmt: str | None, poll: bool, last: int | None) -> None:
    """Open the dashboard on PATHS and follow it live.

    \b
    PATHS: a log file; a folder of logs (sessions, newest first; the newest is followed);
    several logs or folders (the same, over all their files); or an OpenAI/Anthropic batch
    input and output file, or their folder (one run, results joined to requests by custom_id).
    """
    import os

    settings = make_settings(config, window=window, budget_fraction=budget_fraction, trigger=trigger,
                             reserve=reserve)
    from ctxwatch.engine import LOG_SUFFIXES, LogError, check_log_file, resolve_spec

    headless = not sys.stdout.isatty() or shutil.get_terminal_size((0, 0)).columns <= 0
    if STDIN_NAME in paths and not headless:
        # (the dashboard reads its keys from the terminal, and follows files: a pipe is for the headless commands)
        _echo("ctxwatch: -: the dashboard follows a file and reads keys from the terminal; for piped input use "
              "`ctxwatch report -` or `ctxwatch check -`", err=True)
        sys.exit(EXIT_USAGE)
    if not headless and (pipe := next((p for p in paths if _is_pipe(p)), None)) is not None:
        _echo(f"ctxwatch: {clean(pipe)}: a pipe: the dashboard follows a file; `ctxwatch report`, `check` and "
              "`plan` read a pipe (or save it to a file first)", err=True)
        sys.exit(EXIT_USAGE)
    for path in (p for p in paths if p != STDIN_NAME):  # (standard input: read by the headless report below)
        if not os.path.lexists(path):
            # One log file about to be written (`demo --write run.jsonl & ctxwatch run.jsonl`): the dashboard
            # waits for it, like `tail -F`, when its folder exists.
            parent = os.path.dirname(os.path.abspath(path))
            if len(paths) == 1 and os.path.isdir(parent) and path.endswith(LOG_SUFFIXES):
                break
            _echo(f"ctxwatch: {clean(path)}: no such file or directory", err=True)
            sys.exit(EXIT_USAGE)
        if not os.path.isdir(path):
            try:
                check_log_file(path)  # (a pipe or a device among several paths, as alone: refused by name)
            except LogError as exc:
                _echo(f"ctxwatch: {clean(exc)}", err=True)
                sys.exit(EXIT_USAGE)
    waiting = len(paths) == 1 and not os.path.lexists(paths[0])
    if len(paths) == 1 and not os.path.isdir(paths[0]) and not waiting and paths[0] != STDIN_NAME:
        try:
            resolve_spec(paths[0], fmt)
        except LogError as exc:
            _echo(f"ctxwatch: {clean(exc)}", err=True)
            sys.exit(EXIT_USAGE)
    if headless:
        # No terminal to draw on (a pipe, CI, COLUMNS=0): print the headless report instead (case B31).
        _echo("ctxwatch: no terminal; printing `ctxwatch report` instead of the dashboard", err=True)
        ctx = click.get_current_context()
        ctx.invoke(report_cmd, paths=paths, config=config, window=window, budget_fraction=budget_fraction,
                   trigger=trigger, reserve=reserve, fmt=fmt, as_json=False, follow=False, jsonl=False, poll=poll)
        return
    from ctxwatch.ui.app import CtxwatchApp

    app = CtxwatchApp(paths[0] if len(paths) == 1 else list(paths), fmt=fmt, settings=settings, poll=poll,
                      last=last)
    app.run()
    if app.return_code:  # (1: the app ended on an error it did not handle; Textual printed its traceback)
        sys.exit(app.return_code)


@main.command("report")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@settings_options
@click.option("--json", "as_json", is_flag=True, help="Print the JSON document (schema in the README).")
@click.option("--follow", is_flag=True, help="Keep reading one log file as it grows, printing JSON lines (as --jsonl) "
                                          "as calls complete (a folder: open it in the dashboard, which follows its "
                                          "newest session).")
@click.option("--jsonl", is_flag=True, help="One JSON object per line per call, and an {\"event\": \"issue\"} line per "
                                            "problem (with --follow: as each completes).")
@click.option("--poll", is_flag=True, help="With --follow: poll instead of filesystem events.")
def report_cmd(paths: tuple[str, ...], config: str | None, window: int | None, budget_fraction: float | None,
               trigger: float | None, reserve: float | None, fmt: str | None, as_json: bool, follow: bool,
               jsonl: bool, poll: bool) -> None:
    """Per-call floor / history / reserve numbers for PATH, headless."""
    if as_json and jsonl:
        raise click.UsageError("--json and --jsonl are two output shapes: choose one")
    if follow and (STDIN_NAME in paths or any(_is_pipe(p) for p in paths)):
        raise click.UsageError("--follow reads a file as it grows; standard input ('-') or a pipe is read whole: "
                               "drop --follow, or give the log's path")
    if follow and as_json:
        raise click.UsageError("--follow prints JSON lines as calls complete (--jsonl); --json is one document "
                               "of a log as it stands: choose one")
    if poll and not follow:
        raise click.UsageError("--poll applies to --follow only")
    settings = make_settings(config, window=window, budget_fraction=budget_fraction, trigger=trigger,
                             reserve=reserve)
    if follow:
        if len(paths) != 1:
            raise click.UsageError("--follow takes exactly one PATH")
        import logging
        import threading

        from ctxwatch.engine import LogError
        from ctxwatch.output.follow import follow_jsonl

        # watchfiles logs a warning on Ctrl-C; stopping on Ctrl-C is the normal end of a follow (exit 0).
        logging.getLogger("watchfiles").setLevel(logging.ERROR)
        stop = threading.Event()
        # Ctrl-C sets the stop event instead of raising KeyboardInterrupt: a KeyboardInterrupt raised while
        # watchfiles waits in its Rust loop can be taken by watchfiles as the end of one watch, after which
        # the follow loop simply watched again and the command never exited.
        previous = _on_sigint(stop)
        try:
            follow_jsonl(paths[0], fmt, settings, sys.stdout, stop, poll=poll)
        except KeyboardInterrupt:
            stop.set()
        except LogError as exc:
            _echo(f"ctxwatch: {clean(exc)}", err=True)
            sys.exit(EXIT_USAGE)
        finally:
            _restore_sigint(previous)
        return
    from ctxwatch.output.report import report_json

    run = load_paths(paths, fmt, settings)
    exit_if_nothing_read(run, paths)
    with steady_heap():
        doc = report_json(run)
    if jsonl:  # one call object per line, then one issue event per problem, as --follow --jsonl prints them
        _write_bytes(json_lines(doc["calls"]) + json_lines({"event": "issue", **i} for i in doc["issues"]))
        return
    if as_json:
        _write_bytes(json_bytes(doc, orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE))
        return
    from ctxwatch.output.text import report_lines

    for line in report_lines(doc, run.issues, settings):
        _echo(line)


def _write_bytes(data: bytes) -> None:
    """Write UTF-8 bytes to stdout as they are (a big report is not copied into a str first)."""
    data = shown_bytes(data)
    try:
        sys.stdout.flush()
        buffer = getattr(sys.stdout, "buffer", None)
        if buffer is None:  # a text-only stdout (tests capturing output)
            sys.stdout.write(data.decode())
        else:
            buffer.write(data)
            buffer.flush()
    except BrokenPipeError:
        output_closed()


def _on_sigint(stop: Any) -> Any:
    """Make SIGINT set ``stop`` (a :class:`threading.Event`); return the previous handler, or ``None`` when
    no handler can be installed (not the main thread)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGINT, lambda _sig, _frame: stop.set())


def _restore_sigint(previous: Any) -> None:
    """Put back the SIGINT handler :func:`_on_sigint` replaced."""
    import signal

    if previous is not None:
        signal.signal(signal.SIGINT, previous)


#: The name a log read from standard input (``-``) is shown under.
STDIN_NAME = "-"


def _is_stdin(path: str) -> bool:
    """True when ``path`` is the pipe this process reads as standard input (``/dev/stdin``, ``/proc/self/fd/0``)."""
    try:
        a, b = os.stat(path), os.fstat(sys.stdin.fileno())
    except (OSError, ValueError, AttributeError):  # (no stdin, or a test's stdin without a descriptor)
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _is_pipe(path: str) -> bool:
    """True for a named pipe given as a path: ``<(zcat run.jsonl.gz)`` (``/dev/fd/63``), ``/dev/stdin`` fed by
    a pipe, a ``mkfifo`` pipe."""
    try:
        return stat.S_ISFIFO(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


#: Seconds a named pipe given by path may stay without a writer before it is taken as empty: a ``mkfifo`` pipe
#: nobody writes to would otherwise block the command forever (a process substitution's writer is there at once;
#: a writer started beside the command, ``(sleep 2; cat f > p) &``, gets this long).  After
#: :data:`PIPE_WAIT_NOTICE` seconds the wait is said on stderr.
PIPE_WRITER_WAIT = 10.0
PIPE_WAIT_NOTICE = 1.0


def _copy_pipe(path: str, out: Any) -> bool:
    """Copy the pipe at ``path`` to the binary file ``out`` until its writer closes it; False when no writer
    came within :data:`PIPE_WRITER_WAIT` seconds, or the writer closed it with nothing written.

    The pipe is opened without blocking (opening a FIFO for reading otherwise waits for a writer, forever if none
    comes), then read blocking once a writer is there."""
    import time

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        start = time.monotonic()
        noticed = False
        while True:
            try:
                chunk = os.read(fd, 1 << 20)
            except BlockingIOError:
                break  # a writer holds it open: nothing yet
            if chunk:
                out.write(chunk)
                break
            waited = time.monotonic() - start
            if waited >= PIPE_WRITER_WAIT:
                return False  # (end of file every time: no writer, or one that wrote nothing)
            if waited >= PIPE_WAIT_NOTICE and not noticed:
                noticed = True
                _echo(f"ctxwatch: {clean(path)}: waiting for a writer (up to {PIPE_WRITER_WAIT:g} s)", err=True)
            time.sleep(0.01)
        os.set_blocking(fd, True)
        while chunk := os.read(fd, 1 << 20):
            out.write(chunk)
        return True
    finally:
        os.close(fd)


def spool_stdin(paths: tuple[str, ...]) -> tuple[tuple[str, ...], str | None]:
    """``paths`` with ``-`` (``zcat run.jsonl.gz | ctxwatch report -``) and each named pipe
    (``ctxwatch report <(zcat in.jsonl.gz) <(zcat out.jsonl.gz)``, ``/dev/stdin``) replaced by a private
    temporary copy, and the folder of those copies (``None`` when there is none).

    Calls keep byte offsets into a file, and a pipe can be read once, so it is copied to a file first (in
    chunks: never whole in memory), in a folder only this user can read; it is removed when the command exits.
    Output names each copy as it was given (``-``, ``/dev/fd/63``).  Exits with status 2 when ``-`` is given
    twice or standard input is a terminal (nothing piped: reading would wait for typing).
    """
    pipes = [p for p in paths if p != STDIN_NAME and _is_pipe(p)]
    if STDIN_NAME not in paths and not pipes:
        return paths, None
    if paths.count(STDIN_NAME) > 1:
        _echo("ctxwatch: -: standard input can be read once; give '-' once", err=True)
        sys.exit(EXIT_USAGE)
    if STDIN_NAME in paths and (sys.stdin is None or sys.stdin.isatty()):
        _echo("ctxwatch: -: standard input is a terminal; pipe a log in (zcat run.jsonl.gz | ctxwatch report -)",
              err=True)
        sys.exit(EXIT_USAGE)
    if STDIN_NAME in paths and (again := next((p for p in pipes if _is_stdin(p)), None)) is not None:
        _echo(f"ctxwatch: {clean(again)} is standard input, also given as '-': it can be read once; give it once",
              err=True)
        sys.exit(EXIT_USAGE)
    import atexit
    import signal
    import tempfile

    folder = tempfile.mkdtemp(prefix="ctxwatch-stdin-")  # (mode 0700: the log may hold private prompts)
    owner = os.getpid()

    def remove() -> None:
        if os.getpid() == owner:  # (a forked worker that exits leaves the parent's copy alone)
            shutil.rmtree(folder, True)

    atexit.register(remove)
    # A terminated command must not leave the copy behind: TERM and HUP end it through sys.exit, so atexit runs
    # (their default action ends the process at once).
    for sig in (signal.SIGTERM, signal.SIGHUP):
        try:
            if signal.getsignal(sig) == signal.SIG_DFL:
                signal.signal(sig, lambda signum, _frame: sys.exit(128 + signum))
        except (ValueError, OSError, AttributeError):  # (not the main thread, or no such signal here)
            pass
    copies: dict[str, str] = {}
    for n, given in enumerate(dict.fromkeys(p for p in paths if p == STDIN_NAME or p in pipes)):
        # (each copy in a folder of its own, under the name given, so that a file column shows what the user gave)
        os.mkdir(os.path.join(folder, str(n)))
        spool = os.path.join(folder, str(n), STDIN_NAME if given == STDIN_NAME else os.path.basename(given) or "pipe")
        try:
            with open(spool, "wb") as out:
                if given != STDIN_NAME:
                    if not _copy_pipe(given, out):
                        _echo(f"ctxwatch: {clean(given)}: a named pipe nothing was written to (no writer within "
                              f"{PIPE_WRITER_WAIT:g} s)", err=True)
                        sys.exit(EXIT_USAGE)
                elif (buffer := getattr(sys.stdin, "buffer", None)) is not None:
                    shutil.copyfileobj(buffer, out, 1 << 20)
                else:  # a text-only stdin (tests)
                    out.write(sys.stdin.read().encode("utf-8", "surrogateescape"))
        except OSError as exc:
            _echo(f"ctxwatch: {clean(given)}: cannot read ({exc.strerror or exc})", err=True)
            sys.exit(EXIT_USAGE)
        show_as(spool, given)
        copies[given] = spool
    return tuple(copies.get(p, p) for p in paths), folder


def load_paths(paths: tuple[str, ...], fmt: str | None, settings: Settings) -> Any:
    """One run from one log, from a batch input/output pair, or from a folder of logs (``-``: standard input,
    copied to a temporary file first by :func:`spool_stdin`; output shows that copy as ``-``).

    Exits with status 2 and a message naming the file when nothing can be read (shared by report/check).
    """
    paths, _ = spool_stdin(paths)
    with steady_heap():
        if len(paths) == 1 and not os.path.isdir(paths[0]):
            return _load(paths[0], fmt, settings)
        from ctxwatch.engine import LogError, load_many

        try:
            return load_many(list(paths), fmt, settings, parallel=True)
        except LogError as exc:
            _echo(f"ctxwatch: {clean(exc)}", err=True)
            sys.exit(EXIT_USAGE)


def _unreadable(issue: Any) -> bool:
    """True for an issue that, in a log with no call at all, makes it unreadable (exit 2): a damaged line other
    than a half-written last one, a file that cannot be read, a forced format that reads nothing."""
    from ctxwatch.model import is_bad_line

    if issue.kind in ("unreadable", "format_mismatch"):
        return True
    return is_bad_line(issue) and issue.kind != "truncated_tail"


def exit_if_nothing_read(run: Any, paths: tuple[str, ...]) -> None:
    """Exit with status 2 and a message naming the file when ``run`` has no call and is damaged or could not be
    read (report and check alike).  Notes alone (a skipped file beside an empty log) and a half-written last
    line (a live log writing its first call) are not that: an empty log is a log with no call yet.  With
    several files (``paths`` holds a folder, or more than one path), a file that could not be read is a note
    beside the others (a run in which no file at all could be read stops earlier, in the folder read)."""
    import os

    from ctxwatch.model import tally_issues

    several = len(paths) > 1 or any(os.path.isdir(p) for p in paths)
    bad = [i for i in run.issues if i.kind != "reset"]
    fatal = [i for i in bad if _unreadable(i) and not (several and i.kind == "unreadable")]
    if run.calls or not fatal:
        return
    why = fatal[0]
    at = f"{why.path}:{why.line}" if why.line else why.path
    counted = counted_issues(*tally_issues(bad))
    _echo(f"ctxwatch: {clean(run.path)}: no call could be read ({counted}; {clean(at)}: {clean(why.message)})",
          err=True)
    sys.exit(EXIT_USAGE)


@contextlib.contextmanager
def steady_heap() -> Iterator[None]:
    """While a headless command loads a run and builds its report: the cyclic collector is off.

    Nearly everything made then lives until the command ends (call summaries, per-session totals), so each
    collection walked the growing heap again for nothing: with tens of thousands of call summaries that was a
    quarter of the report's time, and receiving a folder's calls from the worker processes ran 3 to 4 times
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


@main.command("formats")
def formats_cmd() -> None:
    """List the log formats ctxwatch reads (names for --format)."""
    from ctxwatch.formats import formats

    for name, spec in sorted(formats().items()):
        alias = f" (also: {', '.join(spec.aliases)})" if spec.aliases else ""
        _echo(f"{name:<16} {spec.description}{alias}")


def _register_optional() -> None:
    """Commands implemented in their own modules (plan/schema, check, demo)."""
    import importlib

    for mod, names in (("ctxwatch.cli.plan", ("plan_cmd", "schema_cmd")), ("ctxwatch.cli.check", ("check_cmd",)),
                       ("ctxwatch.demo", ("demo_cmd",))):
        try:
            m = importlib.import_module(mod)
        except ModuleNotFoundError as exc:
            if exc.name != mod:
                raise
            continue
        for n in names:
            cmd = getattr(m, n, None)
            if isinstance(cmd, click.Command):
                main.add_command(cmd)


_register_optional()


def run() -> None:
    """Console entry point: the click group, exiting quietly when the reader of our output goes away
    (``ctxwatch report run.jsonl | head -1``), as command-line tools do."""
    try:
        main()
    except BrokenPipeError:  # (output written elsewhere than through echo / write_out)
        output_closed()
