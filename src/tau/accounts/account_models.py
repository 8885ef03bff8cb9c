"""Model lists that come from the account (Radius and the Radius gateways of models.json): fetched
with whatever authenticates the provider — a login's token or an API key such as ``RADIUS_API_KEY`` —
and stored in models-store.json, where the model registry reads them (pi's catalog refresh: after a
login, at the terminal UI's start and on ``tau update --models``).
"""

from __future__ import annotations

from tau.accounts.auth_storage import InvalidApiKeyError, OAuthRefreshError
from tau.accounts.model_registry import ModelRegistry

__all__ = ["refresh_account_models"]


def refresh_account_models(
    registry: ModelRegistry, providers: list[str] | None = None, *, rebuild: bool = True
) -> dict[str, str]:
    """Fetch and store the list of each account-listed provider (``providers``, default all) that has
    credentials, then rebuild ``registry`` (unless ``rebuild`` is false: a caller off the registry's
    thread rebuilds it there); the providers that failed, each with a one-line reason."""
    from tau.accounts.models_store import store_models
    from tau.accounts.oauth import LoginError
    from tau.accounts.oauth.radius import gateway_models

    failures: dict[str, str] = {}
    stored = False
    for provider, (name, gateway) in registry.account_listed_providers().items():
        if providers is not None and provider not in providers:
            continue
        if not registry.has_configured_auth(provider):
            continue
        try:
            key = registry.get_api_key_for_provider(provider)
            if not key:
                continue
            store_models(provider, gateway_models(key, provider, gateway, name), registry.models_store_path)
            stored = True
        except (LoginError, OAuthRefreshError, InvalidApiKeyError, OSError) as error:
            failures[provider] = str(error)
    if stored and rebuild:
        registry.refresh()
    return failures
