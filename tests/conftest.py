"""Shared test fixtures: where the real sample logs are, and small helpers."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# The tokenizer's start-up cache goes to a throw-away folder, never the user's ~/.cache, during tests.
os.environ["XDG_CACHE_HOME"] = _CACHE = tempfile.mkdtemp(prefix="ctxwatch-test-cache-")
atexit.register(shutil.rmtree, _CACHE, True)
# A COLUMNS the shell exports would lay piped reports out to its width: the tests that want one set it.
os.environ.pop("COLUMNS", None)
#: The real logs written by real tools, kept outside the repository (see ../shared/sample-logs/SOURCES.md).
SHARED = Path(os.environ.get("CTXWATCH_SHARED", ROOT.parent / "shared")) / "sample-logs"


#: Test modules of the dashboard whose screens show times: they run with local time set to UTC.
UTC_MODULES = ("test_ui", "test_ui_detail", "test_ui_main", "test_ui_picker")


@pytest.fixture(autouse=True)
def _utc_for_dashboard_tests(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Times on the dashboard's screens must not depend on the machine's zone: UTC for those modules, then back
    to the machine's zone for the tests that follow."""
    if request.module.__name__.rsplit(".", 1)[-1] not in UTC_MODULES:
        yield
        return
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture(scope="session")
def shared_logs() -> Path:
    """Path of ``../shared/sample-logs``; tests that need it are skipped when it is absent."""
    if not SHARED.is_dir():
        pytest.skip(f"shared sample logs not found at {SHARED}")
    return SHARED


def pytest_report_header(config: pytest.Config) -> str:
    """Say up front whether the real sample logs were found: without them about 60 tests skip."""
    if SHARED.is_dir():
        return f"ctxwatch: real sample logs at {SHARED}"
    return (f"ctxwatch: real sample logs NOT FOUND at {SHARED}; the tests that read them will skip "
            "(clone next to ../shared, or set CTXWATCH_SHARED=/path/to/shared)")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Repeat the warning at the end (``-q`` hides the header), so a green run cannot hide the skips."""
    if not SHARED.is_dir():
        terminalreporter.write_line(f"WARNING: real sample logs not found at {SHARED}: their tests were skipped "
                                    "(set CTXWATCH_SHARED=/path/to/shared)", yellow=True)


@pytest.fixture
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache folder of the test's own (and the cache on, whatever the environment says)."""
    folder = tmp_path / "cache-home"
    monkeypatch.setenv("XDG_CACHE_HOME", str(folder))
    monkeypatch.delenv("CTXWATCH_NO_CACHE", raising=False)
    return folder
