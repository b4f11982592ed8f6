"""The key footer of every screen, fitted to the terminal's width: at 80 columns it drops its spacing, the
palette key and the keys the help lists anyway, so that the keys that matter stay on screen.
"""

from __future__ import annotations

from textual import events
from textual.app import ComposeResult
from textual.widgets import Footer
from textual.widgets._footer import FooterKey  # (the footer's key widget: not exported by textual.widgets)

#: Below this many columns footers drop their spacing and their command-palette key, so that every key fits
#: at 80 columns (ctrl+p still opens the palette).
FOOTER_COMPACT_WIDTH = 100


#: Actions whose keys the footer shows only from :data:`FOOTER_ALL_KEYS_WIDTH` columns: below, their room goes
#: to Enter (a call's messages) and ``i`` (input problems); the help (``?``) and the palette list them.
WIDE_ONLY_ACTIONS = frozenset({"toggle_xaxis", "save_svg", "export_csv"})
#: Columns from which the main screen's footer shows every key with its spacing and the palette key
#: (measured: the spaced keys end at column 111, and the palette key needs 12 more).
FOOTER_ALL_KEYS_WIDTH = 124


class AdaptiveFooter(Footer):
    """The key footer of every screen: compact, without the palette key, below :data:`FOOTER_COMPACT_WIDTH`
    columns (at 80 columns the spacing pushed the last keys, such as ``?`` or ``q``, off screen), and without
    the keys of :data:`WIDE_ONLY_ACTIONS` below :data:`FOOTER_ALL_KEYS_WIDTH`."""

    def __init__(self) -> None:
        super().__init__()
        self._narrow = False

    def compose(self) -> ComposeResult:
        """Textual's footer keys, less the wide-only ones when narrow."""
        keys = list(super().compose())
        if self._narrow:
            keys = [k for k in keys if not (isinstance(k, FooterKey) and k.action in WIDE_ONLY_ACTIONS)]
            self.styles.grid_size_columns = sum(isinstance(k, FooterKey) and not k.has_class("-command-palette")
                                                for k in keys)
        yield from keys

    def on_mount(self) -> None:
        """Fit the terminal's width at once."""
        self._fit(self.app.size.width)

    def on_resize(self, event: events.Resize) -> None:
        """Fit the new width."""
        self._fit(self.app.size.width)

    def _fit(self, width: int) -> None:
        compact = width < FOOTER_COMPACT_WIDTH
        narrow = width < FOOTER_ALL_KEYS_WIDTH
        if self.compact != compact or self._narrow != narrow:
            self.compact = compact
            self.show_command_palette = not compact
            self._narrow = narrow
            self.refresh(recompose=True)
