"""Following a folder's sessions (:class:`ctxwatch.engine.folder_scan.FolderScan`) at a cost that does not grow with the
number of files while nothing happens: the dashboard listed the whole tree (a walk and five stats a file)
every 2 s, ~47 CPU ticks per 10 s idle on the generated 2,443-file projects folder against 5 for one file.

The clock is a fake (no test waits on wall time); stats are counted by wrapping ``os.stat``."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_ui_common import append, line, record, wait_for, write_log

from ctxwatch.engine import folder_scan as feed
from ctxwatch.ui.app import CtxwatchApp
from ctxwatch.ui.feed import HOT_FILES, FolderScan

#: Call timestamps: session k of a tree starts at T + 100 k (newer sessions have higher k).
T = 1_700_000_000


def tree(root: Path, n: int, projects: int = 4) -> list[Path]:
    """``n`` one-call sessions spread over ``projects`` project folders, session ``k`` at ``T + 100 k``."""
    out = []
    for k in range(n):
        project = root / f"-home-u-proj{k % projects}"
        project.mkdir(parents=True, exist_ok=True)
        out.append(write_log(project / f"s{k:04}.jsonl", 1, turn_words=1, t0=T + 100 * k))
    return out


class Clock:
    """A settable monotonic clock, in seconds."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def count_stats(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every path ``os.stat`` is called with from now on (``os.path.getsize``, ``isdir``... included)."""
    seen: list[str] = []
    real = os.stat

    def counting(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        seen.append(os.fspath(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", counting)
    return seen


@pytest.mark.parametrize("poll", [True, False])
def test_an_idle_check_stats_the_same_few_paths_however_many_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   poll: bool) -> None:
    """Four idle checks, 2 s apart: no full listing, and the paths stat'ed per check are the newest
    :data:`HOT_FILES` files and their folders (and the folder opened), for 24 files as for 240."""
    per_check = {}
    for n in (24, 240):
        files = tree(tmp_path / f"t{n}", n)
        clock = Clock()
        scan = FolderScan([str(tmp_path / f"t{n}")], poll=poll, clock=clock)
        scan.mode = "polling" if poll else "events"
        assert scan.step()  # (the first listing)
        assert scan.full_scans == 1 and scan.files == [str(f) for f in reversed(files)]
        with monkeypatch.context() as m:
            stats = count_stats(m)
            for k in range(1, 5):
                clock.now = 2.0 * k
                assert not scan.step()
        assert scan.full_scans == 1
        newest = {str(f) for f in files[-HOT_FILES:]}
        folders = {str(tmp_path / f"t{n}")} | {os.path.dirname(f) for f in newest}
        assert set(stats) == newest | folders
        per_check[n] = len(stats) / 4
    assert per_check[24] == per_check[240] == HOT_FILES + 1 + 4


def test_events_rescan_for_a_new_session_and_resort_for_a_grown_one(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """With file events: a new log is listed at once (one full listing); a change to a listed log that is not
    among the newest re-sorts the list by that file alone (nothing else stat'ed, no listing)."""
    from watchfiles import Change

    files = tree(tmp_path / "p", 40)
    clock = Clock()
    scan = FolderScan([str(tmp_path / "p")], clock=clock)
    scan.mode = "events"
    scan.step()
    clock.now = 5.0
    (tmp_path / "p" / "-home-u-proj9").mkdir()
    new = write_log(tmp_path / "p" / "-home-u-proj9" / "new.jsonl", 1, turn_words=1, t0=T + 100 * 50)
    assert scan.step({(Change.added, str(new))})
    assert scan.full_scans == 2 and scan.files[0] == str(new) and len(scan.files) == 41
    old = files[3]  # (the 38th newest: no check stats it)
    append(old, line(record(1, turn_words=1, t0=T + 100 * 60)))  # (its second call, the newest of all)
    clock.now = 6.0  # (before the next check: the event alone tells)
    with monkeypatch.context() as m:
        stats = count_stats(m)
        assert scan.step({(Change.modified, str(old))})
    assert scan.full_scans == 2 and scan.files[:2] == [str(old), str(new)] and len(scan.files) == 41
    assert stats == [str(old)]  # (its activity read again; the others' remembered)
    clock.now = 7.0
    new.unlink()
    assert scan.step({(Change.deleted, str(new))})  # (removed: listed again, at most once per interval)
    assert scan.full_scans == 3 and str(new) not in scan.files
    assert not scan.step({(Change.modified, str(tmp_path / "p" / "notes.txt"))})  # (not a log: nothing)
    assert scan.full_scans == 3
    clock.now = 7.0 + feed.FULL_SCAN_INTERVAL  # (the safety net)
    scan.step()
    assert scan.full_scans == 4


def test_polling_sees_a_session_in_an_active_folder_at_the_next_check(tmp_path: Path) -> None:
    """Polling (``--poll``): a new session in the folder of a recently active one changes that folder, which
    the next check stats (so does a new project folder: the folder opened is checked too); one in a folder
    where nothing was active waits for the next full listing."""
    files = tree(tmp_path / "p", 40, projects=20)  # (the 8 newest in projects 12 to 19)
    clock = Clock()
    scan = FolderScan([str(tmp_path / "p")], poll=True, clock=clock)
    scan.mode = "polling"
    scan.step()
    hot = os.path.dirname(str(files[-1]))
    near = write_log(Path(hot) / "near.jsonl", 1, turn_words=1, t0=T + 100 * 70)
    clock.now = 2.0
    assert scan.step() and scan.files[0] == str(near) and scan.full_scans == 2
    far = write_log(tmp_path / "p" / "-home-u-proj0" / "far.jsonl", 1, turn_words=1, t0=T + 100 * 80)
    clock.now = 4.0
    assert not scan.step() and str(far) not in scan.files
    clock.now = 2.0 + feed.POLL_FULL_SCAN_INTERVAL
    assert scan.step() and scan.files[0] == str(far) and scan.full_scans == 3


def test_run_follows_file_events_and_falls_back_to_polling(tmp_path: Path) -> None:
    """:meth:`FolderScan.run` with a fake watcher: a batch of events is taken as it comes and the listing
    emitted when it changed; a watcher that fails leaves the scan polling, and ``stop`` ends it."""
    import time

    from watchfiles import Change

    tree(tmp_path / "p", 3)
    stop = threading.Event()
    new = tmp_path / "p" / "-home-u-proj0" / "new.jsonl"
    emitted: list[list[str]] = []

    def fake(*paths: str, stop_event: threading.Event, **kw: Any) -> Iterator[set[tuple[Any, str]]]:
        assert paths == (str(tmp_path / "p"),) and kw["recursive"] and kw["yield_on_timeout"]
        assert stop_event is stop
        yield set()
        write_log(new, 1, turn_words=1, t0=T + 1000)
        yield {(Change.added, str(new))}
        raise OSError("inotify queue overflow")

    scan = FolderScan([str(tmp_path / "p")], watcher=fake, interval=0.01)
    thread = threading.Thread(target=scan.run, args=(stop, lambda files, _notes: emitted.append(files)))
    thread.start()
    deadline = time.monotonic() + 10
    while (scan.mode != "polling" or len(emitted) < 2) and time.monotonic() < deadline:
        time.sleep(0.01)
    stop.set()
    thread.join(10)
    assert not thread.is_alive() and scan.mode == "polling"
    assert len(emitted) == 2 and emitted[1][0] == str(new) and len(emitted[1]) == 4


@pytest.mark.parametrize("poll", [False, True])
async def test_the_dashboard_follows_a_folder_with_a_folder_scan(tmp_path: Path, poll: bool) -> None:
    """The app's folder scan: events by default, polling with ``--poll``; a newer session is followed either
    way."""
    tree(tmp_path, 3)
    app = CtxwatchApp(str(tmp_path), poll=poll)
    async with app.run_test(size=(100, 30)) as pilot:
        assert await wait_for(pilot, lambda: app.loaded and len(app.sessions) == 3, 15)
        scan = app.folder_scan
        assert scan is not None and scan.mode == ("polling" if poll else "events")
        newer = write_log(tmp_path / "-home-u-proj1" / "newer.jsonl", 2, turn_words=1, t0=T + 1000)
        assert await wait_for(pilot, lambda: app.log_path == str(newer) and len(app.sessions) == 4, 15)
        assert await wait_for(pilot, lambda: app.loaded and len(app.calls) == 2)


def test_run_says_once_why_it_polls_when_watching_cannot_start_or_fails(tmp_path: Path) -> None:
    """A scan that polls although file events were wanted says why, once: watching could not start (the
    inotify watch limit: a recursive watch of a big projects tree takes one per folder), or it failed later.
    Polling asked for (``--poll``) and files named alone (nothing to watch) are no fall back: nothing said."""
    import time

    tree(tmp_path / "p", 3)
    folder = str(tmp_path / "p")

    def cannot_start(*paths: str, **kw: Any) -> Iterator[set[tuple[Any, str]]]:
        raise OSError(28, "inotify watch limit reached")

    def fails(*paths: str, stop_event: threading.Event, **kw: Any) -> Iterator[set[tuple[Any, str]]]:
        yield set()
        raise OSError("inotify queue overflow")

    def run_once(scan: FolderScan) -> list[str]:
        said: list[str] = []
        stop = threading.Event()
        scan.run(stop, lambda _files, _notes: stop.set(), said.append)  # (stops after the first listing)
        return said

    scan = FolderScan([folder], watcher=cannot_start, interval=0.5)
    assert run_once(scan) == [
        "watching the folder could not start (OSError: [Errno 28] inotify watch limit reached); new sessions are "
        "looked for every 0.5 s (the whole tree every 10 s)"]
    assert scan.mode == "polling" and scan.note is not None
    assert run_once(FolderScan([folder], poll=True, watcher=cannot_start)) == []
    assert run_once(FolderScan([str(p) for p in (tmp_path / "p").rglob("*.jsonl")], watcher=cannot_start)) == []

    said: list[str] = []
    stop = threading.Event()
    scan = FolderScan([folder], watcher=fails, interval=0.01)
    thread = threading.Thread(target=scan.run, args=(stop, lambda _files, _notes: None, said.append))
    thread.start()
    deadline = time.monotonic() + 10
    while scan.mode != "polling" and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.05)  # (a few polls after the failure: none says it again)
    stop.set()
    thread.join(10)
    assert not thread.is_alive()
    assert said == ["watching the folder failed (OSError: inotify queue overflow); new sessions are looked for "
                    "every 0.01 s (the whole tree every 10 s)"]


async def test_a_folder_on_a_filesystem_without_events_says_its_sessions_are_polled(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A followed folder on a filesystem that sends no change events (NFS) was polled for new sessions without
    a word, while the log's own feed says so for the log.  The folder's fall back is said once too: a toast,
    and a line under Watching in the side panel, which stay one however often the listing changes."""
    monkeypatch.setattr(feed, "filesystem_type", lambda path: "nfs4")
    tree(tmp_path, 3)
    expected = (f"{tmp_path} is on a nfs4 filesystem, which sends no change events; new sessions are looked for "
                "every 2 s (the whole tree every 10 s)")
    app = CtxwatchApp(str(tmp_path))
    async with app.run_test(size=(160, 50)) as pilot:
        assert await wait_for(pilot, lambda: app.loaded and len(app.sessions) == 3, 15)
        assert app.folder_scan is not None and app.folder_scan.mode == "polling"

        def folder_toasts() -> list[Any]:
            return [n for n in app._notifications if n.message == expected]

        assert await wait_for(pilot, lambda: len(folder_toasts()) == 1)
        toast = folder_toasts()[0]
        assert toast.title == "watching" and toast.severity == "warning"
        newer = write_log(tmp_path / "-home-u-proj1" / "newer.jsonl", 2, turn_words=1, t0=T + 1000)
        assert await wait_for(pilot, lambda: app.log_path == str(newer) and app.loaded and len(app.sessions) == 4,
                              15)
        await pilot.pause()
        assert len(folder_toasts()) == 1
        side = "".join(str(app.main.query_one("#side").render()).split())  # (wrapped anywhere in the path)
        assert "".join(f"folder: {expected}".split()) in side
