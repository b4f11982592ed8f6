"""The help (``?``): the keys (the eviction preview's too), where exports go, the bar's glyphs and marks and what
the number marks mean; and the entries the dashboard adds to Textual's command palette.
"""

from __future__ import annotations

from typing import ClassVar, NamedTuple

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Container, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ctxwatch.accounting.harness import CLAUDE_CODE_SUMMARY_OUTPUT
from ctxwatch.config import Settings

#: From this terminal width the help is two columns (two 76-cell columns, the box's padding, border and
#: scrollbar), which at 50 rows fit without scrolling.
WIDE_WIDTH = 158

HELP_KEYS: tuple[tuple[str, str], ...] = (
    ("↑ ↓  j k", "select a call (leaving the newest call stops following)"),
    ("home end", "first / newest call"),
    ("pgup pgdn", "a page of calls up / down"),
    ("enter", "call detail: messages, tool schemas, system prompt, tokens"),
    ("f", "follow the newest call on/off"),
    ("p", "pause/resume the display (the log is still read)"),
    ("t", "chart x axis: call number / wall time"),
    ("e", "eviction preview of the selected call (its keys: below)"),
    ("/", "filter calls by text (model, context, time, numbers)"),
    ("c", "next context (main, subagents, sidechains, subagent files)"),
    ("o", "sessions of a folder, newest first (type to filter them)"),
    ("d", "what changed since the call before: messages, floor, prompt"),
    ("F", "every flag of the context, whole (enter selects its call)"),
    ("W", "conversations, most at risk first (enter shows one, a all)"),
    ("i", "every input problem: bad lines and notes, with their messages"),
    ("s", "save an SVG screenshot (where: Exports, below)"),
    ("x", "export the calls table as CSV (where: Exports, below)"),
    ("esc", "skip to the backfill's last 8 MiB; clear the filter"),
    ("ctrl+p", "command palette (every action)"),
    ("?", "this help"),
    ("ctrl+c", "copy: the selected text, else the call, flag or message"),
    ("q  ctrl+q", "quit"),
)


#: The eviction preview's keys (its footer shows one key per knob, the one that turns it up).
PLAN_KEYS: tuple[tuple[str, str], ...] = (
    ("+ -  B b", "keep_recent ±1, budget fraction ±0.05"),
    ("R r  U u", "reserve ±1% of the window, summary tokens ±500"),
    ("m  o", "summarise or drop; prompt order / biggest savings first"),
    ("y", "the whole header (the plan's reason whole), or a line each"),
    ("w", "write the plan as JSON (where: Exports, below)"),
    ("esc", "back to the calls"),
)

#: Where ``s``, ``x`` and the preview's ``w`` write (:func:`ctxwatch.ui.export.export_folder`), in lines.
EXPORTS = (
    "a new file each, in the current folder; or, when the current folder is",
    "(inside) a folder the dashboard follows, in the exports folder:",
    "$XDG_DATA_HOME/ctxwatch/exports (~/.local/share/ctxwatch/exports),",
    "where it is not listed among the logs. The message after each names",
    "the file and its folder, whole.",
)


#: The command palette's entries: title, help, action (the keys' own, with the key named in the help).
COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("Call detail", "Every message of the selected call with tokens", "detail"),
    ("Follow newest call", "Toggle following the newest call (f)", "toggle_follow"),
    ("Pause display", "Pause/resume live updates (p)", "toggle_pause"),
    ("Chart x axis", "Call number / wall time (t)", "toggle_xaxis"),
    ("Eviction preview", "Plan the eviction of the selected call (e)", "evict"),
    ("Filter calls", "Filter the calls table (/)", "filter"),
    ("Next context", "Main / subagents / sidechains (c)", "cycle_context"),
    ("Sessions", "Switch session in a folder (o)", "sessions"),
    ("Turn diff", "What changed from the call before to the selected one (d)", "diff"),
    ("Flags", "Every flag of the context shown, whole; enter selects its call (F)", "flags"),
    ("Fleet", "One row per conversation, most at risk first; enter shows one (W)", "fleet"),
    ("Input problems", "Every bad line and note of the run, with its line (i)", "issues"),
    ("Save SVG screenshot", "To the current folder, or the exports folder when the current one is followed (s)",
     "save_svg"),
    ("Export CSV", "The calls table, to the current folder, or the exports folder when the current one is "
     "followed (x)", "export_csv"),
    ("Copy", "The selected text, else the highlighted call, flag or message (ctrl+c)", "copy"),
    ("Help", "Keys and legend (?)", "help"),
)


class HelpSection(NamedTuple):
    """One section of the help: its widget id, the short name the "more below" hint gives it, its text (the
    heading its first line)."""

    id: str
    name: str
    text: Text


def _keys(heading: str, keys: tuple[tuple[str, str], ...]) -> Text:
    out = Text()
    out.append(heading + "\n", "bold")
    for key, what in keys:
        out.append(f"  {key:<10}", "bold cyan")
        out.append(f" {what}\n")
    return out


def help_sections(settings: Settings | None = None) -> tuple[HelpSection, ...]:
    """The help's sections, in reading order: keys, the preview's keys, where exports go, the bar's glyphs and
    marks (with ``settings``' fractions), the chart's lines, number marks.  Each text ends without a newline;
    the lines are at most 74 cells wide (whole in the box at 80 columns)."""
    st = settings or Settings()
    exports = Text()
    exports.append("Exports (s, x, and w in the eviction preview)\n", "bold")
    for line in EXPORTS:
        exports.append(f"  {line}\n")
    bar = Text()
    bar.append("The bar (parts differ by glyph, not only colour)\n", "bold")
    for glyph, name, colour, what in (
            ("█", "floor", "magenta", "system prompt + tool schemas, paid on every call"),
            ("▓", "history", "cyan", "every other message"),
            ("░", "reserve", "yellow", f"room for the completion (max_tokens, else {st.reserve_text()})"),
            ("·", "free", "bright_black", "what is left of the window")):
        bar.append(f"  {glyph} {name:<8}", colour)
        bar.append(f" {what}\n")
        if name == "reserve":
            bar.append(f"             (a Claude Code log: {CLAUDE_CODE_SUMMARY_OUTPUT:,}, its compaction summary's)\n")
    bar.append("  T┃ B┃     ", "bold red")
    bar.append("the compaction trigger and the budget: by default, the trigger\n")
    bar.append(f"            at {st.trigger:g} of the budget, the budget {st.budget_fraction:g} of the window "
               "(never past\n")
    bar.append("            the window minus the reserve); a Claude Code or Codex log has\n")
    bar.append("            its own, which the line under the bar names\n")
    bar.append("  W┃        ", "bold red")
    bar.append("the window, drawn when prompt + reserve run past it\n")
    chart = Text()
    chart.append("The chart\n", "bold")
    chart.append("  ─ lines   ", "bold red")
    chart.append("trigger, budget, window-reserve (the window minus the reserve:\n")
    chart.append("            past it the completion has no room), named beside the axis\n")
    chart.append("            where they fit, else by the row's value: the legend under the\n")
    chart.append("            chart names each line in its colour\n")
    numbers = Text()
    numbers.append("Numbers\n", "bold")
    # (the same two rules as report's footnote: which one applies depends on the column)
    for mark, *lines in (
            ("12,036~", "inferred floor: reported prompt minus estimated history"),
            ("12,036~", "inferred history: reported prompt minus the context's floor"),
            ("13,681≈", "calibrated floor: o200k count x the model's median", "reported/estimated ratio; "
             "calibrated history: the rest of the", "reported prompt (Enter shows the raw counts)"),
            ("?", "unknown, never guessed"),
            ("48.2%!", "at or above the trigger;  !!  at or above the budget"),
            ("640,000!", "reported, implausible (over the window): no occupancy"),
            ("0!", "reported 0, implausible: the estimate stands in"),
            ("#12", "call number, from 1 (report --json's 0-based index is 11)"),
            ("12 C", "a compaction happened just before call #12")):
        numbers.append(f"  {mark:<10}")
        numbers.append(lines[0] + "\n")
        for more in lines[1:]:
            numbers.append(" " * 12 + more + "\n")
    sections = (
        HelpSection("help-keys", "keys", _keys("Keys", HELP_KEYS)),
        HelpSection("help-plan", "preview keys", _keys("In the eviction preview (e)", PLAN_KEYS)),
        HelpSection("help-exports", "exports", exports),
        HelpSection("help-bar", "bar", bar),
        HelpSection("help-chart", "chart", chart),
        HelpSection("help-numbers", "numbers", numbers),
    )
    for section in sections:
        section.text.rstrip()
    return sections


#: The help's last line, and the box's subtitle once nothing is below.
CLOSE = "esc or ? closes this help"


def more_below(names: list[str]) -> str:
    """The box's subtitle: the sections not yet read to their end (``names``), or how to close when none is."""
    return f"↓ more below: {', '.join(names)} · pgdn end" if names else CLOSE


class HelpBox(VerticalScroll):
    """The scrolling box of the help.  Its subtitle names the sections below the fold (so a small terminal
    says there is more, and what), else how to close."""

    def on_mount(self) -> None:
        """Update the subtitle as the box scrolls, once the scrolled layout is placed (the sections' regions
        are those of the last frame while ``scroll_y`` changes)."""
        self.watch(self, "scroll_y", self._scrolled, init=False)

    def _scrolled(self) -> None:
        self.call_after_refresh(self.refresh_hint)

    def on_resize(self, event: events.Resize) -> None:
        """The fold moved: name what is below it once the new layout is placed."""
        self.call_after_refresh(self.refresh_hint)

    def below(self) -> list[str]:
        """The names of the sections whose last line is below the visible part of the box."""
        bottom = self.content_region.bottom
        return [w.name or "" for w in self.query(".help-section") if w.region.bottom > bottom]

    def refresh_hint(self) -> None:
        """Set the subtitle for the sections below."""
        self.border_subtitle = more_below(self.below())


class HelpScreen(ModalScreen[None]):
    """Keys, where exports go, the bar's glyphs and marks, and what the number marks mean: one column that
    scrolls, two side by side on a terminal at least ``WIDE_WIDTH`` wide."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark", "app.pop_screen", "Close"),
        Binding("q", "app.quit", "Quit"),  # q quits everywhere else; a help screen must not trap it
    ]

    def __init__(self, settings: Settings | None = None) -> None:
        super().__init__()
        self.settings = settings

    def compose(self) -> ComposeResult:
        """The sections in a scrollable box: keys, preview keys and exports in the first column, the legend in
        the second (which a narrow terminal puts under the first)."""
        sections = help_sections(self.settings)
        with HelpBox(id="help-box") as box:
            box.border_title = "Help"
            with Container(id="help-columns"):
                with Vertical(classes="help-column"):
                    yield from (self._section(s) for s in sections[:3])
                with Vertical(classes="help-column"):
                    yield from (self._section(s) for s in sections[3:])
                    yield Static(Text(CLOSE, "dim"), id="help-close")

    @staticmethod
    def _section(section: HelpSection) -> Static:
        return Static(section.text, id=section.id, name=section.name, classes="help-section")

    def on_mount(self) -> None:
        """Lay out for the terminal's width."""
        self.set_class(self.app.size.width >= WIDE_WIDTH, "-wide")

    def on_resize(self, event: events.Resize) -> None:
        """One column or two, as the terminal is resized."""
        self.set_class(event.size.width >= WIDE_WIDTH, "-wide")
