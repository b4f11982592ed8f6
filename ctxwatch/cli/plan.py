"""``ctxwatch plan`` and ``ctxwatch schema``: headless eviction preview and tool-schema floor analysis.

Registered by :func:`ctxwatch.cli._register_optional`.  The commands only wire options; the work is done by
:mod:`ctxwatch.planner` and :mod:`ctxwatch.planner.schema` on one call re-read from disk
(:func:`ctxwatch.engine.run.reload_call`).  This module does not import :mod:`ctxwatch.cli` at import time (that
module imports this one while it is being built).

Exit status: 0 success (also when the plan does not fit: that is an answer, not an error); 2 usage error,
unreadable log, no such call, or unknown window.
"""

from __future__ import annotations

import sys
from typing import Any, NoReturn

import click
import orjson

from ctxwatch.config import WINDOW_LIMIT, ConfigError, Settings, load_settings
from ctxwatch.model import Call, ParsedCall, Src, implausible_what, session_ranks
from ctxwatch.output.safetext import echo as _echo
from ctxwatch.output.safetext import json_bytes, shown, write_out

EXIT_USAGE = 2


def _fail(msg: str) -> NoReturn:
    _echo(f"ctxwatch: {msg}", err=True)
    sys.exit(EXIT_USAGE)


def _settings(config: str | None, **overrides: Any) -> Settings:
    try:
        return load_settings(config, **overrides)
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from exc


def default_plan_call(calls: list[Call]) -> int:
    """The call ``plan`` looks at by default: the last call of the ``main`` context that is not a
    ``max_tokens: 1`` probe (claude-trace logs those beside the real calls), of the newest session when there
    are several (:func:`ctxwatch.model.session_ranks`, as the forecast and the dashboard pick it: a folder's
    last call read belongs to the file modified last); else the last call."""
    main = [c for c in calls if c.context == "main" and not c.extra.get("probe")]
    if not main:
        return calls[-1].index
    rank = session_ranks(main)
    newest = max(rank, key=lambda s: rank[s])
    return next(c for c in reversed(main) if c.session == newest).index


def default_schema_call(calls: list[Call]) -> int:
    """The call ``schema`` looks at by default: the last call that carries tool schemas, else the last call."""
    for c in reversed(calls):
        if c.tool_names:
            return c.index
    return calls[-1].index


def pick_index(number: int | None, index: int | None) -> int | None:
    """The 0-based call index from ``--call N`` (the request number #N shown by ``check``, ``report`` and the
    dashboard, from 1) or ``--index I`` (``report --json``'s ``index``, from 0); negative values count from
    the end in both (-1: the last call); ``None`` when neither is given.

    Raises:
        click.UsageError: both are given, or ``--call 0`` (calls are numbered from 1).
    """
    if number is not None and index is not None:
        raise click.UsageError("give --call N (#N, from 1) or --index I (report --json's index, from 0), not both")
    if number == 0:
        raise click.UsageError("--call counts from 1 (#1 is the first call); --index 0 is report --json's first index")
    if number is not None:
        return number - 1 if number > 0 else number
    return index


def load_call(paths: tuple[str, ...], fmt: str | None, settings: Settings, call: int | None,
              default: str = "plan") -> tuple[Any, Call, ParsedCall]:
    """Load the logs (like ``report`` and ``check``: a file, a batch input/output pair or a folder, so a call
    number they print names the same call here) and re-read one call with its text.

    Args:
        paths: the log file(s) or folder(s). fmt: format name or ``None`` (detect). settings: thresholds.
        call: 0-based call index as in ``report --json`` (negative counts from the end; see
            :func:`pick_index`), or ``None`` for the default (:func:`default_plan_call` /
            :func:`default_schema_call`, by ``default``).

    Returns:
        ``(run, call summary, parsed call)``. Exits with status 2 (message on stderr) when the logs cannot be
        read, have no calls, the index is out of range, or the call cannot be re-read.
    """
    from ctxwatch.cli import load_paths
    from ctxwatch.engine import LogError, reload_parsed, resolve_spec

    run = load_paths(paths, fmt, settings)
    if not run.calls:
        n_issues = len(run.issues)
        _fail(f"{run.path}: no calls found"
              + (f" ({n_issues} issue{'s' if n_issues != 1 else ''}: {run.issues[0].message})" if n_issues else ""))
    n = len(run.calls)
    if call is None:
        idx = default_plan_call(run.calls) if default == "plan" else default_schema_call(run.calls)
    else:
        idx = call + n if call < 0 else call
        if not 0 <= idx < n:
            which = f"#{call + 1}" if call >= 0 else f"{call} from the end"
            _fail(f"call {which}: the log has {n} calls (#1..#{n}; --index 0..{n - 1})")
    summary = run.calls[idx]
    try:  # (a folder may mix formats, batch files among them: the call is re-read with its own file's)
        spec = resolve_spec(summary.source.path, fmt)
    except LogError:
        spec = run.spec
    pc = reload_parsed(spec, summary)
    if pc is None:
        _fail(f"{summary.source.path}: call #{idx + 1} could not be re-read (the file changed?)")
    return run, summary, pc


def _i(v: int | None) -> str:
    return "-" if v is None else f"{v:,}"


@click.command("plan")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--call", "call_number", type=int, default=None,
              help="The call #N as `check`, `report` and the dashboard number it, from 1 (negative: from the end). "
                   "Default: the last real call.")
@click.option("--index", "call_index", type=int, default=None,
              help="The call by its `report --json` index, from 0 (#N is index N-1; negative: from the end).")
@click.option("--keep-recent", type=click.IntRange(min=0, max=WINDOW_LIMIT - 1), default=None,
              help="Newest units (see --unit) always kept [default: 6].")
@click.option("--unit", type=click.Choice(["exchange", "turn"]), default="exchange", show_default=True,
              help="What --keep-recent counts: an exchange is an assistant message with all its tool results "
                   "(or one other message), and the cut may fall inside a user turn; a turn is a user message "
                   "and everything up to the next one.")
@click.option("--budget-fraction", type=click.FloatRange(0, 1, min_open=True), default=None,
              help="Fraction of the window the prompt may use [default: 0.6].")
@click.option("--trigger", type=click.FloatRange(0, 1, min_open=True), default=None,
              help="Compaction trigger as a fraction of the budget [default: 0.8].")
@click.option("--reserve", type=click.FloatRange(min=0, max=WINDOW_LIMIT - 1), default=None,
              help="Completion reserve: below 1 a fraction of the window, else tokens. "
                   "Default: the request's max_tokens, else 0.15.")
@click.option("--window", type=click.IntRange(min=1, max=WINDOW_LIMIT - 1), default=None,
              help="Context window in tokens. Default: the log, else the model catalogue.  Given, it is a "
                   "what-if: it replaces the window the log states (report and check keep the log's).")
@click.option("--summary-tokens", type=click.IntRange(min=0, max=WINDOW_LIMIT - 1), default=None,
              help="Assumed size of the summary in tokens [default: 2000].")
@click.option("--mode", type=click.Choice(["summarise", "drop"]), default="summarise", show_default=True,
              help="Summarise the older span or drop it.")
@click.option("--reinject/--no-reinject", default=True, show_default=True,
              help="Re-inject the task, plan, task list and edited file when their message is evicted.")
@click.option("--compact-at", type=click.Choice(["budget", "trigger"]), default="budget", show_default=True,
              help="budget: evict only when over the budget, and the minimum that fits (a preview of the "
                   "minimal plan). trigger: above the compaction trigger, a full compaction down to the "
                   "newest --keep-recent units (what ContextBudget does in a live loop).")
@click.option("--format", "fmt", default=None, help="Log format (see `ctxwatch formats`); default: detect.")
@click.option("--config", type=click.Path(dir_okay=False), default=None, help="Config file (TOML).")
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON (keys in the README).")
def plan_cmd(paths: tuple[str, ...], call_number: int | None, call_index: int | None, keep_recent: int | None,
             budget_fraction: float | None,
             trigger: float | None, reserve: float | None, window: int | None, summary_tokens: int | None,
             mode: str, unit: str, reinject: bool, compact_at: str, fmt: str | None, config: str | None,
             as_json: bool) -> None:
    """Preview the eviction plan of one call of PATHS: what is pinned, kept, summarised or evicted.

    PATHS is a log file, or (like `report` and `check`, whose call numbers --call takes) a batch input/output
    pair or a folder of logs.

    The system prompt and tool schemas are pinned; tool calls stay with their results; the newest
    --keep-recent exchanges (or turns, with --unit turn) are kept; the history sent after the plan starts on
    a user message (the summary or a re-injected item when the cut falls inside a user turn).  By default
    the plan is the minimal eviction at the budget; --compact-at trigger shows the full compaction a live
    loop makes once the prompt is above the compaction trigger (0.8 of the budget).
    """
    from ctxwatch.planner import plan_call, plan_counts, policy_for_call, unplannable
    from ctxwatch.tokens import counter_for

    settings = _settings(config, budget_fraction=budget_fraction, trigger=trigger, keep_recent=keep_recent,
                         summary_tokens=summary_tokens)
    run, call, pc = load_call(paths, fmt, settings, pick_index(call_number, call_index), "plan")
    path = call.source.path
    why = unplannable(call, pc)
    if why:
        _fail(f"{path}: call #{call.index + 1} (--index {call.index}): {why}")
    try:
        switches = {} if reinject else {k: False for k in ("reinject_task", "reinject_plan", "reinject_tasks",
                                                               "reinject_file")}
        policy = policy_for_call(call, settings, window=window, reserve=reserve, mode=mode, unit=unit,
                                 compact_at=compact_at, **switches)
    except ConfigError as exc:  # PolicyError included
        _fail(f"{path}: call #{call.index + 1} (--index {call.index}): {exc}")
    counter = counter_for(pc.model, pc.provider)
    factors = run.factors()
    # (an implausible report, B13, is no prompt size: scaling to it made every message thousands of times its
    # size; the counts stand as counted.  A calibrated floor is the one report and the dashboard show.)
    counts = plan_counts(pc, counter, floor_tokens=call.floor_tokens,
                         history_tokens=call.history_tokens if call.history_src == Src.INFERRED else None,
                         prompt_tokens=None if call.prompt_implausible else call.prompt_reported,
                         shown=factors.breakdown(call))
    plan = plan_call(pc, policy, counter, counts=counts)
    win = policy.window
    floor_note = None
    # (a floor of 0 scaled is still 0: nothing was calibrated, as report shows it, unmarked)
    calibrated_floor = counts.floor_scale is not None and plan.floor_tokens > 0
    if pc.system is None or pc.history_reported_only:
        floor_note = f"{call.floor_src}: this format does not log the system prompt and tools"
    if as_json:
        write_out(shown(json_bytes(plan.to_json(), orjson.OPT_INDENT_2).decode()) + "\n")
        return
    _echo(f"{path}  #{call.index + 1} ({call.source.where})  model={call.model or '?'}  "
               f"window={win:,}  tokenizer={plan.tokenizer}{'' if counter.exact else ' (estimate)'}")
    floor = (f"floor {plan.floor_tokens:,} ({floor_note})" if floor_note else
             f"floor: system {plan.system_tokens:,} + tools {plan.tools_tokens:,} = {plan.floor_tokens:,}"
             + (" (calibrated, as report shows it)" if calibrated_floor else ""))
    if plan.pinned_tokens:
        # (history messages no plan evicts: report counts them as history, so they are named apart from the floor)
        pinned = [m for m in plan.messages if m.fate == "pinned" and m.source_index is not None]
        floor += (f"; pinned in the history {plan.pinned_tokens:,} ({len(pinned)} message"
                  f"{'s' if len(pinned) != 1 else ''}: " + ", ".join(str(m.index) for m in pinned) + ")")
    _echo(f"{floor}; reserve {plan.reserve_tokens:,}; budget {plan.budget_tokens:,}; "
               f"trigger {plan.trigger_tokens:,}")
    _echo(f"keep_recent {policy.keep_recent} {policy.unit}{'' if policy.keep_recent == 1 else 's'}; mode "
          f"{policy.mode}; compact at the "
               f"{policy.compact_at}")
    if counts.tools_estimate is not None:
        what = "not in the log" if pc.tools is None else f"estimated {counts.tools_estimate:,}"
        _echo(f"tool schemas sized to the provider's reported prompt: {plan.tools_tokens:,} ({what}); "
              f"{plan.tokenizer} is this model's own tokenizer, so everything else is counted exactly")
    if call.prompt_implausible:
        _echo(f"the reported prompt is implausible ({implausible_what(call)}): sizes are {plan.tokenizer} counts, "
              "not scaled to it")
    if calibrated_floor:
        # (4 places, as report --json gives the calibration and estimate_ratio)
        cal = factors.factor(call)
        why = (f"capped at the reported prompt, as {call.model or '?'}'s calibration"
               + (f" {cal:.4f}" if cal is not None else "") + " would put it above it"
               if counts.floor_capped else f"{call.model or '?'}'s calibration, as in report --json")
        to = ("scaled to the provider's reported count less that floor" if call.prompt_reported
              else "scaled by the calibration too (the call reports no prompt)")
        _echo(f"the floor is {plan.tokenizer}'s count x{counts.floor_scale:.4f} ({why}); the messages are "
              f"{plan.tokenizer} counts x{counts.scale:.4f}, {to}, so that 'before' is the prompt report shows")
    elif counts.unscaled_ratio is not None:
        _echo(f"sizes are {plan.tokenizer} counts, not scaled: the provider's reported prompt "
              f"({call.prompt_reported or 0:,}) is x{counts.unscaled_ratio:.4f} this count, more than tokenizers "
              "differ by, so the log does not show what was counted (report shows this call's counts raw too)")
    elif abs(counts.scale - 1.0) >= 0.005:
        _echo(f"sizes are {plan.tokenizer} counts x{counts.scale:.4f}, scaled to the provider's reported count, "
              "so that 'before' is the prompt report shows")
    _echo(f"{'#':>5} {'role':<10} {'tokens':>9} {'after':>9}  fate")
    # The tool schemas and the reply primer are in no message but in every request: rows of their own (index
    # "-"), so that the tokens column adds up to 'before' and the after column, with the summary and the
    # re-injected items, to 'after'.
    tools_row = f"{'-':>5} {'tools':<10} {plan.tools_tokens:>9,} {plan.tools_tokens:>9,}  pinned  (tool schemas)"
    system_first = bool(plan.messages) and plan.messages[0].source_index is None
    if plan.tools_tokens and not system_first:
        _echo(tools_row)
    for k, m in enumerate(plan.messages):
        ids = ""
        if m.tool_call_ids:
            ids = "  calls " + ",".join(m.tool_call_ids)
        elif m.tool_result_ids:
            ids = "  answers " + ",".join(m.tool_result_ids)
        _echo(f"{m.index:>5} {m.role:<10} {m.tokens:>9,} {m.tokens_after:>9,}  {m.fate}{ids}")
        if k == 0 and system_first and plan.tools_tokens:
            _echo(tools_row)
    if plan.overhead_tokens:
        n = plan.overhead_tokens
        _echo(f"{'-':>5} {'primer':<10} {n:>9,} {n:>9,}  pinned  (reply primer: the tokens that start the reply)")
    if plan.lead:
        sizes = {r.kind: r.tokens for r in plan.reinject}
        sizes["summary"] = plan.summary_tokens
        _echo("sent before the kept history (user messages): "
              + ", ".join(f"{kind} {sizes[kind]:,}" if kind in sizes else kind for kind in plan.lead))
    for r in plan.reinject:
        _echo(f"re-inject {r.kind}: {r.tokens:,} tokens ({r.detail})")
    _echo(f"before {plan.before_tokens:,} -> after {plan.after_tokens:,} tokens; budget {plan.budget_tokens:,}: "
               + ("fits" if plan.fits else "does NOT fit"))
    _echo(plan.reason)


def _no_schemas_why(path: str, fmt: str | None, run_format: str) -> str:
    """Why a call has no tool schemas to analyse, in the terms of its own file's format."""
    from ctxwatch.engine import LogError, resolve_spec

    try:
        name = resolve_spec(path, fmt).name
    except LogError:
        name = run_format
    if name in ("openai-batch", "anthropic-batch"):
        return ("a batch results file holds the responses only: give the batch input file too "
                "(`ctxwatch schema input.jsonl results.jsonl`), whose requests carry the tools")
    if name in ("claude-code", "codex"):
        return f"{name} logs do not record the tool schemas sent with each call"
    return f"this {name} log does not record the tool schemas sent with this call"


@click.command("schema")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--call", "call_number", type=int, default=None,
              help="The call #N as `check`, `report` and the dashboard number it, from 1 (negative: from the end). "
                   "Default: the last call with tools.")
@click.option("--index", "call_index", type=int, default=None,
              help="The call by its `report --json` index, from 0 (#N is index N-1; negative: from the end).")
@click.option("--format", "fmt", default=None, help="Log format (see `ctxwatch formats`); default: detect.")
@click.option("--config", type=click.Path(dir_okay=False), default=None, help="Config file (TOML).")
@click.option("--json", "as_json", is_flag=True, help="Print the analysis as JSON.")
def schema_cmd(paths: tuple[str, ...], call_number: int | None, call_index: int | None, fmt: str | None,
               config: str | None, as_json: bool) -> None:
    """Tool-schema floor of one call of PATHS (a log, a batch pair or a folder, as for `report`): per-tool cost
    and what a compacted schema would save.

    Per-tool cost = the whole tools payload minus the payload without that tool (the fixed preamble is shown
    once). The compaction preview drops examples/title/default/$comment and trims descriptions to their first
    sentence; savings are per call and over every call of the run that carried the same tools.
    """
    from ctxwatch.planner.schema import analyse_tools
    from ctxwatch.tokens import counter_for

    settings = _settings(config)
    run, call, pc = load_call(paths, fmt, settings, pick_index(call_number, call_index), "schema")
    path = call.source.path
    if pc.tools is None:
        _fail(f"{path}: call #{call.index + 1}: {_no_schemas_why(path, fmt, run.spec.name)}")
    same = sum(1 for c in run.calls if c.tools_key is not None and c.tools_key == call.tools_key)
    rep = analyse_tools(pc.tools, counter_for(pc.model, pc.provider), calls=max(same, 1) if pc.tools else 0,
                        system=pc.system)
    if as_json:
        doc = {"call": call.index, "model": call.model, **rep.to_json()}
        write_out(shown(json_bytes(doc, orjson.OPT_INDENT_2).decode()) + "\n")
        return
    _echo(f"{path}  #{call.index + 1} ({call.source.where})  model={call.model or '?'}  "
               f"{len(rep.tools)} tools  tokenizer={rep.tokenizer}{'' if rep.exact else ' (estimate)'}")
    if not rep.tools:
        _echo("no tool schemas in this call")
        return
    width = max(12, *(len(t.name) for t in rep.tools))
    _echo(f"{'tool':<{width}} {'tokens':>8} {'compacted':>10} {'saved':>8}")
    for t in sorted(rep.tools, key=lambda t: -t.tokens):
        _echo(f"{t.name:<{width}} {t.tokens:>8,} {t.compacted_tokens:>10,} {t.saved:>8,}")
    _echo(f"{'(preamble)':<{width}} {rep.preamble_tokens:>8,}")
    _echo(f"{'total':<{width}} {rep.total_tokens:>8,} {rep.compacted_total:>10,} {rep.saved_per_call:>8,}")
    if rep.system_tokens is not None:
        _echo(f"system prompt {rep.system_tokens:,} tokens; floor {rep.system_tokens + rep.total_tokens:,}")
    _echo(f"saved {rep.saved_per_call:,} tokens per call x {rep.calls} calls with these tools = "
               f"{rep.saved_run:,} over the run")
    for note in rep.notes:
        _echo(f"note: {note}")
