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


@pytest.mark.parametrize(("value", "off"), [("", False), ("0", False), ("1", True), ("yes", True)])
def test_ctxwatch_no_cache_means_the_same_to_every_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         value: str, off: bool) -> None:
    """``CTXWATCH_NO_CACHE=0`` leaves every cache on, as an unset variable does; any other value turns off the
    tokenizer's ranks, the catalogue memo and the cache of earlier reads alike (each writes nothing)."""
    from click.testing import CliRunner

    from ctxwatch.catalog import memo
    from ctxwatch.cli import main
    from ctxwatch.tokens import rank_cache

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("CTXWATCH_NO_CACHE", value)
    assert config.caching_disabled() is off
    log = Path(__file__).resolve().parents[1] / "sample_logs" / "openai_chat_demo.jsonl"
    assert CliRunner().invoke(main, ["report", "--json", str(log)]).exit_code == 0
    assert (tmp_path / "cache" / "ctxwatch" / "runs.sqlite3").exists() is not off
    res = CliRunner().invoke(main, ["cache"])
    assert ("off (CTXWATCH_NO_CACHE is set)" in res.output) is off
    ranks = {i.to_bytes(4, "little"): i for i in range(rank_cache.MIN_RANKS)}
    rank_cache.save("test_ranks", "0" * 64, ranks)
    assert (rank_cache.load("test_ranks", "0" * 64) is None) is off
    assert (memo.memo_path() is None) is off


def test_no_cache_file_is_written_through_a_symlinked_cache_folder(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """``$XDG_CACHE_HOME/ctxwatch`` planted as a symbolic link to another folder: a report reads as usual, the
    tokenizer's ranks, the catalogue memo and the cache of earlier reads write nothing where it points, and
    ``ctxwatch cache`` says why the cache is not used."""
    from click.testing import CliRunner

    from ctxwatch.catalog import memo
    from ctxwatch.cli import main
    from ctxwatch.tokens import rank_cache

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "ctxwatch").symlink_to(elsewhere)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("CTXWATCH_NO_CACHE", raising=False)
    log = Path(__file__).resolve().parents[1] / "sample_logs" / "openai_chat_demo.jsonl"
    assert CliRunner().invoke(main, ["report", "--json", str(log)]).exit_code == 0
    rank_cache.save("test_ranks", "0" * 64, {i.to_bytes(4, "little"): i for i in range(rank_cache.MIN_RANKS)})
    memo.put("test-key", 1)
    memo.save()
    assert list(elsewhere.iterdir()) == []
    res = CliRunner().invoke(main, ["cache"])
    assert "not used:" in res.output and "symbolic link" in res.output
