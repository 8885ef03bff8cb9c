"""Image generation: ``generate_images(model, context, options)`` for the catalogue's image models.

As pi-ai's ``generateImages``, it never raises for a provider failure: the result says
``stop_reason="error"`` (or ``"aborted"``) with an ``error_message``, and its ``output`` is empty.
The wire protocol is chosen by ``model.api``; pi 1.6 has one, ``openrouter-images`` (OpenRouter's
chat completions endpoint with ``modalities``), in ``tau.ai.providers.openrouter_images``.
"""

from __future__ import annotations

import importlib
import time
from typing import Literal

from msgspec import Struct, field

from tau.ai.image_models import ImageModel
from tau.ai.options import StreamOptions
from tau.ai.types import ImageContent, JsonObject, TextContent, Usage

__all__ = [
    "IMAGE_APIS",
    "ImagesContext",
    "ImagesResult",
    "generate_images",
    "image_error_result",
    "images_context_from_json",
]

IMAGE_APIS: dict[str, str] = {"openrouter-images": "tau.ai.providers.openrouter_images"}
"""Image api -> the module whose ``async generate_images(model, context, options)`` speaks it."""

DEFAULT_IMAGES_TIMEOUT_MS = 600_000
"""A generation answers only when its images are done, which can take minutes: the wait for the
response is bounded at ten minutes (the OpenAI client's default, which pi's request uses)."""

ImagesStopReason = Literal["stop", "error", "aborted"]


class ImagesContext(Struct):
    """The prompt as text blocks, plus image blocks to edit or use as references."""

    input: list[TextContent | ImageContent] = field(default_factory=list)


class ImagesResult(Struct):
    """What a generation returned: images (and text, for models that also write it)."""

    api: str
    provider: str
    model: str
    output: list[TextContent | ImageContent] = field(default_factory=list)
    stop_reason: ImagesStopReason = "stop"
    error_message: str | None = None
    usage: Usage | None = None
    response_id: str | None = None
    timestamp: int = 0

    def to_json(self) -> JsonObject:
        """pi's ``ImagesResult`` (camelCase keys)."""
        out: JsonObject = {
            "api": self.api,
            "provider": self.provider,
            "model": self.model,
            "output": [block.to_json() for block in self.output],
            "stopReason": self.stop_reason,
            "timestamp": self.timestamp,
        }
        if self.response_id is not None:
            out["responseId"] = self.response_id
        if self.usage is not None:
            out["usage"] = self.usage.to_json()
        if self.error_message is not None:
            out["errorMessage"] = self.error_message
        return out


def images_context_from_json(data: JsonObject) -> ImagesContext:
    """pi's ``{input: [{type: "text", text} | {type: "image", data, mimeType}]}``; other blocks are
    refused with a ``ValueError`` naming the first."""
    blocks = data.get("input")
    if not isinstance(blocks, list):
        raise ValueError("context.input must be an array of text and image blocks")
    items: list[TextContent | ImageContent] = []
    for index, block in enumerate(blocks):
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            items.append(TextContent(block["text"]))
        elif (
            isinstance(block, dict)
            and block.get("type") == "image"
            and isinstance(block.get("data"), str)
            and isinstance(block.get("mimeType"), str)
        ):
            items.append(ImageContent(block["data"], block["mimeType"]))
        else:
            raise ValueError(f"context.input[{index}] must be a text or image block")
    return ImagesContext(items)


def image_error_result(model: ImageModel, message: str, *, aborted: bool = False) -> ImagesResult:
    """The result of a generation that failed before (or while) reaching the provider."""
    return ImagesResult(
        api=model.api,
        provider=model.provider,
        model=model.id,
        stop_reason="aborted" if aborted else "error",
        error_message=message,
        timestamp=int(time.time() * 1000),
    )


async def generate_images(
    model: ImageModel, context: ImagesContext, options: StreamOptions | None = None
) -> ImagesResult:
    """Generate images with ``model``; ``options.api_key`` is the credential (resolve it with the
    model registry's ``generate_images``, which also applies models.json's base URL and headers).
    Failures come back as an error result, never raised."""
    options = options if options is not None else StreamOptions(timeout_ms=DEFAULT_IMAGES_TIMEOUT_MS)
    aborted = options.signal is not None and options.signal.aborted
    module_path = IMAGE_APIS.get(model.api)
    if module_path is None:
        known = ", ".join(sorted(IMAGE_APIS))
        return image_error_result(
            model, f"No API provider registered for api: {model.api} (image apis: {known})", aborted=aborted
        )
    try:
        module = importlib.import_module(module_path)
    except ImportError as exc:
        return image_error_result(model, f"Could not load the image provider for api {model.api!r}: {exc}")
    result: ImagesResult = await module.generate_images(model, context, options)
    return result
