"""An OpenAI batch result whose ``response.status_code`` is no integer: a numeric string or an integral float is
read as its number (the call is kept) and any other value leaves the status unknown (the body decides); each is an
``invalid_field`` issue of its line, never "failed (HTTP 200; ...)".

The expected counts come from a plain ``json`` read of the real sample, not from ctxwatch.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ctxwatch.cli import main

SHARED = Path(os.environ.get("CTXWATCH_SHARED", Path(__file__).resolve().parents[2] / "shared")) / "sample-logs"
OUTPUT = SHARED / "openai-batch" / "reviews_batch_output.jsonl"


def _report(path: Path) -> dict[str, Any]:
    res = CliRunner().invoke(main, ["report", "--json", "--no-cache", str(path)])
    assert res.exit_code == 0, res.output[-800:]
    doc: dict[str, Any] = json.loads(res.stdout)
    return doc


@pytest.mark.skipif(not OUTPUT.is_file(), reason="shared samples absent")
@pytest.mark.parametrize("status", ["200", " 200", 200.0, True, [200], {"code": 200}])
def test_a_status_code_of_another_type_keeps_the_call(tmp_path: Path, status: Any) -> None:
    lines = OUTPUT.read_text(encoding="utf-8").splitlines()
    recs = [json.loads(ln) for ln in lines]
    ok = sum(1 for r in recs if r["response"]["status_code"] == 200 and r.get("error") is None)
    assert recs[0]["response"]["status_code"] == 200
    recs[0]["response"]["status_code"] = status
    out = tmp_path / "batch_output.jsonl"
    out.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    doc = _report(out)
    assert len(doc["calls"]) == ok
    assert [i["kind"] for i in doc["issues"] if i["kind"] == "failed_request"] == []
    bad = [(i["line"], "status_code" in i["message"]) for i in doc["issues"] if i["kind"] == "invalid_field"]
    assert bad == [(1, True)]


@pytest.mark.skipif(not OUTPUT.is_file(), reason="shared samples absent")
def test_a_numeric_string_failure_status_is_still_a_failure(tmp_path: Path) -> None:
    recs = [json.loads(ln) for ln in OUTPUT.read_text(encoding="utf-8").splitlines()]
    ok = sum(1 for r in recs if r["response"]["status_code"] == 200 and r.get("error") is None)
    recs[0]["response"]["status_code"] = "500"
    out = tmp_path / "batch_output.jsonl"
    out.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    doc = _report(out)
    assert len(doc["calls"]) == ok - 1
    failed = [i["message"] for i in doc["issues"] if i["kind"] == "failed_request"]
    assert len(failed) == 1 and "HTTP 500" in failed[0]
    assert [i["line"] for i in doc["issues"] if i["kind"] == "invalid_field"] == [1]
