"""Logs saved as one JSON array of records (``json.dump(records)``, ``jq -s``, Claude Code hooks'
``logs/chat.json``), read as one record per line from a private temporary copy.

Calls keep byte offsets into the file their record is on, so an array is first written out one element per line
(line N of the copy is element N of the array) in a folder only this user can read, removed when the command
exits; the output names the file as it was given.
"""

from __future__ import annotations

import os
import shutil

import orjson

from ctxwatch.output.safetext import show_as, shown


def spool_arrays(paths: tuple[str, ...], fmt: str | None) -> tuple[str, ...]:
    """``paths`` with each file that no format reads and that is one JSON array of records of a line format
    (:func:`ctxwatch.formats.array_of_records`) replaced by a copy holding one element per line; the others as
    given.  Nothing changes when a format is forced (``fmt``), or for a folder (its arrays get a
    ``skipped_file`` note).  A file that cannot be read or parsed is left for the reader to report."""
    if fmt:
        return paths
    from ctxwatch.formats import array_of_records, detect, sniff_file

    out: list[str] = []
    folder: str | None = None
    for n, path in enumerate(paths):
        try:
            # (a format of its own reads its document, as OpenHands its array of events: only a file no format
            # reads is taken apart; detection also loads the formats the array's records are matched against)
            is_array = os.path.isfile(path) and detect(path) is None \
                and array_of_records(sniff_file(path)) is not None
            if is_array:
                with open(path, "rb") as fh:
                    elements = orjson.loads(fh.read())
        except (OSError, orjson.JSONDecodeError):
            is_array = False
        if not is_array or not isinstance(elements, list):
            out.append(path)
            continue
        if folder is None:
            folder = _private_folder()
        os.mkdir(os.path.join(folder, str(n)))
        copy = os.path.join(folder, str(n), os.path.basename(path) + ".jsonl")
        with open(copy, "wb") as fh:
            for e in elements:
                fh.write(orjson.dumps(e) + b"\n")
        show_as(copy, shown(path))  # (a copy of standard input is shown as "-", as given)
        out.append(copy)
    return tuple(out)


def _private_folder() -> str:
    """A temporary folder only this user can read, removed when the command exits (not by a forked worker)."""
    import atexit
    import tempfile

    folder = tempfile.mkdtemp(prefix="ctxwatch-array-")
    owner = os.getpid()

    def remove() -> None:
        if os.getpid() == owner:
            shutil.rmtree(folder, True)

    atexit.register(remove)
    return folder
