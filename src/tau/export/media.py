"""Images inline as ``data:`` URIs, only for the four raster types and only for real base64 data.

Each shown image carries ``data-image-key`` (a hash of its data). The embedded session data stores
such images as ``IMAGE_REF_PREFIX + key`` instead of their bytes, and the page's script puts the
bytes back from the ``<img>`` when it decodes the session: an image is in the file once, not twice.
"""

from __future__ import annotations

import hashlib
import re

from tau.ai.types import ImageContent
from tau.export.markup import escape

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")
IMAGE_REF_PREFIX = "tau-image:"
RENDERED_IMAGE_KEY = re.compile(r'data-image-key="([0-9a-f]{32})"')


def is_inline_image(image: ImageContent) -> bool:
    """A mime type the page may show and data that cannot close the attribute it goes in."""
    return (
        image.mime_type in IMAGE_TYPES
        and isinstance(image.data, str)
        and _BASE64.fullmatch(image.data) is not None
    )


def image_key(data: str) -> str:
    return hashlib.sha256(data.encode("ascii", "replace")).hexdigest()[:32]


def render_image(image: ImageContent) -> str:
    if not is_inline_image(image):
        return f'<div class="notice">[image not shown: {escape(str(image.mime_type))}]</div>'
    return (
        f'<img class="inline-image" alt="image" data-image-key="{image_key(image.data)}" '
        f'src="data:{image.mime_type};base64,{image.data}">'
    )
