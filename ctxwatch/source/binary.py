"""Whether the start of a file or a pipe is text, as a JSONL log is, or binary data (an image, an archive, random
bytes) or text in another encoding than UTF-8 (UTF-16 from a Windows editor or PowerShell's ``>``)."""

from __future__ import annotations

#: Most control bytes (other than tab, newline, carriage return, form feed) a head of text may hold, as a fraction
#: of its bytes: JSON writes them escaped, so a log has none but for a damaged line, while random bytes are one
#: in eight of them.
MAX_CONTROL_FRACTION = 0.01

#: The C0 control bytes a JSON text never holds raw (JSON escapes them; tab, newline, CR and form feed are
#: whitespace that may stand between values).
_CONTROLS = bytes(b for b in range(32) if b not in (9, 10, 12, 13)) + b"\x7f"

#: Byte-order marks of UTF-16 and UTF-32 text (the UTF-32 ones first: a UTF-32 little-endian mark starts with
#: the UTF-16 one).
_WIDE_BOMS = ((b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"), (b"\xff\xfe", "UTF-16"),
              (b"\xfe\xff", "UTF-16"))


def looks_like_text(head: bytes) -> bool:
    """Whether ``head``, the start of a file or a pipe, is text as a JSONL log is: at most
    :data:`MAX_CONTROL_FRACTION` of raw control bytes, and UTF-8 but for as many damaged sequences (a log with a
    bad line or two is still read, and its damage reported by line; ``cat /dev/urandom`` or a binary file is
    not)."""
    limit = max(1, int(len(head) * MAX_CONTROL_FRACTION))
    if len(head) - len(head.translate(None, _CONTROLS)) > limit:
        return False
    text = head.decode("utf-8", "replace")
    return text.count("\ufffd") - head.count("\ufffd".encode()) <= limit  # (less those written as such)


def wide_encoding(head: bytes) -> str | None:
    """``"UTF-16"`` or ``"UTF-32"`` when ``head`` starts with that encoding's byte-order mark, else ``None``."""
    for bom, name in _WIDE_BOMS:
        if head.startswith(bom):
            return name
    return None
