"""The registry of log formats, filled by discovering the reader modules of :mod:`ctxwatch.formats`.

Every public module or package of ``ctxwatch.formats`` (a name without a leading ``_``) except ``wire`` is a
reader module: it registers its :class:`~ctxwatch.formats.FormatSpec` (one or more) with :func:`register` when
imported.  The registry imports them all, in name order, the first time a format is asked for, so that adding
a format is adding its reader file: nothing lists it.
"""

from __future__ import annotations

import importlib
import os
import pkgutil

from ctxwatch.formats._reader import FormatSpec

REGISTRY: dict[str, FormatSpec] = {}

#: Modules of ``ctxwatch.formats`` that are not reader modules although their names do not start with ``_``:
#: the provider wire shapes the readers share.
NOT_READERS = ("wire",)

_loaded = False


def register(spec: FormatSpec) -> FormatSpec:
    """Add a format to the registry (called by each reader module at import); return it."""
    REGISTRY[spec.name] = spec
    return spec


def reader_modules() -> list[str]:
    """The full names of the reader modules of :mod:`ctxwatch.formats`, in name order (see the module docstring)."""
    found = pkgutil.iter_modules([os.path.dirname(__file__)])
    return sorted(f"ctxwatch.formats.{m.name}" for m in found
                  if not m.name.startswith("_") and m.name not in NOT_READERS)


def _load_all() -> None:
    """Import every reader module once (the first call), so that the registry holds every format."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    for mod in reader_modules():
        importlib.import_module(mod)


def formats() -> dict[str, FormatSpec]:
    """All registered formats by name."""
    _load_all()
    return dict(REGISTRY)


def joined_formats() -> frozenset[str]:
    """The names of the formats whose files are joined across files (:attr:`FormatSpec.joined`: batch requests and
    results): the one list of them."""
    return frozenset(name for name, spec in formats().items() if spec.joined)


def get_format(name: str) -> FormatSpec:
    """The format called ``name`` (or one of its aliases), in any case (``CLAUDE-CODE`` is ``claude-code``).

    Raises:
        KeyError: no such format; the message lists the known names.
    """
    _load_all()
    if name in REGISTRY:
        return REGISTRY[name]
    folded = name.strip().casefold()
    for spec in REGISTRY.values():
        if folded == spec.name.casefold() or folded in (a.casefold() for a in spec.aliases):
            return spec
    raise KeyError(f"unknown format {name!r}; known: {', '.join(sorted(REGISTRY))}")
