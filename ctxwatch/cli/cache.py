"""``ctxwatch cache``: where the cache of earlier reads is and how big; ``ctxwatch cache clear`` empties it."""

from __future__ import annotations

import click

from ctxwatch.cli.console import echo


@click.group("cache", invoke_without_command=True)
@click.pass_context
def cache_cmd(ctx: click.Context) -> None:
    """Where the cache of earlier reads is, and how big (``cache clear`` empties it)."""
    if ctx.invoked_subcommand is not None:
        return
    from ctxwatch.engine.cache import RunCache, default_path, disabled

    try:
        path = default_path()
    except RuntimeError as exc:
        raise click.ClickException(f"no cache folder: {exc}") from exc
    info = RunCache(path).info()
    state = "off (CTXWATCH_NO_CACHE is set)" if disabled() else "on"
    echo(f"cache: {info.path}")
    echo(f"{info.entries:,} log{'s' if info.entries != 1 else ''}, {info.state_bytes / 1e6:.1f} MB of saved state, "
         f"{info.file_bytes / 1e6:.1f} MB on disk; {state}")


@cache_cmd.command("clear")
def clear_cmd() -> None:
    """Empty the cache: the next read of every log starts from its start."""
    from ctxwatch.engine.cache import RunCache, default_path

    n = RunCache(default_path()).clear()
    echo(f"cleared {n:,} log{'s' if n != 1 else ''} from {default_path()}")
