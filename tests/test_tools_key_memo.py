"""A re-sending log's unchanged tool schemas are keyed once, not once per call: each call's ``tools_key`` is still
the key of its own line's schemas, a line whose schemas changed gets their new key, and every call's record is
still recognised when it is read alone (its content key does not depend on the lines read before it)."""

from __future__ import annotations

import pickle
from pathlib import Path

import orjson

from ctxwatch.engine import load_run
from ctxwatch.engine.reload import reload_parsed
from ctxwatch.formats import get_format
from ctxwatch.model import LastKey, digest
from ctxwatch.source import json_text

DEMO = Path(__file__).resolve().parent.parent / "sample_logs" / "openai_chat_demo.jsonl"


def own_key(line: bytes) -> int:
    """The key of a line's tool schemas, from the line alone (key order ignored, as the accountant keys them)."""
    return digest(json_text(orjson.loads(line)["request"]["tools"], sort_keys=True))


def test_each_call_keeps_the_key_of_its_own_schemas_when_they_change(tmp_path: Path) -> None:
    lines = DEMO.read_bytes().splitlines()
    changed = []
    for n, raw in enumerate(lines):
        rec = orjson.loads(raw)
        if n in (7, 8):  # (two lines whose first schema says something else, then the old ones again)
            rec["request"]["tools"][0]["function"]["description"] = f"changed on line {n + 1}"
        changed.append(orjson.dumps(rec))
    log = tmp_path / "run.jsonl"
    log.write_bytes(b"\n".join(changed) + b"\n")
    run = load_run(str(log))
    keys = [c.tools_key for c in run.calls]
    assert keys == [own_key(raw) for raw in changed]
    assert keys[6] != keys[7] != keys[8] != keys[6] and keys[9] == keys[6]


def test_every_call_is_found_again_by_its_record_read_alone() -> None:
    run = load_run(str(DEMO))
    spec = get_format(run.spec.name)
    assert len(run.calls) == 20
    for call in run.calls:
        again = reload_parsed(spec, call)
        # (a content key is "content:<hash>:<where>": the hash is the record's alone, where it lies is not)
        assert again is not None and again.key and call.key and again.key.split(":")[:2] == call.key.split(":")[:2]


ASKED: list[list[object]] = []


def key_of(items: list[object]) -> int:
    """A key function that counts how often it is asked (module-level, so a LastKey of it pickles)."""
    ASKED.append(items)
    return len(ASKED)


def test_last_key_works_a_key_out_again_only_for_other_objects() -> None:
    ASKED.clear()
    a, b = {"name": "read"}, {"name": "write"}
    last = LastKey(key_of)
    assert last([a, b]) == 1 and last([a, b]) == 1  # (a new list of the same objects: remembered)
    assert last([a]) == 2 and last([a, {"name": "write"}]) == 3  # (fewer, or an equal copy: worked out again)
    again = pickle.loads(pickle.dumps(last))
    assert again([a, {"name": "write"}]) == 4 and len(ASKED) == 4  # (a pickled one remembers nothing)
