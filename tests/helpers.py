"""Test helpers that build inputs independently of the code under test."""

from __future__ import annotations

import json
from pathlib import Path


def batch_to_canonical(input_path: Path, output_path: Path, dest: Path) -> list[dict]:
    """Join an OpenAI batch input and output file by ``custom_id`` into canonical ``{request, response}`` lines.

    Written with plain ``json`` so that it shares no code with ctxwatch's readers. Returns the joined records.
    """
    requests = {}
    for line in input_path.read_text().splitlines():
        if line.strip():
            d = json.loads(line)
            requests[d["custom_id"]] = d["body"]
    records = []
    for line in output_path.read_text().splitlines():
        if not line.strip():
            continue
        d = json.loads(line)
        if d["custom_id"] in requests and d.get("response"):
            records.append({"request": requests[d["custom_id"]], "response": d["response"]["body"]})
    dest.write_text("".join(json.dumps(r) + "\n" for r in records))
    return records
