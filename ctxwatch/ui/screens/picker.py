"""The session picker (``o``): the session logs of a folder, newest first, with when each was last active
and its size; typing filters them, and the first row follows the newest session automatically.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import ClassVar

from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.geometry import Size
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from ctxwatch.formats.claude_code import is_subagent_file
from ctxwatch.output.safetext import clean
from ctxwatch.ui import text as tx
from ctxwatch.ui.screens.names import (
    GAP,
    PICKER_CHROME,
    PICKER_MARGIN,
    NameColumns,
    cells,
    file_size,
    filter_hint,
    grouped,
    split_session_path,
)
from ctxwatch.ui.summaries import SessionInfo, file_stamp, info_line, row_time

#: The session picker's first option: follow whichever session is newest.
AUTO = ""


class OneLineOptions(OptionList):
    """An :class:`OptionList` whose options are one line each (the session picker lays its rows out to fit, and
    does not wrap them): its height is their count, not measured option by option (measuring the thousands of
    rows of a big projects folder takes most of a second, on every layout)."""

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """One line per option."""
        return self.option_count


class SessionPicker(ModalScreen[str | None]):
    """Pick a session log of a folder (newest first); the first option follows the newest automatically.

    Each row names the session's folder (a Claude Code project folder) and the session in two columns, then
    when it was last active and its size; names too long for the terminal lose what tells sessions apart
    least (:func:`fit_names`).  Typing (or ``/``) goes to the filter box above the list, which keeps the rows
    whose path (relative to the folder) holds the text, ignoring case; Enter picks the highlighted row, ↑ ↓
    move in the list meanwhile.  Escape clears the filter, then closes.  Dismisses with the chosen path,
    :data:`AUTO` for automatic, or ``None`` when cancelled.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel"),
        Binding("j", "down", "Down", show=False),
        Binding("k", "up", "Up", show=False),
        # (for the filter box: in the list its own bindings come first)
        Binding("down", "down", "Down", show=False),
        Binding("up", "up", "Up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
    ]

    class InfoRead(Message):
        """The picker's worker read session ``path``: ``info`` (``None``: it could not be read).  Bubbles to the
        app, which keeps it for the next opening."""

        def __init__(self, path: str, info: SessionInfo | None) -> None:
            super().__init__()
            self.path = path
            self.info = info

    def __init__(self, folder: str, files: Sequence[str], current: str | None, auto: bool,
                 cursor: str | None = None, infos: Mapping[str, SessionInfo | None] | None = None,
                 read: Callable[[str], SessionInfo | None] | None = None) -> None:
        super().__init__()
        #: What is known of each session (calls, peak, model, first prompt), read by ``read`` in a worker
        #: thread, newest first, for the files whose ``infos`` entry is missing or stale.
        self.infos: dict[str, SessionInfo | None] = dict(infos or {})
        self.read = read
        self.folder = folder
        self.files = grouped(files)
        self.current = current
        self.auto = auto
        #: The file the cursor starts on (the most recent session, when the dashboard opens on the picker), else
        #: the current choice.
        self.cursor = cursor
        #: The filter's text (rows whose path relative to ``folder`` holds it, ignoring case; ``""``: all).
        self.filter_text = ""
        #: Per file: (folder name, session name, subagent?, when it was last active, its size, what that time is:
        #: ``""`` the last call's, else e.g. ``(last record)``).
        self._rows: list[tuple[str, str, bool, str, str, str]] = []
        self._keys: list[str] = []  # (each file's path relative to the folder, case-folded: what the filter reads)
        self._row_of = {f: i for i, f in enumerate(self.files)}
        # (each file's row, laid out for the width now: kept from one filter to the next, an option keeps what
        # the list worked out about it, so that filtering does not measure thousands of rows again)
        self._file_options: list[Option] = []
        self._laid_out_for = 0  # (the screen width the rows were laid out for)
        self._box_w = 60  # (the dialog's width, once laid out)

    def _read_rows(self) -> None:
        for f in self.files:
            rel = os.path.relpath(f, self.folder)
            folder, session = split_session_path(rel)
            try:
                when, note = row_time(f, self.infos.get(f) if self._fresh(f) else None)
                size = file_size(os.path.getsize(f))
            except OSError:
                when, size, note = "gone", "", ""
            self._rows.append((tx.clean(folder, multiline=False), tx.clean(session, multiline=False),
                               is_subagent_file(f), when, size, note))
            self._keys.append(rel.casefold())

    def _title(self, matches: int | None = None) -> Text:
        """``Sessions in FOLDER (newest first): N session logs, M subagent transcripts``; with a filter, how many
        files it keeps (``matches``) instead of the counts.  Logs, not sessions: two files can hold one session
        (a copy, an excerpt), which ``report --sessions`` counts once."""
        subagents = sum(1 for f in self.files if is_subagent_file(f))
        count = ""
        if matches is not None:
            count = f": {matches:,} of {len(self.files):,} match"
        elif subagents:
            n = len(self.files) - subagents
            count = (f": {n:,} session log{'s' if n != 1 else ''}, {subagents:,} subagent transcript"
                     f"{'s' if subagents != 1 else ''}")
        return Text(f"Sessions in {os.path.basename(self.folder.rstrip(os.sep)) or self.folder} "
                    f"(newest first){count}", style="bold")

    def _lay_out(self) -> tuple[int, Text]:
        """Lay the rows out (:attr:`_prompts`) for the screen's width now; return the dialog's width and the
        column heads.

        One line per file at any width: the dialog is as wide as its rows, up to the screen's width less
        :data:`PICKER_MARGIN` columns on each side, :data:`PICKER_CHROME` of them its frame's; the names get what
        the time, size and tag leave (the time, then the size, are left out first on a narrow screen, unless
        the names fit, shortened, only without them), in two columns so that the dates line up.
        """
        screen_w = self.app.size.width or 100
        self._laid_out_for = screen_w
        width = max(20, screen_w - 2 * PICKER_MARGIN) - PICKER_CHROME - 2  # (the marker: "● ")
        # (the tags after the session's name, in its column: a subagent's transcript, a time no call's; in a column
        # of their own, or by the dates, one row's tag took its cells from every row's name)
        tags = [(("subagent",) if sub else ()) + ((note,) if note else ()) for _f, _s, sub, _w, _z, note in self._rows]
        columns = NameColumns([(f, s) for f, s, *_x in self._rows], [cells(" ".join(t)) + 1 if t else 0 for t in tags])
        # The time and size in three forms, widest first: date and time, date, date without the size.
        forms = [[(when, size) for *_x, when, size, _n in self._rows],
                 [(when[:10], size) for *_x, when, size, _n in self._rows],
                 [(when[:10], "") for *_x, when, _size, _n in self._rows]]
        for infos in forms:
            when_w = max((cells(w) for w, _z in infos), default=0)
            size_w = max((len(z) for _w, z in infos), default=0)
            infos_w = when_w + (GAP + size_w if size_w else 0)
            fitted = columns.fit(width - GAP - infos_w, strict=infos is not forms[-1])
            if fitted is not None:
                break
        assert fitted is not None
        fw, sw, names = fitted
        self._file_options = []
        for i, ((folder, session), row_tags, (when, size)) in enumerate(zip(names, tags, infos, strict=True)):
            line = Text("● " if (self.files[i] == self.current and not self.auto) else "  ")
            if fw:
                line.append(folder + " " * (fw - cells(folder) + GAP), "bold")
            line.append(session)
            for t in row_tags:  # (a subagent's: a session's own transcript, not a session: see the count)
                line.append(" ")
                line.append(t, "cyan" if t == "subagent" else "dim")
            line.append(" " * (sw - cells(session) - (cells(" ".join(row_tags)) + 1 if row_tags else 0) + GAP))
            line.append(when + " " * (when_w - cells(when)) + (f"{' ' * GAP}{size:>{size_w}}" if size_w else ""),
                        "dim")
            self._file_options.append(Option(line, id=f"f{i}"))
        head = Text("  ")
        if fw:
            # (a column narrower than its name is headed by a shorter word, never a cut one: "f…" said nothing)
            head.append(next((w for w in ("folder", "dir") if len(w) <= fw), "").ljust(fw + GAP))
        head.append(next((w for w in ("session", "file") if len(w) <= sw), "").ljust(sw + GAP))
        head.append(f"{'last call':<{when_w}}" + (f"{' ' * GAP}{'size':>{size_w}}" if size_w else ""))
        rows_w = 2 + fw + (GAP if fw else 0) + sw + GAP + infos_w
        title_w = self._title().cell_len
        # (a long title wraps rather than widen the box past the screen's margins)
        box_w = min(max(20, screen_w - 2 * PICKER_MARGIN), max(rows_w, title_w) + PICKER_CHROME)
        self._box_w = box_w
        return box_w, head

    def _options(self) -> list[Option]:
        """The list's options: "follow the newest" and every file, or with a filter the files it keeps (a
        disabled line saying so when none does)."""
        if not self.filter_text:
            auto = Text(("● " if self.auto else "  ") + "follow the newest session automatically")
            return [Option(auto, id="auto"), *self._file_options]
        q = self.filter_text.casefold()
        kept = [o for o, key in zip(self._file_options, self._keys, strict=True) if q in key]
        if not kept:
            none = Text("  no session's path holds ")
            none.append_text(tx.literal(self.filter_text, limit=60))
            none.append(" (Esc clears the filter)")
            return [Option(none, id="none", disabled=True)]
        return kept

    def _chosen_row(self) -> int:
        """The row of the current choice (marked ●) in the unfiltered list: "follow the newest" in automatic
        mode, else the session shown (the first row when it is no longer listed); ``cursor``'s row when given."""
        if self.cursor is not None and self.cursor in self.files:
            return 1 + self.files.index(self.cursor)
        if self.auto or self.current not in self.files:
            return 0
        return 1 + self.files.index(self.current)

    def _fill(self) -> None:
        """Show the options for the filter now: the first one kept is highlighted (Enter picks it); without a
        filter, the current choice."""
        ol = self.query_one(OptionList)
        ol.clear_options()
        options = self._options()
        ol.add_options(options)
        if not self.filter_text:
            self._highlight(self._chosen_row())
        else:
            ol.highlighted = 0 if ol.option_count and not ol.get_option_at_index(0).disabled else None
        kept = sum(1 for o in options if (o.id or "").startswith("f"))
        self.query_one("#picker-title", Static).update(self._title(kept if self.filter_text else None))

    def compose(self) -> ComposeResult:
        """Title, filter box, column heads and the list."""
        self._read_rows()
        box_w, head = self._lay_out()
        box = Vertical()
        box.styles.width = box_w
        with box:
            yield Static(self._title(), id="picker-title")
            # (select_on_focus off: the key that opened the box is in it, and the next one must not replace it)
            yield Input(placeholder=filter_hint(box_w), id="picker-filter", select_on_focus=False)
            yield Static(head, id="picker-head")
            yield OneLineOptions(*self._options())
            yield Static(Text(""), id="picker-info")

    def on_mount(self) -> None:
        """The list has the focus (↑ ↓ j k Enter), its cursor on the current choice (the session shown when one
        was picked, page 40 of a big folder as well), or on ``cursor`` when given; typing goes to the filter
        (:meth:`on_key`)."""
        self.query_one(OptionList).focus()
        self._highlight(self._chosen_row())
        if self.read is not None:
            self._read_infos()

    def _fresh(self, path: str) -> bool:
        info = self.infos.get(path)
        return path in self.infos and (info is None or info.stamp == file_stamp(path))

    @work(thread=True, exclusive=True, group="picker-infos")
    def _read_infos(self) -> None:
        """Read the sessions not known yet, newest first, posting each (:class:`InfoRead`); stops when the
        picker closes."""
        from textual.worker import get_current_worker

        worker = get_current_worker()
        assert self.read is not None
        for f in self.files:
            if worker.is_cancelled:
                return
            if not self._fresh(f):
                self.post_message(self.InfoRead(f, self.read(f)))

    def on_session_picker_info_read(self, message: InfoRead) -> None:
        """Keep what the worker read: the line under the list shows it when its row is highlighted, the row its
        latest call time (:func:`~ctxwatch.ui.summaries.row_time`)."""
        self.infos[message.path] = message.info
        i = self._row_of.get(message.path)
        if i is not None and message.info is not None and message.info.last is not None \
                and (row := self._rows[i])[3::2] != (when := tx.stamp(message.info.last), ""):
            self._rows[i] = (*row[:3], when, row[4], "")
            self._relayout()
        self._show_info()

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        """The line under the list describes the highlighted session."""
        self._show_info()

    def _show_info(self) -> None:
        ol = self.query_one(OptionList)
        option = ol.get_option_at_index(ol.highlighted) if ol.highlighted is not None else None
        oid = (option.id or "") if option is not None else ""
        path = self.files[int(oid[1:])] if oid.startswith("f") else None
        # (the box's width less its border and the line's padding)
        self.query_one("#picker-info", Static).update(info_line(path, self.infos, max(10, self._box_w - 6)))

    def _highlight(self, row: int) -> None:
        """Put the list's cursor on ``row`` and, once the list is laid out, in its middle."""
        ol = self.query_one(OptionList)
        ol.highlighted = row

        def centre() -> None:
            if ol.highlighted == row:
                ol.scroll_to(y=max(0, row - ol.scrollable_content_region.height // 2), animate=False)

        self.call_after_refresh(centre)

    def on_key(self, event: events.Key) -> None:
        """A printable key pressed in the list starts the filter with it, or goes on with it (``/`` only opens the
        box): keys typed in a burst after the first still reach the list, the box having taken the focus in the
        meantime.  j and k move, as in the calls table, unless a filter is being typed."""
        box = self.query_one(Input)
        if box.has_focus or not event.is_printable or event.character is None \
                or (event.key in ("j", "k") and not box.value):
            return
        event.stop()
        event.prevent_default()
        box.focus()
        if event.character != "/":
            box.insert_text_at_cursor(event.character)

    def on_paste(self, event: events.Paste) -> None:
        """Text pasted while the list has the focus (a copied session id) goes to the filter, as typing does."""
        box = self.query_one(Input)
        if box.has_focus or not event.text:
            return
        event.stop()
        box.focus()
        box.insert_text_at_cursor(clean(event.text))

    def on_input_changed(self, event: Input.Changed) -> None:
        """Keep the rows the filter's text holds."""
        event.stop()
        if event.value != self.filter_text:
            self.filter_text = event.value
            self._fill()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter in the filter box picks the highlighted row."""
        event.stop()
        ol = self.query_one(OptionList)
        if ol.highlighted is not None:
            ol.action_select()

    def on_resize(self, event: events.Resize) -> None:
        """Lay the rows out again for the new width (the highlighted row stays)."""
        if self.app.size.width != self._laid_out_for and self.is_mounted:
            self._relayout()

    def _relayout(self) -> None:
        box_w, head = self._lay_out()
        self.query_one(Vertical).styles.width = box_w
        self.query_one("#picker-filter", Input).placeholder = filter_hint(box_w)
        self.query_one("#picker-head", Static).update(head)
        ol = self.query_one(OptionList)
        kept = ol.highlighted
        ol.clear_options()
        ol.add_options(self._options())
        ol.highlighted = kept

    def action_down(self) -> None:
        """Next session (j, as in the calls table; ↓ in the filter box)."""
        self.query_one(OptionList).action_cursor_down()

    def action_up(self) -> None:
        """Previous session (k; ↑ in the filter box)."""
        self.query_one(OptionList).action_cursor_up()

    def action_page_down(self) -> None:
        """A page of sessions down (in the filter box)."""
        self.query_one(OptionList).action_page_down()

    def action_page_up(self) -> None:
        """A page of sessions up (in the filter box)."""
        self.query_one(OptionList).action_page_up()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """Dismiss with the chosen session."""
        oid = event.option.id or ""
        if oid == "auto":
            self.dismiss(AUTO)
        elif oid.startswith("f"):
            self.dismiss(self.files[int(oid[1:])])

    def action_cancel(self) -> None:
        """Escape: clear the filter (back to the list, every row shown), else close without switching."""
        box = self.query_one(Input)
        if box.value:
            box.value = ""  # (Changed shows every row again)
            self.query_one(OptionList).focus()
            return
        self.dismiss(None)

