"""The detail's header breaks only between its parts (``label value`` pieces between `` · ``), never inside one:
:func:`ctxwatch.ui.text.pack_parts` by hand, and the header of a real Claude Code call at 80x24."""

from __future__ import annotations

import json
from pathlib import Path

from rich.cells import cell_len
from rich.text import Text
from test_ui_common import loaded, open_detail

from ctxwatch.model import Call
from ctxwatch.ui.app import CtxwatchApp
from ctxwatch.ui.text import pack_parts
from ctxwatch.ui.widgets.packed import PackedText


def test_lines_break_between_parts() -> None:
    assert pack_parts(Text("aa · bbb · cc"), 8).plain == "aa · bbb\n· cc"
    assert pack_parts(Text("aa · bbb · cc"), 13).plain == "aa · bbb · cc"
    assert pack_parts(Text("aa · bbb · cc"), 12).plain == "aa · bbb\n· cc"
    # (a line of its own stays one: the error under the header)
    assert pack_parts(Text("aa · bb\nerror: sizes only"), 80).plain == "aa · bb\nerror: sizes only"
    # (a part wider than any line follows the one before it, to be wrapped between its words)
    assert pack_parts(Text("aa · " + "word " * 5 + "end · cc"), 12).plain == "aa · " + "word " * 5 + "end\n· cc"
    assert pack_parts(Text("aa · bb"), 0).plain == "aa · bb"


def test_styles_are_kept() -> None:
    text = Text("aa")
    text.append(" · bold part", "bold")
    packed = pack_parts(text, 12)
    assert packed.plain == "aa\n· bold part"
    assert [(packed.plain[s.start:s.end], s.style) for s in packed.spans] == [("bold part", "bold")]


async def _detail_head(log: Path, size: tuple[int, int]) -> tuple[Call, str, list[str]]:
    """The call the detail opens on for ``log`` at ``size``, its header as one line of words, and its header's
    lines as drawn (packed, then wrapped at the header's width)."""
    app = CtxwatchApp(str(log))
    async with app.run_test(size=size) as pilot:
        await loaded(pilot)
        screen = await open_detail(pilot)
        head = screen.query_one("#detail-head", PackedText)
        text = head.render()
        lines = [ln.plain for ln in text.wrap(app.console, head.content_region.width)]
        return screen.call, " ".join(str(text).split()), lines


async def test_the_header_of_a_real_call_keeps_each_value_with_its_label(shared_logs: Path) -> None:
    log = shared_logs / "claude-code" / "spotter_4d5611e5_full.jsonl"
    call, _head, lines = await _detail_head(log, (80, 24))
    # (the call's cache reads and writes, read from its own line with plain json)
    record = json.loads(log.read_text(encoding="utf-8").splitlines()[call.source.line - 1])
    usage = record["message"]["usage"]
    cache = f"cache r {usage['cache_read_input_tokens']:,} w {usage['cache_creation_input_tokens']:,}"
    assert any(cache in ln for ln in lines), lines
    prompt = usage["input_tokens"] + usage["cache_read_input_tokens"] + usage["cache_creation_input_tokens"]
    assert any(f"prompt {prompt:,}" in ln for ln in lines), lines
    assert all(cell_len(ln.rstrip()) <= 78 for ln in lines)
    for label in ("prompt", "floor", "history", "cost", "cache r", " w", "line"):
        assert not any(ln.rstrip().endswith(label) for ln in lines), (label, lines)
    assert len(lines) >= 3  # (at 80 columns the header takes several lines: it was packed, not cut)


async def test_a_call_of_another_file_than_the_log_shown_names_its_file(shared_logs: Path) -> None:
    # (a batch folder: the dashboard names the folder, and "line 100" alone did not say of which file)
    folder = shared_logs / "openai-batch"
    call, head, _lines = await _detail_head(folder, (120, 30))
    name = Path(call.source.path).name
    # (the line of the call's result, found by its custom_id with plain json)
    lines = (folder / name).read_text(encoding="utf-8").splitlines()
    number = next(n for n, ln in enumerate(lines, 1) if json.loads(ln)["custom_id"] == call.provenance.custom_id)
    assert f"{name} line {number} ·" in head


async def test_a_call_of_the_log_shown_gives_its_line_alone(shared_logs: Path) -> None:
    log = shared_logs / "claude-code" / "spotter_short.jsonl"
    call, head, _lines = await _detail_head(log, (120, 30))
    assert f"· line {call.source.line} ·" in head and log.name not in head
