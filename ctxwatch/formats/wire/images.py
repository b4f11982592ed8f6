"""Image payloads as logs carry them: an image part from a URL, a ``data:`` URI or raw base64, and the pixel size
of a base64 image read from its header.

The base64 text of an image is never tokenized: providers bill an image by its pixel size, so readers keep the
size and the payload's byte count and drop the text.
"""

from __future__ import annotations

import base64
import struct
from typing import Any

from ctxwatch.model import Part


def image_size_from_base64(data: str) -> tuple[int, int] | None:
    """Width and height in pixels from the first bytes of a base64 PNG, GIF or JPEG, or ``None``."""
    try:
        head = base64.b64decode(data[:4096] + "=" * (-len(data[:4096]) % 4), validate=False)
    except Exception:
        return None
    if head[:8] == b"\x89PNG\r\n\x1a\n" and len(head) >= 24:
        w, h = struct.unpack(">II", head[16:24])
        return int(w), int(h)
    if head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
        w, h = struct.unpack("<HH", head[6:10])
        return int(w), int(h)
    if head[:2] == b"\xff\xd8":
        i = 2
        while i + 9 < len(head):
            if head[i] != 0xFF:
                i += 1
                continue
            marker = head[i + 1]
            seg_len = struct.unpack(">H", head[i + 2 : i + 4])[0]
            if marker in (0xC0, 0xC1, 0xC2):
                h, w = struct.unpack(">HH", head[i + 5 : i + 9])
                return int(w), int(h)
            i += 2 + seg_len
    return None


def image_part(url_or_data: str, media: dict[str, Any] | None = None, *, base64_data: bool = False) -> Part:
    """An ``image`` part from a URL, a ``data:`` URI, or raw base64 (``base64_data=True``).

    For inline data the pixel size is read from the image header (PNG, GIF, JPEG) so the provider's
    per-image rule can be applied; the base64 text itself is never tokenized.
    """
    meta: dict[str, Any] = dict(media or {})
    data = url_or_data
    if data.startswith("data:") and "," in data:
        data = data.split(",", 1)[1]
        base64_data = True
    if not base64_data:
        meta.setdefault("url", data[:200])
        return Part("image", "", meta=meta)
    meta["bytes"] = len(data) * 3 // 4
    size = image_size_from_base64(data)
    if size:
        meta["width"], meta["height"] = size
    return Part("image", "", meta=meta)
