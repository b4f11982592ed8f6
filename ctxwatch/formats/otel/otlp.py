"""OTLP/JSON as the OpenTelemetry Collector's file exporter writes it: attribute values, ids and times.

Both JSON mappings of the OTLP protobuf messages are read, since exporters write either: the OTLP/JSON one of
the OpenTelemetry specification ("OTLP/HTTP", JSON encoding: lowerCamelCase keys, trace and span ids as hex,
64-bit integers as decimal strings ``"intValue": "123"``) and protobuf's canonical JSON mapping (what
``google.protobuf.json_format.MessageToJson`` writes: ids as base64, and snake_case keys when the field names are
preserved).  Nothing here raises on odd values: a value of the wrong shape reads as absent (``None``); a
repeated field or an attribute list of another JSON type, or an entry of it that is no object, is also noted
(an ``invalid_field`` issue of the record), so that a span it held is not lost without a word.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

import orjson

from ctxwatch.model import json_type, note_bad_field

#: Bytes of a trace id and of a span id (OTLP ``trace.proto``: 16 and 8).
TRACE_ID_BYTES, SPAN_ID_BYTES = 16, 8

#: Nesting depth of ``arrayValue`` / ``kvlistValue`` values followed: deeper values read as absent, so that a
#: hostile line cannot exhaust the stack (a log line holds at most 1,024 levels of JSON).
MAX_DEPTH = 64


def field(d: dict[str, Any], camel: str, snake: str) -> Any:
    """The field ``camel`` (OTLP/JSON) of an OTLP object, or its protobuf name ``snake``; ``None`` if absent."""
    v = d.get(camel)
    return d.get(snake) if v is None else v


def items(d: Any, camel: str, snake: str) -> list[dict[str, Any]]:
    """The objects of a repeated field (``resourceSpans``, ``spans``...), empty when absent or not a list."""
    if not isinstance(d, dict):
        return []
    v = field(d, camel, snake)
    if not isinstance(v, list):
        if v is not None:
            note_bad_field(f"{camel} is a JSON {json_type(v)}, not an array: read as empty")
        return []
    out = [x for x in v if isinstance(x, dict)]
    if len(out) != len(v):
        odd = next(x for x in v if not isinstance(x, dict))
        note_bad_field(f"an entry of {camel} is a JSON {json_type(odd)}, not an object: skipped")
    return out


#: ``AnyValue`` keys whose value is the plain value itself, in both mappings.
_PLAIN = frozenset({"stringValue", "string_value", "boolValue", "bool_value", "doubleValue", "double_value",
                    "bytesValue", "bytes_value"})


def any_value(v: Any, depth: int = 0) -> Any:
    """An OTLP ``AnyValue`` as a plain JSON value: ``stringValue`` a str, ``intValue`` an int (it may be a
    string of digits), ``doubleValue`` a float, ``boolValue`` a bool, ``arrayValue`` a list, ``kvlistValue`` a
    dict, ``bytesValue`` its base64 text as written.  ``None`` for an empty or unreadable value."""
    if v.__class__ is not dict or depth > MAX_DEPTH:
        return None
    # (an AnyValue holds one key: a loop over its items is the fast way to find which, on every attribute)
    for k, x in v.items():
        if x is None:
            continue
        if k in _PLAIN:
            return x
        if k == "intValue" or k == "int_value":
            return _int(x)
        if (k == "arrayValue" or k == "array_value") and x.__class__ is dict:
            vs = x.get("values")
            return [any_value(e, depth + 1) for e in vs if e.__class__ is dict] if vs.__class__ is list else []
        if (k == "kvlistValue" or k == "kvlist_value") and x.__class__ is dict:
            return attributes(x.get("values"), depth + 1)
    return None


def _int(x: Any) -> Any:
    """An ``intValue``: the JSON mapping writes int64 as a decimal string; anything else is passed on as it is, for
    the reader's count rules to judge."""
    if x.__class__ is str and x.isascii() and len(x) <= 20 and (x.isdigit() or (x[:1] == "-" and x[1:].isdigit())):
        return int(x)
    return x


def attributes(kvs: Any, depth: int = 0) -> dict[str, Any]:
    """A list of OTLP ``KeyValue`` as a dict of plain values (:func:`any_value`); a later key wins."""
    out: dict[str, Any] = {}
    if kvs.__class__ is list:
        for kv in kvs:
            if kv.__class__ is dict and (key := kv.get("key")).__class__ is str:
                out[key] = any_value(kv.get("value"), depth)
            elif not depth:
                note_bad_field(f"an attribute is a JSON {json_type(kv)} without a string key, not a KeyValue: "
                               "skipped")
    elif kvs is not None and not depth:
        note_bad_field(f"attributes is a JSON {json_type(kvs)}, not an array of KeyValue: read as empty")
    return out


def hex_id(v: Any, size: int) -> str | None:
    """A trace id (``size`` 16) or span id (8) as lowercase hex, from either mapping: hex (OTLP/JSON) or base64
    (protobuf's JSON); ``None`` when empty or neither (all zeros is no id, per the OTLP specification)."""
    if not isinstance(v, str) or not v:
        return None
    if len(v) == 2 * size:
        try:
            raw = bytes.fromhex(v)
        except ValueError:
            raw = b""
    else:
        raw = b""
    if not raw:
        try:
            raw = base64.b64decode(v, validate=True)
        except (binascii.Error, ValueError):
            return None
        if len(raw) != size:
            return None
    return raw.hex() if any(raw) else None


def unix_nano(v: Any) -> float | None:
    """Epoch seconds from an OTLP ``*TimeUnixNano`` field (a decimal string or a number); ``None`` when absent, 0
    (unset, per the OTLP specification) or not a time."""
    n = _int(v) if isinstance(v, str) else v
    if isinstance(n, bool) or not isinstance(n, int | float) or n <= 0 or n != n:
        return None
    try:
        return float(n) / 1e9
    except OverflowError:
        return None


def json_value(v: Any) -> tuple[Any, bool]:
    """A content attribute as a JSON value, and whether it was readable: instrumentations record structured
    content either as structured attributes (already a list or dict here) or as a JSON string."""
    if isinstance(v, str):
        try:
            return orjson.loads(v), True
        except orjson.JSONDecodeError:
            return None, False
    return v, v is not None
