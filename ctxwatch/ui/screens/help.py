"""The help (``?``): the keys (the eviction preview's too), where exports go, the bar's glyphs and marks and what
the number marks mean; and the entries the dashboard adds to Textual's command palette.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ctxwatch.config import Settings

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


def help_text(settings: Settings | None = None) -> Text:
    """The help screen's text: keys, the preview's keys, where exports go, the bar's glyphs, the marks (with
    ``settings``' fractions), number marks."""
    st = settings or Settings()
    out = Text()
    out.append("Keys\n", "bold")
    for key, what in HELP_KEYS:
        out.append(f"  {key:<10}", "bold cyan")
        out.append(f" {what}\n")
    out.append("\nIn the eviction preview (e)\n", "bold")
    for key, what in PLAN_KEYS:
        out.append(f"  {key:<10}", "bold cyan")
        out.append(f" {what}\n")
    out.append("\nExports (s, x, and w in the eviction preview)\n", "bold")
    for line in EXPORTS:
        out.append(f"  {line}\n")
    out.append("\nThe bar (parts differ by glyph, not only colour)\n", "bold")
    for glyph, name, colour, what in (
            ("█", "floor", "magenta", "system prompt + tool schemas, paid on every call"),
            ("▓", "history", "cyan", "every other message"),
            ("░", "reserve", "yellow", f"room for the completion (max_tokens, else {st.reserve:.0%} of the window)"),
            ("·", "free", "bright_black", "what is left of the window")):
        out.append(f"  {glyph} {name:<8}", colour)
        out.append(f" {what}\n")
    out.append("  T┃ B┃     ", "bold red")
    out.append("the compaction trigger and the budget: by default, the trigger\n")
    out.append(f"            at {st.trigger:g} of the budget, the budget {st.budget_fraction:g} of the window "
               "(never past\n")
    out.append("            the window minus the reserve); a Claude Code or Codex log has\n")
    out.append("            its own, which the line under the bar names\n")
    out.append("  W┃        ", "bold red")
    out.append("the window, drawn when prompt + reserve run past it\n")
    out.append("\nThe chart\n", "bold")
    out.append("  T B W-R   ", "bold red")
    out.append("lines at the trigger, the budget, the window minus the reserve\n")
    out.append("            (W-R: past it the completion has no room); T/B/W-R 167k: one\n")
    out.append("            row holds several, at its lowest value\n")
    out.append("\nNumbers\n", "bold")
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
        out.append(f"  {mark:<10}")
        out.append(lines[0] + "\n")
        for more in lines[1:]:
            out.append(" " * 12 + more + "\n")
    out.append("\nesc or ? closes this help", "dim")
    return out


class HelpScreen(ModalScreen[None]):
    """Keys, where exports go, the bar's glyphs and marks, and what the number marks mean."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark", "app.pop_screen", "Close"),
        Binding("q", "app.quit", "Quit"),  # q quits everywhere else; a help screen must not trap it
    ]


    def __init__(self, settings: Settings | None = None) -> None:
        super().__init__()
        self.settings = settings

    def compose(self) -> ComposeResult:
        """The help text in a scrollable box."""
        with VerticalScroll():
            yield Static(help_text(self.settings), id="help-text")
