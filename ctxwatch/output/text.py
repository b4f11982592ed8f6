"""The text of ``ctxwatch report``: the call table, the totals and priced-as lines, sessions, issues, legend, flags.

Built from the ``report --json`` document (:func:`ctxwatch.output.report.report_json`), so the text and the JSON
say the same numbers.  Lines are yielded as the command prints them: it makes each one terminal-safe on the way
out, so log text here is cleaned only where a column width depends on it.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from ctxwatch.config import Settings
from ctxwatch.model import Issue, counted_issues, tally_issues
from ctxwatch.output.columns import Column, fit_table, left_out, wrap
from ctxwatch.output.fields import file_names
from ctxwatch.output.limits_notes import documented_lines, fmt_int, harness_lines, priced_as_line
from ctxwatch.output.safetext import cells, clean, clip


def report_lines(doc: dict[str, Any], issues: Sequence[Issue], settings: Settings, width: int | None = None,
                 sessions_only: bool = False) -> Iterator[str]:
    """The lines of the text report, without their newlines.

    Args:
        doc: the ``report --json`` document of the run.
        issues: the run's issues (``Run.issues``, resets included), counted in the header line as bad lines and
            notes.
        settings: the settings the run was read with (a ``--window`` the log overrides gets a note).
        width: the width in cells to lay out to (a terminal's, or ``COLUMNS``): the tables are narrowed to it
            (:func:`fit_table`), longer lines broken between words (:func:`folded`); ``None`` (a pipe, a file):
            every column at its natural width, no line broken.
        sessions_only: the sessions table (one row per session, even one) instead of the call table.
    """
    bad, notes = tally_issues(issues)
    # (a line can have two issues, NUL bytes and invalid JSON: the parts then add up to fewer than the issues)
    same = len(doc["issues"]) - bad - notes
    also = f"; {same} more issue{'s' if same != 1 else ''} on the same lines" if same > 0 else ""
    counted = f" ({counted_issues(bad, notes)}{also})" if doc["issues"] else ""
    formats = "+".join(doc["formats"]) or "none"
    head = f"{clean(doc['file'])}  format={formats}  calls={len(doc['calls'])}  issues={len(doc['issues'])}{counted}"
    if width is not None and cells(clean(f"  format={formats}")) > width:
        # (a folder of many formats: the list is broken after a "+", where folding would keep it one word)
        yield from folded([clean(doc["file"])], width)
        yield from _plus_lines("  format=", doc["formats"], width)
        yield from folded([f"  calls={len(doc['calls'])}  issues={len(doc['issues'])}{counted}"], width)
    else:
        yield from folded([head], width)
    # With several files (a folder, a batch pair) a line number alone does not say where: a file column.
    several = len({c["file"] for c in doc["calls"]}) > 1
    # Main and sidechain / subagent calls side by side have floors of their own (another system prompt and tool
    # set): without the context a floor that jumps between two values looks like an error.
    contexts = len({c["context"] for c in doc["calls"]}) > 1
    # An implausible report is marked "!" in the reported column, which widens by that mark only then: one
    # above the window, and a reported 0 (no request has an empty prompt), also where the estimate stands in.
    marked = [c["prompt_implausible"] or c["prompt_tokens_reported"] == 0 for c in doc["calls"]]
    if not sessions_only:
        table = call_columns(doc["calls"], marked, contexts, several)
        yield from fit_table(table, width)
        if (dropped := left_out(table, width)) is not None and doc["calls"]:
            yield from folded([dropped], width)
    if doc["calls"]:
        priced = priced_as_line(doc["calls"])
        yield from folded([totals_line(doc["calls"]), *([priced] if priced else []), *documented_lines(doc["calls"]),
                           *harness_lines(doc["calls"], settings)], width)
    if sessions_only and not doc["sessions"]:
        yield from folded(["\n0 sessions: no call was read"], width)  # (no table of no rows)
    elif len(doc["sessions"]) > 1 or sessions_only:
        n = len(doc["sessions"])
        yield from folded([f"\n{n} session{'s' if n != 1 else ''}, newest first (peak prompt: the main "
                           "context's largest, peak~ = estimated, no report; cost~ = estimate; ? = some call not "
                           "priced):"], width)
        yield from fit_table(session_columns(doc["sessions"]), width)
    yield from folded(_tail(doc, any(marked), settings, legend=not sessions_only), width)


def _plus_lines(lead: str, names: Sequence[str], width: int) -> Iterator[str]:
    """``lead`` and ``names`` joined by ``+``, broken after a ``+`` into lines of at most ``width`` cells (the later
    ones indented by 4; the first name stays with ``lead``, and a name wider than the room is kept whole)."""
    line = lead
    for i, name in enumerate(names):
        piece = clean(name) + ("+" if i < len(names) - 1 else "")
        if i and cells(line) + cells(piece) > width:
            yield line
            line = "    "
        line += piece
    yield line


def folded(lines: Iterable[str], width: int | None) -> Iterator[str]:
    """``lines`` as they are, or, with a terminal ``width``, each longer one made terminal-safe (:func:`clean`, as
    the command prints it) and broken between words into lines of at most ``width`` terminal cells, the later
    ones indented by 2 (:func:`~ctxwatch.output.columns.wrap`): the terminal would break it anywhere, inside a
    number.  A word longer than the room (a path) is kept whole.  Any width is followed, however narrow: below
    :data:`~ctxwatch.output.columns.MIN_WIDTH` the tables keep their narrowest layout, and the lines are still
    broken (left whole they would run tens of cells over, where the terminal is narrowest)."""
    for line in lines:
        lead = "\n" if line.startswith("\n") else ""
        text = clean(line.removeprefix("\n"))
        if width is None or cells(text) <= width or "\n" in line.strip("\n"):
            yield line
            continue
        parts = wrap(text, width)
        yield lead + parts[0] if parts else line
        yield from parts[1:]


#: Issues listed one per line below the tables before the rest are counted by kind (a folder of thousands of
#: files in no log format would list each; ``--json`` lists them all), as ``check`` lists its notes.
MAX_ISSUE_LINES = 20


def _tail(doc: dict[str, Any], implausible: bool, settings: Settings, legend: bool) -> Iterator[str]:
    """What follows the tables: run totals, issues, the call table's legend (``legend``; ``implausible``: it
    marks an implausible report), the window note, flags and forecast."""
    for sess in doc["sessions"]:
        rt = sess.get("run_totals")
        if rt:  # (no call reports usage, but the log states the run's totals: say them beside the "?")
            cost = f", ${rt['cost_usd']:.4f}" if rt.get("cost_usd") is not None else ""
            name = sess["session"] or (os.path.basename(sess["files"][0]) if sess["files"] else "-")
            yield (f"run totals of {clean(name)} ({rt['source']}; per call unknown): input "
                   f"{fmt_int(rt['input_tokens'])}, output {fmt_int(rt['output_tokens'])}{cost}")
    listed = doc["issues"]
    # (one line more is printed rather than a line saying "1 more", as check does)
    limit = len(listed) if len(listed) <= MAX_ISSUE_LINES + 1 else MAX_ISSUE_LINES
    for i in listed[:limit]:
        where = f"{clean(i['file'])}:{i['line']}" if i["line"] else clean(i["file"])  # (0: the whole file)
        yield f"issue: {where}: {i['kind']}: {clean(i['message'])}"
    if len(listed) > limit:
        kinds = Counter(i["kind"] for i in listed[limit:])
        most = ", ".join(f"{n:,} {kind}" for kind, n in kinds.most_common(3))
        yield (f"issue: {len(listed) - limit:,} more ({most}{', ...' if len(kinds) > 3 else ''}); "
               "report --json lists them all")
    if legend:
        yield _legend(doc, implausible)
    yield from _flag_lines(doc, settings)


def _legend(doc: dict[str, Any], implausible: bool) -> str:
    """The call table's legend: what its marks mean, for the marks it shows."""
    legend = "# = call number (from 1; JSON `index` counts from 0)"
    if any(not c["line"] for c in doc["calls"]):
        legend += "; line doc = a call of a whole-file JSON document"
    if any(c["floor_source"] == "inferred" for c in doc["calls"]):
        legend += "; floor~ = inferred (reported prompt minus estimated history)"
    if any(c["history_source"] == "inferred" for c in doc["calls"]):
        legend += "; history~ = inferred (reported prompt minus the context's floor)"
    factors = {c["model"]: c["calibration"] for c in doc["calls"] if c["calibrated"] is not None}
    if factors:
        legend += ("; ≈ = calibrated: the floor is the estimate x its model's median reported/estimated prompt "
                   "ratio (" + ", ".join(f"{clean(m or '?')} x{f:.4f}" for m, f in factors.items())
                   + "), the history the rest of the reported prompt (less the 3-token reply primer; the estimate"
                   " x the ratio where the call reports none), report --json keeps the raw estimate")
    if any(v is None for c in doc["calls"] for v in (c["floor_tokens"], c["history_tokens"], c["window"],
                                                     c["prompt_tokens_reported"])):
        legend += "; ? = unknown, never guessed (e.g. a log that starts mid-session, or reports no usage)"
    if implausible:
        legend += ("; reported! = implausible (more than the window, or 0): not taken as the call's occupancy "
                   "(free and used% ?, or for a 0 those of the estimate standing in; left out of the peak, the "
                   "flags and the forecast)")
    tokenizers = sorted({c["tokenizer"] for c in doc["calls"]})
    if tokenizers:
        legend += "; estimates use " + ", ".join(tokenizers)
    return legend


def call_columns(calls: list[dict[str, Any]], marked: list[bool], contexts: bool, several: bool) -> list[Column]:
    """The call table's columns (:func:`fit_table`): number, line, model, window, floor, history, reserve,
    free, used %, reported prompt, then the context and the file where the run has several.  Narrowed for a
    terminal: free (window - used - reserve), the line, the window and the reserve are left out, then the
    model, context and file names are cut; still too wide, the model, the file, used % and the context are left
    out in turn (the numbers of the floor, history and reported prompt stay, whole)."""
    used = []
    for c in calls:
        u = "?"
        if c["window"] and c["free_tokens"] is not None and c["reserve_tokens"] is not None:
            # (from the counts: used_fraction is already rounded to 4 places, and rounding twice can be 0.1 off)
            u = f"{100 * (c['window'] - c['free_tokens'] - c['reserve_tokens']) / c['window']:.1f}"
        elif c["used_fraction"] is not None:
            u = f"{100 * c['used_fraction']:.1f}"
        used.append(u)
    parts = [_shown_parts(c) for c in calls]
    cols = [
        Column("#", [str(c["index"] + 1) for c in calls], right=True, natural=4),
        Column("line", [str(c["line"] or "doc") for c in calls], right=True, natural=6, drop=2),
        Column("model", [c["model"] or "?" for c in calls], natural=28, least=12, shed=1),
        Column("window", [fmt_int(c["window"]) for c in calls], right=True, natural=9, drop=3),
        Column("floor", [f for f, _h in parts], right=True, natural=9),
        Column("history", [h for _f, h in parts], right=True, natural=9),
        Column("reserve", [fmt_int(c["reserve_tokens"]) for c in calls], right=True, natural=8, drop=4),
        Column("free", [fmt_int(c["free_tokens"]) for c in calls], right=True, natural=9, drop=1),
        Column("used%", used, right=True, natural=6, shed=3),
        Column("reported", [fmt_int(c["prompt_tokens_reported"]) + ("!" if m else "")
                            for c, m in zip(calls, marked, strict=True)],
               right=True, natural=10 if any(marked) else 9),
    ]
    if contexts:
        cols.append(Column("context", [c["context"] for c in calls], least=8, gap=2, shed=4))
    if several:
        names = file_names(c["file"] for c in calls)
        cols.append(Column("file", [names[c["file"]] for c in calls], least=12, gap=2, shed=2))
    return cols


def session_columns(sessions: list[dict[str, Any]]) -> list[Column]:
    """The sessions table's columns: session, last call, calls, peak prompt, input, output, cost.  Narrowed
    for a terminal: the session name is cut; still too wide, the last call's time of day is left out (its
    date stays: a timestamp is never cut), then the output, the input and the last call."""
    stamps = [str(s["last_timestamp"] or "-")[:19] for s in sessions]
    return [
        Column("session", [s["session"] or "-" for s in sessions], natural=38, least=12),
        Column("last call (UTC)", stamps, natural=21, short=[t[:10] for t in stamps], shorten=1, shed=4),
        Column("calls", [str(s["calls"]) for s in sessions], right=True, natural=6),
        Column("peak prompt", [_peak(s) for s in sessions], right=True, natural=12),
        Column("input", [fmt_int(s["input_tokens"]) for s in sessions], right=True, natural=13, shed=3),
        Column("output", [fmt_int(s["output_tokens"]) for s in sessions], right=True, natural=10, shed=2),
        Column("cost~", [fmt_cost(s["cost_usd"]) for s in sessions], right=True, natural=10),
    ]


def _flag_lines(doc: dict[str, Any], settings: Settings) -> Iterator[str]:
    """The window note, the flags' count and the worst of them, and the forecast."""
    if settings.window and any(c["window_source"] == "log" for c in doc["calls"]):
        yield (f"note: --window/config window {settings.window:,} applies only where the log does not state the "
               "window (window_source 'log' wins)")
    if settings.reserve >= 1:
        capped = [c for c in doc["calls"] if c["reserve_source"] == "option" and c["window"]
                  and c["window"] <= settings.reserve]
        if capped:
            windows = sorted({c["window"] for c in capped})
            yield (f"note: --reserve/config reserve {int(settings.reserve):,} tokens is not less than the "
                   f"{' / '.join(f'{w:,}' for w in windows)}-token window of {len(capped):,} call"
                   f"{'s' if len(capped) != 1 else ''}: the whole window is reserved there, which leaves no room "
                   "for any prompt")
    flags = doc["flags"]
    if flags:
        worst = [f for f in flags if f["severity"] == "critical"] or [f for f in flags if f["severity"] == "warn"]
        counts = {sev: sum(f["severity"] == sev for f in flags) for sev in ("critical", "warn", "info")}
        yield (f"flags: {len(flags)} ({counts['critical']} critical, {counts['warn']} warn, {counts['info']} info; "
               "all of them: ctxwatch check)")
        for f in worst[:5]:
            # (200 characters: a reason's last clause says what it covers, e.g. implausible_usage's "kept in
            # token totals and cost"; check prints them whole)
            yield f"  {f['severity'].upper():<8} #{f['call'] + 1:<4} {f['kind']}  {clip(f['reason'], 200)}"
    yield f"forecast: {clean(doc['forecast']['text'])}"  # (it names sessions: a newline there is the log's)


def _peak(sess: dict[str, Any]) -> str:
    """A session's peak prompt for the text table, ``~`` after it when it is an estimate (no report)."""
    return fmt_int(sess["peak_prompt_tokens"]) + ("~" if sess.get("peak_prompt_source") == "estimated" else "")


def _shown_parts(c: dict[str, Any]) -> tuple[str, str]:
    """The floor and history cells of a ``report --json`` call object, as the dashboard shows them: the
    ``calibrated`` breakdown marked ``≈`` where there is one (:func:`ctxwatch.model.shown_breakdown`; a count of
    0 unmarked, as scaling leaves it 0), else the accounted numbers, ``~`` marking an inferred one."""
    cal = c["calibrated"]
    if cal is not None:
        # (the raw count decides, as shown_breakdown's source does: a 0 scaled is still 0, not calibrated)
        return (fmt_int(cal["floor_tokens"]) + ("≈" if c["floor_tokens"] else ""),
                fmt_int(cal["history_tokens"]) + ("≈" if c["history_tokens"] else ""))
    return (fmt_int(c["floor_tokens"]) + ("~" if c["floor_source"] == "inferred" else ""),
            fmt_int(c["history_tokens"]) + ("~" if c["history_source"] == "inferred" else ""))


def fmt_cost(usd: float | None) -> str:
    """``$0.0123`` below a dollar (cents alone would hide a cheap call's cost), ``$1,234.56`` above; ``?`` for
    unknown (never $0)."""
    if usd is None:
        return "?"
    return f"${usd:,.2f}" if abs(usd) >= 1 else f"${usd:.4f}"


def totals_line(calls: list[dict[str, Any]]) -> str:
    """The run's totals of reported usage over the report's calls (each response once: calls are already
    deduplicated) and their estimated cost, e.g. ``total: prompt 1,234 (uncached 34, cache read 1,000, cache
    write 200) · output 56 · cost ~$0.0123 (estimate, genai-prices)``.

    The prompt's parts are summed over the same calls as the prompt (those that report one), so they add up to
    it; a part no call reports (OpenAI has no cache writes) is left out, and one only some calls report says
    over how many.  Calls whose prompt or output is unknown, or that cannot be priced, are counted apart:
    unknown is never taken as 0.
    """

    def part(name: str, key: str, rows: list[dict[str, Any]]) -> str | None:
        known = [c[key] for c in rows if c[key] is not None]
        if not known:
            return None
        of = f" in {len(known):,} of {len(rows):,} calls" if len(known) < len(rows) else ""
        return f"{name} {sum(known):,}{of}"

    # (a reported prompt of 0 is no prompt size, as in the per-session totals)
    prompted = [c for c in calls if c["prompt_tokens_reported"]]
    out: list[str] = []
    if prompted:
        parts = [p for p in (part("uncached", "input_uncached_tokens", prompted),
                             part("cache read", "cache_read_tokens", prompted),
                             part("cache write", "cache_write_tokens", prompted)) if p]
        text = f"prompt {sum(c['prompt_tokens_reported'] for c in prompted):,}"
        # (an implausible report is no occupancy, but it is what the provider counted: summed, and said so)
        odd = [c["prompt_tokens_reported"] for c in prompted if c["prompt_implausible"]]
        inner = ", ".join(parts) + (f"{'; ' if parts else ''}{len(odd):,} implausible report"
                                    f"{'s' if len(odd) != 1 else ''} of {sum(odd):,} included as reported"
                                    if odd else "")
        out.append(text + (f" ({inner})" if inner else ""))
    else:
        out.append("prompt ?")
    outputs = [c["completion_tokens_reported"] for c in calls if c["completion_tokens_reported"] is not None]
    out.append(f"output {sum(outputs):,}" if outputs else "output ?")
    unknown = [(len(calls) - len(prompted), "prompt"), (len(calls) - len(outputs), "output")]
    priced = [c["cost_usd"] for c in calls if c["cost_usd"] is not None]
    if not priced:
        out.append("cost ? (no call could be priced)")
    else:
        unpriced = len(calls) - len(priced)
        out.append(f"cost ~{fmt_cost(round(sum(priced), 12))} (estimate, genai-prices"
                   + (f"; {unpriced} call{'s' if unpriced != 1 else ''} not priced, not counted)" if unpriced
                      else ")"))
    gaps = [f"{n:,} call{'s' if n != 1 else ''} with an unknown {what}" for n, what in unknown if n and n < len(calls)]
    return "total: " + " · ".join(out) + (f"; left out of the token sums: {', '.join(gaps)}" if gaps else "")
