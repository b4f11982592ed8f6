"""``ctxwatch cache``: where the cache of earlier reads is and how big; ``ctxwatch cache clear`` empties it."""

from __future__ import annotations

import click

from ctxwatch.cli.console import echo
from ctxwatch.cli.exits import fail
from ctxwatch.output.safetext import clean


@click.group("cache", invoke_without_command=True)
@click.pass_context
def cache_cmd(ctx: click.Context) -> None:
    """Where the cache of earlier reads is, and how big ('cache clear' empties it)."""
    if ctx.invoked_subcommand is not None:
        return
    from ctxwatch.engine.cache import RunCache, disabled

    info = RunCache(_cache_path()).info()
    if disabled():
        state = "off (CTXWATCH_NO_CACHE is set)"
    elif info.problem:
        state = f"not used: {info.problem}"
    else:
        state = "in use"
    from ctxwatch.cli.console import output_width
    from ctxwatch.output.text import folded

    entries = f" ({info.entries:,} entries: a log read with other settings, or by another ctxwatch, has one of " \
        "its own)" if info.entries != info.logs else ""
    kept = f", {info.outputs:,} report{'s' if info.outputs != 1 else ''} kept whole" if info.outputs else ""
    kept += f", {info.counts:,} token count{'s' if info.counts != 1 else ''} of messages" if info.counts else ""
    for line in folded([f"cache: {info.path}",
                        f"{info.logs:,} log{'s' if info.logs != 1 else ''}{entries}{kept}, "
                        f"{info.state_bytes / 1e6:.1f} MB of saved state, {info.file_bytes / 1e6:.1f} MB on disk; "
                        f"{state}"], output_width()):
        echo(line)


@cache_cmd.command("clear")
def clear_cmd() -> None:
    """Empty the cache: the next read of every log starts from its start (and each log's last activity is
    read again from its end)."""
    from ctxwatch.engine.activity_memo import forget
    from ctxwatch.engine.cache import RunCache
    from ctxwatch.engine.cacheadmin import CacheError

    path = _cache_path()
    cache = RunCache(path)
    try:
        was = cache.clear()
    except CacheError as exc:
        fail(clean(str(exc)))
    forget()
    echo(f"{path} was damaged: removed, to be made again" if cache.rebuilt else
         f"cleared {was.kept()} from {path}")


def _cache_path() -> str:
    """The cache's file; with no home directory to hold it, exit 2 saying so (not click's 1, ``check``'s status
    for a flag; nor a traceback)."""
    from ctxwatch.engine.cache import default_path

    try:
        return default_path()
    except RuntimeError as exc:
        fail(f"no cache folder: {clean(str(exc))}")
