"""Subscription logins (OAuth) for the providers that offer them, as pi's: each flow is one module,
imported only when that provider's login is used or refreshed.

Flows run synchronously (a worker thread in the TUI); ``tau.accounts.auth_storage`` refreshes their
credentials under auth.json's lock.
"""

from __future__ import annotations

import importlib

from tau.accounts.oauth.errors import LoginCancelledError, LoginError, RefreshRejectedError
from tau.accounts.oauth.flow import OAuthFlow
from tau.accounts.oauth.interaction import LoginInteraction, SelectOption

__all__ = [
    "OAUTH_PROVIDERS",
    "LoginCancelledError",
    "LoginError",
    "LoginInteraction",
    "OAuthFlow",
    "RefreshRejectedError",
    "SelectOption",
    "configure_radius_gateways",
    "get_oauth_flow",
]

# provider id -> (display name, module, class): the names list without importing the flows. The names
# are pi 1.6's provider names (``tau.accounts.provider_names``); the two Google logins are tau's own.
OAUTH_PROVIDERS: dict[str, tuple[str, str, str]] = {
    "anthropic": ("Anthropic", "anthropic", "AnthropicFlow"),
    "openai-codex": ("OpenAI Codex", "openai_codex", "OpenAICodexFlow"),
    "openai": ("OpenAI", "openai_chatgpt", "OpenAIChatGPTFlow"),
    "github-copilot": ("GitHub Copilot", "github_copilot", "GitHubCopilotFlow"),
    "google-gemini-cli": ("Google Cloud Code Assist (Gemini CLI)", "google", "GeminiCliFlow"),
    "google-antigravity": ("Antigravity (Gemini 3, Claude, GPT-OSS)", "google", "AntigravityFlow"),
    "xai": ("xAI", "xai", "XaiFlow"),
    "kimi-coding": ("Kimi For Coding", "kimi_coding", "KimiCodingFlow"),
    "openrouter": ("OpenRouter", "openrouter", "OpenRouterFlow"),
    "meta": ("Meta", "meta", "MetaFlow"),
    "radius": ("Radius", "radius", "RadiusFlow"),
}


_BUILTIN = dict(OAUTH_PROVIDERS)
# provider id -> (display name, gateway URL) of the models.json providers with "oauth": "radius".
_GATEWAYS: dict[str, tuple[str, str]] = {}


def configure_radius_gateways(gateways: dict[str, tuple[str, str]]) -> None:
    """Make the Radius gateways declared in models.json (id -> (name, baseUrl)) logins of their own,
    listed in ``OAUTH_PROVIDERS`` beside the built-in ones (the model registry calls this on load)."""
    for provider in _GATEWAYS:
        OAUTH_PROVIDERS.pop(provider, None)
        if provider in _BUILTIN:
            OAUTH_PROVIDERS[provider] = _BUILTIN[provider]
    _GATEWAYS.clear()
    _GATEWAYS.update(gateways)
    for provider, (name, _gateway) in gateways.items():
        OAUTH_PROVIDERS[provider] = (name, "radius", "RadiusFlow")


def get_oauth_flow(provider: str) -> OAuthFlow | None:
    """The login flow of ``provider``, or ``None`` when it has none."""
    entry = OAUTH_PROVIDERS.get(provider)
    if entry is None:
        return None
    if provider in _GATEWAYS:
        from tau.accounts.oauth.radius import RadiusFlow

        name, gateway = _GATEWAYS[provider]
        return RadiusFlow(provider, name, gateway)
    module = importlib.import_module(f"tau.accounts.oauth.{entry[1]}")
    flow: OAuthFlow = getattr(module, entry[2])()
    return flow
