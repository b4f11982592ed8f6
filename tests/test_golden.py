"""The outputs saved before the redesign of the engine and the tree still come out byte for byte.

Every sample log, each file alone and each folder as one run, under ``report --json``, ``check --json`` and
``plan --json --call -1`` (:mod:`golden_cases`).  A difference is a changed number or message: if it is meant,
save the outputs again (``python tests/golden_cases.py``) and say why in the commit.
"""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest
from golden_cases import GOLDEN, SETS, cases, golden_name, run_case

CASES = list(cases())


@pytest.fixture(autouse=True)
def _no_user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


@pytest.mark.parametrize(("set_name", "folder", "rel", "command"), CASES,
                         ids=[f"{s}:{r}:{c}" for s, _, r, c in CASES])
def test_output_is_the_saved_one(set_name: str, folder: Path, rel: str, command: str) -> None:
    saved = GOLDEN / golden_name(set_name, rel, command)
    assert saved.is_file(), f"no saved output for {set_name}:{rel} {command}: run python tests/golden_cases.py"
    now = run_case(folder, rel, command)
    want = saved.read_bytes()
    if now != want:
        diff = "".join(difflib.unified_diff(want.decode(errors="replace").splitlines(True),
                                            now.decode(errors="replace").splitlines(True), "saved", "now", n=2))
        pytest.fail(f"{set_name}:{rel} {command} differs from the saved output:\n{diff[:6000]}")


def test_every_saved_output_has_its_case() -> None:
    """A saved output whose input is gone is a case no longer checked: remove it (or restore the input)."""
    present = {golden_name(s, r, c) for s, _, r, c in CASES}
    sets = {name for name, folder in SETS if folder.is_dir()}
    saved = {p.relative_to(GOLDEN).as_posix() for p in GOLDEN.rglob("*.out") if p.parts[len(GOLDEN.parts)] in sets}
    assert saved - present == set()
