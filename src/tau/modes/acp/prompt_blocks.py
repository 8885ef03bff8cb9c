"""ACP prompt content blocks → the text and images of a tau prompt.

Text stays text; an image becomes an image; a resource link is named by its URI (the model reads it
with its tools, as with ``@file``); an embedded text resource is inlined the way ``@file`` arguments
are, inside ``<file name="...">`` tags; an embedded binary resource that is an image becomes an image.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlparse

from tau.ai.types import ImageContent
from tau.modes.acp.jsonrpc import JsonRpcError

__all__ = ["to_tau_prompt", "uri_path"]


def uri_path(uri: str) -> str:
    """The local path of a ``file://`` URI; any other URI as it is."""
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri


def _str(block: dict[str, Any], name: str) -> str:
    value = block.get(name)
    if not isinstance(value, str):
        raise JsonRpcError.invalid_params(f"a {block.get('type')} block needs {name}")
    return value


def to_tau_prompt(blocks: list[Any]) -> tuple[str, list[ImageContent]]:
    parts: list[str] = []
    images: list[ImageContent] = []
    for block in blocks:
        if not isinstance(block, dict):
            raise JsonRpcError.invalid_params("a prompt is a list of content blocks")
        kind = block.get("type")
        if kind == "text":
            parts.append(_str(block, "text"))
        elif kind == "image":
            images.append(ImageContent(data=_str(block, "data"), mime_type=_str(block, "mimeType")))
        elif kind == "resource_link":
            parts.append(f"@{uri_path(_str(block, 'uri'))}")
        elif kind == "resource":
            resource = block.get("resource")
            if not isinstance(resource, dict):
                raise JsonRpcError.invalid_params("a resource block needs resource")
            uri = uri_path(_str(resource, "uri"))
            mime_type = resource.get("mimeType")
            if isinstance(text := resource.get("text"), str):
                parts.append(f'<file name="{uri}">\n{text}\n</file>')
            elif isinstance(blob := resource.get("blob"), str) and str(mime_type or "").startswith("image/"):
                images.append(ImageContent(data=blob, mime_type=str(mime_type)))
            else:
                parts.append(f"@{uri}")
        elif kind != "audio":  # audio is not offered (promptCapabilities.audio is false)
            raise JsonRpcError.invalid_params(f"unsupported content block {kind!r}")
    return "\n\n".join(part for part in parts if part), images
