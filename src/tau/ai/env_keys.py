"""API keys from environment variables, per provider, in pi's priority order.

Values are trimmed (a key pasted from a CRLF ``.env`` file ends in ``\r``), and empty or blank
variables count as unset. Providers that authenticate with ambient credentials (Google
Vertex with Application Default Credentials, Amazon Bedrock with the AWS credential chain) report
the sentinel ``AUTHENTICATED`` instead of a key: the request layer then lets the SDK sign requests.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = [
    "AUTHENTICATED",
    "env_var_names",
    "find_env_keys",
    "get_env_api_key",
    "is_anthropic_auth_token",
    "key_problem",
    "secret_variable_names",
    "vertex_setup_hint",
]

AUTHENTICATED = "<authenticated>"

# Variables holding a key, first set one wins.
_KEY_VARIABLES: dict[str, tuple[str, ...]] = {
    "amazon-bedrock": (),
    # ANTHROPIC_AUTH_TOKEN (a gateway's bearer token) wins, as in pi; it is sent as
    # ``Authorization: Bearer`` instead of ``x-api-key`` (``is_anthropic_auth_token``).
    "anthropic": ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"),
    "ant-ling": ("ANT_LING_API_KEY",),
    "azure": ("AZURE_OPENAI_API_KEY",),
    "baseten": ("BASETEN_API_KEY",),
    "cerebras": ("CEREBRAS_API_KEY",),
    "cloudflare-ai-gateway": ("CLOUDFLARE_API_KEY",),
    "cloudflare-workers-ai": ("CLOUDFLARE_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "fireworks": ("FIREWORKS_API_KEY",),
    "github-copilot": ("COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN"),
    "google": ("GEMINI_API_KEY",),
    # Cloud Code Assist takes only a Google login (tau auth login).
    "google-antigravity": (),
    "google-gemini-cli": (),
    "google-vertex": ("GOOGLE_CLOUD_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "huggingface": ("HF_TOKEN",),
    "kimi-coding": ("KIMI_API_KEY",),
    "minimax": ("MINIMAX_API_KEY",),
    "meta": ("META_API_KEY",),
    "minimax-cn": ("MINIMAX_CN_API_KEY",),
    "mistral": ("MISTRAL_API_KEY",),
    "moonshotai": ("MOONSHOT_API_KEY",),
    "moonshotai-cn": ("MOONSHOT_API_KEY",),
    "nvidia": ("NVIDIA_API_KEY",),
    "openai": ("OPENAI_API_KEY",),
    "openai-codex": (),
    "opencode": ("OPENCODE_API_KEY",),
    "opencode-go": ("OPENCODE_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",),
    # The per-plan variable first, then the region one both plans shared before.
    "qwen-token-plan": ("QWEN_TOKEN_PLAN_TEAM_API_KEY", "QWEN_TOKEN_PLAN_API_KEY"),
    "qwen-token-plan-cn": ("QWEN_TOKEN_PLAN_TEAM_CN_API_KEY", "QWEN_TOKEN_PLAN_CN_API_KEY"),
    "qwen-token-plan-individual": ("QWEN_TOKEN_PLAN_INDIVIDUAL_API_KEY", "QWEN_TOKEN_PLAN_API_KEY"),
    "qwen-token-plan-individual-cn": ("QWEN_TOKEN_PLAN_INDIVIDUAL_CN_API_KEY", "QWEN_TOKEN_PLAN_CN_API_KEY"),
    "radius": ("RADIUS_API_KEY",),
    "together": ("TOGETHER_API_KEY",),
    "typesafe": ("TYPESAFE_API_KEY",),
    "vercel-ai-gateway": ("AI_GATEWAY_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "xiaomi": ("XIAOMI_API_KEY",),
    "xiaomi-token-plan-ams": ("XIAOMI_TOKEN_PLAN_AMS_API_KEY",),
    "xiaomi-token-plan-cn": ("XIAOMI_TOKEN_PLAN_CN_API_KEY",),
    "xiaomi-token-plan-sgp": ("XIAOMI_TOKEN_PLAN_SGP_API_KEY",),
    "zai": ("ZAI_API_KEY",),
    "zai-coding-cn": ("ZAI_CODING_CN_API_KEY",),
}

# Variables that configure ambient credentials instead of a key (named in error messages).
_AMBIENT_VARIABLES: dict[str, tuple[str, ...]] = {
    "google-vertex": (
        "GOOGLE_APPLICATION_CREDENTIALS",
        "GOOGLE_CLOUD_PROJECT",
        "GCLOUD_PROJECT",
        "GOOGLE_CLOUD_LOCATION",
    ),
    "amazon-bedrock": (
        "AWS_PROFILE",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_BEARER_TOKEN_BEDROCK",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
    ),
}

_BEDROCK_SINGLE_SOURCES = (
    "AWS_PROFILE",
    "AWS_BEARER_TOKEN_BEDROCK",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
)


# Key variables and the ambient credentials that are secrets themselves (redacted from error texts).
_SECRET_VARIABLES = tuple(
    sorted(
        {name for names in _KEY_VARIABLES.values() for name in names}
        | {"AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK"}
    )
)


def secret_variable_names() -> tuple[str, ...]:
    """Every variable that may hold a secret: all providers' key variables and the secret AWS ones."""
    return _SECRET_VARIABLES


def key_problem(key: str) -> str | None:
    """Why ``key`` (already trimmed) cannot be sent in an HTTP header, or ``None`` when it can."""
    for char in key:
        if char < " " or char == "\x7f":
            return "contains a control character (a line break or tab inside the key?)"
        if not char.isascii():
            return f"contains the non-ASCII character {char!r} (pasted with a typographic character?)"
    return None


def env_var_names(provider: str) -> list[str]:
    """The variables a user could set to authenticate ``provider`` (key variables first)."""
    return [*_KEY_VARIABLES.get(provider, ()), *_AMBIENT_VARIABLES.get(provider, ())]


def find_env_keys(provider: str, env: Mapping[str, str] | None = None) -> list[str]:
    """The key variables of ``provider`` that are set (non-empty), in priority order."""
    env = os.environ if env is None else env
    return [name for name in _KEY_VARIABLES.get(provider, ()) if env.get(name, "").strip()]


def get_env_api_key(provider: str, env: Mapping[str, str] | None = None) -> str | None:
    """The API key for ``provider`` from the environment, ``AUTHENTICATED`` for ambient credentials, or None."""
    env = os.environ if env is None else env
    found = find_env_keys(provider, env)
    if found:
        return env[found[0]].strip()
    if provider == "google-vertex" and _has_vertex_adc(env):
        return AUTHENTICATED
    if provider == "amazon-bedrock" and _has_aws_credentials(env):
        return AUTHENTICATED
    return None


def is_anthropic_auth_token(provider: str, key: str | None, env: Mapping[str, str] | None = None) -> bool:
    """Whether ``key`` is the ``anthropic`` provider's ``ANTHROPIC_AUTH_TOKEN``: a bearer token for
    a gateway, sent as ``Authorization: Bearer`` and never as ``x-api-key``."""
    if provider != "anthropic" or not key:
        return False
    env = os.environ if env is None else env
    return env.get("ANTHROPIC_AUTH_TOKEN", "").strip() == key


def vertex_setup_hint(env: Mapping[str, str] | None = None) -> str:
    """What to set for Vertex AI, naming what the Google Cloud credentials still lack."""
    env = os.environ if env is None else env
    missing = []
    explicit = env.get("GOOGLE_APPLICATION_CREDENTIALS")
    if explicit and not Path(explicit).exists():
        missing.append(f"GOOGLE_APPLICATION_CREDENTIALS names no file ({explicit})")
    elif not explicit and not _gcloud_adc_file(env).exists():
        missing.append(
            "`gcloud auth application-default login` (or GOOGLE_APPLICATION_CREDENTIALS naming a "
            "service-account file)"
        )
    if not (env.get("GOOGLE_CLOUD_PROJECT") or env.get("GCLOUD_PROJECT")):
        missing.append("GOOGLE_CLOUD_PROJECT")
    if not env.get("GOOGLE_CLOUD_LOCATION"):
        missing.append("GOOGLE_CLOUD_LOCATION")
    return f"set GOOGLE_CLOUD_API_KEY, or for Google Cloud credentials: {', '.join(missing)}"


def _gcloud_adc_file(env: Mapping[str, str]) -> Path:
    home = env.get("HOME") or str(Path.home())
    return Path(home) / ".config" / "gcloud" / "application_default_credentials.json"


def _has_vertex_adc(env: Mapping[str, str]) -> bool:
    """An ADC file exists and a project and a location are configured."""
    if not (env.get("GOOGLE_CLOUD_PROJECT") or env.get("GCLOUD_PROJECT")):
        return False
    if not env.get("GOOGLE_CLOUD_LOCATION"):
        return False
    explicit = env.get("GOOGLE_APPLICATION_CREDENTIALS")
    if explicit:
        return Path(explicit).exists()
    return _gcloud_adc_file(env).exists()


def _has_aws_credentials(env: Mapping[str, str]) -> bool:
    if any(env.get(name) for name in _BEDROCK_SINGLE_SOURCES):
        return True
    return bool(env.get("AWS_ACCESS_KEY_ID") and env.get("AWS_SECRET_ACCESS_KEY"))
