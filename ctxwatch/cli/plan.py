"""``ctxwatch plan PATHS``: preview the eviction plan of one call, headless (:mod:`ctxwatch.planner`).

The call is re-read from disk with its text (:mod:`ctxwatch.cli.calls`), sized as ``report`` shows it (the run's
calibration, the provider's reported prompt) and planned with the options given; the text is
:mod:`ctxwatch.output.plan`'s.  Exit status: 0, also when the plan does not fit (that is an answer, not an
error); 2 usage error, unreadable log, no such call, or unknown window.
"""

from __future__ import annotations

import click
import orjson

from ctxwatch.cli.calls import load_call, pick_index
from ctxwatch.cli.console import echo, output_width
from ctxwatch.cli.exits import fail
from ctxwatch.cli.options import cache_option, make_settings
from ctxwatch.config import ConfigError
from ctxwatch.model import MAX_COUNT
from ctxwatch.output.safetext import json_bytes, shown, write_out


@click.command("plan")
@click.argument("paths", nargs=-1, required=True, type=click.Path(readable=False))
@click.option("--call", "call_number", type=int, default=None,
              help="The call #N as `check` and `report` number it on the same PATHS, from 1 (negative: from the "
                   "end): the `number` of `report --json`'s calls and flags, not their 0-based `index`/`call`. The "
                   "dashboard numbers them so on a file; on a folder it numbers the calls of the session it shows "
                   "(give plan that session's file for its #N). "
                   "Default: the newest session's last main-context call, not a probe (the one the dashboard opens on; "
                   "--call -1 is the last call in the file).")
@click.option("--index", "call_index", type=int, default=None,
              help="The call by its `report --json` index (a flag's `call`), from 0 (#N is index N-1; negative: "
                   "from the end).")
@click.option("--keep-recent", type=click.IntRange(min=0, max=MAX_COUNT - 1), default=None,
              help="Newest units (see --unit) always kept [default: 6].")
@click.option("--unit", type=click.Choice(["exchange", "turn"]), default="exchange", show_default=True,
              help="What --keep-recent counts: an exchange is an assistant message with all its tool results "
                   "(or one other message), and the cut may fall inside a user turn; a turn is a user message "
                   "and everything up to the next one.")
@click.option("--budget-fraction", type=click.FloatRange(0, 1, min_open=True), default=None,
              help="Fraction of the window the prompt may use [default: 0.6; a Claude Code or Codex log: its "
                   "harness's own budget].")
@click.option("--trigger", type=click.FloatRange(0, 1, min_open=True), default=None,
              help="Compaction trigger as a fraction of the budget [default: 0.8; a Claude Code or Codex log: "
                   "its harness's own trigger, in tokens, up to the budget].")
@click.option("--reserve", type=click.FloatRange(min=0, max=MAX_COUNT - 1), default=None,
              help="Completion reserve: below 1 a fraction of the window, else tokens. "
                   "Default: the request's max_tokens, else 0.15.")
@click.option("--window", type=click.IntRange(min=1, max=MAX_COUNT - 1), default=None,
              help="Context window in tokens. Default: the log, else the model catalogue.  Given, it is a "
                   "what-if: it replaces the window the log states (report and check keep the log's).")
@click.option("--summary-tokens", type=click.IntRange(min=0, max=MAX_COUNT - 1), default=None,
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
@cache_option
@click.option("--json", "as_json", is_flag=True,
              help="Print the plan as JSON, the call it plans first (keys in docs/plan.md).")
def plan_cmd(paths: tuple[str, ...], call_number: int | None, call_index: int | None, keep_recent: int | None,
             budget_fraction: float | None, trigger: float | None, reserve: float | None, window: int | None,
             summary_tokens: int | None,
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
    from ctxwatch.output.plan import plan_json, plan_lines
    from ctxwatch.planner import logged_counts, plan_call, policy_for_call, unplannable
    from ctxwatch.tokens import counter_for

    settings = make_settings(config, budget_fraction=budget_fraction, trigger=trigger, keep_recent=keep_recent,
                             summary_tokens=summary_tokens)
    run, call, pc = load_call(paths, fmt, settings, pick_index(call_number, call_index), "plan")
    at = f"{call.source.path}: call #{call.index + 1} (--index {call.index})"
    why = unplannable(call, pc)
    if why:
        fail(f"{at}: {why}")
    try:
        switches = {} if reinject else {k: False for k in ("reinject_task", "reinject_plan", "reinject_tasks",
                                                           "reinject_file")}
        policy = policy_for_call(call, settings, window=window, reserve=reserve, mode=mode, unit=unit,
                                 compact_at=compact_at, **switches)
    except ConfigError as exc:  # PolicyError included
        fail(f"{at}: {exc}")
    counter = counter_for(pc.model, pc.provider)
    factors = run.factors()
    # (the counts the preview and the call detail show too: a calibrated floor is the one report and the
    # dashboard show)
    counts = logged_counts(call, pc, factors.breakdown(call), counter)
    plan = plan_call(pc, policy, counter, counts=counts)
    if as_json:
        write_out(shown(json_bytes(plan_json(call, plan), orjson.OPT_INDENT_2).decode()) + "\n")
        return
    from ctxwatch.output.text import folded

    # (on a terminal, or under COLUMNS, a line longer than the width is broken between words, as report's are)
    width = output_width()
    for line in folded(plan_lines(call, pc, plan, policy, counts, counter, factors, width), width):
        echo(line)
