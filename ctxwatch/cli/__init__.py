"""The ``ctxwatch`` command line: ``ctxwatch PATH`` opens the dashboard; ``report``, ``check``, ``plan``,
``schema`` and ``formats`` are headless; ``demo`` plays a synthetic run.

One module per command, the group in :mod:`ctxwatch.cli.group`, and the helpers they share in modules of their
own (:mod:`~ctxwatch.cli.options`, :mod:`~ctxwatch.cli.load`, :mod:`~ctxwatch.cli.spool`,
:mod:`~ctxwatch.cli.exits`, :mod:`~ctxwatch.cli.console`, :mod:`~ctxwatch.cli.calls`).  Each command only wires
options: the work is done by the core.  Exit status: 0 success; 1 ``check`` found flags at or above
``--fail-on``; 2 usage error or an unreadable log; 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import importlib
from typing import Any

from ctxwatch.cli.group import COMMANDS, DefaultGroup, clean_click_errors, main, run

#: The helpers this package gives, by the module that holds each; each command is ``<name>_cmd``.  Both are
#: imported when first asked for, so that the console entry point (:func:`run`) loads only the command it runs.
_HELPERS = {
    "EXIT_USAGE": "exits", "exit_if_nothing_read": "exits", "load_paths": "load", "steady_heap": "load",
    "make_settings": "options", "settings_options": "options", "PIPE_WRITER_WAIT": "spool", "STDIN_NAME": "spool",
    "spool_stdin": "spool",
}


def __getattr__(name: str) -> Any:
    if name == "counted_issues":
        from ctxwatch.model import counted_issues

        return counted_issues
    if name in _HELPERS:
        return getattr(importlib.import_module(f"ctxwatch.cli.{_HELPERS[name]}"), name)
    if name.endswith("_cmd") and name.removesuffix("_cmd") in COMMANDS:
        import click

        return main.get_command(click.Context(main), name.removesuffix("_cmd"))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "COMMANDS", "EXIT_USAGE", "PIPE_WRITER_WAIT", "STDIN_NAME", "DefaultGroup", "cache_cmd", "check_cmd",
    "clean_click_errors", "counted_issues", "demo_cmd", "exit_if_nothing_read", "formats_cmd", "load_paths", "main",
    "make_settings", "plan_cmd", "report_cmd", "run", "schema_cmd", "settings_options", "spool_stdin",
    "steady_heap", "watch_cmd",
]
