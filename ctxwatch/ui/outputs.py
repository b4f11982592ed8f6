"""What leaves the dashboard: an SVG screenshot (``s``) and the calls shown as CSV (``x``), each to a new file.

:class:`OutputActions` is the part of the app (:class:`~ctxwatch.ui.app.CtxwatchApp` derives from it) that
writes them (:func:`~ctxwatch.ui.export.export_folder` says where) and says so.
"""

from __future__ import annotations

from textual.app import App

from ctxwatch.output.csv import write_csv
from ctxwatch.ui import text as tx
from ctxwatch.ui.export import export_folder, file_stem, write_new
from ctxwatch.ui.screens import unique_path
from ctxwatch.ui.state import DashboardState


class OutputActions(App[None]):
    """Screenshots and CSV exports.

    Attributes (set by the app): ``state``; ``saved`` (the files written, in order).
    """

    state: DashboardState
    saved: list[str]

    def action_save_svg(self) -> None:
        """Save an SVG screenshot of the screen (:func:`~ctxwatch.ui.export.export_folder`) and say where.

        Written as every export is (:func:`~ctxwatch.ui.export.write_new`): to a new file, never through a
        symlink (Textual's ``save_screenshot`` opens with create-truncate and follows a planted one)."""
        s = self.state
        try:
            path = unique_path(export_folder(s.paths), "ctxwatch-" + file_stem(s.stem_source()), ".svg")
            write_new(path, self.export_screenshot().encode("utf-8"))
        except OSError as exc:  # a read-only folder, a full disk, an XDG path that is a file
            self.notify(f"screenshot not saved: {exc}", title="SVG", severity="error")
            return
        self._saved(path, "screenshot saved to", "SVG")

    def action_export_csv(self) -> None:
        """Write the calls of the current view as CSV (:func:`~ctxwatch.ui.export.export_folder`) and say
        how many, of which view, and where."""
        s = self.state
        try:
            path = unique_path(export_folder(s.paths), "ctxwatch-calls-" + file_stem(s.stem_source()), ".csv")
            write_csv(path, s.view_calls(), s.calibrations)
        except (OSError, ValueError) as exc:  # (ValueError: text the encoder still refuses; nothing is written)
            self.notify(f"CSV not written: {exc}", title="CSV", severity="error")
            return
        scope = [f"context {s.context}"] if s.context is not None and len(s.contexts) > 1 else []
        scope += [f"filter {s.filter_text!r}"] if s.filter_text else []
        of = f" of {len(s.calls):,} ({', '.join(scope)})" if scope else ""
        self._saved(path, f"{len(s.view):,} call{'s' if len(s.view) != 1 else ''}{of} exported to", "CSV")

    def _saved(self, path: str, what: str, title: str) -> None:
        """Keep ``path`` among the files written and say where it is."""
        self.saved.append(path)
        self.notify(f"{what}\n{tx.saved_where(path, tx.toast_width(self.size.width))}", title=title)
