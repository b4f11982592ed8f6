"""Pickling of the model's slots dataclasses as ``cls(*field values)``: parsed calls and summaries travel back from
the worker processes of a parallel read and are kept in the cache, and the pickling ``dataclass(slots=True)``
generates looks the fields up again for every object, which made the transfer cost about as much as the parse."""

from __future__ import annotations

import operator
import sys
from collections.abc import Callable
from dataclasses import fields
from typing import Any, TypeVar

_T = TypeVar("_T")


def field_values(cls: type) -> Callable[[Any], tuple[Any, ...]]:
    """A function giving a dataclass object's field values, in the order its ``__init__`` takes them."""
    return operator.attrgetter(*(f.name for f in fields(cls)))  # type: ignore[return-value]


def fast_pickle(cls: type[_T]) -> type[_T]:
    """Pickle a slots dataclass as ``cls(*field values)`` (a frozen one as :func:`_frozen_maker`'s function of
    them).

    Parsed calls travel from the worker processes of a parallel folder read (:mod:`ctxwatch.engine.folder`); the
    pickling that ``dataclass(slots=True)`` generates looks the fields up again for every object, which made
    the transfer cost about as much as the parse.  Content hashes (``Message.key``) stay valid because the
    workers are forked, sharing the parent's hash seed.
    """
    state = field_values(cls)
    make: Callable[..., Any] = _frozen_maker(cls) if cls.__dataclass_params__.frozen else cls  # type: ignore[attr-defined]

    def __reduce__(self: Any) -> tuple[Any, tuple[Any, ...]]:
        return make, state(self)

    cls.__reduce__ = __reduce__  # type: ignore[method-assign,assignment]
    return cls


def _frozen_maker(cls: type) -> Callable[..., Any]:
    """A function building a frozen slots dataclass object from its field values, as unpickling does: each slot
    set through its descriptor, not the ``object.__setattr__`` call per field a frozen ``__init__`` makes (half
    the time: a folder's 26,686 call summaries each hold two such objects, their source and their usage).  It is
    the class attribute ``_unpickle``, so that pickle names it by reference."""
    names = [f.name for f in fields(cls)]
    scope: dict[str, Any] = {"_new": object.__new__, "_cls": cls}
    scope.update({f"_set_{n}": cls.__dict__[n].__set__ for n in names})
    body = "".join(f"    _set_{n}(o, {n})\n" for n in names)
    # (the names are the class's own fields, never data)
    exec(f"def _unpickle({', '.join(names)}):\n    o = _new(_cls)\n{body}    return o\n", scope)
    make: Callable[..., Any] = scope["_unpickle"]
    make.__module__ = cls.__module__
    make.__qualname__ = f"{cls.__qualname__}._unpickle"
    cls._unpickle = make  # type: ignore[attr-defined]
    return make


def shared(text: str | None) -> str | None:
    """``text`` as the one object of its value (:func:`sys.intern`) for a name every call of a log repeats (its
    model, session, service tier): a JSON parse makes a new string per call, and a pickle of the calls (the
    workers' results, the cache's) holds and rebuilds each copy, where one object is written once and referred
    to after.  Anything but an exact ``str`` is returned as it is."""
    return sys.intern(text) if text.__class__ is str else text
