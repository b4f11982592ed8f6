"""Pickling of the model's slots dataclasses as ``cls(*field values)``: parsed calls and summaries travel back from
the worker processes of a parallel read, and the pickling ``dataclass(slots=True)`` generates looks the fields up
again for every object, which made the transfer cost about as much as the parse."""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import fields
from typing import Any, TypeVar

_T = TypeVar("_T")


def field_values(cls: type) -> Callable[[Any], tuple[Any, ...]]:
    """A function giving a dataclass object's field values, in the order its ``__init__`` takes them."""
    return operator.attrgetter(*(f.name for f in fields(cls)))  # type: ignore[return-value]


def fast_pickle(cls: type[_T]) -> type[_T]:
    """Pickle a slots dataclass as ``cls(*field values)``.

    Parsed calls travel from the worker processes of a parallel folder read (:mod:`ctxwatch.engine.folder`); the
    pickling that ``dataclass(slots=True)`` generates looks the fields up again for every object, which made
    the transfer cost about as much as the parse.  Content hashes (``Message.key``) stay valid because the
    workers are forked, sharing the parent's hash seed.
    """
    state = field_values(cls)

    def __reduce__(self: Any) -> tuple[Any, tuple[Any, ...]]:
        return cls, state(self)

    cls.__reduce__ = __reduce__  # type: ignore[method-assign,assignment]
    return cls
