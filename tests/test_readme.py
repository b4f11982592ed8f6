"""The README's and docs' promises: every command and option they show exists, config keys exist, files they name
exist, every page of docs/ is linked from the front page and every relative link resolves."""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from ctxwatch.cli import main
from ctxwatch.config import config_keys

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = {p.name: p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs").glob("*.md"))}
ALL = "\n".join([README, *DOCS.values()])
COMMANDS = set(main.list_commands(None))  # type: ignore[arg-type]


def _shell_lines() -> list[str]:
    """`ctxwatch ...` lines of the README's and docs' sh blocks and inline code spans (comments removed)."""
    lines: list[str] = []
    for block in re.findall(r"```sh\n(.*?)```", ALL, re.S):
        lines += [ln.split("#", 1)[0].strip() for ln in block.splitlines()]
    lines += re.findall(r"`(ctxwatch [^`]+)`", ALL)
    return [ln for ln in lines if ln.startswith("ctxwatch ")]


def _help(args: list[str]) -> str:
    res = CliRunner().invoke(main, [*args, "--help"])
    assert res.exit_code == 0, (args, res.output)
    return res.output


CASES = _shell_lines()


def test_the_readme_shows_commands() -> None:
    assert len(CASES) >= 15


@pytest.mark.parametrize("line", CASES)
def test_every_command_and_option_in_the_readme_exists(line: str) -> None:
    words = shlex.split(line)[1:]
    sub = words[0] if words and words[0] in COMMANDS else "watch"  # `ctxwatch PATH` is the dashboard
    text = _help([sub])
    for opt in (w for w in words if w.startswith("--")):
        assert re.search(rf"(^|\s|,){re.escape(opt)}(\s|,|=|$)", text, re.M), f"{opt} not in `ctxwatch {sub} --help`"


def test_the_config_section_names_real_keys_and_parses() -> None:
    block = re.search(r"```toml\n(.*?)```", DOCS["configuration.md"], re.S)
    assert block is not None
    keys = set(tomllib.loads(block.group(1)))
    assert keys <= config_keys()
    table_keys = {key for key, _, _ in _config_rows()}
    assert table_keys == config_keys()


def _config_rows() -> list[tuple[str, str, set[str]]]:
    """(key, option, commands said to take the option) of each row of docs/configuration.md's table."""
    section = DOCS["configuration.md"]
    rows = re.findall(r"^\| `([a-z_]+)` \| `(--[a-z-]+)[^`]*`: ([^|]*)\|", section, re.M)
    return [(key, opt, set(re.findall(r"`([a-z]+)`", cmds)) & COMMANDS) for key, opt, cmds in rows]


def test_the_config_table_says_which_commands_take_each_option() -> None:
    """The table said every setting could be given "with options", --keep-recent and --summary-tokens
    included, which only `plan` takes (`ctxwatch watch --keep-recent 3` is "No such option")."""
    rows = _config_rows()
    assert len(rows) == len(config_keys())
    for key, opt, said in rows:
        assert opt == "--" + key.replace("_", "-")
        takes = {cmd for cmd in COMMANDS if cmd != "demo"  # (demo's --window is its synthetic run's, not this)
                 if re.search(rf"(^|\s|,){re.escape(opt)}(\s|,|=|$)", _help([cmd]), re.M)}
        assert said == takes, (key, said, takes)


def test_files_the_readme_points_to_exist() -> None:
    for rel in ("docs/screenshot.svg", "docs/serve-browser.png", "docs/otel-collector.yaml", "examples/budget_loop.py",
                "sample_logs/README.md",
                "sample_logs/claude_code_session.jsonl", "sample_logs/openai-batch", "tests/benchmarks"):
        assert (ROOT / rel).exists(), rel


def test_the_readme_flag_kinds_are_the_analysis_kinds() -> None:
    from ctxwatch.analysis import FLAG_KINDS

    text = DOCS["json-schema.md"]
    para = text[text.index("Flag kinds:"):]
    para = para[: (para + "\n\n").index("\n\n")]
    assert set(re.findall(r"`([a-z_]+)`", para)) >= set(FLAG_KINDS)


def test_the_front_page_links_every_page_of_docs_and_every_link_resolves() -> None:
    linked = set(re.findall(r"\]\(docs/([^)#]+\.md)", README))
    assert linked == set(DOCS)
    for name, text in [("README.md", README), *((f"docs/{n}", t) for n, t in DOCS.items())]:
        base = (ROOT / name).parent
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", text):
            assert (base / target).exists(), (name, target)


def test_the_front_page_is_short() -> None:
    # A newcomer reads it in two minutes; reference material lives in docs/.
    assert len(README.splitlines()) < 150


#: The sections of the README before its reference material moved to docs/ (each still a heading somewhere).
SECTIONS = ("Set-up (two commands)", "The demo in one minute", "Tail a running job", "Inspect a past run",
            "Claude Code, Codex, batch files and more", "A fleet, through the OpenTelemetry Collector",
            "The dashboard in a browser", "CI and cron", "Reading a log again: the cache",
            "A status line (Claude Code, tmux)", "Preview an eviction plan, analyse the tool-schema floor",
            "Keys (dashboard)", "Configuration", "The canonical log format (log your own loop)", "The library",
            "`report --json` schema", "How far to trust the numbers", "Performance", "Limitations")


def test_every_former_readme_section_is_a_heading_of_the_front_page_or_docs() -> None:
    headings = [ln for ln in ALL.splitlines() if ln.startswith("#") and not ln.startswith("#!")]
    for name in SECTIONS:
        assert any(name in h for h in headings), name
