"""Recognising images by their first bytes, reading their size, and the resizer hook.

Downscaling is an :class:`ImageResizer`; the default one is Pillow's (``tau.tools.image_resize``,
the optional ``tau[images]`` extra), and a caller may pass another.
"""

from __future__ import annotations

import struct
from typing import Protocol

from msgspec import Struct

from tau.ai.types import JsonObject, Model

MAX_IMAGE_DIMENSION = 2000
MAX_IMAGE_BASE64_BYTES = 4_718_592  # 4.5 MB of base64, under the strictest provider request cap

_SOF_MARKERS = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


def sniff_image_mime_type(head: bytes) -> str | None:
    """``image/png|jpeg|gif|webp`` when ``head`` (the first dozen bytes or more) starts like one."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if len(head) >= 12 and head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    i = 2
    while i + 9 < len(data):
        if data[i] != 0xFF:
            i += 1
            continue
        marker = data[i + 1]
        if marker == 0xFF:
            i += 1
            continue
        if marker in _SOF_MARKERS:
            height, width = struct.unpack(">HH", data[i + 5 : i + 9])
            return width, height
        if marker in (0x01, *range(0xD0, 0xDA)):  # markers without a length field
            i += 2
            continue
        (length,) = struct.unpack(">H", data[i + 2 : i + 4])
        i += 2 + length
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8 " and len(data) >= 30:
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and len(data) >= 25:
        b0, b1, b2, b3 = data[21:25]
        return 1 + (((b1 & 0x3F) << 8) | b0), 1 + (((b3 & 0x0F) << 10) | (b2 << 2) | ((b1 & 0xC0) >> 6))
    if chunk == b"VP8X" and len(data) >= 30:
        return 1 + int.from_bytes(data[24:27], "little"), 1 + int.from_bytes(data[27:30], "little")
    return None


def image_size(data: bytes, mime_type: str) -> tuple[int, int] | None:
    """(width, height) in pixels from the image header, or ``None`` if it cannot be read."""
    try:
        if mime_type == "image/png" and len(data) >= 24:
            width, height = struct.unpack(">II", data[16:24])
            return width, height
        if mime_type == "image/gif" and len(data) >= 10:
            width, height = struct.unpack("<HH", data[6:10])
            return width, height
        if mime_type == "image/jpeg":
            return _jpeg_size(data)
        if mime_type == "image/webp":
            return _webp_size(data)
    except struct.error:
        return None
    return None


class ResizedImage(Struct, frozen=True):
    data: bytes
    mime_type: str
    original_width: int
    original_height: int
    width: int
    height: int


class ImageLimits(Struct, frozen=True):
    """What an image is fitted to: pi 1.6's ``inputLimits.images.resize`` (``maxWidth``,
    ``maxHeight``, ``maxBytes`` of base64, ``jpegQuality``), each defaulting as pi's."""

    max_width: int = MAX_IMAGE_DIMENSION
    max_height: int = MAX_IMAGE_DIMENSION
    max_bytes: int = MAX_IMAGE_BASE64_BYTES
    jpeg_quality: int = 80

    @classmethod
    def of_model(cls, model: Model | None) -> ImageLimits:
        """The limits ``model``'s ``inputLimits.images.resize`` sets (models.json or the
        catalogue), the defaults for what it leaves out or when there is no model."""
        return cls.from_input_limits(model.input_limits if model is not None else None)

    @classmethod
    def from_input_limits(cls, input_limits: JsonObject | None) -> ImageLimits:
        images = input_limits.get("images") if input_limits else None
        resize = images.get("resize") if isinstance(images, dict) else None
        if not isinstance(resize, dict):
            return cls()

        def number(key: str, default: int) -> int:
            value = resize.get(key)
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                return default
            return int(value)

        return cls(
            number("maxWidth", MAX_IMAGE_DIMENSION),
            number("maxHeight", MAX_IMAGE_DIMENSION),
            number("maxBytes", MAX_IMAGE_BASE64_BYTES),
            min(100, number("jpegQuality", 80)),
        )


DEFAULT_IMAGE_LIMITS = ImageLimits()


class ImageResizer(Protocol):
    def __call__(self, data: bytes, mime_type: str, *, limits: ImageLimits) -> ResizedImage | None:
        """Downscale to fit ``limits`` (width and height, aspect kept, and the base64 size cap),
        choosing the smaller encoding; ``None`` when no encoding gets under the cap."""
        ...
