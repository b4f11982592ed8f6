"""Log formats: the registry, automatic detection and the reader interface.

A format is a :class:`FormatSpec` registered under a short name (``ctxwatch formats`` lists them).  Its
reader is *incremental*: it is fed one :class:`~ctxwatch.source.lines.Record` at a time (so the same code
serves a past run and a live tail) and returns the calls and issues each record completes.  A reader may
return a :class:`~ctxwatch.model.ParsedCall` whose ``key`` it returned before: that call was updated (a
later line of the same Claude Code response, for example) and replaces the earlier one.

Whole-file JSON documents (SWE-agent ``.traj``, Inspect ``.json``/``.eval``, OpenHands, Cline) set
``document=True`` and implement :meth:`Reader.feed_document` instead.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import orjson

from ctxwatch.formats.wire.values import MAX_COUNT, count_or_none, not_a_count, usage_count
from ctxwatch.model import Issue, ParsedCall, Resolved, SourceRef
from ctxwatch.source import Record, decode_line

#: What a reader gives per record: calls, issues, and the withdrawal of an issue it gave earlier (an issue about
#: a copy of a call that a more complete copy read later replaced).
Output = ParsedCall | Issue | Resolved

#: Bytes of a file's head that detection looks at (several records of most formats; a 64 KiB read).
SNIFF_BYTES = 64 * 1024


class Reader:
    """Base class of a format reader (one per file being read).

    Args:
        path: the file being read (for issues and :class:`~ctxwatch.model.SourceRef`).
    """

    #: Optional cheap pre-filter on raw line bytes: True = skip without parsing (see jsonstream).
    skip: Callable[[bytes], bool] | None = None

    #: Whether every call carries its full visible history.  A reader may leave it out of calls whose
    #: numbers do not need it (the Claude Code reader); opening a call sets this to True before feeding.
    full_history: bool = True

    #: Set while a whole file is read at once (not followed): a reader may then emit an updated call once,
    #: when a record of another call arrives or at :meth:`finish`, instead of on each of its records.
    coalesce: bool = False

    def __init__(self, path: str) -> None:
        self.path = path

    def feed(self, rec: Record) -> Iterable[Output]:
        """Consume one record; return the calls (new or updated) and issues it completes."""
        return ()

    def finish(self) -> Iterable[Output]:
        """The file is complete: return anything still held back (the notes of :meth:`notes` included)."""
        return ()

    def notes(self) -> list[Issue]:
        """The notes about the whole file read so far that :meth:`finish` would add now (Claude Code's
        ``subagent_calls_elsewhere``), without finishing anything: a followed file never ends, so the dashboard
        shows them as the file is read, as ``check`` lists them after reading it.  Default: none."""
        return []

    def feed_document(self, value: Any) -> Iterable[Output]:
        """Consume a whole-file JSON document (document formats only)."""
        return ()

    def pending_compactions(self) -> dict[str, dict[str, Any]]:
        """Compactions seen whose next call has not arrived yet, by context (``{}`` if none).

        Each value is the marker the next call will carry (``kind``, ``pre_tokens``, ``post_tokens``...).
        Lets the UI show the post-compaction occupancy at once instead of the stale pre-compaction one.
        """
        pending = getattr(self, "_pending", None)
        if isinstance(pending, dict) and all(isinstance(v, dict) for v in pending.values()):
            return dict(pending)
        return {}


@dataclass(frozen=True)
class Sniff:
    """What detection knows about a file: its path, its head's JSON values and whether it is a document.

    Attributes:
        path: the file path.
        values: up to the first 50 JSON values decoded from the first ``SNIFF_BYTES`` (line by line).
        document: the parsed whole document, when the file is a single (pretty-printed) JSON value and small
            enough to have been read for detection; else ``None``.
        head: the raw first bytes.
    """

    path: str
    values: list[Any]
    document: Any = None
    head: bytes = b""


@dataclass(frozen=True)
class FormatSpec:
    """A registered log format.

    Attributes:
        name: short name for ``--format``.
        description: one line for ``ctxwatch formats``.
        sniff: returns a confidence in [0, 1] that a file is in this format.
        reader: builds a :class:`Reader` for a path (the batch formats' readers also take ``input_path``, the
            request file a joined call was read with).
        document: the format is a whole-file JSON document, not a stream of records.
        needs_prefix: re-reading one call's text needs the file from its start (state spans records).
        records_independent: every record is read and accounted the same whatever came before it (the
            reader keeps no state across records other than caches), so a big file may be cut into line
            ranges read by separate processes (:mod:`ctxwatch.engine.parallel`).
        example: a one-line example or pointer to a sample.
    """

    name: str
    description: str
    sniff: Callable[[Sniff], float]
    reader: Callable[..., Reader]
    document: bool = False
    needs_prefix: bool = False
    records_independent: bool = False
    example: str = ""
    aliases: tuple[str, ...] = field(default=())


REGISTRY: dict[str, FormatSpec] = {}

# Format modules register themselves on import. Listed here so that detection sees all of them.
_MODULES = (
    "ctxwatch.formats.canonical",
    "ctxwatch.formats.claude_trace",
    "ctxwatch.formats.claude_code",
    "ctxwatch.formats.codex",
    "ctxwatch.formats.batch",
    "ctxwatch.formats.inspect_ai",
    "ctxwatch.formats.openhands",
    "ctxwatch.formats.swe_agent",
    "ctxwatch.formats.cline",
    "ctxwatch.formats.gemini",
    "ctxwatch.formats.gemini_cli",
)
_loaded = False

__all__ = [
    "MAX_COUNT", "SNIFF_BYTES", "ClineReader", "FormatSpec", "GeminiCliReader", "InspectReader", "OpenHandsEvalReader",
    "OpenHandsReader", "Output", "Reader", "Sniff", "SweAgentReader", "array_of_records", "count_or_none", "detect",
    "document_source", "floor_once", "formats", "get_format", "inspect_usage", "litellm_usage", "not_a_count",
    "register", "sniff_document", "sniff_file", "usage_count",
]

#: Public names of reader modules that were split in two, by the module that holds them now: importable from
#: here, and loaded only when asked for (importing a reader module registers its formats).  (Resolved at run
#: time only, so that no static import ties this package to a reader: the readers import it.)
_MOVED = {
    "GeminiCliReader": "ctxwatch.formats.gemini_cli",
    "ClineReader": "ctxwatch.formats.cline", "InspectReader": "ctxwatch.formats.inspect_ai",
    "OpenHandsEvalReader": "ctxwatch.formats.openhands", "OpenHandsReader": "ctxwatch.formats.openhands",
    "SweAgentReader": "ctxwatch.formats.swe_agent", "inspect_usage": "ctxwatch.formats.inspect_ai",
    "litellm_usage": "ctxwatch.formats.wire.litellm",
}

if not TYPE_CHECKING:
    def __getattr__(name: str) -> Any:
        """A name of :data:`_MOVED`, imported from its module on first use."""
        module = _MOVED.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)


def register(spec: FormatSpec) -> FormatSpec:
    """Add a format to the registry (called by each format module at import)."""
    REGISTRY[spec.name] = spec
    return spec


def _load_all() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    for mod in _MODULES:
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as exc:
            if exc.name != mod:  # a real import error inside an existing module must surface
                raise


def formats() -> dict[str, FormatSpec]:
    """All registered formats by name."""
    _load_all()
    return dict(REGISTRY)


def get_format(name: str) -> FormatSpec:
    """The format called ``name`` (or one of its aliases).

    Raises:
        KeyError: no such format; the message lists the known names.
    """
    _load_all()
    if name in REGISTRY:
        return REGISTRY[name]
    for spec in REGISTRY.values():
        if name in spec.aliases:
            return spec
    raise KeyError(f"unknown format {name!r}; known: {', '.join(sorted(REGISTRY))}")


def sniff_file(path: str, max_values: int = 50) -> Sniff:
    """Read a file's head for detection, decoding up to ``max_values`` JSON values from its lines.

    Never raises for bad content; raises ``OSError`` if unreadable.
    """
    with open(path, "rb") as fh:
        head = fh.read(SNIFF_BYTES)
        size = os.fstat(fh.fileno()).st_size
    values: list[Any] = []
    lines = head.split(b"\n")
    if len(head) == SNIFF_BYTES and len(lines) > 1:
        lines = lines[:-1]  # the last piece may be cut
    elif len(head) == SNIFF_BYTES:
        # The first line alone is longer than the sniff window (a record with a big image or tool result):
        # read that one line whole, within the per-line cap.
        lines = [_first_line(path)]
    for i, raw in enumerate(lines):
        vals, _ = decode_line(raw, path, i + 1, first=i == 0)
        vals = [v for v in vals if isinstance(v, dict | list)]  # a pretty-printed line like `"a": 1,` is no record
        values.extend(vals)
        if len(values) >= max_values:
            break
    document = None
    stripped = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    first_line = stripped.split(b"\n", 1)[0].strip()
    pretty = first_line in (b"{", b"[") or (first_line.startswith(b"[") and not values)
    if stripped[:1] in (b"{", b"[") and (pretty or not values or (len(values) == 1 and size > len(lines[0]) + 1)):
        # Looks like one pretty-printed document. Parse it whole if it is of reasonable size.
        if size <= 256 * 1024 * 1024:
            try:
                with open(path, "rb") as fh:
                    data = fh.read()
                document = orjson.loads(data.removeprefix(b"\xef\xbb\xbf"))
            except (orjson.JSONDecodeError, OSError):
                document = None
    return Sniff(path, values, document, head)


def _first_line(path: str) -> bytes:
    """The file's first line, read in chunks up to :data:`~ctxwatch.source.lines.DEFAULT_MAX_LINE_BYTES`."""
    from ctxwatch.source import DEFAULT_MAX_LINE_BYTES

    buf = bytearray()
    with open(path, "rb") as fh:
        while len(buf) < DEFAULT_MAX_LINE_BYTES:
            chunk = fh.read(SNIFF_BYTES)
            if not chunk:
                break
            nl = chunk.find(b"\n")
            if nl >= 0:
                buf += chunk[:nl]
                break
            buf += chunk
    return bytes(buf)


def detect(path: str) -> FormatSpec | None:
    """The most likely format of a file, or ``None`` if no format recognises it.

    Raises:
        OSError: the file cannot be read.
    """
    _load_all()
    if path.endswith(".eval"):
        spec = REGISTRY.get("inspect-ai")
        if spec:
            return spec
    # A first look at a few records settles most files (a folder of 2,000 session logs is sniffed in a
    # fraction of the time); an unsure answer gets the full look at up to 50 records.
    sn = sniff_file(path, max_values=QUICK_SNIFF_VALUES)
    best, score = _best(sn)
    if score < SURE_SCORE and len(sn.values) >= QUICK_SNIFF_VALUES:
        best, score = _best(sniff_file(path))
    return best if score >= 0.3 else None


def array_of_records(sn: Sniff) -> tuple[int, FormatSpec] | None:
    """``(elements, format)`` when the sniffed file is one JSON array (pretty-printed, or on one line) whose
    elements are records of a format read line by line (``json.dump(records)``, ``jq -s``, an export); else
    ``None``.  Such a file is not read as a log (ctxwatch re-reads message bodies by the byte range of their
    line), but the error can say how to convert it rather than "format not recognised"."""
    array = sn.document if isinstance(sn.document, list) else None
    if array is None and len(sn.values) == 1 and isinstance(sn.values[0], list):
        array = sn.values[0]
    if not array:
        return None
    records = [v for v in array[:QUICK_SNIFF_VALUES] if isinstance(v, dict)]
    if not records:
        return None
    best, score = _best(Sniff(sn.path, records, None, b""))
    if best is None or score < 0.3 or best.document:
        return None
    return len(array), best


#: Records decoded for the first look at a file, and the score that makes that look final.  A format's
#: sniff gives >= 0.9 only for records that carry its own envelope (every sniff's docstring), so more
#: records cannot change a sure answer to another format in the samples; less sure answers get 50 records.
QUICK_SNIFF_VALUES = 8
SURE_SCORE = 0.9


def _best(sn: Sniff) -> tuple[FormatSpec | None, float]:
    best, score = None, 0.0
    for spec in REGISTRY.values():
        try:
            s = spec.sniff(sn)
        except Exception:
            s = 0.0
        if s > score:
            best, score = spec, s
    return best, score


#: Largest document parsed for detection when :func:`ctxwatch.formats.sniff_file` did not parse it (bytes);
#: the same bound sniff_file uses.
_SNIFF_DOC_MAX = 256 * 1024 * 1024


_doc_cache: tuple[tuple[str, int, int], Any] | None = None


def sniff_document(s: Sniff) -> Any:
    """The whole JSON document behind a :class:`Sniff`, or ``None`` if the file is not one JSON document.

    Uses ``s.document`` when detection parsed it, or the single decoded value of a one-line document.  A
    pretty-printed document whose head decoded into stray values (each ``"key": …`` line yields its key
    string, so ``sniff_file`` does not try the whole file) is parsed here once and cached by path, size
    and mtime, so that the several document sniffers share one parse.  Never raises.
    """
    global _doc_cache
    if s.document is not None:
        return s.document
    if len(s.values) == 1 and isinstance(s.values[0], dict | list):
        return s.values[0]
    head = s.head.lstrip(b"\xef\xbb\xbf \t\r\n")
    first = head.split(b"\n", 1)[0].strip()
    if first not in (b"{", b"[") and not (first.startswith(b"[") and first.endswith(b"{")):
        return None  # a JSONL record can never be a bare "{" or "[" line: only a pretty-printed document is
    try:
        st = os.stat(s.path)
        key = (s.path, st.st_size, st.st_mtime_ns)
        if _doc_cache is not None and _doc_cache[0] == key:
            return _doc_cache[1]
        if st.st_size > _SNIFF_DOC_MAX:
            return None
        with open(s.path, "rb") as fh:
            value = orjson.loads(fh.read().removeprefix(b"\xef\xbb\xbf"))
    except (OSError, orjson.JSONDecodeError):
        return None
    _doc_cache = (key, value)
    return value


def document_source(path: str) -> SourceRef:
    """The source of a call read from a whole-file document: the whole file (line 0: tied to no line; the byte
    range is the file's size, 0 when it cannot be read)."""
    try:
        size = os.path.getsize(path)
    except OSError:
        size = 0
    return SourceRef(path, 0, 0, 0, size)


_T = TypeVar("_T")


def floor_once(calls: list[_T]) -> list[_T]:
    """Mark the calls of one conversation whose system prompt and tools are not logged (``history_reported_only``)
    so that the floor is inferred once, from the first call with a reported prompt, and each later call's
    history is its reported prompt minus that floor (``extra["floor_call"]``, :mod:`ctxwatch.accounting`);
    return ``calls`` (other outputs among them are passed over).

    Inferred for every call (reported prompt minus the history as counted here), the floor would take in the
    tokenizer's error on each history: on a Cline run of Claude calls counted with o200k_base it would climb
    from 11,148 to 40,106 tokens in 12 calls.  The Claude Code, Codex and Gemini CLI readers keep the same rule.
    """
    first: str | None = None
    for c in calls:
        if not isinstance(c, ParsedCall) or not c.history_reported_only or c.key is None:
            continue
        if first is not None:
            c.extra["floor_call"] = first
        elif c.usage is not None and (c.usage.prompt_total or 0) > 0 and c.messages is not None:
            first = c.key
    return calls
