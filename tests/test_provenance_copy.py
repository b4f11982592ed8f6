"""A :class:`~ctxwatch.model.Provenance` copy (each emission of a call its own) holds every field's value, and a
``details`` dict of its own."""

from __future__ import annotations

from dataclasses import fields

from ctxwatch.model.provenance import Provenance


def test_a_copy_holds_every_field_and_its_own_details() -> None:
    p = Provenance()
    marks = {}
    for f in fields(Provenance):
        if f.name != "details":
            marks[f.name] = object()  # (a value no default has)
            setattr(p, f.name, marks[f.name])
    p.details = {"lines": [3, 4]}
    q = p.copy()
    assert all(getattr(q, name) is mark for name, mark in marks.items())
    assert q.details == {"lines": [3, 4]} and q.details is not p.details
    q.details["usage_line"] = 9
    assert "usage_line" not in p.details
