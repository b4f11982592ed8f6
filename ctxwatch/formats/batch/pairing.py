"""Batch files given in any order, or folders of them, paired: each output (result) file with its input.

A batch's output and input share their ``custom_id`` values; batches that reuse the same ids
(``request-0``, ``request-1``...) are told apart by the models the results name, then by file names.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

import orjson

from ctxwatch.formats import sniff_file
from ctxwatch.formats.batch.index import BatchInputIndex
from ctxwatch.formats.batch.kinds import (
    ANTHROPIC_BATCH_OBJECT,
    ANTHROPIC_REQUEST,
    ANTHROPIC_RESULT,
    INPUT_KINDS,
    OPENAI_INPUT,
    OPENAI_OUTPUT,
    OUTPUT_KINDS,
    PROVIDER,
    classify_batch_value,
)
from ctxwatch.formats.batch.reader import BatchReader, read_file
from ctxwatch.model import Issue, ParsedCall
from ctxwatch.source import Record, iter_records

_CID_RE = re.compile(rb'"custom_id"\s*:\s*"((?:[^"\\]|\\.)*)"')


def _file_kind(path: str) -> str | None:
    """The batch kind of a file from its head (first values, or a regex on the head when a line is huge)."""
    try:
        sn = sniff_file(path)
    except OSError:
        return None
    kinds = [classify_batch_value(v) for v in sn.values[:20]]
    kinds = [k for k in kinds if k]
    if kinds:
        return max(set(kinds), key=kinds.count)
    head = sn.head
    if b'"custom_id"' in head:
        if b'"params"' in head:
            return ANTHROPIC_REQUEST
        if b'"result"' in head:
            return ANTHROPIC_RESULT
        if b'"response"' in head:
            return OPENAI_OUTPUT
        if b'"body"' in head:
            return OPENAI_INPUT
    return None


def _ids_in(path: str) -> set[str]:
    """``custom_id`` values of a file by a cheap byte scan (used only to pair files, never for numbers)."""
    ids: set[str] = set()
    try:
        with open(path, "rb") as fh:
            for raw in fh:
                for m in _CID_RE.finditer(raw):
                    cid = m.group(1)
                    if b"\\" in cid:  # (JSON escapes: "caf\u00e9" in one file is "café" in the other)
                        try:
                            ids.add(orjson.loads(b'"' + cid + b'"'))
                            continue
                        except orjson.JSONDecodeError:
                            pass
                    ids.add(cid.decode("utf-8", "replace"))
    except OSError:
        pass
    return ids


def _models_by_id(path: str) -> dict[str, str]:
    """``custom_id -> model`` of a batch file: the request's ``body.model`` / ``params.model``, or the result's
    ``response.body.model`` / ``result.message.model`` (read only to pair batches that reuse custom_ids)."""
    out: dict[str, str] = {}
    try:
        for rec in iter_records(path):
            v = rec.value if isinstance(rec, Record) else None
            if not isinstance(v, dict) or not isinstance(cid := v.get("custom_id"), str):
                continue
            for outer, inner in (("body", None), ("params", None), ("response", "body"), ("result", "message")):
                node = v.get(outer)
                if inner is not None and isinstance(node, dict):
                    node = node.get(inner)
                if isinstance(node, dict) and isinstance(model := node.get("model"), str):
                    out[cid] = model
                    break
    except OSError:
        pass
    return out


def _model_agreement(results: dict[str, str], requests: dict[str, str]) -> int:
    """How well a batch's requests name the models its results report: per shared custom_id, the length of the
    request's model id when the result's is that id or a snapshot of it (``gpt-4o-mini`` ->
    ``gpt-4o-mini-2024-07-18``), so the most specific request model counts most (``gpt-4o`` is a prefix of
    both ``gpt-4o-2024-08-06`` and ``gpt-4o-mini-...``)."""
    score = 0
    for cid, got in results.items():
        asked = requests.get(cid)
        if asked and (got == asked or got.startswith(asked + "-")):
            score += len(asked)
    return score


def _name_likeness(a: str, b: str) -> int:
    """How alike two file names are: the length of their common prefix plus that of their common suffix
    (``batch_A_output.jsonl`` is closer to ``batch_A_input.jsonl`` than to ``batch_B_input.jsonl``)."""
    def common(x: str, y: str) -> int:
        n = 0
        for c, d in zip(x, y, strict=False):  # (stops at the shorter name)
            if c != d:
                break
            n += 1
        return n

    x, y = os.path.basename(a), os.path.basename(b)
    prefix = common(x, y)
    return prefix + common(x[prefix:][::-1], y[prefix:][::-1])


def _expand(paths: list[str]) -> Iterator[str]:
    for p in paths:
        if os.path.isdir(p):
            for name in sorted(os.listdir(p)):
                full = os.path.join(p, name)
                if os.path.isfile(full) and name.endswith((".jsonl", ".json")):
                    yield full
        else:
            yield p


def read_batch_pair(paths: list[str]) -> tuple[list[ParsedCall], list[Issue]]:
    """Read batch files given in any order (or directories of them), pairing inputs with outputs.

    Each file is classified by its lines (input or output, OpenAI or Anthropic).  Each output is joined
    to the input of the same provider that shares the most ``custom_id``s with it (none → read alone);
    inputs paired with no output are read alone (request-only calls, usage unknown).

    Args:
        paths: files and/or directories (a directory contributes its ``*.jsonl``/``*.json`` files).

    Returns:
        ``(calls, issues)``: calls of every output file in the order given, then request-only calls of
        unpaired inputs.  Files that are not batch files give a ``not_batch`` issue; the batch object file
        (``anthropic_batch_receipt.json``) gives a ``batch_object`` notice.  Never raises.
    """
    files = list(dict.fromkeys(_expand(paths)))
    kinds = {f: _file_kind(f) for f in files}
    issues: list[Issue] = []
    outputs = [f for f in files if kinds[f] in OUTPUT_KINDS]
    inputs = [f for f in files if kinds[f] in INPUT_KINDS]
    for f in files:
        if kinds[f] is None:
            issues.append(Issue(f, 0, "not_batch", "not an OpenAI or Anthropic batch input/output file; skipped"))
        elif kinds[f] == ANTHROPIC_BATCH_OBJECT:
            issues.append(Issue(f, 1, "batch_object", "message batch object: it holds no calls; skipped"))
    # every input and output kind has a provider, so the lookups below cannot miss
    provider = {f: PROVIDER[k] for f, k in kinds.items() if k in PROVIDER}
    input_ids: dict[str, set[str]] = {}
    for f in inputs:
        if sum(1 for g in inputs if provider[g] == provider[f]) > 1:
            input_ids[f] = _ids_in(f)
    pairing: dict[str, str | None] = {}
    models: dict[str, dict[str, str]] = {}  # file -> custom_id -> model, read once, for ties only
    for out in outputs:
        prov = provider[out]
        candidates = [i for i in inputs if provider[i] == prov]
        best = None
        if len(candidates) == 1:
            best = candidates[0]  # the only input of this provider: no need to scan the output
        elif candidates:
            out_ids = _ids_in(out)
            shared = {cand: len(out_ids & input_ids[cand]) for cand in candidates}
            top = max(shared.values())
            tied = [c for c in candidates if shared[c] == top]
            if top and len(tied) > 1:
                # Batches that reuse the same custom_ids ("request-0", "request-1"...): the ids cannot tell
                # them apart.  The requests whose model the results name decide first (OpenAI names every
                # output batch_<id>_output.jsonl: names carry nothing), then the closest file name
                # (batch_A_output -> batch_A_input; an error file beside its output too), then an input not
                # yet joined to an output.
                used = set(pairing.values())
                for f in (out, *tied):
                    if f not in models:
                        models[f] = _models_by_id(f)
                agree = {c: _model_agreement(models[out], models[c]) for c in tied}
                best = max(tied, key=lambda c: (agree[c], _name_likeness(out, c), c not in used))
                by = "by model" if sorted(agree.values())[-1] > sorted(agree.values())[-2] else "by file name"
                issues.append(Issue(out, 0, "batch_pairing",
                                    f"its custom_ids match {len(tied)} input files equally; joined to "
                                    f"{os.path.basename(best)} {by}: give the pair alone to be sure"))
            elif top:
                best = tied[0]
        pairing[out] = best
    calls: list[ParsedCall] = []
    indexes = {inp: BatchInputIndex(inp) for inp in set(pairing.values()) if inp}
    done: dict[str, list[str]] = {}
    for out in outputs:
        inp = pairing[out]
        last = inp is None or out == [o for o in outputs if pairing[o] == inp][-1]
        reader = BatchReader(out, index=indexes[inp] if inp else None, report_missing=last)
        if inp:
            reader.shared_with = list(done.get(inp, []))
            done.setdefault(inp, []).append(out)
        c, i = read_file(reader, out)
        calls.extend(c)
        issues.extend(i)
    paired = {p for p in pairing.values() if p}
    for inp in inputs:
        if inp not in paired:
            c, i = read_file(BatchReader(inp), inp)
            calls.extend(c)
            issues.extend(i)
    return calls, issues
