"""The versions in ctxwatch's code fingerprint (:func:`ctxwatch.engine.cachedb.installed_version`) are those
``importlib.metadata`` gives, read from the ``.dist-info`` folder names without importing it."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import pytest

from ctxwatch.engine.cachedb import NUMBER_DEPENDENCIES, installed_version


@pytest.mark.parametrize("dist", [*NUMBER_DEPENDENCIES, "msgspec", "click"])
def test_the_version_is_the_one_importlib_metadata_gives(dist: str) -> None:
    assert installed_version(dist) == importlib.metadata.version(dist)


def test_the_first_folder_on_the_path_wins_and_names_are_normalized(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    (first / "Genai_Prices-9.8.7.dist-info").mkdir(parents=True)
    (second / "genai_prices-1.0.0.dist-info").mkdir(parents=True)
    (first / "genai_prices_extra-5.0.dist-info").mkdir()
    monkeypatch.setattr("sys.path", [str(tmp_path / "missing"), str(first), str(second)])
    assert installed_version("genai-prices") == "9.8.7"
    assert installed_version("genai.prices") == "9.8.7"
    assert installed_version("not-installed-anywhere") == ""
