"""``ctxwatch serve [PATHS]``: the dashboard in a browser, served by textual-serve (``pip install 'ctxwatch[web]'``).

textual-serve runs one dashboard process per browser tab, with Textual's web driver, and relays its screen over
a websocket.  The page has no login: whoever reaches the address sees what the dashboard shows, the logs'
paths, sessions, models, token counts and the text of every message the logs hold.  So it binds 127.0.0.1 by
default, and any other address only with ``--expose``, which says so (:func:`bind_problem`).
"""

from __future__ import annotations

import errno
import ipaddress
import os
import shlex
import sys

import click

from ctxwatch.cli.console import echo
from ctxwatch.cli.exits import fail
from ctxwatch.cli.options import make_settings, settings_options
from ctxwatch.output.safetext import clean

#: The address and port served by default: loopback, so only this machine's browser (and users) can connect.
DEFAULT_HOST, DEFAULT_PORT = "127.0.0.1", 8000

#: What a browser session shows, for the notice of an exposed address.
EXPOSED = ("the dashboard of {paths}: file paths, sessions, models, token counts and the text of every message "
           "the logs hold, to anyone who can reach {url}, with no password")


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (``127.0.0.0/8``, ``::1``) or ``localhost``: reachable only from
    this machine.  Any other name or address (``0.0.0.0``, ``::``, a LAN address, a host name) is not."""
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def bind_problem(host: str, expose: bool) -> str | None:
    """Why serving on ``host`` is refused (the text of the usage error), or ``None`` when it may go ahead: a
    loopback address always may; any other needs ``expose`` (the ``--expose`` option), given knowingly."""
    if is_loopback(host) or expose:
        return None
    return (f"--host {host}: the dashboard has no login, and this address may be reachable from other machines; "
            "give --expose as well to serve it there anyway")


def url_problem(url: str) -> str | None:
    """Why ``--public-url`` is refused (the text of the usage error), or ``None``: it must be an ``http`` or
    ``https`` URL with a host, as browsers are sent to it (textual-serve writes it into the page)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        ok = parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:  # (a bracketed host that is no IPv6 address, a port of letters)
        ok = False
    return None if ok else f"--public-url {clean(url)}: not an http:// or https:// URL with a host"


def child_command(paths: tuple[str, ...], options: dict[str, object]) -> str:
    """The shell command textual-serve runs for each browser tab: this ctxwatch's ``serve --browser-session`` on the
    same (absolute) paths and options, in the interpreter that runs now."""
    argv = [sys.executable, "-c", "from ctxwatch.cli import run; run()", "serve", "--browser-session"]
    for name, value in options.items():
        if value is None or value is False:
            continue
        flag = "--" + name.replace("_", "-")
        argv += [flag] if value is True else [flag, str(value)]
    argv += ["--", *(os.path.abspath(p) for p in paths)]
    return shlex.join(argv)


@click.command("serve")
@click.argument("paths", nargs=-1, required=True, type=click.Path(readable=False))
@settings_options
@click.option("--poll", is_flag=True,
              help="Poll instead of using filesystem events (network, WSL, container filesystems).")
@click.option("--last", type=click.IntRange(min=1), default=None, help="Start from the last N calls.")
@click.option("--host", default=DEFAULT_HOST, show_default=True,
              help="Address to listen on. Any but a loopback address needs --expose.")
@click.option("--port", type=click.IntRange(1, 65535), default=DEFAULT_PORT, show_default=True, help="Port.")
@click.option("--expose", is_flag=True,
              help="Serve on a non-loopback --host: the logs' paths, models, token counts and message text "
                   "become visible to anyone who can reach it, with no password.")
@click.option("--public-url", default=None, metavar="URL",
              help="The URL browsers use to reach the server (behind a proxy, or with --host 0.0.0.0).")
@click.option("--browser-session", is_flag=True, hidden=True,
              help="Run one browser tab's dashboard (what the server starts under Textual's web driver).")
def serve_cmd(paths: tuple[str, ...], config: str | None, window: int | None, budget_fraction: float | None,
              trigger: float | None, reserve: float | None, fmt: str | None, poll: bool, last: int | None,
              host: str, port: int, expose: bool, public_url: str | None, browser_session: bool) -> None:
    """Serve the dashboard on PATHS to a web browser (needs: pip install 'ctxwatch[web]').

    \b
    ctxwatch serve run.jsonl     http://127.0.0.1:8000, this machine only
    ctxwatch serve ~/.claude/projects/ --port 9000
    ctxwatch serve run.jsonl --host 0.0.0.0 --expose --public-url http://box:8000
    """
    settings = make_settings(config, window=window, budget_fraction=budget_fraction, trigger=trigger,
                             reserve=reserve)
    missing = next((p for p in paths if not os.path.lexists(p)), None)
    if missing is not None:
        fail(f"{clean(missing)}: no such file or directory")
    if browser_session:
        from ctxwatch.ui.app import CtxwatchApp

        app = CtxwatchApp(paths[0] if len(paths) == 1 else list(paths), fmt=fmt, settings=settings, poll=poll,
                          last=last)
        app.run()
        sys.exit(app.return_code or 0)
    problem = bind_problem(host, expose) or (url_problem(public_url) if public_url is not None else None)
    if problem is not None:
        raise click.UsageError(problem)
    try:
        from textual_serve.server import Server
    except ImportError:
        fail("serve needs textual-serve: pip install 'ctxwatch[web]'")
    command = child_command(paths, {"config": config, "window": window, "budget_fraction": budget_fraction,
                                    "trigger": trigger, "reserve": reserve, "format": fmt, "poll": poll,
                                    "last": last})
    if public_url is None and ":" in host.strip("[]"):
        public_url = f"http://[{host.strip('[]')}]:{port}"  # (an IPv6 address in a URL goes in brackets: RFC 3986)
    taken = port_problem(host, port)
    if taken is not None:
        fail(taken)
    server = Server(command, host=host, port=port, title="ctxwatch", public_url=public_url)
    if not is_loopback(host):
        shown = ", ".join(clean(p) for p in paths)
        echo("ctxwatch: exposing " + EXPOSED.format(paths=shown, url=server.public_url), err=True)
    try:
        server.serve()
    except OSError as exc:  # (taken between the check above and the server's own bind)
        fail(f"cannot listen on {clean(host)} port {port}: {exc.strerror or exc}")


def port_problem(host: str, port: int) -> str | None:
    """Why the server could not listen on ``host``:``port`` (another server holds it, or the address is not
    this machine's), found by binding a socket there and letting go of it at once (as the server binds:
    ``SO_REUSEADDR``, so that a port left in TIME_WAIT is free); ``None`` when it could."""
    import socket

    try:
        infos = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)
    except OSError as exc:
        return f"cannot listen on {clean(host)}: {exc.strerror or exc}"
    for family, kind, proto, _name, address in infos[:1]:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(address)
            except OSError as exc:
                if exc.errno == errno.EADDRINUSE:
                    return f"port {port} on {clean(host)} is in use (another server holds it): pass --port"
                return f"cannot listen on {clean(host)} port {port}: {exc.strerror or exc}"
    return None
