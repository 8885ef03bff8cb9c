"""pi 1.6's warning that an Anthropic subscription login is billed as extra usage in a third-party
harness (``warnings.anthropicExtraUsage``, on by default): shown once per run, when an Anthropic
model is in use with a Claude login or a subscription key (``sk-ant-oat...``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tau.accounts.model_registry import ModelRegistry
    from tau.ai.types import Model

__all__ = ["EXTRA_USAGE_WARNING", "uses_anthropic_subscription"]

EXTRA_USAGE_WARNING = (
    "Anthropic subscription auth is active. Third-party harness usage draws from extra usage and is "
    "billed per token, not your Claude plan limits. Manage extra usage at "
    "https://claude.ai/settings/usage. Disable this warning in /settings."
)


def uses_anthropic_subscription(model: Model | None, registry: ModelRegistry) -> bool:
    """Whether ``model`` is one of the ``anthropic`` provider's reached through a Claude login (or a
    subscription token given as its key); a credential that cannot be read counts as no."""
    from tau.accounts.auth_storage import InvalidApiKeyError

    if model is None or model.provider != "anthropic":
        return False
    if registry.is_using_oauth_provider("anthropic"):
        return True
    try:
        key = registry.get_api_key_for_provider("anthropic")
    except InvalidApiKeyError:
        return False
    return key is not None and key.startswith("sk-ant-oat")
