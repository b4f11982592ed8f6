"""JSON values as providers and exporters write them: token counts, and the text of a value sent as JSON.

Every reader reads a usage field, a request's output limit and a tool call's arguments by these rules, so a
count written as ``"1024"`` or ``1024.0`` is the same count in every format, and a value that is no count is
passed on for the run to report instead of being guessed.
"""

from __future__ import annotations

import math
from typing import Any

from ctxwatch.model import MAX_COUNT, ResponseInfo, Usage, json_type, note_bad_field
from ctxwatch.source import MAX_INT_DIGITS, show_value
from ctxwatch.source import json_text as _json_text


def usage_count(value: Any, missing: int | None = None) -> Any:
    """A usage field as a token count: an int, an integral float or a string of digits (some exporters write
    numbers as strings) as an int; ``missing`` when absent (``None``).  Any other value (``"1e3"``, ``1.5``,
    ``true``, ``"many"``) is passed through as it is, so that :func:`ctxwatch.engine.sanitize.sanitize` reports
    it, with the value, and makes the field unknown: never a guess such as 1,000, 1 or 0.  Callers do arithmetic only on
    ``int`` results."""
    if value.__class__ is int:
        return value
    if value is None:
        return missing
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        digits = value.strip()
        # (ASCII digits only: str.isdigit() takes "²", which int() refuses; and no longer than int() converts)
        if digits.isascii() and digits.isdigit() and len(digits) <= MAX_INT_DIGITS:
            return int(digits)
    return value


def string_counts(block: Any, where: str = "") -> list[str]:
    """One sentence for each count of ``block`` (a usage block, a request body's limits: a JSON object; and the
    objects inside it, such as ``prompt_tokens_details``) written as a JSON string of digits, which
    :func:`usage_count` reads as the count it spells: the provider APIs write numbers there, so a reader of
    their bodies reports the string (an ``invalid_field`` issue, ``where`` naming the block:
    ``response.usage``; ``""``: a record's top-level fields), while the count is still read.  A string that is
    no count (:func:`count_or_none`: ``"lots"``, 100 digits) is not named here: it is the sanitizer's to report,
    as unknown.  ``[]`` for a value that is no object."""
    if not isinstance(block, dict):
        return []
    out: list[str] = []
    for key, v in block.items():
        name = f"{where}.{key}" if where else str(key)
        # (one level down, not a recursion: a block nested a thousand levels deep is a line, not a crash)
        for k, x in v.items() if isinstance(v, dict) else [(None, v)]:
            if isinstance(x, str) and (n := count_or_none(x)) is not None:
                out.append(f"{name if k is None else f'{name}.{k}'} is a JSON string {show_value(x)}, not a "
                           f"number: read as {n:,}")
    return out


#: The request fields that set the completion limit (chat ``max_completion_tokens`` / ``max_tokens``, Anthropic
#: ``max_tokens``, Responses ``max_output_tokens``), read as counts (:func:`request_max_tokens`).
LIMIT_KEYS = ("max_completion_tokens", "max_tokens", "max_output_tokens")


def limit_counts(body: Any, where: str) -> list[str]:
    """:func:`string_counts` of the completion limits (:data:`LIMIT_KEYS`) a request body ``body`` sets, named
    ``where`` (``body``, ``params``, ``request.body``); ``[]`` for a body that is no object."""
    if not isinstance(body, dict):
        return []
    return string_counts({k: body[k] for k in LIMIT_KEYS if k in body}, where)


def response_unknown(where: str, value: Any, wanted: str, finish: str = "finish reason") -> ResponseInfo | None:
    """Note (an ``invalid_field`` issue of the record) that the response field ``where`` holds ``value``, which
    is not ``wanted`` (``a list``, ``an object``...): the response's text, tool calls and ``finish`` (its name in
    the provider's shape: ``finish reason``, Anthropic's ``stop reason``) are unknown.  Returns ``None``, the
    response info of such a body."""
    note_bad_field(f"{where} is a JSON {json_type(value)}, not {wanted}: the response text, tool calls and "
                   f"{finish} are unknown")
    return None


def odd_content(value: Any, what: str = "message content", taken: str = "its JSON counted as text", *,
                wanted: str = "text or a list of blocks") -> None:
    """Note (:func:`~ctxwatch.model.note_bad_field`, an ``invalid_field`` issue of the record) that ``value``,
    a message's content or one of its blocks (or another field of a message), is of a JSON type no API takes
    there (a number, NaN, a boolean; ``what`` names the field, ``wanted`` what the API takes), and what the
    reader made of it (``taken``)."""
    note_bad_field(f"{what} is a JSON {json_type(value)}, not {wanted}: {taken}")


def id_or_none(value: Any, what: str = "a tool call id") -> str | None:
    """``value`` when it is an id (a string) or absent (``None``); any other JSON type is noted as an
    ``invalid_field`` issue of the record (``what`` names the field) and read as absent."""
    if value is None or isinstance(value, str):
        return value
    note_bad_field(f"{what} is a JSON {json_type(value)}, not a string: read as none (paired with no call)")
    return None


def odd_usage(value: Any) -> None:
    """Note (an ``invalid_field`` issue of the record) a usage block that is present but no JSON object (a
    list, a string, a number): the call's usage is unknown, not "not reported"."""
    if value is not None:
        note_bad_field(f"a usage block is a JSON {json_type(value)}, not an object: the call's usage is unknown")


def note_usage_types(block: Any, where: str, *, null_unknown: bool = False) -> None:
    """Note (``invalid_field`` issues of the record being read) the wrong JSON types of the usage block found at
    ``where`` (``message.usage``, ``usageMetadata``...): a block that is no object (:func:`odd_usage`; a
    ``null`` too when ``null_unknown``: a format that always writes the object there, so that ``null`` leaves
    the call's usage unknown rather than not reported), and each count written as a JSON string of digits
    (:func:`string_counts`: read as the count it spells, and said).  The rule of every reader of Anthropic,
    OpenAI and Gemini usage shapes, called as the record is read (so the issue names its line)."""
    if block is None:
        if null_unknown:
            note_bad_field(f"{where} is a JSON null, not an object: the call's usage is unknown")
        return
    if not isinstance(block, dict):
        odd_usage(block)
        return
    for sentence in string_counts(block, where):
        note_bad_field(sentence)


def count_or_none(value: Any) -> int | None:
    """A token count from a JSON value (:func:`usage_count`: ints, integral floats, strings of digits), or
    ``None`` for anything that is not a count (negative, ``1.5``, ``"inf"``, ``1e400``, ``true``, or 2**53
    (:data:`MAX_COUNT`) and more: ``1e300`` is an integral float, which a JSON output could not hold as an int)."""
    n = usage_count(value)
    return n if n.__class__ is int and 0 <= n < MAX_COUNT else None


def not_a_count(v: object) -> str:
    """Why ``v``, a value :func:`count_or_none` rejects (negative, beyond 2**53, not a whole number, not a number),
    is not a token count, in a few words for an ``implausible_value`` issue: the run's and the readers' one
    wording."""
    if isinstance(v, str) and v.strip().isascii() and v.strip().isdigit():
        return "beyond 2**53, more than any window"  # (digits too many to read as a number)
    if isinstance(v, bool) or not isinstance(v, int | float) or v != v:  # (v != v: NaN)
        return "not a number"
    if v < 0:
        return "negative"
    if isinstance(v, float) and math.isfinite(v):
        return "not a whole number"
    return "beyond 2**53, more than any window"  # (inf: 1e400, or an integer of thousands of digits)


def count_issue_kind(v: object) -> str:
    """The issue kind of a value :func:`count_or_none` rejects: ``invalid_field`` (a bad line) for a value that is
    no JSON number (a bool, an array, an object, a string no count reads from), a field of the wrong type;
    ``implausible_value`` (a note) for a number that cannot be a count (negative, fractional, 2**53 or more)."""
    number = isinstance(v, int | float) and not isinstance(v, bool)
    return "implausible_value" if number else "invalid_field"


def int_or_none(v: Any) -> int | None:
    """An int from a JSON number (or numeric string, as some exporters write), else ``None`` (the rule of
    :func:`usage_count`, without passing other values on)."""
    n = usage_count(v)
    return n if n.__class__ is int else None


def request_max_tokens(body: dict[str, Any], *keys: str) -> Any:
    """The completion limit a request set: the first of ``keys`` present in ``body`` (``max_completion_tokens``,
    ``max_tokens``, ``max_output_tokens``), as :func:`usage_count` reads it, so that a value that is not a count
    (``1024.5``, ``"lots"``) reaches :func:`ctxwatch.engine.sanitize.sanitize` and is reported, not silently replaced
    by the default reserve; ``None`` when the request sets none."""
    for k in keys:
        v = body.get(k)
        if v is not None:
            return usage_count(v)
    return None


def json_text(v: Any) -> str:
    """Text of a value that is sent to the model as JSON (tool arguments given as objects), never raising
    (:func:`ctxwatch.source.jsontext.json_text`; ``None`` is ``null`` here)."""
    return _json_text(v, none="null")


def total_mismatch(total: Any, usage: Usage | None, label: str = "usage total_tokens") -> str | None:
    """A sentence when a usage block's reported total (``total``, tokens; named ``label`` in it) is not its prompt
    plus its output as read (``usage``): a count the reader does not know sits in the total, so the prompt or the
    output (and the cost) may be short; ``None`` when they agree or either side is unknown."""
    t = int_or_none(total)
    if t is None or usage is None or usage.prompt_total.__class__ is not int or usage.output.__class__ is not int:
        return None
    got = usage.prompt_total + usage.output  # type: ignore[operator]
    if t == got:
        return None
    return (f"{label} {t:,} is not prompt {usage.prompt_total:,} + output {usage.output:,} = {got:,} "
            f"({t - got:+,}): the block counts tokens ctxwatch does not read, so the prompt, the output or the "
            "cost may be off")


def model_id(value: Any, what: str) -> str | None:
    """``value`` when it is a string (a model id), ``None`` when it is absent; any other JSON type is noted (an
    ``invalid_field`` issue of the record, ``what`` naming the field) and read as no model (its window and price
    unknown), never as the id its JSON text would spell."""
    if isinstance(value, str):
        return value
    if value is not None:
        note_bad_field(f"{what} is a JSON {json_type(value)}, not a string: the model is unknown")
    return None


def listed(value: Any, what: str) -> list[Any]:
    """``value`` when it is a JSON array, ``[]`` when it is absent (``None``) or empty; any other JSON type (a
    number, a string, an object, ``true``) is noted (an ``invalid_field`` issue of the record, ``what`` naming
    the field) and read as empty, never iterated (a string's characters, an object's keys) nor raised on."""
    if isinstance(value, list):
        return value
    if value is not None:
        note_bad_field(f"{what} is a JSON {json_type(value)}, not an array: read as empty")
    return []


def as_object(value: Any, what: str) -> dict[str, Any]:
    """``value`` when it is a JSON object, ``{}`` when it is absent (``None``); any other JSON type is noted (an
    ``invalid_field`` issue of the record, ``what`` naming the field) and read as an empty object."""
    if isinstance(value, dict):
        return value
    if value is not None:
        note_bad_field(f"{what} is a JSON {json_type(value)}, not an object: read as empty")
    return {}
