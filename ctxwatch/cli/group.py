"""The ``ctxwatch`` click group: ``ctxwatch PATH`` is ``ctxwatch watch PATH``, and every command is named here.

The group names the commands (:data:`COMMANDS`) and no command imports the group, so the imports run one way:
commands use only the shared helpers (options, loading, spooling, exit rules, console).  A command's module is
imported only when that command runs, or when the help lists it: ``ctxwatch report`` does not load the
planner, the demo or the dashboard.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator
from typing import Any

import click

from ctxwatch import __version__
from ctxwatch.output.safetext import clean, output_closed

#: Each command's name and where its click command is (``module:attribute``), imported when first needed.
COMMANDS = {
    "watch": "ctxwatch.cli.watch:watch_cmd",
    "report": "ctxwatch.cli.report:report_cmd",
    "formats": "ctxwatch.cli.formats:formats_cmd",
    "plan": "ctxwatch.cli.plan:plan_cmd",
    "schema": "ctxwatch.cli.schema:schema_cmd",
    "check": "ctxwatch.cli.check:check_cmd",
    "demo": "ctxwatch.cli.demo:demo_cmd",
    "cache": "ctxwatch.cli.cache:cache_cmd",
    "serve": "ctxwatch.cli.serve:serve_cmd",
    "statusline": "ctxwatch.cli.statusline:statusline_cmd",
}

#: The first paragraph of each command's help, which ``ctxwatch --help`` shortens into its list of commands: the
#: list is made from these, without importing a command (the dashboard's, the planner's, the demo's modules).
SUMMARIES = {
    "cache": "Where the cache of earlier reads is, and how big ('cache clear' empties it).",
    "check": "Print the flags of PATH; exit 1 if any is at or above --fail-on (or fewer calls than --min-calls "
             "were read), 2 on a usage error or if PATH cannot be read.",
    "demo": "A live synthetic agent run: the floor, a growing history, a naive truncation, format drift, overflow.",
    "formats": "List the log formats ctxwatch reads (names for --format).",
    "plan": "Preview the eviction plan of one call of PATHS: what is pinned, kept, summarised or evicted.",
    "report": "Per-call floor / history / reserve numbers for PATH, headless (on a terminal, the tables fit its "
              "width; piped, the width COLUMNS gives, if any; --sessions: one row per session).",
    "schema": "Tool-schema floor of one call of PATHS (a log, a batch pair or a folder, as for `report`): per-tool "
              "cost and what a compacted schema would save.",
    "serve": "Serve the dashboard on PATHS to a web browser (needs: pip install 'ctxwatch[web]').",
    "statusline": "One line: occupancy, floor / history, distance to compaction, worst flag.",
    "watch": "Open the dashboard on PATHS and follow it live.",
}


#: Where :meth:`DefaultGroup.parse_args` notes that it put ``watch`` before the arguments (click's ``meta``).
IMPLIED_WATCH = "ctxwatch.implied_watch"


class TypedContext(click.Context):
    """A command's context whose command path is the command as typed: ``ctxwatch PATH`` runs ``watch`` under
    no name of its own (``""``), so that its usage errors and ``--help`` say ``ctxwatch [OPTIONS] [PATHS]...``
    and ``Try 'ctxwatch --help'``, the form the README gives, not a ``ctxwatch watch`` the user never typed."""

    @property
    def command_path(self) -> str:
        """click's, without the space an empty name leaves at its end."""
        return super().command_path.rstrip()


class DefaultGroup(click.Group):
    """A group whose first argument, when it is not a command name, is a path for ``watch``; every error
    message click prints for it or its commands is terminal-safe (:func:`clean_click_errors`) and names the
    command as typed (:class:`TypedContext`)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command's name, imported or not (sorted, as click lists them)."""
        return sorted({*self.commands, *COMMANDS})

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """click's list of commands, each not yet imported listed by its :data:`SUMMARIES` entry."""
        rows = [(name, self.commands.get(name) or click.Command(name, help=SUMMARIES[name]))
                for name in self.list_commands(ctx)]
        limit = formatter.width - 6 - max(len(name) for name, _ in rows)
        with formatter.section("Commands"):
            formatter.write_dl([(name, cmd.get_short_help_str(limit)) for name, cmd in rows if not cmd.hidden])

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command ``cmd_name``, its module imported the first time it is asked for (:data:`COMMANDS`)."""
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            module, _, attr = COMMANDS[cmd_name].partition(":")
            command = getattr(importlib.import_module(module), attr)
            command.context_class = TypedContext
            self.add_command(command, cmd_name)
        return self.commands.get(cmd_name)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None,
                                                                         list[str]]:
        """click's; ``watch`` put there by :meth:`parse_args` is given no name (:class:`TypedContext`)."""
        name, command, rest = super().resolve_command(ctx, args)
        if name == "watch" and ctx.meta.pop(IMPLIED_WATCH, False):
            return "", command, rest
        return name, command, rest

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Insert ``watch`` before a leading non-command argument (``ctxwatch run.jsonl``), or as the only one."""
        # (no argument at all: the dashboard on the harnesses' logs; but shell completion, which parses the words
        # before the one being completed, completes a command's name there)
        if (not args and not ctx.resilient_parsing) or (args and args[0] not in self.commands
                                                         and args[0] not in COMMANDS
                                                         and args[0] not in ("--help", "-h", "--version")):
            args = ["watch", *args]
            ctx.meta[IMPLIED_WATCH] = True
        return super().parse_args(ctx, args)

    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None,
                     **extra: Any) -> click.Context:
        """click's, with the messages of its usage errors cleaned (:func:`clean_click_errors`)."""
        with clean_click_errors():
            return super().make_context(info_name, args, parent, **extra)

    def invoke(self, ctx: click.Context) -> Any:
        """click's (parsing the command's options, then running it), with the messages of its usage errors
        cleaned (:func:`clean_click_errors`); Ctrl-C ends the command with ``EXIT_INTERRUPTED`` (130)."""
        try:
            with clean_click_errors():
                return super().invoke(ctx)
        except KeyboardInterrupt:
            # (click would print "Aborted!" and exit with 1, which is `check`'s status for a flag)
            from ctxwatch.cli.console import echo
            from ctxwatch.cli.exits import EXIT_INTERRUPTED, fail

            echo("", err=True)  # (the message on a line of its own, not after the terminal's ^C)
            fail("interrupted", EXIT_INTERRUPTED)


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


@click.group(cls=DefaultGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ctxwatch")
def main() -> None:
    """Watch an LLM agent's context window: floor, history and reserve per call, from its call logs.

    \b
    ctxwatch                   the dashboard on the logs of the harnesses
                               installed (Claude Code, Codex, Gemini CLI),
                               the session picker on the newest
    ctxwatch PATH              open the dashboard and follow the log live
                               (the same as: ctxwatch watch PATH)
    ctxwatch report PATH       per-call numbers (text, --json, --jsonl,
                               --follow)
    ctxwatch check PATH        flags for CI/cron (exit 1 at or above --fail-on)
    ctxwatch plan PATH         preview the eviction plan of a call
    ctxwatch schema PATH       tool-schema floor analysis
    ctxwatch statusline [PATH] one line for Claude Code's status line (JSON on
                               stdin) or tmux
    ctxwatch serve PATH        the dashboard in a web browser
    ctxwatch demo              a live synthetic agent run
    ctxwatch formats           the log formats ctxwatch reads
    ctxwatch cache             the cache of earlier reads (cache clear)
    """


def run() -> None:
    """Console entry point: the click group, exiting quietly when the reader of our output goes away
    (``ctxwatch report run.jsonl | head -1``), as command-line tools do; the process ends without freeing
    what the command held (:mod:`ctxwatch.cli.ending`)."""
    from ctxwatch.cli.ending import end_process, ending_here

    ending_here()
    try:
        try:
            main()
        except BrokenPipeError:  # (output written elsewhere than through echo / write_out)
            output_closed()
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            end_process(exc.code or 0)
        raise  # (a message to print: Python prints it and exits with 1)
    end_process(0)
