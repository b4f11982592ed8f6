"""Claude Code v2.0.x wrote each subagent's transcript as ``agent-<id>.jsonl`` beside the session file, tied to it
only by the ``sessionId`` inside.  ``report`` of the folder counted their calls in the session, while the
dashboard's ``c`` said "this log has one context" and the session's note said the transcripts were not among
the files read.  They are now the session's transcripts everywhere: ``c`` goes through them, and the note says
they are there."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_ui_common import listening, wait_for

from ctxwatch.formats.claude_code import subagent_files_of
from ctxwatch.ui.app import CtxwatchApp
from ctxwatch.ui.widgets.status import status_text

SESSION = "spotter_4d5611e5_full.jsonl"
AGENTS = ("spotter_4d5611e5_subagents_agent-a2898e3.jsonl", "spotter_4d5611e5_subagents_agent-acompact-e1f845.jsonl")


def folder_of(shared_logs: Path, tmp_path: Path) -> Path:
    """The session, its two transcripts, and a transcript of another session beside them."""
    folder = tmp_path / "proj"
    folder.mkdir()
    for name in (SESSION, *AGENTS, "spotter_subagent_parent.jsonl"):
        shutil.copy(shared_logs / "claude-code" / name, folder / name)
    other = (shared_logs / "claude-code" / AGENTS[0]).read_text().replace(
        "4d5611e5-241a-462a-8d15-5122611a9569", "00000000-0000-0000-0000-000000000000")
    (folder / "agent-other.jsonl").write_text(other)
    return folder


def status(app: CtxwatchApp) -> str:
    """The status line as drawn for the app's width."""
    return str(status_text(app.state, False, app.size.width))


def assistant_ids(path: Path) -> set[str]:
    """The message ids of a transcript's assistant lines (each one call), read line by line."""
    ids = set()
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        if rec.get("type") == "assistant":
            ids.add(rec["message"]["id"])
    return ids


def test_the_transcripts_beside_a_session_are_its_own(shared_logs: Path, tmp_path: Path) -> None:
    folder = folder_of(shared_logs, tmp_path)
    assert subagent_files_of(str(folder / SESSION)) == [str(folder / n) for n in sorted(AGENTS)]
    assert subagent_files_of(str(folder / "spotter_subagent_parent.jsonl")) == []  # (another session's id)
    assert subagent_files_of(str(folder / AGENTS[0])) == []  # (a transcript has none of its own)


async def test_c_goes_to_a_transcript_beside_the_session(shared_logs: Path, tmp_path: Path) -> None:
    folder = folder_of(shared_logs, tmp_path)
    app = CtxwatchApp(str(folder / SESSION))
    said = listening(app)
    async with app.run_test(size=(120, 40)) as pilot:
        assert await wait_for(pilot, lambda: app.loaded and len(app.calls) == len(assistant_ids(folder / SESSION)),
                              20.0)
        assert "spotter_4d5611e5_full.jsonl (+2 subagent transcripts: c)" in status(app)  # (120 columns)
        notes = [i.message for i in app.state.issues if i.kind == "subagent_calls_elsewhere"]
        assert notes and "but from 2 subagent transcripts beside it, not among the files read here" in notes[0]
        first = folder / sorted(AGENTS)[0]
        for _ in range(len(app.state.contexts) + 1):  # (the session's own contexts first, then its files)
            await pilot.press("c")
            if await wait_for(pilot, lambda: app.log_path == str(first), 2.0):
                break
        assert await wait_for(pilot, lambda: app.loaded and len(app.calls) == len(assistant_ids(first)), 20.0)
        assert said[-1] == f"context: subagent transcript {first.name} (file 2/3 of the session; c: next)"
        assert "subagent transcript" not in status(app)  # (a transcript has none of its own)


def layout(shared_logs: Path, tmp_path: Path, beside: bool) -> tuple[Path, list[Path]]:
    """The session and its two transcripts, laid out beside it (v2.0.x, with a cut copy of the session and
    another session's transcript there too) or under ``<session>/subagents/`` (v2.1.x): ``(session, [agents])``."""
    if beside:
        folder = folder_of(shared_logs, tmp_path)
        shutil.copy(shared_logs / "claude-code" / "spotter_4d5611e5_head200.jsonl", folder)  # (the same id)
        return folder / SESSION, [folder / n for n in sorted(AGENTS)]
    session = tmp_path / "proj" / "4d5611e5.jsonl"
    subs = tmp_path / "proj" / "4d5611e5" / "subagents"
    subs.mkdir(parents=True)
    shutil.copy(shared_logs / "claude-code" / SESSION, session)
    agents = [subs / ("agent-" + n.split("_agent-")[1]) for n in sorted(AGENTS)]
    for name, agent in zip(sorted(AGENTS), agents, strict=True):
        shutil.copy(shared_logs / "claude-code" / name, agent)
    return session, agents


@pytest.mark.parametrize("beside", [True, False], ids=["beside", "subagents-folder"])
async def test_c_goes_through_every_file_of_the_session_and_back(shared_logs: Path, tmp_path: Path,
                                                                 beside: bool) -> None:
    """On a subagent transcript beside its session, ``c`` said "this log has one context" and stayed there:
    only the ``subagents/`` layout led back to the session.  Both layouts now go on to the second transcript
    (file 3/3), then back to the session, and, opened on a transcript, on to the next one."""
    session, agents = layout(shared_logs, tmp_path, beside)
    for opened, order in ((session, [*agents, session]), (agents[0], [agents[1], session])):
        app = CtxwatchApp(str(opened))
        said = listening(app)
        async with app.run_test(size=(120, 40)) as pilot:
            assert await wait_for(pilot, lambda app=app, p=opened: app.loaded and len(app.calls)
                                  == len(assistant_ids(p)), 20.0)
            for _ in range(len(app.state.contexts) - 1):  # (the session's own contexts first)
                await pilot.press("c")
            for want in order:
                await pilot.press("c")
                assert await wait_for(pilot, lambda app=app, w=want: app.log_path == str(w) and app.loaded
                                      and len(app.calls) == len(assistant_ids(w)), 20.0), (want, said)
                k = [session, *agents].index(want)
                kind = "the session" if k == 0 else "subagent transcript"
                assert said[-1] == f"context: {kind} {want.name} (file {k + 1}/3 of the session; c: next)"


async def test_c_on_a_transcript_goes_back_to_the_copy_it_was_reached_from(shared_logs: Path,
                                                                           tmp_path: Path) -> None:
    """A cut copy of the session beside it has the session's id and so the same transcripts: ``c`` from that copy
    goes through them and back to the copy, not to the whole session."""
    session, agents = layout(shared_logs, tmp_path, True)
    copy = session.parent / "spotter_4d5611e5_head200.jsonl"
    app = CtxwatchApp(str(copy))
    async with app.run_test(size=(120, 40)) as pilot:
        assert await wait_for(pilot, lambda: app.loaded, 20.0)
        for _ in range(len(app.state.contexts) - 1):
            await pilot.press("c")
        for want in (*agents, copy):
            await pilot.press("c")
            assert await wait_for(pilot, lambda w=want: app.log_path == str(w) and app.loaded, 20.0), want


def test_the_picker_lists_a_transcript_beside_its_session_under_it(shared_logs: Path, tmp_path: Path) -> None:
    """The session picker listed a transcript beside its session (v2.0.x) as a session of its own, by its time;
    only one under ``<session>/subagents/`` went under its session.  A transcript whose ``sessionId`` (read here
    with plain json) names a session file listed, ``<sessionId>.jsonl`` as Claude Code names it, now goes right
    after that session too; one whose session is not listed stays where its time puts it."""
    from ctxwatch.ui.screens.names import grouped

    folder = tmp_path / "proj"
    folder.mkdir()
    src = shared_logs / "claude-code"
    sid = json.loads((src / AGENTS[0]).read_text().splitlines()[0])["sessionId"]
    session = folder / f"{sid}.jsonl"
    shutil.copy(src / SESSION, session)
    agent = folder / "agent-a2898e3.jsonl"
    shutil.copy(src / AGENTS[0], agent)
    stray = folder / "agent-other.jsonl"
    stray.write_text((src / AGENTS[0]).read_text().replace(sid, "00000000-0000-0000-0000-000000000000"))
    other = folder / "other-session.jsonl"
    shutil.copy(src / "spotter_short.jsonl", other)
    nested = tmp_path / "proj" / "other-session" / "subagents" / "agent-b1.jsonl"
    nested.parent.mkdir(parents=True)
    shutil.copy(src / AGENTS[1], nested)
    newest_first = [str(p) for p in (agent, nested, other, stray, session)]
    assert grouped(newest_first) == [str(p) for p in (other, nested, stray, session, agent)]


async def test_a_transcript_written_after_a_first_c_joins_the_cycle(shared_logs: Path, tmp_path: Path) -> None:
    """The files ``c`` went through were kept, so a subagent started after the first press (a live session
    keeps starting them) never joined: ``c`` went on between the session and the first transcript.  The files
    are listed again on each press: the new transcript is file 3/3."""
    session, agents = layout(shared_logs, tmp_path, False)
    later = agents[1].read_bytes()
    agents[1].unlink()
    app = CtxwatchApp(str(session))
    said = listening(app)
    async with app.run_test(size=(120, 40)) as pilot:
        assert await wait_for(pilot, lambda: app.loaded, 20.0)
        for _ in range(len(app.state.contexts) - 1):
            await pilot.press("c")
        for want in (agents[0], session):
            await pilot.press("c")
            assert await wait_for(pilot, lambda w=want: app.log_path == str(w) and app.loaded, 20.0), said
        assert said[-1] == f"context: the session {session.name} (file 1/2 of the session; c: next)"
        agents[1].write_bytes(later)
        for _ in range(len(app.state.contexts) - 1):
            await pilot.press("c")
        for want in agents:
            await pilot.press("c")
            assert await wait_for(pilot, lambda w=want: app.log_path == str(w) and app.loaded, 20.0), said
        assert said[-1] == f"context: subagent transcript {agents[1].name} (file 3/3 of the session; c: next)"
