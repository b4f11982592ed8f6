"""``ctxwatch serve``: the bind rule, the command each browser tab runs, and the dashboard in a real browser.

The browser test drives the system's Chromium (Debian's ``chromium`` package) with Playwright's Python package
(``executable_path``: no browser download) against a real ``ctxwatch serve``: it opens the page, reads the
dashboard's screen from the websocket, presses keys and sees the dashboard act on them.  It skips, saying
why, where Chromium, Playwright or textual-serve is missing; ``.ci/run`` installs Chromium where it can.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from ctxwatch.cli import main
from ctxwatch.cli.serve import bind_problem, child_command, is_loopback

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_logs" / "otel_collector.jsonl"


@pytest.mark.parametrize("host", ["127.0.0.1", "127.8.9.10", "::1", "[::1]", "localhost", "LOCALHOST"])
def test_loopback_addresses_are_served_without_more(host: str) -> None:
    assert is_loopback(host)
    assert bind_problem(host, expose=False) is None


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20", "10.0.0.1", "buildbox.example.com", ""])
def test_any_other_address_needs_expose(host: str) -> None:
    assert not is_loopback(host)
    problem = bind_problem(host, expose=False)
    assert problem is not None and "--expose" in problem and "no login" in problem
    assert bind_problem(host, expose=True) is None


def test_a_public_address_without_expose_is_a_usage_error_before_anything_is_served() -> None:
    res = CliRunner().invoke(main, ["serve", str(SAMPLE), "--host", "0.0.0.0"])
    assert res.exit_code == 2
    assert "--expose" in res.output


def test_a_missing_path_is_refused() -> None:
    res = CliRunner().invoke(main, ["serve", "/nonexistent/run.jsonl"])
    assert res.exit_code == 2 and "no such file" in res.output


def test_each_tab_runs_the_dashboard_on_the_same_paths_and_options() -> None:
    cmd = child_command(("sample_logs/x.jsonl", "-odd name.jsonl"), {"window": 8000, "poll": True, "last": None,
                                                                     "format": "otel", "config": None})
    argv = shlex.split(cmd)
    assert argv[0] == sys.executable and argv[3:5] == ["serve", "--browser-session"]
    assert argv[5:] == ["--window", "8000", "--poll", "--format", "otel", "--",
                        os.path.abspath("sample_logs/x.jsonl"), os.path.abspath("-odd name.jsonl")]


# --- the dashboard in a real browser --------------------------------------------------------------------------

#: Terminal control sequences (CSI, OSC/DCS strings, two-byte escapes): stripped to read the screen's text.
CONTROL = re.compile(r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b[\]P_^][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")


def _chromium() -> str | None:
    for name in (os.environ.get("CTXWATCH_CHROMIUM"), "chromium", "chromium-browser"):
        if name and (path := shutil.which(name)):
            return path
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise AssertionError(f"ctxwatch serve ended with status {proc.returncode}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise AssertionError(f"ctxwatch serve did not listen on port {port}")


def test_the_dashboard_opens_in_a_browser_and_answers_keys() -> None:
    pytest.importorskip("textual_serve", reason="textual-serve is not installed (pip install 'ctxwatch[web]')")
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright's Python package is not installed")
    chromium = _chromium()
    if chromium is None:
        pytest.skip("no Chromium installed (Debian: apt-get install chromium; or set CTXWATCH_CHROMIUM)")
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-c", "from ctxwatch.cli import run; run()", "serve", str(SAMPLE),
                             "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    frames: list[bytes] = []

    def screen(since: int = 0) -> str:
        return CONTROL.sub("", b"".join(frames[since:]).decode("utf-8", "replace"))

    try:
        _wait_for_port(port, proc)
        with sync_api.sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            # (no network in tests: the page asks for a web font; only the local server is let through)
            page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(f"http://127.0.0.1:{port}")
                       else r.abort())
            page.on("websocket", lambda ws: ws.on(
                "framereceived", lambda f: frames.append(f) if isinstance(f, bytes) else None))
            page.goto(f"http://127.0.0.1:{port}/")
            # the header names the file, its format and its 12 calls; the newest call is selected
            page.wait_for_function("document.body.classList.contains('-first-byte')", timeout=60_000)
            _until(page, lambda: "otel_collector.jsonl · otel · 12 calls" in screen() and "call #12 ·" in screen())
            seen = len(frames)
            page.locator(".xterm-helper-textarea").focus()
            page.keyboard.press("Home")  # the first call
            _until(page, lambda: "call #1 ·" in screen(seen))
            page.keyboard.press("q")  # quit: the dashboard ends and the server closes the tab's websocket
            page.wait_for_function("document.body.classList.contains('-closed')", timeout=60_000)
            browser.close()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


def _until(page: object, ok: object, timeout_ms: int = 60_000) -> None:
    """Wait (letting the page run) until ``ok()``; fail after ``timeout_ms``."""
    waited = 0
    while not ok():  # type: ignore[operator]
        if waited >= timeout_ms:
            raise AssertionError("the dashboard did not show it in the browser")
        page.wait_for_timeout(200)  # type: ignore[attr-defined]
        waited += 200


@pytest.mark.parametrize(("host", "url"), [("::1", "http://[::1]:8765"), ("[::1]", "http://[::1]:8765"),
                                           ("127.0.0.1", None)])
def test_an_ipv6_host_is_shown_in_brackets(host: str, url: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    """``serve --host ::1`` gave textual-serve no public URL, which wrote ``http://::1:8765`` (no brackets:
    not a URL a browser opens); an IPv4 host is left to textual-serve."""
    import textual_serve.server

    made: list[dict] = []

    class FakeServer:
        def __init__(self, command: str, **kw: object) -> None:
            made.append(kw)

        def serve(self) -> None:
            pass

    monkeypatch.setattr(textual_serve.server, "Server", FakeServer)
    res = CliRunner().invoke(main, ["serve", str(SAMPLE), "--host", host, "--port", "8765"])
    assert res.exit_code == 0, res.output
    assert made and made[0]["public_url"] == url


def test_a_port_in_use_is_said_not_a_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    """Another server listening on the port: ``serve`` says the port is in use and exits 2 before starting
    anything (it printed textual-serve's banner, then aiohttp's OSError traceback); a bind that fails after the
    check (the port taken in between) is said the same way."""
    import textual_serve.server

    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        res = CliRunner().invoke(main, ["serve", str(SAMPLE), "--port", str(port)])
    assert res.exit_code == 2 and isinstance(res.exception, SystemExit), res.output
    assert f"ctxwatch: port {port} on 127.0.0.1 is in use (another server holds it): pass --port" in res.output

    class LateServer:
        def __init__(self, command: str, **kw: object) -> None:
            pass

        def serve(self) -> None:
            raise OSError(98, "Address already in use")

    monkeypatch.setattr(textual_serve.server, "Server", LateServer)
    res = CliRunner().invoke(main, ["serve", str(SAMPLE), "--port", str(port)])
    assert res.exit_code == 2 and isinstance(res.exception, SystemExit), res.output
    assert f"ctxwatch: cannot listen on 127.0.0.1 port {port}: Address already in use" in res.output


@pytest.mark.parametrize("url", ["notaurl", "ftp://x", "http://", "http://[zz]:80", "box:8000"])
def test_a_public_url_that_browsers_cannot_open_is_a_usage_error(url: str) -> None:
    """``--public-url notaurl`` was taken and shown as the serving address; only an http(s) URL with a host is."""
    res = CliRunner().invoke(main, ["serve", str(SAMPLE), "--public-url", url])
    assert res.exit_code == 2 and "not an http:// or https:// URL with a host" in res.output, res.output


@pytest.mark.parametrize("url", ["http://box:8000", "https://ctx.example.org/", "http://[::1]:8765"])
def test_a_public_url_with_a_host_is_taken(url: str) -> None:
    from ctxwatch.cli.serve import url_problem

    assert url_problem(url) is None
