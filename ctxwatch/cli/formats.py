"""``ctxwatch formats``: the log formats ctxwatch reads, by the names ``--format`` takes."""

from __future__ import annotations

import click

from ctxwatch.cli.console import echo


@click.command("formats")
def formats_cmd() -> None:
    """List the log formats ctxwatch reads (names for --format)."""
    from ctxwatch.formats import formats

    for name, spec in sorted(formats().items()):
        alias = f" (also: {', '.join(spec.aliases)})" if spec.aliases else ""
        echo(f"{name:<16} {spec.description}{alias}")
