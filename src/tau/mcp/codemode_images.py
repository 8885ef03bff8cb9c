"""What codemode's ``image()`` does with an image beyond showing it: as pi 1.6's, each image is saved
to a temporary file (``tau-codemode-<random>.png``, mode 0600) named in a line before it, so a later
turn can copy or move it (a generated image, say: scripts cannot write files, and ``write`` only
takes text)."""

from __future__ import annotations

import base64
import binascii
import os
import tempfile

from tau.ai.types import ImageContent, TextContent
from tau.tools.truncate import format_size

__all__ = ["saved_images"]

_IMAGE_EXTENSIONS = {"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp"}


def saved_images(images: list[ImageContent]) -> list[TextContent | ImageContent]:
    """Each image after a line naming the temporary file it was saved to, as pi's ``image()`` does:
    the model sees the image but could not otherwise reach its bytes (a generated image, say) to
    copy or move it. An image shown twice is saved once; a failed save is said in its line."""
    labels: dict[str, str] = {}
    shown: list[TextContent | ImageContent] = []
    for image in images:
        label = labels.get(image.data)
        if label is None:
            label = labels[image.data] = _save_image(image)
        shown += [TextContent(label), image]
    return shown


def _save_image(image: ImageContent) -> str:
    try:
        data = base64.b64decode(image.data, validate=True)
    except (binascii.Error, ValueError):
        return f"[Image ({image.mime_type}) could not be saved: its data is not base64]"
    kind = f"{image.mime_type}, {format_size(len(data))}"
    extension = _IMAGE_EXTENSIONS.get(image.mime_type)
    if extension is None:
        return f"[Image ({kind}) could not be saved: no file extension for image type {image.mime_type}]"
    try:
        handle, path = tempfile.mkstemp(prefix="tau-codemode-", suffix=extension)  # mode 0600, a new file
        with os.fdopen(handle, "wb") as f:
            f.write(data)
    except OSError as error:
        return f"[Image ({kind}) could not be saved: {error.strerror or error}]"
    return f"[Image saved to {path} ({kind})]"
