"""The registry's image models, and image generation with the session's credentials.

pi 1.6 lists OpenRouter's image models beside its chat models, but they are a model type of their
own: ``/model`` never shows them; ``ModelRegistry.get_models_of_type("image")`` and its kin list them
and ``ModelRegistry.generate_images()`` runs one. As for chat models, a models.json (or extension)
entry for the provider moves them to its ``baseUrl`` and adds its ``headers`` (resolved per request,
as ``!commands`` or variable names); the key is the provider's (``OPENROUTER_API_KEY``, auth.json,
``/login``). A generation never raises for a provider failure: the result carries the error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Protocol

from tau.accounts.auth_storage import InvalidApiKeyError, OAuthRefreshError, resolve_config_value
from tau.ai.image_models import ImageModel, find_image_model, get_image_models
from tau.ai.images import (
    DEFAULT_IMAGES_TIMEOUT_MS,
    ImagesContext,
    ImagesResult,
    generate_images,
    image_error_result,
)
from tau.ai.options import StreamOptions
from tau.ai.redaction import register_secret

if TYPE_CHECKING:
    from tau.accounts.models_config import ProviderConfig
    from tau.ai.abort import AbortSignal

__all__ = ["ModelType", "configured_image_model", "image_models", "run_image_model"]

ModelType = Literal["chat", "image", "classifier"]
MODEL_TYPES: tuple[ModelType, ...] = ("chat", "image", "classifier")


class ModelRegistry(Protocol):
    """What this module needs of ``tau.accounts.model_registry.ModelRegistry`` (which calls it)."""

    def provider_config(self, provider: str) -> ProviderConfig | None: ...

    def get_api_key_for_provider(self, provider: str) -> str | None: ...


def configured_image_model(model: ImageModel, config: ProviderConfig | None) -> ImageModel:
    """``model`` moved to its provider's configured base URL (not a Radius gateway's sign-in URL)."""
    if config is not None and config.base_url and config.oauth != "radius":
        model.base_url = config.base_url
    return model


def image_models(registry: ModelRegistry, provider: str | None = None) -> list[ImageModel]:
    """The catalogue's image models (of one provider), with their provider's configuration applied."""
    return [
        configured_image_model(model, registry.provider_config(model.provider))
        for model in get_image_models(provider)
    ]


def find_configured_image_model(registry: ModelRegistry, provider: str, model_id: str) -> ImageModel | None:
    model = find_image_model(provider, model_id)
    return configured_image_model(model, registry.provider_config(provider)) if model is not None else None


async def run_image_model(
    registry: ModelRegistry,
    provider: str,
    model_id: str,
    context: ImagesContext,
    signal: AbortSignal | None,
    missing_auth: str,
) -> ImagesResult:
    """Generate with the image model ``provider``/``model_id`` and the provider's credentials
    (``missing_auth``: the error when the provider has none)."""
    model = find_configured_image_model(registry, provider, model_id)
    if model is None:
        unknown = ImageModel(id=model_id, api="", provider=provider, base_url="")
        return image_error_result(unknown, f"Model {provider}/{model_id} is not an image model")
    try:
        api_key = registry.get_api_key_for_provider(provider)
    except (InvalidApiKeyError, OAuthRefreshError) as error:
        return image_error_result(model, str(error))
    if not api_key:
        return image_error_result(model, missing_auth)
    headers: dict[str, str] = {}
    config = registry.provider_config(provider)
    for name, template in ((config.headers or {}) if config is not None else {}).items():
        value = resolve_config_value(template)
        if value is None:
            return image_error_result(model, f'header "{name}" of provider "{provider}" resolved to nothing')
        if value != template.strip():
            register_secret(value)
        headers[name] = value
    if config is not None and config.auth_header:
        headers["Authorization"] = f"Bearer {api_key}"
    options = StreamOptions(
        api_key=api_key, headers=headers or None, signal=signal, timeout_ms=DEFAULT_IMAGES_TIMEOUT_MS
    )
    return await generate_images(model, context, options)
