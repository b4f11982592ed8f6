"""Where ctxwatch looks for its config file and keeps its start-up caches: platformdirs' user folders, so on Linux
``$XDG_CONFIG_HOME/ctxwatch`` and ``$XDG_CACHE_HOME/ctxwatch``, else ``~/.config/ctxwatch`` and ``~/.cache/ctxwatch``.

Expected paths are written out by hand from the XDG base-directory rules.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ctxwatch import config

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the XDG folders are Linux's")


@linux
def test_the_xdg_variables_name_the_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "conf"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert config.default_config_path() == tmp_path / "conf" / "ctxwatch" / "config.toml"
    assert config.cache_dir() == str(tmp_path / "cache" / "ctxwatch")
    assert not (tmp_path / "conf").exists() and not (tmp_path / "cache").exists()  # (nothing is created)


@linux
def test_without_them_the_folders_are_under_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    for var in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(var, raising=False)
    assert config.default_config_path() == tmp_path / ".config" / "ctxwatch" / "config.toml"
    assert config.cache_dir() == str(tmp_path / ".cache" / "ctxwatch")
    monkeypatch.setenv("XDG_CACHE_HOME", "")  # (empty is unset)
    assert config.cache_dir() == str(tmp_path / ".cache" / "ctxwatch")


@linux
def test_the_default_config_file_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    (tmp_path / "ctxwatch").mkdir()
    (tmp_path / "ctxwatch" / "config.toml").write_text("window = 12345\nkeep_recent = 2\n")
    settings = config.load_settings()
    assert (settings.window, settings.keep_recent) == (12345, 2)


def test_no_home_directory_means_no_default_config(monkeypatch: pytest.MonkeyPatch) -> None:
    """platformdirs raises when it finds no home directory: there is then no default file, and the defaults and
    options apply."""
    def no_home() -> Path:
        raise RuntimeError("could not determine the home directory")

    monkeypatch.setattr(config, "default_config_path", no_home)
    assert config.load_settings(window=5000) == config.Settings(window=5000)
