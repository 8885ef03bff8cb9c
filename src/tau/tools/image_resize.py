"""Fitting an image to what providers take (``images.autoResize``, as pi 1.6), with Pillow.

An image wider or taller than the model's limits (pi 1.6's ``inputLimits.images.resize``; 2000 px
and 4.5 MB of base64 by default) is scaled down (aspect kept, Lanczos) and sent as the smaller of
PNG and JPEG at the limits' quality (80 by default); when neither fits, lower JPEG qualities, then
three quarters of the size, until one does. Pillow is the optional ``tau[images]``
extra, imported only when an image needs resizing; without it the image goes as it is and the
note says how to enable resizing.
"""

from __future__ import annotations

import base64
import importlib.util
import io
from collections.abc import Iterator
from typing import TYPE_CHECKING

from msgspec import Struct

from tau.ai.types import ImageContent, TextContent
from tau.tools.images import (
    DEFAULT_IMAGE_LIMITS,
    ImageLimits,
    ImageResizer,
    ResizedImage,
    image_size,
)

if TYPE_CHECKING:
    from PIL.Image import Image

__all__ = [
    "PILLOW_MISSING_NOTE",
    "FittedImage",
    "dimension_note",
    "fit_image",
    "fit_prompt_images",
    "fit_tool_result_images",
    "pillow_resizer",
    "resize_with_pillow",
]

PILLOW_MISSING_NOTE = "[Image sent at full size: pip install 'tau[images]' (Pillow) enables resizing.]"
_LOWER_JPEG_QUALITIES = (85, 70, 55, 40)


def _base64_size(length: int) -> int:
    return (length + 2) // 3 * 4


def _encode(image: Image, mime_type: str, quality: int = 0) -> bytes:
    out = io.BytesIO()
    if mime_type == "image/png":
        image.save(out, format="PNG")
    else:
        image.convert("RGB").save(out, format="JPEG", quality=quality)
    return out.getvalue()


def _candidates(image: Image, quality: int) -> Iterator[tuple[bytes, str]]:
    """PNG and JPEG at ``quality`` (the smaller first), then JPEG at lower qualities."""
    png = _encode(image, "image/png")
    jpeg = _encode(image, "image/jpeg", quality)
    first = (
        [(jpeg, "image/jpeg"), (png, "image/png")]
        if len(jpeg) < len(png)
        else [(png, "image/png"), (jpeg, "image/jpeg")]
    )
    yield from first
    for lower in _LOWER_JPEG_QUALITIES:
        if lower != quality:
            yield _encode(image, "image/jpeg", lower), "image/jpeg"


def resize_with_pillow(data: bytes, mime_type: str, *, limits: ImageLimits) -> ResizedImage | None:
    """The :class:`~tau.tools.images.ImageResizer` backed by Pillow (EXIF orientation applied);
    ``None`` when the image cannot be decoded or no encoding gets under the cap."""
    from PIL import Image as PILImage
    from PIL import ImageOps

    try:
        with PILImage.open(io.BytesIO(data)) as opened:
            image = ImageOps.exif_transpose(opened) or opened
            image.load()
            if image.mode not in ("RGB", "RGBA", "L", "LA"):
                image = image.convert("RGBA")
            width, height = image.size
            if (
                width <= limits.max_width
                and height <= limits.max_height
                and _base64_size(len(data)) < limits.max_bytes
            ):
                return ResizedImage(data, mime_type, width, height, width, height)
            target_w, target_h = width, height
            if target_w > limits.max_width:
                target_h, target_w = max(1, round(target_h * limits.max_width / target_w)), limits.max_width
            if target_h > limits.max_height:
                target_w, target_h = max(1, round(target_w * limits.max_height / target_h)), limits.max_height
            while True:
                scaled = image.resize((target_w, target_h), PILImage.Resampling.LANCZOS)
                for encoded, encoded_type in _candidates(scaled, limits.jpeg_quality):
                    if _base64_size(len(encoded)) < limits.max_bytes:
                        return ResizedImage(encoded, encoded_type, width, height, target_w, target_h)
                next_w, next_h = max(1, target_w * 3 // 4), max(1, target_h * 3 // 4)
                if (next_w, next_h) == (target_w, target_h):
                    return None
                target_w, target_h = next_w, next_h
    except (OSError, ValueError, PILImage.DecompressionBombError):
        return None


def pillow_resizer() -> ImageResizer | None:
    """:func:`resize_with_pillow` when Pillow is installed (without importing it), else ``None``."""
    return resize_with_pillow if importlib.util.find_spec("PIL") is not None else None


def dimension_note(resized: ResizedImage) -> str:
    """The note telling the model the image was scaled and how to map coordinates back."""
    scale = resized.original_width / resized.width if resized.width else 1.0
    return (
        f"[Image: original {resized.original_width}x{resized.original_height}, displayed at "
        f"{resized.width}x{resized.height}. Multiply coordinates by {scale:.2f} to map to the original image.]"
    )


class FittedImage(Struct, frozen=True):
    """An image ready to send (``data`` ``None``: it could not be brought under the cap) and the
    notes for the model about what was done to it."""

    data: bytes | None
    mime_type: str
    notes: tuple[str, ...] = ()


def fit_image(
    data: bytes,
    mime_type: str,
    *,
    auto_resize: bool = True,
    resizer: ImageResizer | None = None,
    limits: ImageLimits = DEFAULT_IMAGE_LIMITS,
) -> FittedImage:
    """``data`` scaled to ``limits`` when ``auto_resize`` is on and it is over them; ``resizer``
    (Pillow's when ``None``) does the work. Without a resizer an image over the size cap is
    left out (providers refuse it) and one over the dimensions is sent as it is, with a note."""
    if not auto_resize:
        return FittedImage(data, mime_type)
    size = image_size(data, mime_type)
    too_large = _base64_size(len(data)) >= limits.max_bytes
    too_wide = size is not None and (size[0] > limits.max_width or size[1] > limits.max_height)
    if not (too_large or too_wide):
        return FittedImage(data, mime_type)
    resize = resizer or pillow_resizer()
    if resize is None:
        return FittedImage(None if too_large else data, mime_type, (PILLOW_MISSING_NOTE,))
    resized = resize(data, mime_type, limits=limits)
    if resized is None:
        return FittedImage(None, mime_type)
    notes = (
        (dimension_note(resized),)
        if resized.width != resized.original_width or resized.height != resized.original_height
        else ()
    )
    return FittedImage(resized.data, resized.mime_type, notes)


def fit_prompt_images(
    images: list[ImageContent],
    *,
    auto_resize: bool,
    resizer: ImageResizer | None = None,
    limits: ImageLimits = DEFAULT_IMAGE_LIMITS,
) -> tuple[list[ImageContent], list[str]]:
    """A prompt's images fitted as :func:`fit_image` does, and the notes to add to its text (an
    image that cannot be brought under the cap is left out, with a note saying so)."""
    fitted_images: list[ImageContent] = []
    notes: list[str] = []
    for image in images:
        try:
            raw = base64.b64decode(image.data, validate=False)
        except ValueError:
            fitted_images.append(image)
            continue
        fitted = fit_image(raw, image.mime_type, auto_resize=auto_resize, resizer=resizer, limits=limits)
        notes.extend(fitted.notes)
        if fitted.data is None:
            notes.append("[Image left out: it could not be scaled below the inline image size limit.]")
        elif fitted.data is raw:
            fitted_images.append(image)
        else:
            fitted_images.append(
                ImageContent(base64.b64encode(fitted.data).decode("ascii"), fitted.mime_type)
            )
    return fitted_images, notes


def fit_tool_result_images(
    content: list[TextContent | ImageContent],
    *,
    resizer: ImageResizer | None = None,
    limits: ImageLimits = DEFAULT_IMAGE_LIMITS,
) -> list[TextContent | ImageContent] | None:
    """A tool result's images fitted as :func:`fit_image` does, each followed by its notes as a
    text block; ``None`` when nothing changed. An image that cannot be fitted stays as the tool
    gave it (as pi 1.6: the tool produced it, and leaving it out would lose its output), and so does
    one Pillow is missing for."""
    out: list[TextContent | ImageContent] = []
    changed = False
    for block in content:
        if not isinstance(block, ImageContent):
            out.append(block)
            continue
        try:
            raw = base64.b64decode(block.data, validate=False)
        except ValueError:
            out.append(block)
            continue
        fitted = fit_image(raw, block.mime_type, resizer=resizer, limits=limits)
        if fitted.data is None or fitted.data is raw:  # as given (the read tool has noted it already)
            out.append(block)
            continue
        out.append(ImageContent(base64.b64encode(fitted.data).decode("ascii"), fitted.mime_type))
        if fitted.notes:
            out.append(TextContent("\n".join(fitted.notes)))
        changed = True
    return out if changed else None
