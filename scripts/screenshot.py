#!/usr/bin/env python3
"""Render the README screenshot: the dashboard on the demo run, headless, written to ``docs/screenshot.svg``.

The demo run (:func:`ctxwatch.demo.write_run`: the full :data:`~ctxwatch.demo.DEFAULT_CALLS`-call story with
seed :data:`~ctxwatch.demo.DEFAULT_SEED`, fixed timestamps) is written to a temporary folder as
:data:`DISPLAY_NAME` and opened from that folder with a relative path, so nothing of the machine (temporary
path, time zone: ``TZ=UTC``, config file: default :class:`~ctxwatch.config.Settings`, ``NO_COLOR``) shows.
The app runs under Textual's ``App.run_test`` at :data:`SIZE`; the screenshot is taken once the whole run is
read, the flags are computed and the chart has redrawn.  The newest call is selected (the refused request:
the bar runs over the window).

Usage::

    python scripts/screenshot.py                 # writes docs/screenshot.svg
    python scripts/screenshot.py --out FILE.svg  # elsewhere

Prints what it wrote and the flags on screen.  Exit status 1 if the run did not load in :data:`TIMEOUT`
seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ctxwatch.config import Settings  # noqa: E402
from ctxwatch.demo import DEFAULT_CALLS, DEFAULT_SEED, write_run  # noqa: E402

#: Terminal size of the screenshot (columns, rows).
SIZE = (120, 40)
#: The log's name on screen (relative, so no temporary path appears).
DISPLAY_NAME = "agent-run.jsonl"
#: Seconds to wait for the run to be read and analysed.
TIMEOUT = 60.0
#: Seconds to wait after loading so the chart's throttled redraw (2 per second) has happened.
SETTLE = 1.0


async def _shoot(out: Path) -> list[str]:
    """Run the app headless on ``DISPLAY_NAME`` (in the current directory) and write the SVG to ``out``."""
    from ctxwatch.ui.app import CtxwatchApp

    app = CtxwatchApp(DISPLAY_NAME, settings=Settings())
    async with app.run_test(size=SIZE) as pilot:
        deadline = time.monotonic() + TIMEOUT
        while not (app.loaded and len(app.calls) == DEFAULT_CALLS and (app.analyses or app.analysis_error)):
            if app.failed or time.monotonic() > deadline:
                raise SystemExit(f"screenshot: the demo run did not load: {app.failed or 'timeout'}")
            await pilot.pause(0.05)
        await pilot.pause(SETTLE)
        svg = app.export_screenshot(title="ctxwatch")
        analysis = app.analyses.get("main")
        flags = [f"#{f.call + 1} {f.severity} {f.kind}" for f in analysis.flags] if analysis else []
    out.write_text(svg, encoding="utf-8")
    return flags


def main(argv: list[str] | None = None) -> int:
    """Write the screenshot; see the module docstring."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshot.svg", help="SVG file to write")
    args = ap.parse_args(argv)
    out = args.out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    os.environ["TZ"] = "UTC"
    time.tzset()
    os.environ.pop("NO_COLOR", None)
    here = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="ctxwatch-shot-") as tmp:
        write_run(os.path.join(tmp, DISPLAY_NAME), DEFAULT_CALLS, seed=DEFAULT_SEED)
        os.chdir(tmp)
        try:
            flags = asyncio.run(_shoot(out))
        finally:
            os.chdir(here)
    print(f"wrote {out} ({SIZE[0]}x{SIZE[1]}, {DEFAULT_CALLS} calls, seed {DEFAULT_SEED})")
    for f in flags:
        print(f"  flag {f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
