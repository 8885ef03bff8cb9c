"""The ``openrouter-images`` api: image generation over OpenRouter's chat completions endpoint.

As pi-ai 1.6 sends it: ``POST {baseUrl}/chat/completions`` with one user message whose content is
the prompt's text parts and the reference images as ``image_url`` data URLs, ``stream: false``, and
``modalities: ["image", "text"]`` for models whose ``output`` includes text, else ``["image"]``.
The answer is one ``chat.completion``: the message's ``content`` (text, when the model writes some)
and its ``images`` (``[{type: "image_url", image_url: {url: "data:<mime>;base64,<data>"}}]``); only
base64 data URLs are kept. Usage is priced from the catalogue, as pi does (not OpenRouter's cost).
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Awaitable
from typing import Any, TypeVar

from tau.ai.abort import Aborted, until_aborted
from tau.ai.image_models import ImageModel
from tau.ai.images import ImagesContext, ImagesResult, image_error_result
from tau.ai.options import StreamOptions
from tau.ai.sanitize import sanitize_surrogates
from tau.ai.stream_writer import ProviderError
from tau.ai.transport.http import apply_payload_hook, bearer, merge_headers, open_stream
from tau.ai.types import Cost, ImageContent, JsonObject, Model, ModelCost, TextContent, Usage

__all__ = ["build_params", "generate_images", "parse_response"]

_DATA_URL = re.compile(r"^data:([^;]+);base64,(.+)$", re.DOTALL)
_T = TypeVar("_T")


class _Aborted(Exception):
    pass


def build_params(model: ImageModel, context: ImagesContext) -> JsonObject:
    """The request body for ``context``."""
    content: list[JsonObject] = []
    for item in context.input:
        if isinstance(item, TextContent):
            content.append({"type": "text", "text": sanitize_surrogates(item.text)})
        else:
            content.append(
                {"type": "image_url", "image_url": {"url": f"data:{item.mime_type};base64,{item.data}"}}
            )
    return {
        "model": model.id,
        "messages": [{"role": "user", "content": content}],
        "stream": False,
        "modalities": ["image", "text"] if "text" in model.output else ["image"],
    }


def _request_model(model: ImageModel) -> Model:
    """The model as the HTTP layer and the payload hooks take it (its id, api, base URL, prices)."""
    return Model(
        id=model.id,
        api=model.api,
        provider=model.provider,
        base_url=model.base_url,
        name=model.name,
        input=list(model.input),
        cost=model.cost,
        headers=model.headers,
    )


async def generate_images(model: ImageModel, context: ImagesContext, options: StreamOptions) -> ImagesResult:
    result = ImagesResult(
        api=model.api, provider=model.provider, model=model.id, timestamp=int(time.time() * 1000)
    )
    signal = options.signal
    try:
        if not options.api_key:
            raise ProviderError(f"No API key for provider: {model.provider}")
        request_model = _request_model(model)
        params = await apply_payload_hook(build_params(model, context), request_model, options)
        headers = merge_headers(bearer(options.api_key), model.headers, options.headers)
        url = model.base_url.rstrip("/") + "/chat/completions"

        async def exchange() -> Any:
            response = await open_stream(request_model, url, headers=headers, body=params, options=options)
            try:
                raw = await response.aread()
            finally:
                await response.aclose()
            try:
                return json.loads(raw)
            except ValueError:
                raise ProviderError(
                    f"The image response is not JSON: {raw[:200].decode('utf-8', 'replace')}"
                ) from None

        parse_response(await _abortable(exchange(), options), model, result)
        return result
    except _Aborted:
        return image_error_result(model, "Request was aborted", aborted=True)
    except (ProviderError, OSError) as exc:
        aborted = signal is not None and signal.aborted
        return image_error_result(model, str(exc) or type(exc).__name__, aborted=aborted)
    except asyncio.CancelledError:
        if signal is not None and signal.aborted:
            return image_error_result(model, "Request was aborted", aborted=True)
        raise


async def _abortable(work: Awaitable[_T], options: StreamOptions) -> _T:
    """``work``, given up when ``options.signal`` aborts (then ``_Aborted``)."""
    try:
        return await until_aborted(work, options.signal)
    except Aborted:
        raise _Aborted from None


def parse_response(body: Any, model: ImageModel, result: ImagesResult) -> None:
    """Fill ``result`` from OpenRouter's answer: its id, usage, text and data-URL images."""
    if not isinstance(body, dict):
        raise ProviderError("The image response is not a JSON object")
    if isinstance(body.get("id"), str):
        result.response_id = body["id"]
    usage = body.get("usage")
    if isinstance(usage, dict):
        result.usage = _usage(usage, model.cost)
    choices = body.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices else None
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        return
    content = message.get("content")
    if isinstance(content, str) and content:
        result.output.append(TextContent(content))
    for image in message.get("images") or []:
        if not isinstance(image, dict):
            continue
        link = image.get("image_url")
        url = link if isinstance(link, str) else link.get("url") if isinstance(link, dict) else None
        match = _DATA_URL.match(url) if isinstance(url, str) and url.startswith("data:") else None
        if match is not None:
            result.output.append(ImageContent(match.group(2), match.group(1)))


def _usage(raw: JsonObject, prices: ModelCost) -> Usage:
    """OpenRouter's token counts as pi reads them (cached tokens split into reads and writes)."""

    def count(value: Any) -> int:
        return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0

    details = raw.get("prompt_tokens_details")
    details = details if isinstance(details, dict) else {}
    prompt = count(raw.get("prompt_tokens"))
    cached = count(details.get("cached_tokens"))
    cache_write = count(details.get("cache_write_tokens"))
    cache_read = max(0, cached - cache_write) if cache_write > 0 else cached
    fresh = max(0, prompt - cache_read - cache_write)
    output = count(raw.get("completion_tokens"))
    cost = Cost(
        input=prices.input / 1_000_000 * fresh,
        output=prices.output / 1_000_000 * output,
        cache_read=prices.cache_read / 1_000_000 * cache_read,
        cache_write=prices.cache_write / 1_000_000 * cache_write,
        total_from_provider=False,
    )
    cost.total = cost.input + cost.output + cost.cache_read + cost.cache_write
    return Usage(
        input=fresh,
        output=output,
        cache_read=cache_read,
        cache_write=cache_write,
        total_tokens=fresh + output + cache_read + cache_write,
        cost=cost,
    )
