"""Thresholds and options shared by the dashboard, ``report``, ``check`` and ``plan``: :class:`Settings`, read from
the config file (:func:`load_settings`) and the command line, and the folders ctxwatch reads and keeps files in
(:func:`default_config_path`, :func:`cache_dir`, through platformdirs).
"""

from __future__ import annotations

import contextlib
import os
import tomllib
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from ctxwatch.model import MAX_COUNT

# The defaults are field practice for agent loops (each can be set by option or in the config file).
#: Spend at most 60 % of the context window on the prompt: long-context evaluations (Liu et al. 2023, "Lost in
#: the Middle"; Hsieh et al. 2024, "RULER") show retrieval and instruction-following degrade well before the
#: nominal window is full.
DEFAULT_BUDGET_FRACTION = 0.6
#: Fire compaction at 0.8 of the *budget* (not of the window), early enough that the summary call itself still
#: fits.  Claude Code and Codex auto-compact at a comparable fraction.
DEFAULT_TRIGGER = 0.8
#: Keep 0.15 of the window for the completion when the request states no ``max_tokens`` (field practice is
#: 15-20 %).
DEFAULT_RESERVE = 0.15
#: The eviction planner keeps the last six exchanges (an assistant message with its tool results) verbatim.
DEFAULT_KEEP_RECENT = 6
#: Tokens a compaction summary is assumed to take when planning (Claude Code's summaries in the samples
#: run 1.5k-4k tokens; 2,000 is a middle value).
DEFAULT_SUMMARY_TOKENS = 2000


class ConfigError(ValueError):
    """A config file or option value is invalid; the message names the file and the key."""


def share(tokens: int | float, fraction: float) -> int:
    """``fraction`` of ``tokens``, rounded down to a whole token as a person reckons it: 0.285 of 200,000 is 57,000,
    where the float product, 56,999.99999999999, truncates to 56,999 (the product is rounded to 6 decimals
    first, far below a token and far above a double's error on any window)."""
    return int(round(tokens * fraction, 6))


def prompt_budget(window: int, budget_fraction: float, reserve: int | None = None) -> int:
    """The prompt budget in tokens: ``share(window, budget_fraction)``, capped at ``window - reserve`` (the
    prompt must also leave the completion reserve free in the window), never below 0.  One rule for report,
    check, the dashboard, ``plan`` and :class:`ctxwatch.budget.ContextBudget`.

    Args:
        window: the context window in tokens.
        budget_fraction: the share of the window the prompt may use (:data:`DEFAULT_BUDGET_FRACTION`).
        reserve: the completion reserve in tokens (:func:`ctxwatch.accounting.reserve_for`), or ``None``.
    """
    budget = share(window, budget_fraction)
    if reserve is not None:
        budget = min(budget, window - reserve)
    return max(0, budget)


@dataclass(frozen=True, slots=True)
class Settings:
    """Thresholds and overrides.

    Attributes:
        window: context window override in tokens (``None`` = from the log or the model catalogue).
        budget_fraction: fraction of the window the prompt may use (0 < f <= 1).
        trigger: fraction of the *budget* at which compaction should fire (0 < f <= 1).
        reserve: the completion's room when the request gives no max tokens: below 1 a fraction of the window,
            else whole tokens (capped at the window).
        keep_recent: turns kept verbatim by the eviction planner (0 <= n < 2**53, :data:`MAX_COUNT`).
        summary_tokens: assumed size of a compaction summary, in tokens (0 <= n < 2**53).
        stated_window: the window the harness running the session says its main context works in, in tokens
            (Claude Code's statusLine hook JSON gives ``context_window.context_window_size``): taken for the
            calls of the main context whose log states none, labelled ``harness``, so the harness's own rules
            apply to it (a 1M-token session compacts near 967K, not by ctxwatch's defaults); the window a call
            has anyway keeps its own source.  Not a config key.

    Raises:
        ConfigError: a value is out of its range.
    """

    window: int | None = None
    budget_fraction: float = DEFAULT_BUDGET_FRACTION
    trigger: float = DEFAULT_TRIGGER
    reserve: float = DEFAULT_RESERVE
    keep_recent: int = DEFAULT_KEEP_RECENT
    summary_tokens: int = DEFAULT_SUMMARY_TOKENS
    stated_window: int | None = None

    def __post_init__(self) -> None:
        for name in ("budget_fraction", "trigger"):
            v = getattr(self, name)
            if not 0 < v <= 1:
                raise ConfigError(f"{name} must be in (0, 1], got {v}")
        if not 0 <= self.reserve < MAX_COUNT or (self.reserve >= 1 and self.reserve != int(self.reserve)):
            raise ConfigError("reserve must be a fraction of the window in [0, 1) or a whole number of tokens "
                              f"below 2**53, got {self.reserve}")
        for name in ("window", "stated_window"):
            v = getattr(self, name)
            if v is not None and not 0 < v < MAX_COUNT:
                # (a larger whole number, say 10**400 in a config file, overflows the float product 0.6 * window)
                raise ConfigError(f"{name} must be a positive number of tokens below 2**53, got {v}")
        for name in ("keep_recent", "summary_tokens"):
            v = getattr(self, name)
            # (below 2**53 as the window, :data:`MAX_COUNT`: report --json echoes the settings)
            if not 0 <= v < MAX_COUNT:
                raise ConfigError(f"{name} must be in [0, 2**53), got {v}")

    def budget_tokens(self, window: int, reserve: int | None = None) -> int:
        """The prompt budget in tokens for a window: :func:`prompt_budget` (``budget_fraction * window``, and
        no more than ``window - reserve`` when the completion reserve, in tokens, is given)."""
        return prompt_budget(window, self.budget_fraction, reserve)

    def trigger_tokens(self, window: int, reserve: int | None = None) -> int:
        """The compaction trigger in tokens: ``int(trigger * budget)`` (of the budget, not of the window)."""
        return share(self.budget_tokens(window, reserve), self.trigger)

    def reserve_tokens(self, window: int) -> int:
        """The default completion reserve in tokens: ``reserve * window`` for a fraction, else ``reserve``
        tokens, no more than the window."""
        return share(window, self.reserve) if self.reserve < 1 else min(int(self.reserve), window)

    def reserve_text(self) -> str:
        """The default reserve in words: ``15% of the window`` or ``20,000 tokens``."""
        return f"{self.reserve:.0%} of the window" if self.reserve < 1 else f"{int(self.reserve):,} tokens"

    def with_overrides(self, **kwargs: Any) -> Settings:
        """A copy with the given non-``None`` values replaced (validated)."""
        vals = {k: v for k, v in kwargs.items() if v is not None}
        return replace(self, **vals)


def _toml(v: Any) -> str:
    """A config value as TOML writes it, for an error (``true``, ``"lots"``, ``an array``), not as Python
    would (``True``, ``'lots'``)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        text = v if len(v) <= 40 else v[:40] + "…"
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, list):
        return "an array"
    if isinstance(v, dict):
        return "a table"
    return f"a {type(v).__name__}" if not isinstance(v, int | float) else str(v)


def config_keys() -> set[str]:
    """The keys a config file may set: every :class:`Settings` field but ``stated_window`` (the harness's word
    on its window, never the user's)."""
    return {f.name for f in fields(Settings)} - {"stated_window"}


#: The folder name under the user's config and cache folders (platformdirs' ``appname``).
APP_NAME = "ctxwatch"


def default_config_path() -> Path:
    """The default config file: ``config.toml`` in platformdirs' ``user_config_dir`` for ctxwatch (on Linux
    ``$XDG_CONFIG_HOME/ctxwatch`` when that variable is an absolute path, else ``~/.config/ctxwatch``; the
    platform's own folder on macOS and Windows).  Nothing is created.

    Raises:
        RuntimeError: no home directory can be found (no absolute ``HOME`` nor XDG variable: platformdirs' rule).
    """
    import platformdirs  # (imported here: most imports of this module need no folder)

    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False)) / "config.toml"


def caching_disabled() -> bool:
    """True when ``CTXWATCH_NO_CACHE`` is set to anything but empty or ``0``: no cache is read or written (the
    tokenizer's ranks, the catalogue memo, the cache of earlier reads)."""
    return os.environ.get("CTXWATCH_NO_CACHE", "") not in ("", "0")


def cache_folder_problem(folder: str) -> str | None:
    """Why ctxwatch must not write in the cache folder ``folder``, or ``None``: a symbolic link (files are never
    written through one, so a link planted there cannot aim a write elsewhere) or a path that is not a folder."""
    if os.path.islink(folder):
        return f"{folder} is a symbolic link, not written through"
    if os.path.lexists(folder) and not os.path.isdir(folder):
        return f"{folder} is not a folder"
    return None


def write_cache_file(path: str, data: bytes) -> bool:
    """Write ``data`` to ``path`` in a cache folder whole or not at all: to a new private file beside it (created
    exclusively, never through a symbolic link), then renamed over ``path`` (a concurrent reader sees the old
    file or the new one).  False, nothing written, when the folder is unusable (:func:`cache_folder_problem`)
    or the write fails."""
    folder = os.path.dirname(path)
    if cache_folder_problem(folder) is not None:
        return False
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        if cache_folder_problem(folder) is not None:
            return False
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        os.replace(tmp, path)
        return True
    except OSError:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        return False


def cache_dir() -> str:
    """The folder of ctxwatch's start-up caches (the tokenizer's decoded ranks, the catalogue memo): platformdirs'
    ``user_cache_dir`` for ctxwatch (on Linux ``$XDG_CACHE_HOME/ctxwatch`` when that variable is an absolute path,
    else ``~/.cache/ctxwatch``; the platform's own folder on macOS and Windows).  Nothing is created.

    Raises:
        RuntimeError: no home directory can be found (as :func:`default_config_path`).
    """
    import platformdirs

    return platformdirs.user_cache_dir(APP_NAME, appauthor=False)


def load_settings(path: str | os.PathLike[str] | None = None, **overrides: Any) -> Settings:
    """Build :class:`Settings` from the config file and command-line overrides (options win).

    The config file is TOML; its keys are the option names with underscores::

        window = 200000
        budget_fraction = 0.6
        trigger = 0.8
        reserve = 0.15
        keep_recent = 6
        summary_tokens = 2000

    Args:
        path: a config file; ``None`` reads the default path if it exists.
        overrides: option values; ``None`` means "not given".

    Raises:
        ConfigError: the file cannot be read or parsed, a key is unknown, or a value is out of range.
    """
    data: dict[str, Any] = {}
    try:
        file = Path(path) if path is not None else default_config_path()
    except RuntimeError:  # (no home directory: there is no default config file to read)
        file = None
    if file is not None and (path is not None or file.exists()):
        try:
            with open(file, "rb") as fh:
                data = tomllib.load(fh)
        except OSError as exc:
            raise ConfigError(f"{file}: cannot read config file ({exc.strerror or exc})") from exc
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{file}: invalid TOML ({exc})") from exc
        except UnicodeDecodeError as exc:  # (before ValueError, of which it is one)
            raise ConfigError(f"{file}: not UTF-8 text (TOML files are UTF-8): {exc.reason} at byte {exc.start}"
                              ) from exc
        except ValueError as exc:  # (an integer of more than 4,300 digits: Python's limit on int/str conversions)
            raise ConfigError(f"{file}: a number too long to read ({exc})") from exc
    known = config_keys()
    unknown = set(data) - known
    if unknown:
        raise ConfigError(f"{file}: unknown key(s) {', '.join(sorted(unknown))}; known: {', '.join(sorted(known))}")
    types = {"window": int, "keep_recent": int, "summary_tokens": int}
    clean: dict[str, Any] = {}
    for k, v in data.items():
        want = types.get(k, float)
        if isinstance(v, bool) or not isinstance(v, int | float) or (want is int and not isinstance(v, int)):
            raise ConfigError(f"{file}: {k} must be a number{' (whole)' if want is int else ''}, got {_toml(v)}")
        clean[k] = want(v)
    try:
        return Settings(**clean).with_overrides(**overrides)
    except ConfigError as exc:
        raise ConfigError(f"{file if data else 'options'}: {exc}") from exc
