"""The threshold options the dashboard, ``report`` and ``check`` share, and the settings made of them.

One decorator, so that the commands that read the same log agree on its thresholds, and a bad config file is the
same usage error everywhere.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from ctxwatch.config import ConfigError, Settings, load_settings
from ctxwatch.model import MAX_COUNT


def settings_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """The threshold options shared by the dashboard, ``report`` and ``check``: ``--config``, ``--window``,
    ``--budget-fraction``, ``--trigger``, ``--reserve`` and ``--format`` (the defaults they name are those of
    :class:`~ctxwatch.config.Settings`)."""
    opts = [
        click.option("--config", "config", type=click.Path(dir_okay=False), default=None,
                     help="Config file (TOML). Default: ~/.config/ctxwatch/config.toml if present."),
        click.option("--window", type=click.IntRange(min=1, max=MAX_COUNT - 1), default=None,
                     help="Context window in tokens where the log states none (it wins over the model catalogue)."),
        click.option("--budget-fraction", type=click.FloatRange(0, 1, min_open=True), default=None,
                     help="Fraction of the window the prompt may use [default: 0.6]."),
        click.option("--trigger", type=click.FloatRange(0, 1, min_open=True), default=None,
                     help="Compaction trigger as a fraction of the budget [default: 0.8]."),
        click.option("--reserve", type=click.FloatRange(0, MAX_COUNT - 1), default=None,
                     help="Completion reserve when max_tokens is not set: below 1 a fraction of the window, else "
                          "tokens [default: 0.15]."),
        click.option("--format", "fmt", default=None, help="Log format (see `ctxwatch formats`); default: detect."),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


#: Where ``--no-cache`` leaves its word for :func:`ctxwatch.cli.load.load_paths` (click's context ``meta``).
NO_CACHE = "ctxwatch.no_cache"


def idle_grace_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--idle-grace SECONDS``: how long a followed log's half-written last line may stay unchanged before it is
    reported as cut (:data:`~ctxwatch.source.DEFAULT_IDLE_GRACE`, 2 s, by default)."""
    from ctxwatch.source import DEFAULT_IDLE_GRACE

    return click.option("--idle-grace", "idle_grace", type=click.FloatRange(min=0.1), default=None,
                        metavar="SECONDS",
                        help=f"Following: seconds a half-written last line may stay unchanged before it is "
                             f"reported as cut (default {DEFAULT_IDLE_GRACE:g}; raise it for a writer that pauses "
                             "mid-line).")(f)


def cache_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--no-cache``: read the logs from their start, neither using nor saving what earlier reads kept
    (:mod:`ctxwatch.engine.cache`; ``CTXWATCH_NO_CACHE=1`` does the same for every command)."""
    def remember(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
        if value:
            ctx.meta[NO_CACHE] = True

    return click.option("--no-cache", is_flag=True, expose_value=False, callback=remember,
                        help="Read the logs from their start: no use of the cache of earlier reads.")(f)


def make_settings(config: str | None, **overrides: Any) -> Settings:
    """Settings from the config file ``config`` (``None``: the user's default file, if any) and the options
    given (``None`` values left out); a bad config is a usage error naming the file (exit 2)."""
    try:
        return load_settings(config, **overrides)
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from exc
