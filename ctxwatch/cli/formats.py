"""``ctxwatch formats``: the log formats ctxwatch reads, by the names ``--format`` takes."""

from __future__ import annotations

import click

from ctxwatch.cli.console import echo, output_width


@click.command("formats")
def formats_cmd() -> None:
    """List the log formats ctxwatch reads (names for --format)."""
    from ctxwatch.formats import formats
    from ctxwatch.output.text import folded

    lines = []
    for name, spec in sorted(formats().items()):
        alias = f" (also: {', '.join(spec.aliases)})" if spec.aliases else ""
        lines.append(f"{name:<16} {spec.description}{alias}")
    # (on a terminal, or under COLUMNS, a line longer than the width is broken between words, as report's are)
    for line in folded(lines, output_width()):
        echo(line)
