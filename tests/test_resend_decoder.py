"""The canonical reader's line decoder gives the value ``orjson.loads`` gives, line after line, whatever the
previous line held (a re-sent history, an edited one, another shape, damage)."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxwatch.formats.canonical import CanonicalReader
from ctxwatch.source import shared_loads

leaf = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=8)
values = st.recursive(leaf, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                                            max_size=3), max_leaves=8)
message = st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant", "tool", "system"]),
                                 "content": st.text(max_size=10) | values})


def _lines(history_steps: list[tuple[str, Any]], spaced: bool, extra: bool) -> list[bytes]:
    """Records whose request history grows, is edited, cut, or replaced by another value, step by step."""
    history: list[Any] = []
    out = []
    for k, (op, item) in enumerate(history_steps):
        if op == "append":
            history = [*history, item]
        elif op == "edit" and history:
            history = [item, *history[1:]]
        elif op == "cut":
            history = history[:1]
        request: dict[str, Any] = {"model": "gpt-4o", "messages": history if op != "odd" else item}
        rec: dict[str, Any] = {"timestamp": k, "request": request, "response": {"usage": {"prompt_tokens": k}}}
        if extra:  # (a key the reader does not read: the line is split key by key)
            rec["extra"] = item
        text = json.dumps(rec, separators=(", ", ": ") if spaced else (",", ":"))
        out.append(text.encode())
    return out


@settings(max_examples=150, deadline=None)
@given(steps=st.lists(st.tuples(st.sampled_from(["append", "append", "append", "edit", "cut", "odd"]),
                                message | values), max_size=8),
       spaced=st.booleans(), extra=st.booleans())
def test_each_line_decodes_to_what_orjson_gives(steps: list[tuple[str, Any]], spaced: bool, extra: bool) -> None:
    decode = CanonicalReader("x.jsonl").decode
    assert decode is not None
    for data in _lines(steps, spaced, extra):
        assert _outcome(decode, data) == _outcome(orjson.loads, data)


def _outcome(loads: Any, data: bytes) -> Any:
    """The value, or the error for a line orjson refuses (Infinity, NaN: the fallback decoder reads those)."""
    try:
        return loads(data)
    except orjson.JSONDecodeError:
        return "JSONDecodeError"


def test_a_resent_history_shares_the_previous_lines_entries_and_damage_decodes_as_orjson_does() -> None:
    decode = CanonicalReader("x.jsonl").decode
    assert decode is not None
    first = b'{"request": {"messages": [{"role": "user", "content": "a"}]}}'
    second = b'{"request": {"messages": [{"role": "user", "content": "a"} , {"role": "user", "content": "b"}]}}'
    a, b = decode(first), decode(second)
    assert b == orjson.loads(second)
    assert b["request"]["messages"][0] is a["request"]["messages"][0]
    for bad in (b'{"request": {"messages": [NaN]}}', b'{"request": {"messages": ["\\ud800"]}}', b'{"a": 1} {"b": 2}',
                b'{"request": {"messages": ["\xff"]}}'):
        with pytest.raises(orjson.JSONDecodeError):
            orjson.loads(bad)
        with pytest.raises(orjson.JSONDecodeError):
            decode(bad)


def test_shared_loads_of_a_big_array_is_orjsons_value() -> None:
    data = json.dumps({"m": [{"role": "user", "content": "hi"}] * 40_000 + [{"k": list(range(50_000))}]}).encode()
    assert len(data) > 1 << 20
    value = shared_loads(data)
    assert value == orjson.loads(data)
    assert value["m"][0] is value["m"][1]
