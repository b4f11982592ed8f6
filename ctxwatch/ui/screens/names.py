"""Fitting session names into the session picker's columns: a folder name and a session name per row,
shortened where they tell sessions apart least (a prefix every folder shares, the middle of a session id)
so that every row keeps one line at any width; and the order of its rows (:func:`grouped`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence

from rich.cells import cell_len

from ctxwatch.formats.claude_code import is_subagent_file
from ctxwatch.formats.claude_code.files import named_session_of

#: Columns left free on each side of the session picker (it is as wide as its rows, up to the screen's width
#: less these), and the columns its frame takes from the rows: the dialog's border (2), the list's border
#: (2) and padding (2), the scrollbar (2).
PICKER_MARGIN = 2
PICKER_CHROME = 8
#: The filter box's hint, longest first: the longest that fits the box is shown (a hint cut by the box's edge
#: read "(Esc" and lost the way out).
FILTER_HINTS = ("type or / to filter by folder or file name (Esc clears)", "type to filter by name (Esc clears)",
                "type to filter (Esc clears)", "filter")


def filter_hint(box_w: int) -> str:
    """The :data:`FILTER_HINTS` entry for a dialog ``box_w`` columns wide: the longest that fits inside its
    border (2) and the box's padding (4) with a cell for the cursor."""
    room = box_w - 6
    return next((h for h in FILTER_HINTS if len(h) < room), FILTER_HINTS[-1])


#: The least columns a cut folder name keeps (``…ling-service``), and the columns a session name keeps before
#: folder names are cut further than their shared prefix.
FOLDER_MIN = 12
SESSION_MIN = 20
#: Columns a session name may be cut to before the time of day, then the size, give way: its first 20 and
#: last 19 characters still tell it apart (a name that cannot be shortened, such as a subagent transcript's
#: long name, is cut rather than every row losing its time).
SESSION_ROOM = 40
#: Columns between two columns of a row.
GAP = 2

#: A UUID (a Claude Code or Codex session id) in a file name; its first 8 characters tell sessions apart.
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
#: Where a UUID whose middle is left out may end, longest first: after its 4th, 3rd or 2nd group (its 1st group
#: alone is :func:`session_forms`' shortest form but one).
_ID_KEEPS = (23, 18, 13)
#: Which of :func:`session_forms`' forms is the name without its extension and ``subagents`` folder, and which
#: that one with its session id's middle left out.
_FLAT, _ID_MIDDLE = 2, 3
#: Where a prefix shared by every folder name may be cut: after one of these (Claude Code names a project's
#: folder after its path, each ``/`` and ``.`` written as ``-``: ``-home-alice-src-github-acme-billing``).
_NAME_SEPARATORS = "-_./ "


def file_size(n: int) -> str:
    """A file's size of ``n`` bytes as the session picker shows it: ``400 B`` under 1 KiB (rounded to KiB it
    read ``0 KiB``, as if the file were empty), else KiB with no decimals (``705 KiB``, ``12,345 KiB``)."""
    return f"{n:,} B" if n < 1024 else f"{n / 1024:,.0f} KiB"


def split_session_path(rel: str) -> tuple[str, str]:
    """``(folder, session)`` of a log's path relative to the opened folder: the folder holding the session
    (a Claude Code project folder, a Codex day folder; ``""`` at the top) and the session's own name.  A
    subagent transcript under ``<session>/subagents/`` stays with its session's folder: its name is
    ``<session>/subagents/agent-….jsonl``."""
    parts = rel.split(os.sep)
    k = len(parts) - 3 if len(parts) >= 3 and parts[-2] == "subagents" else len(parts) - 1
    return os.sep.join(parts[:k]), os.sep.join(parts[k:])


def common_cut(names: Sequence[str]) -> int:
    """How many leading characters every non-empty name of ``names`` shares up to a separator
    (:data:`_NAME_SEPARATORS`), that is what can be left out of each without losing what tells them apart;
    0 with fewer than two distinct names (one name is told apart by nothing), and 0 when the cut would leave
    nothing of a name or save no cell (the ``…`` put in its place takes one: cutting the ``-`` every Claude
    Code project folder starts with saves nothing, and would leave nothing of the folder of ``/``, named ``-``)."""
    distinct = sorted({n for n in names if n})
    if len(distinct) < 2:
        return 0
    first, last = distinct[0], distinct[-1]  # (sorted: what these two share, all share)
    shortest = min(len(n) for n in distinct)
    n = 0
    while n < min(len(first), len(last), shortest - 1) and first[n] == last[n]:
        n += 1
    cut = max(first[:n].rfind(c) for c in _NAME_SEPARATORS) + 1
    return cut if cut >= 2 else 0


def cells(s: str) -> int:
    """Terminal cells of ``s`` (:func:`rich.cells.cell_len`, at once for plain ASCII: 2,443 names a layout)."""
    return len(s) if s.isascii() else cell_len(s)


def _fitting(chars: Iterable[str], width: int) -> str:
    """The leading ``chars`` that fit in ``width`` cells beside a one-cell ``…``, in their order."""
    keep, used = [], 1
    for ch in chars:
        used += cell_len(ch)
        if used > width:
            break
        keep.append(ch)
    return "".join(keep)


def cut_left(s: str, width: int) -> str:
    """``s`` in at most ``width`` cells, keeping its end: ``…ling-service``."""
    if cells(s) <= width:
        return s
    if width < 2:
        return "…"[:width]
    return "…" + _fitting(reversed(s), width)[::-1]


def cut_right(s: str, width: int) -> str:
    """``s`` in at most ``width`` cells, keeping its start: ``3f2a9c1e-8b7d…``."""
    if cells(s) <= width:
        return s
    if width < 2:
        return "…"[:width]
    return _fitting(s, width) + "…"


def cut_middle(s: str, width: int) -> str:
    """``s`` in at most ``width`` cells, keeping both ends, the start the longer: ``3f2a9c1e…/agent-e1f845``."""
    if cells(s) <= width:
        return s
    if width < 5:
        return cut_right(s, width)
    head = cut_right(s, (width + 1) // 2 + 1)[:-1]
    return head + cut_left(s, width - cells(head))


def session_forms(sessions: Sequence[str]) -> list[list[str]]:
    """Each session name of ``sessions``, then ever shorter forms of it (5 in all, some maybe equal), each
    leaving out what tells sessions apart least: the extension every name shares (``.jsonl``), the
    ``subagents`` folder of a subagent transcript (every transcript's path has it, and its row is tagged
    ``subagent``: ``3f2a9c1e-8b7d-4414-9ccd-011d40f70b2a/agent-a2898e3``), a session id's middle
    (``3f2a9c1e…0b2a``), then all of the id but its first 8 characters (``3f2a9c1e…/agent-a2898e3``).  The start
    of the name is always kept."""
    exts = {os.path.splitext(s)[1] for s in sessions}
    ext = next(iter(exts)) if len(exts) == 1 else ""
    sub = f"{os.sep}subagents{os.sep}"
    out = []
    for s in sessions:
        plain = s[:len(s) - len(ext)] if ext else s
        # (the subagents folder goes before any of the id, so that the whole id is shown where it has room)
        flat = plain.replace(sub, os.sep)
        forms = [s, plain, flat, _UUID.sub(lambda m: m[0][:8] + "…" + m[0][-4:], flat),
                 _UUID.sub(lambda m: m[0][:8] + "…", flat)]
        out.append(forms)
    return out


def cut_id(name: str, room: int) -> str | None:
    """``name`` with the middle of the session id (a UUID) it holds left out, keeping as much of the id's start
    as fits in ``room`` cells with its last 4 characters, cut where a group of the id ends
    (``3f2a9c1e-8b7d-4414…0b2a``); ``None`` when no more than the id's first group fits, or ``name`` holds no
    id or more than one."""
    ids = list(_UUID.finditer(name))
    if len(ids) != 1:
        return None
    m = ids[0]
    rest = cells(name) - len(m[0])
    for keep in _ID_KEEPS:
        if rest + keep + 1 + 4 <= room:
            return name[:m.start()] + m[0][:keep] + "…" + m[0][-4:] + name[m.end():]
    return None


class NameColumns:
    """``(folder, session)`` names to lay out in two columns (:meth:`fit`), their shorter forms worked out once
    for every width tried.  ``tags``: per row, the cells a tag written after its session name takes in the
    session column (``  subagent``; none when not given): a short name's row holds its tag in room the
    column has anyway."""

    def __init__(self, pairs: Sequence[tuple[str, str]], tags: Sequence[int] | None = None) -> None:
        self.folders = [f for f, _s in pairs]
        cut = common_cut(self.folders)
        self.short_folders = [("…" + f[cut:]) if cut and f else f for f in self.folders]
        self.forms = session_forms([s for _f, s in pairs])
        self.tags = list(tags) if tags is not None else [0] * len(pairs)
        self.lens = [[cells(f) + t for f in fs] for fs, t in zip(self.forms, self.tags, strict=True)]
        self.full = max((n[0] for n in self.lens), default=0)
        self.least = max((n[-1] for n in self.lens), default=0)
        self.folder_w = max((cells(f) for f in self.folders), default=0)
        self.short_folder_w = max((cells(f) for f in self.short_folders), default=0)

    def fit(self, width: int, strict: bool = False) -> tuple[int, int, list[tuple[str, str]]] | None:
        """Lay the names out in two columns of at most ``width`` cells in all (:data:`GAP` between them; no
        folder column when every folder is ``""``), keeping what tells sessions apart.

        Folder names are whole when every name fits whole; else the prefix they all share is left out
        (:func:`common_cut`: ``…billing-service``), and when even that leaves too little room they are cut from
        the left (keeping the project's own name) when the session column would get fewer than
        :data:`SESSION_MIN` cells, to no less than :data:`FOLDER_MIN` cells.  Each session name then takes the
        longest of its :func:`session_forms` that fits the column (without the shared extension as soon as one
        name does not fit whole), the shortest one cut in the middle when none does; a session id's middle is
        left out only as far as the column needs (:func:`cut_id`).

        ``strict``: return ``None`` rather than cut a folder name, or cut a session name's shortest form to
        fewer than :data:`SESSION_ROOM` cells (the caller may rather give up dates and sizes).

        Returns ``(folder_width, session_width, names)``: the columns' widths (the session column's with the
        rows' tags) and the names, each in its column (without its tag).
        """
        folders, fw = self.folders, self.folder_w
        gap = GAP if fw else 0
        if fw + gap + self.full > width:
            folders, fw = self.short_folders, self.short_folder_w
        if fw + gap + self.least > width:
            if strict and fw + gap + min(self.least, SESSION_ROOM) > width:
                return None
            # (a row's tag does not count in the least a name keeps)
            least = min(self.least, SESSION_MIN + max(self.tags, default=0))
            fw = max(min(fw, FOLDER_MIN), min(fw, width - gap - least)) if fw else 0
        room = max(1, width - gap - fw)
        # (once one name is shortened, none keeps the extension they all share: the column reads the same way)
        first = 0 if self.full <= room else 1
        sessions = []
        for fs, lens, tag in zip(self.forms, self.lens, self.tags, strict=True):
            k = next((k for k in range(first, len(fs)) if lens[k] <= room), None)
            if k == _ID_MIDDLE:  # (its fixed 8 + 4 characters of the id left room unused beside it)
                sessions.append(cut_id(fs[_FLAT], room - tag) or fs[k])
            else:
                sessions.append(fs[k] if k is not None else cut_middle(fs[-1], max(1, room - tag)))
        names = [(cut_left(f, fw), s) for f, s in zip(folders, sessions, strict=True)]
        return fw, max((cells(s) + t for s, t in zip(sessions, self.tags, strict=True)), default=0), names


def fit_names(pairs: Sequence[tuple[str, str]], width: int, strict: bool = False
              ) -> tuple[int, int, list[tuple[str, str]]] | None:
    """:meth:`NameColumns.fit` of ``pairs``."""
    return NameColumns(pairs).fit(width, strict)


def grouped(files: Sequence[str]) -> list[str]:
    """``files`` (newest first) with each Claude Code subagent transcript moved right after its session, when
    its session is listed (the others stay where they are): a transcript under ``<session>/subagents/``, or one
    beside its session, whose ``sessionId`` names the session's file (Claude Code names it ``<sessionId>.jsonl``)."""
    parent = {f: named_session_of(f) for f in files if is_subagent_file(f)}
    listed = set(files)
    out: list[str] = []
    for f in files:
        if parent.get(f) in listed:
            continue
        out.append(f)
        out.extend(g for g in files if parent.get(g) == f)
    return out
