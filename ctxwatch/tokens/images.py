"""Token estimates of images (and documents sent as images), by each provider's published rule.

An image's size in tokens depends on its pixels, never on its base64 length; each provider documents its rule.
"""

from __future__ import annotations

from typing import Any

#: OpenAI vision pricing rule (platform docs, "Images and vision" > "Calculating costs"): 85 base tokens,
#: plus 170 per 512-px tile after scaling to fit 2048x2048 and then the short side to 768.
OPENAI_IMAGE_BASE = 85
OPENAI_IMAGE_TILE = 170
#: Anthropic vision rule (docs, "Vision" > "Calculate image costs"): tokens = width * height / 750, and
#: images are resized to at most ~1.15 megapixels, i.e. about 1,600 tokens at most.
ANTHROPIC_PIXELS_PER_TOKEN = 750
ANTHROPIC_IMAGE_MAX = 1600
#: Gemini counts an image as 258 tokens (Gemini API docs, "Token counting" > images up to 384 px per side;
#: larger images are tiled into 768 px tiles of 258 tokens each).
GEMINI_IMAGE_TILE = 258


def image_tokens(meta: dict[str, Any], provider: str | None) -> int:
    """Estimated tokens of one image, by the provider's documented rule (never ``len(base64)/4``).

    Args:
        meta: ``width``/``height`` in pixels when known, ``detail`` (OpenAI ``low``/``high``/``auto``).
        provider: decides the rule; unknown providers use the OpenAI rule.

    Returns:
        A positive token estimate. Unknown dimensions assume a 1024 x 1024 image.
    """
    w = int(meta.get("width") or 1024)
    h = int(meta.get("height") or 1024)
    if provider == "anthropic":
        return max(1, min(ANTHROPIC_IMAGE_MAX, (w * h) // ANTHROPIC_PIXELS_PER_TOKEN))
    if provider == "google":
        if w <= 384 and h <= 384:
            return GEMINI_IMAGE_TILE
        return GEMINI_IMAGE_TILE * (-(-w // 768)) * (-(-h // 768))
    if meta.get("detail") == "low":
        return OPENAI_IMAGE_BASE
    scale = min(1.0, 2048 / max(w, h))
    sw, sh = w * scale, h * scale
    scale = min(1.0, 768 / min(sw, sh))
    sw, sh = sw * scale, sh * scale
    tiles = (-(-int(sw) // 512)) * (-(-int(sh) // 512))
    return OPENAI_IMAGE_BASE + OPENAI_IMAGE_TILE * tiles
