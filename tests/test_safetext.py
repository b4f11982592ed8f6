"""Which characters ``safetext.clean`` escapes: every bidi control, the line and paragraph separators and the
invisible format characters, in the text commands' output and on the dashboard.

The expected sets are written out by hand from the Unicode Character Database (PropList.txt's Bidi_Control,
UnicodeData.txt's general categories), and cross-checked against Python's own ``unicodedata``.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

from click.testing import CliRunner
from test_ui_common import line, loaded, open_detail, record

from ctxwatch.cli import main
from ctxwatch.output.safetext import clean
from ctxwatch.ui.app import CtxwatchApp

#: Bidi_Control (PropList.txt): 061C; 200E..200F; 202A..202E; 2066..2069 (12 characters).
BIDI = [0x061C, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069]
#: LINE SEPARATOR (Zl) and PARAGRAPH SEPARATOR (Zp).
SEPARATORS = [0x2028, 0x2029]
#: Format characters (Cf) shown as they are: joiners that spelling and emoji need, and signs that are drawn or
#: lay out a script (Arabic, Syriac, Kaithi number signs and end of ayah; Egyptian hieroglyph, shorthand and
#: musical-symbol format controls).
KEPT = {0x200C, 0x200D, *range(0x0600, 0x0606), 0x06DD, 0x070F, 0x0890, 0x0891, 0x08E2, 0x110BD, 0x110CD,
        *range(0x13430, 0x13440), *range(0x1BCA0, 0x1BCA4), *range(0x1D173, 0x1D17B)}


def escaped(code: int) -> str:
    """How ``clean`` writes a character it escapes (by hand: ``\\xNN`` up to U+00FF, ``\\uNNNN``, ``\\UNNNNNNNN``)."""
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def test_every_bidi_control_and_line_separator_is_escaped() -> None:
    """U+061C (ARABIC LETTER MARK) and U+2028 / U+2029 were shown raw: the first reorders text, the others break
    a line inside a one-line cell."""
    for code in BIDI + SEPARATORS:
        for multiline in (False, True):
            assert clean(f"a{chr(code)}b", multiline=multiline) == f"a{escaped(code)}b", hex(code)


def test_every_invisible_format_character_is_escaped_but_joiners_and_drawn_signs() -> None:
    """Every character of general category Cf, Zl or Zp (per Python's unicodedata) is escaped, except the ones
    kept on purpose (:data:`KEPT`); a zero-width space inside a model name shows, and tag characters spell no
    hidden text."""
    found = [c for c in range(0x110000) if unicodedata.category(chr(c)) in ("Cf", "Zl", "Zp")]
    assert set(BIDI + SEPARATORS) <= set(found)
    for code in found:
        out = clean(f"a{chr(code)}b")
        if code in KEPT:
            assert out == f"a{chr(code)}b", hex(code)
        else:
            assert out == f"a{escaped(code)}b", hex(code)
    assert clean("gpt\u200b-4o") == "gpt\\u200b-4o"
    assert clean("ok\U000e0068\U000e0069") == "ok\\U000e0068\\U000e0069"  # (TAG LATIN SMALL LETTER H, I)
    man_woman = "\U0001f468\u200d\U0001f469"  # an emoji ZWJ sequence stays whole
    assert clean(man_woman) == man_woman


def test_text_output_holds_no_separator_or_bidi_control(tmp_path: Path) -> None:
    """report, check and schema printed U+2028 and U+061C raw (a model name broke the report's row)."""
    model = "gpt\u2028x\u2029\u061c"  # (short enough for the report's model column)
    rec = {"request": {"model": model, "messages": [{"role": "user", "content": "hi"}],
                       "tools": [{"type": "function", "function": {"name": "t\u2028x", "parameters": {}}}]},
           "response": {"usage": {"prompt_tokens": 60, "completion_tokens": 1}}}
    path = tmp_path / "sep.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    for args in (["report", str(path)], ["check", str(path)], ["schema", str(path)]):
        res = CliRunner().invoke(main, args)
        assert res.exit_code in (0, 1), (args, res.output)
        assert not {"\u2028", "\u2029", "\u061c"} & set(res.output), args
    out = CliRunner().invoke(main, ["report", str(path)]).output
    assert " gpt\\u2028x\\u2029\\u061c " in out


async def test_a_line_separator_breaks_no_line_on_the_dashboard(tmp_path: Path) -> None:
    """U+2028 in a message started a new line in the detail view; in a model name it is a cell of the table."""
    log = tmp_path / "sep.jsonl"
    log.write_text(line(record(0, turn_words=3, user_text="one\u2028two\u061cthree", model="gpt-4o\u2029x")))
    app = CtxwatchApp(str(log))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, 1)
        screen = await open_detail(pilot)
        user = [it for it in screen.items if it.role == "user"][-1]
        for _ in range(screen.items.index(user)):
            await pilot.press("down")
        await pilot.pause()
        shown = screen.query_one("#body").text
        assert "one\\u2028two\\u061cthree" in shown and not {"\u2028", "\u2029", "\u061c"} & set(shown)
        await pilot.press("escape")
        from ctxwatch.ui.widgets import CallsTable

        assert app.screen.query_one(CallsTable).cell(0, "model") == "gpt-4o\\u2029x"


# --- errors that name what the user gave ---------------------------------------------------------------------

#: A path holding an OSC 0 sequence (set the window title) and the escapes it must print as.
HOSTILE_NAME, SHOWN_NAME = "\x1b]0;T\x07", "\\x1b]0;T\\x07"


def test_a_config_path_or_key_is_printed_escaped_in_its_usage_error(tmp_path: Path) -> None:
    """`--config "$(printf '/tmp/\\x1b]0;T\\x07.toml')"` printed a real ESC through click's UsageError, in every
    command that takes --config; so did an unknown key of a config file."""
    log = tmp_path / "run.jsonl"
    log.write_text(json.dumps({"request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]},
                               "response": {"usage": {"prompt_tokens": 9, "completion_tokens": 1}}}) + "\n")
    missing = str(tmp_path / f"{HOSTILE_NAME}.toml")
    keyed = tmp_path / "keyed.toml"
    keyed.write_text('"\\u001b]0;T\\u0007" = 1\n')  # (TOML's escapes: the key holds ESC and BEL)
    for config, shown in ((missing, f"{tmp_path}/{SHOWN_NAME}.toml: cannot read config file"),
                          (str(keyed), f"unknown key(s) {SHOWN_NAME}")):
        for command in ("report", "check", "plan", "schema", "watch"):
            res = CliRunner().invoke(main, [command, "--config", config, str(log)])
            assert res.exit_code == 2, (command, res.output)
            assert "\x1b" not in res.output and "\x07" not in res.output, command
            assert shown in res.output, (command, res.output)


def test_the_demo_prints_its_write_path_escaped(tmp_path: Path) -> None:
    """`demo --write PATH` named PATH raw, in its usage error and in its "wrote" line."""
    res = CliRunner().invoke(main, ["demo", "--write", str(tmp_path / "no-such-folder" / HOSTILE_NAME)])
    assert res.exit_code == 2 and "\x1b" not in res.output and f"no-such-folder/{SHOWN_NAME}: cannot write" in \
        res.output
    res = CliRunner().invoke(main, ["demo", "--calls", "2", "--write", str(tmp_path / HOSTILE_NAME)])
    assert res.exit_code == 0 and "\x1b" not in res.output and f"wrote 2 calls to {tmp_path}/{SHOWN_NAME}" in \
        res.output


def test_clip_never_cuts_an_escape_in_half() -> None:
    """The text report cut a cleaned model name at 28 characters: "gpt-4o\\u2028injected line\\u2" ended inside
    an escape.  ``clip`` cuts the text, not its escapes, and marks the cut with an ellipsis."""
    import re

    from ctxwatch.output.safetext import clip

    model = "gpt-4o\u2028injected line\u2028more text here"
    out = clip(model, 28)
    assert len(out) <= 28 and out.endswith("…")
    # every backslash starts a whole escape (\\xNN or \\uNNNN), none is cut short
    assert re.fullmatch(r"(?:[^\\]|\\x[0-9a-f]{2}|\\u[0-9a-f]{4})*…", out), out
    assert out == "gpt-4o\\u2028injected line…"  # (6 + 6 + 13 characters, then the ellipsis: 26)
    assert clip("gpt-4o", 28) == "gpt-4o" and clip(None, 5) == ""
    assert clip("\x1b" * 10, 9) == "\\x1b\\x1b…"  # (two whole escapes of 4 fit before the ellipsis)
