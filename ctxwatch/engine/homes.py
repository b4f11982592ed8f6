"""Where the coding-agent harnesses installed on this machine keep their session logs, for the commands given no
path (``ctxwatch``, ``ctxwatch report``, ``ctxwatch check``).

The places, in the order they are looked at (each harness's own environment variable first, then its default):

* Claude Code: ``$CLAUDE_CONFIG_DIR/projects`` (several folders, comma-separated, as ccusage reads the
  variable), ``~/.config/claude/projects`` (its XDG location) and ``~/.claude/projects``;
* Codex CLI: ``$CODEX_HOME/sessions`` and ``~/.codex/sessions``;
* Gemini CLI: ``~/.gemini/tmp`` (``<project hash>/chats/session-*.json[l]`` inside).

A place counts when it is a folder holding at least one file with a log's name ending; the same folder reached
twice (a variable naming the default, a link) counts once.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from ctxwatch.engine.discovery import LOG_SUFFIXES


@dataclass(frozen=True, slots=True)
class Place:
    """A folder a harness keeps its session logs in: ``harness`` (``Claude Code``, ``Codex``, ``Gemini CLI``),
    ``path`` (absolute) and ``via`` (the environment variable that named it, or ``default``)."""

    harness: str
    path: str
    via: str


def harness_places(env: Mapping[str, str] | None = None) -> list[Place]:
    """Every place looked at, found or not, in order (see the module's docstring); ``env``: the environment
    (``os.environ`` when ``None``), whose ``HOME`` is the home folder (``~`` expanded otherwise)."""
    env = os.environ if env is None else env
    home = env.get("HOME") or os.path.expanduser("~")
    out: list[Place] = []
    for part in (env.get("CLAUDE_CONFIG_DIR") or "").split(","):
        if part.strip():
            out.append(Place("Claude Code", os.path.join(_expand(part.strip(), home), "projects"),
                             "CLAUDE_CONFIG_DIR"))
    xdg = env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    out.append(Place("Claude Code", os.path.join(xdg, "claude", "projects"), "default"))
    out.append(Place("Claude Code", os.path.join(home, ".claude", "projects"), "default"))
    if (codex := (env.get("CODEX_HOME") or "").strip()):
        out.append(Place("Codex", os.path.join(_expand(codex, home), "sessions"), "CODEX_HOME"))
    out.append(Place("Codex", os.path.join(home, ".codex", "sessions"), "default"))
    out.append(Place("Gemini CLI", os.path.join(home, ".gemini", "tmp"), "default"))
    return out


def _expand(path: str, home: str) -> str:
    """``path`` absolute, a leading ``~`` standing for ``home``."""
    if path == "~" or path.startswith("~/"):
        path = home + path[1:]
    return os.path.abspath(path)


def holds_logs(folder: str) -> bool:
    """True when ``folder`` (walked, links to folders not followed) holds a file whose name ends as a log's
    (:data:`~ctxwatch.engine.discovery.LOG_SUFFIXES`); stops at the first one."""
    return any(f.lower().endswith(LOG_SUFFIXES) for _root, _dirs, files in os.walk(folder) for f in files)


def found_places(env: Mapping[str, str] | None = None) -> tuple[list[Place], list[Place]]:
    """``(found, looked)``: the places of :func:`harness_places` that hold logs, each folder once (by its real
    path), and every place looked at."""
    looked = harness_places(env)
    found: list[Place] = []
    seen: set[str] = set()
    for p in looked:
        real = os.path.realpath(p.path)
        if real in seen or not os.path.isdir(p.path):
            continue
        seen.add(real)
        if holds_logs(p.path):
            found.append(p)
    return found, looked


def nothing_found(looked: list[Place]) -> str:
    """The sentence of a command given no path on a machine where no place holds a log: where it looked."""
    where = "; ".join(f"{p.path} ({p.harness}{'' if p.via == 'default' else ', $' + p.via})" for p in looked)
    return f"no path given and no harness logs found; looked in: {where}. Give a log file or folder: ctxwatch PATH"
