"""The ``ctxwatch`` command line: ``ctxwatch PATH`` opens the dashboard; ``report``, ``check``, ``plan``,
``schema`` and ``formats`` are headless; ``demo`` plays a synthetic run.

One module per command, the group in :mod:`ctxwatch.cli.group`, and the helpers they share in modules of their
own (:mod:`~ctxwatch.cli.options`, :mod:`~ctxwatch.cli.load`, :mod:`~ctxwatch.cli.spool`,
:mod:`~ctxwatch.cli.exits`, :mod:`~ctxwatch.cli.console`, :mod:`~ctxwatch.cli.calls`).  Each command only wires
options: the work is done by the core.  Exit status: 0 success; 1 ``check`` found flags at or above
``--fail-on``; 2 usage error or an unreadable log.
"""

from __future__ import annotations

from ctxwatch.cli.check import check_cmd
from ctxwatch.cli.demo import demo_cmd
from ctxwatch.cli.exits import EXIT_USAGE, exit_if_nothing_read
from ctxwatch.cli.formats import formats_cmd
from ctxwatch.cli.group import DefaultGroup, clean_click_errors, main, run
from ctxwatch.cli.load import load_paths, steady_heap
from ctxwatch.cli.options import make_settings, settings_options
from ctxwatch.cli.plan import plan_cmd
from ctxwatch.cli.report import report_cmd
from ctxwatch.cli.schema import schema_cmd
from ctxwatch.cli.spool import PIPE_WRITER_WAIT, STDIN_NAME, spool_stdin
from ctxwatch.cli.watch import watch_cmd
from ctxwatch.model import counted_issues

__all__ = [
    "EXIT_USAGE", "PIPE_WRITER_WAIT", "STDIN_NAME", "DefaultGroup", "check_cmd", "clean_click_errors",
    "counted_issues", "demo_cmd", "exit_if_nothing_read", "formats_cmd", "load_paths", "main", "make_settings",
    "plan_cmd", "report_cmd", "run", "schema_cmd", "settings_options", "spool_stdin", "steady_heap", "watch_cmd",
]
