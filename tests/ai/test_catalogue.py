"""The built-in model catalogue: data integrity, lazy loading, lookups and their errors."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources
from typing import Any

import pytest

from tau.ai import catalogue
from tau.ai.catalogue import UnknownModelError, find_model, get_model, get_models, get_providers
from tau.ai.types import Model

CATALOGUE_APIS = {
    "anthropic-messages",
    "azure-openai-responses",
    "bedrock-converse-stream",
    "google-generative-ai",
    "google-vertex",
    "mistral-conversations",
    "openai-codex-responses",
    "openai-completions",
    "openai-responses",
    "pi-messages",
}
REQUIRED_KEYS = {
    "id",
    "name",
    "api",
    "provider",
    "baseUrl",
    "reasoning",
    "input",
    "cost",
    "contextWindow",
    "maxTokens",
}
OPTIONAL_KEYS = {"headers", "compat", "thinkingLevelMap", "inputLimits", "promptCache"}


def _raw_catalogue() -> dict[str, dict[str, Any]]:
    text = (resources.files("tau.ai") / "data" / "models.json").read_text(encoding="utf-8")
    data: dict[str, dict[str, Any]] = json.loads(text)
    return data


def _entries() -> list[tuple[str, str, dict[str, Any]]]:
    return [(p, i, m) for p, models in _raw_catalogue().items() for i, m in models.items()]


def test_catalogue_holds_pi_ai_160_providers_and_models() -> None:
    raw = _raw_catalogue()
    # pi-ai 1.6.0 lists 43 providers; typesafe has only classifier models, so it is left out.
    assert len(raw) == 42
    assert sum(len(models) for models in raw.values()) == 1698
    assert list(raw) == sorted(raw)


def test_every_entry_has_the_required_fields_and_nothing_unknown() -> None:
    for provider, model_id, entry in _entries():
        assert set(entry) >= REQUIRED_KEYS, (provider, model_id)
        assert set(entry) <= REQUIRED_KEYS | OPTIONAL_KEYS, (provider, model_id)
        assert entry["id"] == model_id and entry["provider"] == provider
        assert isinstance(entry["name"], str) and entry["name"]
        assert isinstance(entry["reasoning"], bool)
        assert "text" in entry["input"] and set(entry["input"]) <= {"text", "image"}
        assert set(entry["cost"]) - {"tiers"} == {"input", "output", "cacheRead", "cacheWrite"}


def test_every_entry_has_positive_context_window_and_max_tokens() -> None:
    for provider, model_id, entry in _entries():
        assert isinstance(entry["contextWindow"], int) and entry["contextWindow"] > 0, (provider, model_id)
        assert isinstance(entry["maxTokens"], int) and entry["maxTokens"] > 0, (provider, model_id)


def test_every_entry_uses_a_known_api() -> None:
    apis = {entry["api"] for _, _, entry in _entries()}
    assert apis == CATALOGUE_APIS


def test_only_azure_models_have_an_empty_base_url() -> None:
    for provider, _, entry in _entries():
        assert entry["baseUrl"] or provider == "azure"


def test_every_entry_round_trips_through_model_json() -> None:
    for _, _, entry in _entries():
        assert Model.from_json(entry).to_json() == entry


def test_importing_the_module_does_not_read_the_data() -> None:
    code = "import tau.ai.catalogue as c, sys; sys.exit(1 if c._cache else 0)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_first_lookup_loads_the_data_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(catalogue, "_cache", {})
    monkeypatch.setattr(catalogue, "_unparsed", {})
    monkeypatch.setattr(catalogue, "_providers", [])
    get_model("anthropic", "claude-sonnet-4-5")
    loaded = catalogue._cache["anthropic"]
    get_model("openai", "gpt-5")
    get_providers()
    assert catalogue._cache["anthropic"] is loaded


def test_a_lookup_parses_only_its_providers_models(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(catalogue, "_cache", {})
    monkeypatch.setattr(catalogue, "_unparsed", {})
    monkeypatch.setattr(catalogue, "_providers", [])
    get_model("anthropic", "claude-sonnet-4-5")
    assert list(catalogue._cache) == ["anthropic"]
    assert len(get_providers()) == len(_raw_catalogue()) + 2  # + the two Cloud Code Assist providers


def test_every_provider_parsed_alone_equals_the_whole_file() -> None:
    raw = _raw_catalogue()
    for provider, models in raw.items():
        assert {model.id: model.to_json() for model in get_models(provider)} == models


def test_get_model_returns_the_catalogue_entry() -> None:
    model = get_model("anthropic", "claude-sonnet-4-5")
    assert model.id == "claude-sonnet-4-5"
    assert model.api == "anthropic-messages"
    assert model.base_url == "https://api.anthropic.com"
    assert model.context_window > 0


def test_get_model_returns_a_fresh_object_each_call() -> None:
    first = get_model("github-copilot", "claude-haiku-4.5")
    assert first.headers is not None
    first.base_url = "http://localhost:1"
    first.headers["X-Test"] = "1"
    second = get_model("github-copilot", "claude-haiku-4.5")
    assert second is not first
    assert second.base_url == "https://api.individual.githubcopilot.com"
    assert "X-Test" not in second.headers  # type: ignore[operator]


def test_editing_a_models_nested_compat_or_input_limits_leaves_the_catalogue_unchanged() -> None:
    first = get_model("anthropic", "claude-fable-5")
    assert first.compat is not None and first.input_limits is not None
    first.compat["allowedFallbackModels"][0]["cost"]["input"] = 999
    first.compat["allowedFallbackModels"].append({"provider": "x"})
    first.input_limits["images"]["resize"]["maxWidth"] = 1
    second = get_model("anthropic", "claude-fable-5")
    assert second.compat is not None and second.input_limits is not None
    assert second.compat["allowedFallbackModels"][0]["cost"]["input"] == 5
    assert len(second.compat["allowedFallbackModels"]) == 2
    assert second.input_limits["images"]["resize"]["maxWidth"] == 2000


def test_get_providers_lists_every_provider_sorted() -> None:
    providers = get_providers()
    assert providers == sorted(providers)
    assert {"anthropic", "openai", "google", "openrouter", "amazon-bedrock"} <= set(providers)


def test_get_models_lists_one_providers_models() -> None:
    models = get_models("anthropic")
    assert models and all(m.provider == "anthropic" for m in models)
    assert [m.id for m in models] == sorted(m.id for m in models)


def test_find_model_returns_none_for_unknown_provider_or_id() -> None:
    assert find_model("anthropic", "no-such-model") is None
    assert find_model("no-such-provider", "gpt-5") is None
    found = find_model("openai", "gpt-5")
    assert found is not None and found.provider == "openai"


def test_unknown_provider_error_names_the_provider_and_lists_known_ones() -> None:
    with pytest.raises(UnknownModelError) as caught:
        get_model("antropic", "claude-sonnet-4-5")
    message = str(caught.value)
    assert "'antropic'" in message
    assert "anthropic" in message and "openrouter" in message
    with pytest.raises(LookupError):
        get_models("antropic")


def test_unknown_model_error_names_the_model_close_matches_and_count() -> None:
    with pytest.raises(UnknownModelError) as caught:
        get_model("anthropic", "claude-sonet-4-5")
    message = str(caught.value)
    assert "'claude-sonet-4-5'" in message and "'anthropic'" in message
    assert "claude-sonnet-4-5" in message
    assert f"{len(get_models('anthropic'))} models known" in message


def test_unknown_model_error_lists_at_most_ten_matches() -> None:
    with pytest.raises(UnknownModelError) as caught:
        get_model("openrouter", "openai/gpt-9")
    suggestions = str(caught.value).split("Close matches: ", 1)[1].split(", ")
    assert 1 <= len(suggestions) <= 10


def test_a_data_file_not_laid_out_one_provider_per_line_is_parsed_whole() -> None:
    data = {"a": {"m": {"id": "m"}}, "b": {"n": {"id": "n", "x": [1, 2]}}}
    for text in (
        json.dumps(data, indent=2),
        json.dumps(data),
        "{\n" + '"a":{"m":{"id":"m"}},\n"b":{"n":{"id":"n","x":[1,2]}}' + "\n}\n",
    ):
        lines = catalogue._provider_lines(text.encode())
        assert {provider: json.loads(bytes(line)) for provider, line in lines.items()} == data
