"""Images inline as ``data:`` URIs, only for the four raster types and only for real base64 data."""

from __future__ import annotations

import re

from tau.ai.types import ImageContent
from tau.runtime.export_html.markup import escape

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")


def is_inline_image(image: ImageContent) -> bool:
    """A mime type the page may show and data that cannot close the attribute it goes in."""
    return (
        image.mime_type in IMAGE_TYPES
        and isinstance(image.data, str)
        and _BASE64.fullmatch(image.data) is not None
    )


def render_image(image: ImageContent) -> str:
    if not is_inline_image(image):
        return f'<div class="notice">[image not shown: {escape(str(image.mime_type))}]</div>'
    return f'<img class="inline-image" alt="image" src="data:{image.mime_type};base64,{image.data}">'
