"""What leaves the dashboard: an SVG screenshot (``s``) and the calls shown as CSV (``x``), each to a new file, and
the clipboard (``ctrl+c``).

:class:`OutputActions` is the part of the app (:class:`~ctxwatch.ui.app.CtxwatchApp` derives from it) that
writes them (:func:`~ctxwatch.ui.export.export_folder` says where) and copies, and says so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import App

from ctxwatch.model import Call
from ctxwatch.output.csv import write_csv
from ctxwatch.ui import text as tx
from ctxwatch.ui.costs import call_cost_text
from ctxwatch.ui.export import export_folder, file_stem, write_new
from ctxwatch.ui.screens import unique_path
from ctxwatch.ui.state import DashboardState
from ctxwatch.ui.views import empty_view_reason
from ctxwatch.ui.widgets.cells import COLUMNS, cell_texts

if TYPE_CHECKING:
    from ctxwatch.config import Settings
    from ctxwatch.ui.main import MainScreen


def call_line(call: Call, row: list[str], cost: float | None) -> str:
    """A call as one line of plain text, for the clipboard: the table's cells (``row``, :func:`cell_texts`) named
    by their columns, with the model id whole, the cost and where the call is in the log
    (``#43 · 12:00:01 · claude-sonnet-4-20250514 · floor 32,010 · … · $0.0952 · run.jsonl line 120``)."""
    cells = dict(zip((key for key, _label, _w in COLUMNS), row, strict=True))
    parts = [f"#{cells['index']}", cells["time"], call.model or "?", f"context {call.context}"]
    parts += [f"{key} {cells[key]}" for key in ("floor", "history", "reserve", "used", "reported")]
    parts += [call_cost_text(call, cost), f"{call.source.path} {call.source.where}"]
    return tx.clean(" · ".join(p.strip() for p in parts), multiline=False)


class OutputActions(App[None]):
    """Screenshots and CSV exports.

    Attributes (set by the app): ``state``; ``saved`` (the files written, in order).
    """

    state: DashboardState
    saved: list[str]
    if TYPE_CHECKING:  # (set by the app)
        settings: Settings
        main: MainScreen | None

        # (the app's own, used here)
        def _call_under_cursor(self) -> Call | None: ...

    def action_copy(self) -> None:
        """ctrl+c: copy the text selected on screen (with the mouse, or in the focused text box), else the
        highlighted item as plain text: the selected call's line (:func:`call_line`) on the main screen, the
        screen's own item elsewhere (a screen's ``copy_item()``: a flag whole, a message); and say what was
        copied.  Log text is copied with its terminal controls made visible (:func:`~ctxwatch.ui.text.clean`),
        as the screen shows it: a paste into a shell runs nothing it did not show."""
        what, text = self._copy_target()
        if text is None:
            self.notify("nothing to copy here: select text with the mouse first", title="copy")
            return
        self.copy_to_clipboard(text)
        self.notify(f"copied {what} ({len(text):,} character{'s' if len(text) != 1 else ''})", title="copy")

    def _copy_target(self) -> tuple[str, str | None]:
        """(what, text) ctrl+c copies; ``text`` ``None`` when there is nothing."""
        screen = self.screen
        focused = screen.focused
        chosen = getattr(focused, "selected_text", None)  # (an Input's or TextArea's own selection)
        if isinstance(chosen, str) and chosen:
            return "the selected text", tx.clean(chosen)
        selected = screen.get_selected_text()
        if selected:
            return "the selected text", tx.clean(selected)
        if screen is self.main:
            call = self._call_under_cursor()
            if call is None:
                return "", None
            row, _style = cell_texts(call, self.settings, self.state.calibrations.breakdown(call))
            return f"call #{call.index + 1}", call_line(call, row, self.state.costs.get(call.index))
        item = getattr(screen, "copy_item", None)
        found = item() if callable(item) else None
        if found is None:
            return "", None
        what, text = found
        return what, tx.clean(text)

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
        how many, of which view, and where; with no call in the view, say why nothing is written."""
        s = self.state
        if not s.view:  # (a file of headings alone says nothing the screen does not)
            self.notify(f"CSV not written: {empty_view_reason(s)}", title="CSV", severity="warning")
            return
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
