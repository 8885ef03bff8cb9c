"""The registry's classifier models, and classification with the session's credentials.

pi 1.6 lists classifier models (TypeSafe's Jev, Cloudflare's Clef, ...) beside its chat models as a
model type of their own: ``/model`` never shows them; ``ModelRegistry.get_models_of_type("classifier")``
and its kin list them and ``ModelRegistry.classify()`` runs one. As for chat and image models, a
models.json (or extension) entry for the provider moves them to its ``baseUrl`` and adds its
``headers`` (resolved per request); the key is the provider's (``TYPESAFE_API_KEY``, auth.json,
``/login``); Cloudflare's base URL gets its ``{CLOUDFLARE_ACCOUNT_ID}`` from the stored
credential's ``env`` (``/login cloudflare-workers-ai`` asks for it), else from that variable
(``tau.accounts.provider_settings``, ``tau.ai.base_url_env``). A
classification never raises for a provider failure: the result carries the error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from tau.accounts.auth_storage import (
    AuthStorage,
    InvalidApiKeyError,
    OAuthRefreshError,
    resolve_config_value,
)
from tau.accounts.provider_settings import missing_setting, missing_setting_message
from tau.ai.classifier_models import ClassifierModel, find_classifier_model, get_classifier_models
from tau.ai.classify import (
    CLASSIFIER_APIS,
    DEFAULT_CLASSIFY_RETRIES,
    ClassifierContext,
    ClassifierResult,
    ClassifyFunction,
    classifier_error_result,
    classify,
)
from tau.ai.options import StreamOptions
from tau.ai.redaction import register_secret

if TYPE_CHECKING:
    from tau.accounts.models_config import ProviderConfig
    from tau.ai.abort import AbortSignal

__all__ = [
    "classifier_models",
    "configured_classifier_model",
    "find_configured_classifier_model",
    "run_classifier_model",
]


class ModelRegistry(Protocol):
    """What this module needs of ``tau.accounts.model_registry.ModelRegistry`` (which calls it)."""

    def provider_config(self, provider: str) -> ProviderConfig | None: ...

    def get_api_key_for_provider(self, provider: str) -> str | None: ...

    @property
    def auth_storage(self) -> AuthStorage: ...

    def registered_classifiers(self, provider: str) -> list[dict[str, Any]] | None: ...

    def registered_classifier_providers(self) -> list[str]: ...

    def classifier_implementations(self, provider: str) -> Mapping[str, ClassifyFunction]: ...


def configured_classifier_model(model: ClassifierModel, config: ProviderConfig | None) -> ClassifierModel:
    """``model`` moved to its provider's configured base URL (not a Radius gateway's sign-in URL),
    with the provider-level ``compat`` over its own, key by key (as pi: a proxy of another service's
    classifiers says there how that service takes images). A ``models`` entry is always a chat model."""
    if config is None:
        return model
    if config.base_url and config.oauth != "radius":
        model.base_url = config.base_url
    if config.compat:
        model.compat = {**(model.compat or {}), **config.compat}
    return model


def classifier_models(registry: ModelRegistry, provider: str | None = None) -> list[ClassifierModel]:
    """The catalogue's classifier models (of one provider), with their provider's configuration
    applied, and those of providers an extension registered (which replace the catalogue's)."""
    registered = registry.registered_classifier_providers()
    models = [
        configured_classifier_model(model, registry.provider_config(model.provider))
        for model in get_classifier_models(provider)
        if model.provider not in registered
    ]
    for name in registered if provider is None else [provider]:
        models.extend(
            ClassifierModel.from_json(entry) for entry in registry.registered_classifiers(name) or []
        )
    return models


def find_configured_classifier_model(
    registry: ModelRegistry, provider: str, model_id: str
) -> ClassifierModel | None:
    registered = registry.registered_classifiers(provider)
    if registered is not None:
        return next((ClassifierModel.from_json(e) for e in registered if e.get("id") == model_id), None)
    model = find_classifier_model(provider, model_id)
    return (
        configured_classifier_model(model, registry.provider_config(provider)) if model is not None else None
    )


async def run_classifier_model(
    registry: ModelRegistry,
    provider: str,
    model_id: str,
    context: ClassifierContext,
    signal: AbortSignal | None,
    missing_auth: str,
    temperature: float | None = None,
) -> ClassifierResult:
    """Classify with the classifier model ``provider``/``model_id`` and the provider's credentials
    (``missing_auth``: the error when the provider has none)."""
    model = find_configured_classifier_model(registry, provider, model_id)
    if model is None:
        unknown = ClassifierModel(id=model_id, api="", provider=provider, base_url="")
        return classifier_error_result(unknown, f"Model {provider}/{model_id} is not a classifier model")
    if context.images and "image" not in model.input:
        # Checked for every classifier api before any credential, as pi's model runtime does.
        return classifier_error_result(model, f"Model {provider}/{model_id} does not accept image input")
    try:
        api_key = registry.get_api_key_for_provider(provider)
    except (InvalidApiKeyError, OAuthRefreshError) as error:
        return classifier_error_result(model, str(error))
    if not api_key:
        return classifier_error_result(model, missing_auth)
    headers: dict[str, str] = {}
    config = registry.provider_config(provider)
    for name, template in ((config.headers or {}) if config is not None else {}).items():
        value = resolve_config_value(template)
        if value is None:
            return classifier_error_result(
                model, f'header "{name}" of provider "{provider}" resolved to nothing'
            )
        if value != template.strip():
            register_secret(value)
        headers[name] = value
    # Workers AI's base URL names the account: as pi, the stored credential's (``/login`` asks for
    # it) before the environment's; ``tau.ai.classify`` fills it in.
    credential_env = registry.auth_storage.get_credential_env(provider)
    setting = missing_setting(provider, credential_env)
    if setting is not None:
        return classifier_error_result(model, missing_setting_message(provider, setting))
    options = StreamOptions(
        api_key=api_key,
        headers=headers or None,
        signal=signal,
        max_retries=DEFAULT_CLASSIFY_RETRIES,
        temperature=temperature,
        extra={"env": credential_env} if credential_env else {},
    )
    implementations = registry.classifier_implementations(provider)
    implementation = implementations.get(model.api)
    if implementation is None and implementations and model.api not in CLASSIFIER_APIS:
        return classifier_error_result(
            model, f'Provider {provider} has no classifier implementation for "{model.api}"'
        )
    return await classify(model, context, options, implementation=implementation)
