"""The dashboard's screens besides the main one, one module each; the app hands each what it shows.

* :mod:`.detail`: every item of one call's prompt with its tokens (:class:`DetailScreen`); the items are
  built in :mod:`.items` from the call re-read from disk.
* :mod:`.plan`: the eviction preview of one call, with its policy knobs (:class:`PlanScreen`); its rows are
  built in :mod:`.planrows`, its bars, header and JSON in :mod:`.planview`.
* :mod:`.issues`: every input problem of the run (:class:`IssuesScreen`).
* :mod:`.flags`: every flag of the context shown (:class:`FlagsScreen`).
* :mod:`.diff`: what changed since the call before (:class:`DiffScreen`).
* :mod:`.fleet`: one row per conversation, most at risk first (:class:`FleetScreen`).
* :mod:`.picker`: the sessions of a folder (:class:`SessionPicker`); names are fitted in :mod:`.names`.
* :mod:`.help`: keys and legend (:class:`HelpScreen`).
"""

from ctxwatch.ui.screens.common import unique_path
from ctxwatch.ui.screens.detail import DetailScreen
from ctxwatch.ui.screens.diff import DiffScreen
from ctxwatch.ui.screens.flags import FlagsScreen
from ctxwatch.ui.screens.fleet import FleetScreen
from ctxwatch.ui.screens.help import HelpScreen
from ctxwatch.ui.screens.issues import IssuesScreen
from ctxwatch.ui.screens.items import _add_framing, build_items
from ctxwatch.ui.screens.names import common_cut, fit_names
from ctxwatch.ui.screens.picker import AUTO, SessionPicker
from ctxwatch.ui.screens.plan import PlanScreen
from ctxwatch.ui.state import listed_issues

__all__ = [
    "AUTO", "DetailScreen", "DiffScreen", "FlagsScreen", "FleetScreen", "HelpScreen", "IssuesScreen", "PlanScreen",
    "SessionPicker", "_add_framing", "build_items", "common_cut", "fit_names", "listed_issues", "unique_path",
]
