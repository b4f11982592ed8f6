"""The turn-to-turn diff (``d``): what changed from the call before the selected one (same context) to it, read
from both calls re-read from disk in a worker thread (:mod:`ctxwatch.ui.screens.changes`)."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Static

from ctxwatch.formats import FormatSpec
from ctxwatch.model import Call
from ctxwatch.ui.screens.changes import TurnDiff, diff_text, turn_diff
from ctxwatch.ui.screens.common import REREAD_FAILED, reload
from ctxwatch.ui.screens.items import Item, build_items
from ctxwatch.ui.widgets.footer import AdaptiveFooter


class DiffLoaded(Message):
    """Both calls' items (``None`` for one that could not be re-read, ``error`` saying why)."""

    def __init__(self, prev: list[Item] | None, cur: list[Item] | None, error: str | None) -> None:
        super().__init__()
        self.prev = prev
        self.cur = cur
        self.error = error


class DiffScreen(Screen[None]):
    """What changed from ``prev`` (the call before, in the same context) to ``call``: the prompt's move, the
    floor, the messages added and those that left.  Keys: ↑ ↓ page up / down scroll, ``escape`` or ``d`` back.

    Attributes: ``diff`` (the :class:`~ctxwatch.ui.screens.changes.TurnDiff` once both calls are read, else ``None``).
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,d", "app.pop_screen", "Back"),
    ]

    def __init__(self, call: Call, prev: Call, spec: FormatSpec | None, gap: str | None = None) -> None:
        super().__init__()
        self.call = call
        self.prev = prev
        self.spec = spec
        #: The lines Esc skipped between the two calls (``esc skipped lines …``), or None: what changed then
        #: includes calls not read.
        self.gap = gap
        self.diff: TurnDiff | None = None
        self.error: str | None = None

    def compose(self) -> ComposeResult:
        """The diff's text in a scrollable box, then the footer."""
        with VerticalScroll(id="diff-scroll"):
            yield Static(Text(f"reading calls #{self.prev.index + 1} and #{self.call.index + 1} from disk…", "dim"),
                         id="diff-body")
        yield AdaptiveFooter()

    def on_mount(self) -> None:
        """Start re-reading both calls."""
        self.query_one("#diff-scroll").focus()
        self._load()

    @work(thread=True, exclusive=True, group="diff")
    def _load(self) -> None:
        if self.spec is None:
            self.post_message(DiffLoaded(None, None, "the log's format is not known yet"))
            return
        try:
            items = []
            for c in (self.prev, self.call):
                pc = reload(self.spec, c)
                items.append(build_items(c, pc) if pc is not None else None)
        except Exception as exc:  # never let odd content kill the screen
            self.post_message(DiffLoaded(None, None, f"{type(exc).__name__}: {exc}"))
            return
        self.post_message(DiffLoaded(items[0], items[1], None if None not in items else REREAD_FAILED))

    def on_resize(self) -> None:
        """Lay the rows out again for the new width."""
        if self.diff is not None:
            self._draw()

    def on_diff_loaded(self, message: DiffLoaded) -> None:
        """Show the diff (the handler runs on the app thread)."""
        self.diff = turn_diff(self.prev, self.call, message.prev, message.cur)
        self.error = message.error
        self._draw()

    def _draw(self) -> None:
        assert self.diff is not None
        # (the box's padding, 1 cell each side, and its vertical scrollbar, 2: a row one cell too long wrapped)
        out = diff_text(self.diff, max(20, self.app.size.width - 4))
        if self.gap:  # (first: the added messages below it can run to hundreds of lines)
            note = Text(f"{self.gap} between these calls: what changed includes the calls of those lines, which "
                        "were not read\n", "yellow")
            out = note.append_text(out)
        if self.error:
            out.append(f"\n{self.error}: messages not compared\n", "yellow")
        self.query_one("#diff-body", Static).update(out)
