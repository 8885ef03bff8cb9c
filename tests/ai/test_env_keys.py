"""API keys from the environment: pi's priority table, empty values, ambient-credential sentinels."""

from __future__ import annotations

from pathlib import Path

import pytest

from tau.ai.env_keys import AUTHENTICATED, env_var_names, find_env_keys, get_env_api_key

SINGLE_VARIABLE_PROVIDERS = [
    ("openai", "OPENAI_API_KEY"),
    ("azure", "AZURE_OPENAI_API_KEY"),
    ("google", "GEMINI_API_KEY"),
    ("groq", "GROQ_API_KEY"),
    ("cerebras", "CEREBRAS_API_KEY"),
    ("xai", "XAI_API_KEY"),
    ("openrouter", "OPENROUTER_API_KEY"),
    ("vercel-ai-gateway", "AI_GATEWAY_API_KEY"),
    ("zai", "ZAI_API_KEY"),
    ("mistral", "MISTRAL_API_KEY"),
    ("minimax", "MINIMAX_API_KEY"),
    ("minimax-cn", "MINIMAX_CN_API_KEY"),
    ("huggingface", "HF_TOKEN"),
    ("opencode", "OPENCODE_API_KEY"),
    ("opencode-go", "OPENCODE_API_KEY"),
    ("kimi-coding", "KIMI_API_KEY"),
    ("deepseek", "DEEPSEEK_API_KEY"),
    ("moonshotai", "MOONSHOT_API_KEY"),
    ("moonshotai-cn", "MOONSHOT_API_KEY"),
    ("fireworks", "FIREWORKS_API_KEY"),
    ("cloudflare-workers-ai", "CLOUDFLARE_API_KEY"),
    ("cloudflare-ai-gateway", "CLOUDFLARE_API_KEY"),
    ("xiaomi", "XIAOMI_API_KEY"),
    ("xiaomi-token-plan-cn", "XIAOMI_TOKEN_PLAN_CN_API_KEY"),
    ("xiaomi-token-plan-ams", "XIAOMI_TOKEN_PLAN_AMS_API_KEY"),
    ("xiaomi-token-plan-sgp", "XIAOMI_TOKEN_PLAN_SGP_API_KEY"),
]


@pytest.mark.parametrize(("provider", "variable"), SINGLE_VARIABLE_PROVIDERS)
def test_each_provider_reads_its_variable(provider: str, variable: str) -> None:
    assert get_env_api_key(provider, {variable: "sk-1"}) == "sk-1"
    assert get_env_api_key(provider, {}) is None
    assert env_var_names(provider) == [variable]


def test_anthropic_oauth_token_wins_over_api_key() -> None:
    env = {"ANTHROPIC_API_KEY": "key", "ANTHROPIC_OAUTH_TOKEN": "oauth"}
    assert get_env_api_key("anthropic", env) == "oauth"
    assert find_env_keys("anthropic", env) == ["ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"]
    assert get_env_api_key("anthropic", {"ANTHROPIC_API_KEY": "key"}) == "key"


def test_github_copilot_priority_is_copilot_then_gh_then_github() -> None:
    env = {"GITHUB_TOKEN": "c", "GH_TOKEN": "b", "COPILOT_GITHUB_TOKEN": "a"}
    assert get_env_api_key("github-copilot", env) == "a"
    del env["COPILOT_GITHUB_TOKEN"]
    assert get_env_api_key("github-copilot", env) == "b"
    del env["GH_TOKEN"]
    assert get_env_api_key("github-copilot", env) == "c"


def test_empty_strings_count_as_unset() -> None:
    env = {"ANTHROPIC_OAUTH_TOKEN": "", "ANTHROPIC_API_KEY": "key"}
    assert get_env_api_key("anthropic", env) == "key"
    assert find_env_keys("anthropic", env) == ["ANTHROPIC_API_KEY"]
    assert get_env_api_key("openai", {"OPENAI_API_KEY": ""}) is None
    assert get_env_api_key("amazon-bedrock", {"AWS_PROFILE": ""}) is None


def test_unknown_provider_and_oauth_only_provider_have_no_env_key() -> None:
    assert get_env_api_key("no-such-provider", {"OPENAI_API_KEY": "x"}) is None
    assert find_env_keys("no-such-provider", {}) == []
    assert env_var_names("no-such-provider") == []
    assert get_env_api_key("openai-codex", {"OPENAI_API_KEY": "x"}) is None
    assert env_var_names("openai-codex") == []


def test_default_env_is_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GROQ_API_KEY", "from-process")
    assert get_env_api_key("groq") == "from-process"
    assert find_env_keys("groq") == ["GROQ_API_KEY"]


@pytest.mark.parametrize(
    "env",
    [
        {"AWS_PROFILE": "dev"},
        {"AWS_ACCESS_KEY_ID": "id", "AWS_SECRET_ACCESS_KEY": "secret"},
        {"AWS_BEARER_TOKEN_BEDROCK": "token"},
        {"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "/v2/creds"},
        {"AWS_CONTAINER_CREDENTIALS_FULL_URI": "http://169.254.170.2/creds"},
        {"AWS_WEB_IDENTITY_TOKEN_FILE": "/var/run/token"},
    ],
)
def test_bedrock_reports_authenticated_for_each_credential_source(env: dict[str, str]) -> None:
    assert get_env_api_key("amazon-bedrock", env) == AUTHENTICATED == "<authenticated>"


def test_bedrock_needs_both_access_key_and_secret() -> None:
    assert get_env_api_key("amazon-bedrock", {"AWS_ACCESS_KEY_ID": "id"}) is None
    assert get_env_api_key("amazon-bedrock", {"AWS_SECRET_ACCESS_KEY": "secret"}) is None


def test_vertex_api_key_wins_over_adc(tmp_path: Path) -> None:
    credentials = tmp_path / "adc.json"
    credentials.write_text("{}")
    env = {
        "GOOGLE_CLOUD_API_KEY": "key",
        "GOOGLE_APPLICATION_CREDENTIALS": str(credentials),
        "GOOGLE_CLOUD_PROJECT": "p",
        "GOOGLE_CLOUD_LOCATION": "us-central1",
    }
    assert get_env_api_key("google-vertex", env) == "key"


def test_vertex_adc_needs_credentials_file_project_and_location(tmp_path: Path) -> None:
    credentials = tmp_path / "adc.json"
    credentials.write_text("{}")
    env = {
        "GOOGLE_APPLICATION_CREDENTIALS": str(credentials),
        "GOOGLE_CLOUD_PROJECT": "p",
        "GOOGLE_CLOUD_LOCATION": "us-central1",
    }
    assert get_env_api_key("google-vertex", env) == AUTHENTICATED
    assert get_env_api_key("google-vertex", {**env, "GOOGLE_CLOUD_PROJECT": "", "GCLOUD_PROJECT": "p"}) == (
        AUTHENTICATED
    )
    assert get_env_api_key("google-vertex", {**env, "GOOGLE_CLOUD_PROJECT": ""}) is None
    assert get_env_api_key("google-vertex", {**env, "GOOGLE_CLOUD_LOCATION": ""}) is None
    missing = str(tmp_path / "missing.json")
    assert get_env_api_key("google-vertex", {**env, "GOOGLE_APPLICATION_CREDENTIALS": missing}) is None


def test_vertex_adc_falls_back_to_the_gcloud_default_file(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "GOOGLE_CLOUD_PROJECT": "p", "GOOGLE_CLOUD_LOCATION": "europe-west4"}
    assert get_env_api_key("google-vertex", env) is None
    default_file = tmp_path / ".config" / "gcloud" / "application_default_credentials.json"
    default_file.parent.mkdir(parents=True)
    default_file.write_text("{}")
    assert get_env_api_key("google-vertex", env) == AUTHENTICATED


def test_ambient_providers_name_their_configuration_variables() -> None:
    assert env_var_names("google-vertex")[0] == "GOOGLE_CLOUD_API_KEY"
    assert "GOOGLE_CLOUD_LOCATION" in env_var_names("google-vertex")
    assert "AWS_PROFILE" in env_var_names("amazon-bedrock")
    assert find_env_keys("amazon-bedrock", {"AWS_PROFILE": "dev"}) == []


def test_every_catalogue_provider_is_in_the_table() -> None:
    from tau.ai.catalogue import get_providers

    for provider in get_providers():
        login_only = provider in ("openai-codex", "google-gemini-cli", "google-antigravity")
        assert login_only or env_var_names(provider), provider
