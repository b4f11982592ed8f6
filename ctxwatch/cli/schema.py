"""``ctxwatch schema PATHS``: the tool-schema floor of one call, headless (:mod:`ctxwatch.planner.schema`).

Per tool, what its schema costs in every request and what a compacted schema would save, per call and over the
run; the text is :mod:`ctxwatch.output.plan`'s.  Exit status: 0; 2 usage error, unreadable log, no such call,
or a call without tool schemas.
"""

from __future__ import annotations

import click
import orjson

from ctxwatch.cli.calls import load_call, pick_index
from ctxwatch.cli.console import echo, output_width
from ctxwatch.cli.exits import fail
from ctxwatch.cli.options import cache_option, make_settings
from ctxwatch.output.safetext import json_bytes, shown, write_out


@click.command("schema")
@click.argument("paths", nargs=-1, required=True, type=click.Path(readable=False))
@click.option("--call", "call_number", type=int, default=None,
              help="The call #N as `check`, `report` and the dashboard number it, from 1 (negative: from the end). "
                   "Default: the last call with tools.")
@click.option("--index", "call_index", type=int, default=None,
              help="The call by its `report --json` index, from 0 (#N is index N-1; negative: from the end).")
@click.option("--format", "fmt", default=None, help="Log format (see `ctxwatch formats`); default: detect.")
@click.option("--config", type=click.Path(dir_okay=False), default=None, help="Config file (TOML).")
@cache_option
@click.option("--json", "as_json", is_flag=True, help="Print the analysis as JSON.")
def schema_cmd(paths: tuple[str, ...], call_number: int | None, call_index: int | None, fmt: str | None,
               config: str | None, as_json: bool) -> None:
    """Tool-schema floor of one call of PATHS (a log, a batch pair or a folder, as for `report`): per-tool cost
    and what a compacted schema would save.

    Per-tool cost = the whole tools payload minus the payload without that tool (the fixed preamble is shown
    once). The compaction preview drops examples/title/default/$comment and trims descriptions to their first
    sentence; savings are per call and over every call of the run that carried the same tools.
    """
    from ctxwatch.output.plan import schema_lines
    from ctxwatch.planner.schema import analyse_tools
    from ctxwatch.tokens import counter_for

    settings = make_settings(config)
    run, call, pc = load_call(paths, fmt, settings, pick_index(call_number, call_index), "schema")
    path = call.source.path
    if pc.tools is None:
        why = _no_schemas_why(path, fmt, run.spec.name)
        # (a format that never logs the tools: no call of it would do, so none is named)
        fail(f"{path}: {why}" if "logs do not record" in why else f"{path}: call #{call.index + 1}: {why}")
    same = sum(1 for c in run.calls if c.tools_key is not None and c.tools_key == call.tools_key)
    rep = analyse_tools(pc.tools, counter_for(pc.model, pc.provider), calls=max(same, 1) if pc.tools else 0,
                        system=pc.system)
    if as_json:
        # (call: report --json's index, kept; number: the #N that --call takes)
        doc = {"call": call.index, "number": call.index + 1, "model": call.model, **rep.to_json()}
        write_out(shown(json_bytes(doc, orjson.OPT_INDENT_2).decode()) + "\n")
        return
    from ctxwatch.output.text import folded

    # (on a terminal, or under COLUMNS, a line longer than the width is broken between words, as report's are)
    for line in folded(schema_lines(call, rep, run.factors().breakdown(call)), output_width()):
        echo(line)


def _no_schemas_why(path: str, fmt: str | None, run_format: str) -> str:
    """Why a call has no tool schemas to analyse, in the terms of its own file's format."""
    from ctxwatch.engine import LogError, resolve_spec
    from ctxwatch.formats import get_format

    try:
        spec = resolve_spec(path, fmt)
    except LogError:
        spec = get_format(run_format)
    name = spec.name
    if spec.joined:
        return ("a batch results file holds the responses only: give the batch input file too "
                "(`ctxwatch schema input.jsonl results.jsonl`), whose requests carry the tools")
    if name in ("claude-code", "codex"):
        return f"{name} logs do not record the tool schemas sent with each call"
    return f"this {name} log does not record the tool schemas sent with this call"
