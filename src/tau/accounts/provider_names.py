"""The names pi 1.6 shows a user for each provider (``auth login``/``logout`` lines, ``/login`` and
``/logout`` lists): its provider catalogue's names, by provider id.

A provider outside the catalogue is named by its login's name (tau's own Google logins, a Radius
gateway declared in models.json), else by its id.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from tau.accounts.oauth import OAUTH_PROVIDERS

__all__ = ["PROVIDER_NAMES", "provider_name"]

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
