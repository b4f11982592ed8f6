"""The session picker (``o``) on a Claude Code projects folder: ``<project-dir>/<session-uuid>.jsonl`` with
``<session-uuid>/subagents/agent-*.jsonl``, project folders named after the project's path
(``-home-alice-src-github-acme-billing-service``), so that every name starts the same way."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from test_ui_common import wait_for
from textual.widgets import Static

from ctxwatch.ui.app import CtxwatchApp
from ctxwatch.ui.screens import SessionPicker

BILLING = "-home-alice-src-github-acme-billing-service"
FRONTEND = "-home-alice-src-github-acme-frontend-app"
BILLING_SESSION = "3f2a9c1e-8b7d-4414-9ccd-011d40f70b2a"
FRONTEND_SESSION = "5c0375b4-2ae5-4f1b-8a6e-7d1e2f3a4b5c"


def projects(tmp_path: Path, shared_logs: Path) -> tuple[Path, Path, Path, Path]:
    """``(folder, billing, agent, frontend)``: a projects folder of two projects holding real Claude Code
    sessions: billing's (2026-02-10, newest: followed) with a subagent transcript, and frontend's (2025)."""
    cc = shared_logs / "claude-code"
    folder = tmp_path / "projects"
    billing = folder / BILLING / f"{BILLING_SESSION}.jsonl"
    agent = folder / BILLING / BILLING_SESSION / "subagents" / "agent-acompact-e1f845.jsonl"
    frontend = folder / FRONTEND / f"{FRONTEND_SESSION}.jsonl"
    for src, dst in ((cc / "spotter_short.jsonl", billing),
                     (cc / "spotter_4d5611e5_subagents_agent-acompact-e1f845.jsonl", agent),
                     (cc / "ccviewer_1af7fc5e_v1.0.98_init.jsonl", frontend)):
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
    return folder, billing, agent, frontend


async def open_picker(pilot: Any, app: CtxwatchApp, shown: Path) -> SessionPicker:
    """Wait until ``shown`` is read, press ``o`` and return the picker."""
    assert await wait_for(pilot, lambda: app.loaded and app.log_path == str(shown) and len(app.sessions) == 3, 15)
    await pilot.press("o")
    assert await wait_for(pilot, lambda: isinstance(app.screen, SessionPicker))
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, SessionPicker)
    return screen


def rows(screen: SessionPicker) -> list[str]:
    """The text of the picker's rows, in order."""
    from textual.widgets import OptionList

    ol = screen.query_one(OptionList)
    return [str(ol.get_option_at_index(i).prompt) for i in range(ol.option_count)]


async def test_the_picker_uses_a_wide_terminal(tmp_path: Path, shared_logs: Path) -> None:
    """The dialog stayed 100 columns wide on a 160-column terminal and cut every name; it is as wide as its
    rows, up to the terminal's width less a margin: at 160 columns the sessions' paths are whole."""
    from textual.containers import Vertical

    folder, billing, _agent, _frontend = projects(tmp_path, shared_logs)
    app = CtxwatchApp(str(folder))
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await open_picker(pilot, app, billing)
        box = screen.query_one(Vertical)
        assert 100 < box.outer_size.width <= 160 - 2 * 2
        shown = rows(screen)
        # (the folders' shared prefix is left out: the subagent transcript's path is too long beside it)
        assert any("billing-service" in r and f"{BILLING_SESSION}.jsonl" in r for r in shown)
        assert any("frontend-app" in r and f"{FRONTEND_SESSION}.jsonl" in r for r in shown)
        assert any(f"{BILLING_SESSION}/subagents/agent-acompact-e1f845.jsonl" in r for r in shown)


async def test_a_cut_name_keeps_the_project_and_the_session_start(tmp_path: Path, shared_logs: Path) -> None:
    """Names were cut in the middle, which took out the project's name and the session id's start
    (``-home-alice-src-github-acme-b…5-4414-9ccd-011d40f70b2a.jsonl``): the rows looked alike.  The folder
    and the session are two columns; the prefix all folders share and the session id's middle go first."""
    folder, billing, _agent, _frontend = projects(tmp_path, shared_logs)
    for width in (120, 80):
        app = CtxwatchApp(str(folder))
        async with app.run_test(size=(width, 24)) as pilot:
            screen = await open_picker(pilot, app, billing)
            shown = rows(screen)
            assert len(shown) == 4, shown
            sub = next(r for r in shown if tagged(r))
            session = next(r for r in shown if "billing-service" in r and r != sub)
            other = next(r for r in shown if "frontend-app" in r)
            assert BILLING_SESSION[:8] in session and FRONTEND_SESSION[:8] in other
            assert "billing-service" in sub and BILLING_SESSION[:8] in sub and "e1f845" in sub
            assert all("-home-alice" not in r for r in shown)  # (the prefix every project shares)
            assert all("2026-02-" in r or "2025-" in r for r in shown[1:])  # (and the date, at least)
            if width == 120:  # (the time of day and the size too)
                assert all(r.count(":") == 2 and "KiB" in r for r in shown[1:])


def test_fit_names_shortens_what_tells_rows_apart_least() -> None:
    """Worked by hand: two projects sharing ``-home-a-x-`` (10 characters), session files of 42."""
    from ctxwatch.ui.screens import fit_names

    a, b = "3f2a9c1e-8b7d-4414-9ccd-011d40f70b2a", "5c0375b4-2ae5-4f1b-8a6e-7d1e2f3a4b5c"
    pairs = [("-home-a-x-billing", f"{a}.jsonl"), ("-home-a-x-web", f"{b}.jsonl")]
    assert fit_names(pairs, 61) == (17, 42, pairs)  # 17 + 2 + 42: whole
    # 60: the shared prefix goes (…billing: 8), the names stay whole (8 + 2 + 42 = 52)
    assert fit_names(pairs, 60) == (8, 42, [("…billing", f"{a}.jsonl"), ("…web", f"{b}.jsonl")])
    # 50: 40 left for the sessions: without their shared extension (36)
    assert fit_names(pairs, 50) == (8, 36, [("…billing", a), ("…web", b)])
    # 25: 15 left: the ids' middles go (8 + … + 4 = 13)
    assert fit_names(pairs, 25) == (8, 13, [("…billing", "3f2a9c1e…0b2a"), ("…web", "5c0375b4…4b5c")])
    # 19: 9 left: the first 8 characters of each id
    assert fit_names(pairs, 19) == (8, 9, [("…billing", "3f2a9c1e…"), ("…web", "5c0375b4…")])
    assert fit_names(pairs, 18, strict=True) is None
    # A folder opened on one project: no folder column.  A subagent transcript loses its subagents/ folder
    # (50 without it), then its id's middle (13 + 1 + 13 = 27), then all of its id but its start (23).  An id's
    # middle goes only as far as the room needs, the id cut where one of its groups ends: at 35, the session
    # keeps 23 of its id (23 + 1 + 4 = 28) and the transcript 13 (13 + 1 + 4 + 14 = 32; 18 would be 37).
    sub = [("", f"{a}.jsonl"), ("", f"{a}/subagents/agent-a2898e3.jsonl")]
    assert fit_names(sub, 50) == (0, 50, [("", a), ("", f"{a}/agent-a2898e3")])
    assert fit_names(sub, 35) == (0, 32, [("", "3f2a9c1e-8b7d-4414-9ccd…0b2a"),
                                          ("", "3f2a9c1e-8b7d…0b2a/agent-a2898e3")])
    assert fit_names(sub, 30) == (0, 28, [("", "3f2a9c1e-8b7d-4414-9ccd…0b2a"), ("", "3f2a9c1e…0b2a/agent-a2898e3")])
    # 25: the session keeps 18 (18 + 1 + 4 = 23); the transcript's 27 with 8 does not fit: 8 of its id, no end
    assert fit_names(sub, 25) == (0, 23, [("", "3f2a9c1e-8b7d-4414…0b2a"), ("", "3f2a9c1e…/agent-a2898e3")])


async def test_typing_filters_the_picker_and_enter_picks(tmp_path: Path, shared_logs: Path) -> None:
    """A big projects folder (the generated one: 2,443 files) was 70 pages to scroll: typing in the picker
    filters its rows by their path (relative to the folder, ignoring case), and Enter picks the highlighted
    one."""
    from textual.widgets import Input

    folder, billing, _agent, frontend = projects(tmp_path, shared_logs)
    app = CtxwatchApp(str(folder))
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await open_picker(pilot, app, billing)
        await pilot.press(*"FRONT")
        await pilot.pause()
        box = screen.query_one(Input)
        assert box.has_focus and box.value == "FRONT" and screen.filter_text == "FRONT"
        shown = rows(screen)
        assert len(shown) == 1 and "frontend-app" in shown[0] and FRONTEND_SESSION in shown[0]
        assert "1 of 3 match" in str(screen.query_one("#picker-title", Static).render())
        await pilot.press("enter")
        assert await wait_for(pilot, lambda: app.log_path == str(frontend) and app.loaded)
        assert not isinstance(app.screen, SessionPicker) and not app.auto_session


async def test_the_picker_filter_keys(tmp_path: Path, shared_logs: Path) -> None:
    """``/`` opens the filter box without typing itself; ↑ ↓ move in the list while typing; j and k still move
    in the list; a filter that keeps nothing says so; Escape clears the filter, then closes."""
    from textual.widgets import Input, OptionList

    folder, billing, agent, _frontend = projects(tmp_path, shared_logs)
    app = CtxwatchApp(str(folder))
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await open_picker(pilot, app, billing)
        ol, box = screen.query_one(OptionList), screen.query_one(Input)
        await pilot.press("j")
        assert ol.highlighted == 1 and box.value == "" and ol.has_focus
        await pilot.press("k")
        assert ol.highlighted == 0
        await pilot.press("slash")
        assert box.has_focus and box.value == ""
        await pilot.press(*"xyz")
        await pilot.pause()
        assert rows(screen) == ["  no session's path holds xyz (Esc clears the filter)"]
        await pilot.press("enter")  # (nothing to pick)
        assert app.screen is screen
        await pilot.press("escape")
        await pilot.pause()
        assert box.value == "" and ol.has_focus and len(rows(screen)) == 4 and app.screen is screen
        await pilot.press(*"billing")  # (the session, then its subagent transcript grouped under it)
        await pilot.pause()
        assert box.value == "billing" and len(rows(screen)) == 2 and ol.highlighted == 0
        assert tagged(rows(screen)[1]) and not tagged(rows(screen)[0])
        await pilot.press("down")
        assert ol.highlighted == 1 and box.has_focus
        await pilot.press("enter")
        assert await wait_for(pilot, lambda: app.log_path == str(agent))
        await pilot.press("o")
        assert await wait_for(pilot, lambda: isinstance(app.screen, SessionPicker))
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, SessionPicker) and app.log_path == str(agent)


async def test_the_cursor_starts_on_the_current_choice(tmp_path: Path) -> None:
    """The cursor started on the first row whatever was shown: after picking a session on page 3 of a folder,
    ``o`` put the cursor pages away from it.  It starts on the current choice (marked ●), in sight: the session
    picked, or "follow the newest" in automatic mode."""
    from test_ui_common import write_log
    from textual.widgets import OptionList

    folder = tmp_path / "runs"
    folder.mkdir()
    for i in range(60):  # run-59 newest; run-00 the oldest, row 60
        write_log(folder / f"run-{i:02}.jsonl", 1, turn_words=5, t0=1_700_000_000 + 100 * i)
    app = CtxwatchApp(str(folder))
    async with app.run_test(size=(100, 24)) as pilot:
        assert await wait_for(pilot, lambda: app.loaded and len(app.sessions) == 60, 15)
        await pilot.press("o")
        assert await wait_for(pilot, lambda: isinstance(app.screen, SessionPicker))
        await pilot.pause()
        assert app.screen.query_one(OptionList).highlighted == 0  # (automatic: "follow the newest")
        await pilot.press(*"run-00", "enter")
        assert await wait_for(pilot, lambda: app.log_path == str(folder / "run-00.jsonl") and app.loaded)
        await pilot.press("o")
        assert await wait_for(pilot, lambda: isinstance(app.screen, SessionPicker))
        await pilot.pause()
        ol = app.screen.query_one(OptionList)
        assert ol.highlighted == 60 and ol.get_option_at_index(60).id == "f59"
        assert str(ol.get_option_at_index(60).prompt).startswith("● run-00")
        top, rows_shown = ol.scroll_offset.y, ol.scrollable_content_region.height
        assert top <= 60 < top + rows_shown
        await pilot.press(*"run-1", "escape")  # (a filter cleared: back on the current choice)
        await pilot.pause()
        assert ol.highlighted == 60


async def test_keys_in_a_burst_and_a_paste_reach_the_picker_filter(tmp_path: Path, shared_logs: Path) -> None:
    """Typed straight into the list in a burst, the keys after the first still reached the list (the box took
    the focus in between): "proj13" became "pro13" (j moved the cursor), and a pasted session id did nothing.
    A key that reaches the list while a filter is being typed goes on with it, j and k included, and a paste
    goes to the filter.  (The burst is played here by giving the list the focus back after each key.)"""
    from textual import events
    from textual.widgets import Input, OptionList

    folder, billing, _agent, _frontend = projects(tmp_path, shared_logs)
    app = CtxwatchApp(str(folder))
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await open_picker(pilot, app, billing)
        ol, box = screen.query_one(OptionList), screen.query_one(Input)
        for key in "fronj":
            ol.focus()
            await pilot.press(key)
        assert box.value == "fronj"
        ol.focus()
        await pilot.press("k")
        assert box.value == "fronjk"
        await pilot.press("escape")  # (clears the filter; the list has the focus again)
        await pilot.pause()
        assert box.value == "" and ol.has_focus
        ol.post_message(events.Paste(FRONTEND_SESSION[:8]))
        await pilot.pause()
        assert box.value == FRONTEND_SESSION[:8] and box.has_focus
        assert len(rows(screen)) == 1 and FRONTEND_SESSION in rows(screen)[0]


def tagged(row: str) -> bool:
    """True when the picker's ``row`` is tagged ``subagent`` (after its session's name, before the date)."""
    return " subagent  " in row


def tiny_log(path: Path, size: int) -> Path:
    """A canonical log of one call, ``size`` bytes long (its user message padded to that)."""
    import json

    def text(pad: int) -> str:
        rec = {"timestamp": 1_700_000_000, "request": {"model": "gpt-4o", "messages": [
            {"role": "user", "content": "x" * pad}]}, "response": {"choices": [
                {"message": {"role": "assistant", "content": "ok"}}], "usage": {"prompt_tokens": 8,
                                                                               "completion_tokens": 1}}}
        return json.dumps(rec) + "\n"

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text(size - len(text(0))), encoding="utf-8")
    assert path.stat().st_size == size
    return path


async def picker_rows(folder: Path, width: int, sessions: int) -> list[str]:
    """The picker's rows for ``folder`` on a ``width``-column terminal, once its ``sessions`` files are listed."""
    app = CtxwatchApp(str(folder))
    async with app.run_test(size=(width, 30)) as pilot:
        assert await wait_for(pilot, lambda: app.loaded and len(app.sessions) == sessions, 15)
        await pilot.press("o")
        assert await wait_for(pilot, lambda: isinstance(app.screen, SessionPicker))
        await pilot.pause()
        assert isinstance(app.screen, SessionPicker)
        return rows(app.screen)[1:]


async def test_a_file_under_a_kib_shows_its_bytes(tmp_path: Path) -> None:
    """A 400-byte session read ``0 KiB``, as if it were empty: under 1 KiB the size is in bytes."""
    from test_ui_common import write_log

    tiny_log(tmp_path / "runs" / "tiny.jsonl", 400)
    big = write_log(tmp_path / "runs" / "big.jsonl", 3)
    kib = round(big.stat().st_size / 1024)
    shown = await picker_rows(tmp_path / "runs", 120, 2)
    tiny = next(r for r in shown if "tiny" in r)
    assert tiny.endswith("  400 B") and "KiB" not in tiny
    assert next(r for r in shown if "big" in r).endswith(f"  {kib} KiB")


def test_common_cut_leaves_out_only_what_saves_room() -> None:
    """Worked by hand: the prefix every folder name shares, up to a separator, when leaving it out for a ``…``
    saves a column and leaves something of every name."""
    from ctxwatch.ui.screens import common_cut

    assert common_cut(["-home-a-x-billing", "-home-a-x-web"]) == 10  # (-home-a-x-)
    assert common_cut(["-home-user", "-home-user-proj"]) == 6  # (-home-: …user, …user-proj)
    assert common_cut(["-home-alice-x", "-srv-y"]) == 0  # (- alone: its … takes the same column)
    assert common_cut(["-", "-home-u-proj"]) == 0  # (nothing of - would be left)
    assert common_cut(["-home-u-proj", "", "-home-u-proj"]) == 0  # (one name)


async def test_project_folders_keep_their_leading_dash(tmp_path: Path, shared_logs: Path) -> None:
    """Claude Code names a project's folder after its path, ``/`` written ``-``: ``/`` itself is ``-`` and
    ``/home/u/proj`` is ``-home-u-proj``.  The ``-`` all of them share was left out as their common prefix and
    a ``…`` put in its place, which saved no column: ``-`` was shown as ``…`` and the other as
    ``…home-u-proj``.  Cut only where the cut saves room, they show as they are."""
    cc = shared_logs / "claude-code"
    folder = tmp_path / "projects"
    for project, session, src in (("-", BILLING_SESSION, "spotter_short.jsonl"),
                                  ("-home-u-proj", FRONTEND_SESSION, "ccviewer_1af7fc5e_v1.0.98_init.jsonl")):
        (folder / project).mkdir(parents=True)
        shutil.copyfile(cc / src, folder / project / f"{session}.jsonl")
    for width in (160, 90, 80):
        shown = await picker_rows(folder, width, 2)
        assert sorted(r.split()[0] for r in shown) == ["-", "-home-u-proj"], (width, shown)


async def test_a_subagent_transcript_keeps_its_session_id_where_it_has_room(tmp_path: Path,
                                                                            shared_logs: Path) -> None:
    """At 160 columns, beside a long project name, a subagent transcript's session id was cut in the middle
    (``3f2a9c1e…0b2a/subagents/agent-acompact-e1f845``) and the rest of the row left empty, although the whole
    id had room once the ``subagents/`` folder, which every transcript has (and the row's tag says), was left
    out.  That folder goes first now."""
    cc = shared_logs / "claude-code"
    folder = tmp_path / "projects"
    project = folder / "-home-alice-src-github-acme-billing-service-backend-api"
    agent = project / BILLING_SESSION / "subagents" / "agent-acompact-e1f845.jsonl"
    notes = folder / "-home-alice-notes" / f"{FRONTEND_SESSION}.jsonl"
    for src, dst in ((cc / "spotter_short.jsonl", project / f"{BILLING_SESSION}.jsonl"),
                     (cc / "spotter_4d5611e5_subagents_agent-acompact-e1f845.jsonl", agent),
                     (cc / "ccviewer_1af7fc5e_v1.0.98_init.jsonl", notes)):
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
    shown = await picker_rows(folder, 160, 3)
    sub = next(r for r in shown if tagged(r))
    assert f"{BILLING_SESSION}/agent-acompact-e1f845 " in sub, shown
    assert all("2026-02-" in r or "2025-" in r for r in shown) and all(r.count(":") == 2 for r in shown)


async def test_a_cut_session_id_keeps_what_the_room_allows(tmp_path: Path, shared_logs: Path) -> None:
    """A session id that does not fit whole lost all but its first 8 and last 4 characters, however much room
    the column had: at 160 columns beside a 55-column project name, ``3f2a9c1e…0b2a/agent-acompact-e1f845``
    (35 of a 50-column room) and a dialog narrower than the screen.  The id now loses only what the room needs,
    cut where a group of it ends.  By hand: 160 - 2 x 2 (margins) - 8 (frame) - 2 (marker) = 146 for a row;
    less the subagent tag (10), a gap (2), the time (19), a gap (2) and the size (``30 KiB``: 6) = 107 for the
    names; less the project (55, whole: the project ``-`` shares no prefix worth leaving out) and a gap = 50.
    Without its id the transcript's name is 22 (``/agent-acompact-e1f845``): 23 of the id + ``…`` + 4 = 28."""
    cc = shared_logs / "claude-code"
    folder = tmp_path / "projects"
    project = folder / "-home-alice-src-github-acme-billing-service-backend-api"
    agent = project / BILLING_SESSION / "subagents" / "agent-acompact-e1f845.jsonl"
    for src, dst in ((cc / "spotter_short.jsonl", project / f"{BILLING_SESSION}.jsonl"),
                     (cc / "spotter_4d5611e5_subagents_agent-acompact-e1f845.jsonl", agent),
                     (cc / "ccviewer_1af7fc5e_v1.0.98_init.jsonl", folder / "-" / f"{FRONTEND_SESSION}.jsonl")):
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
    shown = await picker_rows(folder, 160, 3)
    sub = next(r for r in shown if tagged(r))
    assert sub.split()[1] == "3f2a9c1e-8b7d-4414-9ccd…0b2a/agent-acompact-e1f845", shown
    assert {r.split()[1] for r in shown if r != sub} == {BILLING_SESSION, FRONTEND_SESSION}


async def test_a_session_with_no_call_says_its_time_is_a_records(shared_logs: Path, tmp_path: Path) -> None:
    """A Codex rollout of session_meta only has no call (report: calls=0), yet the picker listed its record's
    time under "last call" as if it were one.  It says "(last record)"; a rollout with calls does not."""
    from textual.widgets import OptionList

    src = shared_logs / "codex-rollout"
    for name in ("codex0.63.0_session_meta_only.jsonl", "rollout-2025-11-17T15-30-28-019a93b9_codex0.58.0.jsonl"):
        shutil.copy(src / name, tmp_path / name)
    app = CtxwatchApp(str(tmp_path))
    async with app.run_test(size=(160, 36)) as pilot:
        assert await wait_for(pilot, lambda: app.loaded)
        await pilot.press("o")
        assert await wait_for(pilot, lambda: isinstance(app.screen, SessionPicker))
        ol = app.screen.query_one(OptionList)
        rows = [str(ol.get_option_at_index(i).prompt) for i in range(ol.option_count)]
        meta = next(r for r in rows if "session_meta_only" in r)
        full = next(r for r in rows if "codex0.58.0" in r)
        assert "(last record)" in meta and "(last record)" not in full and "(file time)" not in full


async def test_the_picker_describes_each_session_and_groups_subagents(tmp_path: Path, shared_logs: Path) -> None:
    """Under the list, the highlighted session's calls, peak occupancy, model and first user prompt (read by
    the picker's worker); a subagent transcript is listed under its session.  The billing session
    (spotter_short): one call reporting 3 + 13,835 + 11,515 = 25,353 prompt tokens of Claude's 200,000, and
    its first prompt, read with plain json."""
    import json

    from textual.widgets import OptionList

    folder, billing, agent, frontend = projects(tmp_path, shared_logs)
    lines = [json.loads(x) for x in billing.read_text().splitlines()]
    first = next(d["message"]["content"] for d in lines if d.get("type") == "user"
                 and isinstance(d["message"]["content"], str))
    u = next(d["message"]["usage"] for d in lines if d.get("type") == "assistant")
    prompt = u["input_tokens"] + u["cache_creation_input_tokens"] + u["cache_read_input_tokens"]
    app = CtxwatchApp(str(folder))
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await open_picker(pilot, app, billing)
        assert screen.files == [str(billing), str(agent), str(frontend)]
        assert tagged(rows(screen)[2])
        assert await wait_for(pilot, lambda: len(screen.infos) == 3, 15)
        await pilot.press("j")  # (the billing session)
        await pilot.pause()
        assert screen.query_one(OptionList).highlighted == 1
        info = screen.infos[str(billing)]
        assert info is not None and (info.calls, info.peak, info.prompt) == (1, prompt / 200_000, first)
        text = str(screen.query_one("#picker-info", Static).render())
        assert text.split("\n")[0] == f"1 call · peak {100 * prompt / 200_000:.1f}% of 200,000 · claude-opus-4-6"
        assert text.split("\n")[1] == f"“{first}”"
        assert app.state.session_info[str(billing)] == info  # (kept for the next opening)


async def test_c_cycles_a_sessions_subagent_files(tmp_path: Path, shared_logs: Path) -> None:
    """A Claude Code session opened alone, its subagents' transcripts in ``<session>/subagents/``: ``c`` goes on
    from the log's own contexts to each of those files, then back to the session."""
    cc = shared_logs / "claude-code"
    session = tmp_path / "proj" / "4d5611e5.jsonl"
    subs = session.parent / "4d5611e5" / "subagents"
    subs.mkdir(parents=True)
    shutil.copyfile(cc / "spotter_4d5611e5_full.jsonl", session)
    agents = [subs / "agent-a2898e3.jsonl", subs / "agent-acompact-e1f845.jsonl"]
    shutil.copyfile(cc / "spotter_4d5611e5_subagents_agent-a2898e3.jsonl", agents[0])
    shutil.copyfile(cc / "spotter_4d5611e5_subagents_agent-acompact-e1f845.jsonl", agents[1])
    app = CtxwatchApp(str(session))
    async with app.run_test(size=(100, 30)) as pilot:
        assert await wait_for(pilot, lambda: app.loaded and len(app.calls) == 139, 15)
        assert app.contexts == ["main"]
        for want in (*agents, session):
            await pilot.press("c")
            assert await wait_for(pilot, lambda w=want: app.log_path == str(w) and app.loaded, 15)
        assert len(app.calls) == 139 and not app.auto_session


async def test_a_time_that_is_no_calls_is_tagged_after_its_name_not_beside_every_date(shared_logs: Path,
                                                                                      tmp_path: Path) -> None:
    """At 80 columns, the ``(last record)`` of one session widened the time column of every row by 14 cells,
    which the names and the sizes gave up (``rollout-2025-11-17T1…19a93b9_codex0.58.0  2025-11-17``, no
    size).  The note is now a tag after the session's own name, as ``subagent`` is, in room a short name
    leaves in its column: the sizes are back and the long name keeps more."""
    src = shared_logs / "codex-rollout"
    names = ("codex0.63.0_session_meta_only.jsonl", "rollout-2025-11-17T15-30-28-019a93b9_codex0.58.0.jsonl")
    for name in names:
        shutil.copy(src / name, tmp_path / name)
    got = await picker_rows(tmp_path, 80, 2)
    meta = next(r for r in got if "session_meta_only" in r)
    full = next(r for r in got if "codex0.58.0" in r)
    # (by hand: the files' sizes in KiB, as the picker rounds them)
    kib = [f"{round((tmp_path / n).stat().st_size / 1024):,} KiB" for n in names]
    assert meta.split("  ")[1:] == ["codex0.63.0_session_meta_only (last record)", "", "2025-11-23", "", kib[0]] \
        or meta.split() == ["codex0.63.0_session_meta_only", "(last record)", "2025-11-23", *kib[0].split()], meta
    assert full.rstrip().endswith(kib[1]) and "…" in full
    shown = full.split()[0]  # (cut in the middle, to more than the 40 cells it kept before)
    assert len(shown) > 40 and names[1].startswith(shown.split("…")[0]) and shown.split("…")[1] in names[1]
    assert full.rindex("2025-11-17") == meta.rindex("2025-11-23")  # (the dates still line up)


async def test_the_filter_hint_fits_the_box_and_says_how_to_clear(tmp_path: Path, shared_logs: Path) -> None:
    """At a narrow width the filter box's hint was cut at its edge ("… file name (Esc"); the longest hint that
    fits is shown, whole, at every width, and again when the terminal is resized."""
    from textual.widgets import Input

    folder, billing, _agent, _frontend = projects(tmp_path, shared_logs)
    app = CtxwatchApp(str(folder))
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await open_picker(pilot, app, billing)
        box = screen.query_one("#picker-filter", Input)
        hints = []
        for width in (160, 60, 44, 30):
            await pilot.resize_terminal(width, 24)
            await pilot.pause()
            room = box.content_region.width
            hints.append(box.placeholder)
            assert 0 < len(box.placeholder) < room, (width, box.placeholder, room)
        assert hints[0] == "type or / to filter by folder or file name (Esc clears)"
        assert all(h.endswith("(Esc clears)") for h in hints[:3])
        assert len(set(hints)) >= 3
