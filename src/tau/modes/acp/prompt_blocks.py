"""ACP prompt content blocks → the text and images of a tau prompt.

Text stays text; an image becomes an image; a resource link is named by its URI (the model reads it
with its tools, as with ``@file``); an embedded text resource is inlined the way ``@file`` arguments
are, inside ``<file name="...">`` tags; an embedded binary resource that is an image becomes an image.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import unquote, urlparse

from acp.schema import (
    AudioContentBlock,
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from tau.ai.types import ImageContent

__all__ = ["PromptBlock", "to_tau_prompt", "uri_path"]

PromptBlock = (
    TextContentBlock
    | ImageContentBlock
    | AudioContentBlock
    | ResourceContentBlock
    | EmbeddedResourceContentBlock
)


def uri_path(uri: str) -> str:
    """The local path of a ``file://`` URI; any other URI as it is."""
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri


def to_tau_prompt(blocks: Sequence[PromptBlock]) -> tuple[str, list[ImageContent]]:
    parts: list[str] = []
    images: list[ImageContent] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, ImageContentBlock):
            images.append(ImageContent(data=block.data, mime_type=block.mime_type))
        elif isinstance(block, ResourceContentBlock):
            parts.append(f"@{uri_path(block.uri)}")
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            if isinstance(resource, TextResourceContents):
                parts.append(f'<file name="{uri_path(resource.uri)}">\n{resource.text}\n</file>')
            elif isinstance(resource, BlobResourceContents) and (resource.mime_type or "").startswith(
                "image/"
            ):
                images.append(ImageContent(data=resource.blob, mime_type=resource.mime_type or "image/png"))
            else:
                parts.append(f"@{uri_path(resource.uri)}")
        # Audio is not offered (promptCapabilities.audio is false), so a client never sends it.
    return "\n\n".join(part for part in parts if part), images
