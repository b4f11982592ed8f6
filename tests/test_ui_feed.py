"""The dashboard's pure parts: the reading feed (no app), safe text, the bar geometry, the chart's data."""

from __future__ import annotations

import os
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest
from rich.text import Text
from test_ui_common import append, line, record, write_log

from ctxwatch.config import Settings
from ctxwatch.model import Call, SourceRef, Src
from ctxwatch.ui import text as tx
from ctxwatch.ui.feed import LogFeed, skip_to_end
from ctxwatch.ui.messages import (
    AnalysisChanged,
    BackfillDone,
    BackfillProgress,
    CallsChanged,
    FeedFailed,
    FeedOpened,
    IssuesChanged,
    ResetSeen,
    WatchChanged,
)
from ctxwatch.ui.widgets import BarParts, bar_line, bar_parts, build_series, downsample, legend, short_model


class Collector:
    """Collects the feed's messages (thread-safe append)."""

    def __init__(self) -> None:
        self.messages: list[object] = []
        self.lock = threading.Lock()

    def __call__(self, m: object) -> None:
        with self.lock:
            self.messages.append(m)

    def of(self, kind: type) -> list:
        with self.lock:
            return [m for m in self.messages if isinstance(m, kind)]

    def calls(self) -> dict[int, Call]:
        out: dict[int, Call] = {}
        for m in self.of(CallsChanged):
            for c in m.added + m.updated:
                out[c.index] = c
        return out


def start(path: Path, **kw) -> tuple[Collector, threading.Event, threading.Thread]:
    got = Collector()
    stop = threading.Event()
    feed = LogFeed(str(path), got, stop, **kw)
    th = threading.Thread(target=feed.run, daemon=True)
    th.feed = feed  # type: ignore[attr-defined]
    th.start()
    return got, stop, th


def start_skipping(path: Path) -> tuple[Collector, threading.Event, threading.Thread]:
    """:func:`start` with Esc already pressed: the feed skips the middle of its backfill at once."""
    cancel = threading.Event()
    cancel.set()
    return start(path, cancel_backfill=cancel)


def until(cond, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.02)
    return cond()


def test_feed_backfills_then_follows_an_append(tmp_path: Path) -> None:
    log = write_log(tmp_path / "run.jsonl", 3)
    got, stop, th = start(log)
    try:
        assert until(lambda: got.of(BackfillDone))
        opened = got.of(FeedOpened)
        assert [o.format_name for o in opened] == ["canonical"]
        assert sorted(got.calls()) == [0, 1, 2]
        append(log, line(record(3)))
        assert until(lambda: 3 in got.calls(), 10.0)  # the latency figure is bench_follow.py's
        assert got.calls()[3].usage.prompt_total == 1130 + 1064 * 3
    finally:
        stop.set()
        th.join(5)
    assert not th.is_alive()


def test_feed_half_written_line_is_read_once_complete(tmp_path: Path) -> None:
    log = write_log(tmp_path / "run.jsonl", 1)
    got, stop, th = start(log)
    try:
        assert until(lambda: got.of(BackfillDone))
        text = line(record(1))
        append(log, text[:50])
        time.sleep(0.6)
        assert 1 not in got.calls()
        assert not got.of(IssuesChanged)
        append(log, text[50:])
        assert until(lambda: 1 in got.calls(), 10.0)
    finally:
        stop.set()
        th.join(5)


def test_feed_coalesces_bursts_to_four_updates_a_second(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Calls read within 250 ms of the last update wait for the next one, all in one message.  The feed's clock
    is the test's (no wall time): a first burst 250 ms after the backfill's update goes out as soon as it is
    read; 95 more calls read while the clock stands still, and flushes asked 246 ms after that update, send
    nothing; at 250 ms one message carries all 95."""
    from types import SimpleNamespace

    from ctxwatch.engine import follow as follow_mod

    clock = [1000.0]
    monkeypatch.setattr(follow_mod, "time", SimpleNamespace(monotonic=lambda: clock[0]))
    log = tmp_path / "run.jsonl"
    log.write_text("")
    got, stop, th = start(log, fmt="canonical")
    follower = th.feed.follower  # type: ignore[attr-defined]
    flushes = [0]
    real_flush = follower.flush

    def counted(force: bool = False) -> None:
        flushes[0] += 1
        real_flush(force)

    follower.flush = counted
    try:
        assert until(lambda: got.of(BackfillDone))
        assert got.of(CallsChanged) == []  # (an empty log: no calls to send, its notes were sent at 1000.0)
        clock[0] += 0.25
        append(log, "".join(line(record(i, turn_words=5)) for i in range(5)))
        assert until(lambda: set(got.calls()) == set(range(5)), 10.0)  # 250 ms on: sent as soon as read
        for burst in range(1, 20):  # 19 more bursts of 5 calls, the clock standing still
            append(log, "".join(line(record(i, turn_words=5)) for i in range(burst * 5, burst * 5 + 5)))
        assert until(lambda: follower.run_ is not None and len(follower.run_.calls) == 100, 10.0)
        clock[0] += 0.24609375  # (63/256: the sums stay exact)
        asked = flushes[0]
        assert until(lambda: flushes[0] >= asked + 2, 10.0)  # (the feed's ticks asked twice more)
        assert len(got.of(CallsChanged)) == 1 and set(got.calls()) == set(range(5))
        clock[0] += 0.00390625  # 250 ms after the first burst's update
        assert until(lambda: len(got.calls()) == 100, 10.0)
        first, second = got.of(CallsChanged)
        assert [c.index for c in first.added] == list(range(5))
        assert [c.index for c in second.added] == list(range(5, 100))
    finally:
        stop.set()
        th.join(5)


def test_feed_last_shows_only_the_last_calls_of_the_backfill(tmp_path: Path) -> None:
    log = write_log(tmp_path / "run.jsonl", 6, turn_words=5)
    got, stop, th = start(log, last=2)
    try:
        assert until(lambda: got.of(BackfillDone))
        assert sorted(got.calls()) == [4, 5]
        append(log, line(record(6, turn_words=5)))
        assert until(lambda: 6 in got.calls(), 10.0)
    finally:
        stop.set()
        th.join(5)


def test_feed_cancelled_backfill_reads_the_last_part_and_follows(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Esc during the backfill skipped to the very end: the last calls (and their flags) stayed unread until
    new ones came.  Now the feed reads the file's last SKIP_KEEP_BYTES (here: the last two records' bytes)
    and follows from there; line numbers stay right and BackfillDone says where reading resumed."""
    from ctxwatch.engine import follow as follow_mod

    log = write_log(tmp_path / "run.jsonl", 5, turn_words=5)
    lines = log.read_bytes().splitlines(keepends=True)
    monkeypatch.setattr(follow_mod, "SKIP_KEEP_BYTES", len(lines[3]) + len(lines[4]))
    got, stop, th = start_skipping(log)
    try:
        assert until(lambda: got.of(BackfillDone))
        (done,) = got.of(BackfillDone)
        assert done.cancelled and done.resumed_line == 4
        assert until(lambda: len(got.calls()) == 2, 10.0)
        assert sorted(c.source.line for c in got.calls().values()) == [4, 5]  # (the file's own line numbers)
        append(log, line(record(5, turn_words=5)))
        assert until(lambda: len(got.calls()) == 3, 10.0)
        assert max(c.source.line for c in got.calls().values()) == 6
    finally:
        stop.set()
        th.join(5)


def test_feed_cancelled_mid_backfill_says_which_lines_it_skipped(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Esc after part of the backfill was read: the notice said only "read from line 9 on", though lines 1-2
    had been read, and nothing showed that the calls after #2 are not the file's #3.  BackfillDone now says
    the first line skipped and how many calls came before it.  Here the first slice holds 2 whole lines and
    half of the 3rd, and the kept end the last 2 of 10 lines (line lengths from the file itself)."""
    from ctxwatch.engine import follow as follow_mod

    log = write_log(tmp_path / "run.jsonl", 10, turn_words=40)
    lines = log.read_bytes().splitlines(keepends=True)
    assert len(lines) == 10
    monkeypatch.setattr(follow_mod, "SKIP_KEEP_BYTES", len(lines[8]) + len(lines[9]))
    cancel = threading.Event()
    real_step = follow_mod.Follower._step

    def step_then_esc(self, run, max_bytes=None):  # Esc pressed while the first slice is read
        n = real_step(self, run, max_bytes)
        cancel.set()
        return n

    monkeypatch.setattr(follow_mod.Follower, "_step", step_then_esc)
    got, stop, th = start(log, cancel_backfill=cancel, slice_bytes=len(lines[0]) + len(lines[1]) + len(lines[2]) // 2)
    try:
        assert until(lambda: got.of(BackfillDone))
        (done,) = got.of(BackfillDone)
        assert (done.cancelled, done.skipped_from, done.resumed_line, done.calls_before) == (True, 3, 9, 2)
        assert until(lambda: len(got.calls()) == 4, 10.0)
        assert sorted(c.source.line for c in got.calls().values()) == [1, 2, 9, 10]
    finally:
        stop.set()
        th.join(5)


def first_line_at_or_after(data: bytes, at: int) -> tuple[int, int]:
    """The first line start at or after byte ``at`` of ``data`` and its 1-based number, by splitting the lines
    (an independent reader for the skip tests)."""
    start = 0
    for number, text in enumerate(data.splitlines(keepends=True), 1):
        if start >= at:
            return start, number
        start += len(text)
    return start, data.count(b"\n") + 1


@pytest.mark.parametrize("keep_from", ["inside the third last line", "inside the last line"])
def test_feed_cancelled_backfill_with_lines_longer_than_the_scan_reads_every_call_after_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keep_from: str) -> None:
    """Esc on a log whose lines were longer than the 1 MiB scanned for the next line start (the demo's 5-7 MB
    lines) resumed at the end of the file: the calls in the kept bytes were never read, and the notice said
    "read from line 401 on".  Here the scan is 64 bytes and the records about 2 KB.  Keeping from inside the
    third last line reads the last two lines; keeping less than the last line (no line start in the kept
    bytes) reads the last line whole rather than nothing."""
    from ctxwatch.engine import follow as follow_mod
    from ctxwatch.source import lines as lines_mod

    log = write_log(tmp_path / "run.jsonl", 6, turn_words=40)
    data = log.read_bytes()
    lines = data.splitlines(keepends=True)
    assert min(len(x) for x in lines) > 10 * 64
    if keep_from == "inside the third last line":
        keep = len(lines[5]) + len(lines[4]) + len(lines[3]) // 2
        expected_offset, expected_line = first_line_at_or_after(data, len(data) - keep)
        assert expected_line == 5
    else:
        keep = len(lines[5]) // 2
        expected_offset, expected_line = len(data) - len(lines[5]), 6  # (the last line, kept whole)
    monkeypatch.setattr(lines_mod, "_TAIL_SCAN_BYTES", 64)
    monkeypatch.setattr(follow_mod, "SKIP_KEEP_BYTES", keep)
    assert skip_to_end(str(log), keep) == (expected_offset, expected_line)
    got, stop, th = start_skipping(log)
    try:
        assert until(lambda: got.of(BackfillDone))
        (done,) = got.of(BackfillDone)
        assert done.cancelled and done.resumed_line == expected_line
        assert until(lambda: len(got.calls()) == 7 - expected_line, 10.0)
        assert sorted(c.source.line for c in got.calls().values()) == list(range(expected_line, 7))
        append(log, line(record(6, turn_words=40)))
        assert until(lambda: 7 in {c.source.line for c in got.calls().values()}, 10.0)
    finally:
        stop.set()
        th.join(5)


def test_feed_cancelled_backfill_of_a_small_file_skips_nothing(tmp_path: Path) -> None:
    """A log smaller than SKIP_KEEP_BYTES: Esc skips nothing, every call is read."""
    log = write_log(tmp_path / "run.jsonl", 5, turn_words=5)
    got, stop, th = start_skipping(log)
    try:
        assert until(lambda: got.of(BackfillDone))
        assert got.of(BackfillDone)[0].resumed_line is None
        assert until(lambda: len(got.calls()) == 5, 10.0)
    finally:
        stop.set()
        th.join(5)


def test_feed_reports_unreadable_format(tmp_path: Path) -> None:
    log = tmp_path / "notes.jsonl"
    log.write_text("this is not json\n")
    got, stop, th = start(log)
    try:
        assert until(lambda: got.of(FeedFailed))
        assert "notes.jsonl" in got.of(FeedFailed)[0].message
    finally:
        stop.set()
        th.join(5)


def test_feed_counts_bad_lines(tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    log.write_text(line(record(0, turn_words=5)) + "{broken\n" + line(record(1, turn_words=5)))
    got, stop, th = start(log)
    try:
        assert until(lambda: got.of(BackfillDone))
        issues = [i for m in got.of(IssuesChanged) for i in m.issues]
        assert [(i.line, i.kind) for i in issues] == [(2, "invalid_json")]
        assert sorted(got.calls()) == [0, 1]
    finally:
        stop.set()
        th.join(5)


def test_skip_to_end_finds_last_line_start(tmp_path: Path) -> None:
    p = tmp_path / "f.jsonl"
    p.write_bytes(b"a\nbb\nccc\npartial")
    assert skip_to_end(str(p)) == (len(b"a\nbb\nccc\n"), 4)
    # keep 4 bytes before the last newline (offset 9 -> 5, the start of "ccc"); keep 5 -> 4, inside "bb":
    # the next line start, 5; keep 6 -> 3, inside "bb" too; keep 7 -> 2, the start of "bb"
    assert [skip_to_end(str(p), k) for k in (4, 5, 6, 7)] == [(5, 3), (5, 3), (5, 3), (2, 2)]
    assert skip_to_end(str(p), 100) == (0, 1)
    p.write_bytes(b"")
    assert skip_to_end(str(p)) == (0, 1)


def test_skip_to_end_scans_past_lines_longer_than_the_scan_size(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Line starts are found however far they are from where the search begins: a 4-byte scan over lines of
    10 to 30 bytes and a half-written last line of 40 (once, no line start within the scan meant the end of
    the file, or byte 0 when the half-written line was longer than the scan)."""
    from ctxwatch.source import lines as lines_mod

    monkeypatch.setattr(lines_mod, "_TAIL_SCAN_BYTES", 4)
    body = b"a" * 9 + b"\n" + b"b" * 29 + b"\n" + b"c" * 19 + b"\n"  # line starts 0, 10, 40; last newline at 59
    p = tmp_path / "f.jsonl"
    p.write_bytes(body + b"d" * 40)
    assert skip_to_end(str(p)) == (60, 4)
    # keep 25 -> 35, inside the "b" line: the next start, 40 (line 3); keep 50 -> 10, a line start (line 2);
    # keep 55 -> 5, inside the "a" line: 10; keep 60 -> 0
    assert [skip_to_end(str(p), k) for k in (25, 50, 55, 60)] == [(40, 3), (10, 2), (10, 2), (0, 1)]
    # keep 5 -> 55, inside the last complete line ("c", from 40): no line start in the kept bytes, so that
    # line is kept whole
    assert skip_to_end(str(p), 5) == (40, 3)
    p.write_bytes(b"e" * 40)  # no complete line at all
    assert skip_to_end(str(p)) == (0, 1)
    assert skip_to_end(str(p), 5) == (0, 1)


# --- safe text ---------------------------------------------------------------------------------------

def test_clean_escapes_controls_and_keeps_markup_literal() -> None:
    s = "[bold]x[/bold] [@click=app.quit]q[/] \x1b[31mred\x07\x00 \u202eevil \ud800"
    out = tx.clean(s, multiline=False)
    assert "\x1b" not in out and "\x07" not in out and "\x00" not in out and "\u202e" not in out
    assert "\\x1b[31mred\\x07\\x00" in out
    assert "[bold]x[/bold] [@click=app.quit]q[/]" in out
    assert "\\u202eevil" in out and "\ufffd" in out
    t = tx.literal(s)
    assert isinstance(t, Text) and t.spans == []  # nothing was interpreted as style
    assert "\n" not in tx.clean("a\nb", multiline=False)
    assert tx.clean("a\r\nb\tc") == "a\nb   c"


def test_a_long_path_is_cut_in_the_middle() -> None:
    path = "00466-spotter_4d5611e5/subagents/agent-acompact-e1f845.jsonl"  # 60 characters
    assert tx.literal(path, limit=21, middle=True).plain == "00466-spot…f845.jsonl"  # 10 + 1 + 10
    assert tx.literal(path, limit=21).plain == "00466-spotter_4d5611…"
    assert tx.literal(path, limit=60, middle=True).plain == path


def test_number_formats() -> None:
    assert tx.tokens(None) == "?" and tx.tokens(12036) == "12,036"
    assert tx.short_tokens(950) == "950" and tx.short_tokens(12_300) == "12k" and tx.short_tokens(1500) == "1.5k"
    assert tx.short_tokens(1_000_000) == "1M"
    assert tx.pct(1, 4) == "25.0%" and tx.pct(1, None) == "?"
    assert tx.marked(12036, Src.INFERRED) == "12,036~" and tx.marked(5, Src.ESTIMATED) == "5"
    assert short_model("claude-3-5-haiku-20241022") == "claude-3-5-haiku" and short_model("gpt-4o") == "gpt-4o"


def test_the_fleet_age_counts_whole_units() -> None:
    from ctxwatch.ui.screens.fleet import age_text

    assert [age_text(s) for s in (None, -5, 0, 42, 59, 60, 299, 3599, 3600, 3 * 3600 + 5, 86_399, 86_400,
                                  2 * 86_400 + 7 * 3600)] == [
        "?", "0 s", "0 s", "42 s", "59 s", "1 min", "4 min", "59 min", "1 h", "3 h", "23 h", "1 d", "2 d"]


# --- the bar -----------------------------------------------------------------------------------------

def _call(floor: int, history: int, reserve: int, window: int | None) -> Call:
    return Call(index=0, source=SourceRef("x", 1, 1, 0, 1), timestamp=None, model="m", provider=None, session=None,
                context="main", window=window, window_src=Src.CATALOG, system_tokens=None, tools_tokens=None,
                floor_tokens=floor, floor_src=Src.INFERRED, history_tokens=history, history_src=Src.ESTIMATED,
                reserve_tokens=reserve, reserve_src=Src.DEFAULT, prompt_estimated=None, usage=None,
                tokenizer="o200k_base", exact=False)


def test_bar_glyphs_are_proportional_and_marks_sit_on_thresholds() -> None:
    # Window 100,000 on 100 cells: 1 cell = 1,000 tokens.
    call = _call(10_000, 20_000, 15_000, 100_000)
    parts = bar_parts(call, Settings())
    top, bar = bar_line(parts, 100)
    plain = bar.plain
    assert len(plain) == 100
    # trigger 0.6*0.8*100k = 48k -> column 47; budget 60k -> column 59 (drawn as ┃).
    assert plain[47] == "┃" and plain[59] == "┃"
    assert top.plain[47] == "▼" and top.plain[59] == "▼"
    assert top.plain[46] == "T" and top.plain[58] == "B"
    assert plain.count("█") == 10 and plain.count("▓") == 20
    assert plain.count("░") == 15
    assert plain.count("·") == 55 - 2  # two free cells carry the marks
    lg = legend(call, parts, 200).plain
    assert "floor 10,000~ 10.0%" in lg and "history 20,000 20.0%" in lg and "free 55,000 55.0%" in lg


def test_bar_overflow_and_unknown_window() -> None:
    call = _call(50_000, 60_000, 10_000, 100_000)  # 120k in a 100k window
    parts = bar_parts(call, Settings())
    assert parts.free == -20_000 and parts.scale == 120_000
    top, bar = bar_line(parts, 120)
    assert "W" in top.plain and "·" not in bar.plain
    assert "over by 20,000" in legend(call, parts, 200).plain
    unknown = bar_parts(_call(1, 2, 3, None), Settings())
    assert unknown.free is None and unknown.trigger is None
    _top, bar = bar_line(unknown, 10)
    assert len(bar.plain) == 10 and "┃" not in bar.plain


def test_no_free_cell_when_free_is_zero_or_negative_at_any_width() -> None:
    """The eviction preview of the demo's call #60 (floor 3,735, history 33,156, reserve 2,000 in a 32,000
    window: free -6,891) drew ``░░░░░░░░░·`` at 182 cells: the parts rounded down to 181 cells and free took
    the one left.  A part of 0 or fewer tokens gets no cell, at any width; the bar is still ``width`` cells."""
    for free, window in ((-6_891, 32_000), (0, 38_891), (None, None)):
        parts = BarParts(3_735, 33_156, 2_000, free, 38_891, window, None, None)
        for width in range(10, 241):
            _top, bar = bar_line(parts, width)
            plain = bar.plain
            assert len(plain) == width and "·" not in plain and " " not in plain, (free, width, plain)
            # (each part within a cell of its share of the bar, by hand tokens * width / scale; the window's
            # edge ┃, drawn over an overflow, takes one more from the part under it)
            for glyph, tokens in (("█", 3_735), ("▓", 33_156), ("░", 2_000)):
                share = tokens * width / 38_891
                assert share - 2 < plain.count(glyph) < share + 1, (free, width, glyph, plain)
    # with free tokens the free part still ends the bar
    _top, bar = bar_line(BarParts(3_735, 20_000, 2_000, 6_265, 32_000, 32_000, None, None), 182)
    assert bar.plain.endswith("·" * round(6_265 * 182 / 32_000))


def test_tiny_parts_still_get_a_cell() -> None:
    parts = BarParts(5, 8, 1, 199_986, 200_000, 200_000, 96_000, 120_000)
    _top, bar = bar_line(parts, 50)
    assert bar.plain.count("█") == 1 and bar.plain.count("▓") == 1 and bar.plain.count("░") == 1


# --- the chart ---------------------------------------------------------------------------------------

def test_downsample_covers_everything_in_order() -> None:
    buckets = downsample(10_000, 100)
    assert len(buckets) == 100
    assert [i for b in buckets for i in b] == list(range(10_000))
    assert downsample(3, 100) == [range(0, 1), range(1, 2), range(2, 3)]


def test_series_keeps_each_buckets_peak_and_thresholds() -> None:
    calls = [_call(100, 10 * i, 50, 10_000) for i in range(1000)]
    for i, c in enumerate(calls):
        c.index = i
        c.timestamp = 1000.0 + 60 * i
    s = build_series(calls, Settings(), "index", 50)
    assert len(s.x) == 50
    assert s.total[-1] == 100 + 10 * 999  # the last bucket's peak is the last call
    assert (s.trigger, s.budget, s.limit) == (4800, 6000, 9950)
    t = build_series(calls, Settings(), "time", 50)
    assert t.x[-1] == 999.0  # minutes since the first call


def test_series_draws_a_prompt_of_unknown_split_apart_and_time_from_the_earliest_call() -> None:
    """A call whose floor and history are unknown (a log that starts mid-session) is its own series, never
    history (its whole prompt was drawn as history); in time mode the x axis starts at the earliest call and
    runs in time order (a batch's results are written out of order; it started at the first one written)."""
    from ctxwatch.model import Usage

    known = _call(1_000, 500, 100, 10_000)
    unknown = replace(_call(0, 0, 100, 10_000), index=1, floor_tokens=None, history_tokens=None,
                      floor_src=Src.UNKNOWN, history_src=Src.UNKNOWN, usage=Usage(prompt_total=7_000, output=5))
    s = build_series([unknown, known], Settings(), "index", 50)
    assert (s.floor, s.total, s.unsplit, s.reported) == ([0, 1_000], [0, 1_500], [7_000, 0], [7_000, None])
    a, b, c = (replace(_call(1_000, 100 * i, 100, 10_000), index=i) for i in range(3))
    a.timestamp, b.timestamp, c.timestamp = 1_000.0 + 120, 1_000.0, 1_000.0 + 60  # written in the order a, b, c
    t = build_series([a, b, c], Settings(), "time", 50)
    assert t.x == [0.0, 1.0, 2.0] and t.total == [1_100, 1_200, 1_000]  # b (t0), then c, then a
    assert t.xlabel.startswith("minutes since ")
    from ctxwatch.ui.widgets import chart_legend

    assert "? prompt, split unknown" in chart_legend(True).plain
    assert "split unknown" not in chart_legend().plain  # (named only when the chart has such prompts)


# --- watching: events, --poll, fall back, rotation ---------------------------------------------------

def silent_watcher(calls: list[str], ticks: list[int] | None = None):
    """A stand-in for ``watchfiles.watch`` that starts but never reports a change (an NFS or 9p mount).

    ``ticks`` gets one entry per (empty) batch yielded, so a test can wait until the watch is running.
    """

    def watch(*paths, stop_event, rust_timeout, **kw):  # type: ignore[no-untyped-def]
        calls.extend(paths)
        while not stop_event.is_set():
            stop_event.wait(rust_timeout / 1000)
            if ticks is not None:
                ticks.append(1)
            yield set()

    return watch


def test_feed_follows_with_file_events_not_sweeps(tmp_path: Path) -> None:
    log = write_log(tmp_path / "run.jsonl", 2, turn_words=5)
    # Sweeps once a minute: within this test, only a file event can make the feed read.
    got, stop, th = start(log, sweep_interval=60.0)
    try:
        assert until(lambda: got.of(BackfillDone))
        assert [(m.mode, m.message) for m in got.of(WatchChanged)] == [("events", None)]
        append(log, line(record(2, turn_words=5)))
        # Well before the first sweep (60 s), on a loaded machine too: no wall-clock bound beyond that.
        assert until(lambda: 2 in got.calls(), 30.0)
    finally:
        stop.set()
        th.join(2)
    assert not th.is_alive()  # the watch ends within the stop check (10 ms), not after a timeout


def test_feed_reads_what_was_appended_before_the_watch_started(tmp_path: Path) -> None:
    """Bytes written after the backfill but before watchfiles registers its watch send no event: the feed
    reads them when the watch starts, not at the next sweep (60 s here)."""
    import watchfiles

    log = write_log(tmp_path / "run.jsonl", 2, turn_words=5)

    def late_watch(*paths, **kw):  # type: ignore[no-untyped-def]
        append(log, line(record(2, turn_words=5)))  # watchfiles' watch is lazy: not registered yet
        yield from watchfiles.watch(*paths, **kw)

    got, stop, th = start(log, sweep_interval=60.0, watcher=late_watch)
    try:
        assert until(lambda: got.of(BackfillDone))
        assert until(lambda: 2 in got.calls(), 30.0)
    finally:
        stop.set()
        th.join(5)
    assert not th.is_alive()


def test_feed_poll_never_starts_a_watcher(tmp_path: Path) -> None:
    log = write_log(tmp_path / "run.jsonl", 2, turn_words=5)
    started: list[str] = []
    got, stop, th = start(log, poll=True, watcher=silent_watcher(started))
    try:
        assert until(lambda: got.of(BackfillDone))
        (mode,) = got.of(WatchChanged)
        assert mode.mode == "polling" and mode.interval == 0.25 and "--poll" in mode.message
        append(log, line(record(2, turn_words=5)))
        assert until(lambda: 2 in got.calls(), 10.0)
    finally:
        stop.set()
        th.join(2)
    assert started == [] and not th.is_alive()


def test_feed_falls_back_to_polling_when_events_stay_silent(tmp_path: Path) -> None:
    log = write_log(tmp_path / "run.jsonl", 2, turn_words=5)
    started: list[str] = []
    ticks: list[int] = []
    got, stop, th = start(log, watcher=silent_watcher(started, ticks), sweep_interval=0.1)
    try:
        assert until(lambda: got.of(BackfillDone))
        assert until(lambda: started == [str(tmp_path)])  # the parent directory is watched, not the file
        # Past the watch's first batch, where the feed reads what came before the watch (not a silent sweep).
        assert until(lambda: len(ticks) >= 2)
        # Two sweeps in a row find growth that no event announced: polling from then on.
        for i in (2, 3):
            append(log, line(record(i, turn_words=5)))
            assert until(lambda i=i: i in got.calls(), 10.0)
        assert until(lambda: len(got.of(WatchChanged)) == 2, 10.0)
        first, second = got.of(WatchChanged)
        assert first.mode == "events" and second.mode == "polling"
        assert second.message == "no file events received although the log grew; switched to polling every 0.25 s"
        append(log, line(record(4, turn_words=5)))
        assert until(lambda: 4 in got.calls(), 10.0)
    finally:
        stop.set()
        th.join(2)
    assert not th.is_alive()


def test_feed_falls_back_to_polling_when_watching_cannot_start(tmp_path: Path) -> None:
    log = write_log(tmp_path / "run.jsonl", 1, turn_words=5)

    def broken(*paths, **kw):  # type: ignore[no-untyped-def]
        raise OSError(28, "inotify watch limit reached")

    got, stop, th = start(log, watcher=broken)
    try:
        assert until(lambda: len(got.of(WatchChanged)) == 2)
        assert got.of(WatchChanged)[1].message.startswith("file watching could not start (OSError: ")
        append(log, line(record(1, turn_words=5)))
        assert until(lambda: 1 in got.calls(), 10.0)
    finally:
        stop.set()
        th.join(2)


def test_feed_rotation_loses_and_repeats_no_call(tmp_path: Path) -> None:
    log = write_log(tmp_path / "live.jsonl", 4, turn_words=5)
    got, stop, th = start(log)
    try:
        assert until(lambda: got.of(BackfillDone))
        append(log, line(record(4, turn_words=5)))
        os.rename(log, tmp_path / "live.1.jsonl")  # at once: call 4 is read from the old file if not yet read
        log.write_text(line(record(5, turn_words=5)) + line(record(6, turn_words=5)))
        assert until(lambda: len(got.calls()) == 7, 3.0)
        append(log, line(record(7, turn_words=5)))
        assert until(lambda: len(got.calls()) == 8, 3.0)
        time.sleep(0.3)
    finally:
        stop.set()
        th.join(2)
    resets = got.of(ResetSeen)
    assert resets and resets[0].reason == "rotated"
    added = [c.usage.prompt_total for m in got.of(CallsChanged) for c in m.added]
    assert added == [1130 + 1064 * i for i in range(8)]  # each call once, in order


def test_feed_reset_installs_the_new_readers_skip_filter(shared_logs: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Claude Code's skip filter is stateful (it records the parent links of the progress lines it skips):
    after a rotation, the new file's lines must go through the new reader's filter, never the old one's."""
    from ctxwatch.formats import claude_code

    seen: list[tuple[int, bytes]] = []  # (id of the reader whose filter saw the line, the line)
    real = claude_code.ClaudeCodeReader._skip

    def spy(self, data: bytes) -> bool:  # type: ignore[no-untyped-def]
        seen.append((id(self), data))
        return real(self, data)

    monkeypatch.setattr(claude_code.ClaudeCodeReader, "_skip", spy)
    lines = (shared_logs / "claude-code" / "spotter_4d5611e5_head200.jsonl").read_bytes().splitlines(keepends=True)
    first, second = b"".join(lines[:100]), b"".join(lines[100:])
    assert second.count(b'"type":"progress"') > 10
    log = tmp_path / "live.jsonl"
    log.write_bytes(first)
    got, stop, th = start(log)
    feed_readers: list[int] = []
    try:
        assert until(lambda: got.of(BackfillDone), 10)
        assert until(lambda: got.of(AnalysisChanged), 10)
        feed = th.feed  # type: ignore[attr-defined]
        old_reader = id(feed.run_.reader)
        os.rename(log, tmp_path / "live.1.jsonl")
        log.write_bytes(second)
        assert until(lambda: got.of(ResetSeen) and feed.tailer.offset == len(second), 10)
        time.sleep(0.3)
        feed_readers = [old_reader, id(feed.run_.reader)]
    finally:
        stop.set()
        th.join(5)
    new_lines = {ln.rstrip(b"\r\n") for ln in lines[100:]}
    new_seen = [(r, d) for r, d in seen if d in new_lines]
    assert new_seen, "the new file's lines went through a skip filter"
    assert feed_readers[0] != feed_readers[1]
    assert {r for r, _d in new_seen} == {feed_readers[1]}


def test_feed_first_backfill_slice_is_small(tmp_path: Path) -> None:
    # 2,000 calls of about 600 bytes: 1.2 MB.  The first update comes after 256 KiB (a few hundred calls to
    # account), not after a whole 4 MiB slice, so a big log's first screen does not wait for it.
    log = tmp_path / "run.jsonl"
    rows = []
    for i in range(2000):
        rec = record(0, turn_words=5)
        rec["response"]["id"] = f"resp-{i:04d}"  # one API call each
        rows.append(line(rec))
    log.write_text("".join(rows))
    got, stop, th = start(log, fmt="canonical")
    try:
        assert until(lambda: got.of(BackfillDone), 10)
    finally:
        stop.set()
        th.join(5)
    first = got.of(BackfillProgress)[0]
    assert first.done == 256 * 1024 and first.total == log.stat().st_size
    first_calls = got.of(CallsChanged)[0].added
    assert 0 < len(first_calls) <= 256 * 1024 // len(line(record(0, turn_words=5)))
    assert len(got.calls()) == 2000


def test_feed_backfill_never_reports_an_unread_line_as_a_truncated_tail(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # Backfill slices end inside lines.  On a loaded machine accounting one slice can take longer than the tailer's
    # idle grace (2 s), and the rest of the line, still unread, was then reported as a truncated tail ("1 bad
    # line" on a complete file).  A zero grace makes every pause "long"; the file is complete.
    import ctxwatch.engine.follow as follow_mod

    class Impatient(follow_mod.FileTailer):
        def __init__(self, *a, **kw) -> None:
            kw["idle_grace"] = 0.0
            super().__init__(*a, **kw)

    monkeypatch.setattr(follow_mod, "FileTailer", Impatient)
    log = write_log(tmp_path / "run.jsonl", 12)
    assert len(line(record(0))) > 1000  # every 1,000-byte slice ends inside a line
    got, stop, th = start(log, slice_bytes=1000)
    try:
        assert until(lambda: got.of(BackfillDone), 10)
        time.sleep(0.3)  # live polls after the backfill: the file ends with a newline, nothing is partial
    finally:
        stop.set()
        th.join(5)
    assert len(got.calls()) == 12
    assert [i for m in got.of(IssuesChanged) for i in m.issues] == []


def test_chart_legend_line_fits_its_width_with_the_longest_title_it_can() -> None:
    """The legend's line under the chart: the x axis title (with the thresholds too high to draw), then the
    marks; each shortens to fit instead of vanishing or running off the screen, and every threshold is named
    by its word (a label like ``B/W-R 19k`` was read by nobody)."""
    from ctxwatch.ui.widgets import chart_legend, x_titles

    above = [(61_440, "T", "trigger"), (76_800, "B", "budget"), (128_000, "W-R", "window-reserve")]
    full = "call # · above: trigger 61k, budget 77k, window-reserve 128k"
    short = "call # · above: trigger 61k budget 77k window-reserve 128k"
    lowest = ["call # · above: trigger 61k, budget 77k, …", "call # · above: trigger 61k, …"]
    assert x_titles("call #", above) == [full, short, *lowest, "call #"] and x_titles("call #", []) == ["call #"]
    assert x_titles("call #", above[:1]) == ["call # · above: trigger 61k", "call #"]
    marks = "█ floor  ▒ history  • reported  │ compaction   ─ trigger  ─ budget  ─ window-reserve"
    tight = "█ floor ▒ history • reported │ compaction  trigger budget window-reserve"
    shortest = "█ floor ▒ hist • reported │ compaction  trigger budget window-reserve"
    titles = x_titles("call #", above)
    assert chart_legend(False, 200, titles).plain == full + "  " + marks
    # (the lines drawn are named first: the title shortens before they go, then the longest title is taken)
    assert chart_legend(False, len(full) + 2 + len(shortest), titles).plain == full + "  " + shortest
    assert chart_legend(False, len(short) + 2 + len(shortest), titles).plain == short + "  " + shortest
    assert chart_legend(False, 78, titles).plain == "call #  " + shortest
    # (the lines drawn elsewhere, none here: the lowest threshold above the chart is named at 80 columns)
    bare = "█ floor ▒ hist • reported │ compaction"
    assert chart_legend(False, 78, titles, []).plain == (
        lowest[1] + "  █ floor  ▒ history  • reported  │ compaction")
    assert chart_legend(False, len(tight)).plain == tight  # (no title before the chart has data)
    # lines the chart does not draw (all above twice the peak) are not in the marks: the title names them
    assert chart_legend(False, len(short) + 2 + len(bare), titles, []).plain == short + "  " + bare
    # with the lines' values, each line is named with its own value while that fits, else by its name alone
    values = {"T": 167_000, "B": 177_000, "W-R": 180_000}
    valued = "█ floor ▒ history • reported │ compaction  trigger 167k budget 177k window-reserve 180k"
    assert chart_legend(False, 8 + len(valued), ["call #"], None, values).plain == "call #  " + valued
    assert chart_legend(False, 78, ["call #"], None, values).plain == "call #  " + shortest
    assert chart_legend(False, 200, ["call #"], None, values).plain == (
        "call #  █ floor  ▒ history  • reported  │ compaction   ─ trigger 167k  ─ budget 177k"
        "  ─ window-reserve 180k")
    assert chart_legend(False, 78, ["call #"], ["W-R"], {"W-R": 180_000}).plain.endswith(
        "  ─ window-reserve 180k")
    # (no letter standing for a word in any form, at any width)
    for width in (200, 120, 100, 78, 60):
        for form in (chart_legend(False, width, titles), chart_legend(False, width, ["call #"], None, values)):
            assert not any(w in form.plain.split() for w in ("T", "B", "W-R", "T─", "B─", "W-R─")), form.plain
    for width in (200, 120, 78, 60, 40, 20):
        for unsplit in (False, True):
            line = chart_legend(unsplit, width, titles).plain
            assert len(line) <= width and "█ floor" in line, (width, line)
            # (prompts whose split is unknown are drawn in "?": named only when the chart has some)
            assert ("? " in line) == unsplit or len(line) == width, line


def test_feed_withdraws_a_truncated_tail_once_the_line_is_completed(tmp_path: Path) -> None:
    """The dashboard's feed: a line left half-written past the idle grace (2 s) is reported; when its writer
    completes it, the call arrives and the issue is withdrawn (IssuesChanged.resolved), so the status line's
    bad-line count goes back to 0 (it stayed at 1)."""
    log = write_log(tmp_path / "run.jsonl", 1, turn_words=5)
    got, stop, th = start(log)
    try:
        assert until(lambda: got.of(BackfillDone))
        text = line(record(1, turn_words=5))
        append(log, text[:50])
        assert until(lambda: any(i.kind == "truncated_tail" for m in got.of(IssuesChanged) for i in m.issues), 15.0)
        append(log, text[50:])
        assert until(lambda: 1 in got.calls(), 10.0)
        assert until(lambda: any(m.resolved for m in got.of(IssuesChanged)), 10.0)
    finally:
        stop.set()
        th.join(5)
    (withdrawn,) = [i for m in got.of(IssuesChanged) for i in m.resolved]
    assert (withdrawn.kind, withdrawn.line) == ("truncated_tail", 2)


def test_a_short_run_is_plotted_in_seconds() -> None:
    """A run of under two minutes labelled its time axis 0.000, 0.044, 0.089... minutes: it is plotted in
    seconds (three calls 20 s apart: x = 0, 20, 40)."""
    calls = [replace(_call(1_000, 100 * i, 100, 10_000), index=i, timestamp=5_000.0 + 20 * i) for i in range(3)]
    t = build_series(calls, Settings(), "time", 50)
    assert t.x == [0.0, 20.0, 40.0] and t.xlabel.startswith("seconds since ")


def test_the_wall_time_line_drops_at_the_compaction_not_across_the_gap() -> None:
    """Over wall time the line went straight from the last call before a compaction (80k at minute 1) to the
    first after it (10k at minute 5), as if the context had shrunk over four minutes.  It now holds 80k until
    minute 5 and drops there: one extra point at the compaction's x with the previous values."""
    from ctxwatch.ui.widgets import stepped

    before = [replace(_call(20_000, 20_000 * i, 100, 200_000), index=i, timestamp=60.0 * i) for i in range(3)]
    after = replace(_call(5_000, 5_000, 100, 200_000), index=3, timestamp=300.0, compaction={"kind": "compacted"})
    t = build_series([*before, after], Settings(), "time", 50)
    assert t.x == [0.0, 1.0, 2.0, 5.0] and t.steps == [3] and t.compactions == [5.0]
    x, total, floor = stepped(t.x, t.steps, t.total, t.floor)
    assert x == [0.0, 1.0, 2.0, 5.0, 5.0]
    assert total == [20_000, 40_000, 60_000, 60_000, 10_000] and floor == [20_000] * 4 + [5_000]
    # a compaction at the first point has nothing to hold
    first = build_series([after, *before], Settings(), "index", 50)
    assert first.steps == []
    assert stepped([1.0, 2.0], [], [3, 4]) == ([1.0, 2.0], [3, 4])


def test_a_file_named_twice_or_by_a_link_is_one_session(tmp_path: Path) -> None:
    """``ctxwatch run.jsonl ./run.jsonl`` (or a link and its target) listed the file twice: "session 1/2" and
    the picker showing it twice.  report reads it once (a same_file note); so does the session list."""
    import os

    from ctxwatch.ui.feed import list_paths

    log = write_log(tmp_path / "run.jsonl", 2, turn_words=5)
    os.symlink("run.jsonl", tmp_path / "latest.jsonl")
    (tmp_path / "sub").mkdir()
    other = write_log(tmp_path / "sub" / "b.jsonl", 2, turn_words=5)
    same = [str(log), str(tmp_path / "." / "run.jsonl"), str(tmp_path / "latest.jsonl")]
    assert list_paths(same) == [str(log)]
    assert sorted(list_paths([*same, str(other)])) == sorted([str(log), str(other)])
