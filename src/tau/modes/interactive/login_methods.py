"""pi 1.6's names for each provider's ways of signing in, as ``/login`` shows and searches them.

``/login``'s search matches a row's provider name and id, its kind of sign-in and the name of that
way of signing in (``xAI (Grok/X subscription)``, ``xAI API key``); a provider's account sign-in may
also have its own line on the method screen (``Sign in with SuperGrok or X Premium``).
"""

from __future__ import annotations

from tau.accounts.provider_names import provider_name

__all__ = ["account_login_label", "login_method_name"]

_ACCOUNT_METHOD_NAMES = {
    "anthropic": "Anthropic (Claude Pro/Max)",
    "github-copilot": "GitHub Copilot",
    "kimi-coding": "Kimi Code (subscription)",
    "meta": "Meta (Muse subscription)",
    "openai-codex": "OpenAI (ChatGPT Plus/Pro)",
    "openai": "OpenAI (ChatGPT subscription)",
    "openrouter": "OpenRouter OAuth",
    "xai": "xAI (Grok/X subscription)",
}
_API_KEY_METHOD_NAMES = {
    "amazon-bedrock": "AWS credentials or bearer token",
    "azure": "Azure OpenAI API key",
    "cloudflare-ai-gateway": "Cloudflare API key",
    "cloudflare-workers-ai": "Cloudflare API key",
    "github-copilot": "GitHub Copilot token",
    "google": "Gemini API key",
    "google-vertex": "Google Cloud credentials",
    "huggingface": "Hugging Face token",
    "kimi-coding": "Kimi API key",
    "llama.cpp": "llama.cpp server",
    "meta": "Meta Model API key",
    "opencode-go": "OpenCode API key",
}
_ACCOUNT_LOGIN_LABELS = {
    "kimi-coding": "Sign in with Kimi Code",
    "meta": "Sign in with Meta",
    "openai": "Sign in with ChatGPT",
    "openrouter": "Sign in with OpenRouter",
    "xai": "Sign in with SuperGrok or X Premium",
}


def login_method_name(provider: str, auth_type: str) -> str:
    """The name pi 1.6 gives ``provider``'s account (``"oauth"``) or key (``"api_key"``) sign-in:
    its own where it has one, else the provider's name (an account) or that and ``API key``."""
    name = provider_name(provider)
    if auth_type == "oauth":
        return _ACCOUNT_METHOD_NAMES.get(provider, name)
    return _API_KEY_METHOD_NAMES.get(provider, f"{name} API key")


def account_login_label(provider: str) -> str:
    """The method screen's line for ``provider``'s account sign-in (pi 1.6's ``loginLabel``)."""
    return _ACCOUNT_LOGIN_LABELS.get(provider, "Sign in with an account")
