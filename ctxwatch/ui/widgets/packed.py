"""A block of text broken between its parts (:func:`ctxwatch.ui.text.pack_parts`) at the width it is given, so
that a label and its value (``cache r 98,729``) are never split over two lines."""

from __future__ import annotations

from rich.text import Text
from textual.geometry import Size
from textual.widget import Widget

from ctxwatch.ui.text import pack_parts


class PackedText(Widget):
    """Text whose lines break only between their `` · ``-separated parts; :meth:`update` replaces it."""

    def __init__(self, text: Text, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._text = text

    def update(self, text: Text) -> None:
        """Show ``text`` instead (packed again at the current width)."""
        self._text = text
        self.refresh(layout=True)

    @property
    def text(self) -> Text:
        """The text shown, before packing."""
        return self._text

    def render(self) -> Text:
        """The text packed to the content width."""
        return pack_parts(self._text, self.content_region.width)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """Lines of the text packed to ``width`` (as :meth:`render` will draw it there), wrapped where a part is
        wider."""
        packed = pack_parts(self._text, width)
        return len(packed.wrap(self.app.console, max(1, width))) if width > 0 else 1
