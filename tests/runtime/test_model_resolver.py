"""Model references: provider/id, bare ids, :level suffixes, fuzzy matching, ambiguity, defaults."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tau.accounts.auth_storage import AuthStorage, clear_config_value_cache
from tau.accounts.model_registry import ModelRegistry
from tau.accounts.model_resolver import (
    PREFERRED_DEFAULT_MODELS,
    ModelResolutionError,
    ScopedModel,
    choose_default_model,
    close_matches,
    find_exact_model_reference,
    find_initial_model,
    find_model_by_pattern,
    is_alias_id,
    parse_model_pattern,
    resolve_cli_model,
    resolve_model_scope,
    restore_model,
)
from tau.ai.catalogue import find_model, get_providers
from tau.ai.env_keys import env_var_names
from tau.ai.types import Model


@pytest.fixture(autouse=True)
def isolated_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No provider credentials from the machine running the tests; a fresh command cache."""
    for provider in get_providers():
        for name in env_var_names(provider):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    clear_config_value_cache()
    yield
    clear_config_value_cache()


LOCAL = {"baseUrl": "http://localhost:8080/v1", "api": "openai-completions", "apiKey": "local"}


def local_model(model_id: str, provider: str = "local") -> Model:
    return Model(id=model_id, api="openai-completions", provider=provider, base_url="http://x")


def make_registry(tmp_path: Path, providers: dict[str, Any] | None = None) -> ModelRegistry:
    agent = tmp_path / "agent"
    agent.mkdir(exist_ok=True)
    if providers is not None:
        (agent / "models.json").write_text(json.dumps({"providers": providers}))
    registry = ModelRegistry(AuthStorage(agent / "auth.json"), agent / "models.json")
    assert registry.get_error() is None
    return registry


def test_alias_ids_have_no_date_suffix() -> None:
    assert is_alias_id("claude-sonnet-4-5")
    assert is_alias_id("claude-3-7-sonnet-latest")
    assert not is_alias_id("claude-sonnet-4-5-20250929")


def test_exact_reference_accepts_provider_slash_id_and_bare_ids_case_insensitively() -> None:
    models = [local_model("a"), local_model("b"), local_model("a", provider="other")]

    assert find_exact_model_reference("LOCAL/A", models) is models[0]
    assert find_exact_model_reference("b", models) is models[1]
    assert find_exact_model_reference("a", models) is None


def test_fuzzy_match_prefers_the_alias_over_dated_ids() -> None:
    models = [local_model("claude-x-20240101"), local_model("claude-x"), local_model("claude-x-20250101")]

    assert find_model_by_pattern("claude-x-2", models) is models[2]
    assert find_model_by_pattern("laude", models) is models[1]


def test_fuzzy_match_without_alias_takes_the_newest_date() -> None:
    models = [local_model("m-20240101"), local_model("m-20250601"), local_model("m-20250101")]

    assert find_model_by_pattern("m-", models) is models[1]


def test_thinking_suffix_is_split_off_the_last_colon_only_when_it_is_a_level() -> None:
    models = [local_model("qwen:7b"), local_model("router/model:exacto")]

    with_level = parse_model_pattern("qwen:7b:high", models, strict=True)
    colon_id = parse_model_pattern("router/model:exacto", models, strict=True)

    assert with_level is not None and (with_level.model, with_level.thinking_level) == (models[0], "high")
    assert colon_id is not None and (colon_id.model, colon_id.thinking_level) == (models[1], None)
    assert parse_model_pattern("qwen:7b:bogus", models, strict=True) is None


def test_invalid_suffix_falls_back_with_a_warning_outside_strict_mode() -> None:
    models = [local_model("qwen-coder")]

    result = parse_model_pattern("qwen-coder:turbo", models)

    assert result is not None
    assert (result.model, result.thinking_level) == (models[0], None)
    assert result.warning is not None and '"turbo"' in result.warning


def test_cli_model_resolves_provider_slash_id_with_a_level(tmp_path: Path) -> None:
    registry = make_registry(tmp_path)

    resolved = resolve_cli_model(registry, "anthropic/claude-opus-4-6:high")

    assert (resolved.model.provider, resolved.model.id, resolved.thinking_level) == (
        "anthropic",
        "claude-opus-4-6",
        "high",
    )
    assert resolved.warning is None


def test_cli_model_with_provider_flag_tolerates_a_repeated_prefix(tmp_path: Path) -> None:
    registry = make_registry(tmp_path)

    plain = resolve_cli_model(registry, "claude-opus-4-6", "anthropic")
    prefixed = resolve_cli_model(registry, "anthropic/claude-opus-4-6", "Anthropic")

    assert plain.model is prefixed.model
    assert plain.model.provider == "anthropic"


def test_cli_model_resolves_custom_models_with_colons_in_their_ids(tmp_path: Path) -> None:
    registry = make_registry(tmp_path, {"ollama": {**LOCAL, "models": [{"id": "llama3.1:8b"}]}})

    bare = resolve_cli_model(registry, "llama3.1:8b")
    leveled = resolve_cli_model(registry, "ollama/llama3.1:8b:low")

    assert (bare.model.id, bare.thinking_level) == ("llama3.1:8b", None)
    assert (leveled.model.id, leveled.thinking_level) == ("llama3.1:8b", "low")


def test_slash_prefix_that_is_not_a_provider_matches_ids_containing_slashes(tmp_path: Path) -> None:
    registry = make_registry(tmp_path)

    resolved = resolve_cli_model(registry, "moonshotai/kimi-k2.6")

    assert (resolved.model.provider, resolved.model.id) == ("moonshotai", "kimi-k2.6")
    via_openrouter = resolve_cli_model(registry, "openrouter/moonshotai/kimi-k2.6")
    assert (via_openrouter.model.provider, via_openrouter.model.id) == ("openrouter", "moonshotai/kimi-k2.6")


def test_unknown_model_lists_close_matches_and_how_to_list_models(tmp_path: Path) -> None:
    registry = make_registry(tmp_path)

    with pytest.raises(ModelResolutionError) as caught:
        resolve_cli_model(registry, "claude-sonet-4-5")

    message = str(caught.value)
    assert message.startswith(
        'Model "claude-sonet-4-5" not found. Close matches: anthropic/claude-sonnet-4-5'
    )
    assert message.endswith("List models with: tau --list-models [search]")
    listed = message.split("Close matches: ")[1].split(". List")[0].split(", ")
    assert 1 <= len(listed) <= 5


def test_unknown_provider_is_an_error_with_suggestions(tmp_path: Path) -> None:
    registry = make_registry(tmp_path)

    with pytest.raises(ModelResolutionError, match=r'Unknown provider "antropic"\. Close matches: anthropic'):
        resolve_cli_model(registry, "claude-opus-4-6", "antropic")


def test_bare_id_served_by_several_providers_is_an_error_listing_them(tmp_path: Path) -> None:
    registry = make_registry(tmp_path)

    with pytest.raises(ModelResolutionError) as caught:
        resolve_cli_model(registry, "claude-opus-4-6")

    message = str(caught.value)
    assert "ambiguous across providers" in message
    for candidate in ("anthropic/claude-opus-4-6", "opencode/claude-opus-4-6"):
        assert candidate in message
    assert "Use --provider or provider/model" in message


def test_bare_id_resolves_to_the_only_candidate_provider_with_credentials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENCODE_API_KEY", "oc")
    registry = make_registry(tmp_path)

    resolved = resolve_cli_model(registry, "claude-opus-4-6")

    assert resolved.model.provider == "opencode"


def test_unknown_id_for_a_known_provider_becomes_a_custom_id_with_a_warning(tmp_path: Path) -> None:
    registry = make_registry(tmp_path)

    resolved = resolve_cli_model(registry, "claude-opus-9:high", "anthropic")

    assert (resolved.model.provider, resolved.model.id, resolved.model.name) == (
        "anthropic",
        "claude-opus-9",
        "claude-opus-9",
    )
    assert resolved.model.api == "anthropic-messages"
    assert resolved.thinking_level == "high"
    assert resolved.warning is not None and "custom model id" in resolved.warning
    with pytest.raises(ModelResolutionError, match=r'Model "anthropic/claude-opus-9" not found'):
        resolve_cli_model(registry, "claude-opus-9", "anthropic", allow_custom_id=False)


def test_model_scope_expands_globs_keeps_levels_and_reports_misses() -> None:
    models = [
        local_model("claude-sonnet-4-5", "anthropic"),
        local_model("claude-opus-4-6", "anthropic"),
        local_model("gpt-5.5", "openai"),
    ]

    scoped, warnings = resolve_model_scope(
        ["anthropic/*:high", "gpt-5.5", "claude-opus-4-6", "nothing-*"], models
    )

    assert scoped == [
        ScopedModel(models[0], "high"),
        ScopedModel(models[1], "high"),
        ScopedModel(models[2], None),
    ]
    assert warnings == ['No models match pattern "nothing-*"']


def test_model_scope_glob_matches_bare_ids_too() -> None:
    models = [
        local_model("claude-sonnet-4-5", "anthropic"),
        local_model("anthropic/claude-sonnet-4.5", "openrouter"),
    ]

    scoped, _ = resolve_model_scope(["*sonnet*"], models)

    assert [s.model for s in scoped] == models


def test_every_provider_in_the_default_table_has_a_catalogue_model() -> None:
    for provider, model_ids in PREFERRED_DEFAULT_MODELS.items():
        assert any(find_model(provider, model_id) for model_id in model_ids), provider


def test_default_choice_follows_provider_order_of_the_preference_table() -> None:
    models = [
        local_model("gpt-6.2-sol", "openai"),
        local_model("claude-opus-5-5", "anthropic"),
        local_model("x"),
    ]

    chosen = choose_default_model(models)

    assert chosen is models[1]
    assert choose_default_model([models[2]]) is models[2]
    assert choose_default_model([]) is None


def test_initial_model_uses_settings_default_when_its_provider_has_auth(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk")
    registry = make_registry(tmp_path)

    with_auth = find_initial_model(
        registry, default_provider="openai", default_model_id="gpt-4o", default_thinking_level="low"
    )
    without_auth = find_initial_model(
        registry, default_provider="anthropic", default_model_id="claude-opus-4-6"
    )

    assert with_auth.model is not None and (with_auth.model.id, with_auth.thinking_level) == ("gpt-4o", "low")
    assert without_auth.model is not None
    assert (without_auth.model.provider, without_auth.model.id) == ("openai", "gpt-6.2-sol")
    assert without_auth.thinking_level == "medium"


def test_initial_model_is_none_without_any_credentials(tmp_path: Path) -> None:
    assert find_initial_model(make_registry(tmp_path)).model is None


def test_initial_model_from_cli_flags_and_provider_alone(tmp_path: Path) -> None:
    registry = make_registry(tmp_path)

    from_model = find_initial_model(registry, cli_model="anthropic/claude-opus-4-6:low")
    from_provider = find_initial_model(registry, cli_provider="anthropic", cli_thinking="high")

    assert from_model.model is not None and from_model.thinking_level == "low"
    assert from_provider.model is not None
    assert (from_provider.model.id, from_provider.thinking_level) == ("claude-opus-5-5", "high")
    with pytest.raises(ModelResolutionError):
        find_initial_model(registry, cli_provider="nope")


def test_initial_model_takes_the_first_scoped_model_for_new_sessions_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk")
    registry = make_registry(tmp_path)
    scoped = [ScopedModel(local_model("scoped"), "minimal")]

    new_session = find_initial_model(registry, scoped_models=scoped)
    continuing = find_initial_model(registry, scoped_models=scoped, is_continuing=True)

    assert new_session.model is scoped[0].model and new_session.thinking_level == "minimal"
    assert continuing.model is not None and continuing.model.provider == "openai"


def test_restoring_a_model_that_lost_its_credentials_falls_back_with_a_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk")
    registry = make_registry(tmp_path)

    kept = restore_model(registry, "openai", "gpt-4o")
    replaced = restore_model(registry, "anthropic", "claude-opus-4-6")
    gone = restore_model(registry, "openai", "gpt-0")

    assert kept.model is not None and kept.model.id == "gpt-4o" and kept.message is None
    assert replaced.model is not None and replaced.model.id == "gpt-6.2-sol"
    assert replaced.message == (
        "Could not restore model anthropic/claude-opus-4-6 (no auth configured). Using openai/gpt-6.2-sol."
    )
    assert gone.message is not None and "model no longer exists" in gone.message


def test_close_matches_are_limited_and_closest_first() -> None:
    models = [local_model(f"model-{n}") for n in range(20)] + [local_model("exact-name")]

    matches = close_matches("exact-nam", models)

    assert matches[0] == "local/exact-name"
    assert len(close_matches("model-", models)) == 5
