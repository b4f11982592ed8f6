"""The Textual dashboard (``ctxwatch PATH``).

Layout of the package:

* :mod:`ctxwatch.ui.feed`: the reading loop that runs in a worker thread (backfill, then live follow: a
  :class:`ctxwatch.source.FileTailer` woken by ``watchfiles`` events on the log's folder, or polling with
  ``--poll`` and as a fall back) and posts :mod:`ctxwatch.ui.messages` to the app, coalesced to at most four
  updates per second.
* :mod:`ctxwatch.ui.app`: :class:`~ctxwatch.ui.app.CtxwatchApp`; its message handlers own the state and push
  data down to the widgets.
* :mod:`ctxwatch.ui.widgets`: the context bar, the calls table, the trend chart, the status line.
* :mod:`ctxwatch.ui.screens`: call detail, eviction preview, help, session picker.
* :mod:`ctxwatch.ui.text`: making untrusted log text safe to display (literal, no markup, no escapes).

Nothing outside this package imports it except :mod:`ctxwatch.cli`.
"""
