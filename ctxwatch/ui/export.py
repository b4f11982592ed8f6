"""Files the dashboard writes on request: the calls table as CSV (``x``) and an eviction plan as JSON (``w``).

Their text comes from logs and file names, so it may hold what an encoder refuses: a lone surrogate (a log's
``"\\ud800"`` decodes to one; a file name that is not UTF-8 holds ``\\udcff``-style escapes from Python's
``surrogateescape``), which made the UTF-8 encoder (CSV) and orjson (JSON) raise in the middle of a write and
left a partial file behind.  Every text value is made encodable first (:func:`export_text`,
:func:`json_safe`), the whole file is built in memory, and only then written, to a new file
(:func:`write_new`): a file is either written whole or not at all.
"""

from __future__ import annotations

import contextlib
import os
import re
from typing import Any

#: A lone surrogate: valid in a Python string, refused by every UTF-8 encoder.
_SURROGATE = re.compile("[\ud800-\udfff]")


def export_text(value: object) -> str:
    """``value`` as text that encodes to UTF-8 (``None`` gives ``""``): each lone surrogate becomes U+FFFD,
    the replacement character, as :func:`ctxwatch.safetext.clean` shows it on screen."""
    s = "" if value is None else str(value)
    return _SURROGATE.sub("\ufffd", s)


def json_safe(value: Any) -> Any:
    """A copy of a JSON-shaped ``value`` (dicts, lists, strings, numbers, booleans, ``None``) whose strings,
    keys included, are :func:`export_text`'s: orjson refuses a string holding a lone surrogate (``TypeError``)."""
    if isinstance(value, str):
        return export_text(value)
    if isinstance(value, dict):
        return {export_text(k) if isinstance(k, str) else k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def write_new(path: str, data: bytes) -> None:
    """Write ``data`` to a new file at ``path`` (created exclusively: an existing file is never overwritten),
    whole or not at all: if the write fails (a full disk), the file is removed.

    Raises:
        OSError: ``path`` exists, or the folder cannot be written.
    """
    with open(path, "xb") as fh:
        try:
            fh.write(data)
            fh.flush()
        except BaseException:
            fh.close()
            with contextlib.suppress(OSError):
                os.remove(path)
            raise
