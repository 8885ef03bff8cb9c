"""The registry's classifier models, and classification with the session's credentials.

pi 1.6 lists classifier models (TypeSafe's Jev, Cloudflare's Clef, ...) beside its chat models as a
model type of their own: ``/model`` never shows them; ``ModelRegistry.get_models_of_type("classifier")``
and its kin list them. As for chat and image models, a models.json (or extension) entry for the
provider moves them to its ``baseUrl``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from tau.ai.classifier_models import ClassifierModel, find_classifier_model, get_classifier_models

if TYPE_CHECKING:
    from tau.accounts.models_config import ProviderConfig

__all__ = ["classifier_models", "configured_classifier_model", "find_configured_classifier_model"]


class ModelRegistry(Protocol):
    """What this module needs of ``tau.accounts.model_registry.ModelRegistry`` (which calls it)."""

    def provider_config(self, provider: str) -> ProviderConfig | None: ...

    def get_api_key_for_provider(self, provider: str) -> str | None: ...


def configured_classifier_model(model: ClassifierModel, config: ProviderConfig | None) -> ClassifierModel:
    """``model`` moved to its provider's configured base URL (not a Radius gateway's sign-in URL)."""
    if config is not None and config.base_url and config.oauth != "radius":
        model.base_url = config.base_url
    return model


def classifier_models(registry: ModelRegistry, provider: str | None = None) -> list[ClassifierModel]:
    """The catalogue's classifier models (of one provider), with their provider's configuration applied."""
    return [
        configured_classifier_model(model, registry.provider_config(model.provider))
        for model in get_classifier_models(provider)
    ]


def find_configured_classifier_model(
    registry: ModelRegistry, provider: str, model_id: str
) -> ClassifierModel | None:
    model = find_classifier_model(provider, model_id)
    return (
        configured_classifier_model(model, registry.provider_config(provider)) if model is not None else None
    )
