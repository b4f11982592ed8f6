"""The core stays free of the terminal libraries at run time, as the import-linter contracts say it does in the
source (``lint-imports``, run by ``make test``).

One fresh interpreter imports every module of the core; none of textual, textual_plotext, rich or click may be
loaded afterwards.  Loading is monotone, so this says the same of each module imported on its own.
"""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import ctxwatch

#: Packages allowed to load the terminal libraries: the dashboard and the command line (``python -m ctxwatch``
#: is the command line too).
UI_PACKAGES = ("ctxwatch.ui", "ctxwatch.cli", "ctxwatch.__main__")
TERMINAL_LIBRARIES = ("textual", "textual_plotext", "rich", "click")


def core_modules() -> list[str]:
    """Every module of the ctxwatch package outside :data:`UI_PACKAGES`."""
    names = [m.name for m in pkgutil.walk_packages(ctxwatch.__path__, "ctxwatch.")]
    return sorted(n for n in names if not n.startswith(UI_PACKAGES))


def test_there_is_a_core_to_check() -> None:
    mods = core_modules()
    assert {"ctxwatch.engine", "ctxwatch.formats", "ctxwatch.analysis", "ctxwatch.planner", "ctxwatch.demo",
            "ctxwatch.budget"} <= set(mods)


def test_no_core_module_loads_a_terminal_library() -> None:
    code = (
        "import importlib, sys\n"
        f"for m in {core_modules()!r}: importlib.import_module(m)\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {TERMINAL_LIBRARIES!r}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
