"""The names pi 1.6 shows a user for each provider (``auth login``/``logout`` lines, ``/login`` and
``/logout`` lists): its provider catalogue's names, by provider id, and what it calls each one's key
when asking for it (``Enter Z.AI API key:``).

A provider outside the catalogue is named by its login's name (tau's own Google logins, a Radius
gateway declared in models.json), else by its id.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from tau.accounts.oauth import OAUTH_PROVIDERS

__all__ = ["API_KEY_NAMES", "PROVIDER_NAMES", "api_key_name", "provider_name"]

PROVIDER_NAMES: Final[Mapping[str, str]] = {
    "amazon-bedrock": "Amazon Bedrock",
    "ant-ling": "Ant Ling",
    "anthropic": "Anthropic",
    "azure": "Azure",
    "baseten": "Baseten",
    "cerebras": "Cerebras",
    "cloudflare-ai-gateway": "Cloudflare AI Gateway",
    "cloudflare-workers-ai": "Cloudflare Workers AI",
    "deepseek": "DeepSeek",
    "fireworks": "Fireworks",
    "github-copilot": "GitHub Copilot",
    "google": "Google",
    "google-vertex": "Google Vertex AI",
    "groq": "Groq",
    "huggingface": "Hugging Face",
    "kimi-coding": "Kimi For Coding",
    "meta": "Meta",
    "minimax": "MiniMax",
    "minimax-cn": "MiniMax CN",
    "mistral": "Mistral",
    "moonshotai": "Moonshot AI",
    "moonshotai-cn": "Moonshot AI CN",
    "nvidia": "NVIDIA",
    "openai": "OpenAI",
    "openai-codex": "OpenAI Codex",
    "opencode": "OpenCode Zen",
    "opencode-go": "OpenCode Go",
    "openrouter": "OpenRouter",
    "qwen-token-plan": "Qwen Token Plan Team",
    "qwen-token-plan-cn": "Qwen Token Plan Team CN",
    "qwen-token-plan-individual": "Qwen Token Plan Individual",
    "qwen-token-plan-individual-cn": "Qwen Token Plan Individual CN",
    "radius": "Radius",
    "together": "Together",
    "typesafe": "TypeSafe",
    "vercel-ai-gateway": "Vercel AI Gateway",
    "xai": "xAI",
    "xiaomi": "Xiaomi",
    "xiaomi-token-plan-ams": "Xiaomi Token Plan AMS",
    "xiaomi-token-plan-cn": "Xiaomi Token Plan CN",
    "xiaomi-token-plan-sgp": "Xiaomi Token Plan SGP",
    "zai": "Z.AI",
    "zai-coding-cn": "Z.AI Coding CN",
}


def provider_name(provider: str) -> str:
    """What to call ``provider`` when speaking to the user."""
    found = PROVIDER_NAMES.get(provider)
    if found is not None:
        return found
    login = OAUTH_PROVIDERS.get(provider)
    return login[0] if login is not None else provider


API_KEY_NAMES: Final[Mapping[str, str]] = {
    "azure": "Azure OpenAI API key",
    "cloudflare-ai-gateway": "Cloudflare API key",
    "cloudflare-workers-ai": "Cloudflare API key",
    "github-copilot": "GitHub Copilot token",
    "google": "Gemini API key",
    "huggingface": "Hugging Face token",
    "kimi-coding": "Kimi API key",
    "meta": "Meta Model API key",
    "moonshotai-cn": "Moonshot AI API key",
    "opencode": "OpenCode API key",
    "opencode-go": "OpenCode API key",
}
"""pi's names of the keys that are not called ``<provider name> API key``."""


def api_key_name(provider: str) -> str:
    """What pi calls ``provider``'s key when it asks for one (``Z.AI API key``, ``Gemini API key``)."""
    return API_KEY_NAMES.get(provider) or f"{provider_name(provider)} API key"
