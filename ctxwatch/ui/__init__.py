"""The Textual dashboard (``ctxwatch PATH``).

Layout of the package:

* :mod:`ctxwatch.ui.feed`: the reading loop that runs in a worker thread (backfill, then live follow) and posts
  :mod:`ctxwatch.ui.messages` to the app, coalesced to at most four updates per second;
  :mod:`ctxwatch.ui.workers` runs it, and the scan of a folder's sessions.
* :mod:`ctxwatch.ui.app`: :class:`~ctxwatch.ui.app.CtxwatchApp`; its message handlers are the only code that
  changes the state (:mod:`ctxwatch.ui.state`), which the main screen (:mod:`ctxwatch.ui.main`) then draws.
* :mod:`ctxwatch.ui.widgets`: the context bar, the calls table, the trend chart, the side panel, the status
  line, the footer; they draw what they are handed and never read the app.
* :mod:`ctxwatch.ui.screens`: call detail, eviction preview, input problems, help, session picker.
* ``app.tcss``: every style of the dashboard.
* :mod:`ctxwatch.ui.text`: making untrusted log text safe to display (literal, no markup, no escapes);
  :mod:`ctxwatch.ui.export`: the files written on request.

Nothing outside this package imports it except :mod:`ctxwatch.cli`.
"""
