"""JSON values from a log written back as text for a person or a content key, never raising."""

from __future__ import annotations

import json
from typing import Any

import orjson


def json_text(value: Any, *, sort_keys: bool = False, none: str = "") -> str:
    """Compact JSON text of a value parsed from a log (tool arguments, schemas, content objects), never raising.

    Strings are returned as they are, ``None`` as ``none`` (``""``; ``"null"`` where the value stands for a JSON
    argument).  orjson writes at most 254 levels of nesting and a log
    line may hold up to 1,024 (orjson's read limit), and the stdlib encoder stops at Python's recursion limit:
    a deeper value (a hostile line) is written by :func:`_deep_json`, without recursion.

    Args:
        value: a JSON value (dicts, lists, strings, numbers, booleans, ``None``).
        sort_keys: sort object keys (for content hashes that ignore key order).
    """
    if isinstance(value, str):
        return value
    if value is None:
        return none
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS if sort_keys else None).decode()
    except (TypeError, orjson.JSONEncodeError):
        return _deep_json(value, sort_keys)


class _Lit(str):
    """A piece of JSON syntax already written (``]``, ``,``, ``"key":``) on :func:`_deep_json`'s stack."""

    __slots__ = ()


def _deep_json(value: Any, sort_keys: bool) -> str:
    """JSON text of any value with an explicit stack (no recursion); what JSON cannot hold is written as its
    ``str()`` in a string (:func:`json_text` uses it only where orjson refuses)."""
    out: list[str] = []
    stack: list[Any] = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, _Lit):
            out.append(v)
        elif isinstance(v, dict):
            items = sorted(v.items(), key=lambda kv: str(kv[0])) if sort_keys else list(v.items())
            stack.append(_Lit("}"))
            for k, (key, item) in reversed(list(enumerate(items))):
                stack.append(item)
                stack.append(_Lit(("," if k else "") + json.dumps(str(key), ensure_ascii=False) + ":"))
            out.append("{")
        elif isinstance(v, list | tuple):
            stack.append(_Lit("]"))
            for k in range(len(v) - 1, -1, -1):
                stack.append(v[k])
                if k:
                    stack.append(_Lit(","))
            out.append("[")
        elif v is None or isinstance(v, bool | int | float | str):
            out.append(json.dumps(v, ensure_ascii=False))
        else:
            out.append(json.dumps(str(v), ensure_ascii=False))
    return "".join(out)


def show_value(v: object) -> str:
    """A log value for a message: a number short enough to read (1e+300, not 301 digits), ``true``/``false``,
    a string as its repr, a container as compact JSON (written without recursion: it may be nested ~1,000
    levels); cut to 40 characters (log text is untrusted and may be long)."""
    if isinstance(v, int) and not isinstance(v, bool):
        return _short_int(v) if abs(v) >= 10**15 else str(v)
    if v is None:
        text = "null"
    elif v is True or v is False:
        text = "true" if v else "false"
    elif isinstance(v, dict | list):
        text = json_text(v)
    else:
        text = repr(v)
    return text if len(text) <= 40 else text[:39] + "…"


def _short_int(v: int) -> str:
    """``v`` in the ``.3g`` form (``1e+20``, ``-1.23e+405``): through a float where it fits one, else through
    :class:`decimal.Decimal`, which holds any int (``float(10**309)`` raises OverflowError, and ``str()`` of an int
    of more than 4,300 digits raises ValueError, Python's limit on int/str conversions)."""
    try:
        return f"{v:.3g}"
    except OverflowError:
        from decimal import Decimal

        mantissa, _, exponent = f"{Decimal(v):.3g}".partition("e")  # (keeps the zeros a float drops: 1.00e+309)
        return f"{mantissa.rstrip('0').rstrip('.') if '.' in mantissa else mantissa}e{exponent}"
