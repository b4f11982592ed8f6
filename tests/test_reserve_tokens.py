"""``--reserve`` (and the config file's ``reserve``) of 1 or more is tokens, in every command, as ``plan
--reserve`` always took it; below 1 a fraction of the window.  The log: one gpt-4o call (a 128,000-token window
in the catalogue) reporting a prompt of 1,000 tokens and giving no ``max_tokens``, so the reserve is the
option's and free = 128,000 - 1,000 - reserve."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ctxwatch.cli import main
from ctxwatch.config import ConfigError, Settings

CALL = {"timestamp": "2025-06-02T09:00:05Z", "session": "s",
        "request": {"model": "gpt-4o", "messages": [{"role": "system", "content": "You are a helper."},
                                                    {"role": "user", "content": "Say hi."}]},
        "response": {"id": "r1", "model": "gpt-4o",
                     "choices": [{"message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
                     "usage": {"prompt_tokens": 1000, "completion_tokens": 5, "total_tokens": 1005}}}


def _call_json(tmp_path: Path, *args: str) -> tuple[dict, dict]:
    log = tmp_path / "run.jsonl"
    log.write_text(json.dumps(CALL) + "\n")
    res = CliRunner().invoke(main, ["report", "--json", "--no-cache", *args, str(log)])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    return doc["settings"], doc["calls"][0]


@pytest.mark.parametrize(("given", "reserve"), [("0.1", 12_800), ("20000", 20_000), ("500000", 128_000)])
def test_a_reserve_of_one_or_more_is_tokens(tmp_path: Path, given: str, reserve: int) -> None:
    settings, call = _call_json(tmp_path, "--reserve", given)
    assert call["window"] == 128_000 and call["reserve_source"] == "option"
    assert call["reserve_tokens"] == reserve  # (a fraction of the window; tokens; tokens capped at the window)
    assert call["free_tokens"] == 128_000 - 1_000 - reserve
    assert settings["reserve"] == (0.1 if given == "0.1" else int(given))


def test_the_config_files_reserve_in_tokens(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("reserve = 30000\n")
    _, call = _call_json(tmp_path, "--config", str(config))
    assert call["reserve_tokens"] == 30_000 and call["free_tokens"] == 128_000 - 1_000 - 30_000


def test_a_reserve_of_tokens_is_whole() -> None:
    with pytest.raises(ConfigError, match="whole number of tokens"):
        Settings(reserve=1.5)
    assert Settings(reserve=20_000).reserve_text() == "20,000 tokens"
    assert Settings().reserve_text() == "15% of the window"


def test_plan_takes_the_settings_reserve_in_tokens(tmp_path: Path) -> None:
    """``plan`` under a config file's reserve in tokens: its policy's reserve is those tokens, and the budget
    min(0.6 x 128,000, 128,000 - 30,000) = 76,800."""
    log = tmp_path / "run.jsonl"
    log.write_text(json.dumps(CALL) + "\n")
    config = tmp_path / "config.toml"
    config.write_text("reserve = 30000\n")
    res = CliRunner().invoke(main, ["plan", "--no-cache", "--config", str(config), str(log)])
    assert res.exit_code == 0, res.output
    assert "reserve 30,000; budget 76,800; trigger 61,440" in res.output
